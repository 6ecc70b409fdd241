/* tti_split — the column-queue kernel of tti_cols.cu with the two fields on two halves
 * of the block (research, tuning.pipe 4): the column kernel holds both fields' queues in
 * one thread (128 registers, one block of 16 warps per SM) and is issue- and latency-
 * bound; here a block of 32 x 16 x 2 threads owns the same 32 x 16 column tile, thread
 * (x, y, f) marching field f's column, so that a thread holds half the queues and an SM
 * runs 32 warps (64 registers a thread).  HS: the halo columns' z queues in shared
 * memory (tti_cols.cu's HR), 9 registers fewer.
 *
 * Per plane K, one barrier, as tti_cols.cu for one field: s(K), u(K), L(K) from the
 * shared f plane (phase 1), (m_x + m_y)(K-1) (phase 2), then L(k) and H1(k) of plane
 * k = K - R into an exchange buffer of the block (by plane parity).  The update of plane
 * k needs both fields' L and H1, so it runs one plane later (iteration K + 1, after the
 * barrier), reading the other half's from the exchange buffer; f(k), p or q(n-1) and the
 * medium of k are kept for it.  The same arithmetic as tti_cols.cu (tti_update's
 * expression), 3D orders 2..8, a box without CPML terms or free-surface rows. */
#include "kernels/tti_cuda.h"

namespace {

/* the smallest stride >= W that is 4 times an odd number (tti_cols.cu's odd4) */
constexpr int odd4s(int w) { return w + ((12 - w % 8) % 8); }

template <int R, bool HS>
struct SCfg {
    static constexpr int BXW = 32, BYH = 16;
    static constexpr int FS = odd4s(BXW + 4 * R), FH = BYH + 4 * R; /* f plane: stride, rows */
    static constexpr int UXS = odd4s(BXW + 2 * R), UYS = BXW;       /* u_x, u_y planes */
    static constexpr int FPL = FS * FH, UXN = UXS * BYH, UYN = UYS * (BYH + 2 * R);
    static constexpr int FIELD = FPL + UXN + UYN; /* floats per field and buffer */
    static constexpr int NT = BXW * BYH;          /* threads per field */
    static constexpr int NHY = 2 * R * BXW, NH = NHY + 2 * R * BYH;
    static constexpr int NEY = 2 * R * BXW, NEX = 2 * R * BYH, NE = NEY + NEX + 4 * R * R;
    /* exchange: [parity][field][L, H1][NT]; HS: the halo columns' queues, each plane in
     * two slots of 2(2R+1) (tti_cols.cu's HR), [field][slot][NH] */
    static constexpr int XN = 2 * 2 * 2 * NT, HSN = HS ? 2 * 2 * (2 * R + 1) * NH : 0;
    static constexpr size_t bytes = sizeof(float) * (2 * 2 * FIELD + XN + HSN);
    static_assert(NH <= NT && NE <= NT, "one halo column and one other cell per thread");
    static_assert(NHY % 32 == 0 && NH % 32 == 0, "halo kinds warp-uniform");
};

struct SCol {
    long long base;
    bool okxy, inxy;
};

__device__ __forceinline__ SCol scol_at(const TArgs &a, int px, int py, int d0, int d1)
{
    SCol c;
    const int gx = px + a.h, gy = py + a.hy;
    c.okxy = gx >= 0 && gx < d0 && gy >= 0 && gy < d1;
    c.inxy = px >= 0 && px < a.npad[0] && py >= 0 && py < a.npad[1];
    c.base = (long long)gy * a.sy + gx;
    return c;
}

__device__ __forceinline__ float sldf(const float *__restrict__ fv, const TArgs &a, const SCol &c, int P, int d2)
{
    const int gz = P + a.h;
    return c.okxy && gz >= 0 && gz < d2 ? __ldg(fv + c.base + (long long)gz * a.sz) : 0.0f;
}

__device__ __forceinline__ uint32_t sldt(const TArgs &a, const SCol &c, int P)
{
    return c.inxy && P >= 0 && P < a.npad[2] ? __ldg(a.tilt + c.base + (long long)(P + a.h) * a.sz) : 0u;
}

} // namespace

