/* The CUDA kernel of RTM's fused backward step (kernels/rtm_fused.cu) against the CPU
 * reference (kernels/rtm_fused.c, itself bit for bit the separate passes:
 * tests/test_rtm_fused.c): relative L2 error under 1e-5 (the design's bound for the GPU
 * against the CPU) in both levels of both fields and in every accumulator, after seven
 * steps imaging every other one, for the boundary and random pairs, 3D, 3D under a free
 * surface and 2D, every imaging condition, every kernel shape (variant) at orders 2, 4, 8,
 * 12 and 16.  The
 * fused kernel is also held against the separate CUDA passes (1e-5), and a shot migrated
 * on the GPU with the fused and the separate backward sweeps gives the same image (1e-5),
 * the fused one having run (the default kernels are the ones it follows).  The image step
 * (the imaging inside the receiver step, rtm_tuning.backward = image) is held to the CPU
 * the same way. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "kernels/backend.h"
#include "kernels/rtm.h"
#include "stream/error.h"
#include "stream/rtm_config.h"
#include "tests/fused_case.h"
#include "tests/gpu/gpu_support.h"
#include "tests/support.h"

#define NSTEPS 7

/* NSTEPS fused steps (VARIANT) on C, imaging every other step; SEPARATE: the separate
 * passes instead (the CUDA imaging kernel, then q's and u's steps). */
static void run(struct fused_case *c, int variant, bool separate)
{
    struct wave_fused *f = NULL;
    if (!separate)
        cr_assert_eq(wave_fused_create(c->q, c->u, variant, &f), 0, "%s", err_msg());
    for (int t = 0; t < NSTEPS; t++) {
        const bool img = t % 2 == 0;
        if (!separate) {
            cr_assert_eq(wave_fused_step(f, &c->b, img ? &c->acc : NULL), 0, "%s", err_msg());
            continue;
        }
        if (img) {
#ifdef SEISLIVE_CUDA
            if (dev_is_gpu(c->dev))
                cr_assert_eq(imaging_accumulate_cuda(&c->b, wave_prev(c->u), &c->b, wave_cur(c->q), &c->acc, false,
                                                     NULL), 0, "%s", err_msg());
            else
#endif
                imaging_accumulate_cpu(&c->b, wave_prev(c->u), &c->b, wave_cur(c->q), &c->acc);
        }
        cr_assert_eq(wave_step(c->q), 0, "%s", err_msg());
        cr_assert_eq(wave_step_reverse(c->u), 0, "%s", err_msg());
    }
    wave_fused_destroy(f);
}

/* The seven parts of two states (fc_state) within 1e-5 of each other, relative L2. */
static void compare(const float *g, const float *c, size_t cnt, size_t cells, const char *what)
{
    static const char *const part[7] = {"q cur", "q prev", "u cur", "u prev", "image", "ill_s", "ill_r"};
    for (int p = 0; p < 7; p++) {
        const size_t off = p < 4 ? (size_t)p * cnt : 4 * cnt + (size_t)(p - 4) * cells, n = p < 4 ? cnt : cells;
        double ref = 0;
        for (size_t i = 0; i < n; i++)
            ref += (double)c[off + i] * c[off + i];
        if (ref == 0)
            continue; /* an accumulator the condition does not keep */
        double rel = test_rel_l2_f32(g + off, c + off, n);
        cr_assert_lt(rel, 1e-5, "%s: %s relative error %.3g", what, part[p], rel);
    }
}

static void check_order(int kind, bool two_d, bool fs, int variant, int order)
{
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    for (int cond = IMAGING_XCORR; cond <= IMAGING_BOTH; cond++) {
        char what[128];
        snprintf(what, sizeof what, "%s%s%s, order %d, variant %d, condition %d",
                 kind == FC_BOUNDARY ? "boundary" : "random", two_d ? ", 2D" : "", fs ? ", free surface" : "", order,
                 variant, cond);
        struct fused_case g, s, c;
        fused_case_init(&g, &gpu, kind, two_d, fs, order, cond);
        fused_case_init(&s, &gpu, kind, two_d, fs, order, cond);
        fused_case_init(&c, &cpu, kind, two_d, fs, order, cond);
        run(&g, variant, false);
        run(&s, 0, true);
        run(&c, 0, false);
        size_t n;
        float *hg = fc_state(&g, &n), *hs = fc_state(&s, &n), *hc = fc_state(&c, &n);
        const size_t cnt = wave_layout(g.q)->count;
        size_t bits = 0;
        for (size_t i = 0; i < n; i++)
            bits += memcmp(&hg[i], &hs[i], 4) != 0;
        cr_log_info("%s: %zu of %zu values differ from the separate CUDA passes", what, bits, n);
        compare(hg, hc, cnt, g.cells, what);
        char w2[160];
        snprintf(w2, sizeof w2, "%s (fused vs separate CUDA)", what);
        compare(hg, hs, cnt, g.cells, w2);
        /* the image is there: two empty images would agree */
        double img = 0;
        for (size_t i = 0; i < g.cells; i++)
            img += fabs(hc[4 * cnt + i]);
        cr_assert_gt(img, 0.0, "%s: empty image", what);
        free(hg), free(hs), free(hc);
        fused_case_free(&g);
        fused_case_free(&s);
        fused_case_free(&c);
    }
}

