/* tti_cols2 — the column-pair TTI twin (tuning.pipe 4, TTI_TILED_COLS_X2): the contract
 * and the plane schedule of tti_cols.cu (one fused pass over a box without CPML terms or
 * free-surface image, z-marching register queues, one barrier per plane, the f and u
 * buffers alternating by plane parity), but every thread owns TWO x-adjacent columns of
 * the tile, of the s halo and of the f plane's outer cells.
 *
 * Why: the column kernel is issue-bound (626 instructions per point at 512^3, order 8;
 * 96 shared-memory reads per thread and plane).  With a pair per thread one 64-bit
 * shared load serves both columns: the x derivatives of a pair read RE+1 float2 (RE = R
 * rounded up to even) instead of 4R floats, the y derivatives R float2 per side instead
 * of 2R floats, and the same for the outer derivatives of u_x and u_y; global loads and
 * stores are 64-bit (the tile origin is put at an even allocated column, so that every
 * pair is 8-byte aligned); the address arithmetic, the loop control, the barrier and the
 * tilt-table decode are shared by two points.
 *
 * The m_z queue is a scatter accumulator instead of a queue of u_z plus one of m_x + m_y:
 * H[i] holds H1 of plane K-R+i (i < 2R) at the start of plane K; u_z(K) is added with
 * weight +-c1[l] to the planes K -+ l as the window slides, so the shift of the window is
 * the destination of the same FMA (no register moves) and 2R registers per field and
 * column replace 3R+1.  H1 is summed in another order than the CPU's (m_x + m_z) + m_y: a
 * rounding apart, like tti_cols.cu's.
 *
 * With 255 registers the compiler issues the plane-ahead global loads late (300-500
 * instructions before their use), and 8 warps per SM do not hide DRAM latency: plane
 * K+R+2 of f and plane k+2's update operands are prefetched into L2 (H100, 512^3: 4.07
 * -> 3.52 ms per step; docs/tti.md).
 *
 * Tile BX x BY = 32 x 16 columns (16 x 16 threads, 8 warps, 255 registers, one block per
 * SM), so the halo cross and the plane schedule are tti_cols.cu's; the x halo is RE wide
 * (R odd: one column more per side, computed and not read) so that every pair starts at
 * an even shared offset.  Shared strides are 8 times an odd number: the four pairs of an
 * x-halo row and the four rows of a half warp then fall in distinct banks.
 *
 * Measured and removed (H100, 512^3, order 8, CPML off, 2026-11-24; this form then 4.10
 * ms, the column kernel 4.35): the halo pairs' z queues in shared memory (4.46 ms; on a
 * 32 x 24 tile, 12 warps at 168 registers: 4.63), three planes a trip of the z loop
 * (5.53: spills), every f value staged by cp.async in a ring of 2R+3 planes with the
 * halo's z derivative read from the ring (5.32; on 32 x 24: 5.56).
 *
 * Arithmetic as the CPU reference: L = S_x + S_z + S_y per field, the update of
 * tti_update.  Orders 2..8 (R <= 4), 3D. */
#include <limits.h>

#include "kernels/tti_cuda.h"

