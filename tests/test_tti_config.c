/* TTI reached from configs (issue 14): the [propagator] physics / tti_sigma and [model]
 * epsilon, delta, theta, phi keys and their files; `seislive model` with physics = "tti"
 * (the isotropic limit gives the acoustic traces, a VTI medium's horizontal arrival
 * comes sqrt(1 + 2 epsilon) earlier); the RTM engine with TTI through every strategy
 * (the isotropic limit gives the acoustic image). */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "io/model.h"
#include "kernels/propagator.h"
#include "kernels/rtm.h"
#include "stream/error.h"
#include "stream/stability_conf.h"
#include "tests/support.h"
#include "tests/test_rtm_common.h"

/* ---- config keys -------------------------------------------------------------------------- */

/* TEXT with a model job (which needs no input) appended: TEXT's lines keep their numbers. */
static int load(const char *text, struct sl_config *cfg)
{
    char buf[16384];
    snprintf(buf, sizeof buf, "%s\n[job]\nkind = \"model\"\n", text);
    return config_load_string(buf, "tti.toml", cfg);
}

Test(tti_config, keys_parsed_angles_in_radians)
{
    struct sl_config cfg;
    cr_assert_eq(load("[propagator]\nphysics = \"tti\"\ntti_sigma = 0.5\n"
                      "[model]\nn = [4, 3, 2]\nepsilon = 0.2\ndelta = 0.1\ntheta = 30.0\nphi = 400.0\n",
                      &cfg),
                 0, "%s", err_msg());
    cr_assert_eq(cfg.propagator.physics, PHYSICS_TTI);
    cr_assert_eq(cfg.propagator.tti_sigma, 0.5);
    struct sl_model m;
    cr_assert_eq(model_load(&cfg, &m), 0, "%s", err_msg());
    cr_assert(m.tti_on);
    cr_assert_null(m.tti.eps);
    cr_assert_eq(m.tti.eps0, 0.2);
    cr_assert_eq(m.tti.delta0, 0.1);
    cr_assert_float_eq(m.tti.theta0, M_PI / 6, 1e-12);
    cr_assert_float_eq(m.tti.phi0, 40.0 * M_PI / 180, 1e-12, "phi 400 degrees is 40 degrees");
    model_free(&m);
    config_free(&cfg);
    /* the defaults: acoustic, sigma 0.75, no anisotropy loaded */
    cr_assert_eq(load("", &cfg), 0, "%s", err_msg());
    cr_assert_eq(cfg.propagator.physics, PHYSICS_ACOUSTIC);
    cr_assert_eq(cfg.propagator.tti_sigma, 0.75);
    config_free(&cfg);
}

/* The CPML defaults follow the physics (conf/config.c physics_defaults): acoustic the
 * schema's thin layers (12, degree 4, 1e-3), TTI the 10 layers of degree 2 and 1e-4 that
 * its 30 dB test needs (tests/test_tti.c), each key the file sets kept as set. */
Test(tti_config, cpml_defaults_follow_the_physics)
{
    struct sl_config cfg;
    cr_assert_eq(load("", &cfg), 0, "%s", err_msg());
    for (int f = 0; f < 6; f++)
        cr_assert_eq(cfg.propagator.pml_width[f], 12);
    cr_assert_eq(cfg.propagator.pml_degree, 4);
    cr_assert_eq(cfg.propagator.pml_reflection, 1e-3);
    config_free(&cfg);
    cr_assert_eq(load("[propagator]\nphysics = \"tti\"\n", &cfg), 0, "%s", err_msg());
    for (int f = 0; f < 6; f++)
        cr_assert_eq(cfg.propagator.pml_width[f], CONFIG_TTI_PML_WIDTH);
    cr_assert_eq(cfg.propagator.pml_degree, CONFIG_TTI_PML_DEGREE);
    cr_assert_eq(cfg.propagator.pml_reflection, CONFIG_TTI_PML_REFLECTION);
    cr_assert_eq(CONFIG_TTI_PML_WIDTH, 10);
    cr_assert_eq(CONFIG_TTI_PML_DEGREE, 2);
    config_free(&cfg);
    cr_assert_eq(load("[propagator]\nphysics = \"tti\"\npml_width = [12, 13, 14, 15, 16, 17]\npml_degree = 3\n",
                      &cfg),
                 0, "%s", err_msg());
    for (int f = 0; f < 6; f++)
        cr_assert_eq(cfg.propagator.pml_width[f], 12 + f);
    cr_assert_eq(cfg.propagator.pml_degree, 3);
    cr_assert_eq(cfg.propagator.pml_reflection, CONFIG_TTI_PML_REFLECTION);
    config_free(&cfg);
}

