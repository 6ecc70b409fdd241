/* locate_blocks — trace blocks through the runtime: the ledger of recording time
 * processed, the event catalogue, the state checkpoints, publishing (see
 * locate_blocks.h). */
#define LOG_COMPONENT "pipeline"
#include "stream/locate_blocks.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "stream/error.h"
#include "stream/log.h"
#include "stream/pipeline.h"
#include "stream/sources.h"
#include "stream/state.h"
#include "stream/station_health.h"
#include "stream/time_ledger.h"

struct block_ctx {
    const struct block_consumer *bc;
    const struct sl_config *cfg;
    uint64_t fingerprint;
    struct time_ledger done; /* recording time already processed (resumed from state) */
    int64_t blocks;
    struct station_health *health; /* NULL when nobody reads it (no endpoint, no page) */
    char *resume;            /* the input's position after the last block finished (SeedLink) */
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

int locate_blocks_publish_event(const struct wire_event *e)
{
    char *js = wire_encode_event(e);
    if (!js)
        return -ENOMEM;
    catalogue_add(js, strlen(js));
    int rc = 0;
    const struct pipeline_io *io = pipeline_worker_io();
    if (io && io->pub)
        rc = publisher_send(io->pub, io->client, WIRE_TOPIC_EVENT, js, 0, NULL, NULL, 0, NULL);
    free(js);
    return rc == -EAGAIN ? 0 : rc;
}

int locate_blocks_publish_coherence(const struct wire_volume_hdr *h, const float *v)
{
    const struct pipeline_io *io = pipeline_worker_io();
    if (!io || !io->pub)
        return 0;
    size_t bytes = (size_t)h->n[0] * h->n[1] * h->n[2] * sizeof(float);
    float *copy = malloc(bytes);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, v, bytes);
    char *js = wire_encode_volume(h);
    void *fr[1] = {copy};
    int rc = publisher_send(io->pub, io->client, WIRE_TOPIC_COHERENCE, js, 0, fr, &bytes, 1, free);
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
    station_health_block(c->health, &u->hdr->block);
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
    s.resume = c->resume; /* borrowed */
    s.resume_len = c->resume ? strlen(c->resume) : 0;
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
    if (h->resume) { /* the source's position after this block: saved with it */
        char *r = strdup(h->resume);
        if (!r)
            return err_set(-ENOMEM, "%s: out of memory", h->origin);
        free(c->resume);
        c->resume = r;
    }
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

int locate_blocks_run(const struct sl_config *cfg, const struct sl_device *dev,
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
                if (s.resume && s.resume_len)
                    c.resume = strdup(s.resume);
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
            free(c.resume);
            return err_prefix(rc, "[output] state_dir (move it away to start afresh)");
        }
    }
    void *zctx = zmq_ctx_new();
    struct source src;
    int rc = pipeline_open_source_at(cfg, zctx, SLOT_TRACES, c.resume, &src);
    if (rc) {
        zmq_ctx_term(zctx);
        time_ledger_free(&c.done);
        free(c.resume);
        return rc;
    }
    struct pipeline_conf pc;
    pipeline_conf_from(cfg, bc->name, &pc);
    pc.expected_units = 0; /* expected_shots counts shots, not trace blocks */
    bool readers = (pc.pub.endpoint && pc.pub.endpoint[0]) || (pc.http && pc.http[0]);
    if (bc->stations && readers) {
        rc = station_health_create(&c.health, bc->stations);
        if (rc) {
            src.close(src.ctx);
            zmq_ctx_term(zctx);
            time_ledger_free(&c.done);
            free(c.resume);
            return rc;
        }
        pc.pub.stations = c.health;
    }
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
    station_health_destroy(c.health);
    pthread_mutex_lock(&g_cat_mu);
    free(g_catalogue);
    g_catalogue = NULL;
    g_cat_len = g_cat_cap = 0;
    pthread_mutex_unlock(&g_cat_mu);
    time_ledger_free(&c.done);
    free(c.resume);
    return rc;
}
