/* The true 2D mode of the CPU propagator (n = [nx, 1, nz], NONE y faces): a line source
 * against the analytic 2D Green's function convolved with the wavelet, the 2D CPML's
 * reflection against a run in a much larger domain, and the pieces RTM needs in 2D
 * (layout without y halo, strip, time reversal, checkpoints, points, the checks). */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/stability.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/support.h"

static struct sl_device cpu(void)
{
    struct sl_device d;
    cr_assert_eq(backend_select("cpu", &d), 0);
    return d;
}

static float *constant(const int n[3], float v)
{
    size_t c = (size_t)n[0] * n[1] * n[2];
    float *m = malloc(c * sizeof *m);
    for (size_t i = 0; i < c; i++)
        m[i] = v;
    return m;
}

/* A 2D grid nx x nz of spacing H with CPML layers of W cells on x and z. */
static struct wave_params params_2d(int nx, int nz, double h, int order, double dt, int w, double fp)
{
    struct wave_params p = {.n = {nx, 1, nz}, .d = {h, h, h}, .o = {0, 0, 0}, .order = order, .dt = dt,
                            .pml = {w, w, 0, 0, w, w}, .pml_reflection = 1e-4, .f_ref = fp,
                            .face = {WAVE_FACE_CPML, WAVE_FACE_CPML, WAVE_FACE_NONE, WAVE_FACE_NONE,
                                     WAVE_FACE_CPML, WAVE_FACE_CPML}};
    return p;
}

/* Forward run: a Ricker line source at SRC, NREC receivers at REC; TR[r * (nt+1) + it]
 * is the trace of receiver r at time it dt (TR[.., 0] = 0). */
static void run_traces(const struct wave_params *p, const float *v, const double src[3], const double *rec,
                       size_t nrec, int nt, double fp, float *tr)
{
    struct sl_device dev = cpu();
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, p, v, &s), 0, "%s", err_msg());
    struct wave_points *ps, *pr;
    cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
    cr_assert_eq(wave_points_create(s, rec, nrec, WAVE_INTERP_SINC, &pr), 0, "%s", err_msg());
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

/* The analytic pressure of a line source s(t) in a homogeneous 2D medium of velocity C at
 * distance R: (G * s)(t) with G(r, t) = H(t - r/c) / (2 pi sqrt(t^2 - r^2/c^2)).  The
 * substitution tau = (r/c) cosh(theta) turns G(tau) dtau into dtheta / (2 pi): the
 * integral (1 / 2 pi) int_0^inf s(t - (r/c) cosh theta) dtheta has no singularity and
 * ends where the wavelet's argument goes below 0 (the delayed Ricker is < 1e-6 there).
 * Composite Simpson over 4000 intervals, in double. */
static double line_source(double t, double r, double c, double fp)
{
    double tr = r / c, t0 = wavelet_ricker_delay(fp);
    if (t <= tr)
        return 0;
    double thmax = acosh(t / tr);
    const int m = 4000;
    double hth = thmax / m, sum = 0;
    for (int k = 0; k <= m; k++) {
        double f = wavelet_ricker(t - tr * cosh(k * hth), fp, t0);
        sum += f * (k == 0 || k == m ? 1 : k % 2 ? 4 : 2);
    }
    return sum * hth / 3.0 / (2.0 * M_PI);
}

static double rel_l2(const float *a, const double *b, int n)
{
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return sqrt(num / den);
}

/* The quadrature itself: for a Ricker, the line-source response must match a direct
 * Riemann sum of G * s on a very fine grid that steps over the 1/sqrt singularity by
 * integrating G exactly over each interval (int_a^b dtau / sqrt(tau^2 - T^2) =
 * acosh(b/T) - acosh(a/T)) -- two independent evaluations of the same convolution. */
Test(wave_2d, analytic_line_source_quadrature)
{
    const double c = 2000, fp = 10, r = 263.0, tr = r / c, t0 = wavelet_ricker_delay(fp);
    for (int k = 0; k < 5; k++) {
        double t = tr + 0.03 + 0.05 * k;
        /* midpoint rule on s, exact integral of G over each of 2e5 cells of [tr, t] */
        const int m = 200000;
        double dtau = (t - tr) / m, sum = 0;
        for (int j = 0; j < m; j++) {
            double a = tr + j * dtau, b = a + dtau;
            double g = acosh(b / tr) - (j == 0 ? 0.0 : acosh(a / tr));
            sum += g * wavelet_ricker(t - 0.5 * (a + b), fp, t0);
        }
        sum /= 2.0 * M_PI;
        double q = line_source(t, r, c, fp);
        cr_assert_float_eq(q, sum, 2e-4 * fabs(sum) + 1e-7, "t %g: %g vs %g", t, q, sum);
    }
}

/* 8th order, 8 points per wavelength at the wavelet's HIGHEST significant frequency
 * (wavelet_ricker_fmax = 2.5 f_peak, as the 3D Green's function test: 20 points per
 * wavelength at f_peak), off-grid source and receiver (sinc). */
Test(wave_2d, green_function_line_source, .timeout = 120)
{
    const double c = 2000, fp = 10, h = 10;
    cr_assert_geq(c / (wavelet_ricker_fmax(fp) * h), 8.0);
    struct wave_params p = params_2d(40, 34, h, 8, 5e-4, 20, fp);
    float *v = constant(p.n, (float)c);
    const double src[3] = {63.3, 0, 168.2}, rec[3] = {323.6, 0, 143.9};
    double r = hypot(rec[0] - src[0], rec[2] - src[2]);
    int nt = (int)((wavelet_ricker_delay(fp) + r / c + 1.5 / fp) / p.dt);
    double *ref = malloc((nt + 1) * sizeof *ref);
    float *tr = malloc((nt + 1) * sizeof *tr);
    for (int it = 0; it <= nt; it++)
        ref[it] = line_source(it * p.dt, r, c, fp);
    const int orders[3] = {2, 4, 8};
    double err[3];
    for (int k = 0; k < 3; k++) {
        p.order = orders[k];
        cr_assert_lt(p.dt, stability_dt_max(p.order, p.d, c));
        run_traces(&p, v, src, rec, 1, nt, fp, tr);
        err[k] = rel_l2(tr, ref, nt + 1);
        fprintf(stderr, "2D green: order %d rel L2 %.4g (r = %.1f m, %d steps)\n", orders[k], err[k], r, nt);
    }
    cr_assert_lt(err[2], 0.01, "8th order: rel L2 %g >= 1%%", err[2]);
    cr_assert_gt(err[0], err[1], "order 2 (%g) not worse than order 4 (%g)", err[0], err[1]);
    cr_assert_gt(err[1], err[2], "order 4 (%g) not worse than order 8 (%g)", err[1], err[2]);
    free(ref);
    free(tr);
    free(v);
}
