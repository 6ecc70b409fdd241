/* The status's survey length and time left (units_total, eta_s; docs/http.md): a file
 * input knows its length (estimated from the share of its bytes read, exact at the
 * last shot), a stream knows it from [input] expected_shots. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "io/wire.h"
#include "tests/http_client.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

#define NTR 12
#define NS 60

/* /status.json's units, units_total (-1: absent) and eta_s (-1: absent); false when
 * there is no status (yet). */
static bool status_of(int port, long *units, long *total, double *eta)
{
    struct http_resp r;
    bool ok = false;
    if (http_get(port, "/status.json", "", &r) == 0 && r.code == 200) {
        json_t *o = json_loads(r.body, 0, NULL);
        json_t *t = json_object_get(o, "units_total"), *e = json_object_get(o, "eta_s");
        *units = (long)json_integer_value(json_object_get(o, "units"));
        *total = json_is_integer(t) ? (long)json_integer_value(t) : -1;
        *eta = json_is_number(e) ? json_number_value(e) : -1;
        ok = o != NULL;
        json_decref(o);
    }
    http_resp_free(&r);
    return ok;
}

Test(http_eta, a_file_input_knows_its_length, .timeout = 90)
{
    char *dir = test_tmpdir();
    /* Two files of shots of one size: the share of bytes read gives the count to within
     * the files' headers (3600 bytes each, 6 % of these small files, but 60 % of one of
     * their 5760-byte shots: the first shots' estimates are low, 13 after one) and
     * exactly at the last shot (the test's shots beyond 20 would leave its model). */
    int ks[20];
    for (int i = 0; i < 20; i++)
        ks[i] = i;
    char f1[600], f2[600], log[600], text[4096];
    snprintf(f1, sizeof f1, "%s/a.sgy", dir);
    snprintf(f2, sizeof f2, "%s/b.sgy", dir);
    cr_assert_eq(ts_write_segy(f1, ks, 8, NTR, NS, 5), 0);
    cr_assert_eq(ts_write_segy(f2, ks + 8, 12, NTR, NS, 5), 0);
    snprintf(log, sizeof log, "%s/run.log", dir);
    snprintf(text, sizeof text,
             TS_SMALL_RTM_CFG "metrics_interval = 0.02\n[log]\nlevel = \"info\"\n"
                              "[input]\nkind = \"files\"\npaths = [\"%s\", \"%s\"]\n"
                              "[output]\nendpoint = \"ipc://%s/out\"\ndir = \"%s/files\"\n"
                              "http = \"127.0.0.1:0\"\nhttp_keep = 30.0\n",
             f1, f2, dir, dir);
    char *cfg = test_write_file(dir, "rtm.toml", text);
    pid_t pid = ts_spawn_run(cfg, log);
    int port = http_wait_port(log, pid);
    cr_assert_gt(port, 0, "no status page in %s", log);
    long units = 0, total = -1, seen_mid = 0, last_total = -1;
    double eta = -1;
    for (int i = 0; i < 3000; i++) {
        if (status_of(port, &units, &total, &eta)) {
            if (total >= 0) {
                cr_expect(total >= units && total <= 20, "units_total %ld after %ld shots; the files hold 20",
                          total, units);
                if (units >= 4) /* the header's share has shrunk: 5 shots and one header read */
                    cr_expect(total >= 18, "units_total %ld after %ld shots; the files hold 20", total, units);
                last_total = total;
            }
            if (total > 0 && units > 0 && units < total) {
                cr_expect_gt(eta, 0.0, "eta_s %g with %ld of %ld shots stacked", eta, units, total);
                if (!seen_mid++)
                    printf("http_eta: files: %ld of %ld shots, eta_s %.2f\n", units, total, eta);
            }
            if (units == 20)
                break;
        }
        usleep(10000);
    }
    cr_expect_eq(units, 20);
    cr_expect_eq(last_total, 20, "the status at the end says %ld shots, the files hold 20", last_total);
    cr_expect_gt(seen_mid, 0, "no status in the middle of the run had units_total and eta_s");
    cr_expect_eq(eta, 0.0, "eta_s %g at the end", eta);
    kill(pid, SIGTERM); /* ends http_keep */
    cr_assert_eq(ts_wait(pid, 30), 0, "seislive run failed (see %s)", log);
    free(cfg);
    if (!getenv("SEISLIVE_KEEP_ETA_TEST"))
        test_rmtree(dir);
    else
        printf("http_eta: kept %s\n", dir);
    free(dir);
}

Test(http_eta, a_stream_knows_its_length_from_expected_shots, .timeout = 90)
{
    char *dir = test_tmpdir();
    char log[600], ep_in[600], text[4096];
    snprintf(log, sizeof log, "%s/run.log", dir);
    snprintf(ep_in, sizeof ep_in, "ipc://%s/in", dir);
    snprintf(text, sizeof text,
             TS_SMALL_RTM_CFG "metrics_interval = 0.05\n[log]\nlevel = \"info\"\n"
                              "[input]\nkind = \"zmq\"\nendpoint = \"%s\"\nslots = 2\nslot_mib = 1.0\n"
                              "expected_shots = 5\n"
                              "[output]\nendpoint = \"ipc://%s/out\"\ndir = \"%s/files\"\n"
                              "http = \"127.0.0.1:0\"\n",
             ep_in, dir, dir);
    char *cfg = test_write_file(dir, "rtm.toml", text);
    pid_t pid = ts_spawn_run(cfg, log);
    int port = http_wait_port(log, pid);
    cr_assert_gt(port, 0, "no status page in %s", log);
    long units = 0, total = -1;
    double eta = -1;
    for (int i = 0; i < 100 && !status_of(port, &units, &total, &eta); i++)
        usleep(50000);
    cr_expect_eq(total, 5, "units_total %ld before any shot; expected_shots = 5", total);
    void *z = zmq_ctx_new();
    void *push = ts_push(z, ep_in);
    for (int k = 0; k < 2; k++) {
        struct shot s;
        ts_make_shot(k, NTR, NS, &s);
        cr_assert_eq(wire_send_shot_f32(push, &s, k, 0), 0);
        ts_shot_free(&s);
    }
    for (int i = 0; i < 600 && !(status_of(port, &units, &total, &eta) && units == 2); i++)
        usleep(20000);
    cr_assert_eq(units, 2);
    cr_expect_eq(total, 5);
    cr_expect_gt(eta, 0.0, "eta_s %g after 2 of 5 shots", eta);
    printf("http_eta: stream: %ld of %ld shots, eta_s %.2f\n", units, total, eta);
    cr_assert_eq(wire_send_end(push, 0), 0);
    cr_assert_eq(ts_wait(pid, 60), 0, "seislive run failed (see %s)", log);
    zmq_close(push);
    zmq_ctx_term(z);
    free(cfg);
    test_rmtree(dir);
    free(dir);
}
