/* tti_tiled — the shared-memory tiled TTI twin: one fused pass per step over a box in
 * which no CPML term and no free-surface image is needed (tti_cuda.cu's plan keeps the
 * box r cells away from both).  s never goes to global memory.
 *
 * A block owns a W x BY column tile and marches z.  At iteration K it:
 *   1. copies plane K+R of p and q (tile + 2R halo in x and y) into a shared ring of
 *      2R+1 planes (K-R .. K+R);
 *   2. computes s_f(K) = n . grad f on the tile + an R halo (every g from the ring) and
 *      keeps u_a = n_a s_f of that plane in shared memory;
 *   3. per column: m_x(K) + m_y(K) from the shared u (into a register queue of R+1
 *      planes), u_z(K) into a register queue of 2R+1 planes, p(K), q(K) into register
 *      queues of 2R+1 planes;
 *   4. updates plane k = K - R: S_x, S_y from the ring's plane k, S_z, m_z and p(k), q(k)
 *      from the queues (L = S_x + S_z + S_y as the CPU sums it; H1 = (m_x + m_y) + m_z,
 *      the CPU's (m_x + m_z) + m_y reordered: a rounding apart).
 * Global traffic per point: p, q, p(n-1), q(n-1), vel, ed, tilt read, p, q written
 * (36 bytes), the halos through L2.  Shared memory: (2R+1) planes x 2 fields of
 * (W + 4R) (BY + 4R) floats + the u plane; orders up to 8 (R <= 4), above that the plan
 * runs the naive twin.  2D: one row of W2 columns, no y halo. */
#include "kernels/tti_cuda.h"

#define TTI_TILED_RMAX 4

template <int R, bool Y, int W, int BY>
struct TCfg {
    static constexpr int XH = 2 * R, YH = Y ? 2 * R : 0;  /* ring halo */
    static constexpr int TW = W + 2 * XH, TH = BY + 2 * YH; /* ring plane */
    static constexpr int SW = W + 2 * R, SH = Y ? BY + 2 * R : 1; /* s region */
    static constexpr int NS = 2 * R + 1;
    static constexpr int PLANE = TW * TH;
    static constexpr int UN = SW * SH;
    static constexpr int NU = Y ? 3 : 2; /* u components in shared: x, (y,) z */
    static constexpr size_t bytes = sizeof(float) * ((size_t)NS * 2 * PLANE + (size_t)2 * NU * UN);
};

