/* seedlink_client — the SeedLink protocol (see seedlink.h).  Written by hand: Debian
 * packages no SeedLink client library (libslink); libmseed (linked already) reads
 * the records' lengths and jansson the v4 INFO JSON. */
#define LOG_COMPONENT "seedlink"
#include "io/seedlink.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libmseed.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "io/mseed_read.h"
#include "stream/error.h"
#include "stream/log.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "after sequence N" or "before any data", for messages. */
static const char *at_seq(const struct seedlink_conn *c)
{
    static __thread char s[64];
    if (c->last_seq == SEEDLINK_SEQ_NONE)
        return "before any data";
    snprintf(s, sizeof s, "after sequence %llu", (unsigned long long)c->last_seq);
    return s;
}

void seedlink_init(struct seedlink_conn *c, double timeout_s, bool (*stop)(void *), void *arg)
{
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->timeout_s = timeout_s > 0 ? timeout_s : 60.0;
    c->stop = stop;
    c->stop_arg = arg;
    c->last_seq = SEEDLINK_SEQ_NONE;
    mseed_log_init(); /* libmseed's diagnostics into our log */
}

static bool stopping(const struct seedlink_conn *c)
{
    return c->stop && c->stop(c->stop_arg);
}

static int alloc_buf(struct seedlink_conn *c)
{
    if (!c->buf) {
        c->cap = SEEDLINK_MAX_PAYLOAD + 4096;
        c->buf = malloc(c->cap);
        if (!c->buf)
            return err_set(-ENOMEM, "SeedLink %s: out of memory", c->server);
    }
    c->lo = c->hi = 0;
    c->last_rx = now_s();
    c->quiet_s = 0;
    c->keepalive_sent = false;
    c->streaming = false;
    return 0;
}

int seedlink_adopt(struct seedlink_conn *c, int fd, const char *server)
{
    snprintf(c->server, sizeof c->server, "%s", server);
    c->fd = fd;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) /* every wait polls the stop */
        return err_set(-errno, "SeedLink %s: fcntl: %s", server, strerror(errno));
    return alloc_buf(c);
}

int seedlink_connect(struct seedlink_conn *c, const char *server)
{
    snprintf(c->server, sizeof c->server, "%s", server);
    char host[256];
    const char *colon = strrchr(server, ':');
    if (!colon || colon == server || !colon[1])
        return err_set(-EINVAL, "SeedLink server \"%s\": not HOST:PORT", server);
    size_t hl = (size_t)(colon - server);
    if (server[0] == '[' && hl >= 2 && server[hl - 1] == ']') { /* [v6]:port */
        server++;
        hl -= 2;
    }
    if (hl >= sizeof host)
        return err_set(-EINVAL, "SeedLink server \"%s\": host name too long", c->server);
    memcpy(host, server, hl);
    host[hl] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int g = getaddrinfo(host, colon + 1, &hints, &res);
    if (g)
        return err_set(-EHOSTUNREACH, "SeedLink server %s: %s", c->server, gai_strerror(g));
    int rc = -ECONNREFUSED, fd = -1;
    char why[128] = "no address";
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
            rc = -errno;
            snprintf(why, sizeof why, "%s", strerror(errno));
            close(fd);
            fd = -1;
            continue;
        }
        /* wait for the connection, polling the stop and the timeout */
        double t0 = now_s();
        for (;;) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            int np = poll(&p, 1, 100);
            if (np > 0) {
                int e = 0;
                socklen_t el = sizeof e;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
                if (e) {
                    rc = -e;
                    snprintf(why, sizeof why, "%s", strerror(e));
                    close(fd);
                    fd = -1;
                }
                break;
            }
            if (stopping(c) || now_s() - t0 > c->timeout_s) {
                rc = stopping(c) ? -ECANCELED : -ETIMEDOUT;
                snprintf(why, sizeof why, "%s", stopping(c) ? "stopped" : "connect timed out");
                close(fd);
                fd = -1;
                break;
            }
        }
        if (rc == -ECANCELED)
            break;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return err_set(rc, "SeedLink server %s: %s", c->server, why);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->fd = fd;
    return alloc_buf(c);
}

