/* rtm_fused — the CUDA kernel of RTM's fused backward step (rtm_fused.h): k_fused steps
 * the receiver wavefield q forward and the source wavefield u in reverse, and images
 * with the levels it reads, in one pass.  It is k_ring (kernels/wave_ring.cuh: 2.5D, an
 * x-y tile per block marching along z, a cp.async ring of planes in shared memory and a
 * register queue of 2R+1 values along z) with two fields: both p tiles in rings of their
 * own, and u's prev, u's velocity, q's prev and q's velocity staged as k_ring stages q
 * and v.  Per point and step it reads u(n), u(n+1), q(n+1), q(n+2), the velocity (u's
 * only where it differs from q's: the random layers) and the image accumulators the
 * condition needs, and writes u(n-1), q(n) and the accumulators: each field once,
 * where the separate kernels read u(n+1) and q(n+1) a second time for the imaging.
 *
 * q's CPML then goes on exactly as its own step does (the lines kernels over the layers,
 * the free-surface mirror), after k_fused has updated q's whole padded grid with the
 * plain Laplacian, as the interior kernel of the lines arrangement does.  u is updated
 * over its reverse step's box (the whole grid, or the interior for the boundary
 * strategy); a block whose tile lies outside it reads nothing of u.
 *
 * k_fused_split is the same step with the two fields on two thread groups of a block
 * (variants 1-3), and with q's group alone (QONLY) the receiver step with the imaging in
 * it (wave_fused_image_step).  Measured on the H100 (docs/rtm.md): every shape of the
 * full fused step is slower than the separate passes, because q's CPML kernels then run
 * with nothing beside them. */
#include "kernels/rtm_fused.h"

#include "kernels/device.h"
#include "kernels/wave_ring.cuh"

struct FArgs {
    const float *__restrict__ up; /* u(n): u's cur */
    float *__restrict__ uq;       /* u(n+1) in, u(n-1) out: u's prev */
    const float *__restrict__ uvel;
    const float *__restrict__ qp; /* q(n+1): q's cur */
    float *__restrict__ qq;       /* q(n+2) in, q(n) out: q's prev */
    const float *__restrict__ qvel;
    float *num, *ills, *illr;     /* the image accumulators (compact, image box); num NULL:
                                     no imaging this step, ills / illr NULL: not kept */
    long long sy, sz;
    int h, hy;
    float c2[3][MAXR + 1];
    Box ub;                       /* u's update box (padded coordinates) */
    Box vb;                       /* where u's velocity is q's (padded): not read there */
    int ilo[3], in[3];            /* the image box: its first cell (padded), its size */
};

/* Shared memory of k_fused: RingCfg's p slots twice (u, q; NRING 1: q's alone, the
 * receiver step with the imaging in it) and four staged planes per q/v slot (u prev,
 * u velocity, q prev, q velocity). */
template <int R, int BY, int NY, int D, bool Y, int W, int NRING = 2>
struct FusedCfg {
    using C = RingCfg<R, BY, NY, D, Y, W>;
    static constexpr int SSLOT = 4 * C::TYT * W;
    static constexpr size_t bytes = sizeof(float) * (NRING * (size_t)C::S * C::PSLOT + (size_t)(D + 1) * SSLOT);
};

/* acc + x y, each rounded to nearest: imaging.cu's arithmetic (and the CPU's). */
__device__ __forceinline__ float fmac_rn(float acc, float x, float y) { return __fadd_rn(acc, __fmul_rn(x, y)); }

static __device__ __forceinline__ bool in_range(int v, int lo, int hi) { return v >= lo && v < hi; }

/* Two blocks of the 8x2 tile per SM need at most 128 registers a thread (the kernel
 * holds two z queues): asked for, or ptxas takes 134 at order 8 and one block fits.
 * Above order 12 the shared memory holds one block anyway. */
constexpr int fused_min_blocks(int ny, int r) { return ny <= 2 && r <= 6 ? 2 : 1; }

