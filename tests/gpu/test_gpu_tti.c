/* The CUDA TTI twins (kernels/tti_naive.cu, tti_tiled.cu) against the CPU reference
 * (kernels/tti.c) on random TTI models (v_pz, eps, delta, theta, phi random per point)
 * and random full states (p, q at both levels on the padded grid, all CPML memory), odd
 * sizes so tiles and z chunks are partial: 3D with CPML, 3D free surface, 2D, random
 * layers; in each case forward steps with injection and sampling, reverse steps
 * (interior only), the strip and the state through host and device buffers.
 * ||gpu - cpu|| / ||cpu|| < 1e-5 on every part of the state (every padded cell: a cell a
 * kernel forgot keeps its old value and fails) and on the traces; output buffers are
 * poisoned with NaN before each call; the variant that ran is the one asked for. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/device.h"
#include "kernels/random_boundary.h"
#include "kernels/tti.h"
#include "kernels/wave_tuning.h"
#include "stream/error.h"
#include "tests/gpu/gpu_support.h"

#define TOL 1e-5

static void poison(void *p, size_t bytes) { memset(p, 0xff, bytes); }
static double urand(double lo, double hi) { return lo + (hi - lo) * ((double)rand() / RAND_MAX); }

static double rel(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) != isnan(b[i]))
            return INFINITY;
        const double d = (double)a[i] - b[i];
        num += d * d;
        den += (double)b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

struct tcase {
    const char *name;
    int order, kernel;
    bool two_d, fs, random;
    int pipe;   /* wave_tuning.pipe: the tiled variant (kernels/tti_cuda.h), 0 the default */
    int layers; /* wave_tuning.cpml: the second pass beside the tiled core, 0 the default */
};

struct pair {
    struct sl_device cpu, gpu;
    struct tti_sim *c, *g;
    size_t sb, count; /* state bytes, floats of one field */
};

/* Both states saved (the GPU's into a poisoned buffer) and compared part by part: the
 * four field levels and the CPML memory. */
static void compare_states(struct pair *P, const char *what)
{
    float *sc = malloc(P->sb), *sg = malloc(P->sb);
    poison(sg, P->sb);
    cr_assert_eq(tti_state_save(P->c, sc, false), 0, "%s", err_msg());
    cr_assert_eq(tti_state_save(P->g, sg, false), 0, "%s", err_msg());
    const char *names[4] = {"p", "p(n-1)", "q", "q(n-1)"};
    for (int f = 0; f < 4; f++) {
        const double e = rel(sg + f * P->count, sc + f * P->count, P->count);
        fprintf(stderr, "  %s: %s rel %.2e\n", what, names[f], e);
        cr_assert(e < TOL, "%s: %s rel error %g", what, names[f], e);
    }
    const size_t nf = (P->sb - sizeof(int64_t)) / sizeof(float);
    const double em = rel(sg + 4 * P->count, sc + 4 * P->count, nf - 4 * P->count);
    fprintf(stderr, "  %s: CPML memory rel %.2e\n", what, em);
    cr_assert(em < TOL, "%s: CPML memory rel error %g", what, em);
    cr_assert_eq(memcmp((char *)sg + P->sb - 8, (char *)sc + P->sb - 8, 8), 0, "%s: step index", what);
    free(sc);
    free(sg);
}

