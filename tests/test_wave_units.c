/* Building blocks of the propagator checked against exact properties: Fornberg weights
 * differentiate polynomials exactly, interpolation weights reproduce smooth fields and
 * injection is the transpose of sampling, resampling keeps a band-limited signal, the
 * memory estimate matches the layout, the strip covers exactly the cells within halo. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/fd_coeffs.h"
#include "kernels/points.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/support.h"

Test(wave_units, fornberg_exact_on_polynomials)
{
    for (int order = 2; order <= 16; order += 2) {
        double c2[9], c1[9];
        cr_assert_eq(fd_second_coeffs(order, c2), 0);
        cr_assert_eq(fd_first_coeffs(order, c1), 0);
        int r = order / 2;
        /* 2r+1 nodes differentiate x^m exactly for m <= order = 2r: at 0, f'' of x^m is 2
         * for m = 2 and 0 otherwise; f' is 1 for m = 1 and 0 otherwise. */
        for (int m = 0; m <= order; m++) {
            double s2 = m == 0 ? c2[0] : 0, s1 = 0;
            for (int l = 1; l <= r; l++) {
                s2 += c2[l] * (pow(l, m) + pow(-l, m));
                s1 += c1[l] * (pow(l, m) - pow(-l, m));
            }
            cr_assert_float_eq(s2, m == 2 ? 2.0 : 0.0, 1e-9 * pow(r, m), "order %d m %d: %g", order, m, s2);
            cr_assert_float_eq(s1, m == 1 ? 1.0 : 0.0, 1e-9 * pow(r, m), "order %d m %d: %g", order, m, s1);
        }
    }
    double c[2];
    fd_second_coeffs(2, c);
    cr_assert_float_eq(c[0], -2.0, 1e-15);
    cr_assert_float_eq(c[1], 1.0, 1e-15);
    cr_assert_eq(fd_second_coeffs(3, c), -EINVAL);
    cr_assert_eq(fd_second_coeffs(18, c), -EINVAL);
    cr_assert_float_eq(fd_second_abs_sum(2), 4.0, 1e-15);
}

static struct wave_sim *small_sim(struct sl_device *dev, bool fs)
{
    cr_assert_eq(backend_select("cpu", dev), 0);
    struct wave_params p = {.n = {24, 20, 22}, .d = {10, 12, 8}, .o = {100, -50, 0}, .order = 8,
                            .dt = 1e-3, .pml = {5, 6, 7, 8, fs ? 0 : 9, 10}, .pml_reflection = 1e-4,
                            .f_ref = 10, .free_surface = fs};
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    for (size_t i = 0; i < nn; i++)
        v[i] = 2000;
    struct wave_sim *s;
    cr_assert_eq(wave_create(dev, &p, v, &s), 0, "%s", err_msg());
    free(v);
    return s;
}

/* A smooth field (long wavelength) is sampled accurately by sinc and exactly (for a
 * linear field) by trilinear; injection is the adjoint of sampling. */
