/* The engine's plain parameters and the grid it builds: rtm_params_init holds the
 * config's defaults, the job's conversion carries every [propagator] and [rtm] key
 * through, and a model one cell across y (n[1] == 1) gets a 2D grid (no y layers) with
 * sources and receivers off its line refused by shot and receiver. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "kernels/backend.h"
#include "kernels/imaging.h"
#include "kernels/random_boundary.h"
#include "kernels/wave.h"
#include "kernels/rtm.h"
#include "kernels/rtm_strips.h"
#include "stream/error.h"
#include "stream/rtm_config.h"

Test(rtm_params, init_holds_the_config_defaults)
{
    struct sl_config cfg;
    config_defaults(&cfg);
    struct rtm_params a, b;
    char name[640];
    rtm_params_init(&a);
    rtm_params_from_config(&cfg, &b, name, sizeof name);
    cr_assert_eq(a.physics, b.physics);
    cr_assert_eq(a.op_kind, b.op_kind);
    cr_assert_eq(a.order, b.order);
    for (int f = 0; f < 6; f++)
        cr_assert_eq(a.pml[f], b.pml[f], "pml[%d]", f);
    cr_assert_eq(a.free_surface, b.free_surface);
    cr_assert_eq(a.pml_reflection, b.pml_reflection);
    cr_assert_eq(a.f_ref, b.f_ref);
    cr_assert_eq(memcmp(&a.prop_tuning, &b.prop_tuning, sizeof a.prop_tuning), 0);
    cr_assert_eq(a.dt, b.dt);
    cr_assert_eq(a.cfl, b.cfl);
    cr_assert_eq(a.ppw_min, b.ppw_min);
    cr_assert_eq(a.t_max, b.t_max);
    cr_assert_eq(a.f_peak, b.f_peak);
    cr_assert_eq(a.wavelet_dt, b.wavelet_dt);
    cr_assert_eq(a.src_interp, b.src_interp);
    cr_assert_eq(a.rec_interp, b.rec_interp);
    cr_assert_eq(a.strategy, b.strategy);
    cr_assert_eq(a.checkpoints, b.checkpoints);
    cr_assert_eq(a.checkpoint_schedule, b.checkpoint_schedule);
    cr_assert_eq(a.imaging, b.imaging);
    cr_assert_eq(a.image_every, b.image_every);
    cr_assert_eq(a.image_every, 0, "auto is the default");
    cr_assert_eq(a.cpml_memory, b.cpml_memory);
    cr_assert_eq(a.pml_degree, b.pml_degree);
    cr_assert_eq(b.pml_degree, 4, "the thin layers' profile is the default (docs/model.md)");
    cr_assert_eq(b.pml[0], 12);
    cr_assert_eq(b.pml_reflection, 1e-3);
    cr_assert_eq(a.aperture, b.aperture);
    cr_assert_eq(a.memory_budget, b.memory_budget);
    cr_assert_eq(a.strip_store, b.strip_store);
    cr_assert_eq(a.host_memory_budget, b.host_memory_budget);
    cr_assert_eq(a.random.ramp, b.random.ramp);
    cr_assert_eq(a.random.range, b.random.range);
    cr_assert_eq(a.random.width, b.random.width);
    cr_assert_eq(a.random.seed, b.random.seed);
    cr_assert_eq(memcmp(&a.tuning, &b.tuning, sizeof a.tuning), 0);
    /* the refusal of an unstable dt names its config place */
    cr_assert_not_null(strstr(b.dt_name, "[propagator] dt"), "%s", b.dt_name);
    config_free(&cfg);
}

