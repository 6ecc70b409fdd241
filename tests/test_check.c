/* `seislive check`: quiet mode on every job kind and every shipped config, and the
 * run-time conditions (endpoints, input paths, model files and their values) that
 * check must catch before `run` does. */
#include <criterion/criterion.h>
#include <glob.h>
#include <signal.h>
#include <unistd.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/stability.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

static struct run_result check(const char *path, bool quiet)
{
    const char *argv[] = {test_prog("seislive"), "check", quiet ? "-q" : "-c", quiet ? "-c" : path,
                          quiet ? path : NULL, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 120, &r), 0);
    return r;
}

/* A small constant-velocity rtm config; EXTRA is appended (later keys of a section
 * must then come in their own [section] table, so EXTRA holds whole sections). */
static const char rtm_cfg[] =
    "[job]\nkind = \"rtm\"\n"
    "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [41, 41, 41]\nd = [10.0, 10.0, 10.0]\n"
    "[propagator]\nt_max = 0.3\nf_peak = 10.0\npml_width = 10\n"
    "[acquisition]\nsources = [[200.0, 200.0, 0.0]]\nrx_origin = [0.0, 200.0, 0.0]\nrx_step = [10.0, 10.0]\n"
    "rx_count = [41, 1]\n"
    "[rtm]\naperture = 100.0\nmemory_budget = 512.0\n"
    "[input]\nkind = \"zmq\"\nendpoint = \"tcp://127.0.0.1:47999\"\nslots = 2\nslot_mib = 1.0\n"
    "[runtime]\ndevice = \"cpu\"\n";

static const char model_cfg[] =
    "[job]\nkind = \"model\"\n"
    "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [41, 41, 41]\nd = [10.0, 10.0, 10.0]\n"
    "[propagator]\nt_max = 0.3\nf_peak = 10.0\npml_width = 10\n"
    "[acquisition]\nsources = [[200.0, 200.0, 0.0]]\nreceivers = [[100.0, 200.0, 0.0], [300.0, 200.0, 0.0]]\n"
    "[runtime]\ndevice = \"cpu\"\n";

static const char locate_cfg[] =
    "[job]\nkind = \"locate\"\n"
    "[locate]\nstations = \"st.txt\"\ngrid_n = [5, 5, 5]\ngrid_d = [50.0, 50.0, 50.0]\ngrid_o = [0.0, 0.0, 100.0]\n"
    "[input]\nkind = \"zmq\"\nendpoint = \"tcp://127.0.0.1:47998\"\n"
    "[runtime]\ndevice = \"cpu\"\n";

static const char stations[] = "A01 0 0 0\nA02 200 0 0\nA03 0 200 0\nA04 200 200 0\n";

static void expect_quiet_ok(const char *path)
{
    struct run_result r = check(path, true);
    cr_expect_eq(r.status, 0, "%s: exit %d, stderr: %s", path, r.status, r.err);
    cr_expect_str_empty(r.out, "%s: check -q printed on stdout: %s", path, r.out);
    cr_expect_str_empty(r.err, "%s: check -q printed on stderr: %s", path, r.err);
    test_run_free(&r);
}

Test(check, quiet_every_job_kind)
{
    char *dir = test_tmpdir();
    free(test_write_file(dir, "st.txt", stations));
    const char *texts[] = {rtm_cfg, model_cfg, locate_cfg};
    const char *names[] = {"rtm.toml", "model.toml", "locate.toml"};
    for (int i = 0; i < 3; i++) {
        char *p = test_write_file(dir, names[i], texts[i]);
        expect_quiet_ok(p);
        /* the full check of the same file is valid too and prints the derived part */
        struct run_result r = check(p, false);
        cr_expect_eq(r.status, 0, "%s: %s", names[i], r.err);
        cr_expect_not_null(strstr(r.out, "# derived"), "%s: %s", names[i], r.out);
        test_run_free(&r);
        free(p);
    }
    test_rmtree(dir);
    free(dir);
}

