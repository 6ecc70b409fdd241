/* wave_ring_lz — the ring CPML's core kernel with the z layers' terms folded in (issue 20,
 * session 13; research: tools/wave_research.cu's shapes ".../lz"): k_ring's plain x and y
 * Laplacian over tile columns that hold no x or y layer point, and along z the CPML
 * terms of the z layers in the same pass, so that the z layers' points of the core are
 * not read again by lines' z kernel (which then runs over the frame's columns only).
 *
 * Along z, Pasalic & McGarry as the CPU reference (kernels/wave.c) computes it: psi_z(n+1)
 * = b psi_z(n) + a D1 p, zeta_z(n+1) = b zeta_z + a (D2 p + D1 psi_z(n+1)), lap gets D2 p +
 * D1 psi_z(n+1) + zeta_z(n+1) in a z-layer plane.  D1 psi_z(n+1) at k needs psi_z(n+1) at
 * k +- 1..R, so the thread's register queue of p is 4R + 1 long (k-2R .. k+2R) and a
 * second queue holds psi_z(n+1) at k-R .. k+R, its new value (plane k+R) computed when
 * the march reaches k.  The ring holds p tiles 2R planes ahead (k .. k+2R+D), and each
 * plane's group of tiles brings q, v, psi_z(n) of plane k+R and zeta_z of plane k.
 * psi_z(n+1) goes to psi_alt (psi_out) as in the other ring kernels.
 * The longer queues cost registers and moves on every plane, so the launcher runs this
 * kernel only over z chunks that reach the z layers (ring_cpml_run<..., LZC>), k_ring
 * over the rest. */
#ifndef SEISLIVE_WAVE_RING_LZ_CUH
#define SEISLIVE_WAVE_RING_LZ_CUH

#include "kernels/wave_ring.cuh"

#include "kernels/cpml.h"

template <int R, int BY, int NY, int D>
struct RingLzCfg {
    static constexpr int W = TX;
    static constexpr int XO = (R + 3) / 4 * 4;
    static constexpr int PW = W + 2 * XO;
    static constexpr int TYT = BY * NY;
    static constexpr int PH = TYT + 2 * R;
    static constexpr int ZR = 2 * R; /* how far ahead the p queue reads */
    static constexpr int S = ZR + D + 1;
    static constexpr int PSLOT = PH * PW;
    static constexpr int T = TYT * W;
    /* a group: q and v of plane k, psi_z(n) of plane k+R, zeta_z of plane k */
    static constexpr int G_Q = 0, G_V = T, G_PZ = 2 * T, G_ZZ = 3 * T, GSLOT = 4 * T;
    static constexpr size_t bytes = sizeof(float) * ((size_t)S * PSLOT + (size_t)(D + 1) * GSLOT);
};

