/* rtm — the engine and the driver of one shot: plan (rtm_plan.c), setup (rtm_setup.c),
 * the strategy's sweeps (rtm_strategies.c), the image; see rtm.h. */
#include "kernels/rtm.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/device.h"
#include "kernels/imaging.h"
#include "kernels/operator.h"
#include "kernels/random_boundary.h"
#include "kernels/rtm_internal.h"
#include "kernels/stability.h"
#include "kernels/tti.h"
#include "kernels/tti_phase.h"
#include "kernels/time_dispersion.h"
#include "kernels/wavelet.h"
#include "stream/error.h"

#define LOG_COMPONENT "rtm"
#include "stream/log.h"

void rtm_params_init(struct rtm_params *p)
{
    memset(p, 0, sizeof *p);
    p->physics = PROP_ACOUSTIC;
    p->op_kind = PROP_OP_TAYLOR;
    p->order = 8;
    for (int f = 0; f < 6; f++) /* the config's (acoustic) CPML defaults, conf/schema.c */
        p->pml[f] = 12;
    p->free_surface = false;
    p->pml_reflection = 1e-3;
    p->pml_degree = 4;
    p->f_ref = 15.0;
    p->tti_sigma = TTI_SIGMA_DEFAULT;
    p->dt = 0.0;
    p->cfl = 0.9;
    p->ppw_min = 6.0;
    p->t_max = 1.0;
    p->f_peak = 15.0;
    p->src_interp = PROP_INTERP_SINC;
    p->rec_interp = PROP_INTERP_TRILINEAR;
    p->strategy = RTM_AUTO;
    p->checkpoints = 0;
    p->checkpoint_schedule = RTM_CKPT_BINOMIAL;
    p->imaging = IMAGING_XCORR;
    p->image_every = 0; /* auto: rtm_image_every_auto */
    p->aperture = 1000.0;
    p->memory_budget = 0.0;
    p->strip_store = RTM_STRIPS_AUTO;
    p->host_memory_budget = 0.0;
    p->random.ramp = RB_RAMP_EXPONENTIAL;
    p->random.range = RB_RANGE_FULL;
    p->random.width = 20;
    p->random.seed = 12345;
}

void rtm_engine_set_cancel(struct rtm_engine *e, rtm_cancel_fn fn, void *user)
{
    e->cancel = fn;
    e->cancel_user = user;
}

void rtm_engine_set_domain(struct rtm_engine *e, const struct rtm_domain *d) { e->dom = d; }

void rtm_engine_set_mem_probe(struct rtm_engine *e, rtm_mem_probe_fn fn, void *user)
{
    e->probe = fn;
    e->probe_user = user;
}

const char *rtm_strategy_name(int strategy)
{
    static const char *const names[] = {"auto", "full", "checkpoint", "boundary", "random"};
    return strategy >= 0 && strategy <= RTM_RANDOM ? names[strategy] : "?";
}

double rtm_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void rtm_stage_done(int64_t shot, const char *what, double *t)
{
    double t1 = rtm_now_s();
    log_debug("shot %" PRId64 ": setup: %s %.1f ms", shot, what, (t1 - *t) * 1e3);
    *t = t1;
}

/* ---- engine ------------------------------------------------------------------------------ */

/* The model's velocity range; -EINVAL naming the first cell that is not > 0. */
static int velocity_range(struct rtm_engine *e, size_t cells)
{
    e->vmin = INFINITY;
    e->vmax = 0.0;
    for (size_t i = 0; i < cells; i++) {
        double v = e->v[i];
        if (!(v > 0.0) || !isfinite(v)) {
            size_t nx = (size_t)e->n[0], ny = (size_t)e->n[1];
            return err_set(-EINVAL, "rtm: model velocity %g at cell (%zu, %zu, %zu): must be > 0", v, i % nx,
                           i / nx % ny, i / (nx * ny));
        }
        e->vmin = v < e->vmin ? v : e->vmin;
        e->vmax = v > e->vmax ? v : e->vmax;
    }
    return 0;
}

