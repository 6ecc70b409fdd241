/* slots — N >= 2 pinned host buffers that carry units from ingest to the GPU worker.
 *
 * Memory: one mmap(MAP_ANONYMOUS | MAP_POPULATE) region, page-aligned slots, then
 * registered with io_uring as fixed buffers (file reads land in them directly), then
 * page-locked with cudaHostRegister (CUDA builds, a CUDA device) so H2D copies are
 * asynchronous DMA.  Torn down in the reverse order.
 *
 * Flow (two SPSC queues of indices):
 *   ingest:  i = slots_reserve()  ... fill slot i + its header ...  slots_commit(i)
 *   worker:  i = slots_acquire()  ... H2D copy / compute ...        slots_release(i)
 * The worker releases a slot only once the CUDA event recorded after its H2D copy has
 * completed (or, on the CPU, once the unit is processed), so a slot is never refilled
 * while the GPU may still read it.  A full pipeline blocks slots_reserve(): that is the
 * back-pressure that stops file reads and ZeroMQ receives. */
#ifndef SEISLIVE_SLOTS_H
#define SEISLIVE_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "io/source.h" /* struct slot_hdr: what a slot holds */
#include "kernels/backend.h"
#include "stream/spsc.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uring_reader;

struct slots {
    int n;
    size_t bytes;             /* per slot, a multiple of the page size */
    char *base;               /* n x bytes, mmap'd */
    struct iovec *iov;        /* one per slot (io_uring registration) */
    struct slot_hdr *hdr;
    bool cuda_pinned;
    struct sl_device pinned_on; /* the device pinned for (cuda_pinned) */
    struct uring_reader *ring;/* registered with, or NULL */
    struct spsc free_q;       /* worker -> ingest */
    struct spsc ready_q;      /* ingest -> worker */
    _Atomic long full_waits;  /* reserves that found no free slot (back-pressure) */
    int spare;                /* ingest side: a slot handed back unused, or -1 */
    char *staging;            /* ingest-only buffer after the slots (file reads that need
                                 decoding, e.g. SEG-Y), fixed buffer index n; may be NULL */
    size_t staging_bytes;
};

/* N slots of at least BYTES each, plus a staging buffer of STAGING bytes (0 = none)
 * for the ingest thread.  RING (may be NULL): register them as its fixed buffers
 * (staging = index N).  PIN (may be NULL): page-lock the slots for that device when it
 * is a GPU (dev_host_register, kernels/device.h; the calling thread bound to it). */
int slots_create(struct slots *s, int n, size_t bytes, size_t staging, struct uring_reader *ring,
                 const struct sl_device *pin);
void slots_destroy(struct slots *s);

static inline void *slot_data(const struct slots *s, int i)
{
    return s->base + (size_t)i * s->bytes;
}

/* Ingest side.  Reserve waits up to TIMEOUT_MS (< 0 forever) for a free slot: the
 * index, or -ETIMEDOUT (poll the stop flag and call again). */
int slots_reserve(struct slots *s, int timeout_ms);
void slots_commit(struct slots *s, int i);
/* Hand back a reserved slot unused (a rejected message). */
void slots_unreserve(struct slots *s, int i);
/* No more units (the worker's acquire returns -EPIPE once the queue drains). */
void slots_close(struct slots *s);

/* Worker side.  Acquire: the index, -ETIMEDOUT, or -EPIPE when closed and empty. */
int slots_acquire(struct slots *s, int timeout_ms);
void slots_release(struct slots *s, int i);

#ifdef __cplusplus
}
#endif

#endif
