/* wave_cpml — the boundary kernels of the CUDA propagator: the CPML in the absorbing
 * layers (Pasalic & McGarry 2010, the arithmetic of the CPU reference, kernels/wave.c)
 * in the two arrangements the defaults use, and the free-surface mirror.
 *
 *   lines  (the tiled kernel's default) the interior kernel first updates the whole
 *          padded grid with the plain Laplacian; then per axis a line kernel over that
 *          axis's layers only adds the stretched terms (psi and zeta read and written
 *          once per layer point; no extra full-volume pass);
 *   split  (the naive kernel's) a k_psi pass, then k_pml over the layers beside the
 *          interior box.
 * The third, fused (k_layer), is a research variant: tools/wave_research.cu. */
#include "kernels/wave_cuda.h"

#include <cuda_bf16.h>

#include "kernels/cpml.h"

/* ---- CPML memory storage (wave_params.cpml_memory) -------------------------------------- */

/* The lines kernels take the storage of psi and zeta as a template argument M: float (the
 * reference) or unsigned short holding bfloat16 (BF16: the top 16 bits of the fp32 value,
 * rounded to nearest even, as kernels/cpml.h's cpml_bf16_of does for the CPU).  The
 * buffers are the fp32 ones, used from their start; the arithmetic is fp32 either way. */
__device__ __forceinline__ float mld(const float *p) { return *p; }
__device__ __forceinline__ float mld(const unsigned short *p) { return __uint_as_float((unsigned)*p << 16); }
__device__ __forceinline__ float mldg(const float *p) { return __ldg(p); }
__device__ __forceinline__ float mldg(const unsigned short *p)
{
    return __uint_as_float((unsigned)__ldg(p) << 16);
}
__device__ __forceinline__ void mst(float *p, float v) { *p = v; }
__device__ __forceinline__ void mst(unsigned short *p, float v) { *p = __bfloat16_as_ushort(__float2bfloat16_rn(v)); }
/* V as the storage holds it: the CPU reference's d psi / dx reads psi(n+1) back from
 * memory, so the kernels, which keep psi(n+1) in registers, use its stored value too
 * (the arithmetic matches; without this the bf16 run differed from the CPU by 1e-4). */
