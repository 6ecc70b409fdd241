/* RTM in a tilted TTI medium (issue 14): the TTI image puts a reflector at its depth, and
 * the isotropic image of the same data misplaces it by the amount the anisotropy predicts.
 *
 * 2D (n[1] = 1).  A homogeneous TTI overburden (v_pz 2000 m/s, eps 0.2, delta 0.1, the
 * symmetry axis tilted 45 degrees, sigma 0.75) over a horizontal interface where v_pz
 * steps to 2600 m/s (the anisotropy unchanged).  The data are modeled with the TTI
 * propagator in that model minus the same shot in the background (reflections only), and
 * migrated through the engine with the TTI background (the same parameters) and with the
 * isotropic background v = v_pz = 2000 m/s.
 *
 * Prediction.  A horizontal reflector at depth z below sources and receivers at depth z_s
 * is reached at zero offset along the vertical phase direction: the two legs have phase
 * normals n and -n, whose group velocities are opposite in a TI medium, so the ray returns
 * to its start and t0 = 2 (z - z_s) / V(n), V Thomsen's exact qP phase velocity (with the
 * propagator's finite v_sz) at the angle between the vertical and the symmetry axis, 45
 * degrees here.  The isotropic migration with v_pz turns t0 into the depth
 *   z_iso = z_s + (z - z_s) v_pz / V(45 deg),
 * 4.1 cells above the truth for this model.  The acquisition is restricted to offsets of
 * at most 40 m (receivers within 4 cells of each shot, the reflector 575 m down), where
 * the moveout's effect on the isotropic depth, of order (h / 2z)^2, is below 0.1 %
 * (0.05 cell); shots every 4 cells over 40 cells make the stack a near-zero-offset image.
 * Reciprocity makes the moveout symmetric in offset (no apparent dip), but a tilted
 * medium's zero-offset reflection point lies some 10 cells to the side of the shot (the
 * group direction of the vertical phase), so the depths are read in the middle columns,
 * lit by the TTI and isotropic images alike.
 *
 * Depth of each image: the envelope (|analytic signal| along z) peak, with parabolic
 * sub-cell refinement, of the image averaged over the middle 13 columns.  The envelope is
 * blind to the constant phase rotation of 2D line-source propagation and to the
 * polarity; no Laplacian image filter is applied: the data hold the reflections only and
 * the migration models are smooth (constant), so the cross-correlation image has no
 * low-wavenumber backscatter to remove, while a Laplacian (a k_z^2 weight) would weigh the
 * two images' different depth wavelengths (the isotropic one is compressed by
 * v_pz / V) differently.
 *
 * Tolerances: the TTI depth within one cell of the truth (the bar); the isotropic
 * depth within one cell of the prediction, the same bar for a prediction whose own error
 * (finite offsets, the qP phase velocity's dispersion at 0.2 % of travel time: tests/
 * test_tti.c) is below 0.2 cell; the predicted shift at least 3 cells, so that the
 * isotropic image cannot pass the TTI test nor the TTI image the isotropic one. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/imaging.h"
#include "kernels/propagator.h"
#include "kernels/rtm.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/support.h"
#include "tests/test_rtm_common.h"

#define NX 100
#define NZ 72
#define D 10.0
#define PML 16
#define FPEAK 15.0
#define DT 1.5e-3
#define T_MAX 0.75
#define V0 2000.0f
#define V1 2600.0f
#define ZR 60 /* first cell of the faster layer: the interface is at ZR - 0.5 cells */
#define ZS 2  /* sources and receivers, cells */
#define EPS 0.2
#define DELTA 0.1
#define TILT (45.0 * M_PI / 180.0)
#define SIGMA 0.75
#define NSHOT 11
#define SHOT0 30 /* first shot's x cell */
#define SHOT_STEP 4
#define HALF_SPREAD 4 /* receivers within this many cells of the shot */
#define XMID0 44      /* the columns read: XMID0 .. XMID1 */
#define XMID1 56

/* Thomsen's exact qP phase velocity (v_pz = 1) at phase angle TH from the symmetry axis in
 * Tsvankin's form (eq. 1.41), f = 1 - v_sz^2 / v_pz^2 with tti.h's v_sz^2 = v_pz^2 |eps -
 * delta| / sigma -- written here independently of the kernels. */
static double thomsen_v(double th, double eps, double delta, double sigma)
{
    const double f = 1.0 - fabs(eps - delta) / sigma, s2 = sin(th) * sin(th), s2t = sin(2 * th) * sin(2 * th);
    const double x = 1.0 + 2.0 * eps * s2 / f;
    return sqrt(1.0 + eps * s2 - f / 2 + (f / 2) * sqrt(x * x - 2.0 * (eps - delta) * s2t / f));
}

