/* job_rtm — shots through the runtime into an image stack (see job_rtm.h). */
#define LOG_COMPONENT "rtm-job"
#include "stream/job_rtm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "io/image_files.h"
#include "io/model.h"
#include "io/picture.h"
#include "io/wire.h"
#include "kernels/device.h"
#include "kernels/rtm.h"
#include "kernels/rtm_memory.h"
#include "stream/decompose_report.h"
#include "stream/decompose_rtm.h"
#include "stream/error.h"
#include "stream/log.h"
#include "stream/job_rtm_report.h"
#include "stream/mpi.h"
#include "stream/pipeline.h"
#include "stream/rtm_config.h"
#include "stream/signals.h"
#include "stream/shots.h"
#include "stream/sources.h"
#include "stream/state.h"

struct shot_ctx {
    const struct shot_job *j;
    const struct sl_config *cfg;
    struct image_stack stack;
    int64_t stacked_now;     /* shots stacked in this run */
    double t_first;          /* monotonic s: the first shot of this run began */
    const struct pipeline_conf *pc;  /* decompose = "shots": its publish and checkpoint cadence */
    int64_t since_pub, since_ckpt;   /* ... counted in shots stacked */
    double t_pub, t_ckpt;
};

static int shots_grew(struct shot_ctx *c, const struct pipeline_io *io, int n);

static bool shot_skip(void *ctx, const struct slot_hdr *h)
{
    struct shot_ctx *c = ctx;
    /* Only the same shot again (same content digest) is a quiet replay; a different
     * shot under a stacked id goes on to shot_process, which refuses it loudly. */
    return h->kind == SLOT_SHOT &&
           image_stack_check(&c->stack, h->id, shot_digest(&h->shot), h->origin) == 1;
}

static int shot_process(void *ctx, const struct pipeline_unit *u, bool snapshot)
{
    struct shot_ctx *c = ctx;
    (void)snapshot; /* the stack lives on the host: it is its own snapshot */
    if (u->hdr->kind != SLOT_SHOT)
        return err_set(-EINVAL, "%s: a trace block reached the rtm job (it takes shots)",
                       u->hdr->origin);
    uint64_t digest = shot_digest(&u->hdr->shot);
    if (image_stack_check(&c->stack, u->hdr->id, digest, u->hdr->origin) < 0) {
        log_error("%s", err_msg()); /* never a silent skip: counted as rejected too */
        return -EEXIST;
    }
    if (c->j->submit) { /* decompose = "shots": stacked when a rank returns it (stream/shots.h) */
        int n = c->j->submit(c->j->ctx, &u->hdr->shot, digest, u->hdr->origin, &c->stack);
        return n < 0 ? n : shots_grew(c, pipeline_worker_io(), n);
    }
    if (c->stacked_now == 0)
        c->t_first = now_s();
    int rc = c->j->migrate(c->j->ctx, &u->hdr->shot, &c->stack);
    if (rc == 0) {
        image_stack_set_source(&c->stack, u->hdr->id, digest, u->hdr->origin);
        c->stacked_now++;
    }
    return rc;
}

/* Render the stack (optionally Laplacian-filtered) into a malloc'd buffer. */
static float *render(struct shot_ctx *c)
{
    float *v = malloc(image_stack_cells(&c->stack) * sizeof(float));
    if (v && image_stack_render(&c->stack, c->j->laplacian, v) < 0) {
        free(v);
        return NULL;
    }
    return v;
}