template <int R, int BY, int NY, int D, bool Y = true, int W = TX>
__global__ void __launch_bounds__(W *BY, fused_min_blocks(NY, R)) k_fused(FArgs a, Box b, int zchunk, int x_org, int dim0, int dim1)
{
    static_assert(Y || (BY == 1 && NY == 1), "a 2D block is one row");
    using C = RingCfg<R, BY, NY, D, Y, W>;
    using F = FusedCfg<R, BY, NY, D, Y, W>;
    constexpr int NT = W * BY, RY = C::RY;
    extern __shared__ __align__(16) float smem[];
    float *const psu = smem;
    float *const psq = smem + C::S * C::PSLOT;
    float *const ss = smem + 2 * C::S * C::PSLOT;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * W + tx;
    const int x0 = x_org + blockIdx.x * W, y0 = b.lo[1] + blockIdx.y * C::TYT;
    const int kb = b.lo[2] + blockIdx.z * zchunk;
    const int ke = min(kb + zchunk, b.hi[2]);
    const int i = x0 + tx, h = a.h, hy = Y ? a.h : a.hy;
    const long long sy = a.sy, sz = a.sz;
    const int klast = ke - 1 + R;
    /* u: does this block's tile hold points of u's box (else nothing of u is read), and
     * are those all where u's velocity is q's */
    const Box &ub = a.ub, &vb = a.vb;
    const int tx0 = max(x0, ub.lo[0]), tx1 = min(x0 + W, ub.hi[0]);
    const int ty0 = max(y0, ub.lo[1]), ty1 = min(y0 + C::TYT, ub.hi[1]);
    const bool uxy = tx0 < tx1 && ty0 < ty1;
    const bool vxy = tx0 >= vb.lo[0] && tx1 <= vb.hi[0] && ty0 >= vb.lo[1] && ty1 <= vb.hi[1];
    auto u_p = [&](int kk) { return uxy && kk >= ub.lo[2] - R && kk < ub.hi[2] + R; };
    auto u_q = [&](int kk) { return uxy && in_range(kk, ub.lo[2], ub.hi[2]); };
    auto u_v = [&](int kk) { return u_q(kk) && !(vxy && in_range(kk, vb.lo[2], vb.hi[2])); };
    auto load_p = [&](int kk, int sl) {
        if (kk > klast)
            return;
        const bool lu = u_p(kk);
        float *du = psu + sl * C::PSLOT, *dq = psq + sl * C::PSLOT;
        constexpr int CPR = C::PW / 4, NCH = C::PH * CPR;
        const long long pl = (long long)(kk + h) * sz;
#pragma unroll
        for (int e0 = 0; e0 < NCH; e0 += NT) {
            const int e = e0 + tid;
            if (NCH % NT == 0 || e < NCH) {
                const int r = e / CPR, c = e % CPR;
                const int gy = y0 - RY + r + hy, gx = x0 + h - C::XO + 4 * c;
                const bool ok = gy < dim1 && gx >= 0 && gx < dim0;
                const long long o = pl + (long long)gy * sy + gx;
                cp16(dq + r * C::PW + 4 * c, ok ? a.qp + o : a.qp, ok);
                if (lu)
                    cp16(du + r * C::PW + 4 * c, ok ? a.up + o : a.up, ok);
            }
        }
    };
    auto load_s = [&](int kk, int sl) {
        if (kk >= ke)
            return;
        const bool lq = u_q(kk), lv = u_v(kk);
        float *dst = ss + sl * F::SSLOT;
        constexpr int CPR = W / 4, NCH = 4 * C::TYT * CPR;
        const long long pl = (long long)(kk + h) * sz;
#pragma unroll
        for (int e0 = 0; e0 < NCH; e0 += NT) {
            const int e = e0 + tid;
            if (NCH % NT == 0 || e < NCH) {
                const int w = e / (C::TYT * CPR), r = e / CPR % C::TYT, c = e % CPR;
                if ((w == 0 && !lq) || (w == 1 && !lv))
                    continue;
                const int gy = y0 + r, gx = x0 + h + 4 * c;
                const bool ok = gy < b.hi[1] && gx < dim0;
                const float *src = w == 0 ? a.uq : w == 1 ? a.uvel : w == 2 ? a.qq : a.qvel;
                cp16(dst + w * C::TYT * W + r * W + 4 * c, ok ? src + pl + (long long)(gy + hy) * sy + gx : src,
                     ok);
            }
        }
    };
    const float c0 = Y ? a.c2[0][0] + a.c2[1][0] + a.c2[2][0] : a.c2[0][0] + a.c2[2][0];
    long long col[NY];
    bool inq[NY], inu[NY];
    int img[NY]; /* the point's image cell in its plane (x, y), or -1 */
    float zu[NY][2 * R + 1], zq[NY][2 * R + 1]; /* z queues: p(k - R + v) of row m */
#pragma unroll
    for (int m = 0; m < NY; m++) {
        const int j = y0 + ty + m * BY;
        col[m] = (long long)(j + hy) * sy + (i + h);
        inq[m] = i >= b.lo[0] && i < b.hi[0] && j < b.hi[1];
        inu[m] = inq[m] && in_range(i, ub.lo[0], ub.hi[0]) && in_range(j, ub.lo[1], ub.hi[1]);
        const int xi = i - a.ilo[0], yi = j - a.ilo[1];
        img[m] = inq[m] && in_range(xi, 0, a.in[0]) && in_range(yi, 0, a.in[1]) ? yi * a.in[0] + xi : -1;
#pragma unroll
        for (int v = 0; v < 2 * R; v++) {
            const long long o = col[m] + (long long)(kb - R + v + h) * sz;
            zq[m][v] = inq[m] ? __ldg(a.qp + o) : 0.0f;
            zu[m][v] = inu[m] && u_p(kb - R + v) ? __ldg(a.up + o) : 0.0f;
        }
    }
    for (int v = 0; v < R; v++)
        load_p(kb + v, v);
    cp_commit();
#pragma unroll
    for (int d = 0; d < D; d++) {
        load_p(kb + R + d, R + d);
        load_s(kb + d, d);
        cp_commit();
    }
    const long long iplane = (long long)a.in[0] * a.in[1];
    /* The accumulators of a point, read one plane ahead into registers: the staged
     * planes' copies are in flight D planes ahead, these loads one plane ahead, so no
     * warp waits on them in the plane that uses them. */
    float an[NY], as[NY], ar[NY];
    auto load_acc = [&](int kk) {
        const int z = kk - a.ilo[2];
        if (!a.num || kk >= ke || !in_range(z, 0, a.in[2]))
            return;
#pragma unroll
        for (int m = 0; m < NY; m++)
            if (img[m] >= 0) {
                const long long o = z * iplane + img[m];
                an[m] = a.num[o];
                if (a.ills)
                    as[m] = a.ills[o];
                if (a.illr)
                    ar[m] = a.illr[o];
            }
    };
    load_acc(kb);
    int sk = 0, sq = 0;
    for (int k = kb; k < ke; k++) {
        cp_wait<D - 1>();
        __syncthreads();
        load_p(k + R + D, sk == 0 ? C::S - 1 : sk - 1);
        load_s(k + D, sq == 0 ? D : sq - 1);
        cp_commit();
        const int sr = sk + R < C::S ? sk + R : sk + R - C::S;
        const float *PU = psu + sk * C::PSLOT, *PUR = psu + sr * C::PSLOT;
        const float *PQ = psq + sk * C::PSLOT, *PQR = psq + sr * C::PSLOT;
        const float *S0 = ss + sq * F::SSLOT;
        const float *UQ = S0, *UV = S0 + C::TYT * W, *QQ = S0 + 2 * C::TYT * W, *QV = S0 + 3 * C::TYT * W;
        if (!u_v(k))
            UV = QV;
        const bool uk = u_q(k);
        const int zi = k - a.ilo[2];
        const bool imgk = a.num && in_range(zi, 0, a.in[2]);
        const long long pl = (long long)(k + h) * sz;
        float cn[NY], cs[NY], cr[NY]; /* this plane's accumulators; the next plane's go in flight */
#pragma unroll
        for (int m = 0; m < NY; m++) {
            cn[m] = an[m];
            cs[m] = as[m];
            cr[m] = ar[m];
        }
        load_acc(k + 1);
#pragma unroll
        for (int m = 0; m < NY; m++) {
            const int row = ty + m * BY;
            zq[m][2 * R] = PQR[(row + RY) * C::PW + C::XO + tx];
            zu[m][2 * R] = PUR[(row + RY) * C::PW + C::XO + tx];
            if (inq[m]) {
                const int t = row * W + tx;
                /* the imaging condition on u(n+1) and q(n+1), before u(n+1) is overwritten */
                if (imgk && img[m] >= 0) {
                    const long long o = zi * iplane + img[m];
                    const float ua = UQ[t], qc = zq[m][R];
                    a.num[o] = fmac_rn(cn[m], ua, qc);
                    if (a.ills)
                        a.ills[o] = fmac_rn(cs[m], ua, ua);
                    if (a.illr)
                        a.illr[o] = fmac_rn(cr[m], qc, qc);
                }
                const float *rq = PQ + (row + RY) * C::PW + C::XO + tx;
                float lap = c0 * zq[m][R];
                if constexpr (Y) {
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        lap += a.c2[0][l] * (rq[l] + rq[-l]) + a.c2[1][l] * (rq[l * C::PW] + rq[-l * C::PW]) +
                               a.c2[2][l] * (zq[m][R + l] + zq[m][R - l]);
                } else {
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        lap += a.c2[0][l] * (rq[l] + rq[-l]) + a.c2[2][l] * (zq[m][R + l] + zq[m][R - l]);
                }
                a.qq[col[m] + pl] = 2.0f * zq[m][R] - QQ[t] + QV[t] * lap;
                if (uk && inu[m]) {
                    const float *ru = PU + (row + RY) * C::PW + C::XO + tx;
                    float lu = c0 * zu[m][R];
                    if constexpr (Y) {
#pragma unroll
                        for (int l = 1; l <= R; l++)
                            lu += a.c2[0][l] * (ru[l] + ru[-l]) + a.c2[1][l] * (ru[l * C::PW] + ru[-l * C::PW]) +
                                  a.c2[2][l] * (zu[m][R + l] + zu[m][R - l]);
                    } else {
#pragma unroll
                        for (int l = 1; l <= R; l++)
                            lu += a.c2[0][l] * (ru[l] + ru[-l]) + a.c2[2][l] * (zu[m][R + l] + zu[m][R - l]);
                    }
                    a.uq[col[m] + pl] = 2.0f * zu[m][R] - UQ[t] + UV[t] * lu;
                }
            }
#pragma unroll
            for (int v = 0; v < 2 * R; v++) {
                zq[m][v] = zq[m][v + 1];
                zu[m][v] = zu[m][v + 1];
            }
        }
        sk = sk + 1 == C::S ? 0 : sk + 1;
        sq = sq == D ? 0 : sq + 1;
    }
    cp_wait<0>();
}