static const int N3[3] = {NX, 1, NZ};

/* Traces of one shot at (SX, ZS) cells in V with PHYS (TTI: the module's anisotropy), at
 * the receivers REC: sample k = p(k dt). */
static void model_2d(int phys, const float *v, const double src[3], const double *rec, int ntr, int nt, float *out)
{
    struct sl_device dev;
    cr_assert_eq(backend_select("cpu", &dev), 0);
    const double d[3] = {D, D, D}, o[3] = {0, 0, 0};
    struct prop_params p;
    prop_params_init(&p, N3, d, o, DT, PML);
    p.physics = phys;
    p.tti_sigma = SIGMA;
    p.f_ref = FPEAK;
    const struct prop_model m = {.vp = v, .epsilon0 = EPS, .delta0 = DELTA, .theta0 = TILT};
    struct prop *s;
    cr_assert_eq(prop_create(&dev, &p, &m, &s), 0, "%s", err_msg());
    struct prop_points *ps, *pr;
    cr_assert_eq(prop_points_create(s, src, 1, PROP_INTERP_SINC, &ps), 0, "%s", err_msg());
    cr_assert_eq(prop_points_create(s, rec, (size_t)ntr, PROP_INTERP_TRILINEAR, &pr), 0, "%s", err_msg());
    const size_t ns = (size_t)nt + 1;
    float *w = malloc(ns * sizeof *w);
    cr_assert(w);
    wavelet_ricker_fill(w, ns, DT, FPEAK);
    for (int r = 0; r < ntr; r++)
        out[(size_t)r * ns] = 0.0f;
    for (int it = 0; it < nt; it++) {
        cr_assert_eq(prop_step(s), 0);
        cr_assert_eq(prop_inject(s, ps, w + it, 1, 1.0f, PROP_INJECT_PHYSICAL), 0);
        cr_assert_eq(prop_sample(s, pr, out + it + 1, ns, 0), 0);
    }
    free(w);
    prop_points_destroy(s, ps);
    prop_points_destroy(s, pr);
    prop_destroy(s);
}

/* An engine for PHYS on the constant background V0 (TTI: the module's anisotropy). */
static struct rtm_engine *engine(int phys, const float *v_mig)
{
    struct sl_device dev;
    cr_assert_eq(backend_select("cpu", &dev), 0);
    struct rtm_params p;
    rtm_params_init(&p);
    p.physics = phys;
    p.tti_sigma = SIGMA;
    p.order = 8;
    for (int f = 0; f < 6; f++)
        p.pml[f] = PML;
    p.pml_reflection = 1e-3;
    p.f_peak = p.f_ref = FPEAK;
    p.dt = DT; /* the data's dt: under the TTI limit of the faster layer too */
    p.t_max = T_MAX;
    p.aperture = 1e6;
    p.strategy = RTM_FULL;
    p.imaging = IMAGING_XCORR;
    p.image_every = 1; /* every step, as these expectations were measured (the default is auto) */
    p.random.width = PML;
    struct rtm_volume vol = {.n = {NX, 1, NZ}, .d = {D, D, D}, .o = {0, 0, 0}, .v = v_mig, .epsilon0 = EPS,
                             .delta0 = DELTA, .theta0 = TILT};
    struct rtm_engine *e = NULL;
    cr_assert_eq(rtm_engine_create(&p, &dev, &vol, &e), 0, "%s", err_msg());
    cr_assert_float_eq(rtm_engine_dt(e), DT, 1e-12);
    return e;
}

/* Add the migration of SH by E into IMG (NX x NZ). */
static void migrate_add(struct rtm_engine *e, const struct shot *sh, float *img, float *tmp)
{
    int off[3], n[3];
    cr_assert_eq(rtm_engine_patch(e, RTM_SHOT(sh), off, n), 0, "%s", err_msg());
    cr_assert(n[0] == NX && n[1] == 1 && n[2] == NZ && off[0] == 0 && off[2] == 0, "patch %d x %d x %d at %d, %d",
              n[0], n[1], n[2], off[0], off[2]);
    struct rtm_shot_stats st;
    cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(sh), tmp, NULL, &st), 0, "%s", err_msg());
    cr_assert_eq(st.strategy, RTM_FULL);
    for (size_t i = 0; i < (size_t)NX * NZ; i++)
        img[i] += tmp[i];
}

/* Depth (cells) of the envelope peak of IMG averaged over the middle columns, searched
 * from ZMIN down to NZ - 4 (clear of the source footprint and the bottom layer). */
