/* publisher — XPUB thread: numbering, last-value cache, status, CURVE/ZAP. */
#define LOG_COMPONENT "publish"
#include "stream/publisher.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "io/wire.h"
#include "stream/error.h"
#include "stream/log.h"
#include "stream/shots_progress.h"

#define MAX_FRAMES (PUBLISHER_MAX_PAYLOAD + 2) /* topic + header + payload on XPUB */

/* One published message kept for resending: its frames, shared with the sent ones. */
struct cached {
    zmq_msg_t f[MAX_FRAMES];
    int n;
    uint64_t seq;
};

static void cache_clear(struct cached *c)
{
    for (int i = 0; i < c->n; i++)
        zmq_msg_close(&c->f[i]);
    c->n = 0;
}

static void counter_add(struct publisher *p, uint64_t *c)
{
    pthread_mutex_lock(&p->m->mu);
    (*c)++;
    pthread_mutex_unlock(&p->m->mu);
}

static int load_allowed(struct publisher *p, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(-errno, "[output] curve_clients %s: %s", path, strerror(errno));
    char line[256];
    int ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        /* a line the buffer cannot hold would be split and its tail read as a line: a key
         * at the end of a long comment (a revoked one, say) would be allowed */
        if (!strchr(line, '\n') && !feof(f)) {
            fclose(f);
            return err_set(-EINVAL, "%s:%d: line longer than %d characters", path, ln, (int)sizeof line - 2);
        }
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        s[strcspn(s, " \t\r\n")] = '\0';
        if (!*s || (*s == '#' && strlen(s) != 40))
            continue; /* blank or a comment ('#' is also a Z85 digit: a 40-char word is a key) */
        uint8_t key[32];
        if (strlen(s) != 40 || !zmq_z85_decode(key, s)) {
            fclose(f);
            return err_set(-EINVAL, "%s:%d: not a Z85 CURVE public key (40 characters)", path, ln);
        }
        char **a = realloc(p->allowed, (p->n_allowed + 1) * sizeof *a);
        if (!a) {
            fclose(f);
            return err_set(-ENOMEM, "%s:%d: out of memory", path, ln);
        }
        p->allowed = a;
        if (!(p->allowed[p->n_allowed] = strdup(s))) {
            fclose(f);
            return err_set(-ENOMEM, "%s: out of memory", path);
        }
        p->n_allowed++;
    }
    fclose(f);
    log_info("CURVE: %zu allowed client keys from %s", p->n_allowed, path);
    return 0;
}

/* One ZAP request: accept a CURVE client whose public key is listed, refuse the rest. */
static void zap_handle(struct publisher *p, void *zap)
{
    zmq_msg_t f[8];
    int n = 0, more = 1;
    while (more && n < 8) {
        zmq_msg_init(&f[n]);
        if (zmq_msg_recv(&f[n], zap, 0) < 0)
            break;
        more = zmq_msg_more(&f[n]);
        n++;
    }
    const char *status = "400", *text = "unknown client";
    char z85[41] = "";
    if (n >= 7 && zmq_msg_size(&f[5]) == 5 && memcmp(zmq_msg_data(&f[5]), "CURVE", 5) == 0 &&
        zmq_msg_size(&f[6]) == 32) {
        zmq_z85_encode(z85, zmq_msg_data(&f[6]), 32);
        for (size_t i = 0; i < p->n_allowed; i++)
            if (strcmp(p->allowed[i], z85) == 0) {
                status = "200";
                text = "OK";
            }
    }
    if (status[0] != '2') {
        p->refused++;
        log_warn("refused subscriber with CURVE key %s (not in curve_clients)", z85[0] ? z85 : "?");
    }
    zmq_send(zap, "1.0", 3, ZMQ_SNDMORE);
    if (n >= 2)
        zmq_send(zap, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), ZMQ_SNDMORE);
    else
        zmq_send(zap, "", 0, ZMQ_SNDMORE);
    zmq_send(zap, status, 3, ZMQ_SNDMORE);
    zmq_send(zap, text, strlen(text), ZMQ_SNDMORE);
    zmq_send(zap, "", 0, ZMQ_SNDMORE);
    zmq_send(zap, "", 0, 0);
    for (int i = 0; i < n; i++)
        zmq_msg_close(&f[i]);
}