Test(check, quiet_still_prints_errors)
{
    char *dir = test_tmpdir();
    char *p = test_write_file(dir, "bad.toml", "[job]\nkind = \"rtm\"\n[propagator]\norder = 7\n");
    struct run_result r = check(p, true);
    cr_expect_eq(r.status, 2);
    char want[512];
    snprintf(want, sizeof want, "%s:4:", p);
    cr_expect_not_null(strstr(r.err, want), "stderr: %s", r.err);
    cr_expect_str_empty(r.out);
    test_run_free(&r);
    free(p);
    test_rmtree(dir);
    free(dir);
}

/* Every config shipped in conf/ must pass check as it is, in a fresh clone (nothing
 * generated yet), quietly. */
Test(check, every_shipped_config)
{
    glob_t g;
    cr_assert_eq(glob("conf/*.toml", 0, NULL, &g), 0, "no conf/*.toml (tests run from the repository root)");
    cr_assert_geq(g.gl_pathc, 2, "expected the example and at least one more config");
    for (size_t i = 0; i < g.gl_pathc; i++)
        expect_quiet_ok(g.gl_pathv[i]);
    globfree(&g);
}

/* `seislive-bench NAME --help` prints that benchmark's usage on stdout and exits 0
 * (it used to run the benchmark's option parser, which called --help unknown: exit 1). */
Test(bench_cli, help_of_each_benchmark)
{
    const char *names[] = {"stencil", "rtm", "stack", "pipeline"};
    const char *an_option[] = {"--orders", "--strategies", "--grids", "--compute-ms"};
    for (int i = 0; i < 4; i++) {
        for (int h = 0; h < 2; h++) {
            const char *argv[] = {test_prog("seislive-bench"), names[i], h ? "-h" : "--help", NULL};
            struct run_result r;
            cr_assert_eq(test_run(argv, 30, &r), 0);
            cr_expect_eq(r.status, 0, "%s %s: exit %d, stderr: %s", names[i], argv[2], r.status, r.err);
            char want[64];
            snprintf(want, sizeof want, "usage: seislive-bench %s", names[i]);
            cr_expect_not_null(strstr(r.out, want), "%s: %s", names[i], r.out);
            cr_expect_not_null(strstr(r.out, an_option[i]), "%s: %s", names[i], r.out);
            cr_expect_not_null(strstr(r.out, "--json"), "%s: %s", names[i], r.out);
            test_run_free(&r);
        }
    }
    /* an unknown benchmark stays an error */
    const char *argv[] = {test_prog("seislive-bench"), "nonesuch", "--help", NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 30, &r), 0);
    cr_expect_eq(r.status, 2);
    cr_expect_not_null(strstr(r.err, "unknown benchmark 'nonesuch'"));
    test_run_free(&r);
}

/* SIGTERM to `seislive run`: the closing line tells whether a state was saved, and
 * where; without [output] state_dir it must not claim one was. */
static char *run_and_stop(const char *dir, bool with_state)
{
    char cfg[4096], ep[512], *log = malloc(600);
    snprintf(ep, sizeof ep, "%s/in-%d", dir, (int)with_state); /* a fresh socket file each run */
    snprintf(log, 600, "%s/run-%d.log", dir, (int)with_state);
    snprintf(cfg, sizeof cfg,
             "[job]\nkind = \"rtm\"\n"
             "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [21, 21, 21]\n"
             "[propagator]\nt_max = 0.1\nf_peak = 10.0\npml_width = 5\n"
             "[input]\nkind = \"zmq\"\nendpoint = \"ipc://%s\"\nslots = 2\nslot_mib = 1.0\n"
             "[output]\ndir = \"%s/out\"\n%s%s%s\n[runtime]\ndevice = \"cpu\"\n",
             ep, dir, with_state ? "state_dir = \"" : "", with_state ? dir : "", with_state ? "/state\"" : "");
    char *path = test_write_file(dir, with_state ? "state.toml" : "nostate.toml", cfg);
    pid_t pid = ts_spawn_run(path, log);
    for (int i = 0; i < 1000 && access(ep, F_OK) != 0; i++)
        usleep(10000);
    cr_assert_eq(access(ep, F_OK), 0, "the job never bound its input");
    kill(pid, SIGTERM);
    cr_assert_eq(ts_wait(pid, 30), 0);
    free(path);
    return log;
}

