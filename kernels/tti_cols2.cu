/* tti_cols2 — the column-queue TTI twin with register blocking in x (tuning.pipe 4,
 * TTI_TILED_COLS_X2): the contract and the plane schedule of tti_cols.cu (one fused pass
 * over a box without CPML terms or free-surface image, z-marching register queues, one
 * barrier per plane, the f and u buffers alternating by plane parity), but every thread
 * owns TWO x-adjacent columns of the tile, of the s halo and of the f plane's outer cells.
 *
 * Why: the column kernel is issue-bound (~560 instructions per point, ~90 of them
 * shared-memory reads).  With a pair per thread one 64-bit shared load serves both
 * columns: the x derivatives of a pair read RE+1 float2 (RE = R rounded up to even)
 * instead of 4R floats, the y derivatives R float2 per side instead of 2R floats, and the
 * same for the outer derivatives of u_x and u_y; the address arithmetic, the loop
 * control, the barrier and the tilt-table decode are shared by two points.
 *
 * The m_z queue is a scatter accumulator instead of a queue of u_z plus one of m_x + m_y:
 * H[i] holds H1 of plane K-R+i (i < 2R) at the start of plane K; u_z(K) is added with
 * weight +-c1[l] to the planes K -+ l as the window slides, so the shift of the window is
 * the destination of the same FMA (no register moves) and 2R registers per field and
 * column replace 3R+1.  H1 is summed in another order than the CPU's (m_x + m_z) + m_y: a
 * rounding apart, like tti_cols.cu's.
 *
 * Tile BX x BY = 32 x 16 columns (16 x 16 threads), so the halo cross and the plane
 * schedule are tti_cols.cu's; the x halo is RE wide (R odd: one column more per side,
 * computed and not read) so that every pair starts at an even shared offset (8-byte
 * aligned float2).  Shared strides are 8 times an odd number: the four pairs of an
 * x-halo row and the four rows of a half warp then fall in distinct banks.
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
    static_assert(BX % 2 == 0 && FPL % 2 == 0 && UXN % 2 == 0 && UYN % 2 == 0, "float2 alignment");
    static_assert(NH <= NT && NE <= NT, "one halo pair and one other pair per thread");
    static_assert(NHY % 32 == 0, "the y-halo kind warp-uniform");
};

/* A pair of x-adjacent columns of the block's f plane at tile coordinates (x, y), x even:
 * 32-bit element offsets of its columns at allocated plane 0, each x and y clamped into
 * the allocated plane, so that every load is unconditional (launch: the field has fewer
 * than 2^31 elements).  A clamped column is more than R cells outside the padded grid:
 * its f only enters s of points outside the grid, which are 0 (IN), and L of points no
 * thread updates. */
struct Pair {
    int cb[2];  /* column c's element at allocated plane 0 */
    bool in[2]; /* inside the padded grid's x-y extent (else s and u are 0) */
};

__device__ __forceinline__ Pair pair_at(const TArgs &a, int px, int py, int d0, int d1)
{
    Pair p;
    const int gy = min(max(py + a.hy, 0), d1 - 1);
#pragma unroll
    for (int c = 0; c < 2; c++) {
        p.cb[c] = gy * (int)a.sy + min(max(px + c + a.h, 0), d0 - 1);
        p.in[c] = px + c >= 0 && px + c < a.npad[0] && py >= 0 && py < a.npad[1];
    }
    return p;
}

/* the element offset of padded plane P, clamped into the allocated array */
__device__ __forceinline__ int zoff(const TArgs &a, int P, int d2) { return min(max(P + a.h, 0), d2 - 1) * (int)a.sz; }

__device__ __forceinline__ float2 ldp(const float *__restrict__ f, const Pair &pr, int zo)
{
    return make_float2(__ldg(f + zo + pr.cb[0]), __ldg(f + zo + pr.cb[1]));
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

/* cp.async of 4 bytes (sm_80+), its group commit and wait */
__device__ __forceinline__ void cpa4(float *dst, const float *src)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src) : "memory");
}
__device__ __forceinline__ void cpa_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cpa_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

} // namespace