/* The same step with the work split by field: blocks of two thread groups over one
 * tile, threadIdx.z 0 stepping q (and imaging), 1 stepping u, each thread one z queue
 * (k_ring's register need, not twice it), so twice the warps per tile; each group
 * brings in its own field's planes, the barrier shares them (the imaging reads u's
 * staged prev, u's step q's velocity where u's is q's). */
constexpr int split_min_blocks(int ny, int r, bool qonly) { return (ny <= 2 || qonly) && r <= 6 ? 2 : 1; }

/* QONLY: the q group alone, the receiver step with the imaging condition in it (u is
 * not stepped: a.uq is the source level to image, read only, staged where imaged). */
template <int R, int BY, int NY, int D, bool Y = true, int W = TX, bool QONLY = false>
__global__ void __launch_bounds__((QONLY ? 1 : 2) * W *BY, split_min_blocks(NY, R, QONLY))
    k_fused_split(FArgs a, Box b, int zchunk, int x_org, int dim0, int dim1)
{
    static_assert(Y || (BY == 1 && NY == 1), "a 2D block is one row");
    using C = RingCfg<R, BY, NY, D, Y, W>;
    using F = FusedCfg<R, BY, NY, D, Y, W, QONLY ? 1 : 2>;
    constexpr int NT = W * BY, RY = C::RY;
    extern __shared__ __align__(16) float smem[];
    const bool isq = QONLY || threadIdx.z == 0;
    float *const ps = smem + (isq && !QONLY ? C::S * C::PSLOT : 0);
    float *const ss = smem + (QONLY ? 1 : 2) * C::S * C::PSLOT;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * W + tx;
    const int x0 = x_org + blockIdx.x * W, y0 = b.lo[1] + blockIdx.y * C::TYT;
    const int kb = b.lo[2] + blockIdx.z * zchunk;
    const int ke = min(kb + zchunk, b.hi[2]);
    const int i = x0 + tx, h = a.h, hy = Y ? a.h : a.hy;
    const long long sy = a.sy, sz = a.sz;
    const int klast = ke - 1 + R;
    const Box &ub = a.ub, &vb = a.vb;
    const int tx0 = max(x0, ub.lo[0]), tx1 = min(x0 + W, ub.hi[0]);
    const int ty0 = max(y0, ub.lo[1]), ty1 = min(y0 + C::TYT, ub.hi[1]);
    const bool uxy = tx0 < tx1 && ty0 < ty1;
    const bool vxy = tx0 >= vb.lo[0] && tx1 <= vb.hi[0] && ty0 >= vb.lo[1] && ty1 <= vb.hi[1];
    auto u_p = [&](int kk) { return uxy && kk >= ub.lo[2] - R && kk < ub.hi[2] + R; };
    auto u_q = [&](int kk) { return uxy && in_range(kk, ub.lo[2], ub.hi[2]); };
    auto u_v = [&](int kk) { return u_q(kk) && !(vxy && in_range(kk, vb.lo[2], vb.hi[2])); };
    const float *__restrict__ fp = isq ? a.qp : a.up;
    float *__restrict__ fo = isq ? a.qq : a.uq;
    auto load_p = [&](int kk, int sl) {
        if (kk > klast || (!isq && !u_p(kk)))
            return;
        float *dst = ps + sl * C::PSLOT;
        constexpr int CPR = C::PW / 4, NCH = C::PH * CPR;
        const long long pl = (long long)(kk + h) * sz;
#pragma unroll
        for (int e0 = 0; e0 < NCH; e0 += NT) {
            const int e = e0 + tid;
            if (NCH % NT == 0 || e < NCH) {
                const int r = e / CPR, c = e % CPR;
                const int gy = y0 - RY + r + hy, gx = x0 + h - C::XO + 4 * c;
                const bool ok = gy < dim1 && gx >= 0 && gx < dim0;
                cp16(dst + r * C::PW + 4 * c, ok ? fp + pl + (long long)gy * sy + gx : fp, ok);
            }
        }
    };
    /* q's group stages q's prev and velocity (slots 2, 3), u's group u's (0, 1) where
     * u steps and, for the velocity, where it is not q's */
    /* QONLY: the image's tile (x, y), where the source level is staged (slot 0) */
    const bool ixy = QONLY && x0 < a.ilo[0] + a.in[0] && x0 + W > a.ilo[0] && y0 < a.ilo[1] + a.in[1] &&
                     y0 + C::TYT > a.ilo[1];
    auto load_s = [&](int kk, int sl) {
        if (kk >= ke)
            return;
        const bool l0 = isq || u_q(kk), l1 = isq || u_v(kk);
        const bool l2 = ixy && a.num && in_range(kk - a.ilo[2], 0, a.in[2]);
        float *dst = ss + sl * F::SSLOT + (isq ? 2 * C::TYT * W : 0);
        constexpr int CPR = W / 4, NCH = (QONLY ? 3 : 2) * C::TYT * CPR;
        const long long pl = (long long)(kk + h) * sz;
#pragma unroll
        for (int e0 = 0; e0 < NCH; e0 += NT) {
            const int e = e0 + tid;
            if (NCH % NT == 0 || e < NCH) {
                const int w = e / (C::TYT * CPR), r = e / CPR % C::TYT, c = e % CPR;
                if (!(w == 0 ? l0 : w == 1 ? l1 : l2))
                    continue;
                const int gy = y0 + r, gx = x0 + h + 4 * c;
                const bool ok = gy < b.hi[1] && gx < dim0;
                const float *src = w == 2 ? a.uq : isq ? (w == 0 ? a.qq : a.qvel) : (w == 0 ? a.uq : a.uvel);
                /* w 2 (QONLY): the source level into slot 0, two slots below q's */
                cp16(dst + (w == 2 ? -2 : w) * C::TYT * W + r * W + 4 * c,
                     ok ? src + pl + (long long)(gy + hy) * sy + gx : src, ok);
            }
        }
    };
    const float c0 = Y ? a.c2[0][0] + a.c2[1][0] + a.c2[2][0] : a.c2[0][0] + a.c2[2][0];
    long long col[NY];
    bool in[NY];
    int img[NY];
    float z[NY][2 * R + 1]; /* this group's field: p(k - R + v) of row m */
#pragma unroll
    for (int m = 0; m < NY; m++) {
        const int j = y0 + ty + m * BY;
        col[m] = (long long)(j + hy) * sy + (i + h);
        const bool inq = i >= b.lo[0] && i < b.hi[0] && j < b.hi[1];
        in[m] = isq ? inq : inq && in_range(i, ub.lo[0], ub.hi[0]) && in_range(j, ub.lo[1], ub.hi[1]);
        const int xi = i - a.ilo[0], yi = j - a.ilo[1];
        img[m] = isq && inq && in_range(xi, 0, a.in[0]) && in_range(yi, 0, a.in[1]) ? yi * a.in[0] + xi : -1;
#pragma unroll
        for (int v = 0; v < 2 * R; v++)
            z[m][v] = in[m] && (isq || u_p(kb - R + v)) ? __ldg(fp + col[m] + (long long)(kb - R + v + h) * sz) : 0.0f;
    }
    for (int v = 0; v < R; v++)
        load_p(kb + v, v);
    cp_commit();
#pragma unroll
    for (int d = 0; d < D; d++) {
        load_p(kb + R + d, R + d);
        load_s(kb + d, d);
        cp_commit();
    }
    const long long iplane = (long long)a.in[0] * a.in[1];
    float an[NY], as[NY], ar[NY];
    auto load_acc = [&](int kk) {
        const int zz = kk - a.ilo[2];
        if (!isq || !a.num || kk >= ke || !in_range(zz, 0, a.in[2]))
            return;
#pragma unroll
        for (int m = 0; m < NY; m++)
            if (img[m] >= 0) {
                const long long o = zz * iplane + img[m];
                an[m] = a.num[o];
                if (a.ills)
                    as[m] = a.ills[o];
                if (a.illr)
                    ar[m] = a.illr[o];
            }
    };
    load_acc(kb);
    int sk = 0, sq = 0;
    for (int k = kb; k < ke; k++) {
        cp_wait<D - 1>();
        __syncthreads();
        load_p(k + R + D, sk == 0 ? C::S - 1 : sk - 1);
        load_s(k + D, sq == 0 ? D : sq - 1);
        cp_commit();
        const int sr = sk + R < C::S ? sk + R : sk + R - C::S;
        const float *P = ps + sk * C::PSLOT, *PR = ps + sr * C::PSLOT;
        const float *S0 = ss + sq * F::SSLOT;
        const float *UQ = S0, *QQ = S0 + 2 * C::TYT * W, *QV = S0 + 3 * C::TYT * W;
        const float *PV = isq ? QQ : UQ;
        const float *V = isq || !u_v(k) ? QV : S0 + C::TYT * W;
        const bool act = isq || u_q(k);
        const int zi = k - a.ilo[2];
        const bool imgk = isq && a.num && in_range(zi, 0, a.in[2]);
        const long long pl = (long long)(k + h) * sz;
        float cn[NY], cs[NY], cr[NY];
#pragma unroll
        for (int m = 0; m < NY; m++) {
            cn[m] = an[m];
            cs[m] = as[m];
            cr[m] = ar[m];
        }
        load_acc(k + 1);
#pragma unroll
        for (int m = 0; m < NY; m++) {
            const int row = ty + m * BY;
            z[m][2 * R] = PR[(row + RY) * C::PW + C::XO + tx];
            if (act && in[m]) {
                const int t = row * W + tx;
                if (imgk && img[m] >= 0) {
                    const long long o = zi * iplane + img[m];
                    const float ua = UQ[t], qc = z[m][R];
                    a.num[o] = fmac_rn(cn[m], ua, qc);
                    if (a.ills)
                        a.ills[o] = fmac_rn(cs[m], ua, ua);
                    if (a.illr)
                        a.illr[o] = fmac_rn(cr[m], qc, qc);
                }
                const float *rp = P + (row + RY) * C::PW + C::XO + tx;
                float lap = c0 * z[m][R];
                if constexpr (Y) {
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        lap += a.c2[0][l] * (rp[l] + rp[-l]) + a.c2[1][l] * (rp[l * C::PW] + rp[-l * C::PW]) +
                               a.c2[2][l] * (z[m][R + l] + z[m][R - l]);
                } else {
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        lap += a.c2[0][l] * (rp[l] + rp[-l]) + a.c2[2][l] * (z[m][R + l] + z[m][R - l]);
                }
                fo[col[m] + pl] = 2.0f * z[m][R] - PV[t] + V[t] * lap;
            }
#pragma unroll
            for (int v = 0; v < 2 * R; v++)
                z[m][v] = z[m][v + 1];
        }
        sk = sk + 1 == C::S ? 0 : sk + 1;
        sq = sq == D ? 0 : sq + 1;
    }
    cp_wait<0>();
}