void seedlink_close(struct seedlink_conn *c)
{
    if (c->fd >= 0) {
        if (c->streaming) /* polite, not required: the server also sees the close */
            (void)!write(c->fd, "BYE\r\n", 5);
        close(c->fd);
    }
    c->fd = -1;
    free(c->buf);
    c->buf = NULL;
    c->lo = c->hi = c->cap = 0;
}

static int send_all(struct seedlink_conn *c, const char *s, size_t n)
{
    double t0 = now_s();
    while (n) {
        ssize_t w = send(c->fd, s, n, MSG_NOSIGNAL);
        if (w > 0) {
            s += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return err_set(-errno, "SeedLink server %s: send (%s): %s", c->server, at_seq(c),
                           strerror(errno));
        struct pollfd p = {.fd = c->fd, .events = POLLOUT};
        poll(&p, 1, 100);
        if (stopping(c))
            return -ECANCELED;
        if (now_s() - t0 > c->timeout_s)
            return err_set(-ETIMEDOUT, "SeedLink server %s: send timed out (%s)", c->server, at_seq(c));
    }
    return 0;
}

static int vsend_line(struct seedlink_conn *c, const char *fmt, va_list ap)
{
    char line[SEEDLINK_MAX_LINE];
    int n = vsnprintf(line, sizeof line - 2, fmt, ap);
    if (n < 0 || (size_t)n >= sizeof line - 2)
        return err_set(-EINVAL, "SeedLink server %s: command too long", c->server);
    memcpy(line + n, "\r\n", 2);
    log_debug("%s <- %.*s", c->server, n, line);
    return send_all(c, line, (size_t)n + 2);
}

int seedlink_send(struct seedlink_conn *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vsend_line(c, fmt, ap);
    va_end(ap);
    return rc;
}

/* Have at least N unread bytes (N <= cap), waiting at most WAIT_S (< 0: the network
 * timeout; then a quiet stream gets one INFO ID keepalive at half of it).  Returns 0,
 * 1 when WAIT_S ran out, or < 0. */
static int fill(struct seedlink_conn *c, size_t n, double wait_s)
{
    if (n > c->cap)
        return err_set(-EMSGSIZE, "SeedLink server %s: %zu bytes asked (%s)", c->server, n, at_seq(c));
    double t0 = now_s();
    while (c->hi - c->lo < n) {
        if (c->cap - c->lo < n) { /* compact */
            memmove(c->buf, c->buf + c->lo, c->hi - c->lo);
            c->hi -= c->lo;
            c->lo = 0;
        }
        ssize_t r = recv(c->fd, c->buf + c->hi, c->cap - c->hi, 0);
        if (r > 0) {
            c->hi += (size_t)r;
            c->last_rx = now_s();
            c->quiet_s = 0;
            c->keepalive_sent = false;
            continue;
        }
        if (r == 0)
            return err_set(-ECONNRESET, "SeedLink server %s: connection closed by the server (%s)",
                           c->server, at_seq(c));
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return err_set(-errno, "SeedLink server %s: receive (%s): %s", c->server, at_seq(c),
                           strerror(errno));
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        double tp = now_s();
        poll(&p, 1, 100);
        if (stopping(c))
            return -ECANCELED;
        double t = now_s();
        c->quiet_s += t - tp;
        if (wait_s >= 0 && t - t0 > wait_s && c->hi == c->lo)
            return 1;
        if (c->streaming && !c->keepalive_sent && c->quiet_s > 0.5 * c->timeout_s) {
            /* the protocol's own liveness check: a live server answers INFO ID */
            c->keepalive_sent = true;
            int rc = seedlink_send(c, "INFO ID");
            if (rc)
                return rc;
        }
        if (c->quiet_s > c->timeout_s)
            return err_set(-ETIMEDOUT, "SeedLink server %s: nothing received for %.1f s (%s)",
                           c->server, c->timeout_s, at_seq(c));
    }
    return 0;
}

/* Read one reply line (CR LF or LF ended, at most SEEDLINK_MAX_LINE) into LINE. */
static int read_line(struct seedlink_conn *c, char *line, size_t len)
{
    size_t scanned = 0;
    for (;;) {
        for (; scanned < c->hi - c->lo; scanned++)
            if (c->buf[c->lo + scanned] == '\n') {
                size_t n = scanned;
                while (n && (c->buf[c->lo + n - 1] == '\r'))
                    n--;
                if (n >= len)
                    n = len - 1;
                memcpy(line, c->buf + c->lo, n);
                line[n] = '\0';
                c->lo += scanned + 1;
                for (size_t i = 0; i < n; i++) /* for messages: printable only */
                    if (!isprint((unsigned char)line[i]) && line[i] != '\r')
                        line[i] = '?';
                log_debug("%s -> %s", c->server, line);
                return 0;
            }
        if (scanned >= SEEDLINK_MAX_LINE)
            return err_set(-EBADMSG, "SeedLink server %s: a reply line longer than %d bytes (%s)",
                           c->server, SEEDLINK_MAX_LINE, at_seq(c));
        int rc = fill(c, scanned + 1, -1);
        if (rc)
            return rc;
    }
}

void seedlink_parse_hello(const char *line, bool *v3, bool *v4)
{
    *v3 = *v4 = false;
    const char *caps = strstr(line, "::");
    caps = caps ? caps + 2 : line;
    for (const char *p = caps; (p = strstr(p, "SLPROTO:")) != NULL; p += 8) {
        if (p[8] == '4')
            *v4 = true;
        if (p[8] == '3')
            *v3 = true;
    }
    /* a server announcing nothing is a v3 server from before the announcement */
    if (!*v4 && !*v3 && strncmp(line, "SeedLink v3", 11) == 0)
        *v3 = true;
    if (!*v4 && !*v3 && strncmp(line, "SeedLink v4", 11) == 0)
        *v4 = true;
}

int seedlink_hello(struct seedlink_conn *c, int want)
{
    char l1[SEEDLINK_MAX_LINE], l2[SEEDLINK_MAX_LINE];
    int rc = seedlink_send(c, "HELLO");
    if (!rc)
        rc = read_line(c, l1, sizeof l1);
    if (!rc)
        rc = read_line(c, l2, sizeof l2);
    if (rc)
        return err_prefix(rc, "HELLO");
    if (strncmp(l1, "SeedLink", 8) != 0)
        return err_set(-EPROTO, "SeedLink server %s: HELLO answered \"%.80s\", not a SeedLink server",
                       c->server, l1);
    snprintf(c->ident, sizeof c->ident, "%.150s", l1);
    bool v3, v4;
    seedlink_parse_hello(l1, &v3, &v4);
    c->server_v4 = v4;
    if (want == 4 && !v4)
        return err_set(-EPROTONOSUPPORT, "SeedLink server %s: protocol 4 asked, its HELLO offers "
                       "no SLPROTO:4.0 (\"%.120s\")", c->server, l1);
    if (want == 3 && !v3 && v4)
        return err_set(-EPROTONOSUPPORT, "SeedLink server %s: protocol 3 asked, its HELLO offers "
                       "only SLPROTO:4.0 (\"%.120s\")", c->server, l1);
    c->proto = (want == 4 || (want == 0 && v4)) ? 4 : 3;
    if (c->proto == 4) {
        if ((rc = seedlink_command(c, "SLPROTO 4.0")))
            return rc;
        if ((rc = seedlink_command(c, "USERAGENT seislive")))
            return rc;
    }
    log_info("SeedLink server %s: \"%s\" (%s), protocol %d", c->server, l1, l2, c->proto);
    return 0;
}

int seedlink_command(struct seedlink_conn *c, const char *fmt, ...)
{
    char cmd[SEEDLINK_MAX_LINE];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof cmd)
        return err_set(-EINVAL, "SeedLink server %s: command too long", c->server);
    int rc = seedlink_send(c, "%s", cmd);
    char line[SEEDLINK_MAX_LINE];
    if (!rc)
        rc = read_line(c, line, sizeof line);
    if (rc)
        return err_prefix(rc, "%s", cmd);
    if (strcmp(line, "OK") == 0)
        return 0;
    if (strncmp(line, "ERROR", 5) == 0)
        return err_set(-EPROTO, "SeedLink server %s refused \"%s\": %s", c->server, cmd, line);
    return err_set(-EBADMSG, "SeedLink server %s: \"%s\" answered \"%.80s\" (neither OK nor ERROR)",
                   c->server, cmd, line);
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The length of the miniSEED record whose header starts at byte OFF of the unread
 * data (from its blockette 1000, through libmseed's ms_detect). */
static int record_length(struct seedlink_conn *c, size_t off, const char *what, int *reclen)
{
    static const int probe[] = {128, 512};
    for (int i = 0; i < 2; i++) {
        int rc = fill(c, off + (size_t)probe[i], -1);
        if (rc)
            return rc;
        int r = ms_detect(c->buf + c->lo + off, probe[i]);
        if (r > 0) {
            if (r < 128 || r > SEEDLINK_MAX_RECORD)
                return err_set(-EBADMSG, "SeedLink server %s: %s: record of %d bytes (128 .. %d) (%s)",
                               c->server, what, r, SEEDLINK_MAX_RECORD, at_seq(c));
            *reclen = r;
            return 0;
        }
        if (r < 0)
            break;
    }
    return err_set(-EBADMSG, "SeedLink server %s: %s: not a miniSEED 2 record with a blockette 1000 "
                   "(%s)", c->server, what, at_seq(c));
}

/* The bytes at the read position, printable, for messages. */
static const char *peek(const struct seedlink_conn *c)
{
    static __thread char s[40];
    size_t n = c->hi - c->lo < 16 ? c->hi - c->lo : 16, k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)c->buf[c->lo + i];
        k += (size_t)snprintf(s + k, sizeof s - k, isprint(ch) ? "%c" : "\\x%02x", ch);
        if (k >= sizeof s - 5)
            break;
    }
    return s;
}

