/* wave.cu — the CUDA twin of the propagator (kernels/wave.c holds the layout, life cycle
 * and the CPU reference; this file only the device memory and kernels).
 *
 * One step with CPML (default arrangement, "lines") = the interior kernel over the whole
 * padded grid with the plain Laplacian (so it never branches on the boundary) + per
 * axis a line kernel over that axis's layers only, adding the stretched terms (psi and
 * zeta read and written once per layer point; no extra full-volume pass) + the
 * free-surface mirror.  Without CPML (or for a reverse step) only the interior kernel.
 * Interior kernels: naive (one thread per point) and tiled (Micikevicius 2009 2.5D: an
 * x-y tile of p in shared memory and a register queue of 2R+1 values along z, z split
 * in chunks) with two pipelines, k_ring (cp.async ring of planes, one barrier per plane;
 * the default) and k_tiled (loads prefetched into registers).  Other CPML arrangements,
 * kept as variants: split (k_psi pass, then k_pml, beside an interior box: the naive
 * kernel's) and fused (k_layer: psi(n+1) and the stretched update in one pass beside an
 * interior box).  Variants and their switches: see "dispatch" below. */
#include "kernels/cpml.h"
#include "kernels/cuda_check.h"
#include "kernels/points.h"
#include "kernels/random_boundary.h"
#include "kernels/wave_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#define MAXR (WAVE_ORDER_MAX / 2)

struct KArgs {
    const float *__restrict__ p; /* p(n) */
    float *__restrict__ q;       /* p(n-1) in, p(n+1) out */
    const float *__restrict__ vel;
    long long sy, sz;
    int h;
    float c2[3][MAXR + 1];
    float c1[3][MAXR + 1];
};

struct PArgs {
    float *psi[3], *zeta[3];
    float *psi_out[3]; /* fused kernel: psi(n+1) goes here (psi holds psi(n)) */
    const float *pa[3], *pb[3];
    int npad[3];
    int pml[6];
};

struct Box {
    int lo[3], hi[3];
};

static KArgs kargs(const wave_sim *s)
{
    KArgs a;
    a.p = s->cur;
    a.q = s->prev;
    a.vel = s->vel;
    a.sy = (long long)s->L.stride_y;
    a.sz = (long long)s->L.stride_z;
    a.h = s->L.halo;
    memcpy(a.c2, s->c2, sizeof a.c2);
    memcpy(a.c1, s->c1, sizeof a.c1);
    return a;
}

static PArgs pargs(const wave_sim *s)
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

/* ---- interior: naive ------------------------------------------------------------------ */

template <int R>
__global__ void k_naive(KArgs a, Box b)
{
    int i = b.lo[0] + blockIdx.x * blockDim.x + threadIdx.x;
    int j = b.lo[1] + blockIdx.y * blockDim.y + threadIdx.y;
    int k = b.lo[2] + blockIdx.z;
    if (i >= b.hi[0] || j >= b.hi[1])
        return;
    long long c = (long long)(k + a.h) * a.sz + (long long)(j + a.h) * a.sy + (i + a.h);
    const float *p = a.p;
    float lap = (a.c2[0][0] + a.c2[1][0] + a.c2[2][0]) * p[c];
#pragma unroll
    for (int l = 1; l <= R; l++)
        lap += a.c2[0][l] * (p[c + l] + p[c - l]) + a.c2[1][l] * (p[c + l * a.sy] + p[c - l * a.sy]) +
               a.c2[2][l] * (p[c + l * a.sz] + p[c - l * a.sz]);
    a.q[c] = 2.0f * p[c] - a.q[c] + a.vel[c] * lap;
}

/* ---- interior: 2.5D tiled ------------------------------------------------------------- */

#define TX 32
#define ZCHUNK 128 /* longest z chunk of one block */

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

/* ---- interior: 2.5D tiled with an asynchronous shared-memory ring ------------------- */

/* cp.async (sm_80+): 16 bytes global -> shared without passing through registers; with
 * OK false nothing is read and the 16 bytes are zero-filled (SRC must still be a valid
 * address). */
__device__ __forceinline__ void cp16(float *sdst, const float *gsrc, bool ok)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(sdst);
    int n = ok ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gsrc), "r"(n) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* Shared-memory plan of k_ring.  p tiles (x halo XO >= R, a multiple of 4 floats so
 * every 16-byte copy is aligned) for planes k .. k+R+D, and q / v tiles for planes
 * k .. k+D. */
template <int R, int BY, int NY, int D>
struct RingCfg {
    static constexpr int XO = (R + 3) / 4 * 4;
    static constexpr int PW = TX + 2 * XO;
    static constexpr int TYT = BY * NY;
    static constexpr int PH = TYT + 2 * R;
    static constexpr int S = R + D + 1;
    static constexpr int PSLOT = PH * PW;
    static constexpr int QSLOT = 2 * TYT * TX;
    static constexpr size_t bytes = sizeof(float) * ((size_t)S * PSLOT + (size_t)(D + 1) * QSLOT);
};

/* The tile origin in x: X0 + halo a multiple of 8 floats, so the 16-byte copies are
 * aligned and every 32-float row of q, v and p(n+1) is 4 whole 32-byte sectors. */
static int ring_x_origin(int lo, int h) { return lo - ((lo + h) & 7); }

