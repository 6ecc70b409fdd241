/* rtm_plan — a shot's plan before anything is allocated on the device: its steps, its
 * sub-volume and the receivers in it, the propagator parameters, the memory each
 * strategy would need and the strategy it gets (see rtm.h, rtm_internal.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/device.h"
#include "kernels/rtm_internal.h"
#include "kernels/tti.h"
#include "stream/error.h"

#define LOG_COMPONENT "rtm"
#include "stream/log.h"

void rtm_prop_params(const struct rtm_params *p, bool two_d, const double d[3], const struct subvolume *sv,
                     double dt, struct prop_params *pp)
{
    prop_params_init(pp, sv->n, d, sv->o, dt, 0);
    pp->physics = p->physics;
    pp->op.kind = p->op_kind;
    pp->op.order = p->order;
    pp->op.band = p->op_band;
    /* The faces follow the model, not the sub-volume: a 3D model's sub-volume one cell
     * thick (aperture 0, a line of receivers on a node) keeps its y layers. */
    for (int f = 0; f < PROP_FACES; f++) {
        bool none = two_d && (f == 2 || f == 3);
        pp->grid.face[f] = none ? PROP_FACE_NONE : PROP_FACE_CPML;
        pp->grid.width[f] = none ? 0 : p->pml[f];
    }
    if (p->free_surface) {
        pp->grid.face[4] = PROP_FACE_FREE;
        pp->grid.width[4] = 0;
    }
    pp->pml_reflection = p->pml_reflection;
    pp->f_ref = p->f_ref;
    pp->tuning = p->prop_tuning;
    pp->tti_sigma = p->tti_sigma;
    pp->cpml_memory = p->cpml_memory;
    pp->pml_degree = p->pml_degree;
}

void rtm_shot_params(const struct rtm_engine *e, const struct subvolume *sv, double dt, struct prop_params *pp)
{
    rtm_prop_params(&e->p, rtm_is_2d(e), e->d, sv, dt, pp);
}

size_t rtm_budget_bytes(const struct rtm_engine *e)
{
    if (e->p.memory_budget > 0)
        return (size_t)(e->p.memory_budget * 1024.0 * 1024.0);
    size_t fr = 0, tot = 0;
    if (dev_mem(&e->dev, &fr, &tot) < 0)
        return 0;
    /* leave room for the runtime, other buffers and fragmentation */
    return (size_t)((double)fr * 0.9);
}

size_t rtm_host_budget_bytes(const struct rtm_engine *e)
{
    if (e->p.strip_store == RTM_STRIPS_DEVICE || (e->p.strip_store == RTM_STRIPS_AUTO && !dev_is_gpu(&e->dev)) ||
        e->host_strips_off)
        return 0;
    if (e->p.host_memory_budget > 0)
        return (size_t)(e->p.host_memory_budget * 1024.0 * 1024.0);
    /* what this process can still take (MemAvailable, capped by its cgroup's limit:
     * dev_host_available), with room left for the shot's traces, the process and the
     * rest of the machine */
    size_t av = dev_host_available();
    if (av == 0)
        return 0;
    size_t held = e->strip_host.bytes; /* the engine's own store counts as available to it */
    return (size_t)(0.8 * ((double)av + (double)held));
}

/* The memory plan's input for a shot: the receiver simulation PP, NT steps imaged every
 * K, NKEEP receivers, and the engine's strategy, strip and host settings. */
static struct rtm_mem_input mem_input(const struct rtm_engine *e, const struct prop_params *pp, int nt, int k,
                                      int nkeep)
{
    return (struct rtm_mem_input){.pp = *pp, .random_width = e->p.random.width, .nt = nt, .image_every = k,
                                  .ntr = nkeep, .imaging = e->p.imaging, .checkpoints = e->p.checkpoints,
                                  .schedule = e->p.checkpoint_schedule, .strip_store = e->p.strip_store,
                                  .host_budget = rtm_host_budget_bytes(e), .strip_stages = e->p.tuning.strip_stages};
}