/* Each refusal names the file and the line of the key. */
static void refused(const char *text, const char *where, const char *what)
{
    struct sl_config cfg;
    cr_assert_eq(load(text, &cfg), -EINVAL, "accepted: %s", text);
    cr_assert_not_null(strstr(err_msg(), where), "'%s' lacks '%s'", err_msg(), where);
    cr_assert_not_null(strstr(err_msg(), what), "'%s' lacks '%s'", err_msg(), what);
    config_free(&cfg);
}

Test(tti_config, bad_keys_refused_with_file_and_line)
{
    refused("[propagator]\nphysics = \"tti\"\n[model]\ntheta = 95.0\n", "tti.toml:4:", "theta");
    refused("[propagator]\nphysics = \"tti\"\n[model]\ntheta = -91\n", "tti.toml:4:", "theta");
    refused("[propagator]\nphysics = \"tti\"\n[model]\nepsilon = -0.5\n", "tti.toml:4:", "epsilon");
    refused("[propagator]\nphysics = \"tti\"\n[model]\ndelta = nan\n", "tti.toml:4:", "delta");
    refused("[propagator]\nphysics = \"tti\"\ntti_sigma = 0.0\n", "tti.toml:3:", "tti_sigma");
    refused("[propagator]\nphysics = \"elastic\"\n", "tti.toml:2:", "physics");
    /* a TTI parameter that acoustic physics would silently ignore */
    refused("[model]\nepsilon = 0.1\n", "tti.toml:2:", "physics is \"acoustic\"");
    refused("[propagator]\nphysics = \"tti\"\n[model]\nquantity = \"permittivity\"\n", "tti.toml:2:",
            "velocity model");
}

Test(tti_config, file_beside_a_constant_refused)
{
    char *dir = test_tmpdir();
    float z[8] = {0};
    char path[4096];
    snprintf(path, sizeof path, "%s/eps.f32", dir);
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(z, 4, 8, f), 8);
    fclose(f);
    char text[8192];
    snprintf(text, sizeof text, "[propagator]\nphysics = \"tti\"\n[model]\nn = [2, 2, 2]\nepsilon = 0.1\n"
             "epsilon_file = \"%s\"\n", path);
    refused(text, "tti.toml:6:", "not both");
    test_rmtree(dir);
    free(dir);
}

/* ---- parameter files ---------------------------------------------------------------------- */

static char *write_f32(const char *dir, const char *name, const float *v, size_t n)
{
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(v, 4, n, f), n);
    fclose(f);
    return path;
}

static int load_with(const char *key, const char *path, int nz, struct sl_config *cfg, struct sl_model *m)
{
    char text[8192];
    snprintf(text, sizeof text, "[propagator]\nphysics = \"tti\"\n[model]\nn = [3, 2, %d]\n%s = \"%s\"\n", nz, key,
             path);
    cr_assert_eq(load(text, cfg), 0, "%s", err_msg());
    return model_load(cfg, m);
}