Test(rtm_params, config_keys_carried_through)
{
    struct sl_config cfg;
    config_defaults(&cfg);
    cfg.propagator.order = 6;
    for (int f = 0; f < 6; f++)
        cfg.propagator.pml_width[f] = 11 + f;
    cfg.propagator.free_surface = true;
    cfg.propagator.pml_reflection = 1e-3;
    cfg.propagator.f_peak = 22.0;
    cfg.propagator.kernel = KERNEL_NAIVE;
    cfg.propagator.dt = 1e-3;
    cfg.propagator.cfl = 0.5;
    cfg.propagator.ppw_min = 4.0;
    cfg.propagator.t_max = 2.5;
    cfg.rtm.strategy = STRAT_CHECKPOINT;
    cfg.rtm.checkpoints = 17;
    cfg.rtm.checkpoint_schedule = CKPT_UNIFORM;
    cfg.rtm.imaging = IMG_RECEIVER;
    cfg.rtm.image_every = 3;
    cfg.propagator.cpml_memory = CPML_MEMORY_BF16;
    cfg.propagator.pml_degree = 4;
    cfg.rtm.aperture = 250.0;
    cfg.rtm.memory_budget = 64.0;
    cfg.rtm.strip_store = STRIPS_HOST;
    cfg.rtm.host_memory_budget = 2048.0;
    cfg.rtm.random_ramp = RAMP_QUADRATIC;
    cfg.rtm.random_range = RRANGE_SYMMETRIC;
    cfg.rtm.random_width = 9;
    cfg.rtm.random_seed = 99;
    struct rtm_params p;
    char name[640];
    rtm_params_from_config(&cfg, &p, name, sizeof name);
    cr_assert_eq(p.order, 6);
    for (int f = 0; f < 6; f++)
        cr_assert_eq(p.pml[f], 11 + f);
    cr_assert(p.free_surface);
    cr_assert_eq(p.pml_reflection, 1e-3);
    cr_assert_eq(p.f_ref, 22.0);
    cr_assert_eq(p.f_peak, 22.0);
    cr_assert_eq(p.prop_tuning.kernel, 1);
    cr_assert_eq(p.dt, 1e-3);
    cr_assert_eq(p.cfl, 0.5);
    cr_assert_eq(p.ppw_min, 4.0);
    cr_assert_eq(p.t_max, 2.5);
    cr_assert_eq(p.strategy, RTM_CHECKPOINT);
    cr_assert_eq(p.checkpoints, 17);
    cr_assert_eq(p.checkpoint_schedule, RTM_CKPT_UNIFORM);
    cr_assert_eq(p.imaging, IMAGING_RECEIVER);
    cr_assert_eq(p.image_every, 3);
    cr_assert_eq(p.cpml_memory, WAVE_CPML_MEM_BF16);
    cr_assert_eq(p.pml_degree, 4);
    cr_assert_eq(p.aperture, 250.0);
    cr_assert_eq(p.memory_budget, 64.0);
    cr_assert_eq(p.strip_store, RTM_STRIPS_HOST);
    cr_assert_eq(p.host_memory_budget, 2048.0);
    cr_assert_eq(p.random.ramp, RB_RAMP_QUADRATIC);
    cr_assert_eq(p.random.range, RB_RANGE_SYMMETRIC);
    cr_assert_eq(p.random.width, 9);
    cr_assert_eq(p.random.seed, 99u);
    config_free(&cfg);
}

/* A constant model of N cells of 10 m on the CPU, from plain parameters. */
static struct rtm_engine *engine(const int n[3], double oy, bool free_surface)
{
    struct sl_device dev;
    cr_assert_eq(backend_select("cpu", &dev), 0);
    size_t cells = (size_t)n[0] * n[1] * n[2];
    float *v = malloc(cells * sizeof *v);
    for (size_t i = 0; i < cells; i++)
        v[i] = 2000.0f;
    struct rtm_volume vol = {.n = {n[0], n[1], n[2]}, .d = {10, 10, 10}, .o = {0, oy, 0}, .v = v};
    struct rtm_params p;
    rtm_params_init(&p);
    p.order = 4;
    for (int f = 0; f < 6; f++)
        p.pml[f] = 6 + f;
    p.free_surface = free_surface;
    p.t_max = 0.2;
    p.f_peak = p.f_ref = 10.0;
    p.aperture = 0.0;
    struct rtm_engine *e = NULL;
    cr_assert_eq(rtm_engine_create(&p, &dev, &vol, &e), 0, "%s", err_msg());
    free(v);
    return e;
}

/* A shot at (SX, Y, 20 m) with 5 receivers every 20 m along x at Y, 10 m deep. */
static void line_shot(struct shot *sh, int64_t id, double sx, double y)
{
    memset(sh, 0, sizeof *sh);
    sh->id = id;
    sh->ns = 101;
    sh->dt = 1e-3;
    sh->ntr = 5;
    sh->src[0] = sx;
    sh->src[1] = y;
    sh->src[2] = 20.0;
    sh->rec = calloc(3 * 5, sizeof(float));
    sh->data = calloc((size_t)5 * 101, sizeof(float));
    for (int r = 0; r < 5; r++) {
        sh->rec[3 * r] = (float)(sx - 40 + 20 * r);
        sh->rec[3 * r + 1] = (float)y;
        sh->rec[3 * r + 2] = 10.0f;
    }
}