/* The launch of kernel K (k_fused or k_fused_split: GROUPS thread groups per tile, NRING
 * p rings) over box IN, chunked along z as launch_ring does.  TAG tells the kernels of
 * the same shape apart (each instantiation keeps its own per_sm, and sets its own
 * kernel's shared-memory limit). */
template <int TAG, int R, int BY, int NY, int D, bool Y, int W, int GROUPS, int NRING, class K>
static int launch_k(K kern, const Box &in, const FArgs &a, const wave_sim *s, cudaStream_t st)
{
    using F = FusedCfg<R, BY, NY, D, Y, W, NRING>;
    using C = typename F::C;
    /* once per instantiation, as launch_ring does */
    static int per_sm = 0;
    if (!per_sm) {
        CUDA_TRY(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)F::bytes));
        int n = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kern, GROUPS * W * BY, F::bytes));
        per_sm = n > 0 ? n : 1;
    }
    const int xo = ring_x_origin(in.lo[0], a.h);
    const int gx = (in.hi[0] - xo + W - 1) / W, gy = (in.hi[1] - in.lo[1] + C::TYT - 1) / C::TYT;
    const int nz = in.hi[2] - in.lo[2];
    long long target = 6LL * sm_count(s) * per_sm;
    long long nch = (target + (long long)gx * gy - 1) / ((long long)gx * gy);
    int zc = (int)((nz + nch - 1) / nch);
    zc = zc < 4 * R ? 4 * R : zc > ZCHUNK ? ZCHUNK : zc;
    dim3 blk(W, BY, GROUPS), grd(gx, gy, (nz + zc - 1) / zc);
    kern<<<grd, blk, F::bytes, st>>>(a, in, zc, xo, s->L.dim[0], s->L.dim[1]);
    CUDA_TRY_LAUNCH();
    return 0;
}

