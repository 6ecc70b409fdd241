/* The implicit operator inside the CPU reference propagator (wave_params.op =
 * PROP_OP_IMPLICIT), checked against independent computations: the analytic 3D Green's
 * function at 3 points per wavelength (Taylor 8th order beside it), the arrival time after
 * 50 wavelengths on a long line, the CPML's reflection against a run in a much larger
 * domain, the boundary strategy's exact reconstruction (CPML, free surface, 2D) and what
 * it needs (the interface values: without them it is not exact), the random strategy's
 * reversal, and the refusals. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "kernels/implicit_op.h"
#include "kernels/propagator.h"
#include "kernels/random_boundary.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/support.h"
#include "tests/wave_support.h"

/* The largest stable dt of the implicit operator of ORDER on spacing H (3D, cubic grid):
 * v^2 dt^2 3 Smax / h^2 <= 4. */
static double dt_max_implicit(int order, double h, double v)
{
    return 2.0 * h / (v * sqrt(3.0 * implicit_symbol_max(order, 0)));
}

/* 3 points per wavelength at fmax = 2.5 fp; source and receivers on grid nodes (so no
 * interpolation error enters), receivers ~155 m away along an axis, a face diagonal and
 * the body diagonal; dt 1e-4 s (time dispersion at fmax: 7e-5, negligible). */
Test(implicit_wave, green_function_at_3_ppw, .timeout = 180)
{
    struct sl_device dev = test_cpu();
    const double c = 2000, h = 10, fp = c / (3 * h) / 2.5;
    struct wave_params p = {.n = {32, 28, 26}, .d = {h, h, h}, .order = 8, .dt = 1e-4,
                            .pml = {16, 16, 16, 16, 16, 16}, .pml_reflection = 1e-4, .f_ref = fp};
    cr_assert_lt(p.dt, dt_max_implicit(8, h, c));
    float *v = test_constant_grid(p.n, (float)c);
    const double src[3] = {8 * h, 8 * h, 8 * h};
    const double rec[3][3] = {{23 * h, 8 * h, 8 * h}, {19 * h, 19 * h, 8 * h}, {17 * h, 17 * h, 17 * h}};
    const char *dir[3] = {"axis", "face diagonal", "body diagonal"};
    double t0 = wavelet_ricker_delay(fp);
    int nt = (int)((t0 + 160.0 / c + 1.2 / fp) / p.dt);
    float *tr = malloc(3 * (nt + 1) * sizeof *tr);
    double *ref = malloc((nt + 1) * sizeof *ref);
    double err[2][3];
    for (int op = 0; op < 2; op++) {
        p.op = op ? PROP_OP_IMPLICIT : PROP_OP_TAYLOR;
        test_wave_traces(&dev, &p, v, src, &rec[0][0], 3, nt, fp, WAVE_INTERP_NEAREST, tr);
        for (int r = 0; r < 3; r++) {
            double d = sqrt(pow(rec[r][0] - src[0], 2) + pow(rec[r][1] - src[1], 2) + pow(rec[r][2] - src[2], 2));
            for (int it = 0; it <= nt; it++)
                ref[it] = wavelet_ricker(it * p.dt - d / c, fp, t0) / (4 * M_PI * d);
            err[op][r] = test_rel_l2_f32_f64(tr + r * (nt + 1), ref, nt + 1);
            fprintf(stderr, "green 3 ppw (fmax %.1f Hz, dt %g s): %s, %s at %.1f m: rel L2 %.4f %%\n",
                    2.5 * fp, p.dt, op ? "implicit 8" : "taylor 8", dir[r], d, 100 * err[op][r]);
        }
    }
    /* worst direction: Taylor's is the axis (its diagonals are good), the implicit
     * operator's error is nearly the same in every direction */
    double worst[2] = {0, 0};
    for (int r = 0; r < 3; r++) {
        cr_assert_lt(err[1][r], 0.01, "implicit, %s: rel L2 %g", dir[r], err[1][r]);
        for (int op = 0; op < 2; op++)
            worst[op] = fmax(worst[op], err[op][r]);
    }
    fprintf(stderr, "green 3 ppw, worst direction: taylor 8 %.3f %%, implicit 8 %.3f %% (%.1fx)\n", 100 * worst[0],
            100 * worst[1], worst[0] / worst[1]);
    cr_assert_lt(3 * worst[1], worst[0], "taylor 8 (%g) is not several times worse than implicit (%g)", worst[0],
                 worst[1]);
    free(tr);
    free(ref);
    free(v);
}

