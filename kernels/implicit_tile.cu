/* implicit_tile — the y and z sweeps of tuning implicit_yz = tile, tile3, tilea, tileb,
 * tilem (the default) and tilez: scanl's blocks
 * (kernels/implicit_scan.cu: whole lines, a thread per chunk of 16 rows, the chunks'
 * carries by warp scans, the CPML layer rows written by the whole block), with the
 * block's columns of p copied once into shared memory: a tile of the line's rows and K
 * halo rows on each side for every x lane of the block, loaded row by row (each warp
 * reads whole 32 to 128-byte row segments), instead of each thread loading its 16 + 2K
 * rows into registers.  What that changes (same arithmetic, same results):
 *   - registers: the 16 + 2K floats of a chunk's window no longer live in registers
 *     (scan: 64 registers at two 512-thread blocks an SM, with spills);
 *   - the halo rows are read once per block, not by both neighbouring chunks;
 *   - the z sweep's writes take p from the tile, not again from L2.
 * tile: two 512-thread blocks an SM (64 registers); tile3: three (40 registers: 48
 * warps an SM, each block's load, solve and write phases less often in step); tilea:
 * tile's, the tile copied by cp.async; tileb: tilea's without the L2 prefetch of the
 * write phase's rows (the z sweep's L2 was 87 % busy with it, session 11); tilem: tilea's
 * with the y sweep at three blocks an SM (40 registers: tile3 made y faster, 1.20 against
 * 1.36 ms with CPML, and z slower, spilling: z stays at two); tilez: tilem's with z at
 * three blocks too, its writes one row at a time (fewer registers than two rows' loads);
 * tileq (session 12, the default): tilem's, the z sweep's q(n-1) rows copied into shared
 * memory beside the tile by cp.async when the block starts (35 KB: two blocks an SM
 * still) instead of prefetched into L2 and read from it again (z's L2 was 88 % busy; z
 * 1.53 -> 1.32 ms without CPML, 1.71 -> 1.54 with).
 *
 * The tile: row tr (line row r0 - K + tr) of x lane l at (tr + tr / 16) x NL + l (NL x
 * lanes): a chunk's rows start 17 rows after the chunk's before, so the 2 or 4 chunks of
 * a warp (16 or 8 lanes each) read different banks. */
#include "kernels/implicit_cuda.h"
#include "kernels/implicit_yz.h"

__device__ __forceinline__ int tile_at(int tr, int nl, int lane) { return (tr + (tr >> 4)) * nl + lane; }

/* A chunk's window in the tile: [x] = the field at the chunk's row x - K. */
struct TileWin {
    const float *t;
    int nl, lane, i0;
    __device__ __forceinline__ float operator[](int x) const { return t[tile_at(i0 + x, nl, lane)]; }
};

/* p at line row T of a lane, from the tile (OFF = K - r0: the tile row of line row 0). */
struct PTile {
    const float *t;
    int nl, lane, off;
    __device__ __forceinline__ float operator()(long long, int row) const { return t[tile_at(row + off, nl, lane)]; }
};

/* q(n-1) at line row T of a lane, from the block's copy of its line rows (tileq; OFF =
 * -r0: copy row 0 is line row r0, laid out as the tile). */
struct QTile {
    const float *t;
    int nl, lane, off;
    __device__ __forceinline__ float operator()(const IArgs &, long long, int row) const
    {
        return t[tile_at(row + off, nl, lane)];
    }
};

#define TILE_LAY_MAX (4 * YS_NC_MAX) /* layer rows a line may have (more: scan's kernels) */

/* Tile rows allocated beyond the line's m + 2K: a short last chunk's window reads up to
 * 16 rows past the line (values its recursion does not use; scan's window holds zeros
 * there). */
#define TILE_SLACK 16

static __host__ __device__ size_t tile_floats(int m, int K, int nl)
{
    const int rows = m + 2 * K + TILE_SLACK;
    return (size_t)(rows + rows / 16 + 1) * nl;
}

/* QS (tileq, z): the tile, then the copy of q's line rows */
static size_t tile_bytes(int m, int K, int nl, bool qs = false)
{
    return (tile_floats(m, K, nl) + (qs ? (size_t)(m + m / 16 + 1) * nl : 0)) * sizeof(float);
}

