/* implicit_scan — the implicit operator's sweeps with whole lines in registers, the
 * chunks of a line linked by scans (tuning implicit_x = regs, implicit_yz = scan /
 * overlap; kernels/wave_tuning.h).  Same arithmetic as the CPU reference
 * (kernels/implicit_step.c) except the rounding of the chunks' carries.
 *
 * The chunk trick (as in implicit_kernels.cu's warp and chunks kernels): a line of m
 * rows is cut into chunks of CH = 16 rows, one per thread.  The Thomas recursions are
 * affine in their carry,
 *   forward   d[i] = (r[i] - b d[i-1]) inv[i]   so  d[end of chunk] = L + P d[before],
 *   backward  g[i] = d[i] - cp[i] g[i+1]         so  g[start of chunk] = L' + Q g[after];
 * a pass from a zero carry gives each chunk's map, a scan of the maps every chunk's exact
 * carry, and a second pass runs the reference recursion from it.
 *
 *   x (regs)  one line per warp, lane t the rows [16 t, 16 t + 16): the line goes through
 *             shared memory once (coalesced loads in, then each lane its 16 + 2K rows,
 *             odd pitch: no bank conflicts), the rest is in registers and warp shuffles
 *             (the warp kernel keeps r, d and g in shared memory and shifts its window in
 *             a loop that does not unroll); the lane's Thomas factors are loaded once per
 *             kernel; the NEXT line's loads are issued before this line is solved, so a
 *             warp always has a line in flight (the warp kernel waits for each load).
 *   y, z (scan) the chunks kernel's blocks (16 or 32 x lanes, a thread per chunk of 16
 *             rows), the carries by a warp scan over the chunks of an x lane (5 shuffle
 *             steps) instead of each chunk composing the maps before it one by one (up to
 *             31 dependent shared-memory reads, twice); the writes two rows at a time,
 *             the loads of both rows (z: p, lap, q, vel) issued before their stores.
 *             With lap2 (tuning overlap) the y sweep writes its own field (no lap read)
 *             while the x sweep runs on the second stream, and z adds both. */
#include "kernels/implicit_cuda.h"
#include "kernels/implicit_yz.h"

/* ---- x: one line per warp in registers ---------------------------------------------------- */

#define XR_CH 16
#define XR_WARPS 8

/* F position of line row x (x = f row + K): one pad float every 16, so lane t's rows
 * 16 t + l fall at 17 t + l + l / 16: 32 different banks. */
__device__ __forceinline__ int xr_pos(int x) { return x + (x >> 4); }