/* HS: the halo pairs' z queues in shared memory (float2 per pair and plane, each plane in
 * two slots of a ring of 2(2R+1) so that the 2R+1 live ones are contiguous from any
 * start; only the owner touches its slots). */
template <int R, int BX, int BY, bool HS>
__global__ void __launch_bounds__(BX / 2 * BY, 1)
    k_tti_cols2(TArgs a, Box b, int zchunk, int d0, int d1, int d2)
{
    using C = X2Cfg<R, BX, BY>;
    constexpr int Q = 2 * R + 1, RE = C::RE, QL = Q + 1; /* QL: queue length */
    extern __shared__ float2 sm2[]; /* float2: the buffers 8-byte aligned */
    float *const sm = reinterpret_cast<float *>(sm2);
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * C::PXN + tx;
    const int x0 = b.lo[0] + blockIdx.x * BX, y0 = b.lo[1] + blockIdx.y * BY;
    const int kb = b.lo[2] + blockIdx.z * zchunk, ke = min(kb + zchunk, b.hi[2]);
    const int xt = 2 * tx; /* the tile pair's column 0 */
    bool mine[2];
#pragma unroll
    for (int c = 0; c < 2; c++)
        mine[c] = x0 + xt + c < b.hi[0] && y0 + ty < b.hi[1];

    /* this thread's pairs: the tile's, a halo pair (t < NH), another pair (t >= NT - NE) */
    const bool ownH = t < C::NH, hyk = t < C::NHY; /* y halo: stores u_y, else u_x */
    int xh = 0, yh = 0;
    if (hyk) {
        const int row = t / C::PXN;
        xh = 2 * (t % C::PXN);
        yh = row < R ? row - R : BY + row - R;
    } else if (ownH) {
        const int e = t - C::NHY, c = e % RE; /* pair c of the row: RE/2 left, RE/2 right */
        xh = c < RE / 2 ? 2 * c - RE : BX + 2 * (c - RE / 2);
        yh = e / RE;
    }
    /* the other pairs go to the last NE threads, the halo pairs to the first NH: the
     * warps' work per plane more even (one barrier a plane waits for the slowest) */
    const int te = t - (C::NT - C::NE);
    const bool ownE = te >= 0;
    int xe = 0, ye = 0;
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
    const Pair pt = pair_at(a, x0 + xt, y0 + ty, d0, d1);
    const Pair ph = pair_at(a, x0 + xh, y0 + yh, d0, d1);
    const Pair pe = pair_at(a, x0 + xe, y0 + ye, d0, d1);

    /* shared offsets (within a field's buffer), all even */
    const int ft = (ty + 2 * R) * C::FS + xt + 2 * RE, fh = (yh + 2 * R) * C::FS + xh + 2 * RE,
              fe = (ye + 2 * R) * C::FS + xe + 2 * RE;
    const int uxt = C::FPL + ty * C::UXS + xt + RE, uyt = C::FPL + C::UXN + (ty + R) * C::UYS + xt;
    const int uh = hyk ? C::FPL + C::UXN + (yh + R) * C::UYS + xh : C::FPL + yh * C::UXS + xh + RE;
    auto buf = [&](int K, int f) { return sm + ((K & 1) * 2 + f) * C::FIELD; };
    /* HS: slot S of field F of this thread's halo pair */
    float2 *const hring = sm2 + 2 * C::FIELD + t;
    auto hs = [&](int f, int slot) -> float2 & { return hring[(f * 2 * Q + slot) * C::NH]; };
    int hb = 0; /* HS: the slot of plane K-R */

    /* the queues: f(K-R..K+R) of the tile and halo pairs at [0 .. 2R], the new plane at
     * 2R+1 until the shift; L(K-R..K-1) and the H1 accumulators of planes K-R..K+R-1 of the
     * tile pair */
    float q[2][2][QL], qh[2][2][HS ? 1 : QL], lq[2][2][R], H[2][2][2 * R];
#pragma unroll
    for (int f = 0; f < 2; f++) {
#pragma unroll
        for (int j = 0; j < Q; j++) {
            const int zo = zoff(a, kb - 2 * R + j, d2);
            const float2 v = ldp(a.f[f], pt, zo);
            q[f][0][j] = v.x;
            q[f][1][j] = v.y;
            if (ownH) {
                const float2 w = ldp(a.f[f], ph, zo);
                if constexpr (HS) {
                    hs(f, j) = w;
                    hs(f, j + Q) = w;
                } else {
                    qh[f][0][j] = w.x;
                    qh[f][1][j] = w.y;
                }
            }
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
        if (ownH) {
            if constexpr (HS)
                *reinterpret_cast<float2 *>(F + fh) = hs(f, R);
            else
                st2(F + fh, qh[f][0][R], qh[f][1][R]);
        }
        if (ownE) {
            const float2 v = ldp(a.f[f], pe, zoff(a, kb - R, d2));
            st2(F + fe, v.x, v.y);
        }
        xcur[f] = ldp(a.f[f], pe, zoff(a, kb - R + 1, d2));
    }
    /* the axes of plane K (n), the tilt codes of plane K+1 (tt): clamped loads, the axis
     * of a point outside the grid multiplies nothing (s = 0 there) */
    float3 nt[2], nh[2];
    uint32_t ttt[2], tth[2];
    {
        const int z0 = zoff(a, kb - R, d2), z1 = zoff(a, kb - R + 1, d2);
#pragma unroll
        for (int c = 0; c < 2; c++) {
            nt[c] = tti_axis(a.tab, __ldg(a.tilt + z0 + pt.cb[c]));
            ttt[c] = __ldg(a.tilt + z1 + pt.cb[c]);
            nh[c] = tti_axis(a.tab, __ldg(a.tilt + z0 + ph.cb[c]));
            tth[c] = __ldg(a.tilt + z1 + ph.cb[c]);
        }
    }
    /* the update's operands of plane k = K - R */
    float mv[2] = {0, 0}, mop[2] = {0, 0}, moq[2] = {0, 0};
    uint32_t med[2] = {0, 0};
    __syncthreads();

    for (int K = kb - R; K < ke + R; K++) {
        constexpr int u = 0; /* the queues' offset (a z loop of 3 planes a trip: measured slower, spills) */
        {
            const int k = K - R;
            /* f(K+R+1) of the queued pairs, committed after the barrier */
            float2 nf[2], nfh[2];
            {
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
                        lx[c] = a.c2[0][0] * q[f][c][u + R];
                        ly[c] = a.c2[1][0] * q[f][c][u + R];
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
                    float gz = 0, lz = a.c2[2][0] * q[f][c][u + R];
#pragma unroll
                    for (int l = 1; l <= R; l++) {
                        const float zp = q[f][c][u + R + l], zm = q[f][c][u + R - l];
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
                    float hx[2], hy[2], hz[2] = {0.0f, 0.0f}, uo[2];
                    dxy<R, RE, C::FS>(a, F + fh, hx, hy);
#pragma unroll
                    for (int l = 1; l <= R; l++) {
                        float2 zp, zm;
                        if constexpr (HS) {
                            zp = hs(f, hb + R + l);
                            zm = hs(f, hb + R - l);
                        } else {
                            zp = make_float2(qh[f][0][u + R + l], qh[f][1][u + R + l]);
                            zm = make_float2(qh[f][0][u + R - l], qh[f][1][u + R - l]);
                        }
                        hz[0] += a.c1[2][l] * (zp.x - zm.x);
                        hz[1] += a.c1[2][l] * (zp.y - zm.y);
                    }
#pragma unroll
                    for (int c = 0; c < 2; c++) {
                        const float sh =
                            ph.in[c] && kin ? nh[c].x * hx[c] + nh[c].y * hy[c] + nh[c].z * hz[c] : 0.0f;
                        uo[c] = (hyk ? nh[c].y : nh[c].x) * sh;
                    }
                    st2(F + uh, uo[0], uo[1]);
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
            /* 3: H1 of plane k complete (u_z(K) is its last term), the update of plane k;
             * the accumulator window slides by one plane in the same FMAs */
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
            if (k >= kb) {
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    if (!mine[c])
                        continue;
                    const float hp = h0[0][c], hq = h0[1][c], lp = lq[0][c][0], lqq = lq[1][c][0];
                    const float vz = mv[c], e = tti_ed_value(med[c]), d = tti_ed_value(med[c] >> 16);
                    const float sv = vz * ((e - d) * a.inv_sigma);
                    const float ap = vz * (1.0f + 2.0f * e), aq = vz * (1.0f + 2.0f * d) - sv, cc = vz - sv;
                    const int cu = (k + a.h) * (int)a.sz + pt.cb[c];
                    a.o[0][cu] = 2.0f * q[0][c][u] - mop[c] + ap * lp + ((sv - ap) * hp + cc * hq);
                    a.o[1][cu] = 2.0f * q[1][c][u] - moq[c] + aq * lp + (cc * hq - aq * hp) + sv * lqq;
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
                st2(F + ft, q[f][0][u + R + 1], q[f][1][u + R + 1]);
                if (ownH) {
                    if constexpr (HS)
                        *reinterpret_cast<float2 *>(F + fh) = hs(f, hb + R + 1);
                    else
                        st2(F + fh, qh[f][0][u + R + 1], qh[f][1][u + R + 1]);
                }
                if (ownE)
                    st2(F + fe, xcur[f].x, xcur[f].y);
            }
            /* the next plane's operands */
            {
                const int z2 = zoff(a, K + 2, d2);
#pragma unroll
                for (int f = 0; f < 2; f++)
                    xcur[f] = ldp(a.f[f], pe, z2);
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    nt[c] = tti_axis(a.tab, ttt[c]);
                    ttt[c] = __ldg(a.tilt + z2 + pt.cb[c]);
                    nh[c] = tti_axis(a.tab, tth[c]);
                    tth[c] = __ldg(a.tilt + z2 + ph.cb[c]);
                }
            }
            const int k1 = k + 1;
            if (k1 >= kb && k1 < ke) {
                const int z1 = (k1 + a.h) * (int)a.sz;
#pragma unroll
                for (int c = 0; c < 2; c++)
                    if (mine[c]) {
                        const int c1 = z1 + pt.cb[c];
                        mv[c] = __ldg(a.vel + c1);
                        med[c] = __ldg(a.ed + c1);
                        mop[c] = a.o[0][c1];
                        moq[c] = a.o[1][c1];
                    }
            }
            __syncthreads();
#pragma unroll
            for (int f = 0; f < 2; f++) {
                q[f][0][u + Q] = nf[f].x;
                q[f][1][u + Q] = nf[f].y;
                if constexpr (HS) {
                    /* plane K+R+1 takes the slot of K-R, read for the last time above */
                    if (ownH)
                        hs(f, hb) = hs(f, hb + Q) = nfh[f];
                } else {
                    qh[f][0][u + Q] = nfh[f].x;
                    qh[f][1][u + Q] = nfh[f].y;
                }
            }
            if constexpr (HS)
                hb = hb + 1 == Q ? 0 : hb + 1;
        }
        /* the oldest plane leaves the queues */
#pragma unroll
        for (int f = 0; f < 2; f++)
#pragma unroll
            for (int c = 0; c < 2; c++)
#pragma unroll
                for (int j = 0; j < Q; j++) {
                    q[f][c][j] = q[f][c][j + 1];
                    if constexpr (!HS)
                        qh[f][c][j] = qh[f][c][j + 1];
                }
    }
}

/* ST: the staged form.  Every f value the block reads (tile, halo cross, the plane's
 * other cells) comes into shared memory by cp.async, plane K+R+2 while plane K is
 * computed, into a ring of NS = 2R+3 planes (K-R .. K+R+2): no register holds a load in
 * flight and the load latency has R+1 planes of slack.  The f plane of step 1 is the
 * ring's plane K (no copy into a separate buffer); the halo pair's z derivative reads
 * its own column from the ring's planes K-R..K+R (no halo queue registers); the tile's
 * f queue still lives in registers, its new plane read from the ring (plane K+R+1, one
 * plane of slack). */
template <int R, int BY>
struct StCfg {
    using C = X2Cfg<R, 32, BY>;
    static constexpr int NS = 2 * R + 3;                     /* ring planes */
    static constexpr int UB = C::UXN + C::UYN;               /* u floats per field and parity */
    static constexpr int RING = NS * 2 * C::FPL;             /* ring floats */
    static constexpr size_t bytes = sizeof(float) * (RING + 2 * 2 * UB);
};

template <int R, int BY>
__global__ void __launch_bounds__(16 * BY, 1) k_tti_cols2s(TArgs a, Box b, int zchunk, int d0, int d1, int d2)
{
    constexpr int BX = 32;
    using C = X2Cfg<R, BX, BY>;
    using S = StCfg<R, BY>;
    constexpr int Q = 2 * R + 1, RE = C::RE, NS = S::NS;
    extern __shared__ float2 sm2[];
    float *const sm = reinterpret_cast<float *>(sm2);
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * C::PXN + tx;
    const int x0 = b.lo[0] + blockIdx.x * BX, y0 = b.lo[1] + blockIdx.y * BY;
    const int kb = b.lo[2] + blockIdx.z * zchunk, ke = min(kb + zchunk, b.hi[2]);
    const int xt = 2 * tx;
    bool mine[2];
#pragma unroll
    for (int c = 0; c < 2; c++)
        mine[c] = x0 + xt + c < b.hi[0] && y0 + ty < b.hi[1];
    const Roles<C, R, BX, BY> ro(t);
    const bool ownH = ro.ownH, hyk = ro.hyk, ownE = ro.ownE;
    const Pair pt = pair_at(a, x0 + xt, y0 + ty, d0, d1);
    const Pair ph = pair_at(a, x0 + ro.xh, y0 + ro.yh, d0, d1);
    const Pair pe = pair_at(a, x0 + ro.xe, y0 + ro.ye, d0, d1);
    /* offsets within a ring plane (field F at F * FPL) and within a u buffer, all even */
    const int ft = (ty + 2 * R) * C::FS + xt + 2 * RE, fh = (ro.yh + 2 * R) * C::FS + ro.xh + 2 * RE,
              fe = (ro.ye + 2 * R) * C::FS + ro.xe + 2 * RE;
    const int uxt = ty * C::UXS + xt + RE, uyt = C::UXN + (ty + R) * C::UYS + xt;
    const int uh = hyk ? C::UXN + (ro.yh + R) * C::UYS + ro.xh : ro.yh * C::UXS + ro.xh + RE;
    float *const ring = sm, *const ubase = sm + S::RING;
    auto ub = [&](int K, int f) { return ubase + ((K & 1) * 2 + f) * S::UB; };
    /* plane P (slot SL) of the ring: this thread's copies of both fields */
    auto stage = [&](int P, int sl) {
        const int zo = zoff(a, P, d2);
#pragma unroll
        for (int f = 0; f < 2; f++) {
            float *pl = ring + (sl * 2 + f) * C::FPL;
            const float *g = a.f[f] + zo;
            cpa4(pl + ft, g + pt.cb[0]);
            cpa4(pl + ft + 1, g + pt.cb[1]);
            if (ownH) {
                cpa4(pl + fh, g + ph.cb[0]);
                cpa4(pl + fh + 1, g + ph.cb[1]);
            }
            if (ownE) {
                cpa4(pl + fe, g + pe.cb[0]);
                cpa4(pl + fe + 1, g + pe.cb[1]);
            }
        }
        cpa_commit();
    };
    /* the ring holds plane P at slot (P - (kb - 2R)) mod NS; planes kb-2R .. kb+1 first */
#pragma unroll 1
    for (int j = 0; j < 2 * R + 2; j++)
        stage(kb - 2 * R + j, j);
    int sK = R; /* the slot of plane K (K = kb - R first) */
    auto slot = [&](int d) {
        const int v = sK + d;
        return v < 0 ? v + NS : v >= NS ? v - NS : v;
    };

    float q[2][2][Q + 1], lq[2][2][R], H[2][2][2 * R];
    cpa_wait<0>();
    __syncthreads();
#pragma unroll
    for (int f = 0; f < 2; f++) {
#pragma unroll
        for (int j = 0; j < Q; j++) {
            const float2 v = ld2(ring + (j * 2 + f) * C::FPL + ft);
            q[f][0][j] = v.x;
            q[f][1][j] = v.y;
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
    float3 nt[2], nh[2];
    uint32_t ttt[2], tth[2];
    {
        const int z0 = zoff(a, kb - R, d2), z1 = zoff(a, kb - R + 1, d2);
#pragma unroll
        for (int c = 0; c < 2; c++) {
            nt[c] = tti_axis(a.tab, __ldg(a.tilt + z0 + pt.cb[c]));
            ttt[c] = __ldg(a.tilt + z1 + pt.cb[c]);
            nh[c] = tti_axis(a.tab, __ldg(a.tilt + z0 + ph.cb[c]));
            tth[c] = __ldg(a.tilt + z1 + ph.cb[c]);
        }
    }
    float mv[2] = {0, 0}, mop[2] = {0, 0}, moq[2] = {0, 0};
    uint32_t med[2] = {0, 0};

    for (int K = kb - R; K < ke + R; K++) {
        const int k = K - R;
        /* plane K+R+2 into the slot of K-R-1 (read for the last time before the barrier
         * that ended plane K-1) */
        stage(K + R + 2, slot(R + 2));
        const bool kin = K >= 0 && K < a.npad[2];
        const float *const pK = ring + slot(0) * 2 * C::FPL;
        /* 1: s(K), u(K) and L(K) of the tile pair; u(K) of the halo pair */
        float ls[2][2], uzn[2][2];
#pragma unroll
        for (int f = 0; f < 2; f++) {
            const float *P = pK + f * C::FPL + ft;
            float *U = ub(K, f);
            float gx[2], gy[2], lx[2], ly[2];
            {
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
            st2(U + uxt, ux[0], ux[1]);
            st2(U + uyt, uy[0], uy[1]);
            if (ownH) {
                float hx[2], hy[2], hz[2] = {0.0f, 0.0f}, uo[2];
                dxy<R, RE, C::FS>(a, pK + f * C::FPL + fh, hx, hy);
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    const float2 zp = ld2(ring + (slot(l) * 2 + f) * C::FPL + fh),
                                 zm = ld2(ring + (slot(-l) * 2 + f) * C::FPL + fh);
                    hz[0] += a.c1[2][l] * (zp.x - zm.x);
                    hz[1] += a.c1[2][l] * (zp.y - zm.y);
                }
#pragma unroll
                for (int c = 0; c < 2; c++) {
                    const float sh = ph.in[c] && kin ? nh[c].x * hx[c] + nh[c].y * hy[c] + nh[c].z * hz[c] : 0.0f;
                    uo[c] = (hyk ? nh[c].y : nh[c].x) * sh;
                }
                st2(U + uh, uo[0], uo[1]);
            }
        }
        /* 2: (m_x + m_y)(K-1) from the other parity's u */
        float mxy[2][2];
#pragma unroll
        for (int f = 0; f < 2; f++) {
            const float *U = ub(K - 1, f);
            float mx[2], my[2];
            {
                const float *ux = U + uxt;
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
                const float *uy = U + uyt;
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
        /* 3: H1 of plane k, the update; the window slides (tti_cols2's kernel) */
        float h0[2][2];
#pragma unroll
        for (int f = 0; f < 2; f++)
#pragma unroll
            for (int c = 0; c < 2; c++) {
                const float uz = uzn[f][c];
                h0[f][c] = H[f][c][0] + a.c1[2][R] * uz;
#pragma unroll
                for (int i = 1; i < 2 * R; i++) {
                    const int l = R - i;
                    if (l > 0)
                        H[f][c][i - 1] = H[f][c][i] + a.c1[2][l] * uz;
                    else if (l < 0)
                        H[f][c][i - 1] = H[f][c][i] - a.c1[2][-l] * uz;
                    else
                        H[f][c][i - 1] = H[f][c][i];
                }
                H[f][c][2 * R - 1] = -a.c1[2][R] * uz;
                if (R == 1)
                    h0[f][c] += mxy[f][c];
                else
                    H[f][c][R - 2 > 0 ? R - 2 : 0] += mxy[f][c];
            }
        if (k >= kb) {
#pragma unroll
            for (int c = 0; c < 2; c++) {
                if (!mine[c])
                    continue;
                const float hp = h0[0][c], hq = h0[1][c], lp = lq[0][c][0], lqq = lq[1][c][0];
                const float vz = mv[c], e = tti_ed_value(med[c]), d = tti_ed_value(med[c] >> 16);
                const float sv = vz * ((e - d) * a.inv_sigma);
                const float ap = vz * (1.0f + 2.0f * e), aq = vz * (1.0f + 2.0f * d) - sv, cc = vz - sv;
                const int cu = (k + a.h) * (int)a.sz + pt.cb[c];
                a.o[0][cu] = 2.0f * q[0][c][0] - mop[c] + ap * lp + ((sv - ap) * hp + cc * hq);
                a.o[1][cu] = 2.0f * q[1][c][0] - moq[c] + aq * lp + (cc * hq - aq * hp) + sv * lqq;
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
        /* the next plane's operands */
        {
            const int z2 = zoff(a, K + 2, d2);
#pragma unroll
            for (int c = 0; c < 2; c++) {
                nt[c] = tti_axis(a.tab, ttt[c]);
                ttt[c] = __ldg(a.tilt + z2 + pt.cb[c]);
                nh[c] = tti_axis(a.tab, tth[c]);
                tth[c] = __ldg(a.tilt + z2 + ph.cb[c]);
            }
        }
        const int k1 = k + 1;
        if (k1 >= kb && k1 < ke) {
            const int z1 = (k1 + a.h) * (int)a.sz;
#pragma unroll
            for (int c = 0; c < 2; c++)
                if (mine[c]) {
                    const int c1 = z1 + pt.cb[c];
                    mv[c] = __ldg(a.vel + c1);
                    med[c] = __ldg(a.ed + c1);
                    mop[c] = a.o[0][c1];
                    moq[c] = a.o[1][c1];
                }
        }
        /* planes up to K+R+1 in the ring (only K+R+2's group may be pending) */
        cpa_wait<1>();
        __syncthreads();
        /* the tile's queue takes plane K+R+1 (its own copies) */
#pragma unroll
        for (int f = 0; f < 2; f++) {
            const float2 v = ld2(ring + (slot(R + 1) * 2 + f) * C::FPL + ft);
            q[f][0][Q] = v.x;
            q[f][1][Q] = v.y;
#pragma unroll
            for (int c = 0; c < 2; c++)
#pragma unroll
                for (int j = 0; j < Q; j++)
                    q[f][c][j] = q[f][c][j + 1];
        }
        sK = sK + 1 == NS ? 0 : sK + 1;
    }
    cpa_wait<0>(); /* no copy outlives the block's shared memory */
}

#define X2_BX 32

template <int R, int BY, bool HS>
static int launch(const tti_sim *s, const Box &in, cudaStream_t st)
{
    constexpr int BX = X2_BX;
    using C = X2Cfg<R, BX, BY>;
    constexpr size_t bytes = C::bytes + (HS ? sizeof(float2) * 2 * 2 * (2 * R + 1) * C::NH : 0);
    static int per_sm = 0; /* once per instantiation, as tti_cols.cu's launcher */
    if (!per_sm) {
        CUDA_TRY(cudaFuncSetAttribute(k_tti_cols2<R, BX, BY, HS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)bytes));
        int n = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_tti_cols2<R, BX, BY, HS>, C::NT, bytes));
        per_sm = n > 0 ? n : 1;
    }
    const struct wave_layout *L = &s->w.L;
    const int gx = (in.hi[0] - in.lo[0] + BX - 1) / BX, gy = (in.hi[1] - in.lo[1] + BY - 1) / BY;
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
    k_tti_cols2<R, BX, BY, HS><<<grd, blk, bytes, st>>>(tti_args(s), in, zc, L->dim[0], L->dim[1], L->dim[2]);
    CUDA_TRY_LAUNCH();
    return 0;
}

template <int R, int BY>
static int launch_st(const tti_sim *s, const Box &in, cudaStream_t st)
{
    constexpr int BX = X2_BX;
    using S = StCfg<R, BY>;
    constexpr size_t bytes = S::bytes;
    static int per_sm = 0;
    if (!per_sm) {
        CUDA_TRY(cudaFuncSetAttribute(k_tti_cols2s<R, BY>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
        int n = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_tti_cols2s<R, BY>, 16 * BY, bytes));
        per_sm = n > 0 ? n : 1;
    }
    const struct wave_layout *L = &s->w.L;
    const int gx = (in.hi[0] - in.lo[0] + BX - 1) / BX, gy = (in.hi[1] - in.lo[1] + BY - 1) / BY;
    const int nz = in.hi[2] - in.lo[2];
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
    dim3 blk(16, BY), grd(gx, gy, (nz + zc - 1) / zc);
    k_tti_cols2s<R, BY><<<grd, blk, bytes, st>>>(tti_args(s), in, zc, L->dim[0], L->dim[1], L->dim[2]);
    CUDA_TRY_LAUNCH();
    return 0;
}

int tti_cu_cols2(const tti_sim *s, const Box &b, int form, cudaStream_t st)
{
    if (box_empty(b))
        return 0;
    /* 32-bit element offsets (Pair): larger fields run the column kernel */
    if (s->w.L.count > (size_t)INT_MAX)
        return tti_cu_cols(s, b, false, st);
#define X2_CASE(R)                                                                                            \
    case R:                                                                                                   \
        switch (form) {                                                                                       \
        case TTI_TILED_COLS_X2: return launch<R, 16, false>(s, b, st);                                        \
        case TTI_TILED_COLS_X2_HS: return launch<R, 16, true>(s, b, st);                                      \
        case TTI_TILED_COLS_X2_HS_Y24: return launch<R, 24, true>(s, b, st);                                  \
        case TTI_TILED_COLS_X2_ST: return launch_st<R, 16>(s, b, st);                                         \
        case TTI_TILED_COLS_X2_ST_Y24: return launch_st<R, 24>(s, b, st);                                     \
        }                                                                                                     \
        break;
    switch (s->w.r) {
        X2_CASE(1)
        X2_CASE(2)
        X2_CASE(3)
        X2_CASE(4)
    }
#undef X2_CASE
    return err_set(-ENOTSUP, "tti: the column-pair kernel (tuning.pipe 4..8) holds orders 2..8 (order %d, form %d)",
                   2 * s->w.r, form);
}
