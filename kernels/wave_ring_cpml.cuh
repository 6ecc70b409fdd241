/* wave_ring_cpml — the "ring" CPML arrangement of the tiled kernel, as templates: the
 * library instantiates one frame and one z-layer shape per order (wave_ring_cpml.cu),
 * seislive-bench and the GPU tests others (tools/wave_research.cu).
 *
 * The arrangement: the CPML terms in the same pass as the interior update, so that p, p(n-1) and v are read once, p(n+1)
 * written once and psi and zeta read and written once per layer element (the byte floor
 * of a step with CPML; "lines" moves ~33 B per layer element instead of 16, on top of a
 * full-grid interior pass).
 *
 * One step = three launches, disjoint in the points they write (the core on the
 * simulation's stream, the other two on a second one beside it unless tuning.cpml_overlap
 * is off: the frame's and the z layers' blocks fill the SMs the core's tail leaves):
 *   - k_ring (wave_ring.cuh, the plain Laplacian) over the core: the middle planes (no z
 *     layer) of the x-y tile columns that hold no x or y layer point;
 *   - k_ring_cpml<LZ = false> over the frame of tile columns around the core (the x
 *     strips whole in y, the y strips between them), middle planes: x and y CPML terms;
 *   - k_ring_cpml<LZ = true> over the z-layer planes, all columns: x, y and z terms.
 * Or (the library's choice, measured faster: wave_ring_cpml.cu) the core and the frame
 * over every plane and then lines' z corrections (kernels/wave_cpml.cu) over the z layers:
 * the z-layer kernel, one row a thread with a 4R + 1 p queue, runs ~500 instructions a
 * point (ncu, H100) and loses to them.
 * Pasalic & McGarry as the CPU reference (kernels/wave.c) computes it: psi(n+1) =
 * b psi(n) + a D1 p, zeta(n+1) = b zeta + a (D2 p + D1 psi(n+1)), lap += D2 p + D1 psi(n+1)
 * + zeta(n+1) along each axis whose layer holds the point.  D1 psi(n+1) at x needs
 * psi(n+1) at x +- 1..R, so each block computes psi(n+1) on an R halo of its tile (p
 * with a 2R halo in x and y; along z a p queue 4R+1 long): psi(n) is read from psi
 * (buffer A) and psi(n+1) written to psi_alt (B, swapped after the step), so blocks
 * never race.  (The lagged form, D1 of the stored psi(n), would need no halo but
 * reflects 19-37 dB more with the default layers: docs/model.md.)  SH (the default,
 * session 11): psi(n+1) of a plane is computed once a point and the neighbours read it
 * from shared memory: psi_x of a tile row by the warp that owns the row (a warp
 * barrier), psi_y of each thread's rows plus the R halo rows above and below the tile
 * shared out over the block (one more block barrier a plane); -10 % instructions, -2.5 %
 * frame time (ncu, H100).  SH false (research shape 8x2d2/lines-shfl): psi_x(n+1) by
 * shuffles from the warp (a warp is one 32-wide row of the tile), psi_y(n+1) recomputed
 * by each thread over its rows' R halo from a column of p it holds (a thread owns NY
 * consecutive rows).  psi_z(n+1) is a register queue along the z march either way.
 * Everything a plane needs comes through the cp.async ring (as k_ring): the p tile with
 * its 2R halo, q and v, and the CPML memory of the tile (zero-filled outside the layers;
 * 16-byte copies where the rows are whole chunks, else 4-byte ones: the slab layouts are
 * not 16-byte aligned in general).
 * 3D, half-widths 1..4, fp32 CPML memory; the plan runs "lines" otherwise. */
#ifndef SEISLIVE_WAVE_RING_CPML_CUH
#define SEISLIVE_WAVE_RING_CPML_CUH

#include "kernels/wave_ring.cuh"
#include "kernels/wave_ring_lz.cuh"

#include "kernels/device.h"

#include "kernels/cpml.h"

/* Shared-memory plan of k_ring_cpml: p tiles with a 2R halo (XO floats in x, a multiple
 * of 4; RY = 2R rows in y) for planes k .. k+ZR+D (ZR: how far ahead the z queue reads:
 * R, or 2R in the z layers, where psi_z(n+1) at k+R needs p(k+2R)); D+1 groups of the
 * per-plane tiles: q, v, psi_x (R halo in x), zeta_x, psi_y (R halo in y), zeta_y and in
 * the z layers psi_z (of plane k+R) and zeta_z; the x and y profiles of the tile. */
template <int R, int BY, int NY, int D, bool LZ, int W_ = TX, bool LY = true>
struct RcCfg {
    static constexpr int W = W_; /* TX, or 16 (two rows a warp: the x strips' tiles) */
    static constexpr int XO = (2 * R + 3) / 4 * 4;
    static constexpr int PW = W + 2 * XO;
    static constexpr int TYT = BY * NY;
    /* LY false (the x strips between the y layers): no psi_y, so an R halo in y */
    static constexpr int RY = LY ? 2 * R : R;
    static constexpr int PH = TYT + 2 * RY;
    static constexpr int ZR = LZ ? 2 * R : R;
    static constexpr int S = ZR + D + 1;
    static constexpr int PSLOT = PH * PW;
    static constexpr int XW = W + 2 * R;     /* psi_x row: x0-R .. x0+W+R-1 */
    static constexpr int YH = TYT + 2 * R;   /* psi_y rows: y0-R .. y0+TYT+R-1 */
    static constexpr int T = TYT * W;
    /* offsets inside one group */
    static constexpr int G_Q = 0, G_V = T, G_PX = 2 * T, G_ZX = G_PX + TYT * XW, G_PY = G_ZX + T,
                         G_ZY = G_PY + (LY ? YH * W : 0), G_PZ = G_ZY + (LY ? T : 0), G_ZZ = G_PZ + T;
    static constexpr int GSLOT = LZ ? G_ZZ + T : G_PZ;
    static constexpr int PROF = 2 * XW + 2 * YH; /* pa_x, pb_x, pa_y, pb_y of the tile */
    /* SH: psi_x(n+1) of the tile's rows (x0-R .. x0+W+R-1) and psi_y(n+1) of its rows
     * with an R halo (y0-R .. y0+TYT+R-1), computed once a plane and read back by the
     * neighbours (instead of shuffles and a per-thread recompute of psi_y) */
    static constexpr int SHX = TYT * XW, SHY = LY ? YH * W : 0;
    static constexpr size_t bytes(bool sh)
    {
        return sizeof(float) * ((size_t)S * PSLOT + (size_t)(D + 1) * GSLOT + PROF + (sh ? SHX + SHY : 0));
    }
};

/* The boxes one launch covers (padded coordinates; tiles anchored at each box's x origin
 * and lo y), enumerated by blockIdx.x: box b owns blocks [start[b], start[b+1]) as
 * (x tile, y tile, z chunk) with x fastest. */