struct pub_state {
    void *xpub, *pull, *zap;
    uint64_t seq;
    struct cached image, status;
    struct cached *events;      /* ring of PUBLISHER_EVENT_CACHE */
    size_t ev_head, ev_n;
    uint64_t topic_count[WIRE_T_N];
    int64_t topic_last_seq[WIRE_T_N];
    void *mon;                  /* monitor of the XPUB socket: who is connected */
    long peers;                 /* subscribers connected (accepted - disconnected) */
};

/* Keep a shared copy of frames F[0..N) in C, with "cached":true added to the header (so a
 * subscriber can tell a resend from a new message: the seq is the original one). */
static int cache_keep(struct cached *c, zmq_msg_t *f, int n)
{
    cache_clear(c);
    json_t *h = json_loadb(zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), 0, NULL);
    if (!h)
        return -EINVAL;
    json_object_set_new(h, "cached", json_true());
    char *js = json_dumps(h, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(h);
    if (!js)
        return -ENOMEM;
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (i == 1) {
            if (zmq_msg_init_size(&c->f[1], strlen(js)) < 0)
                rc = -errno;
            else
                memcpy(zmq_msg_data(&c->f[1]), js, strlen(js));
        } else {
            zmq_msg_init(&c->f[i]);
            if (zmq_msg_copy(&c->f[i], &f[i]) < 0) {
                rc = -errno;
                zmq_msg_close(&c->f[i]);
            }
        }
        if (!rc)
            c->n = i + 1;
    }
    free(js);
    if (rc)
        cache_clear(c);
    return rc;
}

/* Send frames on XPUB, topic first, numbered SEQ of topic T; keep it in the cache of its
 * topic.  The frames are consumed.  A failed send is counted and logged. */
static void xpub_send(struct publisher *p, struct pub_state *st, zmq_msg_t *f, int n, int t,
                      uint64_t seq)
{
    struct cached *c = t == WIRE_T_IMAGE    ? &st->image
                       : t == WIRE_T_STATUS ? &st->status
                       : t == WIRE_T_EVENT && st->events
                           ? &st->events[(st->ev_head + st->ev_n) % PUBLISHER_EVENT_CACHE]
                           : NULL;
    if (p->conf.snap && t >= 0 && n >= 2)
        pub_snapshot_put(p->conf.snap, t, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), &f[2], n - 2);
    if (c) {
        c->seq = seq;
        if (cache_keep(c, f, n) < 0)
            log_warn("seq %llu: not kept for late subscribers (out of memory)",
                     (unsigned long long)seq);
        else if (t == WIRE_T_EVENT) {
            if (st->ev_n < PUBLISHER_EVENT_CACHE)
                st->ev_n++;
            else
                st->ev_head = (st->ev_head + 1) % PUBLISHER_EVENT_CACHE; /* oldest overwritten */
        }
    }
    for (int i = 0; i < n; i++) {
        /* XPUB drops for a subscriber at its HWM and never blocks; DONTWAIT is a guard. */
        if (zmq_msg_send(&f[i], st->xpub, ZMQ_DONTWAIT | (i + 1 < n ? ZMQ_SNDMORE : 0)) < 0) {
            int e = errno;
            for (int j = i; j < n; j++)
                zmq_msg_close(&f[j]);
            counter_add(p, &p->m->pub_send_failed);
            log_warn("seq %llu (%s) not sent on %s: %s (%llu so far)", (unsigned long long)seq,
                     t >= 0 ? wire_topic_names[t] : "?", p->bound, zmq_strerror(e),
                     (unsigned long long)p->m->pub_send_failed);
            return;
        }
    }
    if (t >= 0) {
        st->topic_count[t]++;
        st->topic_last_seq[t] = (int64_t)seq;
    }
    counter_add(p, &p->m->published);
}

