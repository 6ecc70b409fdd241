/* zmq_source — PULL/SUB ingest into the slots with per-reason rejects. */
#define LOG_COMPONENT "zmq-in"
#include "io/zmq_source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "conf/config.h"
#include "io/wire.h"
#include "stream/error.h"
#include "stream/log.h"

#define MAX_FRAMES 64

struct zmq_source {
    void *sock;
    struct zmq_source_conf c;
    char bound[256];
    uint64_t seq;            /* messages received */
    int64_t last_sender_seq; /* SUB: to count gaps */
};

int zmq_source_open(struct zmq_source **out, void *zctx, const struct zmq_source_conf *c)
{
    struct zmq_source *z = calloc(1, sizeof *z);
    if (!z)
        return -ENOMEM;
    z->c = *c;
    z->last_sender_seq = -1;
    z->sock = zmq_socket(zctx, c->socket == SOCK_SUB ? ZMQ_SUB : ZMQ_PULL);
    if (!z->sock) {
        int e = errno;
        free(z);
        return err_set(-e, "[input] socket: %s", zmq_strerror(e));
    }
    /* A small receive queue: the slots are the buffer; beyond them the sender waits. */
    int hwm = c->rcvhwm > 0 ? c->rcvhwm : 2, linger = 0;
    const char *what = "options";
    int rc = zmq_setsockopt(z->sock, ZMQ_RCVHWM, &hwm, sizeof hwm) < 0 ||
                     zmq_setsockopt(z->sock, ZMQ_LINGER, &linger, sizeof linger) < 0 ||
                     (c->socket == SOCK_SUB && zmq_setsockopt(z->sock, ZMQ_SUBSCRIBE, "", 0) < 0)
                 ? -1
                 : 0;
    if (!rc) {
        what = c->socket == SOCK_SUB ? "connect" : "bind";
        rc = c->socket == SOCK_SUB ? zmq_connect(z->sock, c->endpoint)
                                   : zmq_bind(z->sock, c->endpoint);
    }
    if (rc < 0) {
        int e = errno;
        zmq_close(z->sock);
        free(z);
        return err_set(-e, "[input] endpoint \"%s\": %s: %s", c->endpoint, what,
                       zmq_strerror(e));
    }
    size_t len = sizeof z->bound;
    zmq_getsockopt(z->sock, ZMQ_LAST_ENDPOINT, z->bound, &len);
    if (!z->bound[0])
        snprintf(z->bound, sizeof z->bound, "%s", c->endpoint);
    log_info("%s %s", c->socket == SOCK_SUB ? "subscribed to" : "receiving on", z->bound);
    *out = z;
    return 0;
}

const char *zmq_source_endpoint(const struct zmq_source *z)
{
    return z->bound;
}

static void close_frames(zmq_msg_t *f, int n)
{
    for (int i = 0; i < n; i++)
        zmq_msg_close(&f[i]);
}

/* Decode a validated message into slot I; returns 0 or < 0 (counted in STATS). */
static int decode_into(struct zmq_source *z, struct ingest *in, int i, struct wire_header *h,
                       zmq_msg_t *f, int n)
{
    struct slot_hdr *sh = &in->hdr[i];
    char *base = ingest_slot(in, i);
    const void *pl[MAX_FRAMES];
    size_t len[MAX_FRAMES];
    for (int k = 1; k < n; k++) {
        pl[k - 1] = zmq_msg_data(&f[k]);
        len[k - 1] = zmq_msg_size(&f[k]);
    }
    snprintf(sh->origin, sizeof sh->origin, "message %llu", (unsigned long long)z->seq);
    sh->msg_seq = z->seq;
    if (h->kind == WIRE_SHOT) {
        sh->kind = SLOT_SHOT;
        sh->id = h->shot.shot_id;
        sh->shot.rec = (float *)base;
        sh->shot.data = (float *)base + (size_t)h->shot.ntr * 3;
        sh->bytes = shot_payload_bytes(h->shot.ntr, h->shot.ns);
        return wire_decode_shot(h, pl, len, n - 1, z->seq, &sh->shot, &in->stats);
    }
    const struct wire_traces_hdr *t = &h->traces;
    size_t nd = (size_t)t->nrec * (size_t)t->ns;
    float *data = (float *)base;
    struct trace_channel *chan = (struct trace_channel *)(base + nd * sizeof(float));
    sh->kind = SLOT_TRACES;
    sh->bytes = wire_unit_bytes(h);
    int rc;
    if (t->format == WIRE_F32) {
        rc = wire_decode_traces_f32(h, pl[0], len[0], z->seq, data, &in->stats);
        /* Without "channels" the names stay empty: the locate engine then matches
         * channel r to station r of the station file (docs/wire-format.md). */
        if (t->chan)
            memcpy(chan, t->chan, (size_t)t->nrec * sizeof *chan);
        else
            memset(chan, 0, (size_t)t->nrec * sizeof *chan);
    } else {
        rc = wire_decode_traces_mseed(h, pl, len, n - 1, z->seq, data, chan, &in->stats);
    }
    sh->block = (struct trace_block){.seq = (int64_t)z->seq, .t0_ns = t->t0_ns, .dt = t->dt,
                                     .nrec = t->nrec, .ns = t->ns, .chan = chan, .data = data};
    sh->id = t->t0_ns;
    return rc;
}

