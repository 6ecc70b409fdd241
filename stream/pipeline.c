/* pipeline — ingest thread, worker thread (copy + compute streams, events), publisher. */
#define LOG_COMPONENT "pipeline"
#include "stream/pipeline.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "conf/config.h"
#include "io/file_source.h"
#include "io/uring_reader.h"
#include "io/zmq_source.h"
#include "kernels/device.h"
#include "stream/error.h"
#include "stream/log.h"
#include "stream/signals.h"
#include "stream/state.h"
#include "stream/time_ledger.h"

static _Atomic int g_stop_request;
/* The worker's way to the publisher, for pipeline_publish_* called from job code. */
static _Thread_local const struct pipeline_io *t_io;

void pipeline_request_stop(void)
{
    atomic_store(&g_stop_request, 1);
}

bool ingest_stopping(const struct ingest *in)
{
    return atomic_load(in->stop) || signals_stop_requested() || atomic_load(&g_stop_request);
}

int ingest_reserve(struct ingest *in)
{
    double t0 = now_s();
    bool logged = false;
    for (;;) {
        if (ingest_stopping(in))
            return -ECANCELED;
        int i = slots_reserve(in->slots, 50);
        if (i >= 0) {
            double w = now_s() - t0;
            in->slots->hdr[i].wait_s = w;
            if (logged)
                log_debug("slot free again after %.3f s", w);
            return i;
        }
        if (!logged && now_s() - t0 > 1.0) {
            log_debug("every slot full: ingest waits (back-pressure)");
            logged = true;
        }
    }
}

void ingest_rejected(struct ingest *in, const char *what)
{
    pthread_mutex_lock(&in->m->mu);
    in->m->rejected++;
    uint64_t n = in->m->rejected;
    pthread_mutex_unlock(&in->m->mu);
    log_warn("rejected %s: %s (%llu rejected so far)", what, err_msg(), (unsigned long long)n);
}

void pipeline_conf_from(const struct sl_config *cfg, const char *job, struct pipeline_conf *pc)
{
    memset(pc, 0, sizeof *pc);
    pc->slots = cfg->input.slots;
    pc->slot_bytes = (size_t)(cfg->input.slot_mib * 1048576.0);
    pc->staging_bytes = cfg->input.kind == INPUT_FILES ? pc->slot_bytes : 0;
    pc->io_method = cfg->input.io == IO_URING ? URING_FORCE
                    : cfg->input.io == IO_PREAD ? URING_PREAD
                                                : URING_AUTO;
    pc->publish_every = cfg->output.image_every;
    pc->publish_interval = cfg->output.image_interval;
    pc->checkpoint_every = cfg->output.state_dir && cfg->output.state_dir[0]
                               ? cfg->output.checkpoint_every
                               : 0;
    pc->checkpoint_interval = cfg->output.checkpoint_interval;
    pc->pub.endpoint = cfg->output.endpoint;
    pc->pub.hwm = cfg->output.hwm;
    pc->pub.linger_ms = (int)(cfg->output.drain * 1000 + 0.5);
    pc->pub.curve_secret = cfg->output.curve_secret_key;
    pc->pub.curve_public = cfg->output.curve_public_key;
    pc->pub.curve_clients = cfg->output.curve_clients;
    pc->pub.status_interval = cfg->runtime.metrics_interval;
    pc->pub.job = job;
}