static void check(int kind, bool two_d, bool fs, int variant) { check_order(kind, two_d, fs, variant, 8); }

Test(gpu_rtm_fused, boundary_matches_cpu, .timeout = 120)
{
    GPU_REQUIRED();
    check(FC_BOUNDARY, false, false, 0);
    check(FC_BOUNDARY, false, true, 0);
    check(FC_BOUNDARY, true, false, 0);
}

Test(gpu_rtm_fused, random_matches_cpu, .timeout = 120)
{
    GPU_REQUIRED();
    check(FC_RANDOM, false, false, 0);
    check(FC_RANDOM, false, true, 0);
    check(FC_RANDOM, true, false, 0);
}

Test(gpu_rtm_fused, other_shapes_match_cpu, .timeout = 120)
{
    GPU_REQUIRED();
    for (int v = 1; v < WAVE_FUSED_VARIANTS; v++) {
        check(FC_BOUNDARY, false, false, v);
        check(FC_RANDOM, false, false, v);
        check(FC_RANDOM, false, true, v);
        check(FC_BOUNDARY, true, false, v);
        check(FC_RANDOM, true, false, v);
    }
}

/* Every variant at other orders (each order is its own instantiation): 2, 4, 12, 16. */
Test(gpu_rtm_fused, other_orders_match_cpu, .timeout = 120)
{
    GPU_REQUIRED();
    const int orders[4] = {2, 4, 12, 16};
    for (int v = 0; v < WAVE_FUSED_VARIANTS; v++)
        for (int o = 0; o < 4; o++) {
            check_order(FC_BOUNDARY, false, false, v, orders[o]);
            check_order(FC_RANDOM, o % 2 == 0, false, v, orders[o]);
        }
}

/* The image step (q's step with the imaging in it, u stepped apart, as the sweep does)
 * on the GPU against the CPU, every condition, boundary / random, 3D, free surface, 2D,
 * orders 4 and 8. */
static void check_image_step(int kind, bool two_d, bool fs, int order)
{
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    for (int cond = IMAGING_XCORR; cond <= IMAGING_BOTH; cond++) {
        char what[128];
        snprintf(what, sizeof what, "image step, %s%s%s, order %d, condition %d",
                 kind == FC_BOUNDARY ? "boundary" : "random", two_d ? ", 2D" : "", fs ? ", free surface" : "", order,
                 cond);
        struct fused_case g, c;
        fused_case_init(&g, &gpu, kind, two_d, fs, order, cond);
        fused_case_init(&c, &cpu, kind, two_d, fs, order, cond);
        struct fused_case *cs[2] = {&g, &c};
        for (int w = 0; w < 2; w++) {
            struct wave_fused *f = NULL;
            cr_assert_eq(wave_fused_create(cs[w]->q, cs[w]->u, 0, &f), 0, "%s", err_msg());
            for (int t = 0; t < NSTEPS; t++) {
                cr_assert_eq(wave_fused_image_step(f, &cs[w]->b, t % 2 == 0 ? &cs[w]->acc : NULL, NULL), 0, "%s",
                             err_msg());
                cr_assert_eq(wave_step_reverse(cs[w]->u), 0, "%s", err_msg());
            }
            wave_fused_destroy(f);
        }
        size_t n;
        float *hg = fc_state(&g, &n), *hc = fc_state(&c, &n);
        compare(hg, hc, wave_layout(g.q)->count, g.cells, what);
        double img = 0;
        for (size_t i = 0; i < g.cells; i++)
            img += fabs(hc[4 * wave_layout(g.q)->count + i]);
        cr_assert_gt(img, 0.0, "%s: empty image", what);
        free(hg), free(hc);
        fused_case_free(&g);
        fused_case_free(&c);
    }
}

Test(gpu_rtm_fused, image_step_matches_cpu, .timeout = 120)
{
    GPU_REQUIRED();
    for (int kind = FC_BOUNDARY; kind <= FC_RANDOM; kind++) {
        check_image_step(kind, false, false, 8);
        check_image_step(kind, false, true, 8);
        check_image_step(kind, true, false, 8);
        check_image_step(kind, false, false, 4);
    }
}

