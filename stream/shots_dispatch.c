/* shots_dispatch — rank 0 of decompose = "shots": hands the shots out on demand and adds
 * the returned images in the order it handed them out (stream/shots.h). */
#define LOG_COMPONENT "shots"
#include "stream/shots.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stream/error.h"
#include "stream/log.h"
#include "stream/mpi.h"
#include "stream/mpi_shots.h"
#include "stream/pipeline.h"
#include "stream/shots_progress.h"
#include "stream/signals.h"

/* How long a stopped run waits for the shots still out before it saves what it has:
 * the workers got the same signal (mpirun forwards it) and give up their shots within
 * RTM_STOP_POLL steps; one that does not answer is dead or hung, and mpirun ends it. */
#define STOP_WAIT_S 10.0

enum pend_state { P_OUT, P_DONE, P_FAILED };

/* One shot handed out, in the order handed out (seq). */
struct pending {
    int64_t seq, id;
    uint64_t digest;
    char origin[SHOT_ORIGIN_LEN];
    int rank;
    enum pend_state state;
    struct shots_reply rep;
    float *patch;             /* image then illumination (P_DONE) */
};

struct dispatcher {
    const struct sl_config *cfg;
    struct shots_progress prog;
    int nranks;
    bool *idle;               /* [nranks]: asked for a shot and has none */
    int nidle;
    struct pending *q;        /* q[0..len): seq base_seq.. in order */
    size_t len, cap;
    int64_t next_seq;
    bool cut;                 /* a shot at the head was stopped: nothing after it is stacked */
    int64_t images;           /* shot images received, their bytes, the time receiving them */
    double image_bytes, image_s;
    int fatal;                /* a worker's device failed (-EIO): the run ends */
    bool stopping;            /* a worker gave a shot up: it was told to stop, so is the job */
    char abandoned[128];      /* ranks that kept their shots past STOP_WAIT_S ("" none) */
};

bool shots_parallel(const struct sl_config *cfg)
{
    return cfg->runtime.decompose == DECOMPOSE_SHOTS && sl_mpi_size() > 1;
}

static void count_rejected(void)
{
    const struct pipeline_io *io = pipeline_worker_io();
    if (io && io->m) {
        pthread_mutex_lock(&io->m->mu);
        io->m->rejected++;
        pthread_mutex_unlock(&io->m->mu);
    }
}

static void pop_front(struct dispatcher *d)
{
    free(d->q[0].patch);
    memmove(d->q, d->q + 1, (d->len - 1) * sizeof *d->q);
    d->len--;
}

/* Add the returned images at the head of the queue into STACK, in order, up to the
 * first shot still out (or stopped).  Returns how many were added. */
static int stack_ready(struct dispatcher *d, struct image_stack *stack)
{
    int added = 0;
    while (d->len > 0 && d->q[0].state != P_OUT && !d->cut) {
        struct pending *p = &d->q[0];
        if (p->state == P_FAILED) {
            if (p->rep.rc == -ECANCELED) {
                d->cut = true; /* a stop: what follows must wait for the replay, in order */
                break;
            }
            pop_front(d); /* rejected: not in the one-rank image either */
            continue;
        }
        size_t cells = (size_t)p->rep.n[0] * p->rep.n[1] * p->rep.n[2];
        struct image_patch ip = {.off = {p->rep.off[0], p->rep.off[1], p->rep.off[2]},
                                 .n = {p->rep.n[0], p->rep.n[1], p->rep.n[2]},
                                 .image = p->patch, .illum = p->rep.has_illum ? p->patch + cells : NULL};
        int rc = image_stack_check(stack, p->id, p->digest, p->origin);
        if (rc == 0)
            rc = image_stack_add(stack, p->id, &ip);
        else if (rc > 0)
            rc = err_set(-EEXIST, "shot %lld: already stacked", (long long)p->id);
        if (rc == 0) {
            image_stack_set_source(stack, p->id, p->digest, p->origin);
            pthread_mutex_lock(&d->prog.mu);
            d->prog.stacked++;
            pthread_mutex_unlock(&d->prog.mu);
            log_info("%s: shot %lld stacked (migrated by rank %d in %.2f s; %lld shots)", p->origin,
                     (long long)p->id, p->rank, p->rep.seconds, (long long)stack->shots);
            added++;
        } else {
            count_rejected();
            log_error("%s: shot %lld from rank %d not stacked: %s", p->origin, (long long)p->id, p->rank, err_msg());
        }
        pop_front(d);
    }
    int64_t waiting = 0;
    for (size_t i = 0; i < d->len; i++)
        waiting += d->q[i].state == P_DONE;
    pthread_mutex_lock(&d->prog.mu);
    d->prog.waiting = waiting;
    pthread_mutex_unlock(&d->prog.mu);
    return added;
}

