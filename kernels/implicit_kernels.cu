/* implicit_kernels — the CUDA sweeps of the implicit operator (kernels/implicit.h): per
 * line the tridiagonal system b g[i-1] + g[i] + b g[i+1] = r[i] by the Thomas algorithm
 * (forward sweep d[i] = (r[i] - b d[i-1]) inv[i], backward g[i] = d[i] - cp[i] g[i+1]),
 * the same arithmetic as the CPU reference (kernels/implicit_step.c).
 *
 *   x  a block of 32 threads loads 32 x lines (row pitch odd: no bank conflicts) into
 *      shared memory with coalesced loads, each thread runs the recursion of one line in
 *      shared memory (d written over the field values the recursion no longer reads),
 *      then the block writes g (plus the CPML terms) to lap, coalesced;
 *   y, z  each thread owns one x lane of one x-z (y sweep) or x-y (z sweep) plane and
 *      marches along the axis: loads coalesced across the warp, the 2K + 1 field values
 *      of the right-hand side in a register window (each field value read once), d
 *      stored to a scratch field, then the backward march applies g.  The z sweep, last,
 *      also does the leapfrog update of q (no separate pass over lap). */
#include "kernels/implicit_cuda.h"

#include "kernels/cpml.h"

__device__ __forceinline__ long long idx(const IArgs &A, int i, int j, int k)
{
    return (long long)(k + A.h) * A.sz + (long long)(j + A.hy) * A.sy + (i + A.h);
}

/* Axis AX's contribution at padded (i, j, k): g, plus the CPML terms in a layer of that
 * axis (explicit first derivatives of psi; zeta updated), as implicit_step.c's. */
template <int AX, int R>
__device__ __forceinline__ float cpml_term(const IArgs &A, int i, int j, int k, float g)
{
    const int x = AX == 0 ? i : AX == 1 ? j : k;
    const int np = A.m.npad[AX], wlo = A.m.pml[2 * AX], whi = A.m.pml[2 * AX + 1];
    const int js = cpml_slab_index(x, np, wlo, whi);
    if (js < 0)
        return g;
    const long long sst = AX == 0 ? 1 : AX == 1 ? (long long)A.m.npad[0] : (long long)A.m.npad[0] * A.m.npad[1];
    const long long e = slab_elem(A.m, AX, i, j, k, js);
    const float *psi = A.m.psi[AX];
    float dpsi = 0;
#pragma unroll
    for (int l = 1; l <= R; l++) {
        const int xu = x + l, xd = x - l;
        const bool oku = xu < np && (xu < wlo || xu >= np - whi);
        const bool okd = xd >= 0 && (xd < wlo || xd >= np - whi);
        const float cu = oku ? A.c1[AX][l] : 0.0f, cd = okd ? A.c1[AX][l] : 0.0f;
        const long long ou = oku ? (long long)(cpml_slab_index(xu, np, wlo, whi) - js) * sst : 0;
        const long long od = okd ? (long long)(js - cpml_slab_index(xd, np, wlo, whi)) * sst : 0;
        dpsi += cu * psi[e + ou] - cd * psi[e - od];
    }
    const float t = g + dpsi;
    const float z = A.m.pb[AX][x] * A.m.zeta[AX][e] + A.m.pa[AX][x] * t;
    A.m.zeta[AX][e] = z;
    return t + z;
}

/* Index of line (u, v) in the interface planes of axis AX (implicit_step.c's ifc_line). */
template <int AX>
__device__ __forceinline__ long long ifc_line(const IArgs &A, int i, int j, int k)
{
    if (AX == 0)
        return (long long)(k - A.pml[4] - A.lo[2]) * (A.hi[1] - A.lo[1]) + (j - A.pml[2] - A.lo[1]);
    const int v = AX == 1 ? k - A.pml[4] - A.lo[2] : j - A.pml[2] - A.lo[1];
    return (long long)v * (A.hi[0] - A.lo[0]) + (i - A.pml[0] - A.lo[0]);
}

/* ---- x: lines in shared memory --------------------------------------------------------- */

#define XROWS 32 /* lines per block (one per thread of the warp) */

