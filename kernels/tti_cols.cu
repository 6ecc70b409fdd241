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

template <int R, int BXW, int BYH, bool HR, bool CP>
struct CCfg {
    static constexpr int FS = odd4(BXW + 4 * R), FH = BYH + 4 * R; /* f plane: stride, rows */
    static constexpr int UXS = odd4(BXW + 2 * R), UYS = BXW;       /* u_x, u_y planes */
    static constexpr int FPL = FS * FH, UXN = UXS * BYH, UYN = UYS * (BYH + 2 * R);
    /* CP: psi_x, psi_y planes laid out as u_x, u_y, PSO floats after them */
    static constexpr int PSO = UXN + UYN;
    static constexpr int FIELD = FPL + UXN + UYN + (CP ? PSO : 0); /* floats per field and buffer */
    static constexpr int NT = BXW * BYH;
    static constexpr int NHY = 2 * R * BXW, NH = NHY + 2 * R * BYH;           /* halo cross */
    /* HR: the halo columns' queues in shared memory, each plane in two slots of 2(2R+1)
     * so that the 2R+1 live ones are contiguous from any start */
    static constexpr int HRN = HR ? 2 * 2 * (2 * R + 1) * NH : 0;
    /* CP: per thread column, rings of 2R+1 planes (slot = plane mod 2R+1) of psi_z and of
     * the raw S_z per field, [ring][field][slot][thread] */
    static constexpr int CPN = CP ? 2 * 2 * (2 * R + 1) * NT : 0;
    static constexpr size_t bytes = sizeof(float) * (2 * 2 * FIELD + HRN + CPN);
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

/* CP: the boxes of one launch (the padded grid less the core: up to 6), each cut into
 * column tiles and z chunks of ZC planes; blocks [START[i], START[i + 1]) are box I's,
 * x tile fastest, then y tile, then chunk. */
struct CBoxes {
    int n;
    Box b[6];
    int gx[6], gy[6], zc[6], start[7];
};

/* The slab element of the CPML memory of axis 0 / 1 / 2 (t_slab's layout, kernels/
 * tti_cuda.h) at padded (i, j, k) with slab index JS along that axis. */
__device__ __forceinline__ long long sl_x(const TArgs &a, int j, int k, int js)
{
    return ((long long)k * a.npad[1] + j) * (a.pml[0] + a.pml[1]) + js;
}
__device__ __forceinline__ long long sl_y(const TArgs &a, int i, int k, int js)
{
    return ((long long)k * (a.pml[2] + a.pml[3]) + js) * a.npad[0] + i;
}
__device__ __forceinline__ long long sl_z(const TArgs &a, int i, int j, int js)
{
    return ((long long)js * a.npad[1] + j) * a.npad[0] + i;
}

} // namespace

