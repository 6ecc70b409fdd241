/* The TTI propagator (kernels/tti.h, prop_tti.c) on the CPU: the isotropic limit against
 * the acoustic propagator, qP kinematics against Thomsen's exact group velocity, long-run
 * stability in a rapidly varying tilted medium, the CPML in a 45 degree TTI medium, the
 * stable time step, time reversal and checkpoints with both fields, and the refusals. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/fd_coeffs.h"
#include "kernels/random_boundary.h"
#include "kernels/propagator.h"
#include "kernels/tti.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/support.h"
#include "tests/wave_support.h"

#define DEG (M_PI / 180.0)

/* A grid NX x NY x NZ (NY = 1: 2D) of spacing H, CPML of W cells on every face. */
static struct wave_params grid(int nx, int ny, int nz, double h, double dt, int w, double fp)
{
    struct wave_params p = {.n = {nx, ny, nz}, .d = {h, h, h}, .order = 8, .dt = dt, .pml = {w, w, w, w, w, w},
                            .pml_reflection = 1e-4, .f_ref = fp};
    for (int f = 0; f < 6; f++)
        p.face[f] = WAVE_FACE_CPML;
    if (ny == 1) {
        p.face[2] = p.face[3] = WAVE_FACE_NONE;
        p.pml[2] = p.pml[3] = 0;
    }
    return p;
}

/* Sum of p^2 + q^2 over the interior. */
__attribute__((unused)) static double energy(struct tti_sim *s, float *buf, size_t n)
{
    double e = 0;
    cr_assert_eq(tti_copy_out(s, false, buf), 0);
    for (size_t i = 0; i < n; i++)
        e += (double)buf[i] * buf[i];
    cr_assert_eq(tti_copy_out_q(s, false, buf), 0);
    for (size_t i = 0; i < n; i++)
        e += (double)buf[i] * buf[i];
    return e;
}

/* ---- isotropic limit --------------------------------------------------------------------------- */

/* Traces of PHYS on P (through prop_*): a Ricker source at SRC, NREC receivers REC;
 * TR[r * nt + it] at step it + 1. */
static void prop_traces(int phys, const struct prop_params *pp, const struct prop_model *m, const double src[3],
                        const double *rec, size_t nrec, int nt, double fp, float *tr)
{
    struct sl_device dev = test_cpu();
    struct prop_params p = *pp;
    p.physics = phys;
    struct prop *s;
    cr_assert_eq(prop_create(&dev, &p, m, &s), 0, "%s", err_msg());
    struct prop_points *ps, *pr;
    cr_assert_eq(prop_points_create(s, src, 1, PROP_INTERP_SINC, &ps), 0, "%s", err_msg());
    cr_assert_eq(prop_points_create(s, rec, nrec, PROP_INTERP_SINC, &pr), 0, "%s", err_msg());
    for (int it = 0; it < nt; it++) {
        cr_assert_eq(prop_step(s), 0);
        float a = (float)wavelet_ricker(it * p.dt, fp, wavelet_ricker_delay(fp));
        cr_assert_eq(prop_inject(s, ps, &a, 1, 1.0f, PROP_INJECT_PHYSICAL), 0);
        cr_assert_eq(prop_sample(s, pr, tr + it, nt, 0), 0);
    }
    prop_points_destroy(s, ps);
    prop_points_destroy(s, pr);
    prop_destroy(s);
}

static void isotropic_case(const int n[3], bool free_surface, int nt)
{
    const double h = 10, fp = 15, d[3] = {h, h, h}, o[3] = {0, 0, 0};
    struct prop_params p;
    prop_params_init(&p, n, d, o, 1e-3, 10);
    p.f_ref = fp;
    if (free_surface)
        p.grid.face[4] = PROP_FACE_FREE;
    const size_t nn = (size_t)n[0] * n[1] * n[2];
    float *v = malloc(nn * sizeof *v);
    for (size_t i = 0; i < nn; i++)
        v[i] = 1800.0f + 4.0f * (float)(i / ((size_t)n[0] * n[1])) + 30.0f * (float)((i * 2654435761u) % 97) / 97;
    /* a tilt and an azimuth: the cross terms run (on p and q alike) and cancel */
    struct prop_model m = {.vp = v, .epsilon0 = 0, .delta0 = 0, .theta0 = 35 * DEG, .phi0 = 20 * DEG};
    const double src[3] = {n[0] / 2 * h + 3.3, n[1] / 2 * h, (free_surface ? 4 : n[2] / 2) * h + 1.7};
    double rec[6 * 3];
    const size_t nrec = 6;
    for (size_t r = 0; r < nrec; r++) {
        rec[3 * r] = (5 + 4.5 * r) * h;
        rec[3 * r + 1] = (n[1] - 1) * h * (0.2 + 0.1 * r);
        rec[3 * r + 2] = (free_surface ? 2.5 : 6 + 3.0 * r) * h;
    }
    float *ta = calloc(nrec * nt, sizeof *ta), *tt = calloc(nrec * nt, sizeof *tt);
    prop_traces(PROP_ACOUSTIC, &p, &m, src, rec, nrec, nt, fp, ta);
    prop_traces(PROP_TTI, &p, &m, src, rec, nrec, nt, fp, tt);
    const double e = test_rel_l2_f32(tt, ta, nrec * nt);
    double peak = 0;
    for (size_t i = 0; i < nrec * nt; i++)
        peak = fmax(peak, fabs(ta[i]));
    fprintf(stderr, "tti isotropic limit (%s%s): traces rel L2 %.3g against the acoustic propagator (peak %.3g)\n",
            n[1] == 1 ? "2D" : "3D", free_surface ? ", free surface" : ", CPML", e, peak);
    cr_assert_gt(peak, 0);
    cr_assert_lt(e, 1e-5);
    free(ta);
    free(tt);
    free(v);
}

Test(tti, isotropic_limit_is_acoustic_3d, .timeout = 120)
{
    const int n[3] = {34, 26, 30};
    isotropic_case(n, false, 260);
}

Test(tti, isotropic_limit_is_acoustic_2d_free_surface, .timeout = 60)
{
    const int n[3] = {80, 1, 60};
    isotropic_case(n, true, 400);
}

/* ---- kinematics ---------------------------------------------------------------------------- */

/* Thomsen's exact qP phase velocity (v_p0 = 1) at phase angle TH from the symmetry axis, in
 * Tsvankin's form (Seismic signatures and analysis of reflection data in anisotropic
 * media, eq. 1.41), with f = 1 - V_S0^2 / V_P0^2 -- written independently of the kernel's
 * 2 x 2 eigenvalue form. */
static double thomsen_v(double th, double eps, double delta, double vs2)
{
    const double f = 1.0 - vs2, s2 = sin(th) * sin(th), s2t = sin(2 * th) * sin(2 * th);
    const double x = 1.0 + 2.0 * eps * s2 / f;
    return sqrt(1.0 + eps * s2 - f / 2 + (f / 2) * sqrt(x * x - 2.0 * (eps - delta) * s2t / f));
}

/* Group velocity and group angle of phase angle TH: V_g = sqrt(V^2 + V'^2), psi = th +
 * atan(V' / V), V' by a central difference. */
