/* wave_plan — which kernels a step of the CUDA propagator runs, and the step itself.
 *
 * One step with CPML (the tiled default, "lines") = the interior kernel over the whole
 * padded grid with the plain Laplacian (so it never branches on the boundary) + per
 * axis a line kernel over that axis's layers adding the stretched terms + the
 * free-surface mirror.  The split and fused arrangements update the interior box and
 * the layers beside it instead, the CPML kernels on a second stream.  Without CPML (or
 * for a reverse step) only the interior kernel.  Kernels: wave_interior.cu and
 * wave_cpml.cu. */
#include "kernels/wave_cuda.h"

#include <stdio.h>
#include <stdlib.h>

/* Kernel variants (llm.c style: all kept side by side, each checked against the CPU
 * reference by tests/gpu/test_gpu_wave.c, picked per step from the environment so a
 * benchmark or a test can switch between them; unset means the default measured
 * fastest on the H100, docs/PERFORMANCE.md):
 *
 *   [propagator] kernel = naive   k_naive for the interior, the split CPML kernels
 *                                 (k_psi pass, then k_pml) for the layers;
 *   [propagator] kernel = tiled   SEISLIVE_WAVE_PIPE    ring (k_ring, cp.async ring) or
 *                                                       regs (k_tiled, register prefetch)
 *                                 SEISLIVE_WAVE_TILE    block shape threads x rows per
 *                                                       thread (32 columns): ring 4x4,
 *                                                       8x2, 8x4; regs 16x1, 8x1, 8x2, 4x4
 *                                 SEISLIVE_WAVE_PREFETCH planes in flight: ring 1..3,
 *                                                       regs 1..2
 *                                 SEISLIVE_WAVE_CPML    lines (the interior kernel over
 *                                                       the whole grid, then k_line per
 *                                                       axis adds the stretched terms),
 *                                                       fused (k_layer: psi and the
 *                                                       stretched update in one pass over
 *                                                       the layers beside the interior
 *                                                       box) or split (k_psi + k_pml)
 *   SEISLIVE_WAVE_NAIVE_BLOCK=WxH the naive kernel's thread block
 *   SEISLIVE_WAVE_CPML_OVERLAP=0  the CPML kernels on the simulation's stream instead of
 *                                 a second stream beside the interior kernel
 *   SEISLIVE_WAVE_LAYER_ZCHUNK=N  z planes per k_layer block (tests use it to cross
 *                                 chunk boundaries on small grids). */
static const char *const tile_names[] = {"16x1", "8x1", "8x2", "4x4", "8x4"};

static bool env_is(const char *name, const char *val)
{
    const char *e = getenv(name);
    return e && !strcmp(e, val);
}

static bool pipe_ring(void) { return !env_is("SEISLIVE_WAVE_PIPE", "regs"); }

static const char *const cpml_names[] = {"split", "fused", "lines"};
static int cpml_arrangement(const wave_sim *s)
{
    if (s->p.kernel == WAVE_KERNEL_NAIVE || env_is("SEISLIVE_WAVE_CPML", "split"))
        return CPML_SPLIT;
    if (env_is("SEISLIVE_WAVE_CPML", "fused"))
        return CPML_FUSED;
    return CPML_LINES;
}

static int tile_shape(int r, bool ring)
{
    const char *e = getenv("SEISLIVE_WAVE_TILE");
    for (int k = 0; e && k < TILE_N; k++)
        if (!strcmp(e, tile_names[k])) {
            bool ok = ring ? (k == TILE_4x4 || k == TILE_8x2 || k == TILE_8x4) : k != TILE_8x4;
            if (ok)
                return k;
        }
    if (ring) /* measured on the H100 (docs/PERFORMANCE.md) */
        return r == 3 || r == 4 ? TILE_8x4 : TILE_8x2;
    return r <= 4 ? TILE_4x4 : TILE_8x2;
}

/* The naive kernel's thread block: SEISLIVE_WAVE_NAIVE_BLOCK=WxH (W a multiple of 32,
 * W x H <= 1024), else the fastest measured on the H100 at 512^3 (docs/PERFORMANCE.md):
 * 128 x 4 up to order 4, 256 x 4 above (8th order: 32 x 8 83.7, 32 x 32 106.7,
 * 128 x 8 118.1, 256 x 4 120.6 Gpts/s: 1024-thread blocks keep more of the y and z
 * neighbours in L1 and L2 while they are needed). */
static void naive_block(int r, int *bx, int *by)
{
    *bx = r <= 2 ? 128 : 256;
    *by = 4;
    const char *e = getenv("SEISLIVE_WAVE_NAIVE_BLOCK");
    int w, h;
    if (e && sscanf(e, "%dx%d", &w, &h) == 2 && w >= 32 && w <= 1024 && w % 32 == 0 && h >= 1 && h <= 1024 / w) {
        *bx = w;
        *by = h;
    }
}