/* The source wavelet: the given samples copied (their fmax), or the Ricker's. */
static int take_wavelet(struct rtm_engine *e, const struct rtm_params *p)
{
    e->fmax = wavelet_ricker_fmax(p->f_peak);
    e->p.wavelet = NULL;
    if (!p->wavelet)
        return 0;
    if (p->wavelet_n == 0)
        return err_set(-EINVAL, "rtm: a wavelet of no samples");
    e->wfile = malloc(p->wavelet_n * sizeof(float));
    if (!e->wfile)
        return err_set(-ENOMEM, "rtm: wavelet of %zu samples", p->wavelet_n);
    memcpy(e->wfile, p->wavelet, p->wavelet_n * sizeof(float));
    e->p.wavelet = e->wfile;
    /* the samples' interval must be known before dt is: 0 means the given dt */
    e->wfile_dt = p->wavelet_dt > 0 ? p->wavelet_dt : p->dt;
    if (!(e->wfile_dt > 0))
        return err_set(-EINVAL, "rtm: the wavelet's sample interval must be given when dt is automatic");
    e->fmax = wavelet_fmax(e->wfile, p->wavelet_n, e->wfile_dt);
    return 0;
}

/* TTI: the parameter volumes copied, the model checked (tti_model_check), the stable
 * dt (tti_dt_limit of its fastest qP speed) into *LIM with RULE naming it, the slowest qP phase velocity
 * (tti_qp_vmin_model: the points-per-wavelength check) into *VSLOW, and the random
 * layers' velocity scale. */
static int take_tti(struct rtm_engine *e, const struct rtm_volume *model, size_t cells, double *lim, double *vslow,
                    char *rule, size_t len)
{
    const float *src[4] = {model->epsilon, model->delta, model->theta, model->phi};
    const double c[4] = {model->epsilon0, model->delta0, model->theta0, model->phi0};
    for (int k = 0; k < 4; k++) {
        e->par0[k] = c[k];
        if (!src[k])
            continue;
        if (!(e->par[k] = malloc(cells * sizeof(float))))
            return err_set(-ENOMEM, "rtm: TTI parameter copy of %zu cells", cells);
        memcpy(e->par[k], src[k], cells * sizeof(float));
    }
    const struct tti_model tm = {.vpz = e->v, .eps = e->par[0], .delta = e->par[1], .theta = e->par[2],
                                 .phi = e->par[3], .eps0 = c[0], .delta0 = c[1], .theta0 = c[2], .phi0 = c[3]};
    double vqp = 0;
    int rc = tti_model_check(&tm, cells, e->p.tti_sigma, &vqp, NULL);
    if (rc < 0)
        return err_prefix(rc, "rtm: TTI model");
    *lim = tti_dt_limit(e->p.order, e->d, e->n[1] == 1, vqp);
    *vslow = tti_qp_vmin_model(&tm, cells, e->p.tti_sigma);
    /* The random layers keep the model's anisotropy where the taper has not removed it
     * yet (kernels/tti.h): a random v_pz up to the acoustic vstable times this scale
     * stays under the qP speed the dt was chosen for. */
    e->tti_vscale = vqp > 0 ? fmin(1.0, e->vmax / vqp) : 1.0;
    snprintf(rule, len, "TTI, v_pz up to %g m/s, fastest qP %g m/s, tti_sigma %g, order %d", e->vmax, vqp,
             e->p.tti_sigma, e->p.order);
    return 0;
}