int pipeline_open_source(const struct sl_config *cfg, void *zctx, int kind, struct source *out)
{
    const struct input_conf *ic = &cfg->input;
    char where[256];
    if (ic->kind == INPUT_ZMQ) {
        struct zmq_source_conf zc = {.endpoint = ic->endpoint, .socket = ic->socket,
                                     .idle_s = ic->watch_idle};
        struct zmq_source *z;
        int rc = zmq_source_open(&z, zctx, &zc);
        if (rc)
            return err_prefix(rc, "%s", config_where(cfg, "input.endpoint", where, sizeof where));
        *out = zmq_source_as_source(z);
        return 0;
    }
    if (ic->kind == INPUT_FILES) {
        struct file_source_conf fc = {.paths = ic->paths, .n_paths = ic->n_paths,
                                      .watch = ic->watch, .watch_idle = ic->watch_idle,
                                      .settle = ic->settle, .su_order = ic->su_byte_order,
                                      .format = ic->format, .o_direct = ic->o_direct,
                                      .kind = kind, .block_samples = cfg->locate.block_samples};
        struct file_source *f;
        int rc = file_source_open(&f, &fc);
        if (rc)
            return err_prefix(rc, "%s", config_where(cfg, "input.paths", where, sizeof where));
        *out = file_source_as_source(f);
        return 0;
    }
    return err_set(-EINVAL, "%s: [input] kind = \"none\": this job needs an input (zmq or files)",
                   config_where(cfg, "input.kind", where, sizeof where));
}

struct run {
    const struct pipeline_conf *pc;
    const struct sl_device *dev;
    struct source *src;
    const struct pipeline_ops *ops;
    struct metrics *m;
    struct slots slots;
    struct uring_reader ring;
    struct ingest in;
    struct publisher pub;
    bool have_pub;
    _Atomic int stop;
    int ingest_rc, worker_rc;
    char ingest_err[1024], worker_err[1024]; /* err_msg() is per thread: carried back */
};

static void *ingest_main(void *arg)
{
    struct run *r = arg;
    r->ingest_rc = r->src->run(r->src->ctx, &r->in);
    if (r->ingest_rc < 0) {
        snprintf(r->ingest_err, sizeof r->ingest_err, "%s", err_msg());
        log_error("input %s failed: %s", r->src->name, err_msg());
        atomic_store(&r->stop, 1);
    }
    else
        log_info("input %s ended", r->src->name);
    slots_close(&r->slots);
    return NULL;
}

/* Per-unit bookkeeping of the worker. */
struct inflight {
    int slot;
    int buf;               /* device buffer (CUDA) */
    struct slot_hdr hdr;   /* copy: the slot is released before finish */
    bool publish, checkpoint;
    double t_compute0;
};

struct worker {
    struct run *r;
    struct pipeline_io io;
    void *copy_stream, *compute_stream;
    void *dbuf[2];
    void *ev_h2d[2], *ev_h2d0[2], *ev_done[2];
    bool cuda;
    uint64_t since_pub, since_ckpt;
    double t_pub, t_ckpt;
};

static bool stop_now(struct run *r)
{
    return atomic_load(&r->stop) || signals_stop_requested() || atomic_load(&g_stop_request);
}

