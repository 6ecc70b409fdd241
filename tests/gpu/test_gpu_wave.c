/* The CUDA propagator against the CPU reference on random models and random states
 * (both time levels and the CPML memory random, halo zero), odd grid sizes so tiles are
 * partial: every kernel variant (the defaults at every order; all tiled variants at
 * orders 2, 6, 10, 16), CPML on/off, free surface on/off, 3D and 2D; injection,
 * sampling, reverse steps, the boundary strip and checkpoints through host and device
 * buffers; the variant that ran is the one asked for (wave_describe_kernel).
 * ||gpu - cpu|| / ||cpu|| < 1e-5 over the whole state; every cell of the
 * padded grid is compared, so a cell a kernel forgot keeps its old value and fails;
 * output buffers (samples, strips, states) are poisoned with NaN before each call. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/wave.h"
#include "kernels/wave_tuning.h"
#include "stream/error.h"
#include "tests/gpu/gpu_support.h"
#include "tests/support.h"
#include "tools/wave_research.h"

/* The research variants (tools/wave_research.cu: linked into gpu-tests of a CUDA build;
 * a CPU build has no GPU to run these tests on). */
static int register_research(void)
{
#ifdef SEISLIVE_CUDA
    return wave_research_register();
#else
    return 0;
#endif
}

static void poison(float *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = NAN;
}

static float frand(void) { return (float)rand() / RAND_MAX - 0.5f; }

/* A random full state for sim S: fields random on the padded grid, zero in the halo and
 * row padding; CPML memory random. */
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

