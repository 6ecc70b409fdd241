/* The time-dispersion transforms (kernels/time_dispersion.h) and the correction they
 * give ([propagator] time_dispersion = "correct", docs/time-dispersion.md):
 *   - each transform of a delayed Ricker against its closed-form warped spectrum
 *     integrated by direct quadrature (no FFT, no interpolation);
 *   - the inverse undoes the forward on band-limited signals (both orders);
 *   - the energy beyond the leapfrog's band is counted as the closed form says;
 *   - a 3D homogeneous medium at 0.9 of the stable dt against the analytic Green's
 *     function: corrected, the error falls to the spatial error of a run at dt / 8;
 *   - the same through `seislive model`, and the refusal of a wavelet beyond the band. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/stability.h"
#include "kernels/time_dispersion.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/support.h"
#include "tests/wave_support.h"

/* The amplitude spectrum of the unit Ricker of peak FP at F (Hz): its Fourier transform
 * is (2 / sqrt(pi)) f^2 / fp^3 exp(-f^2 / fp^2) exp(-i 2 pi f t0). */
static double ricker_amp(double f, double fp) { return 2.0 / sqrt(M_PI) * f * f / (fp * fp * fp) * exp(-f * f / (fp * fp)); }

/* Sample n (t = n dt) of the band-limited signal whose spectrum at f is the Ricker's at
 * MAP(f) (0 where MAP < 0): 2 int_0^F A(map(f)) cos(2 pi (f t - map(f) t0)) df over the
 * Nyquist band F = 1 / (2 dt), midpoint rule with K points. */
static double warped_ricker(int n, double dt, double fp, double t0, double (*map)(double f, double dt), int k)
{
    const double F = 0.5 / dt, df = F / k, t = n * dt;
    double s = 0;
    for (int i = 0; i < k; i++) {
        double f = (i + 0.5) * df, g = map(f, dt);
        if (g < 0)
            continue;
        s += ricker_amp(g, fp) * cos(2.0 * M_PI * (f * t - g * t0));
    }
    return 2.0 * s * df;
}

/* W(f): the physical frequency a simulated f carries (the forward transform reads the
 * signal there); f_fd(f): the simulated frequency of a physical f (the inverse). */
static double map_forward(double f, double dt) { return tdt_true_frequency(f, dt); }
static double map_inverse(double f, double dt)
{
    double g = tdt_fd_frequency(f, dt);
    return isfinite(g) ? g : -1.0;
}

static double rel_l2(const float *a, const double *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return sqrt(num / den);
}

/* dt 4 ms (band limit 79.6 Hz), a 20 Hz Ricker delayed 0.5 s (amplitude at the band
 * limit 2e-6 of its peak), 400 samples.  Measured: 4.0e-8 forward, 3.1e-8 inverse (float
 * storage); each transform moves the trace by its own norm (rel L2 1.02, 1.03: the
 * phase at 0.5 s), so the check is not trivial; bounds 1e-6. */
Test(tdt, ricker_against_closed_form_quadrature, .timeout = 60)
{
    const double dt = 0.004, fp = 20, t0 = 0.5;
    const size_t n = 400;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    double *want = malloc(n * sizeof *want);
    struct tdt *t;
    cr_assert_eq(tdt_create(n, dt, &t), 0, "%s", err_msg());
    for (int dir = 0; dir < 2; dir++) {
        for (size_t i = 0; i < n; i++) {
            x[i] = y[i] = (float)wavelet_ricker(i * dt, fp, t0);
            want[i] = warped_ricker((int)i, dt, fp, t0, dir == TDT_FORWARD ? map_forward : map_inverse, 20000);
        }
        double oob = -1;
        cr_assert_eq(tdt_apply(t, dir, y, 1, n, &oob), 0, "%s", err_msg());
        double e = rel_l2(y, want, n), moved = rel_l2(x, want, n);
        fprintf(stderr, "tdt %s of a Ricker: rel L2 %.3g against the quadrature (the transform moves it by %.3g); "
                "out of band %.2g\n", dir == TDT_FORWARD ? "forward" : "inverse", e, moved, oob);
        cr_expect_lt(e, 1e-6, "direction %d: rel L2 %g", dir, e);
        cr_expect_gt(moved, 0.05, "direction %d: the transform hardly changed the trace (%g)", dir, moved);
        cr_expect_lt(oob, 1e-9, "direction %d: out of band %g", dir, oob);
    }
    tdt_destroy(t);
    free(x);
    free(y);
    free(want);
}

