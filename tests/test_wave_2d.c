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
#include "kernels/random_boundary.h"
#include "kernels/stability.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/support.h"
#include "tests/wave_support.h"

/* A 2D grid nx x nz of spacing H with CPML layers of W cells on x and z. */
static struct wave_params params_2d(int nx, int nz, double h, int order, double dt, int w, double fp)
{
    struct wave_params p = {.n = {nx, 1, nz}, .d = {h, h, h}, .o = {0, 0, 0}, .order = order, .dt = dt,
                            .pml = {w, w, 0, 0, w, w}, .pml_reflection = 1e-4, .f_ref = fp,
                            .face = {WAVE_FACE_CPML, WAVE_FACE_CPML, WAVE_FACE_NONE, WAVE_FACE_NONE,
                                     WAVE_FACE_CPML, WAVE_FACE_CPML}};
    return p;
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
    struct sl_device dev = test_cpu();
    const double c = 2000, fp = 10, h = 10;
    cr_assert_geq(c / (wavelet_ricker_fmax(fp) * h), 8.0);
    struct wave_params p = params_2d(40, 34, h, 8, 5e-4, 20, fp);
    float *v = test_constant_grid(p.n, (float)c);
    const double src[3] = {63.3, 0, 168.2}, rec[3] = {323.6, 0, 143.9};
    double r = hypot(rec[0] - src[0], rec[2] - src[2]);
    int nt = (int)((wavelet_ricker_delay(fp) + r / c + 1.5 / fp) / p.dt);
    double *ref = malloc((nt + 1) * sizeof *ref);
    for (int it = 0; it <= nt; it++)
        ref[it] = line_source(it * p.dt, r, c, fp);
    test_wave_order_convergence(&dev, &p, v, src, rec, nt, fp, c, ref, r, "2D green");
    free(ref);
    free(v);
}

/* Reflection from each of the four faces of a 2D grid: the same source and receivers in
 * the test domain (20 CPML layers) and in a domain 30 cells larger on every side with
 * rigid walls whose echo arrives after the window; the difference is what the CPML
 * reflected (as wave_physics/cpml_reflection_each_face_40db in 3D). */
Test(wave_2d, cpml_reflection_each_face_40db, .timeout = 120)
{
    struct sl_device dev = test_cpu();
    const double c = 2000, fp = 15, h = 10;
    const int E = 30;
    struct wave_params small = params_2d(31, 31, h, 8, 1e-3, 20, fp);
    struct wave_params big = small;
    for (int a = 0; a < 3; a += 2) {
        big.n[a] = small.n[a] + 2 * E;
        big.o[a] = -E * h;
        big.pml[2 * a] = big.pml[2 * a + 1] = 0; /* rigid walls: their echo comes too late */
    }
    const double src[3] = {150, 0, 150};
    const double rec[4][3] = {{50, 0, 150}, {250, 0, 150}, {150, 0, 50}, {150, 0, 250}};
    double t0 = wavelet_ricker_delay(fp);
    int nt = (int)((t0 + 200.0 / c + 1.2 / fp) / small.dt);
    cr_assert_lt(nt * small.dt, (800.0 / c) + t0 - 1.5 / fp);
    float *vs = test_constant_grid(small.n, (float)c), *vb = test_constant_grid(big.n, (float)c);
    float *ts = malloc(4 * (nt + 1) * sizeof *ts), *tb = malloc(4 * (nt + 1) * sizeof *tb);
    test_wave_traces(&dev, &small, vs, src, &rec[0][0], 4, nt, fp, WAVE_INTERP_SINC, ts);
    test_wave_traces(&dev, &big, vb, src, &rec[0][0], 4, nt, fp, WAVE_INTERP_SINC, tb);
    const char *face[4] = {"xmin", "xmax", "zmin", "zmax"};
    for (int f = 0; f < 4; f++) {
        double den, db = test_reflection_db(ts + f * (nt + 1), tb + f * (nt + 1), nt + 1, &den);
        fprintf(stderr, "2D cpml: face %s reflection %.1f dB\n", face[f], db);
        cr_assert_gt(den, 0);
        cr_assert_lt(db, -40.0, "face %s: reflection only %.1f dB down", face[f], db);
    }
    free(vs);
    free(vb);
    free(ts);
    free(tb);
}

/* The 2D layout has no y halo and no y layers; the strip is the cells within `halo` of
 * the x and z faces only. */
