/* seislive-sub — subscribe to a running seislive and keep what it publishes:
 * every image (SEG-Y, raw + JSON, PNG slices), event lines as they arrive, and a
 * progress line (shots stacked, rate, latency, events) that updates in place on a
 * terminal and is printed as plain lines otherwise. */
#define LOG_COMPONENT "sub"
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "io/png_slices.h"
#include "io/wire.h"
#include "stream/error.h"
#include "stream/log.h"
#include "stream/signals.h"
#include "tools/mkdirs.h"
#include "tools/pace.h"
#include "tools/volume_files.h"

static const char usage_text[] =
    "usage: seislive-sub [options] ENDPOINT\n"
    "\n"
    "Subscribe to a running seislive ([output] endpoint, e.g. tcp://127.0.0.1:5556) and\n"
    "write what it publishes into a folder:\n"
    "  image_latest.{segy,f32,json} and image_latest_{x,y,z}.png   every image received\n"
    "  image_final.*                                            the final image\n"
    "  coherence_latest.*                                       locate coherence volumes\n"
    "  events.jsonl                                             one JSON line per event\n"
    "\n"
    "options:\n"
    "  -o, --out DIR          output folder (default sub-out)\n"
    "  --keep                 also keep every image as image_SEQ.* (default: latest only)\n"
    "  --no-segy, --no-raw, --no-png   skip those files\n"
    "  --percentile P         PNG colour clip: this percentile of |image| (default 99)\n"
    "  --scale S              PNG pixels per cell (default: at least 400 pixels across)\n"
    "  --at IX,IY,IZ          slice indices for the PNGs (default: the middle)\n"
    "  --topics LIST          comma-separated topics (default image,coherence,event,status)\n"
    "  --count N              exit after N images (default: no limit)\n"
    "  --idle S               exit after S seconds without any message (default 0 = never)\n"
    "  --stay                 keep running after the final image (default: exit)\n"
    "  --curve-server KEY     server public key (Z85): connect with CURVE\n"
    "  --curve-keys FILE      this client's key pair: public and secret key (Z85), one per line\n"
    "  -q, --quiet            no progress line\n"
    "  -h, --help             this text\n"
    "\n"
    "exit status: 0 after the final image, --count images, --idle or SIGINT/SIGTERM;\n"
    "1 on an error; 2 on a bad command line.\n";

struct sub {
    const char *out;
    int keep, segy, raw, png, quiet, stay, count;
    double percentile, idle;
    int scale, at[3];
    /* progress */
    int tty;
    long long images, events, shots, gaps, seq_last, bad;
    double rate, latency_ms, t_start, t_last_image;
    char job[32];
    int final_seen;
};

