/* The optimized operator in the real propagator, against independent references:
 *   - a homogeneous medium against the analytic 3D Green's function at 3 points per
 *     wavelength at the wavelet's fmax (small dt, so the leapfrog's own error is ~3e-4):
 *     optimized under 1 % relative L2, Taylor 8th order several times worse;
 *   - CPML reflection of each face against a run in a much larger domain (>= 40 dB);
 *   - exact time reversal from the last two levels plus the saved strip (< 1e-4), and
 *     RTM's boundary and random strategies reconstructing the source wavefield (< 1e-4),
 *     which also runs the random layers at the optimized stencil's own stability limit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/propagator.h"
#include "kernels/rtm.h"
#include "kernels/stability.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/support.h"
#include "tests/test_rtm_common.h"
#include "tests/wave_support.h"

/* s(t - r/c) / (4 pi r) of the Ricker of peak FP, NT + 1 samples of DT. */
static void green(double *out, int nt, double dt, double fp, double c, double r)
{
    const double t0 = wavelet_ricker_delay(fp);
    for (int it = 0; it <= nt; it++)
        out[it] = wavelet_ricker(it * dt - r / c, fp, t0) / (4.0 * M_PI * r);
}

/* Source and receiver on grid nodes (no interpolation error at 2/3 of Nyquist), offset
 * (28, 5, 3) cells: 3.6 wavelengths at fmax, 1.4 at the peak frequency. */
Test(operator_physics, green_function_at_3_ppw, .timeout = 120)
{
    struct sl_device dev = test_cpu();
    const double c = 2000, h = 10, fmax = c / (3 * h), fp = fmax / wavelet_ricker_fmax(1.0);
    struct wave_params p = {.n = {44, 24, 24}, .d = {h, h, h}, .o = {0, 0, 0}, .order = 8,
                            .pml = {16, 16, 16, 16, 16, 16}, .pml_reflection = 1e-4, .f_ref = fp};
    /* the smaller of the two limits, so both operators run the same dt */
    p.dt = 0.1 * stability_dt_max_op(PROP_OP_OPTIMIZED, 8, 0, p.d, c, false);
    float *v = test_constant_grid(p.n, (float)c);
    const double src[3] = {80, 110, 110}, rec[3] = {360, 160, 140};
    const double r = sqrt(280.0 * 280 + 50 * 50 + 30 * 30);
    const int nt = (int)((wavelet_ricker_delay(fp) + r / c + 1.5 / fp) / p.dt);
    double *ref = malloc((nt + 1) * sizeof *ref);
    float *tr = malloc((nt + 1) * sizeof *tr);
    green(ref, nt, p.dt, fp, c, r);
    const int kinds[3] = {PROP_OP_TAYLOR, PROP_OP_OPTIMIZED, PROP_OP_TAYLOR}, orders[3] = {8, 8, 16};
    double err[3];
    for (int k = 0; k < 3; k++) {
        p.op = kinds[k];
        p.order = orders[k];
        test_wave_traces(&dev, &p, v, src, rec, 1, nt, fp, WAVE_INTERP_NEAREST, tr);
        err[k] = test_rel_l2_f32_f64(tr, ref, nt + 1);
        fprintf(stderr, "green at 3 ppw (fmax %.1f Hz, r %.0f m, dt %.3g ms, %d steps): %s order %d rel L2 %.4g\n",
                fmax, r, 1e3 * p.dt, nt, kinds[k] ? "optimized" : "taylor", orders[k], err[k]);
    }
    cr_assert_lt(err[1], 0.01, "optimized 8: rel L2 %g >= 1 %%", err[1]);
    cr_assert_gt(err[0], 3 * err[1], "taylor 8 (%g) not several times worse than optimized 8 (%g)", err[0], err[1]);
    free(ref);
    free(tr);
    free(v);
}

/* test_wave_physics.c's CPML test with the optimized second derivative (the CPML's first
 * derivatives stay Taylor's: kernels/operator.h). */
