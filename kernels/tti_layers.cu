/* tti_layers — the two naive passes' tiled forms (tti_layers.cu, below: pass 1 too) for
 * the boxes beside the tiled core.  Pass 2: the second naive pass (tti_naive.cu's k_tti_pass2: L and H1 with the CPML
 * terms, then the update) as a tiled kernel, for the boxes beside the tiled core where
 * the CPML memory makes s the first pass's (3D).  Same arithmetic in the same order;
 * only where the neighbours come from differs: pass 2 reads 2 x (6R + 1) values of f and
 * 2 x 6R of the products n_a s per point from global memory, each point's neighbours
 * again for every point, which made it gather-bound (~8 Gpts/s on the H100).  Here a
 * W x H block marches z: f and u_z of its column in register queues (2R + 1 planes), and
 * per plane f (tile + R halo in x and y), u_x (tile + R in x) and u_y (tile + R in y) in
 * shared memory, read once per block.  The CPML memory (psi neighbours, zeta, chi) is
 * read as pass 2 reads it: it only exists in the layers. */
#include "kernels/tti_cuda.h"

#define TL_W 32
#define TL_H 8

template <int R, bool SH>
__global__ void __launch_bounds__(TL_W *TL_H, 2) k_tti_layer2(TArgs a, Box b, int zchunk, bool cpml, int d0, int d1,
                                                         int d2)
{
    constexpr int W = TL_W, H = TL_H, FW = W + 2 * R, FH = H + 2 * R, NT = W * H, Q = 2 * R + 1;
    __shared__ float sf[2][FH][FW], sx[2][H][FW], sy[2][FH][W];
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * W + tx;
    const int x0 = b.lo[0] + blockIdx.x * W, y0 = b.lo[1] + blockIdx.y * H;
    const int kb = b.lo[2] + blockIdx.z * zchunk, ke = min(kb + zchunk, b.hi[2]);
    const int i = x0 + tx, j = y0 + ty;
    const bool mine = i < b.hi[0] && j < b.hi[1];
    const long long sz = a.sz;
    auto at = [&](int px, int py, bool &ok) -> long long {
        const int gx = px + a.h, gy = py + a.hy;
        ok = gx >= 0 && gx < d0 && gy >= 0 && gy < d1;
        return (long long)gy * a.sy + gx;
    };
    auto ld = [&](const float *__restrict__ arr, long long base, bool ok, int P) -> float {
        const int gz = P + a.h;
        return ok && gz >= 0 && gz < d2 ? __ldg(arr + base + (long long)gz * sz) : 0.0f;
    };
    bool okt;
    const long long bt = at(i, j, okt);
    /* u_z above a free surface: (n_z s)(-m) = (n_z s)(m), as pass 2 reads it */
    auto ldz = [&](int f, int P) { return ld(a.u[f][2], bt, okt, a.fs && P < 0 ? -P : P); };

    float fq[2][Q], uq[2][Q]; /* f and u_z of planes K-R .. K+R */
#pragma unroll
    for (int f = 0; f < 2; f++) {
#pragma unroll
        for (int q = 0; q < 2 * R; q++) {
            fq[f][q] = ld(a.f[f], bt, okt, kb - R + q);
            uq[f][q] = ldz(f, kb - R + q);
        }
    }
    for (int K = kb; K < ke; K++) {
#pragma unroll
        for (int f = 0; f < 2; f++) {
            fq[f][2 * R] = ld(a.f[f], bt, okt, K + R);
            uq[f][2 * R] = ldz(f, K + R);
        }
        if constexpr (SH) {
            __syncthreads(); /* the previous plane's shared reads are done */
            /* the tile's rows, columns -R .. W+R: f and u_x */
            for (int e = t; e < H * FW; e += NT) {
                const int r = e / FW, c = e % FW;
                bool ok;
                const long long g = at(x0 - R + c, y0 + r, ok);
#pragma unroll
                for (int f = 0; f < 2; f++) {
                    sf[f][r + R][c] = ld(a.f[f], g, ok, K);
                    sx[f][r][c] = ld(a.u[f][0], g, ok, K);
                }
            }
            /* the tile's columns, rows -R .. H+R: u_y, and f of the rows outside the tile */
            for (int e = t; e < FH * W; e += NT) {
                const int r = e / W, c = e % W;
                bool ok;
                const long long g = at(x0 + c, y0 - R + r, ok);
#pragma unroll
                for (int f = 0; f < 2; f++) {
                    sy[f][r][c] = ld(a.u[f][1], g, ok, K);
                    if (r < R || r >= H + R)
                        sf[f][r][c + R] = ld(a.f[f], g, ok, K);
                }
            }
            __syncthreads();
        }
        if (mine) {
            const int k = K;
            const long long c = bt + (long long)(k + a.h) * sz;
            const int xv[3] = {i, j, k};
            const long long sst[3] = {1, a.npad[0], (long long)a.npad[0] * a.npad[1]};
            float lf[2], hf[2];
#pragma unroll
            for (int f = 0; f < 2; f++) {
                float lap = 0, h1 = 0;
                /* x, z, then y: the CPU reference's order of the sums */
#pragma unroll
                for (int o = 0; o < 3; o++) {
                    const int ax = o == 0 ? 0 : o == 1 ? 2 : 1;
                    float d2v = a.c2[ax][0] * fq[f][R], m = 0;
#pragma unroll
                    for (int l = 1; l <= R; l++) {
                        float fp, fm, up, dn;
                        if (!SH && ax < 2) { /* straight from global memory (L1) */
                            const long long st = ax == 0 ? 1 : a.sy;
                            fp = __ldg(a.f[f] + c + l * st);
                            fm = __ldg(a.f[f] + c - l * st);
                            up = __ldg(a.u[f][ax] + c + l * st);
                            dn = __ldg(a.u[f][ax] + c - l * st);
                        } else if (ax == 0) {
                            fp = sf[f][ty + R][tx + R + l];
                            fm = sf[f][ty + R][tx + R - l];
                            up = sx[f][ty][tx + R + l];
                            dn = sx[f][ty][tx + R - l];
                        } else if (ax == 1) {
                            fp = sf[f][ty + R + l][tx + R];
                            fm = sf[f][ty + R - l][tx + R];
                            up = sy[f][ty + R + l][tx];
                            dn = sy[f][ty + R - l][tx];
                        } else {
                            fp = fq[f][R + l];
                            fm = fq[f][R - l];
                            up = uq[f][R + l];
                            dn = uq[f][R - l];
                        }
                        d2v += a.c2[ax][l] * (fp + fm);
                        m += a.c1[ax][l] * (up - dn);
                    }
                    const int js = cpml ? t_js(a, ax, xv[ax]) : -1;
                    if (js >= 0) {
                        const long long e = t_slab(a, ax, i, j, k, js);
                        const float *__restrict__ psi = a.psi[f][ax];
                        float dpsi = 0;
#pragma unroll
                        for (int l = 1; l <= R; l++) {
                            const int ju = t_js(a, ax, xv[ax] + l), jd = t_js(a, ax, xv[ax] - l);
                            const float pu = ju < 0 ? 0.0f : psi[e + (long long)(ju - js) * sst[ax]];
                            const float pd = jd < 0 ? 0.0f : psi[e - (long long)(js - jd) * sst[ax]];
                            dpsi += a.c1[ax][l] * (pu - pd);
                        }
                        const float pa = a.pa[ax][xv[ax]], pb = a.pb[ax][xv[ax]];
                        const float tt = d2v + dpsi;
                        const float z = pb * a.zeta[f][ax][e] + pa * tt;
                        a.zeta[f][ax][e] = z;
                        d2v = tt + z;
                        const float ch = pb * a.chi[f][ax][e] + pa * m;
                        a.chi[f][ax][e] = ch;
                        m += ch;
                    }
                    lap = ax == 0 ? d2v : lap + d2v;
                    h1 = ax == 0 ? m : h1 + m;
                }
                lf[f] = lap;
                hf[f] = h1;
            }
            tti_update(a, c, fq[0][R], fq[1][R], lf[0], lf[1], hf[0], hf[1]);
        }
#pragma unroll
        for (int f = 0; f < 2; f++) {
#pragma unroll
            for (int q = 0; q < 2 * R; q++) {
                fq[f][q] = fq[f][q + 1];
                uq[f][q] = uq[f][q + 1];
            }
        }
    }
}

