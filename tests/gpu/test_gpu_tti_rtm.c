/* The backward sweep's stream arrangement (rtm_tuning.u_ahead, kernels/rtm.h): the
 * source wavefield's reverse step n -> n - 1 waiting for the imaging at n + 1 instead of
 * n changes when things run, never what: boundary (device strips and host strips) and
 * random give the image of u_ahead off bit for bit, TTI and acoustic, imaging every step
 * and every third; and the TTI images are within 1e-5 of the CPU's.  Outputs poisoned. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "io/shot.h"
#include "kernels/backend.h"
#include "kernels/rtm.h"
#include "kernels/rtm_strips.h"
#include "stream/error.h"
#include "stream/rtm_config.h"
#include "tests/gpu/gpu_rtm_shot.h"
#include "tests/gpu/gpu_support.h"
#include "tests/support.h"

static void ahead_same_image(bool tti, int every)
{
    GPU_REQUIRED();
    const double d = 10.0;
    const size_t cells = (size_t)GPU_RTM_NX * GPU_RTM_NY * GPU_RTM_NZ;
    struct rtm_volume vol;
    float *v = gpu_rtm_volume(&vol, d, tti);
    struct sl_config cfg;
    gpu_rtm_config(&cfg, tti, every);
    struct rtm_job_params jp;
    cr_assert_eq(rtm_job_params_init(&cfg, &jp), 0, "%s", err_msg());
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct shot sh;
    gpu_rtm_synth_shot(&sh, 5, d, cfg.propagator.dt);
    const char *phys = tti ? "TTI" : "acoustic";
    static const struct {
        int strategy, store;
    } runs[] = {{RTM_BOUNDARY, RTM_STRIPS_DEVICE}, {RTM_BOUNDARY, RTM_STRIPS_HOST}, {RTM_RANDOM, RTM_STRIPS_AUTO}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        jp.p.strip_store = runs[r].store;
        jp.p.tuning.u_ahead = RTM_U_AHEAD_OFF;
        float *ref = gpu_rtm_image(&jp.p, &gpu, &vol, &sh, runs[r].strategy, NULL);
        jp.p.tuning.u_ahead = RTM_U_AHEAD_ON;
        float *img = gpu_rtm_image(&jp.p, &gpu, &vol, &sh, runs[r].strategy, NULL);
        double e2 = 0;
        size_t differ = 0;
        for (size_t i = 0; i < cells; i++) {
            e2 += (double)ref[i] * ref[i];
            differ += memcmp(&img[i], &ref[i], 4) != 0;
        }
        const char *name = rtm_strategy_name(runs[r].strategy);
        cr_assert(e2 > 0 && isfinite(e2), "%s %s: image empty or not finite", phys, name);
        cr_log_info("%s %s (strip store %d, imaging every %d): u ahead vs not: %zu cells differ", phys, name,
                    runs[r].store, every, differ);
        cr_assert_eq(differ, 0, "%s %s (strip store %d, every %d): %zu cells differ with u_ahead on", phys, name,
                     runs[r].store, every, differ);
        if (tti && runs[r].store != RTM_STRIPS_HOST) {
            jp.p.tuning.u_ahead = RTM_U_AHEAD_OFF;
            float *c = gpu_rtm_image(&jp.p, &cpu, &vol, &sh, runs[r].strategy, NULL);
            const double rel = test_rel_l2_f32(img, c, cells);
            cr_log_info("%s %s: GPU (u ahead) vs CPU %.3g", phys, name, rel);
            cr_assert_lt(rel, 1e-5, "%s %s: GPU vs CPU %.3g", phys, name, rel);
            free(c);
        }
        free(ref);
        free(img);
    }
    rtm_job_params_free(&jp);
    free(sh.rec), free(sh.data), free(v);
    config_free(&cfg);
}

Test(gpu_tti_rtm, u_ahead_same_image_tti, .timeout = 300)
{
    ahead_same_image(true, 1);
}

Test(gpu_tti_rtm, u_ahead_same_image_tti_every3, .timeout = 300)
{
    ahead_same_image(true, 3);
}

Test(gpu_tti_rtm, u_ahead_same_image_acoustic, .timeout = 300)
{
    ahead_same_image(false, 1);
}
