/* [propagator] operator_band = "auto" (kernels/operator.h operator_band_resolve): the
 * optimized and implicit operators designed over the band the wavelet reaches on the grid,
 * 0.9 x 2 / (points per wavelength at fmax in the slowest medium on the coarsest axis).
 *
 *   the key: "auto" read and printed back as such, other strings, booleans and numbers out
 *     of [0, 1] refused with the file's line;
 *   the model job: the band it logs is the one the formula gives, written out here from
 *     the wavelet's fmax and the grid; its traces are bit for bit those of the same job
 *     with that number typed in; against the analytic Green's function at 600 m and ~3
 *     points per wavelength (time dispersion corrected) it is closer than the default
 *     band (the reason for "auto": docs/operators.md);
 *   seislive check: the dispersion report names the band and "auto";
 *   the RTM engine: the image with "auto" is bit for bit the image with the number, and
 *     not the default band's;
 *   a wavelet file sampled at the propagator's dt has no fmax before dt: refused, naming
 *     operator_band. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "conf/schema.h"
#include "kernels/backend.h"
#include "kernels/operator.h"
#include "kernels/rtm.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "stream/rtm_config.h"
#include "tests/support.h"
#include "tests/test_rtm_common.h"

/* The band "auto" must give, written out (docs/operators.md): 0.9 x 2 h fmax / vmin,
 * within [0.1, 0.95]. */
static double band_expected(double fmax, double vmin, double h)
{
    double b = 0.9 * 2.0 * h * fmax / vmin;
    return b < 0.1 ? 0.1 : b > 0.95 ? 0.95 : b;
}

static int load_text(const char *dir, const char *text, struct sl_config *cfg)
{
    char *p = test_write_file(dir, "b.toml", text);
    int rc = config_load(p, cfg);
    free(p);
    return rc;
}

static void model_text(char *text, size_t len, const char *band);

/* the config of the model job below with BAND as line 14 */
static int load_band(const char *dir, const char *band, struct sl_config *cfg)
{
    char text[2048];
    model_text(text, sizeof text, band);
    return load_text(dir, text, cfg);
}

