/* tti_cols — the column-queue tiled TTI twin (3D): one fused pass per step over a box in
 * which no CPML term and no free-surface image is needed (the plan of tti_cuda.cu keeps
 * the box r cells away from both), s never written to memory.  It replaces the shared
 * ring of 2R+1 planes of tti_tiled.cu (98 KB per block, ~186 shared-memory reads and
 * ~600 instructions per point) by register queues along z:
 *
 * A block of BXW x BYH threads owns a BXW x BYH column tile and marches z.  Every thread
 * holds the 2R+1 planes K-R..K+R of p and q of its tile column in registers, and the
 * first NH threads also those of one column of the s halo (the R-wide cross around the
 * tile: the points whose n_a s the tile's outer derivatives read), so that every z
 * derivative comes from registers.  Per plane K, with one barrier:
 *   1. the x and y first derivatives of p and q at the tile and the halo cross from one
 *      shared plane of f(K) (tile + 2R; the 4R^2 corner and outer cells no queue holds
 *      are loaded from global memory one plane ahead), s = n . grad f there, and u_x,
 *      u_y = n_x s, n_y s into shared memory (u_z stays in a register queue); the tile's
 *      Laplacian L(K) from the same shared reads (d_xx and d_x share their neighbours);
 *   2. m_x + m_y = D_x u_x + D_y u_y of plane K-1 from the other buffer;
 *   3. the update of plane k = K - R: L(k) and (m_x + m_y)(k) from register queues,
 *      m_z(k) = D_z u_z from the u_z queue, f(k) the oldest queue entry;
 *   4. f(K+1) into the other shared buffer (the queues already hold it).
 * The two buffers of f and u alternate by plane parity, which is what makes one barrier
 * per plane enough.  Global loads for plane K+R+1 (queues), K+2 (the cells no queue
 * holds), the tilt of K+2 and the update's operands of k+1 are issued one plane ahead.
 *
 * HR (research): the halo columns' queues live in shared memory instead of registers,
 * each thread reading and writing only its own column's slots.
 *
 * Arithmetic as the CPU reference (tti-spec.md): L = S_x + S_z + S_y per field, H1 =
 * (m_x + m_y) + m_z (the CPU sums (m_x + m_z) + m_y: a rounding apart), the update of
 * tti_update.  Orders 2..8 (R <= 4); 2D grids run tti_tiled.cu's kernel. */
#include "kernels/tti_cuda.h"