namespace {

constexpr int even_up(int r) { return (r + 1) & ~1; }
/* the smallest stride >= W that is 8 times an odd number */
constexpr int odd8(int w) { return ((w + 7) / 8) % 2 ? (w + 7) / 8 * 8 : (w + 7) / 8 * 8 + 8; }

template <int R, int BX, int BY>
struct X2Cfg {
    static constexpr int RE = even_up(R);                            /* x halo width */
    static constexpr int PXN = BX / 2, NT = PXN * BY;                  /* threads */
    static constexpr int FS = odd8(BX + 4 * RE), FH = BY + 4 * R;    /* f plane: x in [-2RE, BX+2RE) */
    static constexpr int UXS = odd8(BX + 2 * RE), UYS = BX;          /* u_x: x in [-RE, BX+RE) */
    static constexpr int FPL = FS * FH, UXN = UXS * BY, UYN = UYS * (BY + 2 * R);
    static constexpr int FIELD = FPL + UXN + UYN;                    /* floats per field and buffer */
    /* halo pairs: the y halo (2R rows of PXN pairs), then the x halo (RE pairs a row) */
    static constexpr int NHY = 2 * R * PXN, NH = NHY + RE * BY;
    /* the f plane's other pairs (no queue holds them): outer y rows, outer x strips
     * (RE/2 pairs a side and row), the inner corners (RE/2 pairs, R rows, 4 corners) */
    static constexpr int NEY = 2 * R * PXN, NEX = RE * BY, NE = NEY + NEX + 2 * RE * R;
    static constexpr size_t bytes = sizeof(float) * 2 * 2 * FIELD;
    /* AS (tuning.pipe 8): after the four buffers, per plane parity, each thread's slots
     * of the update operands (v_pz^2 dt^2, the eps/delta codes, p and q at n-1: float2
     * each) and of the tilt codes of its tile and halo pairs (uint2 each) */
    static constexpr int AUPD = 4 * NT * 2, ATC = 2 * NT * 2, ASLOT = AUPD + ATC; /* floats per parity */
    static constexpr size_t bytes_as = bytes + sizeof(float) * 2 * ASLOT;
    static_assert(BX % 2 == 0 && FPL % 2 == 0 && UXN % 2 == 0 && UYN % 2 == 0, "float2 alignment");
    static_assert(NH <= NT && NE <= NT, "one halo pair and one other pair per thread");
    static_assert(NHY % 32 == 0, "the y-halo kind warp-uniform");
};

/* A pair of x-adjacent columns of the block's f plane at tile coordinates (x, y), x even:
 * the 32-bit element offset of its first column at allocated plane 0.  The launch puts
 * the tile origin at an even allocated column and rows are even (wave_layout's aligned
 * dim[0]), so a pair is 8-byte aligned and either inside the allocated x range or wholly
 * outside it; then (and outside in y) it is clamped into the array, so that every load is
 * unconditional (launch: the field has fewer than 2^31 elements).  A clamped pair is more
 * than R cells outside the padded grid: its f only enters s of points outside the grid,
 * which are 0 (IN), and L of points no thread updates. */
struct Pair {
    int cb;     /* the first column's element at allocated plane 0 (even) */
    bool in[2]; /* inside the padded grid's x-y extent (else s and u are 0) */
};

__device__ __forceinline__ Pair pair_at(const TArgs &a, int px, int py, int d0, int d1)
{
    Pair p;
    p.cb = min(max(py + a.hy, 0), d1 - 1) * (int)a.sy + min(max(px + a.h, 0), d0 - 2);
#pragma unroll
    for (int c = 0; c < 2; c++)
        p.in[c] = px + c >= 0 && px + c < a.npad[0] && py >= 0 && py < a.npad[1];
    return p;
}

/* the element offset of padded plane P, clamped into the allocated array */
__device__ __forceinline__ int zoff(const TArgs &a, int P, int d2) { return min(max(P + a.h, 0), d2 - 1) * (int)a.sz; }

__device__ __forceinline__ float2 ldp(const float *__restrict__ f, const Pair &pr, int zo)
{
    return __ldg(reinterpret_cast<const float2 *>(f + zo + pr.cb));
}
/* the pair's sector of field F at plane offset ZO into L2 (prefetch.global.L2: no
 * register, nothing waits on it) */
__device__ __forceinline__ void pf2(const float *f, const Pair &pr, int zo)
{
    asm volatile("prefetch.global.L2 [%0];\n" ::"l"(f + zo + pr.cb));
}
__device__ __forceinline__ uint2 ldt(const TArgs &a, const Pair &pr, int zo)
{
    return __ldg(reinterpret_cast<const uint2 *>(a.tilt + zo + pr.cb));
}

/* an 8-byte asynchronous copy global -> shared (cp.async.ca: tracked by the copy groups,
 * not by a register scoreboard; see AS in k_tti_cols2) */
__device__ __forceinline__ void cpa8(void *dst, const void *src)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(d), "l"(src) : "memory");
}
__device__ __forceinline__ void cpa_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cpa_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

__device__ __forceinline__ float2 ld2(const float *p) { return *reinterpret_cast<const float2 *>(p); }
__device__ __forceinline__ void st2(float *p, float x, float y) { *reinterpret_cast<float2 *>(p) = make_float2(x, y); }

/* x and y first derivatives at the pair whose column 0 is at shared P (stride S), from
 * RE+1 float2 along x and R float2 per side along y */
