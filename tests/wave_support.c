/* wave_support — see tests/wave_support.h.  No Test() here: the Makefile links every
 * C file of tests/ into unit-tests, and this one only serves the propagator tests. */
#include "tests/wave_support.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/stability.h"
#include "kernels/wavelet.h"
#include "stream/error.h"

struct sl_device test_cpu(void)
{
    struct sl_device d;
    cr_assert_eq(backend_select("cpu", &d), 0);
    return d;
}

float *test_constant(size_t n, float v)
{
    float *m = malloc(n * sizeof *m);
    for (size_t i = 0; i < n; i++)
        m[i] = v;
    return m;
}

float *test_constant_grid(const int n[3], float v)
{
    return test_constant((size_t)n[0] * n[1] * n[2], v);
}

void test_wave_traces(const struct sl_device *dev, const struct wave_params *p, const float *v,
                      const double src[3], const double *rec, size_t nrec, int nt, double fp, int interp,
                      float *tr)
{
    struct wave_sim *s;
    cr_assert_eq(wave_create(dev, p, v, &s), 0, "%s", err_msg());
    struct wave_points *ps, *pr;
    cr_assert_eq(wave_points_create(s, src, 1, interp, &ps), 0, "%s", err_msg());
    cr_assert_eq(wave_points_create(s, rec, nrec, interp, &pr), 0, "%s", err_msg());
    double t0 = wavelet_ricker_delay(fp);
    for (size_t r = 0; r < nrec; r++)
        tr[r * (nt + 1)] = 0;
    for (int it = 0; it < nt; it++) {
        cr_assert_eq(wave_step(s), 0);
        float a = (float)wavelet_ricker(it * p->dt, fp, t0);
        cr_assert_eq(wave_inject(s, ps, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        cr_assert_eq(wave_sample(s, pr, tr + it + 1, nt + 1, 0), 0);
    }
    wave_points_destroy(ps);
    wave_points_destroy(pr);
    wave_destroy(s);
}

void test_wave_order_convergence(const struct sl_device *dev, struct wave_params *p, const float *v,
                                 const double src[3], const double rec[3], int nt, double fp, double c,
                                 const double *ref, double r, const char *label)
{
    float *tr = malloc((nt + 1) * sizeof *tr);
    const int orders[3] = {2, 4, 8};
    double err[3];
    for (int k = 0; k < 3; k++) {
        p->order = orders[k];
        cr_assert_lt(p->dt, stability_dt_max(p->order, p->d, c));
        test_wave_traces(dev, p, v, src, rec, 1, nt, fp, WAVE_INTERP_SINC, tr);
        err[k] = test_rel_l2_f32_f64(tr, ref, nt + 1);
        fprintf(stderr, "%s: order %d rel L2 %.4g (r = %.1f m, %d steps)\n", label, orders[k], err[k], r, nt);
    }
    cr_assert_lt(err[2], 0.01, "8th order: rel L2 %g >= 1%%", err[2]);
    cr_assert_gt(err[0], err[1], "order 2 (%g) not worse than order 4 (%g)", err[0], err[1]);
    cr_assert_gt(err[1], err[2], "order 4 (%g) not worse than order 8 (%g)", err[1], err[2]);
    free(tr);
}

double test_rel_l2_f32_f64(const float *a, const double *b, int n)
{
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return sqrt(num / den);
}

double test_reflection_db(const float *trial, const float *ref, size_t n, double *den)
{
    double num = 0;
    *den = 0;
    for (size_t i = 0; i < n; i++) {
        const double d = trial[i] - ref[i];
        num += d * d;
        *den += (double)ref[i] * ref[i];
    }
    return 10 * log10(num / *den);
}

void test_wave_checkpoint_replays(struct wave_sim *s, struct wave_points *ps, double dt, double fp, size_t nn,
                                  int saved, int total)
{
    float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b);
    void *buf = malloc(wave_state_bytes(s));
    for (int it = 0; it < total; it++) {
        wave_step(s);
        float amp = (float)wavelet_ricker(it * dt, fp, wavelet_ricker_delay(fp));
        wave_inject(s, ps, &amp, 1, 1.0f, WAVE_INJECT_PHYSICAL);
        if (it == saved - 1)
            cr_assert_eq(wave_state_save(s, buf, false), 0);
    }
    wave_copy_out(s, false, a);
    cr_assert_eq(wave_state_load(s, buf, false), 0);
    cr_assert_eq(wave_step_index(s), saved);
    for (int it = saved; it < total; it++) {
        wave_step(s);
        float amp = (float)wavelet_ricker(it * dt, fp, wavelet_ricker_delay(fp));
        wave_inject(s, ps, &amp, 1, 1.0f, WAVE_INJECT_PHYSICAL);
    }
    wave_copy_out(s, false, b);
    cr_assert_eq(memcmp(a, b, nn * sizeof *a), 0, "restored run differs");
    double q = 0;
    for (size_t i = 0; i < nn; i++)
        q += fabs(a[i]);
    cr_assert_gt(q, 0);
    free(a);
    free(b);
    free(buf);
}

void test_wave_forward_strips(struct wave_sim *s, struct wave_points *ps, const float *src_t, int nt, int m,
                              float *strips, size_t ns, float *snap)
{
    for (int it = 0; it < nt; it++) {
        cr_assert_eq(wave_step(s), 0);
        cr_assert_eq(wave_inject(s, ps, &src_t[it], 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        cr_assert_eq(wave_strip_save(s, strips + (size_t)(it + 1) * ns, false), 0);
        if (it + 1 == m)
            cr_assert_eq(wave_copy_out(s, false, snap), 0);
    }
}

void test_wave_back_strips(struct wave_sim *s, struct wave_points *ps, const float *src_t, int nt, int m,
                           const float *strips, size_t ns)
{
    /* after the swap cur = p(NT-1), prev = p(NT) */
    for (int n = nt - 1; n > m; n--) {
        cr_assert_eq(wave_step_reverse(s), 0); /* cur = p(n-1) without f(n) */
        cr_assert_eq(wave_inject(s, ps, &src_t[n], 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        cr_assert_eq(wave_strip_load(s, strips + (size_t)(n - 1) * ns, false), 0);
    }
}