/* Take the replies waiting (all of them; none: return at once).  Returns how many, or
 * < 0 on an MPI error. */
static int take_replies(struct dispatcher *d)
{
    int n = 0;
    for (;;) {
        struct shots_reply r;
        int from = -1;
        float *patch = NULL;
        double t0 = now_s();
        int rc = sl_mpi_shots_poll(&r, &from, &patch);
        if (rc <= 0)
            return rc < 0 ? rc : n;
        n++;
        if (patch) { /* the cost of shot-parallel migration: an image per shot over MPI */
            d->images++;
            d->image_s += now_s() - t0;
            d->image_bytes += 4.0 * r.n[0] * r.n[1] * r.n[2] * (r.has_illum ? 2 : 1);
        }
        if (from <= 0 || from >= d->nranks) {
            free(patch);
            continue;
        }
        struct shots_rank *sr = &d->prog.r[from];
        if (r.seq < 0) { /* ready: its first request */
            pthread_mutex_lock(&d->prog.mu);
            snprintf(sr->device, sizeof sr->device, "%s", r.device);
            sr->state = SR_IDLE;
            pthread_mutex_unlock(&d->prog.mu);
            log_debug("rank %d ready (%s)", from, r.device);
        } else {
            struct pending *p = NULL;
            for (size_t i = 0; i < d->len && !p; i++)
                if (d->q[i].seq == r.seq && d->q[i].state == P_OUT && d->q[i].rank == from)
                    p = &d->q[i];
            if (!p) {
                free(patch);
                log_error("rank %d returned shot %lld (number %lld), which is not out with it: ignored", from,
                          (long long)r.id, (long long)r.seq);
                continue;
            }
            p->rep = r;
            p->patch = patch;
            p->state = r.rc == 0 ? P_DONE : P_FAILED;
            pthread_mutex_lock(&d->prog.mu);
            sr->state = SR_IDLE;
            sr->current = -1;
            sr->busy_s += r.seconds;
            if (r.rc == 0)
                sr->done++;
            else
                sr->failed++;
            pthread_mutex_unlock(&d->prog.mu);
            if (r.rc == -EIO) {
                d->fatal = err_set(-EIO, "rank %d: shot %lld: %s", from, (long long)r.id, r.msg);
                log_error("%s", err_msg());
            } else if (r.rc == -ECANCELED) {
                log_info("%s: shot %lld given up by rank %d (stop requested): not stacked, migrated again on "
                         "restart", p->origin, (long long)r.id, from);
                /* a stop seen by one rank stops them all (mpirun forwards signals; a rank
                 * signalled alone would otherwise give up every shot it is handed) */
                if (!d->stopping && !signals_stop_requested()) {
                    log_warn("rank %d was told to stop: the whole job stops, as on SIGTERM", from);
                    pipeline_request_stop();
                }
                d->stopping = true;
            } else if (r.rc < 0) {
                count_rejected();
                log_warn("%s: shot %lld rejected by rank %d: %s", p->origin, (long long)r.id, from, r.msg);
            }
        }
        if (!d->idle[from]) {
            d->idle[from] = true;
            d->nidle++;
        }
    }
}

static void nap(void)
{
    struct timespec ts = {0, 1000000L}; /* 1 ms: rank 0 polls; a shot takes far longer */
    nanosleep(&ts, NULL);
}

/* struct shot_job.poll: the images returned meanwhile, stacked in order. */
static int poll_ranks(void *ctx, struct image_stack *stack)
{
    struct dispatcher *d = ctx;
    int rc = take_replies(d);
    int added = stack_ready(d, stack);
    if (rc < 0)
        return rc;
    return d->fatal ? d->fatal : added;
}

