/* pipeline_cuda — the few CUDA runtime calls the pipeline needs, behind C functions
 * (the .c files of the runtime are compiled by gcc without the CUDA headers).
 * Only compiled and called in CUDA builds (SEISLIVE_CUDA); every call is checked
 * (kernels/cuda_check.h) and returns 0 or -EIO with err_msg() naming the call. */
#ifndef SEISLIVE_PIPELINE_CUDA_H
#define SEISLIVE_PIPELINE_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Page-lock host memory that is already mapped (slots: after io_uring registration). */
int pcuda_host_register(void *p, size_t bytes);
int pcuda_host_unregister(void *p);

/* Streams and events are handed around as void * (cudaStream_t / cudaEvent_t). */
int pcuda_stream_create(void **s);
void pcuda_stream_destroy(void *s);
int pcuda_event_create(void **e, int timing);
void pcuda_event_destroy(void *e);
int pcuda_event_record(void *e, void *stream);
/* 1 when the work before the event is done, 0 while it is not, < 0 on error. */
int pcuda_event_query(void *e);
int pcuda_event_sync(void *e);
int pcuda_event_elapsed_ms(void *start, void *end, float *ms);
int pcuda_stream_wait_event(void *stream, void *e);
int pcuda_stream_sync(void *s);

int pcuda_malloc(void **p, size_t bytes);
void pcuda_free(void *p);
int pcuda_memset(void *p, int v, size_t bytes);
int pcuda_h2d_async(void *dst, const void *src, size_t bytes, void *stream);
int pcuda_d2h(void *dst, const void *src, size_t bytes);

/* The benchmark's unit of work: ACC[i] += sum over PASSES of f(DATA[i]), a
 * memory-bound-then-compute-bound kernel whose cost scales with PASSES. */
int pcuda_burn(float *acc, const float *data, size_t n, int passes, void *stream);

#ifdef __cplusplus
}
#endif

#endif