int rtm_engine_create(const struct rtm_params *p, const struct sl_device *dev, const struct rtm_volume *model,
                      struct rtm_engine **out)
{
    *out = NULL;
    for (int a = 0; a < 3; a++)
        if (model->n[a] < 1 || !(model->d[a] > 0))
            return err_set(-EINVAL, "rtm: model grid %d x %d x %d with spacing %g, %g, %g", model->n[0],
                           model->n[1], model->n[2], model->d[0], model->d[1], model->d[2]);
    if (!prop_ops_of(p->physics))
        return err_set(-EINVAL, "rtm: unknown physics %d", p->physics);
    struct rtm_engine *e = calloc(1, sizeof *e);
    if (!e)
        return err_set(-ENOMEM, "rtm: engine");
    e->dev = *dev;
    e->p = *p;
    e->p.dt_name = NULL; /* the caller's string is read here only */
    e->forced = RTM_AUTO;
    e->forced_schedule = -1;
    for (int a = 0; a < 3; a++) {
        e->n[a] = model->n[a];
        e->d[a] = model->d[a];
        e->o[a] = model->o[a];
    }
    size_t cells = (size_t)model->n[0] * model->n[1] * model->n[2];
    e->v = malloc(cells * sizeof(float));
    int rc = e->v ? 0 : err_set(-ENOMEM, "rtm: model copy of %zu cells", cells);
    if (rc == 0) {
        memcpy(e->v, model->v, cells * sizeof(float));
        rc = velocity_range(e, cells);
    }
    if (rc == 0)
        rc = take_wavelet(e, p);
    e->tti_vscale = 1.0;
    double tti_lim = 0, vslow = e->vmin;
    char rule[200] = "";
    if (rc == 0 && p->physics == PROP_TTI)
        rc = take_tti(e, model, cells, &tti_lim, &vslow, rule, sizeof rule);
    /* operator_band "auto": designed once for this wavelet and model, so that every shot,
     * the stability rule and the plan take the same operator (kernels/operator.h) */
    if (rc == 0 && p->op_band < 0) {
        const double band = operator_band_resolve(p->op_kind, p->op_band, e->fmax, vslow, e->d, e->n[1] == 1);
        if (isnan(band))
            rc = err_set(-EINVAL, "rtm: operator_band \"auto\" needs the wavelet's maximum frequency and the "
                         "slowest speed (fmax %g Hz, vmin %g m/s)", e->fmax, vslow);
        else if (p->op_kind != PROP_OP_TAYLOR)
            log_info("rtm: operator band auto: %.4f of Nyquist (the %s operator, order %d, designed for fmax %.4g Hz "
                     "at %g m/s: %.2f points per wavelength on the coarsest axis)", band, operator_name(p->op_kind),
                     p->order, e->fmax, vslow, stability_ppw(vslow, e->fmax, e->d));
        e->p.op_band = band;
    }
    if (rc == 0) {
        /* The project-wide stability rule (kernels/stability.h): refuses an unstable dt
         * with the place the caller names and the largest stable dt. */
        struct stability_params sp = {p->order, {e->d[0], e->d[1], e->d[2]}, p->dt, p->cfl, p->ppw_min, p->dt_name,
                                     e->n[1] == 1, tti_lim, rule[0] ? rule : NULL,
                                     rule[0] ? "slowest qP phase velocity" : NULL,
                                     /* the operator's own symbol maximum (kernels/operator.h) */
                                     p->op_kind, e->p.op_band, 0, p->time_dispersion};
        rc = stability_pick_dt(&sp, vslow, e->vmax, e->fmax, &e->dt, NULL, NULL);
    }
    /* the time-dispersion transforms hold below 1 / (pi dt) only (kernels/time_dispersion.h) */
    if (rc == 0 && p->time_dispersion && e->fmax >= tdt_band_limit(e->dt))
        rc = err_set(-EINVAL, "rtm: time_dispersion correct: the wavelet reaches %.4g Hz, beyond the %.4g Hz "
                     "(1 / (pi dt), dt %.6g s) up to which the leapfrog's time dispersion can be undone; take a "
                     "smaller dt or a lower f_peak", e->fmax, tdt_band_limit(e->dt), e->dt);
    if (rc < 0) {
        rtm_engine_destroy(e);
        return rc;
    }
    const int k = rtm_image_every_of(p->image_every, e->fmax, e->dt);
    if (p->image_every > 0)
        log_info("rtm: imaging every %d step%s (image_every as given; auto would take %d: 1 / (2 fmax dt), fmax "
                 "%.4g Hz, dt %.4g ms)", k, k == 1 ? "" : "s", rtm_image_every_auto(e->fmax, e->dt), e->fmax,
                 e->dt * 1e3);
    else
        log_info("rtm: imaging every %d step%s (image_every = 0, auto: the image's Nyquist, k = floor(1 / (2 fmax "
                 "dt)) with the wavelet's fmax %.4g Hz and dt %.4g ms)", k, k == 1 ? "" : "s", e->fmax, e->dt * 1e3);
    *out = e;
    return 0;
}

