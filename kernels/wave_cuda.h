/* wave_cuda — what the CUDA files of the propagator share: the kernel arguments, boxes,
 * the launch plan (which kernel, tile and CPML arrangement a step runs) and the entry
 * points of each file.  C++ (nvcc) only; users go through kernels/wave.h.
 *
 *   wave_plan.cu      the launch plan, wave_describe_kernel's text, one step (which
 *                     kernels over which boxes, on which stream)
 *   wave_interior.cu  the interior kernels (naive, tiled) over a box; k_ring itself is
 *                     in wave_ring.cuh
 *   wave_cpml.cu      the CPML kernels (split, lines) and the free surface
 *   wave_ring_cpml.cu the ring CPML: the layer terms inside the tiled interior pass
 *   wave_xfer.cu      device memory, velocity, the boundary strip, copy bandwidth
 *   wave_points.cu    injection and sampling
 * The research variants (no default uses them) are in tools/wave_research.cu. */
#ifndef SEISLIVE_WAVE_CUDA_H
#define SEISLIVE_WAVE_CUDA_H

#include <string.h>

#include <type_traits>

#include "kernels/cuda_check.h"
#include "kernels/wave_internal.h"
#include "kernels/wave_tuning.h"

#define MAXR (WAVE_ORDER_MAX / 2)
#define TX 32      /* x width of a tiled or layer block */
#define ZCHUNK 128 /* longest z chunk of one tiled block */

struct KArgs {
    const float *__restrict__ p; /* p(n) */
    float *__restrict__ q;       /* p(n-1) in, p(n+1) out */
    const float *__restrict__ vel;
    long long sy, sz;
    int h;  /* halo: the index of padded 0 along x and z (and y in 3D) */
    float c2[3][MAXR + 1];
    float c1[3][MAXR + 1];
    /* last, so that the fields before it keep the offsets of the 3D-only struct (the
     * naive kernel measured 2-3 % slower with it between h and c2) */
    int hy; /* the index of padded 0 along y: h in 3D, 0 in 2D (no y halo) */
};

struct PArgs {
    float *psi[3], *zeta[3];
    float *psi_out[3]; /* fused and lines: psi(n+1) goes here (psi holds psi(n)) */
    const float *pa[3], *pb[3];
    int npad[3];
    int pml[6];
};

struct Box {
    int lo[3], hi[3];
};

static inline KArgs kargs(const wave_sim *s)
{
    KArgs a;
    a.p = s->cur;
    a.q = s->prev;
    a.vel = s->vel;
    a.sy = (long long)s->L.stride_y;
    a.sz = (long long)s->L.stride_z;
    a.h = s->L.halo;
    a.hy = s->L.pad_off[1];
    memcpy(a.c2, s->c2, sizeof a.c2);
    memcpy(a.c1, s->c1, sizeof a.c1);
    return a;
}

static inline PArgs pargs(const wave_sim *s)
{
    PArgs a;
    for (int i = 0; i < 3; i++) {
        a.psi[i] = s->psi[i];
        a.psi_out[i] = s->psi_alt[i];
        a.zeta[i] = s->zeta[i];
        a.pa[i] = s->pa[i];
        a.pb[i] = s->pb[i];
        a.npad[i] = s->L.npad[i];
    }
    for (int f = 0; f < 6; f++)
        a.pml[f] = s->L.pml[f];
    return a;
}

__device__ __forceinline__ long long slab_elem(const PArgs &m, int a, int i, int j, int k, int js)
{
    if (a == 0)
        return ((long long)k * m.npad[1] + j) * (m.pml[0] + m.pml[1]) + js;
    if (a == 1)
        return ((long long)k * (m.pml[2] + m.pml[3]) + js) * m.npad[0] + i;
    return ((long long)js * m.npad[1] + j) * m.npad[0] + i;
}

/* cp.async (sm_80+): 16 bytes global -> shared without passing through registers; with
 * OK false nothing is read and the 16 bytes are zero-filled (SRC must still be a valid
 * address). */
__device__ __forceinline__ void cp16(float *sdst, const float *gsrc, bool ok)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(sdst);
    int n = ok ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gsrc), "r"(n) : "memory");
}
/* cp.async of 4 bytes (any alignment; .ca: the .cg form takes 16 bytes only), zero-filled
 * when !OK. */