template <int R, int RE, int S>
__device__ __forceinline__ void dxy(const TArgs &a, const float *P, float (&gx)[2], float (&gy)[2])
{
    float xv[2 * RE + 2]; /* offsets -RE .. RE+1 */
#pragma unroll
    for (int j = 0; j <= RE; j++) {
        const float2 v = ld2(P - RE + 2 * j);
        xv[2 * j] = v.x;
        xv[2 * j + 1] = v.y;
    }
#pragma unroll
    for (int c = 0; c < 2; c++)
        gx[c] = gy[c] = 0.0f;
#pragma unroll
    for (int l = 1; l <= R; l++) {
        const float2 yp = ld2(P + l * S), ym = ld2(P - l * S);
        gx[0] += a.c1[0][l] * (xv[RE + l] - xv[RE - l]);
        gx[1] += a.c1[0][l] * (xv[RE + 1 + l] - xv[RE + 1 - l]);
        gy[0] += a.c1[1][l] * (yp.x - ym.x);
        gy[1] += a.c1[1][l] * (yp.y - ym.y);
    }
}

/* This thread's pairs besides its tile pair: a halo pair (t < NH; HYK: of the y halo,
 * which stores u_y, else u_x) and another pair of the f plane (OWNE: the last NE
 * threads, so that the warps' work per plane is more even before the barrier). */
template <class C, int R, int BX, int BY>
struct Roles {
    bool ownH, hyk, ownE;
    int xh, yh, xe, ye;
    __device__ __forceinline__ Roles(int t)
    {
        constexpr int RE = C::RE;
        ownH = t < C::NH;
        hyk = t < C::NHY;
        xh = yh = xe = ye = 0;
        if (hyk) {
            const int row = t / C::PXN;
            xh = 2 * (t % C::PXN);
            yh = row < R ? row - R : BY + row - R;
        } else if (ownH) {
            const int e = t - C::NHY, c = e % RE; /* pair c of the row: RE/2 left, RE/2 right */
            xh = c < RE / 2 ? 2 * c - RE : BX + 2 * (c - RE / 2);
            yh = e / RE;
        }
        const int te = t - (C::NT - C::NE);
        ownE = te >= 0;
        if (!ownE) {
        } else if (te < C::NEY) {
            const int row = te / C::PXN;
            xe = 2 * (te % C::PXN);
            ye = row < R ? row - 2 * R : BY + row;
        } else if (te < C::NEY + C::NEX) {
            const int e = te - C::NEY, c = e % RE;
            xe = c < RE / 2 ? 2 * c - 2 * RE : BX + RE + 2 * (c - RE / 2);
            ye = e / RE;
        } else {
            const int e = te - C::NEY - C::NEX, corner = e / (RE / 2 * R), w = e % (RE / 2 * R);
            const int px = 2 * (w % (RE / 2)), py = w / (RE / 2);
            xe = (corner & 1) ? BX + px : px - RE;
            ye = (corner & 2) ? BY + py : py - R;
        }
    }
};

} // namespace


