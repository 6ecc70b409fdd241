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

#include "io/picture.h"
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
    "  --percentile P         PNG colour clip: this percentile of |gained image| (default 99)\n"
    "  --gain K               PNG depth gain: values times depth^K (default 0: none)\n"
    "  --agc M                PNG AGC: each value over the RMS of a window of M metres\n"
    "                         along depth (default 0: none)\n"
    "  --size N               PNG plot of N pixels along its longer side, plus axes,\n"
    "                         title and colour bar (default 640)\n"
    "  --at IX,IY,IZ          slice indices for the PNGs (default: the middle)\n"
    "  --plain                PNG without axes, title or colour bar, each cell a square\n"
    "                         of --scale pixels (no gain)\n"
    "  --scale S              --plain pixels per cell (default: at least 400 pixels across)\n"
    "  --topics LIST          comma-separated topics (default image,coherence,event,status)\n"
    "  --count N              exit after N images (default: no limit)\n"
    "  --idle S               exit after S seconds without any message (default 0 = never)\n"
    "  --stay                 keep running after the end of the stream (default: exit)\n"
    "  --rcvhwm N             receive queue of N messages (default 1000); beyond it\n"
    "                         messages are lost, counted and reported\n"
    "  --delay MS             wait MS milliseconds after each message (a slow reader, for tests)\n"
    "  --curve-server KEY     server public key (Z85): connect with CURVE\n"
    "  --curve-keys FILE      this client's key pair: public and secret key (Z85), one per line\n"
    "  -q, --quiet            no progress line\n"
    "  -h, --help             this text\n"
    "\n"
    "Lost messages: seq numbers every message; a gap, or a final status (health \"stopped\")\n"
    "naming messages not received, is reported as missed.  The final image and the event\n"
    "list are fetched again from the publisher's cache when they were missed.\n"
    "\n"
    "exit status: 0 after the end of the stream (the final image, then the final status),\n"
    "--count images, --idle or SIGINT/SIGTERM, also when messages were missed (reported);\n"
    "1 on an error; 2 on a bad command line.\n";

struct sub {
    const char *out;
    int keep, segy, raw, png, plain, quiet, stay, count;
    double percentile, idle;
    int scale, at[3];
    struct picture_opts pic; /* percentile and at are the fields above */
    /* progress */
    int tty;
    long long images, events, shots, gaps, seq_last, bad;
    double rate, latency_ms, t_start, t_last_image;
    char job[32];
    int final_seen;
    /* Accounting of what was missed (docs/wire-format.md, "Lost messages").  seq is
     * global over the topics: SEEN holds one bit per seq received (live or fetched
     * again from the publisher's cache), LIVE counts those received when published. */
    void *sock;
    int subscribed[WIRE_T_N], all_topics, delay_ms;
    unsigned char *seen;
    int64_t seen_bits, seen_limit_logged;
    long long live, recovered, first_live, stop_seq, status_seq;
    int64_t topic_max[WIRE_T_N];   /* highest seq received per topic */
    int64_t topic_last[WIRE_T_N];  /* the last seq per topic, from the latest status */
    double t_ask[WIRE_T_N], ask_every, t_final, t_stop, t_progress;
    int final_recovered;
};

/* One bit per seq up to this many (16 MiB): beyond it the accounting stops (logged). */
#define SEEN_MAX_BITS ((int64_t)1 << 27)

/* Mark SEQ received; returns 1 if it was already, 0 if new, -1 if beyond the bound. */
static int seen_mark(struct sub *s, int64_t seq)
{
    if (seq < 0 || seq >= SEEN_MAX_BITS) {
        if (!s->seen_limit_logged++)
            log_warn("seq %lld beyond %lld: lost messages are no longer counted", (long long)seq,
                     (long long)SEEN_MAX_BITS);
        return -1;
    }
    if (seq >= s->seen_bits) {
        int64_t nb = s->seen_bits ? s->seen_bits : 4096;
        while (nb <= seq)
            nb *= 2;
        if (nb > SEEN_MAX_BITS)
            nb = SEEN_MAX_BITS;
        unsigned char *p = realloc(s->seen, (size_t)(nb / 8));
        if (!p)
            return -1;
        memset(p + s->seen_bits / 8, 0, (size_t)((nb - s->seen_bits) / 8));
        s->seen = p;
        s->seen_bits = nb;
    }
    unsigned char bit = (unsigned char)(1u << (seq % 8));
    int was = (s->seen[seq / 8] & bit) != 0;
    s->seen[seq / 8] |= bit;
    return was;
}