Test(wave_units, points_interpolate_and_adjoint)
{
    struct sl_device dev;
    struct wave_sim *s = small_sim(&dev, false);
    const struct wave_layout *L = wave_layout(s);
    const struct wave_params *p = wave_params_of(s);
    size_t nn = (size_t)L->n[0] * L->n[1] * L->n[2];
    float *f = malloc(nn * sizeof *f);
    for (int k = 0; k < L->n[2]; k++)
        for (int j = 0; j < L->n[1]; j++)
            for (int i = 0; i < L->n[0]; i++) {
                double x = p->o[0] + i * p->d[0], y = p->o[1] + j * p->d[1], z = p->o[2] + k * p->d[2];
                f[((size_t)k * L->n[1] + j) * L->n[0] + i] = (float)(1 + 0.001 * x - 0.002 * y + 0.003 * z);
            }
    cr_assert_eq(wave_copy_in(s, false, f), 0);
    const double xyz[2][3] = {{183.7, 61.3, 77.7}, {200, 70, 80}};
    for (int interp = 0; interp < 2; interp++) {
        struct wave_points *pts;
        cr_assert_eq(wave_points_create(s, &xyz[0][0], 2, interp, &pts), 0, "%s", err_msg());
        float out[2];
        cr_assert_eq(wave_sample(s, pts, out, 1, 0), 0);
        for (int i = 0; i < 2; i++) {
            double want = 1 + 0.001 * xyz[i][0] - 0.002 * xyz[i][1] + 0.003 * xyz[i][2];
            cr_assert_float_eq(out[i], want, interp == WAVE_INTERP_TRILINEAR ? 1e-5 : 2e-3,
                               "interp %d point %d: %g vs %g", interp, i, out[i], want);
        }
        wave_points_destroy(pts);
    }
    /* <inject(a), g> = a . sample(g) for a random field g. */
    srand(5);
    for (size_t i = 0; i < nn; i++)
        f[i] = (float)rand() / RAND_MAX - 0.5f;
    struct wave_points *pts;
    cr_assert_eq(wave_points_create(s, &xyz[0][0], 2, WAVE_INTERP_SINC, &pts), 0);
    cr_assert_eq(wave_copy_in(s, false, f), 0);
    float smp[2], amps[2] = {0.7f, -1.3f};
    wave_sample(s, pts, smp, 1, 0);
    float *zero = calloc(nn, sizeof *zero), *g = malloc(nn * sizeof *g);
    wave_copy_in(s, false, zero);
    cr_assert_eq(wave_inject(s, pts, amps, 1, 1.0f, 0), 0);
    wave_copy_out(s, false, g);
    double lhs = 0, rhs = amps[0] * smp[0] + amps[1] * smp[1];
    for (size_t i = 0; i < nn; i++)
        lhs += (double)g[i] * f[i];
    cr_assert_float_eq(lhs, rhs, 1e-5 * fabs(rhs) + 1e-6, "adjoint: %g vs %g", lhs, rhs);
    wave_points_destroy(pts);
    /* Outside the grid: refused with the index. */
    const double bad[2][3] = {{150, 0, 50}, {99, 0, 50}};
    cr_assert_eq(wave_points_create(s, &bad[0][0], 2, WAVE_INTERP_SINC, &pts), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "point 1"), "%s", err_msg());
    free(f);
    free(zero);
    free(g);
    wave_destroy(s);
}

Test(wave_units, memory_layout_strip)
{
    struct sl_device dev;
    struct wave_sim *s = small_sim(&dev, true);
    const struct wave_layout *L = wave_layout(s);
    const struct wave_params *p = wave_params_of(s);
    cr_assert_eq(L->npad[0], 24 + 5 + 6);
    cr_assert_eq(L->npad[2], 22 + 0 + 10);
    cr_assert_eq(L->off[2], L->halo);
    cr_assert_geq((int)L->stride_y, L->npad[0] + 2 * L->halo);
    size_t need = 3 * L->count * sizeof(float);
    cr_assert_geq(wave_memory_bytes(p), need);
    cr_assert_lt(wave_memory_bytes(p), need * 2);
    /* The strip: every interior cell within halo of a face, once. */
    int h = L->halo;
    size_t want = (size_t)L->n[0] * L->n[1] * L->n[2] -
                  (size_t)(L->n[0] - 2 * h) * (L->n[1] - 2 * h) * (L->n[2] - 2 * h);
    cr_assert_eq(wave_strip_count(s), want);
    size_t nn = (size_t)L->n[0] * L->n[1] * L->n[2];
    float *f = malloc(nn * sizeof *f), *g = malloc(nn * sizeof *g);
    for (size_t i = 0; i < nn; i++)
        f[i] = (float)i;
    wave_copy_in(s, false, f);
    float *strip = malloc(want * sizeof *strip);
    cr_assert_eq(wave_strip_save(s, strip, false), 0);
    float *zero = calloc(nn, sizeof *zero);
    wave_copy_in(s, false, zero);
    cr_assert_eq(wave_strip_load(s, strip, false), 0);
    wave_copy_out(s, false, g);
    for (int k = 0; k < L->n[2]; k++)
        for (int j = 0; j < L->n[1]; j++)
            for (int i = 0; i < L->n[0]; i++) {
                size_t e = ((size_t)k * L->n[1] + j) * L->n[0] + i;
                bool in = i < h || j < h || k < h || i >= L->n[0] - h || j >= L->n[1] - h || k >= L->n[2] - h;
                cr_assert_eq(g[e], in ? f[e] : 0.0f, "cell %d %d %d", i, j, k);
            }
    free(f);
    free(g);
    free(zero);
    free(strip);
    wave_destroy(s);
}

