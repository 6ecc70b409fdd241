/* device — the CUDA side of the device layer (see device.h).  Every call is checked;
 * an allocation that fails is -ENOMEM with its size, the rest -EIO naming the call. */
#include "kernels/device.h"

#include "kernels/cuda_check.h"

static cudaMemcpyKind kind_of(int kind)
{
    switch (kind) {
    case DEV_H2D: return cudaMemcpyHostToDevice;
    case DEV_D2H: return cudaMemcpyDeviceToHost;
    case DEV_D2D: return cudaMemcpyDeviceToDevice;
    default: return cudaMemcpyHostToHost;
    }
}

extern "C" {

int dev_cu_alloc(size_t bytes, void **out)
{
    cudaError_t e = cudaMalloc(out, bytes);
    if (e != cudaSuccess) {
        *out = NULL;
        (void)cudaGetLastError();
        return err_set(e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO,
                       "device: cudaMalloc of %.1f MiB failed: %s", bytes / 1048576.0, cudaGetErrorName(e));
    }
    return 0;
}

void dev_cu_free(void *p)
{
    if (p)
        (void)cudaFree(p);
}

int dev_cu_zero(void *p, size_t bytes, void *stream)
{
    CUDA_TRY(cudaMemsetAsync(p, 0, bytes, (cudaStream_t)stream));
    return 0;
}

int dev_cu_fill_ff_2d(void *p, size_t pitch, size_t width, size_t height)
{
    CUDA_TRY(cudaMemset2D(p, pitch, 0xff, width, height));
    return 0;
}

int dev_cu_copy(void *dst, const void *src, size_t bytes, int kind, void *stream)
{
    if (stream)
        CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind_of(kind), (cudaStream_t)stream));
    else
        CUDA_TRY(cudaMemcpy(dst, src, bytes, kind_of(kind)));
    return 0;
}

int dev_cu_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, int kind)
{
    CUDA_TRY(cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind_of(kind)));
    return 0;
}

int dev_cu_host_register(void *p, size_t bytes)
{
    CUDA_TRY(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
    return 0;
}

int dev_cu_host_unregister(void *p)
{
    CUDA_TRY(cudaHostUnregister(p));
    return 0;
}

int dev_cu_host_alloc(size_t bytes, void **out)
{
    cudaError_t e = cudaHostAlloc(out, bytes, cudaHostAllocDefault);
    if (e != cudaSuccess) {
        *out = NULL;
        (void)cudaGetLastError();
        return err_set(e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO,
                       "device: cudaHostAlloc of %.1f MiB of page-locked host memory failed: %s",
                       bytes / 1048576.0, cudaGetErrorName(e));
    }
    return 0;
}

void dev_cu_host_free(void *p)
{
    if (p)
        (void)cudaFreeHost(p);
}

int dev_cu_mem(size_t *free_b, size_t *total_b)
{
    CUDA_TRY(cudaMemGetInfo(free_b, total_b));
    return 0;
}

int dev_cu_uuid(int index, unsigned char out[16])
{
    cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, index));
    memcpy(out, prop.uuid.bytes, 16);
    return 0;
}

int dev_cu_sync(void)
{
    CUDA_TRY(cudaDeviceSynchronize());
    return 0;
}

int dev_cu_stream_create(void **s)
{
    cudaStream_t st;
    CUDA_TRY(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    *s = st;
    return 0;
}

void dev_cu_stream_destroy(void *s)
{
    if (s)
        (void)cudaStreamDestroy((cudaStream_t)s);
}

int dev_cu_stream_sync(void *s)
{
    CUDA_TRY(cudaStreamSynchronize((cudaStream_t)s));
    return 0;
}

int dev_cu_stream_wait(void *s, void *event)
{
    CUDA_TRY(cudaStreamWaitEvent((cudaStream_t)s, (cudaEvent_t)event, 0));
    return 0;
}

int dev_cu_event_create(void **e, bool timing)
{
    cudaEvent_t ev;
    CUDA_TRY(cudaEventCreateWithFlags(&ev, timing ? cudaEventDefault : cudaEventDisableTiming));
    *e = ev;
    return 0;
}

void dev_cu_event_destroy(void *e)
{
    if (e)
        (void)cudaEventDestroy((cudaEvent_t)e);
}

int dev_cu_event_record(void *e, void *stream)
{
    CUDA_TRY(cudaEventRecord((cudaEvent_t)e, (cudaStream_t)stream));
    return 0;
}

int dev_cu_event_query(void *e)
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

int dev_cu_event_sync(void *e)
{
    CUDA_TRY(cudaEventSynchronize((cudaEvent_t)e));
    return 0;
}

int dev_cu_event_elapsed_ms(void *start, void *end, float *ms)
{
    CUDA_TRY(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end));
    return 0;
}

} /* extern "C" */