#define RC_MAXBOX 4
struct RcList {
    int n;
    Box b[RC_MAXBOX];
    int xo[RC_MAXBOX], gx[RC_MAXBOX], gy[RC_MAXBOX], zc[RC_MAXBOX];
    int start[RC_MAXBOX + 1];
};

template <int R, int BY, int NY, int D, bool LZ, int MB = 2, bool SH = true, int W_ = TX, bool LY = true,
          bool PM = false, bool HL = false>
__global__ void __launch_bounds__(W_ *BY, MB)
    k_ring_cpml(KArgs a, PArgs m, RcList tl, int dim0, int dim1, int dim2)
{
    static_assert(W_ == TX || (SH && W_ == 16 && BY % 2 == 0),
                  "16-wide tiles: two rows a warp, psi_x through shared memory");
    static_assert(LY || !LZ, "the z-layer planes hold y layers");
    using C = RcCfg<R, BY, NY, D, LZ, W_, LY>;
    constexpr int W = C::W, NT = W * BY, RY = C::RY, ZR = C::ZR, XO = C::XO;
    extern __shared__ __align__(16) float smem[];
    float *const ps = smem;
    float *const gs = smem + C::S * C::PSLOT;
    float *const prof = gs + (D + 1) * C::GSLOT;
    float *const pax = prof, *const pbx = prof + C::XW, *const pay = prof + 2 * C::XW, *const pby = pay + C::YH;
    float *const shx = prof + C::PROF, *const shy = shx + C::SHX; /* SH only */

    /* which box and tile */
    int bi = 0;
    while (bi + 1 < tl.n && (int)blockIdx.x >= tl.start[bi + 1])
        bi++;
    const Box b = tl.b[bi];
    int lin = blockIdx.x - tl.start[bi];
    const int bxi = lin % tl.gx[bi];
    lin /= tl.gx[bi];
    const int byi = lin % tl.gy[bi];
    const int bzi = lin / tl.gy[bi];
    const int x0 = tl.xo[bi] + bxi * W, y0 = b.lo[1] + byi * C::TYT;
    const int kb = b.lo[2] + bzi * tl.zc[bi];
    const int ke = min(kb + tl.zc[bi], b.hi[2]);

    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * W + tx;
    const int r0 = ty * NY; /* this thread's first row in the tile */
    const int h = a.h;
    const float *__restrict__ p = a.p;
    const float *__restrict__ vel = a.vel;
    float *__restrict__ q = a.q;
    const long long sy = a.sy, sz = a.sz;
    const int np0 = m.npad[0], np1 = m.npad[1], np2 = m.npad[2];
    const int wx0 = m.pml[0], wx1 = m.pml[1], wy0 = m.pml[2], wy1 = m.pml[3], wz0 = m.pml[4], wz1 = m.pml[5];
    /* block-uniform: does the tile hold x / y layer points (of its box)? */
    const int xa = max(max(x0, b.lo[0]), 0), xb = min(min(x0 + W, b.hi[0]), np0);
    const int ya = max(y0, 0), yb = min(min(y0 + C::TYT, b.hi[1]), np1);
    const bool lx = xa < xb && (xa < wx0 || xb > np0 - wx1);
    /* LY false: the launcher's boxes hold no y layer point (the x strips between them) */
    const bool ly = LY && ya < yb && (ya < wy0 || yb > np1 - wy1);
    const int klast = ke - 1 + ZR;
    /* the y and z memory tiles' rows are whole 16-byte chunks when x0 and npad[0] are
     * multiples of 4 (x0 + h is one of 8: so with an even h at h = 4, 8 and npad[0] % 4
     * == 0, as on 512^3 and the 400 x 400 x 200 shot with 20 layers) */
    const bool v4 = np0 % 4 == 0 && ((x0 % 4) + 4) % 4 == 0;
    /* the x memory's rows too when the psi_x window (x0-R ..) and both layers' edges fall
     * on multiples of 4 (then every 4 x of a chunk are in one layer or in none) */
    const bool vx = C::XW % 4 == 0 && ((x0 % 4) + 4) % 4 == 0 && (((x0 - R) % 4) + 4) % 4 == 0 && wx0 % 4 == 0 &&
                    (wx0 + wx1) % 4 == 0 && (np0 - wx1) % 4 == 0;

    /* The copies a thread issues for each plane go to the same places of a slot from the
     * same offsets inside a plane: worked out once here (slot offset, offset from the
     * plane's first element, whether it is inside the allocation), so that a plane's
     * copies cost an add and a select each instead of the index arithmetic.  Bit i of
     * the masks: chunk i of this thread exists / reads memory / (q, v) is v. */
    constexpr int PCPR = C::PW / 4, PNCH = C::PH * PCPR, PN = (PNCH + NT - 1) / NT;
    constexpr int QCPR = W / 4, QNCH = 2 * C::TYT * QCPR, QN = (QNCH + NT - 1) / NT;
    int pso[PN], pgo[PN], qso[QN], qgo[QN];
    unsigned pvm = 0, pokm = 0, qvm = 0, qokm = 0, qwm = 0;
#pragma unroll
    for (int n = 0; n < PN; n++) {
        const int e = n * NT + tid, r = e / PCPR, c = e % PCPR;
        const int gy = y0 - RY + r + h, gx = x0 + h - XO + 4 * c;
        const bool ok = e < PNCH && gy >= 0 && gy < dim1 && gx >= 0 && gx < dim0;
        pso[n] = r * C::PW + 4 * c;
        pgo[n] = ok ? gy * (int)sy + gx : 0;
        /* HL: the p tile's outer halo (beyond R of the tile: the psi(n+1) halo) only where
         * the block computes psi along that axis; a tile without x (y) layer points skips
         * the chunks that hold nothing else (its x-outer columns, y-outer rows) */
        const bool xout = 4 * c + 4 <= XO - R || 4 * c >= XO + W + R;
        const bool yout = r < RY - R || r >= RY + C::TYT + R;
        const bool skip = HL && ((!lx && xout) || (!ly && yout));
        pvm |= (e < PNCH && !skip ? 1u : 0u) << n;
        pokm |= (ok ? 1u : 0u) << n;
    }
#pragma unroll
    for (int n = 0; n < QN; n++) {
        const int e = n * NT + tid;
        const int w = e / (C::TYT * QCPR), r = e / QCPR % C::TYT, c = e % QCPR;
        const int gy = y0 + r, gx = x0 + h + 4 * c;
        const bool ok = e < QNCH && gy < b.hi[1] && gx < dim0;
        qso[n] = w * C::T + r * W + 4 * c;
        qgo[n] = ok ? (gy + h) * (int)sy + gx : 0;
        qvm |= (e < QNCH ? 1u : 0u) << n;
        qokm |= (ok ? 1u : 0u) << n;
        qwm |= (w ? 1u : 0u) << n;
    }

    /* the z memory's 16-byte chunks (z layers, v4): psi_z of plane kk+R, then zeta_z */
    constexpr int ZNCH = LZ ? 2 * C::TYT * QCPR : 0, ZN = LZ ? (ZNCH + NT - 1) / NT : 1;
    int zso[ZN], zgo[ZN];
    unsigned zvm = 0, zokm = 0, zpm = 0;
#pragma unroll
    for (int n = 0; n < ZN; n++) {
        const int e = n * NT + tid;
        const bool isp = e < C::TYT * QCPR;
        const int f = isp ? e : e - C::TYT * QCPR, r = f / QCPR, c = f % QCPR;
        const int j = y0 + r, x = x0 + 4 * c;
        const bool ok = LZ && e < ZNCH && x >= 0 && x < np0 && j < np1;
        zso[n] = (isp ? C::G_PZ : C::G_ZZ) + r * W + 4 * c;
        zgo[n] = ok ? j * np0 + x : 0;
        zvm |= (LZ && e < ZNCH ? 1u : 0u) << n;
        zokm |= (ok ? 1u : 0u) << n;
        zpm |= (isp ? 1u : 0u) << n;
    }

    /* PM: the x and y memory's 16-byte chunks (vx, v4) worked out once as well (slot
     * offset, offset inside a plane's slab, whether the chunk reads memory, psi or
     * zeta): a plane's memory copies then cost an add and a select each instead of the
     * index and slab arithmetic (issue 20) */
    constexpr int XC1 = C::XW / 4, XC2 = W / 4, XN1 = C::TYT * XC1, XNCH = PM ? XN1 + C::TYT * XC2 : 0,
                  XN = PM ? (XNCH + NT - 1) / NT : 1;
    constexpr int YC = W / 4, YN1 = C::YH * YC, YNCH = PM && LY ? YN1 + C::TYT * YC : 0,
                  YN = PM && LY ? (YNCH + NT - 1) / NT : 1;
    int xso[XN], xgo[XN], yso[YN], ygo[YN];
    unsigned xvm = 0, xokm = 0, xpm = 0, yvm = 0, yokm = 0, ypm = 0;
    if constexpr (PM) {
#pragma unroll
        for (int n = 0; n < XN; n++) {
            const int e = n * NT + tid;
            const bool isp = e < XN1;
            const int f = isp ? e : e - XN1;
            const int r = isp ? f / XC1 : f / XC2, c = isp ? f % XC1 : f % XC2;
            const int j = y0 + r, x = isp ? x0 - R + 4 * c : x0 + 4 * c;
            const int js = cpml_slab_index(x, np0, wx0, wx1);
            const bool ok = e < XNCH && j < np1 && js >= 0;
            xso[n] = (isp ? C::G_PX + r * C::XW : C::G_ZX + r * W) + 4 * c;
            xgo[n] = ok ? j * (wx0 + wx1) + js : 0;
            xvm |= (e < XNCH ? 1u : 0u) << n;
            xokm |= (ok ? 1u : 0u) << n;
            xpm |= (isp ? 1u : 0u) << n;
        }
#pragma unroll
        for (int n = 0; n < YN; n++) {
            const int e = n * NT + tid;
            const bool isp = e < YN1;
            const int f = isp ? e : e - YN1;
            const int r = f / YC, c = f % YC;
            const int j = isp ? y0 - R + r : y0 + r, x = x0 + 4 * c;
            const int js = cpml_slab_index(j, np1, wy0, wy1);
            const bool ok = e < YNCH && x >= 0 && x < np0 && js >= 0;
            yso[n] = (isp ? C::G_PY : C::G_ZY) + r * W + 4 * c;
            ygo[n] = ok ? js * np0 + x : 0;
            yvm |= (e < YNCH ? 1u : 0u) << n;
            yokm |= (ok ? 1u : 0u) << n;
            ypm |= (isp ? 1u : 0u) << n;
        }
    }

    auto load_p = [&](int kk, int sl) {
        if (kk > klast)
            return;
        float *dst = ps + sl * C::PSLOT;
        const bool zok = kk + h >= 0 && kk + h < dim2;
        const float *pb = p + (long long)(kk + h) * sz;
#pragma unroll
        for (int n = 0; n < PN; n++)
            if ((!HL && PNCH % NT == 0) || (pvm >> n & 1u)) {
                const bool ok = zok && (pokm >> n & 1u);
                cp16(dst + pso[n], ok ? pb + pgo[n] : p, ok);
            }
    };
    auto load_g = [&](int kk, int sl) {
        if (kk >= ke)
            return;
        float *dst = gs + sl * C::GSLOT;
        {   /* q and v: 16-byte copies (tile origins aligned, as k_ring) */
            const long long pl = (long long)(kk + h) * sz;
#pragma unroll
            for (int n = 0; n < QN; n++)
                if (QNCH % NT == 0 || (qvm >> n & 1u)) {
                    const bool ok = qokm >> n & 1u;
                    const float *src = (qwm >> n & 1u) ? vel : q;
                    cp16(dst + qso[n], ok ? src + pl + qgo[n] : src, ok);
                }
        }
        if (PM && lx && vx) { /* the chunks worked out above */
            const long long pl = (long long)kk * np1 * (wx0 + wx1);
#pragma unroll
            for (int n = 0; n < XN; n++)
                if (XNCH % NT == 0 || (xvm >> n & 1u)) {
                    const bool ok = xokm >> n & 1u;
                    const float *src = (xpm >> n & 1u) ? m.psi[0] : m.zeta[0];
                    cp16(dst + xso[n], ok ? src + pl + xgo[n] : m.psi[0], ok);
                }
        } else if (lx && vx) { /* the same, 16 bytes at a time */
            const float *psi = m.psi[0], *zeta = m.zeta[0];
            constexpr int C1 = C::XW / 4, C2 = W / 4, N1 = C::TYT * C1, N = N1 + C::TYT * C2;
#pragma unroll
            for (int e0 = 0; e0 < N; e0 += NT) {
                const int e = e0 + tid;
                if (N % NT == 0 || e < N) {
                    const bool isp = e < N1;
                    const int f = isp ? e : e - N1;
                    const int r = isp ? f / C1 : f / C2, c = isp ? f % C1 : f % C2;
                    const int j = y0 + r, x = isp ? x0 - R + 4 * c : x0 + 4 * c;
                    const int js = cpml_slab_index(x, np0, wx0, wx1);
                    const bool ok = j < np1 && js >= 0;
                    const long long el = ((long long)kk * np1 + j) * (wx0 + wx1) + js;
                    cp16(dst + (isp ? C::G_PX + r * C::XW : C::G_ZX + r * W) + 4 * c,
                         ok ? (isp ? psi : zeta) + el : psi, ok);
                }
            }
        } else if (lx) { /* psi_x (x0-R .. x0+W+R-1) and zeta_x of the tile's rows */
            const float *psi = m.psi[0], *zeta = m.zeta[0];
            constexpr int N1 = C::TYT * C::XW, N = N1 + C::T;
#pragma unroll
            for (int e0 = 0; e0 < N; e0 += NT) {
                const int e = e0 + tid;
                if (N % NT == 0 || e < N) {
                    const bool isp = e < N1;
                    const int f = isp ? e : e - N1, rw = isp ? C::XW : W;
                    const int r = f / rw, c = f % rw;
                    const int j = y0 + r, x = isp ? x0 - R + c : x0 + c;
                    const int js = cpml_slab_index(x, np0, wx0, wx1);
                    const bool ok = j < np1 && js >= 0;
                    const long long el = ((long long)kk * np1 + j) * (wx0 + wx1) + js;
                    cp4(dst + (isp ? C::G_PX : C::G_ZX) + f, ok ? (isp ? psi : zeta) + el : psi, ok);
                }
            }
        }
        if (PM && ly && v4) { /* the chunks worked out above */
            const long long pl = (long long)kk * (wy0 + wy1) * np0;
#pragma unroll
            for (int n = 0; n < YN; n++)
                if (YNCH % NT == 0 || (yvm >> n & 1u)) {
                    const bool ok = yokm >> n & 1u;
                    const float *src = (ypm >> n & 1u) ? m.psi[1] : m.zeta[1];
                    cp16(dst + yso[n], ok ? src + pl + ygo[n] : m.psi[1], ok);
                }
        } else if (ly && v4) { /* the same, 16 bytes at a time */
            const float *psi = m.psi[1], *zeta = m.zeta[1];
            constexpr int CPR = W / 4, N1 = C::YH * CPR, N = N1 + C::TYT * CPR;
#pragma unroll
            for (int e0 = 0; e0 < N; e0 += NT) {
                const int e = e0 + tid;
                if (N % NT == 0 || e < N) {
                    const bool isp = e < N1;
                    const int f = isp ? e : e - N1;
                    const int r = f / CPR, c = f % CPR;
                    const int j = isp ? y0 - R + r : y0 + r, x = x0 + 4 * c;
                    const int js = cpml_slab_index(j, np1, wy0, wy1);
                    const bool ok = x >= 0 && x < np0 && js >= 0;
                    const long long el = ((long long)kk * (wy0 + wy1) + js) * np0 + x;
                    cp16(dst + (isp ? C::G_PY : C::G_ZY) + r * W + 4 * c, ok ? (isp ? psi : zeta) + el : psi, ok);
                }
            }
        } else if (ly) { /* psi_y (rows y0-R .. y0+TYT+R-1) and zeta_y of the tile's columns */
            const float *psi = m.psi[1], *zeta = m.zeta[1];
            constexpr int N1 = C::YH * W, N = N1 + C::T;
#pragma unroll
            for (int e0 = 0; e0 < N; e0 += NT) {
                const int e = e0 + tid;
                if (N % NT == 0 || e < N) {
                    const bool isp = e < N1;
                    const int f = isp ? e : e - N1;
                    const int r = f / W, c = f % W;
                    const int j = isp ? y0 - R + r : y0 + r, x = x0 + c;
                    const int js = cpml_slab_index(j, np1, wy0, wy1);
                    const bool ok = x >= 0 && x < np0 && js >= 0;
                    const long long el = ((long long)kk * (wy0 + wy1) + js) * np0 + x;
                    cp4(dst + (isp ? C::G_PY : C::G_ZY) + f, ok ? (isp ? psi : zeta) + el : psi, ok);
                }
            }
        }
        if constexpr (LZ) { /* psi_z of plane kk+R (the queue's new psi_z(n+1)), zeta_z of kk */
            const float *psi = m.psi[2], *zeta = m.zeta[2];
            const int jp = cpml_slab_index(kk + R, np2, wz0, wz1), jz = cpml_slab_index(kk, np2, wz0, wz1);
            if (v4) {
                const long long pln = (long long)np1 * np0;
#pragma unroll
                for (int n = 0; n < ZN; n++)
                    if (ZNCH % NT == 0 || (zvm >> n & 1u)) {
                        const bool isp = zpm >> n & 1u;
                        const int js = isp ? jp : jz;
                        const bool ok = (zokm >> n & 1u) && js >= 0;
                        cp16(dst + zso[n], ok ? (isp ? psi : zeta) + js * pln + zgo[n] : psi, ok);
                    }
            } else {
                constexpr int N = 2 * C::T;
#pragma unroll
                for (int e0 = 0; e0 < N; e0 += NT) {
                    const int e = e0 + tid;
                    if (N % NT == 0 || e < N) {
                        const bool isp = e < C::T;
                        const int f = isp ? e : e - C::T;
                        const int r = f / W, c = f % W;
                        const int j = y0 + r, x = x0 + c, js = isp ? jp : jz;
                        const bool ok = x >= 0 && x < np0 && j < np1 && js >= 0;
                        const long long el = ((long long)js * np1 + j) * np0 + x;
                        cp4(dst + (isp ? C::G_PZ : C::G_ZZ) + f, ok ? (isp ? psi : zeta) + el : psi, ok);
                    }
                }
            }
        }
    };

    /* the tile's x and y profiles (0 outside the grid; a = b = 0 outside the layers) */
    for (int e = tid; e < C::XW; e += NT) {
        const int x = x0 - R + e;
        const bool ok = x >= 0 && x < np0;
        pax[e] = ok ? __ldg(m.pa[0] + x) : 0.0f;
        pbx[e] = ok ? __ldg(m.pb[0] + x) : 0.0f;
    }
    for (int e = tid; e < C::YH; e += NT) {
        const int j = y0 - R + e;
        const bool ok = j >= 0 && j < np1;
        pay[e] = ok ? __ldg(m.pa[1] + j) : 0.0f;
        pby[e] = ok ? __ldg(m.pb[1] + j) : 0.0f;
    }

    /* this thread's column: x = x0 + tx, rows r0 .. r0+NY-1 */
    const int i = x0 + tx;
    const int jsx = cpml_slab_index(i, np0, wx0, wx1);
    /* psi_x(n+1) positions of this lane: A = x0-R+tx, B = x0-R+W+tx (lanes < 2R) */
    const int jsA = cpml_slab_index(x0 - R + tx, np0, wx0, wx1);
    const int jsB = tx < 2 * R ? cpml_slab_index(x0 - R + W + tx, np0, wx0, wx1) : -1;
    long long col[NY];
    bool inside[NY];
    int jsy[NY];
    float qz[NY][2 * ZR + 1]; /* qz[m][u] = p(k - ZR + u) of row m */
    float zq[NY][LZ ? 2 * R + 1 : 1]; /* zq[m][u] = psi_z(n+1)(k - R + u) of row m (z layers) */
#pragma unroll
    for (int mm = 0; mm < NY; mm++) {
        const int j = y0 + r0 + mm;
        col[mm] = (long long)(j + h) * sy + (i + h);
        inside[mm] = i >= b.lo[0] && i < b.hi[0] && j < b.hi[1];
        jsy[mm] = cpml_slab_index(j, np1, wy0, wy1);
#pragma unroll
        for (int u = 0; u < 2 * ZR; u++) {
            const int kk = kb - ZR + u;
            qz[mm][u] = inside[mm] && kk + h >= 0 && kk + h < dim2 ? __ldg(p + col[mm] + (long long)(kk + h) * sz) : 0.0f;
        }
        if constexpr (LZ) {
            /* psi_z(n+1) of planes kb-R .. kb+R-1 (qz index of plane kb-R+u: u+R) */
#pragma unroll
            for (int u = 0; u < 2 * R; u++) {
                const int kk = kb - R + u, js = cpml_slab_index(kk, np2, wz0, wz1);
                float v = 0.0f;
                if (inside[mm] && js >= 0) {
                    float d1 = 0;
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        d1 += a.c1[2][l] * (qz[mm][u + R + l] - qz[mm][u + R - l]);
                    v = __ldg(m.pb[2] + kk) * __ldg(m.psi[2] + ((long long)js * np1 + j) * np0 + i) +
                        __ldg(m.pa[2] + kk) * d1;
                }
                zq[mm][u] = v;
            }
        }
    }
    for (int u = 0; u < ZR; u++)
        load_p(kb + u, u);
    cp_commit();
#pragma unroll
    for (int d = 0; d < D; d++) {
        load_p(kb + ZR + d, ZR + d);
        load_g(kb + d, d);
        cp_commit();
    }
    int sk = 0, sq = 0;
    for (int k = kb; k < ke; k++) {
        cp_wait<D - 1>();
        __syncthreads();
        load_p(k + ZR + D, sk == 0 ? C::S - 1 : sk - 1);
        load_g(k + D, sq == 0 ? D : sq - 1);
        cp_commit();
        const int sr = sk + ZR < C::S ? sk + ZR : sk + ZR - C::S;
        const float *P = ps + sk * C::PSLOT, *PR = ps + sr * C::PSLOT;
        const float *G = gs + sq * C::GSLOT;
        const long long pl = (long long)(k + h) * sz;
        /* y: the column of p of this thread's rows, r0-2R .. r0+NY-1+2R in a y-layer tile
         * (y derivatives and psi_y(n+1) of the rows r0-R .. r0+NY-1+R), else r0-R .. */
        float lapy[NY];
        if (SH && ly) {
            /* psi_y(n+1) of this thread's rows (tile psi_y row R + r0 + mm) and, shared out
             * over the block, of the R halo rows on each side; one barrier, then D1 of it */
            float cv[NY + 2 * R]; /* p of rows r0-R .. r0+NY-1+R */
#pragma unroll
            for (int u = 0; u < NY + 2 * R; u++)
                cv[u] = P[(r0 + u + RY - R) * C::PW + XO + tx];
#pragma unroll
            for (int mm = 0; mm < NY; mm++) {
                const int u = r0 + mm + R;
                float d1 = 0;
#pragma unroll
                for (int l = 1; l <= R; l++)
                    d1 += a.c1[1][l] * (cv[mm + R + l] - cv[mm + R - l]);
                shy[u * W + tx] = pby[u] * G[C::G_PY + u * W + tx] + pay[u] * d1;
            }
#pragma unroll
            for (int e0 = 0; e0 < 2 * R * W; e0 += NT) {
                const int e = e0 + tid;
                if ((2 * R * W) % NT == 0 || e < 2 * R * W) {
                    const int hr = e / W, c = e % W;
                    const int u = hr < R ? hr : C::TYT + hr; /* psi_y row; p tile row u - R + RY */
                    const float *pc = P + (u - R + RY) * C::PW + XO + c;
                    float d1 = 0;
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        d1 += a.c1[1][l] * (pc[l * C::PW] - pc[-l * C::PW]);
                    shy[u * W + c] = pby[u] * G[C::G_PY + u * W + c] + pay[u] * d1;
                }
            }
            __syncthreads();
#pragma unroll
            for (int mm = 0; mm < NY; mm++) {
                float d2 = a.c2[1][0] * cv[R + mm], dpsi = 0;
                const float *sc = shy + (r0 + mm + R) * W + tx;
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    d2 += a.c2[1][l] * (cv[R + mm + l] + cv[R + mm - l]);
                    dpsi += a.c1[1][l] * (sc[l * W] - sc[-l * W]);
                }
                if (jsy[mm] >= 0) {
                    const float t = d2 + dpsi;
                    const float z = pby[r0 + mm + R] * G[C::G_ZY + (r0 + mm) * W + tx] + pay[r0 + mm + R] * t;
                    lapy[mm] = t + z;
                    if (inside[mm]) {
                        const long long el = ((long long)k * (wy0 + wy1) + jsy[mm]) * np0 + i;
                        m.zeta[1][el] = z;
                        m.psi_out[1][el] = sc[0];
                    }
                } else
                    lapy[mm] = d2;
            }
        } else if (ly) {
            float cv[NY + 4 * R];
#pragma unroll
            for (int u = 0; u < NY + 4 * R; u++)
                cv[u] = P[(r0 + u + RY - 2 * R) * C::PW + XO + tx];
            float syv[NY + 2 * R]; /* psi_y(n+1) of rows r0-R+u (tile psi_y row r0+u) */
#pragma unroll
            for (int u = 0; u < NY + 2 * R; u++) {
                float d1 = 0;
#pragma unroll
                for (int l = 1; l <= R; l++)
                    d1 += a.c1[1][l] * (cv[u + R + l] - cv[u + R - l]);
                syv[u] = pby[r0 + u] * G[C::G_PY + (r0 + u) * W + tx] + pay[r0 + u] * d1;
            }
#pragma unroll
            for (int mm = 0; mm < NY; mm++) {
                float d2 = a.c2[1][0] * cv[2 * R + mm], dpsi = 0;
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    d2 += a.c2[1][l] * (cv[2 * R + mm + l] + cv[2 * R + mm - l]);
                    dpsi += a.c1[1][l] * (syv[mm + R + l] - syv[mm + R - l]);
                }
                if (jsy[mm] >= 0) {
                    const float t = d2 + dpsi;
                    const float z = pby[r0 + mm + R] * G[C::G_ZY + (r0 + mm) * W + tx] + pay[r0 + mm + R] * t;
                    lapy[mm] = t + z;
                    if (inside[mm]) {
                        const long long el = ((long long)k * (wy0 + wy1) + jsy[mm]) * np0 + i;
                        m.zeta[1][el] = z;
                        m.psi_out[1][el] = syv[mm + R];
                    }
                } else
                    lapy[mm] = d2;
            }
        } else { /* rows r0-R .. r0+NY-1+R only */
            float cv[NY + 2 * R];
#pragma unroll
            for (int u = 0; u < NY + 2 * R; u++)
                cv[u] = P[(r0 + u + RY - R) * C::PW + XO + tx];
#pragma unroll
            for (int mm = 0; mm < NY; mm++) {
                float d2 = a.c2[1][0] * cv[R + mm];
#pragma unroll
                for (int l = 1; l <= R; l++)
                    d2 += a.c2[1][l] * (cv[R + mm + l] + cv[R + mm - l]);
                lapy[mm] = d2;
            }
        }
        /* z: the plane's profile values (block-uniform) */
        int jzk = -1, jzp = -1;
        float paz = 0.0f, pbz = 0.0f, pazp = 0.0f, pbzp = 0.0f;
        if constexpr (LZ) {
            jzk = cpml_slab_index(k, np2, wz0, wz1);
            jzp = cpml_slab_index(k + R, np2, wz0, wz1);
            if (jzk >= 0) {
                paz = __ldg(m.pa[2] + k);
                pbz = __ldg(m.pb[2] + k);
            }
            if (jzp >= 0) {
                pazp = __ldg(m.pa[2] + k + R);
                pbzp = __ldg(m.pb[2] + k + R);
            }
        }