static double depth_of(const float *img, int zmin, double *peak)
{
    float col[NZ];
    for (int z = 0; z < NZ; z++) {
        double s = 0;
        for (int x = XMID0; x <= XMID1; x++)
            s += img[(size_t)z * NX + x];
        col[z] = (float)(s / (XMID1 - XMID0 + 1));
    }
    const int n1[3] = {1, 1, NZ};
    return envelope_peak(col, n1, 0, 0, zmin, NZ - 4, peak);
}

Test(tti_rtm_depth, tilted_tti_reflector_depth_tti_vs_isotropic, .timeout = 240)
{
    static float v_true[NX * NZ], v_mig[NX * NZ], img_tti[NX * NZ], img_iso[NX * NZ], tmp[NX * NZ];
    for (int z = 0; z < NZ; z++)
        for (int x = 0; x < NX; x++) {
            v_mig[z * NX + x] = V0;
            v_true[z * NX + x] = z >= ZR ? V1 : V0;
        }
    /* the prediction */
    const double z_true = ZR - 0.5, vn = thomsen_v(TILT, EPS, DELTA, SIGMA);
    const double z_pred = ZS + (z_true - ZS) / vn;
    fprintf(stderr, "tti rtm depth: V(45 deg) / v_pz = %.5f; reflector at %.2f cells, isotropic image predicted at "
                    "%.2f (shift %.2f cells)\n", vn, z_true, z_pred, z_true - z_pred);
    cr_assert_geq(z_true - z_pred, 3.0, "the predicted shift must be several cells to discriminate");

    struct rtm_engine *e_tti = engine(PROP_TTI, v_mig), *e_iso = engine(PROP_ACOUSTIC, v_mig);
    const int nt = (int)floor(T_MAX / DT + 1e-6), ntr = 2 * HALF_SPREAD + 1;
    const size_t ns = (size_t)nt + 1;
    struct shot sh;
    memset(&sh, 0, sizeof sh);
    sh.ns = (int)ns;
    sh.dt = DT;
    sh.ntr = ntr;
    sh.rec = malloc((size_t)ntr * 3 * sizeof(float));
    sh.data = malloc((size_t)ntr * ns * sizeof(float));
    double rec[3 * (2 * HALF_SPREAD + 1)];
    float *d0 = malloc((size_t)ntr * ns * sizeof(float));
    cr_assert(sh.rec && sh.data && d0);
    for (int k = 0; k < NSHOT; k++) {
        const int sx = SHOT0 + k * SHOT_STEP;
        sh.id = k + 1;
        sh.src[0] = sx * D;
        sh.src[1] = 0.0;
        sh.src[2] = ZS * D;
        for (int r = 0; r < ntr; r++) {
            rec[3 * r] = (sx - HALF_SPREAD + r) * D;
            rec[3 * r + 1] = 0.0;
            rec[3 * r + 2] = ZS * D;
            for (int a = 0; a < 3; a++)
                sh.rec[3 * r + a] = (float)rec[3 * r + a];
        }
        model_2d(PROP_TTI, v_true, sh.src, rec, ntr, nt, sh.data);
        model_2d(PROP_TTI, v_mig, sh.src, rec, ntr, nt, d0);
        for (size_t i = 0; i < (size_t)ntr * ns; i++)
            sh.data[i] -= d0[i];
        migrate_add(e_tti, &sh, img_tti, tmp);
        migrate_add(e_iso, &sh, img_iso, tmp);
    }
    double pk_tti, pk_iso;
    const double z_tti = depth_of(img_tti, 30, &pk_tti), z_iso = depth_of(img_iso, 30, &pk_iso);
    fprintf(stderr, "tti rtm depth: TTI image %.2f cells (truth %.2f, error %+.2f); isotropic image %.2f cells "
                    "(predicted %.2f, error %+.2f; %.2f cells above the truth)\n",
            z_tti, z_true, z_tti - z_true, z_iso, z_pred, z_iso - z_pred, z_true - z_iso);
    cr_assert_gt(pk_tti, 0);
    cr_assert_gt(pk_iso, 0);
    cr_assert_leq(fabs(z_tti - z_true), 1.0, "TTI image at %.2f cells, reflector at %.2f", z_tti, z_true);
    cr_assert_leq(fabs(z_iso - z_pred), 1.0, "isotropic image at %.2f cells, predicted %.2f (reflector %.2f)", z_iso,
                  z_pred, z_true);
    /* implied by the two above and the 3-cell shift, said outright: the isotropic image
     * misses the reflector */
    cr_assert_geq(z_true - z_iso, 2.0, "isotropic image at %.2f cells, reflector at %.2f", z_iso, z_true);
    free(d0);
    free(sh.rec);
    free(sh.data);
    rtm_engine_destroy(e_tti);
    rtm_engine_destroy(e_iso);
}
