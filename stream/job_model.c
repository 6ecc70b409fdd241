/* job_model — forward modeling: `seislive model -c FILE -o OUT.segy` and
 * `[job] kind = "model"`.  Loads [model], builds the source wavelet, resolves a stable
 * dt, then for every [acquisition] source runs the propagator for [propagator] t_max and
 * records every receiver (sinc interpolation, resampled to [acquisition] dt_out) into one
 * SEG-Y file (io/segy_write).  Optional wavefield snapshots every snapshot_every steps
 * (raw float32 of the interior grid, x fastest, into snapshot_dir).
 *
 * The simulation runs through the propagator interface (kernels/propagator.h): the job
 * fills struct prop_params from the config ([propagator] physics, tti_sigma; the TTI
 * parameters of io/model.h go into struct prop_model) and never sees which physics runs.  A model
 * one cell across (n = [nx, 1, nz]) runs as 2D (prop_params_init gives NONE faces on y:
 * no y layers, a line source): its sources and receivers must lie on the line y = o[1]. */
#define LOG_COMPONENT "model-job"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "conf/schema.h"
#include "io/model.h"
#include "io/segy_write.h"
#include "kernels/device.h"
#include "kernels/operator.h"
#include "kernels/propagator.h"
#include "kernels/time_dispersion.h"
#include "kernels/wavelet.h"
#include "stream/decompose_model.h"
#include "stream/decompose_report.h"
#include "stream/error.h"
#include "stream/job.h"
#include "stream/log.h"
#include "stream/mpi.h"
#include "stream/signals.h"
#include "stream/stability_conf.h"

/* Traces resampled to dt_out in parallel this many at a time (a bounded buffer whatever
 * the receiver count), then written in order. */
#define OUT_CHUNK 256

struct plan {
    struct sl_model model;
    float *wavelet;      /* nt samples at dt */
    double fmax, dt, dt_max, ppw, dt_out;
    double band; /* the operator's design band, "auto" resolved (stability_band_model) */
    int nt, ns_out;
    bool ps;             /* output interval in picoseconds (GPR) */
    int interval;        /* SEG-Y sample interval, us (or ps) */
    double *rec;         /* nrec x 3 */
    size_t nrec;
    struct prop_params pp;
    bool is2d;           /* n[1] == 1: NONE faces on y */
    struct tdt *tdt;     /* [propagator] time_dispersion = "correct": the transforms for
                            nt + 1 samples at dt (NULL: none) */
};