int seedlink_read_wait(struct seedlink_conn *c, struct seedlink_packet *p, double wait_s)
{
    memset(p, 0, sizeof *p);
    p->seq = SEEDLINK_SEQ_NONE;
    int rc = fill(c, 2, wait_s);
    if (rc)
        return rc;
    const unsigned char *h = (const unsigned char *)c->buf + c->lo;
    if (h[0] == 'S' && h[1] == 'E') {
        if ((rc = fill(c, 17, -1)))
            return rc;
        h = (const unsigned char *)c->buf + c->lo;
        uint64_t len = le(h + 4, 4), seq = le(h + 8, 8);
        size_t slen = h[16];
        if (len > SEEDLINK_MAX_PAYLOAD)
            return err_set(-EMSGSIZE, "SeedLink server %s: v4 packet of %llu bytes (at most %d) (%s)",
                           c->server, (unsigned long long)len, SEEDLINK_MAX_PAYLOAD, at_seq(c));
        if (slen >= sizeof p->station)
            return err_set(-EBADMSG, "SeedLink server %s: v4 station id of %zu bytes (at most %zu) (%s)",
                           c->server, slen, sizeof p->station - 1, at_seq(c));
        if ((rc = fill(c, 17 + slen + len, -1)))
            return rc;
        h = (const unsigned char *)c->buf + c->lo;
        p->format = (char)h[2];
        p->subformat = (char)h[3];
        memcpy(p->station, h + 17, slen);
        p->station[slen] = '\0';
        for (size_t i = 0; i < slen; i++)
            if (!isgraph((unsigned char)p->station[i]))
                return err_set(-EBADMSG, "SeedLink server %s: v4 station id with byte 0x%02x (%s)",
                               c->server, (unsigned char)p->station[i], at_seq(c));
        p->payload = c->buf + c->lo + 17 + slen;
        p->len = (size_t)len;
        if (p->format == 'J') {
            p->kind = SL_PKT_INFO;
            p->info_last = true;
        } else {
            p->kind = (p->format == '2' || p->format == '3') && p->subformat == 'D' ? SL_PKT_DATA
                                                                                  : SL_PKT_OTHER;
            p->seq = seq;
            if (p->kind == SL_PKT_DATA)
                c->last_seq = seq;
        }
        c->lo += 17 + slen + (size_t)len;
        return 0;
    }
    if (h[0] == 'S' && h[1] == 'L') {
        if ((rc = fill(c, 8, -1)))
            return rc;
        h = (const unsigned char *)c->buf + c->lo;
        int reclen = 0;
        if (memcmp(h + 2, "INFO", 4) == 0) {
            if (h[6] != ' ' || (h[7] != ' ' && h[7] != '*'))
                return err_set(-EBADMSG, "SeedLink server %s: malformed INFO header \"%s\" (%s)",
                               c->server, peek(c), at_seq(c));
            if ((rc = record_length(c, 8, "INFO packet", &reclen)))
                return rc;
            p->kind = SL_PKT_INFO;
            p->format = '2';
            p->subformat = 'I';
            p->info_last = h[7] == ' ';
        } else {
            uint64_t seq = 0;
            for (int i = 2; i < 8; i++) {
                int ch = h[i], d = isdigit(ch) ? ch - '0' : (ch >= 'A' && ch <= 'F') ? ch - 'A' + 10
                                                          : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10 : -1;
                if (d < 0)
                    return err_set(-EBADMSG, "SeedLink server %s: v3 header \"%s\": sequence is not "
                                   "six hex digits (%s)", c->server, peek(c), at_seq(c));
                seq = seq << 4 | (uint64_t)d;
            }
            if ((rc = record_length(c, 8, "data packet", &reclen)))
                return rc;
            p->kind = SL_PKT_DATA;
            p->format = '2';
            p->subformat = 'D';
            p->seq = seq;
        }
        if ((rc = fill(c, 8 + (size_t)reclen, -1)))
            return rc;
        if (p->kind == SL_PKT_DATA) /* complete: the last sequence for messages */
            c->last_seq = p->seq;
        p->payload = c->buf + c->lo + 8;
        p->len = (size_t)reclen;
        c->lo += 8 + (size_t)reclen;
        return 0;
    }
    /* an ERROR line or END (dial-up) in the stream */
    if ((rc = fill(c, 3, -1)))
        return rc;
    if (memcmp(c->buf + c->lo, "END", 3) == 0)
        return err_set(-ENODATA, "SeedLink server %s: END: the server ended the stream (%s)", c->server,
                       at_seq(c));
    if (c->hi - c->lo >= 5 && memcmp(c->buf + c->lo, "ERROR", 5) == 0) {
        char line[SEEDLINK_MAX_LINE];
        if (read_line(c, line, sizeof line) == 0)
            return err_set(-EPROTO, "SeedLink server %s: %s (%s)", c->server, line, at_seq(c));
    }
    return err_set(-EBADMSG, "SeedLink server %s: \"%s\" is not a SeedLink packet (%s)", c->server,
                   peek(c), at_seq(c));
}