template <int R, int BXW, int BYH, bool HR, bool CP>
__global__ void __launch_bounds__(BXW *BYH, 1)
    k_tti_cols(TArgs a, Box b0, int zchunk0, int d0, int d1, int d2, CBoxes cb)
{
    using C = CCfg<R, BXW, BYH, HR, CP>;
    constexpr int Q = 2 * R + 1;
    extern __shared__ float sm[];
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * BXW + tx;
    Box b = b0;
    int zchunk = zchunk0, bxi = blockIdx.x, byi = blockIdx.y, bzi = blockIdx.z;
    if constexpr (CP) {
        /* constant indices only (a dynamic one would copy CB to local memory) */
        const int blk = blockIdx.x;
        int s0 = 0, gx = 1, gy = 1;
#pragma unroll
        for (int m = 0; m < 6; m++)
            if (m < cb.n && blk >= cb.start[m]) {
                b = cb.b[m];
                zchunk = cb.zc[m];
                s0 = cb.start[m];
                gx = cb.gx[m];
                gy = cb.gy[m];
            }
        int l = blk - s0;
        bxi = l % gx;
        l /= gx;
        byi = l % gy;
        bzi = l / gy;
    }
    const int x0 = b.lo[0] + bxi * BXW, y0 = b.lo[1] + byi * BYH;
    const int kb = b.lo[2] + bzi * zchunk, ke = min(kb + zchunk, b.hi[2]);
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

    /* CP: the slab indices of the tile and halo columns across the x and y layers (-1
     * outside them); the raw S_x, S_y of the tile column at plane K-1 (their CPML terms
     * need the psi of plane K-1's neighbours, in shared memory a barrier later); the
     * rings of psi_z and raw S_z per field (slot RS: plane K) */
    int jxt = -1, jyt = -1, jxh = -1, jyh = -1, rs = 0;
    float sxr[2] = {0, 0}, syr[2] = {0, 0};
    float *const ring = sm + 4 * C::FIELD + C::HRN + t;
    if constexpr (CP) {
        jxt = t_js(a, 0, x0 + tx);
        jyt = t_js(a, 1, y0 + ty);
        if (ownH) {
            jxh = t_js(a, 0, x0 + xh);
            jyh = t_js(a, 1, y0 + yh);
        }
    }
    /* ring element of ring W (0 psi_z, 1 S_z), field F, D planes before plane K */
    auto rg = [&](int w, int f, int d) -> float & {
        const int sl = rs - d < 0 ? rs - d + Q : rs - d;
        return ring[((w * 2 + f) * Q + sl) * C::NT];
    };

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
        /* CP: slab index of plane K across the z layers; whether this thread owns (K, column) */
        const int jz = CP ? t_js(a, 2, K) : -1;
        const bool ownK = mine && K >= kb && K < ke;
        (void)jz;
        (void)ownK;
        /* 1: s(K), u(K) and L(K) */
        float ls[2], uzn[2], lxr[2] = {0, 0}, lyr[2] = {0, 0};
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
            if constexpr (CP) {
                lxr[f] = lx;
                lyr[f] = ly;
                /* psi_a <- b psi_a + a g_a, g_a += psi_a in axis a's layers (pass 1 of the
                 * naive twin); psi read from a.psi, written to a.psi_n where owned */
                float px = 0, py = 0, pz = 0;
                if (tin) {
                    const int i = x0 + tx, j = y0 + ty;
                    if (jxt >= 0) {
                        const long long e = sl_x(a, j, K, jxt);
                        px = __ldg(a.pb[0] + i) * __ldg(a.psi[f][0] + e) + __ldg(a.pa[0] + i) * gx;
                        if (ownK)
                            a.psi_n[f][0][e] = px;
                        gx += px;
                    }
                    if (jyt >= 0) {
                        const long long e = sl_y(a, i, K, jyt);
                        py = __ldg(a.pb[1] + j) * __ldg(a.psi[f][1] + e) + __ldg(a.pa[1] + j) * gy;
                        if (ownK)
                            a.psi_n[f][1][e] = py;
                        gy += py;
                    }
                    if (jz >= 0) {
                        const long long e = sl_z(a, i, j, jz);
                        pz = __ldg(a.pb[2] + K) * __ldg(a.psi[f][2] + e) + __ldg(a.pa[2] + K) * gz;
                        if (ownK)
                            a.psi_n[f][2][e] = pz;
                        gz += pz;
                    }
                }
                F[uxt + C::PSO] = px;
                F[uyt + C::PSO] = py;
                rg(0, f, 0) = pz;
                rg(1, f, 0) = lz;
            }
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
                if constexpr (CP) {
                    /* the halo point's psi_new, as its owner computes it (not written) */
                    float px = 0, py = 0;
                    if (hin) {
                        const int i = x0 + xh, j = y0 + yh;
                        if (jxh >= 0) {
                            px = __ldg(a.pb[0] + i) * __ldg(a.psi[f][0] + sl_x(a, j, K, jxh)) +
                                 __ldg(a.pa[0] + i) * hx;
                            hx += px;
                        }
                        if (jyh >= 0) {
                            py = __ldg(a.pb[1] + j) * __ldg(a.psi[f][1] + sl_y(a, i, K, jyh)) +
                                 __ldg(a.pa[1] + j) * hyv;
                            hyv += py;
                        }
                        if (jz >= 0) {
                            const float pz =
                                __ldg(a.pb[2] + K) * __ldg(a.psi[f][2] + sl_z(a, i, j, jz)) +
                                __ldg(a.pa[2] + K) * hz;
                            hz += pz;
                        }
                    }
                    F[uh + C::PSO] = hyk ? py : px;
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
            if constexpr (CP) {
                /* plane P = K-1 in the x / y layers: S_a += d_a psi_a + zeta_a (zeta_a <- b
                 * zeta_a + a (S_a + d_a psi_a)) into L(P), the newest L queue entry, and
                 * m_a += chi_a (chi_a <- b chi_a + a m_a), in place (owned points only) */
                const int P = K - 1;
                if (mine && P >= kb && P < ke) {
                    const int i = x0 + tx, j = y0 + ty;
                    if (jxt >= 0) {
                        const float *ps = ux + C::PSO;
                        float dp = 0;
#pragma unroll
                        for (int l = 1; l <= R; l++)
                            dp += a.c1[0][l] * (ps[l] - ps[-l]);
                        const long long e = sl_x(a, j, P, jxt);
                        const float pa = __ldg(a.pa[0] + i), pb = __ldg(a.pb[0] + i);
                        const float v = sxr[f] + dp, z = pb * a.zeta[f][0][e] + pa * v;
                        a.zeta[f][0][e] = z;
                        lq[f][R] += dp + z;
                        const float c = pb * a.chi[f][0][e] + pa * mx;
                        a.chi[f][0][e] = c;
                        mx += c;
                    }
                    if (jyt >= 0) {
                        const float *ps = uy + C::PSO;
                        float dp = 0;
#pragma unroll
                        for (int l = 1; l <= R; l++)
                            dp += a.c1[1][l] * (ps[l * C::UYS] - ps[-l * C::UYS]);
                        const long long e = sl_y(a, i, P, jyt);
                        const float pa = __ldg(a.pa[1] + j), pb = __ldg(a.pb[1] + j);
                        const float v = syr[f] + dp, z = pb * a.zeta[f][1][e] + pa * v;
                        a.zeta[f][1][e] = z;
                        lq[f][R] += dp + z;
                        const float c = pb * a.chi[f][1][e] + pa * my;
                        a.chi[f][1][e] = c;
                        my += c;
                    }
                }
                sxr[f] = lxr[f];
                syr[f] = lyr[f];
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
            float hf[2], lf[2] = {lq[0][0], lq[1][0]};
            const int jk = CP ? t_js(a, 2, k) : -1;
            (void)jk;
#pragma unroll
            for (int f = 0; f < 2; f++) {
                float mz = 0;
#pragma unroll
                for (int l = 1; l <= R; l++)
                    mz += a.c1[2][l] * (uz[f][R + l] - uz[f][R - l]);
                if constexpr (CP) {
                    /* plane k in the z layers: chi_z, and S_z += d_z psi_z + zeta_z from the
                     * rings (plane k is R planes before K) */
                    if (jk >= 0) {
                        const long long e = sl_z(a, x0 + tx, y0 + ty, jk);
                        const float pa = __ldg(a.pa[2] + k), pb = __ldg(a.pb[2] + k);
                        const float c = pb * a.chi[f][2][e] + pa * mz;
                        a.chi[f][2][e] = c;
                        mz += c;
                        float dp = 0;
#pragma unroll
                        for (int l = 1; l <= R; l++)
                            dp += a.c1[2][l] * (rg(0, f, R - l) - rg(0, f, R + l));
                        const float v = rg(1, f, R) + dp, z = pb * a.zeta[f][2][e] + pa * v;
                        a.zeta[f][2][e] = z;
                        lf[f] += dp + z;
                    }
                }
                hf[f] = hq[f][0] + mz;
            }
            const float vz = mv, e = tti_ed_value(med), d = tti_ed_value(med >> 16);
            const float sv = vz * ((e - d) * a.inv_sigma);
            const float ap = vz * (1.0f + 2.0f * e), aq = vz * (1.0f + 2.0f * d) - sv, cc = vz - sv;
            const long long cu = ct.base + (long long)(k + a.h) * a.sz;
            a.o[0][cu] = 2.0f * q[0][0] - mop + ap * lf[0] + ((sv - ap) * hf[0] + cc * hf[1]);
            a.o[1][cu] = 2.0f * q[1][0] - moq + aq * lf[0] + (cc * hf[1] - aq * hf[0]) + sv * lf[1];
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
        if constexpr (CP)
            rs = rs + 1 == Q ? 0 : rs + 1;
    }
}

#define TC_TX 32
#define TC_TY 16

template <int R, bool HR>
static int launch(const tti_sim *s, const Box &in, cudaStream_t st)
{
    constexpr int BXW = TC_TX, BYH = TC_TY;
    using C = CCfg<R, BXW, BYH, HR, false>;
    static int per_sm = 0; /* once per instantiation, as tti_tiled.cu's launcher */
    if (!per_sm) {
        CUDA_TRY(cudaFuncSetAttribute(k_tti_cols<R, BXW, BYH, HR, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)C::bytes));
        int n = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_tti_cols<R, BXW, BYH, HR, false>, BXW * BYH,
                                                               C::bytes));
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
    CBoxes none;
    memset(&none, 0, sizeof none);
    k_tti_cols<R, BXW, BYH, HR, false>
        <<<grd, blk, C::bytes, st>>>(tti_args(s), in, zc, L->dim[0], L->dim[1], L->dim[2], none);
    CUDA_TRY_LAUNCH();
    return 0;
}