template <int R, bool Y, int W, int BY>
__global__ void __launch_bounds__(W *BY, 2) k_tti_tiled(TArgs a, Box b, int zchunk, int d0, int d1, int d2)
{
    using C = TCfg<R, Y, W, BY>;
    constexpr int NT = W * BY;
    extern __shared__ float sm[];
    float *const ring = sm;                      /* [slot][field][TH][TW] */
    float *const us = sm + C::NS * 2 * C::PLANE; /* u(K): [field][comp][SH][SW] */
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * W + tx;
    const int x0 = b.lo[0] + blockIdx.x * W, y0 = Y ? b.lo[1] + blockIdx.y * BY : 0;
    const int kb = b.lo[2] + blockIdx.z * zchunk, ke = min(kb + zchunk, b.hi[2]);
    const int i = x0 + tx, j = y0 + ty, h = a.h, hy = a.hy;
    const bool mine = i < b.hi[0] && (!Y || j < b.hi[1]);
    const long long sy = a.sy, sz = a.sz;

    /* The next plane's loads held in registers for one plane's work (issue, then commit
     * after the next barrier), so their latency hides behind the compute. */
    constexpr int NLD = (C::PLANE + NT - 1) / NT;
    float rp[NLD], rq[NLD];
    auto fetch = [&](int P) {
        const int gz = P + h;
        const bool zin = gz >= 0 && gz < d2;
#pragma unroll
        for (int m = 0; m < NLD; m++) {
            const int e = tid + m * NT, rr = e / C::TW, cc = e % C::TW;
            const int gx = x0 - C::XH + cc + h, gy = y0 - C::YH + rr + hy;
            const bool ok = e < C::PLANE && zin && gx >= 0 && gx < d0 && gy >= 0 && gy < d1;
            const long long g = (long long)gz * sz + (long long)gy * sy + gx;
            rp[m] = ok ? __ldg(a.f[0] + g) : 0.0f;
            rq[m] = ok ? __ldg(a.f[1] + g) : 0.0f;
        }
    };
    auto commit = [&](int sl) {
        float *dst = ring + sl * 2 * C::PLANE;
#pragma unroll
        for (int m = 0; m < NLD; m++) {
            const int e = tid + m * NT;
            if (e < C::PLANE) {
                dst[e] = rp[m];
                dst[C::PLANE + e] = rq[m];
            }
        }
    };
    const int base = kb - 2 * R; /* plane of slot 0 */
    auto slot = [&](int P) { return (P - base) % C::NS; };
    /* the first 2R planes straight into the ring, then plane kb into registers */
    for (int P = kb - 2 * R; P < kb; P++) {
        fetch(P);
        commit(slot(P));
    }
    fetch(kb);

    float pz[2][2 * R + 1], uz[2][2 * R + 1], hxy[2][R + 1];
#pragma unroll
    for (int f = 0; f < 2; f++) {
#pragma unroll
        for (int u = 0; u <= 2 * R; u++)
            pz[f][u] = uz[f][u] = 0.0f;
#pragma unroll
        for (int u = 0; u <= R; u++)
            hxy[f][u] = 0.0f;
    }
    const int myu = (ty + (Y ? R : 0)) * C::SW + tx + R; /* own column in the s region */
    const int myr = (ty + C::YH) * C::TW + tx + C::XH;   /* own column in a ring plane */

    constexpr int NSP = (C::UN + NT - 1) / NT; /* s points per thread and plane */
    for (int K = kb - R; K < ke + R; K++) {
        /* Every global read of this plane is issued here, before the first barrier, so
         * that their latencies overlap (issued one after another they made the kernel
         * latency-bound): the tilt codes of this thread's s points, the update's
         * operands, then the ring plane. */
        const bool kin = K >= 0 && K < a.npad[2];
        uint32_t tl[NSP];
        unsigned inm = 0; /* bit m: s point m lies in the padded grid */
#pragma unroll
        for (int m = 0; m < NSP; m++) {
            const int e = tid + m * NT, rr = e / C::SW, cc = e % C::SW;
            const int px = x0 - R + cc, py = Y ? y0 - R + rr : 0;
            const bool in = e < C::UN && kin && px >= 0 && px < a.npad[0] && (!Y || (py >= 0 && py < a.npad[1]));
            tl[m] = in ? __ldg(a.tilt + (long long)(K + h) * sz + (long long)(py + hy) * sy + (px + h)) : 0u;
            inm |= in ? 1u << m : 0u;
        }
        const int k = K - R;
        const bool upd = k >= kb && mine;
        const long long cu = (long long)(k + h) * sz + (long long)(j + hy) * sy + (i + h);
        float u_vel = 0, u_op = 0, u_oq = 0;
        uint32_t u_ed = 0;
        if (upd) {
            u_vel = __ldg(a.vel + cu);
            u_ed = __ldg(a.ed + cu);
            u_op = a.o[0][cu];
            u_oq = a.o[1][cu];
        }
        __syncthreads(); /* the slot of plane K-R-1 and the u plane are free */
        commit(slot(K + R));
        if (K + R + 1 < ke + 2 * R)
            fetch(K + R + 1);
        float3 nn[NSP];
#pragma unroll
        for (int m = 0; m < NSP; m++)
            nn[m] = tti_axis(a.tab, tl[m]);
        __syncthreads();
        /* 2: s(K) over the s region */
#pragma unroll
        for (int m = 0; m < NSP; m++) {
            const int e = tid + m * NT;
            if (e >= C::UN)
                break;
            const int rr = e / C::SW, cc = e % C::SW;
            float ux[2] = {0, 0}, uy[2] = {0, 0}, uzv[2] = {0, 0};
            if (inm >> m & 1u) {
                const float3 n = nn[m];
                const int rc = (rr + (Y ? R : 0)) * C::TW + cc + R; /* ring column */
#pragma unroll
                for (int f = 0; f < 2; f++) {
                    const float *P0 = ring + slot(K) * 2 * C::PLANE + f * C::PLANE + rc;
                    float gx = 0, gy = 0, gz = 0;
#pragma unroll
                    for (int l = 1; l <= R; l++) {
                        gx += a.c1[0][l] * (P0[l] - P0[-l]);
                        if constexpr (Y)
                            gy += a.c1[1][l] * (P0[l * C::TW] - P0[-l * C::TW]);
                        gz += a.c1[2][l] * (ring[slot(K + l) * 2 * C::PLANE + f * C::PLANE + rc] -
                                            ring[slot(K - l) * 2 * C::PLANE + f * C::PLANE + rc]);
                    }
                    const float s = Y ? n.x * gx + n.y * gy + n.z * gz : n.x * gx + n.z * gz;
                    ux[f] = n.x * s;
                    uy[f] = n.y * s;
                    uzv[f] = n.z * s;
                }
            }
#pragma unroll
            for (int f = 0; f < 2; f++) {
                us[(f * C::NU + 0) * C::UN + e] = ux[f];
                if constexpr (Y)
                    us[(f * C::NU + 1) * C::UN + e] = uy[f];
                us[(f * C::NU + C::NU - 1) * C::UN + e] = uzv[f];
            }
        }
        __syncthreads();
        /* 3: the column's queues */
        {
            const float *Pk = ring + slot(K) * 2 * C::PLANE + myr;
#pragma unroll
            for (int f = 0; f < 2; f++) {
                pz[f][2 * R] = Pk[f * C::PLANE];
                uz[f][2 * R] = us[(f * C::NU + C::NU - 1) * C::UN + myu];
                const float *ux = us + (f * C::NU) * C::UN + myu;
                float m = 0;
#pragma unroll
                for (int l = 1; l <= R; l++)
                    m += a.c1[0][l] * (ux[l] - ux[-l]);
                if constexpr (Y) {
                    const float *uy = us + (f * C::NU + 1) * C::UN + myu;
                    float my = 0;
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        my += a.c1[1][l] * (uy[l * C::SW] - uy[-l * C::SW]);
                    m += my;
                }
                hxy[f][R] = m;
            }
        }
        /* 4: the update of plane k */
        if (upd) {
            const float *Pk = ring + slot(k) * 2 * C::PLANE + myr;
            float lf[2], hf[2];
#pragma unroll
            for (int f = 0; f < 2; f++) {
                const float *rp = Pk + f * C::PLANE;
                float sx = a.c2[0][0] * pz[f][R], syy = 0, szz = a.c2[2][0] * pz[f][R], mz = 0;
                if constexpr (Y)
                    syy = a.c2[1][0] * pz[f][R];
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    sx += a.c2[0][l] * (rp[l] + rp[-l]);
                    if constexpr (Y)
                        syy += a.c2[1][l] * (rp[l * C::TW] + rp[-l * C::TW]);
                    szz += a.c2[2][l] * (pz[f][R + l] + pz[f][R - l]);
                    mz += a.c1[2][l] * (uz[f][R + l] - uz[f][R - l]);
                }
                lf[f] = Y ? sx + szz + syy : sx + szz; /* the CPU's order */
                hf[f] = hxy[f][0] + mz;
            }
            /* tti_update with the operands read at the top of the plane */
            const float vz = u_vel, e = tti_ed_value(u_ed), d = tti_ed_value(u_ed >> 16);
            const float sv = vz * ((e - d) * a.inv_sigma);
            const float ap = vz * (1.0f + 2.0f * e), aq = vz * (1.0f + 2.0f * d) - sv, cc = vz - sv;
            a.o[0][cu] = 2.0f * pz[0][R] - u_op + ap * lf[0] + ((sv - ap) * hf[0] + cc * hf[1]);
            a.o[1][cu] = 2.0f * pz[1][R] - u_oq + aq * lf[0] + (cc * hf[1] - aq * hf[0]) + sv * lf[1];
        }
#pragma unroll
        for (int f = 0; f < 2; f++) {
#pragma unroll
            for (int u = 0; u < 2 * R; u++) {
                pz[f][u] = pz[f][u + 1];
                uz[f][u] = uz[f][u + 1];
            }
#pragma unroll
            for (int u = 0; u < R; u++)
                hxy[f][u] = hxy[f][u + 1];
        }
    }
}