int seedlink_read(struct seedlink_conn *c, struct seedlink_packet *p)
{
    return seedlink_read_wait(c, p, -1);
}

static int add_stream(struct seedlink_stream **out, int *n, const char *net, const char *sta,
                      const char *loc, const char *cha)
{
    if (*n >= 100000)
        return err_set(-E2BIG, "SeedLink INFO STREAMS: more than 100000 streams");
    if (strlen(net) >= 8 || strlen(sta) >= 16 || strlen(loc) >= 8 || strlen(cha) >= 8)
        return 0; /* not a SEED stream (too long for its codes): not ours */
    struct seedlink_stream *p = realloc(*out, (size_t)(*n + 1) * sizeof *p);
    if (!p)
        return err_set(-ENOMEM, "SeedLink INFO STREAMS: out of memory");
    *out = p;
    struct seedlink_stream *s = &p[(*n)++];
    snprintf(s->net, sizeof s->net, "%s", net);
    snprintf(s->sta, sizeof s->sta, "%s", sta);
    snprintf(s->loc, sizeof s->loc, "%s", loc);
    snprintf(s->cha, sizeof s->cha, "%s", cha);
    return 0;
}

int seedlink_parse_streams_json(const char *txt, size_t len, struct seedlink_stream **out, int *n)
{
    json_error_t je;
    json_t *root = json_loadb(txt, len, 0, &je);
    if (!root)
        return err_set(-EBADMSG, "INFO STREAMS JSON: byte %d: %s", je.position, je.text);
    int rc = 0;
    json_t *err = json_object_get(root, "error");
    json_t *stations = json_object_get(root, "station");
    if (err && !stations)
        rc = err_set(-EPROTO, "INFO STREAMS: the server answered an error: %.200s",
                     json_is_object(err) && json_string_value(json_object_get(err, "message"))
                         ? json_string_value(json_object_get(err, "message")) : "(no message)");
    else if (!json_is_array(stations))
        rc = err_set(-EBADMSG, "INFO STREAMS JSON: no \"station\" array");
    size_t i, k;
    json_t *st, *sm;
    if (!rc)
        json_array_foreach(stations, i, st) {
            const char *id = json_string_value(json_object_get(st, "id"));
            json_t *streams = json_object_get(st, "stream");
            if (!id || !json_is_array(streams))
                continue; /* a station without streams: nothing to take */
            char net[16] = "", sta[32] = "";
            const char *us = strchr(id, '_');
            if (!us || (size_t)(us - id) >= sizeof net || strlen(us + 1) >= sizeof sta)
                continue;
            memcpy(net, id, (size_t)(us - id));
            snprintf(sta, sizeof sta, "%s", us + 1);
            json_array_foreach(streams, k, sm) {
                const char *sid = json_string_value(json_object_get(sm, "id"));
                if (!sid || strlen(sid) >= 32)
                    continue;
                /* "LOC_B_S_s" (FDSN source id channel) or "LOC_CHA" */
                char f[4][32] = {{0}};
                int nf = 0;
                const char *q = sid;
                while (nf < 4) {
                    const char *e = strchr(q, '_');
                    size_t l = e ? (size_t)(e - q) : strlen(q);
                    memcpy(f[nf++], q, l);
                    if (!e)
                        break;
                    q = e + 1;
                }
                char cha[16];
                if (nf == 4 && strlen(f[1]) == 1 && strlen(f[2]) == 1 && strlen(f[3]) == 1)
                    snprintf(cha, sizeof cha, "%s%s%s", f[1], f[2], f[3]);
                else if (nf == 2)
                    snprintf(cha, sizeof cha, "%.7s", f[1]);
                else
                    continue;
                if ((rc = add_stream(out, n, net, sta, f[0], cha)))
                    break;
            }
            if (rc)
                break;
        }
    json_decref(root);
    return rc;
}