Test(tti_config, parameter_files_read_and_checked)
{
    char *dir = test_tmpdir();
    float v[12];
    for (int i = 0; i < 12; i++)
        v[i] = 0.01f * i;
    struct sl_config cfg;
    struct sl_model m;
    /* x fastest as given, epsilon as is */
    char *p = write_f32(dir, "eps.f32", v, 12);
    cr_assert_eq(load_with("epsilon_file", p, 2, &cfg, &m), 0, "%s", err_msg());
    cr_assert_not_null(m.tti.eps);
    for (int i = 0; i < 12; i++)
        cr_assert_eq(m.tti.eps[i], v[i]);
    model_free(&m);
    config_free(&cfg);
    /* theta in degrees to radians */
    for (int i = 0; i < 12; i++)
        v[i] = 7.5f * i - 40;
    free(p);
    p = write_f32(dir, "theta.f32", v, 12);
    cr_assert_eq(load_with("theta_file", p, 2, &cfg, &m), 0, "%s", err_msg());
    for (int i = 0; i < 12; i++)
        cr_assert_float_eq(m.tti.theta[i], v[i] * M_PI / 180, 1e-6);
    model_free(&m);
    config_free(&cfg);
    /* a NaN at value 5: refused with the file and byte offset 20 */
    for (int i = 0; i < 12; i++)
        v[i] = 0.01f * i;
    v[5] = NAN;
    free(p);
    p = write_f32(dir, "delta_nan.f32", v, 12);
    cr_assert_eq(load_with("delta_file", p, 2, &cfg, &m), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "delta_nan.f32: byte offset 20"), "%s", err_msg());
    cr_assert_not_null(strstr(err_msg(), "NaN"), "%s", err_msg());
    config_free(&cfg);
    /* a tilt out of [-90, 90] degrees at value 7 */
    v[5] = 0;
    v[7] = 91;
    free(p);
    p = write_f32(dir, "theta_bad.f32", v, 12);
    cr_assert_eq(load_with("theta_file", p, 2, &cfg, &m), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "theta_bad.f32: byte offset 28"), "%s", err_msg());
    config_free(&cfg);
    /* the wrong size (the grid needs 18 values) */
    free(p);
    p = write_f32(dir, "phi_short.f32", v, 12);
    cr_assert_eq(load_with("phi_file", p, 3, &cfg, &m), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "phi_short.f32: 48 bytes"), "%s", err_msg());
    cr_assert_not_null(strstr(err_msg(), "phi_file"), "%s", err_msg());
    config_free(&cfg);
    free(p);
    test_rmtree(dir);
    free(dir);
}

/* dt above the TTI limit (below the acoustic one) refused with that limit. */
Test(tti_config, dt_above_the_tti_limit_refused)
{
    struct sl_config cfg;
    cr_assert_eq(load("[propagator]\nphysics = \"tti\"\ndt = 0.0\n[model]\nn = [20, 1, 20]\nepsilon = 0.3\n"
                      "delta = 0.1\n", &cfg), 0, "%s", err_msg());
    struct sl_model m;
    cr_assert_eq(model_load(&cfg, &m), 0, "%s", err_msg());
    double dt, lim, ac;
    cr_assert_eq(stability_resolve_model(&cfg, &m, 30, &dt, &lim, NULL), 0, "%s", err_msg());
    cr_assert_float_eq(dt, cfg.propagator.cfl * lim, 1e-15);
    cr_assert_eq(stability_resolve(&cfg, m.vmin, m.vmax, 30, &dt, &ac, NULL), 0);
    /* the acoustic limit at v_px (the fastest qP speed here: delta < epsilon; reached at
     * the Nyquist corner, kernels/tti.h) less tti_dt_max's 1e-3 margin */
    cr_assert_lt(lim, ac, "TTI limit %g vs acoustic %g", lim, ac);
    cr_assert_gt(lim, ac / sqrt(1.6) * 0.998, "TTI limit %g vs acoustic at v_px %g", lim, ac / sqrt(1.6));
    cr_assert_leq(lim, ac / sqrt(1.6), "TTI limit %g vs acoustic at v_px %g", lim, ac / sqrt(1.6));
    cfg.propagator.dt = 0.5 * (lim + ac);
    cr_assert_eq(stability_resolve_model(&cfg, &m, 30, &dt, NULL, NULL), -EINVAL);
    char want[64];
    snprintf(want, sizeof want, "largest stable dt %.6g s (TTI", lim);
    cr_assert_not_null(strstr(err_msg(), want), "%s", err_msg());
    model_free(&m);
    config_free(&cfg);
}