static int publish_image(struct shot_ctx *c, const struct pipeline_io *io, bool final, double t_arrive)
{
    if (!io->pub)
        return 0;
    float *v = render(c);
    if (!v)
        return err_prefix(-ENOMEM, "rendering the image");
    struct wire_volume_hdr h = {.units = c->stack.shots, .final = final};
    for (int k = 0; k < 3; k++) {
        h.n[k] = c->stack.n[k];
        h.d[k] = c->stack.d[k];
        h.o[k] = c->stack.o[k];
    }
    void *frames[3];
    size_t bytes[3];
    int nf = 1;
    if (c->cfg->output.slices_only) {
        /* Three orthogonal planes through the middle: xy at iz, xz at iy, yz at ix. */
        int nx = h.n[0], ny = h.n[1], nz = h.n[2];
        h.slices = true;
        h.at[0] = nx / 2;
        h.at[1] = ny / 2;
        h.at[2] = nz / 2;
        float *xy = malloc((size_t)nx * ny * sizeof(float));
        float *xz = malloc((size_t)nx * nz * sizeof(float));
        float *yz = malloc((size_t)ny * nz * sizeof(float));
        if (!xy || !xz || !yz) {
            free(xy), free(xz), free(yz), free(v);
            return err_set(-ENOMEM, "slices");
        }
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++)
                xy[(size_t)y * nx + x] = v[((size_t)h.at[2] * ny + y) * nx + x];
        for (int z = 0; z < nz; z++)
            for (int x = 0; x < nx; x++)
                xz[(size_t)z * nx + x] = v[((size_t)z * ny + h.at[1]) * nx + x];
        for (int z = 0; z < nz; z++)
            for (int y = 0; y < ny; y++)
                yz[(size_t)z * ny + y] = v[((size_t)z * ny + y) * nx + h.at[0]];
        free(v);
        frames[0] = xy, frames[1] = xz, frames[2] = yz;
        bytes[0] = (size_t)nx * ny * 4, bytes[1] = (size_t)nx * nz * 4, bytes[2] = (size_t)ny * nz * 4;
        nf = 3;
    } else {
        frames[0] = v;
        bytes[0] = image_stack_cells(&c->stack) * sizeof(float);
    }
    char *js = wire_encode_volume(&h);
    int rc = publisher_send(io->pub, io->client, WIRE_TOPIC_IMAGE, js, t_arrive, frames, bytes, nf,
                            free);
    free(js);
    return rc == -EAGAIN ? 0 : rc; /* a drop is counted and logged, never fatal */
}

static int checkpoint(struct shot_ctx *c)
{
    const char *dir = c->cfg->output.state_dir;
    struct state s;
    state_init(&s);
    s.fingerprint = c->j->fingerprint;
    memcpy(s.n, c->stack.n, sizeof s.n);
    s.image = c->stack.image;
    s.n_image = image_stack_cells(&c->stack);
    s.illum = c->stack.illum;
    s.n_illum = c->stack.illum ? s.n_image : 0;
    s.ledger = c->stack.ids;
    s.sources = c->stack.src;
    s.n_ledger = c->stack.n_ids;
    double t0 = now_s();
    int rc = state_save(dir, &s); /* s borrows the stack's arrays: no state_free */
    if (rc == 0)
        log_debug("checkpoint: %lld shots in %.3f s", (long long)c->stack.shots, now_s() - t0);
    return rc;
}

/* decompose = "shots": N more shots in the stack, returned by the ranks.  Publish and
 * checkpoint by the shots stacked ([output] image_every / checkpoint_every and their
 * intervals), as one rank does by the shots it migrates: a shot handed out is not in the
 * image yet. */
static int shots_grew(struct shot_ctx *c, const struct pipeline_io *io, int n)
{
    if (n <= 0)
        return 0;
    const struct pipeline_conf *pc = c->pc;
    double t = now_s();
    c->since_pub += n;
    c->since_ckpt += n;
    bool ckpt = pc->checkpoint_every > 0 &&
                (c->since_ckpt >= pc->checkpoint_every ||
                 (pc->checkpoint_interval > 0 && t - c->t_ckpt >= pc->checkpoint_interval));
    bool publish = io && io->pub &&
                   (c->since_pub >= pc->publish_every ||
                    (pc->publish_interval > 0 && t - c->t_pub >= pc->publish_interval));
    int rc = 0;
    if (ckpt) {
        c->since_ckpt = 0;
        c->t_ckpt = t;
        rc = checkpoint(c);
    }
    if (!rc && publish) {
        c->since_pub = 0;
        c->t_pub = t;
        rc = publish_image(c, io, false, 0);
    }
    return rc;
}

/* struct pipeline_ops.idle: decompose = "shots" takes in the images returned meanwhile. */
static int shot_idle(void *ctx, const struct pipeline_io *io)
{
    struct shot_ctx *c = ctx;
    int n = c->j->poll ? c->j->poll(c->j->ctx, &c->stack) : 0;
    return n < 0 ? n : shots_grew(c, io, n);
}

