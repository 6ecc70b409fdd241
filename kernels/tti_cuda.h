/* tti_cuda — the CUDA twins of the TTI propagator (kernels/tti.c, docs: kernels/tti.h and
 * /work/notes/tti-spec.md's version 2 arithmetic).  Not a public header.
 *
 *   tti_cuda.cu   host side: device memory, medium, step plan, copies, strips, states
 *   tti_naive.cu  the straightforward global-memory twin: pass 1 (s = n . (grad f + psi)
 *                 into global scratch, psi updated), pass 2 (L, H1 with chi, the update),
 *                 one thread per point; also the layer kernels of the tiled plan
 *   tti_tiled.cu  the shared-memory tiled twin over a box without CPML: s computed in
 *                 shared memory over the tile and an r halo from a ring of planes,
 *                 never written to memory (2D; in 3D a research variant)
 *   tti_cols.cu   the 3D tiled twin over such a box: the z neighbours of the tile and
 *                 its s halo in per-column register queues, one barrier per plane
 *   tti_cols2.cu  the same with two x-adjacent columns per thread (float2 shared reads,
 *                 H1 of the z window in scatter accumulators)
 *   tti_cols3.cu  the column pairs with the halo pair's d_z in scatter accumulators too
 *   tti_cols4.cu  tti_cols3.cu's kernel in clusters of two y-adjacent tiles sharing u_y
 *   tti_layers.cu z-marching forms of the two naive passes for the boxes beside the
 *                 core (research variants: measured slower than the naive passes)
 *   tti_layer_boxes.cu  the naive passes' arithmetic over all the boxes beside the core
 *                 in one launch per pass (the default's pass 2: tuning.cpml 13)
 *   tti_medium.cu the quantised medium built on the device from the interior model
 *
 * The medium on the device is the quantised one of kernels/tti_internal.h: vel (float),
 * ed and tilt (uint32), 12 bytes per point, built on the device from the interior model
 * (tti_medium.cu; kernels/tti.c set_medium_gpu), or where the device has no room for the
 * model's copy, built on the host and uploaded a slab of planes at a time through a small
 * page-locked buffer.  The axis n = (st cp,
 * st sp, ct) is read through two 65536-entry tables of (sin, cos) per theta code and per
 * phi code, filled on the host with the CPU reference's sinf / cosf: the GPU's n is the
 * CPU's bit for bit (sincosf differs from glibc by an ulp), and a neighbour's n costs a
 * cached load instead of two sincosf (the naive kernel needs n at 6r neighbours of every point).
 *
 * The C part (below, extern "C") is what kernels/tti.c calls when s->gpu is set. */
#ifndef SEISLIVE_TTI_CUDA_H
#define SEISLIVE_TTI_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/tti_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

struct random_boundary;

#ifdef SEISLIVE_CUDA
/* After wave_shell_init: every device array of S allocated and zero (fields at two
 * levels, vel, ed, tilt, s[2], psi / zeta / chi, profiles, n tables); sets s->gpu. */
int tti_cu_alloc(struct tti_sim *s);
void tti_cu_free(struct tti_sim *s);
/* The medium of model M (tti_model_check passed) built on the device (tti_medium.cu):
 * v_pz and whichever of eps, delta, theta, phi are arrays uploaded once (pageable, the
 * legacy stream), the per-point arithmetic of kernels/tti.c medium_planes in a kernel;
 * TAB: its taper table (npad[0] + npad[1] + npad[2] entries).  -ENOMEM (nothing written)
 * when the device has no room for the model's copy: the caller builds the medium on the
 * host.  T: seconds [0] allocating and uploading, [1] the kernel and freeing; *BYTES the
 * model's bytes uploaded. */
int tti_cu_build_medium(struct tti_sim *s, const struct tti_model *m, const struct tti_taper *tab, double t[2],
                        size_t *bytes);
/* The medium of LIKE (same parameters), device to device. */
int tti_cu_copy_medium(struct tti_sim *s, const struct tti_sim *like);
/* p(n+1), q(n+1) into w.prev, qprev (the caller swaps).  INTERIOR: only the box inside
 * the layers (reverse steps; CPML off). */