Test(wave_2d, layout_and_strip)
{
    struct sl_device dev = test_cpu();
    struct wave_params p = params_2d(30, 26, 10, 8, 1e-3, 7, 10);
    p.pml[0] = 5;
    struct wave_layout L;
    cr_assert_eq(wave_layout_of(&p, &L), 0, "%s", err_msg());
    cr_assert_eq(L.dim[1], 1);
    cr_assert_eq(L.npad[1], 1);
    cr_assert_eq(L.off[1], 0);
    cr_assert_eq(L.pad_off[1], 0);
    cr_assert_eq(L.pml[2] + L.pml[3], 0);
    cr_assert_eq(L.stride_z, L.stride_y);
    cr_assert_eq(L.npad[0], 30 + 5 + 7);
    cr_assert_eq(L.off[0], 4 + 5);
    cr_assert_eq(L.count, L.stride_z * (size_t)L.dim[2]);
    float *v = test_constant_grid(p.n, 2000);
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &p, v, &s), 0, "%s", err_msg());
    int h = wave_layout(s)->halo;
    cr_assert_eq(wave_strip_count(s), (size_t)(30 * 26 - (30 - 2 * h) * (26 - 2 * h)));
    /* the strip holds exactly those cells: save a field that is 1 there and 0 elsewhere */
    size_t nn = 30 * 26;
    float *f = malloc(nn * sizeof *f), *g = calloc(nn, sizeof *g);
    for (int k = 0; k < 26; k++)
        for (int i = 0; i < 30; i++)
            f[k * 30 + i] = (i < h || i >= 30 - h || k < h || k >= 26 - h) ? 1.0f : 0.0f;
    cr_assert_eq(wave_copy_in(s, false, f), 0);
    size_t ns = wave_strip_count(s);
    float *strip = malloc(ns * sizeof *strip);
    cr_assert_eq(wave_strip_save(s, strip, false), 0);
    for (size_t i = 0; i < ns; i++)
        cr_assert_eq(strip[i], 1.0f, "strip cell %zu is not next to an x or z face", i);
    cr_assert_eq(wave_copy_in(s, false, g), 0);
    cr_assert_eq(wave_strip_load(s, strip, false), 0);
    cr_assert_eq(wave_copy_out(s, false, g), 0);
    cr_assert_eq(memcmp(f, g, nn * sizeof *f), 0, "strip load does not restore exactly the strip cells");
    free(f);
    free(g);
    free(strip);
    wave_destroy(s);
    free(v);
}

/* Points in 2D: the y coordinate is not used (one y node, weight 1); sampling a field
 * linear in x and z is exact with trilinear weights, and injection is the adjoint of
 * sampling; physical injection scales by v^2 dt^2 / (dx dz). */
Test(wave_2d, points_sample_inject)
{
    struct sl_device dev = test_cpu();
    struct wave_params p = params_2d(24, 22, 10, 8, 1e-3, 6, 10);
    p.d[2] = 8;
    p.o[0] = 100;
    float *v = test_constant_grid(p.n, 2000);
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &p, v, &s), 0, "%s", err_msg());
    size_t nn = 24 * 22;
    float *f = malloc(nn * sizeof *f);
    for (int k = 0; k < 22; k++)
        for (int i = 0; i < 24; i++)
            f[k * 24 + i] = (float)(1 + 0.001 * (100 + 10 * i) + 0.003 * (8 * k));
    cr_assert_eq(wave_copy_in(s, false, f), 0);
    const double xyz[2][3] = {{183.7, 0, 77.7}, {200, 1234.5, 80}};
    struct wave_points *pts;
    cr_assert_eq(wave_points_create(s, &xyz[0][0], 2, WAVE_INTERP_TRILINEAR, &pts), 0, "%s", err_msg());
    float out[2];
    cr_assert_eq(wave_sample(s, pts, out, 1, 0), 0);
    for (int i = 0; i < 2; i++) {
        double want = 1 + 0.001 * xyz[i][0] + 0.003 * xyz[i][2];
        cr_assert_float_eq(out[i], want, 1e-5, "point %d: %g vs %g", i, out[i], want);
    }
    wave_points_destroy(pts);
    srand(5);
    for (size_t i = 0; i < nn; i++)
        f[i] = (float)rand() / RAND_MAX - 0.5f;
    cr_assert_eq(wave_points_create(s, &xyz[0][0], 2, WAVE_INTERP_SINC, &pts), 0);
    cr_assert_eq(wave_copy_in(s, false, f), 0);
    float smp[2], amps[2] = {0.7f, -1.3f};
    cr_assert_eq(wave_sample(s, pts, smp, 1, 0), 0);
    float *z = calloc(nn, sizeof *z), *g = malloc(nn * sizeof *g);
    cr_assert_eq(wave_copy_in(s, false, z), 0);
    cr_assert_eq(wave_inject(s, pts, amps, 1, 1.0f, 0), 0);
    cr_assert_eq(wave_copy_out(s, false, g), 0);
    double lhs = 0, rhs = amps[0] * smp[0] + amps[1] * smp[1], sum_plain = 0;
    for (size_t i = 0; i < nn; i++) {
        lhs += (double)g[i] * f[i];
        sum_plain += g[i];
    }
    cr_assert_float_eq(lhs, rhs, 1e-5 * fabs(rhs) + 1e-6, "adjoint: %g vs %g", lhs, rhs);
    /* physical: the same nodes times v^2 dt^2 / (dx dz) */
    cr_assert_eq(wave_copy_in(s, false, z), 0);
    cr_assert_eq(wave_inject(s, pts, amps, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
    cr_assert_eq(wave_copy_out(s, false, g), 0);
    double sum_phys = 0;
    for (size_t i = 0; i < nn; i++)
        sum_phys += g[i];
    double k = 2000.0 * 2000.0 * 1e-6 / (10.0 * 8.0);
    cr_assert_float_eq(sum_phys, k * sum_plain, 1e-5 * fabs(k * sum_plain), "physical %g vs %g", sum_phys,
                       k * sum_plain);
    wave_points_destroy(pts);
    free(f);
    free(z);
    free(g);
    wave_destroy(s);
    free(v);
}

/* Boundary strategy in 2D: forward with CPML saving the strip, back from the last two
 * time levels with the source re-injected, against a snapshot taken on the way. */
Test(wave_2d, time_reversal_from_last_two_snapshots, .timeout = 60)
{
    struct sl_device dev = test_cpu();
    const double fp = 12;
    struct wave_params p = params_2d(40, 36, 10, 8, 8e-4, 10, fp);
    p.d[2] = 9;
    p.pml[0] = 8;
    p.pml[5] = 7;
    size_t nn = (size_t)p.n[0] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    srand(7);
    for (size_t i = 0; i < nn; i++)
        v[i] = 1800.0f + 10.0f * (float)(i / p.n[0]) + 50.0f * (float)rand() / RAND_MAX;
    cr_assert_lt(p.dt, stability_dt_max(p.order, p.d, 2300));
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &p, v, &s), 0, "%s", err_msg());
    const double src[3] = {173.3, 0, 151.7};
    struct wave_points *ps;
    cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
    const int NT = 300, M = 140;
    size_t ns = wave_strip_count(s);
    float *strips = malloc((size_t)(NT + 1) * ns * sizeof *strips);
    float *snap = malloc(nn * sizeof *snap), *back = malloc(nn * sizeof *back);
    float *src_t = malloc(NT * sizeof *src_t);
    for (int it = 0; it < NT; it++)
        src_t[it] = (float)wavelet_ricker(it * p.dt, fp, wavelet_ricker_delay(fp));
    test_wave_forward_strips(s, ps, src_t, NT, M, strips, ns, snap);
    wave_swap(s);
    test_wave_back_strips(s, ps, src_t, NT, M, strips, ns);
    cr_assert_eq(wave_copy_out(s, false, back), 0);
    double e = test_rel_l2_f32(back, snap, nn), norm = 0;
    for (size_t i = 0; i < nn; i++)
        norm += (double)snap[i] * snap[i];
    fprintf(stderr, "2D time reversal: %d steps back, rel L2 %.3g (|snapshot| %.3g)\n", NT - 1 - M, e, sqrt(norm));
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

