/* The command line: exit codes, --help, --version, check on good and bad configs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

static struct run_result run(const char *const *args)
{
    const char *argv[16] = {test_prog("seislive")};
    int i = 1;
    for (; args[i - 1]; i++)
        argv[i] = args[i - 1];
    argv[i] = NULL;
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    return r;
}

Test(cli, help_lists_exit_codes)
{
    struct run_result r = run((const char *[]){"--help", NULL});
    cr_assert_eq(r.status, 0);
    cr_assert_not_null(strstr(r.out, "exit status:"));
    cr_assert_not_null(strstr(r.out, "  2  bad command line or invalid configuration"));
    test_run_free(&r);
}

Test(cli, version_names_revision_and_cuda)
{
    struct run_result r = run((const char *[]){"--version", NULL});
    cr_assert_eq(r.status, 0);
    cr_assert_not_null(strstr(r.out, "seislive "));
    cr_assert_not_null(strstr(r.out, "(git "));
    cr_assert(strstr(r.out, "CUDA: compiled in") || strstr(r.out, "CUDA: not compiled in"), "%s", r.out);
    test_run_free(&r);
}

Test(cli, check_example_exits_0_and_prints_resolved)
{
    struct run_result r = run((const char *[]){"check", "-c", "conf/seislive.example.toml", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, "[propagator]\norder = 8\n"));
    test_run_free(&r);
}

Test(cli, check_misspelt_key_exits_2_with_position)
{
    char *dir = test_tmpdir();
    char *path = test_write_file(dir, "bad.toml", "[input]\nkind = \"zmq\"\n[model]\n\nvelocty = 3000\n");
    struct run_result r = run((const char *[]){"check", "-c", path, NULL});
    cr_assert_eq(r.status, 2);
    char want[512];
    snprintf(want, sizeof want, "%s:5:1: [model] unknown key \"velocty\" (did you mean \"velocity\"?)", path);
    cr_assert_not_null(strstr(r.err, want), "stderr: %s", r.err);
    test_run_free(&r);
    free(path);
    test_rmtree(dir);
    free(dir);
}

Test(cli, usage_errors_exit_2)
{
    struct run_result r = run((const char *[]){"frobnicate", NULL});
    cr_assert_eq(r.status, 2);
    cr_assert_not_null(strstr(r.err, "unknown command 'frobnicate'"));
    test_run_free(&r);
    r = run((const char *[]){"check", NULL});
    cr_assert_eq(r.status, 2);
    cr_assert_not_null(strstr(r.err, "missing -c FILE"));
    test_run_free(&r);
    r = run((const char *[]){"check", "-c", "/nonexistent.toml", NULL});
    cr_assert_eq(r.status, 2);
    cr_assert_not_null(strstr(r.err, "/nonexistent.toml: cannot open config file"));
    test_run_free(&r);
    r = run((const char *[]){"--bogus", NULL});
    cr_assert_eq(r.status, 2);
    test_run_free(&r);
    r = run((const char *[]){NULL});
    cr_assert_eq(r.status, 2);
    test_run_free(&r);
    r = run((const char *[]){"check", "-c", "conf/seislive.example.toml", "--device", "gpu", NULL});
    cr_assert_eq(r.status, 2);
    cr_assert_not_null(strstr(r.err, "--device"));
    test_run_free(&r);
}

Test(cli, reference_covers_every_section)
{
    struct run_result r = run((const char *[]){"reference", NULL});
    cr_assert_eq(r.status, 0);
    const char *secs[] = {"job", "model", "propagator", "rtm", "locate", "input", "output", "runtime", "log"};
    for (size_t i = 0; i < sizeof secs / sizeof *secs; i++) {
        char h[64];
        snprintf(h, sizeof h, "## [%s]", secs[i]);
        cr_assert_not_null(strstr(r.out, h), "%s", h);
    }
    test_run_free(&r);
}
