/* wave_ring — the production tiled interior kernel of the CUDA propagator, k_ring, and
 * its launcher, as templates: the library instantiates each order's default tile and
 * depth (wave_interior.cu), seislive-bench and the GPU tests the other ones
 * (tools/wave_research.cu).  Included by those two files only. */
#ifndef SEISLIVE_WAVE_RING_CUH
#define SEISLIVE_WAVE_RING_CUH

#include "kernels/wave_cuda.h"

/* ---- interior: 2.5D tiled with an asynchronous shared-memory ring ------------------- */

/* Shared-memory plan of k_ring.  p tiles (x halo XO >= R, a multiple of 4 floats so
 * every 16-byte copy is aligned; y halo RY = R rows, none in 2D) for planes k .. k+R+D,
 * and q / v tiles for planes k .. k+D.  W: the tile's width in x. */
template <int R, int BY, int NY, int D, bool Y, int W>
struct RingCfg {
    static constexpr int XO = (R + 3) / 4 * 4;
    static constexpr int PW = W + 2 * XO;
    static constexpr int TYT = BY * NY;
    static constexpr int RY = Y ? R : 0;
    static constexpr int PH = TYT + 2 * RY;
    static constexpr int S = R + D + 1;
    static constexpr int PSLOT = PH * PW;
    static constexpr int QSLOT = 2 * TYT * W;
    static constexpr size_t bytes = sizeof(float) * ((size_t)S * PSLOT + (size_t)(D + 1) * QSLOT);
};

/* The tile origin in x: X0 + halo a multiple of 8 floats, so the 16-byte copies are
 * aligned and every 32-float row of q, v and p(n+1) is 4 whole 32-byte sectors. */
static inline int ring_x_origin(int lo, int h) { return lo - ((lo + h) & 7); }

/* Micikevicius 2.5D like k_tiled, but every global read of a plane goes through
 * cp.async into a ring of shared-memory slots D planes ahead: the p tile with its x and
 * y halos (the register queue along z takes its new value p(k+R) from the ring, so p is
 * read from global memory once), q and v.  One barrier per plane (it also frees the
 * slot the next copies go to), no registers held for loads in flight, so many blocks
 * fit per SM and each keeps D planes of copies in flight.
 * 3D: Y true, W = TX, blocks of TX x BY threads over an x-y tile.  2D: Y false (no y
 * halo, no y term), BY = NY = 1, one row of W threads per block. */
template <int R, int BY, int NY, int D, bool Y = true, int W = TX>
__global__ void __launch_bounds__(W *BY) k_ring(KArgs a, Box b, int zchunk, int x_org, int dim0, int dim1)
{
    static_assert(Y || (BY == 1 && NY == 1), "a 2D ring block is one row");
    using C = RingCfg<R, BY, NY, D, Y, W>;
    constexpr int NT = W * BY, RY = C::RY;
    extern __shared__ __align__(16) float smem[];
    float *const ps = smem;
    float *const qs = smem + C::S * C::PSLOT;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * W + tx;
    const int x0 = x_org + blockIdx.x * W, y0 = b.lo[1] + blockIdx.y * C::TYT;
    const int kb = b.lo[2] + blockIdx.z * zchunk;
    const int ke = min(kb + zchunk, b.hi[2]);
    const int i = x0 + tx, h = a.h, hy = Y ? a.h : a.hy;
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
                const int gy = y0 - RY + r + hy, gx = x0 + h - C::XO + 4 * c;
                const bool ok = gy < dim1 && gx >= 0 && gx < dim0;
                cp16(dst + r * C::PW + 4 * c, ok ? p + pl + (long long)gy * sy + gx : p, ok);
            }
        }
    };
    auto load_qv = [&](int kk, int sl) {
        if (kk >= ke)
            return;
        float *dst = qs + sl * C::QSLOT;
        constexpr int CPR = W / 4, NCH = 2 * C::TYT * CPR;
        const long long pl = (long long)(kk + h) * sz;
#pragma unroll
        for (int e0 = 0; e0 < NCH; e0 += NT) {
            const int e = e0 + tid;
            if (NCH % NT == 0 || e < NCH) {
                const int w = e / (C::TYT * CPR), r = e / CPR % C::TYT, c = e % CPR;
                const int gy = y0 + r, gx = x0 + h + 4 * c;
                const bool ok = gy < b.hi[1] && gx < dim0;
                const float *src = w ? vel : q;
                cp16(dst + w * C::TYT * W + r * W + 4 * c,
                     ok ? src + pl + (long long)(gy + hy) * sy + gx : src, ok);
            }
        }
    };
    const float c0 = Y ? a.c2[0][0] + a.c2[1][0] + a.c2[2][0] : a.c2[0][0] + a.c2[2][0];
    long long col[NY];
    bool inside[NY];
    float qz[NY][2 * R + 1]; /* qz[m][u] = p(k - R + u) of row m */