#pragma unroll
        for (int mm = 0; mm < NY; mm++) {
            const int row = r0 + mm;
            qz[mm][2 * ZR] = PR[(row + RY) * C::PW + XO + tx];
            const float pc = qz[mm][ZR];
            const float *rp = P + (row + RY) * C::PW + XO + tx;
            /* x */
            float d2x = a.c2[0][0] * pc;
#pragma unroll
            for (int l = 1; l <= R; l++)
                d2x += a.c2[0][l] * (rp[l] + rp[-l]);
            float lapx = d2x;
            if (lx) { /* warp-uniform: every lane takes part in the shuffles */
                const float *rb = rp - R; /* p at x0-R+t' is rb[t' - tx] */
                float d1 = 0;
#pragma unroll
                for (int l = 1; l <= R; l++)
                    d1 += a.c1[0][l] * (rb[l] - rb[-l]);
                const float *px = G + C::G_PX + row * C::XW;
                const float sA = jsA >= 0 ? pbx[tx] * px[tx] + pax[tx] * d1 : 0.0f;
                float sB = 0.0f;
                if (jsB >= 0) {
                    const float *rB = rb + W;
                    float d1b = 0;
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        d1b += a.c1[0][l] * (rB[l] - rB[-l]);
                    sB = pbx[W + tx] * px[W + tx] + pax[W + tx] * d1b;
                }
                float dpsi = 0, own;
                if constexpr (SH) {
                    /* the row is this warp's alone: through shared memory, a warp barrier */
                    float *sx = shx + row * C::XW;
                    sx[tx] = sA;
                    if (tx < 2 * R)
                        sx[W + tx] = sB;
                    __syncwarp();
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        dpsi += a.c1[0][l] * (sx[tx + R + l] - sx[tx + R - l]);
                    own = sx[tx + R];
                } else {
                    /* psi_x(n+1) at x0-R+t' is lane t' of sA (t' < W), else lane t'-W of sB */
                    auto S = [&](int t) {
                        const float va = __shfl_sync(0xffffffffu, sA, t & (W - 1));
                        const float vb = __shfl_sync(0xffffffffu, sB, t & (W - 1));
                        return t < W ? va : vb;
                    };
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        dpsi += a.c1[0][l] * (S(tx + R + l) - S(tx + R - l));
                    own = S(tx + R);
                }
                if (jsx >= 0) {
                    const float t = d2x + dpsi;
                    const float z = pbx[tx + R] * G[C::G_ZX + row * W + tx] + pax[tx + R] * t;
                    lapx = t + z;
                    if (inside[mm]) {
                        const long long el = ((long long)k * np1 + (y0 + row)) * (wx0 + wx1) + jsx;
                        m.zeta[0][el] = z;
                        m.psi_out[0][el] = own;
                    }
                }
            }
            /* z */
            float d2z = a.c2[2][0] * pc;
#pragma unroll
            for (int l = 1; l <= R; l++)
                d2z += a.c2[2][l] * (qz[mm][ZR + l] + qz[mm][ZR - l]);
            float lapz = d2z;
            if constexpr (LZ) {
                float v = 0.0f;
                if (jzp >= 0) {
                    float d1 = 0;
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        d1 += a.c1[2][l] * (qz[mm][3 * R + l] - qz[mm][3 * R - l]);
                    v = pbzp * G[C::G_PZ + row * W + tx] + pazp * d1;
                }
                zq[mm][2 * R] = v;
                if (jzk >= 0) {
                    float dpsi = 0;
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        dpsi += a.c1[2][l] * (zq[mm][R + l] - zq[mm][R - l]);
                    const float t = d2z + dpsi;
                    const float z = pbz * G[C::G_ZZ + row * W + tx] + paz * t;
                    lapz = t + z;
                    if (inside[mm]) {
                        const long long el = ((long long)jzk * np1 + (y0 + row)) * np0 + i;
                        m.zeta[2][el] = z;
                        m.psi_out[2][el] = zq[mm][R];
                    }
                }
#pragma unroll
                for (int u = 0; u < 2 * R; u++)
                    zq[mm][u] = zq[mm][u + 1];
            }
            if (inside[mm])
                q[col[mm] + pl] = 2.0f * pc - G[C::G_Q + row * W + tx] + G[C::G_V + row * W + tx] * (lapy[mm] + lapz + lapx);
#pragma unroll
            for (int u = 0; u < 2 * ZR; u++)
                qz[mm][u] = qz[mm][u + 1];
        }
        sk = sk + 1 == C::S ? 0 : sk + 1;
        sq = sq == D ? 0 : sq + 1;
    }
    cp_wait<0>();
}

