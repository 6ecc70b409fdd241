/* rtm_strategies — the sweeps of each source-wavefield strategy and the imaging
 * condition between them (see rtm.h for what each strategy keeps). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/revolve.h"
#include "kernels/rtm_internal.h"
#include "stream/error.h"

#define LOG_COMPONENT "rtm"
#include "stream/log.h"

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

static int accumulate(struct mig *m, int n, const struct imaging_box *bu, const float *u)
{
#ifdef SEISLIVE_CUDA
    if (m->gpu) {
        /* on q's stream, once u(n) is ready on u's; then tell u's stream it may go on */
        int rc = 0;
        if (m->s_q && (rc = dev_stream_wait(m->dev, m->s_q, m->ev_u)) < 0)
            return rc;
        rc = imaging_accumulate_cuda(bu, u, &m->bq, prop_field(m->q), &m->acc, m->e->p.tuning.imaging_scalar,
                                     m->s_q);
        if (rc == 0 && m->s_q)
            rc = dev_event_record(m->dev, m->ev_q, m->s_q);
        if (rc == 0 && m->ev_img[0])
            rc = dev_event_record(m->dev, m->ev_img[n & 1], m->s_q);
        return rc;
    }
#endif
    (void)n;
    imaging_accumulate_cpu(bu, u, &m->bq, prop_field(m->q), &m->acc);
    return 0;
}

/* The one place the sweeps meet a decomposed shot (rtm_internal.h): every step of u
 * (forward, reverse) and of q, once injected (and its strip restored), sends its
 * halo planes to the neighbours and takes theirs before anything reads or steps it. */
int rtm_after_step(struct mig *m, struct prop *s)
{
    return m->e->dom ? m->e->dom->exchange(m->e->dom->ctx, s) : 0;
}

static unsigned inj_flags(const struct mig *m)
{
    return PROP_INJECT_PHYSICAL | (m->gpu ? PROP_BUF_DEVICE : 0u);
}

/* Wavelet sample N into the source wavefield u (every sweep, both directions: one stride,
 * the decomposed shot's node-set layout included, rtm_setup.c). */
static int inject_src(struct mig *m, int n)
{
    return prop_inject(m->u, m->src, m->wav + n, m->wav_stride, 1.0f, inj_flags(m));
}

/* The receiver wavefield's adjoint source at reverse level N: trace sample N + 1 (the
 * exact discrete adjoint of the leapfrog step; nothing at N = nt). */
static int inject_rec(struct mig *m, int n)
{
    return prop_inject(m->q, m->rec, m->dat + n + 1, (size_t)m->nt + 1, 1.0f, inj_flags(m));
}

/* One forward step of the source wavefield: u(it) -> u(it + 1), wavelet sample it. */
static int fwd_step(struct mig *m)
{
    int it = (int)prop_step_index(m->u);
    int rc = prop_step(m->u);
    if (rc == 0)
        rc = inject_src(m, it);
    if (rc == 0)
        rc = rtm_after_step(m, m->u);
    m->fwd++;
    if (rc == 0 && m->fwd % STOP_POLL == 0 && rtm_stop_requested(m->e))
        rc = err_set(-ECANCELED, "stop requested");
    return rc;
}

/* Diagnostics: hand u(n) (box BU of U) to the caller's callback, as a host copy. */
static int hand_over(struct mig *m, int n, const struct imaging_box *bu, const float *u)
{
    float *tmp = NULL;
    dev_sync(m->dev);
    int rc = dev_alloc(m->dev, m->cells * sizeof(float), (void **)&tmp);
    if (rc == 0) {
        rtm_note_peak(m);
        rc = extract(m, bu, u, tmp);
    }
    if (rc == 0)
        rc = dev_copy(m->dev, m->cb_host, tmp, m->cells * sizeof(float), DEV_D2H, NULL);
    dev_free(m->dev, tmp);
    if (rc == 0)
        rc = m->cb(n, m->cb_host, m->cells, m->cb_ctx);
    return rc;
}

