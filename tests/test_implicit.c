/* The implicit (recursive) operator itself (kernels/implicit_op.h): the design holds the
 * issue's goal in the worst direction, |b| < 1/2 for every order, the tridiagonal line
 * and panel solves against a dense Gaussian elimination on random lines, and the
 * dispersion computed two ways: from the coefficients' symbol, and measured from a plane
 * wave propagated by the CPU reference on a long line (its temporal frequency, counted
 * from the zero crossings over thousands of steps); and the design band "auto" (the band
 * follows the grid: the error over a wavelet's band shrinks on finer grids). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/implicit.h"
#include "kernels/implicit_op.h"
#include "kernels/operator.h"
#include "kernels/propagator.h"
#include "kernels/wave.h"
#include "stream/error.h"
#include "tests/wave_support.h"

/* Worst phase-velocity error of the space operator (per-axis symbol S) for waves of
 * KH = 2 pi / ppw along the axis, a face diagonal and the body diagonal. */
static double worst_phase_err(const struct implicit_coeffs *co, double kh)
{
    double worst = 0;
    for (int dir = 1; dir <= 3; dir++) {
        /* dir axes share the wavenumber: each sees kh / sqrt(dir) */
        double t = kh / sqrt((double)dir);
        double s = dir * implicit_symbol_of(co, t);
        double e = fabs(sqrt(s) / kh - 1.0);
        if (e > worst)
            worst = e;
    }
    return worst;
}

Test(implicit, design_meets_the_goal_at_2_4_ppw)
{
    struct implicit_coeffs co;
    cr_assert_eq(implicit_design(8, 0, &co), 0, "%s", err_msg());
    double band = implicit_default_band(8);
    fprintf(stderr, "implicit order 8: default band %.3f, b %.4f, c0..c4 %.6f %.6f %.6f %.6f %.6f, max |E| %.2e\n",
            band, co.b, co.c[0], co.c[1], co.c[2], co.c[3], co.c[4], co.err);
    cr_assert_geq(band, 2.0 / 2.4, "default band %.3f does not reach 2.4 points per wavelength", band);
    /* every wavelength from 2.4 points per wavelength up, every direction */
    double worst = 0, ppw_at = 0;
    for (double ppw = 2.4; ppw <= 60; ppw *= 1.01) {
        double e = worst_phase_err(&co, 2 * M_PI / ppw);
        if (e > worst) {
            worst = e;
            ppw_at = ppw;
        }
    }
    fprintf(stderr, "implicit order 8: worst phase error %.3g %% (at %.2f ppw) for >= 2.4 ppw\n", 100 * worst,
            ppw_at);
    cr_assert_leq(worst, 1e-3);
    /* the symbol is consistent: S(0) = 0 and S ~ kh^2 for long waves */
    cr_assert_lt(fabs(implicit_symbol(8, 0, 0.0)), 1e-12);
    cr_assert_lt(fabs(implicit_symbol(8, 0, 0.01) / 1e-4 - 1), 2e-3);
}

Test(implicit, every_order_is_diagonally_dominant)
{
    for (int order = 2; order <= 16; order += 2) {
        struct implicit_coeffs co;
        cr_assert_eq(implicit_design(order, 0, &co), 0, "%s", err_msg());
        cr_assert_lt(fabs(co.b), 0.5, "order %d: b = %g", order, co.b);
        /* the designed error is what the symbol gives over the band */
        double mx = 0;
        for (int i = 0; i <= 500; i++) {
            double t = co.band * M_PI * i / 500;
            double e = t > 0 ? implicit_symbol_of(&co, t) / (t * t) - 1 : 0;
            mx = fmax(mx, fabs(e));
        }
        cr_assert_leq(mx, co.err * 1.0001 + 1e-12, "order %d: |E| %g over the band, design says %g", order, mx,
                      co.err);
        /* the default band keeps the phase error at the bound */
        cr_assert_leq(fabs(sqrt(1 + co.err) - 1), 1e-3, "order %d", order);
        /* symbol positive and bounded on [0, pi]: the stability limit exists */
        double smax = implicit_symbol_max(order, 0);
        cr_assert(smax > 0 && smax < 4.0 / (1 - 2 * fabs(co.b)) * 16, "order %d: Smax %g", order, smax);
        for (int i = 1; i <= 200; i++)
            cr_assert_gt(implicit_symbol_of(&co, M_PI * i / 200), 0, "order %d", order);
    }
    /* bad arguments */
    struct implicit_coeffs co;
    cr_assert_lt(implicit_design(7, 0, &co), 0);
    cr_assert_lt(implicit_design(8, 1.2, &co), 0);
    cr_assert(isnan(implicit_symbol(18, 0, 1.0)));
}

