/* wave_cpml — the boundary kernels of the CUDA propagator: the CPML in the absorbing
 * layers (Pasalic & McGarry 2010, the arithmetic of the CPU reference, kernels/wave.c)
 * in three arrangements, and the free-surface mirror.
 *
 *   lines  (the tiled kernel's default) the interior kernel first updates the whole
 *          padded grid with the plain Laplacian; then per axis a line kernel over that
 *          axis's layers only adds the stretched terms (psi and zeta read and written
 *          once per layer point; no extra full-volume pass);
 *   split  (the naive kernel's) a k_psi pass, then k_pml over the layers beside the
 *          interior box;
 *   fused  k_layer: psi(n+1) and the stretched update in one pass over the layers
 *          beside the interior box. */
#include "kernels/wave_cuda.h"

#include "kernels/cpml.h"

/* ---- CPML ------------------------------------------------------------------------------ */

/* psi <- b psi + a dp/dx_A over the layers of axis A (box over the slab: x = slab index
 * for axis A). */
template <int R, int ax>
__global__ void k_psi(KArgs a, PArgs m, int n0, int n1, int n2)
{
    int u = blockIdx.x * blockDim.x + threadIdx.x, v = blockIdx.y * blockDim.y + threadIdx.y,
        w = blockIdx.z;
    if (u >= n0 || v >= n1 || w >= n2)
        return;
    int ijk[3] = {u, v, w};
    int js = ijk[ax];
    int wlo = m.pml[2 * ax], whi = m.pml[2 * ax + 1];
    ijk[ax] = js < wlo ? js : m.npad[ax] - whi + (js - wlo);
    const long long st[3] = {1, a.sy, a.sz};
    long long c = (long long)(ijk[2] + a.h) * a.sz + (long long)(ijk[1] + a.h) * a.sy + (ijk[0] + a.h);
    float d1 = 0;
#pragma unroll
    for (int l = 1; l <= R; l++)
        d1 += a.c1[ax][l] * (a.p[c + l * st[ax]] - a.p[c - l * st[ax]]);
    long long e = slab_elem(m, ax, ijk[0], ijk[1], ijk[2], js);
    int x = ijk[ax];
    m.psi[ax][e] = m.pb[ax][x] * m.psi[ax][e] + m.pa[ax][x] * d1;
}

/* The stretched update of one axis group of the layers: box B is in slab-index space
 * along axis AX ([0, wlo + whi), both faces in one launch, the storage order of that
 * axis's CPML memory) and in padded coordinates along the other two. */
template <int R>
__global__ void k_pml(KArgs a, PArgs m, int gax, Box b)
{
    int ijk[3] = {b.lo[0] + (int)(blockIdx.x * blockDim.x + threadIdx.x),
                  b.lo[1] + (int)(blockIdx.y * blockDim.y + threadIdx.y), b.lo[2] + (int)blockIdx.z};
    if (ijk[0] >= b.hi[0] || ijk[1] >= b.hi[1])
        return;
    {
        int js = ijk[gax], wlo = m.pml[2 * gax], whi = m.pml[2 * gax + 1];
        ijk[gax] = js < wlo ? js : m.npad[gax] - whi + (js - wlo);
    }
    const int i = ijk[0], j = ijk[1], k = ijk[2];
    const long long st[3] = {1, a.sy, a.sz};
    const long long sst[3] = {1, m.npad[0], (long long)m.npad[0] * m.npad[1]};
    long long c = (long long)(k + a.h) * a.sz + (long long)(j + a.h) * a.sy + (i + a.h);
    const float *__restrict__ p = a.p;
    float lap = 0;
#pragma unroll
    for (int ax = 0; ax < 3; ax++) {
        float d2 = a.c2[ax][0] * __ldg(p + c);
#pragma unroll
        for (int l = 1; l <= R; l++)
            d2 += a.c2[ax][l] * (__ldg(p + c + l * st[ax]) + __ldg(p + c - l * st[ax]));
        const int np = m.npad[ax], wlo = m.pml[2 * ax], whi = m.pml[2 * ax + 1];
        const int x = ijk[ax];
        const int js = cpml_slab_index(x, np, wlo, whi);
        if (js < 0) {
            lap += d2;
            continue;
        }
        const long long e = slab_elem(m, ax, i, j, k, js);
        const float *__restrict__ psi = m.psi[ax];
        float dpsi = 0;
#pragma unroll
        for (int l = 1; l <= R; l++) {
            int xu = x + l, xd = x - l;
            float up = 0, dn = 0;
            if (xu < np && (xu < wlo || xu >= np - whi))
                up = __ldg(psi + e + (long long)(cpml_slab_index(xu, np, wlo, whi) - js) * sst[ax]);
            if (xd >= 0 && (xd < wlo || xd >= np - whi))
                dn = __ldg(psi + e - (long long)(js - cpml_slab_index(xd, np, wlo, whi)) * sst[ax]);
            dpsi += a.c1[ax][l] * (up - dn);
        }
        float t = d2 + dpsi;
        float z = m.pb[ax][x] * m.zeta[ax][e] + m.pa[ax][x] * t;
        m.zeta[ax][e] = z;
        lap += t + z;
    }
    a.q[c] = 2.0f * __ldg(p + c) - a.q[c] + __ldg(a.vel + c) * lap;
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

/* cp.async of 4 bytes (any alignment), zero-filled when !OK. */
__device__ __forceinline__ void cp4(float *sdst, const float *gsrc, bool ok)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(sdst);
    int n = ok ? 4 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gsrc), "r"(n) : "memory");
}

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