/* The backward sweep reaches time n (nt, nt-1, ..., 1 in that order): step the
 * receiver wavefield to n, inject trace sample n + 1, and image with u(n) when n is an
 * imaging step (U may be NULL when it is not).
 *
 * Why n + 1: the forward scheme is u(n+1) = 2u(n) - u(n-1) + dt^2 (L u(n) + f(n)) with
 * trace sample n = R u(n).  Its exact discrete adjoint is q(n) = 2q(n+1) - q(n+2) +
 * dt^2 L q(n+1) + R^T d(n+1): the residual of time n+1 enters the level computed from
 * n+1, exactly as f(n) enters u(n+1).  A step of q followed by an injection adds the
 * sample to the level just computed, so the level n gets d(n + 1), and the last sample
 * d(nt) goes into q(nt - 1) (nothing is injected at n = nt).  Injecting d(n) instead
 * made the data act one dt late: every image lay v dt / 2 too deep (found by the
 * time-dispersion work: tests/test_time_dispersion_rtm.c). */
static int visit(struct mig *m, int n, const struct imaging_box *bu, const float *u)
{
    int rc = 0;
    if (n < m->nt) {
        rc = prop_step(m->q);
        m->bwd++;
        if (rc == 0)
            rc = inject_rec(m, n);
        if (rc == 0)
            rc = rtm_after_step(m, m->q);
    }
    if (rc == 0 && u && n % m->k == 0)
        rc = accumulate(m, n, bu, u);
    if (rc == 0 && u && n % m->k == 0 && m->cb)
        rc = hand_over(m, n, bu, u);
    if (rc == 0 && n % STOP_POLL == 0 && rtm_stop_requested(m->e))
        rc = err_set(-ECANCELED, "stop requested");
    return rc;
}

static int run_full(struct mig *m)
{
    int nimg = m->nt / m->k;
    float *store = NULL;
    int rc = rtm_alloc(m, (size_t)(nimg > 0 ? nimg : 1) * m->cells * sizeof(float), &store);
    struct imaging_box bu = rtm_box_of(m->u);
    for (int it = 0; it < m->nt && rc == 0; it++) {
        rc = fwd_step(m);
        int n = it + 1;
        if (rc == 0 && n % m->k == 0)
            rc = extract(m, &bu, prop_field(m->u), store + (size_t)(n / m->k - 1) * m->cells);
    }
    for (int n = m->nt; n >= 1 && rc == 0; n--)
        rc = visit(m, n, &m->bc, n % m->k == 0 ? store + (size_t)(n / m->k - 1) * m->cells : NULL);
    dev_sync(m->dev);
    dev_free(m->dev, store);
    return rc;
}

/* CUDA two-stream hand-offs (no-ops with one stream, and on the CPU). */
static int mark_u(struct mig *m)
{
    return m->s_u ? dev_event_record(m->dev, m->ev_u, m->s_u) : 0;
}

static int wait_q(struct mig *m)
{
    return m->s_u ? dev_stream_wait(m->dev, m->s_u, m->ev_q) : 0;
}

/* The separate sweep, before u's reverse step from N (to N - 1, written over u(N + 1)):
 * the imaging that read the buffer it overwrites, at N + 1 with rtm_tuning.u_ahead on
 * (the event of slot (N + 1) & 1 is the last imaging at or before N + 1: a level not
 * imaged is read by nothing else), else the imaging at N (wait_q). */
static int wait_imaged(struct mig *m, int n)
{
    if (!m->s_u || !m->ev_img[0])
        return wait_q(m);
    return dev_stream_wait(m->dev, m->s_u, m->ev_img[(n + 1) & 1]);
}

/* THE predicate of the fused backward sweeps (kernels/rtm_fused.h): the tuning's
 * RTM_BACKWARD_FUSED or _IMAGE with *F, the fused steps of q and u, when the tuning asks
 * for one (rtm_tuning.backward), no diagnostics callback wants u(n) on its own, there are
 * at least 2 steps and the physics can fuse this pair (prop_fused_create: the acoustic
 * explicit operator, q and u on the same grid, the default kernels on CUDA);
 * RTM_BACKWARD_SEPARATE (the reason in the debug log) to run the separate passes; < 0 on
 * an error (a bad fused_variant or backward). */