/* Ask the publisher for its cached messages of topic T after the last one we have: the
 * subscription "TOPIC@SEQ" reaches its XPUB socket (ZMQ_XPUB_VERBOSE), is answered from
 * the cache, and matches no topic itself (it is cancelled at once). */
static void ask_again(struct sub *s, int t)
{
    double now = pace_now();
    if (!s->subscribed[t] || now - s->t_ask[t] < 0.3)
        return;
    s->t_ask[t] = now;
    char ask[64];
    int n = snprintf(ask, sizeof ask, "%s@%lld", wire_topic_names[t],
                     (long long)(t == WIRE_T_STATUS ? s->status_seq : s->topic_max[t]));
    if (zmq_setsockopt(s->sock, ZMQ_SUBSCRIBE, ask, (size_t)n) < 0 ||
        zmq_setsockopt(s->sock, ZMQ_UNSUBSCRIBE, ask, (size_t)n) < 0)
        log_warn("asking for the cached %s: %s", wire_topic_names[t], zmq_strerror(errno));
    else
        log_debug("asked for the cached %s after seq %s", wire_topic_names[t], ask + strlen(wire_topic_names[t]) + 1);
}

/* Messages published since the first one received live that were not received live;
 * -1 before anything was received. */
static long long missed(const struct sub *s)
{
    long long end = s->stop_seq >= 0 ? s->stop_seq : s->seq_last;
    if (s->first_live < 0 || end < s->first_live || !s->all_topics)
        return s->gaps;
    return end - s->first_live + 1 - s->live;
}

