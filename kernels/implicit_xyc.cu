/* implicit_xyc — the implicit operator's x and y sweeps in one persistent cluster kernel
 * (tuning implicit_yz = xyc; kernels/wave_tuning.h): xyfused's arrangement
 * (kernels/implicit_xy.cu: an x-y plane through the shared memory of a 16-block cluster,
 * lap = gx + gy written once, z by the tile kernel: 28 B/point instead of 40) built for
 * throughput rather than for few registers:
 *   - 1024 threads a block (32 warps an SM, xyfused's 16): a y chunk of 16 rows a thread,
 *     the two chunks of a column in the lane halves of one warp (their maps composed by
 *     a shuffle, not through shared memory); an x line a warp (32 lines, 32 warps: no loop);
 *   - persistent clusters, each plane's rows copied (cp.async) into the second of two
 *     buffers while the plane before is solved: the copies of a plane wait on nothing and
 *     the SM never idles between planes (xyfused: a cluster a plane, each block loading,
 *     solving and writing in turn, 1.80 ms for 8 B/point);
 *   - the carries of a block's y chunks from the other blocks' maps (distributed shared
 *     memory), the ranks before (after) split between the column's two threads;
 *   - in the x and y CPML layers gx stays in lap and gy goes to d, and a pass over the
 *     layers (implicit_layers.cu k_xy_layers) adds the terms; z: tileq's sweep.
 * Measured on the H100 (docs/operators.md, session 12): ncu showed the kernel bound by
 * instruction issue (0.45-0.53 issued a cycle and scheduler, DRAM 23 %), not memory:
 * what took time off was fewer instructions (no division a copy, the maps' products
 * once, no row tests in whole chunks); x+y 1.37 ms without CPML (x and y apart 1.47).
 * Session 13's variants of the same kernel (docs/operators.md): xycn (z by tileqn's
 * sweep), xyco (the psi pass beside the clusters on the SMs they leave idle), xycf (the
 * recursions of constant factor, CF below), xycs (the default: xycf's, a share of the
 * planes by the sequential sweeps beside), xycp (the layers pass of each group of planes
 * beside the next group's launch).
 * Same arithmetic as the CPU reference (kernels/implicit_step.c) except the rounding of
 * the chunks' carries (and CF's reassociation).  Where it does not run (2D, interface values, x lines over 512,
 * y lines over 512, no sm_90, a device that cannot place the cluster): -ENOTSUP, and the
 * caller runs the sequential sweeps. */
#include "kernels/implicit_cuda.h"

#include "kernels/device.h"

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#define XC_YT 32       /* y rows a block */
#define XC_CH 16       /* y rows a thread (two chunks a column) */
#define XC_CL_MAX 16   /* blocks a cluster */
#define XC_THREADS 1024
#define XC_COLS 512    /* x columns (lines of up to 512) */
#define XC_XCH 16      /* x rows a lane */

/* Position of x (a field column + K, or a solution row) in a row of the plane: one pad
 * float every 16, so that lane t's x rows 16 t + l fall in 32 different banks. */
__host__ __device__ constexpr int xc_pos(int x) { return x + (x >> 4); }

/* The row pitch: the longest x line's, rounded to 16 mod 32 floats, so that the two
 * chunks of a column (16 rows apart, read by the two halves of a warp) fall in different
 * banks. */
template <int K>
__host__ __device__ constexpr int xc_pitch()
{
    return xc_pos(XC_COLS + 2 * K - 1) + 1 + ((16 - (xc_pos(XC_COLS + 2 * K - 1) + 1) % 32) + 32) % 32;
}

template <int K>
__host__ __device__ constexpr int xc_plane() { return (XC_YT + 2 * K) * xc_pitch<K>(); }

/* The shared memory of a block: two planes, the y maps (forward, backward: L then P of
 * every column), the x factors (at xc_pos) and the block's y factors. */
template <int K>
static constexpr size_t xc_smem()
{
    return (2 * (size_t)xc_plane<K>() + 4 * XC_COLS + 2 * (size_t)(xc_pos(XC_COLS) + 1) + 2 * XC_YT) * sizeof(float);
}

/* A y chunk's window: [x] = the field at the chunk's row x - K of its column. */
template <int K>
struct XcCol {
    const float *p; /* row 0 of the window, at the column */
    __device__ __forceinline__ float operator[](int x) const { return p[x * xc_pitch<K>()]; }
};

/* An x chunk's window: [l] = the field at the lane's row l - K (xc_pos(16 lane + l)). */
struct XcRow {
    const float *p; /* the line's row, + 17 lane */
    __device__ __forceinline__ float operator[](int l) const { return p[l + (l >> 4)]; }
};

/* Queue the copies of plane K's rows y0 - K .. y0 + ny + K - 1, columns -K .. mx + K - 1,
 * into P (row t at P + t pitch, column x + K at xc_pos). */
