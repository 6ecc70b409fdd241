/* tti_layer_boxes — the two naive passes (tti_naive.cu) beside the tiled core, rearranged
 * for the layer boxes (tuning.cpml 9 and 10, kernels/tti_cuda.h; 3D).  Same arithmetic
 * as k_tti_pass1 / k_tti_pass2 term by term; what changes is who computes what, and where:
 *
 *   - one launch per pass over all the boxes beside the core (up to six: z slabs, y slabs,
 *     x slabs), the tallest first, instead of one launch per box: no launch gaps, no
 *     nearly empty last wave per box;
 *   - a block is one plane of a tile of the box; in the z slabs (a few planes
 *     thick) the planes of a tile are consecutive blocks, so the 2R planes a point's z
 *     stencil reads are in L2 when its neighbours in z ask (the naive launch walks a
 *     whole 512 x 512 plane per z step: ncu measured 260 B of DRAM per point and a 27 %
 *     L2 hit rate in its z slabs, against ~100 B in the y and x slabs); the block's box,
 *     tile and plane are decoded by one thread (lb_tile).  A block marching 32 planes
 *     of its tile (the z stencil's planes from L1) was slower (H100 16:23 UTC, 512^3:
 *     9.99 ms per step against 8.23 with one plane per block): the blocks in flight then
 *     cover far apart tiles and planes, and the x-y halo and the z planes other blocks
 *     read come from DRAM again (pass 2: 7.45 GB a step against 3.04, L2 hit rate 42 %
 *     against 73 %, 0.85 instructions per cycle against 1.85);
 *   - pass 2's psi neighbours without a layer index per neighbour: within R along the
 *     axis a neighbour has psi iff it is in the same layer, e +- l elements away (grids
 *     whose layers are closer than R run the naive passes);
 *   - tiles 8 points wide in x in the x slabs (24 to 28 wide: a 32-wide tile leaves a
 *     quarter of its threads idle), 16 or 32 elsewhere;
 *   - SPLIT (tuning.cpml 9): one FIELD per thread, p on lanes 0-15 and q on lanes 16-31
 *     of a warp, the same 16 points.  Pass 2 exchanges L f and H1 f between the two lanes
 *     of a point (a shuffle; the update of each field needs both fields' L and H1) and
 *     each lane writes its own field.  Half the loads in flight per thread, about half
 *     the registers, twice the warps to hide the L1TEX latency that stalls the naive
 *     passes (ncu: 14-21 of 18-27 cycles between a warp's instructions, 74 registers, 24
 *     warps per SM).  Without SPLIT (tuning.cpml 10) a thread does both fields as the
 *     naive passes do: the arrangement above alone. */
#include "kernels/tti_cuda.h"

#include "kernels/cpml.h"

#define LB_MAX 6

/* The boxes of one launch: box m has blocks [start[m], start[m + 1]).  A block is a tile
 * of 2^TXS x (points per block >> TXS) points in x-y at one plane; ZF: the planes of a
 * tile are consecutive blocks (else the tiles of a plane are). */
struct LBox {
    int lo[3], hi[3];
    int txs, ntx, nty, nz; /* tiles in x and y, planes */
    int zf;
    unsigned start; /* a launch has fewer than 2^31 blocks (checked) */
};
struct LBoxes {
    LBox b[LB_MAX];
    int n;
};

template <class T>
__device__ __forceinline__ T fsel(int f, T a, T b)
{
    return f ? b : a;
}

/* The point (I, J, K) and the field F of this thread; false when it is past the box's
 * end.  SPLIT: 128 points per block, lane bit 4 the field; else 256 points, both
 * fields.  The block's box, tile and plane are decoded from its
 * index by one thread and shared (the box selection and three divisions cost ~250
 * instructions: ncu counted 410 a thread in the first form's pass 1, which decoded them
 * in every thread).  Every thread of the block must call this (a barrier). */