/* Dense Gaussian elimination (partial pivoting) of the same system, in double. */
static void dense(int m, double b, const double *r, double ga, double gb, double *g)
{
    double *a = calloc((size_t)m * (m + 1), sizeof *a);
    for (int i = 0; i < m; i++) {
        double *row = a + (size_t)i * (m + 1);
        row[i] = 1;
        if (i > 0)
            row[i - 1] = b;
        if (i < m - 1)
            row[i + 1] = b;
        row[m] = r[i] - (i == 0 ? b * ga : 0) - (i == m - 1 ? b * gb : 0);
    }
    for (int c = 0; c < m; c++) {
        int p = c;
        for (int i = c + 1; i < m; i++)
            if (fabs(a[(size_t)i * (m + 1) + c]) > fabs(a[(size_t)p * (m + 1) + c]))
                p = i;
        for (int q = 0; q <= m; q++) {
            double t = a[(size_t)c * (m + 1) + q];
            a[(size_t)c * (m + 1) + q] = a[(size_t)p * (m + 1) + q];
            a[(size_t)p * (m + 1) + q] = t;
        }
        for (int i = c + 1; i < m; i++) {
            double f = a[(size_t)i * (m + 1) + c] / a[(size_t)c * (m + 1) + c];
            for (int q = c; q <= m; q++)
                a[(size_t)i * (m + 1) + q] -= f * a[(size_t)c * (m + 1) + q];
        }
    }
    for (int i = m - 1; i >= 0; i--) {
        double s = a[(size_t)i * (m + 1) + m];
        for (int q = i + 1; q < m; q++)
            s -= a[(size_t)i * (m + 1) + q] * g[q];
        g[i] = s / a[(size_t)i * (m + 1) + i];
    }
    free(a);
}

Test(implicit, tridiagonal_solve_matches_dense)
{
    srand(11);
    const int W = 5;
    float cp[300], inv[300];
    for (int trial = 0; trial < 60; trial++) {
        int m = 1 + rand() % 250;
        double b = (trial % 2 ? -1 : 1) * 0.49 * rand() / RAND_MAX;
        implicit_factor(b, m, cp, inv);
        double r[300 * 5], g[300], ga[5], gb[5];
        float rf[300 * 5], line[300], gaf[5], gbf[5];
        for (int i = 0; i < m * W; i++) {
            r[i] = 2.0 * rand() / RAND_MAX - 1;
            rf[i] = (float)r[i];
        }
        for (int l = 0; l < W; l++) {
            ga[l] = trial % 3 ? 2.0 * rand() / RAND_MAX - 1 : 0;
            gb[l] = trial % 5 ? 2.0 * rand() / RAND_MAX - 1 : 0;
            gaf[l] = (float)ga[l];
            gbf[l] = (float)gb[l];
        }
        /* lane 0 as a line of stride W (in a copy), all lanes as a panel */
        for (int i = 0; i < m; i++)
            line[i] = rf[i * W];
        implicit_solve_line((float)b, cp, inv, m, line, 1, gaf[0], gbf[0]);
        implicit_solve_panel((float)b, cp, inv, m, W, rf, gaf, gbf);
        for (int l = 0; l < W; l++) {
            double rl[300];
            for (int i = 0; i < m; i++)
                rl[i] = r[i * W + l];
            dense(m, b, rl, ga[l], gb[l], g);
            double num = 0, den = 0;
            for (int i = 0; i < m; i++) {
                num += (rf[i * W + l] - g[i]) * (rf[i * W + l] - g[i]);
                den += g[i] * g[i];
                if (l == 0)
                    cr_assert_lt(fabs(line[i] - g[i]), 1e-5 * (1 + fabs(g[i])), "line m %d row %d", m, i);
            }
            cr_assert_lt(sqrt(num / den), 1e-6, "panel m %d b %g lane %d: rel %g", m, b, l, sqrt(num / den));
        }
    }
}

/* A long line of N points (x), one y plane (2D) and one z point whose spacing is so large
 * that the z term vanishes (c0 / dz^2 ~ 1e-12 of the x term): the field cos(kx) evolves as
 * a(n) cos(kx) away from the ends with cos(w dt) = 1 - (v dt)^2 S(kh) / (2 h^2).  The
 * frequency w is measured from the zero crossings of the centre sample over NT steps and
 * turned back into S; it must agree with the symbol of the designed coefficients. */
