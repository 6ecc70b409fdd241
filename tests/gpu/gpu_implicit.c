/* The CUDA implicit operator (kernels/implicit_kernels.cu) against the CPU reference
 * (kernels/implicit_step.c) from random states (both time levels and the CPML memory),
 * odd grid sizes: 3D with CPML, CPML off, free surface, 2D; orders 2, 8, 16; forward
 * steps, reverse steps, the strip with the interface values through host and device
 * buffers and the reverse steps that use them.  ||gpu - cpu|| / ||cpu|| < 1e-5 over the
 * whole state.  Then the strategies on the GPU: the boundary strategy's reconstruction
 * (strips in device memory) and the random strategy's reversal, < 1e-4 against the
 * forward snapshot.  Every combination of the sweeps' variants (wave_tuning.implicit_x:
 * thread, warp, regs, warpl; implicit_yz: march, chunks, scan, overlap, xyfused, xypipe,
 * scanl, scanl1, scanl256, tile, tile3, tilea, tileb, tilem, tilez, xyc, tileq, tileqn, xycn, xyco, xycf, xycs, tileqw, xycp, xyct) is checked: the GPU
 * simulation gets it, the CPU one ignores it; and lines at
 * and beyond the register kernels' 512 rows (their fallbacks). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/device.h"
#include "kernels/implicit_op.h"
#include "kernels/propagator.h"
#include "kernels/random_boundary.h"
#include "kernels/wave.h"
#include "kernels/wave_tuning.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/gpu/gpu_support.h"
#include "tests/support.h"

static float frand(void) { return (float)rand() / RAND_MAX - 0.5f; }

static void poison(float *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = NAN;
}

static double rel(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]))
            return INFINITY;
        double d = (double)a[i] - b[i];
        num += d * d;
        den += (double)b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void *random_state(struct wave_sim *s)
{
    const struct wave_layout *L = wave_layout(s);
    size_t bytes = wave_state_bytes(s);
    float *st = calloc(1, bytes);
    for (int lvl = 0; lvl < 2; lvl++) {
        float *f = st + lvl * L->count;
        for (int k = 0; k < L->npad[2]; k++)
            for (int j = 0; j < L->npad[1]; j++)
                for (int i = 0; i < L->npad[0]; i++)
                    f[(size_t)(k + L->pad_off[2]) * L->stride_z + (size_t)(j + L->pad_off[1]) * L->stride_y + i +
                      L->pad_off[0]] = frand();
    }
    size_t nf = (bytes - sizeof(int64_t)) / sizeof(float);
    for (size_t e = 2 * L->count; e < nf; e++)
        st[e] = 1e-3f * frand();
    return st;
}

/* Both states compared: time levels and CPML memory. */
static void compare_states(struct wave_sim *c, struct wave_sim *g, const char *what)
{
    size_t sb = wave_state_bytes(c);
    float *sc = malloc(sb), *sg = malloc(sb);
    poison(sg, sb / sizeof(float));
    cr_assert_eq(wave_state_save(c, sc, false), 0);
    cr_assert_eq(wave_state_save(g, sg, false), 0, "%s", err_msg());
    const struct wave_layout *L = wave_layout(c);
    size_t nf = (sb - sizeof(int64_t)) / sizeof(float);
    double e_cur = rel(sg, sc, L->count), e_prev = rel(sg + L->count, sc + L->count, L->count);
    double e_mem = nf > 2 * L->count ? rel(sg + 2 * L->count, sc + 2 * L->count, nf - 2 * L->count) : 0;
    fprintf(stderr, "gpu implicit: %s: cur %.2e prev %.2e cpml-mem %.2e\n", what, e_cur, e_prev, e_mem);
    cr_assert_lt(e_cur, 1e-5, "%s", what);
    cr_assert_lt(e_prev, 1e-5, "%s", what);
    cr_assert_lt(e_mem, 1e-5, "%s", what);
    free(sc);
    free(sg);
}