template <int R, int BX, int BY, bool AS>
__global__ void __launch_bounds__(BX / 2 * BY, 1)
    k_tti_cols2(TArgs a, Box b, int xo, int zchunk, int d0, int d1, int d2)
{
    using C = X2Cfg<R, BX, BY>;
    constexpr int Q = 2 * R + 1, RE = C::RE;
    extern __shared__ float2 sm2[]; /* float2: the buffers 8-byte aligned */
    float *const sm = reinterpret_cast<float *>(sm2);
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * C::PXN + tx;
    /* XO: the box's first column, or the one before it to make the allocated column even */
    const int x0 = xo + blockIdx.x * BX, y0 = b.lo[1] + blockIdx.y * BY;
    const int kb = b.lo[2] + blockIdx.z * zchunk, ke = min(kb + zchunk, b.hi[2]);
    const int xt = 2 * tx; /* the tile pair's first column */
    bool mine[2];
#pragma unroll
    for (int c = 0; c < 2; c++)
        mine[c] = x0 + xt + c >= b.lo[0] && x0 + xt + c < b.hi[0] && y0 + ty < b.hi[1];
    const bool both = mine[0] && mine[1];
    const Roles<C, R, BX, BY> ro(t);
    const bool ownH = ro.ownH, hyk = ro.hyk, ownE = ro.ownE;
    const Pair pt = pair_at(a, x0 + xt, y0 + ty, d0, d1);
    const Pair ph = pair_at(a, x0 + ro.xh, y0 + ro.yh, d0, d1);
    const Pair pe = pair_at(a, x0 + ro.xe, y0 + ro.ye, d0, d1);

    /* shared offsets (within a field's buffer), all even */
    const int ft = (ty + 2 * R) * C::FS + xt + 2 * RE, fh = (ro.yh + 2 * R) * C::FS + ro.xh + 2 * RE,
              fe = (ro.ye + 2 * R) * C::FS + ro.xe + 2 * RE;
    const int uxt = C::FPL + ty * C::UXS + xt + RE, uyt = C::FPL + C::UXN + (ty + R) * C::UYS + xt;
    const int uh = hyk ? C::FPL + C::UXN + (ro.yh + R) * C::UYS + ro.xh : C::FPL + ro.yh * C::UXS + ro.xh + RE;
    auto buf = [&](int K, int f) { return sm + ((K & 1) * 2 + f) * C::FIELD; };
    /* AS: this thread's slot J of plane k's update operands (0 v_pz^2 dt^2, 1 the eps/delta
     * codes, 2 p(n-1), 3 q(n-1)) and of plane K's tilt codes (0 the tile pair, 1 the halo
     * pair), by plane parity */
    float *const as0 = sm + 4 * C::FIELD;
    auto upd = [&](int k, int j) { return reinterpret_cast<float2 *>(as0 + (k & 1) * C::ASLOT) + j * C::NT + t; };
    auto tcs = [&](int K, int j) {
        return reinterpret_cast<uint2 *>(as0 + (K & 1) * C::ASLOT + C::AUPD) + j * C::NT + t;
    };

    /* the queues: f(K-R..K+R) of the tile and halo pairs; L(K-R..K-1) and the H1
     * accumulators of planes K-R..K+R-1 of the tile pair */
    float q[2][2][Q], qh[2][2][Q], lq[2][2][R], H[2][2][2 * R];
#pragma unroll
    for (int f = 0; f < 2; f++) {
#pragma unroll
        for (int j = 0; j < Q; j++) {
            const int zo = zoff(a, kb - 2 * R + j, d2);
            const float2 v = ldp(a.f[f], pt, zo);
            q[f][0][j] = v.x;
            q[f][1][j] = v.y;
            const float2 w = ownH ? ldp(a.f[f], ph, zo) : make_float2(0.0f, 0.0f);
            qh[f][0][j] = w.x;
            qh[f][1][j] = w.y;
        }
#pragma unroll
        for (int c = 0; c < 2; c++) {
#pragma unroll
            for (int j = 0; j < R; j++)
                lq[f][c][j] = 0.0f;
#pragma unroll
            for (int j = 0; j < 2 * R; j++)
                H[f][c][j] = 0.0f;
        }
    }
    float2 xcur[2]; /* f(K+1) of the other pair, loaded a plane ahead */
#pragma unroll
    for (int f = 0; f < 2; f++) {
        float *F = buf(kb - R, f);
        st2(F + ft, q[f][0][R], q[f][1][R]);
        if (ownH)
            st2(F + fh, qh[f][0][R], qh[f][1][R]);
        if (ownE) {
            const float2 v = ldp(a.f[f], pe, zoff(a, kb - R, d2));
            st2(F + fe, v.x, v.y);
        }
        if constexpr (!AS)
            xcur[f] = ldp(a.f[f], pe, zoff(a, kb - R + 1, d2));
    }
    /* the axes of plane K (n), the tilt codes of plane K+1: clamped loads, the axis of a
     * point outside the grid multiplies nothing (s = 0 there) */
    float3 nt[2], nh[2];
    uint2 ttt, tth;
    {
        const int z0 = zoff(a, kb - R, d2), z1 = zoff(a, kb - R + 1, d2);
        const uint2 c0 = ldt(a, pt, z0), c1 = ldt(a, ph, z0);
        nt[0] = tti_axis(a.tab, c0.x);
        nt[1] = tti_axis(a.tab, c0.y);
        nh[0] = tti_axis(a.tab, c1.x);
        nh[1] = tti_axis(a.tab, c1.y);
        if constexpr (AS) {
            cpa8(tcs(kb - R + 1, 0), a.tilt + z1 + pt.cb);
            cpa8(tcs(kb - R + 1, 1), a.tilt + z1 + ph.cb);
            cpa_commit();
            cpa_wait_all();
        } else {
            ttt = ldt(a, pt, z1);
            tth = ldt(a, ph, z1);
        }
    }
    /* the update's operands of plane k = K - R */
    float2 mv = make_float2(0, 0), mop = make_float2(0, 0), moq = make_float2(0, 0);
    uint2 med = make_uint2(0, 0);
    __syncthreads();

    for (int K = kb - R; K < ke + R; K++) {
        const int k = K - R;
        if constexpr (AS) {
            /* what the plane's last global loads fetched, as asynchronous copies a plane
             * ahead: the other pair's f(K+1) straight into its buffer (last read at plane
             * K-1's step 1, before the barrier), plane k+1's update operands, plane K+2's
             * tilt codes; waited for before the plane's barrier.  Why: every global load of
             * the plane shares one scoreboard (SASS of tuning.pipe 4), so the first use of
             * any of them after the barrier (the axis product of plane K+1) waited for the
             * loads issued just before it: 21 % of the stall samples. */
            if (ownE) {
                const int z1 = zoff(a, K + 1, d2);
#pragma unroll
                for (int f = 0; f < 2; f++)
                    cpa8(buf(K + 1, f) + fe, a.f[f] + z1 + pe.cb);
            }
            const int k1 = k + 1;
            if (k1 >= kb && k1 < ke && (mine[0] || mine[1])) {
                const int c1 = (k1 + a.h) * (int)a.sz + pt.cb;
                cpa8(upd(k1, 0), a.vel + c1);
                cpa8(upd(k1, 1), a.ed + c1);
                cpa8(upd(k1, 2), a.o[0] + c1);
                cpa8(upd(k1, 3), a.o[1] + c1);
            }
            const int z2 = zoff(a, K + 2, d2);
            cpa8(tcs(K + 2, 0), a.tilt + z2 + pt.cb);
            if (ownH)
                cpa8(tcs(K + 2, 1), a.tilt + z2 + ph.cb);
            cpa_commit();
        }
        /* f(K+R+1) of the queued pairs, committed after the barrier; plane K+R+2 into L2.
         * Register pressure makes the compiler issue these loads late in the plane (ncu:
         * long-scoreboard stalls were half of a warp's cycles); from L2 they return in
         * time. */
        float2 nf[2], nfh[2];
        {
            const int zq = zoff(a, K + R + 2, d2);
#pragma unroll
            for (int f = 0; f < 2; f++) {
                pf2(a.f[f], pt, zq);
                if (ownH)
                    pf2(a.f[f], ph, zq);
            }
            const int zo = zoff(a, K + R + 1, d2);
#pragma unroll
            for (int f = 0; f < 2; f++) {
                nf[f] = ldp(a.f[f], pt, zo);
                nfh[f] = ownH ? ldp(a.f[f], ph, zo) : make_float2(0.0f, 0.0f);
            }
        }
        const bool kin = K >= 0 && K < a.npad[2];
        /* 1: s(K), u(K) and L(K) of the tile pair; u(K) of the halo pair */
        float ls[2][2], uzn[2][2];
#pragma unroll
        for (int f = 0; f < 2; f++) {
            float *F = buf(K, f);
            const float *P = F + ft;
            float gx[2], gy[2], lx[2], ly[2];
            {
                /* d_x, d_xx from the same RE+1 float2, d_y, d_yy from R per side */
                float xv[2 * RE + 2];
#pragma unroll
                for (int j = 0; j <= RE; j++) {
                    const float2 v = ld2(P - RE + 2 * j);
                    xv[2 * j] = v.x;
                    xv[2 * j + 1] = v.y;
                }
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    gx[c] = gy[c] = 0.0f;
                    lx[c] = a.c2[0][0] * q[f][c][R];
                    ly[c] = a.c2[1][0] * q[f][c][R];
                }
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    const float2 yp = ld2(P + l * C::FS), ym = ld2(P - l * C::FS);
#pragma unroll
                    for (int c = 0; c < 2; c++) {
                        const float xp = xv[RE + c + l], xm = xv[RE + c - l];
                        const float ypc = c ? yp.y : yp.x, ymc = c ? ym.y : ym.x;
                        gx[c] += a.c1[0][l] * (xp - xm);
                        lx[c] += a.c2[0][l] * (xp + xm);
                        gy[c] += a.c1[1][l] * (ypc - ymc);
                        ly[c] += a.c2[1][l] * (ypc + ymc);
                    }
                }
            }
            float ux[2], uy[2];
#pragma unroll
            for (int c = 0; c < 2; c++) {
                float gz = 0, lz = a.c2[2][0] * q[f][c][R];
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    const float zp = q[f][c][R + l], zm = q[f][c][R - l];
                    gz += a.c1[2][l] * (zp - zm);
                    lz += a.c2[2][l] * (zp + zm);
                }
                ls[f][c] = lx[c] + lz + ly[c]; /* the CPU's order */
                const float s = pt.in[c] && kin ? nt[c].x * gx[c] + nt[c].y * gy[c] + nt[c].z * gz : 0.0f;
                ux[c] = nt[c].x * s;
                uy[c] = nt[c].y * s;
                uzn[f][c] = nt[c].z * s;
            }
            st2(F + uxt, ux[0], ux[1]);
            st2(F + uyt, uy[0], uy[1]);
            if (ownH) {
                float hx[2], hy[2], uo[2];
                dxy<R, RE, C::FS>(a, F + fh, hx, hy);
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    float hz = 0;
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        hz += a.c1[2][l] * (qh[f][c][R + l] - qh[f][c][R - l]);
                    const float sh = ph.in[c] && kin ? nh[c].x * hx[c] + nh[c].y * hy[c] + nh[c].z * hz : 0.0f;
                    uo[c] = (hyk ? nh[c].y : nh[c].x) * sh;
                }
                st2(F + uh, uo[0], uo[1]);
            }
        }
        /* the table entries of plane K+1's axes now, multiplied at the end of the plane
         * (issued there, their latency stalled every warp right after the barrier); then
         * the tilt codes of plane K+2 */
        float2 th[4], tp[4];
        {
            if constexpr (AS) {
                /* (a thread without a halo pair reads a stale slot: a code, so an index
                 * inside the table, of an axis nothing uses) */
                ttt = *tcs(K + 1, 0);
                tth = *tcs(K + 1, 1);
            }
            const uint32_t cd[4] = {ttt.x, ttt.y, tth.x, tth.y};
#pragma unroll
            for (int i = 0; i < 4; i++) {
                th[i] = __ldg(a.tab + (cd[i] & 0xffffu));
                tp[i] = __ldg(a.tab + 65536 + (cd[i] >> 16));
            }
            if constexpr (!AS) {
                const int z2 = zoff(a, K + 2, d2);
                ttt = ldt(a, pt, z2);
                tth = ldt(a, ph, z2);
            }
        }
        /* 2: (m_x + m_y)(K-1) from the other buffer */
        float mxy[2][2];