template <bool SPLIT>
__device__ __forceinline__ bool lb_tile(const LBoxes &L, int &i, int &j, int &k, int &f)
{
    __shared__ int d[6]; /* x0, y0, k, txs, hi x, hi y */
    if (threadIdx.x == 0) {
        const unsigned blk = blockIdx.x;
        /* the box of this block, by constant indices (a dynamic index into the parameter
         * array would copy it to local memory) */
        LBox B = L.b[0];
#pragma unroll
        for (int q = 1; q < LB_MAX; q++)
            if (q < L.n && blk >= L.b[q].start)
                B = L.b[q];
        const unsigned r = blk - B.start;
        unsigned tx, ty, z;
        if (B.zf) { /* the planes of a tile consecutive */
            z = r % (unsigned)B.nz;
            const unsigned t = r / (unsigned)B.nz;
            tx = t % (unsigned)B.ntx;
            ty = t / (unsigned)B.ntx;
        } else { /* the tiles of a plane consecutive */
            tx = r % (unsigned)B.ntx;
            const unsigned t = r / (unsigned)B.ntx;
            ty = t % (unsigned)B.nty;
            z = t / (unsigned)B.nty;
        }
        d[0] = B.lo[0] + ((int)tx << B.txs);
        d[1] = B.lo[1] + (int)ty * ((SPLIT ? 128 : 256) >> B.txs);
        d[2] = B.lo[2] + (int)z;
        d[3] = B.txs;
        d[4] = B.hi[0];
        d[5] = B.hi[1];
    }
    __syncthreads();
    const int t = threadIdx.x;
    int p;
    if (SPLIT) {
        f = (t >> 4) & 1;
        p = ((t >> 5) << 4) | (t & 15);
    } else {
        f = 0;
        p = t;
    }
    const int txs = d[3];
    i = d[0] + (p & ((1 << txs) - 1));
    j = d[1] + (p >> txs);
    k = d[2];
    return i < d[4] && j < d[5];
}

/* Pass 1 of field F at point (i, j, k): k_tti_pass1's body for one field. */
template <int R>
__device__ __forceinline__ void lb_s(const TArgs &a, int f, int i, int j, int k, long long c, const float nn[3],
                                     bool cpml)
{
    const long long st[3] = {1, a.sy, a.sz};
    const int x[3] = {i, j, k};
    const float *__restrict__ fv = fsel(f, a.f[0], a.f[1]);
    float s = 0;
#pragma unroll
    for (int ax = 0; ax < 3; ax++) {
        float g = 0;
#pragma unroll
        for (int l = 1; l <= R; l++)
            g += a.c1[ax][l] * (__ldg(fv + c + l * st[ax]) - __ldg(fv + c - l * st[ax]));
        const int js = cpml ? t_js(a, ax, x[ax]) : -1;
        if (js >= 0) {
            const long long e = t_slab(a, ax, i, j, k, js);
            const float v = a.pb[ax][x[ax]] * fsel(f, a.psi[0][ax], a.psi[1][ax])[e] + a.pa[ax][x[ax]] * g;
            fsel(f, a.psi_n[0][ax], a.psi_n[1][ax])[e] = v;
            g += v;
        }
        s = ax == 0 ? nn[0] * g : s + nn[ax] * g;
    }
    fsel(f, a.u[0][0], a.u[1][0])[c] = nn[0] * s;
    fsel(f, a.u[0][1], a.u[1][1])[c] = nn[1] * s;
    fsel(f, a.u[0][2], a.u[1][2])[c] = nn[2] * s;
}