/* ---- CPML as line corrections after a full-grid interior update ------------------------ */

/* The "lines" arrangement: the interior kernel (k_ring, the fast one) first updates the
 * WHOLE padded grid with the plain Laplacian, q = 2p - q + v^2dt^2 sum_a d2_a; then, for
 * each axis A in turn (x, y, z on the same stream, so the q updates of corner points are
 * ordered), one thread per grid line along A marches through that line's layer points
 * and adds the stretched terms of axis A:
 *     q += v^2dt^2 (dpsi_A + zeta_A(n+1)),  zeta_A(n+1) = b zeta_A + a (d2_A + dpsi_A),
 * which is the CPU reference's update (lap = sum over layer axes of d2 + dpsi + zeta,
 * plain d2 elsewhere) in a different summation order.  Along its own line a thread
 * holds register queues of p (x-2R .. x+2R) and of psi_A(n+1) (x-R .. x+R), so every
 * psi neighbour it needs is its own and psi_A and zeta_A are read and written once (x:
 * k_line_x, a warp per row).
 * psi(n+1) goes to the other psi buffer (m.psi_out): a line's second layer reads psi(n)
 * near the first when the interior is thinner than R.  Threads run over the other two
 * axes, x in threadIdx.x (coalesced). */
/* positions per load batch in k_line (8 measured the same on the H100) */
#define LU 4