template <int R, bool HS>
__global__ void __launch_bounds__(1024, 1) k_tti_split(TArgs a, Box b, int zchunk, int d0, int d1, int d2)
{
    using C = SCfg<R, HS>;
    constexpr int BXW = C::BXW, BYH = C::BYH, Q = 2 * R + 1;
    extern __shared__ float sm[];
    const int tx = threadIdx.x, ty = threadIdx.y, f = threadIdx.z, t = ty * BXW + tx;
    const int x0 = b.lo[0] + blockIdx.x * BXW, y0 = b.lo[1] + blockIdx.y * BYH;
    const int kb = b.lo[2] + blockIdx.z * zchunk, ke = min(kb + zchunk, b.hi[2]);
    const bool mine = x0 + tx < b.hi[0] && y0 + ty < b.hi[1];
    const float *__restrict__ fv = a.f[f];

    /* this thread's columns (tti_cols.cu's assignment, per field half) */
    const bool ownH = t < C::NH, hyk = t < C::NHY;
    int xh = 0, yh = 0;
    if (hyk) {
        const int row = t / BXW;
        xh = t % BXW;
        yh = row < R ? row - R : BYH + row - R;
    } else if (ownH) {
        const int e = t - C::NHY, c = e % (2 * R);
        xh = c < R ? c - R : BXW + c - R;
        yh = e / (2 * R);
    }
    const bool ownE = t < C::NE;
    int xe = 0, ye = 0;
    if (t < C::NEY) {
        const int row = t / BXW;
        xe = t % BXW;
        ye = row < R ? row - 2 * R : BYH + row;
    } else if (t < C::NEY + C::NEX) {
        const int e = t - C::NEY, c = e % (2 * R);
        xe = c < R ? c - 2 * R : BXW + c;
        ye = e / (2 * R);
    } else if (ownE) {
        const int e = t - C::NEY - C::NEX, corner = e / (R * R), w = e % (R * R);
        xe = (corner & 1) ? BXW + w % R : w % R - R;
        ye = (corner & 2) ? BYH + w / R : w / R - R;
    }
    const SCol ct = scol_at(a, x0 + tx, y0 + ty, d0, d1);
    const SCol ch = scol_at(a, x0 + xh, y0 + yh, d0, d1);
    const SCol ce = scol_at(a, x0 + xe, y0 + ye, d0, d1);
    const bool hok = ownH && ch.okxy, eok = ownE && ce.okxy;

    const int ft = (ty + 2 * R) * C::FS + tx + 2 * R, fh = (yh + 2 * R) * C::FS + xh + 2 * R,
              fe = (ye + 2 * R) * C::FS + xe + 2 * R;
    const int uxt = C::FPL + ty * C::UXS + tx + R, uyt = C::FPL + C::UXN + (ty + R) * C::UYS + tx;
    const int uh = hyk ? C::FPL + C::UXN + (yh + R) * C::UYS + xh : C::FPL + yh * C::UXS + xh + R;
    auto buf = [&](int K) { return sm + ((K & 1) * 2 + f) * C::FIELD; };
    /* exchange slot of plane P, field G, value V (0 L, 1 H1) for this column */
    auto xch = [&](int P, int g, int v) -> float & { return sm[4 * C::FIELD + (((P & 1) * 2 + g) * 2 + v) * C::NT + t]; };

    float q[Q], qh[HS ? 1 : Q], uz[Q], lq[R + 1], hq[R];
    float *const hring = sm + 4 * C::FIELD + C::XN + f * 2 * Q * C::NH + t; /* HS: this column */
    int hb = 0; /* HS: the slot of plane K-R */
#pragma unroll
    for (int j = 0; j < Q; j++) {
        q[j] = sldf(fv, a, ct, kb - 2 * R + j, d2);
        const float v = hok ? sldf(fv, a, ch, kb - 2 * R + j, d2) : 0.0f;
        if constexpr (HS) {
            if (ownH)
                hring[j * C::NH] = hring[(j + Q) * C::NH] = v;
        } else {
            qh[j] = v;
        }
        uz[j] = 0.0f;
    }
#pragma unroll
    for (int j = 0; j <= R; j++)
        lq[j] = 0.0f;
#pragma unroll
    for (int j = 0; j < R; j++)
        hq[j] = 0.0f;
    float xcur;
    {
        float *F = buf(kb - R);
        F[ft] = q[R];
        if (ownH) {
            if constexpr (HS)
                F[fh] = hring[R * C::NH];
            else
                F[fh] = qh[R];
        }
        if (ownE)
            F[fe] = eok ? sldf(fv, a, ce, kb - R, d2) : 0.0f;
        xcur = eok ? sldf(fv, a, ce, kb - R + 1, d2) : 0.0f;
    }
    float3 nt = tti_axis(a.tab, sldt(a, ct, kb - R)), nh = make_float3(0, 0, 0);
    uint32_t ttt = sldt(a, ct, kb - R + 1), tth = 0;
    if (ownH) {
        nh = tti_axis(a.tab, sldt(a, ch, kb - R));
        tth = sldt(a, ch, kb - R + 1);
    }
    /* the update of plane k - 1: its own L and H1, f, f(n-1) and the medium */
    float dl = 0, dh = 0, dfk = 0, mo = 0, mv = 0;
    uint32_t med = 0;
    __syncthreads();

    for (int K = kb - R; K <= ke + R; K++) {
        const int k = K - R;
        const float nf = sldf(fv, a, ct, K + R + 1, d2), nfh = hok ? sldf(fv, a, ch, K + R + 1, d2) : 0.0f;
        const bool kin = K >= 0 && K < a.npad[2];
        const bool tin = ct.inxy && kin, hin = ownH && ch.inxy && kin;
        /* 1: s(K), u(K), L(K) */
        float ls, uzn;
        {
            float *F = buf(K);
            const float *P = F + ft;
            const float c = q[R];
            float gx = 0, gy = 0, gz = 0, lx = a.c2[0][0] * c, ly = a.c2[1][0] * c, lz = a.c2[2][0] * c;
#pragma unroll
            for (int l = 1; l <= R; l++) {
                const float xp = P[l], xm = P[-l], yp = P[l * C::FS], ym = P[-l * C::FS];
                const float zp = q[R + l], zm = q[R - l];
                gx += a.c1[0][l] * (xp - xm);
                lx += a.c2[0][l] * (xp + xm);
                gy += a.c1[1][l] * (yp - ym);
                ly += a.c2[1][l] * (yp + ym);
                gz += a.c1[2][l] * (zp - zm);
                lz += a.c2[2][l] * (zp + zm);
            }
            ls = lx + lz + ly;
            const float s = tin ? nt.x * gx + nt.y * gy + nt.z * gz : 0.0f;
            F[uxt] = nt.x * s;
            F[uyt] = nt.y * s;
            uzn = nt.z * s;
            if (ownH) {
                const float *Ph = F + fh;
                float hx = 0, hyv = 0, hz = 0;
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    hx += a.c1[0][l] * (Ph[l] - Ph[-l]);
                    hyv += a.c1[1][l] * (Ph[l * C::FS] - Ph[-l * C::FS]);
                    if constexpr (HS)
                        hz += a.c1[2][l] * (hring[(hb + R + l) * C::NH] - hring[(hb + R - l) * C::NH]);
                    else
                        hz += a.c1[2][l] * (qh[R + l] - qh[R - l]);
                }
                const float sh = hin ? nh.x * hx + nh.y * hyv + nh.z * hz : 0.0f;
                F[uh] = (hyk ? nh.y : nh.x) * sh;
            }
        }
        /* 2: (m_x + m_y)(K-1); the queues advance */
        {
            const float *F = buf(K - 1);
            const float *ux = F + uxt, *uy = F + uyt;
            float mx = 0, my = 0;
#pragma unroll
            for (int l = 1; l <= R; l++) {
                mx += a.c1[0][l] * (ux[l] - ux[-l]);
                my += a.c1[1][l] * (uy[l * C::UYS] - uy[-l * C::UYS]);
            }
#pragma unroll
            for (int j = 0; j < R - 1; j++)
                hq[j] = hq[j + 1];
            hq[R - 1] = mx + my;
#pragma unroll
            for (int j = 0; j < R; j++)
                lq[j] = lq[j + 1];
            lq[R] = ls;
#pragma unroll
            for (int j = 0; j < 2 * R; j++)
                uz[j] = uz[j + 1];
            uz[2 * R] = uzn;
        }
        /* 3: this field's L(k), H1(k) into the exchange; the update of plane k - 1 from
         * the other field's, written there an iteration (a barrier) ago */
        float hk;
        {
            float mz = 0;
#pragma unroll
            for (int l = 1; l <= R; l++)
                mz += a.c1[2][l] * (uz[R + l] - uz[R - l]);
            hk = hq[0] + mz;
            xch(k, f, 0) = lq[0];
            xch(k, f, 1) = hk;
        }
        const int kd = k - 1;
        if (mine && kd >= kb && kd < ke) {
            const float ol = xch(kd, 1 - f, 0), oh = xch(kd, 1 - f, 1);
            const float vz = mv, e = tti_ed_value(med), d = tti_ed_value(med >> 16);
            const float sv = vz * ((e - d) * a.inv_sigma);
            const float ap = vz * (1.0f + 2.0f * e), aq = vz * (1.0f + 2.0f * d) - sv, cc = vz - sv;
            const long long cu = ct.base + (long long)(kd + a.h) * a.sz;
            if (f == 0) /* dl, dh: L p, H1 p; ol, oh: L q, H1 q */
                a.o[0][cu] = 2.0f * dfk - mo + ap * dl + ((sv - ap) * dh + cc * oh);
            else /* dl, dh: L q, H1 q; ol, oh: L p, H1 p */
                a.o[1][cu] = 2.0f * dfk - mo + aq * ol + (cc * dh - aq * oh) + sv * dl;
        }
        dl = lq[0];
        dh = hk;
        dfk = q[0];
        /* 4: f(K+1) into the other buffer */
        {
            float *F = buf(K + 1);
            F[ft] = q[R + 1];
            if (ownH) {
                if constexpr (HS)
                    F[fh] = hring[(hb + R + 1) * C::NH];
                else
                    F[fh] = qh[R + 1];
            }
            if (ownE)
                F[fe] = xcur;
        }
        xcur = eok ? sldf(fv, a, ce, K + 2, d2) : 0.0f;
        nt = tti_axis(a.tab, ttt);
        ttt = sldt(a, ct, K + 2);
        if (ownH) {
            nh = tti_axis(a.tab, tth);
            tth = sldt(a, ch, K + 2);
        }
        /* the operands of plane k, updated next iteration */
        if (mine && k >= kb && k < ke) {
            const long long c1 = ct.base + (long long)(k + a.h) * a.sz;
            mv = __ldg(a.vel + c1);
            med = __ldg(a.ed + c1);
            mo = a.o[f][c1];
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < 2 * R; j++)
            q[j] = q[j + 1];
        q[2 * R] = nf;
        if constexpr (HS) {
            /* plane K+R+1 takes the slot of K-R (only this thread touches them) */
            if (ownH)
                hring[hb * C::NH] = hring[(hb + Q) * C::NH] = nfh;
            hb = hb + 1 == Q ? 0 : hb + 1;
        } else {
#pragma unroll
            for (int j = 0; j < 2 * R; j++)
                qh[j] = qh[j + 1];
            qh[2 * R] = nfh;
        }
    }
}