template <int K, int R>
__global__ void __launch_bounds__(32 * XR_WARPS, 2) k_sweep_x_regs(IArgs A, int r0, int r1, int wpitch)
{
    extern __shared__ float sh[];
    constexpr int NF = (32 * XR_CH + 2 * K + 31) / 32; /* the line's loads per lane */
    const int m = r1 - r0, w = m + 2 * K;
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    float *F = sh + wid * wpitch;
    const int i0 = lane * XR_CH;
    const int n = max(0, min(XR_CH, m - i0));
    float iv[XR_CH], cq[XR_CH];
#pragma unroll
    for (int u = 0; u < XR_CH; u++) {
        iv[u] = u < n ? A.inv[i0 + u] : 0.0f;
        cq[u] = u < n ? A.cp[i0 + u] : 0.0f;
    }
    const int ny = A.bhi[1] - A.blo[1], nz = A.bhi[2] - A.blo[2];
    const long long rows = (long long)ny * nz;
    const long long step = (long long)gridDim.x * XR_WARPS;
    const float b = A.b;
    float nf[NF];
    long long q = (long long)blockIdx.x * XR_WARPS + wid;
    if (q < rows) {
        const float *f = A.p + idx(A, r0 - K, A.blo[1] + (int)(q % ny), A.blo[2] + (int)(q / ny));
#pragma unroll
        for (int v = 0; v < NF; v++)
            nf[v] = lane + 32 * v < w ? f[lane + 32 * v] : 0.0f;
    }
    for (; q < rows; q += step) {
        const int j = A.blo[1] + (int)(q % ny), k = A.blo[2] + (int)(q / ny);
#pragma unroll
        for (int v = 0; v < NF; v++)
            if (lane + 32 * v < w)
                F[xr_pos(lane + 32 * v)] = nf[v];
        /* the next line's loads, in flight while this one is solved */
        const long long qn = q + step;
        if (qn < rows) {
            const float *f = A.p + idx(A, r0 - K, A.blo[1] + (int)(qn % ny), A.blo[2] + (int)(qn / ny));
#pragma unroll
            for (int v = 0; v < NF; v++)
                nf[v] = lane + 32 * v < w ? f[lane + 32 * v] : 0.0f;
        }
        float ga = 0, gb = 0;
        if (A.ifc) {
            const long long li = ifc_line<0>(A, 0, j, k);
            ga = A.ifc_in[A.ifc_off[0] + li];
            gb = A.ifc_in[A.ifc_off[0] + A.ifc_half[0] + li];
        }
        __syncwarp();
        float fw[XR_CH + 2 * K];
#pragma unroll
        for (int l = 0; l < XR_CH + 2 * K; l++)
            fw[l] = n > 0 && l < n + 2 * K ? F[17 * lane + l + (l >> 4)] : 0.0f; /* xr_pos(i0 + l); n = 0: beyond F */
        float v[XR_CH], L, P;
        chunk_forward_map<XR_CH, K>(fw, A.c[0], b, n, -i0, m - 1 - i0, ga, gb, iv, v, L, P);
        chunk_forward<XR_CH>(v, b, n, iv, warp_carry<true>(L, P, lane));
        chunk_backward_map<XR_CH>(v, n, cq, L, P);
        chunk_backward<XR_CH>(v, n, cq, warp_carry<false>(L, P, lane));
        __syncwarp(); /* every lane has read its window: F takes g */
#pragma unroll
        for (int u = 0; u < XR_CH; u++)
            if (u < n)
                F[17 * lane + u] = v[u]; /* xr_pos(i0 + u): g of row i0 + u */
        __syncwarp();
        if (A.ifc_out) {
            if (lane < 2) {
                const int at = lane == 0 ? A.pml[0] + A.lo[0] - 1 : A.pml[0] + A.hi[0];
                const float gv = at >= r0 && at < r1 ? F[xr_pos(at - r0)] : 0.0f;
                A.ifc_out[A.ifc_off[0] + lane * A.ifc_half[0] + ifc_line<0>(A, 0, j, k)] = gv;
            }
        } else {
            for (int i = A.blo[0] + lane; i < A.bhi[0]; i += 32) {
                float gv = i >= r0 && i < r1 ? F[xr_pos(i - r0)] : 0.0f;
                if (A.cpml)
                    gv = cpml_term<0, R>(A, i, j, k, gv);
                const long long c = idx(A, i, j, k);
                A.lap[c] = A.first ? gv : A.lap[c] + gv;
            }
        }
        __syncwarp(); /* F is the next line's */
    }
}

int implicit_cu_sweep_x_regs(const wave_sim *s, const IArgs &A, cudaStream_t st, int r0, int r1, long long rows)
{
    const int K = s->imp->K, m = r1 - r0;
    if (m > IMPLICIT_XR_MAX)
        return err_set(-EINVAL, "implicit: x regs sweep: lines of %d rows (at most %d)", m, IMPLICIT_XR_MAX);
    const int wpitch = (m + 2 * K) + (m + 2 * K) / 16 + 1;
    const size_t shmem = (size_t)XR_WARPS * wpitch * sizeof(float);
    return with_r(s, [&](auto kk) {
        constexpr int KK = decltype(kk)::value;
        auto kern = k_sweep_x_regs<KK, KK>;
        int per_sm = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 32 * XR_WARPS, shmem));
        if (A.x_blocks_per_sm > 0 && A.x_blocks_per_sm < per_sm)
            per_sm = A.x_blocks_per_sm;
        long long blocks = (rows + XR_WARPS - 1) / XR_WARPS;
        const long long cap = (long long)(per_sm > 0 ? per_sm : 1) * sm_count(s);
        if (blocks > cap)
            blocks = cap; /* one wave; the warps loop over the lines */
        kern<<<(unsigned)blocks, 32 * XR_WARPS, shmem, st>>>(A, r0, r1, wpitch);
        CUDA_TRY_LAUNCH();
        return 0;
    });
}

/* ---- y and z: register chunks, the carries by a warp scan --------------------------------- */

/* BAL (tuning scanl): the CPML layer rows are written by the whole block after the solve
 * (their g through shared memory, a layer row and x lane per thread), not by the chunks
 * that hold them: a line's layer rows sit in its first and last chunks, i.e. in two warps
 * of the block, which otherwise add every CPML term of the block one row after another
 * while the other warps wait at the block's end (y with CPML: 1.59 ms against 0.89
 * without, session 10).  NT, MINB: __launch_bounds__'s threads and blocks per SM (512 and
 * 2: 64 registers a thread, spills; 512 and 1: up to 128; 256 and 4: 64 registers, 8 x
 * lanes a block for lines of 512, four blocks an SM whose phases need not coincide). */