namespace {

/* the smallest stride >= W that is 4 times an odd number: R-wide halo columns of 8 rows
 * then fall in distinct shared-memory banks */
constexpr int odd4(int w) { return w + ((12 - w % 8) % 8); }

template <int R, int BXW, int BYH, bool HR>
struct CCfg {
    static constexpr int FS = odd4(BXW + 4 * R), FH = BYH + 4 * R; /* f plane: stride, rows */
    static constexpr int UXS = odd4(BXW + 2 * R), UYS = BXW;       /* u_x, u_y planes */
    static constexpr int FPL = FS * FH, UXN = UXS * BYH, UYN = UYS * (BYH + 2 * R);
    static constexpr int FIELD = FPL + UXN + UYN; /* floats per field and buffer */
    static constexpr int NT = BXW * BYH;
    static constexpr int NHY = 2 * R * BXW, NH = NHY + 2 * R * BYH;           /* halo cross */
    /* HR: the halo columns' queues in shared memory, each plane in two slots of 2(2R+1)
     * so that the 2R+1 live ones are contiguous from any start */
    static constexpr int HRN = HR ? 2 * 2 * (2 * R + 1) * NH : 0;
    static constexpr size_t bytes = sizeof(float) * (2 * 2 * FIELD + HRN);
    static constexpr int NEY = 2 * R * BXW, NEX = 2 * R * BYH, NE = NEY + NEX + 4 * R * R; /* others */
    static_assert(NH <= NT && NE <= NT, "one halo column and one other cell per thread");
    static_assert(NHY % 32 == 0 && NH % 32 == 0, "halo kinds warp-uniform");
};

/* A column of the block's f plane: tile coordinates (x, y), 0 <= x < BXW inside the tile;
 * where it is in the allocated array and whether it is in the padded grid. */
struct Col {
    long long base; /* allocated element of plane z = -h (add (z + h) * sz) */
    bool okxy;      /* inside the allocated x-y plane (else f reads 0) */
    bool inxy;      /* inside the padded grid's x-y extent (else s and u are 0) */
};

__device__ __forceinline__ Col col_at(const TArgs &a, int px, int py, int d0, int d1)
{
    Col c;
    const int gx = px + a.h, gy = py + a.hy;
    c.okxy = gx >= 0 && gx < d0 && gy >= 0 && gy < d1;
    c.inxy = px >= 0 && px < a.npad[0] && py >= 0 && py < a.npad[1];
    c.base = (long long)gy * a.sy + gx;
    return c;
}

__device__ __forceinline__ float ldf(const TArgs &a, int f, const Col &c, int P, int d2)
{
    const int gz = P + a.h;
    return c.okxy && gz >= 0 && gz < d2 ? __ldg(a.f[f] + c.base + (long long)gz * a.sz) : 0.0f;
}

__device__ __forceinline__ uint32_t ldt(const TArgs &a, const Col &c, int P)
{
    return c.inxy && P >= 0 && P < a.npad[2] ? __ldg(a.tilt + c.base + (long long)(P + a.h) * a.sz) : 0u;
}

} // namespace

