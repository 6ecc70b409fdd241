/* rtm — migration of one shot; see rtm.h. */
#include "kernels/rtm.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/model.h"
#include "kernels/imaging.h"
#include "kernels/random_boundary.h"
#include "kernels/revolve.h"
#include "kernels/rtm_device.h"
#include "kernels/rtm_memory.h"
#include "kernels/stability.h"
#include "kernels/subvolume.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"

#define LOG_COMPONENT "rtm"
#include "stream/log.h"

/* How often the long loops ask for a stop request (propagator steps). */
#define STOP_POLL RTM_STOP_POLL

struct rtm_engine {
    struct sl_device dev;
    int n[3];
    double d[3], o[3];
    float *v;
    double vmin, vmax;
    /* [propagator] */
    int order;
    double dt;
    int pml[6];
    double pml_reflection;
    bool free_surface;
    int kernel;
    double f_peak;
    float *wfile;       /* user wavelet (wavelet = file), NULL for Ricker */
    size_t wfile_n;
    double wfile_dt;
    /* [rtm] */
    struct rtm_conf rtm;
    double t_max;       /* s, [propagator] t_max: the longest record migrated */
    int forced, forced_schedule;
    rtm_cancel_fn cancel;
    void *cancel_user;
    rtm_mem_probe_fn probe;
    void *probe_user;
};

void rtm_engine_set_cancel(struct rtm_engine *e, rtm_cancel_fn fn, void *user)
{
    e->cancel = fn;
    e->cancel_user = user;
}

void rtm_engine_set_mem_probe(struct rtm_engine *e, rtm_mem_probe_fn fn, void *user)
{
    e->probe = fn;
    e->probe_user = user;
}

static bool stop_requested(const struct rtm_engine *e)
{
    return e->cancel && e->cancel(e->cancel_user);
}