template <int R, int A>
__global__ void __launch_bounds__(128) k_line(KArgs a, PArgs m, int dimA)
{
    static_assert(A == 1 || A == 2, "x lines: k_line_x");
    const int uu = blockIdx.x * blockDim.x + threadIdx.x, vv = blockIdx.y;
    const int np0 = m.npad[0], np1 = m.npad[1];
    const int nu = np0;
    if (uu >= nu)
        return;
    const int h = a.h;
    const long long sy = a.sy, sz = a.sz;
    const int np = m.npad[A], wlo = m.pml[2 * A], whi = m.pml[2 * A + 1];
    /* field index of coordinate 0 along A, its stride; slab element of slab index 0, its
     * stride */
    long long c0, st, e0, est;
    if (A == 1) { /* uu = i, vv = k */
        c0 = (long long)(vv + h) * sz + (long long)h * sy + (uu + h);
        st = sy;
        e0 = (long long)vv * (wlo + whi) * np0 + uu;
        est = np0;
    } else { /* uu = i, vv = j */
        c0 = (long long)h * sz + (long long)(vv + h) * sy + (uu + h);
        st = sz;
        e0 = (long long)vv * np0 + uu;
        est = (long long)np0 * np1;
    }
    const float *__restrict__ p = a.p;
    const float *__restrict__ psi = m.psi[A];
    const float *__restrict__ pa = m.pa[A];
    const float *__restrict__ pb = m.pb[A];
    auto P = [&](int x) { /* p at coordinate x of the line (0 outside the allocation) */
        return x + h >= 0 && x + h < dimA ? __ldg(p + c0 + (long long)x * st) : 0.0f;
    };
    /* the low and the high layer of a line are independent (disjoint points, psi(n)
     * only read): blockIdx.z picks one, so twice as many lines march at once */
    {
        const int seg = blockIdx.z;
        const int s0 = seg ? np - whi : 0, s1 = seg ? np : wlo;
        if (s1 <= s0)
            return;
        float pq[4 * R + 1], sq[2 * R + 1]; /* p(x - 2R + u), psi_A(n+1)(x - R + u) */
#pragma unroll
        for (int u = 0; u < 4 * R; u++)
            pq[u] = P(s0 - 2 * R + u);
#pragma unroll
        for (int u = 0; u < 2 * R; u++) {
            const int y = s0 - R + u, js = cpml_slab_index(y, np, wlo, whi);
            float v = 0.0f;
            if (js >= 0) {
                float d1 = 0;
#pragma unroll
                for (int l = 1; l <= R; l++)
                    d1 += a.c1[A][l] * (pq[u + R + l] - pq[u + R - l]);
                v = __ldg(pb + y) * __ldg(psi + e0 + js * est) + __ldg(pa + y) * d1;
            }
            sq[u] = v;
        }
        /* LU positions at a time: all their loads first (the compiler cannot move a load
         * above the previous position's stores, which might alias), then the updates. */
        for (int xb = s0; xb < s1; xb += LU) {
            float pn[LU], po[LU], zo[LU], qo[LU], vo[LU];
#pragma unroll
            for (int u = 0; u < LU; u++) {
                const int x = xb + u, y = x + R, jy = cpml_slab_index(y, np, wlo, whi);
                pn[u] = P(x + 2 * R);
                po[u] = jy >= 0 ? __ldg(psi + e0 + jy * est) : 0.0f;
                const bool ok = x < s1;
                const int js = ok ? cpml_slab_index(x, np, wlo, whi) : 0;
                const long long c = c0 + (long long)x * st;
                zo[u] = ok ? m.zeta[A][e0 + js * est] : 0.0f;
                qo[u] = ok ? a.q[c] : 0.0f;
                vo[u] = ok ? __ldg(a.vel + c) : 0.0f;
            }
#pragma unroll
            for (int u = 0; u < LU; u++) {
                const int x = xb + u;
                if (x >= s1) /* uniform: every line has the same layers */
                    break;
                pq[4 * R] = pn[u];
                {
                    const int y = x + R, js = cpml_slab_index(y, np, wlo, whi);
                    float v = 0.0f;
                    if (js >= 0) {
                        float d1 = 0;
#pragma unroll
                        for (int l = 1; l <= R; l++)
                            d1 += a.c1[A][l] * (pq[3 * R + l] - pq[3 * R - l]);
                        v = __ldg(pb + y) * po[u] + __ldg(pa + y) * d1;
                    }
                    sq[2 * R] = v;
                }
                const int js = cpml_slab_index(x, np, wlo, whi);
                const long long e = e0 + js * est, c = c0 + (long long)x * st;
                float d2 = a.c2[A][0] * pq[2 * R], dpsi = 0;
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    d2 += a.c2[A][l] * (pq[2 * R + l] + pq[2 * R - l]);
                    dpsi += a.c1[A][l] * (sq[R + l] - sq[R - l]);
                }
                const float t = d2 + dpsi, z = __ldg(pb + x) * zo[u] + __ldg(pa + x) * t;
                m.zeta[A][e] = z;
                m.psi_out[A][e] = sq[R];
                a.q[c] = qo[u] + vo[u] * (dpsi + z);
#pragma unroll
                for (int w = 0; w < 4 * R; w++)
                    pq[w] = pq[w + 1];
#pragma unroll
                for (int w = 0; w < 2 * R; w++)
                    sq[w] = sq[w + 1];
            }
        }
    }
}

/* The x corrections of the lines arrangement, coalesced: a warp per grid row (j, k);
 * lane t of a chunk owns x = base - R + t, computes psi_x(n+1) there from p(n) and
 * psi_x(n), and the lanes R .. 31-R, whose R neighbours on both sides are lanes of the
 * same warp, take dpsi_x from their neighbours by shuffles and update zeta_x and q. */