static void thomsen_group(double th, double eps, double delta, double vs2, double *vg, double *psi)
{
    const double e = 1e-6, v = thomsen_v(th, eps, delta, vs2);
    const double dv = (thomsen_v(th + e, eps, delta, vs2) - thomsen_v(th - e, eps, delta, vs2)) / (2 * e);
    *vg = sqrt(v * v + dv * dv);
    *psi = th + atan(dv / v);
}

/* qP group velocity (v_p0 = 1) in the direction at angle PSI (0..pi/2) from the axis: the
 * phase angle whose group angle is PSI, by bisection (psi(theta) increases for qP). */
static double group_velocity(double psi, double eps, double delta, double vs2)
{
    double lo = 0, hi = M_PI / 2, vg, g;
    for (int it = 0; it < 80; it++) {
        double mid = 0.5 * (lo + hi);
        thomsen_group(mid, eps, delta, vs2, &vg, &g);
        if (g < psi)
            lo = mid;
        else
            hi = mid;
    }
    thomsen_group(0.5 * (lo + hi), eps, delta, vs2, &vg, &g);
    return vg;
}

/* Arrival time of trace TR (NT samples at DT, sample it = time (it + 1) dt) by the
 * cross-correlation with the source wavelet W (W[it] at time it dt) over lags in
 * [LO, HI] s, refined by a parabola through the peak and its neighbours. */
static double pick(const float *tr, int nt, const float *w, double dt, double lo, double hi)
{
    int l0 = (int)floor(lo / dt), l1 = (int)ceil(hi / dt), best = l0;
    double cbest = -INFINITY, c[3];
    double *cc = malloc(sizeof(double) * (l1 - l0 + 3));
    for (int lag = l0 - 1; lag <= l1 + 1; lag++) {
        /* trace time (it + 1) dt against wavelet time (it + 1 - lag) dt */
        double s = 0;
        for (int it = 0; it < nt; it++) {
            int k = it + 1 - lag;
            if (k >= 0 && k < nt)
                s += (double)tr[it] * w[k];
        }
        cc[lag - l0 + 1] = s;
        if (lag >= l0 && lag <= l1 && s > cbest) {
            cbest = s;
            best = lag;
        }
    }
    for (int k = 0; k < 3; k++)
        c[k] = cc[best - 1 - l0 + 1 + k];
    free(cc);
    const double den = c[0] - 2 * c[1] + c[2];
    return (best + (den != 0 ? 0.5 * (c[0] - c[2]) / den : 0)) * dt;
}

/* First arrivals of a point source in a homogeneous medium (v_pz VPZ, EPS, DELTA, axis
 * tilted by THETA in the x-z plane) at receivers R m away in the directions DIRS, against
 * r / V_g(angle from the axis); returns the worst relative error. */
