/* The CUDA side of the migration against the CPU reference: the imaging and Laplacian
 * kernels on random input (outputs poisoned first), and the image of a whole shot with
 * each strategy (relative error under 1e-5, the design's bound; the images checked to
 * hold the reflector, so two empty images cannot pass; the shot's measured peak device
 * memory within an order of magnitude of the plan). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "kernels/backend.h"
#include "kernels/imaging.h"
#include "kernels/laplacian_filter.h"
#include "kernels/random_boundary.h"
#include "kernels/rtm.h"
#include "kernels/device.h"
#include "kernels/wave.h"
#include "stream/error.h"
#include "stream/rtm_config.h"
#include "tests/gpu/gpu_rtm_shot.h"
#include "tests/gpu/gpu_support.h"
#include "tests/support.h"

#ifdef SEISLIVE_CUDA
static float frand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 65536.0f - 0.5f;
}

static void *up(const struct sl_device *d, const void *h, size_t b)
{
    void *p;
    cr_assert_eq(dev_alloc(d, b, &p), 0, "%s", err_msg());
    if (h)
        cr_assert_eq(dev_copy(d, p, h, b, DEV_H2D, NULL), 0, "%s", err_msg());
    return p;
}

/* 0xFF bytes: NaN floats, so any cell a kernel forgets to write shows. */
static void *poisoned(const struct sl_device *d, size_t b)
{
    void *h = malloc(b);
    memset(h, 0xff, b);
    void *p = up(d, h, b);
    free(h);
    return p;
}
#endif