static int zmq_run(void *ctx, struct ingest *in)
{
    struct zmq_source *z = ctx;
    double last = source_now_s();
    for (;;) {
        int i = ingest_reserve(in);
        if (i < 0)
            return 0; /* stopping */
        /* Wait for a message, polling the stop flag and the idle limit. */
        for (;;) {
            zmq_pollitem_t it = {z->sock, 0, ZMQ_POLLIN, 0};
            int np = zmq_poll(&it, 1, 100);
            if (np > 0)
                break;
            if (np < 0 && errno != EINTR)
                return err_set(-errno, "%s: poll: %s", z->bound, zmq_strerror(errno));
            if (ingest_stopping(in)) {
                ingest_unreserve(in, i);
                return 0;
            }
            if (z->c.idle_s > 0 && source_now_s() - last > z->c.idle_s) {
                log_info("%s: no message for %.1f s: input ends", z->bound, z->c.idle_s);
                ingest_unreserve(in, i);
                return 0;
            }
        }
        double t0 = source_now_s();
        zmq_msg_t f[MAX_FRAMES];
        int n = 0, more = 1, extra = 0;
        while (more) {
            zmq_msg_t m;
            zmq_msg_init(&m);
            if (zmq_msg_recv(&m, z->sock, 0) < 0) {
                zmq_msg_close(&m);
                if (errno == EINTR && !ingest_stopping(in))
                    continue;
                close_frames(f, n);
                ingest_unreserve(in, i);
                return ingest_stopping(in) ? 0 : err_set(-errno, "%s: recv: %s", z->bound,
                                                         zmq_strerror(errno));
            }
            more = zmq_msg_more(&m);
            if (n < MAX_FRAMES)
                f[n++] = m;
            else {
                zmq_msg_close(&m);
                extra++;
            }
        }
        last = source_now_s();
        uint64_t seq = ++z->seq;
        ingest_count(in, 1, 0);
        struct wire_header h;
        size_t len[MAX_FRAMES];
        for (int k = 1; k < n; k++)
            len[k - 1] = zmq_msg_size(&f[k]);
        int rc = wire_parse_header(zmq_msg_data(&f[0]), zmq_msg_size(&f[0]), seq, &h, &in->stats);
        if (!rc && extra) {
            in->stats.rejected[WIRE_REJ_FRAMES]++;
            rc = err_set(-EINVAL, "message %llu: %s: more than %d frames",
                         (unsigned long long)seq, wire_reject_name(WIRE_REJ_FRAMES), MAX_FRAMES);
        }
        if (!rc)
            rc = wire_check_payload(&h, len, n - 1, seq, &in->stats);
        if (!rc && h.kind == WIRE_END) {
            close_frames(f, n);
            ingest_unreserve(in, i);
            log_info("message %llu: end of stream", (unsigned long long)seq);
            /* Disconnect now, not when the job has finished the units in its slots: the
             * sender waits for this disconnect to know its end was delivered
             * (wire_send_end_wait), and everything before the end is already in. */
            zmq_close(z->sock);
            z->sock = NULL;
            return 0;
        }
        if (!rc && wire_unit_bytes(&h) > in->slot_bytes) {
            in->stats.rejected[WIRE_REJ_TOO_LARGE]++;
            rc = err_set(-EFBIG, "message %llu: %s: %zu bytes, a slot holds %zu ([input] slot_mib)",
                         (unsigned long long)seq, wire_reject_name(WIRE_REJ_TOO_LARGE),
                         wire_unit_bytes(&h), in->slot_bytes);
        }
        if (!rc) {
            if (z->c.socket == SOCK_SUB && h.sender_seq >= 0 && z->last_sender_seq >= 0 &&
                h.sender_seq > z->last_sender_seq + 1)
                log_warn("message %llu: sender seq %lld after %lld: %lld messages lost upstream",
                         (unsigned long long)seq, (long long)h.sender_seq,
                         (long long)z->last_sender_seq,
                         (long long)(h.sender_seq - z->last_sender_seq - 1));
            if (h.sender_seq >= 0)
                z->last_sender_seq = h.sender_seq;
            rc = decode_into(z, in, i, &h, f, n);
        }
        wire_header_free(&h);
        close_frames(f, n);
        if (rc) {
            ingest_rejected(in, "message");
            ingest_unreserve(in, i);
            continue;
        }
        struct slot_hdr *sh = &in->hdr[i];
        sh->t_arrive = t0;
        sh->decode_s = source_now_s() - t0;
        in->stats.accepted++;
        ingest_commit(in, i);
    }
}

static void zmq_close_source(void *ctx)
{
    struct zmq_source *z = ctx;
    if (!z)
        return;
    if (z->sock) /* closed already at the end of stream */
        zmq_close(z->sock);
    free(z);
}

struct source zmq_source_as_source(struct zmq_source *z)
{
    return (struct source){.name = z->bound, .ctx = z, .run = zmq_run, .close = zmq_close_source};
}