/* Padded velocity round trip; the CPML switch. */
Test(wave_units, padded_velocity)
{
    struct sl_device dev;
    struct wave_sim *s = small_sim(&dev, false);
    const struct wave_layout *L = wave_layout(s);
    size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
    float *v = malloc(np * sizeof *v), *w = malloc(np * sizeof *w);
    cr_assert_eq(wave_get_velocity_padded(s, v), 0);
    for (size_t i = 0; i < np; i++)
        cr_assert_float_eq(v[i], 2000.0f, 0.01f);
    for (size_t i = 0; i < np; i++)
        v[i] = 1500.0f + (float)(i % 1000);
    cr_assert_eq(wave_set_velocity_padded(s, v, false), 0);
    cr_assert_eq(wave_get_velocity_padded(s, w), 0);
    for (size_t i = 0; i < np; i++)
        cr_assert_float_eq(w[i], v[i], 0.01f);
    cr_assert(wave_cpml_enabled(s));
    wave_set_cpml(s, false);
    cr_assert(!wave_cpml_enabled(s));
    free(v);
    free(w);
    wave_destroy(s);
}

/* wave_create_like gives the same velocity (padded, layers included, here a varied one
 * set after creation) and CPML, so both simulations step to identical fields. */
Test(wave_units, create_like_copies_model_and_steps_alike)
{
    struct sl_device dev;
    struct wave_sim *a = small_sim(&dev, false), *b = NULL;
    const struct wave_layout *L = wave_layout(a);
    size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
    float *v = malloc(np * sizeof *v), *w = malloc(np * sizeof *w);
    for (size_t i = 0; i < np; i++)
        v[i] = 1800.0f + (float)(i % 377);
    cr_assert_eq(wave_set_velocity_padded(a, v, false), 0);
    cr_assert_eq(wave_create_like(a, &b), 0, "%s", err_msg());
    cr_assert_eq(wave_get_velocity_padded(b, w), 0);
    for (size_t i = 0; i < np; i++)
        cr_assert_float_eq(w[i], v[i], 0.01f, "padded cell %zu: %g, not %g", i, w[i], v[i]);
    double xyz[3] = {200, 40, 60};
    struct wave_points *pa, *pb;
    cr_assert_eq(wave_points_create(a, xyz, 1, WAVE_INTERP_SINC, &pa), 0, "%s", err_msg());
    cr_assert_eq(wave_points_create(b, xyz, 1, WAVE_INTERP_SINC, &pb), 0, "%s", err_msg());
    for (int it = 0; it < 40; it++) {
        float amp = (float)wavelet_ricker(it * 1e-3, 25.0, 0.04);
        cr_assert_eq(wave_step(a), 0);
        cr_assert_eq(wave_step(b), 0);
        cr_assert_eq(wave_inject(a, pa, &amp, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        cr_assert_eq(wave_inject(b, pb, &amp, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
    }
    double e = 0;
    for (size_t i = 0; i < L->count; i++)
        e += (double)wave_cur(a)[i] * wave_cur(a)[i];
    cr_assert_gt(e, 0, "the source must have put energy in");
    cr_assert_eq(memcmp(wave_cur(a), wave_cur(b), L->count * sizeof(float)), 0, "fields differ after 40 steps");
    wave_points_destroy(pa);
    wave_points_destroy(pb);
    free(v);
    free(w);
    wave_destroy(a);
    wave_destroy(b);
}

Test(wave_units, resample_keeps_band_limited_signal)
{
    const double dt = 1e-3, fp = 20;
    size_t n = 400;
    float *w = malloc(n * sizeof *w), *up = malloc(2 * n * sizeof *up), *down = malloc(n / 2 * sizeof *down);
    wavelet_ricker_fill(w, n, dt, fp);
    wavelet_resample(w, n, dt, up, 2 * n, dt / 2);
    double t0 = wavelet_ricker_delay(fp), e = 0, q = 0;
    for (size_t i = 0; i < 2 * n - 40; i++) {
        double want = wavelet_ricker(i * dt / 2, fp, t0);
        e += (up[i] - want) * (up[i] - want);
        q += want * want;
    }
    cr_assert_lt(sqrt(e / q), 1e-3, "upsampling error %g", sqrt(e / q));
    wavelet_resample(w, n, dt, down, n / 2, 2 * dt);
    e = q = 0;
    for (size_t i = 0; i < n / 2 - 20; i++) {
        double want = wavelet_ricker(i * 2 * dt, fp, t0);
        e += (down[i] - want) * (down[i] - want);
        q += want * want;
    }
    cr_assert_lt(sqrt(e / q), 1e-2, "downsampling error %g", sqrt(e / q));
    double fm = wavelet_fmax(w, n, dt);
    cr_assert_float_eq(fm, wavelet_ricker_fmax(fp), 0.1 * fp, "fmax %g", fm);
    free(w);
    free(up);
    free(down);
}

/* The model job's resampling plan (wavelet_resampler: the weights computed once for every
 * trace of a shot) gives wavelet_resample's samples bit for bit: random traces, up- and
 * down-sampling by non-integer ratios, the same rate, an output longer than the input. */
Test(wave_units, resampler_equals_resample)
{
    const size_t n = 701;
    const double cases[][3] = {{2.84351e-3, 1e-3, 2000}, {0.5e-3, 2.2e-3, 150}, {1e-3, 1e-3, 701}, {1e-3, 0.7e-3, 1200},
                               {3.1e-3, 1e-3, 2500}};
    float *in = malloc(n * sizeof *in), *a = malloc(2500 * sizeof *a), *b = malloc(2500 * sizeof *b);
    unsigned s = 12345;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const size_t nout = (size_t)cases[c][2];
        struct wavelet_resampler r;
        cr_assert_eq(wavelet_resampler_init(&r, n, cases[c][0], nout, cases[c][1]), 0);
        for (int t = 0; t < 3; t++) {
            for (size_t i = 0; i < n; i++) {
                s = s * 1103515245u + 12345u;
                in[i] = (float)((s >> 8) / 8388608.0 - 1.0);
            }
            wavelet_resample(in, n, cases[c][0], a, nout, cases[c][1]);
            wavelet_resampler_apply(&r, in, b);
            cr_assert_eq(memcmp(a, b, nout * sizeof *a), 0, "case %zu (dt %g -> %g): differs", c, cases[c][0],
                         cases[c][1]);
            double e = 0;
            for (size_t i = 0; i < nout; i++)
                e += fabs(a[i]);
            cr_assert_gt(e, 0.0);
        }
        wavelet_resampler_free(&r);
    }
    free(in);
    free(a);
    free(b);
}

/* A user wavelet file: numbers one per line, comments allowed; a bad line is refused
 * with PATH:LINE. */
Test(wave_units, wavelet_file)
{
    char *dir = test_tmpdir();
    char *good = test_write_file(dir, "w.txt", "# source\n0.0\n0.5\n\n1.0 # peak\n-0.25\n");
    float *w;
    size_t n;
    cr_assert_eq(wavelet_read(good, &w, &n), 0, "%s", err_msg());
    cr_assert_eq(n, 4);
    cr_assert_float_eq(w[2], 1.0f, 0);
    cr_assert_float_eq(w[3], -0.25f, 0);
    free(w);
    char *bad = test_write_file(dir, "b.txt", "0.0\n0.5\nabc\n");
    cr_assert_eq(wavelet_read(bad, &w, &n), -EINVAL);
    char want[4200];
    snprintf(want, sizeof want, "%s:3: not a finite number", bad);
    cr_assert_not_null(strstr(err_msg(), want), "%s", err_msg());
    /* a value finite as read but infinite as a float sample (the fuzzer's: 1e39), and a
     * comment longer than the line buffer whose tail would have been read as a sample */
    char *big = test_write_file(dir, "big.txt", "0.0\n-1e39\n0.5\n");
    cr_assert_eq(wavelet_read(big, &w, &n), -EINVAL);
    snprintf(want, sizeof want, "%s:2: -1e+39 is beyond the float range", big);
    cr_assert_not_null(strstr(err_msg(), want), "%s", err_msg());
    char longc[800];
    int k = snprintf(longc, sizeof longc, "0.0\n#");
    memset(longc + k, 'x', 600);
    snprintf(longc + k + 600, sizeof longc - (size_t)k - 600, " 7.5\n0.5\n");
    char *lng = test_write_file(dir, "long.txt", longc);
    cr_assert_eq(wavelet_read(lng, &w, &n), -EINVAL);
    snprintf(want, sizeof want, "%s:2: line longer than 510 characters", lng);
    cr_assert_not_null(strstr(err_msg(), want), "%s", err_msg());
    /* more samples than WAVELET_MAX_SAMPLES: refused at the first line too many (the
     * transform of wavelet_fmax takes 64 B a sample), one sample fewer read whole */
    char *many = NULL;
    cr_assert_geq(asprintf(&many, "%s/many.txt", dir), 0);
    FILE *mf = fopen(many, "w");
    cr_assert_not_null(mf);
    for (int i = 0; i < WAVELET_MAX_SAMPLES; i++)
        fputs("0\n", mf);
    cr_assert_eq(fclose(mf), 0);
    cr_assert_eq(wavelet_read(many, &w, &n), 0, "%s", err_msg());
    cr_assert_eq(n, (size_t)WAVELET_MAX_SAMPLES);
    free(w);
    mf = fopen(many, "a");
    cr_assert_not_null(mf);
    fputs("# one more\n1\n", mf);
    cr_assert_eq(fclose(mf), 0);
    cr_assert_eq(wavelet_read(many, &w, &n), -EINVAL);
    snprintf(want, sizeof want, "%s:%d: more than %d samples", many, WAVELET_MAX_SAMPLES + 2, WAVELET_MAX_SAMPLES);
    cr_assert_not_null(strstr(err_msg(), want), "%s", err_msg());
    free(many);
    free(good);
    free(bad);
    free(big);
    free(lng);
    test_rmtree(dir);
    free(dir);
}

/* The frequency the spectrum's 3 % level ends at, the direct way: the sum over the
 * samples at each of the 2n + 1 frequencies of the 4n-point zero-padded grid (what
 * wavelet_fmax computed before it used FFTW). */
static double fmax_direct(const float *w, size_t n, double dt)
{
    size_t nf = 2 * n + 1;
    double df = 1.0 / (4.0 * n * dt), peak = 0, fmax = 0, *amp = malloc(nf * sizeof *amp);
    cr_assert_not_null(amp);
    for (size_t k = 0; k < nf; k++) {
        double re = 0, im = 0;
        for (size_t i = 0; i < n; i++) {
            double ph = -2.0 * M_PI * (double)k * (double)i / (4.0 * n);
            re += w[i] * cos(ph);
            im += w[i] * sin(ph);
        }
        amp[k] = hypot(re, im);
        peak = amp[k] > peak ? amp[k] : peak;
    }
    for (size_t k = 0; k < nf; k++)
        if (amp[k] >= 0.03 * peak)
            fmax = k * df;
    free(amp);
    return fmax;
}

/* wavelet_fmax by FFTW against the direct sum: random and Ricker wavelets of 1 to 300
 * samples give the same frequency (to the one grid bin a rounding at the 3 % level may
 * move); and a recorded sweep of 120 000 samples given as the wavelet file (5-60 Hz over
 * 60 s at 0.5 ms, tapered) is answered (the direct sum took minutes: the timeout) at its
 * top frequency. */
Test(wave_units, wavelet_fmax_fft_matches_direct_sum, .timeout = 60)
{
    srand(15);
    const size_t lens[] = {1, 2, 3, 7, 64, 129, 300};
    for (size_t t = 0; t < sizeof lens / sizeof *lens; t++) {
        const size_t n = lens[t];
        const double dt = 1e-3 * (1 + t % 3);
        float *w = malloc(n * sizeof *w);
        cr_assert_not_null(w);
        for (int kind = 0; kind < 2; kind++) {
            for (size_t i = 0; i < n; i++)
                w[i] = kind ? (float)wavelet_ricker(i * dt, 25.0, n * dt / 2) : (float)rand() / RAND_MAX - 0.5f;
            const double got = wavelet_fmax(w, n, dt), want = fmax_direct(w, n, dt), df = 1.0 / (4.0 * n * dt);
            cr_assert(fabs(got - want) <= df * 1.0001, "n %zu kind %d: fmax %g Hz, the direct sum's %g (df %g)", n,
                      kind, got, want, df);
        }
        free(w);
    }
    const size_t n = 120000;
    const double dt = 5e-4, T = n * dt, f1 = 5, f2 = 60;
    float *s = malloc(n * sizeof *s);
    cr_assert_not_null(s);
    for (size_t i = 0; i < n; i++) { /* a 1 s cosine taper at each end, as sweeps are sent */
        double t = i * dt, e = fmin(t, T - t), tap = e < 1 ? 0.5 - 0.5 * cos(M_PI * e) : 1;
        s[i] = (float)(tap * sin(2 * M_PI * (f1 * t + 0.5 * (f2 - f1) / T * t * t)));
    }
    /* its spectrum ends at f2 within the sweep's Fresnel width, sqrt((f2 - f1) / T) ~ 1 Hz */
    const double fm = wavelet_fmax(s, n, dt), fw = sqrt((f2 - f1) / T);
    cr_assert(fm > f2 - 2 * fw && fm < f2 + 2 * fw, "sweep 5-60 Hz: fmax %g Hz (Fresnel width %g Hz)", fm, fw);
    cr_assert_eq(wavelet_fmax(s, 0, dt), 0.0);
    free(s);
}