Test(gpu_rtm, imaging_and_laplacian_kernels_match_cpu)
{
    GPU_REQUIRED();
#ifdef SEISLIVE_CUDA
    struct sl_device g;
    cr_assert_eq(backend_select("cuda:0", &g), 0, "%s", err_msg());
    const int P[3] = {70, 33, 21};
    struct imaging_box bq = {{61, 27, 17}, {4, 3, 2}, {P[0], P[1]}};
    struct imaging_box bu = {{61, 27, 17}, {0, 0, 0}, {61, 27}};
    size_t nw = (size_t)P[0] * P[1] * P[2], ni = imaging_cells(&bq);
    unsigned s = 3;
    float *q = malloc(nw * 4), *uw = malloc(nw * 4), *u = malloc(ni * 4);
    for (size_t i = 0; i < nw; i++) {
        q[i] = frand(&s);
        uw[i] = frand(&s);
    }
    imaging_extract_cpu(&bq, uw, u);
    float *dq = up(&g, q, nw * 4), *duw = up(&g, uw, nw * 4), *du = poisoned(&g, ni * 4);
    cr_assert_eq(imaging_extract_cuda(&bq, duw, du, NULL), 0, "%s", err_msg());
    float *hu = malloc(ni * 4);
    cr_assert_eq(dev_copy(&g, hu, du, ni * 4, DEV_D2H, NULL), 0);
    cr_assert_eq(memcmp(hu, u, ni * 4), 0, "extract differs");
    for (int cond = IMG_XCORR; cond <= IMG_BOTH; cond++) {
        float *num = calloc(ni, 4), *ils = calloc(ni, 4), *ilr = calloc(ni, 4), *out = malloc(ni * 4);
        struct imaging_acc acc = {num, ils, imaging_needs_receiver(cond) ? ilr : NULL};
        struct imaging_acc dacc = {up(&g, num, ni * 4), up(&g, ils, ni * 4),
                                   imaging_needs_receiver(cond) ? up(&g, ilr, ni * 4) : NULL};
        for (int t = 0; t < 3; t++) {
            imaging_accumulate_cpu(&bu, u, &bq, q, &acc);
            cr_assert_eq(imaging_accumulate_cuda(&bu, du, &bq, dq, &dacc, false, NULL), 0, "%s", err_msg());
        }
        imaging_finalize_cpu(&bq, cond, &acc, out);
        float *dout = poisoned(&g, ni * 4), *scr = up(&g, NULL, 8), *hout = malloc(ni * 4);
        cr_assert_eq(imaging_finalize_cuda(&bq, cond, &dacc, dout, scr, NULL), 0, "%s", err_msg());
        cr_assert_eq(dev_copy(&g, hout, dout, ni * 4, DEV_D2H, NULL), 0);
        double rel = test_rel_l2_f32(hout, out, ni);
        cr_assert_lt(rel, 1e-5, "condition %d: relative error %.3g", cond, rel);
        dev_free(&g, dacc.num), dev_free(&g, dacc.ill_s), dev_free(&g, dacc.ill_r);
        dev_free(&g, dout), dev_free(&g, scr);
        free(num), free(ils), free(ilr), free(out), free(hout);
    }
    const int n[3] = {P[0], P[1], P[2]};
    const double d[3] = {10, 12.5, 5};
    float *lc = malloc(nw * 4), *lg = malloc(nw * 4), *dl = poisoned(&g, nw * 4);
    laplacian_filter_cpu(n, d, q, lc);
    cr_assert_eq(laplacian_filter_cuda(n, d, dq, dl, NULL), 0, "%s", err_msg());
    cr_assert_eq(dev_copy(&g, lg, dl, nw * 4, DEV_D2H, NULL), 0);
    double rel = test_rel_l2_f32(lg, lc, nw);
    cr_assert_lt(rel, 1e-5, "laplacian: relative error %.3g", rel);
    /* thin grids: faces mirrored, an axis of one cell left out (2D-like models) */
    static const int thin[4][3] = {{70, 1, 21}, {70, 2, 21}, {1, 33, 2}, {3, 1, 1}};
    for (int t = 0; t < 4; t++) {
        size_t nt = (size_t)thin[t][0] * thin[t][1] * thin[t][2];
        float *tc = malloc(nt * 4), *tg = malloc(nt * 4), *dt = poisoned(&g, nt * 4);
        float *din = up(&g, q, nt * 4);
        laplacian_filter_cpu(thin[t], d, q, tc);
        cr_assert_eq(laplacian_filter_cuda(thin[t], d, din, dt, NULL), 0, "%s", err_msg());
        cr_assert_eq(dev_copy(&g, tg, dt, nt * 4, DEV_D2H, NULL), 0);
        double norm = 0;
        for (size_t i = 0; i < nt; i++)
            norm += (double)tc[i] * tc[i];
        cr_assert_gt(norm, 0, "laplacian of a %dx%dx%d grid is all zero", thin[t][0], thin[t][1], thin[t][2]);
        double r = test_rel_l2_f32(tg, tc, nt);
        cr_assert_lt(r, 1e-5, "laplacian %dx%dx%d: relative error %.3g", thin[t][0], thin[t][1], thin[t][2], r);
        dev_free(&g, dt), dev_free(&g, din);
        free(tc), free(tg);
    }
    dev_free(&g, dq), dev_free(&g, duw), dev_free(&g, du), dev_free(&g, dl);
    free(q), free(uw), free(u), free(hu), free(lc), free(lg);
#endif
}

/* IMG (the grid N, x fastest) holds an image, and its reflector where the synthetic
 * shot below puts it: the rms over each depth plane peaks at 210-240 m (the records are
 * a reflection from 230 m, migrated through an interface at 220 m) and stands out of
 * the shallow planes.  Measured on the CPU: peak plane 220 m for every strategy, its
 * rms 7.9 times the mean rms of the top 10 planes (random boundary, whose scattering
 * lifts the shallow planes: 1.6), L2 norm 25.2 (random 29.6). */
