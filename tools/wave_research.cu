/* wave_research — the propagator's CUDA kernel variants that no default uses, kept
 * beside the benchmark so that they can still be measured (seislive-bench stencil
 * --pipe/--tile/--prefetch/--cpml, --variants) and checked against the CPU reference
 * (tests/gpu/test_gpu_wave.c), while the library and the production path hold only what
 * the defaults run:
 *
 *   regs   k_tiled: the 2.5D tiled interior kernel with its loads prefetched into
 *          registers (the default before k_ring), tiles 16x1, 8x1, 8x2, 4x4, depth 1-2;
 *   ring   k_ring (kernels/wave_ring.cuh) in the tiles and depths that are not an
 *          order's default (the library instantiates one per order, and one 2D row
 *          kernel per order: the 2D depths other than the default are here too);
 *   fused  k_layer: psi(n+1) and the stretched CPML update in one pass over the layers
 *          beside the interior box;
 *   ring   k_ring_cpml (kernels/wave_ring_cpml.cuh) in frame and z-layer shapes other
 *          than the library's, at order 8 (seislive-bench --ring-shape).
 *
 * Linked only into seislive-bench and gpu-tests (after libseislive.a: this file uses
 * only the header's inline code, wave_plan.cu's hook and the error helpers, all in
 * objects those programs already pull in).  wave_research_register() hands the entry
 * points to the library (kernels/wave_cuda.h, struct WaveResearch). */
#include "tools/wave_research.h"

#include <stdio.h>
#include <string.h>

#include "kernels/cpml.h"
#include "kernels/wave_ring.cuh"
#include "kernels/wave_ring_cpml.cuh"

/* research_interior — the tiled interior kernel with register prefetch (k_tiled, the
 * "regs" pipeline, the default before k_ring), kept for seislive-bench and the GPU
 * tests (tools/wave_research.cu includes it). */
/* ---- interior: 2.5D tiled ------------------------------------------------------------- */

/* Block of TX x BY threads; each thread owns NY rows of the TX x (BY NY) tile (rows
 * ty, ty + BY, ...), each with its own register queue along z.  Everything plane k
 * needs from global memory (the queue's new value p(k+R), the x and y halos, p(k-1)
 * and v) is loaded PD planes ahead into registers (software pipelining, slots used in
 * turn with compile-time indices so no register waits on a load before its use):
 * a memory-bound stencil needs many bytes in flight per SM, and the two barriers per
 * plane would otherwise expose the memory latency once per plane. */
