/* rtm_device — CUDA side (default stream, as the propagator's sims use by default). */
#include "kernels/rtm_device.h"

#include "kernels/cuda_check.h"

extern "C" int rtm_cu_alloc(size_t bytes, void **out)
{
    cudaError_t e = cudaMalloc(out, bytes);
    if (e != cudaSuccess) {
        *out = NULL;
        (void)cudaGetLastError();
        return err_set(-ENOMEM, "rtm: cudaMalloc of %.1f MiB failed: %s", bytes / 1048576.0,
                       cudaGetErrorName(e));
    }
    return 0;
}

extern "C" void rtm_cu_free(void *p) { (void)cudaFree(p); }

extern "C" int rtm_cu_zero(void *p, size_t bytes)
{
    CUDA_TRY(cudaMemsetAsync(p, 0, bytes, 0));
    return 0;
}

extern "C" int rtm_cu_put(void *dst, const void *host, size_t bytes)
{
    CUDA_TRY(cudaMemcpy(dst, host, bytes, cudaMemcpyHostToDevice));
    return 0;
}

extern "C" int rtm_cu_get(void *host, const void *src, size_t bytes)
{
    CUDA_TRY(cudaMemcpy(host, src, bytes, cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int rtm_cu_sync(void)
{
    CUDA_TRY(cudaDeviceSynchronize());
    return 0;
}

extern "C" int rtm_cu_mem(size_t *free_b, size_t *total_b)
{
    CUDA_TRY(cudaMemGetInfo(free_b, total_b));
    return 0;
}

extern "C" int rtm_cu_stream_create(void **stream)
{
    cudaStream_t s;
    CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *stream = s;
    return 0;
}

extern "C" void rtm_cu_stream_destroy(void *stream)
{
    if (stream)
        (void)cudaStreamDestroy((cudaStream_t)stream);
}

extern "C" int rtm_cu_event_create(void **event)
{
    cudaEvent_t e;
    CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    *event = e;
    return 0;
}

extern "C" void rtm_cu_event_destroy(void *event)
{
    if (event)
        (void)cudaEventDestroy((cudaEvent_t)event);
}

extern "C" int rtm_cu_event_record(void *event, void *stream)
{
    CUDA_TRY(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream));
    return 0;
}

extern "C" int rtm_cu_stream_wait(void *stream, void *event)
{
    CUDA_TRY(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0));
    return 0;
}