/* ---- launcher ---------------------------------------------------------------------------- */

/* The smallest v >= x (or the largest <= x) with (v + h) % 8 == 0: a tile origin whose
 * rows are whole 32-byte sectors (ring_x_origin). */
static inline int align_up8(int x, int h) { return x + ((8 - (x + h) % 8) % 8 + 8) % 8; }
static inline int align_dn8(int x, int h) { return x - ((x + h) % 8 + 8) % 8; }

template <int R, int BY, int NY, int D, bool LZ, int MB = 2, bool SH = true, int W = TX, bool LY = true,
          bool PM = false, bool HL = false>
static int launch_rc(RcList &tl, const KArgs &a, const PArgs &m, const wave_sim *s, cudaStream_t st)
{
    using C = RcCfg<R, BY, NY, D, LZ, W, LY>;
    constexpr size_t bytes = C::bytes(SH);
    static int per_sm = 0;
    if (!per_sm) {
        CUDA_TRY(cudaFuncSetAttribute(k_ring_cpml<R, BY, NY, D, LZ, MB, SH, W, LY, PM, HL>,
                                      cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
        int n = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_ring_cpml<R, BY, NY, D, LZ, MB, SH, W, LY, PM, HL>, W * BY,
                                                               bytes));
        per_sm = n > 0 ? n : 1;
    }
    long long cols = 0;
    for (int bi = 0; bi < tl.n; bi++) {
        const Box &b = tl.b[bi];
        tl.xo[bi] = ring_x_origin(b.lo[0], a.h);
        tl.gx[bi] = (b.hi[0] - tl.xo[bi] + W - 1) / W;
        tl.gy[bi] = (b.hi[1] - b.lo[1] + C::TYT - 1) / C::TYT;
        cols += (long long)tl.gx[bi] * tl.gy[bi];
    }
    if (!cols)
        return 0;
    /* z chunks as launch_ring: ~6 waves of resident blocks over all boxes, at least 4R
     * planes (the preloads), at most ZCHUNK */
    const long long target = 6LL * sm_count(s) * per_sm;
    const long long nch = (target + cols - 1) / cols;
    long long total = 0;
    for (int bi = 0; bi < tl.n; bi++) {
        const int nz = tl.b[bi].hi[2] - tl.b[bi].lo[2];
        int zc = (int)((nz + nch - 1) / nch);
        zc = zc < 4 * R ? 4 * R : zc > ZCHUNK ? ZCHUNK : zc;
        if (s->p.tuning.layer_zchunk > 0) /* asked for (the tests: chunk edges in the layers) */
            zc = min(s->p.tuning.layer_zchunk, ZCHUNK);
        tl.zc[bi] = zc;
        tl.start[bi] = (int)total;
        total += (long long)tl.gx[bi] * tl.gy[bi] * ((nz + zc - 1) / zc);
    }
    tl.start[tl.n] = (int)total;
    if (!total)
        return 0;
    const struct wave_layout *L = &s->L;
    k_ring_cpml<R, BY, NY, D, LZ, MB, SH, W, LY, PM, HL><<<(unsigned)total, dim3(W, BY), bytes, st>>>(a, m, tl, L->dim[0],
                                                                                         L->dim[1], L->dim[2]);
    CUDA_TRY_LAUNCH();
    return 0;
}

