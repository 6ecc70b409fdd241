/* wave_tuning — the values and names of the CUDA kernel choices (struct wave_tuning in
 * kernels/wave.h): one table, so that a name means the same value in seislive-bench's
 * flags, a config and wave_describe_kernel's text.  docs/TUNING.md lists them.
 *
 * Every field 0 is the production default (measured on the H100, docs/PERFORMANCE.md).
 * The fields of the kernel that does not run are ignored (tile, pipe, prefetch, cpml and
 * layer_zchunk for the naive kernel, naive_block for the tiled one), and so is all of it
 * on the CPU.  Choices the library does not hold (the research variants: the register
 * pipeline, the fused CPML, ring tiles and depths other than an order's default) run
 * only where tools/wave_research.cu is linked (seislive-bench, gpu-tests); elsewhere
 * wave_create refuses them. */
#ifndef SEISLIVE_WAVE_TUNING_H
#define SEISLIVE_WAVE_TUNING_H

#include <stdbool.h>

#include "kernels/wave.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tuning.tile: the tiled kernel's thread block, THREADS x ROWS per thread (32 columns). */
enum wave_tile {
    WAVE_TILE_DEFAULT = 0,
    WAVE_TILE_16x1 = 1, /* regs only */
    WAVE_TILE_8x1 = 2,  /* regs only */
    WAVE_TILE_8x2 = 3,
    WAVE_TILE_4x4 = 4,
    WAVE_TILE_8x4 = 5,  /* ring only */
    WAVE_TILE_N = 6,
};

/* tuning.pipe: how the tiled kernel brings its planes in. */
enum wave_pipe {
    WAVE_PIPE_DEFAULT = 0,
    WAVE_PIPE_RING = 1, /* k_ring: cp.async ring of planes in shared memory (default) */
    WAVE_PIPE_REGS = 2, /* k_tiled: loads prefetched into registers (research) */
    WAVE_PIPE_N = 3,
};

/* tuning.cpml: the arrangement of the CPML kernels of the tiled kernel (the naive kernel
 * always runs split). */
enum wave_cpml_arr {
    WAVE_CPML_DEFAULT = 0,
    WAVE_CPML_SPLIT = 1, /* a psi pass, then the stretched update beside the interior box */
    WAVE_CPML_FUSED = 2, /* one pass over the layers beside the interior box (research) */
    WAVE_CPML_LINES = 3, /* interior over the whole grid, then line corrections (default) */
    WAVE_CPML_RING = 4,  /* the CPML terms inside the ring's pass (k_ring_cpml: 3D, orders <= 8,
                            fp32 memory; lines otherwise) */
    WAVE_CPML_N = 5,
};

/* tuning.cpml_overlap */
enum { WAVE_OVERLAP_DEFAULT = 0, WAVE_OVERLAP_ON = 1, WAVE_OVERLAP_OFF = -1 };

/* tuning.implicit_x: how the implicit operator's x sweep solves its lines (CUDA). */
enum wave_implicit_x {
    WAVE_IMPLICIT_X_DEFAULT = 0,
    WAVE_IMPLICIT_X_THREAD = 1, /* one line per thread, 32 lines per block in shared memory */
    WAVE_IMPLICIT_X_WARP = 2,   /* one line per warp: each lane a chunk, the chunks linked by a warp scan */
    WAVE_IMPLICIT_X_REGS = 3,   /* warp's, 16 rows a lane in registers, the next line's loads in flight (<= 512) */
    WAVE_IMPLICIT_X_WARPL = 4,  /* warp's, the x CPML terms in a pass of their own over the x layers */
    WAVE_IMPLICIT_X_N = 5,
};