int tti_cu_step(struct tti_sim *s, bool cpml, bool interior);
int tti_cu_reset(struct tti_sim *s);
int tti_cu_randomize_layers(struct tti_sim *s, const struct random_boundary *rb, uint64_t shot_id);
/* The interior of FIELD (a device array of S) to or from HOST. */
int tti_cu_copy_interior(struct tti_sim *s, float *field, float *host, bool out);
/* tti_strip_save / load and tti_state_save / load (same layouts as the CPU's). */
int tti_cu_strip(struct tti_sim *s, float *buf, bool on_device, bool save);
int tti_cu_state(struct tti_sim *s, char *buf, bool on_device, bool save);
void tti_cu_describe(const struct tti_sim *s, char *buf, size_t len);
#endif

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include "kernels/cpml.h"
#include "kernels/wave_cuda.h"

/* Private state behind tti_sim.gpu. */
struct TtiGpu {
    float2 *tab;  /* [0, 65536): (sin, cos) of theta per code; [65536, 131072): of phi */
    float *u[2][3]; /* the naive passes' products n_a s per field (pass 2 then reads its
                       neighbours' products directly: recomputing n from the tilt code at
                       each of 6r neighbours made pass 2 gather-bound); allocated by
                       the first step that runs those passes (tti_cuda.cu ensure_u) */
    bool naive;   /* wave_params.kernel == WAVE_KERNEL_NAIVE */
    int tiled;    /* the tiled kernel that runs: enum tti_tiled_kind */
    bool layers_tiled;  /* the tiled plan's second pass beside the core: tti_layers.cu */
    bool layers1_tiled; /* and its first pass */
    bool layers_staged; /* their x-y neighbours staged in shared memory (else from L1) */
    bool fused;         /* TTI_LAYERS_FUSED: the CPML terms in the column kernel, which
                           reads psi of step n from s->psi and writes step n+1's to psi2
                           (a neighbour block reads the psi a tile updates); the step
                           then swaps the two */
    float *psi2[2][3];
    bool cp_hs;          /* TTI_LAYERS_FUSED_HS: that kernel's halo queues in shared memory */
    void *side;          /* the *_SIDE kinds: a second stream for the passes beside the core, */
    void *fork, *join;   /* forked from and joined to the simulation's by these events */
    int lboxes;          /* the layer boxes' passes (tti_layer_boxes.cu, 3D): 0 not these, 1
                            both fields per thread (TTI_LAYERS_BOXES), 2 one field per
                            thread (TTI_LAYERS_BOXES_SPLIT) */
    bool lboxes2;        /* TTI_LAYERS_BOXES_P2: pass 2 only (pass 1 the naive one per box) */
    bool lpairs;         /* TTI_LAYERS_BOXES_P2X2_SIDE: that pass 2 in x-adjacent pairs */
};

/* The tiled twin's variants, chosen at create by wave_params.tuning.pipe (the acoustic
 * tiled kernel's "how planes come in"): 0 the production default (TTI_TILED_PROD),
 * WAVE_PIPE_RING the shared ring of planes (tti_tiled.cu), WAVE_PIPE_REGS the column
 * register queues (tti_cols.cu, 3D only: 2D grids run the ring), and a research value
 * the acoustic kernels do not have: the column kernel with the s-halo columns' queues in
 * shared memory (18 registers fewer, 16 shared-memory reads more per halo column), and
 * the column kernel with two x-adjacent columns per thread (tti_cols2.cu, 3D only). */