Test(run_stop, says_whether_state_was_saved, .timeout = 120)
{
    char *dir = test_tmpdir();
    char *log = run_and_stop(dir, false);
    cr_expect_eq(ts_count_in_file(log, "stopped by signal 15"), 1);
    cr_expect_eq(ts_count_in_file(log, "state saved"), 0, "no state_dir, yet the log says the state was saved");
    cr_expect_eq(ts_count_in_file(log, "no [output] state_dir"), 1);
    free(log);
    log = run_and_stop(dir, true);
    char want[600];
    snprintf(want, sizeof want, "state saved in %s/state", dir);
    cr_expect_eq(ts_count_in_file(log, want), 1);
    free(log);
    test_rmtree(dir);
    free(dir);
}

/* check of TEXT (written as DIR/c.toml) must exit 2 with "DIR/c.toml:LINE:" and WANT
 * in its message. */
static void expect_refused(const char *dir, const char *text, int line, const char *want)
{
    char *p = test_write_file(dir, "c.toml", text);
    struct run_result r = check(p, true);
    cr_expect_eq(r.status, 2, "exit %d for\n%s\nstderr: %s", r.status, text, r.err);
    char at[600];
    snprintf(at, sizeof at, "%s:%d:", p, line);
    cr_expect_not_null(strstr(r.err, at), "want %s in: %s", at, r.err);
    cr_expect_not_null(strstr(r.err, want), "want \"%s\" in: %s", want, r.err);
    test_run_free(&r);
    free(p);
}

/* The rtm config with one line replaced: LINE_NO (1-based) of rtm_cfg becomes NEW. */
static char *rtm_with(int line_no, const char *new_line)
{
    static char buf[8192];
    const char *s = rtm_cfg;
    size_t o = 0;
    for (int l = 1; *s; l++) {
        const char *nl = strchr(s, '\n');
        size_t len = (size_t)(nl - s);
        if (l == line_no)
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s\n", new_line);
        else
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%.*s\n", (int)len, s);
        s = nl + 1;
    }
    return buf;
}

/* rtm_cfg lines: 4 type, 5 velocity, 21 [input] kind, 22 endpoint, 26 the last (see above) */
Test(check, what_run_would_fail_on)
{
    cr_assert_not_null(strstr(rtm_with(5, "velocity = 2000.0"), "velocity = 2000.0\nn = [41"));
    cr_assert_not_null(strstr(rtm_with(22, "endpoint = \"x\""), "kind = \"zmq\"\nendpoint = \"x\""));
    char *dir = test_tmpdir();
    char text[8192];
    /* km/s typed as m/s */
    expect_refused(dir, rtm_with(5, "velocity = 2.0"), 5, "is this km/s?");
    /* endpoints: no port, no transport; the output's too */
    expect_refused(dir, rtm_with(22, "endpoint = \"tcp://127.0.0.1\""), 22, "no port");
    expect_refused(dir, rtm_with(22, "endpoint = \"127.0.0.1:5555\""), 22, "no transport");
    snprintf(text, sizeof text, "%s[output]\ndir = \"%s\"\nendpoint = \"tcp://*\"\n", rtm_cfg, dir);
    expect_refused(dir, text, 29, "no port");
    /* an ipc socket in a folder that does not exist */
    snprintf(text, sizeof text, "endpoint = \"ipc://%s/nonesuch/in\"", dir);
    expect_refused(dir, rtm_with(22, text), 22, "does not exist");
    /* files input: a path and a glob that name nothing */
    expect_refused(dir, rtm_with(21, "kind = \"files\"\npaths = [\"no-such-shots.segy\"]"), 22, "does not exist");
    expect_refused(dir, rtm_with(21, "kind = \"files\"\npaths = [\"none-*.segy\"]"), 22, "matches no file");
    /* an output folder whose parent is missing: the job makes only the last level */
    snprintf(text, sizeof text, "%s[output]\ndir = \"%s/a/b\"\n", rtm_cfg, dir);
    expect_refused(dir, text, 28, "does not exist");
    test_rmtree(dir);
    free(dir);
}