static void assert_reflector(const float *img, const int n[3], const char *what)
{
    double norm = 0, best = -1, top = 0;
    int zbest = -1;
    for (int z = 0; z < n[2]; z++) {
        double s = 0;
        for (size_t i = 0; i < (size_t)n[0] * n[1]; i++) {
            double a = img[(size_t)z * n[0] * n[1] + i];
            s += a * a;
        }
        norm += s;
        double rms = sqrt(s / ((double)n[0] * n[1]));
        if (z < 10)
            top += rms / 10;
        if (rms > best) {
            best = rms;
            zbest = z;
        }
    }
    norm = sqrt(norm);
    cr_log_info("%s: image norm %.3g, strongest depth plane %d m (rms %.3g, top planes %.3g)", what, norm,
                zbest * 10, best, top);
    cr_assert(norm > 1.0, "%s: image norm %g: no image", what, norm);
    cr_assert(zbest >= 21 && zbest <= 24, "%s: strongest depth plane at %d m, the reflector is at 220-230 m",
              what, zbest * 10);
    cr_assert(best > 1.5 * top, "%s: reflector rms %g not above the shallow planes' %g", what, best, top);
}

/* The shot of the tests below: a two-layer model (interface at 220 m) of N cells of
 * 10 m, 40 receivers along x at 20 m depth with synthetic traces (a reflection from 230
 * m), the engine's config. */
static float *two_layers(const int n[3])
{
    size_t cells = (size_t)n[0] * n[1] * n[2];
    float *v = malloc(cells * 4);
    for (int z = 0; z < n[2]; z++)
        for (size_t i = 0; i < (size_t)n[0] * n[1]; i++)
            v[(size_t)z * n[0] * n[1] + i] = z < 22 ? 2000.0f : 2600.0f;
    return v;
}

static void shot_config(struct sl_config *cfg)
{
    config_defaults(cfg);
    cfg->propagator.order = 8;
    cfg->propagator.dt = 1.5e-3;
    cfg->propagator.f_peak = 15.0;
    for (int f = 0; f < 6; f++)
        cfg->propagator.pml_width[f] = 10;
    cfg->propagator.free_surface = false;
    cfg->rtm.aperture = 1e6;
    cfg->rtm.imaging = IMG_BOTH;
    cfg->rtm.checkpoints = 8;
    cfg->rtm.random_width = 10;
}

Test(gpu_rtm, shot_image_matches_cpu, .timeout = 300)
{
    GPU_REQUIRED();
    const int n[3] = {48, 20, 36};
    const double d = 10.0;
    size_t cells = (size_t)n[0] * n[1] * n[2];
    float *v = two_layers(n);
    struct sl_config cfg;
    shot_config(&cfg);
    struct rtm_volume vol = {.n = {n[0], n[1], n[2]}, .d = {d, d, d}, .o = {0, 0, 0}, .v = v};
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct rtm_engine *ec, *eg;
    cr_assert_eq(rtm_engine_create_cfg(&cfg, &cpu, &vol, &ec), 0, "%s", err_msg());
    cr_assert_eq(rtm_engine_create_cfg(&cfg, &gpu, &vol, &eg), 0, "%s", err_msg());
    /* a shot with synthetic traces: 40 receivers along x at 20 m depth */
    struct shot sh;
    gpu_rtm_synth_shot(&sh, 3, d, cfg.propagator.dt);
    float *ic = malloc(cells * 4), *ig = malloc(cells * 4);
    const int strategies[][2] = {{STRAT_FULL, -1}, {STRAT_BOUNDARY, -1}, {STRAT_RANDOM, -1},
                                 {STRAT_CHECKPOINT, CKPT_BINOMIAL}, {STRAT_CHECKPOINT, CKPT_UNIFORM}};
    for (size_t k = 0; k < sizeof strategies / sizeof *strategies; k++) {
        rtm_engine_force_strategy(ec, strategies[k][0], strategies[k][1]);
        rtm_engine_force_strategy(eg, strategies[k][0], strategies[k][1]);
        memset(ig, 0xff, cells * 4);
        struct rtm_shot_stats gs;
        memset(&gs, 0, sizeof gs);
        cr_assert_eq(rtm_engine_migrate_patch(ec, RTM_SHOT(&sh), ic, NULL, NULL), 0, "%s", err_msg());
        cr_assert_eq(rtm_engine_migrate_patch(eg, RTM_SHOT(&sh), ig, NULL, &gs), 0, "%s", err_msg());
        const char *name = rtm_strategy_name(strategies[k][0]);
        double rel = test_rel_l2_f32(ig, ic, cells);
        cr_log_info("%s: GPU vs CPU image relative error %.3g", name, rel);
        /* both images must hold the reflector: two empty ones would agree perfectly */
        assert_reflector(ic, n, "CPU");
        assert_reflector(ig, n, "GPU");
        cr_assert_lt(rel, 1e-5, "%s (schedule %d): GPU vs CPU relative error %.3g", name, strategies[k][1], rel);
        /* The measured peak device memory of the shot (cudaMemGetInfo over the shot) is
         * there and of the size the memory plan gave for the strategy used: allocation
         * granularity and the runtime's own buffers move it, not by 10 times.  The
         * measurement is the whole device's, so this test needs the GPU to itself (`make
         * test-gpu` runs --jobs=1): another process freeing memory meanwhile makes the
         * shot's peak look smaller (seen with --jobs=2: 30.0 MiB against 35.4 allocated). */
        cr_assert_eq(gs.strategy, strategies[k][0]);
        size_t plan = gs.mem_need[gs.strategy];
        cr_log_info("%s: peak device memory %.1f MiB, plan %.1f MiB, allocated %.1f MiB", name,
                    gs.mem_device / 1048576.0, plan / 1048576.0, gs.mem_bytes / 1048576.0);
        cr_assert_gt(plan, 0, "%s: no memory plan", name);
        cr_assert(gs.mem_device_measured, "%s: peak device memory not measured (n/a)", name);
        cr_assert_gt(gs.mem_device, 0, "%s: peak device memory not measured", name);
        /* what the engine itself allocated is in use at the peak: the measurement sees it */
        cr_assert_geq(gs.mem_device, gs.mem_bytes * 9 / 10,
                      "%s: peak device memory %zu bytes below the %zu the shot allocated", name,
                      gs.mem_device, gs.mem_bytes);
        cr_assert(gs.mem_device >= plan / 10 && gs.mem_device <= 10 * plan,
                  "%s: peak device memory %zu bytes, plan %zu: not the same order of magnitude", name,
                  gs.mem_device, plan);
    }
    free(ic), free(ig), free(sh.rec), free(sh.data), free(v);
    rtm_engine_destroy(ec);
    rtm_engine_destroy(eg);
    config_free(&cfg);
}

