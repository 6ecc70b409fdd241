// CUDA side of the backend: device enumeration and binding.
#include "kernels/backend.h"
#include "kernels/cuda_check.h"

#include <stdio.h>
#include <string.h>

extern "C" int cuda_device_count(char *why, size_t why_len)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        // cudaErrorInsufficientDriver / cudaErrorNoDevice: no GPU here, not a crash.
        if (why)
            snprintf(why, why_len, "%s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
        cudaGetLastError();
        return 0;
    }
    if (n == 0 && why)
        snprintf(why, why_len, "the driver reports no CUDA device");
    return n;
}

extern "C" int cuda_device_query(int index, struct sl_device *out)
{
    cudaDeviceProp p;
    CUDA_TRY(cudaGetDeviceProperties(&p, index));
    out->kind = SL_DEVICE_CUDA;
    out->index = index;
    snprintf(out->name, sizeof out->name, "%.127s", p.name);
    out->cc_major = p.major;
    out->cc_minor = p.minor;
    out->sm_count = p.multiProcessorCount;
    CUDA_TRY(cudaSetDevice(index));
    CUDA_TRY(cudaMemGetInfo(&out->mem_free, &out->mem_total));
    return 0;
}

extern "C" int cuda_device_bind(int index)
{
    CUDA_TRY(cudaSetDevice(index));
    return 0;
}

extern "C" int cuda_device_mem(int index, size_t *free_b, size_t *total_b)
{
    CUDA_TRY(cudaSetDevice(index));
    CUDA_TRY(cudaMemGetInfo(free_b, total_b));
    return 0;
}
