/* [propagator] time_dispersion = "correct" on the GPU (docs/time-dispersion.md): the
 * transforms run on the host before the upload, so the CUDA engine's image must be the
 * CPU engine's (relative error under 1e-5, as test_gpu_rtm.c asks of every strategy),
 * including the shot whose traces are already at the propagator dt (the path that
 * uploads the shot's own array when the correction is off), and differ from the
 * uncorrected image (the option took effect).  The model job's transforms and resampling
 * on the device (kernels/time_dispersion.cu, kernels/wavelet.cu) against the CPU's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <segyio/segy.h>

#include "conf/config.h"
#include "kernels/backend.h"
#include "kernels/device.h"
#include "kernels/rtm.h"
#include "kernels/time_dispersion.h"
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

/* A band-limited test trace: Ricker pulses at a few delays, amplitudes and peaks. */
static void pulses(float *x, size_t n, double dt, int seed)
{
    for (size_t k = 0; k < n; k++) {
        double t = k * dt, s = 0;
        for (int p = 0; p < 3; p++)
            s += (1.0 + 0.3 * p + 0.1 * seed) * wavelet_ricker(t, 10.0 + 4.0 * p + (seed % 5), 0.15 + 0.2 * p + 0.011 * seed);
        x[k] = (float)s;
    }
}

/* tdt_apply_device against tdt_apply (the reference), both directions, traces at a stride
 * whose gaps must stay untouched, more traces than one CUDA batch holds at a long length;
 * and the resampler's CUDA twin against wavelet_resampler_apply. */
Test(gpu_time_dispersion, device_transforms_match_cpu, .timeout = 300)
{
    GPU_REQUIRED();
    struct sl_device gpu;
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    /* 1029: two CUDA batches, M even; 60001: long traces; 56: M = 225, odd (the mirror of
     * the spectrum past M/2 differs from an even M's) */
    const size_t lens[3] = {1029, 60001, 56}, counts[3] = {1100, 5, 37};
    const double dts[3] = {3.9e-3, 0.5e-3, 8e-3}, dts_out[3] = {1e-3, 2e-3, 2e-3};
    for (int c = 0; c < 3; c++) {
        const size_t n = lens[c], ntr = counts[c], stride = n + 7;
        const double dt = dts[c];
        float *h = malloc(ntr * stride * 4), *ref = malloc(ntr * stride * 4), *got = malloc(ntr * stride * 4);
        for (size_t i = 0; i < ntr; i++) {
            pulses(h + i * stride, n, dt, (int)i);
            for (size_t k = n; k < stride; k++)
                h[i * stride + k] = 1234.5f; /* not the transform's */
        }
        struct tdt *t;
        cr_assert_eq(tdt_create(n, dt, &t), 0, "%s", err_msg());
        float *d;
        cr_assert_eq(dev_alloc(&gpu, ntr * stride * 4, (void **)&d), 0, "%s", err_msg());
        for (int dir = 0; dir < 2; dir++) {
            memcpy(ref, h, ntr * stride * 4);
            double oob_ref = -1, oob_dev = -1;
            cr_assert_eq(tdt_apply(t, dir, ref, ntr, stride, &oob_ref), 0, "%s", err_msg());
            cr_assert_eq(dev_copy(&gpu, d, h, ntr * stride * 4, DEV_H2D, NULL), 0);
            cr_assert_eq(tdt_apply_device(t, dir, d, ntr, stride, &oob_dev), 0, "%s", err_msg());
            memset(got, 0xff, ntr * stride * 4);
            cr_assert_eq(dev_copy(&gpu, got, d, ntr * stride * 4, DEV_D2H, NULL), 0);
            double worst = 0;
            for (size_t i = 0; i < ntr; i++) {
                double e = test_rel_l2_f32(got + i * stride, ref + i * stride, n);
                worst = e > worst ? e : worst;
                for (size_t k = n; k < stride; k++)
                    cr_assert_eq(got[i * stride + k], 1234.5f, "trace %zu: gap sample %zu overwritten", i, k);
            }
            double moved = test_rel_l2_f32(ref, h, n);
            cr_log_info("tdt %s, %zu traces of %zu: CUDA vs CPU worst rel L2 %.3g; out of band %.6g / %.6g; "
                        "the transform moved trace 0 by %.3g",
                        dir == TDT_FORWARD ? "forward" : "inverse", ntr, n, worst, oob_dev, oob_ref, moved);
            cr_assert_lt(worst, 1e-6, "CUDA vs CPU %.3g", worst);
            cr_assert_gt(moved, 1e-3, "the transform did nothing (%.3g)", moved);
            cr_assert_lt(fabs(oob_dev - oob_ref), 1e-9 + 1e-6 * oob_ref, "out of band %.9g vs %.9g", oob_dev,
                         oob_ref);
        }
        /* the resampler: to 1 ms (up, c = 0), to 2 ms (down with the low-pass, c = 1; up, c = 2) */
        const double dt_out = dts_out[c];
        const size_t ns_out = (size_t)((n - 1) * dt / dt_out) + 1, ostride = ns_out + 3;
        struct wavelet_resampler rs;
        cr_assert_eq(wavelet_resampler_init(&rs, n, dt, ns_out, dt_out), 0);
        float *o_ref = malloc(ntr * ostride * 4), *o_got = malloc(ntr * ostride * 4), *dout;
        for (size_t i = 0; i < ntr; i++)
            wavelet_resampler_apply(&rs, h + i * stride, o_ref + i * ostride);
        cr_assert_eq(dev_copy(&gpu, d, h, ntr * stride * 4, DEV_H2D, NULL), 0);
        cr_assert_eq(dev_alloc(&gpu, ntr * ostride * 4, (void **)&dout), 0);
        cr_assert_eq(wavelet_resampler_apply_device(&rs, d, stride, dout, ostride, ntr), 0, "%s", err_msg());
        cr_assert_eq(dev_copy(&gpu, o_got, dout, ntr * ostride * 4, DEV_D2H, NULL), 0);
        double worst = 0;
        for (size_t i = 0; i < ntr; i++) {
            double e = test_rel_l2_f32(o_got + i * ostride, o_ref + i * ostride, ns_out);
            worst = e > worst ? e : worst;
        }
        cr_log_info("resampler %zu -> %zu samples, %zu traces: CUDA vs CPU worst rel L2 %.3g", n, ns_out, ntr, worst);
        cr_assert_lt(worst, 1e-6, "resampler CUDA vs CPU %.3g", worst);
        wavelet_resampler_free(&rs);
        dev_free(&gpu, dout);
        dev_free(&gpu, d);
        tdt_destroy(t);
        free(o_ref), free(o_got), free(h), free(ref), free(got);
    }
}

