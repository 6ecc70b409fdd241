/* http_status — the status page's server (libmicrohttpd), read-only, from the snapshot. */
#define LOG_COMPONENT "http"
#include "stream/http_status.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io/picture.h"
#include "status_html.h" /* web/status.html as status_html[], status_html_len (xxd -i) */
#include "stream/error.h"
#include "stream/log.h"

struct http_status {
    struct MHD_Daemon *d;
    struct pub_snapshot *snap;
    char *token;
    char job[16];
    int port;
    atomic_int stopping;
    struct http_picture_cache pics;
};

int http_parse_addr(const char *addr, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    const char *colon = addr ? strrchr(addr, ':') : NULL;
    if (!colon || colon == addr)
        return err_set(-EINVAL, "http address \"%s\": expected HOST:PORT, e.g. \"127.0.0.1:8080\"",
                       addr ? addr : "");
    char host[64];
    size_t hl = (size_t)(colon - addr);
    if (hl >= sizeof host)
        return err_set(-EINVAL, "http address \"%s\": host too long", addr);
    memcpy(host, addr, hl);
    host[hl] = '\0';
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || errno || port < 0 || port > 65535)
        return err_set(-EINVAL, "http address \"%s\": port \"%s\" is not 0..65535", addr, colon + 1);
    sa->sin_port = htons((uint16_t)port);
    if (strcmp(host, "localhost") == 0)
        strcpy(host, "127.0.0.1");
    if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
        return err_set(-EINVAL, "http address \"%s\": host \"%s\" is not an IPv4 address "
                                "(e.g. 127.0.0.1, or 0.0.0.0 for every interface)", addr, host);
    return 0;
}

int http_check_addr(const char *addr)
{
    struct sockaddr_in sa;
    int rc = http_parse_addr(addr, &sa);
    if (rc)
        return rc;
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return err_set(-errno, "http address \"%s\": socket: %s", addr, strerror(errno));
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
        rc = err_set(-errno, "http address \"%s\": cannot bind: %s", addr, strerror(errno));
    }
    close(s);
    return rc;
}

