/* laplacian_filter — CUDA twin of laplacian_filter.c (same arithmetic, same edges). */
#include "kernels/laplacian_filter.h"

#include "kernels/cuda_check.h"

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
    if (x == 0 || x == nx - 1 || y == 0 || y == ny - 1 || z == 0 || z == nz - 1) {
        out[i] = 0.0f;
        return;
    }
    float c = in[i];
    float lap = cx * (in[i - 1] - 2.0f * c + in[i + 1]) + cy * (in[i - sy] - 2.0f * c + in[i + sy]) +
                cz * (in[i - sz] - 2.0f * c + in[i + sz]);
    out[i] = -lap;
}

extern "C" int laplacian_filter_cuda(const int n[3], const double d[3], const float *in, float *out,
                                     void *stream)
{
    double h = d[0] < d[1] ? d[0] : d[1];
    h = h < d[2] ? h : d[2];
    dim3 block(32, 8, 1);
    dim3 grid((n[0] + 31) / 32, (n[1] + 7) / 8, n[2]);
    laplacian_filter_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(
        n[0], n[1], n[2], (float)(h * h / (d[0] * d[0])), (float)(h * h / (d[1] * d[1])),
        (float)(h * h / (d[2] * d[2])), in, out);
    CUDA_TRY_LAUNCH();
    return 0;
}
