/* device — the one device layer: memory, copies, streams, events, memory queries and
 * the translation of CUDA errors into err_msg() (kernels/cuda_check.h), in one place.
 *
 * Every function takes the device it acts on.  On a CPU device memory is host memory
 * (malloc), copies are memcpy, and streams and events are NULL handles whose operations
 * do nothing, so the callers (the propagators, RTM, the locate stack, the pipeline) run
 * one code path on both.  On a CUDA device the calls act on the device the calling
 * thread is bound to (kernels/backend.h: backend_bind).
 *
 * Streams and events are handed around as void * (cudaStream_t / cudaEvent_t): the .c
 * files are compiled by gcc without the CUDA headers.  A NULL stream is CUDA's default
 * stream.  Functions return 0 or a negative errno (-ENOMEM when memory runs out, -EIO
 * for other CUDA failures, -ENODEV for a CUDA device in a build without CUDA) with
 * err_msg() naming the call. */
#ifndef SEISLIVE_DEVICE_H
#define SEISLIVE_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the source and destination of a copy live. */
enum dev_copy_kind {
    DEV_H2D = 0,  /* host -> device */
    DEV_D2H = 1,  /* device -> host */
    DEV_D2D = 2,  /* device -> device */
    DEV_H2H = 3,  /* host -> host */
};

/* True for a CUDA device (its buffers are device memory). */
bool dev_is_gpu(const struct sl_device *dev);

/* ---- memory ------------------------------------------------------------------------ */

/* BYTES (0 is taken as 1) of device memory (host memory on the CPU) into *OUT. */
int dev_alloc(const struct sl_device *dev, size_t bytes, void **out);
/* NULL-safe. */
void dev_free(const struct sl_device *dev, void *p);
/* Fill with zero bytes, or with 0xff bytes (a float NaN pattern) in dev_fill_ff; queued on
 * STREAM (CUDA), done at once on the CPU. */
int dev_zero(const struct sl_device *dev, void *p, size_t bytes, void *stream);
int dev_fill_ff_2d(const struct sl_device *dev, void *p, size_t pitch, size_t width, size_t height);

/* Copy BYTES.  STREAM NULL: synchronous (a D2H copy has the data in host memory on
 * return).  Otherwise queued on STREAM (host memory should be page-locked to overlap). */
int dev_copy(const struct sl_device *dev, void *dst, const void *src, size_t bytes,
             enum dev_copy_kind kind, void *stream);
/* Synchronous pitched copy of HEIGHT rows of WIDTH bytes. */
int dev_copy_2d(const struct sl_device *dev, void *dst, size_t dpitch, const void *src, size_t spitch,
                size_t width, size_t height, enum dev_copy_kind kind);

/* Page-lock host memory that is already mapped (CUDA), so copies from it overlap; no-op
 * on the CPU. */
int dev_host_register(const struct sl_device *dev, void *p, size_t bytes);
int dev_host_unregister(const struct sl_device *dev, void *p);

/* How page-locked host memory is made on a CUDA device (the CPU mallocs either way):
 *   DEV_PIN_PIECES    (the default) mmap with transparent huge pages asked for, every page
 *                     touched first by all OpenMP threads (the kernel's page zeroing in
 *                     parallel), then cudaHostRegister of the pages, already there, in 8
 *                     pieces by 8 threads at once, each piece a whole number of UNIT bytes
 *                     (so that a copy of one unit, a strip, never spans two registrations);
 *   DEV_PIN_ALLOC     cudaHostAlloc: the driver allocates and pins every page itself;
 *   DEV_PIN_REGISTER  as PIECES, registered in one piece by one thread.
 * Measured on the H100's host (seislive-bench rtm --pin-probe 8): 8 GiB in 0.46 s by
 * pieces (touch 0.26 s, register 0.20 s), 1.12 s by register, 4.24 s by cudaHostAlloc. */
enum dev_pin_how { DEV_PIN_PIECES = 0, DEV_PIN_ALLOC = 1, DEV_PIN_REGISTER = 2 };

