/* Configuration loading: the example loads, defaults fill in, and every kind of bad
 * input gets its exact message naming file:line:col, the key and the reason. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conf/config.h"
#include "conf/schema.h"
#include "conf/suggest.h"
#include "kernels/backend.h"
#include "stream/error.h"
#include "tests/support.h"

/* Every valid test config needs an input for the rtm job; a minimal prefix. */
#define INPUT_OK "[input]\nkind = \"zmq\"\n"

Test(config, example_loads)
{
    struct sl_config cfg;
    int rc = config_load("conf/seislive.example.toml", &cfg);
    cr_assert_eq(rc, 0, "example config: %s", err_msg());
    cr_assert_eq(cfg.job.kind, JOB_RTM);
    cr_assert_eq(cfg.propagator.order, 8);
    cr_assert_eq(cfg.input.kind, INPUT_ZMQ);
    cr_assert_str_eq(cfg.runtime.device, "auto");
    config_free(&cfg);
}

Test(config, example_documents_every_key)
{
    /* Each schema key appears in its section of the example, after a comment that
     * gives its unit and default. */
    FILE *f = fopen("conf/seislive.example.toml", "r");
    cr_assert_not_null(f);
    char *text = NULL;
    size_t cap = 0;
    ssize_t n = getdelim(&text, &cap, '\0', f);
    fclose(f);
    cr_assert_gt(n, 0);
    for (const struct conf_section *s = conf_sections; s->name; s++) {
        char hdr[64];
        snprintf(hdr, sizeof hdr, "\n[%s]\n", s->name);
        const char *sec = strstr(text, hdr);
        cr_assert_not_null(sec, "section [%s] missing from the example", s->name);
        const char *next = strstr(sec + 1, "\n[");
        for (const struct conf_key *k = s->keys; k->name; k++) {
            char line[256];
            snprintf(line, sizeof line, "# unit: %s; default: %s\n%s = ", k->unit[0] ? k->unit : "none",
                     k->def, k->name);
            const char *at = strstr(sec, line);
            cr_assert(at && (!next || at < next), "[%s] %s: not documented with unit and default",
                      s->name, k->name);
        }
    }
    free(text);
}

Test(config, defaults_and_values)
{
    struct sl_config cfg;
    const char *text = INPUT_OK
        "[propagator]\norder = 4\npml_width = 12\ndt = 0.001\n"
        "[model]\nn = [50, 60, 70]\nd = [5, 6.5, 7]\n"
        "[acquisition]\nsources = [[1, 2, 3], [4.5, 5, 6]]\n"
        "[model.extra]\n";
    /* A nested table is an unknown section. */
    cr_assert_lt(config_load_string(text, "t.toml", &cfg), 0);
    cr_assert_str_eq(err_msg(), "t.toml:12:8: unknown section [model.extra]");
    config_free(&cfg);

    text = INPUT_OK "[propagator]\norder = 4\npml_width = 12\ndt = 0.001\n"
                    "[model]\nn = [50, 60, 70]\nd = [5, 6.5, 7]\n"
                    "[acquisition]\nsources = [[1, 2, 3], [4.5, 5, 6]]\n";
    cr_assert_eq(config_load_string(text, "t.toml", &cfg), 0, "%s", err_msg());
    cr_assert_eq(cfg.propagator.order, 4);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(cfg.propagator.pml_width[i], 12);
    cr_assert_float_eq(cfg.propagator.dt, 0.001, 1e-15);
    cr_assert_eq(cfg.model.n[1], 60);
    cr_assert_float_eq(cfg.model.d[1], 6.5, 1e-15);
    cr_assert_eq(cfg.acquisition.sources.n, 2);
    cr_assert_float_eq(cfg.acquisition.sources.p[1][0], 4.5, 1e-15);
    /* Untouched keys keep the schema defaults. */
    cr_assert_float_eq(cfg.propagator.cfl, 0.9, 1e-15);
    cr_assert_float_eq(cfg.model.velocity, 2000.0, 1e-12);
    cr_assert_eq(cfg.rtm.strategy, STRAT_AUTO);
    char buf[256];
    cr_assert_str_eq(config_where(&cfg, "propagator.dt", buf, sizeof buf), "t.toml:6:1");
    cr_assert_str_eq(config_enum_name("rtm", "strategy", STRAT_RANDOM), "random");
    config_free(&cfg);
}

Test(config, relative_paths_resolve_against_the_config_folder)
{
    char *dir = test_tmpdir();
    char sub[512];
    snprintf(sub, sizeof sub, "%s/conf", dir);
    mkdir(sub, 0755);
    free(test_write_file(sub, "v.bin", "x"));
    char *path = test_write_file(sub, "a.toml", INPUT_OK "[model]\ntype = \"raw\"\nfile = \"v.bin\"\n");
    struct sl_config cfg;
    cr_assert_eq(config_load(path, &cfg), 0, "%s", err_msg());
    char want[600];
    snprintf(want, sizeof want, "%s/v.bin", sub);
    cr_assert_str_eq(cfg.model.file, want);
    config_free(&cfg);
    free(path);
    test_rmtree(dir);
    free(dir);
}