template <int R>
__global__ void __launch_bounds__(128) k_line_x(KArgs a, PArgs m, int dim0)
{
    constexpr int OUT = 32 - 2 * R; /* points finished per chunk */
    const int lane = threadIdx.x & 31;
    const int np0 = m.npad[0], np1 = m.npad[1], np2 = m.npad[2];
    const long long row = (long long)blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5); /* k np1 + j */
    if (row >= (long long)np1 * np2)
        return; /* the whole warp */
    const int j = (int)(row % np1), k = (int)(row / np1), h = a.h;
    const int wlo = m.pml[0], whi = m.pml[1];
    const long long c0 = (long long)(k + h) * a.sz + (long long)(j + h) * a.sy + h;
    const long long e0 = row * (wlo + whi);
    const float *__restrict__ p = a.p;
    for (int seg = 0; seg < 2; seg++) { /* one warp, both layers of its row (measured:
                                           a block per layer was 25 % slower) */
        const int s0 = seg ? np0 - whi : 0, s1 = seg ? np0 : wlo;
        for (int base = s0; base < s1; base += OUT) {
            const int x = base - R + lane;
            float pv[2 * R + 1];
#pragma unroll
            for (int u = 0; u <= 2 * R; u++) {
                const int g = x - R + u + h;
                pv[u] = g >= 0 && g < dim0 ? __ldg(p + c0 + (x - R + u)) : 0.0f;
            }
            const int js = cpml_slab_index(x, np0, wlo, whi);
            float psn = 0.0f;
            if (js >= 0) {
                float d1 = 0;
#pragma unroll
                for (int l = 1; l <= R; l++)
                    d1 += a.c1[0][l] * (pv[R + l] - pv[R - l]);
                psn = __ldg(m.pb[0] + x) * __ldg(m.psi[0] + e0 + js) + __ldg(m.pa[0] + x) * d1;
            }
            float dpsi = 0;
#pragma unroll
            for (int l = 1; l <= R; l++)
                dpsi += a.c1[0][l] * (__shfl_down_sync(0xffffffffu, psn, l) - __shfl_up_sync(0xffffffffu, psn, l));
            if (lane >= R && lane < 32 - R && x < s1) {
                float d2 = a.c2[0][0] * pv[R];
#pragma unroll
                for (int l = 1; l <= R; l++)
                    d2 += a.c2[0][l] * (pv[R + l] + pv[R - l]);
                const long long e = e0 + js, c = c0 + x;
                const float t = d2 + dpsi, z = __ldg(m.pb[0] + x) * m.zeta[0][e] + __ldg(m.pa[0] + x) * t;
                m.zeta[0][e] = z;
                m.psi_out[0][e] = psn;
                a.q[c] += __ldg(a.vel + c) * (dpsi + z);
            }
        }
    }
}

__global__ void k_free_surface(float *q, long long plane, int h)
{
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= plane)
        return;
    q[(long long)h * plane + e] = 0.0f;
    for (int m = 1; m <= h; m++)
        q[(long long)(h - m) * plane + e] = -q[(long long)(h + m) * plane + e];
}

/* ---- launchers ----------------------------------------------------------------------- */

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

/* psi(n+1) was written to psi_alt: it becomes psi (the fused and lines arrangements). */
static void swap_psi(wave_sim *s)
{
    for (int ax = 0; ax < 3; ax++) {
        float *t = s->psi[ax];
        s->psi[ax] = s->psi_alt[ax];
        s->psi_alt[ax] = t;
    }
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
    swap_psi(s);
    return 0;
}

/* Lines CPML: after the interior kernel has updated the whole grid, the corrections of
 * x, y and z in turn (same stream), then psi(n+1) becomes psi. */
template <int R>
static int launch_lines(wave_sim *s, const KArgs &a, const PArgs &m, cudaStream_t st)
{
    const struct wave_layout *L = &s->L;
    for (int ax = 0; ax < 3; ax++) {
        if (!s->slab_count[ax])
            continue;
        const int nu = L->npad[0], nv = ax == 2 ? L->npad[1] : L->npad[2];
        dim3 blk(128), grd((nu + 127) / 128, nv, 2);
        if (ax == 0) {
            long long rows = (long long)L->npad[1] * L->npad[2];
            k_line_x<R><<<(unsigned)((rows + 3) / 4), 128, 0, st>>>(a, m, L->dim[0]);
        } else if (ax == 1)
            k_line<R, 1><<<grd, blk, 0, st>>>(a, m, L->dim[1]);
        else
            k_line<R, 2><<<grd, blk, 0, st>>>(a, m, L->dim[2]);
        CUDA_TRY_LAUNCH();
    }
    swap_psi(s);
    return 0;
}