template <int R, int BY, int NY, int PD>
__global__ void __launch_bounds__(TX *BY, NY == 1 ? 2048 / (TX * BY) / 2 : 2) k_tiled(KArgs a, Box b, int zchunk)
{
    constexpr int TYT = BY * NY;          /* tile height */
    constexpr int HY = (R + BY - 1) / BY; /* y-halo rows per thread (above and below) */
    __shared__ float sm[TYT + 2 * R][TX + 2 * R];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x0 = b.lo[0] + blockIdx.x * TX, y0 = b.lo[1] + blockIdx.y * TYT;
    const int i = x0 + tx;
    const int kb = b.lo[2] + blockIdx.z * zchunk;
    const int ke = min(kb + zchunk, b.hi[2]);
    const float *__restrict__ p = a.p;
    const float *__restrict__ vel = a.vel;
    float *__restrict__ q = a.q;
    const long long sy = a.sy, sz = a.sz;
    /* Points up to R beyond the box are still inside the allocation and feed the stencil
     * of the box's last points; further ones are never read. */
    const bool xin = i < b.hi[0], xld = i < b.hi[0] + R;
    /* The weights stay in the kernel-parameter (constant) bank. */
    const float c0 = a.c2[0][0] + a.c2[1][0] + a.c2[2][0];
    long long col[NY];
    bool inside[NY], loadable[NY], lx_ok[NY], rx_ok[NY];
#pragma unroll
    for (int m = 0; m < NY; m++) {
        int j = y0 + ty + m * BY;
        col[m] = (long long)(j + a.h) * sy + (i + a.h);
        inside[m] = xin && j < b.hi[1];
        loadable[m] = xld && j < b.hi[1] + R;
        lx_ok[m] = tx < R && j < b.hi[1] + R;
        rx_ok[m] = tx < R && x0 + TX + tx < b.hi[0] + R && j < b.hi[1] + R;
    }
    /* y halos: rows y0 - R + r (above) and y0 + TYT + r (below), r = ty + h BY < R. */
    long long ycol_b[HY], ycol_t[HY];
    bool yb_ok[HY], yt_ok[HY];
#pragma unroll
    for (int h = 0; h < HY; h++) {
        int r = ty + h * BY;
        ycol_b[h] = (long long)(y0 - R + r + a.h) * sy + (i + a.h);
        ycol_t[h] = (long long)(y0 + TYT + r + a.h) * sy + (i + a.h);
        yb_ok[h] = r < R && xld;
        yt_ok[h] = r < R && xld && y0 + TYT + r < b.hi[1] + R;
    }
    float qz[NY][2 * R + 1]; /* qz[m][u] = p(k - R + u) of row m */
#pragma unroll
    for (int m = 0; m < NY; m++)
#pragma unroll
        for (int u = 0; u < 2 * R; u++)
            qz[m][u] = loadable[m] ? __ldg(p + col[m] + (long long)(kb - R + u + a.h) * sz) : 0.0f;
    float nz[PD][NY], hl[PD][NY], hr[PD][NY], qo[PD][NY], vv[PD][NY], hb[PD][HY], ht[PD][HY];
    /* Load what plane KK needs into slot SL. */
    auto fetch = [&](auto slc, int kk) {
        constexpr int sl = decltype(slc)::value;
        const long long pl = (long long)(kk + a.h) * sz;
        const bool ok = kk < ke;
#pragma unroll
        for (int m = 0; m < NY; m++) {
            nz[sl][m] = ok && loadable[m] ? __ldg(p + col[m] + pl + R * sz) : 0.0f;
            hl[sl][m] = ok && lx_ok[m] ? __ldg(p + col[m] + pl - R) : 0.0f;
            hr[sl][m] = ok && rx_ok[m] ? __ldg(p + col[m] + pl + TX) : 0.0f;
            qo[sl][m] = ok && inside[m] ? q[col[m] + pl] : 0.0f;
            vv[sl][m] = ok && inside[m] ? __ldg(vel + col[m] + pl) : 0.0f;
        }
#pragma unroll
        for (int h = 0; h < HY; h++) {
            hb[sl][h] = ok && yb_ok[h] ? __ldg(p + ycol_b[h] + pl) : 0.0f;
            ht[sl][h] = ok && yt_ok[h] ? __ldg(p + ycol_t[h] + pl) : 0.0f;
        }
    };
    /* Update plane KK from slot SL, then refill SL with plane KK + PD. */
    auto plane_step = [&](auto slc, int kk) {
        constexpr int sl = decltype(slc)::value;
        __syncthreads();
#pragma unroll
        for (int m = 0; m < NY; m++) {
            qz[m][2 * R] = nz[sl][m];
            const int row = ty + m * BY + R;
            sm[row][tx + R] = qz[m][R];
            if (tx < R) {
                sm[row][tx] = hl[sl][m];
                sm[row][tx + TX + R] = hr[sl][m];
            }
        }
#pragma unroll
        for (int h = 0; h < HY; h++) {
            int r = ty + h * BY;
            if (r < R) {
                sm[r][tx + R] = hb[sl][h];
                sm[TYT + R + r][tx + R] = ht[sl][h];
            }
        }
        __syncthreads();
        float qcur[NY], vcur[NY];
#pragma unroll
        for (int m = 0; m < NY; m++) {
            qcur[m] = qo[sl][m];
            vcur[m] = vv[sl][m];
        }
        fetch(slc, kk + PD);
        const long long pl = (long long)(kk + a.h) * sz;
#pragma unroll
        for (int m = 0; m < NY; m++) {
            if (inside[m]) {
                const int row = ty + m * BY + R;
                float lap = c0 * qz[m][R];
#pragma unroll
                for (int l = 1; l <= R; l++)
                    lap += a.c2[0][l] * (sm[row][tx + R + l] + sm[row][tx + R - l]) +
                           a.c2[1][l] * (sm[row + l][tx + R] + sm[row - l][tx + R]) +
                           a.c2[2][l] * (qz[m][R + l] + qz[m][R - l]);
                q[col[m] + pl] = 2.0f * qz[m][R] - qcur[m] + vcur[m] * lap;
            }
#pragma unroll
            for (int u = 0; u < 2 * R; u++)
                qz[m][u] = qz[m][u + 1];
        }
    };
    using S0 = std::integral_constant<int, 0>;
    using S1 = std::integral_constant<int, PD - 1>;
    fetch(S0{}, kb);
    if (PD > 1)
        fetch(S1{}, kb + 1);
    for (int k = kb; k < ke; k += PD) {
        plane_step(S0{}, k);
        if (PD > 1 && k + 1 < ke)
            plane_step(S1{}, k + 1);
    }
}

template <int R, int BY, int NY, int PD>
static int launch_tiled(const Box &in, const KArgs &a, int sms, cudaStream_t st)
{
    constexpr int TYT = BY * NY;
    int gx = (in.hi[0] - in.lo[0] + TX - 1) / TX, gy = (in.hi[1] - in.lo[1] + TYT - 1) / TYT;
    int nz = in.hi[2] - in.lo[2];
    /* z chunks: long enough to amortise the queue's 2R-plane preload, short enough for
     * ~8 waves of blocks (2048 threads per SM). */
    long long slots = (long long)sms * (2048 / (TX * BY));
    long long want = (long long)nz * gx * gy / (8 * slots);
    int zc = (int)(want < 4 * R ? 4 * R : want > ZCHUNK ? ZCHUNK : want);
    dim3 blk(TX, BY), grd(gx, gy, (nz + zc - 1) / zc);
    k_tiled<R, BY, NY, PD><<<grd, blk, 0, st>>>(a, in, zc);
    CUDA_TRY_LAUNCH();
    return 0;
}