Test(config, fingerprint_follows_numbers_not_logging)
{
    struct sl_config a, b, c;
    cr_assert_eq(config_load_string(INPUT_OK "[log]\nlevel = \"debug\"\n", "a", &a), 0);
    cr_assert_eq(config_load_string(INPUT_OK "[log]\nlevel = \"warn\"\n", "b", &b), 0);
    cr_assert_eq(config_load_string(INPUT_OK "[propagator]\norder = 6\n", "c", &c), 0);
    cr_assert_eq(config_fingerprint(&a), config_fingerprint(&b));
    cr_assert_neq(config_fingerprint(&a), config_fingerprint(&c));
    config_free(&a);
    config_free(&b);
    config_free(&c);
}

Test(config, suggestions)
{
    cr_assert_eq(suggest_distance("velocty", "velocity"), 1);
    cr_assert_eq(suggest_distance("oredr", "order"), 1); /* a swap counts once */
    const char *names[] = {"order", "dt", "t_max", "cfl", NULL};
    cr_assert_str_eq(suggest_closest("ordr", names, 4, sizeof(char *)), "order");
    cr_assert_null(suggest_closest("zzzzzz", names, 4, sizeof(char *)));
}

/* ---- bad configurations, each with its exact message ------------------- */

struct bad_case {
    const char *text;
    const char *message;
};

static const struct bad_case bad_cases[] = {
    /* 1 misspelt key */
    {INPUT_OK "[model]\nvelocty = 2500\n",
     "bad.toml:4:1: [model] unknown key \"velocty\" (did you mean \"velocity\"?)"},
    /* 2 unknown key, nothing close */
    {INPUT_OK "[propagator]\nbanana = 1\n", "bad.toml:4:1: [propagator] unknown key \"banana\""},
    /* 3 misspelt section */
    {INPUT_OK "[propagatr]\norder = 8\n", "bad.toml:3:2: unknown section [propagatr] (did you mean [propagator]?)"},
    /* 4 unknown section */
    {INPUT_OK "[gizmo]\nx = 1\n", "bad.toml:3:2: unknown section [gizmo]"},
    /* 5 wrong type: string for an integer */
    {INPUT_OK "[propagator]\norder = \"eight\"\n",
     "bad.toml:4:1: [propagator] order: expected an integer, got string"},
    /* 6 float where an integer is needed */
    {INPUT_OK "[propagator]\norder = 8.0\n",
     "bad.toml:4:1: [propagator] order: expected an integer, got float (write it without a decimal point)"},
    /* 7 odd order */
    {INPUT_OK "[propagator]\norder = 7\n",
     "bad.toml:4:1: [propagator] order: 7 is odd: must be an even number from 2 to 16"},
    /* 8 out of range */
    {INPUT_OK "[propagator]\norder = 18\n",
     "bad.toml:4:1: [propagator] order: 18 is out of range: must be in [2, 16]"},
    /* 9 exclusive lower bound */
    {INPUT_OK "[model]\nd = [10, 0, 10]\n",
     "bad.toml:4:10: [model] d: element 2: 0 is out of range: must be in (0, 1e+06]"},
    /* 10 wrong vector length */
    {INPUT_OK "[model]\nn = [10, 10]\n", "bad.toml:4:1: [model] n: expected 3 elements, got 2"},
    /* 11 bad enum value with a suggestion */
    {INPUT_OK "[rtm]\nstrategy = \"bondary\"\n",
     "bad.toml:4:1: [rtm] strategy: \"bondary\" is not one of: auto, full, checkpoint, boundary, random (did you mean \"boundary\"?)"},
    /* 12 boolean expected */
    {INPUT_OK "[propagator]\nfree_surface = \"yes\"\n",
     "bad.toml:4:1: [propagator] free_surface: expected a boolean (true or false), got string"},
    /* 13 missing model file */
    {INPUT_OK "[model]\ntype = \"raw\"\nfile = \"/nonexistent/v.bin\"\n",
     "bad.toml:5:1: [model] file: \"/nonexistent/v.bin\": No such file or directory"},
    /* 14 raw model without a file */
    {INPUT_OK "[model]\ntype = \"raw\"\n", "bad.toml:4:1: [model] type: type \"raw\" needs [model] file"},
    /* 15 TOML syntax error */
    {INPUT_OK "[model]\nvelocity = = 3\n",
     "bad.toml:4:12: TOML syntax error: Error while parsing value: could not determine value type"},
    /* 16 key outside a section */
    {"order = 8\n" INPUT_OK,
     "bad.toml:1:1: key \"order\" is outside any section (put it under [job], [model], ...)"},
    /* 17 bad device */
    {INPUT_OK "[runtime]\ndevice = \"gpu0\"\n",
     "bad.toml:4:1: [runtime] device: \"gpu0\" is not \"auto\", \"cpu\" or \"cuda:N\""},
    /* 18 rtm job without an input */
    {"[job]\nkind = \"rtm\"\n",
     "bad.toml:2:1: [job] kind: job \"rtm\" needs an input: kind = \"zmq\" or \"files\""},
    /* 19 lta not longer than sta */
    {INPUT_OK "[locate]\nsta = 1.0\nlta = 0.5\n",
     "bad.toml:5:1: [locate] lta: lta (0.5 s) must be longer than sta (1 s)"},
    /* 20 points that are not triples */
    {INPUT_OK "[acquisition]\nsources = [[1, 2]]\n",
     "bad.toml:4:12: [acquisition] sources: point 1: expected [x, y, z]"},
    /* 21 layered model with mismatched lists */
    {INPUT_OK "[model]\ntype = \"layered\"\nlayer_depths = [100.0]\nlayer_velocities = [1500.0]\n",
     "bad.toml:6:1: [model] layer_velocities: a layered model needs one velocity more than layer_depths (1 depths, 1 velocities)"},
    /* 22 negative velocity */
    {INPUT_OK "[model]\nvelocity = -1500\n",
     "bad.toml:4:1: [model] velocity: -1500 is out of range: must be in (0, 3.1e+08]"},
    /* 23 band upside down */
    {INPUT_OK "[locate]\nband = [20.0, 5.0]\n",
     "bad.toml:4:1: [locate] band: [20, 5]: the high corner must be above the low one"},
    /* 24 files input without paths */
    {"[input]\nkind = \"files\"\n", "bad.toml:2:1: [input] kind: kind \"files\" needs [input] paths"},
    /* 25 a layered permittivity model with a layer below 1 (the fuzzer's 1e-300 gave an
     * infinite velocity) */
    {INPUT_OK "[model]\ntype = \"layered\"\nquantity = \"permittivity\"\nlayer_depths = [0.5]\n"
              "layer_velocities = [4.0, 1e-300]\n",
     "bad.toml:7:1: [model] layer_velocities: element 2: relative permittivity 1e-300 is below 1 (quantity = "
     "\"permittivity\": the layers hold eps_r)"},
};

