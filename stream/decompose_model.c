/* decompose_model — the model job's rank-local part (stream/decompose_model.h). */
#define LOG_COMPONENT "decompose"
#include "stream/decompose_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/tti.h"
#include "stream/decompose.h"
#include "stream/decompose_halo.h"
#include "stream/decompose_points.h"
#include "stream/error.h"
#include "stream/log.h"
#include "stream/mpi.h"
#include "stream/signals.h"

/* How often the ranks agree on a stop request (steps). */
#define STOP_EVERY 16

/* The source's owned nodes split by the part of a step that computes them (the cut
 * slabs, the rest), so that each is injected right after its part: the slabs' before
 * their planes are sent, the rest's after the rest is computed.  Each node gets the very
 * product dd_points_inject gives it (cells are independent), so the split changes no bit. */
struct src_split {
    struct prop_points *set[2];
    float *buf[2];
    size_t n[2];
    unsigned char *which;       /* per owned node, in dd_points order: 0 slabs, 1 rest */
};

struct dd_model {
    struct dd_plan plan;
    int rank, size, nt;
    struct prop *s;
    struct dd_halo halo;
    bool parts;                 /* the step in parts, the exchange beside the rest */
    bool staged;                /* the step in stages, an exchange between them (TTI) */
    void *stream;               /* GPU: the simulation's stream (the halo has its own) */
    struct src_split split;
    struct dd_points rec, src;
    struct dd_points *shares;  /* rank 0: every rank's receiver share */
    float *vals;               /* rec.nslots x (nt + 1) */
    const double *rec_xyz;
    size_t nrec;
};

/* The part of the whole interior V (N points) that the subdomain G holds. */
static float *sub_volume(const int n[3], const struct prop_grid *g, const float *v)
{
    float *o = malloc((size_t)g->n[0] * g->n[1] * g->n[2] * sizeof *o);
    if (!o)
        return NULL;
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            memcpy(o + ((size_t)k * g->n[1] + j) * g->n[0],
                   v + ((size_t)(k + g->origin[2]) * n[1] + j + g->origin[1]) * n[0] + g->origin[0],
                   g->n[0] * sizeof *o);
    return o;
}

static void split_free(struct src_split *sp, struct prop *s)
{
    for (int k = 0; k < 2; k++) {
        if (sp->set[k])
            prop_points_destroy(s, sp->set[k]);
        free(sp->buf[k]);
    }
    free(sp->which);
    memset(sp, 0, sizeof *sp);
}

/* Whether interior node IJK of grid G lies in the `halo` planes next to a HALO face. */
static bool in_cut_slab(const struct prop_grid *g, int halo, const int ijk[3])
{
    for (int a = 0; a < 3; a++)
        if ((g->face[2 * a] == PROP_FACE_HALO && ijk[a] < halo) ||
            (g->face[2 * a + 1] == PROP_FACE_HALO && ijk[a] >= g->n[a] - halo))
            return true;
    return false;
}

/* The node sets of the split, in dd_points_bind's node order. */
static int split_bind(struct dd_model *d)
{
    const struct dd_points *dp = &d->src;
    struct src_split *sp = &d->split;
    const struct prop_grid *g = &prop_params_of(d->s)->grid;
    const int ns = dp->ns, nsy = dp->nsy, nrow = ns * nsy;
    const size_t m = dp->nnodes ? dp->nnodes : 1;
    int *ijk[2] = {malloc(3 * m * sizeof(int)), malloc(3 * m * sizeof(int))};
    sp->which = malloc(m);
    sp->buf[0] = malloc(m * sizeof(float));
    sp->buf[1] = malloc(m * sizeof(float));
    int rc = 0;
    if (!ijk[0] || !ijk[1] || !sp->which || !sp->buf[0] || !sp->buf[1])
        rc = err_set(-ENOMEM, "decompose: out of memory for the source's nodes");
    size_t k = 0;
    for (size_t i = 0; rc == 0 && i < dp->n; i++) {
        if (dp->slot[i] == (size_t)-1)
            continue;
        const int *f = dp->first + 3 * i;
        for (int kz = 0; kz < ns; kz++)
            for (int ky = 0; ky < nsy; ky++) {
                if (dp->row_owner[i * nrow + kz * nsy + ky] != dp->rank)
                    continue;
                for (int kx = 0; kx < ns; kx++, k++) {
                    const int n3[3] = {f[0] + kx - g->origin[0], f[1] + ky - g->origin[1],
                                       f[2] + kz - g->origin[2]};
                    const int w = in_cut_slab(g, d->plan.halo, n3) ? 0 : 1;
                    sp->which[k] = (unsigned char)w;
                    memcpy(ijk[w] + 3 * sp->n[w]++, n3, sizeof n3);
                }
            }
    }
    for (int w = 0; rc == 0 && w < 2; w++)
        if (sp->n[w])
            rc = prop_points_create_nodes(d->s, ijk[w], sp->n[w], &sp->set[w]);
    free(ijk[0]);
    free(ijk[1]);
    return rc;
}

