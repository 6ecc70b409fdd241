/* implicit_layers — tuning implicit_x = warpl: the x sweep (one line per warp,
 * implicit_kernels.cu's k_sweep_x_warp) writes g alone, and a pass of its own over the x
 * CPML layers then adds their terms to lap (explicit first derivatives of psi, zeta
 * updated: cpml_term, the same arithmetic on the same g).  Why: in the fused sweep a warp
 * writes its line 32 rows at a time, and the two batches that hold layer rows wait for
 * their psi and zeta loads one line after another (measured: x 0.813 ms with CPML, 0.578
 * without, for 1.25 B more per point); this pass has every layer element of the grid in
 * flight at once, for 8 B more per layer element (lap read and written again). */
#include "kernels/implicit_cuda.h"

#define XL_THREADS 256

/* Element e of the x layers of the box: slab column js = e % W (W = both layers' width),
 * line e / W over (y, z); lap = cpml_term(g) where lap holds the x sweep's g. */
template <int R>
__global__ void __launch_bounds__(XL_THREADS) k_x_layers(IArgs A, int w, int ny, long long n)
{
    const int wlo = A.m.pml[0], whi = A.m.pml[1], np = A.m.npad[0];
    for (long long e = (long long)blockIdx.x * XL_THREADS + threadIdx.x; e < n;
         e += (long long)gridDim.x * XL_THREADS) {
        const int js = (int)(e % w);
        const long long line = e / w;
        const int j = A.blo[1] + (int)(line % ny), k = A.blo[2] + (int)(line / ny);
        const int i = js < wlo ? js : np - whi + (js - wlo);
        if (i < A.blo[0] || i >= A.bhi[0])
            continue;
        const long long c = idx(A, i, j, k);
        A.lap[c] = cpml_term<0, R>(A, i, j, k, A.lap[c]);
    }
}

int implicit_cu_x_layers(const wave_sim *s, const IArgs &A, cudaStream_t st)
{
    const int w = A.m.pml[0] + A.m.pml[1], ny = A.bhi[1] - A.blo[1], nz = A.bhi[2] - A.blo[2];
    const long long n = (long long)w * ny * nz;
    if (!A.cpml || n <= 0)
        return 0;
    long long blocks = (n + XL_THREADS - 1) / XL_THREADS;
    const long long cap = 16LL * sm_count(s);
    if (blocks > cap)
        blocks = cap;
    return with_r(s, [&](auto kk) {
        constexpr int KK = decltype(kk)::value;
        k_x_layers<KK><<<(unsigned)blocks, XL_THREADS, 0, st>>>(A, w, ny, n);
        CUDA_TRY_LAUNCH();
        return 0;
    });
}

/* Tuning implicit_yz = xyc (implicit_xyc.cu): its x-y kernel leaves, in every element of
 * the box in an x or a y CPML layer, gx in lap and gy in d; this pass makes lap =
 * cpml_term<0>(gx) + cpml_term<1>(gy) there (each term g itself outside its own axis's
 * layers), the CPU reference's arithmetic.  Elements 0 .. nx - 1: the x layers' columns
 * (slab column fastest) over every row; then the y layers' rows over the columns between
 * the x layers (column fastest). */
template <int R>
__global__ void __launch_bounds__(XL_THREADS) k_xy_layers(IArgs A, int wx, int wy, int ny, long long nx, long long n)
{
    const int np0 = A.m.npad[0], np1 = A.m.npad[1];
    const int w0 = np0 - wx; /* columns between the x layers */
    for (long long e = (long long)blockIdx.x * XL_THREADS + threadIdx.x; e < n;
         e += (long long)gridDim.x * XL_THREADS) {
        int i, j, k;
        if (e < nx) {
            const int js = (int)(e % wx);
            const long long line = e / wx;
            j = A.blo[1] + (int)(line % ny);
            k = A.blo[2] + (int)(line / ny);
            i = js < A.m.pml[0] ? js : np0 - A.m.pml[1] + (js - A.m.pml[0]);
        } else {
            const long long f = e - nx;
            const long long line = f / w0;
            const int jy = (int)(line % wy);
            i = A.m.pml[0] + (int)(f % w0);
            j = jy < A.m.pml[2] ? jy : np1 - A.m.pml[3] + (jy - A.m.pml[2]);
            k = A.blo[2] + (int)(line / wy);
        }
        if (i < A.blo[0] || i >= A.bhi[0] || j < A.blo[1] || j >= A.bhi[1])
            continue;
        const long long c = idx(A, i, j, k);
        A.lap[c] = cpml_term<0, R>(A, i, j, k, A.lap[c]) + cpml_term<1, R>(A, i, j, k, A.d[c]);
    }
}

int implicit_cu_xy_layers(const wave_sim *s, const IArgs &A, cudaStream_t st)
{
    const int wx = A.m.pml[0] + A.m.pml[1], wy = A.m.pml[2] + A.m.pml[3];
    const int ny = A.bhi[1] - A.blo[1], nz = A.bhi[2] - A.blo[2];
    const long long nx = (long long)wx * ny * nz, n = nx + (long long)wy * (A.m.npad[0] - wx) * nz;
    if (!A.cpml || n <= 0 || ny <= 0 || nz <= 0)
        return 0;
    long long blocks = (n + XL_THREADS - 1) / XL_THREADS;
    const long long cap = 16LL * sm_count(s);
    if (blocks > cap)
        blocks = cap;
    return with_r(s, [&](auto kk) {
        constexpr int KK = decltype(kk)::value;
        k_xy_layers<KK><<<(unsigned)blocks, XL_THREADS, 0, st>>>(A, wx > 0 ? wx : 1, wy > 0 ? wy : 1, ny, nx, n);
        CUDA_TRY_LAUNCH();
        return 0;
    });
}