template <int R, int BY, int NY, int D>
__global__ void __launch_bounds__(TX *BY, 2) k_ring_lz(KArgs a, PArgs m, Box b, int zchunk, int x_org, int dim0,
                                                    int dim1, int dim2)
{
    using C = RingLzCfg<R, BY, NY, D>;
    constexpr int W = C::W, NT = W * BY, ZR = C::ZR;
    extern __shared__ __align__(16) float smem[];
    float *const ps = smem;
    float *const gs = smem + C::S * C::PSLOT;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * W + tx;
    const int x0 = x_org + blockIdx.x * W, y0 = b.lo[1] + blockIdx.y * C::TYT;
    const int kb = b.lo[2] + blockIdx.z * zchunk;
    const int ke = min(kb + zchunk, b.hi[2]);
    const int i = x0 + tx, h = a.h;
    const float *__restrict__ p = a.p;
    const float *__restrict__ vel = a.vel;
    float *__restrict__ q = a.q;
    const long long sy = a.sy, sz = a.sz;
    const int np0 = m.npad[0], np1 = m.npad[1], np2 = m.npad[2];
    const int wz0 = m.pml[4], wz1 = m.pml[5];
    const int klast = ke - 1 + ZR; /* the last plane this chunk reads */
    /* the z memory's rows are whole 16-byte chunks (x0 + h is a multiple of 8) */
    const bool v4 = np0 % 4 == 0 && ((x0 % 4) + 4) % 4 == 0;
    auto load_p = [&](int kk, int sl) {
        if (kk > klast)
            return;
        float *dst = ps + sl * C::PSLOT;
        constexpr int CPR = C::PW / 4, NCH = C::PH * CPR;
        const bool zok = kk + h >= 0 && kk + h < dim2;
        const long long pl = (long long)(kk + h) * sz;
#pragma unroll
        for (int e0 = 0; e0 < NCH; e0 += NT) {
            const int e = e0 + tid;
            if (NCH % NT == 0 || e < NCH) {
                const int r = e / CPR, c = e % CPR;
                const int gy = y0 - R + r + h, gx = x0 + h - C::XO + 4 * c;
                const bool ok = zok && gy < dim1 && gx >= 0 && gx < dim0;
                cp16(dst + r * C::PW + 4 * c, ok ? p + pl + (long long)gy * sy + gx : p, ok);
            }
        }
    };
    auto load_g = [&](int kk, int sl) {
        if (kk >= ke)
            return;
        float *dst = gs + sl * C::GSLOT;
        {
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
                    cp16(dst + w * C::T + r * W + 4 * c, ok ? src + pl + (long long)(gy + h) * sy + gx : src, ok);
                }
            }
        }
        /* psi_z(n) of plane kk+R, zeta_z of plane kk, where they are layer planes (block-
         * uniform; a slot not loaded is not read) */
        const int jp = cpml_slab_index(kk + R, np2, wz0, wz1), jz = cpml_slab_index(kk, np2, wz0, wz1);
        if (jp < 0 && jz < 0)
            return;
        const float *psi = m.psi[2], *zeta = m.zeta[2];
        const long long pln = (long long)np1 * np0;
        if (v4) {
            constexpr int CPR = W / 4, N1 = C::TYT * CPR, N = 2 * N1;
#pragma unroll
            for (int e0 = 0; e0 < N; e0 += NT) {
                const int e = e0 + tid;
                if (N % NT == 0 || e < N) {
                    const bool isp = e < N1;
                    const int f = isp ? e : e - N1, r = f / CPR, c = f % CPR;
                    const int j = y0 + r, x = x0 + 4 * c, js = isp ? jp : jz;
                    const bool ok = js >= 0 && x >= 0 && x < np0 && j < np1;
                    cp16(dst + (isp ? C::G_PZ : C::G_ZZ) + r * W + 4 * c,
                         ok ? (isp ? psi : zeta) + js * pln + (long long)j * np0 + x : psi, ok);
                }
            }
        } else {
            constexpr int N = 2 * C::T;
#pragma unroll
            for (int e0 = 0; e0 < N; e0 += NT) {
                const int e = e0 + tid;
                if (N % NT == 0 || e < N) {
                    const bool isp = e < C::T;
                    const int f = isp ? e : e - C::T, r = f / W, c = f % W;
                    const int j = y0 + r, x = x0 + c, js = isp ? jp : jz;
                    const bool ok = js >= 0 && x >= 0 && x < np0 && j < np1;
                    cp4(dst + (isp ? C::G_PZ : C::G_ZZ) + f,
                        ok ? (isp ? psi : zeta) + js * pln + (long long)j * np0 + x : psi, ok);
                }
            }
        }
    };
    const float cxy = a.c2[0][0] + a.c2[1][0];
    long long col[NY];
    bool inside[NY];
    float qz[NY][2 * ZR + 1]; /* qz[m][u] = p(k - 2R + u) of row m */
    float zq[NY][2 * R + 1];  /* zq[m][u] = psi_z(n+1)(k - R + u) of row m */
