/* pipeline — ingest thread, worker thread (copy + compute streams, events), publisher. */
#define LOG_COMPONENT "pipeline"
#include "stream/pipeline.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf/config.h"
#include "io/uring_reader.h"
#include "kernels/device.h"
#include "stream/error.h"
#include "stream/http_status.h"
#include "stream/log.h"
#include "stream/signals.h"
#include "version.h"

static _Atomic int g_stop_request;
/* The worker's io, for job code called from process (pipeline_worker_io). */
static _Thread_local const struct pipeline_io *t_io;

void pipeline_request_stop(void)
{
    atomic_store(&g_stop_request, 1);
}

const struct pipeline_io *pipeline_worker_io(void)
{
    return t_io;
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
    pc->pub.fingerprint = config_fingerprint(cfg);
    pc->pub.version = SEISLIVE_VERSION " (" SEISLIVE_GIT_REV ", " SEISLIVE_BUILD_KIND ")";
    pc->http = cfg->output.http;
    pc->http_token = cfg->output.http_token;
    pc->http_keep = cfg->output.http_keep;
    pc->expected_units = cfg->input.expected_shots;
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
    struct pub_snapshot snap;    /* what the status page reads ([output] http) */
    bool have_snap;
    struct http_status *http;
    bool have_pub;
    _Atomic int stop;
    int ingest_rc, worker_rc;
    char ingest_err[1024], worker_err[1024]; /* err_msg() is per thread: carried back */
};

/* ---- the ingest side: what a source gets through struct ingest (io/source.h) ---- */

/* The run's stop, a signal's, or pipeline_request_stop's. */
static bool stop_now(struct run *r)
{
    return atomic_load(&r->stop) || signals_stop_requested() || atomic_load(&g_stop_request);
}

static bool ingest_stop(void *rt)
{
    return stop_now(rt);
}