/* A message of two frames (topic, JSON) made of copies; JSON is freed.  0 or -errno. */
static int text_frames(zmq_msg_t f[2], const char *topic, char *json)
{
    if (!json)
        return -ENOMEM;
    int rc = 0;
    if (zmq_msg_init_size(&f[0], strlen(topic)) < 0) {
        rc = -errno;
    } else if (zmq_msg_init_size(&f[1], strlen(json)) < 0) {
        rc = -errno;
        zmq_msg_close(&f[0]);
    } else {
        memcpy(zmq_msg_data(&f[0]), topic, strlen(topic));
        memcpy(zmq_msg_data(&f[1]), json, strlen(json));
    }
    free(json);
    return rc;
}

static void send_status(struct publisher *p, struct pub_state *st, const char *health)
{
    struct metrics m;
    metrics_get(p->m, &m);
    double el = now_s() - m.t_start;
    struct wire_status s = {
        .seq = st->seq++, .job = p->conf.job, .health = health, .units = (int64_t)m.units,
        .skipped = (int64_t)m.skipped, .received = m.received, .rejected = m.rejected,
        .drop_queue = m.pub_dropped, .drop_refused = m.pub_refused,
        .drop_send = m.pub_send_failed, .published = m.published,
        .rate = el > 0 ? (double)m.units / el : 0,
        .latency_ms = 1e3 * m.st[ST_LATENCY].last, .wait_ms = 1e3 * m.st[ST_WAIT].last,
        .decode_ms = 1e3 * m.st[ST_DECODE].last, .h2d_ms = 1e3 * m.st[ST_H2D].last,
        .compute_ms = 1e3 * m.st[ST_COMPUTE].last, .publish_ms = 1e3 * m.st[ST_PUBLISH].last,
        .gpu_mem_free_mib = m.gpu_free_mib, .gpu_mem_total_mib = m.gpu_total_mib, .current = m.current, .uptime_s = el,
        .version = p->conf.version, .fingerprint = p->conf.fingerprint,
        .units_total = m.units_total,
        .unit_ms_mean = m.st[ST_COMPUTE].n ? 1e3 * m.st[ST_COMPUTE].sum / (double)m.st[ST_COMPUTE].n : 0,
        .unit_ms_p95 = 1e3 * metrics_percentile(&m, ST_COMPUTE, 95)};
    memcpy(s.rejected_by, m.rejected_by, sizeof s.rejected_by);
    /* copied under the table's lock here, on the publisher thread, never the worker's */
    char *stations = p->conf.stations ? station_health_status(p->conf.stations, STATION_HEALTH_LIST) : NULL;
    s.stations = stations;
    char *ranks = p->conf.ranks ? shots_progress_json(p->conf.ranks) : NULL; /* under its lock */
    s.ranks = ranks;
    memcpy(s.topic_count, st->topic_count, sizeof s.topic_count);
    memcpy(s.topic_last_seq, st->topic_last_seq, sizeof s.topic_last_seq);
    zmq_msg_t f[2];
    char *js = wire_encode_status(&s);
    free(stations);
    free(ranks);
    if (text_frames(f, WIRE_TOPIC_STATUS, js) < 0) {
        counter_add(p, &p->m->pub_send_failed);
        log_warn("status seq %llu not sent: out of memory", (unsigned long long)s.seq);
        return;
    }
    xpub_send(p, st, f, 2, WIRE_T_STATUS, s.seq);
}