template <int K>
__device__ __forceinline__ void xc_load(const IArgs &A, float *P, int k, int y0, int ny, int mx)
{
    constexpr int pitch = xc_pitch<K>();
    const int w = mx + 2 * K, lane = threadIdx.x & 31;
    const float *f = A.p + idx(A, -K, y0 - K, k);
    /* a row a warp (no division per element: the first form's e / w loop cost as many
     * instructions as the solves) */
    for (int t = threadIdx.x >> 5; t < ny + 2 * K; t += XC_THREADS / 32) {
        const float *fr = f + (long long)t * A.sy;
        float *pr = P + t * pitch;
        for (int x = lane; x < w; x += 32)
            cp4(pr + xc_pos(x), fr + x, true);
    }
    cp_commit();
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 /* the clusters: sm_90 (the kernel is empty before) */
/* The composition of the maps (L, M) of ranks [lo, hi) in the other blocks' array S (L at
 * [col], M at [XC_COLS + col]): UP, ascending (a forward carry: d -> L + M d, rank lo
 * first); else descending (a backward one, rank hi - 1 first). */
template <bool UP>
__device__ __forceinline__ void xc_compose(cg::cluster_group &cl, float *S, int col, int lo, int hi, float &L,
                                           float &M)
{
    L = 0;
    M = 1;
#pragma unroll 1
    for (int q = 0; q < hi - lo; q += 4) { /* four ranks' loads in flight (eight spilled the chunk) */
        float rl[4], rm[4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int r = UP ? lo + q + u : hi - 1 - q - u;
            rl[u] = 0.0f;
            rm[u] = 1.0f;
            if (q + u < hi - lo) {
                const float *o = cl.map_shared_rank(S, r);
                rl[u] = o[col];
                rm[u] = o[XC_COLS + col];
            }
        }
#pragma unroll
        for (int u = 0; u < 4; u++) {
            L = rl[u] + rm[u] * L;
            M *= rm[u];
        }
    }
}

/* chunk_forward_map / chunk_backward_map (implicit_cuda.h) without their products P, Q:
 * those depend on the chunk's rows alone (the Thomas factors), not on the field, so each
 * thread forms its chunks' once (xc_products) instead of at every plane (two multiplies
 * and a negation a row and map: the first forms issued ~2500 instructions a thread and
 * plane at 2.1 a cycle an SM, ncu: the kernel was bound by issue, not memory). */
template <int CH, int K, class FW, class IV>
__device__ __forceinline__ void xc_forward_map(const FW &fw, const float *c, float b, int n, const IV &iv,
                                               float (&v)[CH], float &L)
{
    L = 0;
#pragma unroll
    for (int u = 0; u < CH; u++) {
        float r = c[0] * fw[u + K];
#pragma unroll
        for (int l = 1; l <= K; l++)
            r += c[l] * (fw[u + K + l] + fw[u + K - l]);
        v[u] = r;
        if (u < n)
            L = (r - b * L) * iv[u];
    }
}

template <int CH, class CP>
__device__ __forceinline__ void xc_backward_map(const float (&v)[CH], int n, const CP &cp, float &L)
{
    L = 0;
#pragma unroll
    for (int u = CH - 1; u >= 0; u--)
        if (u < n)
            L = v[u] - cp[u] * L;
}

/* CF (tuning xycf): the recursions of a whole chunk with the factors' limit c (forward
 * d_u = r'_u - c d_(u-1), r' the right-hand side of coefficients scaled by the limit of
 * inv; backward g_u = d_u - c g_(u+1)): one FMA a row, no factor loaded (xc_forward_map
 * and the chunk functions: a shared-memory load a row and recursion, and a multiply
 * more forward).  Why it is exact up to rounding: Thomas with the constant factors from
 * row 0 solves T' x' = r, T' the line's matrix with 1 - b c in place of its first
 * diagonal 1, and T = T' + b c e0 e0^T, so x = x' - x'_0 w with w = b c T'^-1 e0 / (1 + b c
 * (T'^-1 e0)_0) (Sherman-Morrison), w_u ~ c^u: the write phase corrects the first 32 rows
 * of a line (implicit_cu_sweep_xyc uses CF only where c^32 < 1e-9). */
template <int K, class FW>
__device__ __forceinline__ void xcf_forward_map(const FW &fw, const float *c, float cf, float (&v)[16], float &L)
{
    L = 0;
#pragma unroll
    for (int u = 0; u < 16; u++) {
        float r = c[0] * fw[u + K];
#pragma unroll
        for (int l = 1; l <= K; l++)
            r += c[l] * (fw[u + K + l] + fw[u + K - l]);
        v[u] = r;
        L = r - cf * L;
    }
}

__device__ __forceinline__ void xcf_forward(float (&v)[16], float cf, float d)
{
#pragma unroll
    for (int u = 0; u < 16; u++) {
        d = v[u] - cf * d;
        v[u] = d;
    }
}

__device__ __forceinline__ void xcf_backward_map(const float (&v)[16], float cf, float &L)
{
    L = 0;
#pragma unroll
    for (int u = 15; u >= 0; u--)
        L = v[u] - cf * L;
}

__device__ __forceinline__ void xcf_backward(float (&v)[16], float cf, float g)
{
#pragma unroll
    for (int u = 15; u >= 0; u--) {
        g = v[u] - cf * g;
        v[u] = g;
    }
}

/* The products P (forward: -b inv) and Q (backward: -cp) of the N rows from R0 of a line,
 * in chunk_forward_map's and chunk_backward_map's order. */
__device__ __forceinline__ void xc_products(const IArgs &A, int r0, int n, float &P, float &Q)
{
    P = 1;
    Q = 1;
    for (int u = 0; u < n; u++)
        P *= -A.b * A.inv[r0 + u];
    for (int u = n - 1; u >= 0; u--)
        Q *= -A.cp[r0 + u];
}

/* WHOLE: x lines of 512 and y lines of a multiple of 32 rows, every chunk full (the row
 * counts constants: no test a row in the recursions).  CF (WHOLE only): the recursions of
 * constant factor A.cf_c (xcf_forward_map), A.c[0] and A.c[1] scaled by the limit of inv,
 * the first 32 rows of each line corrected in the write phase. */
template <int K, int R, bool WHOLE, bool CF = false>
__global__ void __launch_bounds__(XC_THREADS, 1) k_sweep_xyc(IArgs A, int mx, int my)
{
    static_assert(!CF || WHOLE, "CF: whole chunks only");
    constexpr int pitch = xc_pitch<K>(), plane = xc_plane<K>();
    constexpr unsigned FULL = 0xffffffffu;
    extern __shared__ float sh[];
    float *yF = sh + 2 * plane, *yB = yF + 2 * XC_COLS;
    float *xinv = yB + 2 * XC_COLS, *xcp = xinv + xc_pos(XC_COLS) + 1;
    float *yinv = xcp + xc_pos(XC_COLS) + 1, *ycp = yinv + XC_YT;
    cg::cluster_group cl = cg::this_cluster();
    const int rank = (int)cl.block_rank(), ncl = (int)cl.num_blocks();
    const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
    const int y0 = rank * XC_YT, ny = max(0, min(XC_YT, my - y0));
    const int col = wid * 16 + (lane & 15), h = lane >> 4, row0 = h * XC_CH; /* this thread's y chunk */
    const int nyc = WHOLE ? XC_CH : col < mx ? max(0, min(XC_CH, ny - row0)) : 0;
    const float b = A.b;
    for (int i = tid; i < mx; i += XC_THREADS) {
        xinv[xc_pos(i)] = A.inv[i];
        xcp[xc_pos(i)] = A.cp[i];
    }
    if (tid < ny) {
        yinv[tid] = A.inv[y0 + tid];
        ycp[tid] = A.cp[y0 + tid];
    }
    const int nz = A.bhi[2] - A.blo[2];
    /* the chunks' products: y's of this block's two chunk rows (h), x's of each lane's rows;
     * in shared memory (4 registers more made the kernel spill) */
    __shared__ float prod[2 * 2 + 2 * 32];
    __shared__ float xcw[32]; /* CF: the x correction's weights of columns 0..31 */
    if (CF && tid < 32)
        xcw[tid] = tid < 16 ? A.cf_w[0][tid] : A.cf_w[0][tid - 16] * A.cf_rho[0];
    if (tid < 2) {
        const int r = tid * XC_CH;
        xc_products(A, y0 + r, max(0, min(XC_CH, ny - r)), prod[2 * tid], prod[2 * tid + 1]);
    } else if (tid >= 32 && tid < 64) {
        const int l = tid - 32;
        xc_products(A, l * XC_XCH, max(0, min(XC_XCH, mx - l * XC_XCH)), prod[4 + 2 * l], prod[5 + 2 * l]);
    }
    int kk = (int)blockIdx.y;
    const int step = (int)gridDim.y;
    if (kk < nz)
        xc_load<K>(A, sh, A.blo[2] + kk, y0, ny, mx);
#pragma unroll 1
    for (int it = 0; kk < nz; kk += step, it++) {
        float *P = sh + (it & 1) * plane; /* an offset of sh: known shared */
        cp_wait<0>(); /* this plane's copies */
        __syncthreads(); /* ... every thread's; and the plane before is read (its buffer is the next one's) */
        if (kk + step < nz) /* in flight while this one is solved */
            xc_load<K>(A, sh + ((it + 1) & 1) * plane, A.blo[2] + kk + step, y0, ny, mx);
        const int k = A.blo[2] + kk;
        /* y, pass 1: the chunk's right-hand sides (kept) and forward map; the column's two
         * chunks in lanes l and l + 16 */
        float v[XC_CH], L, M = CF ? A.cf_p16 : nyc ? prod[2 * h] : 1.0f; /* no rows: the identity */
        float fwy[XC_CH + 2 * K];
        {
            const XcCol<K> wc{P + row0 * pitch + xc_pos(col + K)};
#pragma unroll
            for (int l = 0; l < XC_CH + 2 * K; l++)
                fwy[l] = wc[l];
        }
        if (CF)
            xcf_forward_map<K>(fwy, A.c[1], A.cf_c, v, L);
        else
            xc_forward_map<XC_CH, K>(fwy, A.c[1], b, nyc, Sh{yinv + row0}, v, L);
        const float fL0 = __shfl_xor_sync(FULL, L, 16), fM0 = __shfl_xor_sync(FULL, M, 16); /* h 1: chunk 0's */
        if (h == 1) { /* the block's map of the column: chunk 1 after chunk 0 */
            yF[col] = L + M * fL0;
            yF[XC_COLS + col] = M * fM0;
        }
        __syncthreads(); /* every column has its right-hand sides: the rows are x's now */
        /* the cluster barrier that publishes the maps, split: its latency under the x solves
         * (the write phase reads gx after the second barrier, which orders the block too) */
        cl.barrier_arrive();
        /* x: warp wid the line wid of the block's rows; gx over the line's field row */
        if (wid < ny) {
            const int i0 = lane * XC_XCH;
            const int n = WHOLE ? XC_XCH : max(0, min(XC_XCH, mx - i0));
            const Sh iv{xinv + xc_pos(i0)}, cq{xcp + xc_pos(i0)}; /* i0 a multiple of 16: rows contiguous */
            float *F = P + (wid + K) * pitch;
            float xv[XC_XCH], xL, xM = CF ? A.cf_p16 : prod[4 + 2 * lane];
            float fwx[XC_XCH + 2 * K];
#pragma unroll
            for (int l = 0; l < XC_XCH + 2 * K; l++)
                fwx[l] = XcRow{F + 17 * lane}[l];
            if (CF) {
                xcf_forward_map<K>(fwx, A.c[0], A.cf_c, xv, xL);
                xcf_forward(xv, A.cf_c, warp_carry<true>(xL, xM, lane));
                xcf_backward_map(xv, A.cf_c, xL);
                xcf_backward(xv, A.cf_c, warp_carry<false>(xL, A.cf_p16, lane));
            } else {
                xc_forward_map<XC_XCH, K>(fwx, A.c[0], b, n, iv, xv, xL);
                chunk_forward<XC_XCH>(xv, b, n, iv, warp_carry<true>(xL, xM, lane));
                xc_backward_map<XC_XCH>(xv, n, cq, xL);
                xM = prod[5 + 2 * lane];
                chunk_backward<XC_XCH>(xv, n, cq, warp_carry<false>(xL, xM, lane));
            }
            __syncwarp(); /* the row's field is read */
#pragma unroll
            for (int u = 0; u < XC_XCH; u++)
                if (u < n)
                    F[xc_pos(K + i0 + u)] = xv[u]; /* gx of column i0 + u where its field was */
        }
        cl.barrier_wait(); /* the forward maps of every block */
        /* y: the carry into the block (ranks before: h 0 the first half, h 1 the rest) */
        {
            const int half = rank / 2;
            float aL, aM;
            xc_compose<true>(cl, yF, col, h == 0 ? 0 : half, h == 0 ? half : rank, aL, aM);
            const float bL = __shfl_xor_sync(FULL, aL, 16);
            const float din = h == 0 ? aL : aL + aM * bL; /* h 1: its half after h 0's */
            const float din0 = __shfl_xor_sync(FULL, din, 16);
            /* h 0: the block's carry is h 1's din; h 1: through chunk 0's map */
            const float dblk = h == 0 ? din0 : din;
            if (CF)
                xcf_forward(v, A.cf_c, h == 0 ? dblk : fL0 + fM0 * dblk);
            else
                chunk_forward<XC_CH>(v, b, nyc, Sh{yinv + row0}, h == 0 ? dblk : fL0 + fM0 * dblk);
        }
        if (CF)
            xcf_backward_map(v, A.cf_c, L);
        else
            xc_backward_map<XC_CH>(v, nyc, Sh{ycp + row0}, L);
        M = CF ? A.cf_p16 : nyc ? prod[2 * h + 1] : 1.0f;
        const float bL1 = __shfl_xor_sync(FULL, L, 16), bM1 = __shfl_xor_sync(FULL, M, 16); /* h 0: chunk 1's */
        if (h == 0) { /* the block's backward map: chunk 0 after chunk 1 */
            yB[col] = L + M * bL1;
            yB[XC_COLS + col] = M * bM1;
        }
        cl.sync(); /* the backward maps */
        {
            const int mid = (rank + 1 + ncl) / 2;
            float aL, aM;
            xc_compose<false>(cl, yB, col, h == 0 ? rank + 1 : mid, h == 0 ? mid : ncl, aL, aM);
            const float bL = __shfl_xor_sync(FULL, aL, 16);
            const float gin = h == 1 ? aL : aL + aM * bL; /* h 0: its half after (below) h 1's */
            const float gin1 = __shfl_xor_sync(FULL, gin, 16);
            const float gblk = h == 1 ? gin1 : gin;
            if (CF)
                xcf_backward(v, A.cf_c, h == 1 ? gblk : bL1 + bM1 * gblk);
            else
                chunk_backward<XC_CH>(v, nyc, Sh{ycp + row0}, h == 1 ? gblk : bL1 + bM1 * gblk);
        }
        if (CF && rank == 0) { /* y: rows 0..31 of the line, x'_0 from the column's chunk 0 */
            const float y0v = __shfl_sync(FULL, v[0], lane & 15);
            const float a = -y0v * (h ? A.cf_rho[1] : 1.0f);
#pragma unroll
            for (int u = 0; u < XC_CH; u++)
                v[u] += a * A.cf_w[1][u];
        }
        /* lap = gx + gy over the box's rows of this chunk (16 columns of two rows a warp);
         * in a CPML layer of x or y, lap = gx and d = gy, whose terms a pass over the
         * layers adds (implicit_layers.cu): here they made the kernel spill (1.4 KB a
         * thread at 64 registers) and put the y layers' work on the cluster's first and
         * last block, which the others waited for at every plane (first form: 4.24 ms
         * for x and y with CPML, 1.51 without). */
        if (col >= A.blo[0] && col < A.bhi[0]) {
            const int np1 = A.m.npad[1];
            const bool xl = A.cpml && (col < A.m.pml[0] || col >= A.m.npad[0] - A.m.pml[1]);
            const long long c0 = idx(A, col, y0 + row0, k);
            const float *gxp = P + (row0 + K) * pitch + xc_pos(col + K);
            /* CF: columns 0..31 (warps 0, 1) corrected by gx of column 0 (x'_0 of each row) */
            const float *gx0 = P + (row0 + K) * pitch + xc_pos(K);
            const float wx = CF && wid < 2 ? xcw[col] : 0.0f;
            const int j0 = y0 + row0;
            const bool clean = nyc == XC_CH && !xl && j0 >= A.blo[1] && j0 + XC_CH <= A.bhi[1] &&
                               !(A.cpml && (j0 < A.m.pml[2] || j0 + XC_CH > np1 - A.m.pml[3]));
            if (clean) { /* the usual chunk: every row in the box, none in a layer (no test a row) */
                float *dst = A.lap + c0;
                const long long sy = A.sy;
                if (CF && wid < 2) {
#pragma unroll
                    for (int u = 0; u < XC_CH; u++)
                        dst[u * sy] = (gxp[u * pitch] - wx * gx0[u * pitch]) + v[u];
                } else {
#pragma unroll
                    for (int u = 0; u < XC_CH; u++)
                        dst[u * sy] = gxp[u * pitch] + v[u];
                }
            } else
#pragma unroll
            for (int u = 0; u < XC_CH; u++) {
                const int j = y0 + row0 + u;
                if (u >= nyc || j < A.blo[1] || j >= A.bhi[1])
                    continue;
                const long long c = c0 + u * A.sy;
                const float gx = CF && wid < 2 ? gxp[u * pitch] - wx * gx0[u * pitch] : gxp[u * pitch];
                if (xl || (A.cpml && (j < A.m.pml[2] || j >= np1 - A.m.pml[3]))) {
                    A.lap[c] = gx;
                    A.d[c] = v[u];
                } else {
                    A.lap[c] = gx + v[u];
                }
            }
        }
    }
    cl.sync(); /* no block leaves while another may read its maps */
}
#else
template <int K, int R, bool WHOLE, bool CF = false>
__global__ void __launch_bounds__(XC_THREADS, 1) k_sweep_xyc(IArgs, int, int) {}
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* ---- xyct (session 14): k_sweep_xyc<K, K, true, true>'s arithmetic in fewer instructions.
 * ncu of xycf's kernel (session 13, 512^3, no CPML): 375 M instructions, bound by issue, two
 * fifths of them integer overhead.  What this form changes (the results the same to the
 * bit: every floating-point operation as xycf's, in the same order):
 *   - 32-bit element indices (implicit_xyct_fits: at most 2^31 elements): a thread's
 *     offsets in the plane formed once, a plane's k offset once, one widening multiply-add
 *     a pointer; the x stride a compile-time constant (IMPLICIT_XYCT_STRIDE), so the rows
 *     of a copy and of the write phase are immediate offsets of one address;
 *   - the copy of a plane unrolled (rows 32 + 2K, columns 512 + 2K: compile-time): a warp's
 *     rows wid and wid + 32, a lane's columns lane + 32 i at shared offset 34 i (xc_pos):
 *     one cp.async an element, no address arithmetic (xycf: ~12 instructions an element
 *     in a loop of runtime bounds);
 *   - the maps of the other blocks read as (L, M) pairs (one 64-bit load a rank) at
 *     32-bit shared::cluster addresses (mapa), the loop unrolled with a warp-uniform trip
 *     count (the ranks of the column's thread in the second half of the warp; the first
 *     half's one rank fewer, where there is one, from an identity pair): xycf's generic
 *     addresses, runtime loop and tests cost ~17 instructions a rank;
 *   - the plane-invariant tests (the box, the layers: the chunk written by the plain
 *     loop) and the constant factors' shuffles of c^16 out of the plane loop; no Thomas
 *     factors or products loaded (CF does not use them). */
#define XCT_RANKS (XC_CL_MAX / 2) /* ranks a thread composes at most, each way */

__device__ __forceinline__ unsigned xct_mapa(unsigned a, int rank)
{
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(rank));
    return r;
}

__device__ __forceinline__ float2 xct_ld2(unsigned a)
{
    float2 v;
    asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];\n" : "=f"(v.x), "=f"(v.y) : "r"(a));
    return v;
}

__device__ __forceinline__ void xct_cp4(unsigned s, const float *g)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(g) : "memory");
}