static void write_floats(const char *path, const float *v, size_t n, bool swap)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    for (size_t i = 0; i < n; i++) {
        uint32_t w;
        memcpy(&w, &v[i], 4);
        if (swap)
            w = __builtin_bswap32(w);
        cr_assert_eq(fwrite(&w, 4, 1, f), 1);
    }
    fclose(f);
}

/* A raw model file: its size against n, values in km/s, the other byte order. */
Test(check, raw_model_file)
{
    char *dir = test_tmpdir();
    enum { NX = 41, NN = 41 * 41 * 41 };
    float *v = malloc(NN * sizeof *v);
    char path[600], text[8192];
    snprintf(path, sizeof path, "%s/v.f32", dir);
    snprintf(text, sizeof text, "type = \"raw\"\nfile = \"v.f32\"");
    /* the reference: plausible m/s, little-endian as configured, passes */
    for (size_t i = 0; i < NN; i++)
        v[i] = 1500.0f + (float)(i % 997) * 1.37f;
    write_floats(path, v, NN, false);
    char *p = test_write_file(dir, "ok.toml", rtm_with(4, text));
    struct run_result r = check(p, true);
    cr_expect_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    free(p);
    /* the same values written big-endian, read as the default little */
    write_floats(path, v, NN, true);
    expect_refused(dir, rtm_with(4, text), 5, "wrong byte_order?");
    /* ... and named on the byte_order line when the file sets it */
    char with_bo[sizeof text + 32];
    snprintf(with_bo, sizeof with_bo, "%s\nbyte_order = \"little\"", text);
    expect_refused(dir, rtm_with(4, with_bo), 6, "wrong byte_order?");
    /* values in km/s */
    for (size_t i = 0; i < NN; i++)
        v[i] = 1.5f + (float)(i % 97) * 0.01f;
    write_floats(path, v, NN, false);
    expect_refused(dir, rtm_with(4, text), 5, "is this km/s?");
    /* one plane short */
    write_floats(path, v, NN - NX * NX, false);
    expect_refused(dir, rtm_with(4, text), 5, "needs");
    free(v);
    test_rmtree(dir);
    free(dir);
}

Test(check, locate_velocity_in_kms)
{
    char *dir = test_tmpdir();
    free(test_write_file(dir, "st.txt", stations));
    char text[4096];
    snprintf(text, sizeof text, "%s[locate]\nvp = 3.5\n", locate_cfg);
    /* a second [locate] table is a TOML error; put vp in the first instead */
    const char *at = strstr(locate_cfg, "grid_n");
    snprintf(text, sizeof text, "%.*svp = 3.5\n%s", (int)(at - locate_cfg), locate_cfg, at);
    expect_refused(dir, text, 5, "is this km/s?");
    /* miniSEED is all the locate job reads from files */
    free(test_write_file(dir, "a.mseed", "x"));
    const char *in = strstr(locate_cfg, "kind = \"zmq\"");
    snprintf(text, sizeof text, "%.*skind = \"files\"\npaths = [\"a.mseed\"]\nformat = \"segy\"\n%s",
             (int)(in - locate_cfg), locate_cfg, strchr(in, '\n') + 1);
    expect_refused(dir, text, 11, "reads miniSEED");
    test_rmtree(dir);
    free(dir);
}

