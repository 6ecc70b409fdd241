/* The status page's endpoints ([output] http; docs/http.md) on a running `seislive run`
 * of a small rtm job: the JSON fields and their types, the PNG slices (signature and
 * size), the token (401 without it), 404 for every other path (traversal included),
 * read-only (405), the request-size limit; and a browser that never reads (SSE
 * connections whose sockets are full) does not change the job's per-shot time. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "io/png_slices.h"
#include "io/wire.h"
#include "tests/http_client.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

#define NTR 12
#define NS 60
#define TOKEN "t0k-3"

static int code_of(int port, const char *path, const char *extra);

static void push_shot(void *push, int k)
{
    struct shot s;
    ts_make_shot(k, NTR, NS, &s);
    cr_assert_eq(wire_send_shot_f32(push, &s, k, 0), 0);
    ts_shot_free(&s);
}

static void wait_shots(int port, const char *token, long shots)
{
    for (int i = 0; i < 600 && http_image_shots(port, token) < shots; i++)
        usleep(100000);
    cr_assert_geq(http_image_shots(port, token), shots, "no image of %ld shots on the page", shots);
}

static void expect_type(json_t *o, const char *key, json_type type)
{
    json_t *v = json_object_get(o, key);
    cr_expect(v != NULL, "status.json has no \"%s\"", key);
    if (v)
        cr_expect(json_typeof(v) == type || (type == JSON_REAL && json_is_number(v)),
                  "status.json \"%s\" has type %d, expected %d", key, (int)json_typeof(v), (int)type);
}

/* A PNG's width and height from its IHDR. */
static void png_size(const struct http_resp *r, unsigned *w, unsigned *h)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    cr_assert_geq(r->len, 24);
    cr_assert_eq(memcmp(r->body, sig, 8), 0, "not a PNG signature");
    cr_assert_eq(memcmp(r->body + 12, "IHDR", 4), 0);
    uint32_t be[2];
    memcpy(be, r->body + 16, 8);
    *w = ntohl(be[0]);
    *h = ntohl(be[1]);
}

static int code_of(int port, const char *path, const char *extra)
{
    struct http_resp r;
    cr_assert_eq(http_get(port, path, extra, &r), 0, "no connection for %s", path);
    int c = r.code;
    http_resp_free(&r);
    return c;
}

/* "units" of /status.json, or -1 while there is none. */
static long status_units(int port)
{
    struct http_resp r;
    if (http_get(port, "/status.json?token=" TOKEN, "", &r) != 0)
        return -1;
    long u = -1;
    json_t *st = r.code == 200 ? json_loads(r.body, 0, NULL) : NULL;
    if (json_is_integer(json_object_get(st, "units")))
        u = (long)json_integer_value(json_object_get(st, "units"));
    json_decref(st);
    http_resp_free(&r);
    return u;
}