template <class M>
__device__ __forceinline__ float mround(float v)
{
    if constexpr (std::is_same<M, unsigned short>::value)
        return __bfloat162float(__float2bfloat16_rn(v));
    else
        return v;
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
    long long c = (long long)(ijk[2] + a.h) * a.sz + (long long)(ijk[1] + a.hy) * a.sy + (ijk[0] + a.h);
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
 * axis's CPML memory) and in padded coordinates along the other two.  Y false: 2D, no y
 * term (the unrolled axis loop drops it at compile time). */
template <int R, bool Y>
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
    long long c = (long long)(k + a.h) * a.sz + (long long)(j + a.hy) * a.sy + (i + a.h);
    const float *__restrict__ p = a.p;
    float lap = 0;
#pragma unroll
    for (int ax = 0; ax < 3; ax++) {
        if (!Y && ax == 1)
            continue;
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

/* z lines up to order 8 built for 6 blocks an SM (80 registers, no spills at order 8: 24
 * warps instead of 16 at the 110 registers it takes unbounded); y lines and higher
 * orders would spill there */
/* NW > 0 (issue 20; the ring arrangement's z lines, wave_cu_cpml_line_z): every layer of
 * the axis NW points wide (or absent), so the march is unrolled whole and its register
 * queues are renamed instead of shifted at every position */
template <int R, int A, class M, int NW = 0, int MINB = 0>
__global__ void __launch_bounds__(128, MINB ? MINB : A == 2 && R <= 4 ? 6 : 1) k_line(KArgs a, PArgs m, int dimA,
                                                                                       int seg0, Box skip)
{
    static_assert(A == 1 || A == 2, "x lines: k_line_x");
    /* the lines of a layer, x fastest, numbered over the whole x-by-other plane: no idle
     * lanes at the end of each x row (a 400-point row in blocks of 128 left 112 idle) */
    const int np0 = m.npad[0], np1 = m.npad[1];
    const int nv = A == 1 ? m.npad[2] : np1;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)np0 * nv)
        return;
    const int uu = (int)(t % np0), vv = (int)(t / np0);
    /* SKIP (z lines; x and y in lo[0..1], hi[0..1]): lines another kernel corrects (the
     * ring CPML's core with its z terms folded in, wave_ring_lz.cuh) */
    if (uu >= skip.lo[0] && uu < skip.hi[0] && vv >= skip.lo[1] && vv < skip.hi[1])
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
        c0 = (long long)h * sz + (long long)(vv + a.hy) * sy + (uu + h);
        st = sz;
        e0 = (long long)vv * np0 + uu;
        est = (long long)np0 * np1;
    }
    const float *__restrict__ p = a.p;
    const M *__restrict__ psi = reinterpret_cast<const M *>(m.psi[A]);
    M *__restrict__ zeta = reinterpret_cast<M *>(m.zeta[A]);
    M *__restrict__ psi_out = reinterpret_cast<M *>(m.psi_out[A]);
    const float *__restrict__ pa = m.pa[A];
    const float *__restrict__ pb = m.pb[A];
    auto P = [&](int x) { /* p at coordinate x of the line (0 outside the allocation) */
        return x + h >= 0 && x + h < dimA ? __ldg(p + c0 + (long long)x * st) : 0.0f;
    };
    /* the low and the high layer of a line are independent (disjoint points, psi(n)
     * only read): blockIdx.z picks one, so twice as many lines march at once (SEG0 1 and
     * one block in z: the high layer alone) */
    {
        const int seg = seg0 + (int)blockIdx.z;
        const int s0 = seg ? np - whi : 0;
        if ((seg ? whi : wlo) <= 0)
            return;
        const int s1 = NW > 0 ? s0 + NW : seg ? np : wlo;
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
                v = mround<M>(__ldg(pb + y) * mldg(psi + e0 + js * est) + __ldg(pa + y) * d1);
            }
            sq[u] = v;
        }
        /* LU positions at a time: all their loads first (the compiler cannot move a load
         * above the previous position's stores, which might alias), then the updates. */
        auto batch = [&](int xb) {
            float pn[LU], po[LU], zo[LU], qo[LU], vo[LU];
#pragma unroll
            for (int u = 0; u < LU; u++) {
                const int x = xb + u, y = x + R, jy = cpml_slab_index(y, np, wlo, whi);
                pn[u] = P(x + 2 * R);
                po[u] = jy >= 0 ? mldg(psi + e0 + jy * est) : 0.0f;
                const bool ok = x < s1;
                const int js = ok ? cpml_slab_index(x, np, wlo, whi) : 0;
                const long long c = c0 + (long long)x * st;
                zo[u] = ok ? mld(zeta + e0 + js * est) : 0.0f;
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
                        v = mround<M>(__ldg(pb + y) * po[u] + __ldg(pa + y) * d1);
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
                mst(zeta + e, z);
                mst(psi_out + e, sq[R]);
                a.q[c] = qo[u] + vo[u] * (dpsi + z);
#pragma unroll
                for (int w = 0; w < 4 * R; w++)
                    pq[w] = pq[w + 1];
#pragma unroll
                for (int w = 0; w < 2 * R; w++)
                    sq[w] = sq[w + 1];
            }
        };
        if constexpr (NW > 0) {
#pragma unroll
            for (int xb = 0; xb < NW; xb += LU)
                batch(s0 + xb);
        } else {
            for (int xb = s0; xb < s1; xb += LU)
                batch(xb);
        }
    }
}

/* The x corrections of the lines arrangement, coalesced: a warp per grid row (j, k);
 * lane t of a chunk owns x = base - R + t, computes psi_x(n+1) there from p(n) and
 * psi_x(n), and the lanes R .. 31-R, whose R neighbours on both sides are lanes of the
 * same warp, take dpsi_x from their neighbours by shuffles and update zeta_x and q. */
template <int R, class M>
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
    const long long c0 = (long long)(k + h) * a.sz + (long long)(j + a.hy) * a.sy + h;
    const long long e0 = row * (wlo + whi);
    const float *__restrict__ p = a.p;
    const M *__restrict__ psi = reinterpret_cast<const M *>(m.psi[0]);
    M *__restrict__ zeta = reinterpret_cast<M *>(m.zeta[0]);
    M *__restrict__ psi_out = reinterpret_cast<M *>(m.psi_out[0]);
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
                psn = mround<M>(__ldg(m.pb[0] + x) * mldg(psi + e0 + js) + __ldg(m.pa[0] + x) * d1);
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
                const float t = d2 + dpsi, z = __ldg(m.pb[0] + x) * mld(zeta + e) + __ldg(m.pa[0] + x) * t;
                mst(zeta + e, z);
                mst(psi_out + e, psn);
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

/* Lines CPML: after the interior kernel has updated the whole grid, the corrections of
 * x, y and z in turn (same stream), then psi(n+1) becomes psi. */
