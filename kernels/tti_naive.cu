/* tti_naive — the straightforward global-memory TTI twin (the seed paper's baseline):
 * one thread per point, every neighbour read from global memory, in two passes per step
 * (tti-spec.md):
 *   pass 1  s_f = n . g_f with g_a = D_a f (+ psi_a in axis a's layers, psi updated),
 *           both fields, and the products n_a s_f into global scratch u[f][a];
 *   pass 2  L f (with the acoustic CPML terms in the layers), H1 f = sum_a D_a (n_a s_f)
 *           (+ chi_a in axis a's layers), then the update of p and q.
 * The tiled plan runs these two kernels in the CPML layers and a rim r cells thick
 * beside them, where the tiled kernel's own s (without psi) would be wrong. */
#include "kernels/tti_cuda.h"

#include "kernels/cpml.h"

/* The point of thread (blockIdx, threadIdx) in box B, false when past its end.  3D:
 * threads over x and y, blocks over z; 2D: threads over x and z. */
template <bool Y>
__device__ __forceinline__ bool t_point(const Box &b, int &i, int &j, int &k)
{
    i = b.lo[0] + blockIdx.x * blockDim.x + threadIdx.x;
    if (Y) {
        j = b.lo[1] + blockIdx.y * blockDim.y + threadIdx.y;
        k = b.lo[2] + blockIdx.z;
    } else {
        j = 0;
        k = b.lo[2] + blockIdx.y * blockDim.y + threadIdx.y;
    }
    return i < b.hi[0] && j < b.hi[1] && k < b.hi[2];
}

template <int R, bool Y>
__global__ void __launch_bounds__(256) k_tti_pass1(TArgs a, Box b, bool cpml)
{
    int i, j, k;
    if (!t_point<Y>(b, i, j, k))
        return;
    const long long c = (long long)(k + a.h) * a.sz + (long long)(j + a.hy) * a.sy + (i + a.h);
    const long long st[3] = {1, a.sy, a.sz};
    const int x[3] = {i, j, k};
    const float3 n = tti_axis(a.tab, __ldg(a.tilt + c));
    const float nn[3] = {n.x, n.y, n.z};
#pragma unroll
    for (int f = 0; f < 2; f++) {
        const float *__restrict__ fv = a.f[f];
        float s = 0;
#pragma unroll
        for (int ax = 0; ax < 3; ax++) {
            if (!Y && ax == 1)
                continue;
            float g = 0;
#pragma unroll
            for (int l = 1; l <= R; l++)
                g += a.c1[ax][l] * (__ldg(fv + c + l * st[ax]) - __ldg(fv + c - l * st[ax]));
            const int js = cpml ? t_js(a, ax, x[ax]) : -1;
            if (js >= 0) {
                /* psi(n) from psi, psi(n+1) to psi_n: the same array unless the CPML column
                 * kernel runs beside (tti_cuda.h TtiGpu.fused) */
                const long long e = t_slab(a, ax, i, j, k, js);
                const float v = a.pb[ax][x[ax]] * a.psi[f][ax][e] + a.pa[ax][x[ax]] * g;
                a.psi_n[f][ax][e] = v;
                g += v;
            }
            s = ax == 0 ? nn[0] * g : s + nn[ax] * g;
        }
        a.u[f][0][c] = nn[0] * s;
        if (Y)
            a.u[f][1][c] = nn[1] * s;
        a.u[f][2][c] = nn[2] * s;
    }
}