/* A long line (x; one y plane, one z point of huge spacing: a 1D medium): a pulse whose
 * highest frequency (2.5 fp) has 3 points per wavelength runs 50 wavelengths of fp (375
 * cells) from a near receiver to a far one.  Its travel time between them, from the peak
 * of their cross-correlation, against 375 h / c.  The source injects the time derivative
 * of a Ricker, so that the 1D response is a Ricker (no tail). */
static double arrival_error(int op, double *dt_out)
{
    struct sl_device dev = test_cpu();
    const double c = 1000, h = 10, fp = c / (3 * h) / 2.5;
    const int N = 520, i0 = 60, L = 375;
    struct wave_params p = {.n = {N, 1, 1}, .d = {h, h, 1e6}, .order = 8, .op = op, .pml = {40, 40, 0, 0, 0, 0},
                            .pml_reflection = 1e-4, .f_ref = fp,
                            .face = {WAVE_FACE_CPML, WAVE_FACE_CPML, WAVE_FACE_NONE, WAVE_FACE_NONE,
                                     WAVE_FACE_CPML, WAVE_FACE_CPML}};
    p.dt = 0.05 * h / c;
    *dt_out = p.dt;
    float *v = test_constant_grid(p.n, (float)c);
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &p, v, &s), 0, "%s", err_msg());
    const double src[3] = {(i0 - 10) * h, 0, 0}, rec[2][3] = {{i0 * h, 0, 0}, {(i0 + L) * h, 0, 0}};
    struct wave_points *ps, *pr;
    cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_NEAREST, &ps), 0, "%s", err_msg());
    cr_assert_eq(wave_points_create(s, &rec[0][0], 2, WAVE_INTERP_NEAREST, &pr), 0, "%s", err_msg());
    const double t0 = wavelet_ricker_delay(fp);
    const int nt = (int)((2 * t0 + (L + 12) * h / c) / p.dt);
    float *tr = calloc(2 * (size_t)(nt + 1), sizeof *tr);
    for (int it = 0; it < nt; it++) {
        cr_assert_eq(wave_step(s), 0);
        float a = (float)(wavelet_ricker((it + 1) * p.dt, fp, t0) - wavelet_ricker(it * p.dt, fp, t0));
        cr_assert_eq(wave_inject(s, ps, &a, 1, 1.0f, 0), 0);
        cr_assert_eq(wave_sample(s, pr, tr + it + 1, nt + 1, 0), 0);
    }
    /* lag of the far trace behind the near one: peak of the cross-correlation, refined by
     * a parabola through the three samples around it */
    const float *a = tr, *b = tr + nt + 1;
    const int lag0 = (int)(L * h / c / p.dt);
    double cc[3] = {0}, best = -INFINITY;
    int at = 0;
    for (int lag = lag0 - 400; lag <= lag0 + 400; lag++) {
        double sum = 0;
        for (int it = 0; it + lag <= nt; it++)
            sum += (double)a[it] * b[it + lag];
        if (sum > best) {
            best = sum;
            at = lag;
        }
    }
    cr_assert(at > lag0 - 400 && at < lag0 + 400, "correlation peak at the edge of the search");
    for (int q = -1; q <= 1; q++) {
        double sum = 0;
        for (int it = 0; it + at + q <= nt; it++)
            sum += (double)a[it] * b[it + at + q];
        cc[q + 1] = sum;
    }
    double frac = 0.5 * (cc[0] - cc[2]) / (cc[0] - 2 * cc[1] + cc[2]);
    double t_meas = (at + frac) * p.dt, t_true = L * h / c;
    wave_points_destroy(ps);
    wave_points_destroy(pr);
    wave_destroy(s);
    free(tr);
    free(v);
    return t_meas / t_true - 1;
}

