/* `seislive check` with [propagator] physics = "tti" (issue 14): the time-step limit is
 * TTI's (tti_dt_max_model, the one the jobs use) and a larger dt is refused with that
 * number; the points per wavelength come from the slowest qP phase velocity over the
 * model (kernels/tti_phase.h, checked here against a brute-force search over angles of
 * Thomsen's exact formula); the memory per strategy counts TTI's two wavefields. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "io/model.h"
#include "kernels/stability.h"
#include "kernels/tti.h"
#include "kernels/tti_phase.h"
#include "stream/error.h"
#include "stream/stability_conf.h"
#include "tests/support.h"

#define DEG (M_PI / 180.0)

/* Thomsen's exact qP phase velocity (v_pz = 1) at phase angle TH from the axis in
 * Tsvankin's form (eq. 1.41, f = 1 - v_sz^2 / v_pz^2 in the denominators), written
 * independently of kernels/tti_phase.c's multiplied-through form, for the medium the
 * propagator simulates: delta lowered to eps where it is larger (kernels/tti.h). */
static double thomsen_v(double th, double eps, double delta, double sigma)
{
    delta = fmin(delta, eps);
    const double f = 1.0 - (eps - delta) / sigma, s2 = sin(th) * sin(th), s2t = sin(2 * th) * sin(2 * th);
    const double x = 1.0 + 2.0 * eps * s2 / f;
    return sqrt(1.0 + eps * s2 - f / 2 + (f / 2) * sqrt(x * x - 2.0 * (eps - delta) * s2t / f));
}

/* The slowest and fastest of thomsen_v over 0..90 degrees by brute force (and the angle
 * of the slowest, degrees). */
static void brute(double eps, double delta, double sigma, double *vmin, double *vmax, double *at_deg)
{
    const int n = 90000;
    *vmin = INFINITY;
    *vmax = 0;
    for (int i = 0; i <= n; i++) {
        const double th = 0.5 * M_PI * i / n, v = thomsen_v(th, eps, delta, sigma);
        if (v < *vmin) {
            *vmin = v;
            *at_deg = th / DEG;
        }
        *vmax = fmax(*vmax, v);
    }
}

/* tti_qp_vmin's closed form against the brute-force search, over media that
 * tti_model_check accepts (eps, delta in [-0.3, 0.4], either order, sigma 0.5..1.5);
 * and tti_qp_phase_v2 is the same function as tti.h's eigenvalue form: its brute-force
 * maximum is tti_qp_vmax. */
