/* 2D models (n = [nx, 1, nz]) through the model job, the generator and the model reader:
 *   - a depth-fastest raw file (Marmousi-2's layout: value (ix, iz) at ix nz + iz) loads
 *     with [model] layout = "z-fastest" and n = [nx, 1, nz] as it is, no transposing
 *     by hand; seislive-gen --layout z-fastest reads it the same way;
 *   - sources and receivers off the line y = o[1] are refused by name (model job,
 *     `seislive check`, generator);
 *   - `seislive model` on a constant 2D model records the 2D (line source) wave: its
 *     traces are compared with the analytic 2D Green's function convolved with the
 *     documented Ricker, computed here: onset and peak at the right time (r / v), the
 *     amplitude falling as 1 / sqrt(r) (a 3D point source would give 1 / r), and the
 *     documented absolute amplitude. */
#include <criterion/criterion.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "io/model.h"
#include "stream/error.h"
#include "tests/support.h"

static void write_f32(const char *path, const float *v, size_t n, bool big)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        if (big)
            u = __builtin_bswap32(u);
        cr_assert_eq(fwrite(&u, 4, 1, f), 1);
    }
    cr_assert_eq(fclose(f), 0);
}

/* The value a synthetic section has at (ix, iz): it tells both indices. */
static float cell_value(int ix, int iz) { return 1500.0f + 10.0f * ix + iz; }

enum { ZNX = 9, ZNZ = 8 }; /* seislive-gen takes 8 points per axis at least */

/* A depth-fastest file, as Marmousi-2's (README: value (ix, iz) at float ix * nz + iz). */
static void write_depth_fastest(const char *path, bool big)
{
    float v[ZNX * ZNZ];
    for (int ix = 0; ix < ZNX; ix++)
        for (int iz = 0; iz < ZNZ; iz++)
            v[ix * ZNZ + iz] = cell_value(ix, iz);
    write_f32(path, v, ZNX * ZNZ, big);
}

Test(model_2d, z_fastest_file_loads_as_it_is)
{
    char *dir = test_tmpdir();
    for (int big = 0; big < 2; big++) {
        char path[4200], text[8400];
        snprintf(path, sizeof path, "%s/section.vp", dir);
        write_depth_fastest(path, big);
        snprintf(text, sizeof text,
                 "[job]\nkind = \"model\"\n[model]\ntype = \"raw\"\nfile = \"%s\"\nbyte_order = \"%s\"\n"
                 "layout = \"z-fastest\"\nn = [%d, 1, %d]\nd = [20.0, 20.0, 20.0]\n",
                 path, big ? "big" : "little", ZNX, ZNZ);
        struct sl_config cfg;
        cr_assert_eq(config_load_string(text, "z.toml", &cfg), 0, "%s", err_msg());
        struct sl_model m;
        cr_assert_eq(model_load(&cfg, &m), 0, "%s", err_msg());
        cr_assert_eq(m.n[0], ZNX);
        cr_assert_eq(m.n[1], 1);
        cr_assert_eq(m.n[2], ZNZ);
        /* the engine's order: x fastest, z slowest */
        for (int iz = 0; iz < ZNZ; iz++)
            for (int ix = 0; ix < ZNX; ix++)
                cr_assert_eq(m.v[iz * ZNX + ix], cell_value(ix, iz), "(x %d, z %d): %g, want %g (%s-endian)",
                             ix, iz, m.v[iz * ZNX + ix], cell_value(ix, iz), big ? "big" : "little");
        cr_assert_eq(m.vmin, cell_value(0, 0));
        cr_assert_eq(m.vmax, cell_value(ZNX - 1, ZNZ - 1));
        model_free(&m);
        config_free(&cfg);
    }
    /* The same little-endian file read as x-fastest is another model: the layout key is
     * what puts the depth samples in their columns. */
    char path[4200], text[8400];
    snprintf(path, sizeof path, "%s/section.vp", dir);
    write_depth_fastest(path, false);
    snprintf(text, sizeof text,
             "[job]\nkind = \"model\"\n[model]\ntype = \"raw\"\nfile = \"%s\"\nn = [%d, 1, %d]\n", path, ZNX, ZNZ);
    struct sl_config cfg;
    cr_assert_eq(config_load_string(text, "x.toml", &cfg), 0, "%s", err_msg());
    struct sl_model m;
    cr_assert_eq(model_load(&cfg, &m), 0, "%s", err_msg());
    cr_assert_eq(m.v[1], cell_value(0, 1), "x-fastest takes the file as it is");
    model_free(&m);
    config_free(&cfg);
    test_rmtree(dir);
    free(dir);
}