/* The value of attribute NAME in the tag [TAG, END): into V (LEN), "" when absent. */
static void xml_attr(const char *tag, const char *end, const char *name, char *v, size_t len)
{
    v[0] = '\0';
    size_t nl = strlen(name);
    for (const char *p = tag; p + nl + 2 < end; p++)
        if ((p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n') && memcmp(p, name, nl) == 0 &&
            p[nl] == '=' && (p[nl + 1] == '"' || p[nl + 1] == '\'')) {
            char q = p[nl + 1];
            const char *s = p + nl + 2, *e = memchr(s, q, (size_t)(end - s));
            if (!e)
                return;
            size_t n = (size_t)(e - s) < len - 1 ? (size_t)(e - s) : len - 1;
            memcpy(v, s, n);
            v[n] = '\0';
            return;
        }
}

/* SeedLink 3's INFO STREAMS XML: <station name= network=> <stream location= seedname=/>
 * ... </station>.  Only these attributes are read: a small scanner rather than an XML
 * library for a fixed, flat document (no entities or nesting beyond this are used). */
int seedlink_parse_streams_xml(const char *txt, size_t len, struct seedlink_stream **out, int *n)
{
    const char *end = txt + len, *p = txt;
    char net[16] = "", sta[32] = "";
    if (!memmem(txt, len, "<seedlink", 9))
        return err_set(-EBADMSG, "INFO STREAMS XML: no <seedlink> element");
    while ((p = memchr(p, '<', (size_t)(end - p))) != NULL) {
        const char *e = memchr(p, '>', (size_t)(end - p));
        if (!e)
            return err_set(-EBADMSG, "INFO STREAMS XML: byte %zu: unterminated tag", (size_t)(p - txt));
        if ((size_t)(e - p) > 8 && memcmp(p, "<station", 8) == 0 && (p[8] == ' ' || p[8] == '\t')) {
            xml_attr(p + 1, e, "name", sta, sizeof sta);
            xml_attr(p + 1, e, "network", net, sizeof net);
        } else if ((size_t)(e - p) > 7 && memcmp(p, "<stream", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
            char loc[16], cha[16], type[8];
            xml_attr(p + 1, e, "location", loc, sizeof loc);
            xml_attr(p + 1, e, "seedname", cha, sizeof cha);
            xml_attr(p + 1, e, "type", type, sizeof type);
            if (sta[0] && cha[0] && (!type[0] || type[0] == 'D')) {
                int rc = add_stream(out, n, net, sta, loc, cha);
                if (rc)
                    return rc;
            }
        }
        p = e + 1;
    }
    return 0;
}

/* The text of a v3 INFO record (ASCII samples): appended to *TXT. */
static int info_record_text(const struct seedlink_conn *c, const char *rec, size_t reclen, char **txt,
                            size_t *tlen)
{
    /* SEED fixed header: number of samples at byte 30, data offset at 44 (big endian,
     * as ringserver and SeisComP write INFO records) */
    const unsigned char *r = (const unsigned char *)rec;
    size_t ns = (size_t)r[30] << 8 | r[31], off = (size_t)r[44] << 8 | r[45];
    if (off < 48 || off > reclen || ns > reclen - off)
        return err_set(-EBADMSG, "SeedLink server %s: INFO record: %zu characters at byte %zu do not "
                       "fit its %zu bytes", c->server, ns, off, reclen);
    if (*tlen + ns > SEEDLINK_MAX_INFO)
        return err_set(-EMSGSIZE, "SeedLink server %s: INFO answer longer than %d bytes", c->server,
                       SEEDLINK_MAX_INFO);
    char *p = realloc(*txt, *tlen + ns + 1);
    if (!p)
        return err_set(-ENOMEM, "SeedLink: out of memory");
    memcpy(p + *tlen, rec + off, ns);
    *tlen += ns;
    p[*tlen] = '\0';
    *txt = p;
    return 0;
}

int seedlink_info_streams(struct seedlink_conn *c, struct seedlink_stream **out, int *n)
{
    *out = NULL;
    *n = 0;
    int rc = seedlink_send(c, "INFO STREAMS");
    char *txt = NULL;
    size_t tlen = 0;
    int packets = 0;
    while (!rc) {
        struct seedlink_packet p;
        rc = seedlink_read(c, &p);
        if (rc)
            break;
        if (p.kind != SL_PKT_INFO) {
            if (++packets > 1000)
                rc = err_set(-EBADMSG, "SeedLink server %s: no INFO answer among 1000 packets", c->server);
            continue;
        }
        if (c->proto == 4) {
            if (p.subformat == 'E')
                rc = err_set(-EPROTO, "SeedLink server %s: INFO STREAMS refused: %.*s", c->server,
                             (int)(p.len < 200 ? p.len : 200), p.payload);
            else
                rc = seedlink_parse_streams_json(p.payload, p.len, out, n);
            break;
        }
        rc = info_record_text(c, p.payload, p.len, &txt, &tlen);
        if (!rc && p.info_last) {
            rc = seedlink_parse_streams_xml(txt, tlen, out, n);
            break;
        }
    }
    free(txt);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
        return err_prefix(rc, "INFO STREAMS");
    }
    return 0;
}

bool seedlink_wildmatch(const char *pat, const char *s)
{
    /* iterative '*' backtracking: linear in practice, no recursion on hostile input */
    const char *star = NULL, *ss = NULL;
    while (*s) {
        if (*pat == '?' || *pat == *s) {
            pat++;
            s++;
        } else if (*pat == '*') {
            star = pat++;
            ss = s;
        } else if (star) {
            pat = star + 1;
            s = ++ss;
        } else {
            return false;
        }
    }
    while (*pat == '*')
        pat++;
    return *pat == '\0';
}

static bool code_chars(const char *s, const char *extra)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
            return false;
    return true;
}