Test(tti_check, slowest_qp_phase_velocity_closed_form)
{
    uint64_t x = 88172645463325252ull;
    int tested = 0, interior = 0, less = 0;
    double worst = 0, worst_max = 0;
    for (int k = 0; k < 400; k++) {
        double r[3];
        for (int j = 0; j < 3; j++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            r[j] = (double)(x >> 11) / 9007199254740992.0;
        }
        const double eps = -0.3 + 0.7 * r[0], delta = -0.3 + 0.7 * r[1], sigma = 0.5 + r[2];
        const float one = 1.0f;
        const struct tti_model m = {.vpz = &one, .eps0 = eps, .delta0 = delta};
        if (tti_model_check(&m, 1, sigma, NULL, NULL) < 0 || (eps - fmin(delta, eps)) / sigma > 0.95) {
            err_clear();
            continue; /* refused, or f so small that Tsvankin's form loses its digits */
        }
        double bmin, bmax, at, s_at;
        brute(eps, delta, sigma, &bmin, &bmax, &at);
        const double got = tti_qp_vmin(eps, delta, sigma, &s_at);
        /* the brute force's grid (1e-3 degrees) is above the minimum by at most ~1e-10 */
        const double e = fabs(got / bmin - 1);
        cr_assert_lt(e, 1e-9, "eps %g delta %g sigma %g: closed form %.12g, brute force %.12g at %g deg", eps,
                     delta, sigma, got, bmin, at);
        /* at most the axis and the plane speeds */
        cr_assert_leq(got, fmin(1.0, sqrt(1 + 2 * eps)) * (1 + 1e-14), "eps %g delta %g sigma %g: %.17g", eps, delta,
                      sigma, got);
        /* the fastest: the same function as the kernel's eigenvalue form */
        const double em = fabs(tti_qp_vmax(eps, delta, sigma) / bmax - 1);
        cr_assert_lt(em, 1e-7, "eps %g delta %g sigma %g: tti_qp_vmax %.10g, brute force %.10g", eps, delta, sigma,
                     tti_qp_vmax(eps, delta, sigma), bmax);
        worst = fmax(worst, e);
        worst_max = fmax(worst_max, em);
        interior += at > 0.01 && at < 89.99;
        if (eps < delta) {
            less++;
            /* run elliptic (delta_eff = eps): the slowest direction is the axis or the plane */
            cr_assert(at < 0.01 || at > 89.99, "eps %g < delta %g: slowest at %g deg", eps, delta, at);
        }
        tested++;
    }
    fprintf(stderr, "tti_qp_vmin: %d media (%d with an interior minimum, %d with eps < delta): worst relative "
                    "error %.2g against brute force; tti_qp_vmax vs brute force %.2g\n", tested, interior, less,
            worst, worst_max);
    cr_assert_geq(tested, 150);
    cr_assert_geq(interior, 20, "the sample must include media whose slowest direction is oblique");
    cr_assert_geq(less, 20);
    /* the example of the docs: eps 0.1, delta -0.15 is slowest near 38 degrees */
    double s_at, v = tti_qp_vmin(0.1, -0.15, 0.75, &s_at);
    fprintf(stderr, "eps 0.1, delta -0.15, sigma 0.75: slowest qP %.6f v_pz at %.2f degrees\n", v,
            asin(sqrt(s_at)) / DEG);
    cr_assert_lt(v, 0.98);
    cr_assert(s_at > 0.2 && s_at < 0.6);
}

/* tti_qp_vmin_model: the minimum of v_pz tti_qp_vmin over the points (arrays and
 * constants), e.g. a slow point with a mild medium against a fast point with a slow
 * direction. */
Test(tti_check, slowest_over_a_model)
{
    const float v[3] = {2000, 2040, 3000};
    const float eps[3] = {0.0f, 0.1f, 0.2f}, del[3] = {0.0f, -0.15f, 0.1f};
    const struct tti_model m = {.vpz = v, .eps = eps, .delta = del};
    const double want = fmin(2000.0, 2040.0 * tti_qp_vmin(0.1f, -0.15f, 0.75, NULL));
    cr_assert_float_eq(tti_qp_vmin_model(&m, 3, 0.75), want, 1e-9 * want);
    cr_assert_lt(want, 2000.0, "the oblique direction of point 1 is the slowest: %g", want);
    const struct tti_model c = {.vpz = v, .eps0 = -0.1, .delta0 = -0.1};
    cr_assert_float_eq(tti_qp_vmin_model(&c, 3, 0.75), 2000.0 * sqrt(0.8), 1e-9, "elliptic: the plane");
}

/* ---- `seislive check` ------------------------------------------------------------------------ */

static struct run_result check(const char *path)
{
    const char *argv[] = {test_prog("seislive"), "check", "-c", path, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 120, &r), 0);
    return r;
}

/* A 2D model job: MODEL lines in [model], PROP lines in [propagator] (each ends in \n). */
static char *model_job(const char *dir, const char *name, const char *model, const char *prop)
{
    char text[4096];
    snprintf(text, sizeof text,
             "[job]\nkind = \"model\"\n"
             "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [101, 1, 61]\nd = [10.0, 10.0, 10.0]\n%s"
             "[propagator]\nt_max = 0.4\nf_peak = 15.0\npml_width = 16\n%s"
             "[acquisition]\nsources = [[500.0, 0.0, 50.0]]\nreceivers = [[300.0, 0.0, 50.0]]\n"
             "[runtime]\ndevice = \"cpu\"\n",
             model, prop);
    return test_write_file(dir, name, text);
}