static int finish_unit(struct worker *w, struct inflight *f)
{
    struct run *r = w->r;
    if (w->cuda) {
        int rc = dev_event_sync(r->dev, w->ev_done[f->buf]);
        if (rc < 0)
            return rc;
    }
    double tc = now_s() - f->t_compute0;
    metrics_add(r->m, ST_COMPUTE, tc);
    int rc = r->ops->finish(r->ops->ctx, &f->hdr, &w->io, f->publish, f->checkpoint);
    double free_mib = -1;
    if (w->cuda) {
        struct sl_device d = *r->dev;
        if (backend_mem_info(&d) == 0)
            free_mib = (double)d.mem_free / 1048576.0;
    }
    pthread_mutex_lock(&r->m->mu);
    r->m->units++;
    r->m->current = -1;
    r->m->gpu_free_mib = free_mib;
    pthread_mutex_unlock(&r->m->mu);
    if (r->have_pub == false && f->hdr.t_arrive > 0)
        metrics_add(r->m, ST_LATENCY, now_s() - f->hdr.t_arrive);
    return rc;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct run *r = w->r;
    const struct pipeline_ops *ops = r->ops;
    int rc = backend_bind(r->dev);
    w->cuda = dev_is_gpu(r->dev);
    if (!rc && w->cuda) {
        rc = dev_stream_create(r->dev, &w->copy_stream);
        if (!rc)
            rc = dev_stream_create(r->dev, &w->compute_stream);
        for (int k = 0; k < 2 && !rc; k++) {
            rc = dev_event_create(r->dev, &w->ev_h2d[k], true);
            if (!rc)
                rc = dev_event_create(r->dev, &w->ev_h2d0[k], true);
            if (!rc)
                rc = dev_event_create(r->dev, &w->ev_done[k], false);
            if (!rc && ops->wants_device)
                rc = dev_alloc(r->dev, r->slots.bytes, &w->dbuf[k]);
        }
    }
    if (!rc && ops->begin)
        rc = ops->begin(ops->ctx, r->dev, w->compute_stream);
    w->io.pub = r->have_pub ? &r->pub : NULL;
    w->io.client = r->have_pub ? publisher_client(&r->pub) : NULL;
    /* Without its client socket the worker could publish nothing: every image and
     * event would fail later, one by one.  Say so now, once, and stop. */
    if (!rc && r->have_pub && !w->io.client)
        rc = err_prefix(-EIO, "the worker's connection to the publisher");
    w->io.m = r->m;
    t_io = &w->io;
    w->t_pub = w->t_ckpt = now_s();
    struct inflight prev = {.slot = -1};
    bool have_prev = false;
    uint64_t n = 0;
    while (!rc) {
        /* Nothing waiting: finish the unit in flight now rather than sit on its result
         * (a live stream must publish every shot as soon as it is done). */
        /* GPU: rather than block on the previous unit's compute, keep watching for the
         * next unit, so its copy can start under that compute. */
        while (w->cuda && ops->async && have_prev && spsc_size(&r->slots.ready_q) == 0 &&
               !stop_now(r)) {
            int q = dev_event_query(r->dev, w->ev_done[prev.buf]);
            if (q != 0)
                break; /* done (or an error, which finish_unit reports) */
            struct timespec ts = {0, 100000L};
            nanosleep(&ts, NULL);
        }
        if (have_prev && spsc_size(&r->slots.ready_q) == 0) {
            rc = finish_unit(w, &prev);
            have_prev = false;
            if (rc)
                break;
        }
        log_poll(); /* a pending SIGHUP: reopen the log file even while nothing is logged */
        int i = stop_now(r) ? -ECANCELED : slots_acquire(&r->slots, 100);
        if (i == -ETIMEDOUT)
            continue;
        if (i < 0)
            break; /* -EPIPE: input ended; -ECANCELED: stop */
        struct slot_hdr *h = &r->slots.hdr[i];
        if ((ops->skip && ops->skip(ops->ctx, h)) ||
            (!ops->skip && have_prev && prev.hdr.id == h->id && h->kind == SLOT_SHOT)) {
            pthread_mutex_lock(&r->m->mu);
            r->m->skipped++;
            pthread_mutex_unlock(&r->m->mu);
            log_info("%s: %s %lld already stacked (ledger): skipped", h->origin,
                     h->kind == SLOT_SHOT ? "shot" : "unit", (long long)h->id);
            slots_release(&r->slots, i);
            continue;
        }
        /* Synchronous processing (the CPU, or a job that completes each unit in its
         * call) changes the result at once: the previous unit must be finished
         * (published, checkpointed) before. */
        if (have_prev && !(w->cuda && ops->async)) {
            rc = finish_unit(w, &prev);
            have_prev = false;
            if (rc)
                break;
        }
        metrics_add(r->m, ST_WAIT, h->wait_s);
        metrics_add(r->m, ST_DECODE, h->decode_s);
        pthread_mutex_lock(&r->m->mu);
        r->m->current = h->id;
        pthread_mutex_unlock(&r->m->mu);
        struct inflight cur = {.slot = i, .buf = (int)(n % 2), .hdr = *h};
        n++;
        w->since_pub++;
        w->since_ckpt++;
        double t = now_s();
        cur.publish = r->have_pub && (w->since_pub >= (uint64_t)r->pc->publish_every ||
                                      (r->pc->publish_interval > 0 &&
                                       t - w->t_pub >= r->pc->publish_interval));
        cur.checkpoint = r->pc->checkpoint_every > 0 &&
                         (w->since_ckpt >= (uint64_t)r->pc->checkpoint_every ||
                          (r->pc->checkpoint_interval > 0 &&
                           t - w->t_ckpt >= r->pc->checkpoint_interval));
        if (cur.publish) {
            w->since_pub = 0;
            w->t_pub = t;
        }
        if (cur.checkpoint) {
            w->since_ckpt = 0;
            w->t_ckpt = t;
        }
        struct pipeline_unit u = {.hdr = h, .host = slot_data(&r->slots, i), .dev = NULL,
                                  .stream = w->compute_stream};
        if (w->cuda && ops->wants_device) {
            int k = cur.buf;
            /* Device buffer k was last read by the compute two units ago. */
            rc = dev_stream_wait(r->dev, w->copy_stream, w->ev_done[k]);
            if (!rc)
                rc = dev_event_record(r->dev, w->ev_h2d0[k], w->copy_stream);
            if (!rc)
                rc = dev_copy(r->dev, w->dbuf[k], u.host, h->bytes, DEV_H2D, w->copy_stream);
            if (!rc)
                rc = dev_event_record(r->dev, w->ev_h2d[k], w->copy_stream);
            if (!rc)
                rc = dev_stream_wait(r->dev, w->compute_stream, w->ev_h2d[k]);
            u.dev = w->dbuf[k];
            if (rc)
                break;
        }
        cur.t_compute0 = now_s();
        int prc = ops->process(ops->ctx, &u, cur.publish || cur.checkpoint);
        if (w->cuda && prc == 0) {
            rc = dev_event_record(r->dev, w->ev_done[cur.buf], w->compute_stream);
            if (rc)
                break;
        }
        if (prc == -ECANCELED) {
            slots_release(&r->slots, i); /* stopped mid-unit: abandoned, replayed later */
            break;
        }
        if (prc == -EIO) {
            rc = prc;
            break;
        }
        if (prc < 0) {
            pthread_mutex_lock(&r->m->mu);
            r->m->rejected++;
            r->m->current = -1;
            pthread_mutex_unlock(&r->m->mu);
            log_warn("%s: unit %lld rejected by the job: %s", h->origin, (long long)h->id, err_msg());
            if (w->cuda && ops->wants_device)
                dev_event_sync(r->dev, w->ev_h2d[cur.buf]);
            slots_release(&r->slots, i);
            continue;
        }
        /* GPU: the previous unit's compute ran while this unit's copy went over. */
        if (have_prev) {
            rc = finish_unit(w, &prev);
            have_prev = false;
            if (rc)
                break;
        }
        if (w->cuda && ops->wants_device) {
            /* The slot may be refilled only once its copy has completed. */
            rc = dev_event_sync(r->dev, w->ev_h2d[cur.buf]);
            float ms = 0;
            if (!rc && dev_event_elapsed_ms(r->dev, w->ev_h2d0[cur.buf], w->ev_h2d[cur.buf], &ms) == 0)
                metrics_add(r->m, ST_H2D, 1e-3 * ms);
        }
        slots_release(&r->slots, i);
        if (rc)
            break;
        prev = cur;
        have_prev = true;
    }
    bool stopped = stop_now(r) && rc == 0;
    if (have_prev) {
        int frc = finish_unit(w, &prev);
        if (!rc)
            rc = frc;
    }
    if (ops->end) {
        int erc = ops->end(ops->ctx, &w->io, r->pc->checkpoint_every > 0, stopped);
        if (!rc)
            rc = erc;
    }
    if (rc)
        atomic_store(&r->stop, 1); /* the ingest stops too */
    t_io = NULL;
    publisher_client_close(w->io.client);
    if (w->cuda) {
        dev_stream_sync(r->dev, w->compute_stream);
        dev_stream_sync(r->dev, w->copy_stream);
        for (int k = 0; k < 2; k++) {
            dev_free(r->dev, w->dbuf[k]);
            dev_event_destroy(r->dev, w->ev_h2d[k]);
            dev_event_destroy(r->dev, w->ev_h2d0[k]);
            dev_event_destroy(r->dev, w->ev_done[k]);
        }
        dev_stream_destroy(r->dev, w->copy_stream);
        dev_stream_destroy(r->dev, w->compute_stream);
    }
    r->worker_rc = rc;
    if (rc < 0) {
        snprintf(r->worker_err, sizeof r->worker_err, "%s", err_msg());
        log_error("worker: %s", err_msg());
    }
    return NULL;
}