/* tuning.implicit_yz: how the implicit operator's y and z sweeps solve their lines (CUDA). */
enum wave_implicit_yz {
    WAVE_IMPLICIT_YZ_DEFAULT = 0,
    WAVE_IMPLICIT_YZ_MARCH = 1,  /* a thread marches a column, d stored and read back */
    WAVE_IMPLICIT_YZ_CHUNKS = 2, /* a block holds whole lines in registers, chunks linked (<= 512 rows) */
    WAVE_IMPLICIT_YZ_SCAN = 3,   /* chunks' lines, the carries by a warp scan, batched write loads (<= 512) */
    WAVE_IMPLICIT_YZ_OVERLAP = 4, /* scan's, and the x sweep beside the y sweep (a second stream, own fields) */
    WAVE_IMPLICIT_YZ_XYFUSED = 5, /* x and y solved in one kernel through a cluster's shared memory, z scan */
    WAVE_IMPLICIT_YZ_XYPIPE = 6,  /* xyfused's, persistent clusters, the next plane loaded while one is solved */
    WAVE_IMPLICIT_YZ_SCANL = 7,   /* scan's, the CPML layer rows written by the whole block (<= 512) */
    WAVE_IMPLICIT_YZ_SCANL1 = 8,  /* scanl's at one 512-thread block an SM (up to 128 registers, no spills) */
    WAVE_IMPLICIT_YZ_SCANL256 = 9, /* scanl's in 256-thread blocks (8 x lanes at 512 rows), four an SM */
    WAVE_IMPLICIT_YZ_TILE = 10,   /* scanl's, the block's p columns in a shared-memory tile (<= 512) */
    WAVE_IMPLICIT_YZ_TILE3 = 11,  /* tile's at three 512-thread blocks an SM (40 registers) */
    WAVE_IMPLICIT_YZ_TILEA = 12,  /* tile's, the tile copied by cp.async (all of a thread's copies in flight) */
    WAVE_IMPLICIT_YZ_TILEB = 13,  /* tilea's without the L2 prefetch of the rows the writes read */
    WAVE_IMPLICIT_YZ_TILEM = 14,  /* tilea's, the y sweep at three blocks an SM (z at two) */
    WAVE_IMPLICIT_YZ_TILEZ = 15,  /* tilem's, z at three blocks too (writes a row at a time) */
    WAVE_IMPLICIT_YZ_XYC = 16,    /* x and y in a persistent 1024-thread cluster kernel (planes double-buffered), z tileq's */
    WAVE_IMPLICIT_YZ_TILEQ = 17,  /* tilem's, z's q(n-1) copied into shared memory beside the tile (no L2 prefetch) */
    WAVE_IMPLICIT_YZ_TILEQN = 18, /* tileq's, z without the L2 prefetch of lap and vel, four rows' loads at a time */
    WAVE_IMPLICIT_YZ_XYCN = 19,   /* xyc's x-y kernel, z tileqn's */
    WAVE_IMPLICIT_YZ_XYCO = 20,   /* xycn's, the CPML psi pass on the SMs the x-y clusters leave idle */
    WAVE_IMPLICIT_YZ_XYCF = 21,   /* xyco's, x and y recursions of constant factor (the first rows corrected) */
    WAVE_IMPLICIT_YZ_XYCS = 22,   /* xycf's, a share of the planes by the x and y sweeps on the idle SMs */
    WAVE_IMPLICIT_YZ_TILEQW = 23, /* tilem's y, z tileqn's in 1024-thread blocks (32 x lanes: whole 128-byte rows) */
    WAVE_IMPLICIT_YZ_XYCP = 24,   /* xycf's, the CPML layers pass of each group of planes beside the next group's
                                     (without CPML: xycs's share of the planes beside) */
    WAVE_IMPLICIT_YZ_XYCT = 25,   /* xycs's, the x-y kernel with fewer instructions a point (32-bit offsets, copies
                                     of compile-time trip counts, the maps' carries by DSMEM loads of pairs) */
    WAVE_IMPLICIT_YZ_N = 26,
};