#pragma unroll
        for (int f = 0; f < 2; f++) {
            const float *F = buf(K - 1, f);
            float mx[2], my[2];
            {
                const float *ux = F + uxt;
                float xv[2 * RE + 2];
#pragma unroll
                for (int j = 0; j <= RE; j++) {
                    const float2 v = ld2(ux - RE + 2 * j);
                    xv[2 * j] = v.x;
                    xv[2 * j + 1] = v.y;
                }
                mx[0] = mx[1] = 0.0f;
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    mx[0] += a.c1[0][l] * (xv[RE + l] - xv[RE - l]);
                    mx[1] += a.c1[0][l] * (xv[RE + 1 + l] - xv[RE + 1 - l]);
                }
            }
            {
                const float *uy = F + uyt;
                my[0] = my[1] = 0.0f;
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    const float2 p = ld2(uy + l * C::UYS), m = ld2(uy - l * C::UYS);
                    my[0] += a.c1[1][l] * (p.x - m.x);
                    my[1] += a.c1[1][l] * (p.y - m.y);
                }
            }
            mxy[f][0] = mx[0] + my[0];
            mxy[f][1] = mx[1] + my[1];
        }
        /* 3: H1 of plane k complete (u_z(K) is its last term), the update of plane k; the
         * accumulator window slides by one plane in the same FMAs */
        float h0[2][2];