int pipeline_run(const struct pipeline_conf *pc, const struct sl_device *dev, void *zctx,
                 struct source *src, const struct pipeline_ops *ops, struct metrics *m)
{
    struct run *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    r->pc = pc;
    r->dev = dev;
    r->src = src;
    r->ops = ops;
    r->m = m;
    atomic_store(&g_stop_request, 0);
    /* A service lives through `systemctl reload` (SIGHUP: reopen the log), file or not. */
    int rc = signals_install_hup();
    if (rc) {
        free(r);
        return rc;
    }
    rc = uring_reader_init(&r->ring, pc->io_method);
    if (!rc)
        rc = slots_create(&r->slots, pc->slots, pc->slot_bytes, pc->staging_bytes, &r->ring, dev);
    if (rc) {
        uring_reader_close(&r->ring);
        free(r);
        return rc;
    }
    if (pc->pub.endpoint && pc->pub.endpoint[0]) {
        rc = publisher_start(&r->pub, zctx, &pc->pub, m);
        if (rc) {
            slots_destroy(&r->slots);
            uring_reader_close(&r->ring);
            free(r);
            return rc;
        }
        r->have_pub = true;
    }
    r->in = (struct ingest){.slots = &r->slots, .ring = &r->ring, .m = m, .stop = &r->stop,
                            .zctx = zctx};
    struct worker w = {.r = r};
    pthread_t ti, tw;
    /* pthread_create returns a positive error number (EAGAIN: no threads left).  A
     * worker that never started leaves nothing to join; an ingest that never started
     * must still end the worker: the stop flag and the closed slots do that. */
    int terr = pthread_create(&tw, NULL, worker_main, &w), ierr = 0;
    if (terr == 0) {
        ierr = pthread_create(&ti, NULL, ingest_main, r);
        if (ierr == 0) {
            pthread_join(ti, NULL);
        } else {
            atomic_store(&r->stop, 1);
            slots_close(&r->slots);
        }
        pthread_join(tw, NULL);
    }
    if (r->have_pub)
        publisher_stop(&r->pub);
    slots_destroy(&r->slots);
    uring_reader_close(&r->ring);
    rc = r->worker_rc ? r->worker_rc : r->ingest_rc;
    if (terr || ierr)
        rc = err_set(-(terr ? terr : ierr), "cannot start the %s thread: %s", terr ? "worker" : "ingest",
                     strerror(terr ? terr : ierr));
    else if (rc < 0)
        err_set(rc, "%s", r->worker_rc ? r->worker_err : r->ingest_err);
    /* Copy the reject reasons out for the report. */
    for (int k = 0; k < WIRE_REJ_N; k++)
        if (r->in.stats.rejected[k])
            log_info("rejected: %llu x %s", (unsigned long long)r->in.stats.rejected[k],
                     wire_reject_name(k));
    free(r);
    return rc;
}