/* Pass 1 (tti_naive.cu's k_tti_pass1: s = n . (grad f + psi), psi updated, the products
 * n_a s into u) tiled the same way: f of the column in a register queue, the f plane
 * with an R halo in x and y in shared memory. */
template <int R, bool SH>
__global__ void __launch_bounds__(TL_W *TL_H, SH ? 2 : 3) k_tti_layer1(TArgs a, Box b, int zchunk, bool cpml, int d0, int d1,
                                                            int d2)
{
    constexpr int W = TL_W, H = TL_H, FW = W + 2 * R, FH = H + 2 * R, NT = W * H, Q = 2 * R + 1;
    __shared__ float sf[2][FH][FW];
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * W + tx;
    const int x0 = b.lo[0] + blockIdx.x * W, y0 = b.lo[1] + blockIdx.y * H;
    const int kb = b.lo[2] + blockIdx.z * zchunk, ke = min(kb + zchunk, b.hi[2]);
    const int i = x0 + tx, j = y0 + ty;
    const bool mine = i < b.hi[0] && j < b.hi[1];
    const long long sz = a.sz;
    auto at = [&](int px, int py, bool &ok) -> long long {
        const int gx = px + a.h, gy = py + a.hy;
        ok = gx >= 0 && gx < d0 && gy >= 0 && gy < d1;
        return (long long)gy * a.sy + gx;
    };
    auto ld = [&](const float *__restrict__ arr, long long base, bool ok, int P) -> float {
        const int gz = P + a.h;
        return ok && gz >= 0 && gz < d2 ? __ldg(arr + base + (long long)gz * sz) : 0.0f;
    };
    bool okt;
    const long long bt = at(i, j, okt);
    float fq[2][Q]; /* f of planes K-R .. K+R */
#pragma unroll
    for (int f = 0; f < 2; f++) {
#pragma unroll
        for (int q = 0; q < 2 * R; q++)
            fq[f][q] = ld(a.f[f], bt, okt, kb - R + q);
    }
    for (int K = kb; K < ke; K++) {
#pragma unroll
        for (int f = 0; f < 2; f++)
            fq[f][2 * R] = ld(a.f[f], bt, okt, K + R);
        const uint32_t tl = mine ? __ldg(a.tilt + bt + (long long)(K + a.h) * sz) : 0u;
        if constexpr (SH) {
            __syncthreads(); /* the previous plane's shared reads are done */
            /* the tile's rows, columns -R .. W+R */
            for (int e = t; e < H * FW; e += NT) {
                const int r = e / FW, c = e % FW;
                bool ok;
                const long long g = at(x0 - R + c, y0 + r, ok);
#pragma unroll
                for (int f = 0; f < 2; f++)
                    sf[f][r + R][c] = ld(a.f[f], g, ok, K);
            }
            /* the tile's columns, the R rows above and below it */
            for (int e = t; e < 2 * R * W; e += NT) {
                const int r0 = e / W, c = e % W, r = r0 < R ? r0 : H + r0;
                bool ok;
                const long long g = at(x0 + c, y0 - R + r, ok);
#pragma unroll
                for (int f = 0; f < 2; f++)
                    sf[f][r][c + R] = ld(a.f[f], g, ok, K);
            }
            __syncthreads();
        }
        if (mine) {
            const int k = K;
            const long long c = bt + (long long)(k + a.h) * sz;
            const int xv[3] = {i, j, k};
            const float3 n = tti_axis(a.tab, tl);
            const float nn[3] = {n.x, n.y, n.z};
#pragma unroll
            for (int f = 0; f < 2; f++) {
                float s = 0;
#pragma unroll
                for (int ax = 0; ax < 3; ax++) {
                    float g = 0;
#pragma unroll
                    for (int l = 1; l <= R; l++) {
                        float up, dn;
                        if (ax == 2) {
                            up = fq[f][R + l];
                            dn = fq[f][R - l];
                        } else if (!SH) { /* straight from global memory (L1) */
                            const long long st = ax == 0 ? 1 : a.sy;
                            up = __ldg(a.f[f] + c + l * st);
                            dn = __ldg(a.f[f] + c - l * st);
                        } else {
                            up = ax == 0 ? sf[f][ty + R][tx + R + l] : sf[f][ty + R + l][tx + R];
                            dn = ax == 0 ? sf[f][ty + R][tx + R - l] : sf[f][ty + R - l][tx + R];
                        }
                        g += a.c1[ax][l] * (up - dn);
                    }
                    const int js = cpml ? t_js(a, ax, xv[ax]) : -1;
                    if (js >= 0) {
                        float *ps = a.psi[f][ax] + t_slab(a, ax, i, j, k, js);
                        const float v = a.pb[ax][xv[ax]] * *ps + a.pa[ax][xv[ax]] * g;
                        *ps = v;
                        g += v;
                    }
                    s = ax == 0 ? nn[0] * g : s + nn[ax] * g;
                }
                a.u[f][0][c] = nn[0] * s;
                a.u[f][1][c] = nn[1] * s;
                a.u[f][2][c] = nn[2] * s;
            }
        }
#pragma unroll
        for (int f = 0; f < 2; f++) {
#pragma unroll
            for (int q = 0; q < 2 * R; q++)
                fq[f][q] = fq[f][q + 1];
        }
    }
}