static void shot_free(struct shot *sh)
{
    free(sh->rec);
    free(sh->data);
}

Test(rtm_params, model_one_cell_across_y_runs_2d)
{
    const int n[3] = {40, 1, 30};
    for (int fs = 0; fs < 2; fs++) {
        struct rtm_engine *e = engine(n, 0.0, fs);
        struct shot sh;
        line_shot(&sh, 4, 200.0, 0.0);
        struct prop_params pp;
        cr_assert_eq(rtm_engine_shot_params(e, RTM_SHOT(&sh), &pp), 0, "%s", err_msg());
        cr_assert_eq(pp.grid.n[1], 1, "the sub-volume keeps ny = 1");
        cr_assert_eq(pp.grid.face[2], PROP_FACE_NONE);
        cr_assert_eq(pp.grid.face[3], PROP_FACE_NONE);
        cr_assert_eq(pp.grid.width[2], 0, "no absorbing layers across the line");
        cr_assert_eq(pp.grid.width[3], 0);
        for (int f = 0; f < 6; f++) {
            if (f == 2 || f == 3)
                continue;
            if (f == 4 && fs) {
                cr_assert_eq(pp.grid.face[4], PROP_FACE_FREE);
                cr_assert_eq(pp.grid.width[4], 0);
                continue;
            }
            cr_assert_eq(pp.grid.face[f], PROP_FACE_CPML, "face %d", f);
            cr_assert_eq(pp.grid.width[f], 6 + f, "face %d", f);
        }
        cr_assert_eq(pp.op.order, 4);
        cr_assert_eq(pp.grid.n[2], 30);
        shot_free(&sh);
        rtm_engine_destroy(e);
    }
}

/* A 3D model whose shot's sub-volume is one cell thick (aperture 0, a line of receivers
 * on a node) stays 3D: its y faces keep their layers (as before the 2D mode). */
Test(rtm_params, thin_subvolume_of_a_3d_model_keeps_its_y_layers)
{
    const int n[3] = {40, 9, 30};
    struct rtm_engine *e = engine(n, 0.0, false);
    struct shot sh;
    line_shot(&sh, 5, 200.0, 40.0);
    struct prop_params pp;
    cr_assert_eq(rtm_engine_shot_params(e, RTM_SHOT(&sh), &pp), 0, "%s", err_msg());
    cr_assert_eq(pp.grid.n[1], 1);
    cr_assert_eq(pp.grid.face[2], PROP_FACE_CPML);
    cr_assert_eq(pp.grid.face[3], PROP_FACE_CPML);
    cr_assert_eq(pp.grid.width[2], 8);
    cr_assert_eq(pp.grid.width[3], 9);
    shot_free(&sh);
    rtm_engine_destroy(e);
}

Test(rtm_params, points_off_the_2d_line_refused_by_shot_and_receiver)
{
    const int n[3] = {40, 1, 30};
    /* the line at y = 0.1 m: a float32 receiver coordinate is 1.5e-9 m off it, and on it */
    struct rtm_engine *e = engine(n, 0.1, false);
    struct shot sh;
    line_shot(&sh, 7, 200.0, 0.1);
    struct prop_params pp;
    cr_assert_eq(rtm_engine_shot_params(e, RTM_SHOT(&sh), &pp), 0, "%s", err_msg());
    /* receiver 3 half a metre off the line */
    sh.rec[3 * 3 + 1] = 0.6f;
    float *img = malloc((size_t)40 * 30 * sizeof *img);
    cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(&sh), img, NULL, NULL), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "shot 7: receiver 3 at (220, 0.6, 10) m is off the line y = 0.1 m"), "%s",
                       err_msg());
    size_t need[RTM_STRATEGIES];
    cr_assert_eq(rtm_engine_memory(e, RTM_SHOT(&sh), need), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "receiver 3"), "%s", err_msg());
    /* the source off the line */
    sh.rec[3 * 3 + 1] = 0.1f;
    sh.src[1] = 5.0;
    cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(&sh), img, NULL, NULL), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "shot 7: source at (200, 5, 20) m is off the line y = 0.1 m"), "%s",
                       err_msg());
    free(img);
    shot_free(&sh);
    rtm_engine_destroy(e);
}