void rtm_engine_grid(const struct rtm_engine *e, int n[3], double d[3], double o[3])
{
    for (int a = 0; a < 3; a++) {
        n[a] = e->n[a];
        d[a] = e->d[a];
        o[a] = e->o[a];
    }
}

double rtm_engine_dt(const struct rtm_engine *e) { return e->dt; }

void rtm_engine_destroy(struct rtm_engine *e)
{
    if (!e)
        return;
    free(e->v);
    for (int k = 0; k < 4; k++)
        free(e->par[k]);
    free(e->wfile);
    rtm_strip_host_free(&e->strip_host, &e->dev);
    free(e);
}

void rtm_engine_force_strategy(struct rtm_engine *e, int strategy, int ckpt_schedule)
{
    e->forced = strategy;
    e->forced_schedule = ckpt_schedule;
}

bool rtm_engine_cut_record(const struct rtm_engine *e, const struct rtm_shot *shot)
{
    /* the slack covers a record of t_max written at a rounded sample interval */
    return !((shot->ns - 1) * shot->dt <= e->p.t_max * (1 + 1e-6) + 1e-6);
}

int rtm_engine_steps(const struct rtm_engine *e, const struct rtm_shot *shot, int *nt, double *dt)
{
    if (shot->ns < 2 || !(shot->dt > 0))
        return err_set(-EINVAL, "shot %" PRId64 ": %d samples at dt %g s", shot->id, shot->ns, shot->dt);
    double T = (shot->ns - 1) * shot->dt;
    const double t_max = e->p.t_max;
    /* Bounded before anything is sized from it: a header's dt of 100 s asked for
     * millions of steps and resampled samples per trace.  The migration covers at most
     * t_max, the window `seislive check` plans memory for; a longer record is cut there
     * (rtm_engine_cut_record says so, the caller logs it).  A record whose sample
     * interval leaves fewer than two samples in that window cannot be migrated. */
    if (!(shot->dt <= t_max / 2))
        return err_set(-EINVAL, "shot %" PRId64 ": sample interval %g s leaves fewer than 2 of its %d samples "
                       "within [propagator] t_max = %g s, the record length the migration is planned for",
                       shot->id, shot->dt, shot->ns, t_max);
    if (rtm_engine_cut_record(e, shot))
        T = t_max;
    double steps = floor(T / e->dt + 1e-6);
    if (!(steps < (double)(INT_MAX / 2)))
        return err_set(-EINVAL, "shot %" PRId64 ": record of %g s is %.3g steps of %g s (at most %d)", shot->id,
                       T, steps, e->dt, INT_MAX / 2);
    *nt = (int)steps;
    *dt = e->dt;
    if (*nt < 2)
        return err_set(-EINVAL, "shot %" PRId64 ": record of %g s is shorter than 2 steps of %g s", shot->id,
                       T, e->dt);
    return 0;
}

int rtm_engine_patch(struct rtm_engine *e, const struct rtm_shot *shot, int off[3], int n[3])
{
    struct subvolume sv;
    int rc = subvolume_of_shot(e->n, e->d, e->o, shot->src, shot->rec, (size_t)shot->ntr, e->p.aperture, &sv);
    if (rc < 0)
        return err_prefix(rc, "shot %" PRId64, shot->id);
    for (int a = 0; a < 3; a++) {
        off[a] = sv.off[a];
        n[a] = sv.n[a];
    }
    return 0;
}

int rtm_engine_shot_params(const struct rtm_engine *e, const struct rtm_shot *shot, struct prop_params *out)
{
    int rc = rtm_check_line(e, shot);
    struct subvolume sv;
    if (rc == 0 &&
        (rc = subvolume_of_shot(e->n, e->d, e->o, shot->src, shot->rec, (size_t)shot->ntr, e->p.aperture, &sv)) < 0)
        err_prefix(rc, "shot %" PRId64, shot->id);
    if (rc == 0)
        rtm_shot_params(e, &sv, e->dt, out);
    return rc;
}

/* ---- one shot ---------------------------------------------------------------------------- */

/* Imaged every k steps, each sample stands for k of them (rtm_image_every_auto): the raw
 * sums, the cross-correlation image and the illumination, get weight k, so their
 * amplitude does not depend on the interval.  The normalized images are ratios of such
 * sums and need none.  k = 1: nothing changes.  CELLS: the buffers' length (the whole
 * patch on rank 0 of a decomposed shot). */