template <int R, class M>
static int launch_lines(wave_sim *s, const KArgs &a, const PArgs &m, cudaStream_t st)
{
    const struct wave_layout *L = &s->L;
    for (int ax = 0; ax < 3; ax++) {
        if (!s->slab_count[ax])
            continue;
        const long long nl = (long long)L->npad[0] * (ax == 2 ? L->npad[1] : L->npad[2]);
        dim3 blk(128), grd((unsigned)((nl + 127) / 128), 1, 2);
        if (ax == 0) {
            long long rows = (long long)L->npad[1] * L->npad[2];
            k_line_x<R, M><<<(unsigned)((rows + 3) / 4), 128, 0, st>>>(a, m, L->dim[0]);
        } else if (ax == 1)
            k_line<R, 1, M><<<grd, blk, 0, st>>>(a, m, L->dim[1], 0, Box{});
        else
            k_line<R, 2, M><<<grd, blk, 0, st>>>(a, m, L->dim[2], 0, Box{});
        CUDA_TRY_LAUNCH();
    }
    wave_cu_swap_psi(s);
    return 0;
}

/* The z corrections of the lines arrangement alone (fp32 memory; psi_z(n+1) to psi_alt, no
 * swap): the ring arrangement's "z by lines" variant, after its passes over every plane. */
int wave_cu_cpml_line_z(wave_sim *s, cudaStream_t st, int nw, int min_blocks, int face, const Box *skip)
{
    const Box sk = skip ? *skip : Box{};
    if (!s->slab_count[2] || (face >= 0 && !s->L.pml[4 + face]))
        return 0;
    const KArgs a = kargs(s);
    const PArgs m = pargs(s);
    const struct wave_layout *L = &s->L;
    const int seg0 = face > 0 ? 1 : 0;
    dim3 blk(128), grd((unsigned)(((long long)L->npad[0] * L->npad[1] + 127) / 128), 1, face >= 0 ? 1 : 2);
    /* NW 12 (research shapes .../lines-z12*): layers 12 wide (the default) or absent, the
     * march unrolled whole (k_line<NW>) at order 8, built for MIN_BLOCKS (6 or 8) blocks an
     * SM.  H100, 512^3, 12 layers (ncu, session 12): 93.0 us against the generic kernel's
     * 92.7, with 33.5 M instructions against 54.3 M: bound by its loads' latency (10.7 of
     * 14.8 cycles an instruction waiting on them), so the library runs the generic one */
    const int w0 = L->pml[4], w1 = L->pml[5];
    const bool w12 = nw == 12 && (w0 == 0 || w0 == 12) && (w1 == 0 || w1 == 12) && s->r == 4;
    return with_r(s, [&](auto r) {
        constexpr int RR = decltype(r)::value;
        if constexpr (RR <= 4) {
            if (w12 && min_blocks == 8)
                k_line<RR, 2, float, 12, 8><<<grd, blk, 0, st>>>(a, m, L->dim[2], seg0, sk);
            else if (w12)
                k_line<RR, 2, float, 12><<<grd, blk, 0, st>>>(a, m, L->dim[2], seg0, sk);
            else if (min_blocks == 8 && RR == 4)
                k_line<RR, 2, float, 0, 8><<<grd, blk, 0, st>>>(a, m, L->dim[2], seg0, sk);
            else
                k_line<RR, 2, float><<<grd, blk, 0, st>>>(a, m, L->dim[2], seg0, sk);
        } else
            k_line<RR, 2, float><<<grd, blk, 0, st>>>(a, m, L->dim[2], seg0, sk);
        CUDA_TRY_LAUNCH();
        return 0;
    });
}

/* psi <- b psi + a dp/dx_a in place over every axis's layers: the first half of split,
 * and alone for the implicit operator, whose sweeps add the stretched terms themselves
 * (kernels/implicit_kernels.cu).  Threads over x and y; a 2D grid has one y row, so its
 * blocks are x only. */
template <int R, bool Y>
static int launch_psi(wave_sim *s, const KArgs &a, const PArgs &m, cudaStream_t st)
{
    const struct wave_layout *L = &s->L;
    constexpr int BX = Y ? 32 : 256, BYK = Y ? 8 : 1;
    for (int ax = 0; ax < 3; ax++) {
        if (!s->slab_count[ax])
            continue;
        int n[3] = {L->npad[0], L->npad[1], L->npad[2]};
        n[ax] = L->pml[2 * ax] + L->pml[2 * ax + 1];
        dim3 blk(BX, BYK), grd((n[0] + BX - 1) / BX, (n[1] + BYK - 1) / BYK, n[2]);
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
    return 0;
}

/* Split CPML (the straightforward arrangement): psi in place in the layers, then the
 * stretched update of the 3 axis groups. */
template <int R, bool Y>
static int launch_split(wave_sim *s, const Box &in, const KArgs &a, const PArgs &m, cudaStream_t st)
{
    const struct wave_layout *L = &s->L;
    /* threads over x and y; a 2D grid has one y row, so its blocks are x only */
    constexpr int BX = Y ? 32 : 256, BYK = Y ? 8 : 1;
    int rc = launch_psi<R, Y>(s, a, m, st);
    if (rc)
        return rc;
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
        dim3 blk(BX, BYK), grd((b.hi[0] - b.lo[0] + BX - 1) / BX, (b.hi[1] - b.lo[1] + BYK - 1) / BYK,
                               b.hi[2] - b.lo[2]);
        k_pml<R, Y><<<grd, blk, 0, st>>>(a, m, ax, b);
        CUDA_TRY_LAUNCH();
    }
    return 0;
}