/* One message from a client: topic, header (no seq), t_arrive (8 bytes), payload... */
static void forward(struct publisher *p, struct pub_state *st)
{
    zmq_msg_t f[MAX_FRAMES + 1];
    int n = 0, more = 1, extra = 0;
    while (more) {
        zmq_msg_t tmp;
        zmq_msg_init(&tmp);
        if (zmq_msg_recv(&tmp, st->pull, 0) < 0) {
            zmq_msg_close(&tmp);
            break;
        }
        more = zmq_msg_more(&tmp);
        if (n < MAX_FRAMES + 1)
            f[n++] = tmp; /* the struct moves; the message keeps its data */
        else {
            zmq_msg_close(&tmp); /* frees the payload (its free callback) */
            extra++;
        }
    }
    if (n < 3 || extra) {
        /* publisher_send never makes such a message: refuse it whole, never truncate */
        for (int i = 0; i < n; i++)
            zmq_msg_close(&f[i]);
        counter_add(p, &p->m->pub_refused);
        log_warn("inproc message of %d frames refused (3..%d)", n + extra, MAX_FRAMES + 1);
        return;
    }
    double t0 = now_s(), t_arrive = 0;
    if (zmq_msg_size(&f[2]) == sizeof t_arrive)
        memcpy(&t_arrive, zmq_msg_data(&f[2]), sizeof t_arrive);
    int t = wire_topic_index(zmq_msg_data(&f[0]), zmq_msg_size(&f[0]));
    json_t *h = json_loadb(zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), 0, NULL);
    if (!h)
        h = json_object();
    uint64_t seq = st->seq++;
    json_object_set_new(h, "seq", json_integer((json_int_t)seq));
    char *js = json_dumps(h, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(h);
    zmq_msg_close(&f[1]);
    zmq_msg_close(&f[2]);
    for (int i = 3; i < n; i++)
        f[i - 1] = f[i];
    n--;
    if (!js || zmq_msg_init_size(&f[1], strlen(js)) < 0) {
        free(js);
        zmq_msg_close(&f[0]);
        for (int i = 2; i < n; i++)
            zmq_msg_close(&f[i]);
        counter_add(p, &p->m->pub_send_failed);
        log_warn("seq %llu not sent: out of memory for its header", (unsigned long long)seq);
        return;
    }
    memcpy(zmq_msg_data(&f[1]), js, strlen(js));
    free(js);
    xpub_send(p, st, f, n, t, seq);
    double t1 = now_s();
    metrics_add(p->m, ST_PUBLISH, t1 - t0);
    if (t_arrive > 0)
        metrics_add(p->m, ST_LATENCY, t1 - t_arrive);
}

/* Resend a cached message (shared copies of its frames). */
static void resend(struct publisher *p, struct pub_state *st, struct cached *c)
{
    for (int i = 0; i < c->n; i++) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_copy(&m, &c->f[i]) < 0 ||
            zmq_msg_send(&m, st->xpub, ZMQ_DONTWAIT | (i + 1 < c->n ? ZMQ_SNDMORE : 0)) < 0) {
            int e = errno;
            zmq_msg_close(&m);
            counter_add(p, &p->m->pub_send_failed);
            log_warn("cached message not resent on %s: %s", p->bound, zmq_strerror(e));
            return;
        }
    }
}

/* Whether a subscription to PREFIX (N bytes) receives TOPIC. */
static bool matches(const char *prefix, size_t n, const char *topic)
{
    return n <= strlen(topic) && memcmp(prefix, topic, n) == 0;
}

/* A subscription: resend the caches of the topics it covers.  "TOPIC@SEQ" (a prefix no
 * topic has, so it receives nothing itself) asks for the cached messages of TOPIC after
 * SEQ only: a subscriber that lost some asks for just those, one round at a time, which
 * gets through even when its high-water mark is 1. */
