/* tti_cols3 — the column pairs with the halo pair's z derivative scattered (tuning.pipe 5,
 * TTI_TILED_COLS_X2S): tti_cols2.cu's kernel (its contract, tile, halo cross, plane
 * schedule and 64-bit accesses; read its header first) with two changes that remove
 * instructions, not arithmetic:
 *
 * - The halo pair needs f only for d_z at its own plane (s of the halo) and for f(K+1) in
 *   the shared plane.  Its 2R+1-deep register queue (2R moves per field, column and plane)
 *   is replaced by scatter accumulators like H1's: A[i] holds d_z f of plane K+i summed
 *   over the planes that have arrived; f(K+R+1) is added with weight +-c1 to planes
 *   K+1..K+2R+1 as the window slides, the shift being the destination of the same FMA
 *   (one move, for the plane f(K+R+1) itself).  f(K+1) for the shared plane is loaded
 *   again (it came R planes earlier: an L1 hit).  Same registers (2R+1 per field and
 *   column), 2R-1 fewer instructions per field, column and plane, two more loads.
 * - L of the tile pair is one chain: the three centre weights summed once (c20), the x, y
 *   and z terms added to it in turn (the CPU sums L_x + L_z + L_y, three centre products
 *   and two adds more; a rounding apart).
 *
 * The halo pair's d_z is then summed in another order than the CPU's (a rounding apart).
 *
 * SC false (tuning.pipe 7, TTI_TILED_COLS_X2P): the halo queue as tti_cols2.cu's, only the
 * chained L and the changes below.  Both forms also prefetch the tilt codes and the outer
 * pairs' f of plane K+3 into L2, multiply plane K+1's axes before the plane's last global
 * loads, and form element offsets unsigned (one 32-bit add and a LEA pair per address).
 *
 * Research variants: slower than the column pairs at 512^3 without CPML on the H100
 * (2026-11-24 19:55 UTC: 4 3.52 ms, 5 3.75, 7 3.86; 256^3: 0.421, 0.409, 0.452; with CPML
 * at 512^3 5 is 6.86 against 7.07).  ncu: the axis products wait ~370 instructions for the
 * tilt-table loads wherever they are placed (docs/tti.md, "Fewer instructions"). */
#include <limits.h>

#include "kernels/tti_cuda.h"

namespace {

constexpr int even_up(int r) { return (r + 1) & ~1; }
/* the smallest stride >= W that is 8 times an odd number */
constexpr int odd8(int w) { return ((w + 7) / 8) % 2 ? (w + 7) / 8 * 8 : (w + 7) / 8 * 8 + 8; }

template <int R, int BX, int BY>
struct X3Cfg {
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
    return __ldg(reinterpret_cast<const float2 *>(f + (unsigned)(zo + pr.cb)));
}
/* the pair's sector of field F at plane offset ZO into L2 (prefetch.global.L2: no
 * register, nothing waits on it) */
__device__ __forceinline__ void pf2(const float *f, const Pair &pr, int zo)
{
    asm volatile("prefetch.global.L2 [%0];\n" ::"l"(f + (unsigned)(zo + pr.cb)));
}
__device__ __forceinline__ void pfa(const void *p) { asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p)); }
__device__ __forceinline__ uint2 ldt(const TArgs &a, const Pair &pr, int zo)
{
    return __ldg(reinterpret_cast<const uint2 *>(a.tilt + (unsigned)(zo + pr.cb)));
}

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