/* ---- trace blocks ---- */

struct block_ctx {
    const struct block_consumer *bc;
    const struct sl_config *cfg;
    uint64_t fingerprint;
    struct time_ledger done; /* recording time already processed (resumed from state) */
    int64_t blocks;
};

/* The catalogue of published events (for the state): JSON lines. */
static char *g_catalogue;
static size_t g_cat_len, g_cat_cap;
static pthread_mutex_t g_cat_mu = PTHREAD_MUTEX_INITIALIZER;

/* Append N bytes of LINE and a newline. */
static void catalogue_add(const char *line, size_t n)
{
    pthread_mutex_lock(&g_cat_mu);
    if (g_cat_len + n + 2 > g_cat_cap) {
        size_t cap = (g_cat_len + n + 2) * 2;
        char *p = realloc(g_catalogue, cap);
        if (p) {
            g_catalogue = p;
            g_cat_cap = cap;
        }
    }
    if (g_cat_len + n + 2 <= g_cat_cap) {
        memcpy(g_catalogue + g_cat_len, line, n);
        g_catalogue[g_cat_len + n] = '\n';
        g_cat_len += n + 1;
        g_catalogue[g_cat_len] = '\0';
    }
    pthread_mutex_unlock(&g_cat_mu);
}

int pipeline_publish_event(const struct wire_event *e)
{
    char *js = wire_encode_event(e);
    if (!js)
        return -ENOMEM;
    catalogue_add(js, strlen(js));
    int rc = 0;
    if (t_io && t_io->pub)
        rc = publisher_send(t_io->pub, t_io->client, WIRE_TOPIC_EVENT, js, 0, NULL, NULL, 0, NULL);
    free(js);
    return rc == -EAGAIN ? 0 : rc;
}