/* Three Rickers (8, 12, 16 Hz at 0.2, 0.6, 1.0 s), dt 4 ms, 500 samples: within the
 * band (the 16 Hz Ricker's amplitude at the band limit 79.6 Hz is 1e-10 of its peak),
 * the inverse undoes the forward and the forward the inverse.  Measured 2.7e-8 and
 * 2.9e-8 (float samples); bound 1e-6.  Not exact beyond it: a 20 Hz Ricker (2e-6 of its
 * peak at the limit) comes back 1.5e-6 off, its out-of-band part dropped; and 500
 * samples (2 s) because the inverse delays the high frequencies of the last Ricker: with
 * 400, what it pushed past the window was 1.6e-5 of the signal. */
Test(tdt, inverse_undoes_forward, .timeout = 30)
{
    const double dt = 0.004, fps[3] = {8, 12, 16}, t0s[3] = {0.2, 0.6, 1.0};
    const size_t n = 500;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    double *ref = malloc(n * sizeof *ref);
    for (size_t i = 0; i < n; i++) {
        ref[i] = 0;
        for (int k = 0; k < 3; k++)
            ref[i] += wavelet_ricker(i * dt, fps[k], t0s[k]);
    }
    struct tdt *t;
    cr_assert_eq(tdt_create(n, dt, &t), 0, "%s", err_msg());
    for (int first = 0; first < 2; first++) {
        for (size_t i = 0; i < n; i++)
            x[i] = (float)ref[i];
        cr_assert_eq(tdt_apply(t, first, x, 1, n, NULL), 0, "%s", err_msg());
        double mid = rel_l2(x, ref, n);
        cr_assert_eq(tdt_apply(t, 1 - first, x, 1, n, NULL), 0, "%s", err_msg());
        double e = rel_l2(x, ref, n);
        fprintf(stderr, "tdt %s then %s: rel L2 %.3g (after the first: %.3g)\n", first ? "inverse" : "forward",
                first ? "forward" : "inverse", e, mid);
        cr_expect_lt(e, 1e-6, "%s first: rel L2 %g", first ? "inverse" : "forward", e);
        cr_expect_gt(mid, 0.02, "the first transform hardly changed the signal (%g)", mid);
    }
    /* the same through the many-signal path (OpenMP, strides): bit for bit each one alone */
    const size_t ntr = 5, stride = n + 3;
    float *many = malloc(ntr * stride * sizeof *many), *one = malloc(n * sizeof *one);
    for (size_t r = 0; r < ntr; r++)
        for (size_t i = 0; i < n; i++)
            many[r * stride + i] = (float)(ref[i] * (1.0 + r) + (i == 17 * r ? 0.5 : 0.0));
    cr_assert_eq(tdt_apply(t, TDT_INVERSE, many, ntr, stride, NULL), 0, "%s", err_msg());
    for (size_t r = 0; r < ntr; r++) {
        for (size_t i = 0; i < n; i++)
            one[i] = (float)(ref[i] * (1.0 + r) + (i == 17 * r ? 0.5 : 0.0));
        cr_assert_eq(tdt_apply(t, TDT_INVERSE, one, 1, n, NULL), 0, "%s", err_msg());
        cr_expect_eq(memcmp(one, many + r * stride, n * sizeof *one), 0, "signal %zu differs", r);
    }
    tdt_destroy(t);
    free(many);
    free(one);
    free(x);
    free(y);
    free(ref);
}

/* A 40 Hz Ricker at dt 4 ms reaches past the band limit 1 / (pi dt) = 79.6 Hz: the forward
 * transform reports the energy fraction beyond it, as the closed form gives it.  The
 * closed form is that of the samples: the spectrum folded at the sampling rate (the delay
 * is a whole number of samples, so the aliases add in phase: sum_k A(f - k / dt)). */
Test(tdt, out_of_band_energy_is_counted, .timeout = 30)
{
    const double dt = 0.004, fp = 40, lim = tdt_band_limit(dt);
    cr_assert_float_eq(lim, 1.0 / (M_PI * dt), 1e-9);
    const size_t n = 300;
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)wavelet_ricker(i * dt, fp, 0.4);
    struct tdt *t;
    cr_assert_eq(tdt_create(n, dt, &t), 0, "%s", err_msg());
    double oob = 0;
    cr_assert_eq(tdt_apply(t, TDT_FORWARD, x, 1, n, &oob), 0, "%s", err_msg());
    double above = 0, all = 0;
    const int k = 200000;
    for (int i = 0; i < k; i++) {
        double f = (i + 0.5) * (0.5 / dt) / k, a = 0;
        for (int al = -3; al <= 3; al++)
            a += ricker_amp(f - al / dt, fp);
        all += a * a;
        if (f >= lim)
            above += a * a;
    }
    fprintf(stderr, "tdt out of band: %.4g reported, %.4g closed form\n", oob, above / all);
    cr_expect_gt(above / all, 1e-3, "the case must reach past the band");
    cr_expect(fabs(oob - above / all) < 1e-3 * above / all, "out of band %g, closed form %g", oob, above / all);
    tdt_destroy(t);
    free(x);
}

