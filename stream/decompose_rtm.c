/* decompose_rtm — the rtm job's rank-local part (stream/decompose_rtm.h). */
#define LOG_COMPONENT "decompose"
#include "stream/decompose_rtm.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stream/decompose.h"
#include "stream/decompose_halo.h"
#include "stream/decompose_points.h"
#include "stream/error.h"
#include "stream/log.h"
#include "stream/mpi.h"
#include "stream/signals.h"

/* Simulations exchanged per shot: the source and the receiver wavefields. */
#define DD_RTM_SIMS 2

struct dd_rtm {
    struct rtm_domain dom;
    int split[3];                  /* [runtime] split */
    int rank, size;
    bool planned;                  /* plan holds this shot's cuts */
    struct dd_plan plan;           /* of the receiver simulation's whole grid */
    struct prop *sim[DD_RTM_SIMS]; /* this shot's simulations and their halos */
    struct dd_halo halo[DD_RTM_SIMS];
    int shots;                     /* shots begun (the first is logged at info level) */
    long exchanges;                /* this shot's, the same count on every rank */
};

/* How often the ranks agree on a stop request (exchanges): mpirun forwards SIGTERM to
 * every rank and ends the ones still running a moment later, so the engine's own polls
 * (every RTM_STOP_POLL steps, and between the stages) are too far apart. */
#define STOP_EVERY 16

static void drop_shot(struct dd_rtm *d)
{
    for (int i = 0; i < DD_RTM_SIMS; i++) {
        dd_halo_free(&d->halo[i]);
        d->sim[i] = NULL;
    }
    if (d->planned)
        dd_plan_free(&d->plan);
    d->planned = false;
}

static int h_begin(void *ctx, const struct prop_params *whole, double vmax_cpml, struct prop_params *sub)
{
    struct dd_rtm *d = ctx;
    drop_shot(d);
    d->exchanges = 0;
    int rc = dd_plan_make(whole, d->size, d->split, &d->plan);
    if (rc < 0)
        return rc;
    d->planned = true;
    dd_sub_params(&d->plan, d->rank, vmax_cpml, sub);
    struct dd_rank_info ri;
    if ((rc = dd_rank_info(&d->plan, d->rank, &ri)) < 0)
        return rc;
    /* the first shot's split at info level, the others' (each sub-volume has its own) at debug */
    log_write(d->shots++ ? LOG_DEBUG : LOG_INFO, LOG_COMPONENT,
        "subdomain %d of %d of the shot's grid %d x %d x %d (split %d x %d x %d): x %d..%d, y %d..%d, z %d..%d "
        "(%d x %d x %d with layers); halo %.1f KiB sent per step and wavefield", d->rank, d->size,
        whole->grid.n[0], whole->grid.n[1], whole->grid.n[2], d->plan.split[0], d->plan.split[1], d->plan.split[2],
        ri.origin[0], ri.origin[0] + ri.n[0] - 1, ri.origin[1], ri.origin[1] + ri.n[1] - 1, ri.origin[2],
        ri.origin[2] + ri.n[2] - 1, ri.npad[0], ri.npad[1], ri.npad[2], ri.halo_bytes / 1024.0);
    return 0;
}

/* The exchange inside a step of a physics in stages (TTI: the pass-1 products;
 * prop_set_mid_exchange), run by prop_step and prop_step_reverse of the strategies. */
static int h_mid(void *ctx, struct prop *s)
{
    struct dd_rtm *d = ctx;
    for (int i = 0; i < DD_RTM_SIMS; i++)
        if (d->sim[i] == s) {
            int rc = dd_halo_begin(&d->halo[i], s);
            return rc < 0 ? rc : dd_halo_end(&d->halo[i], s);
        }
    return err_set(-EINVAL, "decompose: a simulation the shot did not attach");
}

static int h_attach(void *ctx, struct prop *s)
{
    struct dd_rtm *d = ctx;
    for (int i = 0; i < DD_RTM_SIMS; i++)
        if (!d->sim[i]) {
            int rc = dd_halo_init(&d->halo[i], &d->plan, d->rank, s);
            if (rc == 0)
                d->sim[i] = s;
            if (rc == 0 && prop_has_step_stage(s))
                rc = prop_set_mid_exchange(s, h_mid, d);
            return rc;
        }
    return err_set(-EINVAL, "decompose: more than %d simulations in one shot", DD_RTM_SIMS);
}

static int h_exchange(void *ctx, struct prop *s)
{
    struct dd_rtm *d = ctx;
    if (++d->exchanges % STOP_EVERY == 0 && dd_rtm_cancel(NULL)) {
        log_info("stop requested: every rank leaves the shot at the same step (exchange %ld)", d->exchanges);
        return err_set(-ECANCELED, "stop requested");
    }
    for (int i = 0; i < DD_RTM_SIMS; i++)
        if (d->sim[i] == s) {
            int rc = dd_halo_begin(&d->halo[i], s);
            return rc < 0 ? rc : dd_halo_end(&d->halo[i], s);
        }
    return err_set(-EINVAL, "decompose: a simulation the shot did not attach");
}

