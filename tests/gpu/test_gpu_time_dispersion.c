/* [propagator] time_dispersion = "correct" on the GPU (docs/time-dispersion.md): the
 * transforms run on the host before the upload, so the CUDA engine's image must be the
 * CPU engine's (relative error under 1e-5, as test_gpu_rtm.c asks of every strategy),
 * including the shot whose traces are already at the propagator dt (the path that
 * uploads the shot's own array when the correction is off), and differ from the
 * uncorrected image (the option took effect). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "kernels/backend.h"
#include "kernels/rtm.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "stream/rtm_config.h"
#include "tests/gpu/gpu_support.h"
#include "tests/support.h"

Test(gpu_time_dispersion, corrected_image_matches_cpu, .timeout = 300)
{
    GPU_REQUIRED();
    const int n[3] = {48, 20, 36};
    const double d = 10.0, dt = 1.5e-3;
    const size_t cells = (size_t)n[0] * n[1] * n[2];
    float *v = malloc(cells * 4);
    for (int z = 0; z < n[2]; z++)
        for (size_t i = 0; i < (size_t)n[0] * n[1]; i++)
            v[(size_t)z * n[0] * n[1] + i] = z < 22 ? 2000.0f : 2600.0f;
    struct sl_config cfg;
    config_defaults(&cfg);
    cfg.propagator.order = 8;
    cfg.propagator.dt = dt;
    cfg.propagator.f_peak = 15.0;
    for (int f = 0; f < 6; f++)
        cfg.propagator.pml_width[f] = 10;
    cfg.propagator.free_surface = false;
    cfg.rtm.aperture = 1e6;
    struct rtm_volume vol = {.n = {n[0], n[1], n[2]}, .d = {d, d, d}, .o = {0, 0, 0}, .v = v};
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct rtm_engine *raw, *ec, *eg;
    cr_assert_eq(rtm_engine_create_cfg(&cfg, &gpu, &vol, &raw), 0, "%s", err_msg());
    cfg.propagator.time_dispersion = TIME_DISPERSION_CORRECT;
    cr_assert_eq(rtm_engine_create_cfg(&cfg, &cpu, &vol, &ec), 0, "%s", err_msg());
    cr_assert_eq(rtm_engine_create_cfg(&cfg, &gpu, &vol, &eg), 0, "%s", err_msg());
    /* 40 receivers along x at 20 m, a Ricker arriving later with offset, at the
     * propagator dt and of its length */
    struct shot sh;
    memset(&sh, 0, sizeof sh);
    sh.id = 3;
    sh.ntr = 40;
    sh.dt = dt;
    sh.ns = 301;
    sh.src[0] = 24 * d;
    sh.src[1] = 10 * d;
    sh.src[2] = 20.0;
    sh.rec = malloc((size_t)sh.ntr * 3 * 4);
    sh.data = malloc((size_t)sh.ntr * sh.ns * 4);
    for (int r = 0; r < sh.ntr; r++) {
        double x = (4 + r) * d;
        sh.rec[3 * r] = (float)x;
        sh.rec[3 * r + 1] = (float)(10 * d);
        sh.rec[3 * r + 2] = 20.0f;
        double t0 = 0.1 + hypot(x - sh.src[0], 420.0) / 2000.0;
        for (int k = 0; k < sh.ns; k++)
            sh.data[(size_t)r * sh.ns + k] = (float)wavelet_ricker(k * sh.dt, 15.0, t0);
    }
    float *ir = malloc(cells * 4), *ic = malloc(cells * 4), *ig = malloc(cells * 4);
    const int strategies[] = {STRAT_FULL, STRAT_BOUNDARY};
    for (size_t k = 0; k < 2; k++) {
        rtm_engine_force_strategy(raw, strategies[k], -1);
        rtm_engine_force_strategy(ec, strategies[k], -1);
        rtm_engine_force_strategy(eg, strategies[k], -1);
        memset(ig, 0xff, cells * 4);
        cr_assert_eq(rtm_engine_migrate_patch(raw, RTM_SHOT(&sh), ir, NULL, NULL), 0, "%s", err_msg());
        cr_assert_eq(rtm_engine_migrate_patch(ec, RTM_SHOT(&sh), ic, NULL, NULL), 0, "%s", err_msg());
        cr_assert_eq(rtm_engine_migrate_patch(eg, RTM_SHOT(&sh), ig, NULL, NULL), 0, "%s", err_msg());
        double rel = test_rel_l2_f32(ig, ic, cells), moved = test_rel_l2_f32(ir, ic, cells);
        cr_log_info("%s: corrected image GPU vs CPU %.3g; uncorrected vs corrected %.3g",
                    rtm_strategy_name(strategies[k]), rel, moved);
        cr_assert_lt(rel, 1e-5, "%s: GPU vs CPU relative error %.3g", rtm_strategy_name(strategies[k]), rel);
        cr_assert_gt(moved, 1e-3, "%s: the correction changed nothing (%.3g)", rtm_strategy_name(strategies[k]),
                     moved);
    }
    free(ir), free(ic), free(ig), free(sh.rec), free(sh.data), free(v);
    rtm_engine_destroy(raw);
    rtm_engine_destroy(ec);
    rtm_engine_destroy(eg);
    config_free(&cfg);
}