static void run_case(const struct tcase *t)
{
    GPU_REQUIRED();
    struct pair P;
    cr_assert_eq(backend_select("cpu", &P.cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &P.gpu), 0, "%s", err_msg());
    struct wave_params p = {.n = {37, 29, 41}, .d = {10, 12, 9}, .order = t->order, .pml = {7, 9, 8, 6, 10, 5},
                            .pml_reflection = 1e-4, .f_ref = 12, .kernel = t->kernel,
                            .tuning = {.pipe = t->pipe, .cpml = t->layers}};
    if (t->two_d) {
        p.n[1] = 1;
        p.pml[2] = p.pml[3] = 0;
        p.face[2] = p.face[3] = WAVE_FACE_NONE;
    }
    for (int f = 0; f < 6; f++)
        if (t->random && p.face[f] != WAVE_FACE_NONE)
            p.face[f] = WAVE_FACE_RANDOM;
    if (t->fs) {
        p.free_surface = true;
        p.pml[4] = 0;
        p.face[4] = WAVE_FACE_FREE;
    }
    const size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *vp = malloc(nn * 4), *ep = malloc(nn * 4), *de = malloc(nn * 4), *th = malloc(nn * 4), *ph = malloc(nn * 4);
    srand(t->order * 7 + t->kernel * 131 + t->two_d * 17 + t->fs * 3 + t->random * 1001 + t->pipe * 5003 + t->layers * 7);
    for (size_t i = 0; i < nn; i++) {
        vp[i] = (float)urand(1500, 3000);
        ep[i] = (float)urand(0, 0.3);
        de[i] = ep[i] + (float)urand(-0.2, 0.05); /* a few delta > eps: lowered to eps */
        th[i] = (float)urand(-1.5, 1.5);
        ph[i] = (float)urand(0, 6.28);
    }
    const struct tti_model m = {.vpz = vp, .eps = ep, .delta = de, .theta = th, .phi = ph};
    p.dt = 0.5 * tti_dt_max_model(&m, nn, t->order, p.d, t->two_d, TTI_SIGMA_DEFAULT);
    cr_assert_eq(tti_create(&P.cpu, &p, TTI_SIGMA_DEFAULT, &m, &P.c), 0, "%s", err_msg());
    cr_assert_eq(tti_create(&P.gpu, &p, TTI_SIGMA_DEFAULT, &m, &P.g), 0, "%s", err_msg());
    char desc[256];
    tti_describe(P.g, desc, sizeof desc);
    fprintf(stderr, "%s: %s\n", t->name, desc);
    cr_assert(strstr(desc, t->kernel == WAVE_KERNEL_NAIVE ? "naive" : "tiled"), "%s runs %s", t->name, desc);
    /* the variant asked for is the one that runs (2D grids: the ring only) */
    if (t->kernel == WAVE_KERNEL_TILED && t->pipe)
        cr_assert(strstr(desc, t->pipe == WAVE_PIPE_RING || t->two_d ? "tiled ring"
                               : t->pipe == 3                    ? "32x16, halo queues shared"
                               : t->pipe == 4                    ? "tiled column pairs (fused, register queues, 32x16, 2 columns a thread)"
                               : t->pipe == 8                    ? "2 columns a thread, asynchronous copies)"
                               : t->pipe == 5                    ? "2 columns a thread, halo d_z scattered)"
                               : t->pipe == 6                    ? "halo d_z scattered, clusters of 2 tiles)"
                               : t->pipe == 7                    ? "2 columns a thread, tilt codes prefetched)"
                                                                 : "tiled columns (fused, register queues, 32x16)"),
                  "%s runs %s", t->name, desc);
    /* the passes beside the core asked for (wave_tuning.cpml, kernels/tti_cuda.h) */
    const bool lay = t->kernel == WAVE_KERNEL_TILED && !t->two_d;
    cr_assert(!strstr(desc, "tiled layer pass") == !(lay && (t->layers == 2 || t->layers == 3)), "%s runs %s", t->name,
              desc);
    cr_assert(!strstr(desc, "layer passes 1+2") == !(lay && (t->layers == 3 || t->layers == 5)), "%s runs %s", t->name,
              desc);
    cr_assert(!strstr(desc, "marching layer pass") == !(lay && (t->layers == 4 || t->layers == 5)), "%s runs %s",
              t->name, desc);
    /* 6, 7: the CPML in the column kernel (3D; a free surface's rows by the naive passes),
     * 7 with its halo queues in shared memory; 8: the naive passes on a second stream */
    if (t->layers) {
        const bool fused = lay && (t->layers == 6 || t->layers == 7) && t->order <= 8;
        cr_assert(!strstr(desc, "CPML in the column kernel") == !fused, "%s runs %s", t->name, desc);
        cr_assert(!strstr(desc, "shared halo queues") == !(fused && t->layers == 7), "%s runs %s", t->name, desc);
        cr_assert(!strstr(desc, "on a second stream") ==
                      !(t->kernel == WAVE_KERNEL_TILED &&
                        (t->layers == 8 || t->layers == 11 || t->layers == 13 || t->layers == 14)),
                  "%s runs %s", t->name, desc);
        /* 9, 10: the layer boxes' passes (tti_layer_boxes.cu, 3D), one field / both per thread */
        cr_assert(!strstr(desc, "layer boxes, one field per thread") == !(lay && t->layers == 9), "%s runs %s",
                  t->name, desc);
        cr_assert(!strstr(desc, "layer boxes, both fields per thread") ==
                      !(lay && t->layers >= 10 && t->layers <= 14),
                  "%s runs %s", t->name, desc);
        cr_assert(!strstr(desc, "pass 2 only") == !(lay && (t->layers == 12 || t->layers == 13)), "%s runs %s",
                  t->name, desc);
        /* 14: 13 with pass 2 in x-adjacent pairs */
        cr_assert(!strstr(desc, "pass 2 in pairs") == !(lay && t->layers == 14), "%s runs %s", t->name, desc);
    }
    if (t->kernel == WAVE_KERNEL_TILED && t->pipe == WAVE_PIPE_REGS && !t->two_d)
        cr_assert(!strstr(desc, "halo queues shared"), "%s runs %s", t->name, desc);
    if (t->random) {
        const struct random_boundary rb = {RB_RAMP_LINEAR, RB_RANGE_FULL, 5, 42,
                                           random_boundary_vstable_dims(t->order, p.dt, p.d, t->two_d), 1500.0,
                                           random_boundary_vnyquist(30.0, p.d)};
        cr_assert_eq(tti_randomize_layers(P.c, &rb, 3), 0, "%s", err_msg());
        cr_assert_eq(tti_randomize_layers(P.g, &rb, 3), 0, "%s", err_msg());
    }
    cr_assert_eq(tti_cpml_enabled(P.g), !t->random);
    const struct wave_layout *L = tti_layout(P.c);
    P.count = L->count;
    P.sb = tti_state_bytes(P.c);
    cr_assert_eq(P.sb, tti_state_bytes(P.g));

    /* a random full state: fields on the padded grid (halo 0), small CPML memory */
    float *st = calloc(1, P.sb);
    for (int f = 0; f < 4; f++)
        for (int k = 0; k < L->npad[2]; k++)
            for (int j = 0; j < L->npad[1]; j++)
                for (int i = 0; i < L->npad[0]; i++)
                    st[f * P.count + (size_t)(k + L->pad_off[2]) * L->stride_z +
                       (size_t)(j + L->pad_off[1]) * L->stride_y + i + L->pad_off[0]] = (float)urand(-0.5, 0.5);
    const size_t nf = (P.sb - sizeof(int64_t)) / sizeof(float);
    for (size_t e = 4 * P.count; e < nf; e++)
        st[e] = (float)urand(-1e-3, 1e-3);
    cr_assert_eq(tti_state_load(P.c, st, false), 0, "%s", err_msg());
    cr_assert_eq(tti_state_load(P.g, st, false), 0, "%s", err_msg());

    /* forward: steps, a physical source, receivers */
    const double src[3] = {151.3, 171.7, 101.1};
    const double rec[4][3] = {{40, 50, 30}, {300.5, 200.2, 150.7}, {200, 100, 190}, {151.3, 171.7, 101.1}};
    struct wave_points *cs, *gs, *cr, *gr;
    cr_assert_eq(tti_points_create(P.c, src, 1, WAVE_INTERP_SINC, &cs), 0, "%s", err_msg());
    cr_assert_eq(tti_points_create(P.g, src, 1, WAVE_INTERP_SINC, &gs), 0, "%s", err_msg());
    cr_assert_eq(tti_points_create(P.c, &rec[0][0], 4, WAVE_INTERP_SINC, &cr), 0, "%s", err_msg());
    cr_assert_eq(tti_points_create(P.g, &rec[0][0], 4, WAVE_INTERP_SINC, &gr), 0, "%s", err_msg());
    enum { NT = 8 };
    float tc[4 * NT], tg[4 * NT];
    poison(tg, sizeof tg);
    for (int it = 0; it < NT; it++) {
        const float a = 100.0f * (float)sin(0.3 * it);
        cr_assert_eq(tti_step(P.c), 0, "%s", err_msg());
        cr_assert_eq(tti_step(P.g), 0, "%s", err_msg());
        cr_assert_eq(tti_inject(P.c, cs, &a, 1, 1.0f, TTI_INJECT_PHYSICAL), 0, "%s", err_msg());
        cr_assert_eq(tti_inject(P.g, gs, &a, 1, 1.0f, TTI_INJECT_PHYSICAL), 0, "%s", err_msg());
        cr_assert_eq(tti_sample(P.c, cr, tc + it, NT, 0), 0, "%s", err_msg());
        cr_assert_eq(tti_sample(P.g, gr, tg + it, NT, 0), 0, "%s", err_msg());
    }
    const double etr = rel(tg, tc, 4 * NT);
    fprintf(stderr, "  forward: traces rel %.2e\n", etr);
    cr_assert(etr < TOL, "traces rel error %g", etr);
    compare_states(&P, "forward");

    /* the strip, through host and device buffers */
    const size_t ns = tti_strip_count(P.c);
    cr_assert_eq(ns, tti_strip_count(P.g));
    float *bc = malloc(ns * 4), *bg = malloc(ns * 4);
    void *dbuf = NULL;
    cr_assert_eq(dev_alloc(&P.gpu, ns * 4 > P.sb ? ns * 4 : P.sb, &dbuf), 0, "%s", err_msg());
    poison(bg, ns * 4);
    cr_assert_eq(tti_strip_save(P.c, bc, false), 0, "%s", err_msg());
    cr_assert_eq(tti_strip_save(P.g, bg, false), 0, "%s", err_msg());
    cr_assert(rel(bg, bc, ns) < TOL, "strip (host buffer)");
    poison(bg, ns * 4);
    cr_assert_eq(tti_strip_save(P.g, dbuf, true), 0, "%s", err_msg());
    cr_assert_eq(dev_copy(&P.gpu, bg, dbuf, ns * 4, DEV_D2H, NULL), 0, "%s", err_msg());
    cr_assert(rel(bg, bc, ns) < TOL, "strip (device buffer)");
    for (size_t i = 0; i < ns; i++)
        bc[i] = 0.5f * bc[i] + 0.25f;
    cr_assert_eq(dev_copy(&P.gpu, dbuf, bc, ns * 4, DEV_H2D, NULL), 0, "%s", err_msg());
    cr_assert_eq(tti_strip_load(P.c, bc, false), 0, "%s", err_msg());
    cr_assert_eq(tti_strip_load(P.g, dbuf, true), 0, "%s", err_msg());
    compare_states(&P, "strip loaded");

    /* reverse: interior only, CPML off */
    tti_set_reverse_interior(P.c, true);
    tti_set_reverse_interior(P.g, true);
    for (int it = 0; it < 4; it++) {
        cr_assert_eq(tti_step_reverse(P.c), 0, "%s", err_msg());
        cr_assert_eq(tti_step_reverse(P.g), 0, "%s", err_msg());
    }
    compare_states(&P, "reverse");

    /* the state through a device buffer: save, reset, load gives the same state */
    float *s1 = malloc(P.sb), *s2 = malloc(P.sb);
    cr_assert_eq(tti_state_save(P.g, s1, false), 0, "%s", err_msg());
    cr_assert_eq(tti_state_save(P.g, dbuf, true), 0, "%s", err_msg());
    cr_assert_eq(tti_reset(P.g), 0, "%s", err_msg());
    cr_assert_eq(tti_step_index(P.g), 0);
    cr_assert_eq(tti_state_load(P.g, dbuf, true), 0, "%s", err_msg());
    poison(s2, P.sb);
    cr_assert_eq(tti_state_save(P.g, s2, false), 0, "%s", err_msg());
    cr_assert_eq(memcmp(s1, s2, P.sb), 0, "state through a device buffer");

    /* copies of the interior: p out, in (into p and q) */
    float *ic = malloc(nn * 4), *ig = malloc(nn * 4);
    poison(ig, nn * 4);
    cr_assert_eq(tti_copy_out(P.c, false, ic), 0, "%s", err_msg());
    cr_assert_eq(tti_copy_out(P.g, false, ig), 0, "%s", err_msg());
    cr_assert(rel(ig, ic, nn) < TOL, "copy_out");
    cr_assert_eq(tti_copy_in(P.c, true, ic), 0, "%s", err_msg());
    cr_assert_eq(tti_copy_in(P.g, true, ic), 0, "%s", err_msg());
    tti_set_reverse_interior(P.c, false);
    tti_set_reverse_interior(P.g, false);
    cr_assert_eq(tti_step(P.c), 0);
    cr_assert_eq(tti_step(P.g), 0, "%s", err_msg());
    compare_states(&P, "after copy_in");

    dev_free(&P.gpu, dbuf);
    wave_points_destroy(cs);
    wave_points_destroy(gs);
    wave_points_destroy(cr);
    wave_points_destroy(gr);
    tti_destroy(P.c);
    tti_destroy(P.g);
    free(st);
    free(bc);
    free(bg);
    free(s1);
    free(s2);
    free(ic);
    free(ig);
    free(vp);
    free(ep);
    free(de);
    free(th);
    free(ph);
}