/* ---- responses ------------------------------------------------------------ */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type, void *body,
                             size_t len, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    /* The page loads nothing from elsewhere and cannot be framed. */
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; script-src 'self' 'unsafe-inline'; "
                            "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                            "frame-ancestors 'none'");
    if (code == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"seislive\"");
    if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, "Allow", "GET, HEAD");
    enum MHD_Result ok = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned code, const char *msg)
{
    return reply(c, code, "text/plain; charset=utf-8", (void *)msg, strlen(msg), MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result json(struct MHD_Connection *c, char *js)
{
    if (!js)
        return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    return reply(c, MHD_HTTP_OK, "application/json", js, strlen(js), MHD_RESPMEM_MUST_FREE);
}

/* Compare without an early exit, so the time taken tells nothing about the token. */
static bool same_secret(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned char d = la != lb;
    for (size_t i = 0; i < lb; i++)
        d |= (unsigned char)(b[i] ^ (i < la ? a[i] : 0));
    return d == 0;
}

static bool authorised(struct http_status *h, struct MHD_Connection *c)
{
    if (!h->token)
        return true;
    const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    if (v && same_secret(v, h->token))
        return true;
    v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Seislive-Token");
    if (v && same_secret(v, h->token))
        return true;
    v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    return v && strncmp(v, "Bearer ", 7) == 0 && same_secret(v + 7, h->token);
}

/* An integer query argument; DEF when absent, false when not a number. */
static bool int_arg(struct MHD_Connection *c, const char *name, long long def, long long *out)
{
    const char *v = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
    *out = def;
    if (!v || !*v)
        return true;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (*end || errno)
        return false;
    *out = x;
    return true;
}

/* /image/{x,y,z}.png, or with LAYOUT /image/{x,y,z}.json: that picture's layout. */
static enum MHD_Result image_png(struct http_status *h, struct MHD_Connection *c, char axis, bool layout)
{
    long long idx;
    if (!int_arg(c, "i", -1, &idx) || idx < -1 || idx > 1 << 24)
        return text(c, MHD_HTTP_BAD_REQUEST, "?i= wants a slice index\n");
    struct snap_image *im = pub_snapshot_image(h->snap);
    if (!im)
        return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no image published yet\n");
    unsigned char *png = NULL;
    size_t len = 0;
    struct picture_layout lay;
    int rc = http_slice_png(&h->pics, im, axis, (int)idx, &png, &len, layout ? &lay : NULL);
    if (rc < 0) {
        log_warn("slice %c: %s", axis, err_msg());
        return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot draw the slice\n");
    }
    if (!layout)
        return reply(c, MHD_HTTP_OK, "image/png", png, len, MHD_RESPMEM_MUST_FREE);
    free(png);
    /* where the plot lies in the picture and the metres at its edges: the page maps a
     * click to a cell with it */
    char *js = NULL;
    if (asprintf(&js, "{\"width\":%d,\"height\":%d,\"plot\":[%.1f,%.1f,%.1f,%.1f],\"h0\":%.9g,"
                      "\"h1\":%.9g,\"v0\":%.9g,\"v1\":%.9g}",
                 lay.width, lay.height, lay.plot[0], lay.plot[1], lay.plot[2], lay.plot[3], lay.h0, lay.h1,
                 lay.v0, lay.v1) < 0)
        return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    return json(c, js);
}

static enum MHD_Result image_json(struct http_status *h, struct MHD_Connection *c)
{
    struct snap_image *im = pub_snapshot_image(h->snap);
    if (!im)
        return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no image published yet\n");
    char *js = strdup(im->header);
    pub_snapshot_image_release(h->snap, im);
    return json(c, js);
}

/* ---- Server-Sent Events ----------------------------------------------------- */

struct sse {
    struct http_status *h;
    struct snap_counts seen;
    bool started;
    int64_t ev_after;        /* the last event seq sent */
    char *buf;               /* what is yet to be written */
    size_t len, off;
};

static void sse_append(struct sse *s, const char *kind, const char *data)
{
    if (!data)
        return;
    size_t add = strlen(kind) + strlen(data) + 24; /* "event: \ndata: \n\n" and the NUL */
    char *b = realloc(s->buf, s->len + add);
    if (!b)
        return;
    s->buf = b;
    s->len += (size_t)snprintf(b + s->len, add, "event: %s\ndata: %s\n\n", kind, data);
}

/* The seq of the last element of a JSON array of event headers (crude but exact for
 * the publisher's own compact headers: the last "seq": in the text). */
static int64_t last_seq(const char *arr, int64_t def)
{
    const char *p = arr, *q;
    int64_t seq = def;
    while ((q = strstr(p, "\"seq\":"))) {
        seq = strtoll(q + 6, NULL, 10);
        p = q + 6;
    }
    return seq;
}

/* What changed since the last call, as SSE messages; a comment when nothing did (so a
 * reader that went away is found, and proxies keep the stream open). */
static void sse_fill(struct sse *s)
{
    struct pub_snapshot *snap = s->h->snap;
    struct snap_counts now;
    pub_snapshot_wait(snap, &s->seen, s->started ? 2.0 : 0.0, &now);
    if (!s->started)
        sse_append(s, "hello", s->h->job[0] ? s->h->job : "?");
    if (!s->started) { /* static: once per connection */
        char *js = pub_snapshot_stations(snap);
        sse_append(s, "stations", js);
        free(js);
    }
    if (!s->started || now.status != s->seen.status) {
        char *js = pub_snapshot_status(snap);
        sse_append(s, "status", js);
        free(js);
    }
    if (!s->started || now.image != s->seen.image) {
        struct snap_image *im = pub_snapshot_image(snap);
        if (im)
            sse_append(s, "image", im->header);
        pub_snapshot_image_release(snap, im);
    }
    if (!s->started || now.events != s->seen.events) {
        char *js = pub_snapshot_events(snap, s->ev_after);
        if (js && strcmp(js, "[]") != 0) {
            sse_append(s, "events", js);
            s->ev_after = last_seq(js, s->ev_after);
        }
        free(js);
    }
    if (!s->started || now.coherence != s->seen.coherence) {
        char *js = pub_snapshot_coherence(snap);
        if (js && strcmp(js, "[]") != 0)
            sse_append(s, "coherence", js);
        free(js);
    }
    if (s->len == 0) {
        free(s->buf);
        s->buf = strdup(": idle\n\n");
        s->len = s->buf ? strlen(s->buf) : 0;
    }
    s->seen = now;
    s->started = true;
}

/* libmicrohttpd asks for the next bytes of the stream; one thread per connection, so
 * waiting here holds up this browser only. */
static ssize_t sse_read(void *cls, uint64_t pos, char *out, size_t max)
{
    (void)pos;
    struct sse *s = cls;
    if (s->off == s->len) {
        free(s->buf);
        s->buf = NULL;
        s->len = s->off = 0;
        if (atomic_load(&s->h->stopping))
            return MHD_CONTENT_READER_END_OF_STREAM;
        sse_fill(s);
        if (s->len == 0)
            return MHD_CONTENT_READER_END_WITH_ERROR; /* out of memory */
    }
    size_t k = s->len - s->off < max ? s->len - s->off : max;
    memcpy(out, s->buf + s->off, k);
    s->off += k;
    return (ssize_t)k;
}

static void sse_free(void *cls)
{
    struct sse *s = cls;
    free(s->buf);
    free(s);
}

static enum MHD_Result stream(struct http_status *h, struct MHD_Connection *c)
{
    struct sse *s = calloc(1, sizeof *s);
    if (!s)
        return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
    s->h = h;
    s->ev_after = -1;
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_read, s, sse_free);
    if (!r) {
        free(s);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ok;
}

/* ---- routing ------------------------------------------------------------------ */

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con)
{
    (void)version;
    (void)upload;
    struct http_status *h = cls;
    static int first_call;
    if (!*con) { /* headers only so far: decide after them */
        *con = &first_call;
        if (*upload_size == 0 && strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
            strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
            return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only: GET and HEAD only\n");
        return MHD_YES;
    }
    if (*upload_size != 0) {
        *upload_size = 0; /* swallow it; the answer is a refusal */
        return MHD_YES;
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only: GET and HEAD only\n");
    if (!authorised(h, c))
        return text(c, MHD_HTTP_UNAUTHORIZED, "a token is needed: ?token=, or Authorization: Bearer\n");
    if (strcmp(url, "/") == 0)
        return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", status_html, status_html_len,
                     MHD_RESPMEM_PERSISTENT);
    if (strcmp(url, "/status.json") == 0) {
        char *js = pub_snapshot_status(h->snap);
        if (!js)
            return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no status yet\n");
        return json(c, js);
    }
    if (strcmp(url, "/events.json") == 0) {
        long long after;
        if (!int_arg(c, "after", -1, &after))
            return text(c, MHD_HTTP_BAD_REQUEST, "?after= wants a seq\n");
        return json(c, pub_snapshot_events(h->snap, after));
    }
    if (strcmp(url, "/stations.json") == 0) {
        char *js = pub_snapshot_stations(h->snap);
        return json(c, js ? js : strdup("[]"));
    }
    if (strcmp(url, "/coherence.json") == 0)
        return json(c, pub_snapshot_coherence(h->snap));
    if (strcmp(url, "/image.json") == 0)
        return image_json(h, c);
    if (strcmp(url, "/image/x.png") == 0 || strcmp(url, "/image/y.png") == 0 ||
        strcmp(url, "/image/z.png") == 0)
        return image_png(h, c, url[7], false);
    if (strcmp(url, "/image/x.json") == 0 || strcmp(url, "/image/y.json") == 0 ||
        strcmp(url, "/image/z.json") == 0)
        return image_png(h, c, url[7], true);
    if (strcmp(url, "/stream") == 0)
        return stream(h, c);
    return text(c, MHD_HTTP_NOT_FOUND, "not found\n");
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    msg[strcspn(msg, "\n")] = '\0';
    log_debug("libmicrohttpd: %s", msg);
}

int http_status_start(struct http_status **out, const struct http_status_conf *c, struct pub_snapshot *snap)
{
    *out = NULL;
    struct sockaddr_in sa;
    int rc = http_parse_addr(c->addr, &sa);
    if (rc)
        return rc;
    struct http_status *h = calloc(1, sizeof *h);
    if (!h)
        return err_set(-ENOMEM, "http: out of memory");
    h->snap = snap;
    pthread_mutex_init(&h->pics.mu, NULL);
    h->pics.snap = snap;
    snprintf(h->job, sizeof h->job, "%s", c->job ? c->job : "");
    if (c->token && c->token[0] && !(h->token = strdup(c->token))) {
        free(h);
        return err_set(-ENOMEM, "http: out of memory");
    }
    h->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                                MHD_USE_POLL | MHD_USE_ERROR_LOG,
                            0, NULL, NULL, handle, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONN,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)HTTP_MAX_PER_IP,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MAX_REQUEST,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_S,
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
    if (!h->d) {
        free(h->token);
        free(h);
        return err_set(-EADDRINUSE, "[output] http \"%s\": cannot serve there (address in use or "
                                    "not this machine's)", c->addr);
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = di ? di->port : ntohs(sa.sin_port);
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
    log_info("status page on http://%s:%d/%s", ip, h->port, h->token ? " (token required)" : "");
    *out = h;
    return 0;
}

int http_status_port(const struct http_status *h)
{
    return h->port;
}

void http_status_stop(struct http_status *h)
{
    if (!h)
        return;
    atomic_store(&h->stopping, 1);
    pub_snapshot_close(h->snap); /* wakes the streams, which then end */
    MHD_stop_daemon(h->d);
    http_picture_cache_free(&h->pics);
    pthread_mutex_destroy(&h->pics.mu);
    free(h->token);
    free(h);
}