#pragma unroll
        for (int f = 0; f < 2; f++)
#pragma unroll
            for (int c = 0; c < 2; c++) {
                const float uz = uzn[f][c];
                h0[f][c] = H[f][c][0] + a.c1[2][R] * uz; /* plane K-R: l = R */
#pragma unroll
                for (int i = 1; i < 2 * R; i++) {
                    const int l = R - i; /* old slot i is plane K-R+i = K - l */
                    if (l > 0)
                        H[f][c][i - 1] = H[f][c][i] + a.c1[2][l] * uz;
                    else if (l < 0)
                        H[f][c][i - 1] = H[f][c][i] - a.c1[2][-l] * uz;
                    else
                        H[f][c][i - 1] = H[f][c][i];
                }
                H[f][c][2 * R - 1] = -a.c1[2][R] * uz; /* plane K+R */
                /* (m_x + m_y)(K-1): old slot R-1, new R-2 (R = 1: plane k itself) */
                if (R == 1)
                    h0[f][c] += mxy[f][c];
                else
                    H[f][c][R - 2 > 0 ? R - 2 : 0] += mxy[f][c];
            }
        if (k >= kb && (mine[0] || mine[1])) {
            if constexpr (AS) {
                mv = *upd(k, 0);
                const float2 e2 = *upd(k, 1);
                med = make_uint2(__float_as_uint(e2.x), __float_as_uint(e2.y));
                mop = *upd(k, 2);
                moq = *upd(k, 3);
            }
            float op[2], oq[2];
#pragma unroll
            for (int c = 0; c < 2; c++) {
                const float hp = h0[0][c], hq = h0[1][c], lp = lq[0][c][0], lqq = lq[1][c][0];
                const uint32_t ed = c ? med.y : med.x;
                const float vz = c ? mv.y : mv.x, e = tti_ed_value(ed), d = tti_ed_value(ed >> 16);
                const float sv = vz * ((e - d) * a.inv_sigma);
                const float ap = vz * (1.0f + 2.0f * e), aq = vz * (1.0f + 2.0f * d) - sv, cc = vz - sv;
                op[c] = 2.0f * q[0][c][0] - (c ? mop.y : mop.x) + ap * lp + ((sv - ap) * hp + cc * hq);
                oq[c] = 2.0f * q[1][c][0] - (c ? moq.y : moq.x) + aq * lp + (cc * hq - aq * hp) + sv * lqq;
            }
            const int cu = (k + a.h) * (int)a.sz + pt.cb;
            if (both) {
                st2(a.o[0] + cu, op[0], op[1]);
                st2(a.o[1] + cu, oq[0], oq[1]);
            } else {
#pragma unroll
                for (int c = 0; c < 2; c++)
                    if (mine[c]) {
                        a.o[0][cu + c] = op[c];
                        a.o[1][cu + c] = oq[c];
                    }
            }
        }