/* The leapfrog's time dispersion against an independent measurement: one Fourier mode
 * p(n+1) = 2 p(n) - p(n-1) - a^2 p(n), a = v k dt (the space derivative exact), is
 * stepped a million times and its frequency read off its zero crossings; the phase
 * velocity it travels with is w_num / k, so its error is w_num dt / a - 1. */
static double measured_frequency(double a, long steps)
{
    double p0 = 1, p1 = 1 - a * a / 2, first = -1, last = -1;
    long crossings = 0;
    for (long n = 1; n < steps; n++) {
        double p2 = 2 * p1 - p0 - a * a * p1;
        if ((p1 > 0) != (p2 > 0)) {
            double t = n + p1 / (p1 - p2); /* linear interpolation of the crossing */
            if (first < 0)
                first = t;
            last = t;
            crossings++;
        }
        p0 = p1;
        p1 = p2;
    }
    return (crossings - 1) / 2.0 / (last - first); /* cycles per step */
}

Test(dispersion, leapfrog_phase_error_matches_a_simulation)
{
    const double as[] = {0.05, 0.2, 0.5, 1.0, 1.6};
    for (size_t i = 0; i < sizeof as / sizeof *as; i++) {
        double f = measured_frequency(as[i], 2000000); /* dt = 1: f in cycles per step */
        double want = 2 * M_PI * f / as[i] - 1;
        double got = stability_time_dispersion(f, 1.0);
        cr_expect(fabs(got - want) <= 1e-4 * fabs(want) + 1e-9, "a = %g: %.9g, simulated %.9g", as[i], got, want);
        cr_expect(got > 0, "the leapfrog's waves run ahead");
    }
    /* beyond x = pi/2 (a >= 2) the scheme has no wave at all */
    cr_expect(isinf(stability_time_dispersion(0.5, 1.0)));
}

Test(dispersion, check_prints_it_with_a_hint)
{
    char *dir = test_tmpdir();
    /* dt 1 ms, f_peak 10 Hz: the Ricker's fmax is 25 Hz (2.5 f_peak), x = pi 25 1e-3 */
    const char *at = strstr(model_cfg, "t_max");
    char text[4096];
    snprintf(text, sizeof text, "%.*sdt = 0.001\n%s", (int)(at - model_cfg), model_cfg, at);
    char *p = test_write_file(dir, "m.toml", text);
    struct run_result r = check(p, false);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *line = strstr(r.out, "time dispersion");
    cr_assert_not_null(line, "%s", r.out);
    double pct = 0, fmax = 0, dt_ms = 0;
    cr_assert_eq(sscanf(strstr(line, "phase velocity"), "phase velocity %lf %% at fmax %lf Hz with dt %lf ms", &pct,
                        &fmax, &dt_ms), 3, "%s", line);
    cr_expect_float_eq(fmax, 25.0, 1e-9);
    cr_expect_float_eq(dt_ms, 1.0, 1e-9);
    double x = M_PI * 25 * 1e-3;
    cr_expect(fabs(pct / 100 - x * x / 6) < 0.01 * x * x / 6, "%g %% vs x^2/6 = %g %%", pct, 100 * x * x / 6);
    cr_expect_not_null(strstr(line, "smaller dt"), "%s", line);
    test_run_free(&r);
    free(p);
    test_rmtree(dir);
    free(dir);
}

/* The model job's sources and receivers need their 8-node interpolation support on the
 * grid or in the absorbing layers; on a model one cell wide without layers across it,
 * `run` failed after allocating everything while check passed. */