/* BYTES (0 is taken as 1) of page-locked host memory made as HOW (UNIT: PIECES' unit, 0
 * for any) into *OUT (CUDA: copies to and from it run at the host link's rate and
 * overlap kernels on other streams); malloc on the CPU.  Free with dev_host_free, the
 * same BYTES, HOW and UNIT (NULL-safe). */
int dev_host_alloc(const struct sl_device *dev, size_t bytes, int how, size_t unit, void **out);
void dev_host_free(const struct sl_device *dev, void *p, size_t bytes, int how, size_t unit);

/* Free and total bytes of the device (CUDA), or the available and total host memory. */
/* Host memory this process can still take, in bytes (0: unknown): the kernel's
 * MemAvailable (free pages plus the page cache it can reclaim; sysconf's available pages
 * where /proc/meminfo is missing), capped by the cgroup's limit less its usage (cgroup v2
 * memory.max - memory.current, or v1 memory.limit_in_bytes - memory.usage_in_bytes) where
 * one is set: a container or batch slot is OOM-killed at its cgroup's limit, however much
 * the machine has free. */
size_t dev_host_available(void);
int dev_mem(const struct sl_device *dev, size_t *free_b, size_t *total_b);

/* The 16-byte UUID of the GPU (CUDA; -ENODEV on the CPU): ranks compare them to know
 * whether they run on distinct GPUs (an index is only local to a host and a process). */
int dev_uuid(const struct sl_device *dev, unsigned char out[16]);

/* ---- streams and events --------------------------------------------------------------- */

/* Wait for all work queued on the device. */
int dev_sync(const struct sl_device *dev);

/* A non-blocking stream (CUDA); *S = NULL on the CPU.  Destroy is NULL-safe. */
int dev_stream_create(const struct sl_device *dev, void **s);
void dev_stream_destroy(const struct sl_device *dev, void *s);
int dev_stream_sync(const struct sl_device *dev, void *s);
/* Work queued on S after this waits for EVENT. */
int dev_stream_wait(const struct sl_device *dev, void *s, void *event);

/* An event (TIMING: it can be used with dev_event_elapsed_ms); *E = NULL on the CPU. */
int dev_event_create(const struct sl_device *dev, void **e, bool timing);
void dev_event_destroy(const struct sl_device *dev, void *e);
int dev_event_record(const struct sl_device *dev, void *e, void *stream);
/* 1 when the work before E is done, 0 while it is not, < 0 on error (CPU: always 1). */
int dev_event_query(const struct sl_device *dev, void *e);
int dev_event_sync(const struct sl_device *dev, void *e);
int dev_event_elapsed_ms(const struct sl_device *dev, void *start, void *end, float *ms);

#ifdef SEISLIVE_CUDA
/* The CUDA side (device.cu); callers use the dev_* functions above. */
int dev_cu_alloc(size_t bytes, void **out);
void dev_cu_free(void *p);
int dev_cu_zero(void *p, size_t bytes, void *stream);
int dev_cu_fill_ff_2d(void *p, size_t pitch, size_t width, size_t height);
int dev_cu_copy(void *dst, const void *src, size_t bytes, int kind, void *stream);
int dev_cu_copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                   int kind);
int dev_cu_host_register(void *p, size_t bytes);
int dev_cu_host_unregister(void *p);
int dev_cu_host_alloc(size_t bytes, void **out);
void dev_cu_host_free(void *p);
int dev_cu_mem(size_t *free_b, size_t *total_b);
int dev_cu_uuid(int index, unsigned char out[16]);
int dev_cu_sync(void);
int dev_cu_stream_create(void **s);
void dev_cu_stream_destroy(void *s);
int dev_cu_stream_sync(void *s);
int dev_cu_stream_wait(void *s, void *event);
int dev_cu_event_create(void **e, bool timing);
void dev_cu_event_destroy(void *e);
int dev_cu_event_record(void *e, void *stream);
int dev_cu_event_query(void *e);
int dev_cu_event_sync(void *e);
int dev_cu_event_elapsed_ms(void *start, void *end, float *ms);
#endif

#ifdef __cplusplus
}
#endif

#endif
