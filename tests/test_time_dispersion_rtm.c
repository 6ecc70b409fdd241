/* rtm with the time-dispersion correction (rtm_params.time_dispersion,
 * docs/time-dispersion.md): a 2D flat reflector migrated at a coarse dt (0.99 of the
 * stable step) with and without the correction, against the same data migrated at an
 * eighth of that dt.  The data are "physical": modeled at a fine dt (a sixteenth of the
 * coarse one: its own time dispersion is 1/256 of the coarse run's) in the true model,
 * the background model's run subtracted (reflections only), handed to the engine at that
 * sampling (it resamples to its own dt).  Spatial error is the same in every run (same
 * grid, same operator), so what differs is the time stepping alone.
 *
 * The engine injected trace sample n into the receiver wavefield one level early until
 * the adjoint was fixed (kernels/rtm_strategies.c visit(): sample n + 1 now): the data
 * acted one dt late and the image lay v dt / 2 deep, which this test found.  Now the
 * corrected coarse-dt image matches the fine-dt one as it comes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/propagator.h"
#include "kernels/rtm.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/support.h"
#include "tests/test_rtm_common.h"

#define NX 90
#define NZ 56
#define D 10.0
#define PML 16
#define FPEAK 20.0
#define ZR 44 /* first cell of the faster layer: the interface at 43.5 cells */

/* Traces of a line source at SRC in V (2D, NX x NZ), NT + 1 samples of step DT at the NTR
 * receivers REC (sample k = p(k dt)). */
static void model_2d(const float *v, double dt, int nt, const double src[3], const double *rec, int ntr,
                     float *out)
{
    struct sl_device dev;
    cr_assert_eq(backend_select("cpu", &dev), 0);
    const int n[3] = {NX, 1, NZ};
    const double d[3] = {D, D, D}, o[3] = {0, 0, 0};
    struct prop_params p;
    prop_params_init(&p, n, d, o, dt, PML);
    p.f_ref = FPEAK;
    struct prop *s;
    const struct prop_model m = {.vp = v};
    cr_assert_eq(prop_create(&dev, &p, &m, &s), 0, "%s", err_msg());
    struct prop_points *ps, *pr;
    cr_assert_eq(prop_points_create(s, src, 1, PROP_INTERP_SINC, &ps), 0, "%s", err_msg());
    cr_assert_eq(prop_points_create(s, rec, (size_t)ntr, PROP_INTERP_TRILINEAR, &pr), 0, "%s", err_msg());
    size_t ns = (size_t)nt + 1;
    float *w = malloc(ns * sizeof *w);
    wavelet_ricker_fill(w, ns, dt, FPEAK);
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

/* An engine on the constant 2000 m/s background at CFL x the stable dt. */
static struct rtm_engine *engine(const float *v_mig, double cfl, bool correct, double t_max)
{
    struct sl_device dev;
    cr_assert_eq(backend_select("cpu", &dev), 0);
    struct rtm_params p;
    rtm_params_init(&p);
    p.order = 8;
    for (int f = 0; f < 6; f++)
        p.pml[f] = PML;
    p.pml_reflection = 1e-3;
    p.f_peak = p.f_ref = FPEAK;
    p.t_max = t_max;
    p.aperture = 1e6;
    p.strategy = RTM_FULL;
    p.cfl = cfl;
    p.image_every = 1; /* every step, as these expectations were measured (the default is auto) */
    p.time_dispersion = correct;
    struct rtm_volume vol = {.n = {NX, 1, NZ}, .d = {D, D, D}, .o = {0, 0, 0}, .v = v_mig};
    struct rtm_engine *e;
    cr_assert_eq(rtm_engine_create(&p, &dev, &vol, &e), 0, "%s", err_msg());
    return e;
}

static float *migrate(struct rtm_engine *e, const struct shot *sh)
{
    float *img = malloc((size_t)NX * NZ * sizeof *img);
    struct rtm_shot_stats st;
    cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(sh), img, NULL, &st), 0, "%s", err_msg());
    return img;
}

/* The columns compared: both sides of the source, clear of its own column and of the
 * spread's ends. */
static bool column_used(int x) { return abs(x - NX / 2) >= 3 && abs(x - NX / 2) <= 24; }

/* The image A against the reference REF over the reflector's window (rows ZR - 10 ..
 * ZR + 6 of the columns used): the relative L2 misfit after the best scale (the image
 * sums u q over steps, so its size goes with the number of steps, 1 / dt). */
static double misfit(const float *a, const float *ref)
{
    double ab = 0, aa = 0, bb = 0;
    for (int z = ZR - 10; z < ZR + 6; z++)
        for (int x = 0; x < NX; x++)
            if (column_used(x)) {
                double p = a[z * NX + x], q = ref[z * NX + x];
                ab += p * q;
                aa += p * p;
                bb += q * q;
            }
    double s = ab / aa; /* min ||s a - ref||^2 */
    return sqrt(fmax(0.0, bb - 2 * s * ab + s * s * aa) / bb);
}

/* Mean depth (cells) of the envelope peak over the columns used. */
static double mean_depth(const float *img)
{
    const int n[3] = {NX, 1, NZ};
    double sum = 0;
    int k = 0;
    for (int x = 0; x < NX; x++)
        if (column_used(x)) {
            double pk;
            sum += envelope_peak(img, n, x, 0, ZR - 12, NZ - 6, &pk);
            k++;
        }
    return sum / k;
}

/* Measured (docs/time-dispersion.md), with the engine's adjoint fixed: misfit to the
 * fine-dt image 0.227 uncorrected, 0.0072 corrected; reflector 0.61 and 0.01 cells off
 * the fine-dt image's depth. */