static struct run_result run_prog(const char *const *args, int timeout_s)
{
    const char *argv[64];
    int i = 0;
    for (; args[i]; i++)
        argv[i] = args[i];
    argv[i] = NULL;
    struct run_result r;
    cr_assert_eq(test_run(argv, timeout_s, &r), 0);
    return r;
}

static float *read_all(const char *path, size_t n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    float *v = malloc(n * sizeof *v);
    cr_assert_eq(fread(v, sizeof *v, n, f), n, "%s: short", path);
    cr_assert_eq(fgetc(f), EOF, "%s: longer than %zu values", path, n);
    fclose(f);
    return v;
}

Test(model_2d, generator_reads_z_fastest_model_file, .timeout = 60)
{
    char *dir = test_tmpdir();
    char in[4200], out[4200], n[64], model[4400];
    snprintf(in, sizeof in, "%s/section.vp", dir);
    snprintf(out, sizeof out, "%s/gen", dir);
    snprintf(n, sizeof n, "%d,1,%d", ZNX, ZNZ);
    write_depth_fastest(in, false);
    struct run_result r = run_prog((const char *[]){test_prog("seislive-gen"), "shots", "-o", out, "--n", n,
                                                   "--model", in, "--layout", "z-fastest", "--seislive", "/bin/true",
                                                   NULL},
                                   30);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    test_run_free(&r);
    snprintf(model, sizeof model, "%s/model.f32", out);
    float *v = read_all(model, ZNX * ZNZ);
    for (int iz = 0; iz < ZNZ; iz++)
        for (int ix = 0; ix < ZNX; ix++)
            cr_assert_eq(v[iz * ZNX + ix], cell_value(ix, iz), "model.f32 (x %d, z %d): %g", ix, iz,
                         v[iz * ZNX + ix]);
    free(v);
    /* --layout only means something for a raw --model file */
    r = run_prog((const char *[]){test_prog("seislive-gen"), "shots", "-o", out, "--n", "40,1,30", "--layout",
                                  "z-fastest", "--seislive", "/bin/true", NULL},
                 30);
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.err, "--layout"), "%s", r.err);
    test_run_free(&r);
    test_rmtree(dir);
    free(dir);
}

Test(model_2d, generator_refuses_points_off_the_line, .timeout = 60)
{
    char *dir = test_tmpdir();
    char out[4200];
    snprintf(out, sizeof out, "%s/gen", dir);
    static const struct {
        const char *opt, *val, *says;
    } cases[] = {
        {"--rx-origin", "0,10,10", "--rx-origin: the receivers are at y = 10 m, off the line"},
        {"--shot-origin", "50,-5,10", "--shot-origin: the shots are at y = -5 m, off the line"},
        {"--receivers", "20,2", "--receivers: more than one receiver line in a 2D model"},
        {"--shots", "2,3", "--shots: more than one shot line in a 2D model"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct run_result r = run_prog((const char *[]){test_prog("seislive-gen"), "shots", "-o", out, "--n",
                                                       "40,1,30", cases[c].opt, cases[c].val, "--seislive",
                                                       "/bin/true", NULL},
                                       30);
        cr_assert_eq(r.status, 2, "%s %s: exit %d: %s", cases[c].opt, cases[c].val, r.status, r.err);
        cr_assert_not_null(strstr(r.err, cases[c].says), "%s %s: %s", cases[c].opt, cases[c].val, r.err);
        test_run_free(&r);
    }
    /* nothing was written for a refused survey */
    char toml[4400];
    snprintf(toml, sizeof toml, "%s/survey.toml", out);
    cr_assert_null(fopen(toml, "r"), "%s written for a refused survey", toml);
    test_rmtree(dir);
    free(dir);
}

/* A 2D constant model, 10 m cells, and the acquisition ACQ. */
static char *model_conf(const char *dir, const char *acq)
{
    char text[4096];
    snprintf(text, sizeof text,
             "[job]\nkind = \"model\"\n\n"
             "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [161, 1, 81]\nd = [10.0, 10.0, 10.0]\n"
             "o = [0.0, 0.0, 0.0]\n\n"
             "[propagator]\norder = 8\nt_max = 0.7\nf_peak = 10.0\npml_width = 20\n\n"
             "[acquisition]\n%s\ndt_out = 0.001\n\n[runtime]\ndevice = \"cpu\"\n",
             acq);
    return test_write_file(dir, "model2d.toml", text);
}

Test(model_2d, model_job_refuses_points_off_the_line, .timeout = 60)
{
    char *dir = test_tmpdir();
    static const struct {
        const char *acq, *says;
    } cases[] = {
        {"sources = [[300.0, 0.0, 400.0]]\nreceivers = [[500.0, 0.0, 400.0], [700.0, 10.0, 400.0]]",
         "[acquisition] receivers[1] at y = 10 m is off the line of this 2D model"},
        {"sources = [[300.0, 0.0, 400.0], [310.0, 0.5, 400.0]]\nreceivers = [[500.0, 0.0, 400.0]]",
         "[acquisition] sources[1] at y = 0.5 m is off the line of this 2D model"},
        {"sources = [[300.0, 0.0, 400.0]]\nrx_origin = [100.0, 0.0, 0.0]\nrx_step = [10.0, 10.0]\n"
         "rx_count = [10, 2]",
         "[acquisition] receiver 11 of the rx_count grid at y = 10 m is off the line"},
    };
    char out[4200];
    snprintf(out, sizeof out, "%s/shots.segy", dir);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *conf = model_conf(dir, cases[c].acq);
        /* `check` refuses the configuration (exit 2): its point check (stream/check.c)
         * finds the point outside the one-point y axis first, or the model job's plan
         * says it is off the line ... */
        struct run_result r = run_prog((const char *[]){test_prog("seislive"), "check", "-q", "-c", conf, NULL}, 30);
        cr_assert_eq(r.status, 2, "case %zu: check exit %d: %s", c, r.status, r.err);
        cr_assert(strstr(r.err, cases[c].says) || strstr(r.err, "lies outside the model (axis y: 0 .. 0 m)"),
                  "case %zu: %s", c, r.err);
        test_run_free(&r);
        /* ... and `model` fails with the same reason, writing nothing */
        r = run_prog((const char *[]){test_prog("seislive"), "model", "-c", conf, "-o", out, NULL}, 30);
        cr_assert_eq(r.status, 1, "case %zu: model exit %d: %s", c, r.status, r.err);
        cr_assert_not_null(strstr(r.err, cases[c].says), "case %zu: %s", c, r.err);
        cr_assert_null(fopen(out, "r"), "case %zu: %s written", c, out);
        test_run_free(&r);
        free(conf);
    }
    test_rmtree(dir);
    free(dir);
}