/* Micikevicius 2.5D like k_tiled, but every global read of a plane goes through
 * cp.async into a ring of shared-memory slots D planes ahead: the p tile with its x and
 * y halos (the register queue along z takes its new value p(k+R) from the ring, so p is
 * read from global memory once), q and v.  One barrier per plane (it also frees the
 * slot the next copies go to), no registers held for loads in flight, so many blocks
 * fit per SM and each keeps D planes of copies in flight. */
template <int R, int BY, int NY, int D>
__global__ void __launch_bounds__(TX *BY) k_ring(KArgs a, Box b, int zchunk, int x_org, int dim0, int dim1)
{
    using C = RingCfg<R, BY, NY, D>;
    constexpr int NT = TX * BY;
    extern __shared__ __align__(16) float smem[];
    float *const ps = smem;
    float *const qs = smem + C::S * C::PSLOT;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TX + tx;
    const int x0 = x_org + blockIdx.x * TX, y0 = b.lo[1] + blockIdx.y * C::TYT;
    const int kb = b.lo[2] + blockIdx.z * zchunk;
    const int ke = min(kb + zchunk, b.hi[2]);
    const int i = x0 + tx, h = a.h;
    const float *__restrict__ p = a.p;
    const float *__restrict__ vel = a.vel;
    float *__restrict__ q = a.q;
    const long long sy = a.sy, sz = a.sz;
    const int klast = ke - 1 + R; /* the last plane this chunk reads */
    auto load_p = [&](int kk, int sl) {
        if (kk > klast)
            return;
        float *dst = ps + sl * C::PSLOT;
        constexpr int CPR = C::PW / 4, NCH = C::PH * CPR;
        const long long pl = (long long)(kk + h) * sz;
#pragma unroll
        for (int e0 = 0; e0 < NCH; e0 += NT) {
            const int e = e0 + tid;
            if (NCH % NT == 0 || e < NCH) {
                const int r = e / CPR, c = e % CPR;
                const int gy = y0 - R + r + h, gx = x0 + h - C::XO + 4 * c;
                const bool ok = gy < dim1 && gx >= 0 && gx < dim0;
                cp16(dst + r * C::PW + 4 * c, ok ? p + pl + (long long)gy * sy + gx : p, ok);
            }
        }
    };
    auto load_qv = [&](int kk, int sl) {
        if (kk >= ke)
            return;
        float *dst = qs + sl * C::QSLOT;
        constexpr int CPR = TX / 4, NCH = 2 * C::TYT * CPR;
        const long long pl = (long long)(kk + h) * sz;
#pragma unroll
        for (int e0 = 0; e0 < NCH; e0 += NT) {
            const int e = e0 + tid;
            if (NCH % NT == 0 || e < NCH) {
                const int w = e / (C::TYT * CPR), r = e / CPR % C::TYT, c = e % CPR;
                const int gy = y0 + r, gx = x0 + h + 4 * c;
                const bool ok = gy < b.hi[1] && gx < dim0;
                const float *src = w ? vel : q;
                cp16(dst + w * C::TYT * TX + r * TX + 4 * c,
                     ok ? src + pl + (long long)(gy + h) * sy + gx : src, ok);
            }
        }
    };
    const float c0 = a.c2[0][0] + a.c2[1][0] + a.c2[2][0];
    long long col[NY];
    bool inside[NY];
    float qz[NY][2 * R + 1]; /* qz[m][u] = p(k - R + u) of row m */
#pragma unroll
    for (int m = 0; m < NY; m++) {
        const int j = y0 + ty + m * BY;
        col[m] = (long long)(j + h) * sy + (i + h);
        inside[m] = i >= b.lo[0] && i < b.hi[0] && j < b.hi[1];
#pragma unroll
        for (int u = 0; u < 2 * R; u++)
            qz[m][u] = inside[m] ? __ldg(p + col[m] + (long long)(kb - R + u + h) * sz) : 0.0f;
    }
    /* Prologue: the p tiles of planes kb .. kb+R-1, then D groups of (p(kb+R+d), q/v(kb+d)).
     * Plane kk lives in p slot (kk - kb) % S and q/v slot (kk - kb) % (D + 1). */
    for (int u = 0; u < R; u++)
        load_p(kb + u, u);
    cp_commit();
#pragma unroll
    for (int d = 0; d < D; d++) {
        load_p(kb + R + d, R + d);
        load_qv(kb + d, d);
        cp_commit();
    }
    int sk = 0, sq = 0; /* slots of plane k */
    for (int k = kb; k < ke; k++) {
        /* The group of (p(k+R), q/v(k)) is complete for this thread; the barrier makes
         * every thread's copies visible and tells that plane k-1's slots are free. */
        cp_wait<D - 1>();
        __syncthreads();
        load_p(k + R + D, sk == 0 ? C::S - 1 : sk - 1);
        load_qv(k + D, sq == 0 ? D : sq - 1);
        cp_commit();
        const int sr = sk + R < C::S ? sk + R : sk + R - C::S;
        const float *P = ps + sk * C::PSLOT, *PR = ps + sr * C::PSLOT;
        const float *Q = qs + sq * C::QSLOT, *V = Q + C::TYT * TX;
        const long long pl = (long long)(k + h) * sz;
#pragma unroll
        for (int m = 0; m < NY; m++) {
            const int row = ty + m * BY;
            qz[m][2 * R] = PR[(row + R) * C::PW + C::XO + tx];
            if (inside[m]) {
                const float *rp = P + (row + R) * C::PW + C::XO + tx;
                float lap = c0 * qz[m][R];
#pragma unroll
                for (int l = 1; l <= R; l++)
                    lap += a.c2[0][l] * (rp[l] + rp[-l]) + a.c2[1][l] * (rp[l * C::PW] + rp[-l * C::PW]) +
                           a.c2[2][l] * (qz[m][R + l] + qz[m][R - l]);
                q[col[m] + pl] = 2.0f * qz[m][R] - Q[row * TX + tx] + V[row * TX + tx] * lap;
            }
#pragma unroll
            for (int u = 0; u < 2 * R; u++)
                qz[m][u] = qz[m][u + 1];
        }
        sk = sk + 1 == C::S ? 0 : sk + 1;
        sq = sq == D ? 0 : sq + 1;
    }
    cp_wait<0>();
}

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

