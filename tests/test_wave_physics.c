/* Physics of the CPU reference propagator, checked against independent computations:
 * the analytic 3D Green's function (and its order convergence), CPML reflection against
 * a run in a much larger domain, the free-surface ghost (image source of opposite sign),
 * exact time reversal from the last two snapshots plus the saved boundary strip, the
 * stability limit (growth just above it, none just below), bitwise checkpoints; and the
 * conventions docs/model.md gives users: the Ricker's 1.5 / f_peak delay, and the
 * traces of `seislive model` as the Green's function s(t - r/v) / (4 pi r). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <segyio/segy.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/stability.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/support.h"
#include "tests/wave_support.h"

/* The analytic pressure of a point source s(t) in a homogeneous medium:
 * sum over sources k of SIGN_k s(t - r_k/c) / (4 pi r_k), in double. */
static void analytic(double *out, int nt, double dt, double fp, double c, const double *r,
                     const double *sign, int nsrc)
{
    double t0 = wavelet_ricker_delay(fp);
    for (int it = 0; it <= nt; it++) {
        double sum = 0;
        for (int k = 0; k < nsrc; k++)
            sum += sign[k] * wavelet_ricker(it * dt - r[k] / c, fp, t0) / (4.0 * M_PI * r[k]);
        out[it] = sum;
    }
}

static double dist(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* 8 points per wavelength at fmax = 2.5 fp, off-grid source and receiver (sinc). */
Test(wave_physics, green_function_and_order_convergence, .timeout = 120)
{
    struct sl_device dev = test_cpu();
    const double c = 2000, fp = 10, h = 10;
    cr_assert_geq(c / (wavelet_ricker_fmax(fp) * h), 8.0);
    struct wave_params p = {.n = {40, 34, 34}, .d = {h, h, h}, .o = {0, 0, 0}, .dt = 5e-4,
                            .pml = {20, 20, 20, 20, 20, 20}, .pml_reflection = 1e-4, .f_ref = fp};
    float *v = test_constant_grid(p.n, (float)c);
    const double src[3] = {63.3, 161.7, 168.2}, rec[3] = {323.6, 181.1, 143.9};
    double r = dist(src, rec);
    int nt = (int)((wavelet_ricker_delay(fp) + r / c + 1.5 / fp) / p.dt);
    double *ref = malloc((nt + 1) * sizeof *ref);
    double one = 1;
    analytic(ref, nt, p.dt, fp, c, &r, &one, 1);
    test_wave_order_convergence(&dev, &p, v, src, rec, nt, fp, c, ref, r, "green");
    free(ref);
    free(v);
}

/* Reflection from each face: the same source and receivers in the test domain (20 CPML
 * layers) and in a domain 30 cells larger on every side, with plain rigid walls whose
 * echo arrives after the window; the difference is what the CPML reflected. */
Test(wave_physics, cpml_reflection_each_face_40db, .timeout = 120)
{
    struct sl_device dev = test_cpu();
    const double c = 2000, fp = 15, h = 10;
    const int E = 30;
    struct wave_params small = {.n = {31, 31, 31}, .d = {h, h, h}, .o = {0, 0, 0}, .order = 8,
                                .dt = 1e-3, .pml = {20, 20, 20, 20, 20, 20},
                                .pml_reflection = 1e-4, .f_ref = fp};
    struct wave_params big = small;
    for (int a = 0; a < 3; a++) {
        big.n[a] = small.n[a] + 2 * E;
        big.o[a] = -E * h;
        big.pml[2 * a] = big.pml[2 * a + 1] = 0; /* rigid walls: their echo comes too late */
    }
    const double src[3] = {150, 150, 150};
    const double rec[6][3] = {{50, 150, 150}, {250, 150, 150}, {150, 50, 150},
                              {150, 250, 150}, {150, 150, 50}, {150, 150, 250}};
    /* The window holds the wave reflected by the near face (source -> face -> receiver,
     * 200 m) in full and ends before the big domain's own boundary echo (>= 800 m). */
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
        fprintf(stderr, "cpml: face %s reflection %.1f dB\n", face[f], db);
        cr_assert_lt(db, -40.0, "face %s: reflection only %.1f dB down", face[f], db);
    }
    free(vs);
    free(vb);
    free(ts);
    free(tb);
}