/* Whether YZ (a resolved implicit_yz) solves x and y in one kernel (xyfused, xypipe, xyc). */
static inline bool wave_implicit_yz_is_xy(int yz)
{
    return yz == WAVE_IMPLICIT_YZ_XYFUSED || yz == WAVE_IMPLICIT_YZ_XYPIPE || yz == WAVE_IMPLICIT_YZ_XYC ||
           yz == WAVE_IMPLICIT_YZ_XYCN || yz == WAVE_IMPLICIT_YZ_XYCO || yz == WAVE_IMPLICIT_YZ_XYCF ||
           yz == WAVE_IMPLICIT_YZ_XYCS || yz == WAVE_IMPLICIT_YZ_XYCP || yz == WAVE_IMPLICIT_YZ_XYCT;
}

/* Whether YZ runs xyc's persistent x-y cluster kernel (xyc, xycn, xyco, xycf, xycs, xycp,
 * xyct: kernels/implicit_xyc.cu). */
static inline bool wave_implicit_yz_is_xyc(int yz)
{
    return yz == WAVE_IMPLICIT_YZ_XYC || yz == WAVE_IMPLICIT_YZ_XYCN || yz == WAVE_IMPLICIT_YZ_XYCO ||
           yz == WAVE_IMPLICIT_YZ_XYCF || yz == WAVE_IMPLICIT_YZ_XYCS || yz == WAVE_IMPLICIT_YZ_XYCP ||
           yz == WAVE_IMPLICIT_YZ_XYCT;
}

/* What 0 (the default) of implicit_x and implicit_yz means: one place to change when the
 * GPU timings say so.  Session 13 (docs/operators.md, batch 2, one call, H100, 512^3,
 * order 8, --pml 12): warpl/xycs 2.894 ms per step with CPML, 2.390 without, against
 * warpl/xycf 2.900 / 2.398, warpl/xycp 2.920 / 2.388 and warpl/xyc (the default before)
 * 3.191 / 2.575 (main's build 3.123 / 2.533); tiled Taylor 8 1.168 / 0.838: 2.48x / 2.85x;
 * correct (gpu_implicit xycs_matches_cpu_reference 2.6e-7, the strategies 6.2e-6 /
 * 6.3e-6).  Batch 1: xycs at twice the share 2.892 / 2.385, xycf 2.913 / 2.397, xyc 3.185
 * / 2.585.  Where xycs's constant-factor kernel does not apply (lines other than 512 x a
 * multiple of 32, orders above 8 at the default band) the x-y kernel is xyco's; where no
 * x-y kernel runs the sweeps are warpl and tileqn's.  Session 12 (docs/operators.md, batch 4, one call): warpl/xyc 3.434
 * ms per step with CPML, 2.535 without, against warpl/tileq 3.610 / 2.802 and warpl/tilem
 * 3.783 / 3.010 (main's build 3.780 / 3.010); correct (gpu_implicit
 * xyc_matches_cpu_reference 2.6e-7, the strategies 6.9e-6 / 7.0e-6).  Where xyc's cluster
 * kernel does not run (2D, interface values, lines over 512, before sm_90) the sweeps
 * are warpl and tileq's.  Batch 3: warpl/tileq
 * 3.608 ms per step with CPML, 2.799 without, against warpl/tilem 3.782 / 3.009 (z alone
 * 1.539 / 1.320 against 1.714 / 1.530); correct against the CPU reference
 * (tests/gpu/gpu_implicit.c tileq_matches_cpu_reference, 2.6e-7; the strategies 6.4e-6).
 * Before, measured on the H100, 512^3, order 8, side by side in one run
 * (docs/operators.md, 2026-11-24, session 11, batch 4): warpl/tilem 3.781 ms per step
 * with CPML, 3.007 without (warpl/tilea 3.913 / 3.031; warp/scan, the default before,
 * 4.584 / 3.177, main's build 4.585 / 3.172; warpl/tileb 4.223 / 3.206), the fastest
 * with and without CPML; correct against the CPU reference (tests/gpu/gpu_implicit.c,
 * 2.6e-7; the strategies 6.4e-6).  Batch 3: warpl/tilea 3.917 / 3.030 (warpl/tile 4.023
 * / 3.127, warp/tilea 4.008 / 3.030, warp/scan 4.610 / 3.206).  Before (session 9):
 * warp/scan, 4.59 / 3.17 (warp/chunks 5.98 / 3.97). */