Test(implicit_wave, arrival_time_after_50_wavelengths, .timeout = 120)
{
    double dt;
    double ei = arrival_error(PROP_OP_IMPLICIT, &dt);
    double et = arrival_error(PROP_OP_TAYLOR, &dt);
    fprintf(stderr, "arrival after 50 wavelengths (of fp) at 3 ppw (of 2.5 fp), dt %.2g s (0.05 h/c): implicit 8 "
            "%+.4f %%, taylor 8 %+.4f %% of the travel time\n", dt, 100 * ei, 100 * et);
    cr_assert_lt(fabs(ei), 1e-3, "implicit: arrival error %.4f %%", 100 * ei);
}

/* CPML: the same source and receivers in the test domain (20 layers of degree 2, and the
 * config's default thin layers: 12 of degree 4, pml_reflection 1e-3) and in one 30 cells
 * larger on every side with rigid walls whose echo arrives after the window (as
 * tests/test_wave_physics.c does for Taylor). */
Test(implicit_wave, cpml_reflection_each_face_40db, .timeout = 180)
{
    struct sl_device dev = test_cpu();
    const double c = 2000, fp = 15, h = 10;
    const int E = 30;
    struct wave_params small = {.n = {31, 31, 31}, .d = {h, h, h}, .order = 8, .op = PROP_OP_IMPLICIT,
                                .dt = 1e-3, .pml = {20, 20, 20, 20, 20, 20}, .pml_reflection = 1e-4, .f_ref = fp};
    cr_assert_lt(small.dt, dt_max_implicit(8, h, c));
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
    struct sl_config cfg;
    config_defaults(&cfg);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) { /* the default layers */
            for (int f = 0; f < 6; f++)
                small.pml[f] = cfg.propagator.pml_width[f];
            small.pml_degree = cfg.propagator.pml_degree;
            small.pml_reflection = cfg.propagator.pml_reflection;
            test_wave_traces(&dev, &small, vs, src, &rec[0][0], 6, nt, fp, WAVE_INTERP_SINC, ts);
        }
        for (int f = 0; f < 6; f++) {
            double den, db = test_reflection_db(ts + f * (nt + 1), tb + f * (nt + 1), nt + 1, &den);
            fprintf(stderr, "implicit cpml (%d layers, degree %d): face %s reflection %.1f dB\n", small.pml[0],
                    small.pml_degree ? small.pml_degree : 2, face[f], db);
            cr_assert_gt(den, 0);
            cr_assert_lt(db, -40.0, "face %s: reflection only %.1f dB down", face[f], db);
        }
    }
    config_free(&cfg);
    free(vs);
    free(vb);
    free(ts);
    free(tb);
}

/* Boundary strategy on P (random velocities): forward saving the strip (with the
 * interface values) each step, backward from the last two levels loading it; the field
 * at step M against the snapshot taken forward.  SPOIL: zero the interface values before
 * the reverse run (what a strip without them would give). */