/* `seislive model` with time_dispersion = "correct": the traces the GPU job transforms
 * and resamples on the device are the CPU job's (relative error under 1e-5), for every
 * receiver, and the correction took effect (uncorrected traces differ). */
static float *model_traces(const char *dir, const char *device, const char *td, int *ntr, int *ns)
{
    char text[2048], out[4200];
    snprintf(text, sizeof text,
             "[job]\nkind = \"model\"\nname = \"m\"\n\n"
             "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [48, 40, 36]\nd = [10.0, 10.0, 10.0]\n\n"
             "[propagator]\norder = 8\nt_max = 0.4\nf_peak = 15.0\nfree_surface = false\n"
             "time_dispersion = \"%s\"\ndispersion_max = 0\n\n"
             "[acquisition]\nsources = [[235.0, 195.0, 175.0]]\nrx_origin = [23.0, 41.0, 95.0]\n"
             "rx_step = [13.0, 17.0]\nrx_count = [30, 17]\ndt_out = 0.001\n\n"
             "[runtime]\ndevice = \"%s\"\n",
             td, device);
    char name[64];
    snprintf(name, sizeof name, "%s-%s.toml", device, td);
    char *conf = test_write_file(dir, name, text);
    snprintf(out, sizeof out, "%s/%s-%s.segy", dir, device, td);
    float *tr = test_model_traces(conf, out, 200, ntr, ns, NULL);
    free(conf);
    return tr;
}

Test(gpu_time_dispersion, model_job_traces_match_cpu, .timeout = 400)
{
    GPU_REQUIRED();
    char *dir = test_tmpdir();
    int nc, nsc, ng, nsg, nu, nsu;
    float *c = model_traces(dir, "cpu", "correct", &nc, &nsc);
    float *g = model_traces(dir, "cuda:0", "correct", &ng, &nsg);
    float *u = model_traces(dir, "cuda:0", "none", &nu, &nsu);
    cr_assert_eq(nc, 30 * 17);
    cr_assert_eq(ng, nc);
    cr_assert_eq(nsg, nsc);
    cr_assert_eq(nsu, nsc);
    double worst = 0;
    for (int i = 0; i < nc; i++) {
        double e = test_rel_l2_f32(g + (size_t)i * nsc, c + (size_t)i * nsc, (size_t)nsc);
        worst = e > worst ? e : worst;
    }
    double moved = test_rel_l2_f32(u, g, (size_t)nc * nsc);
    cr_log_info("model job, %d traces of %d samples: GPU vs CPU worst rel L2 %.3g; uncorrected vs corrected %.3g", nc,
                nsc, worst, moved);
    cr_assert_lt(worst, 1e-5, "GPU vs CPU %.3g", worst);
    cr_assert_gt(moved, 1e-3, "the correction changed nothing (%.3g)", moved);
    free(c), free(g), free(u);
    test_rmtree(dir);
}
