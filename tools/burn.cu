/* burn — the benchmark's synthetic GPU work (see burn.h). */
#include "tools/burn.h"

#include "kernels/cuda_check.h"

/* A tunable amount of arithmetic per element: PASSES steps of a damped recurrence, so
 * the compiler cannot fold them and the cost is PASSES x n FMAs. */
__global__ static void burn_kernel(float *acc, const float *data, size_t n, int passes)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float x = data[i], y = 0.0f;
        for (int p = 0; p < passes; p++)
            y = fmaf(y, 0.999f, x * x);
        acc[i] += y;
    }
}

extern "C" int burn_run(float *acc, const float *data, size_t n, int passes, void *stream)
{
    int dev, sms;
    CUDA_TRY(cudaGetDevice(&dev));
    CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    burn_kernel<<<sms * 8, 256, 0, (cudaStream_t)stream>>>(acc, data, n, passes);
    CUDA_TRY_LAUNCH();
    return 0;
}