/* ---- `seislive model` --------------------------------------------------------------------- */

/* A 2D line through a homogeneous 2000 m/s model, source at x = 300 m, z = 400 m and
 * receivers at the same depth at x = 800 and 1300 m (horizontal offsets), dt fixed so
 * that both physics run the same steps, and the layers set in full so that both run the
 * same ones (the CPML defaults differ by physics: conf/config.c physics_defaults). */
static const char *model_conf =
    "[job]\nkind = \"model\"\n"
    "[model]\nn = [181, 1, 81]\nd = [10.0, 10.0, 10.0]\nvelocity = 2000.0\n%s\n"
    "[propagator]\norder = 8\ndt = 0.002\nt_max = 0.8\nf_peak = 10.0\npml_width = 20\npml_degree = 2\n"
    "pml_reflection = 1e-4\n%s\n"
    "[acquisition]\nsources = [[300.0, 0.0, 400.0]]\nreceivers = [[800.0, 0.0, 400.0], [1300.0, 0.0, 400.0]]\n"
    "[runtime]\ndevice = \"cpu\"\n";

/* Run `seislive model` for MODEL / PROP and read its NTR traces into a malloc'd array. */
static float *run_model(const char *dir, const char *tag, const char *model, const char *prop, int *ns)
{
    char text[4096], name[64], out[4096];
    snprintf(text, sizeof text, model_conf, model, prop);
    snprintf(name, sizeof name, "%s.toml", tag);
    char *conf = test_write_file(dir, name, text);
    snprintf(out, sizeof out, "%s/%s.segy", dir, tag);
    int ntr = 0;
    float *tr = test_model_traces(conf, out, 200, &ntr, ns, NULL);
    free(conf);
    cr_assert_eq(ntr, 2);
    return tr;
}

Test(tti_model_job, isotropic_limit_gives_the_acoustic_traces, .timeout = 240)
{
    char *dir = test_tmpdir();
    int ns, ns2;
    float *ac = run_model(dir, "ac", "", "physics = \"acoustic\"", &ns);
    float *ti = run_model(dir, "tti", "epsilon = 0.0\ndelta = 0.0\ntheta = 35.0\nphi = 20.0",
                          "physics = \"tti\"", &ns2);
    cr_assert_eq(ns, ns2);
    double num = 0, den = 0;
    for (size_t i = 0; i < 2 * (size_t)ns; i++) {
        num += ((double)ti[i] - ac[i]) * ((double)ti[i] - ac[i]);
        den += (double)ac[i] * ac[i];
    }
    cr_assert_gt(den, 0);
    cr_assert_lt(sqrt(num / den), 1e-5, "relative L2 %g", sqrt(num / den));
    free(ac);
    free(ti);
    test_rmtree(dir);
    free(dir);
}

/* Time (s) of the largest sample of TR (NS samples of DT), parabolic sub-sample. */
static double peak_time(const float *tr, int ns, double dt)
{
    int b = 1;
    for (int i = 1; i < ns - 1; i++)
        if (tr[i] > tr[b])
            b = i;
    double den = tr[b - 1] - 2.0 * tr[b] + tr[b + 1];
    double frac = den < 0 ? 0.5 * (tr[b - 1] - tr[b + 1]) / den : 0;
    return (b + frac) * dt;
}

/* VTI (theta 0): the horizontal qP speed is v_pz sqrt(1 + 2 epsilon) whatever delta is.
 * The move-out between the two receivers (500 m apart, the wavelet's delay cancels)
 * gives the speed ratio to the acoustic run. */