static double rel(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - b[i];
        num += d * d;
        den += (double)b[i] * b[i];
        if (isnan(a[i]))
            return INFINITY;
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* WANT: the description (wave_describe_kernel) of the variant the case must run, or
 * NULL for the family only ("naive " / "tiled ", and ", 2D" in 2D), so that the case
 * never tests another kernel than it says.  TWO_D: the grid is x-z (n[1] = 1, NONE y
 * faces: no y layers, no y halo, points' y ignored). */
/* N (or NULL): the interior size instead of 37 x 29 x 23; PMLX (or NULL): the x layers'
 * widths instead of 7 and 9; PMLZ (or NULL): the z layers' instead of 10 (0 with FS) and 5. */
static void compare_case_grid_z(int order, int kernel, bool cpml, bool fs, const struct wave_tuning *tuning,
                                const char *want, bool two_d, const int *n, const int *pmlx, const int *pmlz)
{
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct wave_params p = {.n = {37, 29, 23}, .d = {10, 12, 9}, .o = {0, 0, 0}, .order = order,
                            .dt = 5e-4, .pml = {7, 9, 8, 6, fs ? 0 : 10, 5}, .pml_reflection = 1e-4,
                            .f_ref = 12, .free_surface = fs, .kernel = kernel};
    if (n)
        memcpy(p.n, n, sizeof p.n);
    if (pmlx) {
        p.pml[0] = pmlx[0];
        p.pml[1] = pmlx[1];
    }
    if (pmlz) {
        p.pml[4] = pmlz[0];
        p.pml[5] = pmlz[1];
    }
    if (tuning)
        p.tuning = *tuning;
    if (two_d) {
        p.n[1] = 1;
        p.pml[2] = p.pml[3] = 0;
        p.face[2] = p.face[3] = WAVE_FACE_NONE;
    }
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    srand(order * 10 + kernel + 100 * cpml + 1000 * fs + 10000 * two_d);
    for (size_t i = 0; i < nn; i++)
        v[i] = 1500.0f + 1500.0f * (frand() + 0.5f);
    struct wave_sim *c, *g;
    cr_assert_eq(wave_create(&cpu, &p, v, &c), 0, "%s", err_msg());
    cr_assert_eq(wave_create(&gpu, &p, v, &g), 0, "%s", err_msg());
    wave_set_cpml(c, cpml);
    wave_set_cpml(g, cpml);
    void *st = random_state(c);
    size_t sb = wave_state_bytes(c);
    cr_assert_eq(sb, wave_state_bytes(g));
    cr_assert_eq(wave_state_load(c, st, false), 0);
    cr_assert_eq(wave_state_load(g, st, false), 0, "%s", err_msg());
    const double src[3] = {151.3, 171.7, 101.1};
    const double rec[4][3] = {{40, 50, 30}, {300.5, 200.2, 150.7}, {200, 100, 190}, {151.3, 171.7, 101.1}};
    struct wave_points *cs, *gs, *cr, *gr;
    cr_assert_eq(wave_points_create(c, src, 1, WAVE_INTERP_SINC, &cs), 0);
    cr_assert_eq(wave_points_create(g, src, 1, WAVE_INTERP_SINC, &gs), 0, "%s", err_msg());
    cr_assert_eq(wave_points_create(c, &rec[0][0], 4, WAVE_INTERP_SINC, &cr), 0);
    cr_assert_eq(wave_points_create(g, &rec[0][0], 4, WAVE_INTERP_SINC, &gr), 0);
    const int nt = 12;
    float tc[4 * nt], tg[4 * nt];
    poison(tg, 4 * nt);
    for (int it = 0; it < nt; it++) {
        float a = 100.0f * (float)sin(0.3 * it);
        cr_assert_eq(wave_step(c), 0);
        cr_assert_eq(wave_step(g), 0, "%s", err_msg());
        cr_assert_eq(wave_inject(c, cs, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        cr_assert_eq(wave_inject(g, gs, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0, "%s", err_msg());
        cr_assert_eq(wave_sample(c, cr, tc + it, nt, 0), 0);
        cr_assert_eq(wave_sample(g, gr, tg + it, nt, 0), 0, "%s", err_msg());
    }
    float *sc = malloc(sb), *sg = malloc(sb);
    poison(sg, sb / sizeof(float));
    cr_assert_eq(wave_state_save(c, sc, false), 0);
    cr_assert_eq(wave_state_save(g, sg, false), 0, "%s", err_msg());
    const struct wave_layout *L = wave_layout(c);
    size_t nf = (sb - sizeof(int64_t)) / sizeof(float);
    double e_cur = rel(sg, sc, L->count), e_prev = rel(sg + L->count, sc + L->count, L->count);
    double e_mem = rel(sg + 2 * L->count, sc + 2 * L->count, nf - 2 * L->count);
    double e_tr = rel(tg, tc, 4 * nt);
    char desc[160];
    wave_describe_kernel(g, desc, sizeof desc);
    fprintf(stderr, "gpu wave: order %2d [%s] fs %d: cur %.2e prev %.2e cpml-mem %.2e traces %.2e\n",
            order, desc, fs, e_cur, e_prev, e_mem, e_tr);
    if (want)
        cr_assert_str_eq(desc, want, "order %d: ran [%s], asked for [%s]", order, desc, want);
    else {
        cr_assert_eq(strncmp(desc, kernel == WAVE_KERNEL_NAIVE ? "naive " : "tiled ", 6), 0,
                     "order %d, kernel %d: ran [%s]", order, kernel, desc);
        cr_assert_eq(strstr(desc, ", 2D,") != NULL, two_d, "order %d: ran [%s], 2D %d", order, desc, two_d);
    }
    cr_assert_lt(e_cur, 1e-5);
    cr_assert_lt(e_prev, 1e-5);
    cr_assert_lt(e_mem, 1e-5);
    cr_assert_lt(e_tr, 1e-5);
    cr_assert_eq(memcmp((char *)sg + sb - 8, (char *)sc + sb - 8, 8), 0, "step index");

    /* Reverse steps and the strip, the strip through a device buffer (another
     * simulation's field serves as device memory). */
    size_t ns = wave_strip_count(c);
    float *hc = malloc(ns * sizeof *hc), *hg = malloc(ns * sizeof *hg);
    for (int it = 0; it < 3; it++) {
        cr_assert_eq(wave_step_reverse(c), 0);
        cr_assert_eq(wave_step_reverse(g), 0);
    }
    poison(hg, ns);
    cr_assert_eq(wave_strip_save(c, hc, false), 0);
    cr_assert_eq(wave_strip_save(g, hg, false), 0, "%s", err_msg());
    cr_assert_lt(rel(hg, hc, ns), 1e-5, "strip after reverse steps: %g", rel(hg, hc, ns));
    float *orig = malloc(ns * sizeof *orig);
    memcpy(orig, hc, ns * sizeof *orig);
    struct wave_sim *aux;
    cr_assert_eq(wave_create(&gpu, &p, v, &aux), 0);
    cr_assert_geq(wave_layout(aux)->count, ns);
    float *dbuf = wave_cur(aux);
    cr_assert_eq(wave_strip_save(g, dbuf, true), 0, "%s", err_msg());
    for (size_t i = 0; i < ns; i++)
        hc[i] = frand();
    cr_assert_eq(wave_strip_load(g, hc, false), 0);
    poison(hg, ns);
    cr_assert_eq(wave_strip_save(g, hg, false), 0);
    cr_assert_eq(memcmp(hg, hc, ns * sizeof *hc), 0, "strip load/save on the GPU");
    cr_assert_eq(wave_strip_load(g, dbuf, true), 0, "%s", err_msg()); /* the strip saved on the device */
    cr_assert_eq(wave_strip_load(c, orig, false), 0);
    cr_assert_eq(wave_step_reverse(c), 0);
    cr_assert_eq(wave_step_reverse(g), 0);
    poison(sg, sb / sizeof(float));
    cr_assert_eq(wave_state_save(c, sc, false), 0);
    cr_assert_eq(wave_state_save(g, sg, false), 0);
    double e_rev = rel(sg, sc, 2 * L->count);
    fprintf(stderr, "gpu wave:   after 4 reverse steps and strip round trips: %.2e\n", e_rev);
    cr_assert_lt(e_rev, 1e-5);
    free(orig);
    wave_destroy(aux);
    free(hc);
    free(hg);
    free(sc);
    free(sg);
    free(st);
    free(v);
    wave_points_destroy(cs);
    wave_points_destroy(gs);
    wave_points_destroy(cr);
    wave_points_destroy(gr);
    wave_destroy(c);
    wave_destroy(g);
}

static void compare_case_grid(int order, int kernel, bool cpml, bool fs, const struct wave_tuning *tuning,
                              const char *want, bool two_d, const int *n, const int *pmlx)
{
    compare_case_grid_z(order, kernel, cpml, fs, tuning, want, two_d, n, pmlx, NULL);
}

static void compare_case_nd(int order, int kernel, bool cpml, bool fs, const struct wave_tuning *tuning,
                            const char *want, bool two_d)
{
    compare_case_grid(order, kernel, cpml, fs, tuning, want, two_d, NULL, NULL);
}

static void compare_case(int order, int kernel, bool cpml, bool fs, const struct wave_tuning *tuning,
                         const char *want)
{
    compare_case_nd(order, kernel, cpml, fs, tuning, want, false);
}

Test(gpu_wave, kernels_match_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    const int orders[4] = {2, 4, 8, 16};
    for (int k = WAVE_KERNEL_NAIVE; k <= WAVE_KERNEL_TILED; k++)
        for (int o = 0; o < 4; o++)
            for (int m = 0; m < 3; m++)
                compare_case(orders[o], k, m != 1, m == 2, NULL, NULL);
}

/* Every variant of the tiled kernel (interior pipeline x block shape x prefetch depth x
 * CPML arrangement: the library's and the research ones of tools/wave_research.cu,
 * linked into gpu-tests), selected through wave_params.tuning as seislive-bench does, at
 * orders whose half-widths cover the halo alignments (R = 1, 3, 5, 8): CPML off (the
 * interior kernel over the whole grid), on, on with a free surface; short k_layer z
 * chunks (chunk boundaries inside the layers) and the CPML on the simulation's own
 * stream for some. */
Test(gpu_wave, variants_match_cpu_reference, .timeout = 600)
{
    GPU_REQUIRED();
    cr_assert_eq(register_research(), 0);
    static const struct {
        const char *pipe, *tile, *depth;
    } iv[] = {
        {"ring", "4x4", "1"}, {"ring", "4x4", "2"}, {"ring", "4x4", "3"}, {"ring", "8x2", "1"},
        {"ring", "8x2", "2"}, {"ring", "8x2", "3"}, {"ring", "8x4", "1"}, {"ring", "8x4", "2"},
        {"ring", "8x4", "3"}, {"regs", "16x1", "1"}, {"regs", "16x1", "2"}, {"regs", "8x1", "1"},
        {"regs", "8x1", "2"}, {"regs", "8x2", "1"}, {"regs", "8x2", "2"}, {"regs", "4x4", "1"},
        {"regs", "4x4", "2"},
    };
    const char *cpml_arr[3] = {"lines", "fused", "split"};
    const int orders[4] = {2, 6, 10, 16};
    for (size_t v = 0; v < sizeof iv / sizeof iv[0]; v++)
        for (int c = 0; c < 3; c++)
            for (int o = 0; o < 4; o++) {
                struct wave_tuning t = {0};
                cr_assert_eq(wave_tuning_set(&t, "pipe", iv[v].pipe), 0, "%s", err_msg());
                cr_assert_eq(wave_tuning_set(&t, "tile", iv[v].tile), 0, "%s", err_msg());
                cr_assert_eq(wave_tuning_set(&t, "prefetch", iv[v].depth), 0, "%s", err_msg());
                cr_assert_eq(wave_tuning_set(&t, "cpml", cpml_arr[c]), 0, "%s", err_msg());
                if (o % 2)
                    t.layer_zchunk = 5;
                if ((v + o) % 3 == 0)
                    t.cpml_overlap = WAVE_OVERLAP_OFF;
                /* what wave_describe_kernel must say: the pipeline, tile and depth
                 * asked for; the CPML arrangement (off when o == 0), on a second
                 * stream unless lines or the overlap is off */
                const bool on = o != 0, two = on && c != 0 && (v + o) % 3 != 0;
                char want[160];
                snprintf(want, sizeof want, "tiled %s %s depth %s, CPML %s%s", iv[v].pipe, iv[v].tile,
                         iv[v].depth, on ? cpml_arr[c] : "off", two ? ", 2 streams" : "");
                compare_case(orders[o], WAVE_KERNEL_TILED, on, o == 2, &t, want);
            }
}

/* The ring CPML (kernels/wave_ring_cpml.cu: k_ring over the core, k_ring_cpml over the
 * frame of x/y-layer tiles, every plane, then lines' z corrections) at orders 2-8 (half-widths 1-4: every halo
 * alignment), with and without a free surface, on the small grid (no core: the frame
 * kernel everywhere, tiles holding both x faces, 4-byte memory copies) and on one large
 * enough for a core in x and y (at order 8 with 16-byte memory copies); under the
 * default ring tile and another (a research variant: the core runs it), z chunks of the
 * default length or of 5 planes (layer_zchunk: chunk edges inside the layers), the frame
 * and the z layers on a second stream or (with the free surface) on the simulation's
 * own.  Each against the CPU reference like every case (state, CPML memory, traces). */
Test(gpu_wave, ring_cpml_matches_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    cr_assert_eq(register_research(), 0);
    /* npad[0] 88, x layers 8 and 12: 16-byte y, z and x memory tiles at order 8 */
    static const int big[3] = {68, 45, 41}, bigx[2] = {8, 12};
    for (int order = 2; order <= 8; order += 2)
        for (int g = 0; g < 2; g++)
            for (int fs = 0; fs < 2; fs++) {
                struct wave_tuning t = {0};
                cr_assert_eq(wave_tuning_set(&t, "cpml", "ring"), 0, "%s", err_msg());
                if (g == 0 && order >= 6) /* z chunks of 5 planes: chunk edges inside the layers */
                    t.layer_zchunk = 5;
                const char *tile = order <= 4 ? "8x2" : "8x4", *depth = order <= 4 ? "1" : "2";
                if (fs) { /* another interior variant for the core, all on one stream */
                    cr_assert_eq(wave_tuning_set(&t, "tile", "4x4"), 0);
                    cr_assert_eq(wave_tuning_set(&t, "prefetch", "3"), 0);
                    cr_assert_eq(wave_tuning_set(&t, "cpml-overlap", "off"), 0);
                    tile = "4x4";
                    depth = "3";
                }
                char want[160];
                snprintf(want, sizeof want, "tiled ring %s depth %s, CPML ring%s", tile, depth,
                         fs ? "" : ", 2 streams");
                compare_case_grid(order, WAVE_KERNEL_TILED, true, fs, &t, want, false, g ? big : NULL,
                                  g ? bigx : NULL);
            }
}

/* The ring CPML's other frame and z-layer shapes (tools/wave_research.cu, order 8 only;
 * the z-layer kernel k_ring_cpml<LZ> runs in these alone;
 * seislive-bench --ring-shape) on the large grid, with and without the second stream; an
 * unknown shape is refused, and so is a research shape at another order. */
Test(gpu_wave, ring_cpml_shapes_match_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
#ifdef SEISLIVE_CUDA
    cr_assert_eq(register_research(), 0);
    static const int big[3] = {68, 45, 41}, bigx[2] = {8, 12};
    static const char *const shapes[] = {"8x1d2/8x1d2", "8x2d2/8x1d2", "8x2d1/8x1d2", "8x1d1/8x1d2",
                                         "8x1d3/8x1d2", "8x1d2/8x1d1", "8x1d2/8x2d1", "8x1d2/lines",
                                         "8x1d2/8x1d3", "8x1d2b3/8x1d2", "8x1d2/8x1d1b3", "8x1d2b3/8x1d1b3",
                                         "8x2d1/lines", "8x1d2b3/lines", "8x2d3/lines", "8x2d2/lines-shfl",
                                         "4x4d2/lines", "6x2d2/lines", "4x3d2/lines",
                                         "8x2d2w16/lines", "6x2d2w16/lines", "8x2d2/lines/x8x2d2",
                                         "8x2d2/lines/x8x2d2b3", "8x2d2/lines/x8x4d2", "8x2d2/lines/x8x4d2b3",
                                         "8x2d2/lines/x8x2d2p", "8x2d2/lines/x8x2d2b3p", "8x2d2p/lines/x8x2d2b3p",
                                         "8x2d2/lines", "8x2d2p/lines-z12", "8x2d2/lines-z12", "8x2d2ph/lines",
                                         "8x2d2p/lines-z12b8", "8x2d2p/lines-zb8", "8x2d2p/lines-zo",
                                         "8x2d2p/lines-zo2", "8x2d2p/lines-lz16", "8x2d2p/lines-lz36"};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        cr_assert_eq(wave_research_ring_shape(shapes[i]), 0, "%s", err_msg());
        struct wave_tuning t = {0};
        cr_assert_eq(wave_tuning_set(&t, "cpml", "ring"), 0);
        if (i % 2)
            t.cpml_overlap = WAVE_OVERLAP_OFF;
        fprintf(stderr, "gpu wave: ring shape %s\n", shapes[i]);
        compare_case_grid(8, WAVE_KERNEL_TILED, true, false, &t,
                          i % 2 ? "tiled ring 8x4 depth 2, CPML ring" : "tiled ring 8x4 depth 2, CPML ring, 2 streams",
                          false, big, bigx);
    }
    cr_assert_eq(wave_research_ring_shape("8x3d2/8x1d2"), -EINVAL);
    cr_assert(strstr(err_msg(), "8x2d2/8x1d2") != NULL, "%s", err_msg());
    /* a research shape at order 4: the step refuses it */
    cr_assert_eq(wave_research_ring_shape("8x2d2/8x1d2"), 0);
    struct sl_device gpu;
    cr_assert_eq(backend_select("cuda:0", &gpu), 0);
    struct wave_params p = {.n = {33, 21, 19}, .d = {10, 10, 10}, .order = 4, .dt = 1e-3,
                            .pml = {6, 6, 6, 6, 6, 6}, .pml_reflection = 1e-4, .f_ref = 10,
                            .kernel = WAVE_KERNEL_TILED};
    cr_assert_eq(wave_tuning_set(&p.tuning, "cpml", "ring"), 0);
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    for (size_t i = 0; i < nn; i++)
        v[i] = 2000.0f;
    struct wave_sim *s = NULL;
    cr_assert_eq(wave_create(&gpu, &p, v, &s), 0, "%s", err_msg());
    cr_assert_eq(wave_step(s), -EINVAL);
    cr_assert(strstr(err_msg(), "order 8 only") != NULL, "%s", err_msg());
    wave_destroy(s);
    free(v);
    cr_assert_eq(wave_research_ring_shape(NULL), 0);
#endif
}

/* The ring CPML at order 8 with z layers 12 wide (the default width; the research shapes
 * ...-z12* then run lines' z kernel with its march unrolled whole, k_line<NW = 12>) and
 * with one 12-wide z layer under a free surface: the library's shape, the former one
 * (8x2d2/lines: the frame's memory copies indexed per plane) and the research shapes of
 * session 12, on the large grid, against the CPU reference. */
Test(gpu_wave, ring_cpml_z12_matches_cpu_reference, .timeout = 120)
{
    GPU_REQUIRED();
#ifdef SEISLIVE_CUDA
    cr_assert_eq(register_research(), 0);
    static const int big[3] = {68, 45, 41}, bigx[2] = {12, 12}, z12[2] = {12, 12}, fz12[2] = {0, 12};
    static const char *const shapes[] = {NULL,           "8x2d2/lines",   "8x2d2p/lines-z12", "8x2d2/lines-z12",
                                         "8x2d2ph/lines", "8x2d2p/lines-z12b8", "8x2d2p/lines-zb8",
                                         "8x2d2p/lines-zo", "8x2d2p/lines-zo2", "8x2d2p/lines-lz16",
                                         "8x2d2p/lines-lz36"};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        for (int fs = 0; fs < 2; fs++) {
            cr_assert_eq(wave_research_ring_shape(shapes[i]), 0, "%s", err_msg());
            struct wave_tuning t = {0};
            cr_assert_eq(wave_tuning_set(&t, "cpml", "ring"), 0);
            fprintf(stderr, "gpu wave: ring shape %s, z layers %d and 12\n", shapes[i] ? shapes[i] : "default",
                    fs ? 0 : 12);
            compare_case_grid_z(8, WAVE_KERNEL_TILED, true, fs, &t, "tiled ring 8x4 depth 2, CPML ring, 2 streams",
                                false, big, bigx, fs ? fz12 : z12);
        }
    cr_assert_eq(wave_research_ring_shape(NULL), 0);
#endif
}

/* Where the ring CPML does not run (2D, orders above 8, bf16 memory), asking for it is
 * refused at create with the reason; the default arrangement there is lines. */
Test(gpu_wave, ring_cpml_refused_where_it_does_not_run, .timeout = 60)
{
    GPU_REQUIRED();
    struct sl_device gpu;
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct wave_params p = {.n = {33, 21, 19}, .d = {10, 10, 10}, .order = 8, .dt = 1e-3,
                            .pml = {6, 6, 6, 6, 6, 6}, .pml_reflection = 1e-4, .f_ref = 10,
                            .kernel = WAVE_KERNEL_TILED};
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    for (size_t i = 0; i < nn; i++)
        v[i] = 2000.0f;
    for (int c = 0; c < 3; c++) {
        struct wave_params q = p;
        const char *why = c == 0 ? "2D" : c == 1 ? "orders above 8" : "bf16";
        if (c == 0) {
            q.n[1] = 1;
            q.pml[2] = q.pml[3] = 0;
            q.face[2] = q.face[3] = WAVE_FACE_NONE;
        } else if (c == 1)
            q.order = 10;
        else
            q.cpml_memory = WAVE_CPML_MEM_BF16;
        struct wave_sim *s = NULL;
        cr_assert_eq(wave_create(&gpu, &q, v, &s), 0, "%s", err_msg());
        char desc[160];
        wave_describe_kernel(s, desc, sizeof desc);
        cr_assert(strstr(desc, "CPML lines") != NULL, "%s: default ran [%s]", why, desc);
        wave_destroy(s);
        s = NULL;
        cr_assert_eq(wave_tuning_set(&q.tuning, "cpml", "ring"), 0);
        cr_assert_eq(wave_create(&gpu, &q, v, &s), -EINVAL, "%s: ring accepted", why);
        cr_assert_null(s);
        cr_assert(strstr(err_msg(), "cpml ring") != NULL && strstr(err_msg(), why) != NULL, "%s: %s", why,
                  err_msg());
    }
    free(v);
}

/* 2D (n = [nx, 1, nz], NONE y faces): the kernels without the y terms against the CPU
 * 2D reference at every order, naive and tiled (the library's defaults), CPML off, on,
 * on with a free surface; the same steps, injection (a line source, per unit area),
 * sampling, reverse steps, strips and states as in 3D. */
Test(gpu_wave, kernels_2d_match_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    for (int k = WAVE_KERNEL_NAIVE; k <= WAVE_KERNEL_TILED; k++)
        for (int order = 2; order <= 16; order += 2)
            for (int m = 0; m < 3; m++)
                compare_case_nd(order, k, m != 1, m == 2, NULL, NULL, true);
}

/* 2D variants: the ring's other depths (tools/wave_research.cu), the split CPML under
 * the tiled kernel, the naive kernel's CPML on its own stream and another block. */
Test(gpu_wave, variants_2d_match_cpu_reference, .timeout = 300)
{
    GPU_REQUIRED();
    cr_assert_eq(register_research(), 0);
    const int orders[4] = {2, 6, 10, 16};
    for (int o = 0; o < 4; o++) {
        for (int d = 1; d <= 3; d++)
            for (int c = 0; c < 2; c++) {
                const char *arr = c ? "split" : "lines";
                struct wave_tuning t = {.prefetch = d};
                cr_assert_eq(wave_tuning_set(&t, "cpml", arr), 0);
                char want[160];
                snprintf(want, sizeof want, "tiled ring 128x1 depth %d, 2D, CPML %s%s", d, arr,
                         c ? ", 2 streams" : "");
                compare_case_nd(orders[o], WAVE_KERNEL_TILED, true, o == 2, &t, want, true);
            }
        struct wave_tuning t = {.naive_block = {64, 8}, .cpml_overlap = WAVE_OVERLAP_OFF};
        compare_case_nd(orders[o], WAVE_KERNEL_NAIVE, true, o == 1, &t, "naive 64x8, 2D, CPML split", true);
    }
}

/* The research variants are in gpu-tests and seislive-bench only: without
 * register_research() (each test runs in a process of its own) a simulation that
 * names one is refused at create, naming the library's choice; the 3D-only ones are
 * refused on a 2D grid even with them; the library's own choices need nothing. */
Test(gpu_wave, research_variants_refused_where_not_linked, .timeout = 60)
{
    GPU_REQUIRED();
    struct sl_device gpu;
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct wave_params p = {.n = {33, 21, 19}, .d = {10, 10, 10}, .order = 8, .dt = 1e-3,
                            .pml = {6, 6, 6, 6, 6, 6}, .pml_reflection = 1e-4, .f_ref = 10,
                            .kernel = WAVE_KERNEL_TILED};
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    for (size_t i = 0; i < nn; i++)
        v[i] = 2000.0f;
    struct wave_sim *s = NULL;
    static const char *const research[][2] = {
        {"pipe", "regs"}, {"tile", "4x4"}, {"prefetch", "1"}, {"cpml", "fused"}};
    for (size_t i = 0; i < sizeof research / sizeof *research; i++) {
        struct wave_params q = p;
        cr_assert_eq(wave_tuning_set(&q.tuning, research[i][0], research[i][1]), 0);
        cr_assert_eq(wave_create(&gpu, &q, v, &s), -ENOTSUP, "%s %s", research[i][0], research[i][1]);
        cr_assert_null(s);
        cr_assert(strstr(err_msg(), "tools/wave_research.cu") != NULL, "%s", err_msg());
    }
    /* order 8's own ring (8x4, depth 2), lines and split: in the library */
    struct wave_params q = p;
    cr_assert_eq(wave_tuning_set(&q.tuning, "tile", "8x4"), 0);
    cr_assert_eq(wave_tuning_set(&q.tuning, "prefetch", "2"), 0);
    cr_assert_eq(wave_tuning_set(&q.tuning, "cpml", "split"), 0);
    cr_assert_eq(wave_create(&gpu, &q, v, &s), 0, "%s", err_msg());
    cr_assert_eq(wave_step(s), 0, "%s", err_msg());
    wave_destroy(s);
    /* 2D: no tile, no regs, no fused, with or without the research variants */
    cr_assert_eq(register_research(), 0);
    struct wave_params p2 = p;
    p2.n[1] = 1;
    p2.pml[2] = p2.pml[3] = 0;
    p2.face[2] = p2.face[3] = WAVE_FACE_NONE;
    static const char *const not2d[][2] = {{"pipe", "regs"}, {"tile", "8x2"}, {"cpml", "fused"}};
    for (size_t i = 0; i < sizeof not2d / sizeof *not2d; i++) {
        struct wave_params q2 = p2;
        cr_assert_eq(wave_tuning_set(&q2.tuning, not2d[i][0], not2d[i][1]), 0);
        s = NULL;
        cr_assert_eq(wave_create(&gpu, &q2, v, &s), -EINVAL, "2D %s %s", not2d[i][0], not2d[i][1]);
        cr_assert_null(s);
    }
    free(v);
}

/* Padded velocities and a device checkpoint restore bit for bit. */
Test(gpu_wave, velocity_and_device_checkpoint, .timeout = 120)
{
    GPU_REQUIRED();
    struct sl_device gpu;
    cr_assert_eq(backend_select("cuda:0", &gpu), 0);
    struct wave_params p = {.n = {33, 21, 19}, .d = {10, 10, 10}, .order = 8, .dt = 1e-3,
                            .pml = {6, 6, 6, 6, 6, 6}, .pml_reflection = 1e-4, .f_ref = 10,
                            .kernel = WAVE_KERNEL_TILED};
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    for (size_t i = 0; i < nn; i++)
        v[i] = 2000.0f + (float)(i % 97);
    struct wave_sim *g, *aux;
    cr_assert_eq(wave_create(&gpu, &p, v, &g), 0, "%s", err_msg());
    const struct wave_layout *L = wave_layout(g);
    size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
    float *a = malloc(np * sizeof *a), *b = malloc(np * sizeof *b);
    for (size_t i = 0; i < np; i++)
        a[i] = 1500.0f + (float)(i % 1013);
    cr_assert_eq(wave_set_velocity_padded(g, a, false), 0);
    poison(b, np);
    cr_assert_eq(wave_get_velocity_padded(g, b), 0);
    for (size_t i = 0; i < np; i++)
        cr_assert_float_eq(b[i], a[i], 0.02f, "padded velocity %zu: %g vs %g", i, b[i], a[i]);
    /* Device checkpoint: into the field array of a larger simulation (device memory). */
    struct wave_params pb = p;
    pb.n[0] = 4 * p.n[0];
    pb.n[1] = 2 * p.n[1];
    float *v3 = malloc(8 * nn * sizeof *v3);
    for (size_t i = 0; i < 8 * nn; i++)
        v3[i] = 2000.0f;
    cr_assert_eq(wave_create(&gpu, &pb, v3, &aux), 0, "%s", err_msg());
    size_t sb = wave_state_bytes(g);
    cr_assert_geq(wave_layout(aux)->count * sizeof(float), sb);
    const double src[3] = {160, 100, 90};
    struct wave_points *ps;
    cr_assert_eq(wave_points_create(g, src, 1, WAVE_INTERP_SINC, &ps), 0);
    for (int it = 0; it < 30; it++) {
        float amp = (float)sin(0.2 * it);
        wave_step(g);
        wave_inject(g, ps, &amp, 1, 1.0f, WAVE_INJECT_PHYSICAL);
    }
    float *h1 = malloc(sb), *h2 = malloc(sb);
    cr_assert_eq(wave_state_save(g, h1, false), 0);
    cr_assert_eq(wave_state_save(g, wave_cur(aux), true), 0, "%s", err_msg());
    for (int it = 0; it < 10; it++)
        wave_step(g);
    cr_assert_eq(wave_step_index(g), 40);
    cr_assert_eq(wave_state_load(g, wave_cur(aux), true), 0, "%s", err_msg());
    cr_assert_eq(wave_step_index(g), 30);
    poison(h2, sb / 4);
    cr_assert_eq(wave_state_save(g, h2, false), 0);
    cr_assert_eq(memcmp(h1, h2, sb), 0, "device checkpoint round trip");
    free(v3);
    free(h1);
    free(h2);
    wave_points_destroy(ps);
    wave_destroy(aux);
    wave_destroy(g);
    free(a);
    free(b);
    free(v);
}
