/* http_client — what the status-page tests share: a minimal HTTP/1.1 client over a
 * plain socket (so the tests see exactly the bytes the server sends: status line,
 * headers, body), the port a running seislive logged, and a small rtm run with the
 * page on. */
#ifndef SEISLIVE_TEST_HTTP_CLIENT_H
#define SEISLIVE_TEST_HTTP_CLIENT_H

#include <stddef.h>
#include <sys/types.h>

struct http_resp {
    int code;            /* 0: no answer (connection closed or timed out) */
    char *head;          /* status line and headers, NUL-terminated */
    char *body;          /* NUL-terminated (binary bodies: use len) */
    size_t len;
};

/* Send REQUEST (raw text, e.g. "GET / HTTP/1.1\r\nHost: x\r\n\r\n") to 127.0.0.1:PORT and
 * read the answer until the server closes or TIMEOUT_MS passes.  0 or -1 (no connection). */
int http_raw(int port, const char *request, struct http_resp *r, int timeout_ms);
/* GET PATH with EXTRA header lines ("" or "Name: v\r\n..."), Connection: close. */
int http_get(int port, const char *path, const char *extra, struct http_resp *r);
void http_resp_free(struct http_resp *r);

/* The port of "status page on http://127.0.0.1:PORT/" in LOG, waiting up to 30 s while
 * PID runs; -1 when it never appears. */
int http_wait_port(const char *log, pid_t pid);

/* `seislive run` of the tests' small rtm job (tests/test_stream_support.h) over ipc in
 * DIR, with OUTPUT_EXTRA in [output] (e.g. the http keys) and status every
 * METRICS_INTERVAL s.  Fills EP_IN, EP_OUT and LOG; returns the pid. */
pid_t http_spawn_rtm(const char *dir, const char *output_extra, double metrics_interval, char *ep_in,
                     char *ep_out, char *log, size_t len);

/* The "shots" of /image.json (TOKEN: NULL or the token), -1 when there is none. */
long http_image_shots(int port, const char *token);

#endif
