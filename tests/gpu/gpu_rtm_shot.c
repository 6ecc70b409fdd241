#include "tests/gpu/gpu_rtm_shot.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/wavelet.h"
#include "stream/error.h"
#include "stream/rtm_config.h"

void gpu_rtm_synth_shot(struct shot *sh, int64_t id, double d, double dt)
{
    memset(sh, 0, sizeof *sh);
    sh->id = id;
    sh->ntr = 40;
    sh->dt = dt;
    sh->ns = 301;
    sh->src[0] = 24 * d;
    sh->src[1] = 10 * d;
    sh->src[2] = 20.0;
    sh->rec = malloc((size_t)sh->ntr * 3 * 4);
    sh->data = malloc((size_t)sh->ntr * sh->ns * 4);
    cr_assert(sh->rec && sh->data);
    for (int r = 0; r < sh->ntr; r++) {
        double x = (4 + r) * d;
        sh->rec[3 * r] = (float)x;
        sh->rec[3 * r + 1] = (float)(10 * d);
        sh->rec[3 * r + 2] = 20.0f;
        double t0 = 0.1 + hypot(x - sh->src[0], 420.0) / 2000.0;
        for (int k = 0; k < sh->ns; k++)
            sh->data[(size_t)r * sh->ns + k] = (float)wavelet_ricker(k * sh->dt, 15.0, t0);
    }
}

void gpu_rtm_config(struct sl_config *cfg, bool tti, int every)
{
    config_defaults(cfg);
    cfg->propagator.order = 8;
    cfg->propagator.dt = tti ? 1.0e-3 : 1.5e-3;
    cfg->propagator.f_peak = 15.0;
    for (int f = 0; f < 6; f++)
        cfg->propagator.pml_width[f] = 10;
    cfg->propagator.free_surface = false;
    cfg->propagator.physics = tti ? PHYSICS_TTI : PHYSICS_ACOUSTIC;
    cfg->rtm.aperture = 1e6;
    cfg->rtm.imaging = IMG_BOTH;
    cfg->rtm.image_every = every;
}

float *gpu_rtm_volume(struct rtm_volume *vol, double d, bool tti)
{
    const size_t cells = (size_t)GPU_RTM_NX * GPU_RTM_NY * GPU_RTM_NZ;
    float *v = malloc(cells * 4);
    cr_assert(v);
    for (int z = 0; z < GPU_RTM_NZ; z++)
        for (size_t i = 0; i < (size_t)GPU_RTM_NX * GPU_RTM_NY; i++)
            v[(size_t)z * GPU_RTM_NX * GPU_RTM_NY + i] = z < 22 ? 2000.0f : 2600.0f;
    *vol = (struct rtm_volume){.n = {GPU_RTM_NX, GPU_RTM_NY, GPU_RTM_NZ}, .d = {d, d, d}, .o = {0, 0, 0}, .v = v};
    if (tti) {
        vol->epsilon0 = 0.2;
        vol->delta0 = 0.1;
        vol->theta0 = M_PI / 6;
        vol->phi0 = 0.3;
    }
    return v;
}

float *gpu_rtm_image(const struct rtm_params *p, const struct sl_device *dev, const struct rtm_volume *vol,
                     const struct shot *sh, int strategy, struct rtm_shot_stats *st)
{
    const size_t cells = (size_t)vol->n[0] * vol->n[1] * vol->n[2];
    struct rtm_engine *e = NULL;
    cr_assert_eq(rtm_engine_create(p, dev, vol, &e), 0, "%s", err_msg());
    rtm_engine_force_strategy(e, strategy, -1);
    float *img = malloc(cells * 4);
    cr_assert(img);
    memset(img, 0xff, cells * 4);
    struct rtm_shot_stats own;
    if (!st)
        st = &own;
    memset(st, 0, sizeof *st);
    cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(sh), img, NULL, st), 0, "%s", err_msg());
    cr_assert_eq(st->strategy, strategy);
    rtm_engine_destroy(e);
    return img;
}