static inline void push(RcList &tl, int x0, int x1, int y0, int y1, int z0, int z1)
{
    if (x1 <= x0 || y1 <= y0 || z1 <= z0)
        return;
    Box &b = tl.b[tl.n++];
    b.lo[0] = x0, b.hi[0] = x1, b.lo[1] = y0, b.hi[1] = y1, b.lo[2] = z0, b.hi[2] = z1;
}

/* One step of the ring arrangement with the frame kernel in tiles FBY x FNY rows, depth
 * FD, and the z-layer kernel in ZBY x ZNY, depth ZD (the library's shapes:
 * wave_ring_cpml.cu; others: tools/wave_research.cu), built for FMB / ZMB resident blocks
 * per SM (__launch_bounds__: 2 lets them use 128 registers).  ZBY 0: no z-layer kernel; the core
 * and the frame cover every plane and lines' z corrections follow them (on ST, after the
 * frame's stream LST has joined it).
 * ZO (issue 20, session 13; z by lines only): the z-layer planes first, so that lines' z
 * corrections overlap the middle planes.  The core (ST) and the frame (LST) run over the
 * low and the high z-layer planes, then LST waits for ST's and runs the z lines (they
 * read and write q only in those planes, and p, which no kernel of the step writes), then
 * the core and the frame over the middle planes: the z lines, bound by their loads'
 * latency (ncu, session 12: 36 % of their share of the byte floor), run beside the core's
 * DRAM-bound middle instead of after everything.  ZO 2: each face's z lines right after
 * that face's planes (core and frame), while their q, v and p are still in L2 (12 planes
 * of the 400 x 400 x 200 shot's three fields: 23 MB of the H100's 50), then the other
 * face's, then the middle.
 * LZC > 0 (session 13; z by lines only): the core's columns in the planes [0, wz0 + LZC)
 * and [np2 - wz1 - LZC, np2) by k_ring_lz (wave_ring_lz.cuh: the z layers' terms in the
 * core's pass, one z chunk a column) on LST before the frame, k_ring over the core's
 * middle planes on ST, and lines' z corrections after the frame over the frame's columns
 * only. */