int rtm_check_line(const struct rtm_engine *e, const struct rtm_shot *shot)
{
    if (!rtm_is_2d(e))
        return 0;
    /* Refused rather than projected: a point off the line is a geometry mistake (a 3D
     * survey against a 2D model), and moving it would migrate it to the wrong place. */
    if (!subvolume_axis_contains(1, e->d[1], e->o[1], shot->src[1]))
        return err_set(-EINVAL, "shot %" PRId64 ": source at (%g, %g, %g) m is off the line y = %g m of the 2D "
                       "model (n[1] = 1): a 2D migration takes sources and receivers on that line only",
                       shot->id, shot->src[0], shot->src[1], shot->src[2], e->o[1]);
    for (int r = 0; r < shot->ntr; r++) {
        const float *p = shot->rec + 3 * (size_t)r;
        if (!subvolume_axis_contains(1, e->d[1], e->o[1], p[1]))
            return err_set(-EINVAL, "shot %" PRId64 ": receiver %d at (%g, %g, %g) m is off the line y = %g m of "
                           "the 2D model (n[1] = 1): a 2D migration takes sources and receivers on that line "
                           "only", shot->id, r, p[0], p[1], p[2], e->o[1]);
    }
    return 0;
}

void rtm_plan_free(struct rtm_plan *pl)
{
    free(pl->keep);
    free(pl->rxyz);
    free(pl->vsub);
    for (int k = 0; k < 4; k++)
        free(pl->psub[k]);
    memset(pl, 0, sizeof *pl);
}

/* Receivers outside the model cannot be injected: drop them, counted.  On a 2D model
 * the kept ones lie on its line exactly (their y within float rounding of it). */
static int keep_receivers(const struct rtm_engine *e, const struct rtm_shot *shot, struct rtm_plan *pl)
{
    pl->keep = malloc(((size_t)shot->ntr + 1) * sizeof *pl->keep);
    pl->rxyz = malloc(((size_t)shot->ntr + 1) * 3 * sizeof *pl->rxyz);
    pl->vsub = malloc(subvolume_cells(&pl->sv) * sizeof(float));
    if (!pl->keep || !pl->rxyz || !pl->vsub)
        return err_set(-ENOMEM, "shot %" PRId64 ": receiver tables", shot->id);
    int nkeep = 0;
    for (int r = 0; r < shot->ntr; r++) {
        double p[3] = {shot->rec[3 * r], shot->rec[3 * r + 1], shot->rec[3 * r + 2]};
        if (!subvolume_contains(e->n, e->d, e->o, p))
            continue;
        if (rtm_is_2d(e))
            p[1] = e->o[1];
        pl->keep[nkeep] = r;
        memcpy(pl->rxyz + 3 * nkeep, p, sizeof p);
        nkeep++;
    }
    pl->nkeep = nkeep;
    if (nkeep < shot->ntr)
        log_warn("shot %" PRId64 ": %d of %d receivers lie outside the model and are not migrated", shot->id,
                 shot->ntr - nkeep, shot->ntr);
    if (nkeep == 0)
        return err_set(-EINVAL, "shot %" PRId64 ": no receiver inside the model", shot->id);
    /* The resampled traces live on the host first: bounded by its memory before the
     * allocation (nkeep x (nt + 1) follows from the header, t_max bounds nt). */
    double tb = (double)nkeep * ((double)pl->nt + 1) * sizeof(float);
    double av = (double)dev_host_available();
    if (av > 0 && tb > 0.5 * av)
        return err_set(-ENOMEM, "shot %" PRId64 ": %d traces x %d steps = %.1f MiB of resampled traces, more "
                       "than half the free host memory (%.1f MiB)", shot->id, nkeep, pl->nt + 1, tb / 1048576.0,
                       av / 1048576.0);
    return 0;
}

/* The strategy: forced, configured, or chosen from the memory each would need; a
 * configured one is held to the budget. */