static int ingest_take(void *rt)
{
    struct run *r = rt;
    double t0 = now_s();
    bool logged = false;
    for (;;) {
        if (stop_now(r))
            return -ECANCELED;
        int i = slots_reserve(&r->slots, 50);
        if (i >= 0) {
            double w = now_s() - t0;
            r->slots.hdr[i].wait_s = w;
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

static void ingest_give(void *rt, int i)
{
    struct run *r = rt;
    slots_commit(&r->slots, i);
}

static void ingest_give_back(void *rt, int i)
{
    struct run *r = rt;
    slots_unreserve(&r->slots, i);
}

_Static_assert(WIRE_REJ_N <= METRICS_REJ_N, "metrics.rejected_by too short");

/* The ingest thread's reject reasons into the metrics (the ingest thread is the only
 * writer of in.stats, so it reads them without a lock; the status reads the copy). */
static void copy_reasons(struct run *r)
{
    for (int k = 0; k < WIRE_REJ_N; k++)
        r->m->rejected_by[k] = r->in.stats.rejected[k];
}

static void ingest_counts(void *rt, uint64_t received, uint64_t rejected)
{
    struct run *r = rt;
    pthread_mutex_lock(&r->m->mu);
    r->m->received += received;
    r->m->rejected += rejected;
    copy_reasons(r);
    pthread_mutex_unlock(&r->m->mu);
}

static void ingest_reject(void *rt, const char *what)
{
    struct run *r = rt;
    pthread_mutex_lock(&r->m->mu);
    r->m->rejected++;
    copy_reasons(r);
    uint64_t n = r->m->rejected;
    pthread_mutex_unlock(&r->m->mu);
    log_warn("rejected %s: %s (%llu rejected so far)", what, err_msg(), (unsigned long long)n);
}

static const struct ingest_ops ingest_ops = {
    .stopping = ingest_stop, .reserve = ingest_take, .commit = ingest_give,
    .unreserve = ingest_give_back, .count = ingest_counts, .rejected = ingest_reject,
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
    uint64_t acquired;       /* units taken from the slots, skipped ones included */
};

/* The survey's length for the status's units_total and eta_s: [input] expected_shots
 * when set (pipeline_run), else, for an input of known length (files, not watched),
 * the units so far over the share of the input read with this one: an estimate while
 * the shots are of similar sizes, exact at the last unit (which ends the input). */
static void note_length(struct run *r, const struct slot_hdr *h, uint64_t acquired)
{
    if (r->pc->expected_units > 0 || !(h->input_frac > 0))
        return;
    int64_t total = llround((double)acquired / fmin(h->input_frac, 1.0));
    pthread_mutex_lock(&r->m->mu);
    r->m->units_total = total;
    pthread_mutex_unlock(&r->m->mu);
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
    double free_mib = -1, total_mib = -1;
    if (w->cuda) {
        struct sl_device d = *r->dev;
        if (backend_mem_info(&d) == 0) {
            free_mib = (double)d.mem_free / 1048576.0;
            total_mib = (double)d.mem_total / 1048576.0;
        }
    }
    pthread_mutex_lock(&r->m->mu);
    r->m->units++;
    r->m->current = -1;
    r->m->gpu_free_mib = free_mib;
    r->m->gpu_total_mib = total_mib;
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
        if (i == -ETIMEDOUT) {
            if (ops->idle && (rc = ops->idle(ops->ctx, &w->io)) != 0)
                break;
            continue;
        }
        if (i < 0)
            break; /* -EPIPE: input ended; -ECANCELED: stop */
        struct slot_hdr *h = &r->slots.hdr[i];
        note_length(r, h, ++w->acquired);
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

/* After the publisher stopped: keep the page up for [output] http_keep s (the final
 * status and image; a stop signal cuts it short), then stop it. */
static void http_end(struct run *r)
{
    if (r->http && r->pc->http_keep > 0) {
        log_info("status page stays up for %g s ([output] http_keep)", r->pc->http_keep);
        double t_end = now_s() + r->pc->http_keep;
        while (now_s() < t_end && !signals_stop_requested() && !atomic_load(&g_stop_request))
            usleep(100000);
    }
    http_status_stop(r->http);
    r->http = NULL;
    if (r->have_snap)
        pub_snapshot_destroy(&r->snap);
    r->have_snap = false;
}

/* The publisher, and the status page reading its snapshot.  The page needs the
 * publisher's messages: without an [output] endpoint it publishes on an inproc one that
 * nobody else can reach. */
static int http_begin(struct run *r, void *zctx)
{
    const struct pipeline_conf *pc = r->pc;
    struct publisher_conf pub = pc->pub;
    bool http = pc->http && pc->http[0];
    char inproc[64];
    if (http) {
        int rc = pub_snapshot_init(&r->snap);
        if (rc)
            return err_set(rc, "status page: cannot make its snapshot");
        r->have_snap = true;
        pub.snap = &r->snap;
        if (pub.stations) /* static: once, off the hot path (/stations.json) */
            pub_snapshot_set_stations(&r->snap, station_health_positions(pub.stations));
        if (!pub.endpoint || !pub.endpoint[0]) {
            snprintf(inproc, sizeof inproc, "inproc://seislive-page-%p", (void *)r);
            pub.endpoint = inproc;
        }
    }
    if (pub.endpoint && pub.endpoint[0]) {
        int rc = publisher_start(&r->pub, zctx, &pub, r->m);
        if (rc) {
            http_end(r);
            return rc;
        }
        r->have_pub = true;
    }
    if (http) {
        struct http_status_conf hc = {.addr = pc->http, .token = pc->http_token, .job = pc->pub.job};
        int rc = http_status_start(&r->http, &hc, &r->snap);
        if (rc) {
            if (r->have_pub)
                publisher_stop(&r->pub);
            r->have_pub = false;
            http_end(r);
            return rc;
        }
    }
    return 0;
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
    if (pc->expected_units > 0)
        m->units_total = pc->expected_units; /* before the publisher's first status */
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
    rc = http_begin(r, zctx);
    if (rc) {
        slots_destroy(&r->slots);
        uring_reader_close(&r->ring);
        free(r);
        return rc;
    }
    r->in = (struct ingest){.nslots = r->slots.n, .slot_bytes = r->slots.bytes, .base = r->slots.base,
                            .hdr = r->slots.hdr, .staging = r->slots.staging,
                            .staging_bytes = r->slots.staging_bytes, .ring = &r->ring, .zctx = zctx,
                            .ops = &ingest_ops, .rt = r};
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
    http_end(r);
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