template <int K, int R, int AX, bool BAL, int NT, int MINB>
__global__ void __launch_bounds__(NT, MINB) k_sweep_scan(IArgs A, int r0, int r1)
{
    __shared__ float fLP[2 * YS_NC_MAX][33], bL[YS_NC_MAX][33], bQ[YS_NC_MAX][33];
    float(*fL)[33] = fLP, (*fP)[33] = fLP + YS_NC_MAX; /* one array: BAL's layer rows span both */
    __shared__ float sinv[IMPLICIT_YS_MAX], scp[IMPLICIT_YS_MAX];
    const int lane = threadIdx.x, c = threadIdx.y, nl = blockDim.x, nc = blockDim.y;
    const int i = A.blo[0] + (int)(blockIdx.x * blockDim.x) + lane;
    const bool act = i < A.bhi[0];
    const int o = (AX == 1 ? A.blo[2] : A.blo[1]) + (int)blockIdx.y;
    const int j = AX == 1 ? 0 : o, k = AX == 1 ? o : 0;
    const long long st = AX == 1 ? A.sy : A.sz;
    const long long base = idx(A, act ? i : A.blo[0], j, k); /* row 0 of the column */
    const float b = A.b;
    const bool mirror = AX == 2 && A.mirror;
    const int m = r1 - r0;
    const int i0 = min(m, c * YS_CH);
    const int n = act ? min(m - i0, YS_CH) : 0; /* rows of this chunk (0: the identity maps) */
    float ga = 0, gb = 0;
    if (A.ifc && act) {
        const long long li = ifc_line<AX>(A, i, j, k);
        ga = A.ifc_in[A.ifc_off[AX] + li];
        gb = A.ifc_in[A.ifc_off[AX] + A.ifc_half[AX] + li];
    }
    for (int t = threadIdx.y * blockDim.x + threadIdx.x; t < m; t += blockDim.x * blockDim.y) {
        sinv[t] = A.inv[t];
        scp[t] = A.cp[t];
    }
    float fw[YS_CH + 2 * K]; /* the field rows i0 - K .. i0 + n - 1 + K (row t of the line: r0 + t) */
#pragma unroll
    for (int l = 0; l < YS_CH + 2 * K; l++) {
        const int tt = r0 + i0 - K + l;
        fw[l] = 0.0f;
        if (l < n + 2 * K)
            fw[l] = mirror && tt < 0 ? -A.p[base + (long long)(-tt) * st] : A.p[base + (long long)tt * st];
    }
    /* the write phase's rows into L2 now (no registers held): its loads then wait on L2,
     * not on DRAM, one row batch after another */
    {
        const bool pl = !A.first && !(AX == 1 && A.lap2);
        for (int u = 0; u < n; u++) {
            const long long cix = base + (long long)(r0 + i0 + u) * st;
            if (pl)
                asm volatile("prefetch.global.L2 [%0];" ::"l"(A.lap + cix));
            if (AX == 2) {
                asm volatile("prefetch.global.L2 [%0];" ::"l"(A.q + cix));
                asm volatile("prefetch.global.L2 [%0];" ::"l"(A.vel + cix));
            }
        }
    }
    __syncthreads(); /* the factors */
    const Sh iv{sinv + i0}, cq{scp + i0};
    float v[YS_CH], L, P;
    chunk_forward_map<YS_CH, K>(fw, A.c[AX], b, n, -i0, m - 1 - i0, ga, gb, iv, v, L, P);
    fL[c][lane] = L;
    fP[c][lane] = P;
    __syncthreads();
    block_carries<true>(fL, fP, nl, nc);
    __syncthreads();
    chunk_forward<YS_CH>(v, b, n, iv, fL[c][lane]);
    chunk_backward_map<YS_CH>(v, n, cq, L, P);
    bL[c][lane] = L;
    bQ[c][lane] = P;
    __syncthreads();
    block_carries<false>(bL, bQ, nl, nc);
    __syncthreads();
    chunk_backward<YS_CH>(v, n, cq, bL[c][lane]);
    const int blo = AX == 1 ? A.blo[1] : A.blo[2], bhi = AX == 1 ? A.bhi[1] : A.bhi[2];
    /* BAL: the layer rows' g into fL / fP (free since the forward carries were read); the
     * chunks then write the rows between the layers, [a1, h0) */
    int wlo = blo, whi = bhi;
    bool bal = false; /* the same in every thread */
    if (BAL && A.cpml) {
        const LayerRows lay = layer_rows<AX>(A, r0, r1, blo, bhi);
        bal = lay.n > 0 && lay.n <= YS_LAY_MAX;
        if (bal) {
#pragma unroll
            for (int u = 0; u < YS_CH; u++) {
                const int li = lay.index(r0 + i0 + u);
                if (u < n && li >= 0)
                    fLP[li][lane] = v[u];
            }
            wlo = lay.a1;
            whi = lay.h0;
        }
    }
    if (bal)
        __syncthreads();
    if (act) {
        write_chunk<R, AX>(A, v, base, st, i, j, k, r0 + i0, n, wlo, whi, PGlobal{A.p});
        /* chunk 0: the surface row before r0 (mirror: r0 = 1), where g = 0 */
        if (c == 0 && blo < r0 && blo < bhi)
            write_row<R, AX>(A, base + (long long)blo * st, i, j, k, blo, 0.0f, PGlobal{A.p});
    }
    if (!bal)
        return;
    /* BAL: the layer rows, a (row, x lane) per thread, consecutive threads along x */
    const LayerRows lay = layer_rows<AX>(A, r0, r1, blo, bhi);
    const int nt = blockDim.x * blockDim.y, i00 = A.blo[0] + (int)(blockIdx.x * blockDim.x);
    for (int e = threadIdx.y * blockDim.x + threadIdx.x; e < lay.n * nl; e += nt) {
        const int li = e / nl, ln = e - li * nl, ii = i00 + ln;
        if (ii >= A.bhi[0])
            continue;
        const int t = li < lay.nlo ? lay.a0 + li : lay.h0 + li - lay.nlo;
        const long long cix = idx(A, ii, AX == 1 ? t : j, AX == 2 ? t : k);
        write_row<R, AX>(A, cix, ii, j, k, t, fLP[li][ln], PGlobal{A.p});
    }
}