/* The TTI limit of the same model, computed in process as the jobs do. */
static double tti_limit(const char *path, double *acoustic)
{
    struct sl_config cfg;
    cr_assert_eq(config_load(path, &cfg), 0, "%s", err_msg());
    cfg.propagator.dt = 0;
    struct sl_model m;
    cr_assert_eq(model_load(&cfg, &m), 0, "%s", err_msg());
    double dt, lim;
    cr_assert_eq(stability_resolve_model(&cfg, &m, 30, &dt, &lim, NULL), 0, "%s", err_msg());
    *acoustic = stability_dt_max_dims(cfg.propagator.order, cfg.model.d, m.vmax, cfg.model.n[1] == 1);
    model_free(&m);
    config_free(&cfg);
    return lim;
}

/* check's dt limit is the TTI one: a dt above the acoustic limit is refused with the
 * TTI number (it used to quote the acoustic one), a dt between the two (the TTI limit is
 * the smaller here: eps > delta) is refused by check itself, and dt = 0 reports the TTI
 * limit and uses cfl x it. */
Test(tti_check, dt_limit_is_the_tti_one)
{
    char *dir = test_tmpdir();
    const char *aniso = "epsilon = 0.3\ndelta = 0.1\ntheta = 30.0\n";
    char *p = model_job(dir, "auto.toml", aniso, "physics = \"tti\"\n");
    double ac, lim = tti_limit(p, &ac);
    fprintf(stderr, "check dt: TTI limit %.6g ms, acoustic %.6g ms\n", lim * 1e3, ac * 1e3);
    cr_assert_lt(lim, 0.95 * ac, "the case must separate the two limits");
    struct run_result r = check(p);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char want[128];
    snprintf(want, sizeof want, "TTI: largest stable dt %.6g ms", lim * 1e3);
    cr_assert_not_null(strstr(r.out, want), "want '%s' in\n%s", want, r.out);
    /* the time dispersion line is at cfl x the TTI limit */
    const char *line = strstr(r.out, "time dispersion");
    cr_assert_not_null(line);
    double pct, fmax, dt_ms;
    cr_assert_eq(sscanf(strstr(line, "phase velocity"), "phase velocity %lf %% at fmax %lf Hz with dt %lf ms", &pct,
                        &fmax, &dt_ms), 3, "%s", line);
    cr_assert_float_eq(dt_ms, 0.9 * lim * 1e3, 1e-3 * lim * 1e3, "dt %g ms, cfl 0.9 x %g ms", dt_ms, lim * 1e3);
    test_run_free(&r);
    free(p);
    const double dts[2] = {1.05 * ac, 0.5 * (lim + ac)};
    for (int k = 0; k < 2; k++) {
        char prop[128], name[32];
        snprintf(prop, sizeof prop, "physics = \"tti\"\ndt = %.9g\n", dts[k]);
        snprintf(name, sizeof name, "dt%d.toml", k);
        p = model_job(dir, name, aniso, prop);
        r = check(p);
        cr_assert_neq(r.status, 0, "dt %g s (TTI limit %g s) accepted:\n%s", dts[k], lim, r.out);
        snprintf(want, sizeof want, "exceeds the largest stable dt %.6g s (TTI", lim);
        cr_assert_not_null(strstr(r.err, want), "dt %g: want '%s' in\n%s", dts[k], want, r.err);
        snprintf(want, sizeof want, "%s:16:1: [propagator] dt", p); /* the dt line */
        cr_assert_not_null(strstr(r.err, want), "want '%s' in\n%s", want, r.err);
        test_run_free(&r);
        free(p);
    }
    /* just under the limit: accepted */
    char prop[128];
    snprintf(prop, sizeof prop, "physics = \"tti\"\ndt = %.9g\n", 0.999 * lim);
    p = model_job(dir, "under.toml", aniso, prop);
    r = check(p);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    free(p);
    test_rmtree(dir);
    free(dir);
}