static double measured_symbol(double kh, double band)
{
    struct sl_device dev = test_cpu();
    const int N = 3000, NT = 2400;
    const double h = 10, v = 1000;
    struct wave_params p = {.n = {N, 1, 1}, .d = {h, h, 1e6}, .order = 8, .op = PROP_OP_IMPLICIT,
                            .op_band = band, .pml_reflection = 1e-4,
                            .face = {WAVE_FACE_CPML, WAVE_FACE_CPML, WAVE_FACE_NONE, WAVE_FACE_NONE,
                                     WAVE_FACE_CPML, WAVE_FACE_CPML}};
    p.dt = 0.2 * h / v;
    float *vel = test_constant_grid(p.n, (float)v);
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &p, vel, &s), 0, "%s", err_msg());
    float *f = malloc(N * sizeof *f);
    for (int i = 0; i < N; i++)
        f[i] = (float)cos(kh * (i - N / 2));
    cr_assert_eq(wave_copy_in(s, false, f), 0);
    cr_assert_eq(wave_copy_in(s, true, f), 0);
    double *a = malloc((NT + 1) * sizeof *a);
    a[0] = 1;
    for (int it = 1; it <= NT; it++) {
        cr_assert_eq(wave_step(s), 0, "%s", err_msg());
        cr_assert_eq(wave_copy_out(s, false, f), 0);
        a[it] = f[N / 2];
    }
    /* a(n) = cos(n phi - delta) / cos(delta): crossings at phi-spaced half periods */
    double first = -1, last = -1;
    int count = 0;
    for (int it = 0; it < NT; it++)
        if ((a[it] > 0) != (a[it + 1] > 0)) {
            double t = it + a[it] / (a[it] - a[it + 1]);
            if (first < 0)
                first = t;
            last = t;
            count++;
        }
    cr_assert_gt(count, 20);
    double phi = M_PI * (count - 1) / (last - first);
    free(a);
    free(f);
    free(vel);
    wave_destroy(s);
    return 2.0 * (1.0 - cos(phi)) * h * h / (v * v * p.dt * p.dt);
}

Test(implicit, dispersion_two_ways_agree, .timeout = 120)
{
    const double kh[] = {0.25 * M_PI, 0.5 * M_PI, 2 * M_PI / 3, 0.8 * M_PI};
    for (size_t i = 0; i < sizeof kh / sizeof kh[0]; i++) {
        double sm = measured_symbol(kh[i], 0);
        double sa = implicit_symbol(8, 0, kh[i]);
        fprintf(stderr, "implicit dispersion at kh %.3f pi (%.2f ppw): measured S %.6f, symbol %.6f (rel %.2e); "
                "phase velocity %.5f of true\n", kh[i] / M_PI, 2 * M_PI / kh[i], sm, sa, fabs(sm / sa - 1),
                sqrt(sa) / kh[i]);
        cr_assert_lt(fabs(sm / sa - 1), 2e-4, "kh %.3f: measured %g, symbol %g", kh[i], sm, sa);
    }
}

/* The largest worst-direction phase-velocity error of operator KIND of order 8 designed
 * over BAND (0: the default) for every wave of a wavelet whose fmax has PPW points per
 * wavelength, i.e. kh in (0, 2 pi / ppw]. */
static double band_err(int kind, double band, double ppw)
{
    struct operator_coeffs oc;
    cr_assert_eq(operator_design(kind, 8, band, &oc), 0, "%s", err_msg());
    double worst = 0;
    for (int q = 1; q <= 200; q++) {
        const double kh = 2 * M_PI / ppw * q / 200.0;
        for (int dir = 1; dir <= 3; dir++) {
            const double s = dir * operator_symbol_of(&oc, kh / sqrt((double)dir));
            worst = fmax(worst, fabs(sqrt(s) / kh - 1.0));
        }
    }
    return worst;
}

/* The band "auto" (kernels/operator.h): 0.9 x 2 / ppw of Nyquist, clamped; and why it
 * exists: the default band's design keeps its minimax ripple at every wavenumber of the
 * band, so on finer grids the error over the wavelet's band stays (implicit 8: 3.0e-4 at
 * 3 to 8 ppw), while a band that follows the grid shrinks it (measured 2.3e-4 at 3 ppw,
 * 1.3e-7 at 6, 7.0e-9 at 8). */
