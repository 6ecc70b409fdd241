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
