/* rtm of a 2D model (n[1] == 1: the 2D stencil, no y layers) through the engine: a
 * horizontal reflector imaged at its depth, a dipping one at its dip, and the
 * strategies agreeing as in 3D (checkpoint bit for bit, boundary to float rounding).
 * The shots are modeled in 2D with the propagator (reflections only: the same shot in
 * the background model subtracted), the engine's dt. */
#include <criterion/criterion.h>
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

#define NX 80
#define NZ 44
#define D 10.0
#define PML 16
#define FPEAK 15.0

/* Traces of a point (line) source at SRC in V (2D), NT + 1 samples of step DT at the
 * NTR receivers REC: sample k = p(k dt). */
static void model_2d(const float *v, double dt, int nt, const double src[3], const double *rec, int ntr,
                     float *out)
{
    struct sl_device dev;
    cr_assert_eq(backend_select("cpu", &dev), 0);
    const int n[3] = {NX, 1, NZ};
    const double d[3] = {D, D, D}, o[3] = {0, 0, 0};
    struct prop_params p;
    prop_params_init(&p, n, d, o, dt, PML);
    cr_assert_eq(p.grid.face[2], PROP_FACE_NONE);
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

struct case2d {
    float v_true[NX * NZ], v_mig[NX * NZ];
    struct rtm_engine *e;
    struct shot sh;
};

/* The engine on v_mig (a constant 2000 m/s), and a shot at x = SX cells, 20 m deep,
 * with a receiver every cell at 20 m from x = 3 to NX - 4, of T_MAX s. */
static void case_run(struct case2d *c, int sx, double t_max)
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
    p.random.width = PML;
    p.image_every = 1; /* every step, as these expectations were measured (the default is auto) */
    /* the data are modeled at the engine's dt in v_true, whose 2600 m/s is faster than the
     * 2000 m/s the engine's dt is chosen for: a cfl that leaves room for it (0.9 x 2000 /
     * 2600 would be the edge of the 2D limit) */
    p.cfl = 0.6;
    struct rtm_volume vol = {.n = {NX, 1, NZ}, .d = {D, D, D}, .o = {0, 0, 0}, .v = c->v_mig};
    cr_assert_eq(rtm_engine_create(&p, &dev, &vol, &c->e), 0, "%s", err_msg());
    const double dt = rtm_engine_dt(c->e);
    const int nt = (int)floor(t_max / dt + 1e-6);
    struct shot *sh = &c->sh;
    memset(sh, 0, sizeof *sh);
    sh->id = 1;
    sh->ns = nt + 1;
    sh->dt = dt;
    sh->ntr = NX - 6;
    sh->src[0] = sx * D;
    sh->src[2] = 20.0;
    sh->rec = malloc((size_t)sh->ntr * 3 * sizeof(float));
    sh->data = malloc((size_t)sh->ntr * sh->ns * sizeof(float));
    double *rec = malloc((size_t)sh->ntr * 3 * sizeof(double));
    float *d0 = malloc((size_t)sh->ntr * sh->ns * sizeof(float));
    for (int r = 0; r < sh->ntr; r++) {
        rec[3 * r] = (3 + r) * D;
        rec[3 * r + 1] = 0.0;
        rec[3 * r + 2] = 20.0;
        for (int a = 0; a < 3; a++)
            sh->rec[3 * r + a] = (float)rec[3 * r + a];
    }
    model_2d(c->v_true, dt, nt, sh->src, rec, sh->ntr, sh->data);
    model_2d(c->v_mig, dt, nt, sh->src, rec, sh->ntr, d0);
    for (size_t i = 0; i < (size_t)sh->ntr * sh->ns; i++)
        sh->data[i] -= d0[i];
    free(rec);
    free(d0);
}

static void case_free(struct case2d *c)
{
    rtm_engine_destroy(c->e);
    free(c->sh.rec);
    free(c->sh.data);
}

static float *migrate(struct case2d *c, int strategy, int schedule)
{
    int off[3], n[3];
    cr_assert_eq(rtm_engine_patch(c->e, RTM_SHOT(&c->sh), off, n), 0, "%s", err_msg());
    cr_assert(n[0] == NX && n[1] == 1 && n[2] == NZ, "patch %d x %d x %d", n[0], n[1], n[2]);
    float *img = malloc((size_t)NX * NZ * sizeof *img);
    rtm_engine_force_strategy(c->e, strategy, schedule);
    struct rtm_shot_stats st;
    cr_assert_eq(rtm_engine_migrate_patch(c->e, RTM_SHOT(&c->sh), img, NULL, &st), 0, "%s", err_msg());
    cr_assert_eq(st.strategy, strategy);
    cr_assert_eq(st.n[1], 1, "no layers across the line: %d cells in y", st.n[1]);
    return img;
}