template <int R, int BX, int BY, bool SC>
__global__ void __launch_bounds__(BX / 2 * BY, 1)
    k_tti_cols3(TArgs a, Box b, int xo, int zchunk, int d0, int d1, int d2)
{
    using C = X3Cfg<R, BX, BY>;
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

    /* the queues: f(K-R..K+R) of the tile and halo pairs; L(K-R..K-1) and the H1
     * accumulators of planes K-R..K+R-1 of the tile pair */
    /* A: the halo pair's d_z scatter accumulators, A[i] = d_z f of plane K+i (i <= 2R)
     * summed over f(N), N <= K+R, at the start of plane K; AF: the halo pair's f(K0) */
    float q[2][2][Q], A[2][2][Q], lq[2][2][R], H[2][2][2 * R];
    float2 af[2];
#pragma unroll
    for (int f = 0; f < 2; f++) {
#pragma unroll
        for (int c = 0; c < 2; c++) {
#pragma unroll
            for (int j = 0; j < R; j++)
                lq[f][c][j] = 0.0f;
#pragma unroll
            for (int j = 0; j < 2 * R; j++)
                H[f][c][j] = 0.0f;
#pragma unroll
            for (int j = 0; j < Q; j++)
                A[f][c][j] = 0.0f;
        }
#pragma unroll
        for (int j = 0; j < Q; j++) {
            const int zo = zoff(a, kb - 2 * R + j, d2);
            const float2 v = ldp(a.f[f], pt, zo);
            q[f][0][j] = v.x;
            q[f][1][j] = v.y;
            const float2 w = ownH ? ldp(a.f[f], ph, zo) : make_float2(0.0f, 0.0f);
            if (j == R)
                af[f] = w;
            if (!SC) {
                A[f][0][j] = w.x;
                A[f][1][j] = w.y;
            }
            /* f(N), N = K0 - R + j, into plane K0 + i: weight +c1[N - P] or -c1[P - N] */
#pragma unroll
            for (int i = 0; i < Q && SC; i++) {
                const int d = j - R - i;
                if (d >= 1 && d <= R) {
                    A[f][0][i] += a.c1[2][d] * w.x;
                    A[f][1][i] += a.c1[2][d] * w.y;
                } else if (d <= -1 && d >= -R) {
                    A[f][0][i] -= a.c1[2][-d] * w.x;
                    A[f][1][i] -= a.c1[2][-d] * w.y;
                }
            }
        }
    }
    float2 xcur[2]; /* f(K+1) of the other pair, loaded a plane ahead */
#pragma unroll
    for (int f = 0; f < 2; f++) {
        float *F = buf(kb - R, f);
        st2(F + ft, q[f][0][R], q[f][1][R]);
        if (ownH)
            st2(F + fh, af[f].x, af[f].y);
        if (ownE) {
            const float2 v = ldp(a.f[f], pe, zoff(a, kb - R, d2));
            st2(F + fe, v.x, v.y);
        }
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
        ttt = ldt(a, pt, z1);
        tth = ldt(a, ph, z1);
    }
    /* the update's operands of plane k = K - R */
    float2 mv = make_float2(0, 0), mop = make_float2(0, 0), moq = make_float2(0, 0);
    uint2 med = make_uint2(0, 0);
    const float c20 = a.c2[0][0] + a.c2[1][0] + a.c2[2][0];
    __syncthreads();

    for (int K = kb - R; K < ke + R; K++) {
        const int k = K - R;
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
            /* the tilt codes and the other pair's f loaded next plane (for plane K+3):
             * from DRAM they held up the table lookups' scoreboard (ncu, tti_cols2.cu: a
             * fifth of all stall samples on the axis product after the barrier) */
            const int z3 = zoff(a, K + 3, d2);
            pfa(a.tilt + (unsigned)(z3 + pt.cb));
            if (ownH)
                pfa(a.tilt + (unsigned)(z3 + ph.cb));
            if (ownE) {
                pf2(a.f[0], pe, z3);
                pf2(a.f[1], pe, z3);
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
            float gx[2], gy[2], lx[2];
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
                    lx[c] = c20 * q[f][c][R]; /* the three centre weights at once */
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
                        lx[c] += a.c2[1][l] * (ypc + ymc);
                    }
                }
            }
            float ux[2], uy[2];