template <int K, int R>
__global__ void __launch_bounds__(XROWS) k_sweep_x(IArgs A, int r0, int r1, int pitch)
{
    extern __shared__ float sh[];
    const int ny = A.bhi[1] - A.blo[1], nz = A.bhi[2] - A.blo[2];
    const long long rows = (long long)ny * nz;
    const long long row0 = (long long)blockIdx.x * XROWS;
    const int m = r1 - r0, w = m + 2 * K;
    const int t = threadIdx.x;
    /* load: row by row, the warp across x (coalesced) */
    for (int rr = 0; rr < XROWS; rr++) {
        const long long q = row0 + rr;
        if (q >= rows)
            break;
        const int j = A.blo[1] + (int)(q % ny), k = A.blo[2] + (int)(q / ny);
        const float *f = A.p + idx(A, r0 - K, j, k);
        for (int x = t; x < w; x += XROWS)
            sh[rr * pitch + x] = f[x];
    }
    __syncthreads();
    const long long q = row0 + t;
    if (q < rows) {
        const int j = A.blo[1] + (int)(q % ny), k = A.blo[2] + (int)(q / ny);
        float *F = sh + t * pitch;
        const float b = A.b;
        float ga = 0, gb = 0;
        if (A.ifc) {
            const long long li = ifc_line<0>(A, 0, j, k);
            ga = A.ifc_in[A.ifc_off[0] + li];
            gb = A.ifc_in[A.ifc_off[0] + A.ifc_half[0] + li];
        }
        float d = 0;
        for (int i = 0; i < m; i++) {
            float r = A.c[0][0] * F[i + K];
#pragma unroll
            for (int l = 1; l <= K; l++)
                r += A.c[0][l] * (F[i + K + l] + F[i + K - l]);
            if (i == 0)
                r -= b * ga;
            if (i == m - 1)
                r -= b * gb;
            d = i == 0 ? r * A.inv[0] : (r - b * d) * A.inv[i];
            F[i] = d; /* F[i] (f at i - K) is read for the last time above */
        }
        float g = F[m - 1];
        for (int i = m - 2; i >= 0; i--) {
            g = F[i] - A.cp[i] * g;
            F[i] = g;
        }
    }
    __syncthreads();
    /* write: row by row, the warp across x */
    for (int rr = 0; rr < XROWS; rr++) {
        const long long qq = row0 + rr;
        if (qq >= rows)
            break;
        const int j = A.blo[1] + (int)(qq % ny), k = A.blo[2] + (int)(qq / ny);
        const float *F = sh + rr * pitch;
        if (A.ifc_out) {
            if (t < 2) {
                const int at = t == 0 ? A.pml[0] + A.lo[0] - 1 : A.pml[0] + A.hi[0];
                const float g = at >= r0 && at < r1 ? F[at - r0] : 0.0f;
                A.ifc_out[A.ifc_off[0] + t * A.ifc_half[0] + ifc_line<0>(A, 0, j, k)] = g;
            }
            continue;
        }
        for (int i = A.blo[0] + t; i < A.bhi[0]; i += XROWS) {
            float g = i >= r0 && i < r1 ? F[i - r0] : 0.0f;
            if (A.cpml)
                g = cpml_term<0, R>(A, i, j, k, g);
            const long long c = idx(A, i, j, k);
            A.lap[c] = A.first ? g : A.lap[c] + g;
        }
    }
}

/* ---- y and z: marching columns ----------------------------------------------------------- */

/* AX = 1: threads over (x, z), march y; AX = 2: threads over (x, y), march z.  LAST: the
 * z sweep, which updates q = 2 p - q + vel (lap + g). */