/* ---- CPML fused: psi(n+1) and the stretched update in one pass over the layers ---------- */

/* Up to 6 boxes (the faces' layers) in one launch; block b belongs to the box w with
 * start[w] <= b < start[w + 1]. */
struct LBoxes {
    Box b[6];
    int gx[6], gy[6], zc[6];
    int start[7];
    int n;
};

#define LBY 8 /* thread rows of a layer block: 20-cell layers fill 20 of 24 rows */

/* The layer points of the boxes in LB, each updated once per step, reading psi(n)
 * (m.psi) and writing psi(n+1) (m.psi_out) in the same pass: the stretched update at a
 * point needs psi(n+1) at its R neighbours on each side, which this block recomputes
 * (psi(n+1) = b psi(n) + a dp/dx depends only on p(n) and psi(n), both unchanged during
 * the step) instead of reading them from a separate psi pass:
 *   x and y: in shared memory over the tile and R cells around it, from a p tile with a
 *            halo of 2R (only in blocks whose tile touches an x / y layer: the branch is
 *            per block);
 *   z:       a register queue of psi_z(n+1) over planes k-R .. k+R beside a queue of p
 *            over k-2R .. k+2R (pushing plane k+R needs p up to k+2R; per plane, uniform).
 * zeta is read and written in place at the point itself.  So every layer point reads
 * and writes its psi and zeta once (the Pasalic-McGarry arithmetic of the CPU
 * reference, unchanged).  Pipelining: the p tile of plane k+1 is copied asynchronously
 * (cp.async, double buffer) and the point values of plane k+1 (q, v, psi, zeta, the
 * queue's new p) are loaded into registers while plane k is computed; two barriers per
 * plane. */