/* 3D: 32 x 8 columns; 2D: one row of 128. */
#define T3_W 32
#define T3_BY 8
#define T2_W 128

template <int R, bool Y>
static int launch(const tti_sim *s, const Box &in, cudaStream_t st)
{
    constexpr int W = Y ? T3_W : T2_W, BY = Y ? T3_BY : 1;
    using C = TCfg<R, Y, W, BY>;
    static int per_sm = 0; /* once per instantiation, as wave_ring.cuh's launcher */
    if (!per_sm) {
        CUDA_TRY(cudaFuncSetAttribute(k_tti_tiled<R, Y, W, BY>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)C::bytes));
        int n = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_tti_tiled<R, Y, W, BY>, W * BY, C::bytes));
        per_sm = n > 0 ? n : 1;
    }
    const struct wave_layout *L = &s->w.L;
    const int gx = (in.hi[0] - in.lo[0] + W - 1) / W, gy = Y ? (in.hi[1] - in.lo[1] + BY - 1) / BY : 1;
    const int nz = in.hi[2] - in.lo[2];
    /* z chunks: enough blocks for ~2 waves, each chunk at least 8R planes (a chunk
     * recomputes 2R planes of s and loads 2R planes before its first update) */
    const long long target = 2LL * sm_count(&s->w) * per_sm;
    const long long nch = (target + (long long)gx * gy - 1) / ((long long)gx * gy);
    int zc = (int)((nz + nch - 1) / nch);
    zc = zc < 8 * R ? 8 * R : zc;
    dim3 blk(W, BY), grd(gx, gy, (nz + zc - 1) / zc);
    k_tti_tiled<R, Y, W, BY><<<grd, blk, C::bytes, st>>>(tti_args(s), in, zc, L->dim[0], L->dim[1], L->dim[2]);
    CUDA_TRY_LAUNCH();
    return 0;
}

bool tti_cu_tiled_supports(const tti_sim *s) { return s->w.r <= TTI_TILED_RMAX; }

int tti_cu_tiled(const tti_sim *s, const Box &b, cudaStream_t st)
{
    switch (s->w.r) {
    case 1: return wave_is_2d(&s->w) ? launch<1, false>(s, b, st) : launch<1, true>(s, b, st);
    case 2: return wave_is_2d(&s->w) ? launch<2, false>(s, b, st) : launch<2, true>(s, b, st);
    case 3: return wave_is_2d(&s->w) ? launch<3, false>(s, b, st) : launch<3, true>(s, b, st);
    case 4: return wave_is_2d(&s->w) ? launch<4, false>(s, b, st) : launch<4, true>(s, b, st);
    }
    return err_set(-ENOTSUP, "tti: the tiled kernel holds orders 2..%d (order %d)", 2 * TTI_TILED_RMAX, 2 * s->w.r);
}