Test(config, bad_configs_exact_messages)
{
    size_t n = sizeof bad_cases / sizeof bad_cases[0];
    cr_assert_geq(n, 15);
    for (size_t i = 0; i < n; i++) {
        struct sl_config cfg;
        int rc = config_load_string(bad_cases[i].text, "bad.toml", &cfg);
        cr_expect_lt(rc, 0, "case %zu was accepted", i + 1);
        cr_expect_str_eq(err_msg(), bad_cases[i].message, "case %zu", i + 1);
        config_free(&cfg);
    }
}

Test(config, missing_file)
{
    struct sl_config cfg;
    cr_assert_eq(config_load("/nonexistent/seislive.toml", &cfg), -ENOENT);
    cr_assert_str_eq(err_msg(), "/nonexistent/seislive.toml: cannot open config file: No such file or directory");
    config_free(&cfg);
}

/* [runtime] device is checked by the config itself (conf/ includes nothing from
 * kernels/): it must accept exactly what the backend can resolve (backend_parse). */
Test(config, device_syntax_agrees_with_the_backend)
{
    const char *specs[] = {"auto", "cpu", "cuda:0", "cuda:7", "cuda:0001", "cuda:1023", "cuda:1024",
                           "cuda:99999999999999999999", "cuda:", "cuda:x", "cuda:-1", "cuda:+1", "cuda: 1",
                           "cuda:1x", "cuda:1 ", "CPU", "Auto", "gpu", "gpu0", "cuda0", "", "cpu:0"};
    int accepted = 0;
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        char text[256];
        snprintf(text, sizeof text, INPUT_OK "[runtime]\ndevice = \"%s\"\n", specs[i]);
        struct sl_config cfg;
        bool cfg_ok = config_load_string(text, "dev.toml", &cfg) == 0;
        config_free(&cfg);
        bool is_auto;
        enum sl_device_kind kind;
        int index;
        bool backend_ok = backend_parse(specs[i], &is_auto, &kind, &index) == 0;
        cr_expect_eq(cfg_ok, backend_ok, "device \"%s\": the config %s it, the backend %s it", specs[i],
                     cfg_ok ? "accepts" : "refuses", backend_ok ? "accepts" : "refuses");
        accepted += cfg_ok;
    }
    cr_expect_eq(accepted, 6, "the first six specs are the valid ones");
}