int pipeline_publish_coherence(const struct wire_volume_hdr *h, const float *v)
{
    if (!t_io || !t_io->pub)
        return 0;
    size_t bytes = (size_t)h->n[0] * h->n[1] * h->n[2] * sizeof(float);
    float *copy = malloc(bytes);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, v, bytes);
    char *js = wire_encode_volume(h);
    void *fr[1] = {copy};
    int rc = publisher_send(t_io->pub, t_io->client, WIRE_TOPIC_COHERENCE, js, 0, fr, &bytes, 1,
                            free);
    free(js);
    return rc == -EAGAIN ? 0 : rc;
}

static int64_t block_end_ns(const struct trace_block *b)
{
    return b->t0_ns + (int64_t)llround((double)b->ns * b->dt * 1e9);
}

static bool block_skip(void *ctx, const struct slot_hdr *h)
{
    struct block_ctx *c = ctx;
    return h->kind == SLOT_TRACES &&
           time_ledger_covers(&c->done, h->block.t0_ns, block_end_ns(&h->block));
}

static int block_process(void *ctx, const struct pipeline_unit *u, bool snapshot)
{
    struct block_ctx *c = ctx;
    (void)snapshot;
    if (u->hdr->kind != SLOT_TRACES)
        return err_set(-EINVAL, "%s: a shot reached the %s job (it takes trace blocks)",
                       u->hdr->origin, c->bc->name);
    return c->bc->feed(&u->hdr->block, c->bc->user);
}

static int block_checkpoint(struct block_ctx *c)
{
    struct state s;
    state_init(&s);
    s.fingerprint = c->fingerprint;
    s.last_t_ns = time_ledger_last(&c->done);
    s.ledger = c->done.iv; /* (start, end) pairs; borrowed, not freed here */
    s.n_ledger = 2 * c->done.n;
    pthread_mutex_lock(&g_cat_mu);
    s.catalogue = g_catalogue;
    s.catalogue_len = g_cat_len;
    int rc = state_save(c->cfg->output.state_dir, &s);
    pthread_mutex_unlock(&g_cat_mu);
    return rc;
}