/* struct shot_job.submit: hand SHOT to the first rank that asks. */
static int submit(void *ctx, const struct shot *shot, uint64_t digest, const char *origin, struct image_stack *stack)
{
    struct dispatcher *d = ctx;
    int added = 0;
    if (d->fatal)
        return d->fatal;
    if (d->stopping)
        return -ECANCELED;
    /* A shot id already out: never stacked twice (image_stack_check covers the stack). */
    for (size_t i = 0; i < d->len; i++)
        if (d->q[i].id == shot->id)
            return err_set(-EEXIST, "%s: shot %lld is already being migrated (by rank %d, from %s)%s: not "
                           "stacked twice", origin, (long long)shot->id, d->q[i].rank, d->q[i].origin,
                           d->q[i].digest == digest ? "" : " with a different content");
    for (;;) {
        int rc = take_replies(d);
        added += stack_ready(d, stack);
        if (rc < 0)
            return rc;
        if (d->fatal)
            return d->fatal;
        if (signals_stop_requested() || d->stopping)
            return -ECANCELED; /* the slot is released: the shot is replayed on restart */
        if (d->nidle > 0)
            break;
        if (rc == 0)
            nap();
    }
    int peer = 1;
    while (!d->idle[peer])
        peer++;
    if (d->len == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 16;
        struct pending *q = realloc(d->q, cap * sizeof *q);
        if (!q)
            return err_set(-ENOMEM, "shots: %zu shots out", cap);
        d->q = q;
        d->cap = cap;
    }
    struct pending *p = &d->q[d->len];
    memset(p, 0, sizeof *p);
    p->seq = d->next_seq;
    p->id = shot->id;
    p->digest = digest;
    snprintf(p->origin, sizeof p->origin, "%s", origin ? origin : "");
    p->rank = peer;
    p->state = P_OUT;
    int rc = sl_mpi_shots_send(peer, shot, p->seq);
    if (rc)
        return rc == -EOVERFLOW ? rc : -EIO; /* too large: rejected; MPI failing: the end */
    d->len++;
    d->next_seq++;
    d->idle[peer] = false;
    d->nidle--;
    pthread_mutex_lock(&d->prog.mu);
    d->prog.r[peer].state = SR_BUSY;
    d->prog.r[peer].current = shot->id;
    pthread_mutex_unlock(&d->prog.mu);
    log_debug("%s: shot %lld to rank %d", p->origin, (long long)shot->id, peer);
    int n = poll_ranks(d, stack); /* what came back meanwhile, stacked now rather than later */
    return n < 0 ? n : added + n;
}

/* struct shot_job.drain: wait for the shots out, stack them, tell the workers to stop. */
static int drain(void *ctx, struct image_stack *stack, bool stopped)
{
    struct dispatcher *d = ctx;
    double t_stop = stopped ? now_s() : 0;
    int rc = 0;
    for (;;) {
        bool out = false;
        for (size_t i = 0; i < d->len; i++)
            out |= d->q[i].state == P_OUT;
        if (!out || d->fatal)
            break;
        if (!stopped && (signals_stop_requested() || d->stopping)) {
            stopped = true;
            t_stop = now_s();
        }
        if (stopped && now_s() - t_stop > STOP_WAIT_S) {
            /* dead or hung: mpirun ends a dead one; a hung one would hold the job (and
             * MPI_Finalize) forever: shots_job_run ends the job once the state is saved */
            size_t at = 0;
            for (size_t i = 0; i < d->len && at + 12 < sizeof d->abandoned; i++)
                if (d->q[i].state == P_OUT)
                    at += (size_t)snprintf(d->abandoned + at, sizeof d->abandoned - at, "%s%d", at ? ", " : "",
                                           d->q[i].rank);
            log_warn("stopping: rank(s) %s still hold their shots %.0f s after the stop; saving the image "
                     "without them", d->abandoned, STOP_WAIT_S);
            break;
        }
        int n = take_replies(d);
        stack_ready(d, stack);
        if (n < 0) {
            rc = n;
            break;
        }
        if (n == 0)
            nap();
    }
    stack_ready(d, stack);
    if (d->len > 0) {
        int given_up = 0, after = 0, out = 0;
        for (size_t i = 0; i < d->len; i++)
            given_up += d->q[i].state == P_FAILED, after += d->q[i].state == P_DONE, out += d->q[i].state == P_OUT;
        log_info("not stacked: %d shots given up, %d finished after a given-up one, %d still out: all are migrated "
                 "again on restart, in the same order (the sum's order is kept)", given_up, after, out);
    }
    while (d->len > 0)
        pop_front(d);
    for (int r = 1; r < d->nranks; r++) {
        int src = sl_mpi_shots_send_stop(r);
        if (src && !rc)
            rc = src;
    }
    pthread_mutex_lock(&d->prog.mu);
    for (int r = 0; r < d->nranks; r++) {
        d->prog.r[r].state = SR_ENDED;
        d->prog.r[r].current = -1;
    }
    pthread_mutex_unlock(&d->prog.mu);
    if (d->images > 0)
        log_info("%lld shot images received from the ranks: %.2f MiB, %.3f s receiving them (%.3f ms and %.2f MiB "
                 "a shot)", (long long)d->images, d->image_bytes / 1048576.0, d->image_s,
                 1e3 * d->image_s / (double)d->images, d->image_bytes / 1048576.0 / (double)d->images);
    char *js = shots_progress_json(&d->prog);
    log_info("ranks: %s", js ? js : "?");
    free(js);
    return d->fatal ? d->fatal : rc;
}