template <int R, int BXW, int BYH, bool HR>
__global__ void __launch_bounds__(BXW *BYH, 1) k_tti_cols(TArgs a, Box b, int zchunk, int d0, int d1, int d2)
{
    using C = CCfg<R, BXW, BYH, HR>;
    constexpr int Q = 2 * R + 1;
    extern __shared__ float sm[];
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * BXW + tx;
    const int x0 = b.lo[0] + blockIdx.x * BXW, y0 = b.lo[1] + blockIdx.y * BYH;
    const int kb = b.lo[2] + blockIdx.z * zchunk, ke = min(kb + zchunk, b.hi[2]);
    const bool mine = x0 + tx < b.hi[0] && y0 + ty < b.hi[1];

    /* this thread's columns: the tile's, a halo column (t < NH), another cell (t < NE) */
    const bool ownH = t < C::NH, hyk = t < C::NHY; /* y halo: stores u_y, else u_x */
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
    const Col ct = col_at(a, x0 + tx, y0 + ty, d0, d1);
    const Col ch = col_at(a, x0 + xh, y0 + yh, d0, d1);
    const Col ce = col_at(a, x0 + xe, y0 + ye, d0, d1);
    const bool hok = ownH && ch.okxy, eok = ownE && ce.okxy;

    /* shared offsets (within a field's buffer) */
    const int ft = (ty + 2 * R) * C::FS + tx + 2 * R, fh = (yh + 2 * R) * C::FS + xh + 2 * R,
              fe = (ye + 2 * R) * C::FS + xe + 2 * R;
    const int uxt = C::FPL + ty * C::UXS + tx + R, uyt = C::FPL + C::UXN + (ty + R) * C::UYS + tx;
    const int uh = hyk ? C::FPL + C::UXN + (yh + R) * C::UYS + xh : C::FPL + yh * C::UXS + xh + R;
    auto buf = [&](int K, int f) { return sm + ((K & 1) * 2 + f) * C::FIELD; };

    /* the queues: f(K-R..K+R) of the tile and halo columns; u_z(K-2R..K), L(K-R..K),
     * (m_x + m_y)(K-R..K-1) of the tile column */
    float q[2][Q], qh[2][HR ? 1 : Q], uz[2][Q], lq[2][R + 1], hq[2][R];
    float *const hring = sm + 4 * C::FIELD + t; /* HR: [field][slot][NH], this column */
    int hb = 0;                                 /* HR: the slot of plane K-R */
#pragma unroll
    for (int f = 0; f < 2; f++) {
#pragma unroll
        for (int j = 0; j < Q; j++) {
            q[f][j] = ldf(a, f, ct, kb - 2 * R + j, d2);
            const float v = hok ? ldf(a, f, ch, kb - 2 * R + j, d2) : 0.0f;
            if constexpr (HR) {
                if (ownH)
                    hring[(f * 2 * Q + j) * C::NH] = hring[(f * 2 * Q + j + Q) * C::NH] = v;
            } else {
                qh[f][j] = v;
            }
            uz[f][j] = 0.0f;
        }
#pragma unroll
        for (int j = 0; j <= R; j++)
            lq[f][j] = 0.0f;
#pragma unroll
        for (int j = 0; j < R; j++)
            hq[f][j] = 0.0f;
    }
    float xcur[2]; /* f(K+1) of the other cell, loaded a plane ahead */
#pragma unroll
    for (int f = 0; f < 2; f++) {
        float *F = buf(kb - R, f);
        F[ft] = q[f][R];
        if (ownH)
            F[fh] = HR ? hring[(f * 2 * Q + R) * C::NH] : qh[f][HR ? 0 : R];
        if (ownE)
            F[fe] = eok ? ldf(a, f, ce, kb - R, d2) : 0.0f;
        xcur[f] = eok ? ldf(a, f, ce, kb - R + 1, d2) : 0.0f;
    }
    /* the axis of plane K (n), the tilt code of plane K+1 (tt) */
    float3 nt = tti_axis(a.tab, ldt(a, ct, kb - R)), nh = make_float3(0, 0, 0);
    uint32_t ttt = ldt(a, ct, kb - R + 1), tth = 0;
    if (ownH) {
        nh = tti_axis(a.tab, ldt(a, ch, kb - R));
        tth = ldt(a, ch, kb - R + 1);
    }
    /* the update's operands of plane k = K - R */
    float mv = 0, mop = 0, moq = 0;
    uint32_t med = 0;
    __syncthreads();

    for (int K = kb - R; K < ke + R; K++) {
        const int k = K - R;
        /* f(K+R+1) of the queued columns, committed after the barrier */
        float nf[2], nfh[2];
#pragma unroll
        for (int f = 0; f < 2; f++) {
            nf[f] = ldf(a, f, ct, K + R + 1, d2);
            nfh[f] = hok ? ldf(a, f, ch, K + R + 1, d2) : 0.0f;
        }
        const bool kin = K >= 0 && K < a.npad[2];
        const bool tin = ct.inxy && kin, hin = ownH && ch.inxy && kin;
        /* 1: s(K), u(K) and L(K) */
        float ls[2], uzn[2];
#pragma unroll
        for (int f = 0; f < 2; f++) {
            float *F = buf(K, f);
            const float *P = F + ft;
            const float c = q[f][R];
            float gx = 0, gy = 0, gz = 0, lx = a.c2[0][0] * c, ly = a.c2[1][0] * c, lz = a.c2[2][0] * c;
#pragma unroll
            for (int l = 1; l <= R; l++) {
                const float xp = P[l], xm = P[-l], yp = P[l * C::FS], ym = P[-l * C::FS];
                const float zp = q[f][R + l], zm = q[f][R - l];
                gx += a.c1[0][l] * (xp - xm);
                lx += a.c2[0][l] * (xp + xm);
                gy += a.c1[1][l] * (yp - ym);
                ly += a.c2[1][l] * (yp + ym);
                gz += a.c1[2][l] * (zp - zm);
                lz += a.c2[2][l] * (zp + zm);
            }
            ls[f] = lx + lz + ly; /* the CPU's order */
            const float s = tin ? nt.x * gx + nt.y * gy + nt.z * gz : 0.0f;
            F[uxt] = nt.x * s;
            F[uyt] = nt.y * s;
            uzn[f] = nt.z * s;
            if (ownH) {
                const float *Ph = F + fh;
                float hx = 0, hyv = 0, hz = 0;
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    hx += a.c1[0][l] * (Ph[l] - Ph[-l]);
                    hyv += a.c1[1][l] * (Ph[l * C::FS] - Ph[-l * C::FS]);
                    if constexpr (HR)
                        hz += a.c1[2][l] * (hring[(f * 2 * Q + hb + R + l) * C::NH] -
                                            hring[(f * 2 * Q + hb + R - l) * C::NH]);
                    else
                        hz += a.c1[2][l] * (qh[f][R + l] - qh[f][R - l]);
                }
                const float sh = hin ? nh.x * hx + nh.y * hyv + nh.z * hz : 0.0f;
                F[uh] = (hyk ? nh.y : nh.x) * sh;
            }
        }
        /* 2: (m_x + m_y)(K-1) from the other buffer; the queues advance */
#pragma unroll
        for (int f = 0; f < 2; f++) {
            const float *F = buf(K - 1, f);
            const float *ux = F + uxt, *uy = F + uyt;
            float mx = 0, my = 0;
#pragma unroll
            for (int l = 1; l <= R; l++) {
                mx += a.c1[0][l] * (ux[l] - ux[-l]);
                my += a.c1[1][l] * (uy[l * C::UYS] - uy[-l * C::UYS]);
            }
#pragma unroll
            for (int j = 0; j < R - 1; j++)
                hq[f][j] = hq[f][j + 1];
            hq[f][R - 1] = mx + my;
#pragma unroll
            for (int j = 0; j < R; j++)
                lq[f][j] = lq[f][j + 1];
            lq[f][R] = ls[f];
#pragma unroll
            for (int j = 0; j < 2 * R; j++)
                uz[f][j] = uz[f][j + 1];
            uz[f][2 * R] = uzn[f];
        }
        /* 3: the update of plane k */
        if (k >= kb && mine) {
            float hf[2];
#pragma unroll
            for (int f = 0; f < 2; f++) {
                float mz = 0;
#pragma unroll
                for (int l = 1; l <= R; l++)
                    mz += a.c1[2][l] * (uz[f][R + l] - uz[f][R - l]);
                hf[f] = hq[f][0] + mz;
            }
            const float vz = mv, e = tti_ed_value(med), d = tti_ed_value(med >> 16);
            const float sv = vz * ((e - d) * a.inv_sigma);
            const float ap = vz * (1.0f + 2.0f * e), aq = vz * (1.0f + 2.0f * d) - sv, cc = vz - sv;
            const long long cu = ct.base + (long long)(k + a.h) * a.sz;
            a.o[0][cu] = 2.0f * q[0][0] - mop + ap * lq[0][0] + ((sv - ap) * hf[0] + cc * hf[1]);
            a.o[1][cu] = 2.0f * q[1][0] - moq + aq * lq[0][0] + (cc * hf[1] - aq * hf[0]) + sv * lq[1][0];
        }
        /* 4: f(K+1) into the other buffer */
#pragma unroll
        for (int f = 0; f < 2; f++) {
            float *F = buf(K + 1, f);
            F[ft] = q[f][R + 1];
            if (ownH)
                F[fh] = HR ? hring[(f * 2 * Q + hb + R + 1) * C::NH] : qh[f][HR ? 0 : R + 1];
            if (ownE)
                F[fe] = xcur[f];
        }
        /* the next plane's operands */
#pragma unroll
        for (int f = 0; f < 2; f++)
            xcur[f] = eok ? ldf(a, f, ce, K + 2, d2) : 0.0f;
        nt = tti_axis(a.tab, ttt);
        ttt = ldt(a, ct, K + 2);
        if (ownH) {
            nh = tti_axis(a.tab, tth);
            tth = ldt(a, ch, K + 2);
        }
        const int k1 = k + 1;
        if (mine && k1 >= kb && k1 < ke) {
            const long long c1 = ct.base + (long long)(k1 + a.h) * a.sz;
            mv = __ldg(a.vel + c1);
            med = __ldg(a.ed + c1);
            mop = a.o[0][c1];
            moq = a.o[1][c1];
        }
        __syncthreads();
#pragma unroll
        for (int f = 0; f < 2; f++) {
#pragma unroll
            for (int j = 0; j < 2 * R; j++)
                q[f][j] = q[f][j + 1];
            q[f][2 * R] = nf[f];
            if constexpr (HR) {
                /* plane K+R+1 takes the slot of K-R, read for the last time above (only
                 * this thread touches its column's slots: no barrier needed) */
                if (ownH)
                    hring[(f * 2 * Q + hb) * C::NH] = hring[(f * 2 * Q + hb + Q) * C::NH] = nfh[f];
            } else {
#pragma unroll
                for (int j = 0; j < 2 * R; j++)
                    qh[f][j] = qh[f][j + 1];
                qh[f][2 * R] = nfh[f];
            }
        }
        if constexpr (HR)
            hb = hb + 1 == Q ? 0 : hb + 1;
    }
}