template <int R, int BY, int NY, int D, bool Y = true, int W = TX>
static int launch_paired(const Box &in, const FArgs &a, const wave_sim *s, cudaStream_t st)
{
    return launch_k<0, R, BY, NY, D, Y, W, 1, 2>(k_fused<R, BY, NY, D, Y, W>, in, a, s, st);
}

template <int R, int BY, int NY, int D, bool Y = true, int W = TX>
static int launch_split(const Box &in, const FArgs &a, const wave_sim *s, cudaStream_t st)
{
    return launch_k<1, R, BY, NY, D, Y, W, 2, 2>(k_fused_split<R, BY, NY, D, Y, W>, in, a, s, st);
}

/* The receiver step with the imaging in it: k_ring's tile and depth for the order. */
template <int R, bool Y>
static int launch_image_step(const Box &in, const FArgs &a, const wave_sim *s, cudaStream_t st)
{
    if constexpr (!Y) {
        constexpr int D = ring_default_depth(R);
        return launch_k<2, R, 1, 1, D, false, RING2D_W, 1, 1>(k_fused_split<R, 1, 1, D, false, RING2D_W, true>, in,
                                                              a, s, st);
    } else {
        constexpr int T = ring_default_tile(R), BY = tile_by(T), NY = tile_ny(T), D = ring_default_depth(R);
        return launch_k<2, R, BY, NY, D, true, TX, 1, 1>(k_fused_split<R, BY, NY, D, true, TX, true>, in, a, s, st);
    }
}