static void weight_by_interval(const struct mig *m, float *image, float *illum, size_t cells)
{
    if (m->k <= 1)
        return;
    const float w = (float)m->k;
    if (image && m->cond == IMAGING_XCORR)
        for (size_t i = 0; i < cells; i++)
            image[i] *= w;
    if (illum)
        for (size_t i = 0; i < cells; i++)
            illum[i] *= w;
}

/* Decomposed: every rank's raw accumulators, downloaded, gathered on rank 0 into the
 * whole patch (in the whole grid's order), where the imaging condition is applied over
 * the whole patch as one rank applies it (its eps is a fraction of the whole shot's
 * largest illumination): the image is the one-rank image bit for bit on the CPU. */
static int finish_domain(struct mig *m, const struct rtm_plan *pl, float *image, float *illum)
{
    const struct rtm_domain *d = m->e->dom;
    /* the accumulators this shot has (the illuminations only where the condition or the
     * caller reads them: rtm_setup.c), gathered in the order image, source, receiver */
    const float *dev[3] = {m->acc.num, m->acc.ill_s, imaging_needs_receiver(m->cond) ? m->acc.ill_r : NULL};
    int which[3], na = 0;
    for (int k = 0; k < 3; k++)
        if (dev[k])
            which[na++] = k;
    const size_t fb = m->cells * sizeof(float), whole = subvolume_cells(&pl->sv);
    const bool root = d->rank == 0;
    float *loc[3] = {NULL, NULL, NULL}, *all[3] = {NULL, NULL, NULL};
    int rc = 0;
    for (int i = 0; i < na && rc == 0; i++) {
        if (!(loc[i] = malloc(fb ? fb : 1)) || (root && !(all[i] = malloc(whole * sizeof(float)))))
            rc = err_set(-ENOMEM, "rtm: image gather of %zu cells", whole);
        else
            rc = dev_copy(m->dev, loc[i], dev[which[i]], fb, DEV_D2H, NULL);
    }
    if ((rc = d->agree(d->ctx, rc)) == 0)
        rc = d->gather(d->ctx, (const float *const *)loc, all, na, pl->sv.n);
    if (rc == 0 && root) {
        float *by[3] = {NULL, NULL, NULL};
        for (int i = 0; i < na; i++)
            by[which[i]] = all[i];
        struct imaging_box b = {{pl->sv.n[0], pl->sv.n[1], pl->sv.n[2]}, {0, 0, 0}, {pl->sv.n[0], pl->sv.n[1]}};
        struct imaging_acc acc = {.num = by[0], .ill_s = by[1], .ill_r = by[2]};
        if (illum && by[1])
            memcpy(illum, by[1], whole * sizeof(float));
        imaging_finalize_cpu(&b, m->cond, &acc, acc.num);
        if (image)
            memcpy(image, acc.num, whole * sizeof(float));
        weight_by_interval(m, image, by[1] ? illum : NULL, whole);
    }
    for (int k = 0; k < 3; k++) {
        free(loc[k]);
        free(all[k]);
    }
    return rc;
}

/* The shot image (and illumination) down to the caller's buffers. */
static int finish(struct mig *m, const struct rtm_plan *pl, float *image, float *illum)
{
    if (rtm_stop_requested(m->e))
        return err_set(-ECANCELED, "stop requested");
    if (m->e->dom)
        return finish_domain(m, pl, image, illum);
    int rc = rtm_finalize_image(m);
    size_t fb = m->cells * sizeof(float);
    if (rc == 0 && image)
        rc = dev_copy(m->dev, image, m->acc.num, fb, DEV_D2H, NULL);
    if (rc == 0 && illum)
        rc = dev_copy(m->dev, illum, m->acc.ill_s, fb, DEV_D2H, NULL);
    if (rc == 0)
        weight_by_interval(m, image, illum, m->cells);
    return rc;
}