/* The documented Ricker (docs/model.md): unit peak at 1.5 / fp. */
static double ricker(double t, double fp)
{
    double a = M_PI * fp * (t - 1.5 / fp);
    return (1 - 2 * a * a) * exp(-a * a);
}

/* The analytic trace of a line source s(t) at distance R in velocity V: s convolved with
 * the 2D Green's function H(t - r/v) / (2 pi sqrt(t^2 - r^2/v^2)) of
 * p_tt / v^2 - lap p = s(t) delta(x) delta(z) (docs/model.md, the 2D section).  With
 * t' = r/v + w^2 the integrable singularity goes:
 *   p(t) = (1/pi) int_0^sqrt(t - r/v) s(t - r/v - w^2) / sqrt(w^2 + 2 r/v) dw
 * (Simpson's rule, 4000 intervals: far below the tolerances). */
static double green2d_trace(double t, double r, double v, double fp)
{
    double tau = t - r / v;
    if (tau <= 0)
        return 0;
    const int n = 4000;
    double W = sqrt(tau), h = W / n, s = 0;
    for (int i = 0; i <= n; i++) {
        double w = i * h;
        double f = ricker(tau - w * w, fp) / sqrt(w * w + 2 * r / v);
        s += f * (i == 0 || i == n ? 1 : i % 2 ? 4 : 2);
    }
    return s * h / 3 / M_PI;
}

/* Onset: the first time |x| reaches FRAC of its largest value (linear between samples);
 * peak: the time and value of the largest |x| (parabola through the three samples). */
static double onset_time(const double *x, int n, double dt, double frac)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fabs(x[i]));
    for (int i = 1; i < n; i++)
        if (fabs(x[i]) >= frac * m)
            return (i - 1 + (frac * m - fabs(x[i - 1])) / (fabs(x[i]) - fabs(x[i - 1]))) * dt;
    return -1;
}

static double peak_time(const double *x, int n, double dt, double *val)
{
    int k = 0;
    for (int i = 1; i < n; i++)
        if (fabs(x[i]) > fabs(x[k]))
            k = i;
    double off = 0;
    if (k > 0 && k < n - 1) {
        double a = x[k - 1], b = x[k], c = x[k + 1], den = a - 2 * b + c;
        if (den != 0)
            off = 0.5 * (a - c) / den;
    }
    *val = x[k] - 0.25 * (x[k - 1 < 0 ? 0 : k - 1] - x[k + 1 >= n ? n - 1 : k + 1]) * off;
    return (k + off) * dt;
}

