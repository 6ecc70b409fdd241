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

#define MAX_FRAMES 16

struct cached {
    zmq_msg_t f[MAX_FRAMES];
    int n;
};

static void cache_clear(struct cached *c)
{
    for (int i = 0; i < c->n; i++)
        zmq_msg_close(&c->f[i]);
    c->n = 0;
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
            return -ENOMEM;
        }
        p->allowed = a;
        p->allowed[p->n_allowed++] = strdup(s);
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
    struct cached image;
};

/* Send frames on XPUB, topic first; with CACHE, keep shared copies as the last value. */
static void xpub_send(struct publisher *p, struct pub_state *st, zmq_msg_t *f, int n, bool cache)
{
    if (cache) {
        cache_clear(&st->image);
        for (int i = 0; i < n; i++) {
            zmq_msg_init(&st->image.f[i]);
            zmq_msg_copy(&st->image.f[i], &f[i]);
        }
        st->image.n = n;
    }
    for (int i = 0; i < n; i++) {
        /* XPUB drops for a subscriber at its HWM and never blocks; DONTWAIT is a guard. */
        if (zmq_msg_send(&f[i], st->xpub, ZMQ_DONTWAIT | (i + 1 < n ? ZMQ_SNDMORE : 0)) < 0) {
            log_warn("send on %s: %s", p->bound, zmq_strerror(errno));
            for (int j = i; j < n; j++)
                zmq_msg_close(&f[j]);
            return;
        }
    }
    pthread_mutex_lock(&p->m->mu);
    p->m->published++;
    pthread_mutex_unlock(&p->m->mu);
}

static void send_text(struct publisher *p, struct pub_state *st, const char *topic, char *json)
{
    zmq_msg_t f[2];
    zmq_msg_init_size(&f[0], strlen(topic));
    memcpy(zmq_msg_data(&f[0]), topic, strlen(topic));
    zmq_msg_init_size(&f[1], strlen(json));
    memcpy(zmq_msg_data(&f[1]), json, strlen(json));
    free(json);
    xpub_send(p, st, f, 2, false);
}

static void send_status(struct publisher *p, struct pub_state *st, const char *health)
{
    struct metrics m;
    metrics_get(p->m, &m);
    double el = now_s() - m.t_start;
    struct wire_status s = {
        .seq = st->seq++, .job = p->conf.job, .health = health, .units = (int64_t)m.units,
        .skipped = (int64_t)m.skipped, .received = m.received, .rejected = m.rejected,
        .dropped = m.pub_dropped, .rate = el > 0 ? (double)m.units / el : 0,
        .latency_ms = 1e3 * m.st[ST_LATENCY].last, .wait_ms = 1e3 * m.st[ST_WAIT].last,
        .decode_ms = 1e3 * m.st[ST_DECODE].last, .h2d_ms = 1e3 * m.st[ST_H2D].last,
        .compute_ms = 1e3 * m.st[ST_COMPUTE].last, .publish_ms = 1e3 * m.st[ST_PUBLISH].last,
        .gpu_mem_free_mib = m.gpu_free_mib, .current = m.current};
    send_text(p, st, WIRE_TOPIC_STATUS, wire_encode_status(&s));
}

/* One message from a client: topic, header (no seq), t_arrive (8 bytes), payload... */
static void forward(struct publisher *p, struct pub_state *st)
{
    zmq_msg_t f[MAX_FRAMES + 1];
    int n = 0, more = 1;
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
        else
            zmq_msg_close(&tmp);
    }
    if (n < 3) {
        for (int i = 0; i < n; i++)
            zmq_msg_close(&f[i]);
        return;
    }
    double t0 = now_s(), t_arrive;
    memcpy(&t_arrive, zmq_msg_data(&f[2]), sizeof t_arrive);
    json_t *h = json_loadb(zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), 0, NULL);
    if (!h)
        h = json_object();
    json_object_set_new(h, "seq", json_integer((json_int_t)st->seq++));
    char *js = json_dumps(h, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(h);
    zmq_msg_close(&f[1]);
    zmq_msg_close(&f[2]);
    zmq_msg_init_size(&f[1], strlen(js));
    memcpy(zmq_msg_data(&f[1]), js, strlen(js));
    free(js);
    for (int i = 3; i < n; i++)
        f[i - 1] = f[i];
    n--;
    bool is_image = zmq_msg_size(&f[0]) == 5 && memcmp(zmq_msg_data(&f[0]), "image", 5) == 0;
    xpub_send(p, st, f, n, is_image);
    double t1 = now_s();
    metrics_add(p->m, ST_PUBLISH, t1 - t0);
    if (t_arrive > 0)
        metrics_add(p->m, ST_LATENCY, t1 - t_arrive);
}