/* dd_points_inject for the nodes of part W of the split. */
static int split_inject(struct dd_model *d, const float *amps, int w)
{
    const struct dd_points *dp = &d->src;
    struct src_split *sp = &d->split;
    if (!sp->n[w])
        return 0;
    const int ns = dp->ns, nsy = dp->nsy, nrow = ns * nsy;
    size_t k = 0, at = 0;
    for (size_t i = 0; i < dp->n; i++) {
        if (dp->slot[i] == (size_t)-1)
            continue;
        const float amp = amps[i];
        const float *wx = dp->w + 3 * i * ns, *wy = wx + ns, *wz = wy + ns;
        for (int kz = 0; kz < ns; kz++)
            for (int ky = 0; ky < nsy; ky++) {
                if (dp->row_owner[i * nrow + kz * nsy + ky] != dp->rank)
                    continue;
                /* the product dd_points_inject computes (and wave_inject adds) */
                for (int kx = 0; kx < ns; kx++, k++)
                    if (sp->which[k] == w)
                        sp->buf[w][at++] = amp * (wx[kx] * wy[ky] * wz[kz]);
            }
    }
    return prop_inject(d->s, sp->set[w], sp->buf[w], 1, 1.0f, PROP_INJECT_PHYSICAL);
}

/* The whole model's largest velocity, as wave_create finds it (a float maximum). */
static double velocity_max(const int n[3], const float *v)
{
    size_t nn = (size_t)n[0] * n[1] * n[2];
    float m = 0;
    for (size_t i = 0; i < nn; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

/* The CPML's speed of the whole model M as the whole grid's propagator takes it: the
 * largest velocity (acoustic) or qP speed (TTI, tti_model_check). */
static int cpml_vmax(const struct prop_params *whole, const struct prop_model *m, double *vmax)
{
    if (whole->vmax_cpml > 0) {
        *vmax = whole->vmax_cpml;
        return 0;
    }
    if (whole->physics != PROP_TTI) {
        *vmax = velocity_max(whole->grid.n, m->vp);
        return 0;
    }
    const int *n = whole->grid.n;
    struct tti_model tm;
    prop_tti_model(m, &tm);
    size_t nless = 0;
    return tti_model_check(&tm, (size_t)n[0] * n[1] * n[2], whole->tti_sigma, vmax, &nless);
}

/* The subdomain G's part of the whole model M into SM (the TTI arrays too where M has
 * them; the constants copied); the arrays in OWN[5] to free. */
static int sub_model(const int n[3], const struct prop_grid *g, const struct prop_model *m, struct prop_model *sm,
                     float *own[5])
{
    *sm = *m;
    /* a check of the whole model is not one of the subdomain's points (kernels/tti_check.h) */
    sm->tti_checked = (struct tti_check){0};
    const float *in[5] = {m->vp, m->epsilon, m->delta, m->theta, m->phi};
    const float **out[5] = {&sm->vp, &sm->epsilon, &sm->delta, &sm->theta, &sm->phi};
    for (int i = 0; i < 5; i++) {
        own[i] = NULL;
        *out[i] = NULL;
        if (!in[i])
            continue;
        if (!(own[i] = sub_volume(n, g, in[i])))
            return err_set(-ENOMEM, "decompose: out of memory for the subdomain's model");
        *out[i] = own[i];
    }
    return 0;
}

static int open_rank(struct dd_model *d, const struct sl_config *cfg, const struct sl_device *dev,
                     const struct prop_params *whole, const struct prop_model *m)
{
    int rc = dd_plan_make(whole, d->size, cfg->runtime.split, &d->plan);
    if (rc < 0)
        return rc;
    struct prop_params sp;
    double vmax = 0;
    if ((rc = cpml_vmax(whole, m, &vmax)) < 0)
        return rc;
    dd_sub_params(&d->plan, d->rank, vmax, &sp);
    struct prop_model sm;
    float *own[5];
    rc = sub_model(whole->grid.n, &sp.grid, m, &sm, own);
    if (rc == 0)
        rc = prop_create(dev, &sp, &sm, &d->s);
    for (int i = 0; i < 5; i++)
        free(own[i]);
    if (rc < 0)
        return rc;
    if ((rc = dd_halo_init(&d->halo, &d->plan, d->rank, d->s)) < 0)
        return rc;
    /* the simulation on a stream of its own, which the halo stream waits for and makes
     * wait through events: the host never waits for the interior */
    if (dev_is_gpu(dev)) {
        if ((rc = dev_stream_create(dev, &d->stream)) < 0)
            return rc;
        prop_set_stream(d->s, d->stream);
        dd_halo_set_stream(&d->halo, d->stream);
    }
    d->parts = prop_has_step_part(d->s);
    d->staged = prop_has_step_stage(d->s);
    if ((rc = dd_points_plan(&d->plan, d->rank, d->rec_xyz, d->nrec, &d->rec)) < 0) {
        err_prefix(rc, "[acquisition] receivers");
        return rc;
    }
    if ((rc = dd_points_bind(&d->rec, d->s)) < 0)
        return rc;
    d->vals = calloc((d->rec.nslots ? d->rec.nslots : 1) * ((size_t)d->nt + 1), sizeof *d->vals);
    if (!d->vals)
        return err_set(-ENOMEM, "decompose: out of memory for %zu trace values", d->rec.nslots);
    if (d->rank == 0) {
        d->shares = calloc((size_t)d->size, sizeof *d->shares);
        if (!d->shares)
            return err_set(-ENOMEM, "decompose: out of memory");
        for (int r = 0; r < d->size; r++)
            if ((rc = dd_points_plan(&d->plan, r, d->rec_xyz, d->nrec, &d->shares[r])) < 0)
                return rc;
    }
    struct dd_rank_info ri;
    if ((rc = dd_rank_info(&d->plan, d->rank, &ri)) < 0)
        return rc;
    log_info("subdomain %d of %d (split %d x %d x %d): x %d..%d, y %d..%d, z %d..%d (%d x %d x %d points, %d x %d x "
             "%d with layers); halo %.1f KiB sent per step; %zu receiver values per step (%zu support nodes); "
             "propagator %.1f MiB", d->rank, d->size, d->plan.split[0], d->plan.split[1], d->plan.split[2],
             ri.origin[0], ri.origin[0] + ri.n[0] - 1, ri.origin[1], ri.origin[1] + ri.n[1] - 1, ri.origin[2],
             ri.origin[2] + ri.n[2] - 1, ri.n[0], ri.n[1], ri.n[2], ri.npad[0], ri.npad[1], ri.npad[2],
             ri.halo_bytes / 1024.0, d->rec.nslots, d->rec.nnodes, ri.prop_bytes / 1048576.0);
    return 0;
}

int dd_model_open(const struct sl_config *cfg, const struct sl_device *dev, const struct prop_params *whole,
                  const struct prop_model *m, const double *rec, size_t nrec, int nt, struct prop **s,
                  struct dd_model **out)
{
    *out = NULL;
    *s = NULL;
    int rc = sl_mpi_same(config_fingerprint_all(cfg), "configuration");
    if (rc < 0)
        return rc;
    struct dd_model *d = calloc(1, sizeof *d);
    if (!d)
        return sl_mpi_agree(err_set(-ENOMEM, "decompose: out of memory"));
    d->rank = sl_mpi_rank();
    d->size = sl_mpi_size();
    d->nt = nt;
    d->rec_xyz = rec;
    d->nrec = nrec;
    rc = sl_mpi_agree(open_rank(d, cfg, dev, whole, m));
    if (rc == 0) {
        const int want = cfg->runtime.halo_transport == HALO_NCCL     ? DD_WANT_NCCL
                         : cfg->runtime.halo_transport == HALO_STAGED ? DD_WANT_STAGED
                                                                      : DD_WANT_AUTO;
        rc = dd_halo_connect(&d->halo, want);
        if (rc == 0 && d->rank == 0)
            log_info("halo exchange: %s, %s", d->halo.why,
                     d->parts    ? "overlapped with the interior (the cut slabs first)"
                     : d->staged ? "twice per step, not overlapped (the fields after it, the pass-1 products "
                                   "between its passes: TTI)"
                                 : "after each step (this operator has no step in parts)");
    }
    if (rc < 0) {
        struct prop *mine = d->s;
        dd_model_close(d);
        if (mine)
            prop_destroy(mine);
        return rc;
    }
    *s = d->s;
    *out = d;
    return 0;
}

int dd_model_source(struct dd_model *d, const double xyz[3])
{
    split_free(&d->split, d->s);
    dd_points_free(&d->src, d->s);
    int rc = dd_points_plan(&d->plan, d->rank, xyz, 1, &d->src);
    if (rc == 0)
        rc = dd_points_bind(&d->src, d->s);
    if (rc == 0 && d->parts)
        rc = split_bind(d);
    memset(d->vals, 0, (d->rec.nslots ? d->rec.nslots : 1) * ((size_t)d->nt + 1) * sizeof *d->vals);
    return sl_mpi_agree(rc);
}

/* The overlapped step: the cut slabs, their source nodes, the exchange started; the
 * rest of the grid computed meanwhile (on a GPU: queued, the host goes on to the
 * exchange's end), its source nodes; then the samples. */
static int step_overlapped(struct dd_model *d, const float *amp, int it)
{
    int rc;
    if ((rc = prop_step_part(d->s, PROP_PART_CUT_SLABS)) < 0 || (rc = split_inject(d, amp, 0)) < 0 ||
        (rc = dd_halo_begin(&d->halo, d->s)) < 0 || (rc = prop_step_part(d->s, PROP_PART_REST)) < 0 ||
        (rc = dd_halo_end(&d->halo, d->s)) < 0 || (rc = split_inject(d, amp, 1)) < 0)
        return rc;
    return dd_points_sample(&d->rec, d->s, d->vals + it + 1, (size_t)d->nt + 1);
}

/* A step in stages (TTI, prop_step_stage): pass 1, the exchange of its products, the
 * update.  The exchange waits for nothing else: TTI's step has no parts to overlap it with. */
static int step_staged(struct dd_model *d)
{
    int rc;
    if ((rc = prop_step_stage(d->s, PROP_STAGE_PASS1)) < 0 || (rc = dd_halo_begin(&d->halo, d->s)) < 0 ||
        (rc = dd_halo_end(&d->halo, d->s)) < 0)
        return rc;
    return prop_step_stage(d->s, PROP_STAGE_UPDATE);
}

int dd_model_step(struct dd_model *d, const float *amp, int it)
{
    int rc;
    if (d->parts)
        return step_overlapped(d, amp, it);
    if ((rc = d->staged ? step_staged(d) : prop_step(d->s)) < 0 ||
        (rc = dd_points_inject(&d->src, d->s, amp, 1, 1.0f, PROP_INJECT_PHYSICAL)) < 0 ||
        (rc = dd_halo_begin(&d->halo, d->s)) < 0)
        return rc;
    /* sampling reads only owned nodes: it runs while the halo planes travel */
    if ((rc = dd_points_sample(&d->rec, d->s, d->vals + it + 1, (size_t)d->nt + 1)) < 0)
        return rc;
    return dd_halo_end(&d->halo, d->s);
}

bool dd_model_stop(struct dd_model *d, int it)
{
    (void)d;
    if (it % STOP_EVERY != 0)
        return false;
    bool stop = sl_mpi_any(signals_stop_requested());
    if (stop)
        sl_mpi_all_know(); /* rank 0 reports the stop as a failure: not one to abort on */
    return stop;
}

int dd_model_traces(struct dd_model *d, float *tr)
{
    const size_t nt1 = (size_t)d->nt + 1;
    float *all = NULL;
    size_t *counts = NULL;
    const float **vals = NULL;
    int rc = 0;
    if (d->rank == 0) {
        counts = malloc((size_t)d->size * sizeof *counts);
        vals = malloc((size_t)d->size * sizeof *vals);
        size_t total = 0;
        for (int r = 0; counts && r < d->size; r++)
            total += counts[r] = d->shares[r].nslots * nt1;
        all = malloc((total ? total : 1) * sizeof *all);
        if (!counts || !vals || !all)
            rc = err_set(-ENOMEM, "decompose: out of memory gathering traces");
    }
    if ((rc = sl_mpi_agree(rc)) == 0)
        rc = sl_mpi_gather(d->vals, d->rec.nslots * nt1, all, counts);
    if (rc == 0 && d->rank == 0) {
        size_t at = 0;
        for (int r = 0; r < d->size; r++) {
            vals[r] = all + at;
            at += counts[r];
        }
        dd_points_assemble(d->shares, d->size, vals, nt1, tr);
    }
    free(all);
    free(counts);
    free(vals);
    return rc;
}

int dd_model_field(struct dd_model *d, float *field)
{
    const struct prop_grid *g = &prop_params_of(d->s)->grid;
    const int *n = d->plan.whole.grid.n;
    size_t mine = (size_t)g->n[0] * g->n[1] * g->n[2], total = (size_t)n[0] * n[1] * n[2];
    float *sub = malloc(mine * sizeof *sub), *all = NULL;
    size_t *counts = NULL;
    int rc = sub ? prop_copy_out(d->s, false, sub) : err_set(-ENOMEM, "decompose: out of memory");
    if (d->rank == 0 && rc == 0) {
        all = malloc(total * sizeof *all);
        counts = malloc((size_t)d->size * sizeof *counts);
        if (!all || !counts)
            rc = err_set(-ENOMEM, "decompose: out of memory gathering the field");
        for (int r = 0; rc == 0 && r < d->size; r++) {
            struct prop_params sp;
            dd_sub_params(&d->plan, r, 1.0, &sp);
            counts[r] = (size_t)sp.grid.n[0] * sp.grid.n[1] * sp.grid.n[2];
        }
    }
    if ((rc = sl_mpi_agree(rc)) == 0)
        rc = sl_mpi_gather(sub, mine, all, counts);
    if (rc == 0 && d->rank == 0) {
        const float *b = all;
        for (int r = 0; r < d->size; r++) {
            struct prop_params sp;
            dd_sub_params(&d->plan, r, 1.0, &sp);
            const struct prop_grid *q = &sp.grid;
            for (int k = 0; k < q->n[2]; k++)
                for (int j = 0; j < q->n[1]; j++, b += q->n[0])
                    memcpy(field + ((size_t)(k + q->origin[2]) * n[1] + j + q->origin[1]) * n[0] + q->origin[0], b,
                           q->n[0] * sizeof *field);
        }
    }
    free(sub);
    free(all);
    free(counts);
    return rc;
}

void dd_model_close(struct dd_model *d)
{
    if (!d)
        return;
    split_free(&d->split, d->s);
    dd_points_free(&d->src, d->s);
    dd_points_free(&d->rec, d->s);
    if (d->shares)
        for (int r = 0; r < d->size; r++)
            dd_points_free(&d->shares[r], NULL);
    free(d->shares);
    free(d->vals);
    dd_halo_free(&d->halo);
    if (d->stream) {
        /* the caller destroys the propagator after this: back to the default stream */
        prop_sync(d->s);
        prop_set_stream(d->s, NULL);
        dev_stream_destroy(prop_device(d->s), d->stream);
    }
    dd_plan_free(&d->plan);
    free(d);
}