/* Free surface at z = 0: the trace is the direct wave minus the wave of the image source
 * mirrored above the surface (same amplitude law, opposite sign, later by the extra path). */
Test(wave_physics, free_surface_ghost, .timeout = 60)
{
    struct sl_device dev = test_cpu();
    const double c = 2000, fp = 10, h = 10;
    struct wave_params p = {.n = {46, 30, 30}, .d = {h, h, h}, .o = {0, 0, 0}, .order = 8,
                            .dt = 5e-4, .pml = {12, 12, 12, 12, 0, 12}, .pml_reflection = 1e-4,
                            .f_ref = fp, .free_surface = true};
    float *v = test_constant_grid(p.n, (float)c);
    const double src[3] = {80, 150, 150}, rec[3] = {330, 150, 40};
    const double img[3] = {src[0], src[1], -src[2]};
    double r[2] = {dist(src, rec), dist(img, rec)}, sg[2] = {1, -1};
    int nt = (int)((wavelet_ricker_delay(fp) + r[1] / c + 1.5 / fp) / p.dt);
    double *ref = malloc((nt + 1) * sizeof *ref), *direct = malloc((nt + 1) * sizeof *direct);
    double *plus = malloc((nt + 1) * sizeof *plus);
    float *tr = malloc((nt + 1) * sizeof *tr);
    analytic(ref, nt, p.dt, fp, c, r, sg, 2);
    analytic(direct, nt, p.dt, fp, c, r, sg, 1);
    double sp[2] = {1, 1};
    analytic(plus, nt, p.dt, fp, c, r, sp, 2);
    test_wave_traces(&dev, &p, v, src, rec, 1, nt, fp, WAVE_INTERP_SINC, tr);
    double e_ghost = test_rel_l2_f32_f64(tr, ref, nt + 1), e_direct = test_rel_l2_f32_f64(tr, direct, nt + 1);
    double e_plus = test_rel_l2_f32_f64(tr, plus, nt + 1);
    fprintf(stderr, "free surface: rel L2 vs direct - ghost %.4g, vs direct only %.3g, vs direct + ghost %.3g\n",
            e_ghost, e_direct, e_plus);
    cr_assert_lt(e_ghost, 0.02);
    cr_assert_gt(e_direct, 0.3);
    cr_assert_gt(e_plus, 0.5);
    /* The ghost's time: the residual after removing the direct wave correlates best with
     * the negated image-source arrival at zero lag. */
    double gsh[1] = {r[1]}, one[1] = {-1};
    double *ghost = malloc((nt + 1) * sizeof *ghost);
    analytic(ghost, nt, p.dt, fp, c, gsh, one, 1);
    int best = 0;
    double bestv = -1e300;
    for (int lag = -40; lag <= 40; lag++) {
        double x = 0;
        for (int it = 0; it <= nt; it++)
            if (it + lag >= 0 && it + lag <= nt)
                x += (tr[it + lag] - direct[it + lag]) * ghost[it];
        if (x > bestv) {
            bestv = x;
            best = lag;
        }
    }
    fprintf(stderr, "free surface: ghost lag %d samples (%g s)\n", best, best * p.dt);
    cr_assert(abs(best) <= 1, "ghost arrives %d samples off", best);
    cr_assert_gt(bestv, 0);
    free(ref);
    free(direct);
    free(plus);
    free(ghost);
    free(tr);
    free(v);
}

/* Shallow source and receiver (1.5 and 1.2 cells deep: the sinc support crosses the
 * surface): folding the support onto its mirror keeps the ghosted trace accurate
 * (measured 0.23 %; dropping the nodes above the surface instead gives 3.7 %). */