Test(rtm_2d, horizontal_reflector_at_its_depth, .timeout = 120)
{
    static struct case2d c;
    const int zr = 28; /* first cell of the faster layer: the interface is at 27.5 */
    for (int z = 0; z < NZ; z++)
        for (int x = 0; x < NX; x++) {
            c.v_mig[z * NX + x] = 2000.0f;
            c.v_true[z * NX + x] = z >= zr ? 2600.0f : 2000.0f;
        }
    case_run(&c, NX / 2, 0.55);
    float *img = migrate(&c, RTM_FULL, -1);
    const int n[3] = {NX, 1, NZ};
    int checked = 0;
    for (int x = NX / 2 - 16; x <= NX / 2 + 16; x++) {
        if (x == NX / 2)
            continue; /* the column through the source: u's near field dominates it */
        double pk, z = envelope_peak(img, n, x, 0, 12, NZ - 8, &pk);
        cr_assert_gt(pk, 0.0);
        cr_assert_leq(fabs(z - (zr - 0.5)), 1.0, "column %d: image peaks at z = %.2f, reflector at %.1f", x, z,
                      zr - 0.5);
        checked++;
    }
    cr_assert_eq(checked, 32);
    free(img);
    case_free(&c);
}

Test(rtm_2d, dipping_reflector_at_its_dip, .timeout = 120)
{
    static struct case2d c;
    const double dip = 15.0 * M_PI / 180.0, z0 = 24.0; /* interface depth (cells) at x = NX / 2 */
    for (int z = 0; z < NZ; z++)
        for (int x = 0; x < NX; x++) {
            c.v_mig[z * NX + x] = 2000.0f;
            c.v_true[z * NX + x] = z >= z0 + (x - NX / 2) * tan(dip) ? 2600.0f : 2000.0f;
        }
    case_run(&c, NX / 2, 0.55);
    float *img = migrate(&c, RTM_FULL, -1);
    const int n[3] = {NX, 1, NZ};
    /* least-squares line through the envelope peaks of the well-lit columns (the
     * reflector is lit up-dip of the source) */
    double sx = 0, sz = 0, sxx = 0, sxz = 0, m = 0, top = 0, pk[NX], zp[NX];
    for (int x = 0; x < NX; x++) {
        zp[x] = envelope_peak(img, n, x, 0, 10, NZ - 8, &pk[x]);
        top = fmax(top, pk[x]);
    }
    for (int x = NX / 2 - 24; x <= NX / 2 + 8; x++) {
        if (x == NX / 2 || pk[x] < 0.3 * top)
            continue;
        sx += x;
        sz += zp[x];
        sxx += (double)x * x;
        sxz += x * zp[x];
        m++;
    }
    cr_assert_geq(m, 20, "only %.0f columns lit", m);
    double slope = (m * sxz - sx * sz) / (m * sxx - sx * sx);
    double got = atan(slope) * 180.0 / M_PI, at = (sz - slope * sx) / m + slope * (NX / 2);
    cr_log_info("2D dip: %.2f degrees over %.0f columns (true 15), depth %.2f cells at the source (true %.1f)", got,
                m, at, z0 - 0.5);
    cr_assert_leq(fabs(got - 15.0), 3.0, "imaged dip %.2f degrees, true 15", got);
    cr_assert_leq(fabs(at - (z0 - 0.5)), 1.0, "imaged depth %.2f cells at the source, true %.1f", at, z0 - 0.5);
    free(img);
    case_free(&c);
}

/* As in 3D (rtm_strategies): checkpoints give the full image bit for bit, boundary to
 * float rounding; random images the same reflector (its scattered energy aside). */
Test(rtm_2d, strategies_agree, .timeout = 120)
{
    static struct case2d c;
    for (int z = 0; z < NZ; z++)
        for (int x = 0; x < NX; x++) {
            c.v_mig[z * NX + x] = 2000.0f;
            c.v_true[z * NX + x] = z >= 28 ? 2600.0f : 2000.0f;
        }
    case_run(&c, NX / 2, 0.55);
    float *full = migrate(&c, RTM_FULL, -1);
    const size_t cells = (size_t)NX * NZ;
    float *bin = migrate(&c, RTM_CHECKPOINT, RTM_CKPT_BINOMIAL);
    cr_assert_eq(memcmp(bin, full, cells * sizeof *full), 0, "binomial checkpoints differ: %.3g",
                 test_rel_l2_f32(bin, full, cells));
    float *uni = migrate(&c, RTM_CHECKPOINT, RTM_CKPT_UNIFORM);
    cr_assert_eq(memcmp(uni, full, cells * sizeof *full), 0, "uniform checkpoints differ: %.3g",
                 test_rel_l2_f32(uni, full, cells));
    float *bnd = migrate(&c, RTM_BOUNDARY, -1);
    double eb = test_rel_l2_f32(bnd, full, cells);
    float *rnd = migrate(&c, RTM_RANDOM, -1);
    double er = test_rel_l2_f32(rnd, full, cells);
    cr_log_info("2D, relative difference to full: boundary %.3g, random %.3g", eb, er);
    cr_assert_lt(eb, 1e-4, "boundary vs full: %.3g", eb);
    const int n[3] = {NX, 1, NZ};
    double pk, z = envelope_peak(rnd, n, NX / 2 - 8, 0, 12, NZ - 8, &pk);
    cr_assert_leq(fabs(z - 27.5), 1.0, "random: the reflector at z = %.2f, true 27.5", z);
    free(full), free(bin), free(uni), free(bnd), free(rnd);
    case_free(&c);
}