/* The engine's tuning (struct rtm_tuning: one stream for both wavefields, the scalar
 * imaging kernel) changes how fast, never what: boundary and random (the strategies with
 * two streams) give the default's image with every variant. */
Test(gpu_rtm, tuning_changes_no_image, .timeout = 300)
{
    GPU_REQUIRED();
    const int n[3] = {48, 20, 36};
    const double d = 10.0;
    size_t cells = (size_t)n[0] * n[1] * n[2];
    float *v = two_layers(n);
    struct sl_config cfg;
    shot_config(&cfg);
    struct rtm_volume vol = {.n = {n[0], n[1], n[2]}, .d = {d, d, d}, .o = {0, 0, 0}, .v = v};
    struct sl_device gpu;
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct shot sh;
    gpu_rtm_synth_shot(&sh, 3, d, cfg.propagator.dt);
    struct rtm_job_params jp;
    cr_assert_eq(rtm_job_params_init(&cfg, &jp), 0, "%s", err_msg());
    const struct rtm_tuning variants[4] = {{.one_stream = false, .imaging_scalar = false},
                                           {.one_stream = true, .imaging_scalar = false},
                                           {.one_stream = false, .imaging_scalar = true},
                                           {.one_stream = true, .imaging_scalar = true}};
    const int strategies[2] = {RTM_BOUNDARY, RTM_RANDOM};
    float *ref[2], *img = malloc(cells * 4);
    for (int t = 0; t < 4; t++) {
        jp.p.tuning = variants[t];
        struct rtm_engine *e;
        cr_assert_eq(rtm_engine_create(&jp.p, &gpu, &vol, &e), 0, "%s", err_msg());
        for (int k = 0; k < 2; k++) {
            rtm_engine_force_strategy(e, strategies[k], -1);
            float *out = t == 0 ? (ref[k] = malloc(cells * 4)) : img;
            memset(out, 0xff, cells * 4);
            cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(&sh), out, NULL, NULL), 0, "%s", err_msg());
            const char *name = rtm_strategy_name(strategies[k]);
            if (t == 0) {
                assert_reflector(out, n, name);
                continue;
            }
            size_t differ = 0;
            for (size_t i = 0; i < cells; i++)
                differ += memcmp(&out[i], &ref[k][i], 4) != 0;
            double rel = test_rel_l2_f32(out, ref[k], cells);
            cr_log_info("%s, one_stream %d, imaging_scalar %d: %zu cells differ from the default, relative %.3g",
                        name, variants[t].one_stream, variants[t].imaging_scalar, differ, rel);
            cr_assert_lt(rel, 1e-6, "%s, one_stream %d, imaging_scalar %d: relative difference %.3g", name,
                         variants[t].one_stream, variants[t].imaging_scalar, rel);
        }
        rtm_engine_destroy(e);
    }
    rtm_job_params_free(&jp);
    free(ref[0]), free(ref[1]), free(img), free(sh.rec), free(sh.data), free(v);
    config_free(&cfg);
}