template <int R, bool P1, bool SH>
static int launch(const tti_sim *s, const Box &b, bool cpml, cudaStream_t st)
{
    const struct wave_layout *L = &s->w.L;
    const int gx = (b.hi[0] - b.lo[0] + TL_W - 1) / TL_W, gy = (b.hi[1] - b.lo[1] + TL_H - 1) / TL_H;
    const int nz = b.hi[2] - b.lo[2];
    /* z chunks where the x-y tiles are few (the x and y slabs): ~4 blocks per SM, each
     * chunk at least 4R planes (a chunk loads 2R planes of queue before its first) */
    const long long tiles = (long long)gx * gy, target = 4LL * sm_count(&s->w);
    const long long nch = (target + tiles - 1) / tiles;
    int zc = (int)((nz + nch - 1) / nch);
    zc = zc < 4 * R ? 4 * R : zc;
    dim3 blk(TL_W, TL_H), grd(gx, gy, (nz + zc - 1) / zc);
    if (P1)
        k_tti_layer1<R, SH><<<grd, blk, 0, st>>>(tti_args(s), b, zc, cpml, L->dim[0], L->dim[1], L->dim[2]);
    else
        k_tti_layer2<R, SH><<<grd, blk, 0, st>>>(tti_args(s), b, zc, cpml, L->dim[0], L->dim[1], L->dim[2]);
    CUDA_TRY_LAUNCH();
    return 0;
}

int tti_cu_layer2(const tti_sim *s, const Box &b, bool cpml, bool staged, cudaStream_t st)
{
    if (box_empty(b))
        return 0;
    if (wave_is_2d(&s->w))
        return tti_cu_pass2(s, b, cpml, st);
    return with_r(&s->w, [&](auto r) {
        return staged ? launch<decltype(r)::value, false, true>(s, b, cpml, st)
                      : launch<decltype(r)::value, false, false>(s, b, cpml, st);
    });
}

int tti_cu_layer1(const tti_sim *s, const Box &b, bool cpml, bool staged, cudaStream_t st)
{
    if (box_empty(b))
        return 0;
    if (wave_is_2d(&s->w))
        return tti_cu_pass1(s, b, cpml, st);
    return with_r(&s->w, [&](auto r) {
        return staged ? launch<decltype(r)::value, true, true>(s, b, cpml, st)
                      : launch<decltype(r)::value, true, false>(s, b, cpml, st);
    });
}