int wave_cu_psi(wave_sim *s, cudaStream_t st)
{
    const KArgs a = kargs(s);
    const PArgs m = pargs(s);
    return with_r_y(s, [&](auto r, auto y) {
        return launch_psi<decltype(r)::value, decltype(y)::value>(s, a, m, st);
    });
}

int wave_cu_cpml_split(wave_sim *s, const Box &in, cudaStream_t st)
{
    const KArgs a = kargs(s);
    const PArgs m = pargs(s);
    return with_r_y(s, [&](auto r, auto y) {
        return launch_split<decltype(r)::value, decltype(y)::value>(s, in, a, m, st);
    });
}

int wave_cu_cpml_lines(wave_sim *s, cudaStream_t st)
{
    const KArgs a = kargs(s);
    const PArgs m = pargs(s);
    if (s->p.cpml_memory == WAVE_CPML_MEM_BF16)
        return with_r(s, [&](auto r) { return launch_lines<decltype(r)::value, unsigned short>(s, a, m, st); });
    return with_r(s, [&](auto r) { return launch_lines<decltype(r)::value, float>(s, a, m, st); });
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

/* ---- the split CPML over part of the grid (a step in parts: kernels/wave_part.cu) ------- */

/* k_pml over the layer cells inside CLIP (padded coordinates) only, per face so that a
 * clip along an axis maps to one range of that face's slab indices; the groups are
 * launch_split's (z layers whole, y layers within IN's z range, x layers within IN's y
 * and z), so every cell is computed as the split arrangement's step computes it.  psi
 * must be updated already (wave_cu_psi). */
template <int R, bool Y>
static int launch_pml_clip(wave_sim *s, const Box &in, const Box &clip, const KArgs &a, const PArgs &m,
                           cudaStream_t st)
{
    const struct wave_layout *L = &s->L;
    constexpr int BX = Y ? 32 : 256, BYK = Y ? 8 : 1;
    for (int ax = 2; ax >= 0; ax--) {
        const int wlo = L->pml[2 * ax], whi = L->pml[2 * ax + 1], np = L->npad[ax];
        for (int side = 0; side < 2; side++) {
            if (!(side ? whi : wlo))
                continue;
            const int p0 = side ? np - whi : 0, p1 = side ? np : wlo, js0 = side ? wlo : 0;
            const int c0 = max(p0, clip.lo[ax]), c1 = min(p1, clip.hi[ax]);
            if (c0 >= c1)
                continue;
            Box b;
            for (int q = 0; q < 3; q++) {
                if (q == ax) {
                    b.lo[q] = c0 - p0 + js0;
                    b.hi[q] = c1 - p0 + js0;
                } else if (q > ax) {
                    b.lo[q] = max(in.lo[q], clip.lo[q]);
                    b.hi[q] = min(in.hi[q], clip.hi[q]);
                } else {
                    b.lo[q] = max(0, clip.lo[q]);
                    b.hi[q] = min(L->npad[q], clip.hi[q]);
                }
            }
            if (box_empty(b))
                continue;
            dim3 blk(BX, BYK), grd((b.hi[0] - b.lo[0] + BX - 1) / BX, (b.hi[1] - b.lo[1] + BYK - 1) / BYK,
                                   b.hi[2] - b.lo[2]);
            k_pml<R, Y><<<grd, blk, 0, st>>>(a, m, ax, b);
            CUDA_TRY_LAUNCH();
        }
    }
    return 0;
}

int wave_cu_pml_clip(wave_sim *s, const Box &in, const Box &clip, cudaStream_t st)
{
    const KArgs a = kargs(s);
    const PArgs m = pargs(s);
    return with_r_y(s, [&](auto r, auto y) {
        return launch_pml_clip<decltype(r)::value, decltype(y)::value>(s, in, clip, a, m, st);
    });
}