Test(operator_physics, cpml_reflection_each_face_40db, .timeout = 120)
{
    struct sl_device dev = test_cpu();
    const double c = 2000, fp = 15, h = 10;
    const int E = 30;
    struct wave_params small = {.n = {31, 31, 31}, .d = {h, h, h}, .o = {0, 0, 0}, .order = 8,
                                .op = PROP_OP_OPTIMIZED, .dt = 1e-3, .pml = {20, 20, 20, 20, 20, 20},
                                .pml_reflection = 1e-4, .f_ref = fp};
    cr_assert_lt(small.dt, stability_dt_max_op(PROP_OP_OPTIMIZED, 8, 0, small.d, c, false));
    struct wave_params big = small;
    for (int a = 0; a < 3; a++) {
        big.n[a] = small.n[a] + 2 * E;
        big.o[a] = -E * h;
        big.pml[2 * a] = big.pml[2 * a + 1] = 0;
    }
    const double src[3] = {150, 150, 150};
    const double rec[6][3] = {{50, 150, 150}, {250, 150, 150}, {150, 50, 150},
                              {150, 250, 150}, {150, 150, 50}, {150, 150, 250}};
    double t0 = wavelet_ricker_delay(fp);
    int nt = (int)((t0 + 200.0 / c + 1.2 / fp) / small.dt);
    cr_assert_lt(nt * small.dt, (800.0 / c) + t0 - 1.5 / fp);
    float *vs = test_constant_grid(small.n, (float)c), *vb = test_constant_grid(big.n, (float)c);
    float *ts = malloc(6 * (nt + 1) * sizeof *ts), *tb = malloc(6 * (nt + 1) * sizeof *tb);
    test_wave_traces(&dev, &small, vs, src, &rec[0][0], 6, nt, fp, WAVE_INTERP_SINC, ts);
    test_wave_traces(&dev, &big, vb, src, &rec[0][0], 6, nt, fp, WAVE_INTERP_SINC, tb);
    const char *face[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
    for (int f = 0; f < 6; f++) {
        double den, db = test_reflection_db(ts + f * (nt + 1), tb + f * (nt + 1), nt + 1, &den);
        fprintf(stderr, "optimized cpml: face %s reflection %.1f dB\n", face[f], db);
        cr_assert_lt(db, -40.0, "face %s: reflection only %.1f dB down", face[f], db);
    }
    free(vs);
    free(vb);
    free(ts);
    free(tb);
}

/* test_wave_physics.c's free-surface ghost with the optimized operator: the surface is an
 * odd mirror of the field, which any symmetric stencil keeps. */
Test(operator_physics, free_surface_ghost, .timeout = 60)
{
    struct sl_device dev = test_cpu();
    const double c = 2000, fp = 10, h = 10;
    struct wave_params p = {.n = {46, 30, 30}, .d = {h, h, h}, .o = {0, 0, 0}, .order = 8, .op = PROP_OP_OPTIMIZED,
                            .dt = 5e-4, .pml = {12, 12, 12, 12, 0, 12}, .pml_reflection = 1e-4, .f_ref = fp,
                            .free_surface = true};
    float *v = test_constant_grid(p.n, (float)c);
    const double src[3] = {80, 150, 150}, rec[3] = {330, 150, 40};
    const double r[2] = {sqrt(250.0 * 250 + 110 * 110), sqrt(250.0 * 250 + 190 * 190)};
    const int nt = (int)((wavelet_ricker_delay(fp) + r[1] / c + 1.5 / fp) / p.dt);
    double *ref = malloc((nt + 1) * sizeof *ref), *ghost = malloc((nt + 1) * sizeof *ghost);
    float *tr = malloc((nt + 1) * sizeof *tr);
    green(ref, nt, p.dt, fp, c, r[0]);
    green(ghost, nt, p.dt, fp, c, r[1]);
    test_wave_traces(&dev, &p, v, src, rec, 1, nt, fp, WAVE_INTERP_SINC, tr);
    const double e_direct = test_rel_l2_f32_f64(tr, ref, nt + 1); /* without the ghost: far off */
    for (int it = 0; it <= nt; it++)
        ref[it] -= ghost[it];
    const double e = test_rel_l2_f32_f64(tr, ref, nt + 1);
    fprintf(stderr, "optimized free surface: rel L2 vs direct - ghost %.4g (vs direct only %.3g)\n", e, e_direct);
    cr_assert_lt(e, 0.02);
    cr_assert_gt(e_direct, 0.3);
    free(ref);
    free(ghost);
    free(tr);
    free(v);
}

/* test_wave_physics.c's time reversal with the optimized operator: the strip width is
 * the half-width, which the optimized stencil shares with Taylor's. */
Test(operator_physics, time_reversal_from_last_two_snapshots, .timeout = 60)
{
    struct sl_device dev = test_cpu();
    const double fp = 12;
    struct wave_params p = {.n = {30, 28, 26}, .d = {10, 11, 9}, .o = {0, 0, 0}, .order = 8,
                            .op = PROP_OP_OPTIMIZED, .dt = 8e-4, .pml = {10, 9, 8, 10, 10, 7},
                            .pml_reflection = 1e-4, .f_ref = fp};
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    srand(7);
    for (size_t i = 0; i < nn; i++)
        v[i] = 1800.0f + 10.0f * (float)(i / (p.n[0] * p.n[1])) + 50.0f * (float)rand() / RAND_MAX;
    cr_assert_lt(p.dt, stability_dt_max_op(PROP_OP_OPTIMIZED, 8, 0, p.d, 2200, false));
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &p, v, &s), 0, "%s", err_msg());
    const double src[3] = {133.3, 141.1, 101.7};
    struct wave_points *ps;
    cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
    const int N = 260, M = 120;
    size_t ns = wave_strip_count(s);
    float *strips = malloc((size_t)(N + 1) * ns * sizeof *strips);
    float *snap = malloc(nn * sizeof *snap), *back = malloc(nn * sizeof *back);
    float *src_t = malloc(N * sizeof *src_t);
    for (int it = 0; it < N; it++)
        src_t[it] = (float)wavelet_ricker(it * p.dt, fp, wavelet_ricker_delay(fp));
    test_wave_forward_strips(s, ps, src_t, N, M, strips, ns, snap);
    wave_swap(s);
    test_wave_back_strips(s, ps, src_t, N, M, strips, ns);
    cr_assert_eq(wave_copy_out(s, false, back), 0);
    double e = test_rel_l2_f32(back, snap, nn), norm = 0;
    for (size_t i = 0; i < nn; i++)
        norm += (double)snap[i] * snap[i];
    fprintf(stderr, "optimized time reversal: %d steps back, rel L2 %.3g\n", N - 1 - M, e);
    cr_assert_gt(norm, 0);
    cr_assert_lt(e, 1e-4);
    wave_points_destroy(ps);
    wave_destroy(s);
    free(strips);
    free(snap);
    free(back);
    free(src_t);
    free(v);
}

