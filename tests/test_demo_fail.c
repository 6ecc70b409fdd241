/* The demo scripts (issue 12): they run the job on free ports (a config copy with
 * "tcp://127.0.0.1:*" endpoints, not the fixed 47555/47565 pairs of tools/demo*.toml),
 * and a job that fails exits the demo non-zero without leaving its partial events file
 * behind as if it were the result.  The failing job is a stand-in `seislive` that
 * writes a truncated events.csv into its [output] dir and exits 3. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support.h"

static const char fake[] =
    "#!/bin/sh\n"
    "[ \"$1\" = --version ] && { echo 'seislive (stand-in that fails)'; exit 0; }\n"
    "cp \"$3\" \"$FAKE_CFG\"\n"
    "dir=$(sed -n 's/^dir = \"\\(.*\\)\"$/\\1/p' \"$3\")\n"
    "mkdir -p \"$dir\" && printf 'id,origin_time\\n0,2026-01-01T00:00:0' > \"$dir/events.csv\"\n"
    "echo 'seislive: the job failed half-way' >&2\n"
    "exit 3\n";

static int exists(const char *dir, const char *name)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    return stat(p, &st) == 0;
}

Test(demo_fail, failed_locate_job_leaves_no_events_and_exits_nonzero, .timeout = 120)
{
    char *dir = test_tmpdir();
    char bin[4200], out[4200], cfg[4200], link[4400], prog[4400];
    snprintf(bin, sizeof bin, "%s/bin", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(cfg, sizeof cfg, "%s/cfg-seen.toml", dir);
    cr_assert_eq(mkdir(bin, 0755), 0);
    char *f = test_write_file(bin, "seislive", fake);
    cr_assert_eq(chmod(f, 0755), 0);
    free(f);
    const char *real[] = {"seislive-gen", "seislive-sub"};
    for (int i = 0; i < 2; i++) {
        snprintf(link, sizeof link, "%s/%s", bin, real[i]);
        const char *t = test_prog(real[i]);
        if (t[0] == '/')
            snprintf(prog, sizeof prog, "%s", t);
        else {
            char cwd[2048];
            cr_assert_not_null(getcwd(cwd, sizeof cwd));
            snprintf(prog, sizeof prog, "%s/%s", cwd, t);
        }
        cr_assert_eq(symlink(prog, link), 0, "%s", prog);
    }
    /* a result of an earlier run must not survive either */
    char old[4400];
    snprintf(old, sizeof old, "%s/locate", out);
    cr_assert_eq(mkdir(out, 0755), 0);
    cr_assert_eq(mkdir(old, 0755), 0);
    free(test_write_file(old, "events.csv", "id\n0\n"));
    setenv("SEISLIVE_DEMO_OUT", out, 1);
    setenv("FAKE_CFG", cfg, 1);
    const char *argv[] = {"/bin/bash", "tools/demo-locate.sh", bin, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 100, &r), 0);
    unsetenv("SEISLIVE_DEMO_OUT");
    unsetenv("FAKE_CFG");
    cr_assert_eq(r.status, 1, "demo-locate: status %d\n%s\n%s", r.status, r.out, r.err);
    cr_assert_not_null(strstr(r.err, "seislive run"), "%s", r.err);
    /* the demo ran (its recording is there), the job saw free-port endpoints */
    cr_assert(exists(out, "micro/stations.txt"), "%s", r.err);
    size_t n = 0;
    FILE *cf = fopen(cfg, "r");
    cr_assert_not_null(cf, "the stand-in was not run");
    char text[8192];
    n = fread(text, 1, sizeof text - 1, cf);
    text[n] = '\0';
    fclose(cf);
    cr_assert_null(strstr(text, "47565"), "fixed port:\n%s", text);
    cr_assert_null(strstr(text, "47566"), "fixed port:\n%s", text);
    cr_assert_not_null(strstr(text, "endpoint = \"tcp://127.0.0.1:*\""), "%s", text);
    /* no events file, neither the truncated one nor the old one */
    cr_assert(!exists(out, "locate/events.csv"), "a failed run left an events file");
    cr_assert(!exists(out, "locate.partial"), "a failed run left its partial output");
    test_run_free(&r);
    test_rmtree(dir);
    free(dir);
}