static void on_subscription(struct publisher *p, struct pub_state *st)
{
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, st->xpub, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&m);
        return;
    }
    const char *d = zmq_msg_data(&m);
    size_t n = zmq_msg_size(&m);
    if (n >= 1 && d[0] == 1) {
        atomic_fetch_add(&p->subscriptions, 1);
        const char *pre = d + 1;
        size_t len = n - 1;
        int64_t after = -1;
        const char *at = memchr(pre, '@', len);
        if (at) {
            char num[24];
            size_t k = len - (size_t)(at - pre) - 1;
            if (k == 0 || k >= sizeof num) {
                zmq_msg_close(&m);
                return;
            }
            memcpy(num, at + 1, k);
            num[k] = '\0';
            char *end;
            after = strtoll(num, &end, 10);
            if (*end) {
                zmq_msg_close(&m);
                return;
            }
            len = (size_t)(at - pre);
            if (wire_topic_index(pre, len) < 0) { /* exactly one topic */
                zmq_msg_close(&m);
                return;
            }
        }
        if (matches(pre, len, WIRE_TOPIC_IMAGE) && st->image.n && (int64_t)st->image.seq > after)
            resend(p, st, &st->image);
        if (matches(pre, len, WIRE_TOPIC_EVENT))
            for (size_t i = 0; i < st->ev_n; i++) {
                struct cached *c = &st->events[(st->ev_head + i) % PUBLISHER_EVENT_CACHE];
                if ((int64_t)c->seq > after)
                    resend(p, st, c);
            }
        if (matches(pre, len, WIRE_TOPIC_STATUS) && st->status.n && (int64_t)st->status.seq > after)
            resend(p, st, &st->status);
    }
    zmq_msg_close(&m);
}

/* One event of the XPUB monitor: count the subscribers connected, so the end does not
 * wait for nobody. */
static void on_monitor(struct pub_state *st)
{
    zmq_msg_t f[2];
    int n = 0, more = 1;
    uint16_t ev = 0;
    while (more) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, st->mon, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&m);
            break;
        }
        more = zmq_msg_more(&m);
        if (n == 0 && zmq_msg_size(&m) >= 2)
            memcpy(&ev, zmq_msg_data(&m), 2);
        if (n < 2)
            f[n++] = m;
        else
            zmq_msg_close(&m);
    }
    for (int i = 0; i < n; i++)
        zmq_msg_close(&f[i]);
    if (ev == ZMQ_EVENT_ACCEPTED)
        st->peers++;
    else if (ev == ZMQ_EVENT_DISCONNECTED && st->peers > 0)
        st->peers--;
}

/* zmq_setsockopt that says which option failed. */
static int setopt(void *s, int opt, const void *v, size_t len, const char *what)
{
    if (zmq_setsockopt(s, opt, v, len) < 0)
        return err_set(-errno, "[output] %s: %s", what, zmq_strerror(errno));
    return 0;
}

