/* seislive-sub against the real publisher (stream/publisher.c) in this process (issue 12):
 * a deliberately slow subscriber (receive queue of one message, a pause after each)
 * loses most of a burst, the final image and the last events among them; it must say so
 * with the exact count, and end with the final image and every event all the same
 * (fetched again from the publisher's cache).  Event ids are 0-based, as in events.csv. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "io/wire.h"
#include "stream/error.h"
#include "stream/metrics.h"
#include "stream/publisher.h"
#include "tests/support.h"

extern char **environ;

/* Start ARGV with stdout and stderr in files; the pid. */
static pid_t spawn_to(const char *const argv[], const char *out, const char *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    cr_assert_eq(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

/* Exit status of PID within TIMEOUT_S, or -1 (then it is killed). */
static int wait_for(pid_t pid, int timeout_s)
{
    for (int i = 0; i < timeout_s * 50; i++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        usleep(20000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
    fclose(f);
    if (len)
        *len = got;
    return b;
}

enum { N = 32, NX = 32, NY = 32, NZ = 32, NEV = 3 };

Test(sub_hardening, slow_subscriber_reports_exact_misses_and_ends_with_final_image,
     .timeout = 90)
{
    char *dir = test_tmpdir();
    char ep[4200], out[4200], so[4200], se[4200];
    snprintf(ep, sizeof ep, "ipc://%s/pub", dir);
    snprintf(out, sizeof out, "%s/sub", dir);
    snprintf(so, sizeof so, "%s/sub.out", dir);
    snprintf(se, sizeof se, "%s/sub.err", dir);
    void *z = zmq_ctx_new();
    struct metrics m;
    metrics_init(&m);
    struct publisher p;
    /* no periodic status: the messages are exactly the N images, NEV events and the
     * final status, seq 0 .. N + NEV */
    struct publisher_conf c = {.endpoint = ep, .hwm = 1, .job = "rtm", .linger_ms = 20000};
    cr_assert_eq(publisher_start(&p, z, &c, &m), 0, "%s", err_msg());
    const char *argv[] = {test_prog("seislive-sub"), "-o", out, "--no-png", "--no-segy",
                          "--rcvhwm", "1", "--delay", "40", "--idle", "60", ep, NULL};
    pid_t pid = spawn_to(argv, so, se);
    /* the four topic subscriptions have reached the publisher: nothing is published
     * before the subscriber is there */
    for (int i = 0; i < 1000 && atomic_load(&p.subscriptions) < 4; i++)
        usleep(10000);
    cr_assert_geq(atomic_load(&p.subscriptions), 4, "seislive-sub did not subscribe");
    void *cl = publisher_client(&p);
    size_t cells = (size_t)NX * NY * NZ, bytes = cells * sizeof(float);
    for (int k = 0; k < N; k++) {
        float *v = malloc(bytes);
        for (size_t i = 0; i < cells; i++)
            v[i] = (float)(k * 1000) + (float)(i % 97);
        struct wire_volume_hdr h = {.units = k + 1, .n = {NX, NY, NZ}, .d = {10, 10, 10},
                                    .final = k == N - 1};
        char *js = wire_encode_volume(&h);
        void *fr[1] = {v};
        /* the inproc queue holds 64: none of these is dropped inside the publisher */
        cr_assert_eq(publisher_send(&p, cl, "image", js, 0, fr, &bytes, 1, free), 0, "%s",
                     err_msg());
        free(js);
        if (k >= N - NEV - 1 && k < N - 1) {
            struct wire_event e = {.origin_ns = 1767225600000000000LL + k, .x = k, .y = 2, .z = 3,
                                   .strength = 1, .id = k - (N - NEV - 1)};
            js = wire_encode_event(&e);
            cr_assert_eq(publisher_send(&p, cl, "event", js, 0, NULL, NULL, 0, NULL), 0);
            free(js);
        }
    }
    publisher_client_close(cl);
    publisher_stop(&p); /* the final status, then the caches while the subscriber is there */
    int st = wait_for(pid, 60);
    size_t n;
    char *err = slurp(se, &n), *txt = slurp(so, &n);
    cr_assert_eq(st, 0, "seislive-sub: %d\n%s", st, err);
    struct metrics snap;
    metrics_get(&m, &snap);
    cr_assert_eq(snap.pub_dropped + snap.pub_refused + snap.pub_send_failed, 0);

    /* the exact count: every message from the first received to the final status is
     * either received or reported missed */
    const char *line = strstr(err, "messages seq ");
    cr_assert_not_null(line, "no accounting line:\n%s", err);
    long long a, b, got, miss, again;
    cr_assert_eq(sscanf(line, "messages seq %lld..%lld: %lld received, %lld missed, %lld fetched",
                        &a, &b, &got, &miss, &again), 5, "%s", line);
    cr_assert_eq(a, 0, "the subscriber was there before the first message");
    cr_assert_eq(b, N + NEV, "the final status is the last message");
    cr_assert_eq(got + miss, N + NEV + 1);
    cr_assert_gt(miss, 0, "a subscriber this slow must lose messages (or the test is wrong)");
    char want[64];
    snprintf(want, sizeof want, "missed %lld messages", miss);
    cr_assert_not_null(strstr(err, want), "%s", err);

    /* it ends with the final image (its samples), fetched again if it was lost */
    char path[4400];
    snprintf(path, sizeof path, "%s/image_final.f32", out);
    size_t fl = 0;
    char *fin = slurp(path, &fl);
    cr_assert_not_null(fin, "no final image:\n%s", err);
    cr_assert_eq(fl, bytes);
    const float *fv = (const float *)fin;
    for (size_t i = 0; i < cells; i += 1234)
        cr_assert_eq(fv[i], (float)((N - 1) * 1000) + (float)(i % 97), "cell %zu", i);
    cr_assert_not_null(strstr(txt, "final image: 32 shots"), "%s", txt);

    /* and with every event, once each, ids 0-based */
    snprintf(path, sizeof path, "%s/events.jsonl", out);
    char *ev = slurp(path, &n);
    cr_assert_not_null(ev, "no events:\n%s", err);
    int lines = 0;
    for (char *q = ev; *q; q++)
        lines += *q == '\n';
    cr_assert_eq(lines, NEV, "%s\n%s", ev, err);
    for (int k = 0; k < NEV; k++) {
        char idk[32], shown[32];
        snprintf(idk, sizeof idk, "\"id\":%d", k);
        snprintf(shown, sizeof shown, "event %d: ", k);
        cr_assert_not_null(strstr(ev, idk), "%s", ev);
        cr_assert_not_null(strstr(txt, shown), "%s", txt);
    }
    cr_assert_null(strstr(txt, "event 3: "), "%s", txt);
    free(ev);
    free(fin);
    free(err);
    free(txt);
    metrics_destroy(&m);
    zmq_ctx_term(z);
    test_rmtree(dir);
    free(dir);
}

/* Crafted image headers (slice index, size out of range) are refused by seislive-sub
 * with a message naming them, it writes nothing out of its buffers, and goes on to the
 * valid final image. */
Test(sub_hardening, crafted_image_headers_refused_then_final_image, .timeout = 60)
{
    char *dir = test_tmpdir();
    char ep[4200], out[4200], so[4200], se[4200];
    snprintf(ep, sizeof ep, "ipc://%s/pub", dir);
    snprintf(out, sizeof out, "%s/sub", dir);
    snprintf(so, sizeof so, "%s/sub.out", dir);
    snprintf(se, sizeof se, "%s/sub.err", dir);
    void *z = zmq_ctx_new();
    void *x = zmq_socket(z, ZMQ_XPUB);
    int linger = 0, to = 200;
    zmq_setsockopt(x, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(x, ZMQ_RCVTIMEO, &to, sizeof to);
    cr_assert_eq(zmq_bind(x, ep), 0);
    const char *argv[] = {test_prog("seislive-sub"), "-o", out, "--no-png", "--no-segy",
                          "--idle", "30", ep, NULL};
    pid_t pid = spawn_to(argv, so, se);
    int subs = 0;
    for (int i = 0; i < 100 && subs < 4; i++) {
        char b[64];
        if (zmq_recv(x, b, sizeof b, 0) > 0 && b[0] == 1)
            subs++;
    }
    cr_assert_geq(subs, 4);
    /* slices of a 4 x 4 x 4 volume, sized right, at an index far outside it */
    float plane[16] = {0};
    const char *bad[] = {
        "{\"seq\":0,\"shots\":1,\"n\":[4,4,4],\"d\":[1,1,1],\"o\":[0,0,0],\"dtype\":\"f32\","
        "\"final\":false,\"slices\":true,\"at\":[1,1,99999]}",
        "{\"seq\":1,\"shots\":1,\"n\":[4,4,-4],\"d\":[1,1,1],\"o\":[0,0,0],\"dtype\":\"f32\","
        "\"final\":false}",
        "{\"seq\":2,\"shots\":1,\"n\":[4,4,4],\"d\":[1,1,1],\"o\":[0,0,0],\"dtype\":\"f32\","
        "\"final\":false}"}; /* payload of 64 bytes, not 256 */
    for (int i = 0; i < 3; i++) {
        zmq_send(x, "image", 5, ZMQ_SNDMORE);
        zmq_send(x, bad[i], strlen(bad[i]), ZMQ_SNDMORE);
        if (i == 0) {
            zmq_send(x, plane, sizeof plane, ZMQ_SNDMORE);
            zmq_send(x, plane, sizeof plane, ZMQ_SNDMORE);
        }
        zmq_send(x, plane, sizeof plane, 0);
    }
    float vol[64];
    for (int i = 0; i < 64; i++)
        vol[i] = (float)i;
    const char *fin = "{\"seq\":3,\"shots\":2,\"n\":[4,4,4],\"d\":[1,1,1],\"o\":[0,0,0],"
                      "\"dtype\":\"f32\",\"final\":true}";
    zmq_send(x, "image", 5, ZMQ_SNDMORE);
    zmq_send(x, fin, strlen(fin), ZMQ_SNDMORE);
    zmq_send(x, vol, sizeof vol, 0);
    int st = wait_for(pid, 40);
    size_t n;
    char *err = slurp(se, &n);
    cr_assert_eq(st, 0, "seislive-sub: %d\n%s", st, err);
    cr_assert_not_null(strstr(err, "at[2] = 99999"), "%s", err);
    cr_assert_not_null(strstr(err, "n[2] = -4"), "%s", err);
    cr_assert_not_null(strstr(err, "volume seq 2: payload of 64 bytes"), "%s", err);
    char path[4400];
    snprintf(path, sizeof path, "%s/image_final.f32", out);
    char *img = slurp(path, &n);
    cr_assert_not_null(img);
    cr_assert_eq(n, sizeof vol);
    cr_assert_eq(memcmp(img, vol, sizeof vol), 0);
    free(img);
    free(err);
    zmq_close(x);
    zmq_ctx_term(z);
    test_rmtree(dir);
    free(dir);
}

/* A final image sent as three slices ([output] slices_only = true: topic, header and 3
 * plane frames) is written, not ignored: the frame count passed to the payload check
 * was 4 for exactly 3 slices, so every slices image was refused. */
Test(sub_hardening, slices_only_final_image_is_written, .timeout = 60)
{
    char *dir = test_tmpdir();
    char ep[4200], out[4200], so[4200], se[4200];
    snprintf(ep, sizeof ep, "ipc://%s/pub", dir);
    snprintf(out, sizeof out, "%s/sub", dir);
    snprintf(so, sizeof so, "%s/sub.out", dir);
    snprintf(se, sizeof se, "%s/sub.err", dir);
    void *z = zmq_ctx_new();
    void *x = zmq_socket(z, ZMQ_XPUB);
    int linger = 0, to = 200;
    zmq_setsockopt(x, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(x, ZMQ_RCVTIMEO, &to, sizeof to);
    cr_assert_eq(zmq_bind(x, ep), 0);
    const char *argv[] = {test_prog("seislive-sub"), "-o", out, "--no-png", "--no-segy",
                          "--idle", "30", ep, NULL};
    pid_t pid = spawn_to(argv, so, se);
    int subs = 0;
    for (int i = 0; i < 100 && subs < 4; i++) {
        char b[64];
        if (zmq_recv(x, b, sizeof b, 0) > 0 && b[0] == 1)
            subs++;
    }
    cr_assert_geq(subs, 4);
    float px[16], py[16], pz[16];
    for (int i = 0; i < 16; i++)
        px[i] = 1.0f + i, py[i] = 100.0f + i, pz[i] = 200.0f + i;
    const char *fin = "{\"seq\":0,\"shots\":2,\"n\":[4,4,4],\"d\":[1,1,1],\"o\":[0,0,0],"
                      "\"dtype\":\"f32\",\"final\":true,\"slices\":true,\"at\":[1,2,3]}";
    zmq_send(x, "image", 5, ZMQ_SNDMORE);
    zmq_send(x, fin, strlen(fin), ZMQ_SNDMORE);
    /* frames: the depth slice (x-y at iz), then x-z at iy, then y-z at ix */
    zmq_send(x, pz, sizeof pz, ZMQ_SNDMORE);
    zmq_send(x, py, sizeof py, ZMQ_SNDMORE);
    zmq_send(x, px, sizeof px, 0);
    int st = wait_for(pid, 40);
    size_t n;
    char *err = slurp(se, &n);
    cr_assert_eq(st, 0, "seislive-sub: %d\n%s", st, err);
    cr_assert_null(strstr(err, "ignored"), "%s", err);
    char path[4400];
    snprintf(path, sizeof path, "%s/image_final.f32", out);
    float *img = (float *)slurp(path, &n);
    cr_assert_not_null(img, "no final image written\n%s", err);
    cr_assert_eq(n, 64 * sizeof(float));
    /* the depth slice (iz = 3) holds pz, x fastest, where the other two do not cross it */
    for (int i = 0; i < 16; i++)
        if (i % 4 != 1 && i / 4 != 2)
            cr_assert_eq(img[3 * 16 + i], pz[i], "depth slice cell %d", i);
    cr_assert_eq(img[(0 * 4 + 2) * 4 + 0], py[0], "x-z slice at iy = 2");
    cr_assert_eq(img[(0 * 4 + 0) * 4 + 1], px[0], "y-z slice at ix = 1");
    free(img);
    free(err);
    zmq_close(x);
    zmq_ctx_term(z);
    test_rmtree(dir);
    free(dir);
}