template <int R>
__global__ void __launch_bounds__(TX *LBY, 2) k_layer(KArgs a, PArgs m, LBoxes lb, int dim0, int dim1, int dim2)
{
    constexpr int H2 = 2 * R, PW = TX + 2 * H2, PH = LBY + 2 * H2, NT = TX * LBY, Q = 4 * R;
    static_assert(LBY >= R, "the psi_y halo rows are computed by the first R thread rows");
    __shared__ float sp[2][PH][PW];        /* p(n) of planes k, k+1, halo 2R */
    __shared__ float sxp[LBY][TX + 2 * R]; /* psi_x(n+1), columns x0-R .. x0+TX+R-1 */
    __shared__ float syp[LBY + 2 * R][TX]; /* psi_y(n+1), rows y0-R .. y0+LBY+R-1 */
    int bid = blockIdx.x, w = 0;
    while (w + 1 < lb.n && bid >= lb.start[w + 1])
        w++;
    bid -= lb.start[w];
    Box b;
#pragma unroll
    for (int q = 0; q < 3; q++) {
        b.lo[q] = lb.b[w].lo[q];
        b.hi[q] = lb.b[w].hi[q];
    }
    const int gxn = lb.gx[w], gyn = lb.gy[w], zc = lb.zc[w];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TX + tx;
    const int x0 = b.lo[0] + (bid % gxn) * TX, y0 = b.lo[1] + (bid / gxn % gyn) * LBY;
    const int kb = b.lo[2] + (bid / (gxn * gyn)) * zc, ke = min(kb + zc, b.hi[2]);
    const int i = x0 + tx, j = y0 + ty, h = a.h;
    const bool colok = i < b.hi[0], rowok = j < b.hi[1], inside = colok && rowok;
    const int np0 = m.npad[0], np1 = m.npad[1], np2 = m.npad[2];
    const int wx0 = m.pml[0], wx1 = m.pml[1], wy0 = m.pml[2], wy1 = m.pml[3], wz0 = m.pml[4], wz1 = m.pml[5];
    const long long wxs = wx0 + wx1, wys = wy0 + wy1;
    /* Does the tile touch an x (y) layer?  Uniform over the block. */
    const bool bx = x0 < wx0 || x0 + TX - 1 >= np0 - wx1;
    const bool by = y0 < wy0 || y0 + LBY - 1 >= np1 - wy1;
    const float *__restrict__ p = a.p;
    const long long sy = a.sy, sz = a.sz;
    const long long cc = (long long)(j + h) * sy + (i + h); /* column of (i, j), plane 0 */
    const int jsx = cpml_slab_index(i, np0, wx0, wx1), jsy = cpml_slab_index(j, np1, wy0, wy1);
    const bool lx = inside && jsx >= 0, ly = inside && jsy >= 0;
    /* psi halos: columns xl, xr (threads tx < R, row j), rows yl, yr (threads ty < R,
     * column i). */
    const int xl = x0 - R + tx, xr = x0 + TX + tx, yl = y0 - R + ty, yr = y0 + LBY + ty;
    const int jxl = bx && tx < R && rowok ? cpml_slab_index(xl, np0, wx0, wx1) : -1;
    const int jxr = bx && tx < R && rowok ? cpml_slab_index(xr, np0, wx0, wx1) : -1;
    const int jyl = by && ty < R && colok ? cpml_slab_index(yl, np1, wy0, wy1) : -1;
    const int jyr = by && ty < R && colok ? cpml_slab_index(yr, np1, wy0, wy1) : -1;
    auto ex = [&](int y, int js, int k) { return ((long long)k * np1 + y) * wxs + js; };
    auto ey = [&](int x, int js, int k) { return ((long long)k * wys + js) * np0 + x; };
    auto ez = [&](int js) { return ((long long)js * np1 + j) * np0 + i; };
    /* p of this column at plane KK (0 outside the allocation; such values are never used). */
    auto pcol = [&](int kk) {
        const int g = kk + h;
        return inside && g >= 0 && g < dim2 ? __ldg(p + cc + (long long)g * sz) : 0.0f;
    };
    /* psi_AX(n+1) at coordinate X along AX from psi(n) OLD and the p neighbours P(+-l) */
    auto psi_next = [&](int ax, int x, float old, auto P) {
        float d1 = 0;
#pragma unroll
        for (int l = 1; l <= R; l++)
            d1 += a.c1[ax][l] * (P(l) - P(-l));
        return __ldg(m.pb[ax] + x) * old + __ldg(m.pa[ax] + x) * d1;
    };
    auto issue_tile = [&](int kk, int buf) {
        const long long pl = (long long)(kk + h) * sz;
#pragma unroll
        for (int e0 = 0; e0 < PH * PW; e0 += NT) {
            const int e = e0 + tid;
            if ((PH * PW) % NT == 0 || e < PH * PW) {
                const int r = e / PW, c = e % PW;
                const int gy = y0 - H2 + r + h, gx = x0 - H2 + c + h;
                const bool ok = gy >= 0 && gy < dim1 && gx >= 0 && gx < dim0;
                cp4(&sp[buf][r][c], ok ? p + pl + (long long)gy * sy + gx : p, ok);
            }
        }
    };
    /* What plane KK needs from global memory besides the tile, loaded a plane ahead. */
    struct Pt {
        float pn, qo, vv, zx, zy, zz, px, py, pxl, pxr, pyl, pyr, pzo;
    };
    auto fetch = [&](int kk, Pt &f) {
        const long long pl = (long long)(kk + h) * sz;
        const int jz = cpml_slab_index(kk, np2, wz0, wz1), jz2 = cpml_slab_index(kk + R, np2, wz0, wz1);
        f.pn = pcol(kk + 2 * R);
        f.qo = inside ? a.q[cc + pl] : 0.0f;
        f.vv = inside ? __ldg(a.vel + cc + pl) : 0.0f;
        f.zx = lx ? m.zeta[0][ex(j, jsx, kk)] : 0.0f;
        f.zy = ly ? m.zeta[1][ey(i, jsy, kk)] : 0.0f;
        f.zz = inside && jz >= 0 ? m.zeta[2][ez(jz)] : 0.0f;
        f.px = bx && lx ? __ldg(m.psi[0] + ex(j, jsx, kk)) : 0.0f;
        f.py = by && ly ? __ldg(m.psi[1] + ey(i, jsy, kk)) : 0.0f;
        f.pxl = jxl >= 0 ? __ldg(m.psi[0] + ex(j, jxl, kk)) : 0.0f;
        f.pxr = jxr >= 0 ? __ldg(m.psi[0] + ex(j, jxr, kk)) : 0.0f;
        f.pyl = jyl >= 0 ? __ldg(m.psi[1] + ey(i, jyl, kk)) : 0.0f;
        f.pyr = jyr >= 0 ? __ldg(m.psi[1] + ey(i, jyr, kk)) : 0.0f;
        f.pzo = inside && jz2 >= 0 ? __ldg(m.psi[2] + ez(jz2)) : 0.0f; /* psi_z(n) at kk + R */
    };
    issue_tile(kb, 0);
    cp_commit();
    float qz[Q + 1], pz[2 * R + 1]; /* p(k - 2R + u); psi_z(n+1)(k - R + u) */
#pragma unroll
    for (int u = 0; u < Q; u++)
        qz[u] = pcol(kb - 2 * R + u);
#pragma unroll
    for (int u = 0; u < 2 * R; u++) {
        const int kk = kb - R + u, js = cpml_slab_index(kk, np2, wz0, wz1);
        pz[u] = inside && js >= 0 ? psi_next(2, kk, __ldg(m.psi[2] + ez(js)), [&](int l) { return qz[u + R + l]; })
                                  : 0.0f;
    }
    Pt cur;
    fetch(kb, cur);
    Pt nxt = cur;
    int buf = 0;
    for (int k = kb; k < ke; k++) {
        cp_wait<0>();
        __syncthreads(); /* tile k is in; everyone is done with plane k-1's shared arrays */
        if (k + 1 < ke) {
            issue_tile(k + 1, buf ^ 1);
            fetch(k + 1, nxt);
        }
        cp_commit();
        const long long pl = (long long)(k + h) * sz;
        const int jsz = cpml_slab_index(k, np2, wz0, wz1); /* uniform */
        const bool lz = inside && jsz >= 0;
        qz[Q] = cur.pn;
        const int tr = ty + H2, tc = tx + H2; /* this point in the p tile */
        const float(*T)[PW] = sp[buf];
        if (bx) {
            float v = 0.0f;
            if (lx) {
                v = psi_next(0, i, cur.px, [&](int l) { return T[tr][tc + l]; });
                m.psi_out[0][ex(j, jsx, k)] = v;
            }
            sxp[ty][tx + R] = v;
            if (tx < R) {
                sxp[ty][tx] = jxl >= 0 ? psi_next(0, xl, cur.pxl, [&](int l) { return T[tr][R + tx + l]; }) : 0.0f;
                sxp[ty][TX + R + tx] =
                    jxr >= 0 ? psi_next(0, xr, cur.pxr, [&](int l) { return T[tr][H2 + TX + tx + l]; }) : 0.0f;
            }
        }
        if (by) {
            float v = 0.0f;
            if (ly) {
                v = psi_next(1, j, cur.py, [&](int l) { return T[tr + l][tc]; });
                m.psi_out[1][ey(i, jsy, k)] = v;
            }
            syp[ty + R][tx] = v;
            if (ty < R) {
                syp[ty][tx] = jyl >= 0 ? psi_next(1, yl, cur.pyl, [&](int l) { return T[R + ty + l][tc]; }) : 0.0f;
                syp[LBY + R + ty][tx] =
                    jyr >= 0 ? psi_next(1, yr, cur.pyr, [&](int l) { return T[H2 + LBY + ty + l][tc]; }) : 0.0f;
            }
        }
        {
            /* push psi_z(n+1) of plane k + R, from the p queue (planes k .. k+2R) */
            const int kk = k + R, js = cpml_slab_index(kk, np2, wz0, wz1);
            pz[2 * R] = js >= 0 && inside ? psi_next(2, kk, cur.pzo, [&](int l) { return qz[3 * R + l]; }) : 0.0f;
        }
        if (lz)
            m.psi_out[2][ez(jsz)] = pz[R];
        __syncthreads(); /* psi(n+1) of the neighbours is in */
        if (inside) {
            const float pc = qz[2 * R];
            /* d2 along axis AX from the neighbours P(+-l), and in that axis's layers
             * (IN) the stretched terms: dpsi from psi(n+1) S(+-l), zeta(n+1) from ZOLD
             * into *Z() */
            auto term = [&](int ax, int x, bool in, float zold, auto P, auto S, auto Z) {
                float d2 = a.c2[ax][0] * pc;
#pragma unroll
                for (int l = 1; l <= R; l++)
                    d2 += a.c2[ax][l] * (P(l) + P(-l));
                if (!in)
                    return d2;
                float dpsi = 0;
#pragma unroll
                for (int l = 1; l <= R; l++)
                    dpsi += a.c1[ax][l] * (S(l) - S(-l));
                const float t = d2 + dpsi, z = __ldg(m.pb[ax] + x) * zold + __ldg(m.pa[ax] + x) * t;
                *Z() = z;
                return t + z;
            };
            float lap = 0;
            lap += term(
                1, j, ly, cur.zy, [&](int l) { return T[tr + l][tc]; }, [&](int l) { return syp[ty + R + l][tx]; },
                [&] { return &m.zeta[1][ey(i, jsy, k)]; });
            lap += term(
                2, k, lz, cur.zz, [&](int l) { return qz[2 * R + l]; }, [&](int l) { return pz[R + l]; },
                [&] { return &m.zeta[2][ez(jsz)]; });
            lap += term(
                0, i, lx, cur.zx, [&](int l) { return T[tr][tc + l]; }, [&](int l) { return sxp[ty][tx + R + l]; },
                [&] { return &m.zeta[0][ex(j, jsx, k)]; });
            a.q[cc + pl] = 2.0f * pc - cur.qo + cur.vv * lap;
        }
#pragma unroll
        for (int u = 0; u < Q; u++)
            qz[u] = qz[u + 1];
#pragma unroll
        for (int u = 0; u < 2 * R; u++)
            pz[u] = pz[u + 1];
        cur = nxt;
        buf ^= 1;
    }
    cp_wait<0>();
}

