/* laplacian_filter — CUDA twin of laplacian_filter.c (same arithmetic, same faces). */
#include "kernels/laplacian_filter.h"

#include <stddef.h>

#include "kernels/cuda_check.h"

/* The second difference along one axis at position P of N, stride S: mirrored at the
 * faces, nothing along an axis of one cell (as d2 in laplacian_filter.c). */
__device__ __forceinline__ float d2(const float *__restrict__ in, size_t i, int p, int n, size_t s)
{
    if (n < 2)
        return 0.0f;
    const float *c = in + i;
    float lo = p > 0 ? c[-(ptrdiff_t)s] : c[s];
    float hi = p < n - 1 ? c[s] : c[-(ptrdiff_t)s];
    return lo - 2.0f * c[0] + hi;
}

__global__ void laplacian_filter_kernel(int nx, int ny, int nz, float cx, float cy, float cz,
                                        const float *__restrict__ in, float *__restrict__ out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z;
    if (x >= nx || y >= ny)
        return;
    size_t sy = (size_t)nx, sz = (size_t)nx * ny;
    size_t i = (size_t)z * sz + (size_t)y * sy + x;
    float lap = cx * d2(in, i, x, nx, 1) + cy * d2(in, i, y, ny, sy) + cz * d2(in, i, z, nz, sz);
    out[i] = -lap;
}

extern "C" int laplacian_filter_cuda(const int n[3], const double d[3], const float *in, float *out,
                                     void *stream)
{
    const double h = laplacian_filter_h(n, d);
    dim3 block(32, 8, 1);
    dim3 grid((n[0] + 31) / 32, (n[1] + 7) / 8, n[2]);
    laplacian_filter_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(
        n[0], n[1], n[2], (float)(h * h / (d[0] * d[0])), (float)(h * h / (d[1] * d[1])),
        (float)(h * h / (d[2] * d[2])), in, out);
    CUDA_TRY_LAUNCH();
    return 0;
}