/* The kernel shapes (tile of 32 columns x BY threads x NY rows each, D planes in flight;
 * 2D: rows of RING2D_W): 0 paired (one thread steps both fields) 8x2, 1 split 8x2, 2
 * split 8x2 one plane deeper, 3 split 8x4.  Every order and both dimensions hold all
 * four (the GPU tests check each); seislive-bench rtm --fused-variant measures them. */
constexpr int fused_depth(int r) { return r <= 4 ? 2 : 1; }

template <int R, bool Y>
static int launch_variant(int variant, const Box &in, const FArgs &a, const wave_sim *s, cudaStream_t st)
{
    constexpr int D = fused_depth(R);
    if constexpr (!Y) {
        switch (variant) {
        case 1:
        case 3: return launch_split<R, 1, 1, D, false, RING2D_W>(in, a, s, st);
        case 2: return launch_split<R, 1, 1, D + 1, false, RING2D_W>(in, a, s, st);
        }
        return launch_paired<R, 1, 1, D, false, RING2D_W>(in, a, s, st);
    } else {
        switch (variant) {
        case 1: return launch_split<R, 8, 2, D>(in, a, s, st);
        case 2: return launch_split<R, 8, 2, D + 1>(in, a, s, st);
        case 3: return launch_split<R, 8, 4, D>(in, a, s, st);
        }
        return launch_paired<R, 8, 2, D>(in, a, s, st);
    }
}