template <int K, int R, int AX>
__global__ void __launch_bounds__(128) k_sweep_march(IArgs A, int r0, int r1)
{
    const int i = A.blo[0] + (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int o = (AX == 1 ? A.blo[2] : A.blo[1]) + (int)blockIdx.y;
    if (i >= A.bhi[0])
        return;
    const int j = AX == 1 ? 0 : o, k = AX == 1 ? o : 0;
    const long long st = AX == 1 ? A.sy : A.sz;
    const long long base = idx(A, i, j, k); /* row 0 of the column */
    const float b = A.b;
    const bool mirror = AX == 2 && A.mirror;
    float ga = 0, gb = 0;
    if (A.ifc) {
        const long long li = ifc_line<AX>(A, i, j, k);
        ga = A.ifc_in[A.ifc_off[AX] + li];
        gb = A.ifc_in[A.ifc_off[AX] + A.ifc_half[AX] + li];
    }
    /* window: win[K + l] = f(t + l), l = -K..K */
    float win[2 * K + 1];
#pragma unroll
    for (int l = -K; l <= K; l++) {
        const int tt = r0 + l;
        win[K + l] = mirror && tt < 0 ? -A.p[base + (long long)(-tt) * st] : A.p[base + (long long)tt * st];
    }
    float d = 0;
    for (int t = r0; t < r1; t++) {
        float r = A.c[AX][0] * win[K];
#pragma unroll
        for (int l = 1; l <= K; l++)
            r += A.c[AX][l] * (win[K + l] + win[K - l]);
        if (t == r0)
            r -= b * ga;
        if (t == r1 - 1)
            r -= b * gb;
        d = t == r0 ? r * A.inv[0] : (r - b * d) * A.inv[t - r0];
        A.d[base + (long long)t * st] = d;
#pragma unroll
        for (int l = 0; l < 2 * K; l++)
            win[l] = win[l + 1];
        if (t + 1 < r1) /* f(r1 + K) would be one plane beyond the halo */
            win[2 * K] = A.p[base + (long long)(t + K + 1) * st];
    }
    if (A.ifc_out) {
        /* g at the interfaces only: march back to the upper one */
        const int at[2] = {A.pml[2 * AX] + A.lo[AX] - 1, A.pml[2 * AX] + A.hi[AX]};
        float g = 0;
        const long long li = ifc_line<AX>(A, i, j, k);
        for (int t = r1 - 1; t >= r0 && t >= at[0]; t--) {
            g = t == r1 - 1 ? A.d[base + (long long)t * st] : A.d[base + (long long)t * st] - A.cp[t - r0] * g;
            if (t == at[1])
                A.ifc_out[A.ifc_off[AX] + A.ifc_half[AX] + li] = g;
            if (t == at[0])
                A.ifc_out[A.ifc_off[AX] + li] = g;
        }
        if (at[0] < r0) /* the surface row: g = 0 */
            A.ifc_out[A.ifc_off[AX] + li] = 0.0f;
        return;
    }
    float g = 0;
    const int blo = AX == 1 ? A.blo[1] : A.blo[2], bhi = AX == 1 ? A.bhi[1] : A.bhi[2];
    for (int t = r1 - 1; t >= blo; t--) {
        if (t >= r0) {
            const float dd = A.d[base + (long long)t * st];
            g = t == r1 - 1 ? dd : dd - A.cp[t - r0] * g;
        } else {
            g = 0.0f; /* the surface row */
        }
        if (t >= bhi)
            continue;
        float gc = g;
        const int jj = AX == 1 ? t : j, kk = AX == 2 ? t : k;
        if (A.cpml)
            gc = cpml_term<AX, R>(A, i, jj, kk, gc);
        const long long c = base + (long long)t * st;
        if (AX == 2) {
            const float lap = A.first ? gc : A.lap[c] + gc;
            A.q[c] = 2.0f * A.p[c] - A.q[c] + A.vel[c] * lap;
        } else {
            A.lap[c] = A.first ? gc : A.lap[c] + gc;
        }
    }
}

/* ---- launchers ------------------------------------------------------------------------- */

template <class F>
static int with_k(int K, F &&f)
{
    switch (K) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 6: return f(std::integral_constant<int, 6>{});
    case 7: return f(std::integral_constant<int, 7>{});
    case 8: return f(std::integral_constant<int, 8>{});
    }
    return err_set(-EINVAL, "implicit: half-width %d not supported on CUDA", K);
}

int implicit_cu_sweep_x(const wave_sim *s, const IArgs &A, cudaStream_t st)
{
    int r0, r1;
    implicit_cu_rows(s, 0, A.ifc, &r0, &r1);
    const int K = s->imp->K;
    const long long rows = (long long)(A.bhi[1] - A.blo[1]) * (A.bhi[2] - A.blo[2]);
    if (r1 <= r0 || rows <= 0)
        return 0;
    int pitch = r1 - r0 + 2 * K;
    pitch |= 1; /* odd: the 32 lines of a block fall in 32 different banks */
    const size_t shmem = (size_t)XROWS * pitch * sizeof(float);
    int dev = 0, optin = 0;
    CUDA_TRY(cudaGetDevice(&dev));
    CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    const size_t max_sh = (size_t)optin; /* H100: 227 KB, A100: 163 KB */
    if (shmem > max_sh)
        return err_set(-ENOTSUP, "implicit: x lines of %d points do not fit the x sweep's shared memory (at most "
                       "%zu points)", r1 - r0, max_sh / sizeof(float) / XROWS - 2 * K);
    return with_k(K, [&](auto kk) {
        constexpr int KK = decltype(kk)::value;
        auto kern = k_sweep_x<KK, KK>;
        CUDA_TRY(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
        kern<<<(unsigned)((rows + XROWS - 1) / XROWS), XROWS, shmem, st>>>(A, r0, r1, pitch);
        CUDA_TRY_LAUNCH();
        return 0;
    });
}

template <int AX>
static int sweep_march(const wave_sim *s, const IArgs &A, cudaStream_t st)
{
    int r0, r1;
    implicit_cu_rows(s, AX, A.ifc, &r0, &r1);
    const int nx = A.bhi[0] - A.blo[0], no = AX == 1 ? A.bhi[2] - A.blo[2] : A.bhi[1] - A.blo[1];
    if (nx <= 0 || no <= 0 || r1 <= r0)
        return 0;
    return with_k(s->imp->K, [&](auto kk) {
        constexpr int KK = decltype(kk)::value;
        dim3 blk(128), grd((nx + 127) / 128, no);
        k_sweep_march<KK, KK, AX><<<grd, blk, 0, st>>>(A, r0, r1);
        CUDA_TRY_LAUNCH();
        return 0;
    });
}

int implicit_cu_sweep_y(const wave_sim *s, const IArgs &A, cudaStream_t st) { return sweep_march<1>(s, A, st); }
int implicit_cu_sweep_z(const wave_sim *s, const IArgs &A, cudaStream_t st) { return sweep_march<2>(s, A, st); }