#pragma unroll
    for (int mm = 0; mm < NY; mm++) {
        const int j = y0 + ty + mm * BY;
        col[mm] = (long long)(j + h) * sy + (i + h);
        inside[mm] = i >= b.lo[0] && i < b.hi[0] && j < b.hi[1];
#pragma unroll
        for (int u = 0; u < 2 * ZR; u++) {
            const int kk = kb - ZR + u;
            qz[mm][u] = inside[mm] && kk + h >= 0 && kk + h < dim2 ? __ldg(p + col[mm] + (long long)(kk + h) * sz) : 0.0f;
        }
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
    /* Prologue: the p tiles of planes kb .. kb+ZR-1, then D groups of (p(kb+ZR+d), g(kb+d)).
     * Plane kk lives in p slot (kk - kb) % S and group slot (kk - kb) % (D + 1). */
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
        /* the plane's z profile (block-uniform) */
        const int jzk = cpml_slab_index(k, np2, wz0, wz1), jzp = cpml_slab_index(k + R, np2, wz0, wz1);
        const float paz = jzk >= 0 ? __ldg(m.pa[2] + k) : 0.0f, pbz = jzk >= 0 ? __ldg(m.pb[2] + k) : 0.0f;
        const float pazp = jzp >= 0 ? __ldg(m.pa[2] + k + R) : 0.0f, pbzp = jzp >= 0 ? __ldg(m.pb[2] + k + R) : 0.0f;
#pragma unroll
        for (int mm = 0; mm < NY; mm++) {
            const int row = ty + mm * BY;
            qz[mm][2 * ZR] = PR[(row + R) * C::PW + C::XO + tx];
            const float pc = qz[mm][ZR];
            {
                float v = 0.0f;
                if (jzp >= 0) {
                    float d1 = 0;
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        d1 += a.c1[2][l] * (qz[mm][3 * R + l] - qz[mm][3 * R - l]);
                    v = pbzp * G[C::G_PZ + row * W + tx] + pazp * d1;
                }
                zq[mm][2 * R] = v;
            }
            if (inside[mm]) {
                const float *rp = P + (row + R) * C::PW + C::XO + tx;
                float lap = cxy * pc, d2z = a.c2[2][0] * pc;
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    lap += a.c2[0][l] * (rp[l] + rp[-l]) + a.c2[1][l] * (rp[l * C::PW] + rp[-l * C::PW]);
                    d2z += a.c2[2][l] * (qz[mm][ZR + l] + qz[mm][ZR - l]);
                }
                float lapz = d2z;
                if (jzk >= 0) {
                    float dpsi = 0;
#pragma unroll
                    for (int l = 1; l <= R; l++)
                        dpsi += a.c1[2][l] * (zq[mm][R + l] - zq[mm][R - l]);
                    const float t = d2z + dpsi;
                    const float z = pbz * G[C::G_ZZ + row * W + tx] + paz * t;
                    lapz = t + z;
                    const long long el = ((long long)jzk * np1 + (y0 + row)) * np0 + i;
                    m.zeta[2][el] = z;
                    m.psi_out[2][el] = zq[mm][R];
                }
                q[col[mm] + pl] = 2.0f * pc - G[C::G_Q + row * W + tx] + G[C::G_V + row * W + tx] * (lap + lapz);
            }
#pragma unroll
            for (int u = 0; u < 2 * ZR; u++)
                qz[mm][u] = qz[mm][u + 1];
#pragma unroll
            for (int u = 0; u < 2 * R; u++)
                zq[mm][u] = zq[mm][u + 1];
        }
        sk = sk + 1 == C::S ? 0 : sk + 1;
        sq = sq == D ? 0 : sq + 1;
    }
    cp_wait<0>();
}

/* k_ring_lz over box IN (the core's columns; z chunks of ZC planes, 0: one chunk). */
template <int R, int BY, int NY, int D>
static int launch_ring_lz(const Box &in, int zc, const KArgs &a, const PArgs &m, const wave_sim *s, cudaStream_t st)
{
    using C = RingLzCfg<R, BY, NY, D>;
    static bool attr = false;
    if (!attr) {
        CUDA_TRY(cudaFuncSetAttribute(k_ring_lz<R, BY, NY, D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      (int)C::bytes));
        attr = true;
    }
    if (box_empty(in))
        return 0;
    const int xo = ring_x_origin(in.lo[0], a.h);
    const int gx = (in.hi[0] - xo + TX - 1) / TX, gy = (in.hi[1] - in.lo[1] + C::TYT - 1) / C::TYT;
    const int nz = in.hi[2] - in.lo[2];
    if (zc <= 0 || zc > nz)
        zc = nz;
    dim3 blk(TX, BY), grd(gx, gy, (nz + zc - 1) / zc);
    k_ring_lz<R, BY, NY, D><<<grd, blk, C::bytes, st>>>(a, m, in, zc, xo, s->L.dim[0], s->L.dim[1], s->L.dim[2]);
    CUDA_TRY_LAUNCH();
    return 0;
}

#endif