const char *rtm_strategy_name(int strategy)
{
    static const char *const names[] = {"auto", "full", "checkpoint", "boundary", "random"};
    return strategy >= 0 && strategy <= STRAT_RANDOM ? names[strategy] : "?";
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Debug log of how long the setup stage that just ended took ([log] level = "debug",
 * or seislive-bench rtm --verbose): where a shot's time before the sweeps goes. */
static void stage_done(int64_t shot, const char *what, double *t)
{
    double t1 = now_s();
    log_debug("shot %" PRId64 ": setup: %s %.1f ms", shot, what, (t1 - *t) * 1e3);
    *t = t1;
}

/* ---- engine ------------------------------------------------------------------------------ */

int rtm_engine_create(const struct sl_config *cfg, const struct sl_device *dev,
                      const struct rtm_volume *model, struct rtm_engine **out)
{
    *out = NULL;
    for (int a = 0; a < 3; a++)
        if (model->n[a] < 1 || !(model->d[a] > 0))
            return err_set(-EINVAL, "rtm: model grid %d x %d x %d with spacing %g, %g, %g", model->n[0],
                           model->n[1], model->n[2], model->d[0], model->d[1], model->d[2]);
    struct rtm_engine *e = calloc(1, sizeof *e);
    if (!e)
        return err_set(-ENOMEM, "rtm: engine");
    e->dev = *dev;
    size_t cells = (size_t)model->n[0] * model->n[1] * model->n[2];
    e->v = malloc(cells * sizeof(float));
    if (!e->v) {
        free(e);
        return err_set(-ENOMEM, "rtm: model copy of %zu cells", cells);
    }
    memcpy(e->v, model->v, cells * sizeof(float));
    e->vmin = INFINITY;
    e->vmax = 0.0;
    for (size_t i = 0; i < cells; i++) {
        double v = e->v[i];
        if (!(v > 0.0) || !isfinite(v)) {
            size_t nx = (size_t)model->n[0], ny = (size_t)model->n[1];
            int rc = err_set(-EINVAL, "rtm: model velocity %g at cell (%zu, %zu, %zu): must be > 0", v,
                             i % nx, i / nx % ny, i / (nx * ny));
            rtm_engine_destroy(e);
            return rc;
        }
        e->vmin = v < e->vmin ? v : e->vmin;
        e->vmax = v > e->vmax ? v : e->vmax;
    }
    for (int a = 0; a < 3; a++) {
        e->n[a] = model->n[a];
        e->d[a] = model->d[a];
        e->o[a] = model->o[a];
    }
    const struct propagator_conf *p = &cfg->propagator;
    e->order = p->order;
    for (int f = 0; f < 6; f++)
        e->pml[f] = p->pml_width[f];
    e->free_surface = p->free_surface;
    if (e->free_surface)
        e->pml[4] = 0;
    e->pml_reflection = p->pml_reflection;
    e->kernel = p->kernel;
    e->f_peak = p->f_peak;
    e->rtm = cfg->rtm;
    e->t_max = p->t_max;
    e->forced = STRAT_AUTO;
    e->forced_schedule = -1;
    double fmax = wavelet_ricker_fmax(e->f_peak);
    if (p->wavelet == WAVELET_FILE) {
        int rc = wavelet_read(p->wavelet_file, &e->wfile, &e->wfile_n);
        if (rc < 0) {
            rtm_engine_destroy(e);
            return rc;
        }
        /* the file's sample interval must be known before dt is: 0 means the given dt */
        e->wfile_dt = p->wavelet_dt > 0 ? p->wavelet_dt : p->dt;
        if (!(e->wfile_dt > 0)) {
            rtm_engine_destroy(e);
            return err_set(-EINVAL, "[propagator] wavelet_dt must be set when dt is automatic");
        }
        fmax = wavelet_fmax(e->wfile, e->wfile_n, e->wfile_dt);
    }
    /* The project-wide stability rule (kernels/stability.h): refuses an unstable dt
     * with the config place and the largest stable dt. */
    struct sl_config grid_cfg = *cfg; /* read-only view whose [model] spacing is the volume's */
    for (int a = 0; a < 3; a++)
        grid_cfg.model.d[a] = e->d[a];
    int rc = stability_resolve(&grid_cfg, e->vmin, e->vmax, fmax, &e->dt, NULL, NULL);
    if (rc < 0) {
        rtm_engine_destroy(e);
        return rc;
    }
    *out = e;
    return 0;
}

int rtm_engine_create_from_config(const struct sl_config *cfg, const struct sl_device *dev,
                                  struct rtm_engine **out)
{
    struct sl_model m;
    int rc = model_load(cfg, &m);
    if (rc < 0)
        return rc;
    struct rtm_volume vol = {{m.n[0], m.n[1], m.n[2]}, {m.d[0], m.d[1], m.d[2]}, {m.o[0], m.o[1], m.o[2]}, m.v};
    rc = rtm_engine_create(cfg, dev, &vol, out);
    model_free(&m);
    return rc;
}

void rtm_engine_grid(const struct rtm_engine *e, int n[3], double d[3], double o[3])
{
    for (int a = 0; a < 3; a++) {
        n[a] = e->n[a];
        d[a] = e->d[a];
        o[a] = e->o[a];
    }
}

void rtm_engine_destroy(struct rtm_engine *e)
{
    if (!e)
        return;
    free(e->v);
    free(e->wfile);
    free(e);
}

void rtm_engine_force_strategy(struct rtm_engine *e, int strategy, int ckpt_schedule)
{
    e->forced = strategy;
    e->forced_schedule = ckpt_schedule;
}

bool rtm_engine_cut_record(const struct rtm_engine *e, const struct shot *shot)
{
    /* the slack covers a record of t_max written at a rounded sample interval */
    return !((shot->ns - 1) * shot->dt <= e->t_max * (1 + 1e-6) + 1e-6);
}

int rtm_engine_steps(const struct rtm_engine *e, const struct shot *shot, int *nt, double *dt)
{
    if (shot->ns < 2 || !(shot->dt > 0))
        return err_set(-EINVAL, "shot %" PRId64 ": %d samples at dt %g s", shot->id, shot->ns, shot->dt);
    double T = (shot->ns - 1) * shot->dt;
    /* Bounded before anything is sized from it: a header's dt of 100 s asked for
     * millions of steps and resampled samples per trace.  The migration covers at most
     * [propagator] t_max, the window `seislive check` plans memory for; a longer record
     * is cut there (rtm_engine_cut_record says so, the caller logs it).  A record whose
     * sample interval leaves fewer than two samples in that window cannot be migrated. */
    if (!(shot->dt <= e->t_max / 2))
        return err_set(-EINVAL, "shot %" PRId64 ": sample interval %g s leaves fewer than 2 of its %d samples "
                       "within [propagator] t_max = %g s, the record length the migration is planned for",
                       shot->id, shot->dt, shot->ns, e->t_max);
    if (rtm_engine_cut_record(e, shot))
        T = e->t_max;
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

int rtm_engine_patch(struct rtm_engine *e, const struct shot *shot, int off[3], int n[3])
{
    struct subvolume sv;
    int rc = subvolume_of_shot(e->n, e->d, e->o, shot->src, shot->rec, (size_t)shot->ntr, e->rtm.aperture, &sv);
    if (rc < 0)
        return err_prefix(rc, "shot %" PRId64, shot->id);
    for (int a = 0; a < 3; a++) {
        off[a] = sv.off[a];
        n[a] = sv.n[a];
    }
    return 0;
}

/* ---- one shot ---------------------------------------------------------------------------- */

/* The propagator parameters of a shot's sub-volume. */
static void shot_params(const struct rtm_engine *e, const struct subvolume *sv, double dt, struct wave_params *wp)
{
    memset(wp, 0, sizeof *wp);
    for (int a = 0; a < 3; a++) {
        wp->n[a] = sv->n[a];
        wp->d[a] = e->d[a];
        wp->o[a] = sv->o[a];
    }
    wp->order = e->order;
    wp->dt = dt;
    memcpy(wp->pml, e->pml, sizeof wp->pml);
    wp->pml_reflection = e->pml_reflection;
    wp->f_ref = e->f_peak;
    wp->free_surface = e->free_surface;
    wp->kernel = e->kernel;
}

struct mig {
    struct rtm_engine *e;
    const struct sl_device *dev;
    bool gpu;
    struct wave_sim *u, *q;
    struct wave_points *src, *rec;
    float *wav;              /* nt + 1 wavelet samples (device) */
    float *dat;              /* ntr x (nt + 1) traces (device) */
    int nt, k, cond;
    struct imaging_box bq;   /* image box in the receiver sim */
    struct imaging_box bc;   /* a compact stored field */
    struct imaging_acc acc;
    size_t cells;
    long fwd, bwd;
    size_t mem;              /* bytes allocated for this shot */
    bool measure;            /* device memory measured (CUDA, or the engine's test probe) */
    size_t dev_free0;        /* free bytes before the shot, and the lowest seen since */
    size_t dev_free_min;
    void *s_u, *s_q;         /* CUDA, boundary/random: the two wavefields' streams, and */
    void *ev_u, *ev_q;       /* events: u(n) ready / imaging at n done */
    rtm_source_cb cb;        /* diagnostics: hand u(n) to the caller instead of only imaging */
    void *cb_ctx;
    float *cb_host;
    double t_fwd_end;        /* run_reverse: when the forward sweep had finished (now_s) */
};

static struct imaging_box box_of(struct wave_sim *s)
{
    const struct wave_layout *L = wave_layout(s);
    struct imaging_box b;
    for (int a = 0; a < 3; a++) {
        b.n[a] = L->n[a];
        b.off[a] = L->off[a];
    }
    b.pitch[0] = L->dim[0];
    b.pitch[1] = L->dim[1];
    return b;
}

static int free_now(const struct mig *m, size_t *fr)
{
    if (m->e->probe)
        return m->e->probe(m->e->probe_user, fr);
    size_t tot;
    return rtm_dev_mem(m->dev, fr, &tot);
}

/* The low-water mark of free device memory, looked at after every allocation (memory
 * only grows there).  The baseline must be read before the first allocation and only
 * once the device kind is known: read before m.gpu was set, it never was, and the
 * "peak" reported was always 0. */
static void mem_begin(struct mig *m)
{
    m->measure = (m->gpu || m->e->probe) && free_now(m, &m->dev_free0) == 0;
    m->dev_free_min = m->dev_free0;
}

static void note_peak(struct mig *m)
{
    size_t fr;
    if (m->measure && free_now(m, &fr) == 0 && fr < m->dev_free_min)
        m->dev_free_min = fr;
}

static int alloc(struct mig *m, size_t bytes, void *out)
{
    int rc = rtm_dev_alloc(m->dev, bytes, (void **)out);
    if (rc == 0) {
        m->mem += bytes;
        note_peak(m);
    }
    return rc;
}

static int extract(struct mig *m, const struct imaging_box *b, const float *field, float *out)
{
#ifdef SEISLIVE_CUDA
    if (m->gpu)
        return imaging_extract_cuda(b, field, out, NULL);
#else
    (void)m;
#endif
    imaging_extract_cpu(b, field, out);
    return 0;
}

static int accumulate(struct mig *m, const struct imaging_box *bu, const float *u)
{
#ifdef SEISLIVE_CUDA
    if (m->gpu) {
        /* on q's stream, once u(n) is ready on u's; then tell u's stream it may go on */
        int rc = 0;
        if (m->s_q && (rc = rtm_cu_stream_wait(m->s_q, m->ev_u)) < 0)
            return rc;
        rc = imaging_accumulate_cuda(bu, u, &m->bq, wave_cur(m->q), &m->acc, m->s_q);
        if (rc == 0 && m->s_q)
            rc = rtm_cu_event_record(m->ev_q, m->s_q);
        return rc;
    }
#endif
    imaging_accumulate_cpu(bu, u, &m->bq, wave_cur(m->q), &m->acc);
    return 0;
}

static unsigned inj_flags(const struct mig *m)
{
    return WAVE_INJECT_PHYSICAL | (m->gpu ? WAVE_BUF_DEVICE : 0u);
}

/* One forward step of the source wavefield: u(it) -> u(it + 1), wavelet sample it. */
static int fwd_step(struct mig *m)
{
    int it = (int)wave_step_index(m->u);
    int rc = wave_step(m->u);
    if (rc == 0)
        rc = wave_inject(m->u, m->src, m->wav + it, 1, 1.0f, inj_flags(m));
    m->fwd++;
    if (rc == 0 && m->fwd % STOP_POLL == 0 && stop_requested(m->e))
        rc = err_set(-ECANCELED, "stop requested");
    return rc;
}

/* The backward sweep reaches time n (nt, nt-1, ..., 1 in that order): step the
 * receiver wavefield to n, inject trace sample n, and image with u(n) when n is an
 * imaging step (U may be NULL when it is not). */
static int visit(struct mig *m, int n, const struct imaging_box *bu, const float *u)
{
    int rc = 0;
    if (n < m->nt) {
        rc = wave_step(m->q);
        m->bwd++;
    }
    if (rc == 0)
        rc = wave_inject(m->q, m->rec, m->dat + n, (size_t)m->nt + 1, 1.0f, inj_flags(m));
    if (rc == 0 && u && n % m->k == 0)
        rc = accumulate(m, bu, u);
    if (rc == 0 && u && n % m->k == 0 && m->cb) {
        float *tmp = NULL;
        rtm_dev_sync(m->dev);
        rc = rtm_dev_alloc(m->dev, m->cells * sizeof(float), (void **)&tmp);
        if (rc == 0) {
            note_peak(m);
            rc = extract(m, bu, u, tmp);
        }
        if (rc == 0)
            rc = rtm_dev_get(m->dev, m->cb_host, tmp, m->cells * sizeof(float));
        rtm_dev_free(m->dev, tmp);
        if (rc == 0)
            rc = m->cb(n, m->cb_host, m->cells, m->cb_ctx);
    }
    if (rc == 0 && n % STOP_POLL == 0 && stop_requested(m->e))
        rc = err_set(-ECANCELED, "stop requested");
    return rc;
}

static int run_full(struct mig *m)
{
    int nimg = m->nt / m->k;
    float *store = NULL;
    int rc = alloc(m, (size_t)(nimg > 0 ? nimg : 1) * m->cells * sizeof(float), &store);
    struct imaging_box bu = box_of(m->u);
    for (int it = 0; it < m->nt && rc == 0; it++) {
        rc = fwd_step(m);
        int n = it + 1;
        if (rc == 0 && n % m->k == 0)
            rc = extract(m, &bu, wave_cur(m->u), store + (size_t)(n / m->k - 1) * m->cells);
    }
    for (int n = m->nt; n >= 1 && rc == 0; n--)
        rc = visit(m, n, &m->bc, n % m->k == 0 ? store + (size_t)(n / m->k - 1) * m->cells : NULL);
    rtm_dev_sync(m->dev);
    rtm_dev_free(m->dev, store);
    return rc;
}

/* CUDA two-stream hand-offs (no-ops otherwise). */
static int mark_u(struct mig *m)
{
#ifdef SEISLIVE_CUDA
    if (m->s_u)
        return rtm_cu_event_record(m->ev_u, m->s_u);
#else
    (void)m;
#endif
    return 0;
}

static int wait_q(struct mig *m)
{
#ifdef SEISLIVE_CUDA
    if (m->s_u)
        return rtm_cu_stream_wait(m->s_u, m->ev_q);
#else
    (void)m;
#endif
    return 0;
}

/* boundary (STRIPS != 0) and random: forward, then run u backward from its last two
 * time levels in step with q. */
static int run_reverse(struct mig *m, bool strips)
{
    float *buf = NULL;
    size_t sc = strips ? wave_strip_count(m->u) : 0;
    int rc = 0;
    /* With the strips restored after every reverse step, u's reverse steps need not
     * touch the absorbing layers (35 % of the points of the reference grid). */
    wave_set_reverse_interior(m->u, strips);
    if (strips)
        rc = alloc(m, (size_t)m->nt * (sc ? sc : 1) * sizeof(float), &buf);
    struct imaging_box bu = box_of(m->u);
    for (int it = 0; it < m->nt && rc == 0; it++) {
        rc = fwd_step(m);
        /* strip of u(it + 1); the reverse sweep needs u(1) .. u(nt - 2) */
        if (rc == 0 && strips && it + 1 <= m->nt - 2)
            rc = wave_strip_save(m->u, buf + (size_t)it * sc, m->gpu);
    }
    /* one synchronisation, for the phase times the shot reports */
    if (rc == 0)
        rc = rtm_dev_sync(m->dev);
    m->t_fwd_end = now_s();
    /* CUDA: from here u and q step side by side on their own streams; imaging at n
     * waits for u(n) (ev_u), and u's step that would overwrite the buffer imaging
     * reads waits for that imaging (ev_q). */
    if (rc == 0)
        rc = mark_u(m);
    if (rc == 0)
        rc = visit(m, m->nt, &bu, wave_cur(m->u));
    if (rc == 0)
        wave_swap(m->u); /* cur = u(nt - 1), prev = u(nt) */
    for (int n = m->nt - 1; n >= 1 && rc == 0; n--) {
        rc = visit(m, n, &bu, wave_cur(m->u));
        if (rc == 0 && n > 1) {
            /* u(n - 1) = 2 u(n) - u(n + 1) + dt^2 v^2 lap u(n) + dt^2 f(n), written over
             * u(n + 1), which imaging at n + 1 read */
            rc = wait_q(m);
            if (rc == 0)
                rc = wave_step_reverse(m->u);
            if (rc == 0)
                rc = wave_inject(m->u, m->src, m->wav + n, 1, 1.0f, inj_flags(m));
            if (rc == 0 && strips)
                rc = wave_strip_load(m->u, buf + (size_t)(n - 2) * sc, m->gpu);
            if (rc == 0)
                rc = mark_u(m);
            m->fwd++;
        }
    }
    rtm_dev_sync(m->dev);
    rtm_dev_free(m->dev, buf);
    return rc;
}

static int run_checkpoint(struct mig *m, int snaps, int schedule)
{
    struct rv_schedule sch;
    int N = m->nt + 1;
    int rc = schedule == CKPT_UNIFORM ? revolve_uniform(N, snaps, &sch) : revolve_binomial(N, snaps, &sch);
    if (rc < 0)
        return rc;
    size_t sb = wave_state_bytes(m->u);
    char *slots = NULL;
    float *bufs = NULL;
    rc = alloc(m, (size_t)sch.snaps * sb, &slots);
    if (rc == 0 && sch.buf > 0)
        rc = alloc(m, (size_t)sch.buf * m->cells * sizeof(float), &bufs);
    struct imaging_box bu = box_of(m->u);
    for (size_t i = 0; i < sch.n_ops && rc == 0; i++) {
        const struct rv_op *o = &sch.ops[i];
        switch (o->act) {
        case RV_ADVANCE:
            for (int s = o->from; s < o->to && rc == 0; s++)
                rc = fwd_step(m);
            break;
        case RV_STORE:
            rc = wave_state_save(m->u, slots + (size_t)o->slot * sb, m->gpu);
            break;
        case RV_RESTORE:
            rc = wave_state_load(m->u, slots + (size_t)o->slot * sb, m->gpu);
            break;
        case RV_VISIT:
            if (o->from >= 1)
                rc = visit(m, o->from, &bu, wave_cur(m->u));
            break;
        case RV_STORE_BUF:
            if (o->from >= 1)
                rc = extract(m, &bu, wave_cur(m->u), bufs + (size_t)o->slot * m->cells);
            break;
        case RV_VISIT_BUF:
            if (o->from >= 1)
                rc = visit(m, o->from, &m->bc, bufs + (size_t)o->slot * m->cells);
            break;
        }
    }
    rtm_dev_sync(m->dev);
    rtm_dev_free(m->dev, slots);
    rtm_dev_free(m->dev, bufs);
    revolve_free(&sch);
    return rc;
}

/* Traces of the kept receivers resampled to the propagator dt: NT + 1 samples each.
 * A stop request is honoured between traces (-ECANCELED). */
static int resample_traces(const struct rtm_engine *e, const struct shot *shot, const int *keep, int nkeep,
                           int nt, double dt, float *out)
{
    bool same = fabs(shot->dt - dt) <= 1e-9 * dt;
    for (int r = 0; r < nkeep; r++) {
        if (stop_requested(e))
            return err_set(-ECANCELED, "stop requested");
        const float *in = shot->data + (size_t)keep[r] * (size_t)shot->ns;
        float *o = out + (size_t)r * ((size_t)nt + 1);
        if (same) {
            int c = shot->ns < nt + 1 ? shot->ns : nt + 1;
            memcpy(o, in, (size_t)c * sizeof(float));
            memset(o + c, 0, (size_t)(nt + 1 - c) * sizeof(float));
        } else {
            wavelet_resample(in, (size_t)shot->ns, shot->dt, o, (size_t)nt + 1, dt);
        }
    }
    return 0;
}

static void mig_release(struct mig *m)
{
#ifdef SEISLIVE_CUDA
    if (m->s_u || m->s_q)
        rtm_dev_sync(m->dev);
#endif
    if (m->src)
        wave_points_destroy(m->src);
    if (m->rec)
        wave_points_destroy(m->rec);
    if (m->u)
        wave_destroy(m->u);
    if (m->q)
        wave_destroy(m->q);
    rtm_dev_free(m->dev, m->wav);
    rtm_dev_free(m->dev, m->dat);
    rtm_dev_free(m->dev, m->acc.num);
    rtm_dev_free(m->dev, m->acc.ill_s);
    rtm_dev_free(m->dev, m->acc.ill_r);
#ifdef SEISLIVE_CUDA
    rtm_cu_stream_destroy(m->s_u);
    rtm_cu_stream_destroy(m->s_q);
    rtm_cu_event_destroy(m->ev_u);
    rtm_cu_event_destroy(m->ev_q);
#endif
}

static int points_for(struct wave_sim *s, const double *xyz, size_t n, int interp, struct wave_points **out)
{
    int rc = wave_points_create(s, xyz, n, interp, out);
    if (rc < 0 && interp == WAVE_INTERP_SINC) {
        /* the sinc support (4 nodes each side) may not fit a thin layer: go trilinear */
        log_debug("sinc support does not fit (%s); trilinear instead", err_msg());
        rc = wave_points_create(s, xyz, n, WAVE_INTERP_TRILINEAR, out);
    }
    return rc;
}

static size_t budget_bytes(const struct rtm_engine *e)
{
    if (e->rtm.memory_budget > 0)
        return (size_t)(e->rtm.memory_budget * 1024.0 * 1024.0);
    size_t fr = 0, tot = 0;
    if (rtm_dev_mem(&e->dev, &fr, &tot) < 0)
        return 0;
    /* leave room for the runtime, other buffers and fragmentation */
    return (size_t)((double)fr * 0.9);
}

static int migrate(struct rtm_engine *e, const struct shot *shot, float *image, float *illum,
                   struct rtm_shot_stats *stats, int force, int force_schedule, rtm_source_cb cb, void *cb_ctx)
{
    double t0 = now_s();
    struct mig m;
    memset(&m, 0, sizeof m);
    m.cb = cb;
    m.cb_ctx = cb_ctx;
    m.e = e;
    m.dev = &e->dev;
    m.gpu = e->dev.kind == SL_DEVICE_CUDA;
    mem_begin(&m);
    m.k = e->rtm.image_every > 0 ? e->rtm.image_every : 1;
    m.cond = e->rtm.imaging;
    double dt = e->dt;
    int rc = rtm_engine_steps(e, shot, &m.nt, &dt);
    if (rc < 0)
        return rc;
    if (rtm_engine_cut_record(e, shot))
        log_warn("shot %" PRId64 ": record of %g s is longer than [propagator] t_max = %g s: its first "
                 "%g s are migrated (raise t_max to use more)", shot->id, (shot->ns - 1) * shot->dt,
                 e->t_max, e->t_max);
    struct subvolume sv;
    rc = subvolume_of_shot(e->n, e->d, e->o, shot->src, shot->rec, (size_t)shot->ntr, e->rtm.aperture, &sv);
    if (rc < 0)
        return err_prefix(rc, "shot %" PRId64, shot->id);

    /* Receivers outside the model cannot be injected: drop them, counted. */
    int *keep = malloc(((size_t)shot->ntr + 1) * sizeof *keep);
    double *rxyz = malloc(((size_t)shot->ntr + 1) * 3 * sizeof *rxyz);
    float *vsub = malloc(subvolume_cells(&sv) * sizeof(float));
    float *host = NULL;
    if (!keep || !rxyz || !vsub) {
        rc = err_set(-ENOMEM, "shot %" PRId64 ": receiver tables", shot->id);
        goto out;
    }
    int nkeep = 0;
    for (int r = 0; r < shot->ntr; r++) {
        double p[3] = {shot->rec[3 * r], shot->rec[3 * r + 1], shot->rec[3 * r + 2]};
        if (!subvolume_contains(e->n, e->d, e->o, p))
            continue;
        keep[nkeep] = r;
        memcpy(rxyz + 3 * nkeep, p, sizeof p);
        nkeep++;
    }
    if (nkeep < shot->ntr)
        log_warn("shot %" PRId64 ": %d of %d receivers lie outside the model and are not migrated", shot->id,
                 shot->ntr - nkeep, shot->ntr);
    if (nkeep == 0) {
        rc = err_set(-EINVAL, "shot %" PRId64 ": no receiver inside the model", shot->id);
        goto out;
    }
    /* The resampled traces live on the host first: bounded by its memory before the
     * allocation (nkeep x (nt + 1) follows from the header, t_max bounds nt). */
    {
        double tb = (double)nkeep * ((double)m.nt + 1) * sizeof(float);
        long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        if (pages > 0 && page > 0 && tb > 0.5 * (double)pages * (double)page) {
            rc = err_set(-ENOMEM, "shot %" PRId64 ": %d traces x %d steps = %.1f MiB of resampled traces, more "
                         "than half the free host memory (%.1f MiB)", shot->id, nkeep, m.nt + 1, tb / 1048576.0,
                         (double)pages * (double)page / 1048576.0);
            goto out;
        }
    }
    if (stop_requested(e)) {
        rc = err_set(-ECANCELED, "stop requested");
        goto out;
    }
    subvolume_cut(e->n, e->v, &sv, vsub);
    double ts = t0;
    stage_done(shot->id, "receivers and sub-volume cut", &ts);

    struct wave_params wp;
    shot_params(e, &sv, dt, &wp);

    /* Strategy: forced, configured, or chosen from the memory each would need. */
    struct rtm_mem_input mi = {wp, e->rtm.random_width, m.nt, m.k, nkeep, m.cond, e->rtm.checkpoints,
                               e->rtm.checkpoint_schedule};
    struct rtm_mem mem;
    if ((rc = rtm_memory_estimate(&mi, &mem)) < 0)
        goto out;
    int strategy = force != STRAT_AUTO ? force : e->forced != STRAT_AUTO ? e->forced : e->rtm.strategy;
    int schedule = force_schedule != -1 ? force_schedule
                   : e->forced_schedule >= 0 ? e->forced_schedule
                                             : e->rtm.checkpoint_schedule;
    int snaps = mem.snaps;
    const double mib = 1.0 / 1048576.0;
    if (strategy == STRAT_AUTO) {
        char why[512];
        size_t budget = budget_bytes(e);
        rc = rtm_memory_pick(&mem, &mi, budget, &strategy, &snaps, why, sizeof why);
        if (rc < 0) {
            err_prefix(rc, "shot %" PRId64, shot->id);
            goto out;
        }
        schedule = CKPT_BINOMIAL;
        log_info("shot %" PRId64 ": auto picks %s: %s (need MiB: full %.1f, boundary %.1f, checkpoint %.1f, "
                 "random %.1f)",
                 shot->id, rtm_strategy_name(strategy), why, mem.need[STRAT_FULL] * mib,
                 mem.need[STRAT_BOUNDARY] * mib, mem.need[STRAT_CHECKPOINT] * mib, mem.need[STRAT_RANDOM] * mib);
    } else if (strategy >= STRAT_FULL && strategy <= STRAT_RANDOM && !cb) {
        /* A configured strategy is held to the same budget auto uses, before anything
         * is allocated (the diagnostics' forced runs are tests on small grids). */
        size_t budget = budget_bytes(e);
        if (budget > 0 && mem.need[strategy] > budget) {
            rc = err_set(-ENOMEM, "shot %" PRId64 ": strategy %s needs %.1f MiB, more than the %.1f MiB budget "
                         "([rtm] memory_budget, or 90 %% of the free memory); strategy = \"auto\" picks one "
                         "that fits", shot->id, rtm_strategy_name(strategy), mem.need[strategy] * mib,
                         budget * mib);
            goto out;
        }
    }

    /* Simulations, points, traces, accumulators. */
    stage_done(shot->id, "memory plan", &ts);
    if ((rc = wave_create(&e->dev, &wp, vsub, &m.q)) < 0)
        goto out;
    stage_done(shot->id, "receiver simulation", &ts);
    m.mem += wave_memory_bytes(&wp);
    note_peak(&m);
    if (strategy == STRAT_RANDOM) {
        struct wave_params rp;
        rtm_random_params(&wp, e->rtm.random_width, &rp);
        if ((rc = wave_create(&e->dev, &rp, vsub, &m.u)) < 0)
            goto out;
        m.mem += wave_memory_bytes(&rp);
        struct random_boundary rb = {
            .ramp = e->rtm.random_ramp,
            .range = e->rtm.random_range,
            .width = e->rtm.random_width,
            .seed = (uint64_t)e->rtm.random_seed,
            .vstable = random_boundary_vstable(e->order, dt, e->d),
            .vmin = e->vmin,
            .vnyquist = random_boundary_vnyquist(e->wfile ? wavelet_fmax(e->wfile, e->wfile_n, e->wfile_dt)
                                                          : wavelet_ricker_fmax(e->f_peak),
                                                 e->d),
        };
        if ((rc = wave_randomize_layers(m.u, &rb, (uint64_t)shot->id)) < 0) {
            err_prefix(rc, "shot %" PRId64, shot->id);
            goto out;
        }
        wave_set_cpml(m.u, false);
    } else {
        /* the same model as q: its velocity copied on the device */
        if ((rc = wave_create_like(m.q, &m.u)) < 0)
            goto out;
        m.mem += wave_memory_bytes(&wp);
    }
    note_peak(&m);
    stage_done(shot->id, "source simulation", &ts);
    if ((rc = points_for(m.u, shot->src, 1, WAVE_INTERP_SINC, &m.src)) < 0 ||
        (rc = points_for(m.q, rxyz, (size_t)nkeep, WAVE_INTERP_TRILINEAR, &m.rec)) < 0) {
        err_prefix(rc, "shot %" PRId64, shot->id);
        goto out;
    }
    size_t nt1 = (size_t)m.nt + 1;
    /* Every receiver kept, at the propagator's dt and length: the shot's own trace array
     * is what the device needs, so it goes up without a host copy (480 MB for the
     * reference shot of seislive-bench rtm). */
    const bool direct = nkeep == shot->ntr && (size_t)shot->ns == nt1 && fabs(shot->dt - dt) <= 1e-9 * dt;
    const size_t hostn = direct ? nt1 : (size_t)nkeep * nt1;
    host = malloc((hostn > nt1 ? hostn : nt1) * sizeof(float));
    if (!host) {
        rc = err_set(-ENOMEM, "shot %" PRId64 ": traces", shot->id);
        goto out;
    }
    if (e->wfile)
        wavelet_resample(e->wfile, e->wfile_n, e->wfile_dt, host, nt1, dt);
    else
        wavelet_ricker_fill(host, nt1, dt, e->f_peak);
    if ((rc = alloc(&m, nt1 * sizeof(float), &m.wav)) < 0 ||
        (rc = rtm_dev_put(&e->dev, m.wav, host, nt1 * sizeof(float))) < 0)
        goto out;
    stage_done(shot->id, "points and wavelet", &ts);
    if (!direct && (rc = resample_traces(e, shot, keep, nkeep, m.nt, dt, host)) < 0)
        goto out;
    if ((rc = alloc(&m, (size_t)nkeep * nt1 * sizeof(float), &m.dat)) < 0 ||
        (rc = rtm_dev_put(&e->dev, m.dat, direct ? shot->data : host, (size_t)nkeep * nt1 * sizeof(float))) < 0)
        goto out;
    stage_done(shot->id, direct ? "traces uploaded" : "traces resampled and uploaded", &ts);
    m.bq = box_of(m.q);
    m.cells = imaging_cells(&m.bq);
    m.bc = (struct imaging_box){{m.bq.n[0], m.bq.n[1], m.bq.n[2]}, {0, 0, 0}, {m.bq.n[0], m.bq.n[1]}};
    size_t fb = m.cells * sizeof(float);
    if (cb && !(m.cb_host = malloc(fb))) {
        rc = err_set(-ENOMEM, "shot %" PRId64 ": wavefield copy", shot->id);
        goto out;
    }
    if ((rc = alloc(&m, fb, &m.acc.num)) < 0 || (rc = alloc(&m, fb, &m.acc.ill_s)) < 0 ||
        (rc = rtm_dev_zero(&e->dev, m.acc.num, fb)) < 0 || (rc = rtm_dev_zero(&e->dev, m.acc.ill_s, fb)) < 0)
        goto out;
    if (imaging_needs_receiver(m.cond) &&
        ((rc = alloc(&m, fb, &m.acc.ill_r)) < 0 || (rc = rtm_dev_zero(&e->dev, m.acc.ill_r, fb)) < 0))
        goto out;

    /* CUDA, boundary and random: the source and receiver wavefields on streams of
     * their own, so their steps overlap during the backward sweep.  Everything queued
     * so far (uploads, zeroing on the default stream) completes first. */
#ifdef SEISLIVE_CUDA
    if (m.gpu && (strategy == STRAT_BOUNDARY || strategy == STRAT_RANDOM) && !getenv("SEISLIVE_RTM_ONE_STREAM")) {
        if ((rc = rtm_dev_sync(&e->dev)) < 0 || (rc = rtm_cu_stream_create(&m.s_u)) < 0 ||
            (rc = rtm_cu_stream_create(&m.s_q)) < 0 || (rc = rtm_cu_event_create(&m.ev_u)) < 0 ||
            (rc = rtm_cu_event_create(&m.ev_q)) < 0)
            goto out;
        wave_set_stream(m.u, m.s_u);
        wave_set_stream(m.q, m.s_q);
    }
#endif
    /* The migration. */
    if ((rc = rtm_dev_sync(&e->dev)) < 0)
        goto out;
    stage_done(shot->id, "accumulators and streams", &ts);
    double t_sweep = now_s();
    switch (strategy) {
    case STRAT_FULL:
        rc = run_full(&m);
        break;
    case STRAT_BOUNDARY:
        rc = run_reverse(&m, true);
        break;
    case STRAT_RANDOM:
        /* the reference for the reversal: the same random-boundary u, stored forward */
        rc = schedule == RTM_RANDOM_FORWARD ? run_full(&m) : run_reverse(&m, false);
        break;
    case STRAT_CHECKPOINT:
        rc = run_checkpoint(&m, snaps, schedule);
        break;
    default:
        rc = err_set(-EINVAL, "rtm: strategy %d", strategy);
    }
    if (rc == 0)
        rc = rtm_dev_sync(&e->dev); /* both streams done before the default stream goes on */
    double t_sweep_end = now_s();
    if (rc < 0) {
        err_prefix(rc, "shot %" PRId64 " (%s)", shot->id, rtm_strategy_name(strategy));
        goto out;
    }

    /* The shot image, in place over the correlation. */
    if (stop_requested(e)) {
        rc = err_set(-ECANCELED, "stop requested");
        goto out;
    }
#ifdef SEISLIVE_CUDA
    if (m.gpu) {
        float *scratch = NULL;
        if ((rc = alloc(&m, 2 * sizeof(float), &scratch)) < 0)
            goto out;
        rc = imaging_finalize_cuda(&m.bq, m.cond, &m.acc, m.acc.num, scratch, NULL);
        rtm_dev_sync(&e->dev);
        rtm_dev_free(&e->dev, scratch);
        if (rc < 0)
            goto out;
    } else
#endif
        imaging_finalize_cpu(&m.bq, m.cond, &m.acc, m.acc.num);
    if (image && (rc = rtm_dev_get(&e->dev, image, m.acc.num, fb)) < 0)
        goto out;
    if (illum && (rc = rtm_dev_get(&e->dev, illum, m.acc.ill_s, fb)) < 0)
        goto out;

    double secs = now_s() - t0;
    char peak[48] = "n/a";
    if (m.measure)
        snprintf(peak, sizeof peak, "%.1f MiB", (double)(m.dev_free0 - m.dev_free_min) * mib);
    log_info("shot %" PRId64 ": %s%s, sub-volume %d x %d x %d at (%d, %d, %d), %d steps of %.3g ms, %d "
             "receivers, %ld + %ld steps, %.1f MiB allocated, device peak %s, %.2f s",
             shot->id, rtm_strategy_name(strategy),
             strategy == STRAT_CHECKPOINT ? (schedule == CKPT_UNIFORM ? " (uniform)" : " (binomial)") : "", sv.n[0],
             sv.n[1], sv.n[2], sv.off[0], sv.off[1], sv.off[2], m.nt, dt * 1e3, nkeep, m.fwd, m.bwd, m.mem * mib,
             peak, secs);
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->shot_id = shot->id;
        stats->strategy = strategy;
        const struct wave_layout *L = wave_layout(m.q);
        for (int a = 0; a < 3; a++) {
            stats->n[a] = L->npad[a];
            stats->off[a] = sv.off[a];
        }
        stats->nt = m.nt;
        stats->dt = dt;
        stats->mem_bytes = m.mem;
        stats->mem_device_measured = m.measure;
        stats->mem_device = m.measure ? m.dev_free0 - m.dev_free_min : 0;
        for (int s = 0; s < 5; s++)
            stats->mem_need[s] = mem.need[s];
        stats->fwd_steps = m.fwd;
        stats->bwd_steps = m.bwd;
        stats->seconds = secs;
        stats->setup_s = t_sweep - t0;
        stats->sweep_fwd_s = (m.t_fwd_end > 0 ? m.t_fwd_end : t_sweep_end) - t_sweep;
        stats->sweep_bwd_s = m.t_fwd_end > 0 ? t_sweep_end - m.t_fwd_end : 0;
        stats->finish_s = secs - (t_sweep_end - t0);
    }
out:
    mig_release(&m);
    free(m.cb_host);
    free(keep);
    free(rxyz);
    free(vsub);
    free(host);
    return rc;
}

static size_t budget_bytes(const struct rtm_engine *e);

/* The plan of a shot without running it: the memory each strategy needs, and what
 * auto would pick under the engine's budget. */
static int plan(struct rtm_engine *e, const struct shot *shot, size_t need[5], int *pick, int *snaps)
{
    int nt = 0;
    double dt = e->dt;
    int rc = rtm_engine_steps(e, shot, &nt, &dt);
    if (rc < 0)
        return rc;
    struct subvolume sv;
    if ((rc = subvolume_of_shot(e->n, e->d, e->o, shot->src, shot->rec, (size_t)shot->ntr, e->rtm.aperture, &sv)) < 0)
        return err_prefix(rc, "shot %" PRId64, shot->id);
    int nkeep = 0;
    for (int r = 0; r < shot->ntr; r++) {
        double p[3] = {shot->rec[3 * r], shot->rec[3 * r + 1], shot->rec[3 * r + 2]};
        nkeep += subvolume_contains(e->n, e->d, e->o, p);
    }
    struct wave_params wp;
    shot_params(e, &sv, dt, &wp);
    struct rtm_mem_input mi = {wp, e->rtm.random_width, nt, e->rtm.image_every > 0 ? e->rtm.image_every : 1, nkeep,
                               e->rtm.imaging, e->rtm.checkpoints, e->rtm.checkpoint_schedule};
    struct rtm_mem mem;
    if ((rc = rtm_memory_estimate(&mi, &mem)) < 0)
        return rc;
    memcpy(need, mem.need, sizeof mem.need);
    /* the schedule the engine would use when forced */
    int sched = e->forced_schedule >= 0 ? e->forced_schedule : e->rtm.checkpoint_schedule;
    need[STRAT_CHECKPOINT] = rtm_memory_checkpoint(&mem, &mi, mem.snaps, sched);
    if (pick) {
        char why[512];
        if ((rc = rtm_memory_pick(&mem, &mi, budget_bytes(e), pick, snaps, why, sizeof why)) < 0)
            return err_prefix(rc, "shot %" PRId64, shot->id);
    }
    return 0;
}

int rtm_engine_memory(struct rtm_engine *e, const struct shot *shot, size_t need[5])
{
    return plan(e, shot, need, NULL, NULL);
}

int rtm_engine_pick(struct rtm_engine *e, const struct shot *shot, int *strategy)
{
    size_t need[5];
    int snaps;
    return plan(e, shot, need, strategy, &snaps);
}

int rtm_engine_migrate_patch(struct rtm_engine *e, const struct shot *shot, float *image, float *illum,
                             struct rtm_shot_stats *stats)
{
    return migrate(e, shot, image, illum, stats, STRAT_AUTO, -1, NULL, NULL);
}

int rtm_engine_source_wavefield(struct rtm_engine *e, const struct shot *shot, int strategy, int schedule,
                                rtm_source_cb cb, void *ctx)
{
    if (strategy == STRAT_AUTO)
        return err_set(-EINVAL, "rtm_engine_source_wavefield: name a strategy");
    return migrate(e, shot, NULL, NULL, NULL, strategy, schedule, cb, ctx);
}

int rtm_engine_migrate(struct rtm_engine *e, const struct shot *shot, struct image_stack *stack,
                       struct rtm_shot_stats *stats)
{
    for (int a = 0; a < 3; a++)
        if (stack->n[a] != e->n[a])
            return err_set(-EINVAL, "rtm: image stack grid %d x %d x %d differs from the model's %d x %d x %d",
                           stack->n[0], stack->n[1], stack->n[2], e->n[0], e->n[1], e->n[2]);
    if (image_stack_has(stack, shot->id))
        return err_set(-EEXIST, "shot %" PRId64 " is already in the stack", shot->id);
    struct image_patch p;
    int rc = rtm_engine_patch(e, shot, p.off, p.n);
    if (rc < 0)
        return rc;
    size_t cells = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *img = malloc(cells * sizeof(float)), *ill = malloc(cells * sizeof(float));
    if (!img || !ill) {
        free(img);
        free(ill);
        return err_set(-ENOMEM, "shot %" PRId64 ": image of %zu cells", shot->id, cells);
    }
    rc = rtm_engine_migrate_patch(e, shot, img, ill, stats);
    if (rc == 0) {
        p.image = img;
        p.illum = ill;
        rc = image_stack_add(stack, shot->id, &p);
    }
    free(img);
    free(ill);
    return rc;
}