static int shot_finish(void *ctx, const struct slot_hdr *h, const struct pipeline_io *io,
                       bool publish, bool ckpt)
{
    struct shot_ctx *c = ctx;
    if (c->j->submit) /* decompose = "shots": handed out, not stacked yet (shots_grew) */
        return 0;
    /* Progress: the time per shot of this run, and for a known-length input (files, not
     * watched) the shots and time still to come, from the share of the input read. */
    double el = now_s() - c->t_first, per = c->stacked_now > 0 ? el / (double)c->stacked_now : 0;
    double f = h->input_frac;
    if (f > 0 && f < 1)
        log_info("%s: shot %lld stacked (%lld shots, %.2f s per shot; input %.0f %% read: "
                 "about %.0f shots and %.0f s to come)", h->origin, (long long)h->id,
                 (long long)c->stack.shots, per, 100 * f,
                 (double)c->stacked_now * (1 - f) / f, el * (1 - f) / f);
    else
        log_info("%s: shot %lld stacked (%lld shots, %.2f s per shot%s)", h->origin,
                 (long long)h->id, (long long)c->stack.shots, per,
                 f >= 1 ? "; the last of the input" : "");
    int rc = 0;
    if (ckpt)
        rc = checkpoint(c);
    if (!rc && publish)
        rc = publish_image(c, io, false, h->t_arrive);
    return rc;
}

/* DIR/image_{x,y,z}.png: the same pictures seislive-sub draws ([output] picture_*). */
static int final_pictures(struct shot_ctx *c, const struct image_meta *im, const float *v)
{
    const struct output_conf *oc = &c->cfg->output;
    struct picture_opts o;
    picture_opts_default(&o);
    o.gain = oc->picture_gain;
    o.agc = oc->picture_agc;
    o.percentile = oc->picture_percentile;
    o.size = oc->picture_size;
    memcpy(o.at, oc->picture_at, sizeof o.at);
    struct picture_meta pm = {{im->n[0], im->n[1], im->n[2]},
                              {im->d[0], im->d[1], im->d[2]},
                              {im->o[0], im->o[1], im->o[2]},
                              c->cfg->job.name, (long long)im->units, "shots stacked",
                              (double)time(NULL), im->final};
    char prefix[4200];
    snprintf(prefix, sizeof prefix, "%s/image", oc->dir);
    int rc = picture_write_slices(prefix, v, &pm, &o);
    if (rc)
        log_error("final image: no PNG pictures: %s (image.f32 and image.json hold the image)", err_msg());
    return rc;
}

static int shot_end(void *ctx, const struct pipeline_io *io, bool ckpt, bool stopped)
{
    struct shot_ctx *c = ctx;
    int rc = c->j->drain ? c->j->drain(c->j->ctx, &c->stack, stopped) : 0;
    if (!rc && ckpt)
        rc = checkpoint(c);
    if (!rc)
        rc = publish_image(c, io, !stopped, 0);
    if (!rc && c->cfg->output.dir && c->cfg->output.dir[0]) {
        float *v = render(c);
        if (!v)
            return err_set(-ENOMEM, "final image");
        struct image_meta m = {.units = c->stack.shots, .final = !stopped, .job = c->j->name};
        for (int k = 0; k < 3; k++) {
            m.n[k] = c->stack.n[k];
            m.d[k] = c->stack.d[k];
            m.o[k] = c->stack.o[k];
        }
        /* The raw float32 + JSON always; the SEG-Y copy is one more format, whose limits
         * (16-bit sample count and interval) must not fail a job whose image is done:
         * its failure is logged and the job ends as it would have. */
        rc = image_files_write(c->cfg->output.dir, "image", &m, v);
        if (rc)
            log_error("final image: %s/image.f32: %s", c->cfg->output.dir, err_msg());
        int src = image_files_write_segy(c->cfg->output.dir, "image", &m, v);
        if (src)
            log_error("final image: no SEG-Y copy: %s (image.f32 and image.json hold the image)", err_msg());
        /* the pictures are one more view of the image: like the SEG-Y copy, a failure
         * is logged and the job ends as it would have */
        int prc = c->cfg->output.pictures ? final_pictures(c, &m, v) : 0;
        free(v);
        if (!rc)
            log_info("final image: %s/image.f32%s%s (%lld shots)", c->cfg->output.dir,
                     src ? "" : " and image.segy", c->cfg->output.pictures && !prc ?
                     ", image_{x,y,z}.png" : "", (long long)c->stack.shots);
    }
    return rc;
}