template <int R, bool SPLIT>
__global__ void __launch_bounds__(256, 6) k_lb_pass1(TArgs a, LBoxes L, bool cpml)
{
    int i, j, k, f;
    if (!lb_tile<SPLIT>(L, i, j, k, f))
        return;
    const long long c = (long long)(k + a.h) * a.sz + (long long)(j + a.hy) * a.sy + (i + a.h);
    const float3 n = tti_axis(a.tab, __ldg(a.tilt + c));
    const float nn[3] = {n.x, n.y, n.z};
    if (SPLIT) {
        lb_s<R>(a, f, i, j, k, c, nn, cpml);
    } else {
        lb_s<R>(a, 0, i, j, k, c, nn, cpml);
        lb_s<R>(a, 1, i, j, k, c, nn, cpml);
    }
}

/* L f and H1 f of field F at point (i, j, k) with the CPML terms: k_tti_pass2's body for
 * one field (zeta and chi of F updated).  FC: f at the point. */
template <int R>
__device__ __forceinline__ void lb_lh(const TArgs &a, int f, int i, int j, int k, long long c, bool cpml, float &lap,
                                      float &h1, float &fc)
{
    const long long st[3] = {1, a.sy, a.sz};
    const long long sst[3] = {1, a.npad[0], (long long)a.npad[0] * a.npad[1]};
    const int x[3] = {i, j, k};
    const float *__restrict__ fv = fsel(f, a.f[0], a.f[1]);
    fc = __ldg(fv + c);
    lap = 0;
    h1 = 0;
    /* x, z, then y: the CPU reference's order of the sums */
#pragma unroll
    for (int o = 0; o < 3; o++) {
        const int ax = o == 0 ? 0 : o == 1 ? 2 : 1;
        const float *__restrict__ u = fsel(f, a.u[0][ax], a.u[1][ax]); /* n_a s, 0 beyond the padded grid */
        float d2 = a.c2[ax][0] * fc, m = 0;
#pragma unroll
        for (int l = 1; l <= R; l++) {
            d2 += a.c2[ax][l] * (__ldg(fv + c + l * st[ax]) + __ldg(fv + c - l * st[ax]));
            float up, dn;
            if (ax == 2) {
                up = __ldg(u + c + l * a.sz);
                /* above a free surface: (nz s)(-m) = (nz s)(m), same column */
                dn = __ldg(u + (a.fs && k - l < 0 ? c + (long long)(l - 2 * k) * a.sz : c - l * a.sz));
            } else {
                up = __ldg(u + c + l * st[ax]);
                dn = __ldg(u + c - l * st[ax]);
            }
            m += a.c1[ax][l] * (up - dn);
        }
        const int js = cpml ? t_js(a, ax, x[ax]) : -1;
        if (js >= 0) {
            const long long e = t_slab(a, ax, i, j, k, js);
            const float *__restrict__ psi = fsel(f, a.psi_n[0][ax], a.psi_n[1][ax]); /* psi(n+1), pass 1's */
            /* a neighbour within R along the axis has psi iff it is in the same layer (the
             * layers are R or more apart: lb_launch), at e +- l elements of the slab */
            const bool lo = x[ax] < a.pml[2 * ax];
            const int lim0 = lo ? 0 : a.npad[ax] - a.pml[2 * ax + 1], lim1 = lo ? a.pml[2 * ax] : a.npad[ax];
            float dpsi = 0;
#pragma unroll
            for (int l = 1; l <= R; l++) {
                const float pu = x[ax] + l < lim1 ? psi[e + l * sst[ax]] : 0.0f;
                const float pd = x[ax] - l >= lim0 ? psi[e - l * sst[ax]] : 0.0f;
                dpsi += a.c1[ax][l] * (pu - pd);
            }
            const float pa = a.pa[ax][x[ax]], pb = a.pb[ax][x[ax]];
            const float t = d2 + dpsi;
            float *__restrict__ zeta = fsel(f, a.zeta[0][ax], a.zeta[1][ax]);
            float *__restrict__ chi = fsel(f, a.chi[0][ax], a.chi[1][ax]);
            const float z = pb * zeta[e] + pa * t;
            zeta[e] = z;
            d2 = t + z;
            const float ch = pb * chi[e] + pa * m;
            chi[e] = ch;
            m += ch;
        }
        lap = ax == 0 ? d2 : lap + d2;
        h1 = ax == 0 ? m : h1 + m;
    }
}