/* Mismatches of u's and q's velocity inside box IN (padded) and outside it. */
__global__ void k_vel_diff(const float *__restrict__ u, const float *__restrict__ q, Box in, int n0, int n1, int n2,
                           int h, int hy, long long sy, long long sz, unsigned *out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y, k = blockIdx.z;
    if (i >= n0 || j >= n1 || k >= n2)
        return;
    const long long c = (long long)(k + h) * sz + (long long)(j + hy) * sy + (i + h);
    if (u[c] != q[c]) {
        const bool inside = in_range(i, in.lo[0], in.hi[0]) && in_range(j, in.lo[1], in.hi[1]) &&
                            in_range(k, in.lo[2], in.hi[2]);
        atomicAdd(out + (inside ? 0 : 1), 1u);
    }
}

struct wave_fused_cu {
    wave_sim *q, *u;
    int variant;
    bool q_cpml;  /* q's step runs the CPML lines (else no CPML at all) */
    Box vb;       /* where u's velocity is q's */
};

static int check_plan(const wave_sim *s, const char *who, bool cpml)
{
    WavePlan pl;
    int rc = wave_cu_plan(s, &pl);
    if (rc < 0)
        return rc;
    if (pl.naive || pl.research)
        return err_set(-ENOTSUP, "fused step: %s runs %s; the fused kernel is the tiled ring's default shape",
                       who, pl.naive ? "the naive kernel" : "a research variant of the tiled kernel");
    /* ring (the plain step's CPML in the interior pass) the fused step cannot follow: q's
     * layers still take the lines corrections after the fused kernel (after_kernel), the
     * same arithmetic */
    if (cpml && pl.cpml != WAVE_CPML_LINES && pl.cpml != WAVE_CPML_RING)
        return err_set(-ENOTSUP, "fused step: %s's CPML runs %s; the fused step follows the lines arrangement", who,
                       wave_cpml_name(pl.cpml));
    return 0;
}

static bool any_layers(const wave_sim *s) { return s->slab_count[0] + s->slab_count[1] + s->slab_count[2] > 0; }

/* The box U's reverse step updates (padded coordinates). */
static Box u_box(const wave_sim *u)
{
    const struct wave_layout *L = &u->L;
    Box b;
    for (int ax = 0; ax < 3; ax++) {
        b.lo[ax] = u->rev_interior ? L->pml[2 * ax] : 0;
        b.hi[ax] = u->rev_interior ? L->npad[ax] - L->pml[2 * ax + 1] : L->npad[ax];
    }
    return b;
}