/* ---- fused: launcher ---------------------------------------------------------------- */

/* The 6 face boxes of the layers (z layers whole, y layers within the inner z range, x
 * layers within inner y and z): every layer point in exactly one. */
static int face_boxes(const wave_sim *s, const Box &in, Box out[6])
{
    const struct wave_layout *L = &s->L;
    int n = 0;
    for (int ax = 2; ax >= 0; ax--)
        for (int side = 0; side < 2; side++) {
            int w = L->pml[2 * ax + side];
            if (!w)
                continue;
            Box b;
            for (int q = 0; q < 3; q++) {
                if (q == ax) {
                    b.lo[q] = side ? L->npad[q] - w : 0;
                    b.hi[q] = side ? L->npad[q] : w;
                } else if (q > ax) {
                    b.lo[q] = in.lo[q];
                    b.hi[q] = in.hi[q];
                } else {
                    b.lo[q] = 0;
                    b.hi[q] = L->npad[q];
                }
            }
            if (!box_empty(b))
                out[n++] = b;
        }
    return n;
}

/* Fused CPML: one k_layer launch over the face boxes, then psi(n+1) becomes psi. */
template <int R>
static int launch_layers(wave_sim *s, const WavePlan &pl, const Box &in, const KArgs &a, const PArgs &m,
                         cudaStream_t st)
{
    Box fb[6];
    int nb = face_boxes(s, in, fb);
    LBoxes lb;
    memset(&lb, 0, sizeof lb);
    long long tot = 0;
    for (int w = 0; w < nb; w++) {
        const Box &b = fb[w];
        int depth = b.hi[2] - b.lo[2];
        lb.b[w] = b;
        lb.gx[w] = (b.hi[0] - b.lo[0] + TX - 1) / TX;
        lb.gy[w] = (b.hi[1] - b.lo[1] + LBY - 1) / LBY;
        lb.zc[w] = depth < pl.zchunk ? depth : pl.zchunk;
        lb.start[w] = (int)tot;
        tot += (long long)lb.gx[w] * lb.gy[w] * ((depth + lb.zc[w] - 1) / lb.zc[w]);
    }
    lb.n = nb;
    lb.start[nb] = (int)tot;
    if (!tot)
        return 0;
    k_layer<R><<<(unsigned)tot, dim3(TX, LBY), 0, st>>>(a, m, lb, s->L.dim[0], s->L.dim[1], s->L.dim[2]);
    CUDA_TRY_LAUNCH();
    wave_cu_swap_psi(s);
    return 0;
}