static void *pub_main(void *arg)
{
    struct publisher *p = arg;
    struct pub_state st;
    memset(&st, 0, sizeof st);
    for (int i = 0; i < WIRE_T_N; i++)
        st.topic_last_seq[i] = -1;
    int rc = 0;
    /* linger_ms bounds the drain after the end ([output] drain); the sockets' own
     * ZMQ_LINGER stays at most 1 s so a dead subscriber cannot hold the shutdown. */
    int drain_ms = p->conf.linger_ms > 0 ? p->conf.linger_ms : 1000;
    int linger = drain_ms < 1000 ? drain_ms : 1000, one = 1;
    bool curve = p->conf.curve_secret && p->conf.curve_secret[0];
    st.events = calloc(PUBLISHER_EVENT_CACHE, sizeof *st.events);
    if (!st.events)
        rc = err_set(-ENOMEM, "publisher: out of memory");
    if (!rc && curve && !wire_has_curve())
        rc = err_set(-ENOTSUP, "[output] curve_secret_key is set but this libzmq has no CURVE "
                               "support (zmq_has(\"curve\") is false): refusing to publish "
                               "in plain text");
    if (!rc && curve) {
        /* The ZAP endpoint must exist before the socket that uses it binds. */
        st.zap = zmq_socket(p->zctx, ZMQ_REP);
        if (!st.zap || zmq_bind(st.zap, "inproc://zeromq.zap.01") < 0)
            rc = err_set(-errno, "ZAP handler: %s", zmq_strerror(errno));
        else
            rc = setopt(st.zap, ZMQ_LINGER, &linger, sizeof linger, "ZAP linger");
    }
    if (!rc) {
        st.xpub = zmq_socket(p->zctx, ZMQ_XPUB);
        st.pull = zmq_socket(p->zctx, ZMQ_PULL);
        if (!st.xpub || !st.pull)
            rc = err_set(-errno, "publisher sockets: %s", zmq_strerror(errno));
    }
    if (!rc)
        rc = setopt(st.xpub, ZMQ_SNDHWM, &p->conf.hwm, sizeof p->conf.hwm, "hwm");
    if (!rc)
        rc = setopt(st.xpub, ZMQ_LINGER, &linger, sizeof linger, "linger");
    /* VERBOSE: a repeated subscription reaches us too: that is how a subscriber asks
     * for the caches again. */
    if (!rc)
        rc = setopt(st.xpub, ZMQ_XPUB_VERBOSE, &one, sizeof one, "XPUB_VERBOSE");
    if (!rc) {
        char mon[96];
        snprintf(mon, sizeof mon, "inproc://seislive-pubmon-%p", (void *)p);
        if (zmq_socket_monitor(st.xpub, mon, ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED) < 0 ||
            !(st.mon = zmq_socket(p->zctx, ZMQ_PAIR)) || zmq_connect(st.mon, mon) < 0)
            rc = err_set(-errno, "publisher monitor: %s", zmq_strerror(errno));
        else
            rc = setopt(st.mon, ZMQ_LINGER, &(int){0}, sizeof(int), "monitor linger");
    }
    if (!rc)
        rc = setopt(st.pull, ZMQ_LINGER, &linger, sizeof linger, "inproc linger");
    if (!rc && curve) {
        uint8_t key[32];
        if (strlen(p->conf.curve_secret) != 40 || !zmq_z85_decode(key, p->conf.curve_secret))
            rc = err_set(-EINVAL, "[output] curve_secret_key: not a Z85 key of 40 characters");
        if (!rc)
            rc = setopt(st.xpub, ZMQ_CURVE_SERVER, &one, sizeof one, "CURVE server");
        if (!rc)
            rc = setopt(st.xpub, ZMQ_CURVE_SECRETKEY, p->conf.curve_secret, 40,
                        "curve_secret_key");
        if (!rc)
            rc = setopt(st.xpub, ZMQ_ZAP_DOMAIN, "seislive", 8, "CURVE ZAP domain");
    }
    if (!rc && zmq_bind(st.xpub, p->conf.endpoint) < 0)
        rc = err_set(-errno, "[output] endpoint \"%s\": bind: %s", p->conf.endpoint,
                     zmq_strerror(errno));
    if (!rc && zmq_bind(st.pull, p->inproc) < 0)
        rc = err_set(-errno, "%s: bind: %s", p->inproc, zmq_strerror(errno));
    if (!rc) {
        size_t len = sizeof p->bound;
        if (zmq_getsockopt(st.xpub, ZMQ_LAST_ENDPOINT, p->bound, &len) < 0)
            snprintf(p->bound, sizeof p->bound, "%s", p->conf.endpoint);
        log_info("publishing on %s%s", p->bound, curve ? " (CURVE)" : "");
    }
    pthread_mutex_lock(&p->mu);
    if (rc)
        snprintf(p->start_err, sizeof p->start_err, "%s", err_msg());
    p->start_rc = rc ? rc : 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (rc)
        goto out;
    double next_status = now_s() + p->conf.status_interval, t_end = 0;
    for (;;) {
        zmq_pollitem_t it[4] = {{st.pull, 0, ZMQ_POLLIN, 0}, {st.xpub, 0, ZMQ_POLLIN, 0},
                                {st.mon, 0, ZMQ_POLLIN, 0}, {st.zap, 0, ZMQ_POLLIN, 0}};
        int np = zmq_poll(it, st.zap ? 4 : 3, t_end > 0 ? 20 : 100);
        if (np < 0 && errno != EINTR)
            break;
        if (np < 0)
            continue;
        if (it[1].revents & ZMQ_POLLIN)
            on_subscription(p, &st);
        if (it[2].revents & ZMQ_POLLIN)
            on_monitor(&st);
        if (st.zap && (it[3].revents & ZMQ_POLLIN))
            zap_handle(p, st.zap);
        if (t_end > 0) {
            /* After the last message: answer subscriptions from the caches while someone
             * is connected, for at most the linger time. */
            if (st.peers <= 0 || now_s() >= t_end)
                break;
            continue;
        }
        if (it[0].revents & ZMQ_POLLIN)
            forward(p, &st);
        if (p->conf.status_interval > 0 && now_s() >= next_status) {
            pthread_mutex_lock(&p->mu);
            char health[128];
            snprintf(health, sizeof health, "%s", p->health[0] ? p->health : "ok");
            pthread_mutex_unlock(&p->mu);
            send_status(p, &st, health);
            next_status = now_s() + p->conf.status_interval;
        }
        if (atomic_load(&p->stop) && !(it[0].revents & ZMQ_POLLIN)) {
            /* stop asked and the inproc queue is drained: the last message */
            send_status(p, &st, "stopped");
            t_end = now_s() + 1e-3 * drain_ms;
        }
    }
out:
    cache_clear(&st.image);
    cache_clear(&st.status);
    if (st.events)
        for (size_t i = 0; i < PUBLISHER_EVENT_CACHE; i++)
            cache_clear(&st.events[i]);
    free(st.events);
    if (st.pull)
        zmq_close(st.pull);
    if (st.xpub) {
        zmq_socket_monitor(st.xpub, NULL, 0);
        zmq_close(st.xpub);
    }
    if (st.mon)
        zmq_close(st.mon);
    if (st.zap)
        zmq_close(st.zap);
    return NULL;
}