/* Resume a matching state from [output] state_dir. */
static int resume(struct shot_ctx *c)
{
    const char *dir = c->cfg->output.state_dir;
    if (!dir || !dir[0])
        return 0;
    struct state s;
    int rc = state_load(dir, c->j->fingerprint, &s);
    if (rc == -ENOENT) {
        log_info("state %s: none yet, starting fresh", dir);
        return 0;
    }
    if (rc < 0)
        return err_prefix(rc, "[output] state_dir (move it away to start afresh)");
    if (s.n_image != image_stack_cells(&c->stack) ||
        (s.n_illum && s.n_illum != s.n_image)) {
        state_free(&s);
        return err_set(-EINVAL, "%s/state.bin: image of %zu cells, this grid has %zu", dir,
                       s.n_image, image_stack_cells(&c->stack));
    }
    rc = image_stack_restore(&c->stack, s.image, s.n_illum ? s.illum : NULL, s.ledger, s.n_ledger);
    if (!rc)
        image_stack_restore_sources(&c->stack, s.sources, s.n_ledger);
    if (!rc)
        log_info("state %s: resumed with %zu shots stacked", dir, s.n_ledger);
    state_free(&s);
    return rc;
}

int shot_job_run(const struct sl_config *cfg, const struct sl_device *dev, const struct shot_job *j,
                 struct metrics *mout)
{
    /* decompose = "shots": rank 0 hands the shots out, the other ranks migrate them
     * (stream/shots.h; it comes back here on rank 0 with J's submit set) */
    if (cfg->runtime.decompose == DECOMPOSE_SHOTS && !j->submit) {
        if (shots_parallel(cfg))
            return shots_job_run(cfg, dev, j, mout);
        log_info("[runtime] decompose = \"shots\" with one rank: it migrates every shot itself");
    }
    struct shot_ctx c = {.j = j, .cfg = cfg};
    int rc = image_stack_init(&c.stack, j->n, j->d, j->o);
    if (rc)
        return rc;
    rc = resume(&c);
    if (rc) {
        image_stack_free(&c.stack);
        return rc;
    }
    void *zctx = zmq_ctx_new();
    struct source src;
    rc = pipeline_open_source(cfg, zctx, SLOT_SHOT, &src);
    if (rc) {
        zmq_ctx_term(zctx);
        image_stack_free(&c.stack);
        return rc;
    }
    struct pipeline_conf pc;
    pipeline_conf_from(cfg, j->name, &pc);
    pc.pub.ranks = j->progress;
    c.pc = &pc;
    c.t_pub = c.t_ckpt = now_s();
    struct pipeline_ops ops = {.name = j->name, .ctx = &c, .skip = shot_skip, .process = shot_process,
                               .finish = shot_finish, .idle = j->poll ? shot_idle : NULL, .end = shot_end};
    struct metrics m;
    metrics_init(&m);
    rc = pipeline_run(&pc, dev, zctx, &src, &ops, &m);
    src.close(src.ctx);
    zmq_ctx_term(zctx);
    if (!j->submit)
        log_info("%lld shots stacked in this run, %lld in the image", (long long)c.stacked_now,
                 (long long)c.stack.shots);
    if (log_get_level() <= LOG_INFO)
        metrics_print(&m, stderr);
    if (mout)
        *mout = m;
    else
        metrics_destroy(&m);
    image_stack_free(&c.stack);
    return rc;
}

/* ---- the rtm job: the RTM engine (kernels/rtm.h) as the per-shot migration ---- */

static int rtm_migrate(void *ctx, const struct shot *shot, struct image_stack *stack)
{
    struct rtm_shot_stats st;
    int rc = rtm_stack_shot(ctx, shot, stack, &st);
    if (rc == 0)
        log_info("shot %lld migrated: %s, %d steps, %.2f s", (long long)shot->id,
                 rtm_strategy_name(st.strategy), st.nt, st.seconds);
    return rc;
}