template <int R, int FBY, int FNY, int FD, int ZBY, int ZNY, int ZD, int FMB = 2, int ZMB = 2, bool SH = true,
          int FXW = TX, int XBY = 0, int XNY = 2, int XD = 2, int XMB = 2, bool XPM = false, bool FPM = false,
          int ZNW = 0, bool FHL = false, int ZLB = 0, int ZO = 0, int LZC = 0>
static int ring_cpml_run(wave_sim *s, const WavePlan &pl, const KArgs &a, const PArgs &m, cudaStream_t st,
                         cudaStream_t lst)
{
    static_assert(XBY == 0 || FXW == TX, "x-strip kernel: 32-wide frame tiles");
    const struct wave_layout *L = &s->L;
    const int np0 = L->npad[0], np1 = L->npad[1], np2 = L->npad[2], h = L->halo;
    const int wx0 = L->pml[0], wx1 = L->pml[1], wy0 = L->pml[2], wy1 = L->pml[3];
    constexpr bool ZLINES = ZBY == 0;
    static_assert(ZO == 0 || ZLINES, "ZO: the z layers by lines");
    constexpr int FT = FBY * FNY;
    /* the core [cx0, cx1) x [cy0, cy1): no x or y layer point; its x bounds are tile
     * origins (the frame's x strips are whole 32-wide tiles), its y bounds whole frame
     * tiles away from the edges */
    int cx0 = wx0 ? align_up8(wx0, h) : 0;
    {
        const int xo = ring_x_origin(0, h);
        if (wx0)
            cx0 = xo + (wx0 - xo + FXW - 1) / FXW * FXW;
    }
    int cx1 = np0;
    if (wx1) {
        cx1 = align_up8(np0 - (wx1 + FXW - 1) / FXW * FXW, h);
        if (cx1 > np0 - wx1)
            cx1 = align_dn8(np0 - wx1, h);
    }
    const int cy0 = wy0 ? (wy0 + FT - 1) / FT * FT : 0;
    const int cy1 = wy1 ? np1 - (wy1 + FT - 1) / FT * FT : np1;
    /* the core (on ST; unless !WITH_CORE) and the frame (on LST) over the planes [z0, z1) */
    auto planes = [&](int z0, int z1, bool with_core = true) -> int {
        int rc = 0;
        if (z1 <= z0)
            return 0;
        RcList fr = {}, fx = {}; /* FXW < TX: the x strips (fx) in tiles FXW wide */
        RcList &xs = FXW == TX ? fr : fx;
        RcList xl = {}; /* XBY > 0: the x strips between the y strips, no y layer point */
        if (cx0 >= cx1 || cy0 >= cy1) {
            push(fr, 0, np0, 0, np1, z0, z1); /* no core: the frame kernel everywhere */
        } else if (XBY > 0) {
            /* the y strips whole in x (the corners: x and y terms), the x strips between
             * them by the kernel without y terms (an R halo in y, no psi_y: less shared
             * memory and fewer registers, XBY x XNY rows a tile, built for XMB blocks) */
            push(fr, 0, np0, 0, cy0, z0, z1);
            push(fr, 0, np0, cy1, np1, z0, z1);
            push(xl, 0, cx0, cy0, cy1, z0, z1);
            push(xl, cx1, np0, cy0, cy1, z0, z1);
            Box core = {{cx0, cy0, z0}, {cx1, cy1, z1}};
            if (with_core && (rc = wave_cu_interior(s, pl, core, st)) < 0)
                return rc;
        } else {
            push(xs, 0, cx0, 0, np1, z0, z1);
            push(xs, cx1, np0, 0, np1, z0, z1);
            push(fr, cx0, cx1, 0, cy0, z0, z1);
            push(fr, cx0, cx1, cy1, np1, z0, z1);
            Box core = {{cx0, cy0, z0}, {cx1, cy1, z1}};
            if (with_core && (rc = wave_cu_interior(s, pl, core, st)) < 0)
                return rc;
        }
        if ((rc = launch_rc<R, FBY, FNY, FD, false, FMB, SH, TX, true, FPM, FHL>(fr, a, m, s, lst)) < 0)
            return rc;
        if constexpr (XBY > 0) {
            if (xl.n && (rc = launch_rc<R, XBY, XNY, XD, false, XMB, SH, TX, false, XPM>(xl, a, m, s, lst)) < 0)
                return rc;
        }
        if constexpr (FXW != TX) { /* half the threads a block (the registers decide the blocks an SM) */
            if (fx.n && (rc = launch_rc<R, FBY, FNY, FD, false, FMB, SH, FXW>(fx, a, m, s, lst)) < 0)
                return rc;
        }
        return 0;
    };
    int rc = 0;
    if constexpr (LZC > 0) {
        static_assert(ZLINES && ZO == 0 && XBY == 0, "LZC: the z layers by lines, the plain frame");
        const int lz0 = L->pml[4], lz1 = L->pml[5];
        const int za = lz0 ? lz0 + LZC : 0, zb = lz1 ? np2 - lz1 - LZC : np2;
        if (s->slab_count[2] && cx0 < cx1 && cy0 < cy1 && za < zb) {
            const Box lo = {{cx0, cy0, 0}, {cx1, cy1, za}}, hi = {{cx0, cy0, zb}, {cx1, cy1, np2}};
            const Box mid = {{cx0, cy0, za}, {cx1, cy1, zb}}, skip = {{cx0, cy0, 0}, {cx1, cy1, 0}};
            if ((rc = launch_ring_lz<R, 8, 2, 2>(lo, 0, a, m, s, lst)) < 0 ||
                (rc = launch_ring_lz<R, 8, 2, 2>(hi, 0, a, m, s, lst)) < 0 ||
                (rc = wave_cu_interior(s, pl, mid, st)) < 0 || (rc = planes(0, np2, false)) < 0 ||
                (rc = wave_cu_cpml_line_z(s, lst, ZNW, ZLB, -1, &skip)) < 0)
                return rc;
            wave_cu_swap_psi(s);
            return 0;
        }
    }
    if constexpr (ZO == 2) {
        const int lz0 = L->pml[4], lz1 = L->pml[5];
        if (s->slab_count[2] && lz0 + lz1 < np2) {
            for (int face = 0; face < 2; face++) {
                if (!(face ? lz1 : lz0))
                    continue;
                if ((rc = face ? planes(np2 - lz1, np2) : planes(0, lz0)) < 0)
                    return rc;
                if (lst != st && ((rc = dev_event_record(s->dev, s->ev_fork, st)) < 0 ||
                                  (rc = dev_stream_wait(s->dev, lst, s->ev_fork)) < 0))
                    return rc;
                if ((rc = wave_cu_cpml_line_z(s, lst, ZNW, ZLB, face)) < 0)
                    return rc;
            }
            if ((rc = planes(lz0, np2 - lz1)) < 0)
                return rc;
            wave_cu_swap_psi(s);
            return 0;
        }
    }
    if constexpr (ZO == 1) {
        const int lz0 = L->pml[4], lz1 = L->pml[5];
        if (s->slab_count[2] && lz0 + lz1 < np2) {
            if ((rc = planes(0, lz0)) < 0 || (rc = planes(np2 - lz1, np2)) < 0)
                return rc;
            if (lst != st && ((rc = dev_event_record(s->dev, s->ev_fork, st)) < 0 ||
                              (rc = dev_stream_wait(s->dev, lst, s->ev_fork)) < 0))
                return rc;
            if ((rc = wave_cu_cpml_line_z(s, lst, ZNW, ZLB)) < 0)
                return rc;
            if ((rc = planes(lz0, np2 - lz1)) < 0)
                return rc;
            wave_cu_swap_psi(s);
            return 0;
        }
    }
    /* middle planes (the core's and the frame's; z by lines: every plane) */
    if ((rc = planes(ZLINES ? 0 : L->pml[4], ZLINES ? np2 : max(L->pml[4], np2 - L->pml[5]))) < 0)
        return rc;
    if constexpr (ZLINES) {
        if (lst != st && ((rc = dev_event_record(s->dev, s->ev_join, lst)) < 0 ||
                          (rc = dev_stream_wait(s->dev, st, s->ev_join)) < 0))
            return rc;
        if ((rc = wave_cu_cpml_line_z(s, st, ZNW, ZLB)) < 0) /* ZNW 12: unrolled z lines */
            return rc;
    } else {
        const int z1 = max(L->pml[4], np2 - L->pml[5]);
        RcList zl = {};
        push(zl, 0, np0, 0, np1, 0, L->pml[4]);
        push(zl, 0, np0, 0, np1, max(z1, L->pml[4]), np2);
        if ((rc = launch_rc<R, ZBY, ZNY, ZD, true, ZMB, SH>(zl, a, m, s, lst)) < 0)
            return rc;
    }
    wave_cu_swap_psi(s);
    return 0;
}

#endif