#pragma unroll
        for (int f = 0; f < 2; f++)
#pragma unroll
            for (int c = 0; c < 2; c++) {
#pragma unroll
                for (int j = 0; j < R - 1; j++)
                    lq[f][c][j] = lq[f][c][j + 1];
                lq[f][c][R - 1] = ls[f][c];
            }
        /* 4: f(K+1) into the other buffer */
#pragma unroll
        for (int f = 0; f < 2; f++) {
            float *F = buf(K + 1, f);
            st2(F + ft, q[f][0][R + 1], q[f][1][R + 1]);
            if (ownH)
                st2(F + fh, qh[f][0][R + 1], qh[f][1][R + 1]);
            if constexpr (!AS) {
                if (ownE)
                    st2(F + fe, xcur[f].x, xcur[f].y);
            }
        }
        /* the next plane's operands */
        if constexpr (!AS) {
            const int z2 = zoff(a, K + 2, d2);
#pragma unroll
            for (int f = 0; f < 2; f++)
                xcur[f] = ldp(a.f[f], pe, z2);
        }
        const int k1 = k + 1;
        if (!AS && k1 >= kb && k1 < ke && (mine[0] || mine[1])) {
            /* 8-byte loads: a column of the pair outside the box reads its neighbour in the
             * allocated row, unused */
            const int c1 = (k1 + a.h) * (int)a.sz + pt.cb;
            mv = __ldg(reinterpret_cast<const float2 *>(a.vel + c1));
            med = __ldg(reinterpret_cast<const uint2 *>(a.ed + c1));
            mop = *reinterpret_cast<const float2 *>(a.o[0] + c1);
            moq = *reinterpret_cast<const float2 *>(a.o[1] + c1);
            /* and plane k+2's into L2 (read once a step: from DRAM otherwise) */
            if (k1 + 1 < ke) {
                const int c2 = c1 + (int)a.sz;
                asm volatile("prefetch.global.L2 [%0];\n" ::"l"(a.vel + c2));
                asm volatile("prefetch.global.L2 [%0];\n" ::"l"(a.ed + c2));
                asm volatile("prefetch.global.L2 [%0];\n" ::"l"(a.o[0] + c2));
                asm volatile("prefetch.global.L2 [%0];\n" ::"l"(a.o[1] + c2));
            }
        }
