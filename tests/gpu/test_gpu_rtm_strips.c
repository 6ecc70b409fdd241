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

#define NXG 48
#define NYG 20
#define NZG 36

static void strips_config(struct sl_config *cfg, bool tti)
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
    cfg->rtm.image_every = 1;
}

/* Boundary's image on DEV with P (strip_store, tuning as set), its stats in *ST. */
static float *boundary_image(const struct rtm_params *p, const struct sl_device *dev, const struct rtm_volume *vol,
                             const struct shot *sh, struct rtm_shot_stats *st)
{
    const size_t cells = (size_t)NXG * NYG * NZG;
    struct rtm_engine *e = NULL;
    cr_assert_eq(rtm_engine_create(p, dev, vol, &e), 0, "%s", err_msg());
    rtm_engine_force_strategy(e, RTM_BOUNDARY, -1);
    float *img = malloc(cells * 4);
    cr_assert(img);
    memset(img, 0xff, cells * 4);
    memset(st, 0, sizeof *st);
    cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(sh), img, NULL, st), 0, "%s", err_msg());
    cr_assert_eq(st->strategy, RTM_BOUNDARY);
    rtm_engine_destroy(e);
    return img;
}

static void host_equals_device(bool tti)
{
    GPU_REQUIRED();
    const double d = 10.0;
    const size_t cells = (size_t)NXG * NYG * NZG;
    float *v = malloc(cells * 4);
    for (int z = 0; z < NZG; z++)
        for (size_t i = 0; i < (size_t)NXG * NYG; i++)
            v[(size_t)z * NXG * NYG + i] = z < 22 ? 2000.0f : 2600.0f;
    struct rtm_volume vol = {.n = {NXG, NYG, NZG}, .d = {d, d, d}, .o = {0, 0, 0}, .v = v};
    if (tti) {
        vol.epsilon0 = 0.2;
        vol.delta0 = 0.1;
        vol.theta0 = M_PI / 6;
        vol.phi0 = 0.3;
    }
    struct sl_config cfg;
    strips_config(&cfg, tti);
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
    float *ref = boundary_image(&jp.p, &gpu, &vol, &sh, &sd);
    float *cpu_img = boundary_image(&jp.p, &cpu, &vol, &sh, &sc);
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
        float *dimg = boundary_image(&pd, &gpu, &vol, &sh, &sdev);
        float *himg = boundary_image(&p, &gpu, &vol, &sh, &sh_);
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