/* xc_compose's composition of the (L, M) pairs at S (this column's, a 32-bit shared
 * address of this block) in the blocks of ranks R0, R0 + 1, ... (UP; else R0, R0 - 1, ...):
 * N of them; NMAX (warp-uniform, >= N) loads in all, those past N from the identity pair
 * at ID. */
template <bool UP>
__device__ __forceinline__ void xct_compose(unsigned S, unsigned id, int r0, int n, int nmax, float &L, float &M)
{
    L = 0;
    M = 1;
#pragma unroll
    for (int u = 0; u < XCT_RANKS; u++) {
        if (u >= nmax)
            break;
        const unsigned a = xct_mapa(S, UP ? r0 + u : r0 - u);
        const float2 m = xct_ld2(u < n ? a : id);
        L = m.x + m.y * L;
        M *= m.y;
    }
}

template <int K>
__global__ void __launch_bounds__(XC_THREADS, 1) k_sweep_xyct(IArgs A, int, int)
{
    constexpr int pitch = xc_pitch<K>(), plane = xc_plane<K>(), SY = IMPLICIT_XYCT_STRIDE(K);
    constexpr int ROWS = XC_YT + 2 * K, W = XC_COLS + 2 * K; /* a plane's copy */
    static_assert(ROWS <= 64 && W % 32 < 32 && XC_YT == 32 && XC_CH == 16, "xyct's layout");
    constexpr unsigned FULL = 0xffffffffu;
    extern __shared__ float sh[];
    /* the maps: (L, M) pairs of every column, forward then backward */
    float *yF = sh + 2 * plane, *yB = yF + 2 * XC_COLS;
    __shared__ float2 ident;
    __shared__ float xcw[32];
    cg::cluster_group cl = cg::this_cluster();
    const int rank = (int)cl.block_rank(), ncl = (int)cl.num_blocks();
    const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
    const int y0 = rank * XC_YT;
    const int col = wid * 16 + (lane & 15), h = lane >> 4, row0 = h * XC_CH;
    if (tid == 0)
        ident = make_float2(0.0f, 1.0f);
    if (tid < 32)
        xcw[tid] = tid < 16 ? A.cf_w[0][tid] : A.cf_w[0][tid - 16] * A.cf_rho[0];
    const float cfc = A.cf_c, p16 = A.cf_p16, p16sq = p16 * p16;
    const unsigned shb = (unsigned)__cvta_generic_to_shared(sh);
    const unsigned idb = (unsigned)__cvta_generic_to_shared(&ident);
    /* the copy: this warp's window rows wid and wid + 32, this lane's columns lane + 32 i */
    const unsigned gcp = (unsigned)((y0 - K + wid + A.hy) * SY + A.h - K + lane);
    const unsigned scp = (unsigned)(wid * pitch + lane + (lane >> 4)) * 4u;
    /* y: this thread's chunk (window row 0 at its column); x: warp wid's line */
    const unsigned yoff = (unsigned)(row0 * pitch + xc_pos(col + K));
    const unsigned xoff = (unsigned)((wid + K) * pitch + 17 * lane);
    /* the write: lap at the chunk's row 0 */
    const unsigned woff = (unsigned)((y0 + row0 + A.hy) * SY + col + A.h);
    const unsigned mF = (unsigned)__cvta_generic_to_shared(yF + 2 * col);
    const unsigned mB = (unsigned)__cvta_generic_to_shared(yB + 2 * col);
    /* plane-invariant: in the box, in a layer, the plain loop's chunk */
    const bool inbox = col >= A.blo[0] && col < A.bhi[0];
    const int np1 = A.m.npad[1], j0 = y0 + row0;
    const bool xl = A.cpml && (col < A.m.pml[0] || col >= A.m.npad[0] - A.m.pml[1]);
    const bool clean = !xl && j0 >= A.blo[1] && j0 + XC_CH <= A.bhi[1] &&
                       !(A.cpml && (j0 < A.m.pml[2] || j0 + XC_CH > np1 - A.m.pml[3]));
    /* the carries' ranks: forward h 0 [0, half), h 1 [half, rank); backward h 0 (rank, mid),
     * h 1 [mid, ncl), each descending (xc_compose's split) */
    const int half = rank / 2, mid = (rank + 1 + ncl) / 2;
    const int nf = h == 0 ? half : rank - half, nfmax = rank - half;
    const int rf0 = h == 0 ? 0 : half;
    const int nb = h == 0 ? mid - rank - 1 : ncl - mid, nbmax = ncl - mid;
    const int rb0 = h == 0 ? mid - 1 : ncl - 1;
    const int nz = A.bhi[2] - A.blo[2];
    const unsigned sz = (unsigned)A.sz;
    auto load = [&](unsigned buf, int k) {
        const float *g = A.p + ((unsigned)(k + A.h) * sz + gcp);
        const unsigned s = buf + scp;
#pragma unroll
        for (int j = 0; j < 2; j++) {
            if (wid + 32 * j >= ROWS)
                break;
#pragma unroll
            for (int i = 0; i < W / 32; i++)
                xct_cp4(s + (unsigned)(j * 32 * pitch + 34 * i) * 4u, g + j * 32 * SY + 32 * i);
            if (W % 32 && lane < W % 32)
                xct_cp4(s + (unsigned)(j * 32 * pitch + 34 * (W / 32)) * 4u, g + j * 32 * SY + 32 * (W / 32));
        }
        cp_commit();
    };
    int kk = (int)blockIdx.y;
    const int step = (int)gridDim.y;
    if (kk < nz)
        load(shb, A.blo[2] + kk);
#pragma unroll 1
    for (int it = 0; kk < nz; kk += step, it++) {
        const unsigned pb = (unsigned)(it & 1) * (unsigned)plane;
        float *P = sh + pb; /* an offset of sh: known shared */
        cp_wait<0>();
        __syncthreads();
        if (kk + step < nz)
            load(shb + ((unsigned)plane - pb) * 4u, A.blo[2] + kk + step);
        const int k = A.blo[2] + kk;
        /* y, pass 1 (xycf's) */
        float v[XC_CH], L;
        const float *Py = P + yoff;
        {
            float fwy[XC_CH + 2 * K];
#pragma unroll
            for (int l = 0; l < XC_CH + 2 * K; l++)
                fwy[l] = Py[l * pitch];
            xcf_forward_map<K>(fwy, A.c[1], cfc, v, L);
        }
        const float fL0 = __shfl_xor_sync(FULL, L, 16); /* h 1: chunk 0's (its M: c^16, as every chunk's) */
        if (h == 1)
            *reinterpret_cast<float2 *>(yF + 2 * col) = make_float2(L + p16 * fL0, p16sq);
        __syncthreads();
        cl.barrier_arrive();
        /* x: warp wid the line wid of the block's rows (xycf's) */
        {
            float *F = P + xoff;
            float xv[XC_XCH], xL;
            {
                float fwx[XC_XCH + 2 * K];
#pragma unroll
                for (int l = 0; l < XC_XCH + 2 * K; l++)
                    fwx[l] = F[l + (l >> 4)];
                xcf_forward_map<K>(fwx, A.c[0], cfc, xv, xL);
            }
            xcf_forward(xv, cfc, warp_carry<true>(xL, p16, lane));
            xcf_backward_map(xv, cfc, xL);
            xcf_backward(xv, cfc, warp_carry<false>(xL, p16, lane));
            __syncwarp();
#pragma unroll
            for (int u = 0; u < XC_XCH; u++)
                F[K + u + ((K + u) >> 4)] = xv[u];
        }
        cl.barrier_wait();
        {
            float aL, aM;
            xct_compose<true>(mF, idb, rf0, nf, nfmax, aL, aM);
            const float bL = __shfl_xor_sync(FULL, aL, 16);
            const float din = h == 0 ? aL : aL + aM * bL;
            const float din0 = __shfl_xor_sync(FULL, din, 16);
            const float dblk = h == 0 ? din0 : din;
            xcf_forward(v, cfc, h == 0 ? dblk : fL0 + p16 * dblk);
        }
        xcf_backward_map(v, cfc, L);
        const float bL1 = __shfl_xor_sync(FULL, L, 16); /* h 0: chunk 1's */
        if (h == 0)
            *reinterpret_cast<float2 *>(yB + 2 * col) = make_float2(L + p16 * bL1, p16sq);
        cl.sync();
        {
            float aL, aM;
            xct_compose<false>(mB, idb, rb0, nb, nbmax, aL, aM);
            const float bL = __shfl_xor_sync(FULL, aL, 16);
            const float gin = h == 1 ? aL : aL + aM * bL;
            const float gin1 = __shfl_xor_sync(FULL, gin, 16);
            const float gblk = h == 1 ? gin1 : gin;
            xcf_backward(v, cfc, h == 1 ? gblk : bL1 + p16 * gblk);
        }
        if (rank == 0) { /* y: rows 0..31 of the line (xycf's) */
            const float y0v = __shfl_sync(FULL, v[0], lane & 15);
            const float a = -y0v * (h ? A.cf_rho[1] : 1.0f);
#pragma unroll
            for (int u = 0; u < XC_CH; u++)
                v[u] += a * A.cf_w[1][u];
        }
        if (!inbox)
            continue;
        const float *gxp = Py + K * pitch;
        const unsigned c0 = (unsigned)(k + A.h) * sz + woff;
        if (clean) {
            float *dst = A.lap + c0;
            if (wid < 2) { /* columns 0..31: corrected by gx of column 0 (xycf's) */
                const float *gx0 = P + (row0 + K) * pitch + xc_pos(K);
                const float wx = xcw[col];
#pragma unroll
                for (int u = 0; u < XC_CH; u++)
                    dst[u * SY] = (gxp[u * pitch] - wx * gx0[u * pitch]) + v[u];
            } else {
#pragma unroll
                for (int u = 0; u < XC_CH; u++)
                    dst[u * SY] = gxp[u * pitch] + v[u];
            }
        } else {
            const float *gx0 = P + (row0 + K) * pitch + xc_pos(K);
            const float wx = wid < 2 ? xcw[col] : 0.0f;
#pragma unroll
            for (int u = 0; u < XC_CH; u++) {
                const int j = j0 + u;
                if (j < A.blo[1] || j >= A.bhi[1])
                    continue;
                const unsigned c = c0 + (unsigned)(u * SY);
                const float gx = wid < 2 ? gxp[u * pitch] - wx * gx0[u * pitch] : gxp[u * pitch];
                if (xl || (A.cpml && (j < A.m.pml[2] || j >= np1 - A.m.pml[3]))) {
                    A.lap[c] = gx;
                    A.d[c] = v[u];
                } else {
                    A.lap[c] = gx + v[u];
                }
            }
        }
    }
    cl.sync();
}
#else
template <int K>
__global__ void __launch_bounds__(XC_THREADS, 1) k_sweep_xyct(IArgs, int, int) {}
#endif

