/* The status page updates live, without a reload: headless Chromium driven over the
 * DevTools protocol (--remote-debugging-pipe: CDP messages as NUL-terminated JSON on
 * file descriptors 3 and 4, so no WebSocket client is needed) loads the page once; a
 * new shot is then pushed into the running job, and the same document (a mark set in
 * its window survives, one navigation entry) must show the new shot count and a new
 * section source.  A missing `chromium` is a failure, not a skip. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "io/wire.h"
#include "tests/http_client.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

struct cdp {
    pid_t pid;
    int to, from;          /* our ends: write commands, read answers and events */
    char *buf;             /* what was read and not yet used */
    size_t len, cap;
    int next_id;
    char session[128];
};

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void cdp_start(struct cdp *c, const char *dir)
{
    const char *exe = access("/usr/bin/chromium", X_OK) == 0 ? "/usr/bin/chromium" : "/usr/lib/chromium/chromium";
    cr_assert(access(exe, X_OK) == 0, "chromium is missing: the live page test needs it (tools/install-deps.sh)");
    int in[2], out[2];
    cr_assert_eq(pipe(in), 0);
    cr_assert_eq(pipe(out), 0);
    char profile[600], log[600];
    snprintf(profile, sizeof profile, "--user-data-dir=%s/chromium-live", dir);
    snprintf(log, sizeof log, "%s/chromium-live.log", dir);
    memset(c, 0, sizeof *c);
    c->pid = test_fork(); /* dies with the test, however it ends */
    cr_assert_geq(c->pid, 0);
    if (c->pid == 0) {
        int fl = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        dup2(fl, 1);
        dup2(fl, 2);
        /* fd 3: commands in, fd 4: answers out (what --remote-debugging-pipe uses) */
        int r = dup(in[0]), w = dup(out[1]);
        dup2(r, 3);
        dup2(w, 4);
        execl(exe, "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
              "--disable-dev-shm-usage", profile, "--window-size=1200,1400", "--remote-debugging-pipe",
              "about:blank", (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    c->to = in[1];
    c->from = out[0];
    c->cap = 1 << 16;
    c->buf = malloc(c->cap);
}

/* The next whole message, within the time left to DEADLINE; NULL on timeout. */
static json_t *cdp_read(struct cdp *c, double deadline)
{
    for (;;) {
        char *nul = memchr(c->buf, '\0', c->len);
        if (nul) {
            json_t *m = json_loadb(c->buf, (size_t)(nul - c->buf), 0, NULL);
            size_t used = (size_t)(nul - c->buf) + 1;
            memmove(c->buf, c->buf + used, c->len - used);
            c->len -= used;
            return m;
        }
        double left = deadline - mono();
        struct pollfd p = {.fd = c->from, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
            return NULL;
        if (c->len + 65536 > c->cap) {
            c->cap = 2 * (c->len + 65536);
            c->buf = realloc(c->buf, c->cap);
        }
        ssize_t k = read(c->from, c->buf + c->len, 65536);
        if (k <= 0)
            return NULL; /* the browser went away */
        c->len += (size_t)k;
    }
}

/* Send METHOD with PARAMS (taken over; NULL = none) and return its "result" (the
 * caller's), failing the test on an error or 15 s of silence. */
static json_t *cdp_call(struct cdp *c, const char *method, json_t *params)
{
    int id = ++c->next_id;
    json_t *m = json_pack("{s:i, s:s}", "id", id, "method", method);
    json_object_set_new(m, "params", params ? params : json_object());
    if (c->session[0])
        json_object_set_new(m, "sessionId", json_string(c->session));
    char *js = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    size_t n = strlen(js) + 1; /* the NUL ends the message */
    cr_assert_eq(write(c->to, js, n), (ssize_t)n, "CDP %s: cannot write to chromium", method);
    free(js);
    double deadline = mono() + 15;
    for (;;) {
        json_t *a = cdp_read(c, deadline);
        cr_assert(a, "CDP %s: no answer from chromium", method);
        if (json_integer_value(json_object_get(a, "id")) == id) {
            json_t *err = json_object_get(a, "error");
            cr_assert(!err, "CDP %s: %s", method, json_string_value(json_object_get(err, "message")));
            json_t *r = json_incref(json_object_get(a, "result"));
            json_decref(a);
            return r;
        }
        json_decref(a); /* an event, or another session's message */
    }
}

/* The value of EXPR in the page, as a string (malloc'd). */
static char *cdp_eval(struct cdp *c, const char *expr)
{
    json_t *r = cdp_call(c, "Runtime.evaluate", json_pack("{s:s, s:b}", "expression", expr, "returnByValue", 1));
    json_t *v = json_object_get(json_object_get(r, "result"), "value");
    char *s = strdup(json_is_string(v) ? json_string_value(v) : "");
    json_decref(r);
    return s;
}

/* Poll EXPR until it equals WANT or TIMEOUT_S pass; its last value (malloc'd). */
static char *eval_until(struct cdp *c, const char *expr, const char *want, double timeout_s)
{
    double end = mono() + timeout_s;
    char *v = cdp_eval(c, expr);
    while (strcmp(v, want) != 0 && mono() < end) {
        free(v);
        usleep(100000);
        v = cdp_eval(c, expr);
    }
    return v;
}

static void cdp_stop(struct cdp *c)
{
    json_decref(cdp_call(c, "Browser.close", NULL));
    if (ts_wait(c->pid, 10) < 0)
        cr_log_warn("chromium did not close: killed");
    close(c->to);
    close(c->from);
    free(c->buf);
}

static void push_shot(void *push, int k)
{
    struct shot s;
    ts_make_shot(k, 12, 60, &s);
    cr_assert_eq(wire_send_shot_f32(push, &s, k, 0), 0);
    ts_shot_free(&s);
}

static void wait_image(int port, long shots)
{
    for (int i = 0; i < 600 && http_image_shots(port, NULL) < shots; i++)
        usleep(50000);
    cr_assert_eq(http_image_shots(port, NULL), shots);
}

Test(http_live, the_page_follows_a_new_shot_without_a_reload, .timeout = 90)
{
    char *dir = test_tmpdir();
    char ep_in[600], ep_out[600], log[600], url[128];
    pid_t pid = http_spawn_rtm(dir, "http = \"127.0.0.1:0\"\n", 0.2, ep_in, ep_out, log, sizeof log);
    int port = http_wait_port(log, pid);
    cr_assert_gt(port, 0, "no status page in %s", log);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", port);
    void *z = zmq_ctx_new();
    void *push = ts_push(z, ep_in);
    push_shot(push, 0);
    wait_image(port, 1);

    struct cdp c;
    cdp_start(&c, dir);
    json_t *t = cdp_call(&c, "Target.getTargets", NULL), *ti;
    size_t i;
    const char *target = NULL;
    json_array_foreach(json_object_get(t, "targetInfos"), i, ti) if (strcmp(json_string_value(json_object_get(ti, "type")), "page") == 0 && !target) target = json_string_value(json_object_get(ti, "targetId"));
    cr_assert(target, "chromium has no page to drive");
    json_t *a = cdp_call(&c, "Target.attachToTarget", json_pack("{s:s, s:b}", "targetId", target, "flatten", 1));
    snprintf(c.session, sizeof c.session, "%s", json_string_value(json_object_get(a, "sessionId")));
    json_decref(a);
    json_decref(t);
    json_decref(cdp_call(&c, "Page.navigate", json_pack("{s:s}", "url", url)));

    /* Loaded once: one shot; a mark in this document's window. */
    char *v = eval_until(&c, "document.readyState === 'complete' ? document.getElementById('units').textContent : ''",
                         "1", 20);
    cr_assert_str_eq(v, "1", "the page shows \"%s\" shots, 1 was stacked", v);
    free(v);
    free(cdp_eval(&c, "window.seisliveMark = 'same document'; ''"));
    char *src1 = cdp_eval(&c, "document.getElementById('img-y').getAttribute('src') || ''");
    cr_expect(strstr(src1, "/image/y.png?seq=") != NULL, "the section's source is \"%s\"", src1);

    /* A new shot while the page is open: the same document shows it (SSE). */
    push_shot(push, 1);
    wait_image(port, 2);
    v = eval_until(&c, "document.getElementById('units').textContent", "2", 20);
    cr_expect_str_eq(v, "2", "the open page still shows \"%s\" shots after the second", v);
    free(v);
    char *src2 = cdp_eval(&c, "document.getElementById('img-y').getAttribute('src') || ''");
    cr_expect_str_neq(src1, src2, "the section's source did not change with the image");
    char *mark = cdp_eval(&c, "(window.seisliveMark || 'gone') + ', ' + performance.getEntriesByType('navigation').length + "
                              "' navigation(s), ' + performance.getEntriesByType('navigation')[0].type");
    cr_expect_str_eq(mark, "same document, 1 navigation(s), navigate", "the page was reloaded: %s", mark);
    printf("http_live: one page load: shots 1 -> 2, section \"%s\" -> \"%s\" (%s)\n", src1, src2, mark);
    free(src1);
    free(src2);
    free(mark);
    cdp_stop(&c);

    cr_assert_eq(wire_send_end(push, 0), 0);
    cr_assert_eq(ts_wait(pid, 60), 0, "seislive run failed (see %s)", log);
    zmq_close(push);
    zmq_ctx_term(z);
    test_rmtree(dir);
    free(dir);
}