/* The nodes of DP on S in dd_points_bind's order, with their points and weight products
 * in dd_points_inject's arithmetic (wx * wy * wz). */
static int node_table(const struct dd_points *dp, struct rtm_nodes *out)
{
    const int ns = dp->ns, nsy = dp->nsy, nrow = ns * nsy;
    size_t m = dp->nnodes ? dp->nnodes : 1;
    out->point = malloc(m * sizeof *out->point);
    out->w = malloc(m * sizeof *out->w);
    if (!out->point || !out->w)
        return err_set(-ENOMEM, "decompose: out of memory for %zu nodes", dp->nnodes);
    size_t k = 0;
    for (size_t i = 0; i < dp->n; i++) {
        if (dp->slot[i] == (size_t)-1)
            continue;
        const float *wx = dp->w + 3 * i * ns, *wy = wx + ns, *wz = wy + ns;
        for (int kz = 0; kz < ns; kz++)
            for (int ky = 0; ky < nsy; ky++) {
                if (dp->row_owner[i * nrow + kz * nsy + ky] != dp->rank)
                    continue;
                for (int kx = 0; kx < ns; kx++, k++) {
                    out->point[k] = (int)i;
                    out->w[k] = wx[kx] * wy[ky] * wz[kz];
                }
            }
    }
    out->n = dp->nnodes;
    return 0;
}

static int h_points(void *ctx, const struct prop_params *whole, struct prop *s, const double *xyz, size_t n,
                    int interp, struct rtm_nodes *out)
{
    struct dd_rtm *d = ctx;
    memset(out, 0, sizeof *out);
    /* the cuts of this shot, the layers of S's whole grid (the random layers are wider) */
    struct dd_plan pw = d->plan;
    pw.whole = *whole;
    struct dd_points dp;
    int rc = dd_points_plan_interp(&pw, d->rank, xyz, n, interp, &dp);
    if (rc < 0)
        return rc;
    if ((rc = dd_points_bind(&dp, s)) == 0 && (rc = node_table(&dp, out)) == 0) {
        out->pts = dp.nodes;
        dp.nodes = NULL;
    }
    if (rc < 0) {
        free(out->point);
        free(out->w);
        memset(out, 0, sizeof *out);
    }
    dd_points_free(&dp, s);
    return rc;
}

static int h_agree(void *ctx, int rc)
{
    (void)ctx;
    return sl_mpi_agree(rc);
}

static int h_share(void *ctx, int *v, int n)
{
    (void)ctx;
    return sl_mpi_bcast(v, (size_t)n * sizeof *v);
}

/* Every rank's part of NA compact arrays to rank 0, placed at its subdomain's origin in
 * the whole box (x fastest over WHOLE_N): the order of a one-rank shot image. */
static int h_gather(void *ctx, const float *const *local, float *const *whole, int na, const int whole_n[3])
{
    struct dd_rtm *d = ctx;
    struct prop_params sp;
    dd_sub_params(&d->plan, d->rank, 1.0, &sp);
    const size_t mine = (size_t)sp.grid.n[0] * sp.grid.n[1] * sp.grid.n[2];
    const size_t total = (size_t)whole_n[0] * whole_n[1] * whole_n[2];
    float *all = NULL;
    size_t *counts = NULL;
    int rc = 0;
    if (d->rank == 0) {
        all = malloc((total ? total : 1) * sizeof *all);
        counts = malloc((size_t)d->size * sizeof *counts);
        if (!all || !counts)
            rc = err_set(-ENOMEM, "decompose: out of memory gathering the image");
        for (int r = 0; rc == 0 && r < d->size; r++) {
            dd_sub_params(&d->plan, r, 1.0, &sp);
            counts[r] = (size_t)sp.grid.n[0] * sp.grid.n[1] * sp.grid.n[2];
        }
    }
    rc = sl_mpi_agree(rc);
    for (int k = 0; k < na && rc == 0; k++) {
        if ((rc = sl_mpi_gather(local[k], mine, all, counts)) < 0 || d->rank != 0)
            continue;
        const float *b = all;
        for (int r = 0; r < d->size; r++) {
            dd_sub_params(&d->plan, r, 1.0, &sp);
            const struct prop_grid *q = &sp.grid;
            for (int z = 0; z < q->n[2]; z++)
                for (int y = 0; y < q->n[1]; y++, b += q->n[0])
                    memcpy(whole[k] + ((size_t)(z + q->origin[2]) * whole_n[1] + y + q->origin[1]) * whole_n[0] +
                               q->origin[0], b, q->n[0] * sizeof *b);
        }
    }
    free(all);
    free(counts);
    return rc;
}

static void h_fail(void *ctx, int rc)
{
    struct dd_rtm *d = ctx;
    log_error("rank %d: %s: the other ranks wait for its halo planes, so the whole job ends", d->rank, err_msg());
    sl_mpi_abort(rc);
}