#define WAVE_IMPLICIT_X_PROD WAVE_IMPLICIT_X_WARPL
/* Session 14 (H100, 512^3, order 8, 12 layers; two rounds in one call beside xycs in the same
 * binary and main's): xyct 2.872 / 2.362 and 2.875 / 2.362 ms with / without CPML against xycs
 * 2.900 / 2.406 and 2.907 / 2.399 (x+y kernel alone 1.133 against 1.185 without CPML);
 * gpu_implicit xyct_matches_cpu_reference 2.61e-7, strategies 6.19e-6 / 6.3e-6.  Where
 * xyct's kernel does not fit (implicit_xyct_fits) xycs's runs. */
#define WAVE_IMPLICIT_YZ_PROD WAVE_IMPLICIT_YZ_XYCT
static inline int wave_implicit_x_of(const struct wave_tuning *t)
{
    return t->implicit_x ? t->implicit_x : WAVE_IMPLICIT_X_PROD;
}
static inline int wave_implicit_yz_of(const struct wave_tuning *t)
{
    return t->implicit_yz ? t->implicit_yz : WAVE_IMPLICIT_YZ_PROD;
}

#define WAVE_PREFETCH_MAX 3     /* ring: 1..3 planes in flight, regs: 1..2 */
#define WAVE_LAYER_ZCHUNK_DEFAULT 48
/* ring_waves: the ring interior kernel cuts z into chunks for about this many waves of
 * resident blocks (more chunks fill the SMs on small grids; each chunk re-reads 2R
 * planes of p for its register queue) */
#define WAVE_RING_WAVES_DEFAULT 6
#define WAVE_RING_WAVES_MAX 64

/* Names ("8x2", "ring", "lines"), or NULL for 0 and values out of range. */
const char *wave_tile_name(int tile);
const char *wave_pipe_name(int pipe);
const char *wave_cpml_name(int cpml);
const char *wave_implicit_x_name(int x);
const char *wave_implicit_yz_name(int yz);

/* Set the field KEY of T from the text VAL, as seislive-bench stencil's flags spell them:
 *   tile          16x1 | 8x1 | 8x2 | 4x4 | 8x4
 *   pipe          ring | regs
 *   prefetch      1 | 2 | 3
 *   cpml          lines | split | fused | ring
 *   cpml-overlap  on | off
 *   naive-block   WxH (W a multiple of 32, W x H <= 1024)
 *   layer-zchunk  N > 0
 *   ring-waves    1 .. WAVE_RING_WAVES_MAX
 *   implicit-x    thread | warp | regs | warpl
 *   implicit-yz   march | chunks | scan | overlap | xyfused | xypipe | scanl | scanl1 |
 *                 scanl256 | tile | tile3 | tilea | tileb | tilem | tilez |
 *                 xyc | tileq | tileqn | xycn | xyco | xycf | xycs | tileqw | xycp | xyct
 * "default" sets 0.  Returns 0, or -EINVAL with err_msg() naming the key and value. */
int wave_tuning_set(struct wave_tuning *t, const char *key, const char *val);

/* Check T for a simulation running KERNEL (enum wave_kernel): every value in range and
 * the tiled choices compatible (ring: tiles 8x2, 4x4, 8x4, prefetch 1..3; regs: no 8x4,
 * prefetch 1..2).  0 or -EINVAL with err_msg(). */
int wave_tuning_check(const struct wave_tuning *t, int kernel);

#ifdef __cplusplus
}
#endif

#endif