Test(tti_model_job, horizontal_arrival_faster_by_sqrt_1_plus_2_epsilon, .timeout = 240)
{
    char *dir = test_tmpdir();
    int ns, ns2;
    float *ac = run_model(dir, "ac", "", "physics = \"acoustic\"", &ns);
    float *ti = run_model(dir, "vti", "epsilon = 0.2\ndelta = 0.1", "physics = \"tti\"", &ns2);
    cr_assert_eq(ns, ns2);
    const double dt = 0.002;
    double mo_ac = peak_time(ac + ns, ns, dt) - peak_time(ac, ns, dt);
    double mo_ti = peak_time(ti + ns, ns, dt) - peak_time(ti, ns, dt);
    cr_assert_gt(mo_ti, 0);
    double ratio = mo_ac / mo_ti, want = sqrt(1.0 + 2 * 0.2);
    cr_log_info("move-out acoustic %.5f s (500 m / %.1f m/s), TTI %.5f s: ratio %.5f, sqrt(1 + 2 eps) %.5f", mo_ac,
                500 / mo_ac, mo_ti, ratio, want);
    cr_assert_lt(fabs(ratio / want - 1), 0.01, "ratio %g, want %g", ratio, want);
    cr_assert_lt(fabs(500 / mo_ac / 2000 - 1), 0.01, "acoustic speed %g m/s", 500 / mo_ac);
    free(ac);
    free(ti);
    test_rmtree(dir);
    free(dir);
}

/* ---- RTM ---------------------------------------------------------------------------------- */

#define NX 32
#define NY 10
#define NZ 24

static float *migrate(const struct rtm_case *c, const struct sl_config *cfg, const struct shot *sh, int strategy,
                      size_t *cells)
{
    struct rtm_engine *e = rtm_case_engine(c, cfg);
    int off[3], n[3];
    cr_assert_eq(rtm_engine_patch(e, RTM_SHOT(sh), off, n), 0, "%s", err_msg());
    *cells = (size_t)n[0] * n[1] * n[2];
    float *img = malloc(*cells * sizeof(float));
    cr_assert(img);
    rtm_engine_force_strategy(e, strategy, -1);
    struct rtm_shot_stats st;
    cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(sh), img, NULL, &st), 0, "%s", err_msg());
    cr_assert_eq(st.strategy, strategy);
    rtm_engine_destroy(e);
    return img;
}

static double rel_l2(const float *a, const float *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += ((double)a[i] - ref[i]) * ((double)a[i] - ref[i]);
        den += (double)ref[i] * ref[i];
    }
    cr_assert_gt(den, 0);
    return sqrt(num / den);
}

/* The layered case of tests/test_rtm_strategies.c with a synthetic shot. */
static void setup(struct rtm_case *c, struct shot *sh)
{
    rtm_case_layered(c, NX, NY, NZ, 1.2e-3, sh); /* dt under both limits: the same steps for both physics */
}

Test(tti_rtm, isotropic_limit_gives_the_acoustic_image_every_strategy, .timeout = 240)
{
    struct rtm_case c;
    struct shot sh;
    setup(&c, &sh);
    struct sl_config ac, ti;
    rtm_case_config(&c, &ac);
    rtm_case_config(&c, &ti);
    ti.propagator.physics = PHYSICS_TTI;
    const int strategies[] = {STRAT_FULL, STRAT_CHECKPOINT, STRAT_BOUNDARY, STRAT_RANDOM};
    for (int k = 0; k < 4; k++) {
        size_t n1, n2;
        float *a = migrate(&c, &ac, &sh, strategies[k], &n1);
        float *t = migrate(&c, &ti, &sh, strategies[k], &n2);
        cr_assert_eq(n1, n2);
        double r = rel_l2(t, a, n1);
        cr_log_info("strategy %s: TTI (eps = delta = 0) vs acoustic image: relative L2 %.3g",
                    rtm_strategy_name(strategies[k]), r);
        cr_assert_lt(r, 1e-5, "strategy %s: relative L2 %g", rtm_strategy_name(strategies[k]), r);
        free(a);
        free(t);
    }
    config_free(&ac);
    config_free(&ti);
    rtm_case_shot_free(&sh);
    rtm_case_free(&c);
}