int dd_rtm_open(const struct sl_config *cfg, const struct prop_params *model_grid, struct dd_rtm **out)
{
    *out = NULL;
    int rc = sl_mpi_same(config_fingerprint_all(cfg), "configuration");
    if (rc < 0)
        return rc;
    struct dd_rtm *d = calloc(1, sizeof *d);
    if (!d)
        return sl_mpi_agree(err_set(-ENOMEM, "decompose: out of memory"));
    d->rank = sl_mpi_rank();
    d->size = sl_mpi_size();
    memcpy(d->split, cfg->runtime.split, sizeof d->split);
    d->dom = (struct rtm_domain){.ctx = d, .begin = h_begin, .attach = h_attach, .exchange = h_exchange,
                                 .points = h_points, .agree = h_agree, .share = h_share, .gather = h_gather,
                                 .fail = h_fail, .rank = d->rank};
    struct dd_plan p;
    if ((rc = dd_plan_make(model_grid, d->size, d->split, &p)) < 0) {
        free(d);
        sl_mpi_all_know();
        return err_prefix(rc, "the rtm job's model grid (with its layers: the largest grid of a shot)");
    }
    dd_plan_free(&p);
    *out = d;
    return 0;
}

const struct rtm_domain *dd_rtm_domain(struct dd_rtm *d) { return &d->dom; }

void dd_rtm_close(struct dd_rtm *d)
{
    if (!d)
        return;
    drop_shot(d);
    free(d);
}

bool dd_rtm_cancel(void *user)
{
    (void)user;
    bool stop = sl_mpi_any(signals_stop_requested());
    if (stop)
        sl_mpi_all_know(); /* the stop is every rank's: not a failure to abort on */
    return stop;
}

/* ---- shots from rank 0 to the others ---- */

/* What precedes a shot's arrays (or says the input ended). */
struct shot_msg {
    int64_t id;
    int32_t end, rc, ns, ntr;
    double dt, src[3];
};

/* N bytes at BUF from rank 0, in pieces an MPI count holds. */
static int bcast_big(void *buf, size_t n)
{
    const size_t piece = (size_t)1 << 30;
    int rc = 0;
    for (size_t at = 0; at < n && rc == 0; at += piece)
        rc = sl_mpi_bcast((char *)buf + at, n - at < piece ? n - at : piece);
    return rc;
}

int dd_rtm_send_shot(const struct shot *s)
{
    struct shot_msg m = {.id = s->id, .ns = s->ns, .ntr = s->ntr, .dt = s->dt,
                         .src = {s->src[0], s->src[1], s->src[2]}};
    int rc = sl_mpi_bcast_idle(&m, sizeof m);
    if (rc == 0)
        rc = bcast_big(s->rec, (size_t)s->ntr * 3 * sizeof(float));
    if (rc == 0)
        rc = bcast_big(s->data, (size_t)s->ntr * (size_t)s->ns * sizeof(float));
    return rc;
}

int dd_rtm_send_end(int rc)
{
    struct shot_msg m = {.end = 1, .rc = rc};
    return sl_mpi_bcast_idle(&m, sizeof m);
}

int dd_rtm_recv(struct shot *s, bool *end, int *rc0)
{
    memset(s, 0, sizeof *s);
    struct shot_msg m;
    /* this rank may wait here as long as rank 0 waits for the stream's next shot */
    int rc = sl_mpi_bcast_idle(&m, sizeof m);
    if (rc < 0)
        return rc;
    *end = m.end != 0;
    *rc0 = m.rc;
    if (*end)
        return 0;
    /* rank 0 bounded the shot before sending it (io/shot.h's reader and the runtime) */
    s->id = m.id;
    s->ns = m.ns;
    s->ntr = m.ntr;
    s->dt = m.dt;
    memcpy(s->src, m.src, sizeof s->src);
    s->rec = malloc((size_t)(m.ntr > 0 ? m.ntr : 1) * 3 * sizeof(float));
    s->data = malloc((size_t)(m.ntr > 0 ? m.ntr : 1) * (size_t)(m.ns > 0 ? m.ns : 1) * sizeof(float));
    if (!s->rec || !s->data || m.ntr < 0 || m.ns < 0) {
        dd_rtm_shot_free(s);
        /* rank 0 is about to broadcast the arrays: this rank cannot follow */
        return err_set(-ENOMEM, "decompose: shot %" PRId64 " of %d x %d samples", m.id, m.ntr, m.ns);
    }
    rc = bcast_big(s->rec, (size_t)m.ntr * 3 * sizeof(float));
    if (rc == 0)
        rc = bcast_big(s->data, (size_t)m.ntr * (size_t)m.ns * sizeof(float));
    if (rc < 0)
        dd_rtm_shot_free(s);
    return rc;
}

void dd_rtm_shot_free(struct shot *s)
{
    free(s->rec);
    free(s->data);
    s->rec = NULL;
    s->data = NULL;
}