Test(wave_physics, free_surface_shallow_points, .timeout = 60)
{
    struct sl_device dev = test_cpu();
    const double c = 2000, fp = 10, h = 10;
    struct wave_params p = {.n = {36, 26, 26}, .d = {h, h, h}, .o = {0, 0, 0}, .order = 8,
                            .dt = 5e-4, .pml = {20, 20, 20, 20, 0, 20}, .pml_reflection = 1e-4,
                            .f_ref = fp, .free_surface = true};
    float *v = test_constant_grid(p.n, (float)c);
    const double src[3] = {92.0, 125.0, 15.0}, rec[3] = {262.0, 125.0, 12.0};
    const double img[3] = {src[0], src[1], -src[2]};
    double r[2] = {dist(src, rec), dist(img, rec)}, sg[2] = {1, -1};
    int nt = (int)((wavelet_ricker_delay(fp) + r[1] / c + 1.5 / fp) / p.dt);
    double *ref = malloc((nt + 1) * sizeof *ref);
    float *tr = malloc((nt + 1) * sizeof *tr);
    analytic(ref, nt, p.dt, fp, c, r, sg, 2);
    test_wave_traces(&dev, &p, v, src, rec, 1, nt, fp, WAVE_INTERP_SINC, tr);
    double e = test_rel_l2_f32_f64(tr, ref, nt + 1);
    fprintf(stderr, "free surface, shallow points: rel L2 vs direct - ghost %.4g\n", e);
    cr_assert_lt(e, 0.03);
    free(ref);
    free(tr);
    free(v);
}

/* Boundary strategy: run forward with CPML saving the strip each step, then reconstruct
 * backward from the last two time levels (re-injecting the source) and compare with a
 * snapshot taken on the way forward. */
Test(wave_physics, time_reversal_from_last_two_snapshots, .timeout = 60)
{
    struct sl_device dev = test_cpu();
    const double fp = 12;
    struct wave_params p = {.n = {30, 28, 26}, .d = {10, 11, 9}, .o = {0, 0, 0}, .order = 8,
                            .dt = 8e-4, .pml = {10, 9, 8, 10, 10, 7}, .pml_reflection = 1e-4,
                            .f_ref = fp};
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    srand(7);
    for (size_t i = 0; i < nn; i++)
        v[i] = 1800.0f + 10.0f * (float)(i / (p.n[0] * p.n[1])) + 50.0f * (float)rand() / RAND_MAX;
    cr_assert_lt(p.dt, stability_dt_max(p.order, p.d, 2200));
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &p, v, &s), 0, "%s", err_msg());
    const double src[3] = {133.3, 141.1, 101.7};
    struct wave_points *ps;
    cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
    const int N = 260, M = 120;
    size_t ns = wave_strip_count(s);
    cr_assert_gt(ns, 0);
    float *strips = malloc((size_t)(N + 1) * ns * sizeof *strips);
    float *snap = malloc(nn * sizeof *snap), *back = malloc(nn * sizeof *back);
    float *src_t = malloc(N * sizeof *src_t);
    for (int it = 0; it < N; it++)
        src_t[it] = (float)wavelet_ricker(it * p.dt, fp, wavelet_ricker_delay(fp));
    test_wave_forward_strips(s, ps, src_t, N, M, strips, ns, snap);
    cr_assert_eq(wave_step_index(s), N);
    wave_swap(s); /* cur = p(N-1), prev = p(N) */
    test_wave_back_strips(s, ps, src_t, N, M, strips, ns);
    cr_assert_eq(wave_copy_out(s, false, back), 0);
    double e = test_rel_l2_f32(back, snap, nn);
    double norm = 0;
    for (size_t i = 0; i < nn; i++)
        norm += (double)snap[i] * snap[i];
    fprintf(stderr, "time reversal: %d steps back, rel L2 %.3g (|snapshot| %.3g)\n", N - 1 - M, e, sqrt(norm));
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

static double field_norm(struct wave_sim *s, const int n[3])
{
    size_t nn = (size_t)n[0] * n[1] * n[2];
    float *f = malloc(nn * sizeof *f);
    wave_copy_out(s, false, f);
    double q = 0;
    for (size_t i = 0; i < nn; i++)
        q += (double)f[i] * f[i];
    free(f);
    return sqrt(q);
}

/* The stated limit is the real one: random initial field, no absorbing layers (rigid
 * walls, energy conserving), 3% above the limit it explodes, 3% below it does not. */