__device__ __forceinline__ void cp4(float *sdst, const float *gsrc, bool ok)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(sdst);
    int n = ok ? 4 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gsrc), "r"(n) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

static inline cudaStream_t stream_of(const wave_sim *s) { return (cudaStream_t)s->stream; }

static inline bool box_empty(const Box &b)
{
    return b.hi[0] <= b.lo[0] || b.hi[1] <= b.lo[1] || b.hi[2] <= b.lo[2];
}

static inline int sm_count(const wave_sim *s) { return s->dev->sm_count > 0 ? s->dev->sm_count : 132; }

/* Calls F(std::integral_constant<int, R>) for the half-width R = s->r (1..8). */
template <class F>
static inline int with_r(const wave_sim *s, F &&f)
{
    switch (s->r) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 6: return f(std::integral_constant<int, 6>{});
    case 7: return f(std::integral_constant<int, 7>{});
    case 8: return f(std::integral_constant<int, 8>{});
    }
    return err_set(-EINVAL, "wave: order %d not supported on CUDA", 2 * s->r);
}

/* Calls F(std::integral_constant<int, R>, std::bool_constant<Y>) for the half-width R
 * and Y = !wave_is_2d(s): kernels take the y derivative terms as a template parameter,
 * so a 2D step has no y terms and no branch on it in its loops. */
template <class F>
static inline int with_r_y(const wave_sim *s, F &&f)
{
    if (wave_is_2d(s))
        return with_r(s, [&](auto r) { return f(r, std::false_type{}); });
    return with_r(s, [&](auto r) { return f(r, std::true_type{}); });
}

#define RING2D_W 128 /* x width of a 2D ring block (one row, no y tile) */

/* ---- the launch plan (wave_plan.cu) -------------------------------------------------- */

/* What a step of a simulation runs: its tuning (wave_params.tuning, kernels/wave_tuning.h)
 * with the defaults filled in. */
struct WavePlan {
    bool naive;     /* k_naive (else tiled) */
    int bx, by;     /* naive: thread block */
    bool ring;      /* tiled: k_ring (else k_tiled, register prefetch) */
    int tile;       /* tiled: enum wave_tile */
    int depth;      /* tiled: planes in flight */
    int cpml;       /* enum wave_cpml_arr */
    bool overlap;   /* split / fused CPML on a second stream beside the interior kernel */
    int zchunk;     /* fused: z planes per k_layer block (at most) */
    bool two_d;     /* wave_is_2d: kernels without the y terms; tiled: the ring in rows of
                       RING2D_W (tile 0) */
    bool research;  /* tiled: the interior variant is not the library's (regs, or a ring
                       tile or depth other than the order's default): wave_cu_research() */
};

/* The ring's tile and depth per half-width R, measured on the H100 (docs/PERFORMANCE.md):
 * 8x2 depth 1 up to order 4, 8x4 depth 2 at orders 6-8, 8x2 depth 3 above.  The library
 * holds these k_ring instantiations only. */
constexpr int ring_default_tile(int r) { return r == 3 || r == 4 ? WAVE_TILE_8x4 : WAVE_TILE_8x2; }
constexpr int ring_default_depth(int r) { return r <= 2 ? 1 : r <= 4 ? 2 : 3; }
/* A tile's thread rows BY and rows per thread NY. */
constexpr int tile_by(int t)
{
    return t == WAVE_TILE_16x1 ? 16 : t == WAVE_TILE_4x4 ? 4 : 8;
}
constexpr int tile_ny(int t)
{
    return t == WAVE_TILE_8x2 ? 2 : t == WAVE_TILE_4x4 || t == WAVE_TILE_8x4 ? 4 : 1;
}

/* The plan of S, or -EINVAL when its tuning is invalid (wave_cu_alloc checks it at
 * create, so a step never meets a bad one). */
int wave_cu_plan(const wave_sim *s, WavePlan *pl);

/* ---- the kernels' launchers (each switches on the half-width s->r) ----------------------- */

/* wave_interior.cu: the interior update (plain Laplacian) over box IN. */
int wave_cu_interior(const wave_sim *s, const WavePlan &pl, const Box &in, cudaStream_t st);

