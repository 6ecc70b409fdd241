/* pipeline_cuda — CUDA runtime calls of the pipeline (see pipeline_cuda.h). */
#include "stream/pipeline_cuda.h"

#include "kernels/cuda_check.h"

extern "C" {

int pcuda_host_register(void *p, size_t bytes)
{
    CUDA_TRY(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
    return 0;
}

int pcuda_host_unregister(void *p)
{
    CUDA_TRY(cudaHostUnregister(p));
    return 0;
}

int pcuda_stream_create(void **s)
{
    cudaStream_t st;
    CUDA_TRY(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    *s = st;
    return 0;
}

void pcuda_stream_destroy(void *s)
{
    if (s)
        cudaStreamDestroy((cudaStream_t)s);
}

int pcuda_event_create(void **e, int timing)
{
    cudaEvent_t ev;
    CUDA_TRY(cudaEventCreateWithFlags(&ev, timing ? cudaEventDefault : cudaEventDisableTiming));
    *e = ev;
    return 0;
}

void pcuda_event_destroy(void *e)
{
    if (e)
        cudaEventDestroy((cudaEvent_t)e);
}

int pcuda_event_record(void *e, void *stream)
{
    CUDA_TRY(cudaEventRecord((cudaEvent_t)e, (cudaStream_t)stream));
    return 0;
}

int pcuda_event_query(void *e)
{
    cudaError_t r = cudaEventQuery((cudaEvent_t)e);
    if (r == cudaSuccess)
        return 1;
    if (r == cudaErrorNotReady) {
        (void)cudaGetLastError(); /* not an error: clear it */
        return 0;
    }
    return CUDA_ERR("cudaEventQuery", r);
}

int pcuda_event_sync(void *e)
{
    CUDA_TRY(cudaEventSynchronize((cudaEvent_t)e));
    return 0;
}

int pcuda_event_elapsed_ms(void *start, void *end, float *ms)
{
    CUDA_TRY(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end));
    return 0;
}

int pcuda_stream_wait_event(void *stream, void *e)
{
    CUDA_TRY(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)e, 0));
    return 0;
}

int pcuda_stream_sync(void *s)
{
    CUDA_TRY(cudaStreamSynchronize((cudaStream_t)s));
    return 0;
}

int pcuda_malloc(void **p, size_t bytes)
{
    CUDA_TRY(cudaMalloc(p, bytes));
    return 0;
}

void pcuda_free(void *p)
{
    if (p)
        cudaFree(p);
}

int pcuda_memset(void *p, int v, size_t bytes)
{
    CUDA_TRY(cudaMemset(p, v, bytes));
    return 0;
}

int pcuda_h2d_async(void *dst, const void *src, size_t bytes, void *stream)
{
    CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream));
    return 0;
}

int pcuda_d2h(void *dst, const void *src, size_t bytes)
{
    CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return 0;
}

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

int pcuda_burn(float *acc, const float *data, size_t n, int passes, void *stream)
{
    int dev, sms;
    CUDA_TRY(cudaGetDevice(&dev));
    CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    burn_kernel<<<sms * 8, 256, 0, (cudaStream_t)stream>>>(acc, data, n, passes);
    CUDA_TRY_LAUNCH();
    return 0;
}

} /* extern "C" */