static int fused_backward(struct mig *m, struct prop_fused **f)
{
    *f = NULL;
    const struct rtm_tuning *t = &m->e->p.tuning;
    if (t->backward < RTM_BACKWARD_SEPARATE || t->backward > RTM_BACKWARD_IMAGE)
        return err_set(-EINVAL, "rtm tuning: backward %d: must be 0..2 (enum rtm_backward)", t->backward);
    if (t->backward == RTM_BACKWARD_SEPARATE || m->cb || m->nt < 2)
        return RTM_BACKWARD_SEPARATE;
    /* A decomposed shot exchanges each field's halo after its own step and injection
     * (rtm_after_step); the fused step advances both fields in one pass, with no point
     * in between for the exchange: the separate passes run there. */
    if (m->e->dom) {
        log_debug("backward sweep in separate passes: the shot is decomposed over ranks");
        return RTM_BACKWARD_SEPARATE;
    }
    int rc = prop_fused_create(m->q, m->u, t->fused_variant, f);
    if (rc == -ENOTSUP) {
        log_debug("backward sweep in separate passes: %s", err_msg());
        return RTM_BACKWARD_SEPARATE;
    }
    return rc < 0 ? rc : t->backward;
}

/* The end of a fused sweep, once u holds (cur u(1), prev u(2)) and q (cur q(2)): level 2
 * (u(2) is u's prev), then the last q step and level 1 (visit). */
static int backward_tail(struct mig *m, const struct imaging_box *bu)
{
    int rc = 0;
    if (2 % m->k == 0) {
        prop_swap(m->u);
        rc = accumulate(m, 2, bu, prop_field(m->u));
        prop_swap(m->u);
    }
    if (rc == 0)
        rc = visit(m, 1, bu, prop_field(m->u));
    return rc;
}

/* The backward sweep with the fused step F (after the forward sweep: u cur = u(nt),
 * prev = u(nt - 1); q zero).  Step n (nt - 1 .. 2) takes q to q(n) and u to u(n - 1) and
 * images level n + 1, the levels it reads; the injections and the strip follow as in the
 * separate loop of run_reverse, so every level, and the image summed over the same
 * levels in the same order (nt, nt - 1, ..., 1), is the separate sweep's.  Level 2 and 1
 * are imaged around the last q step (visit). */
static int run_backward_fused(struct mig *m, struct prop_fused *f, struct rtm_strips *st,
                              const struct imaging_box *bu)
{
    /* one stream for both (the fused kernel steps both; the forward sweep is done) */
    prop_set_stream(m->u, m->s_q);
    prop_swap(m->u); /* cur = u(nt - 1), prev = u(nt) */
    int rc = 0;
    for (int n = m->nt - 1; n >= 2 && rc == 0; n--) {
        rc = prop_fused_step(f, &m->bq, (n + 1) % m->k == 0 ? &m->acc : NULL);
        m->bwd++;
        m->fwd++;
        if (rc == 0)
            rc = inject_rec(m, n);
        if (rc == 0)
            rc = inject_src(m, n);
        if (rc == 0 && st)
            rc = rtm_strips_load(st, m->u, m->s_q, n - 2);
        if (rc == 0 && n % STOP_POLL == 0 && rtm_stop_requested(m->e))
            rc = err_set(-ECANCELED, "stop requested");
    }
    return rc == 0 ? backward_tail(m, bu) : rc;
}

/* The backward sweep with the imaging condition inside q's step (F's image step): q on
 * its stream, u on its own (CUDA).  Step n (nt - 1 .. 2) takes q to q(n) and images level
 * n + 1 (u's prev, q's cur), recording ev_q once u(n + 1) has been read; u's reverse step
 * to u(n - 1), which overwrites u(n + 1), waits for that alone and so runs beside q's
 * CPML kernels; q's next step waits for u's (ev_u).  The same levels and order as the
 * separate sweep, so the same image (bit for bit on the CPU). */
static int run_backward_image(struct mig *m, struct prop_fused *f, struct rtm_strips *st,
                              const struct imaging_box *bu)
{
    prop_swap(m->u); /* cur = u(nt - 1), prev = u(nt) */
    int rc = mark_u(m);
    for (int n = m->nt - 1; n >= 2 && rc == 0; n--) {
        if (m->s_q)
            rc = dev_stream_wait(m->dev, m->s_q, m->ev_u);
        if (rc == 0)
            rc = prop_fused_image_step(f, &m->bq, (n + 1) % m->k == 0 ? &m->acc : NULL, m->ev_q);
        m->bwd++;
        if (rc == 0)
            rc = inject_rec(m, n);
        if (rc == 0)
            rc = wait_q(m);
        if (rc == 0)
            rc = prop_step_reverse(m->u);
        m->fwd++;
        if (rc == 0)
            rc = inject_src(m, n);
        if (rc == 0 && st)
            rc = rtm_strips_load(st, m->u, m->s_u, n - 2);
        if (rc == 0)
            rc = mark_u(m);
        if (rc == 0 && n % STOP_POLL == 0 && rtm_stop_requested(m->e))
            rc = err_set(-ECANCELED, "stop requested");
    }
    return rc == 0 ? backward_tail(m, bu) : rc;
}

