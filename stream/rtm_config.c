/* rtm_config — see rtm_config.h. */
#include "stream/rtm_config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "io/model.h"
#include "kernels/imaging.h"
#include "kernels/random_boundary.h"
#include "kernels/rtm_strips.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "stream/stability_conf.h"

/* The config's enums go to the engine as they are: its twins have the same values. */
#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(STRAT_AUTO, RTM_AUTO) && SAME(STRAT_FULL, RTM_FULL) && SAME(STRAT_CHECKPOINT, RTM_CHECKPOINT) &&
                   SAME(STRAT_BOUNDARY, RTM_BOUNDARY) && SAME(STRAT_RANDOM, RTM_RANDOM),
               "enum rtm_strategy and enum rtm_strategy_kind differ");
_Static_assert(SAME(STRIPS_AUTO, RTM_STRIPS_AUTO) && SAME(STRIPS_DEVICE, RTM_STRIPS_DEVICE) &&
                   SAME(STRIPS_HOST, RTM_STRIPS_HOST),
               "conf/config.h enum strip_store and kernels/rtm_strips.h enum rtm_strip_store");
_Static_assert(SAME(CKPT_UNIFORM, RTM_CKPT_UNIFORM) && SAME(CKPT_BINOMIAL, RTM_CKPT_BINOMIAL),
               "enum ckpt_schedule and enum rtm_ckpt_schedule differ");
_Static_assert(SAME(IMG_XCORR, IMAGING_XCORR) && SAME(IMG_SOURCE, IMAGING_SOURCE) && SAME(IMG_RECEIVER, IMAGING_RECEIVER) &&
                   SAME(IMG_BOTH, IMAGING_BOTH),
               "enum imaging_cond and enum imaging_cond_kind differ");
_Static_assert(SAME(RAMP_LINEAR, RB_RAMP_LINEAR) && SAME(RAMP_EXPONENTIAL, RB_RAMP_EXPONENTIAL) &&
                   SAME(RAMP_QUADRATIC, RB_RAMP_QUADRATIC),
               "enum random_ramp and enum rb_ramp differ");
_Static_assert(SAME(RRANGE_FULL, RB_RANGE_FULL) && SAME(RRANGE_NYQUIST, RB_RANGE_NYQUIST) &&
                   SAME(RRANGE_SYMMETRIC, RB_RANGE_SYMMETRIC),
               "enum random_range and enum rb_range differ");
_Static_assert(KERNEL_AUTO == 0 && KERNEL_NAIVE == 1 && KERNEL_TILED == 2,
               "enum kernel_variant and prop_tuning.kernel differ");
_Static_assert(SAME(OPERATOR_TAYLOR, PROP_OP_TAYLOR) && SAME(OPERATOR_OPTIMIZED, PROP_OP_OPTIMIZED) &&
                   SAME(OPERATOR_IMPLICIT, PROP_OP_IMPLICIT),
               "enum operator_kind and enum prop_op_kind differ");

void rtm_params_from_config(const struct sl_config *cfg, struct rtm_params *p, char *dt_name, size_t len)
{
    const struct propagator_conf *pc = &cfg->propagator;
    const struct rtm_conf *r = &cfg->rtm;
    rtm_params_init(p);
    p->physics = pc->physics == PHYSICS_TTI ? PROP_TTI : PROP_ACOUSTIC;
    p->tti_sigma = pc->tti_sigma;
    p->cpml_memory = pc->cpml_memory;
    p->pml_degree = pc->pml_degree;
    p->order = pc->order;
    p->op_kind = pc->op;
    p->op_band = pc->operator_band;
    for (int f = 0; f < 6; f++)
        p->pml[f] = pc->pml_width[f];
    p->free_surface = pc->free_surface;
    p->pml_reflection = pc->pml_reflection;
    p->f_ref = pc->f_peak;
    p->prop_tuning.kernel = pc->kernel;
    struct stability_params sp;
    stability_params_of(cfg, &sp, dt_name, len);
    p->dt = sp.dt;
    p->cfl = sp.cfl;
    p->ppw_min = sp.ppw_min;
    p->dt_name = sp.dt_name;
    p->t_max = pc->t_max;
    p->f_peak = pc->f_peak;
    p->wavelet_dt = pc->wavelet_dt;
    p->time_dispersion = pc->time_dispersion == TIME_DISPERSION_CORRECT;
    p->strategy = r->strategy;
    p->checkpoints = r->checkpoints;
    p->checkpoint_schedule = r->checkpoint_schedule;
    p->imaging = r->imaging;
    p->image_every = r->image_every;
    p->aperture = r->aperture;
    p->memory_budget = r->memory_budget;
    p->strip_store = r->strip_store;
    p->host_memory_budget = r->host_memory_budget;
    p->random.ramp = r->random_ramp;
    p->random.range = r->random_range;
    p->random.width = r->random_width;
    p->random.seed = (uint64_t)r->random_seed;
}

