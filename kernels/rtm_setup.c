/* rtm_setup — what a shot's sweeps need, built from its plan: the receiver and source
 * simulations (through the propagator interface: the engine never names a physics),
 * their points, the wavelet and traces on the device, the imaging accumulators and, on
 * CUDA, a stream per wavefield (see rtm.h, rtm_internal.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/operator.h"
#include "kernels/random_boundary.h"
#include "kernels/rtm_internal.h"
#include "kernels/time_dispersion.h"
#include "kernels/tti.h"
#include "kernels/wavelet.h"
#include "stream/error.h"

#define LOG_COMPONENT "rtm"
#include "stream/log.h"

static int free_now(const struct mig *m, size_t *fr)
{
    if (m->e->probe)
        return m->e->probe(m->e->probe_user, fr);
    size_t tot;
    return dev_mem(m->dev, fr, &tot);
}

/* The low-water mark of free device memory, looked at after every allocation (memory
 * only grows there).  The baseline must be read before the first allocation and only
 * once the device kind is known: read before m.gpu was set, it never was, and the
 * "peak" reported was always 0. */
void rtm_mem_begin(struct mig *m)
{
    m->measure = (m->gpu || m->e->probe) && free_now(m, &m->dev_free0) == 0;
    m->dev_free_min = m->dev_free0;
}

void rtm_note_peak(struct mig *m)
{
    size_t fr;
    if (m->measure && free_now(m, &fr) == 0 && fr < m->dev_free_min)
        m->dev_free_min = fr;
}

int rtm_alloc(struct mig *m, size_t bytes, void *out)
{
    int rc = dev_alloc(m->dev, bytes, (void **)out);
    if (rc == 0) {
        m->mem += bytes;
        rtm_note_peak(m);
    }
    return rc;
}

struct imaging_box rtm_box_of(const struct prop *s)
{
    const struct prop_layout *L = prop_layout(s);
    struct imaging_box b;
    for (int a = 0; a < 3; a++) {
        b.n[a] = L->n[a];
        b.off[a] = L->off[a];
    }
    b.pitch[0] = L->dim[0];
    b.pitch[1] = L->dim[1];
    return b;
}

static int points_for(struct prop *s, const double *xyz, size_t n, int interp, struct prop_points **out)
{
    int rc = prop_points_create(s, xyz, n, interp, out);
    if (rc < 0 && interp == PROP_INTERP_SINC) {
        /* the sinc support (4 nodes each side) may not fit a thin layer: go trilinear */
        log_debug("sinc support does not fit (%s); trilinear instead", err_msg());
        rc = prop_points_create(s, xyz, n, PROP_INTERP_TRILINEAR, out);
    }
    return rc;
}

/* Traces of the kept receivers resampled to the propagator dt: NT + 1 samples each.
 * A stop request is honoured between traces (-ECANCELED). */
