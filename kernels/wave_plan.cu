/* wave_plan — which kernels a step of the CUDA propagator runs, and the step itself.
 *
 * One step with CPML, the tiled default ("ring", 3D at orders 2-8 with fp32 memory) =
 * the interior kernel over the core of tile columns without x/y layers + beside it, on a
 * second stream, the frame kernel over the x/y-layer columns with their CPML terms in the
 * same pass + lines' z kernel over the z layers + the free-surface mirror
 * (wave_ring_cpml.cu).  Elsewhere ("lines") = the interior kernel over the whole padded
 * grid with the plain Laplacian (so it never branches on the boundary) + per axis a line
 * kernel over that axis's layers adding the stretched terms + the mirror.  The split and
 * fused arrangements update the interior box and the layers beside it instead, the CPML
 * kernels on a second stream.  Without CPML (or for a reverse step) only the interior
 * kernel.  Kernels: wave_interior.cu, wave_ring_cpml.cu and wave_cpml.cu. */
#include "kernels/wave_cuda.h"

#include "kernels/device.h"

#include <stdio.h>

/* Kernel variants (llm.c style: kept side by side, each checked against the CPU
 * reference by tests/gpu/test_gpu_wave.c, chosen by wave_params.tuning, read here; zero
 * fields are the defaults measured fastest on the H100, docs/PERFORMANCE.md; names and
 * values: kernels/wave_tuning.h):
 *
 *   [propagator] kernel = naive   k_naive for the interior (tuning.naive_block), the
 *                                 split CPML kernels (k_psi pass, then k_pml) for the
 *                                 layers on a second stream (tuning.cpml_overlap);
 *   [propagator] kernel = tiled   tuning.pipe      ring (k_ring, cp.async ring) or regs
 *                                                  (k_tiled, register prefetch)
 *                                 tuning.tile      block shape threads x rows per thread
 *                                                  (32 columns): ring 4x4, 8x2, 8x4;
 *                                                  regs 16x1, 8x1, 8x2, 4x4
 *                                 tuning.prefetch  planes in flight: ring 1..3, regs 1..2
 *                                 tuning.cpml      lines (the interior kernel over the
 *                                                  whole grid, then k_line per axis adds
 *                                                  the stretched terms), ring (k_ring over
 *                                                  the core, k_ring_cpml with the CPML
 *                                                  terms in the same pass over the layer
 *                                                  tiles: wave_ring_cpml.cu), fused (k_layer:
 *                                                  psi and the stretched update in one
 *                                                  pass over the layers beside the
 *                                                  interior box) or split (k_psi + k_pml)
 *                                 tuning.layer_zchunk  z planes per k_layer block (tests
 *                                                  cross chunk boundaries on small grids)
 *
 * The library holds the naive kernel, k_ring in each order's default tile and depth,
 * and the lines and split CPML; the rest (regs, other ring tiles and depths, fused) is
 * in tools/wave_research.cu, linked into seislive-bench and gpu-tests only. */

/* The naive kernel's thread block: the fastest measured on the H100 at 512^3
 * (docs/PERFORMANCE.md): 128 x 4 up to order 4, 256 x 4 above (8th order: 32 x 8 83.7,
 * 32 x 32 106.7, 128 x 8 118.1, 256 x 4 120.6 Gpts/s: 1024-thread blocks keep more of
 * the y and z neighbours in L1 and L2 while they are needed). */
static int naive_bx(int r) { return r <= 2 ? 128 : 256; }

/* The tiled kernel's CPML arrangement when tuning.cpml is 0: ring (H100, order 8: 512^3
 * and the 400 x 400 x 200 shot faster than lines, docs/TUNING.md), which falls back to
 * lines where it does not run: 2D, orders above 8, bf16 memory. */
#define WAVE_CPML_TILED_PROD WAVE_CPML_RING

#define RING2D_NAME "128x1" /* RING2D_W threads x 1 row */

static const char *tile_text(const WavePlan &pl) { return pl.two_d ? RING2D_NAME : wave_tile_name(pl.tile); }

/* The research variants' entry points, when the program links them. */
static const WaveResearch *research;

void wave_cu_set_research(const WaveResearch *r) { research = r; }
const WaveResearch *wave_cu_research(void) { return research; }

