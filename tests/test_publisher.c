/* The publisher in-process (issue 12): a message with more payload frames than it can
 * carry is refused and counted, never truncated, and every payload handed over is freed
 * on every path; a CURVE key that this libzmq cannot apply is a start-up error, not a
 * plain-text socket that logs "(CURVE)". */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "conf/config.h"
#include "io/wire.h"
#include "stream/error.h"
#include "stream/metrics.h"
#include "stream/publisher.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

static atomic_int g_freed;

static void count_free(void *p)
{
    atomic_fetch_add(&g_freed, 1);
    free(p);
}

Test(publisher, too_many_frames_refused_counted_and_all_freed, .timeout = 30)
{
    char *dir = test_tmpdir();
    char ep[4200];
    snprintf(ep, sizeof ep, "ipc://%s/pub", dir);
    void *z = zmq_ctx_new();
    struct metrics m;
    metrics_init(&m);
    struct publisher p;
    struct publisher_conf c = {.endpoint = ep, .hwm = 100, .job = "rtm"};
    cr_assert_eq(publisher_start(&p, z, &c, &m), 0, "%s", err_msg());
    void *sub = ts_sub(z, ep, "", 1000);
    usleep(200000); /* the subscription reaches the XPUB socket */
    void *cl = publisher_client(&p);
    cr_assert_not_null(cl);

    atomic_store(&g_freed, 0);
    enum { MANY = 20 };
    void *pl[MANY];
    size_t bytes[MANY];
    for (int i = 0; i < MANY; i++) {
        pl[i] = malloc(16);
        memset(pl[i], i, 16);
        bytes[i] = 16;
    }
    int rc = publisher_send(&p, cl, "image", "{\"shots\":1}", 0, pl, bytes, MANY, count_free);
    cr_assert_lt(rc, 0, "a message of %d payload frames was accepted (truncated?)", MANY);
    cr_assert(strstr(err_msg(), "frames") != NULL, "%s", err_msg());
    cr_assert_eq(atomic_load(&g_freed), MANY, "a refused message must free all its payloads");
    struct metrics snap;
    metrics_get(&m, &snap);
    cr_assert_eq(snap.pub_refused, 1);

    /* a message that fits goes out whole, and its payloads are freed once sent */
    void *ok[2] = {malloc(8), malloc(12)};
    size_t okb[2] = {8, 12};
    memset(ok[0], 1, 8);
    memset(ok[1], 2, 12);
    cr_assert_eq(publisher_send(&p, cl, "coherence", "{\"shots\":2}", 0, ok, okb, 2, count_free), 0,
                 "%s", err_msg());
    struct ts_msg msg;
    int got = -1;
    for (int k = 0; k < 50 && got < 0; k++) {
        if (ts_recv(sub, &msg, 200) < 0)
            continue;
        if (strcmp(msg.topic, "coherence") == 0)
            got = msg.nframes;
        ts_msg_free(&msg);
    }
    cr_assert_eq(got, 4, "topic + header + 2 payload frames");
    publisher_client_close(cl);
    zmq_close(sub);
    publisher_stop(&p);
    cr_assert_eq(atomic_load(&g_freed), MANY + 2);
    metrics_destroy(&m);
    zmq_ctx_term(z);
    test_rmtree(dir);
    free(dir);
}

/* With CURVE keys configured and a libzmq that cannot apply them, the start fails and
 * says why (simulated: wire_force_no_curve stands for a libzmq built without CURVE). */