static void progress(struct sub *s)
{
    if (s->quiet)
        return;
    double el = pace_now() - s->t_start;
    char line[512];
    /* rtm stacks shots; locate processes blocks */
    const char *unit = strcmp(s->job, "locate") == 0 ? "blocks" : "shots stacked";
    snprintf(line, sizeof line,
             "%s%s%s%lld %s, %lld images, %lld events, %.2f/s, latency %.0f ms, %lld missed, "
             "%.0f s",
             s->job[0] ? "[" : "", s->job, s->job[0] ? "] " : "", s->shots, unit, s->images,
             s->events, s->rate, s->latency_ms, s->gaps, el);
    if (s->tty)
        fprintf(stderr, "\r%s\033[K", line);
    else
        fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

/* A line of its own on a terminal (the progress line is redrawn after it). */
static void print_line(struct sub *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void print_line(struct sub *s, const char *fmt, ...)
{
    va_list ap;
    if (s->tty && !s->quiet)
        fputs("\r\033[K", stderr);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fflush(stdout);
}

static int write_volume(struct sub *s, const char *base, const struct wire_volume_hdr *h,
                        const float *v)
{
    struct volume_meta m = {{h->n[0], h->n[1], h->n[2]},
                            {h->d[0], h->d[1], h->d[2]},
                            {h->o[0], h->o[1], h->o[2]},
                            (long long)h->seq, (long long)h->units, h->final};
    char path[4096];
    int rc = 0;
    snprintf(path, sizeof path, "%s/%s", s->out, base);
    if (s->raw && (rc = volume_write_raw(path, &m, v)) < 0)
        return rc;
    if (s->segy) {
        char p2[4200];
        snprintf(p2, sizeof p2, "%s.segy", path);
        if ((rc = volume_write_segy(p2, &m, v)) < 0)
            return rc;
    }
    if (s->png && (rc = png_write_slices(path, v, h->n, s->at, s->percentile, s->scale)) < 0)
        return rc;
    return 0;
}

/* The three slices of a slices-only image, put back into a volume with zeros elsewhere
 * (so every writer works the same).  H and the frame sizes are checked by the caller
 * (wire_parse_volume bounds n and at, wire_check_volume_payload the sizes). */
static float *unslice(const struct wire_volume_hdr *h, zmq_msg_t *f)
{
    size_t nx = (size_t)h->n[0], ny = (size_t)h->n[1], nz = (size_t)h->n[2];
    float *v = calloc(nx * ny * nz, sizeof *v);
    if (!v)
        return NULL;
    const float *xy = zmq_msg_data(&f[0]), *xz = zmq_msg_data(&f[1]), *yz = zmq_msg_data(&f[2]);
    memcpy(v + (size_t)h->at[2] * nx * ny, xy, nx * ny * 4);
    for (size_t z = 0; z < nz; z++) {
        memcpy(v + (z * ny + (size_t)h->at[1]) * nx, xz + z * nx, nx * 4);
        for (size_t y = 0; y < ny; y++)
            v[(z * ny + y) * nx + (size_t)h->at[0]] = yz[z * ny + y];
    }
    return v;
}

static int on_volume(struct sub *s, const char *topic, zmq_msg_t *fr, int nfr)
{
    struct wire_volume_hdr h;
    if (nfr < 3 || wire_parse_volume(zmq_msg_data(&fr[1]), zmq_msg_size(&fr[1]), &h) < 0) {
        s->bad++;
        log_warn("%s message with a bad header ignored (%lld so far): %s", topic, s->bad,
                 nfr < 3 ? "no payload frame" : err_msg());
        return 0;
    }
    size_t len[3];
    for (int i = 2; i < nfr && i < 5; i++)
        len[i - 2] = zmq_msg_size(&fr[i]);
    if (wire_check_volume_payload(&h, len, nfr - 2 < 3 ? nfr - 2 : 4) < 0) {
        s->bad++;
        log_warn("%s ignored (%lld so far): %s", topic, s->bad, err_msg());
        return 0;
    }
    size_t n = (size_t)h.n[0] * h.n[1] * h.n[2];
    float *owned = h.slices ? unslice(&h, fr + 2) : malloc(n * sizeof *owned);
    if (!owned)
        return err_set(-ENOMEM, "%s %llu: out of memory for %zu cells", topic,
                       (unsigned long long)h.seq, n);
    /* zmq frames are at least 4-byte aligned in practice; copy to be sure */
    if (!h.slices)
        memcpy(owned, zmq_msg_data(&fr[2]), n * sizeof *owned);
    const float *v = owned;
    int image = strcmp(topic, WIRE_TOPIC_IMAGE) == 0;
    int rc = 0;
    char base[256];
    if (image) {
        s->images++;
        s->shots = h.units;
        s->t_last_image = pace_now();
        snprintf(base, sizeof base, "image_latest");
        rc = write_volume(s, base, &h, v);
        if (rc == 0 && s->keep) {
            snprintf(base, sizeof base, "image_%06llu", (unsigned long long)h.seq);
            rc = write_volume(s, base, &h, v);
        }
        if (rc == 0 && h.final) {
            rc = write_volume(s, "image_final", &h, v);
            s->final_seen = 1;
            print_line(s, "final image: %lld shots, %d x %d x %d, written to %s/image_final.*\n",
                       (long long)h.units, h.n[0], h.n[1], h.n[2], s->out);
        }
    } else {
        snprintf(base, sizeof base, "coherence_latest");
        rc = write_volume(s, base, &h, v);
        if (rc == 0 && s->keep) {
            snprintf(base, sizeof base, "coherence_%06llu", (unsigned long long)h.seq);
            rc = write_volume(s, base, &h, v);
        }
    }
    free(owned);
    progress(s);
    return rc;
}

static void on_event(struct sub *s, zmq_msg_t *fr, int nfr)
{
    if (nfr < 2)
        return;
    json_t *o = json_loadb(zmq_msg_data(&fr[1]), zmq_msg_size(&fr[1]), 0, NULL);
    json_int_t origin = 0;
    double x = 0, y = 0, z = 0, strength = 0;
    /* the wire's {"xyz": [..], "strength"} or the event file's {"x": [..], "coalescence"} */
    json_t *pos = json_object_get(o, "xyz");
    if (!pos)
        pos = json_object_get(o, "x");
    json_t *st = json_object_get(o, "strength");
    if (!st)
        st = json_object_get(o, "coalescence");
    if (!o || json_unpack(o, "{s:I}", "origin_ns", &origin) != 0 ||
        json_unpack(pos, "[FFF]", &x, &y, &z) != 0 || !json_is_number(st)) {
        log_warn("event message with a bad header ignored");
        json_decref(o);
        return;
    }
    strength = json_number_value(st);
    s->events++;
    time_t sec = (time_t)(origin / 1000000000LL);
    struct tm tm;
    gmtime_r(&sec, &tm);
    char iso[64];
    strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
    print_line(s, "event %lld: %s.%06lldZ x=%.1f y=%.1f z=%.1f m strength %.3g\n", s->events, iso,
               (long long)(origin % 1000000000LL) / 1000, x, y, z, strength);
    char path[4096];
    snprintf(path, sizeof path, "%s/events.jsonl", s->out);
    FILE *f = fopen(path, "a");
    if (f) {
        json_dumpf(o, f, JSON_COMPACT | JSON_SORT_KEYS);
        fputc('\n', f);
        fclose(f);
    } else {
        log_warn("%s: %s", path, strerror(errno));
    }
    json_decref(o);
    progress(s);
}

static void on_status(struct sub *s, zmq_msg_t *fr, int nfr)
{
    if (nfr < 2)
        return;
    json_t *o = json_loadb(zmq_msg_data(&fr[1]), zmq_msg_size(&fr[1]), 0, NULL);
    if (!o)
        return;
    const char *job = json_string_value(json_object_get(o, "job"));
    if (job)
        snprintf(s->job, sizeof s->job, "%s", job);
    json_t *u = json_object_get(o, "units");
    if (json_is_integer(u) && strcmp(s->job, "rtm") != 0)
        s->shots = json_integer_value(u);
    if (json_is_number(json_object_get(o, "rate")))
        s->rate = json_number_value(json_object_get(o, "rate"));
    if (json_is_number(json_object_get(o, "latency_ms")))
        s->latency_ms = json_number_value(json_object_get(o, "latency_ms"));
    json_decref(o);
    progress(s);
}

static int parse_ints(const char *s, int *v, int n)
{
    for (int i = 0; i < n; i++) {
        char *end;
        long x = strtol(s, &end, 10);
        if (end == s || (i < n - 1 && *end != ',') || (i == n - 1 && *end))
            return -1;
        v[i] = (int)x;
        s = end + 1;
    }
    return 0;
}

static int read_keys(const char *path, char pub[41], char sec[41])
{
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    int ok = fscanf(f, "%40s %40s", pub, sec) == 2 && strlen(pub) == 40 && strlen(sec) == 40;
    fclose(f);
    return ok ? 0 : err_set(-EINVAL, "%s: expected two Z85 keys of 40 characters", path);
}

int main(int argc, char **argv)
{
    enum { O_KEEP = 256, O_NOSEGY, O_NORAW, O_NOPNG, O_PCT, O_SCALE, O_AT, O_TOPICS, O_COUNT,
           O_IDLE, O_STAY, O_CSERVER, O_CKEYS };
    static const struct option lo[] = {
        {"out", 1, 0, 'o'},          {"keep", 0, 0, O_KEEP},     {"no-segy", 0, 0, O_NOSEGY},
        {"no-raw", 0, 0, O_NORAW},   {"no-png", 0, 0, O_NOPNG},  {"percentile", 1, 0, O_PCT},
        {"scale", 1, 0, O_SCALE},    {"at", 1, 0, O_AT},         {"topics", 1, 0, O_TOPICS},
        {"count", 1, 0, O_COUNT},    {"idle", 1, 0, O_IDLE},     {"stay", 0, 0, O_STAY},
        {"curve-server", 1, 0, O_CSERVER}, {"curve-keys", 1, 0, O_CKEYS},
        {"quiet", 0, 0, 'q'},        {"help", 0, 0, 'h'},        {0, 0, 0, 0}};
    struct sub s = {.out = "sub-out", .segy = 1, .raw = 1, .png = 1, .percentile = 99,
                    .at = {-1, -1, -1}, .seq_last = -1};
    const char *topics = "image,coherence,event,status", *cserver = NULL, *ckeys = NULL;
    int opt, idx = 0, bad = 0;
    while (!bad && (opt = getopt_long(argc, argv, "o:qh", lo, &idx)) != -1) {
        switch (opt) {
        case 'o': s.out = optarg; break;
        case O_KEEP: s.keep = 1; break;
        case O_NOSEGY: s.segy = 0; break;
        case O_NORAW: s.raw = 0; break;
        case O_NOPNG: s.png = 0; break;
        case O_PCT: s.percentile = atof(optarg); bad = !(s.percentile > 0 && s.percentile <= 100); break;
        case O_SCALE: s.scale = atoi(optarg); bad = s.scale < 1 || s.scale > 64; break;
        case O_AT: bad = parse_ints(optarg, s.at, 3) < 0; break;
        case O_TOPICS: topics = optarg; break;
        case O_COUNT: s.count = atoi(optarg); bad = s.count < 1; break;
        case O_IDLE: s.idle = atof(optarg); bad = !(s.idle >= 0); break;
        case O_STAY: s.stay = 1; break;
        case O_CSERVER: cserver = optarg; break;
        case O_CKEYS: ckeys = optarg; break;
        case 'q': s.quiet = 1; break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: bad = 2; break;
        }
        if (bad == 1)
            fprintf(stderr, "seislive-sub: bad value for --%s: '%s'\n", lo[idx].name, optarg);
    }
    if (!bad && optind != argc - 1) {
        fprintf(stderr, "seislive-sub: expected one ENDPOINT\n");
        bad = 1;
    }
    if (bad) {
        fputs("try 'seislive-sub --help'\n", stderr);
        return 2;
    }
    const char *endpoint = argv[optind];
    if (mkdirs(s.out) < 0) {
        fprintf(stderr, "seislive-sub: %s\n", err_msg());
        return 1;
    }
    s.tty = isatty(2);
    signals_install();
    void *ctx = zmq_ctx_new();
    void *sock = zmq_socket(ctx, ZMQ_SUB);
    int linger = 0;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    if (cserver) {
        char pub[41], sec[41];
        if (!ckeys) {
            fprintf(stderr, "seislive-sub: --curve-server needs --curve-keys FILE\n");
            return 2;
        }
        if (read_keys(ckeys, pub, sec) < 0) {
            fprintf(stderr, "seislive-sub: %s\n", err_msg());
            return 2;
        }
        /* Every key must be applied, or the connection would be plain text. */
        if (!wire_has_curve() || strlen(cserver) != 40 ||
            zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, cserver, 40) < 0 ||
            zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, pub, 40) < 0 ||
            zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, sec, 40) < 0) {
            fprintf(stderr, "seislive-sub: CURVE keys cannot be applied: %s\n",
                    !wire_has_curve() ? "this libzmq has no CURVE support"
                    : strlen(cserver) != 40 ? "--curve-server is not a 40-character Z85 key"
                                            : zmq_strerror(errno));
            zmq_close(sock);
            zmq_ctx_term(ctx);
            return 2;
        }
    }
    char *tl = strdup(topics);
    for (char *save = NULL, *t = strtok_r(tl, ",", &save); t; t = strtok_r(NULL, ",", &save))
        zmq_setsockopt(sock, ZMQ_SUBSCRIBE, t, strlen(t));
    free(tl);
    if (zmq_connect(sock, endpoint) < 0) {
        fprintf(stderr, "seislive-sub: %s: %s\n", endpoint, zmq_strerror(errno));
        zmq_close(sock);
        zmq_ctx_term(ctx);
        return 2;
    }
    log_info("subscribed to %s (%s); writing to %s", endpoint, topics, s.out);
    s.t_start = pace_now();
    double t_msg = s.t_start;
    int rc = 0;
    enum { MAXF = 8 };
    zmq_msg_t fr[MAXF];
    while (!signals_stop_requested()) {
        zmq_pollitem_t pi = {sock, 0, ZMQ_POLLIN, 0};
        int pr = zmq_poll(&pi, 1, 200);
        if (pr < 0) {
            if (errno == EINTR)
                continue;
            rc = err_set(-errno, "zmq_poll: %s", zmq_strerror(errno));
            break;
        }
        if (pr == 0) {
            if (s.idle > 0 && pace_now() - t_msg > s.idle) {
                log_info("no message for %.1f s: exiting", s.idle);
                break;
            }
            continue;
        }
        int nf = 0, more = 1;
        size_t extra = 0;
        while (more) {
            zmq_msg_t tmp, *m = nf < MAXF ? &fr[nf] : &tmp;
            zmq_msg_init(m);
            if (zmq_msg_recv(m, sock, 0) < 0) {
                zmq_msg_close(m);
                break;
            }
            more = zmq_msg_more(m);
            if (nf < MAXF)
                nf++;
            else {
                extra++;
                zmq_msg_close(m);
            }
        }
        t_msg = pace_now();
        if (nf < 2 || extra) {
            log_warn("message of %d frames ignored", nf + (int)extra);
        } else {
            char topic[32];
            size_t tl2 = zmq_msg_size(&fr[0]) < sizeof topic - 1 ? zmq_msg_size(&fr[0]) : sizeof topic - 1;
            memcpy(topic, zmq_msg_data(&fr[0]), tl2);
            topic[tl2] = '\0';
            int64_t seq = wire_parse_seq(zmq_msg_data(&fr[1]), zmq_msg_size(&fr[1]));
            if (seq >= 0) {
                /* sequence numbers are global over topics; a jump means we missed some
                 * (only meaningful when every topic is subscribed) */
                if (s.seq_last >= 0 && seq > s.seq_last + 1 &&
                    strcmp(topics, "image,coherence,event,status") == 0)
                    s.gaps += seq - s.seq_last - 1;
                if (seq > s.seq_last)
                    s.seq_last = seq;
            }
            if (strcmp(topic, WIRE_TOPIC_IMAGE) == 0 || strcmp(topic, WIRE_TOPIC_COHERENCE) == 0)
                rc = on_volume(&s, topic, fr, nf);
            else if (strcmp(topic, WIRE_TOPIC_EVENT) == 0)
                on_event(&s, fr, nf);
            else if (strcmp(topic, WIRE_TOPIC_STATUS) == 0)
                on_status(&s, fr, nf);
        }
        for (int i = 0; i < nf; i++)
            zmq_msg_close(&fr[i]);
        if (rc < 0)
            break;
        if ((s.final_seen && !s.stay) || (s.count > 0 && s.images >= s.count))
            break;
    }
    if (s.tty && !s.quiet)
        fputc('\n', stderr);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    if (rc < 0) {
        fprintf(stderr, "seislive-sub: %s\n", err_msg());
        return 1;
    }
    log_info("%lld images, %lld events received%s", s.images, s.events,
             s.gaps ? " (some messages missed: see the progress line)" : "");
    return 0;
}