/* [runtime] decompose = "domain", rank 0: the shot handed to the other ranks, then
 * migrated by all (stream/decompose_rtm.h); rank 0 alone stacks it.  Whatever can refuse
 * the shot on rank 0 alone (a replayed id, no memory for its patch) does so before it is
 * handed out: once handed out, every rank migrates it. */
static int rtm_migrate_domain(void *ctx, const struct shot *shot, struct image_stack *stack)
{
    struct rtm_engine *e = ctx;
    if (image_stack_has(stack, shot->id))
        return err_set(-EEXIST, "shot %lld is already in the stack", (long long)shot->id);
    struct rtm_shot_stats st;
    const struct rtm_shot v = rtm_shot_of(shot);
    struct image_patch p;
    int rc = rtm_engine_patch(e, &v, p.off, p.n);
    if (rc < 0)
        return rc;
    size_t cells = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *img = malloc(cells * sizeof(float)), *ill = malloc(cells * sizeof(float));
    if (!img || !ill)
        rc = err_set(-ENOMEM, "shot %lld: image of %zu cells", (long long)shot->id, cells);
    if (rc == 0)
        rc = dd_rtm_send_shot(shot);
    if (rc == 0)
        rc = rtm_engine_migrate_patch(e, &v, img, ill, &st);
    if (rc == 0) {
        p.image = img;
        p.illum = ill;
        rc = image_stack_add(stack, shot->id, &p);
    }
    if (rc == 0)
        log_info("shot %lld migrated on %d ranks: %s, %d steps, %.2f s", (long long)shot->id, sl_mpi_size(),
                 rtm_strategy_name(st.strategy), st.nt, st.seconds);
    free(img);
    free(ill);
    return rc;
}

/* [runtime] decompose = "domain", the other ranks: migrate the shots rank 0 hands out
 * (their part of each) until it says the input has ended; its result is theirs. */
static int rtm_follow(struct rtm_engine *e)
{
    for (;;) {
        struct shot s;
        bool end = false;
        int rc0 = 0, rc = dd_rtm_recv(&s, &end, &rc0);
        if (rc < 0) { /* this rank alone, while rank 0 hands out the shot: end the job */
            log_error("%s: this rank cannot follow rank 0, so the whole job ends", err_msg());
            sl_mpi_abort(rc);
        }
        if (end) {
            if (rc0 < 0) {
                sl_mpi_all_know();
                return err_set(rc0, "rank 0 ended the job with an error (its log says why)");
            }
            return 0;
        }
        rc = rtm_engine_migrate_patch(e, RTM_SHOT(&s), NULL, NULL, NULL);
        /* a failure here is every rank's (the engine agrees on them or ends the job):
         * rank 0 reports the shot; this rank goes on with the next one */
        if (rc < 0)
            log_debug("shot %lld: %s", (long long)s.id, err_msg());
        dd_rtm_shot_free(&s);
    }
}

/* The engine's stop request: SIGTERM / SIGINT (kernels/ knows nothing of signals). */
static bool stop_flag(void *user)
{
    (void)user;
    return signals_stop_requested();
}

/* The propagator parameters of a shot covering the whole model N, D, O at DT: the
 * largest grid a shot can have (rtm_prop_params, as the engine and its report make them). */
static void model_grid_params(const struct sl_config *cfg, const int n[3], const double d[3], const double o[3],
                              double dt, struct prop_params *pp)
{
    struct rtm_params rp;
    char dt_name[640];
    rtm_params_from_config(cfg, &rp, dt_name, sizeof dt_name);
    struct subvolume sv = {{0, 0, 0}, {n[0], n[1], n[2]}, {o[0], o[1], o[2]}};
    rtm_prop_params(&rp, n[1] == 1, d, &sv, dt, pp);
}