enum tti_tiled_kind {
    TTI_TILED_RING = 1,
    TTI_TILED_COLS = 2,
    TTI_TILED_COLS_HS = 3,
    TTI_TILED_COLS_X2 = 4,
    /* the column pairs with the halo pair's d_z in scatter accumulators (no halo queue
     * moves) and L summed in one chain (tti_cols3.cu, 3D only) */
    TTI_TILED_COLS_X2S = 5,
    /* 5 with y-adjacent tiles in clusters of two (sm_90: else 5): the inner side's u_y
     * read from the partner's shared memory, not recomputed (tti_cols4.cu, 3D only) */
    TTI_TILED_COLS_X2C = 6,
    /* 4 with the tilt codes and the outer pairs' f prefetched into L2 a plane earlier and L
     * in one chain (tti_cols3.cu without the scatter, 3D only) */
    TTI_TILED_COLS_X2P = 7,
    /* 4 with the plane's last global loads (the other pair's f, the update operands, the
     * tilt codes) as asynchronous copies into shared memory a plane ahead, off the one
     * scoreboard that the first use after the barrier waited on (tti_cols2.cu, AS) */
    TTI_TILED_COLS_X2A = 8,
};
/* H100, 512^3, order 8, CPML off (2026-11-24 about 22:15 UTC, session 13, main's binary in the same
 * call): tuning.pipe 8 3.150 ms per step (42.6 Gpts/s), 4 3.519 (main's default 3.501);
 * CPML on 6.718 / 7.057; 256^3 0.396 / 0.416; the RTM reference shot (random) 13.42 s
 * against main's 14.19; gpu_tti 19/19 (pairs_a_*, tiled_*): pipe 8 is the default.
 * Before: H100, 512^3, order 8 (2026-11-24 10:37 and 10:57 UTC, all in each run): columns 4.38 ms
 * per step without CPML (ring 7.53, halo queues shared 4.73), 8.86 ms with (ring 11.58);
 * (16:11 to 17:17 UTC, main's binary beside this one) columns 4.36 ms without CPML,
 * column pairs 4.12 first, 3.52 with 64-bit loads and the L2 prefetches (626 -> 448
 * instructions per point); with CPML 8.85 / 8.26; (19:37 UTC, session 12) column pairs
 * 3.500, tuning.pipe 7's first form 3.543, 5 3.773, 6 5.712; (19:55 UTC, main's binary
 * 3.520) column pairs 3.521, 7 3.859, 5 3.747, 6 5.953; 256^3: 0.421 / 0.452 / 0.409 /
 * 0.767; with CPML at 512^3: 8.27 (naive passes) / 7.17 / 6.86 / 9.03, main 7.07
 * (docs/tti.md "Fewer instructions"): the column pairs stay */
#define TTI_TILED_PROD TTI_TILED_COLS_X2A

/* The tiled plan's passes in the boxes beside the core (the CPML layers and a rim r
 * thick), chosen by wave_params.tuning.cpml: 0 the default (TTI_LAYERS_PROD), 1 the naive
 * passes (tti_naive.cu) box by box; the z-marching forms of tti_layers.cu (3D; 2D grids run the
 * naive ones), their x-y neighbours staged in shared memory: 2 pass 2, 3 both passes;
 * read from global memory (L1): 4 pass 2, 5 both passes; 6 the column kernel itself with
 * the CPML terms (tti_cols.cu, CP: psi double-buffered, zeta / chi in place) over the
 * padded grid less the core, in one launch (3D orders 2..8; a free surface's r rows by
 * the naive passes); 7 the same with the halo columns' z queues in shared memory (fewer
 * registers); 8 the naive passes on a second stream beside the core's launch. */
enum tti_layers_kind {
    TTI_LAYERS_NAIVE = 1,
    TTI_LAYERS_STAGED2 = 2,
    TTI_LAYERS_STAGED12 = 3,
    TTI_LAYERS_MARCH2 = 4,
    TTI_LAYERS_MARCH12 = 5,
    TTI_LAYERS_FUSED = 6,
    TTI_LAYERS_FUSED_HS = 7,
    TTI_LAYERS_NAIVE_SIDE = 8,
    /* the naive passes' arithmetic over all the layer boxes in one launch per pass, z
     * slabs tile by tile, x slabs in 8-wide tiles (tti_layer_boxes.cu, 3D; 2D grids run
     * the naive passes): 9 one field per thread (p and q on the two half-warps, L and H1
     * exchanged by a shuffle), 10 both fields per thread */
    TTI_LAYERS_BOXES_SPLIT = 9,
    TTI_LAYERS_BOXES = 10,
    /* 10 on a second stream beside the core's launch (as 8 for the naive passes) */
    TTI_LAYERS_BOXES_SIDE = 11,
    /* pass 1 the naive one box by box, pass 2 that of 10 */
    TTI_LAYERS_BOXES_P2 = 12,
    /* 12 on a second stream beside the core's launch */
    TTI_LAYERS_BOXES_P2_SIDE = 13,
    /* 13 with pass 2 in x-adjacent pairs (tti_layer_boxes.cu k_lb_pass2x2: one 64-bit load
     * for both points' neighbours; even orders, else 13's pass 2).  H100 (2026-11-24 ~22:51
     * UTC, pipe 8 core), 380 x 380 x 180 with 10-cell layers, order 8: 1.428 ms a step
     * against 1.463 for 13; gpu_tti lpairs_* correct.  (session 14, 00:33 UTC, two rounds
     * in one call) 380 x 380 x 180: 1.426 / 1.427 against 1.473 / 1.474; 512^3 with 10-cell
     * layers 5.590 / 5.588 against 5.768 / 5.763: the default since (TTI_LAYERS_PROD) */
    TTI_LAYERS_BOXES_P2X2_SIDE = 14,
};
/* H100, 512^3, order 8, CPML (2026-11-24 10:57 UTC, columns core): naive 8.86 ms per step,
 * staged 10.69 (pass 2) / 11.84 (both), L1 9.53 / 9.90; (14:09 UTC) naive 8.86, the CPML
 * column kernel 12.79, with shared halo queues 10.48 (spills and L1TEX stalls: docs/tti.md);
 * (16:11 UTC, the layer boxes' first form) naive 8.83, boxes with both fields per thread
 * 8.23, one field per thread 9.04; at 400 x 400 x 200: 3.05, 2.68, 2.84; (16:38 UTC, third
 * form) naive 8.85, both fields 8.13, one field 8.96; 400 x 400 x 200: 3.06, 2.65, 2.80;
 * gpu_tti 74/74; (16:54 UTC) naive 8.86, both fields (48 registers) 7.94, on a second
 * stream 7.89, its pass 2 after the naive pass 1 7.73; 400 x 400 x 200: 3.07, 2.57, 2.50,
 * 2.50; gpu_tti 80/80; (17:15 UTC) naive 8.86, 12 7.73, 12 on a second stream 7.68; 400 x
 * 400 x 200: 3.07, 2.50, 2.44; 256^3: 1.61, 1.39, 1.34; gpu_tti 82/82; (17:34 UTC) the same
 * to 0.01 ms, RTM random 17.39 s on main, 15.36 with 13 (docs/tti.md) */