/* ---- the hooks --------------------------------------------------------------------- */

/* k_ring in tile T and depth D.  An order's default pair is the library's (the plan
 * never sends it here), so it is not instantiated twice. */
template <int R, int T, int D>
static int ring_variant(const Box &in, const KArgs &a, const wave_sim *s, cudaStream_t st)
{
    if constexpr (T == ring_default_tile(R) && D == ring_default_depth(R))
        return err_set(-EINVAL, "wave research: ring %s depth %d is the library's own at order %d",
                       wave_tile_name(T), D, 2 * R);
    else
        return launch_ring<R, tile_by(T), tile_ny(T), D>(in, a, s, st);
}

template <int R, int T>
static int ring_depth(const Box &in, const KArgs &a, const wave_sim *s, cudaStream_t st, int d)
{
    switch (d) {
    case 1: return ring_variant<R, T, 1>(in, a, s, st);
    case 2: return ring_variant<R, T, 2>(in, a, s, st);
    default: return ring_variant<R, T, 3>(in, a, s, st);
    }
}

template <int R>
static int interior_r(const wave_sim *s, const WavePlan &pl, const Box &in, const KArgs &a, cudaStream_t st)
{
    const int d = pl.depth;
    if (pl.ring) {
        switch (pl.tile) {
        case WAVE_TILE_8x2: return ring_depth<R, WAVE_TILE_8x2>(in, a, s, st, d);
        case WAVE_TILE_8x4: return ring_depth<R, WAVE_TILE_8x4>(in, a, s, st, d);
        default: return ring_depth<R, WAVE_TILE_4x4>(in, a, s, st, d);
        }
    }
    const int sms = sm_count(s);
    const bool d2 = d == 2;
    switch (pl.tile) {
    case WAVE_TILE_16x1:
        return d2 ? launch_tiled<R, 16, 1, 2>(in, a, sms, st) : launch_tiled<R, 16, 1, 1>(in, a, sms, st);
    case WAVE_TILE_8x1:
        return d2 ? launch_tiled<R, 8, 1, 2>(in, a, sms, st) : launch_tiled<R, 8, 1, 1>(in, a, sms, st);
    case WAVE_TILE_8x2:
        return d2 ? launch_tiled<R, 8, 2, 2>(in, a, sms, st) : launch_tiled<R, 8, 2, 1>(in, a, sms, st);
    default: return d2 ? launch_tiled<R, 4, 4, 2>(in, a, sms, st) : launch_tiled<R, 4, 4, 1>(in, a, sms, st);
    }
}