/* xycf: the constant-factor recursions' arguments (k_sweep_xyc's CF) into B, for lines of
 * MX (x) and MY (y) rows; false where the correction of 32 rows would not be exact to
 * 1e-9 of the line's first value (|c|^32 >= 1e-9: orders above 8 at their default band). */
static bool xc_cf_args(const wave_sim *s, IArgs &B, int mx, int my)
{
    const double b = s->imp->co.b;
    if (!(fabs(b) > 0 && fabs(b) < 0.5))
        return false;
    const double c = (1 - sqrt(1 - 4 * b * b)) / (2 * b); /* c = b / (1 - b c), the factors' limit */
    const double iv = c / b;                             /* inv's limit, 1 / (1 - b c) */
    if (pow(fabs(c), 32) >= 1e-9)
        return false;
    B.cf_c = (float)c;
    B.cf_p16 = (float)pow(c, 16);
    for (int a = 0; a < 2; a++) {
        for (int l = 0; l <= s->imp->K; l++)
            B.c[a][l] = (float)((double)s->imp->c[a][l] * iv);
        /* z = T'^-1 e0 (T': the first diagonal 1 - b c): forward d_u = iv (-c)^u, backward */
        const int m = a == 0 ? mx : my;
        double z[XC_COLS];
        z[0] = iv;
        for (int u = 1; u < m; u++)
            z[u] = -c * z[u - 1];
        for (int u = m - 2; u >= 0; u--)
            z[u] -= c * z[u + 1];
        const double dl = b * c, den = 1 + dl * z[0];
        for (int u = 0; u < 16; u++)
            B.cf_w[a][u] = (float)(dl * z[u] / den);
        B.cf_rho[a] = (float)(z[16] / z[0]);
    }
    return true;
}