/* Boundary: the strip store ST for this shot (kernels/rtm_strips.h): nt strips on the
 * device, or in the engine's page-locked host store (rtm_setup) staged through
 * strip_stages device strips, as the plan said. */
static int open_strips(struct mig *m, struct rtm_strips *st, float **dbuf)
{
    const size_t sc = prop_strip_count(m->u);
    const size_t n1 = sc ? sc : 1;
    if (!m->strips_host) {
        int rc = rtm_alloc(m, (size_t)m->nt * n1 * sizeof(float), dbuf);
        return rc < 0 ? rc : rtm_strips_init(st, m->dev, m->gpu, sc, m->nt, false, *dbuf, NULL, 0);
    }
    int ns = m->e->p.tuning.strip_stages > 0 ? m->e->p.tuning.strip_stages : RTM_STRIP_STAGES;
    if (ns > RTM_STRIP_STAGES_MAX)
        return err_set(-EINVAL, "rtm tuning: strip_stages %d: at most %d", ns, RTM_STRIP_STAGES_MAX);
    if (!m->strips)
        return err_set(-EINVAL, "rtm: host strips planned but no host store");
    int rc = rtm_alloc(m, (size_t)ns * n1 * sizeof(float), dbuf);
    return rc < 0 ? rc : rtm_strips_init(st, m->dev, m->gpu, sc, m->nt, true, m->strips, *dbuf, ns);
}

/* boundary (STRIPS != 0) and random: forward, then run u backward from its last two
 * time levels in step with q. */
static int run_reverse(struct mig *m, bool strips)
{
    float *buf = NULL;
    struct rtm_strips store, *st = strips ? &store : NULL;
    memset(&store, 0, sizeof store);
    int rc = 0;
    /* With the strips restored after every reverse step, u's reverse steps need not
     * touch the absorbing layers (35 % of the points of the reference grid). */
    prop_set_reverse_interior(m->u, strips);
    if (strips)
        rc = open_strips(m, st, &buf);
    struct imaging_box bu = rtm_box_of(m->u);
    for (int it = 0; it < m->nt && rc == 0; it++) {
        rc = fwd_step(m);
        /* strip of u(it + 1); the reverse sweep needs u(1) .. u(nt - 2) */
        if (rc == 0 && strips && it + 1 <= m->nt - 2)
            rc = rtm_strips_save(st, m->u, m->s_u, it);
    }
    /* one synchronisation, for the phase times the shot reports (the host store's copies
     * of the last strips included) */
    if (rc == 0)
        rc = dev_sync(m->dev);
    m->t_fwd_end = rtm_now_s();
    struct prop_fused *fused = NULL;
    int fuse = rc == 0 ? fused_backward(m, &fused) : 0;
    if (fuse < 0)
        rc = fuse;
    if (rc == 0 && fuse > 0) {
        m->backward = fuse;
        rc = fuse == RTM_BACKWARD_FUSED ? run_backward_fused(m, fused, st, &bu) : run_backward_image(m, fused, st, &bu);
        prop_fused_destroy(fused);
        dev_sync(m->dev);
        if (st)
            rtm_strips_fini(st);
        dev_free(m->dev, buf);
        return rc;
    }
    /* The separate passes.  CUDA: from here u and q step side by side on their own
     * streams; imaging at n waits for u(n) (ev_u), and u's step that would overwrite the
     * buffer imaging reads waits for that imaging (ev_q). */
    if (rc == 0)
        rc = mark_u(m);
    if (rc == 0)
        rc = visit(m, m->nt, &bu, prop_field(m->u));
    if (rc == 0)
        prop_swap(m->u); /* cur = u(nt - 1), prev = u(nt) */
    for (int n = m->nt - 1; n >= 1 && rc == 0; n--) {
        rc = visit(m, n, &bu, prop_field(m->u));
        if (rc == 0 && n > 1) {
            /* u(n - 1) = 2 u(n) - u(n + 1) + dt^2 v^2 lap u(n) + dt^2 f(n), written over
             * u(n + 1), which imaging at n + 1 read */
            rc = wait_imaged(m, n);
            if (rc == 0)
                rc = prop_step_reverse(m->u);
            if (rc == 0)
                rc = inject_src(m, n);
            if (rc == 0 && strips)
                rc = rtm_strips_load(st, m->u, m->s_u, n - 2);
            if (rc == 0)
                rc = rtm_after_step(m, m->u);
            if (rc == 0)
                rc = mark_u(m);
            m->fwd++;
        }
    }
    dev_sync(m->dev);
    if (st)
        rtm_strips_fini(st);
    dev_free(m->dev, buf);
    return rc;
}

