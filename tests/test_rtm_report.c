/* `seislive check` for rtm: the memory per strategy and auto's pick, from the config. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "stream/error.h"
#include "stream/job_rtm_report.h"

static char *report(const char *toml, int *rc)
{
    struct sl_config cfg;
    cr_assert_eq(config_load_string(toml, "t.toml", &cfg), 0, "%s", err_msg());
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    *rc = rtm_report(&cfg, f);
    fclose(f);
    config_free(&cfg);
    return buf;
}

Test(rtm_report, memory_per_strategy_and_auto_pick)
{
    const char *base = "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [200, 150, 100]\nd = [10.0, 10.0, 10.0]\n"
                       "[propagator]\norder = 8\nt_max = 2.0\nf_peak = 10.0\n"
                       "[acquisition]\nsources = [[1000.0, 750.0, 10.0]]\nrx_origin = [500.0, 500.0, 10.0]\n"
                       "rx_step = [20.0, 20.0]\nrx_count = [51, 26]\n"
                       "[rtm]\naperture = 200.0\nmemory_budget = %s\n[input]\nkind = \"zmq\"\nendpoint = \"tcp://127.0.0.1:5555\"\n";
    char toml[2048];
    int rc;
    snprintf(toml, sizeof toml, base, "100000.0");
    char *out = report(toml, &rc);
    cr_assert_eq(rc, 0, "%s", err_msg());
    cr_assert_not_null(strstr(out, "full "), "%s", out);
    cr_assert_not_null(strstr(out, "boundary "), "%s", out);
    cr_assert_not_null(strstr(out, "random "), "%s", out);
    /* receivers x 500..1500 + 200 m aperture -> cells 30..170: 141 wide */
    cr_assert_not_null(strstr(out, "sub-volume 141 x"), "%s", out);
    cr_assert_not_null(strstr(out, "auto picks full"), "%s", out);
    free(out);
    snprintf(toml, sizeof toml, base, "600.0");
    out = report(toml, &rc);
    cr_assert_eq(rc, 0, "%s", err_msg());
    cr_assert_null(strstr(out, "auto picks full"), "%s", out);
    cr_assert_not_null(strstr(out, "auto picks "), "%s", out);
    free(out);
}

/* check's report for BASE (a format taking the memory budget and extra [rtm] lines), which
 * must succeed */
static char *strips_report(const char *base, const char *budget, const char *extra)
{
    char toml[2048];
    int rc;
    snprintf(toml, sizeof toml, base, budget, extra);
    char *out = report(toml, &rc);
    cr_assert_eq(rc, 0, "%s", err_msg());
    return out;
}

/* check says where boundary's strips go and why ([rtm] strip_store, host_memory_budget):
 * the device when they fit; with strip_store = "host" the host, and auto then picks
 * boundary under a budget it could not take with the strips on the device; a host budget
 * too small for them is named.  (This machine runs check on the CPU, where "auto" never
 * spills: the CPU's device memory is the host's.) */
Test(rtm_report, boundary_strips_where_and_why)
{
    const char *base = "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [200, 150, 100]\nd = [10.0, 10.0, 10.0]\n"
                       "[propagator]\norder = 8\nt_max = 2.0\nf_peak = 10.0\n"
                       "[acquisition]\nsources = [[1000.0, 750.0, 10.0]]\nrx_origin = [500.0, 500.0, 10.0]\n"
                       "rx_step = [20.0, 20.0]\nrx_count = [51, 26]\n"
                       "[rtm]\naperture = 200.0\nmemory_budget = %s\n%s[input]\nkind = \"zmq\"\n"
                       "endpoint = \"tcp://127.0.0.1:5555\"\n[runtime]\ndevice = \"cpu\"\n";
    char *out = strips_report(base, "100000.0", "");
    cr_assert_not_null(strstr(out, "[rtm] boundary strips (strip_store = \"auto\")"), "%s", out);
    cr_assert_not_null(strstr(out, "; on the device ("), "%s", out);
    free(out);
    /* 600 MiB: boundary's strips (about 1 GiB) do not fit the device; on the CPU auto keeps
     * them there, so it picks without boundary and says why */
    out = strips_report(base, "600.0", "");
    cr_assert_null(strstr(out, "auto picks boundary"), "%s", out);
    cr_assert_not_null(strstr(out, "of strips), more than the 600.0 MiB budget"), "%s", out);
    free(out);
    out = strips_report(base, "600.0", "strip_store = \"host\"\nhost_memory_budget = 100000.0\n");
    cr_assert_not_null(strstr(out, "auto picks boundary"), "%s", out);
    cr_assert_not_null(strstr(out, "in pinned host memory, staged through the device"), "%s", out);
    free(out);
    out = strips_report(base, "600.0", "strip_store = \"host\"\nhost_memory_budget = 10.0\n");
    cr_assert_null(strstr(out, "auto picks boundary"), "%s", out);
    cr_assert_not_null(strstr(out, "more than the 0.01 GiB host budget"), "%s", out);
    free(out);
}