/* ---- dispatch ---------------------------------------------------------------------------- */

/* Kernel variants (llm.c style: all kept side by side, each checked against the CPU
 * reference by tests/gpu/test_gpu_wave.c, picked per step from the environment so a
 * benchmark or a test can switch between them; unset means the default measured
 * fastest on the H100, docs/PERFORMANCE.md):
 *
 *   [propagator] kernel = naive   k_naive for the interior, the split CPML kernels
 *                                 (k_psi pass, then k_pml) for the layers;
 *   [propagator] kernel = tiled   SEISLIVE_WAVE_PIPE    ring (k_ring, cp.async ring) or
 *                                                       regs (k_tiled, register prefetch)
 *                                 SEISLIVE_WAVE_TILE    block shape threads x rows per
 *                                                       thread (32 columns): ring 4x4,
 *                                                       8x2, 8x4; regs 16x1, 8x1, 8x2, 4x4
 *                                 SEISLIVE_WAVE_PREFETCH planes in flight: ring 1..3,
 *                                                       regs 1..2
 *                                 SEISLIVE_WAVE_CPML    lines (the interior kernel over
 *                                                       the whole grid, then k_line per
 *                                                       axis adds the stretched terms),
 *                                                       fused (k_layer: psi and the
 *                                                       stretched update in one pass over
 *                                                       the layers beside the interior
 *                                                       box) or split (k_psi + k_pml)
 *   SEISLIVE_WAVE_NAIVE_BLOCK=WxH the naive kernel's thread block
 *   SEISLIVE_WAVE_CPML_OVERLAP=0  the CPML kernels on the simulation's stream instead of
 *                                 a second stream beside the interior kernel
 *   SEISLIVE_WAVE_LAYER_ZCHUNK=N  z planes per k_layer block (tests use it to cross
 *                                 chunk boundaries on small grids). */
enum tile_shape { TILE_16x1, TILE_8x1, TILE_8x2, TILE_4x4, TILE_8x4, TILE_N };
static const char *const tile_names[] = {"16x1", "8x1", "8x2", "4x4", "8x4"};

static bool env_is(const char *name, const char *val)
{
    const char *e = getenv(name);
    return e && !strcmp(e, val);
}

static bool pipe_ring(void) { return !env_is("SEISLIVE_WAVE_PIPE", "regs"); }

enum cpml_arr { CPML_SPLIT, CPML_FUSED, CPML_LINES };
static const char *const cpml_names[] = {"split", "fused", "lines"};
static int cpml_arrangement(const wave_sim *s)
{
    if (s->p.kernel == WAVE_KERNEL_NAIVE || env_is("SEISLIVE_WAVE_CPML", "split"))
        return CPML_SPLIT;
    if (env_is("SEISLIVE_WAVE_CPML", "fused"))
        return CPML_FUSED;
    return CPML_LINES;
}

static int tile_shape(int r, bool ring)
{
    const char *e = getenv("SEISLIVE_WAVE_TILE");
    for (int k = 0; e && k < TILE_N; k++)
        if (!strcmp(e, tile_names[k])) {
            bool ok = ring ? (k == TILE_4x4 || k == TILE_8x2 || k == TILE_8x4) : k != TILE_8x4;
            if (ok)
                return k;
        }
    if (ring) /* measured on the H100 (docs/PERFORMANCE.md) */
        return r == 3 || r == 4 ? TILE_8x4 : TILE_8x2;
    return r <= 4 ? TILE_4x4 : TILE_8x2;
}

/* The naive kernel's thread block: SEISLIVE_WAVE_NAIVE_BLOCK=WxH (W a multiple of 32,
 * W x H <= 1024), else the fastest measured on the H100 at 512^3 (docs/PERFORMANCE.md):
 * 128 x 4 up to order 4, 256 x 4 above (8th order: 32 x 8 83.7, 32 x 32 106.7,
 * 128 x 8 118.1, 256 x 4 120.6 Gpts/s: 1024-thread blocks keep more of the y and z
 * neighbours in L1 and L2 while they are needed). */
static void naive_block(int r, int *bx, int *by)
{
    *bx = r <= 2 ? 128 : 256;
    *by = 4;
    const char *e = getenv("SEISLIVE_WAVE_NAIVE_BLOCK");
    int w, h;
    if (e && sscanf(e, "%dx%d", &w, &h) == 2 && w >= 32 && w <= 1024 && w % 32 == 0 && h >= 1 && h <= 1024 / w) {
        *bx = w;
        *by = h;
    }
}

static int prefetch_depth(bool ring, int r)
{
    const char *e = getenv("SEISLIVE_WAVE_PREFETCH");
    int d = e ? atoi(e) : 0;
    if (ring)
        return d >= 1 && d <= 3 ? d : r <= 2 ? 1 : r <= 4 ? 2 : 3;
    return d == 1 || d == 2 ? d : 2;
}