#pragma unroll
            for (int c = 0; c < 2; c++) {
                float gz = 0, lz = lx[c]; /* one chain: L in another order than the CPU's */
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    const float zp = q[f][c][R + l], zm = q[f][c][R - l];
                    gz += a.c1[2][l] * (zp - zm);
                    lz += a.c2[2][l] * (zp + zm);
                }
                ls[f][c] = lz;
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
                    float hz = 0.0f;
                    if (SC)
                        hz = A[f][c][0];
                    else
#pragma unroll
                        for (int l = 1; l <= R; l++)
                            hz += a.c1[2][l] * (A[f][c][R + l] - A[f][c][R - l]);
                    const float sh = ph.in[c] && kin ? nh[c].x * hx[c] + nh[c].y * hy[c] + nh[c].z * hz : 0.0f;
                    uo[c] = (hyk ? nh[c].y : nh[c].x) * sh;
                }
                st2(F + uh, uo[0], uo[1]);
            }
        }
        /* the table entries of plane K+1's axes now, multiplied at the end of the plane
         * (issued there, their latency stalled every warp right after the barrier); then
         * the tilt codes of plane K+2 */
        float2 th[4], tp[4], hf1[2];
        {
            const uint32_t cd[4] = {ttt.x, ttt.y, tth.x, tth.y};
#pragma unroll
            for (int i = 0; i < 4; i++) {
                th[i] = __ldg(a.tab + (cd[i] & 0xffffu));
                tp[i] = __ldg(a.tab + 65536 + (cd[i] >> 16));
            }
            const int z2 = zoff(a, K + 2, d2);
            ttt = ldt(a, pt, z2);
            tth = ldt(a, ph, z2);
            /* the halo pair's f(K+1), stored into the other buffer at 4 (no queue holds it:
             * loaded R planes ago, from L1) */
            const int z1 = zoff(a, K + 1, d2);
#pragma unroll
            for (int f = 0; f < 2; f++)
                hf1[f] = !SC                ? make_float2(A[f][0][R + 1], A[f][1][R + 1])
                         : ownH ? ldp(a.f[f], ph, z1) : make_float2(0.0f, 0.0f);
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
            const unsigned cu = (k + a.h) * (int)a.sz + pt.cb;
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
        /* plane K+1's axes, before this plane's last global loads are issued: multiplied
         * after the barrier, they waited on a scoreboard that those loads (L2 latency)
         * shared with the table lookups (ncu: a fifth of tti_cols2.cu's stall samples on
         * that multiply, with or without the tilt codes in L2) */
#pragma unroll
        for (int c = 0; c < 2; c++) {
            nt[c] = make_float3(th[c].x * tp[c].y, th[c].x * tp[c].x, th[c].y);
            nh[c] = make_float3(th[2 + c].x * tp[2 + c].y, th[2 + c].x * tp[2 + c].x, th[2 + c].y);
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
                st2(F + fh, hf1[f].x, hf1[f].y);
            if (ownE)
                st2(F + fe, xcur[f].x, xcur[f].y);
        }
        /* the next plane's operands */
        {
            const int z2 = zoff(a, K + 2, d2);
#pragma unroll
            for (int f = 0; f < 2; f++)
                xcur[f] = ldp(a.f[f], pe, z2);
        }
        const int k1 = k + 1;
        if (k1 >= kb && k1 < ke && (mine[0] || mine[1])) {
            /* 8-byte loads: a column of the pair outside the box reads its neighbour in the
             * allocated row, unused */
            const unsigned c1 = (k1 + a.h) * (int)a.sz + pt.cb;
            mv = __ldg(reinterpret_cast<const float2 *>(a.vel + c1));
            med = __ldg(reinterpret_cast<const uint2 *>(a.ed + c1));
            mop = *reinterpret_cast<const float2 *>(a.o[0] + c1);
            moq = *reinterpret_cast<const float2 *>(a.o[1] + c1);
            /* and plane k+2's into L2 (read once a step: from DRAM otherwise) */
            if (k1 + 1 < ke) {
                const unsigned c2 = c1 + (unsigned)a.sz;
                asm volatile("prefetch.global.L2 [%0];\n" ::"l"(a.vel + c2));
                asm volatile("prefetch.global.L2 [%0];\n" ::"l"(a.ed + c2));
                asm volatile("prefetch.global.L2 [%0];\n" ::"l"(a.o[0] + c2));
                asm volatile("prefetch.global.L2 [%0];\n" ::"l"(a.o[1] + c2));
            }
        }
        __syncthreads();
#pragma unroll
        for (int f = 0; f < 2; f++) {
#pragma unroll
            for (int j = 0; j < 2 * R; j++) {
                q[f][0][j] = q[f][0][j + 1];
                q[f][1][j] = q[f][1][j + 1];
            }
            q[f][0][2 * R] = nf[f].x;
            q[f][1][2 * R] = nf[f].y;
            /* f(N = K+R+1) of the halo pair into planes K+1+i: the window slides in the
             * same FMAs (N - P = R - i) */
#pragma unroll
            for (int c = 0; c < 2; c++) {
                const float w = c ? nfh[f].y : nfh[f].x;
                /* !SC: the queue shifts; SC: the window slides (d = 0: the plane of W) */
#pragma unroll
                for (int i = 0; i < 2 * R; i++) {
                    const int d = R - i;
                    if (SC && d > 0)
                        A[f][c][i] = A[f][c][i + 1] + a.c1[2][d] * w;
                    else if (SC && d < 0)
                        A[f][c][i] = A[f][c][i + 1] - a.c1[2][-d] * w;
                    else
                        A[f][c][i] = A[f][c][i + 1];
                }
                A[f][c][2 * R] = SC ? -a.c1[2][R] * w : w;
            }
        }
    }
}