static int run_checkpoint(struct mig *m, int snaps, int schedule)
{
    struct rv_schedule sch;
    int N = m->nt + 1;
    int rc = schedule == RTM_CKPT_UNIFORM ? revolve_uniform(N, snaps, &sch) : revolve_binomial(N, snaps, &sch);
    if (rc < 0)
        return rc;
    size_t sb = prop_state_bytes(m->u);
    char *slots = NULL;
    float *bufs = NULL;
    rc = rtm_alloc(m, (size_t)sch.snaps * sb, &slots);
    if (rc == 0 && sch.buf > 0)
        rc = rtm_alloc(m, (size_t)sch.buf * m->cells * sizeof(float), &bufs);
    struct imaging_box bu = rtm_box_of(m->u);
    for (size_t i = 0; i < sch.n_ops && rc == 0; i++) {
        const struct rv_op *o = &sch.ops[i];
        switch (o->act) {
        case RV_ADVANCE:
            for (int s = o->from; s < o->to && rc == 0; s++)
                rc = fwd_step(m);
            break;
        case RV_STORE:
            rc = prop_state_save(m->u, slots + (size_t)o->slot * sb, m->gpu);
            break;
        case RV_RESTORE:
            rc = prop_state_load(m->u, slots + (size_t)o->slot * sb, m->gpu);
            break;
        case RV_VISIT:
            if (o->from >= 1)
                rc = visit(m, o->from, &bu, prop_field(m->u));
            break;
        case RV_STORE_BUF:
            if (o->from >= 1)
                rc = extract(m, &bu, prop_field(m->u), bufs + (size_t)o->slot * m->cells);
            break;
        case RV_VISIT_BUF:
            if (o->from >= 1)
                rc = visit(m, o->from, &m->bc, bufs + (size_t)o->slot * m->cells);
            break;
        }
    }
    dev_sync(m->dev);
    dev_free(m->dev, slots);
    dev_free(m->dev, bufs);
    revolve_free(&sch);
    return rc;
}

int rtm_run_strategy(struct mig *m, int strategy, int schedule, int snaps)
{
    int rc;
    switch (strategy) {
    case RTM_FULL:
        rc = run_full(m);
        break;
    case RTM_BOUNDARY:
        rc = run_reverse(m, true);
        break;
    case RTM_RANDOM:
        /* the reference for the reversal: the same random-boundary u, stored forward */
        rc = schedule == RTM_RANDOM_FORWARD ? run_full(m) : run_reverse(m, false);
        break;
    case RTM_CHECKPOINT:
        rc = run_checkpoint(m, snaps, schedule);
        break;
    default:
        rc = err_set(-EINVAL, "rtm: strategy %d", strategy);
    }
    if (rc == 0)
        rc = dev_sync(m->dev); /* both streams done before the default stream goes on */
    return rc;
}

int rtm_finalize_image(struct mig *m)
{
#ifdef SEISLIVE_CUDA
    if (m->gpu) {
        float *scratch = NULL;
        int rc = rtm_alloc(m, 2 * sizeof(float), &scratch);
        if (rc < 0)
            return rc;
        rc = imaging_finalize_cuda(&m->bq, m->cond, &m->acc, m->acc.num, scratch, NULL);
        dev_sync(m->dev);
        dev_free(m->dev, scratch);
        return rc;
    }
#endif
    imaging_finalize_cpu(&m->bq, m->cond, &m->acc, m->acc.num);
    return 0;
}