template <int R, bool Y>
__global__ void __launch_bounds__(256) k_tti_pass2(TArgs a, Box b, bool cpml)
{
    int i, j, k;
    if (!t_point<Y>(b, i, j, k))
        return;
    const long long c = (long long)(k + a.h) * a.sz + (long long)(j + a.hy) * a.sy + (i + a.h);
    const long long st[3] = {1, a.sy, a.sz};
    const long long sst[3] = {1, a.npad[0], (long long)a.npad[0] * a.npad[1]};
    const int x[3] = {i, j, k};
    float lf[2], hf[2];
#pragma unroll
    for (int f = 0; f < 2; f++) {
        const float *__restrict__ fv = a.f[f];
        const float *__restrict__ const *u = a.u[f]; /* n_a s, 0 beyond the padded grid */
        float lap = 0, h1 = 0;
        /* x, z, then y: the CPU reference's order of the sums */
#pragma unroll
        for (int o = 0; o < 3; o++) {
            const int ax = o == 0 ? 0 : o == 1 ? 2 : 1;
            if (!Y && ax == 1)
                continue;
            float d2 = a.c2[ax][0] * __ldg(fv + c), m = 0;
#pragma unroll
            for (int l = 1; l <= R; l++) {
                d2 += a.c2[ax][l] * (__ldg(fv + c + l * st[ax]) + __ldg(fv + c - l * st[ax]));
                float up, dn;
                if (ax == 2) {
                    up = __ldg(u[2] + c + l * a.sz);
                    /* above a free surface: (nz s)(-m) = (nz s)(m), same column */
                    dn = __ldg(u[2] + (a.fs && k - l < 0 ? c + (long long)(l - 2 * k) * a.sz : c - l * a.sz));
                } else {
                    up = __ldg(u[ax] + c + l * st[ax]);
                    dn = __ldg(u[ax] + c - l * st[ax]);
                }
                m += a.c1[ax][l] * (up - dn);
            }
            const int js = cpml ? t_js(a, ax, x[ax]) : -1;
            if (js >= 0) {
                const long long e = t_slab(a, ax, i, j, k, js);
                const float *__restrict__ psi = a.psi_n[f][ax]; /* psi(n+1), pass 1's */
                float dpsi = 0;
#pragma unroll
                for (int l = 1; l <= R; l++) {
                    const int ju = t_js(a, ax, x[ax] + l), jd = t_js(a, ax, x[ax] - l);
                    const float pu = ju < 0 ? 0.0f : psi[e + (long long)(ju - js) * sst[ax]];
                    const float pd = jd < 0 ? 0.0f : psi[e - (long long)(js - jd) * sst[ax]];
                    dpsi += a.c1[ax][l] * (pu - pd);
                }
                const float pa = a.pa[ax][x[ax]], pb = a.pb[ax][x[ax]];
                const float t = d2 + dpsi;
                const float z = pb * a.zeta[f][ax][e] + pa * t;
                a.zeta[f][ax][e] = z;
                d2 = t + z;
                const float ch = pb * a.chi[f][ax][e] + pa * m;
                a.chi[f][ax][e] = ch;
                m += ch;
            }
            lap = ax == 0 ? d2 : lap + d2;
            h1 = ax == 0 ? m : h1 + m;
        }
        lf[f] = lap;
        hf[f] = h1;
    }
    tti_update(a, c, __ldg(a.f[0] + c), __ldg(a.f[1] + c), lf[0], lf[1], hf[0], hf[1]);
}

template <int R, bool Y, bool P1>
static int launch(const tti_sim *s, const Box &b, bool cpml, cudaStream_t st)
{
    if (box_empty(b))
        return 0;
    const TArgs a = tti_args(s);
    const int bx = 32, by = 8;
    dim3 blk(bx, by);
    dim3 grd = Y ? dim3((b.hi[0] - b.lo[0] + bx - 1) / bx, (b.hi[1] - b.lo[1] + by - 1) / by, b.hi[2] - b.lo[2])
                 : dim3((b.hi[0] - b.lo[0] + bx - 1) / bx, (b.hi[2] - b.lo[2] + by - 1) / by, 1);
    if (P1)
        k_tti_pass1<R, Y><<<grd, blk, 0, st>>>(a, b, cpml);
    else
        k_tti_pass2<R, Y><<<grd, blk, 0, st>>>(a, b, cpml);
    CUDA_TRY_LAUNCH();
    return 0;
}

int tti_cu_pass1(const tti_sim *s, const Box &b, bool cpml, cudaStream_t st)
{
    return with_r_y(&s->w, [&](auto r, auto y) {
        return launch<decltype(r)::value, decltype(y)::value, true>(s, b, cpml, st);
    });
}

int tti_cu_pass2(const tti_sim *s, const Box &b, bool cpml, cudaStream_t st)
{
    return with_r_y(&s->w, [&](auto r, auto y) {
        return launch<decltype(r)::value, decltype(y)::value, false>(s, b, cpml, st);
    });
}