/* SPLIT: 40 registers, 6 blocks per SM; both fields: 48 (80 unbounded), 5 blocks */
template <int R, bool SPLIT>
__global__ void __launch_bounds__(256, SPLIT ? 6 : 5) k_lb_pass2(TArgs a, LBoxes L, bool cpml)
{
    int i, j, k, f;
    const bool ok = lb_tile<SPLIT>(L, i, j, k, f);
    const long long c = (long long)(k + a.h) * a.sz + (long long)(j + a.hy) * a.sy + (i + a.h);
    if constexpr (!SPLIT) {
        if (!ok)
            return;
        float lf[2], hf[2], fc[2];
        lb_lh<R>(a, 0, i, j, k, c, cpml, lf[0], hf[0], fc[0]);
        lb_lh<R>(a, 1, i, j, k, c, cpml, lf[1], hf[1], fc[1]);
        tti_update(a, c, fc[0], fc[1], lf[0], lf[1], hf[0], hf[1]);
    } else {
        /* both lanes of a point (lane and lane ^ 16) reach the shuffle: no early return */
        float lap = 0, h1 = 0, fc = 0;
        if (ok)
            lb_lh<R>(a, f, i, j, k, c, cpml, lap, h1, fc);
        const float lo = __shfl_xor_sync(0xffffffffu, lap, 16), ho = __shfl_xor_sync(0xffffffffu, h1, 16);
        if (!ok)
            return;
        const float lp = f ? lo : lap, lq = f ? lap : lo, hp = f ? ho : h1, hq = f ? h1 : ho;
        /* tti_update for the field of this lane, term by term */
        const uint32_t ed = __ldg(a.ed + c);
        const float vz = __ldg(a.vel + c), e = tti_ed_value(ed), d = tti_ed_value(ed >> 16);
        const float sv = vz * ((e - d) * a.inv_sigma);
        if (f == 0) {
            const float ap = vz * (1.0f + 2.0f * e), cc = vz - sv;
            a.o[0][c] = 2.0f * fc - a.o[0][c] + ap * lp + ((sv - ap) * hp + cc * hq);
        } else {
            const float aq = vz * (1.0f + 2.0f * d) - sv, cc = vz - sv;
            a.o[1][c] = 2.0f * fc - a.o[1][c] + aq * lp + (cc * hq - aq * hp) + sv * lq;
        }
    }
}

/* The table of boxes B[0..N): the tallest first; x tiles 8 wide in boxes at most 32 wide
 * (the x slabs), 32 (16 with SPLIT) elsewhere; the planes of a tile consecutive in boxes
 * thinner in z than in x and y (the z slabs).  The number of blocks.  PAIR_HALO >= 0: the
 * table of the pairs' pass 2 (k_lb_pass2x2): a box's tiles from the even allocated column
 * at or before its first (the allocated index is the padded one plus PAIR_HALO), 512
 * points a block instead of 256 (128 with SPLIT). */