/* xycs, xyct (and xycp without CPML): the share of a step's planes that the sequential x and y
 * sweeps solve on the SMs the clusters leave idle (20 of the H100's 132), with CPML on and
 * off (there the psi pass runs on them first).  Session 13, batch 1 (H100, 512^3): at 10 %
 * / 5 % x+y took 1.158 / 1.459 ms against xycf's 1.158 / 1.454 (the sweeps beside took as
 * long as the clusters' share: 0.38 SM-ms a plane for x and y apart against 0.26 for the
 * clusters, from session 12's parts alone); half of it now. */
#define XC_AUX 0.05
#define XC_AUX_CPML 0.025

static int xc_aux_planes(const wave_sim *s, const IArgs &A, int nz)
{
    const int yz = wave_implicit_yz_of(&s->p.tuning);
    if (yz != WAVE_IMPLICIT_YZ_XYCS && yz != WAVE_IMPLICIT_YZ_XYCT && !(yz == WAVE_IMPLICIT_YZ_XYCP && !A.cpml))
        return 0;
    const int n = (int)lround(nz * (A.cpml ? XC_AUX_CPML : XC_AUX));
    return n < nz - s->imp->xy_clusters ? n : 0; /* each cluster keeps a plane at least */
}

/* xycs: the x-y kernel over the first NXY planes of A's box (on the stream of the highest
 * priority, its clusters placed first), beside it on the aux stream the psi pass (where
 * A.psi_beside) and the sequential x and y sweeps over the rest (the SMs the clusters
 * leave, and all of them once the clusters end), joined on ST before the layers pass of
 * the kernel's planes (it reads psi). */