Test(time_dispersion_rtm, flat_reflector_at_coarse_dt_matches_fine_dt, .timeout = 180)
{
    static float v_true[NX * NZ], v_mig[NX * NZ];
    for (int z = 0; z < NZ; z++)
        for (int x = 0; x < NX; x++) {
            v_mig[z * NX + x] = 2000.0f;
            v_true[z * NX + x] = z >= ZR ? 2600.0f : 2000.0f;
        }
    const double t_max = 0.62; /* the reflection from 435 m at the farthest receiver used */
    struct rtm_engine *coarse = engine(v_mig, 0.99, false, t_max), *fine = engine(v_mig, 0.99 / 8, false, t_max),
                      *corrected = engine(v_mig, 0.99, true, t_max);
    const double dt = rtm_engine_dt(coarse), dt_data = dt / 16;
    cr_assert_float_eq(rtm_engine_dt(corrected), dt, 1e-15);
    /* the shot: source at the centre 20 m deep, a receiver every cell at 20 m */
    struct shot sh;
    memset(&sh, 0, sizeof sh);
    const int nt = (int)floor(t_max / dt_data + 1e-6);
    sh.id = 1;
    sh.ns = nt + 1;
    sh.dt = dt_data;
    sh.ntr = NX - 6;
    sh.src[0] = NX / 2 * D;
    sh.src[2] = 20.0;
    sh.rec = malloc((size_t)sh.ntr * 3 * sizeof(float));
    sh.data = malloc((size_t)sh.ntr * sh.ns * sizeof(float));
    double *rec = malloc((size_t)sh.ntr * 3 * sizeof(double));
    float *d0 = malloc((size_t)sh.ntr * sh.ns * sizeof(float));
    for (int r = 0; r < sh.ntr; r++) {
        rec[3 * r] = (3 + r) * D;
        rec[3 * r + 1] = 0.0;
        rec[3 * r + 2] = 20.0;
        for (int a = 0; a < 3; a++)
            sh.rec[3 * r + a] = (float)rec[3 * r + a];
    }
    model_2d(v_true, dt_data, nt, sh.src, rec, sh.ntr, sh.data);
    model_2d(v_mig, dt_data, nt, sh.src, rec, sh.ntr, d0);
    for (size_t i = 0; i < (size_t)sh.ntr * sh.ns; i++)
        sh.data[i] -= d0[i];
    free(rec);
    free(d0);
    float *ref = migrate(fine, &sh), *raw = migrate(coarse, &sh), *cor = migrate(corrected, &sh);
    const double m_raw = misfit(raw, ref), m_cor = misfit(cor, ref);
    const double z_ref = mean_depth(ref), z_raw = mean_depth(raw), z_cor = mean_depth(cor);
    fprintf(stderr,
            "rtm time dispersion: dt %.4g ms (fine %.4g ms, data %.4g ms): image misfit to the fine-dt image "
            "%.4f uncorrected, %.4f corrected; reflector at %.3f cells (fine dt), %.3f uncorrected, %.3f corrected "
            "(interface at %.1f)\n",
            dt * 1e3, rtm_engine_dt(fine) * 1e3, dt_data * 1e3, m_raw, m_cor, z_ref, z_raw, z_cor, ZR - 0.5);
    /* the fine-dt image puts the reflector where it is */
    cr_expect_lt(fabs(z_ref - (ZR - 0.5)), 0.5, "fine dt: reflector at %g cells", z_ref);
    /* uncorrected, the dispersion shows; corrected, the coarse-dt image is the fine-dt one */
    cr_expect_gt(m_raw, 0.15, "uncorrected misfit %g: the case must show the dispersion", m_raw);
    cr_expect_lt(m_cor, 0.02, "corrected misfit %g", m_cor);
    cr_expect_gt(fabs(z_raw - z_ref), 0.3, "uncorrected depth %g, fine %g", z_raw, z_ref);
    cr_expect_lt(fabs(z_cor - z_ref), 0.05, "corrected depth %g, fine %g", z_cor, z_ref);
    free(ref);
    free(raw);
    free(cor);
    free(sh.rec);
    free(sh.data);
    rtm_engine_destroy(coarse);
    rtm_engine_destroy(fine);
    rtm_engine_destroy(corrected);
}

/* The engine refuses a wavelet it cannot correct (the jobs' reports say it first):
 * 90 Hz Ricker, fmax 225 Hz, against 1 / (pi dt) = 116 Hz at 0.99 of the stable dt. */
Test(time_dispersion_rtm, engine_refuses_a_wavelet_beyond_the_band)
{
    static float v[NX * NZ];
    for (int i = 0; i < NX * NZ; i++)
        v[i] = 2000.0f;
    struct sl_device dev;
    cr_assert_eq(backend_select("cpu", &dev), 0);
    struct rtm_params p;
    rtm_params_init(&p);
    cr_expect(!p.time_dispersion, "the default is none");
    p.f_peak = p.f_ref = 90.0;
    p.cfl = 0.99;
    p.time_dispersion = true;
    struct rtm_volume vol = {.n = {NX, 1, NZ}, .d = {D, D, D}, .o = {0, 0, 0}, .v = v};
    struct rtm_engine *e = NULL;
    cr_expect_eq(rtm_engine_create(&p, &dev, &vol, &e), -EINVAL);
    cr_expect_null(e);
    cr_expect_not_null(strstr(err_msg(), "225 Hz"), "%s", err_msg());
    cr_expect_not_null(strstr(err_msg(), "time_dispersion"), "%s", err_msg());
    p.time_dispersion = false; /* without the correction it is only a points-per-wavelength warning */
    cr_expect_eq(rtm_engine_create(&p, &dev, &vol, &e), 0, "%s", err_msg());
    rtm_engine_destroy(e);
}