Test(http_status, endpoints_token_paths_and_types, .timeout = 90)
{
    char *dir = test_tmpdir();
    char ep_in[600], ep_out[600], log[600];
    pid_t pid = http_spawn_rtm(dir, "http = \"127.0.0.1:0\"\nhttp_token = \"" TOKEN "\"\n", 0.2, ep_in,
                               ep_out, log, sizeof log);
    int port = http_wait_port(log, pid);
    cr_assert_gt(port, 0, "no status page in %s", log);
    void *z = zmq_ctx_new();
    void *push = ts_push(z, ep_in);
    push_shot(push, 0);
    push_shot(push, 1);
    wait_shots(port, TOKEN, 2);
    /* the first status comes metrics_interval after the start, and one counting both shots
     * up to metrics_interval after the image that holds them */
    for (int i = 0; i < 100 && status_units(port) < 2; i++)
        usleep(100000);

    /* The token: nothing without it or with a wrong one, by every way of giving it. */
    cr_expect_eq(code_of(port, "/status.json", ""), 401);
    cr_expect_eq(code_of(port, "/", ""), 401);
    cr_expect_eq(code_of(port, "/image/y.png", ""), 401);
    cr_expect_eq(code_of(port, "/stream", ""), 401);
    cr_expect_eq(code_of(port, "/status.json?token=t0k-4", ""), 401);
    cr_expect_eq(code_of(port, "/status.json?token=t0k", ""), 401);
    cr_expect_eq(code_of(port, "/status.json", "Authorization: Bearer wrong\r\n"), 401);
    cr_expect_eq(code_of(port, "/status.json", "Authorization: Bearer " TOKEN "\r\n"), 200);
    cr_expect_eq(code_of(port, "/status.json", "X-Seislive-Token: " TOKEN "\r\n"), 200);
    cr_expect_eq(code_of(port, "/?token=" TOKEN, ""), 200);

    /* Only the known paths; no files, whatever the path says. */
    const char *bad[] = {"/../etc/passwd", "/%2e%2e/etc/passwd", "/image/../../etc/passwd", "/etc/passwd",
                         "/image/w.png", "/status.json/", "/index.html", "/image/y.png/..", "//status.json"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s%stoken=" TOKEN, bad[i], strchr(bad[i], '?') ? "&" : "?");
        cr_expect_eq(code_of(port, path, ""), 404, "%s", bad[i]);
    }
    /* Read-only: other methods are refused, bodies too. */
    struct http_resp r;
    cr_assert_eq(http_raw(port, "POST /status.json?token=" TOKEN " HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                                "Connection: close\r\n\r\nabc", &r, 5000), 0);
    cr_expect_eq(r.code, 405);
    http_resp_free(&r);
    cr_assert_eq(http_raw(port, "DELETE /?token=" TOKEN " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                          &r, 5000), 0);
    cr_expect_eq(r.code, 405);
    http_resp_free(&r);
    /* A request larger than the limit gets no page. */
    size_t big = 64 * 1024;
    char *req = malloc(big + 256);
    int k = snprintf(req, big + 256, "GET /status.json?token=" TOKEN " HTTP/1.1\r\nHost: x\r\nX-Pad: ");
    memset(req + k, 'a', big);
    strcpy(req + k + big, "\r\nConnection: close\r\n\r\n");
    cr_assert_eq(http_raw(port, req, &r, 5000), 0);
    cr_expect(r.code != 200, "a %zu-byte request was answered %d", big, r.code);
    printf("http_status: a %zu KiB request header is answered %d\n", big / 1024, r.code);
    http_resp_free(&r);
    free(req);

    /* status.json: the fields and their types. */
    cr_assert_eq(http_get(port, "/status.json?token=" TOKEN, "", &r), 0);
    cr_assert_eq(r.code, 200);
    cr_expect(strstr(r.head, "Content-Type: application/json") != NULL, "%s", r.head);
    json_t *st = json_loads(r.body, 0, NULL);
    cr_assert(json_is_object(st), "status.json: %s", r.body);
    cr_expect_str_eq(json_string_value(json_object_get(st, "job")), "rtm");
    expect_type(st, "health", JSON_STRING);
    expect_type(st, "units", JSON_INTEGER);
    expect_type(st, "rejected", JSON_INTEGER);
    expect_type(st, "dropped", JSON_INTEGER);
    expect_type(st, "rate", JSON_REAL);
    expect_type(st, "latency_ms", JSON_REAL);
    expect_type(st, "uptime_s", JSON_REAL);
    expect_type(st, "version", JSON_STRING);
    expect_type(st, "config_fingerprint", JSON_STRING);
    expect_type(st, "stage_ms", JSON_OBJECT);
    expect_type(st, "unit_ms", JSON_OBJECT);
    expect_type(st, "drops", JSON_OBJECT);
    expect_type(st, "rejects", JSON_OBJECT);
    expect_type(st, "topics", JSON_OBJECT);
    cr_expect_geq(json_integer_value(json_object_get(st, "units")), 2);
    cr_expect_gt(json_number_value(json_object_get(st, "uptime_s")), 0);
    cr_expect_eq(strlen(json_string_value(json_object_get(st, "config_fingerprint"))), 16);
    cr_expect(json_is_number(json_object_get(json_object_get(st, "unit_ms"), "mean")));
    cr_expect(json_is_integer(json_object_get(json_object_get(st, "rejects"), "bad JSON")));
    cr_expect(json_is_number(json_object_get(json_object_get(st, "stage_ms"), "compute")));
    json_decref(st);
    http_resp_free(&r);

    cr_assert_eq(http_get(port, "/events.json?token=" TOKEN, "", &r), 0);
    cr_expect_eq(r.code, 200);
    json_t *ev = json_loads(r.body, 0, NULL);
    cr_expect(json_is_array(ev), "events.json: %s", r.body);
    json_decref(ev);
    http_resp_free(&r);

    /* The slices: PNGs drawn by io/picture.h, and beside each its layout
     * (/image/A.json): the same size as the PNG, the plot inside it, the plot's edges in
     * metres spanning the section's cells (n - 1 to n spacings), and the plot's aspect
     * that of the section in metres. */
    cr_assert_eq(http_get(port, "/image.json?token=" TOKEN, "", &r), 0);
    json_t *ij = json_loads(r.body, 0, NULL);
    cr_assert_not_null(ij, "image.json: %s", r.body);
    double dd[3];
    for (int k = 0; k < 3; k++)
        dd[k] = json_number_value(json_array_get(json_object_get(ij, "d"), (size_t)k));
    json_decref(ij);
    http_resp_free(&r);
    const int n[3] = {24, 20, 14};
    const struct {
        const char *path, *lay;
        int hk, vk; /* the axes across and down the section */
    } pngs[] = {{"/image/x.png", "/image/x.json", 1, 2}, {"/image/y.png", "/image/y.json", 0, 2},
                {"/image/z.png", "/image/z.json", 0, 1}, {"/image/y.png?i=3", "/image/y.json?i=3", 0, 2},
                {"/image/z.png?i=99", "/image/z.json?i=99", 0, 1}};
    for (size_t i = 0; i < sizeof pngs / sizeof *pngs; i++) {
        char path[128];
        unsigned w, h;
        snprintf(path, sizeof path, "%s%stoken=" TOKEN, pngs[i].path, strchr(pngs[i].path, '?') ? "&" : "?");
        cr_assert_eq(http_get(port, path, "", &r), 0);
        cr_assert_eq(r.code, 200, "%s: %d", pngs[i].path, r.code);
        cr_expect(strstr(r.head, "Content-Type: image/png") != NULL);
        png_size(&r, &w, &h);
        http_resp_free(&r);
        snprintf(path, sizeof path, "%s%stoken=" TOKEN, pngs[i].lay, strchr(pngs[i].lay, '?') ? "&" : "?");
        cr_assert_eq(http_get(port, path, "", &r), 0);
        cr_assert_eq(r.code, 200, "%s: %d", pngs[i].lay, r.code);
        json_t *l = json_loads(r.body, 0, NULL);
        cr_assert_not_null(l, "%s: %s", pngs[i].lay, r.body);
        cr_expect_eq(json_integer_value(json_object_get(l, "width")), (json_int_t)w, "%s", pngs[i].lay);
        cr_expect_eq(json_integer_value(json_object_get(l, "height")), (json_int_t)h, "%s", pngs[i].lay);
        double pl[4];
        for (int k = 0; k < 4; k++)
            pl[k] = json_number_value(json_array_get(json_object_get(l, "plot"), (size_t)k));
        cr_expect(pl[0] > 0 && pl[1] > 0 && pl[0] + pl[2] < w && pl[1] + pl[3] < h, "%s: plot %g %g %g %g in %u x %u",
                  pngs[i].lay, pl[0], pl[1], pl[2], pl[3], w, h);
        const double sh = fabs(json_number_value(json_object_get(l, "h1")) - json_number_value(json_object_get(l, "h0")));
        const double sv = fabs(json_number_value(json_object_get(l, "v1")) - json_number_value(json_object_get(l, "v0")));
        const int hk = pngs[i].hk, vk = pngs[i].vk;
        cr_expect(sh >= (n[hk] - 1) * dd[hk] - 1e-6 && sh <= n[hk] * dd[hk] + 1e-6, "%s: %g m across", pngs[i].lay, sh);
        cr_expect(sv >= (n[vk] - 1) * dd[vk] - 1e-6 && sv <= n[vk] * dd[vk] + 1e-6, "%s: %g m down", pngs[i].lay, sv);
        cr_expect(fabs(pl[2] / pl[3] - sh / sv) < 0.05 * sh / sv, "%s: plot %g x %g px for %g x %g m", pngs[i].lay,
                  pl[2], pl[3], sh, sv);
        json_decref(l);
        http_resp_free(&r);
    }
    cr_expect_eq(code_of(port, "/image/y.png?i=abc&token=" TOKEN, ""), 400);

    /* The stream starts with what there is: the job, the status, the image. */
    cr_assert_eq(http_raw(port, "GET /stream HTTP/1.1\r\nHost: x\r\nX-Seislive-Token: " TOKEN "\r\n\r\n", &r, 1500),
                 0);
    cr_expect_eq(r.code, 200);
    cr_expect(strstr(r.head, "text/event-stream") != NULL, "%s", r.head);
    cr_expect(strstr(r.body, "event: hello\ndata: rtm\n\n") != NULL, "%s", r.body);
    cr_expect(strstr(r.body, "event: status\ndata: {") != NULL);
    cr_expect(strstr(r.body, "event: image\ndata: {") != NULL);
    http_resp_free(&r);

    cr_assert_eq(wire_send_end(push, 0), 0);
    cr_assert_eq(ts_wait(pid, 60), 0, "seislive run failed (see %s)", log);
    zmq_close(push);
    zmq_ctx_term(z);
    test_rmtree(dir);
    free(dir);
}

/* The mean compute time per shot that the run printed in its metrics table (ms). */
static double compute_mean_ms(const char *log)
{
    FILE *f = fopen(log, "r");
    cr_assert(f);
    char line[1024];
    double ms = -1;
    while (fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "| compute |");
        long n;
        if (p && sscanf(p, "| compute | %ld | %lf", &n, &ms) == 2)
            break;
    }
    fclose(f);
    cr_assert_gt(ms, 0, "no compute line in %s", log);
    return ms;
}

/* NSHOTS shots through a run with the page on; with STUCK connections that ask for the
 * stream and never read (their receive buffers made small, and full before the shots). */
static double run_with_stuck(int stuck, int nshots)
{
    char *dir = test_tmpdir();
    char ep_in[600], ep_out[600], log[600];
    pid_t pid = http_spawn_rtm(dir, "http = \"127.0.0.1:0\"\n", 0.02, ep_in, ep_out, log, sizeof log);
    int port = http_wait_port(log, pid);
    cr_assert_gt(port, 0, "no status page in %s", log);
    int fds[8];
    cr_assert_leq(stuck, 8);
    for (int i = 0; i < stuck; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        int small = 4096;
        setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        cr_assert_eq(connect(fds[i], (struct sockaddr *)&sa, sizeof sa), 0);
        const char *req = "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n";
        cr_assert_eq(send(fds[i], req, strlen(req), 0), (ssize_t)strlen(req));
    }
    /* Full: what waits in each socket has stopped growing while statuses go on. */
    for (int i = 0; i < stuck; i++) {
        int last = -1, q = 0, stable = 0;
        for (int t = 0; t < 300 && stable < 5; t++) {
            usleep(100000);
            ioctl(fds[i], FIONREAD, &q);
            stable = q > 0 && q == last ? stable + 1 : 0;
            last = q;
        }
        cr_assert_geq(stable, 5, "connection %d: its socket never filled (%d bytes waiting)", i, q);
        if (i == 0)
            printf("http_status: a stuck reader's socket holds %d bytes and takes no more\n", q);
    }
    void *z = zmq_ctx_new();
    void *push = ts_push(z, ep_in);
    void *sub = ts_sub(z, ep_out, "image", 0);
    usleep(200000);
    for (int k = 0; k < nshots; k++) {
        push_shot(push, k);
        struct ts_msg m;
        cr_assert_eq(ts_recv_image(sub, k + 1, false, &m, 60000), 0, "no image after shot %d", k);
        ts_msg_free(&m);
    }
    cr_assert_eq(wire_send_end(push, 0), 0);
    cr_assert_eq(ts_wait(pid, 60), 0, "seislive run failed (see %s)", log);
    double ms = compute_mean_ms(log);
    for (int i = 0; i < stuck; i++)
        close(fds[i]);
    zmq_close(push);
    zmq_close(sub);
    zmq_ctx_term(z);
    test_rmtree(dir);
    free(dir);
    return ms;
}

Test(http_status, a_reader_that_never_reads_does_not_slow_the_job, .timeout = 120)
{
    const int nshots = 6;
    double free_ms = run_with_stuck(0, nshots);
    double stuck_ms = run_with_stuck(6, nshots);
    printf("http_status: per-shot compute %.1f ms with no page reader, %.1f ms with 6 stuck SSE readers "
           "(ratio %.2f)\n", free_ms, stuck_ms, stuck_ms / free_ms);
    /* Generous: two CPU runs on a shared machine differ by tens of per cent anyway. */
    cr_expect_lt(stuck_ms, 2.0 * free_ms + 20.0, "%.1f ms per shot with stuck readers, %.1f ms without",
                 stuck_ms, free_ms);
}

/* Gone: no such process, or a zombie nobody reaped yet (it runs nothing). */
static bool process_gone(pid_t pid)
{
    char path[64], st[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true;
    size_t n = fread(st, 1, sizeof st - 1, f);
    fclose(f);
    st[n] = '\0';
    const char *p = strrchr(st, ')'); /* "pid (comm) S ..." */
    return p && (p[2] == 'Z' || p[2] == 'X');
}

/* A test that fails mid-way ends its process with its `seislive run` child still
 * running (seen: the orphan held the runner's stdout open and hung the run).  Here a
 * stand-in for a test process starts a run with the page on, waits for the page, and
 * exits as a failed assertion would; the run must die with it. */
Test(http_status, a_failed_test_leaves_no_seislive_run_behind, .timeout = 60)
{
    char *dir = test_tmpdir();
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    fflush(NULL);
    pid_t tester = fork(); /* a plain fork: the stand-in's own end is what is tested */
    cr_assert_geq(tester, 0);
    if (tester == 0) {
        char ep_in[600], ep_out[600], log[600];
        pid_t run = http_spawn_rtm(dir, "http = \"127.0.0.1:0\"\n", 0.2, ep_in, ep_out, log, sizeof log);
        int port = http_wait_port(log, run);
        pid_t msg[2] = {run, port};
        if (write(fd[1], msg, sizeof msg) != (ssize_t)sizeof msg)
            _exit(2);
        _exit(1); /* as a failed cr_assert ends the test, without waiting for RUN */
    }
    close(fd[1]);
    pid_t msg[2] = {0, 0};
    cr_assert_eq(read(fd[0], msg, sizeof msg), (ssize_t)sizeof msg, "the stand-in never started a run");
    close(fd[0]);
    int st;
    cr_assert_eq(waitpid(tester, &st, 0), tester);
    cr_assert_gt(msg[1], 0, "the run never served its page");
    pid_t run = msg[0];
    bool gone = false;
    for (int i = 0; i < 100 && !(gone = process_gone(run)); i++)
        usleep(50000);
    if (!gone)
        kill(run, SIGKILL); /* do not leave it behind here either */
    cr_expect(gone, "seislive run (pid %d) outlived the test process that started it", (int)run);
    if (gone)
        printf("http_status: the run (pid %d) died with its test process\n", (int)run);
    test_rmtree(dir);
    free(dir);
}