template <class KERN>
static int xc_split(const wave_sim *s, const IArgs &A, IArgs B, cudaStream_t st, cudaLaunchConfig_t cfg, KERN kern,
                    int mx, int my, int nxy)
{
    cudaStream_t xs = (cudaStream_t)s->imp->xy_stream, aux = (cudaStream_t)s->aux_stream;
    wave_sim *ws = const_cast<wave_sim *>(s); /* the psi pass's launcher takes it writable */
    int rc;
    if ((rc = dev_event_record(s->dev, s->ev_fork, st)) < 0 || (rc = dev_stream_wait(s->dev, xs, s->ev_fork)) < 0 ||
        (rc = dev_stream_wait(s->dev, aux, s->ev_fork)) < 0)
        return rc;
    B.bhi[2] = A.blo[2] + nxy;
    cfg.gridDim.y = (unsigned)(s->imp->xy_clusters < nxy ? s->imp->xy_clusters : nxy);
    cfg.stream = xs;
    CUDA_TRY(cudaLaunchKernelEx(&cfg, kern, B, mx, my));
    CUDA_TRY_LAUNCH();
    IArgs X = A;
    X.blo[2] = A.blo[2] + nxy;
    X.psi_beside = false;
    X.first = true;
    if (A.psi_beside && (rc = wave_cu_psi(ws, aux)) < 0)
        return rc;
    if ((rc = implicit_cu_sweep_x(s, X, aux)) < 0)
        return rc;
    X.first = false;
    if ((rc = implicit_cu_sweep_y(s, X, aux)) < 0)
        return rc;
    if ((rc = dev_event_record(s->dev, s->ev_join, xs)) < 0 || (rc = dev_stream_wait(s->dev, st, s->ev_join)) < 0 ||
        (rc = dev_event_record(s->dev, s->ev_join, aux)) < 0 || (rc = dev_stream_wait(s->dev, st, s->ev_join)) < 0)
        return rc;
    IArgs L = A;
    L.bhi[2] = A.blo[2] + nxy;
    return implicit_cu_xy_layers(s, L, st);
}