static double kinematics(double eps, double delta, double theta, const char *label)
{
    const double h = 10, fp = 15, vpz = 2000, sigma = TTI_SIGMA_DEFAULT, r = 250;
    const int half = 31, w = 8;
    const int n = 2 * half + 1;
    const double vs2 = fabs(eps - delta) / sigma;
    const double dt = 0.8 * tti_dt_max(8, (const double[3]){h, h, h}, false, vpz, eps, delta, theta, 0, sigma);
    struct wave_params p = grid(n, n, n, h, dt, w, fp);
    const size_t nn = (size_t)n * n * n;
    float *v = test_constant(nn, (float)vpz);
    struct tti_model m = {.vpz = v, .eps0 = eps, .delta0 = delta, .theta0 = theta};
    struct sl_device dev = test_cpu();
    struct tti_sim *s;
    cr_assert_eq(tti_create(&dev, &p, sigma, &m, &s), 0, "%s", err_msg());
    /* ten directions: the axes, diagonals in and out of the tilt plane (x-z) */
    static const double dirs[][3] = {{1, 0, 0},  {0, 0, 1},  {0, 1, 0},  {1, 0, 1},  {1, 0, -1},
                                     {-1, 0, -1}, {1, 1, 1}, {1, -1, 1}, {-1, 1, 1}, {0, 1, 1}};
    const size_t nd = sizeof dirs / sizeof dirs[0];
    const double c0 = half * h, src[3] = {c0, c0, c0};
    double rec[3 * 10], tpred[10];
    const double ax[3] = {sin(theta), 0, cos(theta)};
    double tmax = 0;
    for (size_t i = 0; i < nd; i++) {
        const double *u = dirs[i];
        const double nu = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
        double cosa = 0;
        for (int a = 0; a < 3; a++) {
            rec[3 * i + a] = c0 + r * u[a] / nu;
            cosa += ax[a] * u[a] / nu;
        }
        const double psi = acos(fmin(1.0, fabs(cosa)));
        tpred[i] = r / (vpz * group_velocity(psi, eps, delta, vs2));
        tmax = fmax(tmax, tpred[i]);
    }
    struct wave_points *ps, *pr;
    cr_assert_eq(tti_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
    cr_assert_eq(tti_points_create(s, rec, nd, WAVE_INTERP_SINC, &pr), 0, "%s", err_msg());
    const double t0 = wavelet_ricker_delay(fp);
    const int nt = (int)ceil((tmax + 2 * t0) / dt);
    float *wl = malloc(nt * sizeof *wl), *tr = calloc(nd * nt, sizeof *tr);
    for (int it = 0; it < nt; it++)
        wl[it] = (float)wavelet_ricker(it * dt, fp, t0);
    for (int it = 0; it < nt; it++) {
        cr_assert_eq(tti_step(s), 0);
        cr_assert_eq(tti_inject(s, ps, &wl[it], 1, 1.0f, TTI_INJECT_PHYSICAL), 0);
        cr_assert_eq(tti_sample(s, pr, tr + it, nt, 0), 0);
    }
    double worst = 0;
    for (size_t i = 0; i < nd; i++) {
        /* the first injected sample (time 0) shows at step 1: the trace at time (it + 1) dt
         * holds the wavelet delayed by the travel time, plus one step */
        const double t = pick(tr + i * nt, nt, wl, dt, 0.6 * tpred[i], 1.4 * tpred[i]);
        const double err = (t - tpred[i]) / tpred[i];
        fprintf(stderr, "tti kinematics %s: direction (%g, %g, %g): picked %.5f s, Thomsen %.5f s, error %+.3f %%\n",
                label, dirs[i][0], dirs[i][1], dirs[i][2], t, tpred[i], 100 * err);
        worst = fmax(worst, fabs(err));
    }
    wave_points_destroy(ps);
    wave_points_destroy(pr);
    tti_destroy(s);
    free(v);
    free(wl);
    free(tr);
    return worst;
}

Test(tti, kinematics_vti_thomsen_group_velocity, .timeout = 120)
{
    cr_assert_lt(kinematics(0.2, 0.1, 0, "VTI"), 0.005);
}

Test(tti, kinematics_tti45_thomsen_group_velocity, .timeout = 120)
{
    cr_assert_lt(kinematics(0.2, 0.1, 45 * DEG, "TTI 45"), 0.005);
}

/* ---- stability ------------------------------------------------------------------------------- */

/* Triangle wave of period 2 P: 0 at 0, 1 at P. */
static double tri(double x, double p)
{
    double u = fmod(fabs(x), 2 * p) / p;
    return u <= 1 ? u : 2 - u;
}

/* 20,000 steps of a 2D medium whose tilt swings 0..60 degrees over every RAMP = 5 cells
 * (12 degrees per cell, diagonal stripes) and whose eps - delta runs from -0.1 to 0.3 with
 * depth (delta lowered to eps where it is larger, tti.h), sigma 0.75, at 0.9 of the stable
 * dt: the energy (sum p^2 + q^2) never grows back after the qP wave has left, and what
 * stays behind -- the slow qSV artefact -- is reported.  (The point-wise form of H1 that
 * the self-adjoint one replaced grew ~10x every 250 steps from step ~1500 here.) */
Test(tti, stability_20000_steps_tilt_ramp_5_cells, .timeout = 300)
{
    const double RAMP = 5;
    const int nx = 80, nz = 80, W = 12, NT = 20000;
    const double h = 10, fp = 15, sigma = TTI_SIGMA_DEFAULT;
    const size_t nn = (size_t)nx * nz;
    float *v = malloc(nn * sizeof *v), *eps = malloc(nn * sizeof *eps), *del = malloc(nn * sizeof *del),
          *th = malloc(nn * sizeof *th), *buf = malloc(nn * sizeof *buf);
    for (int k = 0; k < nz; k++)
        for (int i = 0; i < nx; i++) {
            const size_t c = (size_t)k * nx + i;
            v[c] = (float)(2000 + 5 * k);
            del[c] = (float)(0.1 - 0.05 * i / (nx - 1));
            eps[c] = del[c] + (float)(-0.1 + 0.4 * k / (nz - 1));
            th[c] = (float)(60 * DEG * tri(i + k, RAMP));
        }
    struct tti_model m = {.vpz = v, .eps = eps, .delta = del, .theta = th};
    double vqp;
    cr_assert_eq(tti_model_check(&m, nn, sigma, &vqp, NULL), 0, "%s", err_msg());
    const double dt = 0.9 * tti_dt_max_model(&m, nn, 8, (const double[3]){h, h, h}, true, sigma);
    struct wave_params p = grid(nx, 1, nz, h, dt, W, fp);
    struct sl_device dev = test_cpu();
    struct tti_sim *s;
    cr_assert_eq(tti_create(&dev, &p, sigma, &m, &s), 0, "%s", err_msg());
    const double src[3] = {nx / 2 * h + 2.5, 0, nz / 2 * h - 3.5};
    struct wave_points *ps;
    cr_assert_eq(tti_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
    /* the qP wave has crossed the whole grid (layers included) at the slowest qP speed */
    const double diag = sqrt(2.0) * (nx + 2 * W) * h;
    const int it_gone = (int)ceil((2 * wavelet_ricker_delay(fp) + diag / 2000.0) / dt);
    double epeak = 0, egone = 0, emax_after = 0, efinal = 0;
    for (int it = 0; it < NT; it++) {
        cr_assert_eq(tti_step(s), 0);
        float a = (float)wavelet_ricker(it * dt, fp, wavelet_ricker_delay(fp));
        cr_assert_eq(tti_inject(s, ps, &a, 1, 1.0f, TTI_INJECT_PHYSICAL), 0);
        if ((it + 1) % 50 && it + 1 != it_gone)
            continue;
        const double e = energy(s, buf, nn);
        cr_assert(isfinite(e), "energy not finite at step %d", it + 1);
        if (it + 1 < it_gone)
            epeak = fmax(epeak, e);
        else if (it + 1 == it_gone)
            egone = e;
        else
            emax_after = fmax(emax_after, e);
        efinal = e;
    }
    fprintf(stderr, "tti stability (tilt 0..60 over %g cells): %d steps at dt %.4g s (0.9 x %.4g): peak energy %.4g; after the qP wave has left "
            "(step %d) the qSV artefact holds %.1f dB of it; largest later energy %.1f dB of that, final %.1f dB\n",
            RAMP, NT, dt, dt / 0.9, epeak, it_gone, 10 * log10(egone / epeak), 10 * log10(emax_after / egone),
            10 * log10(efinal / egone));
    cr_assert_gt(epeak, 0);
    cr_assert_lt(egone, epeak);
    cr_assert_leq(emax_after, egone, "the energy grew after the qP wave left: %g > %g", emax_after, egone);
    wave_points_destroy(ps);
    tti_destroy(s);
    free(v);
    free(eps);
    free(del);
    free(th);
    free(buf);
}

/* ---- the absorbing boundary ----------------------------------------------------------------- */

/* Traces of a 2D TTI run (CPML or rigid walls as P says). */
static void tti_traces(const struct wave_params *p, const struct tti_model *m, const double src[3],
                       const double *rec, size_t nrec, int nt, double fp, float *tr)
{
    struct sl_device dev = test_cpu();
    struct tti_sim *s;
    cr_assert_eq(tti_create(&dev, p, TTI_SIGMA_DEFAULT, m, &s), 0, "%s", err_msg());
    struct wave_points *ps, *pr;
    cr_assert_eq(tti_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
    cr_assert_eq(tti_points_create(s, rec, nrec, WAVE_INTERP_SINC, &pr), 0, "%s", err_msg());
    for (int it = 0; it < nt; it++) {
        cr_assert_eq(tti_step(s), 0);
        float a = (float)wavelet_ricker(it * p->dt, fp, wavelet_ricker_delay(fp));
        cr_assert_eq(tti_inject(s, ps, &a, 1, 1.0f, TTI_INJECT_PHYSICAL), 0);
        cr_assert_eq(tti_sample(s, pr, tr + it, nt, 0), 0);
    }
    wave_points_destroy(ps);
    wave_points_destroy(pr);
    tti_destroy(s);
}

/* A 45 degree TTI medium (eps 0.2, delta 0.1), W CPML cells: receivers 3 cells inside
 * every face, from the source's foot to the corners (incidence 0 to 73 degrees on the near
 * faces, 0 to 44 on the far ones); the same run in a grid 70 cells larger on every side
 * (rigid walls, echoes after the window) is the reference.  Every receiver must see the
 * reflection at least 30 dB below the direct wave (energy over the window). */
static void cpml_2d_tilt45(int W)
{
    const double h = 10, fp = 15, vpz = 2000, eps = 0.2, delta = 0.1, th = 45 * DEG;
    const int N = 100, E = 70;
    const double dt = 0.9 * tti_dt_max(8, (const double[3]){h, h, h}, true, vpz, eps, delta, th, 0,
                                       TTI_SIGMA_DEFAULT);
    struct wave_params small = grid(N, 1, N, h, dt, W, fp), big = small;
    for (int a = 0; a < 3; a += 2) {
        big.n[a] = N + 2 * E;
        big.o[a] = -E * h;
        big.pml[2 * a] = big.pml[2 * a + 1] = 0;
    }
    const double src[3] = {25 * h, 0, 25 * h};
    /* receivers: along each face, 3 cells in, every 8 cells */
    double rec[4 * 13 * 3];
    size_t nrec = 0;
    for (int f = 0; f < 4; f++)
        for (int t = 0; t <= 96; t += 8) {
            const double along = (1.5 + t) * h, across = f % 2 ? (N - 1 - 3) * h : 3 * h;
            rec[3 * nrec] = f < 2 ? across : along;
            rec[3 * nrec + 1] = 0;
            rec[3 * nrec + 2] = f < 2 ? along : across;
            nrec++;
        }
    const double t0 = wavelet_ricker_delay(fp), far = sqrt(2.0) * 72 * h + 6 * h;
    const int nt = (int)ceil((t0 + far / vpz + 1.2 / fp) / dt);
    /* the big grid's walls echo no earlier than (2 E + 28 cells) / v_max after the source */
    cr_assert_lt(nt * dt, t0 + (2 * E + 28) * h / (vpz * sqrt(1 + 2 * eps)));
    float *vs = test_constant((size_t)N * N, (float)vpz), *vb = test_constant((size_t)(N + 2 * E) * (N + 2 * E), (float)vpz);
    struct tti_model ms = {.vpz = vs, .eps0 = eps, .delta0 = delta, .theta0 = th};
    struct tti_model mb = {.vpz = vb, .eps0 = eps, .delta0 = delta, .theta0 = th};
    float *ts = calloc(nrec * nt, sizeof *ts), *tb = calloc(nrec * nt, sizeof *tb);
    tti_traces(&small, &ms, src, rec, nrec, nt, fp, ts);
    tti_traces(&big, &mb, src, rec, nrec, nt, fp, tb);
    double worst = -INFINITY;
    for (size_t r = 0; r < nrec; r++) {
        double den;
        const double db = test_reflection_db(ts + r * nt, tb + r * nt, nt, &den);
        fprintf(stderr, "tti cpml (45 deg tilt): receiver (%g, %g) m: reflection %.1f dB\n", rec[3 * r],
                rec[3 * r + 2], db);
        cr_assert_gt(den, 0);
        cr_assert_lt(db, -30.0, "receiver %zu at (%g, %g) m: reflection only %.1f dB down", r, rec[3 * r],
                     rec[3 * r + 2], db);
        worst = fmax(worst, db);
    }
    fprintf(stderr, "tti cpml (45 deg tilt, eps 0.2, delta 0.1, %d cells): worst receiver %.1f dB\n", W, worst);
    free(vs);
    free(vb);
    free(ts);
    free(tb);
}

/* 10 cells: the TTI default (conf/config.h); 20: the default before the taper moved to
 * the layers' outer part (kernels/tti.h). */
Test(tti, cpml_30db_all_angles_tilt45, .timeout = 200)
{
    cpml_2d_tilt45(10);
    cpml_2d_tilt45(20);
}

/* ---- the stable time step ---------------------------------------------------------------------- */

/* Energy growth of a random initial field over NT steps at FACTOR x tti_dt_max (8 CPML
 * cells, p = q = noise at both levels): final energy over initial. */
static double noise_growth(int ny, double eps, double delta, double th, double ph, double factor, int nt)
{
    const int n = 28;
    const double h = 10, vpz = 2000, d[3] = {h, h, h};
    const bool two_d = ny == 1;
    const double dt = factor * tti_dt_max(8, d, two_d, vpz, eps, delta, th, ph, TTI_SIGMA_DEFAULT);
    struct wave_params p = grid(n, ny, n, h, dt, 8, 15);
    const size_t nn = (size_t)n * ny * n;
    float *v = test_constant(nn, (float)vpz), *buf = malloc(nn * sizeof *buf);
    struct tti_model m = {.vpz = v, .eps0 = eps, .delta0 = delta, .theta0 = th, .phi0 = ph};
    struct sl_device dev = test_cpu();
    struct tti_sim *s;
    cr_assert_eq(tti_create(&dev, &p, TTI_SIGMA_DEFAULT, &m, &s), 0, "%s", err_msg());
    srand(11);
    for (size_t i = 0; i < nn; i++)
        buf[i] = (float)rand() / RAND_MAX - 0.5f;
    cr_assert_eq(tti_copy_in(s, false, buf), 0);
    cr_assert_eq(tti_copy_in(s, true, buf), 0);
    const double e0 = energy(s, buf, nn);
    double e = e0;
    for (int it = 0; it < nt && isfinite(e) && e < 1e30 * e0; it++) {
        cr_assert_eq(tti_step(s), 0);
        e = energy(s, buf, nn);
    }
    tti_destroy(s);
    free(v);
    free(buf);
    return isfinite(e) ? e / e0 : INFINITY;
}

Test(tti, dt_max_bounded_below_grows_above, .timeout = 120)
{
    static const struct {
        int ny;
        double eps, delta, th, ph;
    } cases[] = {{1, 0.2, 0.1, 45 * DEG, 0}, {1, 0.0, 0.2, 20 * DEG, 0}, {1, 0.3, -0.05, 70 * DEG, 0},
                 {28, 0.2, 0.1, 45 * DEG, 30 * DEG}, {28, 0.1, 0.25, 30 * DEG, 120 * DEG}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int ny = cases[c].ny, nt = ny == 1 ? 3000 : 400;
        const double e = cases[c].eps, dl = cases[c].delta, th = cases[c].th, ph = cases[c].ph;
        const double h[3] = {10, 10, 10};
        const double tmax = tti_dt_max(8, h, ny == 1, 2000, e, dl, th, ph, TTI_SIGMA_DEFAULT);
        const double bound = tti_dt_bound(8, h, ny == 1, 2000 * tti_qp_vmax(e, dl, TTI_SIGMA_DEFAULT));
        const double below = noise_growth(ny, e, dl, th, ph, 0.99, nt), above = noise_growth(ny, e, dl, th, ph, 1.1, nt);
        fprintf(stderr, "tti dt (%s, eps %g, delta %g, theta %g, phi %g): dt_max %.5g s, rigorous bound %.5g s "
                "(%.1f %% lower); %d steps at 0.99 x: energy x %.3g; at 1.1 x: x %.3g\n", ny == 1 ? "2D" : "3D", e, dl,
                th / DEG, ph / DEG, tmax, bound, 100 * (1 - bound / tmax), nt, below, above);
        cr_assert_leq(bound, tmax / (1 - 1e-3) * (1 + 1e-9), "the rigorous bound exceeds the corner limit");
        cr_assert_lt(below, 2.0, "0.99 x dt_max grew the energy %g times", below);
        cr_assert_gt(above, 1e6, "1.1 x dt_max did not grow: x %g", above);
    }
    /* isotropic: the acoustic limit 2 d / (sqrt(3) v sqrt(S)) (less the margin) */
    const double d[3] = {10, 10, 10};
    const double iso = tti_dt_max(8, d, false, 2000, 0, 0, 0.3, 0.2, TTI_SIGMA_DEFAULT);
    const double ac = 2 * 10 / (sqrt(3.0) * 2000 * sqrt(fd_second_abs_sum(8)));
    cr_assert_float_eq(iso, (1 - 1e-3) * ac, 1e-12 * ac);
    cr_assert_float_eq(tti_dt_bound(8, d, false, 2000), ac, 1e-12 * ac);
}

/* ---- time reversal, checkpoints, random layers (through prop_*) --------------------------------- */

static struct prop *tti_prop(const struct prop_params *p, const struct prop_model *m)
{
    struct sl_device dev = test_cpu();
    static struct sl_device keep; /* the device must outlive the simulation */
    keep = dev;
    struct prop *s;
    cr_assert_eq(prop_create(&keep, p, m, &s), 0, "%s", err_msg());
    return s;
}

/* A 2D TTI model for the reversal tests: velocity, eps and tilt vary. */
static void reversal_model(int nx, int nz, float **v, float **eps, float **th)
{
    const size_t nn = (size_t)nx * nz;
    *v = malloc(nn * sizeof **v);
    *eps = malloc(nn * sizeof **eps);
    *th = malloc(nn * sizeof **th);
    srand(5);
    for (size_t i = 0; i < nn; i++) {
        (*v)[i] = 1900.0f + 8.0f * (float)(i / nx) + 40.0f * (float)rand() / RAND_MAX;
        (*eps)[i] = 0.15f + 0.1f * (float)rand() / RAND_MAX;
        (*th)[i] = (float)((20 + 25 * (double)(i % nx) / nx) * DEG);
    }
}

/* Boundary strategy: forward with CPML saving the strip (p and q), back from the last two
 * levels with the source re-injected and the strip loaded, against a snapshot. */
Test(tti, time_reversal_with_strip, .timeout = 60)
{
    const int n[3] = {44, 1, 40}, NT = 300, M = 140;
    const double d[3] = {10, 10, 9}, o[3] = {0, 0, 0}, fp = 12;
    float *v, *eps, *th;
    reversal_model(n[0], n[2], &v, &eps, &th);
    struct prop_params p;
    prop_params_init(&p, n, d, o, 1e-3, 10);
    p.physics = PROP_TTI;
    p.grid.width[0] = 8;
    p.grid.width[5] = 7;
    struct prop_model m = {.vp = v, .epsilon = eps, .delta0 = 0.05, .theta = th};
    struct prop *s = tti_prop(&p, &m);
    const double src[3] = {193.3, 0, 151.7};
    struct prop_points *ps;
    cr_assert_eq(prop_points_create(s, src, 1, PROP_INTERP_SINC, &ps), 0, "%s", err_msg());
    const size_t nn = (size_t)n[0] * n[2], ns = prop_strip_count(s);
    cr_assert_gt(ns, 0);
    float *strips = malloc((size_t)(NT + 1) * ns * sizeof *strips), *src_t = malloc(NT * sizeof *src_t);
    float *snap = malloc(nn * sizeof *snap), *back = malloc(nn * sizeof *back);
    for (int it = 0; it < NT; it++)
        src_t[it] = (float)wavelet_ricker(it * p.dt, fp, wavelet_ricker_delay(fp));
    for (int it = 0; it < NT; it++) {
        cr_assert_eq(prop_step(s), 0);
        cr_assert_eq(prop_inject(s, ps, &src_t[it], 1, 1.0f, PROP_INJECT_PHYSICAL), 0);
        cr_assert_eq(prop_strip_save(s, strips + (size_t)(it + 1) * ns, false), 0);
        if (it + 1 == M)
            cr_assert_eq(prop_copy_out(s, false, snap), 0);
    }
    prop_swap(s);
    prop_set_reverse_interior(s, true);
    for (int k = NT - 1; k > M; k--) {
        cr_assert_eq(prop_step_reverse(s), 0);
        cr_assert_eq(prop_inject(s, ps, &src_t[k], 1, 1.0f, PROP_INJECT_PHYSICAL), 0);
        cr_assert_eq(prop_strip_load(s, strips + (size_t)(k - 1) * ns, false), 0);
    }
    cr_assert_eq(prop_copy_out(s, false, back), 0);
    const double e = test_rel_l2_f32(back, snap, nn);
    fprintf(stderr, "tti time reversal (boundary strategy, 2D, CPML): %d steps back, rel L2 %.3g\n", NT - 1 - M, e);
    cr_assert_lt(e, 1e-4);
    prop_points_destroy(s, ps);
    prop_destroy(s);
    free(strips);
    free(src_t);
    free(snap);
    free(back);
    free(v);
    free(eps);
    free(th);
}

/* Random strategy: RANDOM faces (no damping), randomized layers, a free surface; the run
 * reverses from its last two levels alone. */
Test(tti, random_boundary_reverses, .timeout = 60)
{
    const int n[3] = {40, 1, 36}, NT = 260, M = 120;
    const double d[3] = {10, 10, 10}, o[3] = {0, 0, 0}, fp = 12;
    float *v, *eps, *th;
    reversal_model(n[0], n[2], &v, &eps, &th);
    struct prop_params p;
    prop_params_init(&p, n, d, o, 1e-3, 12);
    p.physics = PROP_TTI;
    for (int f = 0; f < 6; f++)
        if (p.grid.face[f] == PROP_FACE_CPML)
            p.grid.face[f] = PROP_FACE_RANDOM;
    p.grid.face[4] = PROP_FACE_FREE;
    struct prop_model m = {.vp = v, .epsilon = eps, .delta0 = 0.05, .theta = th};
    struct prop *s = tti_prop(&p, &m);
    struct random_boundary rb = {.ramp = 0, .range = 0, .width = 12, .seed = 9, .vstable = 2600, .vmin = 1900};
    cr_assert_eq(prop_randomize_layers(s, &rb, 3), 0, "%s", err_msg());
    const double src[3] = {201.0, 0, 52.5};
    struct prop_points *ps;
    cr_assert_eq(prop_points_create(s, src, 1, PROP_INTERP_SINC, &ps), 0, "%s", err_msg());
    const size_t nn = (size_t)n[0] * n[2];
    float *snap = malloc(nn * sizeof *snap), *back = malloc(nn * sizeof *back), *src_t = malloc(NT * sizeof *src_t);
    for (int it = 0; it < NT; it++)
        src_t[it] = (float)wavelet_ricker(it * p.dt, fp, wavelet_ricker_delay(fp));
    for (int it = 0; it < NT; it++) {
        cr_assert_eq(prop_step(s), 0);
        cr_assert_eq(prop_inject(s, ps, &src_t[it], 1, 1.0f, PROP_INJECT_PHYSICAL), 0);
        if (it + 1 == M)
            cr_assert_eq(prop_copy_out(s, false, snap), 0);
    }
    prop_swap(s);
    for (int k = NT - 1; k > M; k--) {
        cr_assert_eq(prop_step_reverse(s), 0);
        cr_assert_eq(prop_inject(s, ps, &src_t[k], 1, 1.0f, PROP_INJECT_PHYSICAL), 0);
    }
    cr_assert_eq(prop_copy_out(s, false, back), 0);
    const double e = test_rel_l2_f32(back, snap, nn);
    fprintf(stderr, "tti time reversal (random boundary, free surface, 2D): %d steps back, rel L2 %.3g\n",
            NT - 1 - M, e);
    cr_assert_lt(e, 1e-4);
    prop_points_destroy(s, ps);
    prop_destroy(s);
    free(snap);
    free(back);
    free(src_t);
    free(v);
    free(eps);
    free(th);
}

/* A saved state (both fields, both levels, all CPML memory) restores the run bit for bit,
 * in 3D with CPML on every face and a tilted axis out of the x-z plane. */
Test(tti, checkpoint_restores_bitwise, .timeout = 60)
{
    const int n[3] = {22, 18, 20};
    const double d[3] = {10, 10, 10}, o[3] = {0, 0, 0}, fp = 15;
    const size_t nn = (size_t)n[0] * n[1] * n[2];
    float *v = test_constant(nn, 2100);
    struct prop_params p;
    prop_params_init(&p, n, d, o, 1e-3, 6);
    p.physics = PROP_TTI;
    struct prop_model m = {.vp = v, .epsilon0 = 0.2, .delta0 = 0.05, .theta0 = 40 * DEG, .phi0 = 35 * DEG};
    cr_assert_eq(prop_state_bytes_of(&p), prop_state_bytes_of(&p));
    struct prop *s = tti_prop(&p, &m);
    cr_assert_eq(prop_state_bytes(s), prop_state_bytes_of(&p));
    const double src[3] = {104, 87, 99};
    struct prop_points *ps;
    cr_assert_eq(prop_points_create(s, src, 1, PROP_INTERP_SINC, &ps), 0, "%s", err_msg());
    const int N1 = 60, N2 = 50;
    void *state = malloc(prop_state_bytes(s));
    float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b);
    for (int it = 0; it < N1 + N2; it++) {
        if (it == N1)
            cr_assert_eq(prop_state_save(s, state, false), 0);
        cr_assert_eq(prop_step(s), 0);
        float amp = (float)wavelet_ricker(it * p.dt, fp, wavelet_ricker_delay(fp));
        cr_assert_eq(prop_inject(s, ps, &amp, 1, 1.0f, PROP_INJECT_PHYSICAL), 0);
    }
    cr_assert_eq(prop_copy_out(s, false, a), 0);
    cr_assert_eq(prop_step_index(s), N1 + N2);
    cr_assert_eq(prop_reset(s), 0);
    cr_assert_eq(prop_state_load(s, state, false), 0);
    cr_assert_eq(prop_step_index(s), N1);
    for (int it = N1; it < N1 + N2; it++) {
        cr_assert_eq(prop_step(s), 0);
        float amp = (float)wavelet_ricker(it * p.dt, fp, wavelet_ricker_delay(fp));
        cr_assert_eq(prop_inject(s, ps, &amp, 1, 1.0f, PROP_INJECT_PHYSICAL), 0);
    }
    cr_assert_eq(prop_copy_out(s, false, b), 0);
    double norm = 0;
    for (size_t i = 0; i < nn; i++)
        norm += (double)a[i] * a[i];
    cr_assert_gt(norm, 0);
    cr_assert_eq(memcmp(a, b, nn * sizeof *a), 0, "the restored run differs");
    prop_points_destroy(s, ps);
    prop_destroy(s);
    free(state);
    free(a);
    free(b);
    free(v);
}

/* The 3D CPML (chi_xy, chi_xz, chi_yz in play): a 45 degree tilt at 30 degrees azimuth,
 * W CPML cells, receivers 3 cells inside each face and near edges and corners, against a
 * grid 22 cells larger on every side with rigid walls. */
static void cpml_3d_tilt45(int W)
{
    const double h = 10, fp = 15, vpz = 2000, eps = 0.2, delta = 0.1, th = 45 * DEG, ph = 30 * DEG;
    const int N = 30, E = 22;
    const double dt = 0.9 * tti_dt_max(8, (const double[3]){h, h, h}, false, vpz, eps, delta, th, ph,
                                       TTI_SIGMA_DEFAULT);
    struct wave_params small = grid(N, N, N, h, dt, W, fp), big = small;
    for (int a = 0; a < 3; a++) {
        big.n[a] = N + 2 * E;
        big.o[a] = -E * h;
        big.pml[2 * a] = big.pml[2 * a + 1] = 0;
    }
    const double c = 15 * h, lo = 3 * h, hi = (N - 1 - 3) * h;
    const double src[3] = {c, c, c};
    const double rec[][3] = {{lo, c, c}, {hi, c, c}, {c, lo, c}, {c, hi, c}, {c, c, lo}, {c, c, hi},
                             {lo, lo, c}, {hi, c, lo}, {c, hi, hi}, {lo, hi, lo}};
    const size_t nrec = sizeof rec / sizeof rec[0];
    const double t0 = wavelet_ricker_delay(fp);
    const int nt = (int)ceil((t0 + 21 * sqrt(2.0) * h / vpz + 1.2 / fp) / dt);
    cr_assert_lt(nt * dt, t0 + (2 * E + 15) * h / (vpz * sqrt(1 + 2 * eps)));
    const size_t ns = (size_t)N * N * N, nb = (size_t)(N + 2 * E) * (N + 2 * E) * (N + 2 * E);
    float *vs = test_constant(ns, (float)vpz), *vb = test_constant(nb, (float)vpz);
    struct tti_model ms = {.vpz = vs, .eps0 = eps, .delta0 = delta, .theta0 = th, .phi0 = ph};
    struct tti_model mb = ms;
    mb.vpz = vb;
    float *ts = calloc(nrec * nt, sizeof *ts), *tb = calloc(nrec * nt, sizeof *tb);
    tti_traces(&small, &ms, src, &rec[0][0], nrec, nt, fp, ts);
    tti_traces(&big, &mb, src, &rec[0][0], nrec, nt, fp, tb);
    double worst = -INFINITY;
    for (size_t r = 0; r < nrec; r++) {
        double den;
        const double db = test_reflection_db(ts + r * nt, tb + r * nt, nt, &den);
        fprintf(stderr, "tti cpml 3D (45 deg tilt, 30 deg azimuth): receiver (%g, %g, %g) m: reflection %.1f dB\n",
                rec[r][0], rec[r][1], rec[r][2], db);
        cr_assert_gt(den, 0);
        cr_assert_lt(db, -30.0, "receiver %zu: reflection only %.1f dB down", r, db);
        worst = fmax(worst, db);
    }
    fprintf(stderr, "tti cpml 3D (45 deg tilt, 30 deg azimuth, %d cells): worst receiver %.1f dB\n", W, worst);
    free(vs);
    free(vb);
    free(ts);
    free(tb);
}

/* 10 cells: the TTI default (conf/config.h); 16 as before. */
Test(tti, cpml_3d_tilt45_azimuth30, .timeout = 200)
{
    cpml_3d_tilt45(10);
    cpml_3d_tilt45(16);
}

/* ---- refusals ----------------------------------------------------------------------------------- */

/* prop_create of a TTI model M on a small 2D grid: the error and its message. */
static int create_err(const struct prop_model *m, double sigma, char *msg, size_t len)
{
    const int n[3] = {12, 1, 10};
    const double d[3] = {10, 10, 10}, o[3] = {0, 0, 0};
    struct prop_params p;
    prop_params_init(&p, n, d, o, 1e-3, 4);
    p.physics = PROP_TTI;
    p.tti_sigma = sigma;
    struct sl_device dev = test_cpu();
    struct prop *s = NULL;
    int rc = prop_create(&dev, &p, m, &s);
    snprintf(msg, len, "%s", rc < 0 ? err_msg() : "");
    prop_destroy(s);
    return rc;
}

Test(tti, bad_inputs_refused)
{
    const size_t nn = 12 * 10;
    float *v = test_constant(nn, 2000), *a = test_constant(nn, 0.1f);
    char msg[512];
    struct prop_model m = {.vp = v, .epsilon0 = 0.2, .delta0 = 0.1, .theta0 = 0.5};
    cr_assert_eq(create_err(&m, 0.75, msg, sizeof msg), 0, "%s", msg);
    /* NaN in an array, named with its point */
    a[37] = NAN;
    m.epsilon = a;
    cr_assert_eq(create_err(&m, 0.75, msg, sizeof msg), -EINVAL);
    cr_assert(strstr(msg, "epsilon") && strstr(msg, "point 37") && strstr(msg, "not a number"), "%s", msg);
    m.epsilon = NULL;
    /* angles out of range: degrees given as radians, an azimuth beyond 2 pi */
    m.theta0 = 45;
    cr_assert_eq(create_err(&m, 0.75, msg, sizeof msg), -EINVAL);
    cr_assert(strstr(msg, "theta") && strstr(msg, "out of range"), "%s", msg);
    m.theta0 = 0.5;
    a[37] = 7.0f;
    m.phi = a;
    cr_assert_eq(create_err(&m, 0.75, msg, sizeof msg), -EINVAL);
    cr_assert(strstr(msg, "phi") && strstr(msg, "point 37"), "%s", msg);
    m.phi = NULL;
    /* sigma <= 0, NaN */
    cr_assert_eq(create_err(&m, 0, msg, sizeof msg), -EINVAL);
    cr_assert(strstr(msg, "sigma"), "%s", msg);
    cr_assert_eq(create_err(&m, -0.75, msg, sizeof msg), -EINVAL);
    cr_assert(strstr(msg, "sigma"), "%s", msg);
    cr_assert_eq(create_err(&m, NAN, msg, sizeof msg), -EINVAL);
    /* v_pn^2 <= 0, v_sz > v_pz */
    m.delta0 = -0.6;
    cr_assert_eq(create_err(&m, 0.75, msg, sizeof msg), -EINVAL);
    cr_assert(strstr(msg, "delta") && strstr(msg, "-0.5"), "%s", msg);
    m.delta0 = 0.1;
    m.epsilon0 = 0.95;
    cr_assert_eq(create_err(&m, 0.75, msg, sizeof msg), -EINVAL);
    cr_assert(strstr(msg, "raise sigma"), "%s", msg);
    m.epsilon0 = 0.2;
    /* a bad velocity */
    v[5] = NAN;
    cr_assert_eq(create_err(&m, 0.75, msg, sizeof msg), -EINVAL);
    cr_assert(strstr(msg, "v_pz") && strstr(msg, "point 5"), "%s", msg);
    v[5] = 2000;
    /* subdomains: accepted (tests/test_tti_subdomain.c steps them; a GPU refuses them) */
    const int n[3] = {12, 1, 10}, gn[3] = {24, 1, 10};
    const double d[3] = {10, 10, 10}, o[3] = {0, 0, 0};
    struct prop_params p;
    prop_params_init(&p, n, d, o, 1e-3, 4);
    p.physics = PROP_TTI;
    p.grid.face[1] = PROP_FACE_HALO;
    for (int ax = 0; ax < 3; ax++)
        p.grid.global_n[ax] = gn[ax];
    cr_assert_eq(prop_check(&p), 0, "%s", err_msg());
    /* the physics is known by name */
    cr_assert_str_eq(prop_physics_name(PROP_TTI), "tti");
    free(v);
    free(a);
}

/* ---- the model check's constant-parameter path ----------------------------------------------- */

/* tti_model_check of M and of its twin with every constant given as a full array of it
 * (the general per-point loop): the same return, message, *VMAX bit for bit and *NLESS. */
static void check_like_arrays(const struct tti_model *m, size_t n, double sigma, const char *what)
{
    float *arr[4];
    const double c[4] = {m->eps0, m->delta0, m->theta0, m->phi0};
    const float *given[4] = {m->eps, m->delta, m->theta, m->phi};
    for (int k = 0; k < 4; k++) {
        arr[k] = malloc(n * sizeof(float));
        cr_assert_not_null(arr[k]);
        for (size_t i = 0; i < n; i++)
            arr[k][i] = given[k] ? given[k][i] : (float)c[k];
    }
    /* the constants as floats in both, so that the two models are the same numbers */
    struct tti_model mc = *m, ma = {.vpz = m->vpz, .eps = arr[0], .delta = arr[1], .theta = arr[2], .phi = arr[3]};
    mc.eps0 = (float)m->eps0;
    mc.delta0 = (float)m->delta0;
    mc.theta0 = (float)m->theta0;
    mc.phi0 = (float)m->phi0;
    double vc = -1, va = -1;
    size_t lc = 12345, la = 54321;
    char msgc[512] = "", msga[512] = "";
    err_clear();
    const int rc = tti_model_check(&mc, n, sigma, &vc, &lc);
    snprintf(msgc, sizeof msgc, "%s", rc < 0 ? err_msg() : "");
    err_clear();
    const int ra = tti_model_check(&ma, n, sigma, &va, &la);
    snprintf(msga, sizeof msga, "%s", ra < 0 ? err_msg() : "");
    cr_assert_eq(rc, ra, "%s: constants %d (%s), arrays %d (%s)", what, rc, msgc, ra, msga);
    cr_assert_str_eq(msgc, msga, "%s", what);
    if (rc == 0) {
        cr_assert(vc == va, "%s: vmax %a (constants) != %a (arrays)", what, vc, va);
        cr_assert_eq(lc, la, "%s: nless %zu != %zu", what, lc, la);
    }
    for (int k = 0; k < 4; k++)
        free(arr[k]);
}

/* The constant-parameter path of tti_model_check (eps, delta constant: checked once, per
 * point only v_pz and the angle arrays) against the general loop, on a grid large enough
 * for every thread to get a share: fine models (eps > delta, eps < delta: every point
 * counted), bad v_pz at known points (the lowest named, whichever thread holds the
 * others), a bad angle in an array before and after a bad v_pz, a constant (eps, delta)
 * that no sigma-stable medium has. */
Test(tti, model_check_constant_parameters, .timeout = 60)
{
    const size_t n = 61 * 47 * 43;
    float *v = malloc(n * sizeof(float)), *th = malloc(n * sizeof(float));
    cr_assert(v && th);
    for (size_t i = 0; i < n; i++) {
        v[i] = (float)(1500.0 + 2000.0 * (double)((i * 7919) % 1009) / 1009.0);
        th[i] = (float)(-1.2 + 2.4 * (double)((i * 104729) % 997) / 997.0);
    }
    struct tti_model m = {.vpz = v, .eps0 = 0.2, .delta0 = 0.1, .theta0 = 30 * DEG, .phi0 = 20 * DEG};
    double vq = 0;
    size_t nl = 99;
    cr_assert_eq(tti_model_check(&m, n, 0.75, &vq, &nl), 0, "%s", err_msg());
    cr_assert_eq(nl, 0);
    float vtop = 0;
    for (size_t i = 0; i < n; i++)
        vtop = fmaxf(vtop, v[i]);
    cr_assert_geq(vq, vtop * sqrt(1.4), "vmax %g, v_pz up to %g", vq, vtop); /* v_px, at least */
    check_like_arrays(&m, n, 0.75, "eps > delta");
    m.eps0 = 0.05; /* eps < delta everywhere: every point counted */
    cr_assert_eq(tti_model_check(&m, n, 0.75, &vq, &nl), 0, "%s", err_msg());
    cr_assert_eq(nl, n);
    check_like_arrays(&m, n, 0.75, "eps < delta");
    m.eps0 = 0.2;
    m.theta = th;
    check_like_arrays(&m, n, 0.75, "theta array");
    m.theta = NULL;
    /* bad v_pz at known points: the lowest is named */
    const size_t b1 = n / 3 + 11, b2 = 2 * n / 3 + 5, b3 = n - 1;
    const float v1 = v[b1], v2 = v[b2], v3 = v[b3];
    v[b2] = -5.0f;
    v[b3] = NAN;
    v[b1] = INFINITY;
    char want[64];
    err_clear();
    cr_assert_eq(tti_model_check(&m, n, 0.75, &vq, &nl), -EINVAL);
    snprintf(want, sizeof want, "point %zu:", b1);
    cr_assert(strstr(err_msg(), "v_pz") && strstr(err_msg(), want), "%s", err_msg());
    check_like_arrays(&m, n, 0.75, "bad v_pz at three points");
    v[b1] = v1;
    err_clear();
    cr_assert_eq(tti_model_check(&m, n, 0.75, &vq, &nl), -EINVAL);
    snprintf(want, sizeof want, "point %zu:", b2);
    cr_assert(strstr(err_msg(), "v_pz -5") && strstr(err_msg(), want), "%s", err_msg());
    /* a theta out of range before the bad v_pz, then after it */
    m.theta = th;
    th[b1] = 2.0f;
    err_clear();
    cr_assert_eq(tti_model_check(&m, n, 0.75, &vq, &nl), -EINVAL);
    snprintf(want, sizeof want, "point %zu:", b1);
    cr_assert(strstr(err_msg(), "theta") && strstr(err_msg(), want), "%s", err_msg());
    check_like_arrays(&m, n, 0.75, "bad theta before a bad v_pz");
    th[b1] = 0.1f;
    th[b3] = NAN;
    err_clear();
    cr_assert_eq(tti_model_check(&m, n, 0.75, &vq, &nl), -EINVAL);
    snprintf(want, sizeof want, "point %zu:", b2);
    cr_assert(strstr(err_msg(), "v_pz") && strstr(err_msg(), want), "%s", err_msg());
    check_like_arrays(&m, n, 0.75, "bad v_pz before a bad theta");
    v[b2] = v2;
    v[b3] = v3;
    err_clear();
    cr_assert_eq(tti_model_check(&m, n, 0.75, &vq, &nl), -EINVAL);
    snprintf(want, sizeof want, "point %zu:", b3);
    cr_assert(strstr(err_msg(), "theta") && strstr(err_msg(), want) && strstr(err_msg(), "not a number"), "%s",
              err_msg());
    m.theta = NULL;
    /* constants no sigma-stable medium has: named at the first point */
    m.eps0 = 0.95;
    err_clear();
    cr_assert_eq(tti_model_check(&m, n, 0.75, &vq, &nl), -EINVAL);
    cr_assert(strstr(err_msg(), "raise sigma") && strstr(err_msg(), "point 0 "), "%s", err_msg());
    check_like_arrays(&m, n, 0.75, "unstable constants");
    free(v);
    free(th);
}

/* The check a caller hands to tti_create (kernels/tti_check.h) is taken only for the very
 * points and sigma it was made on: a record copied with a model of other points (another
 * v_pz array, cell count, constant, sigma, or an array where a constant was) must not let
 * a bad model through, and a constant that an array replaces does not count. */
Test(tti, caller_check_taken_only_for_its_points)
{
    const int n = 16;
    const double h = 10, vpz = 2000, d[3] = {h, h, h};
    const double dt = 0.5 * tti_dt_max(8, d, false, vpz, 0.2, 0.1, 0.5, 0.3, TTI_SIGMA_DEFAULT);
    struct wave_params p = grid(n, n, n, h, dt, 4, 15);
    const size_t nn = (size_t)n * n * n;
    float *good = test_constant(nn, (float)vpz), *bad = test_constant(nn, (float)vpz), *th = test_constant(nn, 0.5f);
    bad[nn / 2] = NAN;
    struct tti_model m = {.vpz = good, .eps0 = 0.2, .delta0 = 0.1, .theta0 = 0.5, .phi0 = 0.3};
    double vq = 0;
    size_t nl = 0;
    cr_assert_eq(tti_model_check(&m, nn, TTI_SIGMA_DEFAULT, &vq, &nl), 0, "%s", err_msg());
    tti_check_record(&m.checked, &m, nn, TTI_SIGMA_DEFAULT, vq, nl);
    cr_assert(tti_check_matches(&m.checked, &m, nn, TTI_SIGMA_DEFAULT));
    struct sl_device dev = test_cpu();
    struct tti_sim *s = NULL;
    cr_assert_eq(tti_create(&dev, &p, TTI_SIGMA_DEFAULT, &m, &s), 0, "%s", err_msg());
    tti_destroy(s);
    /* the record copied with a model of other points: checked again, and refused */
    struct tti_model mb = m;
    mb.vpz = bad;
    cr_assert_not(tti_check_matches(&mb.checked, &mb, nn, TTI_SIGMA_DEFAULT));
    err_clear();
    s = NULL;
    cr_assert_eq(tti_create(&dev, &p, TTI_SIGMA_DEFAULT, &mb, &s), -EINVAL, "a NaN v_pz passed: %s", err_msg());
    cr_assert_null(s);
    cr_assert(strstr(err_msg(), "v_pz"), "%s", err_msg());
    /* another cell count, sigma, constant, or an array where the constant was */
    cr_assert_not(tti_check_matches(&m.checked, &m, nn - 1, TTI_SIGMA_DEFAULT));
    cr_assert_not(tti_check_matches(&m.checked, &m, nn, 0.5));
    struct tti_model mc = m;
    mc.eps0 = 0.3;
    cr_assert_not(tti_check_matches(&mc.checked, &mc, nn, TTI_SIGMA_DEFAULT));
    mc = m;
    mc.theta = th;
    cr_assert_not(tti_check_matches(&mc.checked, &mc, nn, TTI_SIGMA_DEFAULT));
    /* a constant under an array does not count: the array is what was checked */
    tti_check_record(&mc.checked, &mc, nn, TTI_SIGMA_DEFAULT, vq, nl);
    mc.theta0 = 1.0;
    cr_assert(tti_check_matches(&mc.checked, &mc, nn, TTI_SIGMA_DEFAULT));
    /* no record (zeroed, as an initialiser leaves it): never a match */
    const struct tti_model mz = {.vpz = good, .eps0 = 0.2, .delta0 = 0.1, .theta0 = 0.5, .phi0 = 0.3};
    cr_assert_not(tti_check_matches(&mz.checked, &mz, nn, TTI_SIGMA_DEFAULT));
    free(good);
    free(bad);
    free(th);
}