/* The accumulation alone, bit for bit against the CPU (both round each product and sum
 * to nearest), in the two geometries the CUDA side tells apart: rows that start on 16
 * bytes with a width divisible by 4 (float4 kernel) and rows that do not (scalar); and
 * with the scalar kernel asked for (rtm_tuning.imaging_scalar) in both. */
Test(gpu_rtm, imaging_accumulation_bitwise_equal_in_both_layouts)
{
    GPU_REQUIRED();
#ifdef SEISLIVE_CUDA
    struct sl_device g;
    cr_assert_eq(backend_select("cuda:0", &g), 0, "%s", err_msg());
    const struct { int n0, off0, pitch0; } geo[2] = {{64, 8, 80}, {61, 3, 70}};
    for (int ks = 0; ks < 4; ks++) {
        const int k = ks % 2;
        const bool scalar = ks >= 2;
        const int P[3] = {geo[k].pitch0, 29, 19};
        struct imaging_box bq = {{geo[k].n0, 25, 15}, {geo[k].off0, 2, 3}, {P[0], P[1]}};
        struct imaging_box bu = {{geo[k].n0, 25, 15}, {geo[k].off0, 1, 2}, {P[0], P[1]}};
        size_t nw = (size_t)P[0] * P[1] * P[2], ni = imaging_cells(&bq);
        unsigned s = 11 + (unsigned)k;
        float *q = malloc(nw * 4), *u = malloc(nw * 4), *a[3], *h = malloc(ni * 4);
        for (size_t i = 0; i < nw; i++) {
            q[i] = frand(&s);
            u[i] = frand(&s);
        }
        for (int j = 0; j < 3; j++) {
            a[j] = malloc(ni * 4);
            for (size_t i = 0; i < ni; i++)
                a[j][i] = frand(&s); /* accumulators start from data, not zero */
        }
        struct imaging_acc acc = {a[0], a[1], a[2]};
        struct imaging_acc dacc = {up(&g, a[0], ni * 4), up(&g, a[1], ni * 4), up(&g, a[2], ni * 4)};
        float *dq = up(&g, q, nw * 4), *du = up(&g, u, nw * 4);
        for (int t = 0; t < 3; t++) {
            imaging_accumulate_cpu(&bu, u, &bq, q, &acc);
            cr_assert_eq(imaging_accumulate_cuda(&bu, du, &bq, dq, &dacc, scalar, NULL), 0, "%s", err_msg());
        }
        const float *dv[3] = {dacc.num, dacc.ill_s, dacc.ill_r};
        for (int j = 0; j < 3; j++) {
            cr_assert_eq(dev_copy(&g, h, dv[j], ni * 4, DEV_D2H, NULL), 0);
            cr_assert_eq(memcmp(h, a[j], ni * 4), 0, "layout %d%s, accumulator %d differs from the CPU", k,
                         scalar ? " (scalar kernel)" : "", j);
            dev_free(&g, (void *)dv[j]);
            free(a[j]);
        }
        dev_free(&g, dq), dev_free(&g, du);
        free(q), free(u), free(h);
    }
#endif
}