static int rtm_run(const struct sl_config *cfg, const struct sl_device *dev, const char *output)
{
    (void)output;
    struct sl_model m;
    int rc = model_load(cfg, &m);
    if (rc)
        return rc;
    struct rtm_volume vol;
    rtm_volume_of_model(&m, &vol);
    struct shot_job j = {.name = "rtm", .fingerprint = config_fingerprint(cfg),
                         .laplacian = cfg->rtm.laplacian, .migrate = rtm_migrate,
                         .patch = shots_rtm_patch /* decompose = "shots": a worker rank's migration */};
    for (int k = 0; k < 3; k++) {
        vol.n[k] = j.n[k] = m.n[k];
        vol.d[k] = j.d[k] = m.d[k];
        vol.o[k] = j.o[k] = m.o[k];
    }
    struct rtm_engine *e;
    rc = rtm_engine_create_cfg(cfg, dev, &vol, &e);
    model_free(&m);
    struct dd_rtm *dd = NULL;
    if (cfg->runtime.decompose == DECOMPOSE_DOMAIN) {
        /* every rank built its engine (the same on all): a failure is every rank's */
        struct prop_params grid;
        if ((rc = sl_mpi_agree(rc)) == 0)
            model_grid_params(cfg, j.n, j.d, j.o, rtm_engine_dt(e), &grid);
        if (rc == 0 && (rc = dd_rtm_open(cfg, &grid, &dd)) == 0) {
            rtm_engine_set_domain(e, dd_rtm_domain(dd));
            rtm_engine_set_cancel(e, dd_rtm_cancel, NULL);
            if (dev_is_gpu(dev))
                log_info("decompose = \"domain\" on %s: halo planes staged through host memory over MPI",
                         dev->name);
        }
        if (rc < 0) {
            rtm_engine_destroy(e);
            return rc;
        }
    } else if (rc) {
        return rc;
    } else {
        rtm_engine_set_cancel(e, stop_flag, NULL);
    }
    j.ctx = e;
    if (dd && sl_mpi_rank() != 0) {
        rc = rtm_follow(e);
    } else {
        if (dd)
            j.migrate = rtm_migrate_domain;
        rc = shot_job_run(cfg, dev, &j, NULL);
        if (dd) {
            int erc = dd_rtm_send_end(rc);
            if (rc < 0)
                sl_mpi_all_know(); /* the others return it too */
            rc = rc < 0 ? rc : erc;
        }
    }
    dd_rtm_close(dd);
    rtm_engine_destroy(e);
    return rc;
}

/* `seislive check`: the RTM helper's report plus what the runtime will pin. */
static int rtm_check(const struct sl_config *cfg, FILE *out)
{
    int rc = rtm_report(cfg, out);
    if (rc == 0 && out && cfg->runtime.decompose == DECOMPOSE_DOMAIN) {
        /* a shot's grid is its sub-volume: the whole model's is the largest (dt does not
         * change the split, the halo or the memory) */
        struct prop_params grid;
        model_grid_params(cfg, cfg->model.n, cfg->model.d, cfg->model.o, 1e-3, &grid);
        fprintf(out, "\n[rtm] decomposed: every shot's grid (its sub-volume with layers) is cut so; the whole "
                     "model's, the largest a shot can have:\n");
        rc = dd_report(cfg, &grid, NULL, 0, 0, (size_t)cfg->model.n[0] * cfg->model.n[1] * cfg->model.n[2] * 4, out);
        if (rc == 0)
            fprintf(out, "(each rank holds two such wavefields -- source and receiver -- and its strategy's storage "
                         "for its part; every rank reads the whole model)\n");
    }
    if (rc == 0 && out)
        fprintf(out, "\n[input] %d pinned slots x %.1f MiB = %.1f MiB host memory (plus a %.1f MiB "
                     "staging buffer for file input); the image stack %.1f MiB x 2 (image, "
                     "illumination)\n",
                cfg->input.slots, cfg->input.slot_mib, cfg->input.slots * cfg->input.slot_mib,
                cfg->input.kind == INPUT_FILES ? cfg->input.slot_mib : 0.0,
                (double)cfg->model.n[0] * cfg->model.n[1] * cfg->model.n[2] * 4 / 1048576.0);
    if (rc == 0 && out)
        shots_report(cfg, out); /* decompose = "shots": who does what, the image per shot */
    return rc;
}

const struct job_ops job_rtm_ops = {"rtm", rtm_run, rtm_check};
