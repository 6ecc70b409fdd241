/* rtm_device — the few memory operations the migration needs on its device: buffers
 * in host memory for the CPU reference, device memory for CUDA (the wave propagator
 * keeps its own; these hold stored wavefields, strips, checkpoints, traces and the
 * imaging accumulators).  Bytes allocated are counted so a shot can report its use. */
#ifndef SEISLIVE_RTM_DEVICE_H
#define SEISLIVE_RTM_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

int rtm_dev_alloc(const struct sl_device *dev, size_t bytes, void **out);
void rtm_dev_free(const struct sl_device *dev, void *p);
int rtm_dev_zero(const struct sl_device *dev, void *p, size_t bytes);
/* Host -> buffer and buffer -> host (the latter waits for queued work). */
int rtm_dev_put(const struct sl_device *dev, void *dst, const void *host, size_t bytes);
int rtm_dev_get(const struct sl_device *dev, void *host, const void *src, size_t bytes);
/* Wait for all queued work. */
int rtm_dev_sync(const struct sl_device *dev);
/* Free and total bytes of the device (CUDA), or available host memory (CPU). */
int rtm_dev_mem(const struct sl_device *dev, size_t *free_b, size_t *total_b);

#ifdef SEISLIVE_CUDA
int rtm_cu_alloc(size_t bytes, void **out);
void rtm_cu_free(void *p);
int rtm_cu_zero(void *p, size_t bytes);
int rtm_cu_put(void *dst, const void *host, size_t bytes);
int rtm_cu_get(void *host, const void *src, size_t bytes);
int rtm_cu_sync(void);
int rtm_cu_mem(size_t *free_b, size_t *total_b);
/* Streams (non-blocking) and events, so the source and receiver wavefields can step
 * at the same time; NULL-safe destroy. */
int rtm_cu_stream_create(void **stream);
void rtm_cu_stream_destroy(void *stream);
int rtm_cu_event_create(void **event);
void rtm_cu_event_destroy(void *event);
int rtm_cu_event_record(void *event, void *stream);
int rtm_cu_stream_wait(void *stream, void *event);
#endif

#ifdef __cplusplus
}
#endif

#endif
