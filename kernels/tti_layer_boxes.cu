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
 * thinner in z than in x and y (the z slabs).  The number of blocks. */
static long long lb_table(const Box *b, int n, bool split, LBoxes &L)
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
        const int w = s.hi[0] - s.lo[0], h = s.hi[1] - s.lo[1], nz = s.hi[2] - s.lo[2];
        d.txs = w <= 32 ? 3 : split ? 4 : 5;
        const int W = 1 << d.txs, H = (split ? 128 : 256) >> d.txs;
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