static long long lb_table(const Box *b, int n, bool split, LBoxes &L, int pair_halo = -1)
{
    int ord[LB_MAX], m = 0;
    for (int q = 0; q < n; q++)
        if (!box_empty(b[q]))
            ord[m++] = q;
    for (int x = 1; x < m; x++) /* stable: by depth, tallest first */
        for (int y = x; y > 0; y--) {
            const Box &p = b[ord[y - 1]], &q = b[ord[y]];
            if (q.hi[2] - q.lo[2] <= p.hi[2] - p.lo[2])
                break;
            const int t = ord[y];
            ord[y] = ord[y - 1];
            ord[y - 1] = t;
        }
    memset(&L, 0, sizeof L);
    long long total = 0;
    for (int q = 0; q < m; q++) {
        const Box &s = b[ord[q]];
        LBox &d = L.b[q];
        const int x0 = pair_halo < 0 ? s.lo[0] : s.lo[0] - ((s.lo[0] + pair_halo) & 1);
        const int w = s.hi[0] - x0, h = s.hi[1] - s.lo[1], nz = s.hi[2] - s.lo[2];
        d.txs = s.hi[0] - s.lo[0] <= 32 ? 3 : split ? 4 : 5;
        const int W = 1 << d.txs, H = (pair_halo >= 0 ? 512 : split ? 128 : 256) >> d.txs;
        for (int a = 0; a < 3; a++) {
            d.lo[a] = s.lo[a];
            d.hi[a] = s.hi[a];
        }
        d.ntx = (w + W - 1) / W;
        d.nty = (h + H - 1) / H;
        d.nz = nz;
        d.zf = nz < w && nz < h;
        d.start = (unsigned)total;
        total += (long long)d.ntx * d.nty * d.nz;
    }
    L.n = m;
    /* unused entries start past every block: never selected */
    for (int q = m; q < LB_MAX; q++)
        L.b[q].start = total > 0xffffffffLL ? 0xffffffffu : (unsigned)total;
    return total;
}

template <int R, bool P1, bool SPLIT>
static int lb_launch(const tti_sim *s, const Box *b, int n, bool cpml, cudaStream_t st)
{
    LBoxes L;
    const long long blocks = lb_table(b, n, SPLIT, L);
    if (blocks == 0)
        return 0;
    if (blocks > 0x7fffffffLL)
        return err_set(-EINVAL, "tti: %lld blocks in the layer boxes' launch", blocks);
    if (P1)
        k_lb_pass1<R, SPLIT><<<(unsigned)blocks, 256, 0, st>>>(tti_args(s), L, cpml);
    else
        k_lb_pass2<R, SPLIT><<<(unsigned)blocks, 256, 0, st>>>(tti_args(s), L, cpml);
    CUDA_TRY_LAUNCH();
    return 0;
}

int tti_cu_lboxes(const tti_sim *s, const Box *b, int n, bool pass1, bool cpml, bool split, cudaStream_t st)
{
    if (n > LB_MAX)
        return err_set(-EINVAL, "tti: %d layer boxes in one launch (at most %d)", n, LB_MAX);
    /* pass 2 reads a psi neighbour only within the point's own layer (lb_lh): the
     * layers of an axis must be R or more apart, else a neighbour across a thinner
     * interior has psi too; such grids (and 2D ones) run the naive passes */
    bool naive = wave_is_2d(&s->w);
    for (int a = 0; a < 3; a++) {
        const int lo = s->w.L.pml[2 * a], hi = s->w.L.pml[2 * a + 1];
        naive = naive || (lo + hi > 0 && s->w.L.npad[a] - lo - hi < s->w.r);
    }
    if (naive) {
        for (int q = 0; q < n; q++) {
            const int rc = pass1 ? tti_cu_pass1(s, b[q], cpml, st) : tti_cu_pass2(s, b[q], cpml, st);
            if (rc < 0)
                return rc;
        }
        return 0;
    }
    auto go = [&](auto r) {
        constexpr int R = decltype(r)::value;
        return pass1 ? (split ? lb_launch<R, true, true>(s, b, n, cpml, st) : lb_launch<R, true, false>(s, b, n, cpml, st))
                     : (split ? lb_launch<R, false, true>(s, b, n, cpml, st)
                              : lb_launch<R, false, false>(s, b, n, cpml, st));
    };
    /* the orders of the tiled plan, which alone runs these passes (tti_cu_tiled_supports) */
    switch (s->w.r) {
    case 1: return go(std::integral_constant<int, 1>{});
    case 2: return go(std::integral_constant<int, 2>{});
    case 3: return go(std::integral_constant<int, 3>{});
    case 4: return go(std::integral_constant<int, 4>{});
    }
    return err_set(-ENOTSUP, "tti: the layer boxes' passes hold orders 2..8 (order %d)", 2 * s->w.r);
}