enum { NREC = 4 };

Test(model_2d, line_source_arrivals_match_the_2d_green_function, .timeout = 120)
{
    char *dir = test_tmpdir();
    const double v = 2000, fp = 10, src[3] = {300, 0, 400};
    const double rx[NREC] = {500, 700, 900, 1100};
    char *conf = model_conf(dir, "sources = [[300.0, 0.0, 400.0]]\n"
                                 "receivers = [[500.0, 0.0, 400.0], [700.0, 0.0, 400.0], [900.0, 0.0, 400.0], "
                                 "[1100.0, 0.0, 400.0]]");
    char out[4200];
    snprintf(out, sizeof out, "%s/shots.segy", dir);
    struct run_result r = run_prog((const char *[]){test_prog("seislive"), "model", "-c", conf, "-o", out, NULL}, 100);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.err, "161x1x81 (2D)"), "the run says it is 2D: %s", r.err);
    test_run_free(&r);

    segy_file *fp_ = segy_open(out, "rb");
    cr_assert_not_null(fp_, "%s", out);
    char bin[SEGY_BINARY_HEADER_SIZE];
    cr_assert_eq(segy_binheader(fp_, bin), SEGY_OK);
    int ns = segy_samples(bin), ntr = 0;
    long trace0 = segy_trace0(bin);
    int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, ns);
    cr_assert_eq(segy_traces(fp_, &ntr, trace0, bsize), SEGY_OK);
    cr_assert_eq(ntr, NREC);
    cr_assert_eq(ns, 701);
    const double dt = 0.001;
    float *tr = malloc((size_t)ns * sizeof *tr);
    double *x = malloc((size_t)ns * sizeof *x), *y = malloc((size_t)ns * sizeof *y);
    double on[NREC], pk[NREC], amp[NREC], a_on[NREC], a_pk[NREC], a_amp[NREC];
    for (int q = 0; q < NREC; q++) {
        cr_assert_eq(segy_readtrace(fp_, q, tr, trace0, bsize), SEGY_OK);
        segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, ns, tr);
        double rr = fabs(rx[q] - src[0]);
        for (int i = 0; i < ns; i++) {
            x[i] = tr[i];
            y[i] = green2d_trace(i * dt, rr, v, fp);
        }
        on[q] = onset_time(x, ns, dt, 0.05);
        a_on[q] = onset_time(y, ns, dt, 0.05);
        pk[q] = peak_time(x, ns, dt, &amp[q]);
        a_pk[q] = peak_time(y, ns, dt, &a_amp[q]);
        fprintf(stderr, "model_2d: r %4.0f m: onset %.4f s (analytic %.4f), peak %.4f s (%.4f), amplitude %.4g "
                        "(%.4g)\n", rr, on[q], a_on[q], pk[q], a_pk[q], amp[q], a_amp[q]);
        /* the first arrival: at r / v (plus the wavelet's fixed delay, the same in both) */
        cr_assert_lt(fabs(on[q] - a_on[q]), 0.002, "r %g m: onset %.4f s, analytic %.4f s", rr, on[q], a_on[q]);
        cr_assert_lt(fabs(pk[q] - a_pk[q]), 0.002, "r %g m: peak %.4f s, analytic %.4f s", rr, pk[q], a_pk[q]);
        /* the documented amplitude of a line source */
        cr_assert_lt(fabs(amp[q] / a_amp[q] - 1), 0.10, "r %g m: peak %.4g, analytic %.4g", rr, amp[q], a_amp[q]);
    }
    for (int q = 1; q < NREC; q++) {
        double dr = fabs(rx[q] - src[0]) - fabs(rx[0] - src[0]);
        /* moveout: the onsets are (r - r0) / v apart, with no model of the wavelet */
        cr_assert_lt(fabs((on[q] - on[0]) - dr / v), 0.002, "onset moveout %.4f s over %g m, want %.4f s",
                     on[q] - on[0], dr, dr / v);
        /* cylindrical spreading: the far-field peak falls about as 1 / sqrt(r) (3D: 1 / r) */
        double ratio = amp[q] / amp[0], want = a_amp[q] / a_amp[0];
        cr_assert_lt(fabs(ratio / want - 1), 0.05, "peak ratio r%d / r0 %.4f, analytic %.4f (3D would be %.4f)", q,
                     ratio, want, fabs(rx[0] - src[0]) / fabs(rx[q] - src[0]));
    }
    free(tr);
    free(x);
    free(y);
    segy_close(fp_);
    free(conf);
    test_rmtree(dir);
    free(dir);
}