int publisher_start(struct publisher *p, void *zctx, const struct publisher_conf *c,
                    struct metrics *m)
{
    memset(p, 0, sizeof *p);
    p->zctx = zctx;
    p->conf = *c;
    if (p->conf.hwm <= 0)
        p->conf.hwm = 16;
    p->m = m;
    snprintf(p->inproc, sizeof p->inproc, "inproc://seislive-pub-%p", (void *)p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (c->curve_secret && c->curve_secret[0]) {
        if (!c->curve_clients || !c->curve_clients[0])
            return err_set(-EINVAL, "[output] curve_secret_key is set but curve_clients is not: "
                                    "every client would be refused");
        int rc = load_allowed(p, c->curve_clients);
        if (rc < 0) {
            publisher_stop(p); /* not started: frees the keys read so far */
            return rc;
        }
    }
    if (pthread_create(&p->thread, NULL, pub_main, p) != 0) {
        publisher_stop(p); /* not started: frees the client list */
        return err_set(-EAGAIN, "publisher: cannot start the thread");
    }
    pthread_mutex_lock(&p->mu);
    while (!p->start_rc)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    if (p->start_rc < 0) {
        int rc = p->start_rc;
        pthread_join(p->thread, NULL);
        publisher_stop(p); /* not started: frees the client list */
        return err_set(rc, "%s", p->start_err);
    }
    p->started = 1;
    return 0;
}

void publisher_stop(struct publisher *p)
{
    if (p->started) {
        atomic_store(&p->stop, 1);
        pthread_join(p->thread, NULL);
        p->started = 0;
    }
    for (size_t i = 0; i < p->n_allowed; i++)
        free(p->allowed[i]);
    free(p->allowed);
    p->allowed = NULL;
    p->n_allowed = 0;
}

void *publisher_client(struct publisher *p)
{
    void *s = zmq_socket(p->zctx, ZMQ_PUSH);
    if (!s) {
        err_set(-errno, "publisher client: %s", zmq_strerror(errno));
        return NULL;
    }
    int hwm = 64, linger = 1000;
    if (setopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm, "client hwm") < 0 ||
        setopt(s, ZMQ_LINGER, &linger, sizeof linger, "client linger") < 0 ||
        (zmq_connect(s, p->inproc) < 0 &&
         err_set(-errno, "%s: connect: %s", p->inproc, zmq_strerror(errno)))) {
        zmq_close(s);
        return NULL;
    }
    return s;
}

void publisher_client_close(void *client)
{
    if (client)
        zmq_close(client);
}

struct free_hint {
    void (*fn)(void *);
};

