/* implicit_xy — the implicit operator's x and y sweeps in one kernel (tuning implicit_yz
 * = xyfused; kernels/wave_tuning.h): an x-y plane of the field goes through the shared
 * memory of a thread-block cluster (Hopper's distributed shared memory) once, the x and
 * y solutions are summed in the block and written once (lap = gx + gy), and the z sweep
 * (implicit_scan.cu) adds gz and updates q.  Bytes per point (3D, no CPML): p in, lap out
 * (8), then z's 20: 28 instead of the three sweeps' 40.  Same arithmetic as the CPU
 * reference (kernels/implicit_step.c) except the rounding of the chunks' carries.
 *
 * Why a cluster: a line of 512 points in each of two directions means a 512 x 512 plane
 * (1 MB) in one place, more than a block's 227 KB; a cluster of CL = ceil(ny / 32) <= 16
 * blocks holds one, each block 32 y rows of the plane (plus K halo rows each side, read
 * again from L2) and all x.
 *   - y: a thread per x column holds its 32 rows in registers (a chunk of the y line);
 *     each block's chunk maps (implicit_cuda.h) go to its shared memory, and after a
 *     cluster barrier every thread reads the maps of the same column in the other blocks
 *     (distributed shared memory) and composes its carry.
 *   - x: a warp per x line of the block's rows, 16 rows a lane, linked by warp scans (as
 *     implicit_scan.cu's x regs); gx written back over the line's field row (which only
 *     that warp reads once y has its right-hand sides).
 *   - then lap = gx + gy, plus each axis's CPML terms, coalesced along x.
 * One block per SM (about 100 KB of shared memory and 512 threads of up to 128
 * registers); x lines of up to 512 rows and y lines of up to 512 (16 blocks: a
 * non-portable cluster size, which an H100 runs); interface-value passes, 2D, longer
 * lines, devices before sm_90 and a GPU that cannot place such a cluster run the
 * sequential sweeps instead (implicit_cuda.cu).
 * Measured on the H100 (docs/operators.md): correct, but slower than the x and y sweeps
 * apart (1.80 ms for 8 B/point against 1.47 ms for their 20 at 512^3; much slower with
 * CPML): one block per SM runs its load, solve and write phases in turn.  Kept
 * selectable as the measured attempt at fusing two axes, not a default. */
#include "kernels/implicit_cuda.h"

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#define XY_YT 32      /* y rows per block */
#define XY_CL_MAX 16  /* blocks per cluster */
#define XY_THREADS 512
#define XY_WARPS (XY_THREADS / 32)
#define XY_XCH 16     /* x rows per lane */

/* Position of x (a field column + K, or a solution row) in a row of the plane: one pad
 * float every 16, so that lane t's rows 16 t + l fall in 32 different banks. */
__host__ __device__ constexpr int xy_pos(int x) { return x + (x >> 4); }

/* The row pitch of the plane in shared memory: for the longest x line, a constant (the
 * rows' offsets immediates; a runtime pitch made the compiler keep the 2K + 32 offsets
 * of the y window in registers across the persistent kernel's loop, and spill). */
template <int K>
__host__ __device__ constexpr int xy_pitch() { return xy_pos(XY_THREADS + 2 * K - 1) + 1; }

/* 4-byte asynchronous copy global -> shared (the plane's rows: no registers held while
 * the loads are in flight), and the waits. */
__device__ __forceinline__ void xy_cp4(float *sdst, const float *gsrc)
{
    const unsigned sa = (unsigned)__cvta_generic_to_shared(sdst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(sa), "l"(gsrc) : "memory");
}
__device__ __forceinline__ void xy_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void xy_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

/* Queue the copies of plane K's rows y0 - K .. y0 + ny + K - 1, columns -K .. mx + K - 1,
 * into P (row t at P + t pitch, column x + K at xy_pos). */