/* SEISLIVE_WAVE_CPML_OVERLAP=0 runs the CPML kernels on the simulation's own stream
 * (for measuring what the overlap gains); default: on a second stream. */
static bool cpml_overlap(void) { return !env_is("SEISLIVE_WAVE_CPML_OVERLAP", "0"); }

static int layer_zchunk(int depth)
{
    const char *e = getenv("SEISLIVE_WAVE_LAYER_ZCHUNK");
    int z = e ? atoi(e) : 0;
    if (z <= 0)
        z = 48;
    return depth < z ? depth : z;
}

static cudaStream_t stream_of(const wave_sim *s) { return (cudaStream_t)s->stream; }

static bool box_empty(const Box &b)
{
    return b.hi[0] <= b.lo[0] || b.hi[1] <= b.lo[1] || b.hi[2] <= b.lo[2];
}

static int sm_count(const wave_sim *s) { return s->dev->sm_count > 0 ? s->dev->sm_count : 132; }

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

template <int R, int BY, int NY, int D>
static int launch_ring(const Box &in, const KArgs &a, const wave_sim *s, cudaStream_t st)
{
    using C = RingCfg<R, BY, NY, D>;
    /* Once per kernel instantiation, not once per step: the shared-memory opt-in (a
     * property of the function, kept for the process's life) and the resident blocks
     * per SM (the same on every device of a kind; a process drives one GPU). */
    static int per_sm = 0;
    if (!per_sm) {
        CUDA_TRY(cudaFuncSetAttribute(k_ring<R, BY, NY, D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)C::bytes));
        int n = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_ring<R, BY, NY, D>, TX * BY, C::bytes));
        per_sm = n > 0 ? n : 1;
    }
    const int xo = ring_x_origin(in.lo[0], a.h);
    const int gx = (in.hi[0] - xo + TX - 1) / TX, gy = (in.hi[1] - in.lo[1] + C::TYT - 1) / C::TYT;
    const int nz = in.hi[2] - in.lo[2];
    /* z chunks: ~6 waves of resident blocks, each chunk at least 4R planes (the queue's
     * and the ring's R-plane preloads) and at most ZCHUNK. */
    long long target = 6LL * sm_count(s) * per_sm;
    long long nch = (target + (long long)gx * gy - 1) / ((long long)gx * gy);
    int zc = (int)((nz + nch - 1) / nch);
    zc = zc < 4 * R ? 4 * R : zc > ZCHUNK ? ZCHUNK : zc;
    dim3 blk(TX, BY), grd(gx, gy, (nz + zc - 1) / zc);
    k_ring<R, BY, NY, D><<<grd, blk, C::bytes, st>>>(a, in, zc, xo, s->L.dim[0], s->L.dim[1]);
    CUDA_TRY_LAUNCH();
    return 0;
}

template <int R, int BY, int NY>
static int launch_ring_d(const Box &in, const KArgs &a, const wave_sim *s, cudaStream_t st, int d)
{
    switch (d) {
    case 1: return launch_ring<R, BY, NY, 1>(in, a, s, st);
    case 3: return launch_ring<R, BY, NY, 3>(in, a, s, st);
    default: return launch_ring<R, BY, NY, 2>(in, a, s, st);
    }
}

/* The interior update over box IN with the selected variant. */
template <int R>
static int launch_interior(const wave_sim *s, const Box &in, const KArgs &a, cudaStream_t st)
{
    if (s->p.kernel == WAVE_KERNEL_NAIVE) {
        int bx, by;
        naive_block(R, &bx, &by);
        dim3 blk(bx, by), grd((in.hi[0] - in.lo[0] + bx - 1) / bx, (in.hi[1] - in.lo[1] + by - 1) / by,
                              in.hi[2] - in.lo[2]);
        k_naive<R><<<grd, blk, 0, st>>>(a, in);
        CUDA_TRY_LAUNCH();
        return 0;
    }
    const bool ring = pipe_ring();
    const int d = prefetch_depth(ring, R);
    if (ring) {
        switch (tile_shape(R, true)) {
        case TILE_8x2: return launch_ring_d<R, 8, 2>(in, a, s, st, d);
        case TILE_8x4: return launch_ring_d<R, 8, 4>(in, a, s, st, d);
        default: return launch_ring_d<R, 4, 4>(in, a, s, st, d);
        }
    }
    const int sms = sm_count(s);
    const bool d2 = d == 2;
    switch (tile_shape(R, false)) {
    case TILE_16x1: return d2 ? launch_tiled<R, 16, 1, 2>(in, a, sms, st) : launch_tiled<R, 16, 1, 1>(in, a, sms, st);
    case TILE_8x1: return d2 ? launch_tiled<R, 8, 1, 2>(in, a, sms, st) : launch_tiled<R, 8, 1, 1>(in, a, sms, st);
    case TILE_8x2: return d2 ? launch_tiled<R, 8, 2, 2>(in, a, sms, st) : launch_tiled<R, 8, 2, 1>(in, a, sms, st);
    default: return d2 ? launch_tiled<R, 4, 4, 2>(in, a, sms, st) : launch_tiled<R, 4, 4, 1>(in, a, sms, st);
    }
}

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
static int launch_layers(wave_sim *s, const Box &in, const KArgs &a, const PArgs &m, cudaStream_t st)
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
        lb.zc[w] = layer_zchunk(depth);
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