void shots_report(const struct sl_config *cfg, FILE *out)
{
    if (cfg->runtime.decompose != DECOMPOSE_SHOTS)
        return;
    const int ranks = cfg->runtime.ranks > 0 ? cfg->runtime.ranks : sl_mpi_size();
    const double cells = (double)cfg->model.n[0] * cfg->model.n[1] * cfg->model.n[2];
    if (ranks == 1) {
        fprintf(out, "\ndecomposition: shots, 1 rank: it migrates every shot itself (the one-rank job)\n");
        return;
    }
    fprintf(out, "\ndecomposition: shots, %d ranks: rank 0 reads the input, hands the shots out and stacks "
                 "(no device memory); ranks 1..%d migrate, one shot each at a time\n"
                 "  per shot to rank 0: its image and illumination over its patch, at most the whole grid "
                 "%d x %d x %d = %.1f MiB\n"
                 "  rank 0 holds the stack and the images back before an earlier one (docs/mpi.md)\n",
            ranks, ranks - 1, cfg->model.n[0], cfg->model.n[1], cfg->model.n[2], cells * 8 / 1048576.0);
}

int shots_job_run(const struct sl_config *cfg, const struct sl_device *dev, const struct shot_job *j,
                  struct metrics *m)
{
    if (!shots_parallel(cfg))
        return shot_job_run(cfg, dev, j, m); /* the one-rank job */
    /* every rank must run the same job: a worker with another model would return images
     * of another grid (the check is collective: before anything is handed out) */
    int rc = sl_mpi_same(config_fingerprint_all(cfg), "configuration");
    if (rc)
        return rc;
    if (sl_mpi_rank() > 0)
        return shots_worker_run(dev, j);
    struct dispatcher d = {.cfg = cfg, .nranks = sl_mpi_size()};
    d.idle = calloc((size_t)d.nranks, sizeof *d.idle);
    if (!d.idle || shots_progress_init(&d.prog, d.nranks, dev->name) < 0) {
        free(d.idle);
        return err_set(-ENOMEM, "shots: %d ranks", d.nranks);
    }
    log_info("decompose = \"shots\": rank 0 reads the input and stacks, ranks 1..%d migrate", d.nranks - 1);
    struct shot_job j0 = *j;
    j0.ctx = &d;
    j0.migrate = NULL;
    j0.submit = submit;
    j0.poll = poll_ranks;
    j0.drain = drain;
    j0.progress = &d.prog;
    rc = shot_job_run(cfg, dev, &j0, m);
    if (rc == 0 && d.abandoned[0])
        rc = err_set(-ETIMEDOUT, "rank(s) %s did not give their shots back within %.0f s of the stop: the state is "
                     "saved without them; ending the job rather than waiting for them", d.abandoned, STOP_WAIT_S);
    while (d.len > 0)
        pop_front(&d);
    free(d.q);
    free(d.idle);
    shots_progress_destroy(&d.prog);
    return rc;
}