static void compare_case(int order, bool cpml, bool fs, bool two_d, int xvar, int yzvar)
{
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct wave_params p = {.n = {37, 29, 23}, .d = {10, 12, 9}, .order = order, .op = PROP_OP_IMPLICIT,
                            .dt = 4e-4, .pml = {7, 9, 8, 6, fs ? 0 : 10, 5}, .pml_reflection = 1e-4, .f_ref = 12,
                            .free_surface = fs, .tuning = {.implicit_x = xvar, .implicit_yz = yzvar}};
    if (two_d) {
        p.n[1] = 1;
        p.pml[2] = p.pml[3] = 0;
        p.face[2] = p.face[3] = WAVE_FACE_NONE;
    }
    char what[96];
    snprintf(what, sizeof what, "order %d cpml %d fs %d %s x %s yz %s", order, cpml, fs, two_d ? "2D" : "3D",
             wave_implicit_x_name(xvar), wave_implicit_yz_name(yzvar));
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    srand(order * 10 + 100 * cpml + 1000 * fs + 10000 * two_d);
    for (size_t i = 0; i < nn; i++)
        v[i] = 1500.0f + 1500.0f * (frand() + 0.5f);
    struct wave_sim *c, *g;
    cr_assert_eq(wave_create(&cpu, &p, v, &c), 0, "%s", err_msg());
    cr_assert_eq(wave_create(&gpu, &p, v, &g), 0, "%s", err_msg());
    wave_set_cpml(c, cpml);
    wave_set_cpml(g, cpml);
    void *st = random_state(c);
    cr_assert_eq(wave_state_load(c, st, false), 0);
    cr_assert_eq(wave_state_load(g, st, false), 0, "%s", err_msg());
    const double src[3] = {151.3, two_d ? 0 : 171.7, 101.1};
    struct wave_points *cs, *gs;
    cr_assert_eq(wave_points_create(c, src, 1, WAVE_INTERP_SINC, &cs), 0, "%s", err_msg());
    cr_assert_eq(wave_points_create(g, src, 1, WAVE_INTERP_SINC, &gs), 0, "%s", err_msg());
    for (int it = 0; it < 10; it++) {
        float a = 100.0f * (float)sin(0.3 * it);
        cr_assert_eq(wave_step(c), 0);
        cr_assert_eq(wave_step(g), 0, "%s", err_msg());
        cr_assert_eq(wave_inject(c, cs, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        cr_assert_eq(wave_inject(g, gs, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0, "%s", err_msg());
    }
    compare_states(c, g, what);
    /* the strip with the interface values: host and device buffers */
    size_t ns = wave_strip_count(c);
    cr_assert_eq(ns, wave_strip_count(g));
    float *hc = malloc(ns * sizeof *hc), *hg = malloc(ns * sizeof *hg);
    poison(hg, ns);
    cr_assert_eq(wave_strip_save(c, hc, false), 0);
    cr_assert_eq(wave_strip_save(g, hg, false), 0, "%s", err_msg());
    double e_strip = rel(hg, hc, ns);
    fprintf(stderr, "gpu implicit: %s: strip + interface values %.2e (%zu floats)\n", what, e_strip, ns);
    cr_assert_lt(e_strip, 1e-5);
    struct wave_sim *aux;
    cr_assert_eq(wave_create(&gpu, &p, v, &aux), 0);
    cr_assert_geq(wave_layout(aux)->count, ns);
    float *dbuf = wave_cur(aux);
    cr_assert_eq(wave_strip_save(g, dbuf, true), 0, "%s", err_msg());
    /* reverse steps: full lines first, then with the interface values loaded */
    cr_assert_eq(wave_step_reverse(c), 0);
    cr_assert_eq(wave_step_reverse(g), 0, "%s", err_msg());
    compare_states(c, g, "after a reverse step");
    cr_assert_eq(wave_strip_load(c, hc, false), 0);
    cr_assert_eq(wave_strip_load(g, dbuf, true), 0, "%s", err_msg());
    wave_set_reverse_interior(c, true);
    wave_set_reverse_interior(g, true);
    cr_assert_eq(wave_step_reverse(c), 0);
    cr_assert_eq(wave_step_reverse(g), 0, "%s", err_msg());
    compare_states(c, g, "after a reverse step with the interface values (device buffer)");
    cr_assert_eq(wave_strip_load(c, hc, false), 0);
    cr_assert_eq(wave_strip_load(g, hc, false), 0, "%s", err_msg());
    cr_assert_eq(wave_step_reverse(c), 0);
    cr_assert_eq(wave_step_reverse(g), 0, "%s", err_msg());
    compare_states(c, g, "after a reverse step with the interface values (host buffer)");
    wave_destroy(aux);
    wave_points_destroy(cs);
    wave_points_destroy(gs);
    wave_destroy(c);
    wave_destroy(g);
    free(hc);
    free(hg);
    free(st);
    free(v);
}

/* The small grids with y/z sweep YZ, under every x sweep at orders 2, 8 and 16: with and
 * without CPML, free surface, random layers. */
static void small_cases(int yz)
{
    const int orders[3] = {2, 8, 16};
    for (int x = WAVE_IMPLICIT_X_THREAD; x < WAVE_IMPLICIT_X_N; x++)
        for (int o = 0; o < 3; o++) {
            compare_case(orders[o], true, false, false, x, yz);  /* 3D CPML */
            compare_case(orders[o], false, false, false, x, yz); /* CPML off */
            compare_case(orders[o], true, true, false, x, yz);   /* free surface */
            compare_case(orders[o], true, true, true, x, yz);    /* 2D, free surface */
            compare_case(orders[o], true, false, true, x, yz);   /* 2D */
        }
}

Test(gpu_implicit, kernels_match_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    for (int yz = WAVE_IMPLICIT_YZ_MARCH; yz < WAVE_IMPLICIT_YZ_XYFUSED; yz++) /* xyfused: below */
        small_cases(yz);
}

/* Lines at and beyond the register kernels' 512 rows: x regs solves x lines of 512
 * (16 rows a lane, every lane full) and falls back to the warp kernel at 532; y/z scan
 * and chunks solve z lines of 482 (31 chunks: the odd count rounded to whole warps) and
 * fall back to the marching kernel at 532 (the overlap arrangement to the sequential
 * one).  The CPU reference once per grid, every variant of the GPU against it. */
static void long_case_layers(const int n[3], const int pml[6], bool fs, int yz_lo, int yz_hi, bool cpml)
{
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct wave_params p = {.n = {n[0], n[1], n[2]}, .d = {10, 12, 9}, .order = 8, .op = PROP_OP_IMPLICIT,
                            .dt = 4e-4, .pml = {pml[0], pml[1], pml[2], pml[3], fs ? 0 : pml[4], pml[5]},
                            .pml_reflection = 1e-4, .f_ref = 12, .free_surface = fs};
    size_t nn = (size_t)n[0] * n[1] * n[2];
    float *v = malloc(nn * sizeof *v);
    srand(n[0] + n[2]);
    for (size_t i = 0; i < nn; i++)
        v[i] = 1500.0f + 1500.0f * (frand() + 0.5f);
    struct wave_sim *c;
    cr_assert_eq(wave_create(&cpu, &p, v, &c), 0, "%s", err_msg());
    wave_set_cpml(c, cpml);
    void *st = random_state(c);
    cr_assert_eq(wave_state_load(c, st, false), 0);
    const int steps = 3;
    for (int it = 0; it < steps; it++)
        cr_assert_eq(wave_step(c), 0);
    for (int x = WAVE_IMPLICIT_X_THREAD; x < WAVE_IMPLICIT_X_N; x++)
        for (int yz = yz_lo; yz < yz_hi; yz++) {
            p.tuning.implicit_x = x;
            p.tuning.implicit_yz = yz;
            struct wave_sim *g;
            cr_assert_eq(wave_create(&gpu, &p, v, &g), 0, "%s", err_msg());
            wave_set_cpml(g, cpml);
            cr_assert_eq(wave_state_load(g, st, false), 0, "%s", err_msg());
            for (int it = 0; it < steps; it++)
                cr_assert_eq(wave_step(g), 0, "%s", err_msg());
            char what[96];
            snprintf(what, sizeof what, "long lines %d x %d x %d pml y %d+%d z %d+%d fs %d cpml %d x %s yz %s", n[0],
                     n[1], n[2], pml[2], pml[3], p.pml[4], pml[5], fs, cpml, wave_implicit_x_name(x),
                     wave_implicit_yz_name(yz));
            compare_states(c, g, what);
            wave_destroy(g);
        }
    wave_destroy(c);
    free(st);
    free(v);
}

static void long_case(const int n[3], bool fs, int yz_lo, int yz_hi)
{
    long_case_layers(n, (const int[6]){6, 6, 6, 6, 6, 6}, fs, yz_lo, yz_hi, true);
}

static void long_case_pml(const int n[3], const int pml[6], bool fs, int yz)
{
    long_case_layers(n, pml, fs, yz, yz + 1, true);
}

Test(gpu_implicit, long_lines_match_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    /* padded 512 x 20 x 482; 532 x 20 x 532 (free surface: z rows 1..531) */
    long_case((const int[3]){500, 8, 470}, false, WAVE_IMPLICIT_YZ_MARCH, WAVE_IMPLICIT_YZ_XYFUSED);
    long_case((const int[3]){520, 8, 526}, true, WAVE_IMPLICIT_YZ_MARCH, WAVE_IMPLICIT_YZ_XYFUSED);
}

/* tuning scanl / scanl1 / scanl256 (kernels/implicit_scan.cu: the CPML layer rows of a
 * y/z line written by the whole block): the small grids of every case above (layers of 5 to 10
 * rows, free surface), y and z lines of 512 rows with 20-row layers (the benchmark's:
 * 40 layer rows a line; 20 x lanes: a block of 16 and one of 4), z lines of 511 below a
 * free surface, 512-row x lines, the fallbacks beyond 512, and layers of 70 rows a line
 * (more than the block's 64: the chunks write them, as scan). */
static void layer_rows_cases(int yz_lo, int yz_hi)
{
    for (int yz = yz_lo; yz <= yz_hi; yz++) {
        small_cases(yz);
        long_case((const int[3]){500, 8, 470}, false, yz, yz + 1);
        long_case((const int[3]){520, 8, 526}, true, yz, yz + 1);
        long_case_pml((const int[3]){8, 472, 472}, (const int[6]){6, 6, 20, 20, 20, 20}, false, yz);
        long_case_pml((const int[3]){8, 472, 492}, (const int[6]){6, 6, 20, 20, 0, 20}, true, yz);
        long_case_pml((const int[3]){8, 100, 60}, (const int[6]){6, 6, 40, 30, 36, 34}, false, yz);
    }
}

Test(gpu_implicit, scanl_matches_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    layer_rows_cases(WAVE_IMPLICIT_YZ_SCANL, WAVE_IMPLICIT_YZ_SCANL256);
}

/* tuning tile / tile3 / tilea / tileb (kernels/implicit_tile.cu: scanl's with p in a shared
 * tile): the same cases (free surface: the tile's mirror rows; short lines: the tile's
 * slack). */
Test(gpu_implicit, tile_matches_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    layer_rows_cases(WAVE_IMPLICIT_YZ_TILE, WAVE_IMPLICIT_YZ_TILEB);
}

/* tuning tilem, tilez (tilea's y sweep, and tilez's z, at three blocks an SM): the same
 * cases. */
Test(gpu_implicit, tilem_matches_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    layer_rows_cases(WAVE_IMPLICIT_YZ_TILEM, WAVE_IMPLICIT_YZ_TILEZ);
}

/* tuning tileq (tilem's, the z sweep's q(n-1) copied into shared memory beside the tile
 * by cp.async instead of prefetched into L2) and tileqn (tileq's without the prefetch of
 * lap and vel, four rows a write batch): the same cases (the layer rows' writes take q
 * from the copy too; the free surface's row 0 from global memory). */
Test(gpu_implicit, tileq_matches_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    layer_rows_cases(WAVE_IMPLICIT_YZ_TILEQ, WAVE_IMPLICIT_YZ_TILEQN);
}

/* tuning xyfused (kernels/implicit_xy.cu: x and y in one cluster kernel) in a test of its
 * own, so that the others report whatever it does: the small grids of every case above
 * (clusters of 2 blocks), x lines of 512 (every lane full) and 532 (the sequential
 * fallback), y lines of 512 (a cluster of 16 blocks). */
Test(gpu_implicit, xyfused_matches_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    for (int yz = WAVE_IMPLICIT_YZ_XYFUSED; yz <= WAVE_IMPLICIT_YZ_XYPIPE; yz++) {
        small_cases(yz);
        long_case((const int[3]){500, 8, 470}, false, yz, yz + 1);
        long_case((const int[3]){520, 8, 526}, true, yz, yz + 1);
        long_case((const int[3]){20, 500, 28}, false, yz, yz + 1); /* padded 32 x 512 x 40 */
    }
}

/* tuning xyc (kernels/implicit_xyc.cu: xyfused's plane in a persistent 1024-thread
 * cluster kernel, two chunks a column, planes double-buffered): the small grids (clusters
 * of 2 blocks, 2D and the interface values through the sequential sweeps), x lines of 512
 * and 532 (the fallback), y lines of 512 (16 blocks), and the benchmark's 20-row layers
 * across x and y (the second write loop's CPML terms: x layers in every block, y layers
 * in the first and last), a free surface. */
static void xyc_cases(int yz)
{
    small_cases(yz);
    long_case((const int[3]){500, 8, 470}, false, yz, yz + 1);
    long_case((const int[3]){520, 8, 526}, true, yz, yz + 1);
    long_case((const int[3]){20, 500, 28}, false, yz, yz + 1); /* padded 32 x 512 x 40 */
    long_case_pml((const int[3]){472, 472, 12}, (const int[6]){20, 20, 20, 20, 6, 6}, false, yz);
    long_case_pml((const int[3]){472, 90, 14}, (const int[6]){20, 20, 30, 40, 0, 6}, true, yz);
    /* x lines of 512 and y of 64 without x and y layers (every chunk written by the plain
     * loop: xycf's correction of columns 0..31 there) */
    long_case_pml((const int[3]){512, 64, 12}, (const int[6]){0, 0, 0, 0, 6, 6}, false, yz);
}

Test(gpu_implicit, xyc_matches_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    xyc_cases(WAVE_IMPLICIT_YZ_XYC);
}

/* tuning xycn (xyc's x-y kernel, z tileqn's) and xyco (xycn's, the CPML psi pass on a
 * stream of its own beside the x-y kernel, joined before the layers pass): the same cases
 * (with CPML: the psi pass beside; 2D and the interface values: before the sequential
 * sweeps, as usual). */
Test(gpu_implicit, xycn_matches_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    xyc_cases(WAVE_IMPLICIT_YZ_XYCN);
    xyc_cases(WAVE_IMPLICIT_YZ_XYCO);
}

/* tuning xycs (xycf's, a share of the planes solved by the sequential x and y sweeps
 * beside the clusters, on a stream of their own, after the psi pass there): xyc's cases
 * (the share: 2.5 % of the planes with CPML, 5 % without; in the 512 x 512 x 24 grids one
 * plane), and 512 x 512 x 40 without CPML (two planes). */
Test(gpu_implicit, xycs_matches_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    const int yz = WAVE_IMPLICIT_YZ_XYCS;
    xyc_cases(yz);
    long_case_layers((const int[3]){472, 472, 20}, (const int[6]){20, 20, 20, 20, 10, 10}, false, yz, yz + 1, false);
}

/* tuning xycp (xycf's, the x-y kernel in four launches over groups of planes, each
 * group's CPML layers pass beside the next group's launch on a stream of its own after
 * the psi pass; without CPML xycs's share of the planes beside): xyc's cases and the
 * 512 x 512 x 40 grid without CPML (two planes beside). */
Test(gpu_implicit, xycp_matches_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    const int yz = WAVE_IMPLICIT_YZ_XYCP;
    xyc_cases(yz);
    long_case_layers((const int[3]){472, 472, 20}, (const int[6]){20, 20, 20, 20, 10, 10}, false, yz, yz + 1, false);
}

/* tuning xyct (xycs's, the x-y kernel k_sweep_xyct: CF's arithmetic in fewer instructions,
 * 32-bit indices, a compile-time x stride): xyc's cases (its kernel in the 512 x 512,
 * 512 x 160 and 512 x 64 planes: x and y layers, free surface, no layers; the others
 * through xyco's kernel or the sequential sweeps), 512 x 512 x 40 without CPML (the
 * share beside), a plane of one block (512 x 32: a cluster of 1, no carries), and 512 x 96 with
 * 4-row y layers; plane counts (17, 11) that the running clusters do not divide. */
Test(gpu_implicit, xyct_matches_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    const int yz = WAVE_IMPLICIT_YZ_XYCT;
    xyc_cases(yz);
    long_case_layers((const int[3]){472, 472, 20}, (const int[6]){20, 20, 20, 20, 10, 10}, false, yz, yz + 1, false);
    long_case_pml((const int[3]){512, 32, 9}, (const int[6]){0, 0, 0, 0, 4, 4}, false, yz);
    long_case_pml((const int[3]){500, 88, 11}, (const int[6]){6, 6, 4, 4, 0, 0}, false, yz);
}

/* tuning tileqw (tileqn's z sweep in 1024-thread blocks, 32 x lanes): the tile cases. */
Test(gpu_implicit, tileqw_matches_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    layer_rows_cases(WAVE_IMPLICIT_YZ_TILEQW, WAVE_IMPLICIT_YZ_TILEQW);
}

/* tuning xycf (xyco's, the x and y recursions of the factors' constant limit, the lines'
 * first 32 rows corrected: implicit_xyc.cu's CF, where x lines are 512 rows and y lines
 * a multiple of 32): the same cases; the CF kernel runs in the 512 x 512, 512 x 160 and
 * 512 x 64 planes (with x and y layers, below a free surface, without layers). */
Test(gpu_implicit, xycf_matches_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    xyc_cases(WAVE_IMPLICIT_YZ_XYCF);
}

/* The boundary strategy on the GPU: strips (with the interface values) in device memory
 * each step, the reverse run over the interior with them; and the random strategy's
 * reversal through random layers. */
Test(gpu_implicit, strategies_reconstruct, .timeout = 300)
{
    GPU_REQUIRED();
    struct sl_device gpu;
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    const double fp = 12;
    /* the production default (0 / 0), the reference (thread / march), warp / chunks, warp /
     * scan (the default before), warp / scanl, regs / scanl1, warp / scanl256, warp / tile,
     * regs / tile3, warpl / tile, warpl / tilea, warpl / tilem (the default's), regs /
     * overlap, regs / xyfused (the cluster kernel), warpl / xyc (its persistent form), warpl /
     * tileq, warpl / tileqn, warpl / xycn, warpl / xyco, warpl / xycf, warpl / xycs, warpl /
     * tileqw, warpl / xycp, warpl / xyct (last) */
    const int pairs[24][2] = {{0, 0},
                             {WAVE_IMPLICIT_X_THREAD, WAVE_IMPLICIT_YZ_MARCH},
                             {WAVE_IMPLICIT_X_WARP, WAVE_IMPLICIT_YZ_CHUNKS},
                             {WAVE_IMPLICIT_X_WARP, WAVE_IMPLICIT_YZ_SCAN},
                             {WAVE_IMPLICIT_X_WARP, WAVE_IMPLICIT_YZ_SCANL},
                             {WAVE_IMPLICIT_X_REGS, WAVE_IMPLICIT_YZ_SCANL1},
                             {WAVE_IMPLICIT_X_WARP, WAVE_IMPLICIT_YZ_SCANL256},
                             {WAVE_IMPLICIT_X_WARP, WAVE_IMPLICIT_YZ_TILE},
                             {WAVE_IMPLICIT_X_REGS, WAVE_IMPLICIT_YZ_TILE3},
                             {WAVE_IMPLICIT_X_WARPL, WAVE_IMPLICIT_YZ_TILE},
                             {WAVE_IMPLICIT_X_WARPL, WAVE_IMPLICIT_YZ_TILEA},
                             {WAVE_IMPLICIT_X_WARPL, WAVE_IMPLICIT_YZ_TILEM},
                             {WAVE_IMPLICIT_X_REGS, WAVE_IMPLICIT_YZ_OVERLAP},
                             {WAVE_IMPLICIT_X_REGS, WAVE_IMPLICIT_YZ_XYFUSED},
                             {WAVE_IMPLICIT_X_WARPL, WAVE_IMPLICIT_YZ_XYC},
                             {WAVE_IMPLICIT_X_WARPL, WAVE_IMPLICIT_YZ_TILEQ},
                             {WAVE_IMPLICIT_X_WARPL, WAVE_IMPLICIT_YZ_TILEQN},
                             {WAVE_IMPLICIT_X_WARPL, WAVE_IMPLICIT_YZ_XYCN},
                             {WAVE_IMPLICIT_X_WARPL, WAVE_IMPLICIT_YZ_XYCO},
                             {WAVE_IMPLICIT_X_WARPL, WAVE_IMPLICIT_YZ_XYCF},
                             {WAVE_IMPLICIT_X_WARPL, WAVE_IMPLICIT_YZ_XYCS},
                             {WAVE_IMPLICIT_X_WARPL, WAVE_IMPLICIT_YZ_TILEQW},
                             {WAVE_IMPLICIT_X_WARPL, WAVE_IMPLICIT_YZ_XYCP},
                             {WAVE_IMPLICIT_X_WARPL, WAVE_IMPLICIT_YZ_XYCT}};
    for (int pi = 0; pi < 24; pi++)
        for (int strategy = 0; strategy < 2; strategy++) {
            const int x = pairs[pi][0], yz = pairs[pi][1];
            struct wave_params p = {.n = {60, 52, 48}, .d = {10, 10, 10}, .order = 8, .op = PROP_OP_IMPLICIT,
                                    .dt = 7e-4, .pml = {12, 12, 12, 12, 12, 12}, .pml_reflection = 1e-4, .f_ref = fp,
                                    .tuning = {.implicit_x = x, .implicit_yz = yz}};
            if (strategy == 1) {
                for (int f = 0; f < 6; f++)
                    p.face[f] = WAVE_FACE_RANDOM;
                p.face[4] = WAVE_FACE_FREE;
                p.pml[4] = 0;
            }
            size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
            float *v = malloc(nn * sizeof *v);
            srand(5);
            for (size_t i = 0; i < nn; i++)
                v[i] = 1800.0f + 100.0f * (float)rand() / RAND_MAX;
            struct wave_sim *s;
            cr_assert_eq(wave_create(&gpu, &p, v, &s), 0, "%s", err_msg());
            if (strategy == 1) {
                struct random_boundary rb = {.width = 12, .seed = 3, .vmin = 1800,
                                             .vstable = 0.95 * 2 * 10 / (p.dt * sqrt(3 * implicit_symbol_max(8, 0)))};
                cr_assert_eq(wave_randomize_layers(s, &rb, 1), 0, "%s", err_msg());
            }
            const double src[3] = {301.3, 251.1, 201.7};
            struct wave_points *ps;
            cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
            const int N = 300, M = 120;
            size_t ns = strategy == 0 ? wave_strip_count(s) : 0;
            float *strips = NULL;
            if (ns)
                cr_assert_eq(dev_alloc(&gpu, (size_t)(N + 1) * ns * sizeof(float), (void **)&strips), 0, "%s",
                             err_msg());
            float *snap = malloc(nn * sizeof *snap), *back = malloc(nn * sizeof *back);
            for (int it = 0; it < N; it++) {
                float a = (float)wavelet_ricker(it * p.dt, fp, wavelet_ricker_delay(fp));
                cr_assert_eq(wave_step(s), 0, "%s", err_msg());
                cr_assert_eq(wave_inject(s, ps, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
                if (ns)
                    cr_assert_eq(wave_strip_save(s, strips + (size_t)(it + 1) * ns, true), 0, "%s", err_msg());
                if (it + 1 == M)
                    cr_assert_eq(wave_copy_out(s, false, snap), 0);
            }
            wave_swap(s);
            wave_set_reverse_interior(s, ns > 0);
            for (int n = N - 1; n > M; n--) {
                float a = (float)wavelet_ricker(n * p.dt, fp, wavelet_ricker_delay(fp));
                cr_assert_eq(wave_step_reverse(s), 0, "%s", err_msg());
                cr_assert_eq(wave_inject(s, ps, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
                if (ns)
                    cr_assert_eq(wave_strip_load(s, strips + (size_t)(n - 1) * ns, true), 0, "%s", err_msg());
            }
            cr_assert_eq(wave_copy_out(s, false, back), 0);
            double e = test_rel_l2_f32(back, snap, nn);
            fprintf(stderr, "gpu implicit: %s strategy, x %s yz %s, %d steps back: rel L2 %.3g\n",
                    ns ? "boundary" : "random", x ? wave_implicit_x_name(x) : "default",
                    yz ? wave_implicit_yz_name(yz) : "default", N - 1 - M, e);
            cr_assert_lt(e, 1e-4);
            if (strips)
                dev_free(&gpu, strips);
            wave_points_destroy(ps);
            wave_destroy(s);
            free(snap);
            free(back);
            free(v);
        }
}