extern "C" int wave_cu_fused_create(struct wave_sim *q, struct wave_sim *u, int variant, struct wave_fused_cu **out,
                                    unsigned vdiff[2])
{
    *out = NULL;
    int rc;
    if ((rc = check_plan(q, "the receiver simulation", q->cpml_on && any_layers(q))) < 0 ||
        (rc = check_plan(u, "the source simulation", false)) < 0)
        return rc;
    /* u's velocity is q's where they agree bit for bit: everywhere (boundary: one model),
     * or inside the layers (random: only the layers are randomized); looked at once */
    const struct wave_layout *L = &q->L;
    Box inner, all = {{0, 0, 0}, {L->npad[0], L->npad[1], L->npad[2]}};
    for (int ax = 0; ax < 3; ax++) {
        inner.lo[ax] = L->pml[2 * ax];
        inner.hi[ax] = L->npad[ax] - L->pml[2 * ax + 1];
    }
    unsigned *d = NULL, hcount[2] = {0, 0};
    if ((rc = dev_alloc(q->dev, sizeof hcount, (void **)&d)) < 0)
        return rc;
    rc = dev_zero(q->dev, d, sizeof hcount, q->stream);
    if (rc == 0) {
        dim3 blk(128), grd((L->npad[0] + 127) / 128, L->npad[1], L->npad[2]);
        k_vel_diff<<<grd, blk, 0, (cudaStream_t)q->stream>>>(u->vel, q->vel, inner, L->npad[0], L->npad[1],
                                                             L->npad[2], L->halo, L->pad_off[1],
                                                             (long long)L->stride_y, (long long)L->stride_z, d);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            rc = err_set(-EIO, "fused step: velocity comparison: %s", cudaGetErrorString(e));
    }
    if (rc == 0)
        rc = dev_copy(q->dev, hcount, d, sizeof hcount, DEV_D2H, q->stream);
    if (rc == 0)
        rc = dev_stream_sync(q->dev, q->stream);
    dev_free(q->dev, d);
    if (rc < 0)
        return rc;
    wave_fused_cu *f = (wave_fused_cu *)calloc(1, sizeof *f);
    if (!f)
        return err_set(-ENOMEM, "fused step: out of memory");
    f->q = q;
    f->u = u;
    f->variant = variant;
    f->q_cpml = q->cpml_on && any_layers(q);
    Box none = {{0, 0, 0}, {0, 0, 0}};
    f->vb = hcount[0] + hcount[1] == 0 ? all : hcount[0] == 0 ? inner : none;
    vdiff[0] = hcount[0];
    vdiff[1] = hcount[1];
    *out = f;
    return 0;
}

extern "C" void wave_cu_fused_destroy(struct wave_fused_cu *f) { free(f); }

/* The kernel arguments of a step of F (image box IB, accumulators ACC or NULL). */
static FArgs fargs(const wave_fused_cu *f, const struct imaging_box *ib, const struct imaging_acc *acc)
{
    const wave_sim *q = f->q, *u = f->u;
    const struct wave_layout *L = &q->L;
    FArgs a;
    a.up = u->cur;
    a.uq = u->prev;
    a.uvel = u->vel;
    a.qp = q->cur;
    a.qq = q->prev;
    a.qvel = q->vel;
    a.num = acc ? acc->num : NULL;
    a.ills = acc ? acc->ill_s : NULL;
    a.illr = acc ? acc->ill_r : NULL;
    a.sy = (long long)L->stride_y;
    a.sz = (long long)L->stride_z;
    a.h = L->halo;
    a.hy = L->pad_off[1];
    memcpy(a.c2, q->c2, sizeof a.c2);
    a.ub = u_box(u);
    a.vb = f->vb;
    for (int ax = 0; ax < 3; ax++) {
        a.ilo[ax] = ib->off[ax] - L->pad_off[ax];
        a.in[ax] = ib->n[ax];
    }
    return a;
}

/* q's CPML (lines) and both free surfaces after a fused kernel, as their steps do. */
static int after_kernel(wave_fused_cu *f, bool u_stepped, cudaStream_t st)
{
    int rc = 0;
    if (f->q_cpml)
        rc = wave_cu_cpml_lines(f->q, st);
    if (rc == 0 && f->q->p.free_surface)
        rc = wave_cu_free_surface(f->q, st);
    if (rc == 0 && u_stepped && f->u->p.free_surface)
        rc = wave_cu_free_surface(f->u, st);
    return rc;
}

extern "C" int wave_cu_fused_image_step(struct wave_fused_cu *f, const struct imaging_box *ib,
                                        const struct imaging_acc *acc, void *ev)
{
    wave_sim *q = f->q;
    const struct wave_layout *L = &q->L;
    cudaStream_t st = stream_of(q);
    FArgs a = fargs(f, ib, acc);
    /* u is only read (its prev, the level imaged): no box of u to update */
    a.ub = Box{{0, 0, 0}, {0, 0, 0}};
    Box all = {{0, 0, 0}, {L->npad[0], L->npad[1], L->npad[2]}};
    int rc = with_r_y(q, [&](auto r, auto y) {
        return launch_image_step<decltype(r)::value, decltype(y)::value>(all, a, q, st);
    });
    if (rc == 0 && ev)
        rc = dev_event_record(q->dev, ev, st);
    return rc < 0 ? rc : after_kernel(f, false, st);
}

extern "C" int wave_cu_fused_step(struct wave_fused_cu *f, const struct imaging_box *ib,
                                  const struct imaging_acc *acc)
{
    wave_sim *q = f->q, *u = f->u;
    if (q->stream != u->stream)
        return err_set(-EINVAL, "fused step: the two simulations are on different streams");
    const struct wave_layout *L = &q->L;
    cudaStream_t st = stream_of(q);
    const FArgs a = fargs(f, ib, acc);
    Box all = {{0, 0, 0}, {L->npad[0], L->npad[1], L->npad[2]}};
    int rc = with_r_y(q, [&](auto r, auto y) {
        return launch_variant<decltype(r)::value, decltype(y)::value>(f->variant, all, a, q, st);
    });
    return rc < 0 ? rc : after_kernel(f, true, st);
}