int rtm_job_params_init(const struct sl_config *cfg, struct rtm_job_params *jp)
{
    const struct propagator_conf *pc = &cfg->propagator;
    struct rtm_params *p = &jp->p;
    rtm_params_from_config(cfg, p, jp->dt_name, sizeof jp->dt_name);
    jp->wavelet = NULL;
    if (pc->wavelet != WAVELET_FILE)
        return 0;
    int rc = wavelet_read(pc->wavelet_file, &jp->wavelet, &p->wavelet_n);
    if (rc < 0)
        return rc;
    p->wavelet = jp->wavelet;
    /* the file's sample interval must be known before dt is: 0 means the given dt */
    if (!(pc->wavelet_dt > 0) && !(pc->dt > 0))
        return err_set(-EINVAL, "[propagator] wavelet_dt must be set when dt is automatic");
    return 0;
}

void rtm_job_params_free(struct rtm_job_params *jp)
{
    free(jp->wavelet);
    jp->wavelet = NULL;
}

void rtm_volume_of_model(const struct sl_model *m, struct rtm_volume *vol)
{
    const struct sl_tti *t = &m->tti;
    *vol = (struct rtm_volume){.v = m->v};
    for (int a = 0; a < 3; a++) {
        vol->n[a] = m->n[a];
        vol->d[a] = m->d[a];
        vol->o[a] = m->o[a];
    }
    if (!m->tti_on)
        return;
    vol->epsilon = t->eps;
    vol->delta = t->delta;
    vol->theta = t->theta;
    vol->phi = t->phi;
    vol->epsilon0 = t->eps0;
    vol->delta0 = t->delta0;
    vol->theta0 = t->theta0;
    vol->phi0 = t->phi0;
}

int rtm_engine_create_cfg(const struct sl_config *cfg, const struct sl_device *dev, const struct rtm_volume *model,
                          struct rtm_engine **out)
{
    *out = NULL;
    /* dt is checked against the volume's spacing (its grid is the one that runs) */
    struct sl_config grid_cfg = *cfg; /* read-only view whose [model] spacing is the volume's */
    for (int a = 0; a < 3; a++)
        grid_cfg.model.d[a] = model->d[a];
    struct rtm_job_params jp;
    int rc = rtm_job_params_init(&grid_cfg, &jp);
    if (rc == 0 && (rc = rtm_engine_create(&jp.p, dev, model, out)) == -ENOTSUP && jp.p.physics == PROP_TTI) {
        char where[600];
        err_prefix(rc, "%s: [propagator] physics = \"tti\"",
                   config_where(cfg, "propagator.physics", where, sizeof where));
    }
    rtm_job_params_free(&jp);
    return rc;
}

int rtm_engine_create_from_config(const struct sl_config *cfg, const struct sl_device *dev,
                                  struct rtm_engine **out)
{
    struct sl_model m;
    int rc = model_load(cfg, &m);
    if (rc < 0)
        return rc;
    struct rtm_volume vol;
    rtm_volume_of_model(&m, &vol);
    rc = rtm_engine_create_cfg(cfg, dev, &vol, out);
    model_free(&m);
    return rc;
}

int rtm_stack_shot(struct rtm_engine *e, const struct shot *shot, struct image_stack *stack,
                   struct rtm_shot_stats *stats)
{
    int n[3];
    double d[3], o[3];
    rtm_engine_grid(e, n, d, o);
    for (int a = 0; a < 3; a++)
        if (stack->n[a] != n[a])
            return err_set(-EINVAL, "rtm: image stack grid %d x %d x %d differs from the model's %d x %d x %d",
                           stack->n[0], stack->n[1], stack->n[2], n[0], n[1], n[2]);
    if (image_stack_has(stack, shot->id))
        return err_set(-EEXIST, "shot %" PRId64 " is already in the stack", shot->id);
    const struct rtm_shot v = rtm_shot_of(shot);
    struct image_patch p;
    int rc = rtm_engine_patch(e, &v, p.off, p.n);
    if (rc < 0)
        return rc;
    size_t cells = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *img = malloc(cells * sizeof(float)), *ill = malloc(cells * sizeof(float));
    if (!img || !ill) {
        free(img);
        free(ill);
        return err_set(-ENOMEM, "shot %" PRId64 ": image of %zu cells", shot->id, cells);
    }
    rc = rtm_engine_migrate_patch(e, &v, img, ill, stats);
    if (rc == 0) {
        p.image = img;
        p.illum = ill;
        rc = image_stack_add(stack, shot->id, &p);
    }
    free(img);
    free(ill);
    return rc;
}