/* The random boundary built on the device (random_boundary.cu through
 * wave_randomize_layers) against the CPU loop on the same padded model, for every ramp
 * and range, with a free surface (no top layer) and unequal faces: interior cells keep
 * their velocity, layer cells agree to within the velocity round trip's last bits, and
 * the layers were randomized at all. */
Test(gpu_rtm, random_layers_match_cpu, .timeout = 120)
{
    GPU_REQUIRED();
#ifdef SEISLIVE_CUDA
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct wave_params p = {.n = {37, 29, 23}, .d = {10, 12, 9}, .order = 8, .dt = 5e-4,
                            .pml = {7, 9, 8, 6, 0, 5}, .pml_reflection = 1e-4, .f_ref = 12,
                            .free_surface = true, .kernel = WAVE_KERNEL_TILED};
    const size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    unsigned seed = 7;
    for (size_t i = 0; i < nn; i++)
        v[i] = 2500.0f + 2000.0f * frand(&seed);
    for (int ramp = RAMP_LINEAR; ramp <= RAMP_QUADRATIC; ramp++)
        for (int range = RRANGE_FULL; range <= RRANGE_SYMMETRIC; range++) {
            struct wave_sim *c, *g;
            cr_assert_eq(wave_create(&cpu, &p, v, &c), 0, "%s", err_msg());
            cr_assert_eq(wave_create(&gpu, &p, v, &g), 0, "%s", err_msg());
            const struct wave_layout *L = wave_layout(c);
            const size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
            float *before = malloc(np * 4), *vc = malloc(np * 4), *vg = malloc(np * 4);
            cr_assert_eq(wave_get_velocity_padded(g, before), 0);
            const double d[3] = {p.d[0], p.d[1], p.d[2]};
            struct random_boundary rb = {ramp, range, 5, 42, random_boundary_vstable(8, p.dt, d), 1500.0,
                                         random_boundary_vnyquist(30.0, d)};
            cr_assert_eq(wave_randomize_layers(c, &rb, 3), 0, "%s", err_msg());
            cr_assert_eq(wave_randomize_layers(g, &rb, 3), 0, "%s", err_msg());
            memset(vg, 0xff, np * 4);
            cr_assert_eq(wave_get_velocity_padded(c, vc), 0);
            cr_assert_eq(wave_get_velocity_padded(g, vg), 0);
            size_t changed = 0, layer = 0;
            double worst = 0;
            for (int k = 0; k < L->npad[2]; k++)
                for (int j = 0; j < L->npad[1]; j++)
                    for (int i = 0; i < L->npad[0]; i++) {
                        const size_t e = ((size_t)k * L->npad[1] + j) * L->npad[0] + i;
                        const bool in = i >= L->pml[0] && i < L->pml[0] + L->n[0] && j >= L->pml[2] &&
                                        j < L->pml[2] + L->n[1] && k >= L->pml[4] && k < L->pml[4] + L->n[2];
                        if (in) {
                            cr_assert_eq(vg[e], before[e], "interior cell (%d, %d, %d) changed", i, j, k);
                            continue;
                        }
                        layer++;
                        changed += fabsf(vg[e] - before[e]) > 1e-3f * before[e];
                        const double r = fabs((double)vg[e] - vc[e]) / vc[e];
                        worst = r > worst ? r : worst;
                    }
            cr_log_info("random layers, ramp %d range %d: %zu of %zu layer cells randomized, GPU vs CPU %.2e", ramp,
                        range, changed, layer, worst);
            cr_assert_lt(worst, 5e-7, "ramp %d range %d: GPU vs CPU %g", ramp, range, worst);
            cr_assert_gt(changed, layer / 4, "ramp %d range %d: only %zu of %zu layer cells changed", ramp, range,
                         changed, layer);
            free(before), free(vc), free(vg);
            wave_destroy(c);
            wave_destroy(g);
        }
    free(v);
#endif
}