int seedlink_selector_parse(const char *s, struct seedlink_selector *out)
{
    memset(out, 0, sizeof *out);
    const char *us = strchr(s, '_'), *colon = strchr(s, ':');
    if (!us || (colon && colon < us))
        return err_set(-EINVAL, "stream \"%s\": not NET_STA or NET_STA:CHANNELS (e.g. \"XX_S01:HH?\")", s);
    size_t nl = (size_t)(us - s), sl = colon ? (size_t)(colon - us - 1) : strlen(us + 1);
    if (nl == 0 || nl >= sizeof out->net || sl == 0 || sl >= sizeof out->sta)
        return err_set(-EINVAL, "stream \"%s\": network code of 1-%zu and station code of 1-%zu "
                       "characters expected", s, sizeof out->net - 1, sizeof out->sta - 1);
    memcpy(out->net, s, nl);
    memcpy(out->sta, us + 1, sl);
    if (!code_chars(out->net, "?*") || !code_chars(out->sta, "?*"))
        return err_set(-EINVAL, "stream \"%s\": codes are letters and digits, with '?' and '*' as "
                       "wildcards", s);
    if (!colon)
        return 0;
    const char *p = colon + 1;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t l = strcspn(p, " ");
        if (out->nsel == 8)
            return err_set(-EINVAL, "stream \"%s\": more than 8 channel selectors", s);
        if (l != 3 && l != 5)
            return err_set(-EINVAL, "stream \"%s\": channel selector \"%.*s\" is not CCC or LLCCC "
                           "(e.g. \"HH?\", \"00HHZ\"; '?' matches one character)", s, (int)l, p);
        memcpy(out->sel[out->nsel], p, l);
        out->sel[out->nsel][l] = '\0';
        if (!code_chars(out->sel[out->nsel], "?-"))
            return err_set(-EINVAL, "stream \"%s\": channel selector \"%s\": letters, digits, '?', '-'",
                           s, out->sel[out->nsel]);
        out->nsel++;
        p += l;
    }
    if (out->nsel == 0)
        return err_set(-EINVAL, "stream \"%s\": nothing after ':' (leave it out for every channel)", s);
    return 0;
}