/* ---- pass 2 in x-adjacent pairs (tuning.cpml 14) ------------------------------------------
 * k_lb_pass2's arithmetic, point by point the same, but a thread updates two x-adjacent
 * points of one row: one 64-bit load serves both points of every f and n_a s neighbour in
 * y and z (and the update's operands), and R + 1 of them the x neighbours of both, so a
 * pair issues 43 loads per field where two points issued 98, with one set of address
 * arithmetic (the pass was ~700 integer instructions of its ~1,000 per point: SASS).  The
 * CPML memory stays one point at a time (the x layers' edge can fall between the two).
 * The tile origin is put at an even allocated column (8-byte aligned pairs); a point of a
 * pair outside its box is not written.  Even R only (R odd: k_lb_pass2). */

/* The pair (I, I + 1, J, K) of this thread and which of its points are in the box; false
 * when neither is.  512 points a block: a tile of 2^TXS x (512 >> TXS) points at one
 * plane.  Every thread of the block must call this (a barrier). */
__device__ __forceinline__ bool lb_pair(const TArgs &a, const LBoxes &L, int &i, int &j, int &k, bool (&v)[2])
{
    __shared__ int d[7]; /* x0 (even allocated column), y0, k, txs, lo x, hi x, hi y */
    if (threadIdx.x == 0) {
        const unsigned blk = blockIdx.x;
        LBox B = L.b[0];
#pragma unroll
        for (int q = 1; q < LB_MAX; q++)
            if (q < L.n && blk >= L.b[q].start)
                B = L.b[q];
        const unsigned r = blk - B.start;
        unsigned tx, ty, z;
        if (B.zf) {
            z = r % (unsigned)B.nz;
            const unsigned t = r / (unsigned)B.nz;
            tx = t % (unsigned)B.ntx;
            ty = t / (unsigned)B.ntx;
        } else {
            tx = r % (unsigned)B.ntx;
            const unsigned t = r / (unsigned)B.ntx;
            ty = t % (unsigned)B.nty;
            z = t / (unsigned)B.nty;
        }
        d[0] = B.lo[0] - ((B.lo[0] + a.h) & 1) + ((int)tx << B.txs);
        d[1] = B.lo[1] + (int)ty * (512 >> B.txs);
        d[2] = B.lo[2] + (int)z;
        d[3] = B.txs;
        d[4] = B.lo[0];
        d[5] = B.hi[0];
        d[6] = B.hi[1];
    }
    __syncthreads();
    const int t = threadIdx.x, txs = d[3];
    i = d[0] + 2 * (t & ((1 << (txs - 1)) - 1));
    j = d[1] + (t >> (txs - 1));
    k = d[2];
#pragma unroll
    for (int c = 0; c < 2; c++)
        v[c] = j < d[6] && i + c >= d[4] && i + c < d[5];
    return v[0] || v[1];
}

__device__ __forceinline__ float2 lg2(const float *p) { return __ldg(reinterpret_cast<const float2 *>(p)); }

/* lb_lh of field F at the pair whose first point is element C (even): LAP, H1, FC per
 * point; the CPML memory of the points in the box (V) updated */