static double reconstruction(struct wave_params p, bool spoil, bool interior)
{
    struct sl_device dev = test_cpu();
    const double fp = 12;
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    srand(7);
    for (size_t i = 0; i < nn; i++)
        v[i] = 1800.0f + 10.0f * (float)(i / ((size_t)p.n[0] * p.n[1])) + 50.0f * (float)rand() / RAND_MAX;
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &p, v, &s), 0, "%s", err_msg());
    wave_set_reverse_interior(s, interior);
    const double src[3] = {133.3, p.n[1] > 1 ? 141.1 : 0, 101.7};
    struct wave_points *ps;
    cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
    const int N = 220, M = 100;
    size_t ns = wave_strip_count(s);
    float *strips = malloc((size_t)(N + 1) * ns * sizeof *strips);
    float *snap = malloc(nn * sizeof *snap), *back = malloc(nn * sizeof *back);
    float *src_t = malloc(N * sizeof *src_t);
    for (int it = 0; it < N; it++)
        src_t[it] = (float)wavelet_ricker(it * p.dt, fp, wavelet_ricker_delay(fp));
    test_wave_forward_strips(s, ps, src_t, N, M, strips, ns, snap);
    if (spoil) {
        /* the interface values follow the field's strip cells */
        struct wave_params q = p;
        q.op = PROP_OP_TAYLOR;
        struct wave_sim *t;
        cr_assert_eq(wave_create(&dev, &q, v, &t), 0, "%s", err_msg());
        size_t ncells = wave_strip_count(t);
        wave_destroy(t);
        cr_assert_lt(ncells, ns);
        for (int it = 0; it <= N; it++)
            memset(strips + (size_t)it * ns + ncells, 0, (ns - ncells) * sizeof(float));
    }
    wave_swap(s);
    test_wave_back_strips(s, ps, src_t, N, M, strips, ns);
    cr_assert_eq(wave_copy_out(s, false, back), 0);
    double e = test_rel_l2_f32(back, snap, nn);
    wave_points_destroy(ps);
    wave_destroy(s);
    free(strips);
    free(snap);
    free(back);
    free(src_t);
    free(v);
    return e;
}

Test(implicit_wave, boundary_strategy_reconstructs_exactly, .timeout = 120)
{
    struct wave_params p = {.n = {30, 28, 26}, .d = {10, 11, 9}, .order = 8, .op = PROP_OP_IMPLICIT, .dt = 7e-4,
                            .pml = {10, 9, 8, 10, 10, 7}, .pml_reflection = 1e-4, .f_ref = 12};
    cr_assert_lt(p.dt, dt_max_implicit(8, 9, 2200));
    double e_cpml = reconstruction(p, false, true);
    double e_full = reconstruction(p, false, false);
    struct wave_params fs = p;
    fs.free_surface = true;
    fs.pml[4] = 0;
    double e_free = reconstruction(fs, false, true);
    struct wave_params p2 = {.n = {40, 1, 36}, .d = {10, 10, 10}, .order = 8, .op = PROP_OP_IMPLICIT, .dt = 7e-4,
                             .pml = {12, 12, 0, 0, 0, 12}, .pml_reflection = 1e-4, .f_ref = 12, .free_surface = true,
                             .face = {WAVE_FACE_CPML, WAVE_FACE_CPML, WAVE_FACE_NONE, WAVE_FACE_NONE,
                                      WAVE_FACE_FREE, WAVE_FACE_CPML}};
    double e_2d = reconstruction(p2, false, true);
    double e_spoilt = reconstruction(p, true, true);
    fprintf(stderr, "implicit boundary strategy, 119 steps back: rel L2 %.3g (CPML), %.3g (reverse over the padded "
            "grid), %.3g (free surface), %.3g (2D, free surface); without the interface values %.3g\n",
            e_cpml, e_full, e_free, e_2d, e_spoilt);
    cr_assert_lt(e_cpml, 1e-4);
    cr_assert_lt(e_full, 1e-4);
    cr_assert_lt(e_free, 1e-4);
    cr_assert_lt(e_2d, 1e-4);
    cr_assert_gt(e_spoilt, 1e-2, "the interface values should matter (%g)", e_spoilt);
}

/* Random strategy: RANDOM faces (CPML off), randomized layers, free surface, 3D; the run
 * reverses from its last two time levels alone. */
