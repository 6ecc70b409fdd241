/* http_client — a raw HTTP client and the status-page tests' rtm run. */
#include "tests/http_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support.h"
#include "tests/test_stream_support.h"

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int http_raw(int port, const char *request, struct http_resp *r, int timeout_ms)
{
    memset(r, 0, sizeof *r);
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
        if (s >= 0)
            close(s);
        return -1;
    }
    size_t n = strlen(request), off = 0;
    while (off < n) {
        ssize_t w = send(s, request + off, n - off, MSG_NOSIGNAL);
        if (w <= 0)
            break; /* the server may refuse before reading it all: read its answer */
        off += (size_t)w;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    double t_end = mono() + timeout_ms / 1e3;
    for (;;) {
        int left = (int)((t_end - mono()) * 1e3);
        struct pollfd p = {.fd = s, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        if (len == cap)
            buf = realloc(buf, (cap *= 2) + 1);
        ssize_t k = recv(s, buf + len, cap - len, 0);
        if (k <= 0)
            break;
        len += (size_t)k;
    }
    close(s);
    buf[len] = '\0';
    char *sep = strstr(buf, "\r\n\r\n");
    if (sscanf(buf, "HTTP/1.%*d %d", &r->code) != 1)
        r->code = 0;
    size_t hl = sep ? (size_t)(sep - buf) : len;
    r->head = strndup(buf, hl);
    r->len = sep ? len - hl - 4 : 0;
    r->body = malloc(r->len + 1);
    if (sep)
        memcpy(r->body, sep + 4, r->len);
    r->body[r->len] = '\0';
    free(buf);
    return 0;
}

int http_get(int port, const char *path, const char *extra, struct http_resp *r)
{
    char req[4096];
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sConnection: close\r\n\r\n", path,
             extra ? extra : "");
    return http_raw(port, req, r, 10000);
}

void http_resp_free(struct http_resp *r)
{
    free(r->head);
    free(r->body);
    memset(r, 0, sizeof *r);
}

int http_wait_port(const char *log, pid_t pid)
{
    for (int i = 0; i < 300; i++) {
        FILE *f = fopen(log, "r");
        char line[1024];
        while (f && fgets(line, sizeof line, f)) {
            const char *p = strstr(line, "status page on http://127.0.0.1:");
            if (p) {
                fclose(f);
                return atoi(p + strlen("status page on http://127.0.0.1:"));
            }
        }
        if (f)
            fclose(f);
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return -1;
        usleep(100000);
    }
    return -1;
}

pid_t http_spawn_rtm(const char *dir, const char *output_extra, double metrics_interval, char *ep_in,
                     char *ep_out, char *log, size_t len)
{
    char text[4096];
    snprintf(ep_in, len, "ipc://%s/in", dir);
    snprintf(ep_out, len, "ipc://%s/out", dir);
    snprintf(log, len, "%s/run.log", dir);
    snprintf(text, sizeof text,
             TS_SMALL_RTM_CFG "metrics_interval = %g\n[log]\nlevel = \"info\"\n"
                              "[input]\nkind = \"zmq\"\nendpoint = \"%s\"\nslots = 2\nslot_mib = 1.0\n"
                              "[output]\nendpoint = \"%s\"\ndir = \"%s/files\"\n%s",
             metrics_interval, ep_in, ep_out, dir, output_extra ? output_extra : "");
    char *cfgpath = test_write_file(dir, "rtm.toml", text);
    pid_t pid = ts_spawn_run(cfgpath, log);
    free(cfgpath);
    return pid;
}

long http_image_shots(int port, const char *token)
{
    char path[256];
    snprintf(path, sizeof path, "/image.json%s%s", token ? "?token=" : "", token ? token : "");
    struct http_resp r;
    long shots = -1;
    if (http_get(port, path, "", &r) == 0 && r.code == 200) {
        json_t *o = json_loads(r.body, 0, NULL);
        if (json_is_integer(json_object_get(o, "shots")))
            shots = (long)json_integer_value(json_object_get(o, "shots"));
        json_decref(o);
    }
    http_resp_free(&r);
    return shots;
}