static void fill_stats(const struct mig *m, const struct rtm_plan *pl, int64_t id, double t0, double t_sweep,
                       double t_sweep_end, double secs, struct rtm_shot_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    stats->shot_id = id;
    stats->strategy = pl->strategy;
    const struct prop_layout *L = prop_layout(m->q);
    for (int a = 0; a < 3; a++) {
        stats->n[a] = L->npad[a];
        stats->off[a] = pl->sv.off[a];
    }
    stats->nt = m->nt;
    stats->dt = pl->dt;
    stats->replanned = m->replanned;
    stats->mem_bytes = m->mem;
    stats->mem_device_measured = m->measure;
    stats->mem_device = m->measure ? m->dev_free0 - m->dev_free_min : 0;
    for (int s = 0; s < RTM_STRATEGIES; s++)
        stats->mem_need[s] = pl->mem.need[s];
    if (m->strips_host) /* what this run needed of the device: the strips went to the host */
        stats->mem_need[RTM_BOUNDARY] = pl->mem.boundary_host;
    stats->backward = m->backward;
    stats->strips_host = m->strips_host;
    stats->strips_bytes = m->strips_bytes;
    stats->strips_alloc_s = m->strips_alloc_s;
    stats->fwd_steps = m->fwd;
    stats->bwd_steps = m->bwd;
    stats->schedule = pl->schedule;
    stats->snaps = pl->snaps;
    stats->image_every = m->k;
    stats->image_cells = m->cells;
    stats->seconds = secs;
    stats->setup_s = t_sweep - t0;
    stats->sweep_fwd_s = (m->t_fwd_end > 0 ? m->t_fwd_end : t_sweep_end) - t_sweep;
    stats->sweep_bwd_s = m->t_fwd_end > 0 ? t_sweep_end - m->t_fwd_end : 0;
    stats->finish_s = secs - (t_sweep_end - t0);
}

static void log_shot(const struct mig *m, const struct rtm_plan *pl, int64_t id, double secs)
{
    const double mib = 1.0 / 1048576.0;
    char peak[48] = "n/a";
    if (m->measure)
        snprintf(peak, sizeof peak, "%.1f MiB", (double)(m->dev_free0 - m->dev_free_min) * mib);
    const struct subvolume *sv = &pl->sv;
    char where[96] = "";
    if (pl->strategy == RTM_BOUNDARY)
        snprintf(where, sizeof where, " (strips: %.2f GiB in %s memory)", (double)m->strips_bytes * mib / 1024.0,
                 !m->strips_host ? "device" : m->gpu ? "pinned host" : "host (staged)");
    log_info("shot %" PRId64 ": %s%s%s, sub-volume %d x %d x %d at (%d, %d, %d), %d steps of %.3g ms, %d "
             "receivers, %ld + %ld steps, %.1f MiB allocated, device peak %s, %.2f s",
             id, rtm_strategy_name(pl->strategy),
             pl->strategy == RTM_CHECKPOINT ? (pl->schedule == RTM_CKPT_UNIFORM ? " (uniform)" : " (binomial)") : "",
             where, sv->n[0], sv->n[1], sv->n[2], sv->off[0], sv->off[1], sv->off[2], m->nt, pl->dt * 1e3, pl->nkeep,
             m->fwd, m->bwd, m->mem * mib, peak, secs);
}

/* A fresh M for ENGINE's shot (CB, CB_CTX: the diagnostics' callback; KEEP_ILLUM: see
 * migrate), its device-memory measurement begun. */
static void mig_begin(struct mig *m, struct rtm_engine *e, rtm_source_cb cb, void *cb_ctx, bool keep_illum)
{
    memset(m, 0, sizeof *m);
    m->cb = cb;
    m->cb_ctx = cb_ctx;
    m->keep_illum = keep_illum;
    m->e = e;
    m->dev = &e->dev;
    m->gpu = dev_is_gpu(&e->dev);
    rtm_mem_begin(m);
}

/* Plan SHOT and set up M for it.  Where auto picked boundary with its strips in host
 * memory and their store cannot be allocated (pinning tens of GiB can fail where the plan
 * saw the memory free: another process took it since, or the driver refused the
 * registration), the shot is planned again without the host, and so is every later shot
 * of this engine (host_strips_off): the job goes on with what auto picks next, said in
 * the log and in the shot's stats (replanned).  A boundary configured or forced, or a
 * decomposed shot (its ranks must run the plan they agreed), fails as it would have. */
