/* Boundary with its strips in page-locked host memory (kernels/rtm_strips.h) on the GPU:
 * the image is the device store's bit for bit (the same strips reach the same kernels;
 * only where they wait in between differs), acoustic and TTI, with one and three
 * staging strips, one stream and two, and the fused backward sweeps; and within 1e-5 of
 * the CPU's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "io/shot.h"
#include "kernels/backend.h"
#include "kernels/device.h"
#include "kernels/rtm.h"
#include "kernels/rtm_strips.h"
#include "stream/error.h"
#include "stream/rtm_config.h"
#include "tests/gpu/gpu_rtm_shot.h"
#include "tests/gpu/gpu_support.h"
#include "tests/support.h"

static void host_equals_device(bool tti)
{
    GPU_REQUIRED();
    const double d = 10.0;
    const size_t cells = (size_t)GPU_RTM_NX * GPU_RTM_NY * GPU_RTM_NZ;
    struct rtm_volume vol;
    float *v = gpu_rtm_volume(&vol, d, tti);
    struct sl_config cfg;
    gpu_rtm_config(&cfg, tti, 1);
    struct rtm_job_params jp;
    cr_assert_eq(rtm_job_params_init(&cfg, &jp), 0, "%s", err_msg());
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct shot sh;
    gpu_rtm_synth_shot(&sh, 5, d, cfg.propagator.dt);
    const char *phys = tti ? "TTI" : "acoustic";

    /* the references: device strips on the GPU, and the CPU */
    struct rtm_shot_stats sd, sc, sh_;
    jp.p.strip_store = RTM_STRIPS_DEVICE;
    float *ref = gpu_rtm_image(&jp.p, &gpu, &vol, &sh, RTM_BOUNDARY, &sd);
    float *cpu_img = gpu_rtm_image(&jp.p, &cpu, &vol, &sh, RTM_BOUNDARY, &sc);
    cr_assert(!sd.strips_host);
    double e2 = 0;
    for (size_t i = 0; i < cells; i++)
        e2 += (double)ref[i] * ref[i];
    cr_assert(e2 > 0 && isfinite(e2), "%s: device-strip image empty or not finite", phys);
    double rc = test_rel_l2_f32(ref, cpu_img, cells);
    cr_log_info("%s boundary, device strips: GPU vs CPU %.3g", phys, rc);
    cr_assert_lt(rc, 1e-5, "%s: GPU vs CPU %.3g", phys, rc);

    /* host strips: stages 1 and 3, two streams and one, and (acoustic) the fused sweeps */
    struct variant {
        int stages;
        bool one_stream;
        int backward;
        int pin;
    } vs[] = {{3, false, RTM_BACKWARD_SEPARATE, DEV_PIN_PIECES}, {1, false, RTM_BACKWARD_SEPARATE, DEV_PIN_REGISTER},
              {3, true, RTM_BACKWARD_SEPARATE, DEV_PIN_ALLOC},   {3, false, RTM_BACKWARD_FUSED, DEV_PIN_PIECES},
              {2, false, RTM_BACKWARD_IMAGE, DEV_PIN_ALLOC}};
    const int nv = tti ? 3 : 5;
    for (int k = 0; k < nv; k++) {
        struct rtm_params p = jp.p;
        p.strip_store = RTM_STRIPS_HOST;
        p.tuning.strip_stages = vs[k].stages;
        p.tuning.one_stream = vs[k].one_stream;
        p.tuning.backward = vs[k].backward;
        p.tuning.strip_pin = vs[k].pin;
        struct rtm_params pd = p; /* the device store with the same tuning */
        pd.strip_store = RTM_STRIPS_DEVICE;
        struct rtm_shot_stats sdev;
        float *dimg = gpu_rtm_image(&pd, &gpu, &vol, &sh, RTM_BOUNDARY, &sdev);
        float *himg = gpu_rtm_image(&p, &gpu, &vol, &sh, RTM_BOUNDARY, &sh_);
        cr_assert(sh_.strips_host, "%s: strips not on the host", phys);
        size_t differ = 0;
        for (size_t i = 0; i < cells; i++)
            differ += memcmp(&himg[i], &dimg[i], 4) != 0;
        cr_log_info("%s, host strips (pin %d), %d stages, one_stream %d, backward %d: %zu cells differ from the "
                    "device store; device bytes %.2f vs %.2f MiB; strips %.2f MiB",
                    phys, vs[k].pin, vs[k].stages, vs[k].one_stream, vs[k].backward, differ, sh_.mem_bytes / 1048576.0,
                    sdev.mem_bytes / 1048576.0, sh_.strips_bytes / 1048576.0);
        cr_assert_eq(differ, 0, "%s, %d stages, one_stream %d, backward %d: %zu cells differ", phys, vs[k].stages,
                     vs[k].one_stream, vs[k].backward, differ);
        /* the device holds the staging strips only */
        cr_assert_lt(sh_.mem_bytes + sh_.strips_bytes / 2, sdev.mem_bytes, "%s: host strips did not save device memory",
                     phys);
        double rel = test_rel_l2_f32(himg, cpu_img, cells);
        cr_assert_lt(rel, 1e-5, "%s host strips: GPU vs CPU %.3g", phys, rel);
        free(dimg);
        free(himg);
    }
    free(ref), free(cpu_img), free(sh.rec), free(sh.data), free(v);
    rtm_job_params_free(&jp);
    config_free(&cfg);
}

Test(gpu_rtm_strips, acoustic_host_strips_equal_device_strips, .timeout = 300) { host_equals_device(false); }

Test(gpu_rtm_strips, tti_host_strips_equal_device_strips, .timeout = 300) { host_equals_device(true); }