/* The points per wavelength of a TTI model come from its slowest qP phase velocity: a
 * medium slowest at an oblique angle (delta < 0), one slowest in the isotropy plane
 * (eps < 0) and one slowest along the axis (eps < delta); check's figure, the model job's
 * report of it and the brute-force minimum agree. */
Test(tti_check, points_per_wavelength_from_the_slowest_qp_speed)
{
    char *dir = test_tmpdir();
    const struct {
        double eps, delta;
        const char *where;
    } cases[] = {{0.1, -0.15, "oblique"}, {-0.1, 0.05, "plane"}, {0.05, 0.2, "axis"}};
    for (int k = 0; k < 3; k++) {
        char model[256], name[32];
        snprintf(model, sizeof model, "epsilon = %g\ndelta = %g\ntheta = 40.0\n", cases[k].eps, cases[k].delta);
        snprintf(name, sizeof name, "ppw%d.toml", k);
        char *p = model_job(dir, name, model, "physics = \"tti\"\n");
        struct run_result r = check(p);
        cr_assert_eq(r.status, 0, "%s", r.err);
        double bmin, bmax, at;
        brute(cases[k].eps, cases[k].delta, 0.75, &bmin, &bmax, &at);
        const double vslow = 2000 * bmin, fmax = 2.5 * 15.0, ppw = vslow / (fmax * 10.0);
        const char *line = strstr(r.out, "points per wavelength at fmax");
        cr_assert_not_null(line, "%s", r.out);
        double f, q, v;
        cr_assert_eq(sscanf(line, "points per wavelength at fmax %lf Hz: %lf of the slowest qP phase velocity %lf", &f,
                            &q, &v), 3, "%.200s", line);
        fprintf(stderr, "check ppw (%s, eps %g, delta %g): slowest qP %.6g m/s at %.1f deg (brute force %.6g), "
                        "%.2f points per wavelength at %g Hz\n", cases[k].where, cases[k].eps, cases[k].delta, v,
                at, vslow, q, f);
        cr_assert_float_eq(f, fmax, 1e-9);
        cr_assert_float_eq(v, vslow, 1e-5 * vslow, "check %g m/s, brute force %g m/s", v, vslow);
        cr_assert_float_eq(q, ppw, 0.006, "check %g, want %g", q, ppw);
        /* the model job's report says the same number */
        const char *rep = strstr(r.out, "points per wavelength at 37.5 Hz: ");
        cr_assert_not_null(rep, "%s", r.out);
        cr_assert_float_eq(strtod(rep + strlen("points per wavelength at 37.5 Hz: "), NULL), ppw, 0.006);
        if (k == 0)
            cr_assert(at > 10 && at < 80 && vslow < 1990, "oblique case: %g m/s at %g deg", vslow, at);
        if (k == 1)
            cr_assert(at > 89.9 && fabs(vslow - 2000 * sqrt(0.8)) < 1e-3, "plane: %g m/s at %g", vslow, at);
        if (k == 2)
            cr_assert(at < 0.1 && fabs(vslow - 2000) < 1e-6, "axis: %g m/s at %g", vslow, at);
        /* below ppw_min: the job's report warns with that speed */
        cr_assert_not_null(strstr(r.err, "slowest qP phase velocity"), "%s", r.err);
        test_run_free(&r);
        free(p);
    }
    test_rmtree(dir);
    free(dir);
}

/* ---- memory per strategy ----------------------------------------------------------------------- */

static const char rtm_cfg[] =
    "[job]\nkind = \"rtm\"\n"
    "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [41, 41, 41]\nd = [10.0, 10.0, 10.0]\n%s"
    "[propagator]\nt_max = 0.3\nf_peak = 10.0\npml_width = 10\n%s"
    "[acquisition]\nsources = [[200.0, 200.0, 0.0]]\nrx_origin = [0.0, 200.0, 0.0]\nrx_step = [10.0, 10.0]\n"
    "rx_count = [41, 1]\n"
    "[rtm]\naperture = 100.0\nmemory_budget = 512.0\n"
    "[input]\nkind = \"zmq\"\nendpoint = \"tcp://127.0.0.1:47999\"\nslots = 2\nslot_mib = 1.0\n"
    "[runtime]\ndevice = \"cpu\"\n";