/* 2D: the ring in rows of RING2D_W at a depth other than the order's default. */
template <int R, int D>
static int ring2d_variant(const Box &in, const KArgs &a, const wave_sim *s, cudaStream_t st)
{
    if constexpr (D == ring_default_depth(R))
        return err_set(-EINVAL, "wave research: 2D ring depth %d is the library's own at order %d", D, 2 * R);
    else
        return launch_ring<R, 1, 1, D, false, RING2D_W>(in, a, s, st);
}

template <int R>
static int interior_2d(const WavePlan &pl, const Box &in, const KArgs &a, const wave_sim *s, cudaStream_t st)
{
    switch (pl.depth) {
    case 1: return ring2d_variant<R, 1>(in, a, s, st);
    case 2: return ring2d_variant<R, 2>(in, a, s, st);
    default: return ring2d_variant<R, 3>(in, a, s, st);
    }
}

static int research_interior(const wave_sim *s, const WavePlan &pl, const Box &in, cudaStream_t st)
{
    const KArgs a = kargs(s);
    if (pl.two_d) /* the plan sends only ring depths here in 2D */
        return with_r(s, [&](auto r) { return interior_2d<decltype(r)::value>(pl, in, a, s, st); });
    return with_r(s, [&](auto r) { return interior_r<decltype(r)::value>(s, pl, in, a, st); });
}

static int research_fused(wave_sim *s, const WavePlan &pl, const Box &in, cudaStream_t st)
{
    const KArgs a = kargs(s);
    const PArgs m = pargs(s);
    return with_r(s, [&](auto r) { return launch_layers<decltype(r)::value>(s, pl, in, a, m, st); });
}

/* ---- ring CPML: other frame / z-layer shapes (order 8) --------------------------------- */