static int choose(struct rtm_engine *e, const struct rtm_shot *shot, int force, int force_schedule, bool diag,
                  struct rtm_plan *pl)
{
    const struct rtm_mem *mem = &pl->mem;
    int strategy = force != RTM_AUTO ? force : e->forced != RTM_AUTO ? e->forced : e->p.strategy;
    int schedule = force_schedule != -1 ? force_schedule
                   : e->forced_schedule >= 0 ? e->forced_schedule
                                             : e->p.checkpoint_schedule;
    int snaps = mem->snaps;
    const double mib = 1.0 / 1048576.0;
    bool host = false;
    pl->auto_pick = strategy == RTM_AUTO;
    if (strategy == RTM_AUTO) {
        char why[768];
        size_t budget = rtm_budget_bytes(e);
        int rc = rtm_memory_pick_strips(mem, &pl->mi, budget, &strategy, &snaps, &host, why, sizeof why);
        if (rc < 0)
            return err_prefix(rc, "shot %" PRId64, shot->id);
        schedule = RTM_CKPT_BINOMIAL;
        log_info("shot %" PRId64 ": auto picks %s: %s (need MiB: full %.1f, boundary %.1f, checkpoint %.1f, "
                 "random %.1f)",
                 shot->id, rtm_strategy_name(strategy), why, mem->need[RTM_FULL] * mib,
                 mem->need[RTM_BOUNDARY] * mib, mem->need[RTM_CHECKPOINT] * mib, mem->need[RTM_RANDOM] * mib);
    } else if (strategy == RTM_BOUNDARY) {
        /* Where its strips go: the device when they fit (strip_store "auto"), else the
         * host when they fit there; the diagnostics' forced runs (small grids) follow
         * strip_store alone. */
        size_t budget = rtm_budget_bytes(e);
        int where = diag ? (e->p.strip_store == RTM_STRIPS_HOST) : rtm_memory_strips_where(mem, &pl->mi, budget);
        if (where < 0 && budget > 0)
            return err_prefix(where, "shot %" PRId64 ": strategy boundary ([rtm] memory_budget, or 90 %% of the "
                              "free memory; strip_store = \"%s\"); strategy = \"auto\" picks one that fits", shot->id,
                              e->p.strip_store == RTM_STRIPS_HOST ? "host" : e->p.strip_store == RTM_STRIPS_DEVICE
                                                                                 ? "device" : "auto");
        host = where == 1 || (where < 0 && e->p.strip_store == RTM_STRIPS_HOST);
        if (host && e->p.strip_store == RTM_STRIPS_AUTO)
            log_info("shot %" PRId64 ": boundary's strips (%.2f GiB) go to pinned host memory: with them the "
                     "device would need %.1f MiB of a %.1f MiB budget; staged through %d device strips, the device "
                     "needs %.1f MiB", shot->id, mem->strips_bytes * mib / 1024.0, mem->boundary_dev * mib,
                     budget * mib, rtm_memory_stages(&pl->mi), mem->boundary_host * mib);
    } else if (strategy >= RTM_FULL && strategy <= RTM_RANDOM && !diag) {
        /* A configured strategy is held to the same budget auto uses, before anything
         * is allocated (the diagnostics' forced runs are tests on small grids). */
        size_t budget = rtm_budget_bytes(e);
        if (budget > 0 && mem->need[strategy] > budget)
            return err_set(-ENOMEM, "shot %" PRId64 ": strategy %s needs %.1f MiB, more than the %.1f MiB budget "
                           "([rtm] memory_budget, or 90 %% of the free memory); strategy = \"auto\" picks one "
                           "that fits", shot->id, rtm_strategy_name(strategy), mem->need[strategy] * mib,
                           budget * mib);
    }
    pl->strategy = strategy;
    pl->schedule = schedule;
    pl->snaps = snaps;
    pl->strips_host = strategy == RTM_BOUNDARY && host;
    return 0;
}

int rtm_image_every_auto(double fmax, double dt)
{
    if (!(fmax > 0) || !(dt > 0) || !isfinite(fmax) || !isfinite(dt))
        return 1;
    /* the tolerance keeps an exact ratio (1 / (2 fmax dt) = 4, say) from rounding down */
    const double k = floor(1.0 / (2.0 * fmax * dt) * (1 + 1e-9));
    return k < 1 ? 1 : k > 1e6 ? 1000000 : (int)k;
}