#define X2_BX 32
#define X2_BY 16

template <int R, bool SC>
static int launch(const tti_sim *s, const Box &in, cudaStream_t st)
{
    constexpr int BX = X2_BX, BY = X2_BY;
    using C = X3Cfg<R, BX, BY>;
    static int per_sm = 0; /* once per instantiation, as tti_cols.cu's launcher */
    if (!per_sm) {
        CUDA_TRY(cudaFuncSetAttribute(k_tti_cols3<R, BX, BY, SC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)C::bytes));
        int n = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_tti_cols3<R, BX, BY, SC>, C::NT, C::bytes));
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
    k_tti_cols3<R, BX, BY, SC><<<grd, blk, C::bytes, st>>>(tti_args(s), in, xo, zc, L->dim[0], L->dim[1], L->dim[2]);
    CUDA_TRY_LAUNCH();
    return 0;
}

int tti_cu_cols3(const tti_sim *s, const Box &b, bool scatter, cudaStream_t st)
{
    if (box_empty(b))
        return 0;
    /* 32-bit element offsets (Pair) and even rows (8-byte aligned pairs): else the column
     * kernel */
    if (s->w.L.count > (size_t)INT_MAX || s->w.L.dim[0] % 2)
        return tti_cu_cols(s, b, false, st);
    switch (s->w.r * 2 + scatter) {
    case 2: return launch<1, false>(s, b, st);
    case 3: return launch<1, true>(s, b, st);
    case 4: return launch<2, false>(s, b, st);
    case 5: return launch<2, true>(s, b, st);
    case 6: return launch<3, false>(s, b, st);
    case 7: return launch<3, true>(s, b, st);
    case 8: return launch<4, false>(s, b, st);
    case 9: return launch<4, true>(s, b, st);
    }
    return err_set(-ENOTSUP, "tti: the column-pair kernel (tuning.pipe 5 / 7) holds orders 2..8 (order %d)", 2 * s->w.r);
}