/* Split CPML (the straightforward arrangement): psi in place in the layers, then the
 * stretched update of the 3 axis groups. */
template <int R>
static int launch_split(wave_sim *s, const Box &in, const KArgs &a, const PArgs &m, cudaStream_t st)
{
    const struct wave_layout *L = &s->L;
    for (int ax = 0; ax < 3; ax++) {
        if (!s->slab_count[ax])
            continue;
        int n[3] = {L->npad[0], L->npad[1], L->npad[2]};
        n[ax] = L->pml[2 * ax] + L->pml[2 * ax + 1];
        dim3 blk(32, 8), grd((n[0] + 31) / 32, (n[1] + 7) / 8, n[2]);
        /* the axis a template argument: ijk[ax] then lives in registers, not in local
         * memory (H100, 512^3, 8th order: x/y/z 196/147/155 -> 83/56/66 us) */
        if (ax == 0)
            k_psi<R, 0><<<grd, blk, 0, st>>>(a, m, n[0], n[1], n[2]);
        else if (ax == 1)
            k_psi<R, 1><<<grd, blk, 0, st>>>(a, m, n[0], n[1], n[2]);
        else
            k_psi<R, 2><<<grd, blk, 0, st>>>(a, m, n[0], n[1], n[2]);
        CUDA_TRY_LAUNCH();
    }
    /* The layers as 3 disjoint groups, both faces of an axis in one launch: z layers
     * whole, y layers within the inner z range, x layers within inner y and z. */
    for (int ax = 2; ax >= 0; ax--) {
        int w = L->pml[2 * ax] + L->pml[2 * ax + 1];
        if (!w)
            continue;
        Box b;
        for (int q = 0; q < 3; q++) {
            if (q == ax) {
                b.lo[q] = 0;
                b.hi[q] = w;
            } else if (q > ax) {
                b.lo[q] = in.lo[q];
                b.hi[q] = in.hi[q];
            } else {
                b.lo[q] = 0;
                b.hi[q] = L->npad[q];
            }
        }
        if (box_empty(b))
            continue;
        dim3 blk(32, 8), grd((b.hi[0] - b.lo[0] + 31) / 32, (b.hi[1] - b.lo[1] + 7) / 8, b.hi[2] - b.lo[2]);
        k_pml<R><<<grd, blk, 0, st>>>(a, m, ax, b);
        CUDA_TRY_LAUNCH();
    }
    return 0;
}


int wave_cu_cpml_split(wave_sim *s, const Box &in, cudaStream_t st)
{
    const KArgs a = kargs(s);
    const PArgs m = pargs(s);
    return with_r(s, [&](auto r) { return launch_split<decltype(r)::value>(s, in, a, m, st); });
}

int wave_cu_cpml_fused(wave_sim *s, const WavePlan &pl, const Box &in, cudaStream_t st)
{
    const KArgs a = kargs(s);
    const PArgs m = pargs(s);
    return with_r(s, [&](auto r) { return launch_layers<decltype(r)::value>(s, pl, in, a, m, st); });
}

int wave_cu_cpml_lines(wave_sim *s, cudaStream_t st)
{
    const KArgs a = kargs(s);
    const PArgs m = pargs(s);
    return with_r(s, [&](auto r) { return launch_lines<decltype(r)::value>(s, a, m, st); });
}

/* p = 0 on the surface plane z = o[2] of p(n+1) (s->prev until the swap); odd mirror above. */
int wave_cu_free_surface(wave_sim *s, cudaStream_t st)
{
    const struct wave_layout *L = &s->L;
    long long plane = (long long)L->stride_z;
    k_free_surface<<<(unsigned)((plane + 255) / 256), 256, 0, st>>>(s->prev, plane, L->halo);
    CUDA_TRY_LAUNCH();
    return 0;
}