template <int K, int R, int AX, int NT, int MINB, bool ASYNC, bool PF, int WB, bool QS = false>
__global__ void __launch_bounds__(NT, MINB) k_sweep_tile(IArgs A, int r0, int r1)
{
    constexpr bool QC = QS && AX == 2 && ASYNC; /* tileq: q's rows copied by cp.async beside the tile */
    extern __shared__ float tile[];
    __shared__ float sb[TILE_LAY_MAX][33]; /* the carries' maps, then the layer rows' g */
    float(*fL)[33] = sb, (*fP)[33] = sb + YS_NC_MAX, (*bL)[33] = sb + 2 * YS_NC_MAX, (*bQ)[33] = sb + 3 * YS_NC_MAX;
    __shared__ float sinv[IMPLICIT_YS_MAX], scp[IMPLICIT_YS_MAX];
    const int lane = threadIdx.x, c = threadIdx.y, nl = blockDim.x, nc = blockDim.y;
    const int tid = threadIdx.y * blockDim.x + threadIdx.x, nt = blockDim.x * blockDim.y; /* nt <= NT: short lines */
    const int i00 = A.blo[0] + (int)(blockIdx.x * blockDim.x), i = i00 + lane;
    const bool act = i < A.bhi[0];
    const int o = (AX == 1 ? A.blo[2] : A.blo[1]) + (int)blockIdx.y;
    const int j = AX == 1 ? 0 : o, k = AX == 1 ? o : 0;
    const long long st = AX == 1 ? A.sy : A.sz;
    const float b = A.b;
    const bool mirror = AX == 2 && A.mirror;
    const int m = r1 - r0;
    const int i0 = min(m, c * YS_CH);
    const int n = act ? min(m - i0, YS_CH) : 0; /* rows of this chunk (0: the identity maps) */
    /* the tile: m + 2K rows of every lane; ASYNC: every element a cp.async (all of a
     * thread's in flight at once, no registers), else 4 loads in flight a thread before
     * their stores */
    const int lg = __ffs(nl) - 1, tot = (m + 2 * K) << lg;
    if (ASYNC) {
#pragma unroll 4
        for (int e = tid; e < tot; e += nt) {
            const int tr = e >> lg, ln = e & (nl - 1), tt = r0 - K + tr;
            const bool in = i00 + ln < A.bhi[0];
            const long long col = idx(A, in ? i00 + ln : A.blo[0], j, k);
            float *dst = tile + tile_at(tr, nl, ln);
            if (mirror && tt < 0)
                *dst = in ? -A.p[col - (long long)tt * st] : 0.0f;
            else
                cp4(dst, A.p + col + (long long)tt * st, in);
        }
        cp_commit();
        if (QC) { /* the write phase's q: into shared memory while the lines are solved (not an
                   * L2 prefetch read again from L2: the z sweep's L2 was 88 % busy) */
            float *sq = tile + tile_floats(m, K, nl);
#pragma unroll 4
            for (int e = tid; e < (m << lg); e += nt) {
                const int tr = e >> lg, ln = e & (nl - 1);
                const bool in = i00 + ln < A.bhi[0];
                const long long col = idx(A, in ? i00 + ln : A.blo[0], j, k);
                cp4(sq + tile_at(tr, nl, ln), A.q + col + (long long)(r0 + tr) * st, in);
            }
            cp_commit();
        }
        cp_wait<QC ? 1 : 0>();
    } else {
        for (int e0 = tid; e0 < tot; e0 += 4 * nt) {
            float val[4];
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int e = e0 + q * nt, tr = e >> lg, ii = i00 + (e & (nl - 1)), tt = r0 - K + tr;
                val[q] = 0.0f;
                if (e < tot && ii < A.bhi[0]) {
                    const long long col = idx(A, ii, j, k);
                    val[q] = mirror && tt < 0 ? -A.p[col - (long long)tt * st] : A.p[col + (long long)tt * st];
                }
            }
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int e = e0 + q * nt;
                if (e < tot)
                    tile[tile_at(e >> lg, nl, e & (nl - 1))] = val[q];
            }
        }
    }
    const long long base = idx(A, act ? i : A.blo[0], j, k); /* row 0 of the column */
    float ga = 0, gb = 0;
    if (A.ifc && act) {
        const long long li = ifc_line<AX>(A, i, j, k);
        ga = A.ifc_in[A.ifc_off[AX] + li];
        gb = A.ifc_in[A.ifc_off[AX] + A.ifc_half[AX] + li];
    }
    for (int t = tid; t < m; t += nt) {
        sinv[t] = A.inv[t];
        scp[t] = A.cp[t];
    }
    if (PF) { /* the write phase's rows into L2 now (scan's; tileb: not, L2 has less to do) */
        const bool pl = !A.first && !(AX == 1 && A.lap2);
        for (int u = 0; u < n; u++) {
            const long long cix = base + (long long)(r0 + i0 + u) * st;
            if (pl)
                asm volatile("prefetch.global.L2 [%0];" ::"l"(A.lap + cix));
            if (AX == 2) {
                if (!QC)
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(A.q + cix));
                asm volatile("prefetch.global.L2 [%0];" ::"l"(A.vel + cix));
            }
        }
    }
    __syncthreads(); /* the tile, the factors */
    const Sh iv{sinv + i0}, cq{scp + i0};
    float v[YS_CH], L, P;
    chunk_forward_map<YS_CH, K>(TileWin{tile, nl, lane, i0}, A.c[AX], b, n, -i0, m - 1 - i0, ga, gb, iv, v, L, P);
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
    if (QC)
        cp_wait<0>(); /* q's copies, before the barrier that shows them to the block */
    __syncthreads();
    chunk_backward<YS_CH>(v, n, cq, bL[c][lane]);
    const int blo = AX == 1 ? A.blo[1] : A.blo[2], bhi = AX == 1 ? A.bhi[1] : A.bhi[2];
    /* the chunks write the rows between the layers, without CPML terms (none there) */
    const LayerRows lay = layer_rows<AX>(A, r0, r1, blo, bhi);
    const float *sq = tile + tile_floats(m, K, nl);
    if (act && QC)
        write_chunk<R, AX, PTile, false, WB, QTile>(A, v, base, st, i, j, k, r0 + i0, n, A.cpml ? lay.a1 : blo,
                                                    A.cpml ? lay.h0 : bhi, PTile{tile, nl, lane, K - r0},
                                                    QTile{sq, nl, lane, -r0});
    else if (act)
        write_chunk<R, AX, PTile, false, WB>(A, v, base, st, i, j, k, r0 + i0, n, A.cpml ? lay.a1 : blo,
                                         A.cpml ? lay.h0 : bhi, PTile{tile, nl, lane, K - r0});
    if (A.cpml) { /* the same in every thread */
        /* the layer rows' g into the carries' arrays (free once every chunk has its
         * carry), then a (row, x lane) a thread; the caller keeps lay.n <= TILE_LAY_MAX */
        __syncthreads();
#pragma unroll
        for (int u = 0; u < YS_CH; u++) {
            const int li = lay.index(r0 + i0 + u);
            if (u < n && li >= 0 && li < TILE_LAY_MAX)
                sb[li][lane] = v[u];
        }
        __syncthreads();
        for (int e = tid; e < min(lay.n, TILE_LAY_MAX) * nl; e += nt) {
            const int li = e / nl, ln = e - li * nl, ii = i00 + ln;
            if (ii >= A.bhi[0])
                continue;
            const int t = li < lay.nlo ? lay.a0 + li : lay.h0 + li - lay.nlo;
            const long long cix = idx(A, ii, AX == 1 ? t : j, AX == 2 ? t : k);
            if (QC)
                write_row<R, AX>(A, cix, ii, j, k, t, sb[li][ln], PTile{tile, nl, ln, K - r0}, QTile{sq, nl, ln, -r0});
            else
                write_row<R, AX>(A, cix, ii, j, k, t, sb[li][ln], PTile{tile, nl, ln, K - r0});
        }
    }
    /* chunk 0: the surface row before r0 (mirror: r0 = 1; the tile holds its mirror image
     * there, not p), where g = 0 */
    if (act && c == 0 && blo < r0 && blo < bhi)
        write_row<R, AX>(A, base + (long long)blo * st, i, j, k, blo, 0.0f, PGlobal{A.p});
}