#pragma unroll
        for (int c = 0; c < 2; c++) {
            nt[c] = make_float3(th[c].x * tp[c].y, th[c].x * tp[c].x, th[c].y);
            nh[c] = make_float3(th[2 + c].x * tp[2 + c].y, th[2 + c].x * tp[2 + c].x, th[2 + c].y);
        }
        if constexpr (AS)
            cpa_wait_all();
        __syncthreads();
#pragma unroll
        for (int f = 0; f < 2; f++) {
#pragma unroll
            for (int j = 0; j < 2 * R; j++) {
                q[f][0][j] = q[f][0][j + 1];
                q[f][1][j] = q[f][1][j + 1];
                qh[f][0][j] = qh[f][0][j + 1];
                qh[f][1][j] = qh[f][1][j + 1];
            }
            q[f][0][2 * R] = nf[f].x;
            q[f][1][2 * R] = nf[f].y;
            qh[f][0][2 * R] = nfh[f].x;
            qh[f][1][2 * R] = nfh[f].y;
        }
    }
}

#define X2_BX 32
#define X2_BY 16

template <int R, bool AS>
static int launch(const tti_sim *s, const Box &in, cudaStream_t st)
{
    constexpr int BX = X2_BX, BY = X2_BY;
    using C = X2Cfg<R, BX, BY>;
    constexpr size_t bytes = AS ? C::bytes_as : C::bytes;
    static int per_sm = 0; /* once per instantiation, as tti_cols.cu's launcher */
    if (!per_sm) {
        CUDA_TRY(cudaFuncSetAttribute(k_tti_cols2<R, BX, BY, AS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)bytes));
        int n = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_tti_cols2<R, BX, BY, AS>, C::NT, bytes));
        per_sm = n > 0 ? n : 1;
    }
    const struct wave_layout *L = &s->w.L;
    /* the tile origin at an even allocated column (8-byte aligned pairs) */
    const int xo = in.lo[0] - ((in.lo[0] + L->halo) & 1);
    const int gx = (in.hi[0] - xo + BX - 1) / BX, gy = (in.hi[1] - in.lo[1] + BY - 1) / BY;
    const int nz = in.hi[2] - in.lo[2];
    /* z chunks: the count that minimises waves x (planes a block marches), a chunk
     * marching 2R planes more than it updates (tti_cols.cu's rule) */
    const long long slots = (long long)sm_count(&s->w) * per_sm, tiles = (long long)gx * gy;
    int zc = nz;
    long long best = -1;
    for (int nch = 1; nch <= 16 && (nz + nch - 1) / nch >= 2 * R; nch++) {
        const int c = (nz + nch - 1) / nch;
        const long long waves = (tiles * ((nz + c - 1) / c) + slots - 1) / slots, cost = waves * (c + 2 * R);
        if (best < 0 || cost < best) {
            best = cost;
            zc = c;
        }
    }
    dim3 blk(C::PXN, BY), grd(gx, gy, (nz + zc - 1) / zc);
    k_tti_cols2<R, BX, BY, AS><<<grd, blk, bytes, st>>>(tti_args(s), in, xo, zc, L->dim[0], L->dim[1], L->dim[2]);
    CUDA_TRY_LAUNCH();
    return 0;
}

int tti_cu_cols2(const tti_sim *s, const Box &b, bool async, cudaStream_t st)
{
    if (box_empty(b))
        return 0;
    /* 32-bit element offsets (Pair) and even rows (8-byte aligned pairs): else the column
     * kernel */
    if (s->w.L.count > (size_t)INT_MAX || s->w.L.dim[0] % 2)
        return tti_cu_cols(s, b, false, st);
    switch (s->w.r * 2 + async) {
    case 2: return launch<1, false>(s, b, st);
    case 4: return launch<2, false>(s, b, st);
    case 6: return launch<3, false>(s, b, st);
    case 8: return launch<4, false>(s, b, st);
    case 3: return launch<1, true>(s, b, st);
    case 5: return launch<2, true>(s, b, st);
    case 7: return launch<3, true>(s, b, st);
    case 9: return launch<4, true>(s, b, st);
    }
    return err_set(-ENOTSUP, "tti: the column-pair kernel (tuning.pipe 4) holds orders 2..8 (order %d)", 2 * s->w.r);
}