static int block_finish(void *ctx, const struct slot_hdr *h, const struct pipeline_io *io,
                        bool publish, bool ckpt)
{
    struct block_ctx *c = ctx;
    (void)io;
    (void)publish;
    c->blocks++;
    /* Short gaps (up to ten blocks) are filled by the engine: count them as processed. */
    int64_t end = block_end_ns(&h->block), len = end - h->block.t0_ns;
    int rc = time_ledger_add(&c->done, h->block.t0_ns, end, len > 0 ? 10 * len : 0);
    if (rc == -EINVAL) { /* a block whose times the ledger cannot hold: not fatal to the run */
        log_warn("%s: %s: block at t0 = %lld ns not recorded in the ledger: %s", c->bc->name,
                 h->origin, (long long)h->block.t0_ns, err_msg());
        rc = 0;
    }
    if (rc < 0)
        return rc;
    if (rc == 1)
        log_warn("%s: more than %d separate stretches of time processed: the two closest were "
                 "joined in the ledger (a block replayed into that gap would be skipped)",
                 c->bc->name, TIME_LEDGER_MAX);
    return ckpt ? block_checkpoint(c) : 0;
}

static int block_end(void *ctx, const struct pipeline_io *io, bool ckpt, bool stopped)
{
    struct block_ctx *c = ctx;
    (void)io;
    int rc = 0;
    /* A stop mid-stream keeps the engine's tail for the replay; the end of the input
     * flushes the last events. */
    if (!stopped && c->bc->flush)
        rc = c->bc->flush(c->bc->user);
    if (!rc && ckpt)
        rc = block_checkpoint(c);
    log_info("%s: %lld blocks processed", c->bc->name, (long long)c->blocks);
    return rc;
}

int pipeline_run_blocks(const struct sl_config *cfg, const struct sl_device *dev,
                        const struct block_consumer *bc)
{
    struct block_ctx c = {.bc = bc, .cfg = cfg, .fingerprint = config_fingerprint(cfg)};
    time_ledger_init(&c.done);
    const char *sd = cfg->output.state_dir;
    if (sd && sd[0]) {
        struct state s;
        int rc = state_load(sd, c.fingerprint, &s);
        if (rc == 0) {
            rc = time_ledger_load(&c.done, s.ledger, s.n_ledger, s.last_t_ns);
            if (rc == 0) {
                if (s.catalogue && s.catalogue_len)
                    catalogue_add(s.catalogue,
                                  s.catalogue_len - (s.catalogue[s.catalogue_len - 1] == '\n'));
                log_info("state %s: resumed after t = %lld ns (%zu stretch%s of time processed)", sd,
                         (long long)time_ledger_last(&c.done), c.done.n, c.done.n == 1 ? "" : "es");
            }
            state_free(&s);
        }
        if (rc && rc != -ENOENT) {
            time_ledger_free(&c.done);
            return err_prefix(rc, "[output] state_dir (move it away to start afresh)");
        }
    }
    void *zctx = zmq_ctx_new();
    struct source src;
    int rc = pipeline_open_source(cfg, zctx, SLOT_TRACES, &src);
    if (rc) {
        zmq_ctx_term(zctx);
        time_ledger_free(&c.done);
        return rc;
    }
    struct pipeline_conf pc;
    pipeline_conf_from(cfg, bc->name, &pc);
    struct pipeline_ops ops = {.name = bc->name, .ctx = &c, .skip = block_skip,
                               .process = block_process, .finish = block_finish,
                               .end = block_end};
    struct metrics m;
    metrics_init(&m);
    rc = pipeline_run(&pc, dev, zctx, &src, &ops, &m);
    src.close(src.ctx);
    zmq_ctx_term(zctx);
    if (log_get_level() <= LOG_INFO)
        metrics_print(&m, stderr);
    metrics_destroy(&m);
    pthread_mutex_lock(&g_cat_mu);
    free(g_catalogue);
    g_catalogue = NULL;
    g_cat_len = g_cat_cap = 0;
    pthread_mutex_unlock(&g_cat_mu);
    time_ledger_free(&c.done);
    return rc;
}
