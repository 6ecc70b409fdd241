/* wave_interior — the interior kernels of the CUDA propagator: the update
 *   q = 2p - q + v^2 dt^2 lap p   (plain Laplacian, no CPML terms)
 * over a box of the padded grid.  Naive (one thread per point) and tiled (Micikevicius
 * 2009 2.5D: an x-y tile of p in shared memory and a register queue of 2R+1 values
 * along z, z split in chunks) with two pipelines, k_ring (cp.async ring of planes, one
 * barrier per plane; the default) and k_tiled (loads prefetched into registers).  Which
 * one runs: the plan (wave_plan.cu). */
#include "kernels/wave_cuda.h"

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

/* ---- launchers ----------------------------------------------------------------------- */

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

/* The interior update over box IN with the variant of the plan. */
template <int R>
static int launch_interior(const wave_sim *s, const WavePlan &pl, const Box &in, const KArgs &a, cudaStream_t st)
{
    if (pl.naive) {
        const int bx = pl.bx, by = pl.by;
        dim3 blk(bx, by), grd((in.hi[0] - in.lo[0] + bx - 1) / bx, (in.hi[1] - in.lo[1] + by - 1) / by,
                              in.hi[2] - in.lo[2]);
        k_naive<R><<<grd, blk, 0, st>>>(a, in);
        CUDA_TRY_LAUNCH();
        return 0;
    }
    const int d = pl.depth;
    if (pl.ring) {
        switch (pl.tile) {
        case WAVE_TILE_8x2: return launch_ring_d<R, 8, 2>(in, a, s, st, d);
        case WAVE_TILE_8x4: return launch_ring_d<R, 8, 4>(in, a, s, st, d);
        default: return launch_ring_d<R, 4, 4>(in, a, s, st, d);
        }
    }
    const int sms = sm_count(s);
    const bool d2 = d == 2;
    switch (pl.tile) {
    case WAVE_TILE_16x1: return d2 ? launch_tiled<R, 16, 1, 2>(in, a, sms, st) : launch_tiled<R, 16, 1, 1>(in, a, sms, st);
    case WAVE_TILE_8x1: return d2 ? launch_tiled<R, 8, 1, 2>(in, a, sms, st) : launch_tiled<R, 8, 1, 1>(in, a, sms, st);
    case WAVE_TILE_8x2: return d2 ? launch_tiled<R, 8, 2, 2>(in, a, sms, st) : launch_tiled<R, 8, 2, 1>(in, a, sms, st);
    default: return d2 ? launch_tiled<R, 4, 4, 2>(in, a, sms, st) : launch_tiled<R, 4, 4, 1>(in, a, sms, st);
    }
}

int wave_cu_interior(const wave_sim *s, const WavePlan &pl, const Box &in, cudaStream_t st)
{
    const KArgs a = kargs(s);
    return with_r(s, [&](auto r) { return launch_interior<decltype(r)::value>(s, pl, in, a, st); });
}