/* Random strategy in 2D: RANDOM faces (CPML off from the start), randomized layers, a free
 * surface: the run reverses from its last two time levels alone. */
Test(wave_2d, random_boundary_reverses, .timeout = 60)
{
    struct sl_device dev = test_cpu();
    const double fp = 12;
    struct wave_params p = params_2d(40, 36, 10, 8, 8e-4, 12, fp);
    for (int f = 0; f < 6; f++)
        p.face[f] = f / 2 == 1 ? WAVE_FACE_NONE : WAVE_FACE_RANDOM;
    p.face[4] = WAVE_FACE_FREE;
    p.pml[4] = 0;
    size_t nn = (size_t)p.n[0] * p.n[2];
    float *v = test_constant_grid(p.n, 2000);
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &p, v, &s), 0, "%s", err_msg());
    cr_assert(!wave_cpml_enabled(s));
    struct random_boundary rb = {.ramp = 0, .range = 0, .width = 12, .seed = 3,
                                 .vstable = random_boundary_vstable(p.order, p.dt, p.d), .vmin = 2000};
    cr_assert_eq(wave_randomize_layers(s, &rb, 1), 0, "%s", err_msg());
    const double src[3] = {173.3, 0, 51.7};
    struct wave_points *ps;
    cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
    const int NT = 400, M = 150;
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
    fprintf(stderr, "2D random boundary: %d steps back, rel L2 %.3g\n", NT - 1 - M, e);
    cr_assert_lt(e, 1e-4);
    wave_points_destroy(ps);
    wave_destroy(s);
    free(snap);
    free(back);
    free(v);
}

/* Checkpoints restore a 2D run bit for bit (both time levels and the CPML memory). */
Test(wave_2d, checkpoint_restores_bitwise)
{
    struct sl_device dev = test_cpu();
    struct wave_params p = params_2d(30, 28, 10, 4, 1e-3, 6, 15);
    p.face[4] = WAVE_FACE_FREE;
    p.pml[4] = 0;
    float *v = test_constant_grid(p.n, 2000);
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &p, v, &s), 0, "%s", err_msg());
    cr_assert(wave_params_of(s)->free_surface);
    const double src[3] = {120, 0, 90};
    struct wave_points *ps;
    cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_TRILINEAR, &ps), 0, "%s", err_msg());
    cr_assert_eq(wave_state_bytes(s), wave_state_bytes_of(&p));
    test_wave_checkpoint_replays(s, ps, p.dt, 15, (size_t)p.n[0] * p.n[2], 70, 150);
    wave_points_destroy(ps);
    wave_destroy(s);
    free(v);
}