template <int R, bool HS>
static int launch(const tti_sim *s, const Box &in, cudaStream_t st)
{
    using C = SCfg<R, HS>;
    static int per_sm = 0;
    if (!per_sm) {
        CUDA_TRY(cudaFuncSetAttribute(k_tti_split<R, HS>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::bytes));
        int n = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_tti_split<R, HS>, 2 * C::NT, C::bytes));
        per_sm = n > 0 ? n : 1;
    }
    const struct wave_layout *L = &s->w.L;
    const int gx = (in.hi[0] - in.lo[0] + C::BXW - 1) / C::BXW, gy = (in.hi[1] - in.lo[1] + C::BYH - 1) / C::BYH;
    const int nz = in.hi[2] - in.lo[2];
    /* z chunks as tti_cols.cu's launch (one more plane marched per chunk) */
    const long long slots = (long long)sm_count(&s->w) * per_sm, tiles = (long long)gx * gy;
    int zc = nz;
    long long best = -1;
    for (int nch = 1; nch <= 16 && (nz + nch - 1) / nch >= 2 * R; nch++) {
        const int c = (nz + nch - 1) / nch;
        const long long waves = (tiles * ((nz + c - 1) / c) + slots - 1) / slots, cost = waves * (c + 2 * R + 1);
        if (best < 0 || cost < best) {
            best = cost;
            zc = c;
        }
    }
    dim3 blk(C::BXW, C::BYH, 2), grd(gx, gy, (nz + zc - 1) / zc);
    k_tti_split<R, HS><<<grd, blk, C::bytes, st>>>(tti_args(s), in, zc, L->dim[0], L->dim[1], L->dim[2]);
    CUDA_TRY_LAUNCH();
    return 0;
}

int tti_cu_split(const tti_sim *s, const Box &b, bool halo_shared, cudaStream_t st)
{
    if (box_empty(b))
        return 0;
    switch (s->w.r) {
    case 1: return halo_shared ? launch<1, true>(s, b, st) : launch<1, false>(s, b, st);
    case 2: return halo_shared ? launch<2, true>(s, b, st) : launch<2, false>(s, b, st);
    case 3: return halo_shared ? launch<3, true>(s, b, st) : launch<3, false>(s, b, st);
    case 4: return halo_shared ? launch<4, true>(s, b, st) : launch<4, false>(s, b, st);
    }
    return err_set(-ENOTSUP, "tti: the split column kernel holds orders 2..8 (order %d)", 2 * s->w.r);
}