template <int R>
__device__ __forceinline__ void lb_lh2(const TArgs &a, int f, int i, int j, int k, long long c, bool cpml,
                                       const bool (&v)[2], float (&lap)[2], float (&h1)[2], float (&fc)[2])
{
    static_assert(R % 2 == 0, "pairs: R even (the x neighbours as R + 1 aligned float2)");
    const long long sst[3] = {1, a.npad[0], (long long)a.npad[0] * a.npad[1]};
    const float *__restrict__ fv = fsel(f, a.f[0], a.f[1]);
    {
        const float2 c0 = lg2(fv + c);
        fc[0] = c0.x;
        fc[1] = c0.y;
    }
    /* x, z, then y: the CPU reference's order of the sums */
#pragma unroll
    for (int o = 0; o < 3; o++) {
        const int ax = o == 0 ? 0 : o == 1 ? 2 : 1;
        const float *__restrict__ u = fsel(f, a.u[0][ax], a.u[1][ax]); /* n_a s, 0 beyond the padded grid */
        float d2[2], m[2];
        if (ax == 0) {
            float xv[2 * R + 2], uv[2 * R + 2]; /* offsets -R .. R+1 */
#pragma unroll
            for (int q = 0; q <= R; q++) {
                const float2 w = lg2(fv + c - R + 2 * q), y = lg2(u + c - R + 2 * q);
                xv[2 * q] = w.x;
                xv[2 * q + 1] = w.y;
                uv[2 * q] = y.x;
                uv[2 * q + 1] = y.y;
            }
#pragma unroll
            for (int p = 0; p < 2; p++) {
                d2[p] = a.c2[0][0] * fc[p];
                m[p] = 0;
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    d2[p] += a.c2[0][l] * (xv[R + p + l] + xv[R + p - l]);
                    m[p] += a.c1[0][l] * (uv[R + p + l] - uv[R + p - l]);
                }
            }
        } else {
            const long long st = ax == 1 ? a.sy : a.sz;
#pragma unroll
            for (int p = 0; p < 2; p++) {
                d2[p] = a.c2[ax][0] * fc[p];
                m[p] = 0;
            }
#pragma unroll
            for (int l = 1; l <= R; l++) {
                const float2 fp = lg2(fv + c + l * st), fm = lg2(fv + c - l * st), up = lg2(u + c + l * st);
                /* above a free surface: (nz s)(-m) = (nz s)(m), same column */
                const float2 dn = lg2(u + (ax == 2 && a.fs && k - l < 0 ? c + (long long)(l - 2 * k) * a.sz : c - l * st));
                d2[0] += a.c2[ax][l] * (fp.x + fm.x);
                d2[1] += a.c2[ax][l] * (fp.y + fm.y);
                m[0] += a.c1[ax][l] * (up.x - dn.x);
                m[1] += a.c1[ax][l] * (up.y - dn.y);
            }
        }
#pragma unroll
        for (int p = 0; p < 2; p++) {
            const int x = ax == 0 ? i + p : ax == 1 ? j : k;
            const int js = cpml && v[p] ? t_js(a, ax, x) : -1;
            if (js >= 0) {
                const long long e = t_slab(a, ax, i + p, j, k, js);
                const float *__restrict__ psi = fsel(f, a.psi_n[0][ax], a.psi_n[1][ax]); /* psi(n+1), pass 1's */
                /* a neighbour within R along the axis has psi iff it is in the same layer
                 * (the layers are R or more apart: tti_cu_lboxes_x2) */
                const bool lo = x < a.pml[2 * ax];
                const int lim0 = lo ? 0 : a.npad[ax] - a.pml[2 * ax + 1], lim1 = lo ? a.pml[2 * ax] : a.npad[ax];
                float dpsi = 0;
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    const float pu = x + l < lim1 ? psi[e + l * sst[ax]] : 0.0f;
                    const float pd = x - l >= lim0 ? psi[e - l * sst[ax]] : 0.0f;
                    dpsi += a.c1[ax][l] * (pu - pd);
                }
                const float pa = a.pa[ax][x], pb = a.pb[ax][x];
                const float t = d2[p] + dpsi;
                float *__restrict__ zeta = fsel(f, a.zeta[0][ax], a.zeta[1][ax]);
                float *__restrict__ chi = fsel(f, a.chi[0][ax], a.chi[1][ax]);
                const float z = pb * zeta[e] + pa * t;
                zeta[e] = z;
                d2[p] = t + z;
                const float ch = pb * chi[e] + pa * m[p];
                chi[e] = ch;
                m[p] += ch;
            }
            lap[p] = o == 0 ? d2[p] : lap[p] + d2[p];
            h1[p] = o == 0 ? m[p] : h1[p] + m[p];
        }
    }
}