static int prefetch_depth(bool ring, int r)
{
    const char *e = getenv("SEISLIVE_WAVE_PREFETCH");
    int d = e ? atoi(e) : 0;
    if (ring)
        return d >= 1 && d <= 3 ? d : r <= 2 ? 1 : r <= 4 ? 2 : 3;
    return d == 1 || d == 2 ? d : 2;
}

/* SEISLIVE_WAVE_CPML_OVERLAP=0 runs the CPML kernels on the simulation's own stream
 * (for measuring what the overlap gains); default: on a second stream. */
static bool cpml_overlap(void) { return !env_is("SEISLIVE_WAVE_CPML_OVERLAP", "0"); }

static int layer_zchunk(void)
{
    const char *e = getenv("SEISLIVE_WAVE_LAYER_ZCHUNK");
    int z = e ? atoi(e) : 0;
    if (z <= 0)
        z = 48;
    return z;
}

int wave_cu_plan(const wave_sim *s, WavePlan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->naive = s->p.kernel == WAVE_KERNEL_NAIVE;
    naive_block(s->r, &pl->bx, &pl->by);
    pl->ring = pipe_ring();
    pl->tile = tile_shape(s->r, pl->ring);
    pl->depth = prefetch_depth(pl->ring, s->r);
    pl->cpml = cpml_arrangement(s);
    pl->overlap = cpml_overlap();
    pl->zchunk = layer_zchunk();
    return 0;
}

static int step(wave_sim *s, const WavePlan &pl, bool cpml, bool interior)
{
    const struct wave_layout *L = &s->L;
    cudaStream_t st = stream_of(s);
    bool any = s->slab_count[0] + s->slab_count[1] + s->slab_count[2] > 0;
    cpml = cpml && any;
    interior = interior && !cpml;
    const int arr = pl.cpml;
    if (cpml && arr == CPML_LINES) {
        /* whole grid plain, then the layer corrections, all on one stream */
        Box all = {{0, 0, 0}, {L->npad[0], L->npad[1], L->npad[2]}};
        int rc = wave_cu_interior(s, pl, all, st);
        if (rc == 0)
            rc = wave_cu_cpml_lines(s, st);
        if (rc < 0)
            return rc;
        if (s->p.free_surface)
            return wave_cu_free_surface(s, st);
        return 0;
    }
    Box in;
    for (int ax = 0; ax < 3; ax++) {
        in.lo[ax] = cpml || interior ? L->pml[2 * ax] : 0;
        in.hi[ax] = cpml || interior ? L->npad[ax] - L->pml[2 * ax + 1] : L->npad[ax];
    }
    /* The CPML kernels touch only the layers' q and memory and read p: they run on a
     * second stream beside the interior kernel (fork/join events). */
    cudaStream_t main_st = st;
    const bool fork = cpml && pl.overlap;
    if (fork) {
        CUDA_TRY(cudaEventRecord((cudaEvent_t)s->ev_fork, main_st));
        st = (cudaStream_t)s->aux_stream;
        CUDA_TRY(cudaStreamWaitEvent(st, (cudaEvent_t)s->ev_fork, 0));
    }
    int rc = 0;
    if (cpml)
        rc = arr == CPML_FUSED ? wave_cu_cpml_fused(s, pl, in, st) : wave_cu_cpml_split(s, in, st);
    if (rc < 0)
        return rc;
    if (fork) {
        CUDA_TRY(cudaEventRecord((cudaEvent_t)s->ev_join, st));
        st = main_st;
    }
    if (!box_empty(in) && (rc = wave_cu_interior(s, pl, in, st)) < 0)
        return rc;
    if (fork)
        CUDA_TRY(cudaStreamWaitEvent(st, (cudaEvent_t)s->ev_join, 0));
    if (s->p.free_surface)
        return wave_cu_free_surface(s, st);
    return 0;
}

extern "C" int wave_cu_describe(const struct wave_sim *s, char *buf, size_t len)
{
    WavePlan pl;
    int rc = wave_cu_plan(s, &pl);
    if (rc < 0) {
        snprintf(buf, len, "invalid tuning: %s", err_msg());
        return rc;
    }
    const bool cp = s->cpml_on && s->slab_count[0] + s->slab_count[1] + s->slab_count[2] > 0;
    const char *cm = !cp ? "off" : cpml_names[pl.cpml];
    const char *ov = cp && pl.cpml != CPML_LINES && pl.overlap ? ", 2 streams" : "";
    if (pl.naive) {
        snprintf(buf, len, "naive %dx%d, CPML %s%s", pl.bx, pl.by, cm, ov);
        return 0;
    }
    snprintf(buf, len, "tiled %s %s depth %d, CPML %s%s", pl.ring ? "ring" : "regs", tile_names[pl.tile],
             pl.depth, cm, ov);
    return 0;
}

extern "C" int wave_cu_step(struct wave_sim *s, bool cpml, bool interior)
{
    if (s->r < 1 || s->r > MAXR)
        return err_set(-EINVAL, "wave: order %d not supported on CUDA", 2 * s->r);
    WavePlan pl;
    int rc = wave_cu_plan(s, &pl);
    return rc < 0 ? rc : step(s, pl, cpml, interior);
}