/* Whether a subscribed topic has a message we know of (from a status) but do not have. */
static int behind(const struct sub *s, int t)
{
    /* coherence volumes are not cached: nothing to ask for */
    return t != WIRE_T_COHERENCE && s->subscribed[t] && s->topic_last[t] > s->topic_max[t];
}

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
             s->events, s->rate, s->latency_ms, missed(s), el);
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
    if (s->png && s->plain && (rc = png_write_slices(path, v, h->n, s->at, s->percentile, s->scale)) < 0)
        return rc;
    if (s->png && !s->plain) {
        /* the same pictures as the rtm job's final files (stream/job_rtm.c) */
        struct picture_opts o = s->pic;
        o.percentile = s->percentile;
        memcpy(o.at, s->at, sizeof o.at);
        struct picture_meta pm = {{h->n[0], h->n[1], h->n[2]},
                                  {h->d[0], h->d[1], h->d[2]},
                                  {h->o[0], h->o[1], h->o[2]},
                                  s->job, (long long)h->units,
                                  strcmp(s->job, "locate") == 0 ? "windows" : "shots stacked",
                                  (double)time(NULL), h->final};
        if ((rc = picture_write_slices(path, v, &pm, &o)) < 0)
            return rc;
    }
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
    if (wire_check_volume_payload(&h, len, nfr - 2 <= 3 ? nfr - 2 : 4) < 0) {
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
            s->t_final = pace_now();
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
    /* Event ids are 0-based everywhere (events.csv, the log, the wire): the publisher's
     * "id"; without one (an older publisher), the 0-based count of events received. */
    json_t *jid = json_object_get(o, "id");
    long long id = json_is_integer(jid) ? (long long)json_integer_value(jid) : s->events;
    s->events++;
    time_t sec = (time_t)(origin / 1000000000LL);
    struct tm tm;
    gmtime_r(&sec, &tm);
    char iso[64];
    strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
    print_line(s, "event %lld: %s.%06lldZ x=%.1f y=%.1f z=%.1f m strength %.3g\n", id, iso,
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
    json_t *jseq = json_object_get(o, "seq");
    long long seq = json_is_integer(jseq) ? (long long)json_integer_value(jseq) : -1;
    if (seq >= s->status_seq) {
        /* the newest status tells the last seq of every topic: what we should have */
        s->status_seq = seq;
        json_t *tp = json_object_get(o, "topics");
        for (int t = 0; t < WIRE_T_N; t++) {
            json_t *ls = json_object_get(json_object_get(tp, wire_topic_names[t]), "last_seq");
            if (json_is_integer(ls) && json_integer_value(ls) > s->topic_last[t])
                s->topic_last[t] = json_integer_value(ls);
        }
        const char *health = json_string_value(json_object_get(o, "health"));
        if (health && strcmp(health, "stopped") == 0 && s->stop_seq < 0) {
            s->stop_seq = seq; /* the publisher's last message */
            s->t_stop = pace_now();
        }
    }
    json_decref(o);
    progress(s);
}

/* The end: the final status is in and nothing it names is missing, or it is in and
 * the cache brought nothing new for 3 s, or (without a status subscription, or
 * from a publisher that sends none) 2 s after the final image.  --stay: never. */
static int sub_done(struct sub *s)
{
    if (s->stay)
        return 0;
    double now = pace_now();
    if (s->stop_seq >= 0) {
        int lacking = 0;
        for (int t = 0; t < WIRE_T_N; t++)
            lacking |= behind(s, t);
        /* give up 3 s after the last thing that was new to us */
        return !lacking || now - (s->t_progress > s->t_stop ? s->t_progress : s->t_stop) > 3.0;
    }
    return s->final_seen && (!s->subscribed[WIRE_T_STATUS] || now - s->t_final > 2.0);
}

static void report(struct sub *s)
{
    long long m = missed(s);
    long long end = s->stop_seq >= 0 ? s->stop_seq : s->seq_last;
    log_info("%lld images, %lld events received", s->images, s->events);
    if (s->first_live >= 0 && s->all_topics)
        log_info("messages seq %lld..%lld: %lld received, %lld missed, %lld fetched again from "
                 "the cache%s", s->first_live, end, s->live, m, s->recovered,
                 s->stop_seq >= 0 ? "" : " (the final status was not received)");
    if (m > 0)
        log_warn("missed %lld messages (lost on the way: this subscriber was too slow for its "
                 "queue, --rcvhwm, or the publisher's [output] hwm)", m);
    if (s->final_recovered)
        log_warn("the final image was missed when published; fetched from the publisher's cache");
    if (behind(s, WIRE_T_IMAGE))
        log_warn("the last image (seq %lld) was missed and could not be fetched",
                 (long long)s->topic_last[WIRE_T_IMAGE]);
    if (behind(s, WIRE_T_EVENT))
        log_warn("events up to seq %lld were missed and could not be fetched",
                 (long long)s->topic_last[WIRE_T_EVENT]);
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
           O_IDLE, O_STAY, O_CSERVER, O_CKEYS, O_RCVHWM, O_DELAY, O_GAIN, O_AGC, O_SIZE,
           O_PLAIN };
    static const struct option lo[] = {
        {"out", 1, 0, 'o'},          {"keep", 0, 0, O_KEEP},     {"no-segy", 0, 0, O_NOSEGY},
        {"no-raw", 0, 0, O_NORAW},   {"no-png", 0, 0, O_NOPNG},  {"percentile", 1, 0, O_PCT},
        {"scale", 1, 0, O_SCALE},    {"at", 1, 0, O_AT},         {"topics", 1, 0, O_TOPICS},
        {"count", 1, 0, O_COUNT},    {"idle", 1, 0, O_IDLE},     {"stay", 0, 0, O_STAY},
        {"curve-server", 1, 0, O_CSERVER}, {"curve-keys", 1, 0, O_CKEYS},
        {"rcvhwm", 1, 0, O_RCVHWM},  {"delay", 1, 0, O_DELAY},
        {"gain", 1, 0, O_GAIN},      {"agc", 1, 0, O_AGC},       {"size", 1, 0, O_SIZE},
        {"plain", 0, 0, O_PLAIN},
        {"quiet", 0, 0, 'q'},        {"help", 0, 0, 'h'},        {0, 0, 0, 0}};
    struct sub s = {.out = "sub-out", .segy = 1, .raw = 1, .png = 1, .percentile = 99,
                    .at = {-1, -1, -1}, .seq_last = -1, .first_live = -1, .stop_seq = -1,
                    .status_seq = -1, .ask_every = 1.0};
    for (int t = 0; t < WIRE_T_N; t++)
        s.topic_max[t] = s.topic_last[t] = -1;
    picture_opts_default(&s.pic);
    int rcvhwm = 1000;
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
        case O_RCVHWM: rcvhwm = atoi(optarg); bad = rcvhwm < 1; break;
        case O_DELAY: s.delay_ms = atoi(optarg); bad = s.delay_ms < 0 || s.delay_ms > 60000; break;
        case O_GAIN: s.pic.gain = atof(optarg); bad = picture_opts_check(&s.pic) < 0; break;
        case O_AGC: s.pic.agc = atof(optarg); bad = picture_opts_check(&s.pic) < 0; break;
        case O_SIZE: s.pic.size = atoi(optarg); bad = picture_opts_check(&s.pic) < 0; break;
        case O_PLAIN: s.plain = 1; break;
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
    s.sock = sock;
    if (zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger) < 0 ||
        zmq_setsockopt(sock, ZMQ_RCVHWM, &rcvhwm, sizeof rcvhwm) < 0) {
        fprintf(stderr, "seislive-sub: socket options: %s\n", zmq_strerror(errno));
        return 1;
    }
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
    for (char *save = NULL, *t = strtok_r(tl, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (zmq_setsockopt(sock, ZMQ_SUBSCRIBE, t, strlen(t)) < 0) {
            fprintf(stderr, "seislive-sub: subscribe %s: %s\n", t, zmq_strerror(errno));
            return 1;
        }
        int ti = wire_topic_index(t, strlen(t));
        if (ti >= 0)
            s.subscribed[ti] = 1;
    }
    free(tl);
    s.all_topics = s.subscribed[0] && s.subscribed[1] && s.subscribed[2] && s.subscribed[3];
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
            double now = pace_now();
            if (s.idle > 0 && now - t_msg > s.idle) {
                log_info("no message for %.1f s: exiting", s.idle);
                break;
            }
            /* Quiet: ask for what a status says we lack; ask for the latest status now
             * and then (backing off) in case the end of the stream was lost. */
            for (int t = 0; t < WIRE_T_N; t++)
                if (behind(&s, t))
                    ask_again(&s, t);
            if (s.stop_seq < 0 && now - t_msg > 0.3 && now - s.t_ask[WIRE_T_STATUS] > s.ask_every) {
                ask_again(&s, WIRE_T_STATUS);
                s.ask_every = s.ask_every * 2 < 30 ? s.ask_every * 2 : 30;
            }
            if (sub_done(&s))
                break;
            continue;
        }
        int nf = 0, more = 1, resent_dup = 0;
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
            int ti = wire_topic_index(topic, tl2);
            int64_t seq = -1;
            bool cached = false;
            json_t *hj = json_loadb(zmq_msg_data(&fr[1]), zmq_msg_size(&fr[1]), 0, NULL);
            if (json_is_integer(json_object_get(hj, "seq")))
                seq = json_integer_value(json_object_get(hj, "seq"));
            cached = json_is_true(json_object_get(hj, "cached"));
            json_decref(hj);
            int dup = seq >= 0 ? seen_mark(&s, seq) : -1;
            if (cached && dup == 1) {
                /* a resend from the publisher's cache of what we have: costs nothing */
                resent_dup = 1;
            } else {
                s.t_progress = t_msg;
                if (seq >= 0 && !cached) {
                    /* sequence numbers are global over topics; a jump means we missed
                     * some (counted this way only when every topic is subscribed) */
                    if (s.seq_last >= 0 && seq > s.seq_last + 1 && s.all_topics)
                        s.gaps += seq - s.seq_last - 1;
                    if (seq > s.seq_last)
                        s.seq_last = seq;
                    if (s.first_live < 0)
                        s.first_live = seq;
                    s.live++;
                    s.ask_every = 1.0;
                } else if (cached && dup == 0) {
                    s.recovered++;
                    log_info("seq %lld (%s) fetched from the publisher's cache", (long long)seq,
                             topic);
                }
                if (ti >= 0 && seq > s.topic_max[ti])
                    s.topic_max[ti] = seq;
                if (ti == WIRE_T_IMAGE || ti == WIRE_T_COHERENCE) {
                    int fin = s.final_seen;
                    rc = on_volume(&s, topic, fr, nf);
                    if (cached && !fin && s.final_seen)
                        s.final_recovered = 1;
                } else if (ti == WIRE_T_EVENT) {
                    on_event(&s, fr, nf);
                } else if (ti == WIRE_T_STATUS) {
                    on_status(&s, fr, nf);
                }
            }
        }
        for (int i = 0; i < nf; i++)
            zmq_msg_close(&fr[i]);
        if (rc < 0)
            break;
        for (int t = 0; t < WIRE_T_N; t++)
            if (behind(&s, t) && s.stop_seq >= 0)
                ask_again(&s, t); /* the stream is over: what is missing comes only from the cache */
        if (sub_done(&s) || (s.count > 0 && s.images >= s.count))
            break;
        if (s.delay_ms > 0 && !resent_dup)
            usleep((useconds_t)s.delay_ms * 1000);
    }
    if (s.tty && !s.quiet)
        fputc('\n', stderr);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    if (rc < 0) {
        fprintf(stderr, "seislive-sub: %s\n", err_msg());
        return 1;
    }
    report(&s);
    free(s.seen);
    return 0;
}