static int plan_and_setup(struct mig *m, const struct rtm_shot *shot, int force, int force_schedule, bool diag,
                          double *ts, struct rtm_plan *pl)
{
    struct rtm_engine *e = m->e;
    int rc = rtm_plan_shot(e, shot, force, force_schedule, diag, ts, pl);
    if (rc == 0)
        rc = rtm_setup(m, shot, pl, ts);
    if (rc == 0 || !m->store_failed || !pl->auto_pick || e->dom)
        return rc;
    log_warn("%s: auto plans the shot again without host memory, and every later shot of this job", err_msg());
    const bool keep_illum = m->keep_illum;
    rtm_mig_release(m);
    rtm_plan_free(pl);
    mig_begin(m, e, m->cb, m->cb_ctx, keep_illum);
    m->replanned = true;
    e->host_strips_off = true;
    rc = rtm_plan_shot(e, shot, force, force_schedule, diag, ts, pl);
    if (rc == 0)
        rc = rtm_setup(m, shot, pl, ts);
    return rc;
}

/* One shot: plan, setup, sweeps, image.  FORCE / FORCE_SCHEDULE and CB: the
 * diagnostics' named strategy and source-wavefield callback. */
static int migrate(struct rtm_engine *e, const struct rtm_shot *shot, float *image, float *illum,
                   struct rtm_shot_stats *stats, int force, int force_schedule, rtm_source_cb cb, void *cb_ctx)
{
    double t0 = rtm_now_s();
    struct mig m;
    /* a decomposed shot's ranks gather the same accumulators; only rank 0 is handed the
     * caller's buffers, so every rank keeps the illumination */
    mig_begin(&m, e, cb, cb_ctx, illum != NULL || e->dom != NULL);
    struct rtm_plan pl;
    double ts = t0;
    int rc = plan_and_setup(&m, shot, force, force_schedule, cb != NULL, &ts, &pl);
    /* decomposed: a shot every rank's plan accepted; a setup failure on any rank is every
     * rank's (the plan's own failures were agreed in rtm_plan_shot) */
    if (e->dom)
        rc = e->dom->agree(e->dom->ctx, rc);
    double t_sweep = rtm_now_s(), t_sweep_end = t_sweep;
    if (rc == 0) {
        rc = rtm_run_strategy(&m, pl.strategy, pl.schedule, pl.snaps);
        t_sweep_end = rtm_now_s();
        if (rc < 0)
            err_prefix(rc, "shot %" PRId64 " (%s)", shot->id, rtm_strategy_name(pl.strategy));
        /* a stop is decided by all ranks together (the job's cancel function); any other
         * failure here is this rank's alone while its peers wait for its halo */
        if (rc < 0 && rc != -ECANCELED && e->dom)
            e->dom->fail(e->dom->ctx, rc);
    }
    if (rc == 0)
        rc = finish(&m, &pl, image, illum);
    if (rc == 0) {
        double secs = rtm_now_s() - t0;
        log_shot(&m, &pl, shot->id, secs);
        if (stats)
            fill_stats(&m, &pl, shot->id, t0, t_sweep, t_sweep_end, secs, stats);
    }
    rtm_mig_release(&m);
    rtm_plan_free(&pl);
    return rc;
}

int rtm_engine_migrate_patch(struct rtm_engine *e, const struct rtm_shot *shot, float *image, float *illum,
                             struct rtm_shot_stats *stats)
{
    return migrate(e, shot, image, illum, stats, RTM_AUTO, -1, NULL, NULL);
}

int rtm_engine_source_wavefield(struct rtm_engine *e, const struct rtm_shot *shot, int strategy, int schedule,
                                rtm_source_cb cb, void *ctx)
{
    if (strategy == RTM_AUTO)
        return err_set(-EINVAL, "rtm_engine_source_wavefield: name a strategy");
    if (e->dom) /* it would hand over each rank's part only */
        return err_set(-ENOTSUP, "rtm_engine_source_wavefield: not on a decomposed grid");
    return migrate(e, shot, NULL, NULL, NULL, strategy, schedule, cb, ctx);
}