Test(implicit_wave, random_boundary_reverses, .timeout = 120)
{
    struct sl_device dev = test_cpu();
    const double fp = 12;
    struct wave_params p = {.n = {30, 26, 28}, .d = {10, 10, 10}, .order = 8, .op = PROP_OP_IMPLICIT, .dt = 8e-4,
                            .pml = {10, 10, 10, 10, 0, 10}, .pml_reflection = 1e-4, .f_ref = fp};
    for (int f = 0; f < 6; f++)
        p.face[f] = WAVE_FACE_RANDOM;
    p.face[4] = WAVE_FACE_FREE;
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = test_constant_grid(p.n, 2000);
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &p, v, &s), 0, "%s", err_msg());
    cr_assert(!wave_cpml_enabled(s));
    struct random_boundary rb = {.ramp = 0, .range = 0, .width = 10, .seed = 3,
                                 .vstable = 0.95 * 2 * 10 / (p.dt * sqrt(3 * implicit_symbol_max(8, 0))),
                                 .vmin = 2000};
    cr_assert_eq(wave_randomize_layers(s, &rb, 1), 0, "%s", err_msg());
    const double src[3] = {143.3, 121.1, 51.7};
    struct wave_points *ps;
    cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
    const int NT = 300, M = 120;
    float *snap = malloc(nn * sizeof *snap), *back = malloc(nn * sizeof *back);
    for (int it = 0; it < NT; it++) {
        float a = (float)wavelet_ricker(it * p.dt, fp, wavelet_ricker_delay(fp));
        cr_assert_eq(wave_step(s), 0);
        cr_assert_eq(wave_inject(s, ps, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        if (it + 1 == M)
            cr_assert_eq(wave_copy_out(s, false, snap), 0);
    }
    wave_swap(s);
    for (int n = NT - 1; n > M; n--) {
        float a = (float)wavelet_ricker(n * p.dt, fp, wavelet_ricker_delay(fp));
        cr_assert_eq(wave_step_reverse(s), 0);
        cr_assert_eq(wave_inject(s, ps, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
    }
    cr_assert_eq(wave_copy_out(s, false, back), 0);
    double e = test_rel_l2_f32(back, snap, nn);
    fprintf(stderr, "implicit random boundary: %d steps back, rel L2 %.3g\n", NT - 1 - M, e);
    cr_assert_lt(e, 1e-4);
    wave_points_destroy(ps);
    wave_destroy(s);
    free(snap);
    free(back);
    free(v);
}

Test(implicit_wave, refusals)
{
    struct sl_device dev = test_cpu();
    /* a subdomain: the operator is line-global */
    struct wave_params p = {.n = {20, 20, 20}, .d = {10, 10, 10}, .order = 8, .op = PROP_OP_IMPLICIT, .dt = 1e-3,
                            .pml = {10, 10, 10, 10, 10, 10}, .pml_reflection = 1e-4, .f_ref = 10,
                            .origin = {0, 0, 0}, .global_n = {40, 20, 20}};
    p.face[1] = WAVE_FACE_HALO;
    cr_assert_eq(wave_params_check(&p), -ENOTSUP);
    cr_assert(strstr(err_msg(), "subdomain"), "%s", err_msg());
    /* a bad band */
    struct wave_params q = {.n = {20, 20, 20}, .d = {10, 10, 10}, .order = 8, .op = PROP_OP_IMPLICIT, .dt = 1e-3,
                            .op_band = 1.5, .pml_reflection = 1e-4};
    cr_assert_eq(wave_params_check(&q), -EINVAL);
    /* a good one creates, and its memory estimate counts the extra field */
    q.op_band = 0.8;
    float *v = test_constant_grid(q.n, 2000);
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &q, v, &s), 0, "%s", err_msg());
    struct wave_params t = q;
    t.op = PROP_OP_TAYLOR;
    cr_assert_gt(wave_memory_bytes(&q), wave_memory_bytes(&t));
    wave_destroy(s);
    free(v);
}