template <int R>
static int launch_step(wave_sim *s, bool cpml, bool interior)
{
    const struct wave_layout *L = &s->L;
    cudaStream_t st = stream_of(s);
    KArgs a = kargs(s);
    PArgs m = pargs(s);
    bool any = s->slab_count[0] + s->slab_count[1] + s->slab_count[2] > 0;
    cpml = cpml && any;
    interior = interior && !cpml;
    const int arr = cpml_arrangement(s);
    if (cpml && arr == CPML_LINES) {
        /* whole grid plain, then the layer corrections, all on one stream */
        Box all = {{0, 0, 0}, {L->npad[0], L->npad[1], L->npad[2]}};
        int rc = launch_interior<R>(s, all, a, st);
        if (rc == 0)
            rc = launch_lines<R>(s, a, m, st);
        if (rc < 0)
            return rc;
        if (s->p.free_surface) {
            long long plane = (long long)L->stride_z;
            k_free_surface<<<(unsigned)((plane + 255) / 256), 256, 0, st>>>(s->prev, plane, L->halo);
            CUDA_TRY_LAUNCH();
        }
        return 0;
    }
    Box in;
    for (int ax = 0; ax < 3; ax++) {
        in.lo[ax] = cpml || interior ? L->pml[2 * ax] : 0;
        in.hi[ax] = cpml || interior ? L->npad[ax] - L->pml[2 * ax + 1] : L->npad[ax];
    }
    /* The CPML kernels touch only the layers' q and memory and read p: they run on a
     * second stream beside the interior kernel (fork/join events). */
    cudaStream_t main_st = st;
    const bool fork = cpml && cpml_overlap();
    if (fork) {
        CUDA_TRY(cudaEventRecord((cudaEvent_t)s->ev_fork, main_st));
        st = (cudaStream_t)s->aux_stream;
        CUDA_TRY(cudaStreamWaitEvent(st, (cudaEvent_t)s->ev_fork, 0));
    }
    int rc = 0;
    if (cpml)
        rc = arr == CPML_FUSED ? launch_layers<R>(s, in, a, m, st) : launch_split<R>(s, in, a, m, st);
    if (rc < 0)
        return rc;
    if (fork) {
        CUDA_TRY(cudaEventRecord((cudaEvent_t)s->ev_join, st));
        st = main_st;
    }
    if (!box_empty(in) && (rc = launch_interior<R>(s, in, a, st)) < 0)
        return rc;
    if (fork)
        CUDA_TRY(cudaStreamWaitEvent(st, (cudaEvent_t)s->ev_join, 0));
    if (s->p.free_surface) {
        long long plane = (long long)L->stride_z;
        k_free_surface<<<(unsigned)((plane + 255) / 256), 256, 0, st>>>(s->prev, plane, L->halo);
        CUDA_TRY_LAUNCH();
    }
    return 0;
}

extern "C" int wave_cu_describe(const struct wave_sim *s, char *buf, size_t len)
{
    const int r = s->r;
    const bool cp = s->cpml_on && s->slab_count[0] + s->slab_count[1] + s->slab_count[2] > 0;
    const int arr = cpml_arrangement(s);
    const char *cm = !cp ? "off" : cpml_names[arr];
    const char *ov = cp && arr != CPML_LINES && cpml_overlap() ? ", 2 streams" : "";
    if (s->p.kernel == WAVE_KERNEL_NAIVE) {
        int bx, by;
        naive_block(r, &bx, &by);
        snprintf(buf, len, "naive %dx%d, CPML %s%s", bx, by, cm, ov);
        return 0;
    }
    const bool ring = pipe_ring();
    snprintf(buf, len, "tiled %s %s depth %d, CPML %s%s", ring ? "ring" : "regs",
             tile_names[tile_shape(r, ring)], prefetch_depth(ring, r), cm, ov);
    return 0;
}

extern "C" int wave_cu_step(struct wave_sim *s, bool cpml, bool interior)
{
    switch (s->r) {
    case 1: return launch_step<1>(s, cpml, interior);
    case 2: return launch_step<2>(s, cpml, interior);
    case 3: return launch_step<3>(s, cpml, interior);
    case 4: return launch_step<4>(s, cpml, interior);
    case 5: return launch_step<5>(s, cpml, interior);
    case 6: return launch_step<6>(s, cpml, interior);
    case 7: return launch_step<7>(s, cpml, interior);
    case 8: return launch_step<8>(s, cpml, interior);
    }
    return err_set(-EINVAL, "wave: order %d not supported on CUDA", 2 * s->r);
}

/* ---- memory ------------------------------------------------------------------------------- */

static int cu_alloc(float **p, size_t count)
{
    *p = NULL;
    if (!count)
        return 0;
    cudaError_t e = cudaMalloc((void **)p, count * sizeof(float));
    if (e != cudaSuccess) {
        *p = NULL;
        (void)cudaGetLastError();
        return err_set(-ENOMEM, "wave: cudaMalloc of %.1f MiB failed: %s", count * 4.0 / 1048576.0,
                       cudaGetErrorName(e));
    }
    CUDA_TRY(cudaMemset(*p, 0, count * sizeof(float)));
    return 0;
}