bool seedlink_selector_match(const struct seedlink_selector *s, const char *net, const char *sta,
                             const char *loc, const char *cha)
{
    if (!seedlink_wildmatch(s->net, net) || !seedlink_wildmatch(s->sta, sta))
        return false;
    if (s->nsel == 0)
        return true;
    for (int i = 0; i < s->nsel; i++) {
        const char *sel = s->sel[i];
        if (strlen(sel) == 5) {
            char l[3] = {sel[0], sel[1], 0};
            /* "--" or "  " is the empty location code */
            bool empty = (l[0] == '-' && l[1] == '-') || (l[0] == ' ' && l[1] == ' ');
            if (empty ? loc[0] != '\0' : !seedlink_wildmatch(l, loc))
                continue;
            sel += 2;
        }
        if (seedlink_wildmatch(sel, cha))
            return true;
    }
    return false;
}

int seedlink_parse_time(const char *s, int64_t *ns)
{
    char buf[64];
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof buf)
        return -EINVAL;
    memcpy(buf, s, n + 1);
    if (buf[n - 1] == 'Z' || buf[n - 1] == 'z')
        buf[n - 1] = '\0';
    for (const char *p = buf; *p; p++) /* libmseed is lenient: only digits and separators */
        if (!isdigit((unsigned char)*p) && !strchr("-:,.T", *p))
            return -EINVAL;
    if (strlen(buf) < 10 || buf[4] != (buf[4] == ',' ? ',' : '-'))
        return -EINVAL;
    hptime_t t = ms_timestr2hptime(buf);
    if (t == HPTERROR)
        return -EINVAL;
    *ns = (int64_t)t * 1000;
    return 0;
}

uint64_t seedlink_seq_unwrap24(uint64_t next, uint64_t seq)
{
    if (next == UINT64_MAX || next == 0)
        return seq & 0xFFFFFF;
    uint64_t last = next - 1, e = (last & ~0xFFFFFFULL) | (seq & 0xFFFFFF);
    if (e + 0x800000 < last)
        e += 0x1000000;
    else if (e > last + 0x800000 && e >= 0x1000000)
        e -= 0x1000000;
    return e;
}