Test(publisher, curve_configured_but_unavailable_is_a_start_error, .timeout = 30)
{
    char *dir = test_tmpdir();
    char ep[4200], pub[41], sec[41];
    snprintf(ep, sizeof ep, "ipc://%s/pub", dir);
    cr_assert_eq(zmq_curve_keypair(pub, sec), 0);
    char line[64];
    snprintf(line, sizeof line, "%s\n", pub);
    char *clients = test_write_file(dir, "clients", line);
    void *z = zmq_ctx_new();
    struct metrics m;
    metrics_init(&m);
    struct publisher p;
    struct publisher_conf c = {.endpoint = ep, .hwm = 10, .curve_secret = sec,
                               .curve_public = pub, .curve_clients = clients, .job = "rtm"};
    wire_force_no_curve(true);
    int rc = publisher_start(&p, z, &c, &m);
    wire_force_no_curve(false);
    cr_assert_lt(rc, 0, "started in plain text with CURVE keys configured");
    cr_assert(strstr(err_msg(), "CURVE") != NULL, "%s", err_msg());
    /* and with CURVE available, the same configuration starts */
    if (wire_has_curve()) {
        cr_assert_eq(publisher_start(&p, z, &c, &m), 0, "%s", err_msg());
        publisher_stop(&p);
    }
    metrics_destroy(&m);
    zmq_ctx_term(z);
    free(clients);
    test_rmtree(dir);
    free(dir);
}

/* A curve_clients line longer than the read buffer is an error naming the line: split,
 * its tail was read as a line of its own, so a key at the end of a long comment (a
 * revoked one) was allowed (review of the 2026-11-25 fuzz campaign). */
Test(publisher, curve_clients_overlong_line_is_an_error, .timeout = 30)
{
    if (!wire_has_curve())
        cr_skip_test("this libzmq has no CURVE");
    char *dir = test_tmpdir();
    char ep[4200], pub[41], sec[41], other[41], osec[41];
    snprintf(ep, sizeof ep, "ipc://%s/pub", dir);
    cr_assert_eq(zmq_curve_keypair(pub, sec), 0);
    cr_assert_eq(zmq_curve_keypair(other, osec), 0);
    char text[600];
    int k = snprintf(text, sizeof text, "%s\n# revoked:", pub);
    memset(text + k, ' ', 260);
    snprintf(text + k + 260, sizeof text - (size_t)k - 260, "%s\n", other);
    char *clients = test_write_file(dir, "clients", text);
    void *z = zmq_ctx_new();
    struct metrics m;
    metrics_init(&m);
    struct publisher p;
    struct publisher_conf c = {.endpoint = ep, .hwm = 10, .curve_secret = sec,
                               .curve_public = pub, .curve_clients = clients, .job = "rtm"};
    cr_assert_lt(publisher_start(&p, z, &c, &m), 0, "a key from the tail of a comment was taken");
    cr_assert_not_null(strstr(err_msg(), "clients:2: line longer than 254 characters"), "%s", err_msg());
    metrics_destroy(&m);
    zmq_ctx_term(z);
    free(clients);
    test_rmtree(dir);
    free(dir);
}

/* `seislive check` (config_load) refuses CURVE keys this libzmq cannot apply, naming the
 * key and its line. */
Test(publisher, check_refuses_curve_keys_without_curve)
{
    char pub[41], sec[41];
    cr_assert_eq(zmq_curve_keypair(pub, sec), 0);
    char *dir = test_tmpdir();
    char *clients = test_write_file(dir, "clients", "");
    char text[2048];
    snprintf(text, sizeof text,
             TS_SMALL_RTM_CFG "[input]\nkind = \"zmq\"\nendpoint = \"ipc://%s/in\"\n"
             "[output]\nendpoint = \"ipc://%s/out\"\ncurve_secret_key = \"%s\"\n"
             "curve_public_key = \"%s\"\ncurve_clients = \"%s\"\n",
             dir, dir, sec, pub, clients);
    struct sl_config cfg;
    wire_force_no_curve(true);
    int rc = config_load_string(text, "curve.toml", &cfg);
    wire_force_no_curve(false);
    config_free(&cfg); /* the caller frees, loaded or not */
    cr_assert_lt(rc, 0, "a CURVE key was accepted by a libzmq without CURVE");
    cr_assert(strstr(err_msg(), "curve.toml:") != NULL, "%s", err_msg());
    cr_assert(strstr(err_msg(), "curve_secret_key") != NULL, "%s", err_msg());
    cr_assert(strstr(err_msg(), "CURVE") != NULL, "%s", err_msg());
    if (wire_has_curve()) {
        cr_assert_eq(config_load_string(text, "curve.toml", &cfg), 0, "%s", err_msg());
        config_free(&cfg);
    }
    free(clients);
    test_rmtree(dir);
    free(dir);
}