Test(wave_physics, stability_limit_is_sharp, .timeout = 60)
{
    struct sl_device dev = test_cpu();
    const double c = 3000;
    struct wave_params p = {.n = {24, 24, 24}, .d = {10, 10, 10}, .order = 8,
                            .pml_reflection = 1e-4, .f_ref = 10};
    float *v = test_constant_grid(p.n, (float)c);
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *init = malloc(nn * sizeof *init);
    srand(3);
    for (size_t i = 0; i < nn; i++)
        init[i] = (float)rand() / RAND_MAX - 0.5f;
    double lim = stability_dt_max(p.order, p.d, c);
    double growth[2];
    const double f[2] = {0.97, 1.03};
    for (int k = 0; k < 2; k++) {
        p.dt = f[k] * lim;
        struct wave_sim *s;
        cr_assert_eq(wave_create(&dev, &p, v, &s), 0, "%s", err_msg());
        wave_copy_in(s, false, init);
        wave_copy_in(s, true, init);
        double n0 = field_norm(s, p.n);
        for (int it = 0; it < 300; it++)
            wave_step(s);
        growth[k] = field_norm(s, p.n) / n0;
        wave_destroy(s);
    }
    fprintf(stderr, "stability: growth at 0.97 dt_max %.3g, at 1.03 dt_max %.3g\n", growth[0], growth[1]);
    cr_assert_lt(growth[0], 10.0);
    cr_assert(!(growth[1] < 1e3), "growth above the limit only %g", growth[1]);
    free(v);
    free(init);
}

/* Checkpoints restore the run bit for bit (both time levels and the CPML memory). */
Test(wave_physics, checkpoint_restores_bitwise, .timeout = 60)
{
    struct sl_device dev = test_cpu();
    struct wave_params p = {.n = {20, 18, 16}, .d = {10, 10, 10}, .order = 4, .dt = 1e-3,
                            .pml = {6, 6, 6, 6, 0, 6}, .pml_reflection = 1e-4, .f_ref = 15,
                            .free_surface = true};
    float *v = test_constant_grid(p.n, 2000);
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &p, v, &s), 0, "%s", err_msg());
    const double src[3] = {20, 30, 30};
    struct wave_points *ps;
    cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_TRILINEAR, &ps), 0, "%s", err_msg());
    test_wave_checkpoint_replays(s, ps, p.dt, 15, (size_t)p.n[0] * p.n[1] * p.n[2], 60, 120);
    wave_points_destroy(ps);
    wave_destroy(s);
    free(v);
}

/* The Ricker wavelet written out here, independently of kernels/wavelet.c: peak
 * frequency FP, centred at 1.5 / FP (the delay docs/model.md documents). */
static double ricker_doc(double t, double fp)
{
    double a = M_PI * fp * (t - 1.5 / fp);
    a *= a;
    return (1.0 - 2.0 * a) * exp(-a);
}

/* The wavelet the model job injects (wavelet_ricker_fill, sample i at t = i dt) is the
 * Ricker of the documentation: it peaks, at 1, at t = 1.5 / f_peak, and every sample
 * agrees with the formula. */
Test(wave_physics, ricker_wavelet_peaks_at_documented_delay)
{
    const double fps[4] = {7.5, 10, 15, 40}, dt = 1e-4;
    const size_t nt = 4000;
    float *w = malloc(nt * sizeof *w);
    for (int k = 0; k < 4; k++) {
        wavelet_ricker_fill(w, nt, dt, fps[k]);
        size_t imax = 0;
        for (size_t i = 1; i < nt; i++)
            if (w[i] > w[imax])
                imax = i;
        double t_doc = 1.5 / fps[k];
        cr_assert_leq(fabs(imax * dt - t_doc), dt / 2 + 1e-12, "f_peak %g: peak at %g s, documented %g s",
                      fps[k], imax * dt, t_doc);
        cr_assert_float_eq(w[imax], 1.0, 1e-3, "f_peak %g: peak value %g", fps[k], w[imax]);
        for (size_t i = 0; i < nt; i++)
            cr_assert_float_eq(w[i], ricker_doc(i * dt, fps[k]), 1e-6, "f_peak %g, sample %zu: %g vs %g",
                               fps[k], i, w[i], ricker_doc(i * dt, fps[k]));
        /* nothing before t = 0 is cut off: the wavelet starts from (almost) zero */
        cr_assert_lt(fabs(w[0]), 1e-6, "f_peak %g: w(0) = %g", fps[k], w[0]);
    }
    free(w);
}