int wave_cu_plan(const wave_sim *s, WavePlan *pl)
{
    const struct wave_tuning *t = &s->p.tuning;
    int rc = wave_tuning_check(t, s->p.kernel);
    if (rc < 0)
        return rc;
    const int r = s->r;
    memset(pl, 0, sizeof *pl);
    pl->naive = s->p.kernel == WAVE_KERNEL_NAIVE;
    pl->bx = t->naive_block[0] ? t->naive_block[0] : naive_bx(r);
    pl->by = t->naive_block[1] ? t->naive_block[1] : 4;
    pl->ring = t->pipe != WAVE_PIPE_REGS;
    if (pl->ring) {
        pl->tile = t->tile ? t->tile : ring_default_tile(r);
        pl->depth = t->prefetch ? t->prefetch : ring_default_depth(r);
    } else {
        pl->tile = t->tile ? t->tile : r <= 4 ? WAVE_TILE_4x4 : WAVE_TILE_8x2;
        pl->depth = t->prefetch ? t->prefetch : 2;
    }
    pl->cpml = pl->naive ? WAVE_CPML_SPLIT : t->cpml ? t->cpml : WAVE_CPML_TILED_PROD;
    if (pl->cpml == WAVE_CPML_RING) {
        const char *why = NULL;
        if (!wave_cu_ring_cpml_ok(s, &why)) {
            /* the default falls back to lines where ring does not run; asked for, a
             * clear refusal */
            if (t->cpml == WAVE_CPML_RING)
                return err_set(-EINVAL, "wave tuning: cpml ring runs 3D grids at orders 2-%d with fp32 CPML "
                                        "memory, not %s: use cpml = lines", 2 * WAVE_RING_CPML_RMAX, why);
            pl->cpml = WAVE_CPML_LINES;
        }
    }
    /* the CPML kernels on a second stream unless asked not to: off measures what the
     * overlap gains */
    pl->overlap = t->cpml_overlap != WAVE_OVERLAP_OFF;
    pl->zchunk = t->layer_zchunk ? t->layer_zchunk : WAVE_LAYER_ZCHUNK_DEFAULT;
    pl->two_d = wave_is_2d(s);
    if (pl->two_d && !pl->naive) {
        /* one ring shape (a row of RING2D_W, no y tile); the regs pipeline and the fused
         * CPML are 3D kernels */
        if (t->tile || !pl->ring || pl->cpml == WAVE_CPML_FUSED)
            return err_set(-EINVAL, "wave tuning: a 2D grid runs the ring in rows of %d with the lines or split "
                                    "CPML: leave tile and pipe at 0 and cpml at lines or split", RING2D_W);
        pl->tile = 0;
    }
    if (s->p.cpml_memory == WAVE_CPML_MEM_BF16 && pl->cpml != WAVE_CPML_LINES)
        return err_set(-EINVAL, "wave: bf16 CPML memory runs in the tiled kernel's lines arrangement only (kernel "
                                "%s, CPML %s): use kernel = tiled with cpml = lines, or fp32 CPML memory",
                       pl->naive ? "naive" : "tiled", wave_cpml_name(pl->cpml));
    pl->research = !pl->naive && (!pl->ring || (!pl->two_d && pl->tile != ring_default_tile(r)) ||
                                  pl->depth != ring_default_depth(r));
    if ((pl->research || pl->cpml == WAVE_CPML_FUSED) && !research) {
        if (pl->cpml == WAVE_CPML_FUSED)
            return err_set(-ENOTSUP, "wave tuning: the fused CPML is a research variant, linked only into "
                                     "seislive-bench and gpu-tests (tools/wave_research.cu)");
        return err_set(-ENOTSUP, "wave tuning: tiled %s %s depth %d at order %d is a research variant, linked "
                                 "only into seislive-bench and gpu-tests (tools/wave_research.cu); the library "
                                 "holds ring %s depth %d there",
                       wave_pipe_name(pl->ring ? WAVE_PIPE_RING : WAVE_PIPE_REGS), tile_text(*pl), pl->depth, 2 * r,
                       pl->two_d ? RING2D_NAME : wave_tile_name(ring_default_tile(r)), ring_default_depth(r));
    }
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
    if (cpml && arr == WAVE_CPML_RING) {
        /* the core plain, the frame and the z layers with their CPML terms (on a second
         * stream unless the overlap is off), one pass over each point */
        cudaStream_t ls = pl.overlap ? (cudaStream_t)s->aux_stream : st;
        int rc = 0;
        if (pl.overlap && ((rc = dev_event_record(s->dev, s->ev_fork, st)) < 0 ||
                           (rc = dev_stream_wait(s->dev, ls, s->ev_fork)) < 0))
            return rc;
        if ((rc = wave_cu_ring_cpml(s, pl, st, ls)) < 0)
            return rc;
        if (pl.overlap && ((rc = dev_event_record(s->dev, s->ev_join, ls)) < 0 ||
                           (rc = dev_stream_wait(s->dev, st, s->ev_join)) < 0))
            return rc;
        return s->p.free_surface ? wave_cu_free_surface(s, st) : 0;
    }
    if (cpml && arr == WAVE_CPML_LINES) {
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
    int rc = 0;
    if (fork) {
        st = (cudaStream_t)s->aux_stream;
        if ((rc = dev_event_record(s->dev, s->ev_fork, main_st)) < 0 ||
            (rc = dev_stream_wait(s->dev, st, s->ev_fork)) < 0)
            return rc;
    }
    if (cpml)
        rc = arr == WAVE_CPML_FUSED ? research->fused(s, pl, in, st) : wave_cu_cpml_split(s, in, st);
    if (rc < 0)
        return rc;
    if (fork) {
        if ((rc = dev_event_record(s->dev, s->ev_join, st)) < 0)
            return rc;
        st = main_st;
    }
    if (!box_empty(in) && (rc = wave_cu_interior(s, pl, in, st)) < 0)
        return rc;
    if (fork && (rc = dev_stream_wait(s->dev, st, s->ev_join)) < 0)
        return rc;
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
    /* bf16 memory runs in the lines arrangement only (the plan refuses the others) */
    const char *cm = !cp ? "off" : s->p.cpml_memory == WAVE_CPML_MEM_BF16 ? "lines bf16" : wave_cpml_name(pl.cpml);
    const char *ov = cp && pl.cpml != WAVE_CPML_LINES && pl.overlap ? ", 2 streams" : "";
    const char *dims = pl.two_d ? ", 2D" : "";
    if (pl.naive) {
        snprintf(buf, len, "naive %dx%d%s, CPML %s%s", pl.bx, pl.by, dims, cm, ov);
        return 0;
    }
    snprintf(buf, len, "tiled %s %s depth %d%s, CPML %s%s", wave_pipe_name(pl.ring ? WAVE_PIPE_RING : WAVE_PIPE_REGS),
             tile_text(pl), pl.depth, dims, cm, ov);
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