Test(tdt, refuses_what_it_cannot_plan)
{
    struct tdt *t = (struct tdt *)1;
    cr_expect_eq(tdt_create(1, 1e-3, &t), -EINVAL);
    cr_expect_null(t);
    cr_expect_not_null(strstr(err_msg(), "1 samples"), "%s", err_msg());
    cr_expect_eq(tdt_create((size_t)1 << 40, 1e-3, &t), -EINVAL);
    cr_expect_eq(tdt_create(100, 0.0, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "dt"), "%s", err_msg());
    cr_expect_eq(tdt_create(100, NAN, &t), -EINVAL);
    cr_assert_eq(tdt_create(100, 1e-3, &t), 0);
    float x[100] = {0};
    cr_expect_eq(tdt_apply(t, 7, x, 1, 100, NULL), -EINVAL);
    cr_expect_eq(tdt_apply(t, TDT_FORWARD, x, 2, 50, NULL), -EINVAL);
    tdt_destroy(t);
    /* the frequency maps are each other's inverse, and the band edge has no FD frequency */
    const double dt = 2e-3;
    for (double f = 1; f < tdt_band_limit(dt); f *= 1.7)
        cr_expect_float_eq(tdt_true_frequency(tdt_fd_frequency(f, dt), dt), f, 1e-9 * f);
    cr_expect(isinf(tdt_fd_frequency(tdt_band_limit(dt), dt)));
}