/* The traces of `seislive model` in a homogeneous medium, as docs/model.md states them:
 * the solution of p_tt = v^2 lap(p) + v^2 s(t) delta(x - x_s), i.e. the analytic 3D
 * Green's function p = s(t - r/v) / (4 pi r), amplitude included, with s the Ricker of
 * unit peak delayed by 1.5 / f_peak and trace sample i at t = i dt_out.  The run goes
 * through the program (configuration, wavelet, physical injection, sinc points,
 * resampling to dt_out, SEG-Y) at the default dt (cfl 0.9) and 8 points per wavelength
 * at 2.5 f_peak.  Measured: rel L2 0.54 % at 101 m and 1.43 % at 300 m (mostly the
 * time dispersion of the default dt, docs/model.md), peak amplitude x 4 pi r 0.9997 and
 * 0.9998, peaks 0.09 and 0.25 ms early (the dispersion again: the leapfrog's waves run
 * slightly fast); bounds 0.6 % and 1.5 %, 3 % and half an output sample. */
Test(wave_physics, model_traces_are_documented_green_function, .timeout = 120)
{
    const double c = 2000, fp = 10, dt_out = 1e-3;
    const double src[3] = {103.7, 152.1, 148.3};
    const double rec[2][3] = {{204.2, 157.9, 140.6}, {403.1, 171.4, 139.2}};
    const double bound[2] = {0.006, 0.015};
    char *dir = test_tmpdir();
    char text[2048], out[4200];
    snprintf(text, sizeof text,
             "[job]\nkind = \"model\"\nname = \"green\"\n\n"
             "[model]\ntype = \"constant\"\nvelocity = %.1f\nn = [52, 31, 31]\nd = [10.0, 10.0, 10.0]\n"
             "o = [0.0, 0.0, 0.0]\n\n"
             "[propagator]\norder = 8\nt_max = 0.5\nf_peak = %.1f\nfree_surface = false\n\n"
             "[acquisition]\nsources = [[%g, %g, %g]]\nreceivers = [[%g, %g, %g], [%g, %g, %g]]\n"
             "dt_out = %g\n\n[runtime]\ndevice = \"cpu\"\n",
             c, fp, src[0], src[1], src[2], rec[0][0], rec[0][1], rec[0][2], rec[1][0], rec[1][1],
             rec[1][2], dt_out);
    char *conf = test_write_file(dir, "green.toml", text);
    snprintf(out, sizeof out, "%s/green.segy", dir);
    const char *argv[] = {test_prog("seislive"), "model", "-c", conf, "-o", out, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 100, &r), 0);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    test_run_free(&r);
    segy_file *fp_ = segy_open(out, "rb");
    cr_assert_not_null(fp_);
    char bin[SEGY_BINARY_HEADER_SIZE];
    cr_assert_eq(segy_binheader(fp_, bin), SEGY_OK);
    int ns = segy_samples(bin), ntr = 0, interval = 0;
    long trace0 = segy_trace0(bin);
    int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, ns);
    segy_get_bfield(bin, SEGY_BIN_INTERVAL, &interval);
    cr_assert_eq(interval, 1000);
    cr_assert_eq(ns, 501);
    cr_assert_eq(segy_traces(fp_, &ntr, trace0, bsize), SEGY_OK);
    cr_assert_eq(ntr, 2);
    float *tr = malloc(ns * sizeof *tr);
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(segy_readtrace(fp_, k, tr, trace0, bsize), SEGY_OK);
        segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, ns, tr);
        double rr = dist(src, rec[k]);
        /* the window holds the whole arrival and stops before the CPML's echo matters */
        int n = (int)((1.5 / fp + rr / c + 1.5 / fp) / dt_out);
        cr_assert_lt(n, ns);
        double num = 0, den = 0;
        for (int i = 0; i <= n; i++) {
            double a = ricker_doc(i * dt_out - rr / c, fp) / (4.0 * M_PI * rr);
            num += (tr[i] - a) * (tr[i] - a);
            den += a * a;
        }
        double e = sqrt(num / den);
        /* the peak: at 1.5 / f_peak + r / v, of 1 / (4 pi r) */
        int im = 1;
        for (int i = 1; i < n; i++)
            if (tr[i] > tr[im])
                im = i;
        double y0 = tr[im - 1], y1 = tr[im], y2 = tr[im + 1];
        double frac = 0.5 * (y0 - y2) / (y0 - 2 * y1 + y2);
        double t_peak = (im + frac) * dt_out, t_want = 1.5 / fp + rr / c;
        double a_ratio = y1 * 4.0 * M_PI * rr;
        fprintf(stderr, "model green: r %.1f m: rel L2 %.4g, peak at %.5f s (expected %.5f), peak x 4 pi r = %.4f\n",
                rr, e, t_peak, t_want, a_ratio);
        cr_assert_lt(e, bound[k], "r %.1f m: rel L2 %g vs the documented Green's function", rr, e);
        cr_assert_lt(fabs(t_peak - t_want), 0.5 * dt_out, "r %.1f m: peak at %g s, expected %g s", rr, t_peak,
                     t_want);
        cr_assert_float_eq(a_ratio, 1.0, 0.03, "r %.1f m: peak amplitude x 4 pi r = %g", rr, a_ratio);
    }
    free(tr);
    segy_close(fp_);
    free(conf);
    test_rmtree(dir);
    free(dir);
}