extern "C" int wave_cu_alloc(struct wave_sim *s)
{
    int rc;
    cudaStream_t aux;
    cudaEvent_t e1, e2;
    CUDA_TRY(cudaStreamCreateWithFlags(&aux, cudaStreamNonBlocking));
    s->aux_stream = aux;
    CUDA_TRY(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
    s->ev_fork = e1;
    CUDA_TRY(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
    s->ev_join = e2;
    if ((rc = cu_alloc(&s->cur, s->L.count)) < 0 || (rc = cu_alloc(&s->prev, s->L.count)) < 0 ||
        (rc = cu_alloc(&s->vel, s->L.count)) < 0)
        return rc;
    for (int a = 0; a < 3; a++) {
        if ((rc = cu_alloc(&s->psi[a], s->slab_count[a])) < 0 ||
            (rc = cu_alloc(&s->psi_alt[a], s->slab_count[a])) < 0 ||
            (rc = cu_alloc(&s->zeta[a], s->slab_count[a])) < 0 ||
            (rc = cu_alloc(&s->pa[a], s->L.npad[a])) < 0 || (rc = cu_alloc(&s->pb[a], s->L.npad[a])) < 0)
            return rc;
        CUDA_TRY(cudaMemcpy(s->pa[a], s->ha[a], s->L.npad[a] * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_TRY(cudaMemcpy(s->pb[a], s->hb[a], s->L.npad[a] * sizeof(float), cudaMemcpyHostToDevice));
    }
    return 0;
}

extern "C" void wave_cu_free(struct wave_sim *s)
{
    cudaFree(s->cur);
    cudaFree(s->prev);
    cudaFree(s->vel);
    for (int a = 0; a < 3; a++) {
        cudaFree(s->psi[a]);
        cudaFree(s->psi_alt[a]);
        cudaFree(s->zeta[a]);
        cudaFree(s->pa[a]);
        cudaFree(s->pb[a]);
    }
    cudaFree(s->scratch);
    if (s->ev_fork)
        cudaEventDestroy((cudaEvent_t)s->ev_fork);
    if (s->ev_join)
        cudaEventDestroy((cudaEvent_t)s->ev_join);
    if (s->aux_stream)
        cudaStreamDestroy((cudaStream_t)s->aux_stream);
}

extern "C" int wave_cu_memcpy(void *dst, const void *src, size_t bytes, int dir, void *stream)
{
    cudaMemcpyKind k = dir == 0 ? cudaMemcpyHostToDevice : dir == 1 ? cudaMemcpyDeviceToHost
                                                                    : cudaMemcpyDeviceToDevice;
    CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, k, (cudaStream_t)stream));
    return 0;
}

extern "C" int wave_cu_zero(void *p, size_t bytes, void *stream)
{
    CUDA_TRY(cudaMemsetAsync(p, 0, bytes, (cudaStream_t)stream));
    return 0;
}

extern "C" int wave_cu_sync(void *stream)
{
    CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream));
    return 0;
}

/* Device scratch of at least BYTES (grows; freed with the simulation). */
static int scratch(wave_sim *s, size_t bytes, void **out)
{
    if (s->scratch_bytes < bytes) {
        CUDA_TRY(cudaStreamSynchronize(stream_of(s)));
        cudaFree(s->scratch);
        s->scratch = NULL;
        s->scratch_bytes = 0;
        CUDA_TRY(cudaMalloc(&s->scratch, bytes));
        s->scratch_bytes = bytes;
    }
    *out = s->scratch;
    return 0;
}

/* ---- velocity ------------------------------------------------------------------------------ */

__global__ void k_vel(float *vel, const float *v, int n0, int n1, int n2, long long sy, long long sz,
                      int h, float dt2, bool to_field)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y, k = blockIdx.z;
    if (i >= n0 || j >= n1)
        return;
    long long c = (long long)(k + h) * sz + (long long)(j + h) * sy + (i + h);
    long long e = ((long long)k * n1 + j) * n0 + i;
    if (to_field)
        vel[c] = (float)((double)v[e] * v[e] * dt2);
    else
        ((float *)v)[e] = (float)(sqrt((double)vel[c] / dt2));
}

static int vel_io(wave_sim *s, float *v, bool on_device, bool to_field)
{
    const struct wave_layout *L = &s->L;
    size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
    float *dv = v;
    if (!on_device) {
        void *t;
        int rc = scratch(s, np * sizeof(float), &t);
        if (rc < 0)
            return rc;
        dv = (float *)t;
        if (to_field)
            CUDA_TRY(cudaMemcpyAsync(dv, v, np * sizeof(float), cudaMemcpyHostToDevice, stream_of(s)));
    }
    dim3 blk(32, 8), grd((L->npad[0] + 31) / 32, (L->npad[1] + 7) / 8, L->npad[2]);
    k_vel<<<grd, blk, 0, stream_of(s)>>>(s->vel, dv, L->npad[0], L->npad[1], L->npad[2],
                                        (long long)L->stride_y, (long long)L->stride_z, L->halo,
                                        (float)(s->p.dt * s->p.dt), to_field);
    CUDA_TRY_LAUNCH();
    if (!on_device) {
        if (!to_field)
            CUDA_TRY(cudaMemcpyAsync(v, dv, np * sizeof(float), cudaMemcpyDeviceToHost, stream_of(s)));
        CUDA_TRY(cudaStreamSynchronize(stream_of(s)));
    }
    return 0;
}

extern "C" int wave_cu_set_vel(struct wave_sim *s, const float *v, bool on_device)
{
    return vel_io(s, (float *)v, on_device, true);
}

extern "C" int wave_cu_get_vel(struct wave_sim *s, float *host) { return vel_io(s, host, false, false); }

/* The padded velocity (m/s) into device scratch, the random layers there
 * (random_boundary.cu), and back into v^2 dt^2: the same steps as the CPU path, on the
 * device. */