static void free_tramp(void *data, void *hint)
{
    struct free_hint *h = hint;
    if (h->fn)
        h->fn(data);
    free(h);
}

/* Free PAYLOAD[from..n) directly (not yet owned by a message). */
static void free_rest(void *const *payload, int from, int n, void (*free_fn)(void *))
{
    for (int i = from; i < n; i++)
        if (free_fn)
            free_fn(payload[i]);
}

int publisher_send(struct publisher *p, void *client, const char *topic, const char *header,
                   double t_arrive, void *const *payload, const size_t *bytes, int n,
                   void (*free_fn)(void *))
{
    if (n < 0)
        n = 0;
    if (n > PUBLISHER_MAX_PAYLOAD) {
        /* Refused whole: a truncated image would look valid to a subscriber. */
        free_rest(payload, 0, n, free_fn);
        counter_add(p, &p->m->pub_refused);
        log_warn("%s message of %d payload frames refused: at most %d (%llu refused so far)",
                 topic, n, PUBLISHER_MAX_PAYLOAD, (unsigned long long)p->m->pub_refused);
        return err_set(-E2BIG, "publish %s: %d payload frames, at most %d", topic, n,
                       PUBLISHER_MAX_PAYLOAD);
    }
    /* Wrap every payload first: from here on each one is freed by closing its message. */
    zmq_msg_t m[PUBLISHER_MAX_PAYLOAD];
    int made = 0, rc = 0;
    for (; made < n; made++) {
        struct free_hint *h = malloc(sizeof *h);
        if (!h) {
            rc = -ENOMEM;
            break;
        }
        h->fn = free_fn;
        if (zmq_msg_init_data(&m[made], payload[made], bytes[made], free_tramp, h) < 0) {
            rc = -errno;
            free(h);
            break;
        }
    }
    if (rc) {
        for (int i = 0; i < made; i++)
            zmq_msg_close(&m[i]);
        free_rest(payload, made, n, free_fn);
        counter_add(p, &p->m->pub_send_failed);
        log_warn("%s message not published: %s", topic, strerror(-rc));
        return err_set(rc, "publish %s: %s", topic, strerror(-rc));
    }
    /* The first frame decides: PUSH accepts or refuses a whole multipart message; after
     * it, the other frames of the message are accepted too (checked all the same). */
    const char *stage = "topic";
    if (zmq_send(client, topic, strlen(topic), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
        rc = -errno;
    if (!rc && (stage = "header",
                zmq_send(client, header, strlen(header), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0))
        rc = -errno;
    if (!rc && (stage = "arrival time",
                zmq_send(client, &t_arrive, sizeof t_arrive,
                         ZMQ_DONTWAIT | (n ? ZMQ_SNDMORE : 0)) < 0))
        rc = -errno;
    int sent = 0;
    for (; !rc && sent < n; sent++) {
        stage = "payload";
        if (zmq_msg_send(&m[sent], client, ZMQ_DONTWAIT | (sent + 1 < n ? ZMQ_SNDMORE : 0)) < 0) {
            rc = -errno;
            break;
        }
    }
    if (!rc)
        return 0;
    for (int i = sent; i < n; i++)
        zmq_msg_close(&m[i]); /* not taken by ZeroMQ: freed here */
    if (rc == -EAGAIN && strcmp(stage, "topic") == 0) {
        counter_add(p, &p->m->pub_dropped);
        log_warn("publisher behind: %s message dropped (%llu so far)", topic,
                 (unsigned long long)p->m->pub_dropped);
        return -EAGAIN;
    }
    counter_add(p, &p->m->pub_send_failed);
    log_warn("%s message not published: %s frame: %s", topic, stage, zmq_strerror(-rc));
    return err_set(rc, "publish %s: %s frame: %s", topic, stage, zmq_strerror(-rc));
}

void publisher_set_health(struct publisher *p, const char *health)
{
    pthread_mutex_lock(&p->mu);
    snprintf(p->health, sizeof p->health, "%s", health);
    pthread_mutex_unlock(&p->mu);
}