static void plan_free(struct plan *p)
{
    model_free(&p->model);
    tdt_destroy(p->tdt);
    free(p->wavelet);
    free(p->rec);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* A 2D model (n[1] == 1) is the vertical plane y = o[1]: every source and receiver must
 * be on it.  A point off the plane is refused by name here: the 2D propagator ignores a
 * point's y (the model does not vary along it), so a receiver 10 m off the line would
 * otherwise be recorded on the line without a word.  The tolerance is a millionth of a
 * cell: coordinates written with a few decimals still match. */
static int check_on_line(const struct sl_config *cfg, const struct plan *pl)
{
    const double y0 = pl->model.o[1], tol = 1e-6 * fmax(pl->model.d[1], 1.0);
    char where[512];
    for (size_t r = 0; r < pl->nrec; r++) {
        double y = pl->rec[3 * r + 1];
        if (fabs(y - y0) > tol) {
            if (cfg->acquisition.rx_count[0] > 0 && cfg->acquisition.rx_count[1] > 0)
                return err_set(-EINVAL, "%s: [acquisition] receiver %zu of the rx_count grid at y = %g m is off "
                               "the line of this 2D model ([model] n[1] = 1: every source and receiver at "
                               "y = o[1] = %g m; rx_count[1] = 1 and rx_origin[1] = %g)",
                               config_where(cfg, "acquisition.rx_origin", where, sizeof where), r + 1, y, y0, y0);
            return err_set(-EINVAL, "%s: [acquisition] receivers[%zu] at y = %g m is off the line of this 2D "
                           "model ([model] n[1] = 1: every source and receiver at y = o[1] = %g m)",
                           config_where(cfg, "acquisition.receivers", where, sizeof where), r, y, y0);
        }
    }
    const struct point_list *src = &cfg->acquisition.sources;
    for (size_t i = 0; i < src->n; i++)
        if (fabs(src->p[i][1] - y0) > tol)
            return err_set(-EINVAL, "%s: [acquisition] sources[%zu] at y = %g m is off the line of this 2D "
                           "model ([model] n[1] = 1: every source and receiver at y = o[1] = %g m)",
                           config_where(cfg, "acquisition.sources", where, sizeof where), i, src->p[i][1],
                           y0);
    return 0;
}

/* [propagator] time_dispersion = "correct" (docs/time-dispersion.md): the wavelet goes
 * into the simulation forward-transformed (FTDT), so that the inverse transform of the
 * traces (ITDT, after each shot) gives the true response to the wavelet itself.  A
 * wavelet reaching the leapfrog's band limit 1 / (pi dt) cannot be corrected: refused
 * with both numbers. */
static int time_dispersion_plan(const struct sl_config *cfg, struct plan *pl)
{
    char where[512];
    const double lim = tdt_band_limit(pl->dt);
    if (pl->fmax >= lim)
        return err_set(-EINVAL, "%s: [propagator] time_dispersion = \"correct\": the wavelet reaches %.4g Hz, "
                       "beyond the %.4g Hz (1 / (pi dt), dt %.6g s) up to which the leapfrog's time dispersion "
                       "can be undone; take a smaller dt or a lower f_peak",
                       config_where(cfg, "propagator.time_dispersion", where, sizeof where), pl->fmax, lim, pl->dt);
    int rc = tdt_create((size_t)pl->nt + 1, pl->dt, &pl->tdt);
    if (rc < 0)
        return rc;
    double oob = 0;
    if ((rc = tdt_apply(pl->tdt, TDT_FORWARD, pl->wavelet, 1, (size_t)pl->nt + 1, &oob)) < 0)
        return rc;
    log_info("time dispersion: corrected (wavelet up to %.4g Hz, band limit %.4g Hz; %.2g of its energy beyond "
             "it, dropped)", pl->fmax, lim, oob);
    return 0;
}

static int make_plan(const struct sl_config *cfg, struct plan *pl)
{
    memset(pl, 0, sizeof *pl);
    const struct propagator_conf *pc = &cfg->propagator;
    const struct acquisition_conf *ac = &cfg->acquisition;
    int rc = model_load(cfg, &pl->model);
    if (rc < 0)
        return rc;
    float *user = NULL;
    size_t nuser = 0;
    double udt = 0;
    if (pc->wavelet == WAVELET_FILE) {
        if ((rc = wavelet_read(pc->wavelet_file, &user, &nuser)) < 0)
            goto fail;
        udt = pc->wavelet_dt > 0 ? pc->wavelet_dt : pc->dt; /* 0: sampled at the automatic dt */
        pl->fmax = udt > 0 ? wavelet_fmax(user, nuser, udt) : 0;
    } else {
        pl->fmax = wavelet_ricker_fmax(pc->f_peak);
    }
    /* operator_band = "auto": designed for this wavelet's fmax and the model's slowest wave,
     * before dt (the dt limit is the designed operator's); a wavelet file sampled at the
     * propagator's dt has no fmax yet: stability_band_model names the key */
    if ((rc = stability_band_model(cfg, &pl->model, pl->fmax, &pl->band)) < 0)
        goto fail;
    if (pc->operator_band == CONF_AUTO && pc->op != OPERATOR_TAYLOR)
        log_info("operator band auto: %.4f of Nyquist (the %s operator, order %d, designed for fmax %.4g Hz)",
                 pl->band, operator_name(pc->op), pc->order, pl->fmax);
    /* TTI: the limit of tti_dt_max_model over the model's points (stability_conf.h) */
    if ((rc = stability_resolve_model(cfg, &pl->model, pl->fmax > 0 ? pl->fmax : 1.0, &pl->dt, &pl->dt_max,
                                      &pl->ppw)) < 0)
        goto fail;
    if (pc->wavelet == WAVELET_FILE && udt == 0) {
        udt = pl->dt; /* samples given at the propagator dt */
        pl->fmax = wavelet_fmax(user, nuser, udt);
    }
    pl->nt = (int)ceil(pc->t_max / pl->dt - 1e-9);
    pl->dt_out = ac->dt_out > 0 ? ac->dt_out : pl->dt;
    /* SEG-Y holds the interval as an integer (microseconds; picoseconds for GPR
     * sampling below 1 us): resample to exactly what the header will say. */
    pl->ps = pl->dt_out < 1e-6;
    pl->interval = (int)lround(pl->dt_out * (pl->ps ? 1e12 : 1e6));
    if (pl->interval < 1)
        pl->interval = 1;
    double asked = pl->dt_out;
    pl->dt_out = pl->interval * (pl->ps ? 1e-12 : 1e-6);
    if (fabs(asked - pl->dt_out) > 1e-9 * asked) {
        char where[512];
        if (ac->dt_out > 0)
            log_warn("%s: [acquisition] dt_out = %.9g s is not a whole number of %s: traces written at %d %s "
                     "(%.9g s) instead, resampled, as the SEG-Y header says",
                     config_where(cfg, "acquisition.dt_out", where, sizeof where), asked,
                     pl->ps ? "picoseconds" : "microseconds", pl->interval, pl->ps ? "ps" : "us", pl->dt_out);
        else
            log_info("traces resampled from the propagator's dt %.9g s to %d %s, the whole-unit SEG-Y "
                     "interval (set [acquisition] dt_out to choose it)", asked, pl->interval,
                     pl->ps ? "ps" : "us");
    }
    pl->ns_out = (int)floor(pc->t_max / pl->dt_out + 1e-9) + 1;
    pl->wavelet = calloc((size_t)pl->nt + 1, sizeof(float));
    if (!pl->wavelet) {
        rc = err_set(-ENOMEM, "model: out of memory");
        goto fail;
    }
    if (user)
        wavelet_resample(user, nuser, udt, pl->wavelet, (size_t)pl->nt + 1, pl->dt);
    else
        wavelet_ricker_fill(pl->wavelet, (size_t)pl->nt + 1, pl->dt, pc->f_peak);
    if (pc->time_dispersion == TIME_DISPERSION_CORRECT && (rc = time_dispersion_plan(cfg, pl)) < 0)
        goto fail;
    /* Receivers: the explicit list, or the x-y grid. */
    if (ac->rx_count[0] > 0 && ac->rx_count[1] > 0) {
        pl->nrec = (size_t)ac->rx_count[0] * ac->rx_count[1];
        pl->rec = malloc(pl->nrec * 3 * sizeof(double));
        if (!pl->rec) {
            rc = err_set(-ENOMEM, "model: out of memory");
            goto fail;
        }
        for (int j = 0; j < ac->rx_count[1]; j++)
            for (int i = 0; i < ac->rx_count[0]; i++) {
                double *r = pl->rec + 3 * ((size_t)j * ac->rx_count[0] + i);
                r[0] = ac->rx_origin[0] + i * ac->rx_step[0];
                r[1] = ac->rx_origin[1] + j * ac->rx_step[1];
                r[2] = ac->rx_origin[2];
            }
    } else {
        pl->nrec = ac->receivers.n;
        pl->rec = malloc((pl->nrec ? pl->nrec : 1) * 3 * sizeof(double));
        if (!pl->rec) {
            rc = err_set(-ENOMEM, "model: out of memory");
            goto fail;
        }
        memcpy(pl->rec, ac->receivers.p, pl->nrec * 3 * sizeof(double));
    }
    char where[512];
    if (pl->nrec == 0) {
        rc = err_set(-EINVAL, "%s: [acquisition] no receivers: give receivers or rx_count",
                     config_where(cfg, "acquisition.receivers", where, sizeof where));
        goto fail;
    }
    if (ac->sources.n == 0) {
        rc = err_set(-EINVAL, "%s: [acquisition] sources: no sources to model",
                     config_where(cfg, "acquisition.sources", where, sizeof where));
        goto fail;
    }
    pl->is2d = pl->model.n[1] == 1;
    if (pl->is2d && (rc = check_on_line(cfg, pl)) < 0)
        goto fail;
    /* The same parameters the wave_* calls took before the propagator interface (CPML
     * faces of pml_width, the free surface instead of the top layer): 3D results stay
     * bitwise the same.  In 2D the y faces are NONE and their widths unused. */
    struct prop_params *pp = &pl->pp;
    prop_params_init(pp, pl->model.n, pl->model.d, pl->model.o, pl->dt, 0);
    for (int f = 0; f < PROP_FACES; f++)
        if (pp->grid.face[f] == PROP_FACE_CPML)
            pp->grid.width[f] = pc->pml_width[f];
    if (pc->free_surface) {
        pp->grid.face[4] = PROP_FACE_FREE; /* the surface replaces the top absorbing layer */
        pp->grid.width[4] = 0;
    }
    pp->op.kind = pc->op;
    pp->op.order = pc->order;
    pp->op.band = pl->band;
    pp->pml_reflection = pc->pml_reflection;
    pp->f_ref = pc->wavelet == WAVELET_RICKER ? pc->f_peak : pl->fmax / 2.5;
    pp->tuning.kernel = pc->kernel;
    pp->physics = pc->physics == PHYSICS_TTI ? PROP_TTI : PROP_ACOUSTIC;
    pp->tti_sigma = pc->tti_sigma;
    pp->cpml_memory = pc->cpml_memory;
    pp->pml_degree = pc->pml_degree;
    if ((rc = prop_check(pp)) < 0)
        goto fail;
    free(user);
    return 0;
fail:
    free(user);
    plan_free(pl);
    return rc;
}

static int write_snapshot(const struct sl_config *cfg, struct prop *s, struct dd_model *dd, int shot, int step,
                          float *buf)
{
    const struct prop_layout *L = prop_layout(s);
    int rc = dd ? dd_model_field(dd, buf) : prop_copy_out(s, false, buf);
    if (rc < 0 || sl_mpi_rank() != 0) /* rank 0 writes outputs */
        return rc;
    const struct prop_grid *g = &prop_params_of(s)->grid;
    const int *n = dd ? g->global_n : L->n;
    char path[4096];
    mkdir(cfg->propagator.snapshot_dir, 0755);
    snprintf(path, sizeof path, "%s/shot%04d_step%06d_%dx%dx%d.f32", cfg->propagator.snapshot_dir,
             shot, step, n[0], n[1], n[2]);
    FILE *f = fopen(path, "wb");
    if (!f)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    size_t nn = (size_t)n[0] * n[1] * n[2];
    size_t w = fwrite(buf, sizeof(float), nn, f);
    if (fclose(f) != 0 || w != nn)
        return err_set(-EIO, "%s: write failed", path);
    return 0;
}

static int model_run(const struct sl_config *cfg, const struct sl_device *dev, const char *output)
{
    struct plan pl;
    int rc = make_plan(cfg, &pl);
    if (rc < 0)
        return rc;
    char outbuf[4096];
    if (!output) {
        snprintf(outbuf, sizeof outbuf, "%s/%s.segy", cfg->output.dir, cfg->job.name);
        output = outbuf;
    }
    const size_t nsrc = cfg->acquisition.sources.n;
    log_info("model %dx%dx%d%s, v %g..%g m/s; dt %.6g s (stable limit %.6g), %d steps, %.1f points "
             "per wavelength at %.3g Hz; %zu sources x %zu receivers -> %s",
             pl.model.n[0], pl.model.n[1], pl.model.n[2], pl.is2d ? " (2D)" : "", pl.model.vmin, pl.model.vmax, pl.dt,
             pl.dt_max, pl.nt, pl.ppw, pl.fmax, nsrc, pl.nrec, output);
    struct prop *s = NULL;
    struct dd_model *dd = NULL; /* [runtime] decompose = "domain": this rank's part (stream/decompose_model.h) */
    struct prop_points *rp = NULL, *sp = NULL;
    struct segy_writer *w = NULL;
    char part[4200] = "";
    bool stopped = false;
    float *tr = NULL, *out = NULL, *snap = NULL;
    struct wavelet_resampler rs = {0};
    /* On a GPU the wavelet and the traces stay in device memory for the whole shot: a
     * host buffer would cost a copy and a synchronisation in every step. */
    const bool on_gpu = dev_is_gpu(dev);
    const unsigned bufs = on_gpu ? PROP_BUF_DEVICE : 0u;
    float *gwav = NULL, *gtr = NULL; /* device copies (GPU only) */
    float *gout = NULL;              /* one chunk of resampled traces (gpu_post, below) */
    struct prop_model pm;
    stability_prop_model(&pl.model, &pm);
    if (cfg->runtime.decompose == DECOMPOSE_DOMAIN) {
        if ((rc = dd_model_open(cfg, dev, &pl.pp, &pm, pl.rec, pl.nrec, pl.nt, &s, &dd)) < 0)
            goto done;
    } else if ((rc = prop_create(dev, &pl.pp, &pm, &s)) < 0) {
        goto done;
    }
    if (!dd && (rc = prop_points_create(s, pl.rec, pl.nrec, PROP_INTERP_SINC, &rp)) < 0) {
        err_prefix(rc, "[acquisition] receivers");
        goto done;
    }
    /* SEG-Y stores the interval in microseconds; GPR sampling (below 1 us) is written in
     * picoseconds, and the textual header says so. */
    const bool ps = pl.ps;
    const int interval = pl.interval;
    char text[1024];
    snprintf(text, sizeof text,
             "seislive model: %s finite differences, order %d%s\n"
             "model %d x %d x %d, spacing %g %g %g m, origin %g %g %g m\n"
             "%zu shots x %zu receivers, %d samples, interval %d %s\n"
             "coordinates and depths in m scaled by -100; offset in m",
             pl.pp.physics == PROP_TTI ? "TTI (pseudo-acoustic, p recorded)" : "acoustic", pl.pp.op.order, pl.is2d ? ", 2D (line sources, the plane y = o[1])" : "", pl.model.n[0], pl.model.n[1], pl.model.n[2], pl.model.d[0], pl.model.d[1],
             pl.model.d[2], pl.model.o[0], pl.model.o[1], pl.model.o[2], nsrc, pl.nrec, pl.ns_out,
             interval, ps ? "PICOSECONDS (GPR)" : "microseconds");
    if (ps)
        log_warn("output interval %g s is below 1 us: SEG-Y sample interval written in picoseconds",
                 pl.dt_out);
    /* The traces go to OUTPUT.part, renamed to OUTPUT only when every shot is in: a run
     * stopped or failed half way never leaves a short file under the name a user (or
     * seislive-gen --reuse) takes for the result. */
    snprintf(part, sizeof part, "%s.part", output);
    if (sl_mpi_rank() == 0 && (rc = segy_writer_open(part, pl.ns_out, interval, -100, text, &w)) < 0)
        goto done;
    /* On one GPU the traces are transformed and resampled there (kernels/time_dispersion.cu,
     * kernels/wavelet.cu) and only the resampled chunks come down: on the H100 machine the
     * host's transforms, resampling and the download of 10 000 traces took about as long
     * as stepping a small shot (docs/time-dispersion.md).  Subdomains gather the traces on
     * rank 0's host and process them there. */
    const bool gpu_post = on_gpu && !dd;
    /* the whole shot's traces on the host: the CPU's recording, or what a GPU job hands to
     * the host's transforms (subdomains); not needed where gpu_post keeps them on the device */
    if (!gpu_post)
        tr = malloc(pl.nrec * ((size_t)pl.nt + 1) * sizeof *tr);
    /* the traces are resampled OUT_CHUNK at a time, in parallel, then encoded (in parallel)
     * and written as one block */
    const size_t chunk = pl.nrec < OUT_CHUNK ? (pl.nrec ? pl.nrec : 1) : OUT_CHUNK;
    out = malloc(chunk * (size_t)pl.ns_out * sizeof *out);
    if (cfg->propagator.snapshot_every > 0)
        snap = malloc((size_t)pl.model.n[0] * pl.model.n[1] * pl.model.n[2] * sizeof *snap);
    if ((!gpu_post && !tr) || !out || (cfg->propagator.snapshot_every > 0 && !snap)) {
        rc = err_set(-ENOMEM, "model: out of memory for %zu traces", pl.nrec);
        goto done;
    }
    if ((rc = wavelet_resampler_init(&rs, (size_t)pl.nt + 1, pl.dt, (size_t)pl.ns_out, pl.dt_out)) < 0)
        goto done;
    const size_t tr_bytes = pl.nrec * ((size_t)pl.nt + 1) * sizeof *tr;
    if (on_gpu &&
        ((rc = dev_alloc(dev, (size_t)pl.nt * sizeof *gwav, (void **)&gwav)) < 0 ||
         (rc = dev_copy(dev, gwav, pl.wavelet, (size_t)pl.nt * sizeof *gwav, DEV_H2D, NULL)) < 0 ||
         (rc = dev_alloc(dev, tr_bytes, (void **)&gtr)) < 0))
        goto done;
    if (gpu_post && (rc = dev_alloc(dev, chunk * (size_t)pl.ns_out * sizeof *gout, (void **)&gout)) < 0)
        goto done;
    const float *wav = on_gpu ? gwav : pl.wavelet;
    float *dtr = on_gpu ? gtr : tr;
    const double t_start = now_s();
    double t_log = t_start;
    const long long total = (long long)nsrc * pl.nt;
    for (size_t is = 0; is < nsrc && rc == 0; is++) {
        const double *src = cfg->acquisition.sources.p[is];
        const double t_shot = now_s();
        prop_points_destroy(s, sp);
        sp = NULL;
        if (dd ? (rc = dd_model_source(dd, src)) < 0 : (rc = prop_points_create(s, src, 1, PROP_INTERP_SINC, &sp)) < 0) {
            err_prefix(rc, "[acquisition] sources[%zu]", is);
            break;
        }
        if ((rc = prop_reset(s)) < 0)
            break;
        if ((rc = dev_zero(dev, dtr, tr_bytes, NULL)) < 0) /* sample 0 of every trace */
            break;
        for (int it = 0; it < pl.nt; it++) {
            if (dd ? dd_model_stop(dd, it) : signals_stop_requested()) {
                log_warn("stop requested: abandoning shot %zu at step %d of %d", is + 1, it, pl.nt);
                stopped = true;
                goto done;
            }
            if (dd ? (rc = dd_model_step(dd, pl.wavelet + it, it)) < 0
                   : ((rc = prop_step(s)) < 0 ||
                      (rc = prop_inject(s, sp, wav + it, 1, 1.0f, PROP_INJECT_PHYSICAL | bufs)) < 0 ||
                      (rc = prop_sample(s, rp, dtr + it + 1, (size_t)pl.nt + 1, bufs)) < 0))
                goto done;
            int se = cfg->propagator.snapshot_every;
            if (se > 0 && (it + 1) % se == 0 &&
                (rc = write_snapshot(cfg, s, dd, (int)is + 1, it + 1, snap)) < 0)
                goto done;
            double t = now_s();
            if (t - t_log >= 5.0) {
                long long done_steps = (long long)is * pl.nt + it + 1;
                double rate = done_steps / (t - t_start);
                log_info("shot %zu/%zu: step %d/%d; %lld of %lld steps done, %.0f s left",
                         is + 1, nsrc, it + 1, pl.nt, done_steps, total, (total - done_steps) / rate);
                t_log = t;
            }
        }
        if (on_gpu && (rc = dev_sync(dev)) < 0)
            break;
        if (on_gpu && !gpu_post && (rc = dev_copy(dev, tr, dtr, tr_bytes, DEV_D2H, NULL)) < 0)
            break;
        const double t_steps = now_s();
        if (dd && (rc = dd_model_traces(dd, tr)) < 0) /* onto rank 0, which alone writes */
            break;
        const double t_tdt = now_s();
        double t_resample = 0, t_write = 0;
        if (pl.tdt && w) {
            /* the traces as the physics records them (time_dispersion_plan) */
            double oob = 0;
            if ((rc = gpu_post ? tdt_apply_device(pl.tdt, TDT_INVERSE, dtr, pl.nrec, (size_t)pl.nt + 1, &oob)
                               : tdt_apply(pl.tdt, TDT_INVERSE, tr, pl.nrec, (size_t)pl.nt + 1, &oob)) < 0)
                break;
            if (oob > 1e-3)
                log_warn("shot %zu: %.2g of a trace's energy lies where the inverse time-dispersion transform "
                         "delays it past its window (above %.4g Hz): dropped", is + 1, oob,
                         acos(0.25) / (M_PI * pl.dt));
        }
        const double t_tdt_done = now_s();
        for (size_t r0 = 0; r0 < pl.nrec && rc == 0 && w; r0 += chunk) {
            const size_t nb = pl.nrec - r0 < chunk ? pl.nrec - r0 : chunk;
            struct segy_trace_info info[OUT_CHUNK];
            const double t0 = now_s();
            if (gpu_post) {
                if ((rc = wavelet_resampler_apply_device(&rs, dtr + r0 * (pl.nt + 1), (size_t)pl.nt + 1, gout,
                                                         (size_t)pl.ns_out, nb)) < 0 ||
                    (rc = dev_copy(dev, out, gout, nb * (size_t)pl.ns_out * sizeof *out, DEV_D2H, NULL)) < 0)
                    break;
            } else {
#pragma omp parallel for schedule(static)
                for (size_t b = 0; b < nb; b++)
                    wavelet_resampler_apply(&rs, tr + (r0 + b) * (pl.nt + 1), out + b * (size_t)pl.ns_out);
            }
            const double t1 = now_s();
            t_resample += t1 - t0;
            for (size_t b = 0; b < nb; b++) {
                const size_t r = r0 + b;
                info[b] = (struct segy_trace_info){.shot = (int32_t)is + 1, .channel = (int32_t)r + 1};
                memcpy(info[b].src, src, sizeof info[b].src);
                memcpy(info[b].rec, pl.rec + 3 * r, sizeof info[b].rec);
            }
            rc = segy_writer_traces(w, info, out, (size_t)pl.ns_out, (int)nb);
            t_write += now_s() - t1;
        }
        const double t_done = now_s();
        log_info("shot %zu/%zu done (%.3f s elapsed; this shot %.3f s: %.3f s stepping and recording, %.3f s "
                 "the traces' transforms, resampling and writing: %.3f + %.3f + %.3f)", is + 1, nsrc,
                 t_done - t_start, t_done - t_shot, t_steps - t_shot, t_done - t_steps, t_tdt_done - t_tdt, t_resample,
                 t_write);
    }
done:;
    const int shots_done = w && pl.nrec ? segy_writer_count(w) / (int)pl.nrec : 0;
    int rc2 = w ? segy_writer_close(w) : 0;
    if (rc == 0)
        rc = rc2;
    if (w && rc == 0 && !stopped && rename(part, output) < 0)
        rc = err_set(-errno, "rename %s -> %s: %s", part, output, strerror(errno));
    else if (w && rc == 0 && stopped)
        rc = err_set(-ECANCELED, "stopped by signal: %d of %zu shots complete, kept in %s; %s not "
                     "written", shots_done, nsrc, part, output);
    else if (w && rc < 0)
        err_prefix(rc, "%d of %zu shots complete, kept in %s; %s not written", shots_done, nsrc,
                   part, output);
    prop_points_destroy(s, sp);
    prop_points_destroy(s, rp);
    dd_model_close(dd);
    prop_destroy(s);
    dev_free(dev, gwav);
    dev_free(dev, gtr);
    dev_free(dev, gout);
    free(tr);
    free(out);
    wavelet_resampler_free(&rs);
    free(snap);
    plan_free(&pl);
    return rc;
}

static int model_report(const struct sl_config *cfg, FILE *out)
{
    struct plan pl;
    int rc = make_plan(cfg, &pl);
    if (rc < 0)
        return rc;
    if (out) {
        fprintf(out, "# model job\n");
        fprintf(out, "model: %d x %d x %d points%s, v %g..%g m/s\n", pl.model.n[0], pl.model.n[1],
                pl.model.n[2], pl.is2d ? " (2D: the line y = o[1], no y layers)" : "", pl.model.vmin,
                pl.model.vmax);
        fprintf(out, "stable dt: %.6g s (order %d); dt used: %.6g s; %d steps for t_max %g s\n",
                pl.dt_max, pl.pp.op.order, pl.dt, pl.nt, cfg->propagator.t_max);
        fprintf(out, "points per wavelength at %.4g Hz: %.2f (ppw_min %g)\n", pl.fmax, pl.ppw,
                cfg->propagator.ppw_min);
        fprintf(out, "propagator memory: %.1f MiB\n", prop_memory_bytes(&pl.pp) / 1048576.0);
        if (pl.tdt)
            fprintf(out, "time dispersion: corrected (wavelet forward-transformed, traces inverse-transformed; "
                    "band limit %.4g Hz, wavelet fmax %.4g Hz)\n", tdt_band_limit(pl.dt), pl.fmax);
        else
            fprintf(out, "time dispersion: not corrected ([propagator] time_dispersion = \"none\")\n");
        fprintf(out, "shots: %zu, receivers: %zu, output samples: %d at %.6g s\n",
                cfg->acquisition.sources.n, pl.nrec, pl.ns_out, pl.dt_out);
    }
    /* [runtime] decompose = "domain": subdomains, halo bytes and memory per rank */
    if (out && (rc = dd_report(cfg, &pl.pp, pl.rec, pl.nrec, pl.nt, (size_t)pl.model.n[0] * pl.model.n[1] * pl.model.n[2] * sizeof(float), out)) < 0) {
        plan_free(&pl);
        return rc;
    }
    plan_free(&pl);
    return 0;
}

const struct job_ops job_model_ops = {"model", model_run, model_report};