template <int K, int NT, int MINB, bool ASYNC, bool PF, int WB = YS_WB, bool QS = false>
static int launch_tile(const IArgs &A, int nx, int no, int nc, cudaStream_t st, int ax, int r0, int r1)
{
    const int w = NT / nc >= 32 ? 32 : NT / nc >= 16 ? 16 : 8;
    const int per = 32 / w;
    nc = (nc + per - 1) / per * per;
    const size_t shmem = tile_bytes(r1 - r0, K, w, QS && ax == 2);
    dim3 blk(w, nc), grd((nx + w - 1) / w, no);
    auto kern = ax == 1 ? k_sweep_tile<K, K, 1, NT, MINB, ASYNC, PF, WB, QS>
                        : k_sweep_tile<K, K, 2, NT, MINB, ASYNC, PF, WB, QS>;
    CUDA_TRY(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
    kern<<<grd, blk, shmem, st>>>(A, r0, r1);
    CUDA_TRY_LAUNCH();
    return 0;
}

int implicit_cu_sweep_tile(const wave_sim *s, const IArgs &A, cudaStream_t st, int ax, int r0, int r1)
{
    const int nx = A.bhi[0] - A.blo[0], no = ax == 1 ? A.bhi[2] - A.blo[2] : A.bhi[1] - A.blo[1];
    if (nx <= 0 || no <= 0 || r1 <= r0)
        return 0;
    const int nc = (r1 - r0 + YS_CH - 1) / YS_CH;
    if (nc > YS_NC_MAX || A.ifc_out)
        return err_set(-EINVAL, "implicit: tile sweep: lines of %d rows (at most %d), or interface values", r1 - r0,
                       IMPLICIT_YS_MAX);
    if (A.cpml && A.m.pml[2 * ax] + A.m.pml[2 * ax + 1] > TILE_LAY_MAX)
        return implicit_cu_sweep_scan(s, A, st, ax, r0, r1); /* its chunks add the CPML terms */
    int yz = wave_implicit_yz_of(&s->p.tuning);
    if (yz == WAVE_IMPLICIT_YZ_XYC)
        yz = WAVE_IMPLICIT_YZ_TILEQ; /* xyc's z sweep (and y where its x-y kernel does not run): tileq's */
    else if (wave_implicit_yz_is_xyc(yz))
        yz = WAVE_IMPLICIT_YZ_TILEQN; /* xycn's, xyco's and xycf's: tileqn's */
    return with_r(s, [&](auto kk) {
        constexpr int KK = decltype(kk)::value;
        if ((yz == WAVE_IMPLICIT_YZ_TILEM || yz == WAVE_IMPLICIT_YZ_TILEZ || yz == WAVE_IMPLICIT_YZ_TILEQ ||
             yz == WAVE_IMPLICIT_YZ_TILEQN || yz == WAVE_IMPLICIT_YZ_TILEQW) &&
            ax == 1)
            return launch_tile<KK, 512, 3, true, true>(A, nx, no, nc, st, ax, r0, r1);
        if (yz == WAVE_IMPLICIT_YZ_TILEQ)
            return launch_tile<KK, 512, 2, true, true, YS_WB, true>(A, nx, no, nc, st, ax, r0, r1);
        if (yz == WAVE_IMPLICIT_YZ_TILEQN) /* z: no L2 prefetch, four rows' loads in flight */
            return launch_tile<KK, 512, 2, true, false, 4, true>(A, nx, no, nc, st, ax, r0, r1);
        if (yz == WAVE_IMPLICIT_YZ_TILEQW) /* tileqn's z, 32 x lanes a block: rows of 128 bytes, not 64 */
            return launch_tile<KK, 1024, 1, true, false, 4, true>(A, nx, no, nc, st, ax, r0, r1);
        if (yz == WAVE_IMPLICIT_YZ_TILEZ)
            return launch_tile<KK, 512, 3, true, true, 1>(A, nx, no, nc, st, ax, r0, r1);
        return yz == WAVE_IMPLICIT_YZ_TILE3   ? launch_tile<KK, 512, 3, false, true>(A, nx, no, nc, st, ax, r0, r1)
               : yz == WAVE_IMPLICIT_YZ_TILEA || yz == WAVE_IMPLICIT_YZ_TILEM
                   ? launch_tile<KK, 512, 2, true, true>(A, nx, no, nc, st, ax, r0, r1)
               : yz == WAVE_IMPLICIT_YZ_TILEB ? launch_tile<KK, 512, 2, true, false>(A, nx, no, nc, st, ax, r0, r1)
                                              : launch_tile<KK, 512, 2, false, true>(A, nx, no, nc, st, ax, r0, r1);
    });
}