/* xycp: the x-y kernel in XC_PIPE launches over consecutive groups of planes, each
 * group's CPML layers pass (implicit_layers.cu) on the aux stream as soon as the group is
 * solved, beside the next group's launch, on the SMs the clusters leave idle; the psi pass
 * first there.  The groups' sizes are multiples of the clusters that run at once (each
 * cluster the same number of planes in a launch).  Measured before (session 13, batch 1,
 * xycf): x+y 1.454 ms with CPML, 1.158 without: the layers pass is most of the 0.3 ms. */
#define XC_PIPE 4

template <class KERN>
static int xc_pipe(const wave_sim *s, const IArgs &A, IArgs B, cudaStream_t st, cudaLaunchConfig_t cfg, KERN kern,
                   int mx, int my, int nz)
{
    cudaStream_t xs = (cudaStream_t)s->imp->xy_stream, aux = (cudaStream_t)s->aux_stream;
    wave_sim *ws = const_cast<wave_sim *>(s); /* the psi pass's launcher takes it writable */
    const int ncl = s->imp->xy_clusters;
    int rc;
    if ((rc = dev_event_record(s->dev, s->ev_fork, st)) < 0 || (rc = dev_stream_wait(s->dev, xs, s->ev_fork)) < 0 ||
        (rc = dev_stream_wait(s->dev, aux, s->ev_fork)) < 0)
        return rc;
    cfg.stream = xs;
    int z0 = 0;
    for (int g = 1; g <= XC_PIPE && z0 < nz; g++) {
        int z1 = g == XC_PIPE ? nz : (int)lround((double)nz * g / XC_PIPE / ncl) * ncl;
        if (z1 > nz)
            z1 = nz;
        if (z1 <= z0)
            continue;
        IArgs G = B;
        G.blo[2] = A.blo[2] + z0;
        G.bhi[2] = A.blo[2] + z1;
        cfg.gridDim.y = (unsigned)(ncl < z1 - z0 ? ncl : z1 - z0);
        CUDA_TRY(cudaLaunchKernelEx(&cfg, kern, G, mx, my));
        CUDA_TRY_LAUNCH();
        /* the event's record at the time of the wait: one event serves every group */
        if ((rc = dev_event_record(s->dev, s->ev_join, xs)) < 0 || (rc = dev_stream_wait(s->dev, aux, s->ev_join)) < 0)
            return rc;
        if (z0 == 0 && (rc = wave_cu_psi(ws, aux)) < 0) /* first on aux, beside the first group */
            return rc;
        IArgs L = A;
        L.blo[2] = A.blo[2] + z0;
        L.bhi[2] = A.blo[2] + z1;
        if ((rc = implicit_cu_xy_layers(s, L, aux)) < 0)
            return rc;
        z0 = z1;
    }
    if ((rc = dev_event_record(s->dev, s->ev_join, aux)) < 0 || (rc = dev_stream_wait(s->dev, st, s->ev_join)) < 0)
        return rc;
    return 0;
}