/* (session 14) 14, pass 2 in pairs, 3 % faster than 13 on both grids measured (above) */
#define TTI_LAYERS_PROD TTI_LAYERS_BOXES_P2X2_SIDE

/* Everything a TTI kernel reads: fields, medium, scratch, CPML memory, weights. */
struct TArgs {
    const float *__restrict__ f[2];  /* p(n), q(n) */
    float *__restrict__ o[2];        /* p(n-1), q(n-1) in; p(n+1), q(n+1) out */
    float *__restrict__ u[2][3];     /* pass-1 scratch per field: n_a s (allocated layout,
                                        halo 0; no y in 2D) */
    const float *__restrict__ vel;
    const uint32_t *__restrict__ ed, *__restrict__ tilt;
    const float2 *__restrict__ tab;
    long long sy, sz;
    int h, hy;                       /* allocated index of padded 0 along x, z / along y */
    int npad[3], pml[6];
    bool fs;                         /* free surface on the top padded plane */
    float inv_sigma;
    float c2[3][MAXR + 1], c1[3][MAXR + 1];
    /* CPML (naive / layer kernels only) */
    float *psi[2][3], *zeta[2][3], *chi[2][3];
    float *psi_n[2][3]; /* where the column kernel's CPML form writes psi (TtiGpu.psi2) */
    const float *pa[3], *pb[3];
};

TArgs tti_args(const tti_sim *s);

/* The axis at packed tilt code T (tti_internal.h: theta code low 16 bits, phi high). */
__device__ __forceinline__ float3 tti_axis(const float2 *__restrict__ tab, uint32_t t)
{
    const float2 th = __ldg(tab + (t & 0xffffu)), ph = __ldg(tab + 65536 + (t >> 16));
    return make_float3(th.x * ph.y, th.x * ph.x, th.y);
}

/* Slab element of axis AX (wave_slab_elem's layout) for padded (i, j, k); JS: the index
 * across the layers of that axis (t_js). */
__device__ __forceinline__ long long t_slab(const TArgs &a, int ax, int i, int j, int k, int js)
{
    if (ax == 0)
        return ((long long)k * a.npad[1] + j) * (a.pml[0] + a.pml[1]) + js;
    if (ax == 1)
        return ((long long)k * (a.pml[2] + a.pml[3]) + js) * a.npad[0] + i;
    return ((long long)js * a.npad[1] + j) * a.npad[0] + i;
}

/* The index of padded coordinate X across axis AX's layers, -1 outside them. */
__device__ __forceinline__ int t_js(const TArgs &a, int ax, int x)
{
    return cpml_slab_index(x, a.npad[ax], a.pml[2 * ax], a.pml[2 * ax + 1]);
}