Test(implicit, band_auto_follows_the_grid)
{
    const double fmax = 37.5, v = 2000;
    cr_assert_float_eq(operator_band_auto(fmax, v, v / (fmax * 3), OPERATOR_BAND_AUTO_SCALE), 0.6, 1e-12);
    cr_assert_float_eq(operator_band_auto(fmax, v, v / (fmax * 2), 1.0), 0.95, 1e-12); /* 1.0: clamped */
    cr_assert_float_eq(operator_band_auto(fmax, v, v / (fmax * 40), 1.0), 0.1, 1e-12); /* 0.05: clamped */
    cr_assert(isnan(operator_band_auto(0, v, 10, 1.0)));
    cr_assert(isnan(operator_band_auto(fmax, v, 10, -1.0)));
    const int kinds[2] = {PROP_OP_OPTIMIZED, PROP_OP_IMPLICIT};
    const double ppws[4] = {3, 4, 6, 8};
    for (int k = 0; k < 2; k++) {
        double prev = INFINITY;
        for (int i = 0; i < 4; i++) {
            const double h = v / (fmax * ppws[i]);
            const double ea = band_err(kinds[k], operator_band_auto(fmax, v, h, OPERATOR_BAND_AUTO_SCALE), ppws[i]);
            const double ed = band_err(kinds[k], 0, ppws[i]);
            fprintf(stderr, "implicit: band auto: %s 8 at %.0f ppw: %.3g (default band %.3g)\n",
                    operator_name(kinds[k]), ppws[i], ea, ed);
            cr_expect_lt(ea, prev / 5, "%s at %g ppw: %g after %g", operator_name(kinds[k]), ppws[i], ea, prev);
            prev = ea;
            if (ppws[i] >= 6)
                cr_expect_lt(ea, ed / 10, "%s at %g ppw: auto %g, default %g", operator_name(kinds[k]), ppws[i], ea,
                             ed);
        }
    }
}

/* The guard of tuning xyct's x-y kernel (kernels/implicit.h implicit_xyct_fits): 32-bit
 * element indices up to 2^31 elements, the x stride it is compiled for.  The benchmark's
 * 512^3 padded order-8 volume fits; the same planes 8200 deep (2.3e9 elements) do not,
 * and a stride other than the compiled one is refused. */
Test(implicit, xyct_guard_refuses_large_volumes)
{
    const size_t sy = IMPLICIT_XYCT_STRIDE(4);
    cr_assert_eq(sy, 544);
    cr_assert(implicit_xyct_fits(1, sy, sy));
    cr_assert(implicit_xyct_fits((size_t)1 << 31, sy, sy));
    cr_assert_not(implicit_xyct_fits(((size_t)1 << 31) + 1, sy, sy));
    cr_assert_not(implicit_xyct_fits(0, sy, sy));
    cr_assert_not(implicit_xyct_fits(1000, sy + 32, sy));
    struct wave_params p = {.n = {488, 488, 488}, .d = {10, 10, 10}, .order = 8, .op = PROP_OP_IMPLICIT,
                            .dt = 5e-4, .pml = {12, 12, 12, 12, 12, 12}, .pml_reflection = 1e-4, .f_ref = 12};
    struct wave_layout L;
    cr_assert_eq(wave_layout_of(&p, &L), 0, "%s", err_msg());
    cr_assert_eq(L.npad[0], 512);
    cr_assert(implicit_xyct_fits(L.count, L.stride_y, IMPLICIT_XYCT_STRIDE(p.order / 2)), "count %zu stride %zu",
              L.count, L.stride_y);
    p.n[2] = 8200;
    cr_assert_eq(wave_layout_of(&p, &L), 0, "%s", err_msg());
    cr_assert_gt(L.count, IMPLICIT_XYCT_MAX_COUNT);
    cr_assert_not(implicit_xyct_fits(L.count, L.stride_y, IMPLICIT_XYCT_STRIDE(p.order / 2)));
    p.order = 16; /* half-width 8: 512 + 16 columns, the same stride of 544 */
    p.n[2] = 488;
    cr_assert_eq(wave_layout_of(&p, &L), 0, "%s", err_msg());
    cr_assert(implicit_xyct_fits(L.count, L.stride_y, IMPLICIT_XYCT_STRIDE(8)));
    p.order = 8; /* x rows of 544 + 8: a stride of 576, not the compiled one */
    p.n[0] = 520;
    cr_assert_eq(wave_layout_of(&p, &L), 0, "%s", err_msg());
    cr_assert_eq(L.stride_y, 576);
    cr_assert_not(implicit_xyct_fits(L.count, L.stride_y, IMPLICIT_XYCT_STRIDE(4)));
}