struct report {
    double mib[4]; /* full, boundary, checkpoint, random */
    int sub[3], steps;
};

static struct report rtm_report_of(const char *dir, const char *name, const char *model, const char *prop)
{
    char text[4096];
    snprintf(text, sizeof text, rtm_cfg, model, prop);
    char *p = test_write_file(dir, name, text);
    struct run_result r = check(p);
    cr_assert_eq(r.status, 0, "%s: %s", name, r.err);
    struct report rep;
    const char *s = strstr(r.out, "[rtm] sub-volume ");
    cr_assert_not_null(s, "%s", r.out);
    cr_assert_eq(sscanf(s, "[rtm] sub-volume %d x %d x %d cells", &rep.sub[0], &rep.sub[1], &rep.sub[2]), 3);
    const char *st = strstr(s, "absorbing layers; ");
    cr_assert_not_null(st);
    cr_assert_eq(sscanf(st, "absorbing layers; %d steps", &rep.steps), 1);
    const char *m = strstr(r.out, "[rtm] device memory per strategy: ");
    cr_assert_not_null(m, "%s", r.out);
    int snaps;
    char sched[32];
    cr_assert_eq(sscanf(m, "[rtm] device memory per strategy: full %lf MiB, boundary %lf MiB, checkpoint (%d snaps, "
                           "%31[a-z]) %lf MiB, random %lf MiB", &rep.mib[0], &rep.mib[1], &snaps, sched, &rep.mib[2],
                        &rep.mib[3]), 6, "%.300s", m);
    test_run_free(&r);
    free(p);
    return rep;
}

/* check's memory per strategy counts TTI's storage: every strategy needs more than the
 * acoustic plan of the same shot by at least the two simulations' extra fields (TTI holds
 * 14 floats a point on the CPU (kernels/tti.c tti_memory_bytes) against the acoustic 3: 11 more, times
 * two simulations, over at least the sub-volume's cells and layers), and boundary more again by the
 * second field's strip. */
Test(tti_check, memory_per_strategy_counts_both_fields)
{
    char *dir = test_tmpdir();
    struct report t = rtm_report_of(dir, "tti.toml", "epsilon = 0.2\ndelta = 0.1\ntheta = 30.0\n",
                                    "physics = \"tti\"\ndt = 0.0018\n");
    struct report a2 = rtm_report_of(dir, "ac2.toml", "", "dt = 0.0018\n");
    for (int k = 0; k < 3; k++)
        cr_assert_eq(t.sub[k], a2.sub[k]);
    cr_assert_eq(t.steps, a2.steps);
    /* the simulations hold at least the sub-volume and its layers (10 cells a face; the
     * top too unless a free surface replaced it) */
    const double cells = (double)(t.sub[0] + 20) * (t.sub[1] + 20) * (t.sub[2] + 10);
    const double extra = 2 * 11 * 4 * cells / 1048576.0;
    const char *names[4] = {"full", "boundary", "checkpoint", "random"};
    for (int k = 0; k < 4; k++) {
        fprintf(stderr, "check memory, %s: TTI %.1f MiB, acoustic %.1f MiB (at least %.1f MiB more expected)\n",
                names[k], t.mib[k], a2.mib[k], extra);
        /* 0.1: the report rounds each figure to 0.1 MiB */
        cr_assert_geq(t.mib[k] - a2.mib[k], extra - 0.1, "%s: TTI %g MiB, acoustic %g MiB", names[k], t.mib[k],
                      a2.mib[k]);
    }
    cr_assert_gt(t.mib[1] - a2.mib[1], t.mib[0] - a2.mib[0], "boundary keeps the strips of p and q");
    test_rmtree(dir);
    free(dir);
}