template <int K, bool BAL, int NT, int MINB>
static int launch_scan(const IArgs &A, int nx, int no, int nc, cudaStream_t st, int ax, int r0, int r1)
{
    /* x lanes: as many as NT threads hold (32, 16 or 8), the chunks rounded up to whole
     * warps for the scans' shuffles (the extra chunks: identity maps) */
    const int w = NT / nc >= 32 ? 32 : NT / nc >= 16 ? 16 : 8;
    const int per = 32 / w;
    nc = (nc + per - 1) / per * per;
    dim3 blk(w, nc), grd((nx + w - 1) / w, no);
    if (ax == 1)
        k_sweep_scan<K, K, 1, BAL, NT, MINB><<<grd, blk, 0, st>>>(A, r0, r1);
    else
        k_sweep_scan<K, K, 2, BAL, NT, MINB><<<grd, blk, 0, st>>>(A, r0, r1);
    CUDA_TRY_LAUNCH();
    return 0;
}

int implicit_cu_sweep_scan(const wave_sim *s, const IArgs &A, cudaStream_t st, int ax, int r0, int r1)
{
    const int nx = A.bhi[0] - A.blo[0], no = ax == 1 ? A.bhi[2] - A.blo[2] : A.bhi[1] - A.blo[1];
    if (nx <= 0 || no <= 0 || r1 <= r0)
        return 0;
    const int nc = (r1 - r0 + YS_CH - 1) / YS_CH;
    if (nc > YS_NC_MAX || A.ifc_out)
        return err_set(-EINVAL, "implicit: scan sweep: lines of %d rows (at most %d), or interface values", r1 - r0,
                       IMPLICIT_YS_MAX);
    const int yz = wave_implicit_yz_of(&s->p.tuning);
    return with_r(s, [&](auto kk) {
        constexpr int KK = decltype(kk)::value;
        if (yz == WAVE_IMPLICIT_YZ_SCANL)
            return launch_scan<KK, true, 512, 2>(A, nx, no, nc, st, ax, r0, r1);
        if (yz == WAVE_IMPLICIT_YZ_SCANL1)
            return launch_scan<KK, true, 512, 1>(A, nx, no, nc, st, ax, r0, r1);
        if (yz == WAVE_IMPLICIT_YZ_SCANL256)
            return launch_scan<KK, true, 256, 4>(A, nx, no, nc, st, ax, r0, r1);
        return launch_scan<KK, false, 512, 2>(A, nx, no, nc, st, ax, r0, r1);
    });
}