#define TC_TX 32
#define TC_TY 16

template <int R, bool HR>
static int launch(const tti_sim *s, const Box &in, cudaStream_t st)
{
    constexpr int BXW = TC_TX, BYH = TC_TY;
    using C = CCfg<R, BXW, BYH, HR>;
    static int per_sm = 0; /* once per instantiation, as tti_tiled.cu's launcher */
    if (!per_sm) {
        CUDA_TRY(cudaFuncSetAttribute(k_tti_cols<R, BXW, BYH, HR>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)C::bytes));
        int n = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_tti_cols<R, BXW, BYH, HR>, BXW * BYH, C::bytes));
        per_sm = n > 0 ? n : 1;
    }
    const struct wave_layout *L = &s->w.L;
    const int gx = (in.hi[0] - in.lo[0] + BXW - 1) / BXW, gy = (in.hi[1] - in.lo[1] + BYH - 1) / BYH;
    const int nz = in.hi[2] - in.lo[2];
    /* z chunks: the count that minimises waves x (planes a block marches), a chunk
     * marching 2R planes more than it updates (e.g. 512^3 with CPML: 435 column tiles on
     * 132 SMs run 3.3 waves, i.e. 4, in one chunk; 3 chunks run 9.9, i.e. 10, of a third
     * of the planes each) */
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
    dim3 blk(BXW, BYH), grd(gx, gy, (nz + zc - 1) / zc);
    k_tti_cols<R, BXW, BYH, HR><<<grd, blk, C::bytes, st>>>(tti_args(s), in, zc, L->dim[0], L->dim[1], L->dim[2]);
    CUDA_TRY_LAUNCH();
    return 0;
}

bool tti_cu_cols_supports(const tti_sim *s) { return !wave_is_2d(&s->w) && s->w.r >= 1 && s->w.r <= 4; }

int tti_cu_cols(const tti_sim *s, const Box &b, bool halo_shared, cudaStream_t st)
{
    if (box_empty(b))
        return 0;
    switch (s->w.r) {
    case 1: return halo_shared ? launch<1, true>(s, b, st) : launch<1, false>(s, b, st);
    case 2: return halo_shared ? launch<2, true>(s, b, st) : launch<2, false>(s, b, st);
    case 3: return halo_shared ? launch<3, true>(s, b, st) : launch<3, false>(s, b, st);
    case 4: return halo_shared ? launch<4, true>(s, b, st) : launch<4, false>(s, b, st);
    }
    return err_set(-ENOTSUP, "tti: the column-queue kernel holds orders 2..8 (order %d)", 2 * s->w.r);
}