/* A (un)subscription: resend the cached image to a new "image" (or catch-all) subscriber. */
static void on_subscription(struct pub_state *st)
{
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, st->xpub, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&m);
        return;
    }
    const char *d = zmq_msg_data(&m);
    size_t n = zmq_msg_size(&m);
    bool wants_image = n >= 1 && d[0] == 1 &&
                       (n == 1 || (n - 1 <= 5 && memcmp(d + 1, "image", n - 1) == 0));
    zmq_msg_close(&m);
    if (!wants_image || !st->image.n)
        return;
    for (int i = 0; i < st->image.n; i++) {
        zmq_msg_t c;
        zmq_msg_init(&c);
        zmq_msg_copy(&c, &st->image.f[i]);
        if (zmq_msg_send(&c, st->xpub, ZMQ_DONTWAIT | (i + 1 < st->image.n ? ZMQ_SNDMORE : 0)) < 0)
            zmq_msg_close(&c);
    }
}

static void *pub_main(void *arg)
{
    struct publisher *p = arg;
    struct pub_state st;
    memset(&st, 0, sizeof st);
    int rc = 0;
    int linger = p->conf.linger_ms > 0 ? p->conf.linger_ms : 1000, one = 1;
    bool curve = p->conf.curve_secret && p->conf.curve_secret[0];
    if (curve) {
        /* The ZAP endpoint must exist before the socket that uses it binds. */
        st.zap = zmq_socket(p->zctx, ZMQ_REP);
        if (zmq_bind(st.zap, "inproc://zeromq.zap.01") < 0)
            rc = err_set(-errno, "ZAP handler: %s", zmq_strerror(errno));
    }
    st.xpub = zmq_socket(p->zctx, ZMQ_XPUB);
    st.pull = zmq_socket(p->zctx, ZMQ_PULL);
    zmq_setsockopt(st.xpub, ZMQ_SNDHWM, &p->conf.hwm, sizeof p->conf.hwm);
    zmq_setsockopt(st.xpub, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(st.xpub, ZMQ_XPUB_VERBOSE, &one, sizeof one);
    zmq_setsockopt(st.pull, ZMQ_LINGER, &linger, sizeof linger);
    if (!rc && curve) {
        uint8_t key[32];
        if (strlen(p->conf.curve_secret) != 40 || !zmq_z85_decode(key, p->conf.curve_secret))
            rc = err_set(-EINVAL, "[output] curve_secret_key: not a Z85 key of 40 characters");
        else {
            zmq_setsockopt(st.xpub, ZMQ_CURVE_SERVER, &one, sizeof one);
            zmq_setsockopt(st.xpub, ZMQ_CURVE_SECRETKEY, p->conf.curve_secret, 40);
            zmq_setsockopt(st.xpub, ZMQ_ZAP_DOMAIN, "seislive", 8);
        }
    }
    if (!rc && zmq_bind(st.xpub, p->conf.endpoint) < 0)
        rc = err_set(-errno, "[output] endpoint \"%s\": bind: %s", p->conf.endpoint,
                     zmq_strerror(errno));
    if (!rc && zmq_bind(st.pull, p->inproc) < 0)
        rc = err_set(-errno, "%s: bind: %s", p->inproc, zmq_strerror(errno));
    if (!rc) {
        size_t len = sizeof p->bound;
        zmq_getsockopt(st.xpub, ZMQ_LAST_ENDPOINT, p->bound, &len);
        log_info("publishing on %s%s", p->bound, curve ? " (CURVE)" : "");
    }
    pthread_mutex_lock(&p->mu);
    p->start_rc = rc ? rc : 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (rc)
        goto out;
    double next_status = now_s() + p->conf.status_interval;
    for (;;) {
        zmq_pollitem_t it[3] = {{st.pull, 0, ZMQ_POLLIN, 0}, {st.xpub, 0, ZMQ_POLLIN, 0},
                                {st.zap, 0, ZMQ_POLLIN, 0}};
        int np = zmq_poll(it, st.zap ? 3 : 2, 100);
        if (np < 0 && errno != EINTR)
            break;
        if (it[1].revents & ZMQ_POLLIN)
            on_subscription(&st);
        if (st.zap && (it[2].revents & ZMQ_POLLIN))
            zap_handle(p, st.zap);
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
        if (atomic_load(&p->stop) && !(it[0].revents & ZMQ_POLLIN))
            break; /* stop asked and the inproc queue is drained */
    }
    send_status(p, &st, "stopped");
out:
    cache_clear(&st.image);
    if (st.pull)
        zmq_close(st.pull);
    if (st.xpub)
        zmq_close(st.xpub);
    if (st.zap) {
        zmq_setsockopt(st.zap, ZMQ_LINGER, &linger, sizeof linger);
        zmq_close(st.zap);
    }
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
        if (rc < 0)
            return rc;
    }
    if (pthread_create(&p->thread, NULL, pub_main, p) != 0)
        return err_set(-EAGAIN, "publisher: cannot start the thread");
    pthread_mutex_lock(&p->mu);
    while (!p->start_rc)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    if (p->start_rc < 0) {
        int rc = p->start_rc;
        pthread_join(p->thread, NULL);
        return rc;
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
    int hwm = 64, linger = 1000;
    zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(s, p->inproc);
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

int publisher_send(struct publisher *p, void *client, const char *topic, const char *header,
                   double t_arrive, void *const *payload, const size_t *bytes, int n,
                   void (*free_fn)(void *))
{
    int rc = 0;
    if (n > MAX_FRAMES - 2)
        n = MAX_FRAMES - 2;
    /* The first frame decides: PUSH accepts or refuses a whole multipart message. */
    if (zmq_send(client, topic, strlen(topic), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
        rc = -errno;
        goto drop;
    }
    zmq_send(client, header, strlen(header), ZMQ_SNDMORE);
    zmq_send(client, &t_arrive, sizeof t_arrive, n ? ZMQ_SNDMORE : 0);
    for (int i = 0; i < n; i++) {
        zmq_msg_t m;
        struct free_hint *h = malloc(sizeof *h);
        h->fn = free_fn;
        zmq_msg_init_data(&m, payload[i], bytes[i], free_tramp, h);
        if (zmq_msg_send(&m, client, i + 1 < n ? ZMQ_SNDMORE : 0) < 0)
            zmq_msg_close(&m);
    }
    return 0;
drop:
    for (int i = 0; i < n; i++)
        if (free_fn)
            free_fn(payload[i]);
    pthread_mutex_lock(&p->m->mu);
    p->m->pub_dropped++;
    pthread_mutex_unlock(&p->m->mu);
    log_warn("publisher behind: %s message dropped (%llu so far)", topic,
             (unsigned long long)p->m->pub_dropped);
    return rc == -EAGAIN ? -EAGAIN : err_set(rc, "publish %s: %s", topic, zmq_strerror(-rc));
}

void publisher_set_health(struct publisher *p, const char *health)
{
    pthread_mutex_lock(&p->mu);
    snprintf(p->health, sizeof p->health, "%s", health);
    pthread_mutex_unlock(&p->mu);
}