/* The CPML form over the boxes BX[0..N) in one launch, the tallest box first (its long
 * blocks start first: no tail of them after the short ones).  A common z-chunk length C,
 * each box's chunks no longer than the box: the C with the least of the block-planes
 * (chunk + 2R) over the SM slots, or the longest block if that is more (e.g. 512^3 with
 * 20-cell layers, order 8: two 24-plane z slabs of 512 tiles each, and y and x slabs of
 * 64 and 58 tiles 464 planes tall). */
template <int R, bool HR>
static int launch_cpml(const tti_sim *s, const Box *bx, int n, cudaStream_t st)
{
    constexpr int BXW = TC_TX, BYH = TC_TY;
    using C = CCfg<R, BXW, BYH, HR, true>;
    static int per_sm = 0;
    if (!per_sm) {
        CUDA_TRY(cudaFuncSetAttribute(k_tti_cols<R, BXW, BYH, HR, true>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::bytes));
        int m = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&m, k_tti_cols<R, BXW, BYH, HR, true>, BXW * BYH,
                                                               C::bytes));
        per_sm = m > 0 ? m : 1;
    }
    CBoxes cb;
    memset(&cb, 0, sizeof cb);
    long long tiles[6];
    int nz[6], maxnz = 0;
    Box ord[6];
    int no = 0;
    for (int i = 0; i < n && no < 6; i++)
        if (!box_empty(bx[i])) {
            int at = no++;
            for (; at > 0 && ord[at - 1].hi[2] - ord[at - 1].lo[2] < bx[i].hi[2] - bx[i].lo[2]; at--)
                ord[at] = ord[at - 1];
            ord[at] = bx[i];
        }
    for (int i = 0; i < no; i++) {
        const int m = cb.n++;
        cb.b[m] = ord[i];
        cb.gx[m] = (ord[i].hi[0] - ord[i].lo[0] + BXW - 1) / BXW;
        cb.gy[m] = (ord[i].hi[1] - ord[i].lo[1] + BYH - 1) / BYH;
        tiles[m] = (long long)cb.gx[m] * cb.gy[m];
        nz[m] = ord[i].hi[2] - ord[i].lo[2];
        maxnz = nz[m] > maxnz ? nz[m] : maxnz;
    }
    if (!cb.n)
        return 0;
    const long long slots = (long long)sm_count(&s->w) * per_sm;
    int zc = maxnz;
    long long best = -1;
    for (int c = maxnz; c >= 1 && c >= (maxnz < 2 * R ? maxnz : 2 * R); c--) {
        long long planes = 0, longest = 0;
        for (int i = 0; i < cb.n; i++) {
            const long long len = (c < nz[i] ? c : nz[i]) + 2 * R;
            planes += tiles[i] * ((nz[i] + c - 1) / c) * len;
            longest = len > longest ? len : longest;
        }
        const long long spread = (planes + slots - 1) / slots, cost = spread > longest ? spread : longest;
        if (best < 0 || cost < best) {
            best = cost;
            zc = c;
        }
    }
    long long total = 0;
    for (int i = 0; i < cb.n; i++) {
        cb.zc[i] = zc < nz[i] ? zc : nz[i];
        cb.start[i] = (int)total;
        total += tiles[i] * ((nz[i] + cb.zc[i] - 1) / cb.zc[i]);
    }
    cb.start[cb.n] = (int)total;
    const struct wave_layout *L = &s->w.L;
    TArgs a = tti_args(s);
    k_tti_cols<R, BXW, BYH, HR, true>
        <<<dim3((unsigned)total), dim3(BXW, BYH), C::bytes, st>>>(a, cb.b[0], 0, L->dim[0], L->dim[1], L->dim[2], cb);
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

int tti_cu_cols_cpml(const tti_sim *s, const Box *b, int n, bool halo_shared, cudaStream_t st)
{
    switch (s->w.r) {
    case 1: return halo_shared ? launch_cpml<1, true>(s, b, n, st) : launch_cpml<1, false>(s, b, n, st);
    case 2: return halo_shared ? launch_cpml<2, true>(s, b, n, st) : launch_cpml<2, false>(s, b, n, st);
    case 3: return halo_shared ? launch_cpml<3, true>(s, b, n, st) : launch_cpml<3, false>(s, b, n, st);
    case 4: return halo_shared ? launch_cpml<4, true>(s, b, n, st) : launch_cpml<4, false>(s, b, n, st);
    }
    return err_set(-ENOTSUP, "tti: the column-queue kernel holds orders 2..8 (order %d)", 2 * s->w.r);
}