/* wave_cpml.cu.  Split: psi in place, then the stretched update of the layers beside the
 * interior box IN.  Lines: the stretched corrections after the interior kernel has
 * updated the whole grid; psi(n+1) goes to psi_alt, then the two swap. */
int wave_cu_cpml_split(wave_sim *s, const Box &in, cudaStream_t st);
int wave_cu_cpml_lines(wave_sim *s, cudaStream_t st);
/* lines' z corrections alone, fp32 memory, no psi swap (the ring arrangement's z by lines);
 * NW 12: the march unrolled whole where the z layers are 12 wide or absent, at order 8
 * (research: no faster on the H100), else the generic kernel */
/* FACE 0 / 1: the low / high z layer alone (-1: both); SKIP (x and y of lo, hi): lines
 * not to correct (another kernel did) */
int wave_cu_cpml_line_z(wave_sim *s, cudaStream_t st, int nw = 0, int min_blocks = 0, int face = -1,
                        const Box *skip = nullptr);
int wave_cu_free_surface(wave_sim *s, cudaStream_t st);
/* psi in place over every axis's layers alone (split's first half; the implicit operator) */
int wave_cu_psi(wave_sim *s, cudaStream_t st);
/* split's second half (k_pml) over the layer cells inside CLIP (padded coordinates) only:
 * a step in parts (wave_part.cu) */
int wave_cu_pml_clip(wave_sim *s, const Box &in, const Box &clip, cudaStream_t st);

/* wave_ring_cpml.cu: the ring arrangement (the CPML terms in the interior pass): k_ring
 * over the core, k_ring_cpml over the frame of x/y-layer tile columns and over the z
 * layers (LAYER_ST: the frame's and the z layers' stream, which the caller forks from and
 * joins into ST); psi(n+1) to psi_alt, then the swap.  Runs where wave_cu_ring_cpml_ok says (3D,
 * half-width <= WAVE_RING_CPML_RMAX, fp32 memory; WHY names what is not). */
#define WAVE_RING_CPML_RMAX 4
bool wave_cu_ring_cpml_ok(const wave_sim *s, const char **why);
int wave_cu_ring_cpml(wave_sim *s, const WavePlan &pl, cudaStream_t st, cudaStream_t layer_st);

/* psi(n+1) was written to psi_alt: it becomes psi (the fused and lines arrangements). */
static inline void wave_cu_swap_psi(wave_sim *s)
{
    for (int ax = 0; ax < 3; ax++) {
        float *t = s->psi[ax];
        s->psi[ax] = s->psi_alt[ax];
        s->psi_alt[ax] = t;
    }
}

/* ---- research variants (tools/wave_research.cu) ----------------------------------------- */

/* The kernel variants no default uses live beside the benchmark, not in the library:
 * seislive-bench and gpu-tests link tools/wave_research.cu and call
 * wave_research_register(), which hands the library these entry points.  Without them
 * the plan refuses such a tuning at create (-ENOTSUP).  Both are called with the
 * simulation's plan, on 3D grids only. */
struct WaveResearch {
    /* the interior update over IN with a tiled variant the library does not hold */
    int (*interior)(const wave_sim *s, const WavePlan &pl, const Box &in, cudaStream_t st);
    /* the fused CPML (k_layer) over the layers beside IN; swaps psi itself */
    int (*fused)(wave_sim *s, const WavePlan &pl, const Box &in, cudaStream_t st);
    /* the ring CPML's step in another frame / z-layer shape when one was asked for
     * (seislive-bench --ring-shape): 1 done, 0 not asked (the library's shape runs), or
     * -errno */
    int (*ring_cpml)(wave_sim *s, const WavePlan &pl, cudaStream_t st, cudaStream_t layer_st);
};

/* wave_plan.cu (in the object of wave_cu_step, so that a research object linked after
 * libseislive.a finds it). */
void wave_cu_set_research(const WaveResearch *r);
const WaveResearch *wave_cu_research(void);

/* wave_xfer.cu: device scratch of at least BYTES (grows; freed with the simulation). */
int wave_cu_scratch(wave_sim *s, size_t bytes, void **out);

#endif