extern "C" int wave_cu_randomize_layers(struct wave_sim *s, const struct random_boundary *rb, uint64_t shot_id)
{
    const struct wave_layout *L = &s->L;
    size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
    void *t = NULL;
    int rc = scratch(s, np * sizeof(float), &t);
    if (rc == 0)
        rc = vel_io(s, (float *)t, true, false);
    if (rc == 0)
        rc = random_boundary_apply_cuda(rb, L->npad, L->n, L->pml, shot_id, (float *)t, s->stream);
    if (rc == 0)
        rc = vel_io(s, (float *)t, true, true);
    if (rc == 0)
        CUDA_TRY(cudaStreamSynchronize(stream_of(s)));
    return rc;
}

/* ---- points ------------------------------------------------------------------------------- */

extern "C" int wave_cu_points_upload(struct wave_points *pts)
{
    size_t n = pts->n ? pts->n : 1;
    CUDA_TRY(cudaMalloc((void **)&pts->d_base, 3 * n * sizeof(int)));
    CUDA_TRY(cudaMalloc((void **)&pts->d_w, 3 * (size_t)pts->ns * n * sizeof(float)));
    CUDA_TRY(cudaMemcpy(pts->d_base, pts->base, 3 * pts->n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(pts->d_w, pts->w, 3 * (size_t)pts->ns * pts->n * sizeof(float), cudaMemcpyHostToDevice));
    return 0;
}

extern "C" void wave_cu_points_free(struct wave_points *pts)
{
    if (pts->d_base)
        cudaFree(pts->d_base);
    if (pts->d_w)
        cudaFree(pts->d_w);
    pts->d_base = NULL;
    pts->d_w = NULL;
}

/* One block per point, threads over its ns^3 support nodes; overlapping supports of
 * different points meet through atomicAdd. */
__global__ void k_inject(float *f, const float *vel, const int *base, const float *w, int ns,
                         long long sy, long long sz, const float *amps, long long stride, float scale,
                         bool phys, float dvinv, int n)
{
    int pt = blockIdx.x;
    if (pt >= n)
        return;
    float amp = amps[pt * stride] * scale;
    const int *b = base + 3 * pt;
    const float *wx = w + (size_t)3 * pt * ns, *wy = wx + ns, *wz = wy + ns;
    int nn = ns * ns * ns;
    for (int t = threadIdx.x; t < nn; t += blockDim.x) {
        int kx = t % ns, ky = t / ns % ns, kz = t / (ns * ns);
        long long c = (long long)(b[2] + kz) * sz + (long long)(b[1] + ky) * sy + (b[0] + kx);
        float v = amp * (wx[kx] * wy[ky] * wz[kz]);
        atomicAdd(&f[c], phys ? v * (vel[c] * dvinv) : v);
    }
}

__global__ void k_sample(const float *f, const int *base, const float *w, int ns, long long sy,
                         long long sz, float *out, long long stride, int n)
{
    __shared__ float red[128];
    int pt = blockIdx.x;
    if (pt >= n)
        return;
    const int *b = base + 3 * pt;
    const float *wx = w + (size_t)3 * pt * ns, *wy = wx + ns, *wz = wy + ns;
    int nn = ns * ns * ns;
    float sum = 0;
    for (int t = threadIdx.x; t < nn; t += blockDim.x) {
        int kx = t % ns, ky = t / ns % ns, kz = t / (ns * ns);
        long long c = (long long)(b[2] + kz) * sz + (long long)(b[1] + ky) * sy + (b[0] + kx);
        sum += wx[kx] * wy[ky] * wz[kz] * f[c];
    }
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o >>= 1) {
        if ((int)threadIdx.x < o)
            red[threadIdx.x] += red[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[pt * stride] = red[0];
}

extern "C" int wave_cu_inject(struct wave_sim *s, const struct wave_points *pts, const float *amps,
                              size_t stride, float scale, unsigned flags)
{
    if (!pts->n)
        return 0;
    const float *da = amps;
    long long dstride = (long long)stride;
    if (!(flags & WAVE_BUF_DEVICE)) {
        /* Gather the strided host amplitudes and stage them on the device. */
        void *t;
        int rc = scratch(s, pts->n * sizeof(float), &t);
        if (rc < 0)
            return rc;
        float *h = (float *)malloc(pts->n * sizeof(float));
        if (!h)
            return err_set(-ENOMEM, "wave_inject: out of memory");
        for (size_t i = 0; i < pts->n; i++)
            h[i] = amps[i * stride];
        cudaError_t e = cudaMemcpyAsync(t, h, pts->n * sizeof(float), cudaMemcpyHostToDevice, stream_of(s));
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(stream_of(s)); /* H is freed below */
        free(h);
        if (e != cudaSuccess)
            return CUDA_ERR("cudaMemcpyAsync(amplitudes)", e);
        da = (const float *)t;
        dstride = 1;
    }
    const struct wave_layout *L = &s->L;
    float dvinv = (float)(1.0 / (s->p.d[0] * s->p.d[1] * s->p.d[2]));
    k_inject<<<(unsigned)pts->n, 128, 0, stream_of(s)>>>(s->cur, s->vel, pts->d_base, pts->d_w, pts->ns,
                                                         (long long)L->stride_y, (long long)L->stride_z, da,
                                                         dstride, scale, (flags & WAVE_INJECT_PHYSICAL) != 0,
                                                         dvinv, (int)pts->n);
    CUDA_TRY_LAUNCH();
    return 0;
}

extern "C" int wave_cu_sample(struct wave_sim *s, const struct wave_points *pts, float *out,
                              size_t stride, unsigned flags)
{
    if (!pts->n)
        return 0;
    const struct wave_layout *L = &s->L;
    float *dout = out;
    long long dstride = (long long)stride;
    if (!(flags & WAVE_BUF_DEVICE)) {
        void *t;
        int rc = scratch(s, pts->n * sizeof(float), &t);
        if (rc < 0)
            return rc;
        dout = (float *)t;
        dstride = 1;
    }
    k_sample<<<(unsigned)pts->n, 128, 0, stream_of(s)>>>(s->cur, pts->d_base, pts->d_w, pts->ns,
                                                         (long long)L->stride_y, (long long)L->stride_z,
                                                         dout, dstride, (int)pts->n);
    CUDA_TRY_LAUNCH();
    if (!(flags & WAVE_BUF_DEVICE)) {
        float *h = (float *)malloc(pts->n * sizeof(float));
        if (!h)
            return err_set(-ENOMEM, "wave_sample: out of memory");
        cudaError_t e = cudaMemcpyAsync(h, dout, pts->n * sizeof(float), cudaMemcpyDeviceToHost, stream_of(s));
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(stream_of(s));
        if (e != cudaSuccess) {
            free(h);
            return CUDA_ERR("cudaMemcpyAsync(samples)", e);
        }
        for (size_t i = 0; i < pts->n; i++)
            out[i * stride] = h[i];
        free(h);
    }
    return 0;
}

/* ---- strip ------------------------------------------------------------------------------------ */

struct Off3 {
    int v[3];
};

__global__ void k_strip3(float *f, float *buf, Box b, Off3 off, long long sy, long long sz, bool save)
{
    int n0 = b.hi[0] - b.lo[0], n1 = b.hi[1] - b.lo[1], n2 = b.hi[2] - b.lo[2];
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (long long)n0 * n1 * n2)
        return;
    int i = (int)(e % n0), j = (int)(e / n0 % n1), k = (int)(e / n0 / n1);
    long long c = (long long)(k + b.lo[2] + off.v[2]) * sz + (long long)(j + b.lo[1] + off.v[1]) * sy +
                  (i + b.lo[0] + off.v[0]);
    if (save)
        buf[e] = f[c];
    else
        f[c] = buf[e];
}

extern "C" int wave_cu_strip(struct wave_sim *s, float *buf, bool on_device, bool save)
{
    size_t cnt = wave_strip_count(s);
    if (!cnt)
        return 0;
    float *db = buf;
    if (!on_device) {
        void *t;
        int rc = scratch(s, cnt * sizeof(float), &t);
        if (rc < 0)
            return rc;
        db = (float *)t;
        if (!save)
            CUDA_TRY(cudaMemcpyAsync(db, buf, cnt * sizeof(float), cudaMemcpyHostToDevice, stream_of(s)));
    }
    int lo[6][3], hi[6][3];
    wave_strip_boxes(s, lo, hi);
    Off3 off = {{s->L.off[0], s->L.off[1], s->L.off[2]}};
    size_t at = 0;
    for (int b = 0; b < 6; b++) {
        Box bx;
        for (int q = 0; q < 3; q++) {
            bx.lo[q] = lo[b][q];
            bx.hi[q] = hi[b][q];
        }
        if (box_empty(bx))
            continue;
        size_t n = (size_t)(hi[b][0] - lo[b][0]) * (hi[b][1] - lo[b][1]) * (hi[b][2] - lo[b][2]);
        k_strip3<<<(unsigned)((n + 255) / 256), 256, 0, stream_of(s)>>>(
            s->cur, db + at, bx, off, (long long)s->L.stride_y, (long long)s->L.stride_z, save);
        CUDA_TRY_LAUNCH();
        at += n;
    }
    if (!on_device) {
        if (save)
            CUDA_TRY(cudaMemcpyAsync(buf, db, cnt * sizeof(float), cudaMemcpyDeviceToHost, stream_of(s)));
        CUDA_TRY(cudaStreamSynchronize(stream_of(s)));
    }
    return 0;
}

/* ---- benchmark helper ---------------------------------------------------------------------------- */

extern "C" int wave_copy_bandwidth(const struct sl_device *dev, size_t bytes, int reps, double *gbs)
{
    *gbs = 0;
    if (dev->kind != SL_DEVICE_CUDA)
        return err_set(-ENOTSUP, "wave_copy_bandwidth: not a CUDA device");
    void *a = NULL, *b = NULL;
    CUDA_TRY(cudaMalloc(&a, bytes));
    cudaError_t e = cudaMalloc(&b, bytes);
    if (e != cudaSuccess) {
        cudaFree(a);
        return CUDA_ERR("cudaMalloc", e);
    }
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    cudaMemset(a, 1, bytes);
    cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice); /* warm up */
    cudaEventRecord(t0);
    for (int r = 0; r < reps; r++)
        cudaMemcpyAsync(r % 2 ? a : b, r % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(t1);
    e = cudaEventSynchronize(t1);
    float ms = 0;
    cudaEventElapsedTime(&ms, t0, t1);
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    cudaFree(a);
    cudaFree(b);
    if (e != cudaSuccess)
        return CUDA_ERR("copy", e);
    *gbs = 2.0 * (double)bytes * reps / (ms * 1e-3) / 1e9;
    return 0;
}