template <int K>
__device__ __forceinline__ void xy_load(const IArgs &A, float *P, int k, int y0, int ny, int mx)
{
    constexpr int pitch = xy_pitch<K>();
    const int w = mx + 2 * K;
    for (int t = 0; t < ny + 2 * K; t++) {
        const float *f = A.p + idx(A, -K, y0 - K + t, k);
        for (int x = threadIdx.x; x < w; x += XY_THREADS)
            xy_cp4(P + t * pitch + xy_pos(x), f + x);
    }
    xy_commit();
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 /* the clusters: sm_90 (the kernels are empty before) */
/* One plane (z = K, its rows in P, loaded and visible to the block): lap = gx + gy over
 * the box's part of the block's rows.  Two cluster barriers; the caller keeps the
 * maps (yF, yB) of every block alive until the others have read them. */
template <int K, int R>
__device__ __forceinline__ void xy_plane(const IArgs &A, cg::cluster_group &cl, float *P, float *yF, float *yB,
                                         const float *xinv, const float *xcp, int k, int mx, int my)
{
    constexpr int pitch = xy_pitch<K>();
    const int rank = (int)cl.block_rank(), ncl = (int)cl.num_blocks();
    const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
    /* opaque: else the persistent kernel's loop keeps the other blocks' map addresses
     * (2 x 15 loop invariants of 64 bits) in registers, and spills */
    asm volatile("" : "+l"(yF));
    asm volatile("" : "+l"(yB));
    asm volatile("" : "+l"(xinv)); /* and the factors' loads, invariant too */
    asm volatile("" : "+l"(xcp));
    const float *yinv = A.inv, *ycp = A.cp;
    asm volatile("" : "+l"(yinv));
    asm volatile("" : "+l"(ycp));
    const int y0 = rank * XY_YT;                  /* the block's first y row (padded) */
    const int ny = max(0, min(XY_YT, my - y0));
    const float b = A.b;
    /* y, pass 1: column tid's right-hand sides (kept) and its chunk's forward map */
    const int col = tid;
    const int nyc = col < mx ? ny : 0;            /* rows of this thread's y chunk */
    float v[XY_YT], L, Pm;
    {
        float fw[XY_YT + 2 * K];
#pragma unroll
        for (int l = 0; l < XY_YT + 2 * K; l++)
            fw[l] = l < nyc + 2 * K ? P[l * pitch + xy_pos(col + K)] : 0.0f;
        chunk_forward_map<XY_YT, K>(fw, A.c[1], b, nyc, -1, -1, 0.0f, 0.0f, Sh{yinv + y0}, v, L, Pm);
    }
    yF[col] = L;
    yF[XY_THREADS + col] = Pm;
    __syncthreads(); /* every column has its right-hand sides: the rows are x's now */
    /* x: warp wid the lines wid, wid + 16 of the block's rows; gx over the line's row */
    {
        const int i0 = lane * XY_XCH;
        const int n = max(0, min(XY_XCH, mx - i0));
        const Sh iv{xinv + xy_pos(i0)}, cq{xcp + xy_pos(i0)}; /* i0 a multiple of 16: rows i0..i0+15 contiguous */
        for (int t = wid; t < ny; t += XY_WARPS) {
            float *F = P + (t + K) * pitch;
            float fw[XY_XCH + 2 * K], xv[XY_XCH], xL, xP;
#pragma unroll
            for (int l = 0; l < XY_XCH + 2 * K; l++)
                fw[l] = n > 0 && l < n + 2 * K ? F[17 * lane + l + (l >> 4)] : 0.0f; /* xy_pos(i0 + l); n = 0: beyond */
            chunk_forward_map<XY_XCH, K>(fw, A.c[0], b, n, -1, -1, 0.0f, 0.0f, iv, xv, xL, xP);
            chunk_forward<XY_XCH>(xv, b, n, iv, warp_carry<true>(xL, xP, lane));
            chunk_backward_map<XY_XCH>(xv, n, cq, xL, xP);
            chunk_backward<XY_XCH>(xv, n, cq, warp_carry<false>(xL, xP, lane));
            __syncwarp(); /* the row's field is read */
#pragma unroll
            for (int u = 0; u < XY_XCH; u++)
                if (u < n)
                    F[xy_pos(K + i0 + u)] = xv[u]; /* gx of column i0 + u where its field was */
            __syncwarp();
        }
    }
    cl.sync(); /* the forward maps of every block, and this block's gx */
    /* y: the carry into this chunk, the maps of the blocks before composed in order */
    float d = 0;
    {
        float rl[XY_CL_MAX], rp[XY_CL_MAX];
#pragma unroll
        for (int r = 0; r < XY_CL_MAX; r++)
            if (r < rank) {
                const float *o = cl.map_shared_rank(yF, r);
                rl[r] = o[col];
                rp[r] = o[XY_THREADS + col];
            }
#pragma unroll
        for (int r = 0; r < XY_CL_MAX; r++)
            if (r < rank)
                d = rl[r] + rp[r] * d;
    }
    const Sh yiv{yinv + y0}, ycq{ycp + y0};
    chunk_forward<XY_YT>(v, b, nyc, yiv, d);
    chunk_backward_map<XY_YT>(v, nyc, ycq, L, Pm);
    yB[col] = L;
    yB[XY_THREADS + col] = Pm;
    cl.sync(); /* the backward maps */
    float g = 0;
    {
        float rl[XY_CL_MAX], rq[XY_CL_MAX];
#pragma unroll
        for (int r = 0; r < XY_CL_MAX; r++)
            if (r > rank && r < ncl) {
                const float *o = cl.map_shared_rank(yB, r);
                rl[r] = o[col];
                rq[r] = o[XY_THREADS + col];
            }
#pragma unroll
        for (int r = XY_CL_MAX - 1; r >= 0; r--)
            if (r > rank && r < ncl)
                g = rl[r] + rq[r] * g;
    }
    chunk_backward<XY_YT>(v, nyc, ycq, g);
    /* lap = gx + gy over the box's rows of this block, x along the threads */
    if (col >= A.blo[0] && col < A.bhi[0]) {
        /* the row stride made opaque: else the persistent kernel's loop keeps the 32 row
         * offsets t * sy (loop invariants) in registers, and spills */
        long long sy = A.sy;
        asm volatile("" : "+l"(sy));
        float *dst = A.lap + idx(A, col, y0, k);
#pragma unroll
        for (int t = 0; t < XY_YT; t++) {
            const int j = y0 + t;
            if (t >= nyc || j < A.blo[1] || j >= A.bhi[1])
                continue;
            float gx = P[(t + K) * pitch + xy_pos(col + K)], gy = v[t];
            if (A.cpml) {
                gx = cpml_term<0, R>(A, col, j, k, gx);
                gy = cpml_term<1, R>(A, col, j, k, gy);
            }
            dst[t * sy] = gx + gy;
        }
    }
}
#endif

/* PIPE false: a cluster per plane (grid ncl x planes).  PIPE true (tuning xypipe): a
 * cluster per group of planes (grid ncl x groups, as many as run at once), the next
 * plane's rows copied into the second buffer while this one is solved. */
template <int K, int R, bool PIPE>
__global__ void __launch_bounds__(XY_THREADS, 1) k_sweep_xy(IArgs A, int mx, int my)
{
    constexpr int pitch = xy_pitch<K>();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ float sh[];
    cg::cluster_group cl = cg::this_cluster();
    const int rank = (int)cl.block_rank();
    const int y0 = rank * XY_YT, ny = max(0, min(XY_YT, my - y0));
    const int plane = (XY_YT + 2 * K) * pitch;
    float *P0 = sh;
    float *yF = sh + (PIPE ? 2 : 1) * plane;      /* forward maps: L [0, 512), P [512, 1024) */
    float *yB = yF + 2 * XY_THREADS;              /* backward maps */
    float *xinv = yB + 2 * XY_THREADS, *xcp = xinv + xy_pos(XY_THREADS) + 1;
    for (int i = threadIdx.x; i < mx; i += XY_THREADS) {
        xinv[xy_pos(i)] = A.inv[i];
        xcp[xy_pos(i)] = A.cp[i];
    }
    const int nz = A.bhi[2] - A.blo[2];
    int kk = (int)blockIdx.y;
    xy_load<K>(A, P0, A.blo[2] + kk, y0, ny, mx);
    if (!PIPE) {
        xy_wait<0>();
        __syncthreads();
        xy_plane<K, R>(A, cl, P0, yF, yB, xinv, xcp, A.blo[2] + kk, mx, my);
        cl.sync(); /* no block leaves while another may read its maps */
        return;
    }
    const int step = (int)gridDim.y;
#pragma unroll 1
    for (int it = 0; kk < nz; kk += step, it++) {
        float *P = sh + (it & 1) * plane; /* an offset of sh, not a choice of pointers: known shared */
        if (kk + step < nz) {
            xy_load<K>(A, sh + ((it + 1) & 1) * plane, A.blo[2] + kk + step, y0, ny, mx);
            xy_wait<1>(); /* this plane's copies; the next one's stay in flight */
        } else {
            xy_wait<0>();
        }
        __syncthreads();
        xy_plane<K, R>(A, cl, P, yF, yB, xinv, xcp, A.blo[2] + kk, mx, my);
        __syncthreads(); /* P is the plane after next's */
    }
    cl.sync(); /* no block leaves while another may read its maps */
#endif
}

int implicit_cu_sweep_xy(const wave_sim *s, const IArgs &A, cudaStream_t st)
{
    if (wave_implicit_yz_is_xyc(wave_implicit_yz_of(&s->p.tuning)))
        return implicit_cu_sweep_xyc(s, A, st);
    if (wave_is_2d(s) || A.ifc || A.ifc_out)
        return -ENOTSUP;
    int r0x, r1x, r0y, r1y;
    implicit_cu_rows(s, 0, false, &r0x, &r1x);
    implicit_cu_rows(s, 1, false, &r0y, &r1y);
    const int mx = r1x - r0x, my = r1y - r0y, nz = A.bhi[2] - A.blo[2];
    const int ncl = (my + XY_YT - 1) / XY_YT;
    if (mx > XY_THREADS || ncl > XY_CL_MAX || r0x != 0 || r0y != 0 || nz <= 0 || s->imp->xy_ok < 0)
        return -ENOTSUP;
    const bool pipe = wave_implicit_yz_of(&s->p.tuning) == WAVE_IMPLICIT_YZ_XYPIPE;
    auto go = [&](auto kern, int K) -> int {
        const size_t shmem = ((size_t)(pipe ? 2 : 1) * (XY_YT + 2 * K) * (xy_pos(XY_THREADS + 2 * K - 1) + 1) +
                              4 * XY_THREADS + 2 * (size_t)(xy_pos(XY_THREADS) + 1)) * sizeof(float);
        cudaLaunchConfig_t cfg;
        cudaLaunchAttribute attr[1];
        if (int rc = xy_cluster_config(s, kern, ncl, nz, XY_THREADS, shmem, st, cfg, attr))
            return rc;
        if (pipe && s->imp->xy_clusters < nz)
            cfg.gridDim.y = (unsigned)s->imp->xy_clusters; /* one wave of clusters, each a group of planes */
        CUDA_TRY(cudaLaunchKernelEx(&cfg, kern, A, mx, my));
        CUDA_TRY_LAUNCH();
        return 0;
    };
    return with_r(s, [&](auto kk) {
        constexpr int KK = decltype(kk)::value;
        return pipe ? go(k_sweep_xy<KK, KK, true>, KK) : go(k_sweep_xy<KK, KK, false>, KK);
    });
}