int rtm_image_every_of(int every, double fmax, double dt)
{
    return every > 0 ? every : rtm_image_every_auto(fmax, dt);
}

/* The largest velocity of the sub-volume as the propagator finds it for its CPML (a
 * float maximum): a decomposed shot's subdomains take it, so their layers are the whole's. */
static double vmax_of(const float *v, size_t n)
{
    float m = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] > m)
            m = v[i];
    return m;
}

/* The same for either physics: TTI's propagator takes its model's fastest qP speed
 * (tti_model_check over the shot's sub-volume with its parameters). */
static int shot_vmax(const struct rtm_engine *e, const struct rtm_plan *pl, double *vmax)
{
    const size_t cells = subvolume_cells(&pl->sv);
    if (e->p.physics != PROP_TTI) {
        *vmax = vmax_of(pl->vsub, cells);
        return 0;
    }
    const struct tti_model tm = {.vpz = pl->vsub, .eps = pl->psub[0], .delta = pl->psub[1], .theta = pl->psub[2],
                                 .phi = pl->psub[3], .eps0 = e->par0[0], .delta0 = e->par0[1], .theta0 = e->par0[2],
                                 .phi0 = e->par0[3]};
    return tti_model_check(&tm, cells, e->p.tti_sigma, vmax, NULL);
}

static int plan_local(struct rtm_engine *e, const struct rtm_shot *shot, int force, int force_schedule, bool diag,
                      double *t, struct rtm_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->cond = e->p.imaging;
    pl->dt = e->dt;
    int rc = rtm_engine_steps(e, shot, &pl->nt, &pl->dt);
    if (rc < 0)
        return rc;
    pl->k = rtm_image_every_of(e->p.image_every, e->fmax, pl->dt);
    if (rtm_engine_cut_record(e, shot))
        log_warn("shot %" PRId64 ": record of %g s is longer than [propagator] t_max = %g s: its first "
                 "%g s are migrated (raise t_max to use more)", shot->id, (shot->ns - 1) * shot->dt,
                 e->p.t_max, e->p.t_max);
    if ((rc = rtm_check_line(e, shot)) < 0)
        return rc;
    rc = subvolume_of_shot(e->n, e->d, e->o, shot->src, shot->rec, (size_t)shot->ntr, e->p.aperture, &pl->sv);
    if (rc < 0)
        return err_prefix(rc, "shot %" PRId64, shot->id);
    if ((rc = keep_receivers(e, shot, pl)) < 0)
        return rc;
    if (rtm_stop_requested(e))
        return err_set(-ECANCELED, "stop requested");
    subvolume_cut(e->n, e->v, &pl->sv, pl->vsub);
    for (int k = 0; k < 4; k++) {
        /* TTI: each parameter volume cut like the velocity */
        if (!e->par[k])
            continue;
        if (!(pl->psub[k] = malloc(subvolume_cells(&pl->sv) * sizeof(float))))
            return err_set(-ENOMEM, "shot %" PRId64 ": TTI parameter sub-volume", shot->id);
        subvolume_cut(e->n, e->par[k], &pl->sv, pl->psub[k]);
    }
    rtm_stage_done(shot->id, "receivers and sub-volume cut", t);

    rtm_shot_params(e, &pl->sv, pl->dt, &pl->pp);
    if (e->dom) {
        /* decomposed: this rank's part; its memory is what the strategy must fit */
        double vmax = 0;
        if ((rc = shot_vmax(e, pl, &vmax)) < 0)
            return err_prefix(rc, "shot %" PRId64, shot->id);
        rc = e->dom->begin(e->dom->ctx, &pl->pp, vmax, &pl->sub);
        if (rc < 0)
            return err_prefix(rc, "shot %" PRId64, shot->id);
    }
    pl->mi = mem_input(e, e->dom ? &pl->sub : &pl->pp, pl->nt, pl->k, pl->nkeep);
    if ((rc = rtm_memory_estimate(&pl->mi, &pl->mem)) < 0)
        return rc;
    if ((rc = choose(e, shot, force, force_schedule, diag, pl)) < 0)
        return rc;
    rtm_stage_done(shot->id, "memory plan", t);
    return 0;
}