static int resample_traces(const struct rtm_engine *e, const struct rtm_shot *shot, const int *keep, int nkeep,
                           int nt, double dt, float *out)
{
    bool same = fabs(shot->dt - dt) <= 1e-9 * dt;
    for (int r = 0; r < nkeep; r++) {
        if (rtm_stop_requested(e))
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

/* Decomposed: the part of the sub-volume's velocity V (whole interior N) that this
 * rank's subdomain G holds. */
static float *subdomain_velocity(const int n[3], const struct prop_grid *g, const float *v)
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

/* Decomposed, random strategy: this rank's part of the random-layer simulation.  Its
 * faces as rtm_random_params makes them, and the HALO faces' widths the whole random
 * grid's (they place the subdomain in it: its layers are wider than the CPML's). */
static void random_sub_params(const struct rtm_engine *e, const struct rtm_plan *pl, struct prop_params *out)
{
    struct prop_params whole;
    rtm_random_params(&pl->pp, e->p.random.width, &whole);
    rtm_random_params(&pl->sub, e->p.random.width, out);
    for (int f = 0; f < PROP_FACES; f++)
        if (out->grid.face[f] == PROP_FACE_HALO)
            out->grid.width[f] = whole.grid.width[f];
}

/* Decomposed: the points XYZ (N) on simulation S of the whole grid WHOLE as this rank's
 * nodes (sinc falls back to trilinear where its support does not fit, as points_for;
 * only then: that refusal is the whole grid's, the same on every rank, where another
 * failure of one rank must not leave it alone with other weights). */
static int nodes_for(struct mig *m, const struct prop_params *whole, struct prop *s, const double *xyz, size_t n,
                     int interp, struct rtm_nodes *out)
{
    const struct rtm_domain *d = m->e->dom;
    int rc = d->points(d->ctx, whole, s, xyz, n, interp, out);
    if (rc == -EINVAL && interp == PROP_INTERP_SINC) {
        log_debug("sinc support does not fit (%s); trilinear instead", err_msg());
        rc = d->points(d->ctx, whole, s, xyz, n, PROP_INTERP_TRILINEAR, out);
    }
    return rc;
}

/* The receiver simulation q, and the source simulation u: q's twin, or for the random
 * strategy its own with random-velocity layers instead of CPML (decomposed: this rank's
 * parts of them, and the points as its nodes). */
static int simulations(struct mig *m, const struct rtm_shot *shot, const struct rtm_plan *pl, double *t)
{
    struct rtm_engine *e = m->e;
    const struct rtm_domain *dom = e->dom;
    /* TTI's parameters (ignored by the acoustic physics): the sub-volumes, or the constants */
    struct prop_model model = {.vp = pl->vsub, .epsilon = pl->psub[0], .delta = pl->psub[1],
                               .theta = pl->psub[2], .phi = pl->psub[3], .epsilon0 = e->par0[0],
                               .delta0 = e->par0[1], .theta0 = e->par0[2], .phi0 = e->par0[3]};
    float *vdom = NULL, *pdom[4] = {NULL, NULL, NULL, NULL};
    if (dom && !(vdom = subdomain_velocity(pl->sv.n, &pl->sub.grid, pl->vsub)))
        return err_set(-ENOMEM, "shot %" PRId64 ": subdomain velocity", shot->id);
    if (dom)
        model.vp = vdom;
    /* TTI: this rank's part of each parameter volume too */
    const float **par[4] = {&model.epsilon, &model.delta, &model.theta, &model.phi};
    for (int k = 0; dom && k < 4; k++) {
        if (!pl->psub[k])
            continue;
        if (!(pdom[k] = subdomain_velocity(pl->sv.n, &pl->sub.grid, pl->psub[k]))) {
            free(vdom);
            for (int j = 0; j < k; j++)
                free(pdom[j]);
            return err_set(-ENOMEM, "shot %" PRId64 ": subdomain TTI parameters", shot->id);
        }
        *par[k] = pdom[k];
    }
    const struct prop_params *qp = dom ? &pl->sub : &pl->pp;
    int rc = 0;
    if (e->p.physics == PROP_TTI) {
        /* TTI: the model checked here once for both simulations (each would check the
         * same points again: 26 M of them in a 380 x 380 x 180 sub-volume) */
        struct tti_model tm;
        prop_tti_model(&model, &tm);
        const size_t cells = (size_t)qp->grid.n[0] * qp->grid.n[1] * qp->grid.n[2];
        double vqp = 0;
        size_t nless = 0;
        rc = tti_model_check(&tm, cells, qp->tti_sigma, &vqp, &nless);
        if (rc == 0) {
            tti_check_record(&model.tti_checked, &tm, cells, qp->tti_sigma, vqp, nless);
            rtm_stage_done(shot->id, "TTI model check", t);
        }
    }
    if (rc == 0)
        rc = prop_create(m->dev, qp, &model, &m->q);
    if (rc == 0 && dom)
        rc = dom->attach(dom->ctx, m->q);
    if (rc < 0) {
        free(vdom);
        for (int k = 0; k < 4; k++)
            free(pdom[k]);
        return rc;
    }
    rtm_stage_done(shot->id, "receiver simulation", t);
    m->mem += prop_memory_bytes(qp);
    rtm_note_peak(m);
    struct prop_params rp, rwhole;
    rtm_random_params(&pl->pp, e->p.random.width, &rwhole);
    if (pl->strategy == RTM_RANDOM) {
        if (dom)
            random_sub_params(e, pl, &rp);
        else
            rp = rwhole;
        rc = prop_create(m->dev, &rp, &model, &m->u);
        free(vdom);
        vdom = NULL;
        for (int k = 0; k < 4; k++)
            free(pdom[k]);
        if (rc < 0)
            return rc;
        m->mem += prop_memory_bytes(&rp);
        struct random_boundary rb = {
            .ramp = e->p.random.ramp,
            .range = e->p.random.range,
            .width = e->p.random.width,
            .seed = e->p.random.seed,
            .vstable = random_boundary_vstable_dims(e->p.order, pl->dt, e->d, e->n[1] == 1) * e->tti_vscale *
                       operator_vscale(e->p.op_kind, e->p.order, e->p.op_band),
            .vmin = e->vmin,
            .vnyquist = random_boundary_vnyquist(e->fmax, e->d),
        };
        if ((rc = prop_randomize_layers(m->u, &rb, (uint64_t)shot->id)) < 0)
            return err_prefix(rc, "shot %" PRId64, shot->id);
        prop_set_absorbing(m->u, false);
    } else {
        /* the same model as q: its velocity copied on the device */
        free(vdom);
        for (int k = 0; k < 4; k++)
            free(pdom[k]);
        if ((rc = prop_create_like(m->q, &m->u)) < 0)
            return rc;
        m->mem += prop_memory_bytes(qp);
    }
    if (dom && (rc = dom->attach(dom->ctx, m->u)) < 0)
        return rc;
    rtm_note_peak(m);
    rtm_stage_done(shot->id, "source simulation", t);
    /* on a 2D model the source sits on the line exactly (rtm_check_line let it within
     * float rounding of it) */
    double src[3] = {shot->src[0], rtm_is_2d(e) ? e->o[1] : shot->src[1], shot->src[2]};
    if (dom) {
        /* every rank the nodes it owns of the whole grid's supports; their amplitudes are
         * the whole grid's products (uploads) */
        m->src = NULL;
        if ((rc = nodes_for(m, pl->strategy == RTM_RANDOM ? &rwhole : &pl->pp, m->u, src, 1, e->p.src_interp,
                            &m->srcn)) < 0 ||
            (rc = nodes_for(m, &pl->pp, m->q, pl->rxyz, (size_t)pl->nkeep, e->p.rec_interp, &m->recn)) < 0)
            return err_prefix(rc, "shot %" PRId64, shot->id);
        m->src = m->srcn.pts;
        m->rec = m->recn.pts;
        m->srcn.pts = m->recn.pts = NULL; /* released with m->src, m->rec */
        return 0;
    }
    if ((rc = points_for(m->u, src, 1, e->p.src_interp, &m->src)) < 0 ||
        (rc = points_for(m->q, pl->rxyz, (size_t)pl->nkeep, e->p.rec_interp, &m->rec)) < 0)
        return err_prefix(rc, "shot %" PRId64, shot->id);
    return 0;
}

/* rtm_params.time_dispersion: both inputs are physical signals; the source and the
 * receiver wavefields are leapfrog runs.  Forward-transformed (FTDT), the wavelet and
 * the data carry at each simulated frequency w the physical frequency W(w) both
 * wavefields propagate at, so the zero-lag correlation images every frequency at its
 * true depth (docs/time-dispersion.md has the argument).  WHAT names the signals in
 * the log; their energy beyond the leapfrog's band is dropped and said so. */
static int tdt_inputs(const struct rtm_shot *shot, struct tdt *tdt, float *x, size_t n, size_t stride,
                      const char *what, double dt)
{
    double oob = 0;
    int rc = tdt_apply(tdt, TDT_FORWARD, x, n, stride, &oob);
    if (rc < 0)
        return err_prefix(rc, "shot %" PRId64, shot->id);
    if (oob > 1e-3)
        log_warn("shot %" PRId64 ": %.2g of the energy of %s lies above %.4g Hz, beyond what the leapfrog at "
                 "dt %.6g s carries: dropped by the time-dispersion correction", shot->id, oob, what,
                 tdt_band_limit(dt), dt);
    return 0;
}

/* Decomposed: the amplitudes of node set NS from the points' signals X (NT1 samples per
 * point), on the device into *OUT: node k's sample t is x[point k][t] * w[k], the very
 * float the whole grid's injection adds through that node (amp * (wx wy wz), the
 * injection's scale being 1), so each rank adds what the whole grid adds there. */
static int node_amplitudes(struct mig *m, const struct rtm_nodes *ns, const float *x, size_t nt1, float **out)
{
    const size_t cells = (ns->n ? ns->n : 1) * nt1;
    float *h = malloc(cells * sizeof *h);
    if (!h)
        return err_set(-ENOMEM, "rtm: amplitudes of %zu nodes", ns->n);
    for (size_t k = 0; k < ns->n; k++)
        for (size_t t = 0; t < nt1; t++)
            h[k * nt1 + t] = x[(size_t)ns->point[k] * nt1 + t] * ns->w[k];
    int rc = rtm_alloc(m, cells * sizeof *h, out);
    if (rc == 0)
        rc = dev_copy(m->dev, *out, h, cells * sizeof *h, DEV_H2D, NULL);
    free(h);
    return rc;
}

/* The wavelet and the kept traces at the propagator dt, on the device. */
static int uploads(struct mig *m, const struct rtm_shot *shot, const struct rtm_plan *pl, double *t)
{
    struct rtm_engine *e = m->e;
    size_t nt1 = (size_t)m->nt + 1;
    /* Every receiver kept, at the propagator's dt and length: the shot's own trace array
     * is what the device needs, so it goes up without a host copy (480 MB for the
     * reference shot of seislive-bench rtm).  Not when the traces are transformed. */
    const bool dom = e->dom != NULL;
    const bool direct = !dom && !e->p.time_dispersion && pl->nkeep == shot->ntr && (size_t)shot->ns == nt1 &&
                        fabs(shot->dt - pl->dt) <= 1e-9 * pl->dt;
    const size_t hostn = direct ? nt1 : (size_t)pl->nkeep * nt1;
    float *host = malloc((hostn > nt1 ? hostn : nt1) * sizeof(float));
    if (!host)
        return err_set(-ENOMEM, "shot %" PRId64 ": traces", shot->id);
    if (e->p.wavelet)
        wavelet_resample(e->p.wavelet, e->p.wavelet_n, e->wfile_dt, host, nt1, pl->dt);
    else
        wavelet_ricker_fill(host, nt1, pl->dt, e->p.f_peak);
    struct tdt *tdt = NULL;
    int rc = 0;
    if (e->p.time_dispersion && ((rc = tdt_create(nt1, pl->dt, &tdt)) < 0 ||
                                 (rc = tdt_inputs(shot, tdt, host, 1, nt1, "the wavelet", pl->dt)) < 0)) {
        tdt_destroy(tdt);
        free(host);
        return rc;
    }
    m->wav_stride = dom ? nt1 : 1;
    if (rc == 0 && dom)
        rc = node_amplitudes(m, &m->srcn, host, nt1, &m->wav);
    if (rc == 0 && !dom)
        rc = rtm_alloc(m, nt1 * sizeof(float), &m->wav);
    if (rc == 0 && !dom)
        rc = dev_copy(m->dev, m->wav, host, nt1 * sizeof(float), DEV_H2D, NULL);
    if (rc == 0) {
        rtm_stage_done(shot->id, "points and wavelet", t);
        if (!direct)
            rc = resample_traces(e, shot, pl->keep, pl->nkeep, m->nt, pl->dt, host);
        if (rc == 0 && tdt)
            rc = tdt_inputs(shot, tdt, host, (size_t)pl->nkeep, nt1, "the traces", pl->dt);
    }
    tdt_destroy(tdt);
    const size_t tb = (size_t)pl->nkeep * nt1 * sizeof(float);
    if (rc == 0 && dom)
        rc = node_amplitudes(m, &m->recn, host, nt1, &m->dat);
    else if (rc == 0 && (rc = rtm_alloc(m, tb, &m->dat)) == 0)
        rc = dev_copy(m->dev, m->dat, direct ? shot->data : host, tb, DEV_H2D, NULL);
    free(host);
    if (rc == 0)
        rtm_stage_done(shot->id, direct ? "traces uploaded" : "traces resampled and uploaded", t);
    return rc;
}

/* The imaging accumulators over the receiver simulation's interior, zeroed. */
static int accumulators(struct mig *m, const struct rtm_shot *shot)
{
    m->bq = rtm_box_of(m->q);
    m->cells = imaging_cells(&m->bq);
    m->bc = (struct imaging_box){{m->bq.n[0], m->bq.n[1], m->bq.n[2]}, {0, 0, 0}, {m->bq.n[0], m->bq.n[1]}};
    size_t fb = m->cells * sizeof(float);
    if (m->cb && !(m->cb_host = malloc(fb)))
        return err_set(-ENOMEM, "shot %" PRId64 ": wavefield copy", shot->id);
    int rc;
    if ((rc = rtm_alloc(m, fb, &m->acc.num)) < 0 || (rc = dev_zero(m->dev, m->acc.num, fb, NULL)) < 0)
        return rc;
    /* the illuminations only where something reads them: each is a read-modify-write of
     * an image-sized volume at every imaging step */
    if ((imaging_needs_source(m->cond) || m->keep_illum) &&
        ((rc = rtm_alloc(m, fb, &m->acc.ill_s)) < 0 || (rc = dev_zero(m->dev, m->acc.ill_s, fb, NULL)) < 0))
        return rc;
    if (imaging_needs_receiver(m->cond) &&
        ((rc = rtm_alloc(m, fb, &m->acc.ill_r)) < 0 || (rc = dev_zero(m->dev, m->acc.ill_r, fb, NULL)) < 0))
        return rc;
    return 0;
}

/* CUDA, boundary and random: the source and receiver wavefields on streams of their
 * own, so their steps overlap during the backward sweep (unless tuning.one_stream).
 * Everything queued so far (uploads, zeroing on the default stream) completes first. */
static int streams(struct mig *m, int strategy)
{
    if (!m->gpu || (strategy != RTM_BOUNDARY && strategy != RTM_RANDOM) || m->e->p.tuning.one_stream)
        return 0;
    int rc;
    if ((rc = dev_sync(m->dev)) < 0 || (rc = dev_stream_create(m->dev, &m->s_u)) < 0 ||
        (rc = dev_stream_create(m->dev, &m->s_q)) < 0 || (rc = dev_event_create(m->dev, &m->ev_u, false)) < 0 ||
        (rc = dev_event_create(m->dev, &m->ev_q, false)) < 0)
        return rc;
    if (m->e->p.tuning.u_ahead == RTM_U_AHEAD_ON &&
        ((rc = dev_event_create(m->dev, &m->ev_img[0], false)) < 0 ||
         (rc = dev_event_create(m->dev, &m->ev_img[1], false)) < 0))
        return rc;
    prop_set_stream(m->u, m->s_u);
    prop_set_stream(m->q, m->s_q);
    return 0;
}

/* Boundary: the strips' bytes, and with host strips the engine's page-locked store
 * (kept from the last shot when large enough: pinning tens of GiB takes seconds).  Any
 * other shot gives the engine's store back to the host. */
static int strip_store(struct mig *m, const struct rtm_plan *pl, int64_t id)
{
    struct rtm_engine *e = m->e;
    if (pl->strategy != RTM_BOUNDARY) {
        rtm_strip_host_free(&e->strip_host, &e->dev);
        return 0;
    }
    m->strips_host = pl->strips_host;
    m->strips_bytes = (size_t)m->nt * prop_strip_count(m->u) * sizeof(float);
    if (!m->strips_host) {
        rtm_strip_host_free(&e->strip_host, &e->dev);
        return 0;
    }
    double t0 = rtm_now_s();
    const size_t unit = prop_strip_count(m->u) * sizeof(float);
    int rc = rtm_strip_host_get(&e->strip_host, &e->dev, m->strips_bytes, e->p.tuning.strip_pin, unit);
    if (rc < 0) {
        m->store_failed = true;
        return err_prefix(rc, "shot %" PRId64, id);
    }
    m->strips = e->strip_host.p;
    /* not "the same pointer": a store freed and mapped again often gets its old address */
    const bool reuse = rc == 0;
    m->strips_alloc_s = reuse ? 0 : rtm_now_s() - t0;
    if (!reuse)
        log_info("shot %" PRId64 ": %.2f GiB of %s memory for boundary's strips in %.2f s", id,
                 m->strips_bytes / 1073741824.0, m->gpu ? "page-locked host" : "host", m->strips_alloc_s);
    return 0;
}

int rtm_setup(struct mig *m, const struct rtm_shot *shot, const struct rtm_plan *pl, double *t)
{
    m->nt = pl->nt;
    m->k = pl->k;
    m->cond = pl->cond;
    int rc;
    if ((rc = simulations(m, shot, pl, t)) < 0 || (rc = uploads(m, shot, pl, t)) < 0 ||
        (rc = accumulators(m, shot)) < 0 || (rc = streams(m, pl->strategy)) < 0 ||
        (rc = strip_store(m, pl, shot->id)) < 0)
        return rc;
    /* The migration starts from here. */
    if ((rc = dev_sync(m->dev)) < 0)
        return rc;
    rtm_stage_done(shot->id, "accumulators and streams", t);
    return 0;
}

void rtm_mig_release(struct mig *m)
{
    if (m->s_u || m->s_q)
        dev_sync(m->dev);
    prop_points_destroy(m->u, m->src);
    prop_points_destroy(m->q, m->rec);
    free(m->srcn.point);
    free(m->srcn.w);
    free(m->recn.point);
    free(m->recn.w);
    if (m->srcn.pts) /* a setup that failed between the node sets and m->src, m->rec */
        prop_points_destroy(m->u, m->srcn.pts);
    if (m->recn.pts)
        prop_points_destroy(m->q, m->recn.pts);
    prop_destroy(m->u);
    prop_destroy(m->q);
    dev_free(m->dev, m->wav);
    dev_free(m->dev, m->dat);
    dev_free(m->dev, m->acc.num);
    dev_free(m->dev, m->acc.ill_s);
    dev_free(m->dev, m->acc.ill_r);
    free(m->cb_host); /* rtm_setup's, beside the device buffers */
    m->cb_host = NULL;
    dev_stream_destroy(m->dev, m->s_u);
    dev_stream_destroy(m->dev, m->s_q);
    dev_event_destroy(m->dev, m->ev_u);
    dev_event_destroy(m->dev, m->ev_q);
    dev_event_destroy(m->dev, m->ev_img[0]);
    dev_event_destroy(m->dev, m->ev_img[1]);
}