Test(operator_band_auto, the_key, .timeout = 30)
{
    char *dir = test_tmpdir();
    struct sl_config cfg;
    cr_assert_eq(load_band(dir, "operator_band = \"auto\"", &cfg), 0, "%s", err_msg());
    cr_assert_eq(cfg.propagator.operator_band, CONF_AUTO);
    /* stored as the kernels' own sentinel (stream/stability_conf.c passes it on as is;
     * its _Static_assert of the same is gcc's only) */
    cr_assert_eq(CONF_AUTO, OPERATOR_BAND_AUTO, "conf/schema.h CONF_AUTO %g, kernels/operator.h OPERATOR_BAND_AUTO %g",
                 CONF_AUTO, OPERATOR_BAND_AUTO);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    config_print(&cfg, f);
    fclose(f);
    cr_assert_not_null(strstr(buf, "operator_band = \"auto\"\n"), "%s", buf);
    free(buf);
    config_free(&cfg);
    cr_assert_eq(load_band(dir, "operator_band = 0.6", &cfg), 0, "%s", err_msg());
    cr_assert_float_eq(cfg.propagator.operator_band, 0.6, 1e-15);
    config_free(&cfg);
    static const char *const bad[][2] = {
        {"operator_band = \"wide\"", "expected a number or \"auto\", got the string \"wide\""},
        {"operator_band = true", "expected a number or \"auto\""},
        {"operator_band = 1.5", "out of range"},
        {"operator_band = -0.5", "out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_lt(load_band(dir, bad[i][0], &cfg), 0, "accepted: %s", bad[i][0]);
        cr_assert_not_null(strstr(err_msg(), "b.toml:14:"), "%s", err_msg());
        cr_assert_not_null(strstr(err_msg(), "operator_band"), "%s", err_msg());
        cr_assert_not_null(strstr(err_msg(), bad[i][1]), "%s", err_msg());
        config_free(&cfg);
    }
    test_rmtree(dir);
    free(dir);
}

/* ---- the model job ------------------------------------------------------------------- */

#define V0 2000.0
#define FP 15.0
#define H 17.5 /* 3.05 points per wavelength at fmax 37.5 Hz */

static const double src[3] = {140.0, 236.25, 236.25};
static const double rec[3] = {740.0, 236.25, 236.25}; /* 600 m along x */

static void model_text(char *text, size_t len, const char *band)
{
    snprintf(text, len,
             "[job]\nkind = \"model\"\nname = \"auto\"\n\n"
             "[model]\ntype = \"constant\"\nvelocity = %.1f\nn = [56, 28, 28]\nd = [%.2f, %.2f, %.2f]\n\n"
             "[propagator]\norder = 8\noperator = \"optimized\"\n%s\nt_max = 0.55\nf_peak = %.1f\n"
             "free_surface = false\ntime_dispersion = \"correct\"\ndispersion_max = 0\n\n"
             "[acquisition]\nsources = [[%g, %g, %g]]\nreceivers = [[%g, %g, %g]]\ndt_out = 0.001\n\n"
             "[runtime]\ndevice = \"cpu\"\n",
             V0, H, H, H, band, FP, src[0], src[1], src[2], rec[0], rec[1], rec[2]);
}

/* `seislive model` on the job of BAND (model_text) into OUT; its result in *R (free it) */
static void run_job(const char *dir, const char *band, const char *out, int timeout_s, struct run_result *r)
{
    char text[2048];
    model_text(text, sizeof text, band);
    char *conf = test_write_file(dir, "m.toml", text);
    const char *argv[] = {test_prog("seislive"), "model", "-c", conf, "-o", out, NULL};
    cr_assert_eq(test_run(argv, timeout_s, r), 0);
    free(conf);
}

/* Runs the job of BAND into DIR/NAME.segy; its trace (malloc'd, *NS samples) and stderr. */
static float *run_model(const char *dir, const char *name, const char *band, int *ns, char **log)
{
    char out[4200], text[2048], conf_name[64];
    snprintf(out, sizeof out, "%s/%s.segy", dir, name);
    model_text(text, sizeof text, band);
    snprintf(conf_name, sizeof conf_name, "%s.toml", name);
    char *conf = test_write_file(dir, conf_name, text);
    int ntr = 0;
    float *tr = test_model_traces(conf, out, 150, &ntr, ns, log);
    free(conf);
    cr_assert_eq(ntr, 1);
    return tr;
}

/* rel L2 of TR against s(t - r/v) / (4 pi r), up to 1.5 periods after the arrival */
static double green_error(const float *tr, int ns)
{
    const double r = rec[0] - src[0], dt = 1e-3;
    const int n = (int)((1.5 / FP + r / V0 + 1.5 / FP) / dt);
    cr_assert_lt(n, ns);
    double num = 0, den = 0;
    for (int i = 0; i <= n; i++) {
        double a = wavelet_ricker(i * dt - r / V0, FP, 1.5 / FP) / (4.0 * M_PI * r);
        num += (tr[i] - a) * (tr[i] - a);
        den += a * a;
    }
    return sqrt(num / den);
}

Test(operator_band_auto, model_job, .timeout = 300)
{
    char *dir = test_tmpdir();
    const double want = band_expected(wavelet_ricker_fmax(FP), V0, H);
    int ns[3];
    char *log[3];
    float *a = run_model(dir, "auto", "operator_band = \"auto\"", &ns[0], &log[0]);
    /* the log names the band it designed, to four decimals */
    const char *at = strstr(log[0], "operator band auto: ");
    cr_assert_not_null(at, "%s", log[0]);
    double logged = atof(at + strlen("operator band auto: "));
    cr_assert_float_eq(logged, want, 6e-5, "logged %.5f, expected %.5f", logged, want);
    char typed[64];
    snprintf(typed, sizeof typed, "operator_band = %.17g", want);
    float *b = run_model(dir, "typed", typed, &ns[1], &log[1]);
    float *c = run_model(dir, "default", "", &ns[2], &log[2]);
    cr_assert_eq(ns[0], ns[1]);
    cr_assert_eq(memcmp(a, b, ns[0] * sizeof *a), 0, "auto and operator_band = %.6f differ: rel L2 %.3g", want,
                 test_rel_l2_f32(a, b, ns[0]));
    cr_assert_eq(ns[0], ns[2]);
    const double ea = green_error(a, ns[0]), ec = green_error(c, ns[2]);
    fprintf(stderr, "operator_band auto %.4f: rel L2 %.4g against the Green's function at 600 m; default band: %.4g\n",
                want, ea, ec);
    cr_assert_lt(ea, ec, "auto %.4g is not closer than the default band %.4g", ea, ec);
    cr_assert_lt(ea, 0.02, "auto %.4g", ea);
    for (int k = 0; k < 3; k++)
        free(log[k]);
    free(a);
    free(b);
    free(c);
    test_rmtree(dir);
    free(dir);
}

Test(operator_band_auto, check_reports_it, .timeout = 60)
{
    char *dir = test_tmpdir();
    char text[2048];
    model_text(text, sizeof text, "operator_band = \"auto\"");
    char *conf = test_write_file(dir, "m.toml", text);
    const char *argv[] = {test_prog("seislive"), "check", "-c", conf, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    char want[96];
    snprintf(want, sizeof want, "band %.3f of Nyquist (operator_band = \"auto\"",
             band_expected(wavelet_ricker_fmax(FP), V0, H));
    cr_assert_not_null(strstr(r.out, want), "no \"%s\" in: %s", want, r.out);
    test_run_free(&r);
    free(conf);
    test_rmtree(dir);
    free(dir);
}

/* A wavelet file sampled at the propagator's automatic dt (wavelet_dt = 0, dt = 0) has no
 * fmax until dt is known, and dt is the designed operator's: "auto" is refused naming the
 * key.  With dt given the samples' fmax is known: the job runs. */
Test(operator_band_auto, needs_the_wavelet_before_dt, .timeout = 60)
{
    char *dir = test_tmpdir();
    char wpath[4200];
    snprintf(wpath, sizeof wpath, "%s/w.txt", dir);
    FILE *f = fopen(wpath, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 64; i++) /* the file's form: one number a line */
        fprintf(f, "%.9g\n", wavelet_ricker(i * 2e-3, FP, 1.5 / FP));
    fclose(f);
    char extra[256], out[4200];
    snprintf(extra, sizeof extra, "operator_band = \"auto\"\nwavelet = \"file\"\nwavelet_file = \"w.txt\"");
    snprintf(out, sizeof out, "%s/w.segy", dir);
    struct run_result r;
    run_job(dir, extra, out, 60, &r);
    cr_assert_neq(r.status, 0, "ran: %s", r.err);
    cr_assert_not_null(strstr(r.err, "operator_band"), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "m.toml:14:"), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "wavelet_dt"), "%s", r.err);
    test_run_free(&r);
    strcat(extra, "\ndt = 0.002");
    run_job(dir, extra, out, 120, &r);
    cr_assert_eq(r.status, 0, "dt given: exit %d: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.err, "operator band auto: "), "%s", r.err);
    test_run_free(&r);
    test_rmtree(dir);
    free(dir);
}

/* ---- the RTM engine ------------------------------------------------------------------ */

static float *rtm_image(const struct rtm_case *c, const struct shot *sh, double band, size_t *cells)
{
    struct sl_config cfg;
    rtm_case_config(c, &cfg);
    cfg.propagator.op = OPERATOR_OPTIMIZED;
    cfg.propagator.operator_band = band;
    cfg.rtm.strategy = STRAT_BOUNDARY;
    struct rtm_engine *e = rtm_case_engine(c, &cfg);
    int off[3], n[3];
    cr_assert_eq(rtm_engine_patch(e, RTM_SHOT(sh), off, n), 0, "%s", err_msg());
    *cells = (size_t)n[0] * n[1] * n[2];
    float *img = malloc(*cells * sizeof *img);
    cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(sh), img, NULL, NULL), 0, "%s", err_msg());
    rtm_engine_destroy(e);
    config_free(&cfg);
    return img;
}

Test(operator_band_auto, rtm_engine, .timeout = 120)
{
    struct rtm_case c;
    struct shot sh;
    rtm_case_layered(&c, 32, 10, 24, 0, &sh);
    const double want = band_expected(wavelet_ricker_fmax(c.f_peak), 2000.0, c.d[0]);
    size_t n[3];
    float *a = rtm_image(&c, &sh, CONF_AUTO, &n[0]);
    float *b = rtm_image(&c, &sh, want, &n[1]);
    float *d = rtm_image(&c, &sh, 0, &n[2]);
    cr_assert_eq(n[0], n[1]);
    cr_assert_eq(n[0], n[2]);
    cr_assert_eq(memcmp(a, b, n[0] * sizeof *a), 0, "auto and band %.6f differ: rel L2 %.3g", want,
                 test_rel_l2_f32(a, b, n[0]));
    cr_assert_neq(memcmp(a, d, n[0] * sizeof *a), 0, "auto gave the default band's image");
    double norm = 0;
    for (size_t i = 0; i < n[0]; i++)
        norm += (double)a[i] * a[i];
    cr_assert_gt(norm, 0.0);
    free(a);
    free(b);
    free(d);
    rtm_case_shot_free(&sh);
    rtm_case_free(&c);
}