Test(check, model_points_support)
{
    char *dir = test_tmpdir();
    const char *cfg = "[job]\nkind = \"model\"\n"
                      "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [41, 3, 41]\n"
                      "[propagator]\nt_max = 0.2\npml_width = [10, 10, 0, 0, 10, 10]\n"
                      "[acquisition]\nsources = [[200.0, 0.0, 20.0]]\nreceivers = [[100.0, 0.0, 0.0]]\n"
                      "[runtime]\ndevice = \"cpu\"\n";
    /* a thin 3D slab (n[1] = 1 is a 2D model since issue 13: model_2d_line_needs_no_y_layers) */
    expect_refused(dir, cfg, 11, "leaves the grid along y");
    char ok[1024];
    snprintf(ok, sizeof ok, "%s", cfg);
    memcpy(strstr(ok, "[10, 10, 0, 0, 10, 10]"), "[10, 10, 4, 4, 10, 10]", 22);
    char *p = test_write_file(dir, "ok.toml", ok);
    struct run_result r = check(p, true);
    cr_expect_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    free(p);
    test_rmtree(dir);
    free(dir);
}

/* A 2D model (n[1] = 1) has no y support to hold: the points on its line pass with no y
 * layers, a point off the line is refused by name. */
Test(check, model_2d_line_needs_no_y_layers)
{
    char *dir = test_tmpdir();
    const char *cfg = "[job]\nkind = \"model\"\n"
                      "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [41, 1, 41]\n"
                      "[propagator]\nt_max = 0.2\npml_width = [10, 10, 0, 0, 10, 10]\n"
                      "[acquisition]\nsources = [[200.0, 0.0, 20.0]]\nreceivers = [[100.0, 0.0, 0.0]]\n"
                      "[runtime]\ndevice = \"cpu\"\n";
    char *p = test_write_file(dir, "ok.toml", cfg);
    struct run_result r = check(p, true);
    cr_expect_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    free(p);
    char off[1024];
    snprintf(off, sizeof off, "%s", cfg);
    memcpy(strstr(off, "[[100.0, 0.0, 0.0]]"), "[[100.0, 5.0, 0.0]]", 19);
    expect_refused(dir, off, 12, "receivers");
    test_rmtree(dir);
    free(dir);
}

/* The rtm report's representative shot: stated as assumed when [acquisition] is empty
 * (the data bring their geometry), with receivers on the surface nodes within the
 * aperture; the configured one otherwise. */
Test(check, rtm_representative_shot)
{
    char *dir = test_tmpdir();
    /* 41 x 41 nodes of 10 m, aperture 100 m around the centre (200, 200): 21 x 21 nodes */
    const char *cfg = "[job]\nkind = \"rtm\"\n"
                      "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [41, 41, 41]\nd = [10.0, 10.0, 10.0]\n"
                      "[propagator]\nt_max = 0.2\nf_peak = 10.0\npml_width = 10\n"
                      "[rtm]\naperture = 100.0\nmemory_budget = 512.0\n"
                      "[input]\nkind = \"zmq\"\nendpoint = \"tcp://127.0.0.1:47997\"\n[runtime]\ndevice = \"cpu\"\n";
    char *p = test_write_file(dir, "a.toml", cfg);
    struct run_result r = check(p, false);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *line = strstr(r.out, "[rtm] representative shot");
    cr_assert_not_null(line, "%s", r.out);
    cr_expect_not_null(strstr(line, "assumed"), "%.300s", line);
    cr_expect_not_null(strstr(line, "source (200, 200, 0) m"), "%.300s", line);
    cr_expect_not_null(strstr(line, " 441 receivers"), "%.300s", line);
    cr_expect_null(strstr(r.out, "0 of 0 receivers"));
    test_run_free(&r);
    free(p);
    /* the configured geometry: the first source, the 41-receiver line */
    p = test_write_file(dir, "b.toml", rtm_cfg);
    r = check(p, false);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_not_null(strstr(r.out, "41 of 41 receivers of [acquisition]"), "%s", r.out);
    test_run_free(&r);
    free(p);
    test_rmtree(dir);
    free(dir);
}
