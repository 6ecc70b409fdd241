/* `seislive check`: quiet mode on every job kind and every shipped config, and the
 * run-time conditions (endpoints, input paths, model files and their values) that
 * check must catch before `run` does. */
#include <criterion/criterion.h>
#include <glob.h>
#include <signal.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