/* The remedy docs/model.md gives for the time-stepping error: a smaller dt.  8th order,
 * 8 points per wavelength at 2.5 f_peak, 300 m: rel L2 against the analytic Green's
 * function at the default dt (0.9 of the stable step) and at a quarter of it.
 * Measured on this smaller grid: 1.53 % and 0.32 % (docs/model.md's table: 1.54 % and
 * 0.30 %); bounds 1.7 %, 0.35 % and a ratio under 0.3 (measured 0.21). */
Test(wave_physics, time_step_error_falls_with_dt, .timeout = 180)
{
    struct sl_device dev = test_cpu();
    const double c = 2000, fp = 10, h = 10;
    struct wave_params p = {.n = {38, 13, 13}, .d = {h, h, h}, .o = {0, 0, 0}, .order = 8,
                            .pml = {20, 20, 20, 20, 20, 20}, .pml_reflection = 1e-4, .f_ref = fp};
    float *v = test_constant_grid(p.n, (float)c);
    const double src[3] = {33.7, 62.1, 56.7}, rec[3] = {333.7, 62.1, 56.7};
    double r = dist(src, rec), one = 1, err[2];
    const double lim = stability_dt_max(p.order, p.d, c), frac[2] = {0.9, 0.9 / 4};
    for (int k = 0; k < 2; k++) {
        p.dt = frac[k] * lim;
        int nt = (int)((wavelet_ricker_delay(fp) + r / c + 1.5 / fp) / p.dt);
        double *ref = malloc((nt + 1) * sizeof *ref);
        float *tr = malloc((nt + 1) * sizeof *tr);
        analytic(ref, nt, p.dt, fp, c, &r, &one, 1);
        test_wave_traces(&dev, &p, v, src, rec, 1, nt, fp, WAVE_INTERP_SINC, tr);
        err[k] = test_rel_l2_f32_f64(tr, ref, nt + 1);
        fprintf(stderr, "time step: dt %.3g ms (%.3f of the stable step): rel L2 %.4g at %.0f m\n", p.dt * 1e3,
                frac[k], err[k], r);
        free(ref);
        free(tr);
    }
    cr_assert_lt(err[0], 0.017, "default dt: rel L2 %g", err[0]);
    cr_assert_lt(err[1], 0.0035, "dt / 4: rel L2 %g", err[1]);
    cr_assert_lt(err[1], 0.3 * err[0], "dt / 4 (%g) not well below the default dt (%g)", err[1], err[0]);
    free(v);
}