static double dist(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* A forward run injecting W (NT samples) at SRC, the trace at REC into TR (NT + 1). */
static void run_trace(const struct sl_device *dev, const struct wave_params *p, const float *v, const double src[3],
                      const double rec[3], int nt, const float *w, float *tr)
{
    struct wave_sim *s;
    cr_assert_eq(wave_create(dev, p, v, &s), 0, "%s", err_msg());
    struct wave_points *ps, *pr;
    cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
    cr_assert_eq(wave_points_create(s, rec, 1, WAVE_INTERP_SINC, &pr), 0, "%s", err_msg());
    tr[0] = 0;
    for (int it = 0; it < nt; it++) {
        cr_assert_eq(wave_step(s), 0);
        cr_assert_eq(wave_inject(s, ps, w + it, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        cr_assert_eq(wave_sample(s, pr, tr + it + 1, nt + 1, 0), 0);
    }
    wave_points_destroy(ps);
    wave_points_destroy(pr);
    wave_destroy(s);
}

/* 8th order, 8 points per wavelength at 2.5 f_peak, 300 m, against the analytic
 * p = s(t - r/c) / (4 pi r): at 0.9 of the stable dt uncorrected (the time error
 * dominates), corrected (FTDT wavelet, ITDT trace), and at 0.9 / 8 uncorrected (what is
 * left is the spatial error).  Measured: see the log lines and docs/time-dispersion.md. */
Test(time_dispersion, green_function_at_coarse_dt, .timeout = 180)
{
    struct sl_device dev = test_cpu();
    const double c = 2000, fp = 10, h = 10;
    struct wave_params p = {.n = {38, 13, 13}, .d = {h, h, h}, .o = {0, 0, 0}, .order = 8,
                            .pml = {20, 20, 20, 20, 20, 20}, .pml_reflection = 1e-4, .f_ref = fp};
    float *v = test_constant_grid(p.n, (float)c);
    const double src[3] = {33.7, 62.1, 56.7}, rec[3] = {333.7, 62.1, 56.7};
    const double r = dist(src, rec), t0 = wavelet_ricker_delay(fp);
    const double lim = stability_dt_max(p.order, p.d, c);
    const double frac[3] = {0.9, 0.9, 0.9 / 8};
    const char *what[3] = {"uncorrected", "corrected", "uncorrected"};
    double err[3];
    for (int k = 0; k < 3; k++) {
        p.dt = frac[k] * lim;
        int nt = (int)((t0 + r / c + 1.5 / fp) / p.dt);
        double *ref = malloc((nt + 1) * sizeof *ref);
        float *tr = malloc((nt + 1) * sizeof *tr), *w = malloc((nt + 1) * sizeof *w);
        for (int i = 0; i <= nt; i++)
            ref[i] = wavelet_ricker(i * p.dt - r / c, fp, t0) / (4.0 * M_PI * r);
        wavelet_ricker_fill(w, (size_t)nt + 1, p.dt, fp);
        struct tdt *t = NULL;
        if (k == 1) {
            cr_assert_eq(tdt_create((size_t)nt + 1, p.dt, &t), 0, "%s", err_msg());
            cr_assert_eq(tdt_apply(t, TDT_FORWARD, w, 1, (size_t)nt + 1, NULL), 0, "%s", err_msg());
        }
        run_trace(&dev, &p, v, src, rec, nt, w, tr);
        if (t) {
            cr_assert_eq(tdt_apply(t, TDT_INVERSE, tr, 1, (size_t)nt + 1, NULL), 0, "%s", err_msg());
            tdt_destroy(t);
        }
        err[k] = test_rel_l2_f32_f64(tr, ref, nt + 1);
        fprintf(stderr, "time dispersion: dt %.4g ms (%.4f of the stable step) %s: rel L2 %.4g at %.0f m\n",
                p.dt * 1e3, frac[k], what[k], err[k], r);
        free(ref);
        free(tr);
        free(w);
    }
    /* corrected at the coarse dt: no worse than 1.2x the fine-dt (spatial) error, and the
     * uncorrected several times worse */
    cr_expect_lt(err[1], 1.2 * err[2], "corrected %g vs dt / 8 %g", err[1], err[2]);
    cr_expect_gt(err[0], 3.0 * err[1], "uncorrected %g not several times the corrected %g", err[0], err[1]);
    free(v);
}

/* A constant-velocity model job: SEISLIVE model at the default dt (cfl 0.9), 8 points
 * per wavelength at 2.5 f_peak, two receivers; EXTRA goes into [propagator]. */
static void model_config(char *text, size_t len, double fp, const char *extra, const double src[3],
                         const double rec[2][3])
{
    snprintf(text, len,
             "[job]\nkind = \"model\"\nname = \"green\"\n\n"
             "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [52, 31, 31]\nd = [10.0, 10.0, 10.0]\n"
             "o = [0.0, 0.0, 0.0]\n\n"
             "[propagator]\norder = 8\nt_max = 0.5\nf_peak = %.1f\nfree_surface = false\n%s\n\n"
             "[acquisition]\nsources = [[%g, %g, %g]]\nreceivers = [[%g, %g, %g], [%g, %g, %g]]\n"
             "dt_out = 0.001\n\n[runtime]\ndevice = \"cpu\"\n",
             fp, extra, src[0], src[1], src[2], rec[0][0], rec[0][1], rec[0][2], rec[1][0], rec[1][1], rec[1][2]);
}

/* `seislive model` with time_dispersion = "correct", against the documented Green's
 * function s(t - r/v) / (4 pi r) (tests/test_wave_physics.c has the same run without
 * it: 0.54 % at 101 m and 1.43 % at 300 m, mostly the time dispersion).  Measured:
 * uncorrected 0.54 % and 1.43 %, corrected 0.111 % and 0.141 %; bounds 0.25 % and a
 * quarter of the uncorrected error. */
Test(time_dispersion, model_job_traces, .timeout = 180)
{
    const double c = 2000, fp = 10, dt_out = 1e-3;
    const double src[3] = {103.7, 152.1, 148.3};
    const double rec[2][3] = {{204.2, 157.9, 140.6}, {403.1, 171.4, 139.2}};
    char *dir = test_tmpdir();
    double err[2][2];
    for (int corr = 0; corr < 2; corr++) {
        char text[2048], out[4200];
        model_config(text, sizeof text, fp, corr ? "time_dispersion = \"correct\"" : "", src, rec);
        char *conf = test_write_file(dir, "green.toml", text);
        snprintf(out, sizeof out, "%s/green%d.segy", dir, corr);
        const char *argv[] = {test_prog("seislive"), "model", "-c", conf, "-o", out, NULL};
        struct run_result r;
        cr_assert_eq(test_run(argv, 150, &r), 0);
        cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
        if (corr)
            cr_expect_not_null(strstr(r.err, "time dispersion: corrected"), "%s", r.err);
        test_run_free(&r);
        free(conf);
        segy_file *f = segy_open(out, "rb");
        cr_assert_not_null(f);
        char bin[SEGY_BINARY_HEADER_SIZE];
        cr_assert_eq(segy_binheader(f, bin), SEGY_OK);
        int ns = segy_samples(bin);
        long trace0 = segy_trace0(bin);
        int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, ns);
        float *tr = malloc(ns * sizeof *tr);
        for (int k = 0; k < 2; k++) {
            cr_assert_eq(segy_readtrace(f, k, tr, trace0, bsize), SEGY_OK);
            segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, ns, tr);
            double rr = dist(src, rec[k]);
            int n = (int)((1.5 / fp + rr / c + 1.5 / fp) / dt_out);
            cr_assert_lt(n, ns);
            double num = 0, den = 0;
            for (int i = 0; i <= n; i++) {
                double a = wavelet_ricker(i * dt_out - rr / c, fp, 1.5 / fp) / (4.0 * M_PI * rr);
                num += (tr[i] - a) * (tr[i] - a);
                den += a * a;
            }
            err[corr][k] = sqrt(num / den);
            fprintf(stderr, "model job, time_dispersion %s: r %.1f m: rel L2 %.4g\n", corr ? "correct" : "none", rr,
                    err[corr][k]);
        }
        free(tr);
        segy_close(f);
    }
    for (int k = 0; k < 2; k++) {
        cr_expect_lt(err[1][k], 0.0025, "receiver %d: corrected %g", k, err[1][k]);
        cr_expect_lt(err[1][k], 0.25 * err[0][k], "receiver %d: corrected %g, uncorrected %g", k, err[1][k],
                     err[0][k]);
    }
    test_rmtree(dir);
    free(dir);
}

/* A wavelet reaching past 1 / (pi dt) cannot be corrected: `seislive check` refuses it,
 * naming the key's place and both frequencies (70 Hz Ricker: fmax 175 Hz; dt 2.04 ms:
 * band limit 156 Hz). */
Test(time_dispersion, check_refuses_a_wavelet_beyond_the_band, .timeout = 60)
{
    const double src[3] = {103.7, 152.1, 148.3};
    const double rec[2][3] = {{204.2, 157.9, 140.6}, {403.1, 171.4, 139.2}};
    char *dir = test_tmpdir();
    char text[2048];
    model_config(text, sizeof text, 70, "time_dispersion = \"correct\"", src, rec);
    char *conf = test_write_file(dir, "far.toml", text);
    const char *argv[] = {test_prog("seislive"), "check", "-c", conf, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_expect_neq(r.status, 0, "accepted: %s", r.out);
    cr_expect_not_null(strstr(r.err, "far.toml:17"), "%s", r.err);
    cr_expect_not_null(strstr(r.err, "time_dispersion"), "%s", r.err);
    cr_expect_not_null(strstr(r.err, "175 Hz"), "%s", r.err);
    test_run_free(&r);
    /* the same wavelet at 20 Hz passes, and the report says what happens */
    model_config(text, sizeof text, 20, "time_dispersion = \"correct\"", src, rec);
    free(conf);
    conf = test_write_file(dir, "ok.toml", text);
    argv[3] = conf;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "time dispersion: corrected"), "%s", r.out);
    cr_expect_not_null(strstr(r.out, "time_dispersion = \"correct\""), "%s", r.out);
    test_run_free(&r);
    free(conf);
    /* the rtm job: its report says it, and refuses the same way (2D, dt 2.5 ms: 127.5 Hz) */
    for (int far = 0; far < 2; far++) {
        snprintf(text, sizeof text,
                 "[job]\nkind = \"rtm\"\n"
                 "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [41, 1, 41]\nd = [10.0, 10.0, 10.0]\n"
                 "[propagator]\nt_max = 0.3\nf_peak = %s\npml_width = 10\ntime_dispersion = \"correct\"\n"
                 "[acquisition]\nsources = [[200.0, 0.0, 0.0]]\nrx_origin = [0.0, 0.0, 0.0]\n"
                 "rx_step = [10.0, 10.0]\nrx_count = [41, 1]\n"
                 "[rtm]\naperture = 100.0\nmemory_budget = 512.0\n"
                 "[input]\nkind = \"files\"\npaths = [\"*.segy\"]\nwatch = true\n"
                 "[runtime]\ndevice = \"cpu\"\n",
                 far ? "90.0" : "10.0");
        conf = test_write_file(dir, "rtm.toml", text);
        argv[3] = conf;
        cr_assert_eq(test_run(argv, 60, &r), 0);
        if (far) {
            cr_expect_neq(r.status, 0, "accepted: %s", r.out);
            cr_expect_not_null(strstr(r.err, "rtm.toml:12"), "%s", r.err);
            cr_expect_not_null(strstr(r.err, "225 Hz"), "%s", r.err);
        } else {
            cr_expect_eq(r.status, 0, "%s", r.err);
            cr_expect_not_null(strstr(r.out, "[rtm] time dispersion: corrected"), "%s", r.out);
        }
        test_run_free(&r);
        free(conf);
    }
    test_rmtree(dir);
    free(dir);
}