/* The update of tti-spec.md at element C from p(n), q(n) there and L, H1 of both fields. */
__device__ __forceinline__ void tti_update(const TArgs &a, long long c, float p, float q, float lp, float lq,
                                           float hp, float hq)
{
    const uint32_t ed = __ldg(a.ed + c);
    const float vz = __ldg(a.vel + c), e = tti_ed_value(ed), d = tti_ed_value(ed >> 16);
    const float sv = vz * ((e - d) * a.inv_sigma);
    const float ap = vz * (1.0f + 2.0f * e), aq = vz * (1.0f + 2.0f * d) - sv, cc = vz - sv;
    a.o[0][c] = 2.0f * p - a.o[0][c] + ap * lp + ((sv - ap) * hp + cc * hq);
    a.o[1][c] = 2.0f * q - a.o[1][c] + aq * lp + (cc * hq - aq * hp) + sv * lq;
}

/* Launchers (each switches on the half-width and 2D / 3D).  Boxes in padded coordinates. */
/* tti_naive.cu: pass 1 over box B (psi updated where CPML), pass 2 over box B. */
int tti_cu_pass1(const tti_sim *s, const Box &b, bool cpml, cudaStream_t st);
int tti_cu_pass2(const tti_sim *s, const Box &b, bool cpml, cudaStream_t st);
/* tti_layers.cu: pass 2 over box B as a tiled kernel (2D: tti_cu_pass2). */
int tti_cu_layer2(const tti_sim *s, const Box &b, bool cpml, bool staged, cudaStream_t st);
/* tti_layers.cu: pass 1 over box B as a tiled kernel (2D: tti_cu_pass1). */
int tti_cu_layer1(const tti_sim *s, const Box &b, bool cpml, bool staged, cudaStream_t st);
/* tti_layer_boxes.cu: pass 1 (PASS1) or pass 2 over the boxes B[0..N) (at most 6) in one
 * launch; SPLIT: one field per thread (2D: the naive passes box by box). */
int tti_cu_lboxes(const tti_sim *s, const Box *b, int n, bool pass1, bool cpml, bool split, cudaStream_t st);
/* tti_layer_boxes.cu: pass 2 of tti_cu_lboxes (both fields per thread) in x-adjacent pairs
 * (tuning.cpml 14); odd orders, 2D grids and layers closer than r: tti_cu_lboxes' pass 2. */
int tti_cu_lboxes_x2(const tti_sim *s, const Box *b, int n, bool cpml, cudaStream_t st);
/* tti_tiled.cu: the fused update over box B, CPML off inside B's reach (B's s halo must
 * not need psi: the caller keeps B r cells away from any CPML layer). */
int tti_cu_tiled(const tti_sim *s, const Box &b, cudaStream_t st);
/* Whether the tiled kernel runs grids like S (else the plan falls back to the naive). */
bool tti_cu_tiled_supports(const tti_sim *s);
/* tti_cols.cu: the column-queue variant of tti_cu_tiled (same contract), 3D orders 2..8. */
int tti_cu_cols(const tti_sim *s, const Box &b, bool halo_shared, cudaStream_t st);
bool tti_cu_cols_supports(const tti_sim *s);
/* tti_cols2.cu: the same contract with two x-adjacent columns per thread (3D orders 2..8,
 * as tti_cu_cols_supports); ASYNC: tuning.pipe 8's asynchronous copies.  Fields of 2^31
 * elements or more run tti_cu_cols. */
int tti_cu_cols2(const tti_sim *s, const Box &b, bool async, cudaStream_t st);
/* tti_cols3.cu: the same contract and fallbacks as tti_cu_cols2; SCATTER: the halo pair's
 * d_z in scatter accumulators (tuning.pipe 5), else in a queue as tti_cols2.cu's (7). */
int tti_cu_cols3(const tti_sim *s, const Box &b, bool scatter, cudaStream_t st);
/* tti_cols4.cu: the same contract and fallbacks (tuning.pipe 6; before sm_90: 5). */
int tti_cu_cols4(const tti_sim *s, const Box &b, cudaStream_t st);
/* tti_cols.cu: the column kernel with the CPML terms over boxes B[0..N) (3D orders 2..8,
 * no free surface rows among them; psi from TArgs.psi, written to TArgs.psi_n). */
int tti_cu_cols_cpml(const tti_sim *s, const Box *b, int n, bool halo_shared, cudaStream_t st);
#endif

#endif