/* A shot on the GPU, fused and separate backward sweeps: the same image. */
Test(gpu_rtm_fused, engine_fused_equals_separate, .timeout = 300)
{
    GPU_REQUIRED();
    const int n[3] = {48, 20, 36};
    const double d = 10.0;
    size_t cells = (size_t)n[0] * n[1] * n[2];
    float *v = malloc(cells * 4);
    for (int z = 0; z < n[2]; z++)
        for (size_t i = 0; i < (size_t)n[0] * n[1]; i++)
            v[(size_t)z * n[0] * n[1] + i] = z < 22 ? 2000.0f : 2600.0f;
    struct sl_config cfg;
    config_defaults(&cfg);
    cfg.propagator.order = 8;
    cfg.propagator.dt = 1.5e-3;
    cfg.propagator.f_peak = 15.0;
    for (int f = 0; f < 6; f++)
        cfg.propagator.pml_width[f] = 10;
    cfg.propagator.free_surface = false;
    cfg.rtm.aperture = 1e6;
    cfg.rtm.random_width = 10;
    struct rtm_volume vol = {.n = {n[0], n[1], n[2]}, .d = {d, d, d}, .o = {0, 0, 0}, .v = v};
    struct sl_device gpu;
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    /* 40 receivers along x at 20 m depth, a Ricker arriving later with offset */
    struct shot sh;
    memset(&sh, 0, sizeof sh);
    sh.id = 3;
    sh.ntr = 40;
    sh.dt = cfg.propagator.dt;
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
            sh.data[(size_t)r * sh.ns + k] = (float)(exp(-pow(M_PI * 15.0 * (k * sh.dt - t0), 2)) *
                                                     (1 - 2 * pow(M_PI * 15.0 * (k * sh.dt - t0), 2)));
    }
    const int conds[2] = {IMG_XCORR, IMG_BOTH};
    const int strategies[2] = {RTM_BOUNDARY, RTM_RANDOM};
    float *img[2] = {malloc(2 * cells * 4), malloc(2 * cells * 4)};
    for (int t = 0; t < 4; t++) {
        const int ci = t % 2, mode = t < 2 ? RTM_BACKWARD_FUSED : RTM_BACKWARD_IMAGE;
        cfg.rtm.imaging = conds[ci];
        struct rtm_params p;
        char name[64];
        rtm_params_from_config(&cfg, &p, name, sizeof name);
        struct rtm_engine *e[2];
        for (int sep = 0; sep < 2; sep++) {
            p.tuning.backward = sep ? RTM_BACKWARD_SEPARATE : mode;
            cr_assert_eq(rtm_engine_create(&p, &gpu, &vol, &e[sep]), 0, "%s", err_msg());
        }
        for (int k = 0; k < 2; k++) {
            for (int sep = 0; sep < 2; sep++) {
                rtm_engine_force_strategy(e[sep], strategies[k], -1);
                struct rtm_shot_stats st;
                memset(img[sep], 0xff, 2 * cells * 4);
                cr_assert_eq(rtm_engine_migrate_patch(e[sep], RTM_SHOT(&sh), img[sep], img[sep] + cells, &st), 0,
                             "%s", err_msg());
                const int want = sep ? RTM_BACKWARD_SEPARATE : mode;
                cr_assert_eq(st.backward, want, "%s: backward mode %d ran, not %d", rtm_strategy_name(strategies[k]),
                             st.backward, want);
            }
            double rel = test_rel_l2_f32(img[0], img[1], cells), rill = test_rel_l2_f32(img[0] + cells, img[1] + cells,
                                                                                     cells);
            double norm = 0;
            for (size_t i = 0; i < cells; i++)
                norm += (double)img[1][i] * img[1][i];
            cr_log_info("%s, mode %d, condition %d: fused vs separate image %.3g, illumination %.3g",
                        rtm_strategy_name(strategies[k]), mode, conds[ci], rel, rill);
            cr_assert_gt(norm, 0.0, "%s: empty image", rtm_strategy_name(strategies[k]));
            cr_assert_lt(rel, 1e-5, "%s, mode %d, condition %d: fused vs separate image %.3g",
                         rtm_strategy_name(strategies[k]), mode, conds[ci], rel);
            cr_assert_lt(rill, 1e-5, "%s, mode %d, condition %d: fused vs separate illumination %.3g",
                         rtm_strategy_name(strategies[k]), mode, conds[ci], rill);
        }
        rtm_engine_destroy(e[0]);
        rtm_engine_destroy(e[1]);
    }
    free(img[0]), free(img[1]), free(sh.rec), free(sh.data), free(v);
    config_free(&cfg);
}