template <int R>
__global__ void __launch_bounds__(256, 4) k_lb_pass2x2(TArgs a, LBoxes L, bool cpml)
{
    int i, j, k;
    bool v[2];
    if (!lb_pair(a, L, i, j, k, v))
        return;
    const long long c = (long long)(k + a.h) * a.sz + (long long)(j + a.hy) * a.sy + (i + a.h);
    float lf[2][2], hf[2][2], fc[2][2];
    lb_lh2<R>(a, 0, i, j, k, c, cpml, v, lf[0], hf[0], fc[0]);
    lb_lh2<R>(a, 1, i, j, k, c, cpml, v, lf[1], hf[1], fc[1]);
    /* tti_update, point by point */
    const uint2 ed2 = __ldg(reinterpret_cast<const uint2 *>(a.ed + c));
    const float2 vz2 = lg2(a.vel + c);
    const float2 op2 = *reinterpret_cast<const float2 *>(a.o[0] + c), oq2 = *reinterpret_cast<const float2 *>(a.o[1] + c);
    float np[2], nq[2];
#pragma unroll
    for (int p = 0; p < 2; p++) {
        const uint32_t ed = p ? ed2.y : ed2.x;
        const float vz = p ? vz2.y : vz2.x, e = tti_ed_value(ed), d = tti_ed_value(ed >> 16);
        const float sv = vz * ((e - d) * a.inv_sigma);
        const float ap = vz * (1.0f + 2.0f * e), aq = vz * (1.0f + 2.0f * d) - sv, cc = vz - sv;
        np[p] = 2.0f * fc[0][p] - (p ? op2.y : op2.x) + ap * lf[0][p] + ((sv - ap) * hf[0][p] + cc * hf[1][p]);
        nq[p] = 2.0f * fc[1][p] - (p ? oq2.y : oq2.x) + aq * lf[0][p] + (cc * hf[1][p] - aq * hf[0][p]) + sv * lf[1][p];
    }
    if (v[0] && v[1]) {
        *reinterpret_cast<float2 *>(a.o[0] + c) = make_float2(np[0], np[1]);
        *reinterpret_cast<float2 *>(a.o[1] + c) = make_float2(nq[0], nq[1]);
    } else {
#pragma unroll
        for (int p = 0; p < 2; p++)
            if (v[p]) {
                a.o[0][c + p] = np[p];
                a.o[1][c + p] = nq[p];
            }
    }
}

int tti_cu_lboxes_x2(const tti_sim *s, const Box *b, int n, bool cpml, cudaStream_t st)
{
    const struct wave_layout *WL = &s->w.L;
    bool fallback = wave_is_2d(&s->w) || s->w.r % 2 || WL->dim[0] % 2 || n > LB_MAX;
    for (int a = 0; a < 3; a++) {
        const int lo = WL->pml[2 * a], hi = WL->pml[2 * a + 1];
        fallback = fallback || (lo + hi > 0 && WL->npad[a] - lo - hi < s->w.r);
    }
    if (fallback)
        return tti_cu_lboxes(s, b, n, false, cpml, false, st);
    LBoxes L;
    const long long total = lb_table(b, n, false, L, WL->halo);
    if (total == 0)
        return 0;
    if (total > 0x7fffffffLL)
        return err_set(-EINVAL, "tti: %lld blocks in the layer boxes' launch", total);
    if (s->w.r == 2)
        k_lb_pass2x2<2><<<(unsigned)total, 256, 0, st>>>(tti_args(s), L, cpml);
    else
        k_lb_pass2x2<4><<<(unsigned)total, 256, 0, st>>>(tti_args(s), L, cpml);
    CUDA_TRY_LAUNCH();
    return 0;
}