int implicit_cu_sweep_xyc(const wave_sim *s, const IArgs &A, cudaStream_t st)
{
    if (wave_is_2d(s) || A.ifc || A.ifc_out)
        return -ENOTSUP;
    int r0x, r1x, r0y, r1y;
    implicit_cu_rows(s, 0, false, &r0x, &r1x);
    implicit_cu_rows(s, 1, false, &r0y, &r1y);
    const int mx = r1x - r0x, my = r1y - r0y, nz = A.bhi[2] - A.blo[2];
    const int ncl = (my + XC_YT - 1) / XC_YT;
    if (mx > XC_COLS || ncl > XC_CL_MAX || r0x != 0 || r0y != 0 || nz <= 0 || s->imp->xy_ok < 0)
        return -ENOTSUP;
    return with_r(s, [&](auto kk) -> int {
        constexpr int KK = decltype(kk)::value;
        const bool full = mx == XC_COLS && my % XC_YT == 0;
        IArgs B = A;
        const int yz = wave_implicit_yz_of(&s->p.tuning);
        const bool cf = full &&
                        (yz == WAVE_IMPLICIT_YZ_XYCF || yz == WAVE_IMPLICIT_YZ_XYCS || yz == WAVE_IMPLICIT_YZ_XYCP ||
                         yz == WAVE_IMPLICIT_YZ_XYCT) &&
                        xc_cf_args(s, B, mx, my);
        /* xyct: CF's kernel in fewer instructions, where its 32-bit indices and compile-time
         * x stride hold (else xycs's) */
        const bool lean = cf && yz == WAVE_IMPLICIT_YZ_XYCT &&
                          implicit_xyct_fits(s->L.count, s->L.stride_y, IMPLICIT_XYCT_STRIDE(KK));
        auto kern = lean ? k_sweep_xyct<KK>
                    : cf ? k_sweep_xyc<KK, KK, true, true>
                    : full ? k_sweep_xyc<KK, KK, true> : k_sweep_xyc<KK, KK, false>;
        const size_t shmem = xc_smem<KK>();
        cudaLaunchConfig_t cfg;
        cudaLaunchAttribute attr[1];
        if (int rc = xy_cluster_config(s, kern, ncl, nz, XC_THREADS, shmem, st, cfg, attr))
            return rc;
        if (yz == WAVE_IMPLICIT_YZ_XYCP && A.cpml && A.psi_beside && nz > s->imp->xy_clusters)
            return xc_pipe(s, A, B, st, cfg, kern, mx, my, nz);
        const int naux = xc_aux_planes(s, A, nz);
        if (naux > 0)
            return xc_split(s, A, B, st, cfg, kern, mx, my, nz - naux);
        if (s->imp->xy_clusters < nz)
            cfg.gridDim.y = (unsigned)s->imp->xy_clusters; /* one wave of clusters, each a group of planes */
        if (!A.psi_beside) {
            CUDA_TRY(cudaLaunchKernelEx(&cfg, kern, B, mx, my));
            CUDA_TRY_LAUNCH();
            return implicit_cu_xy_layers(s, A, st);
        }
        /* xyco: the clusters fill 112 of the H100's 132 SMs (7 of 16 blocks; no eighth fits
         * its GPCs), one 1024-thread block an SM, which nothing else fits beside; the CPML
         * psi pass (reads p, writes psi: nothing the x-y kernel touches) runs on the 20 SMs
         * left meanwhile, on the stream of the launch, the x-y kernel on a stream of the
         * highest priority (its clusters placed first), joined before the layers pass,
         * which reads psi. */
        cudaStream_t xs = (cudaStream_t)s->imp->xy_stream;
        wave_sim *ws = const_cast<wave_sim *>(s); /* the psi pass's launcher takes it writable */
        int rc;
        if ((rc = dev_event_record(s->dev, s->ev_fork, st)) < 0 || (rc = dev_stream_wait(s->dev, xs, s->ev_fork)) < 0)
            return rc;
        cfg.stream = xs;
        CUDA_TRY(cudaLaunchKernelEx(&cfg, kern, B, mx, my));
        CUDA_TRY_LAUNCH();
        if ((rc = wave_cu_psi(ws, st)) < 0)
            return rc;
        if ((rc = dev_event_record(s->dev, s->ev_join, xs)) < 0 || (rc = dev_stream_wait(s->dev, st, s->ev_join)) < 0)
            return rc;
        return implicit_cu_xy_layers(s, A, st);
    });
}