int rtm_plan_shot(struct rtm_engine *e, const struct rtm_shot *shot, int force, int force_schedule, bool diag,
                  double *t, struct rtm_plan *pl)
{
    int rc = plan_local(e, shot, force, force_schedule, diag, t, pl);
    if (!e->dom)
        return rc;
    /* Decomposed: a shot one rank refuses is refused by all, and every rank runs the
     * strategy rank 0 planned (auto: rank 0's pick for its subdomain, under its budget;
     * the cuts balance the subdomains, so theirs need about as much). */
    if ((rc = e->dom->agree(e->dom->ctx, rc)) < 0)
        return rc;
    int v[3] = {pl->strategy, pl->schedule, pl->snaps};
    if ((rc = e->dom->share(e->dom->ctx, v, 3)) < 0)
        return rc;
    if (v[0] != pl->strategy)
        log_info("shot %" PRId64 ": %s, as rank 0 planned", shot->id, rtm_strategy_name(v[0]));
    if (v[0] == RTM_BOUNDARY && pl->strategy != RTM_BOUNDARY)
        /* this rank's strips where its own memory takes them */
        pl->strips_host = rtm_memory_strips_where(&pl->mem, &pl->mi, rtm_budget_bytes(e)) == 1 ||
                          e->p.strip_store == RTM_STRIPS_HOST;
    pl->strategy = v[0];
    pl->schedule = v[1];
    pl->snaps = v[2];
    return 0;
}

/* The plan of a shot without running it: the memory each strategy needs, and what
 * auto would pick under the engine's budget. */
static int plan_only(struct rtm_engine *e, const struct rtm_shot *shot, size_t need[RTM_STRATEGIES], int *pick,
                     int *snaps)
{
    int nt = 0;
    double dt = e->dt;
    int rc = rtm_engine_steps(e, shot, &nt, &dt);
    if (rc < 0)
        return rc;
    if ((rc = rtm_check_line(e, shot)) < 0)
        return rc;
    struct subvolume sv;
    if ((rc = subvolume_of_shot(e->n, e->d, e->o, shot->src, shot->rec, (size_t)shot->ntr, e->p.aperture, &sv)) < 0)
        return err_prefix(rc, "shot %" PRId64, shot->id);
    int nkeep = 0;
    for (int r = 0; r < shot->ntr; r++) {
        double p[3] = {shot->rec[3 * r], shot->rec[3 * r + 1], shot->rec[3 * r + 2]};
        nkeep += subvolume_contains(e->n, e->d, e->o, p);
    }
    struct prop_params pp;
    rtm_shot_params(e, &sv, dt, &pp);
    struct rtm_mem_input mi = mem_input(e, &pp, nt, rtm_image_every_of(e->p.image_every, e->fmax, dt), nkeep);
    struct rtm_mem mem;
    if ((rc = rtm_memory_estimate(&mi, &mem)) < 0)
        return rc;
    memcpy(need, mem.need, sizeof mem.need);
    /* the schedule the engine would use when forced */
    int sched = e->forced_schedule >= 0 ? e->forced_schedule : e->p.checkpoint_schedule;
    need[RTM_CHECKPOINT] = rtm_memory_checkpoint(&mem, &mi, mem.snaps, sched);
    if (pick) {
        char why[512];
        if ((rc = rtm_memory_pick(&mem, &mi, rtm_budget_bytes(e), pick, snaps, why, sizeof why)) < 0)
            return err_prefix(rc, "shot %" PRId64, shot->id);
    }
    return 0;
}

int rtm_engine_memory(struct rtm_engine *e, const struct rtm_shot *shot, size_t need[RTM_STRATEGIES])
{
    return plan_only(e, shot, need, NULL, NULL);
}

int rtm_engine_pick(struct rtm_engine *e, const struct rtm_shot *shot, int *strategy)
{
    size_t need[RTM_STRATEGIES];
    int snaps;
    return plan_only(e, shot, need, strategy, &snaps);
}