#pragma unroll
    for (int m = 0; m < NY; m++) {
        const int j = y0 + ty + m * BY;
        col[m] = (long long)(j + hy) * sy + (i + h);
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
        const float *Q = qs + sq * C::QSLOT, *V = Q + C::TYT * W;
        const long long pl = (long long)(k + h) * sz;
#pragma unroll
        for (int m = 0; m < NY; m++) {
            const int row = ty + m * BY;
            qz[m][2 * R] = PR[(row + RY) * C::PW + C::XO + tx];
            if (inside[m]) {
                const float *rp = P + (row + RY) * C::PW + C::XO + tx;
                float lap = c0 * qz[m][R];
                if constexpr (Y) {
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        lap += a.c2[0][l] * (rp[l] + rp[-l]) + a.c2[1][l] * (rp[l * C::PW] + rp[-l * C::PW]) +
                               a.c2[2][l] * (qz[m][R + l] + qz[m][R - l]);
                } else {
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        lap += a.c2[0][l] * (rp[l] + rp[-l]) + a.c2[2][l] * (qz[m][R + l] + qz[m][R - l]);
                }
                q[col[m] + pl] = 2.0f * qz[m][R] - Q[row * W + tx] + V[row * W + tx] * lap;
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

template <int R, int BY, int NY, int D, bool Y = true, int W = TX>
static int launch_ring(const Box &in, const KArgs &a, const wave_sim *s, cudaStream_t st)
{
    using C = RingCfg<R, BY, NY, D, Y, W>;
    /* Once per kernel instantiation, not once per step: the shared-memory opt-in (a
     * property of the function, kept for the process's life) and the resident blocks
     * per SM (the same on every device of a kind; a process drives one GPU). */
    static int per_sm = 0;
    if (!per_sm) {
        CUDA_TRY(cudaFuncSetAttribute(k_ring<R, BY, NY, D, Y, W>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)C::bytes));
        int n = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_ring<R, BY, NY, D, Y, W>, W * BY, C::bytes));
        per_sm = n > 0 ? n : 1;
    }
    const int xo = ring_x_origin(in.lo[0], a.h);
    const int gx = (in.hi[0] - xo + W - 1) / W, gy = (in.hi[1] - in.lo[1] + C::TYT - 1) / C::TYT;
    const int nz = in.hi[2] - in.lo[2];
    /* z chunks: ~6 waves of resident blocks (tuning.ring_waves), each chunk at least 4R
     * planes (the queue's and the ring's R-plane preloads) and at most ZCHUNK. */
    const int waves = s->p.tuning.ring_waves > 0 ? s->p.tuning.ring_waves : WAVE_RING_WAVES_DEFAULT;
    long long target = (long long)waves * sm_count(s) * per_sm;
    long long nch = (target + (long long)gx * gy - 1) / ((long long)gx * gy);
    int zc = (int)((nz + nch - 1) / nch);
    zc = zc < 4 * R ? 4 * R : zc > ZCHUNK ? ZCHUNK : zc;
    dim3 blk(W, BY), grd(gx, gy, (nz + zc - 1) / zc);
    k_ring<R, BY, NY, D, Y, W><<<grd, blk, C::bytes, st>>>(a, in, zc, xo, s->L.dim[0], s->L.dim[1]);
    CUDA_TRY_LAUNCH();
    return 0;
}

#endif
