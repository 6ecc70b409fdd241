/* implicit_yz — the device helpers of the y/z sweeps whose blocks hold whole lines in
 * register chunks (C++ / nvcc only): the chunks' carries by warp scans, the CPML layer
 * rows of a line, and the writes of a line's rows (lap, or with the z sweep q).  Used by
 * implicit_scan.cu (scan, scanl*) and implicit_tile.cu (tile*). */
#ifndef SEISLIVE_IMPLICIT_YZ_H
#define SEISLIVE_IMPLICIT_YZ_H

#include "kernels/implicit_cuda.h"

#define YS_CH 16
#define YS_NC_MAX (IMPLICIT_YS_MAX / YS_CH)
#define YS_WB 2        /* rows written per batch of loads */

/* The carries of every x lane's chunks: SL[c][lane], SP[c][lane] hold chunk c's map in,
 * SL[c][lane] the carry into chunk c out.  A warp per x lane (looping when there are more
 * lanes than warps), a chunk per thread of it. */
template <bool UP>
__device__ __forceinline__ void block_carries(float (*sL)[33], float (*sP)[33], int nl, int nc)
{
    const int t = threadIdx.y * blockDim.x + threadIdx.x, tl = t & 31;
    const int nw = (blockDim.x * blockDim.y) >> 5;
    for (int col = t >> 5; col < nl; col += nw) {
        const float L = tl < nc ? sL[tl][col] : 0.0f, P = tl < nc ? sP[tl][col] : 1.0f;
        const float c = warp_carry<UP>(L, P, tl);
        if (tl < nc)
            sL[tl][col] = c;
    }
}

/* The CPML layer rows of axis AX that a y/z sweep's block writes (tuning scanl): the low
 * layer's [a0, a1) and the high layer's [h0, h1) of the rows [max(r0, blo), min(r1, bhi)),
 * numbered 0 .. nlo - 1 and nlo .. n - 1 (index); the rows between them are [a1, h0).
 * The same in every block of a launch (they depend on the axis only). */
struct LayerRows {
    int a0, a1, h0, h1, nlo, n;
    __device__ __forceinline__ int index(int t) const
    {
        return t >= a0 && t < a1 ? t - a0 : t >= h0 && t < h1 ? nlo + t - h0 : -1;
    }
};

template <int AX>
__device__ __forceinline__ LayerRows layer_rows(const IArgs &A, int r0, int r1, int blo, int bhi)
{
    const int np = A.m.npad[AX], wlo = A.m.pml[2 * AX], whi = A.m.pml[2 * AX + 1];
    const int lo = max(r0, blo), hi = min(r1, bhi);
    LayerRows L;
    L.a0 = lo;
    L.a1 = max(lo, min(wlo, hi));
    L.h0 = max(L.a1, min(hi, np - whi));
    L.h1 = max(L.h0, hi);
    L.nlo = L.a1 - L.a0;
    L.n = L.nlo + L.h1 - L.h0;
    return L;
}

#define YS_LAY_MAX (2 * YS_NC_MAX) /* layer rows the block-wide phase holds (fL and fP's rows) */

/* Where the z sweep's writes read p (the field at the written row: global memory at
 * element CIX, or row T of a block's tile, implicit_tile.cu). */
struct PGlobal {
    const float *p;
    __device__ __forceinline__ float operator()(long long cix, int) const { return p[cix]; }
};

/* Where the z sweep's writes read q(n-1): global memory at CIX (QGlobal), or row T of a
 * block's copy in shared memory (implicit_tile.cu's tileq). */
struct QGlobal {
    __device__ __forceinline__ float operator()(const IArgs &A, long long cix, int) const { return A.q[cix]; }
};

/* Row T of column I (axis AX's row T, the other coordinate J or K) gets the sweep's value
 * GV (the CPML terms added first where A.cpml): lap written or added, or (z) q updated
 * with p from PS. */
template <int R, int AX, class PS, class QS = QGlobal>
__device__ __forceinline__ void write_row(const IArgs &A, long long cix, int i, int j, int k, int t, float gv,
                                          const PS &ps, const QS &qs = QS{})
{
    const int jj = AX == 1 ? t : j, kk = AX == 2 ? t : k;
    if (A.cpml)
        gv = cpml_term<AX, R>(A, i, jj, kk, gv);
    if (AX == 2) {
        float lap = A.first ? gv : A.lap[cix] + gv;
        if (A.lap2)
            lap += A.lap2[cix];
        A.q[cix] = 2.0f * ps(cix, t) - qs(A, cix, t) + A.vel[cix] * lap;
    } else if (A.lap2) {
        ((float *)A.lap2)[cix] = gv;
    } else {
        A.lap[cix] = A.first ? gv : A.lap[cix] + gv;
    }
}

/* Write the N rows of a chunk from row T0 (its g in V) that lie in [BLO, BHI) (the box's
 * rows; BAL: those between the layers, whose rows the block writes), WB at a time,
 * the loads of a batch issued before any of its stores (one row at a time, a row's loads
 * wait for the store before, which the compiler cannot prove apart: a memory round trip
 * a row); z: p from PS.  CP false: without the CPML terms (rows outside the layers). */
template <int R, int AX, class PS, bool CP = true, int WB = YS_WB, class QS = QGlobal>
__device__ __forceinline__ void write_chunk(const IArgs &A, const float (&v)[YS_CH], long long base, long long st,
                                            int i, int j, int k, int t0, int n, int blo, int bhi, const PS &ps,
                                            const QS &qs = QS{})
{
    const bool rd_lap = !A.first && !(AX == 1 && A.lap2);
#pragma unroll
    for (int h = 0; h < YS_CH; h += WB) {
        float la[WB], qa[WB], va[WB], l2[WB], pa[WB];
#pragma unroll
        for (int u = 0; u < WB; u++) {
            const int t = t0 + h + u;
            const bool in = h + u < n && t >= blo && t < bhi;
            const long long cix = base + (long long)t * st;
            la[u] = in && rd_lap ? A.lap[cix] : 0.0f;
            qa[u] = AX == 2 && in ? qs(A, cix, t) : 0.0f;
            va[u] = AX == 2 && in ? A.vel[cix] : 0.0f;
            pa[u] = AX == 2 && in ? ps(cix, t) : 0.0f; /* again (L2 or the tile): the window's registers are the
                                                         loads' */
            l2[u] = AX == 2 && in && A.lap2 ? A.lap2[cix] : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < WB; u++) {
            const int t = t0 + h + u;
            if (!(h + u < n && t >= blo && t < bhi))
                continue;
            float gv = v[h + u];
            const int jj = AX == 1 ? t : j, kk = AX == 2 ? t : k;
            if (CP && A.cpml)
                gv = cpml_term<AX, R>(A, i, jj, kk, gv);
            const long long cix = base + (long long)t * st;
            if (AX == 2) {
                const float lap = (A.first ? gv : la[u] + gv) + l2[u]; /* l2: 0 without lap2 (exact) */
                A.q[cix] = 2.0f * pa[u] - qa[u] + va[u] * lap;
            } else if (A.lap2) {
                ((float *)A.lap2)[cix] = gv; /* overlap: y's own field (the x sweep writes lap meanwhile) */
            } else {
                A.lap[cix] = A.first ? gv : la[u] + gv;
            }
        }
    }
}

#endif