#define CASEL(nm, ord, kern, twod, fsurf, rnd, pip, lay)                                                \
    Test(gpu_tti, nm, .timeout = 300)                                                                   \
    {                                                                                                   \
        const struct tcase t = {#nm, ord, kern, twod, fsurf, rnd, pip, lay};                             \
        run_case(&t);                                                                                   \
    }
#define CASEV(nm, ord, kern, twod, fsurf, rnd, pip) CASEL(nm, ord, kern, twod, fsurf, rnd, pip, 0)
#define CASE(nm, ord, kern, twod, fsurf, rnd) CASEV(nm, ord, kern, twod, fsurf, rnd, 0)

CASE(naive_3d_cpml, 8, WAVE_KERNEL_NAIVE, false, false, false)
CASE(tiled_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false)
CASE(naive_3d_free_surface, 8, WAVE_KERNEL_NAIVE, false, true, false)
CASE(tiled_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false)
CASE(naive_2d_cpml, 8, WAVE_KERNEL_NAIVE, true, false, false)
CASE(tiled_2d_cpml, 8, WAVE_KERNEL_TILED, true, false, false)
CASE(tiled_2d_free_surface, 8, WAVE_KERNEL_TILED, true, true, false)
CASE(naive_3d_random_layers, 8, WAVE_KERNEL_NAIVE, false, false, true)
CASE(tiled_3d_random_layers, 8, WAVE_KERNEL_TILED, false, false, true)
CASE(tiled_3d_order4, 4, WAVE_KERNEL_TILED, false, false, false)
CASE(tiled_3d_order2_free_surface, 2, WAVE_KERNEL_TILED, false, true, false)
CASE(naive_3d_order16, 16, WAVE_KERNEL_NAIVE, false, false, false)

/* every tiled variant by name (kernels/tti_cuda.h), whichever is the default: the shared
 * ring (tti_tiled.cu) and the column queues (tti_cols.cu) */
CASEV(ring_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_RING)
CASEV(ring_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_RING)
CASEV(ring_3d_random_layers, 8, WAVE_KERNEL_TILED, false, false, true, WAVE_PIPE_RING)
CASEV(columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS)
CASEV(columns_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS)
CASEV(columns_3d_random_layers, 8, WAVE_KERNEL_TILED, false, false, true, WAVE_PIPE_REGS)
CASEV(columns_3d_order4, 4, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS)
CASEV(columns_3d_order6, 6, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS)
CASEV(columns_3d_order2_free_surface, 2, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS)
CASEV(columns_2d_falls_back_to_ring, 8, WAVE_KERNEL_TILED, true, false, false, WAVE_PIPE_REGS)
/* 3: the column queues with the halo queues in shared memory (enum tti_tiled_kind) */
CASEV(columns_hs_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, 3)
CASEV(columns_hs_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, 3)
CASEV(columns_hs_3d_random_layers, 8, WAVE_KERNEL_TILED, false, false, true, 3)
CASEV(columns_hs_3d_order4, 4, WAVE_KERNEL_TILED, false, false, false, 3)
/* 4: two x-adjacent columns a thread (tti_cols2.cu): every order it holds (2..8: R odd
 * widens its x halo), CPML, a free surface, random layers (the whole grid, the z chunks) */
CASEV(pairs_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, 4)
CASEV(pairs_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, 4)
CASEV(pairs_3d_random_layers, 8, WAVE_KERNEL_TILED, false, false, true, 4)
CASEV(pairs_3d_order6, 6, WAVE_KERNEL_TILED, false, false, false, 4)
CASEV(pairs_3d_order4_random_layers, 4, WAVE_KERNEL_TILED, false, false, true, 4)
CASEV(pairs_3d_order2_free_surface, 2, WAVE_KERNEL_TILED, false, true, false, 4)
CASEV(pairs_3d_order6_random_layers, 6, WAVE_KERNEL_TILED, false, false, true, 4)
CASEV(pairs_2d_falls_back_to_ring, 8, WAVE_KERNEL_TILED, true, false, false, 4)
/* 5: the column pairs with the halo pair's d_z in scatter accumulators and L in one chain
 * (tti_cols3.cu): the same cases as 4, and its CPML through the default layer passes */
CASEV(pairs_s_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, 5)
CASEV(pairs_s_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, 5)
CASEV(pairs_s_3d_random_layers, 8, WAVE_KERNEL_TILED, false, false, true, 5)
CASEV(pairs_s_3d_order6, 6, WAVE_KERNEL_TILED, false, false, false, 5)
CASEV(pairs_s_3d_order4_random_layers, 4, WAVE_KERNEL_TILED, false, false, true, 5)
CASEV(pairs_s_3d_order2_free_surface, 2, WAVE_KERNEL_TILED, false, true, false, 5)
CASEV(pairs_s_3d_order6_random_layers, 6, WAVE_KERNEL_TILED, false, false, true, 5)
CASEV(pairs_s_2d_falls_back_to_ring, 8, WAVE_KERNEL_TILED, true, false, false, 5)
/* 6: 5 in clusters of two y-adjacent tiles, the inner side's u_y read from the partner's
 * shared memory (tti_cols4.cu; odd tile counts in y leave a partner with no box rows) */
CASEV(pairs_c_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, 6)
CASEV(pairs_c_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, 6)
CASEV(pairs_c_3d_random_layers, 8, WAVE_KERNEL_TILED, false, false, true, 6)
CASEV(pairs_c_3d_order6, 6, WAVE_KERNEL_TILED, false, false, false, 6)
CASEV(pairs_c_3d_order4_random_layers, 4, WAVE_KERNEL_TILED, false, false, true, 6)
CASEV(pairs_c_3d_order2_free_surface, 2, WAVE_KERNEL_TILED, false, true, false, 6)
CASEV(pairs_c_3d_order6_random_layers, 6, WAVE_KERNEL_TILED, false, false, true, 6)
CASEV(pairs_c_2d_falls_back_to_ring, 8, WAVE_KERNEL_TILED, true, false, false, 6)
/* 7: 4 with the tilt codes and the outer pairs' f prefetched into L2, L in one chain
 * (tti_cols3.cu without the scatter) */
CASEV(pairs_p_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, 7)
CASEV(pairs_p_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, 7)
CASEV(pairs_p_3d_random_layers, 8, WAVE_KERNEL_TILED, false, false, true, 7)
CASEV(pairs_p_3d_order6, 6, WAVE_KERNEL_TILED, false, false, false, 7)
CASEV(pairs_p_3d_order4_random_layers, 4, WAVE_KERNEL_TILED, false, false, true, 7)
CASEV(pairs_p_3d_order2_free_surface, 2, WAVE_KERNEL_TILED, false, true, false, 7)
CASEV(pairs_p_2d_falls_back_to_ring, 8, WAVE_KERNEL_TILED, true, false, false, 7)
/* 8: 4 with the other pair's f, the update operands and the tilt codes as asynchronous
 * copies a plane ahead (tti_cols2.cu AS): the same cases as 4, CPML through the default
 * layer passes */
CASEV(pairs_a_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, 8)
CASEV(pairs_a_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, 8)
CASEV(pairs_a_3d_random_layers, 8, WAVE_KERNEL_TILED, false, false, true, 8)
CASEV(pairs_a_3d_order6, 6, WAVE_KERNEL_TILED, false, false, false, 8)
CASEV(pairs_a_3d_order4_random_layers, 4, WAVE_KERNEL_TILED, false, false, true, 8)
CASEV(pairs_a_3d_order2_free_surface, 2, WAVE_KERNEL_TILED, false, true, false, 8)
CASEV(pairs_a_3d_order6_random_layers, 6, WAVE_KERNEL_TILED, false, false, true, 8)
CASEV(pairs_a_2d_falls_back_to_ring, 8, WAVE_KERNEL_TILED, true, false, false, 8)
/* the tiled second pass beside the core (wave_tuning.cpml 2, kernels/tti_layers.cu) with
 * either tiled core, both passes tiled (3), and the naive ones asked for by name (1) */
CASEL(layers_tiled_columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 2)
CASEL(layers_tiled_columns_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 2)
CASEL(layers_tiled_ring_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_RING, 2)
CASEL(layers_tiled_3d_order4, 4, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 2)
CASEL(layers_tiled_2d_falls_back, 8, WAVE_KERNEL_TILED, true, false, false, WAVE_PIPE_REGS, 2)
CASEL(layers_naive_columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 1)
CASEL(layers12_columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 3)
CASEL(layers12_columns_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 3)
CASEL(layers12_ring_3d_order4, 4, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_RING, 3)
CASEL(layers12_columns_3d_order2_free_surface, 2, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 3)
/* the z-marching passes beside the core with x-y neighbours from L1 (4: pass 2, 5: both) */
CASEL(layers_march2_columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 4)
CASEL(layers_march12_columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 5)
CASEL(layers_march12_columns_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 5)
CASEL(layers_march12_3d_order4, 4, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 5)
CASEL(layers_march12_3d_order2_free_surface, 2, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 5)
CASEL(layers_march2_ring_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_RING, 4)
/* the CPML terms in the column kernel (wave_tuning.cpml 6, tti_cols.cu CP): every order it
 * holds, under either core, a free surface (its rows by the naive passes, psi double-
 * buffered through them too), random layers (CPML off) */
CASEL(fused_columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 6)
CASEL(fused_columns_3d_order6, 6, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 6)
CASEL(fused_columns_3d_order4, 4, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 6)
CASEL(fused_columns_3d_order2, 2, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 6)
CASEL(fused_columns_3d_order2_free_surface, 2, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 6)
CASEL(fused_columns_3d_order4_free_surface, 4, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 6)
CASEL(fused_ring_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_RING, 6)
CASEL(fused_columns_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 6)
CASEL(fused_columns_3d_random_layers, 8, WAVE_KERNEL_TILED, false, false, true, WAVE_PIPE_REGS, 6)
CASEL(fused_2d_falls_back, 8, WAVE_KERNEL_TILED, true, false, false, WAVE_PIPE_REGS, 6)
/* 7: the same with its halo queues in shared memory */
CASEL(fused_hs_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 7)
CASEL(fused_hs_3d_order4, 4, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 7)
CASEL(fused_hs_3d_order6, 6, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 7)
CASEL(fused_hs_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 7)
CASEL(fused_hs_ring_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_RING, 7)
/* 8: the naive passes beside the core on a second stream */
CASEL(naive_side_columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 8)
CASEL(naive_side_columns_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 8)
CASEL(naive_side_ring_3d_order4, 4, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_RING, 8)
CASEL(naive_side_2d_cpml, 8, WAVE_KERNEL_TILED, true, false, false, WAVE_PIPE_REGS, 8)
/* 9: the layer boxes' passes, one field per thread (tti_layer_boxes.cu: all boxes in one
 * launch per pass, the z slabs tile by tile, 8-wide tiles in the x slabs, p and q on the
 * two half-warps); 10: the same with both fields per thread.  Every order the tiled plan
 * runs, a free surface (its rows' mirrored products), random layers (CPML off: the core
 * alone), under either core, and 2D (the naive passes run instead) */
CASEL(lboxes_split_columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 9)
CASEL(lboxes_split_columns_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 9)
CASEL(lboxes_split_columns_3d_random_layers, 8, WAVE_KERNEL_TILED, false, false, true, WAVE_PIPE_REGS, 9)
CASEL(lboxes_split_columns_3d_order6, 6, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 9)
CASEL(lboxes_split_columns_3d_order4, 4, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 9)
CASEL(lboxes_split_columns_3d_order2_free_surface, 2, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 9)
CASEL(lboxes_split_ring_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_RING, 9)
CASEL(lboxes_split_2d_cpml, 8, WAVE_KERNEL_TILED, true, false, false, WAVE_PIPE_REGS, 9)
CASEL(lboxes_split_2d_free_surface, 8, WAVE_KERNEL_TILED, true, true, false, WAVE_PIPE_REGS, 9)
CASEL(lboxes_both_columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 10)
CASEL(lboxes_both_columns_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 10)
CASEL(lboxes_both_columns_3d_order4, 4, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 10)
CASEL(lboxes_both_2d_cpml, 8, WAVE_KERNEL_TILED, true, false, false, WAVE_PIPE_REGS, 10)
/* 11: 10 on a second stream beside the core */
CASEL(lboxes_side_columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 11)
CASEL(lboxes_side_columns_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 11)
CASEL(lboxes_side_2d_cpml, 8, WAVE_KERNEL_TILED, true, false, false, WAVE_PIPE_REGS, 11)
/* 12: 10's pass 2 after the naive pass 1 box by box */
CASEL(lboxes_p2_columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 12)
CASEL(lboxes_p2_columns_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 12)
CASEL(lboxes_p2_3d_order4, 4, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 12)
/* 13: 12 on a second stream beside the core */
CASEL(lboxes_p2_side_columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 13)
CASEL(lboxes_p2_side_columns_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, WAVE_PIPE_REGS, 13)
/* 14: 13 with pass 2 in x-adjacent pairs (odd widths and box origins: the pairs' masks;
 * odd orders and 2D run 13's pass 2), under the default core and the column kernel */
CASEL(lpairs_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, 0, 14)
CASEL(lpairs_3d_free_surface, 8, WAVE_KERNEL_TILED, false, true, false, 0, 14)
CASEL(lpairs_3d_order4, 4, WAVE_KERNEL_TILED, false, false, false, 0, 14)
CASEL(lpairs_3d_order4_free_surface, 4, WAVE_KERNEL_TILED, false, true, false, 0, 14)
CASEL(lpairs_3d_order6_falls_back, 6, WAVE_KERNEL_TILED, false, false, false, 0, 14)
CASEL(lpairs_3d_random_layers, 8, WAVE_KERNEL_TILED, false, false, true, 0, 14)
CASEL(lpairs_columns_3d_cpml, 8, WAVE_KERNEL_TILED, false, false, false, WAVE_PIPE_REGS, 14)
CASEL(lpairs_2d_cpml, 8, WAVE_KERNEL_TILED, true, false, false, 0, 14)