/* ---- RTM's strategies (as tests/test_rtm_strategies.c) with [propagator] operator = optimized */

#define NX 32
#define NY 10
#define NZ 24

struct collect {
    float *u;
    size_t cells;
    int nt, visits;
};

static int keep(int n, const float *u, size_t cells, void *ctx)
{
    struct collect *k = ctx;
    cr_assert_eq(cells, k->cells);
    cr_assert(n >= 1 && n <= k->nt);
    k->visits++;
    memcpy(k->u + (size_t)n * cells, u, cells * sizeof(float));
    return 0;
}

static double reconstruction(struct rtm_engine *e, const struct rtm_case *c, const struct shot *sh, int ref_strategy,
                             int ref_schedule, int strategy)
{
    size_t cells = (size_t)NX * NY * NZ;
    struct collect f = {calloc((size_t)(c->nt + 1) * cells, sizeof(float)), cells, c->nt, 0};
    struct collect b = {calloc((size_t)(c->nt + 1) * cells, sizeof(float)), cells, c->nt, 0};
    cr_assert(f.u && b.u);
    cr_assert_eq(rtm_engine_source_wavefield(e, RTM_SHOT(sh), ref_strategy, ref_schedule, keep, &f), 0, "%s",
                 err_msg());
    cr_assert_eq(rtm_engine_source_wavefield(e, RTM_SHOT(sh), strategy, -1, keep, &b), 0, "%s", err_msg());
    cr_assert_eq(f.visits, c->nt);
    cr_assert_eq(b.visits, c->nt);
    int n0 = (int)ceil(1.5 / c->f_peak / c->dt);
    double num = 0, den = 0;
    for (int n = n0; n <= c->nt; n++)
        for (size_t i = 0; i < cells; i++) {
            double x = f.u[(size_t)n * cells + i], y = b.u[(size_t)n * cells + i];
            num += (x - y) * (x - y);
            den += x * x;
        }
    cr_assert_gt(num, 0.0);
    free(f.u);
    free(b.u);
    return sqrt(num / den);
}

Test(operator_physics, rtm_boundary_and_random_reconstruct_with_optimized, .timeout = 120)
{
    struct rtm_case c;
    struct shot sh;
    rtm_case_init(&c, NX, NY, NZ, 10.0, 4, 130, 2000.0);
    c.pml = 6;
    for (int z = 14; z < NZ; z++)
        for (size_t i = 0; i < (size_t)NX * NY; i++)
            c.v_mig[(size_t)z * NX * NY + i] = 2500.0f;
    rtm_case_synth_shot(&c, 7, 16 * 10.0, &sh);
    struct sl_config cfg;
    rtm_case_config(&c, &cfg);
    cfg.propagator.op = OPERATOR_OPTIMIZED;
    cr_assert_lt(c.dt, stability_dt_max_op(PROP_OP_OPTIMIZED, c.order, 0, c.d, 2500, false));
    struct rtm_engine *e = rtm_case_engine(&c, &cfg);
    double bnd = reconstruction(e, &c, &sh, STRAT_FULL, -1, STRAT_BOUNDARY);
    double rnd = reconstruction(e, &c, &sh, STRAT_RANDOM, RTM_RANDOM_FORWARD, STRAT_RANDOM);
    fprintf(stderr, "optimized rtm reconstruction: boundary %.3g, random %.3g\n", bnd, rnd);
    cr_assert_lt(bnd, 1e-4);
    cr_assert_lt(rnd, 1e-4);
    rtm_engine_destroy(e);
    config_free(&cfg);
    rtm_case_shot_free(&sh);
    rtm_case_free(&c);
}