typedef int (*RingShapeFn)(wave_sim *, const WavePlan &, const KArgs &, const PArgs &, cudaStream_t, cudaStream_t);
static const struct {
    const char *name;
    RingShapeFn run;
} ring_shapes[] = {
    {"8x1d2/8x1d2", ring_cpml_run<4, 8, 1, 2, 8, 1, 2>}, {"8x2d2/8x1d2", ring_cpml_run<4, 8, 2, 2, 8, 1, 2>},
    {"8x2d1/lines", ring_cpml_run<4, 8, 2, 1, 0, 1, 1>}, {"8x1d2b3/lines", ring_cpml_run<4, 8, 1, 2, 0, 1, 1, 3, 2>},
    {"8x2d3/lines", ring_cpml_run<4, 8, 2, 3, 0, 1, 1>}, {"8x2d1/8x1d2", ring_cpml_run<4, 8, 2, 1, 8, 1, 2>},
    {"8x1d1/8x1d2", ring_cpml_run<4, 8, 1, 1, 8, 1, 2>}, {"8x1d3/8x1d2", ring_cpml_run<4, 8, 1, 3, 8, 1, 2>},
    {"8x1d2/8x1d1", ring_cpml_run<4, 8, 1, 2, 8, 1, 1>}, {"8x1d2/8x2d1", ring_cpml_run<4, 8, 1, 2, 8, 2, 1>},
    {"8x1d2/8x1d3", ring_cpml_run<4, 8, 1, 2, 8, 1, 3>}, {"8x1d2/lines", ring_cpml_run<4, 8, 1, 2, 0, 1, 1>},
    /* bN: built for N resident blocks per SM (fewer registers, more warps) */
    {"8x1d2b3/8x1d2", ring_cpml_run<4, 8, 1, 2, 8, 1, 2, 3, 2>},
    {"8x1d2/8x1d1b3", ring_cpml_run<4, 8, 1, 2, 8, 1, 1, 2, 3>},
    {"8x1d2b3/8x1d1b3", ring_cpml_run<4, 8, 1, 2, 8, 1, 1, 3, 3>},
    /* shfl: the frame kernel before issue 20 (psi_x(n+1) of the neighbours by shuffles,
     * psi_y(n+1) recomputed by each thread over its rows' R halo) */
    {"8x2d2/lines-shfl", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, false>},
    {"4x4d2/lines", ring_cpml_run<4, 4, 4, 2, 0, 1, 1>},
    /* frame tiles 12 rows high: the default 12 layers' y strips without plain rows */
    {"6x2d2/lines", ring_cpml_run<4, 6, 2, 2, 0, 1, 1>},
    {"4x3d2/lines", ring_cpml_run<4, 4, 3, 2, 0, 1, 1>},
    /* w16: the x strips in tiles 16 wide (two rows a warp), so that 12 x layers fill one
     * tile per face (-4 .. 11 with halo 4) and the core starts at x = 12 */
    {"8x2d2w16/lines", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, 16>},
    {"6x2d2w16/lines", ring_cpml_run<4, 6, 2, 2, 0, 1, 1, 2, 2, true, 16>},
    /* /xBYxNYdD[bN]: the y strips whole in x by the frame kernel, the x strips between
     * them by the kernel without y terms (k_ring_cpml<LY = false>: an R halo in y, no
     * psi_y) in tiles BY x NY rows, depth D, built for N blocks an SM (issue 20) */
    {"8x2d2/lines/x8x2d2", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 8, 2, 2, 2>},
    {"8x2d2/lines/x8x2d2b3", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 8, 2, 2, 3>},
    {"8x2d2/lines/x8x4d2", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 8, 4, 2, 2>},
    {"8x2d2/lines/x8x4d2b3", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 8, 4, 2, 3>},
    /* p: the x (and y) memory's 16-byte copies worked out once a block (k_ring_cpml<PM>) */
    {"8x2d2/lines/x8x2d2p", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 8, 2, 2, 2, true>},
    {"8x2d2/lines/x8x2d2b3p", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 8, 2, 2, 3, true>},
    {"8x2d2p/lines/x8x2d2b3p", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 8, 2, 2, 3, true, true>},
    /* the library's order-8 default before session 12 (the frame's memory copies indexed
     * per plane, the generic z lines), and each of the two changes alone */
    {"8x2d2/lines", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 0, 2, 2, 2, false, false>},
    /* z12: lines' z kernel with its march unrolled whole for 12-wide z layers (bN: built
     * for N blocks an SM) */
    {"8x2d2p/lines-z12", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 0, 2, 2, 2, false, true, 12>},
    {"8x2d2/lines-z12", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 0, 2, 2, 2, false, false, 12>},
    {"8x2d2p/lines-z12b8", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 0, 2, 2, 2, false, true, 12, false, 8>},
    {"8x2d2p/lines-zb8", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 0, 2, 2, 2, false, true, 0, false, 8>},
    /* h: the frame's p tile loads its outer halo (the psi(n+1) halo, R .. 2R beyond the
     * tile) only along the axes whose layers the tile holds */
    {"8x2d2ph/lines", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 0, 2, 2, 2, false, true, 0, true>},
    /* zo: the z-layer planes first, lines' z corrections beside the middle planes (session
     * 13, issue 20) */
    {"8x2d2p/lines-zo", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 0, 2, 2, 2, false, true, 0, false, 0, 1>},
    /* zo2: each face's z lines right after that face's planes (q, v, p still in L2) */
    {"8x2d2p/lines-zo2", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 0, 2, 2, 2, false, true, 0, false, 0, 2>},
    /* lzN: the core's columns in the z layers and N planes beyond by k_ring_lz (the z terms
     * in the core's pass, kernels/wave_ring_lz.cuh), z lines over the frame's columns only */
    {"8x2d2p/lines-lz16", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 0, 2, 2, 2, false, true, 0, false, 0, 0, 16>},
    {"8x2d2p/lines-lz36", ring_cpml_run<4, 8, 2, 2, 0, 1, 1, 2, 2, true, TX, 0, 2, 2, 2, false, true, 0, false, 0, 0, 36>},
};
static int ring_shape = -1; /* index into ring_shapes, -1: the library's */

extern "C" int wave_research_ring_shape(const char *spec)
{
    ring_shape = -1;
    if (!spec || !strcmp(spec, "default") || !strcmp(spec, "8x2d2p/lines"))
        return 0;
    for (size_t i = 0; i < sizeof ring_shapes / sizeof *ring_shapes; i++)
        if (!strcmp(spec, ring_shapes[i].name)) {
            ring_shape = (int)i;
            return 0;
        }
    char list[768] = "";
    for (size_t i = 0; i < sizeof ring_shapes / sizeof *ring_shapes; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", ring_shapes[i].name);
    return err_set(-EINVAL, "ring shape '%s': default (8x2d2p/lines) or one of %s", spec, list);
}

static int research_ring_cpml(wave_sim *s, const WavePlan &pl, cudaStream_t st, cudaStream_t lst)
{
    if (ring_shape < 0)
        return 0;
    if (s->r != 4)
        return err_set(-EINVAL, "ring shape %s: held at order 8 only (order %d)", ring_shapes[ring_shape].name,
                       2 * s->r);
    const int rc = ring_shapes[ring_shape].run(s, pl, kargs(s), pargs(s), st, lst);
    return rc < 0 ? rc : 1;
}

extern "C" int wave_research_register(void)
{
    static const WaveResearch hooks = {research_interior, research_fused, research_ring_cpml};
    wave_cu_set_research(&hooks);
    return 0;
}