/* An anisotropic, tilted model: every strategy runs, boundary reconstructs the full
 * image to float rounding, checkpoint gives it bit for bit, random stays bounded. */
Test(tti_rtm, anisotropic_model_runs_every_strategy, .timeout = 240)
{
    struct rtm_case c;
    struct shot sh;
    setup(&c, &sh);
    struct sl_config cfg;
    rtm_case_config(&c, &cfg);
    cfg.propagator.physics = PHYSICS_TTI;
    cfg.propagator.dt = 1.0e-3;
    struct sl_device dev;
    cr_assert_eq(backend_select("cpu", &dev), 0);
    struct rtm_volume vol = {.n = {c.n[0], c.n[1], c.n[2]}, .d = {c.d[0], c.d[1], c.d[2]}, .v = c.v_mig,
                             .epsilon0 = 0.2, .delta0 = 0.1, .theta0 = M_PI / 6, .phi0 = 0.3};
    struct rtm_engine *e = NULL;
    cr_assert_eq(rtm_engine_create_cfg(&cfg, &dev, &vol, &e), 0, "%s", err_msg());
    const int strategies[] = {STRAT_FULL, STRAT_CHECKPOINT, STRAT_BOUNDARY, STRAT_RANDOM};
    float *img[4];
    size_t cells = 0;
    for (int k = 0; k < 4; k++) {
        int off[3], n[3];
        cr_assert_eq(rtm_engine_patch(e, RTM_SHOT(&sh), off, n), 0, "%s", err_msg());
        cells = (size_t)n[0] * n[1] * n[2];
        img[k] = malloc(cells * sizeof(float));
        rtm_engine_force_strategy(e, strategies[k], -1);
        cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(&sh), img[k], NULL, NULL), 0, "%s", err_msg());
        for (size_t i = 0; i < cells; i++)
            cr_assert(isfinite(img[k][i]), "strategy %s: image not finite", rtm_strategy_name(strategies[k]));
    }
    cr_assert_eq(memcmp(img[1], img[0], cells * sizeof(float)), 0, "checkpoint differs from full");
    double rb = rel_l2(img[2], img[0], cells), rr = rel_l2(img[3], img[0], cells);
    cr_log_info("TTI eps 0.2 delta 0.1 tilt 30: boundary vs full %.3g, random vs full %.3g", rb, rr);
    cr_assert_lt(rb, 1e-4, "boundary vs full %g", rb);
    cr_assert_lt(rr, 0.05, "random vs full %g (measured 0.016)", rr);
    for (int k = 0; k < 4; k++)
        free(img[k]);
    /* the memory plan counts TTI's two fields: more than the acoustic plan of the shot */
    size_t need_t[RTM_STRATEGIES], need_a[RTM_STRATEGIES];
    cr_assert_eq(rtm_engine_memory(e, RTM_SHOT(&sh), need_t), 0, "%s", err_msg());
    rtm_engine_destroy(e);
    cfg.propagator.physics = PHYSICS_ACOUSTIC;
    e = rtm_case_engine(&c, &cfg);
    cr_assert_eq(rtm_engine_memory(e, RTM_SHOT(&sh), need_a), 0, "%s", err_msg());
    for (int s = RTM_FULL; s <= RTM_RANDOM; s++)
        cr_assert_gt(need_t[s], need_a[s], "strategy %s: TTI %zu <= acoustic %zu bytes", rtm_strategy_name(s),
                     need_t[s], need_a[s]);
    rtm_engine_destroy(e);
    config_free(&cfg);
    rtm_case_shot_free(&sh);
    rtm_case_free(&c);
}
