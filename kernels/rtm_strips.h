/* rtm_strips — where the boundary strategy keeps the strip it saves at every forward
 * step (kernels/rtm.h), and the copies that keep it there.
 *
 * Two stores, the same strips and so the same image, bit for bit:
 *   device  one device buffer of COUNT strips; the strip kernels write and read it
 *           directly (what boundary always did);
 *   host    page-locked host memory (dev_host_alloc) for the COUNT strips, and a ring of
 *           NSTAGE strips of device memory between it and the simulation.  Forward: the
 *           strip kernel writes strip i into slot i % NSTAGE on u's stream; a copy stream
 *           takes it to the host (D2H) while u steps on.  Backward: the copy stream
 *           fetches the next NSTAGE strips ahead (H2D, in the order the sweep loads them,
 *           nt - 3 down to 0) and u's strip kernel reads each from its slot.  Events order
 *           the two streams per slot: "filled" (the producer, the strip kernel or the
 *           H2D, is done) and "drained" (the consumer, the D2H or the strip kernel, is
 *           done and the slot may be overwritten).  The host thread never waits: a copy
 *           that falls behind holds u's stream back, never the other way round.
 *
 * Used when the strips do not fit the device but fit the host ([rtm] strip_store,
 * kernels/rtm_memory.h says the bytes): the reference TTI shot's strips are 83 GiB.
 * On the CPU the "device" is the host: the slots are malloc'd, the copies memcpy and
 * the streams and events no-ops, so the slot arithmetic and the order of the copies
 * run (and are tested: tests/test_rtm_strips.c) exactly as on the GPU. */
#ifndef SEISLIVE_RTM_STRIPS_H
#define SEISLIVE_RTM_STRIPS_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/backend.h"
#include "kernels/propagator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* [rtm] strip_store (the twin of conf/config.h's enum strip_store). */
enum rtm_strip_store {
    RTM_STRIPS_AUTO = 0,   /* device when the strips fit the budget; on a GPU, else the host */
    RTM_STRIPS_DEVICE = 1, /* always the device (boundary needs them all there) */
    RTM_STRIPS_HOST = 2,   /* always the host, staged through NSTAGE device slots */
};

#define RTM_STRIP_STAGES 3      /* default staging slots: triple-buffered */
#define RTM_STRIP_STAGES_MAX 16

/* Page-locked host memory kept by the engine from one shot to the next: pinning tens of
 * GiB takes seconds (docs/rtm.md, measured), and the next shot needs about as much. */
struct rtm_strip_host {
    void *p;
    size_t bytes;
    int how;      /* enum dev_pin_how it was made with */
    size_t unit;  /* its unit (one strip's bytes) */
};

/* At least BYTES of the engine's page-locked host memory in H, made as HOW (enum
 * dev_pin_how) in units of UNIT bytes (one strip: no copy spans two registrations);
 * reused when it is large enough and of the same unit, otherwise freed and allocated
 * again.  Returns 1 when it allocated, 0 when it reused the store, -errno.  Freed by
 * rtm_strip_host_free. */
int rtm_strip_host_get(struct rtm_strip_host *h, const struct sl_device *dev, size_t bytes, int how, size_t unit);
void rtm_strip_host_free(struct rtm_strip_host *h, const struct sl_device *dev);

struct rtm_strips {
    const struct sl_device *dev;
    bool gpu;          /* the simulation's buffers are device memory */
    bool host;         /* strips in host memory, staged */
    size_t sc;         /* floats per strip */
    int count;         /* strips */
    float *store;      /* COUNT strips: device memory, or (host) the page-locked host store */
    float *stage;      /* host: NSTAGE strips of device memory */
    int nstage;
    int tag[RTM_STRIP_STAGES_MAX]; /* the strip each slot holds or is being filled with (-1: none) */
    void *copy;        /* host: the copy stream (CUDA; NULL on the CPU) */
    void *filled[RTM_STRIP_STAGES_MAX], *drained[RTM_STRIP_STAGES_MAX];
    int want;          /* loads: the strip the next load must ask for (-1 before the first) */
    int fetched;       /* loads: the lowest strip fetched so far */
    long d2h, h2d;     /* strips copied out and back (host) */
};

/* A store of COUNT strips of SC floats in STORE (device memory, or with HOST the host
 * store: rtm_strip_host_get) with, for HOST, NSTAGE (1..RTM_STRIP_STAGES_MAX) slots in
 * STAGE (device memory, NSTAGE * SC floats).  GPU: the simulation lives on the device.
 * Creates the copy stream and the events (CUDA). */
int rtm_strips_init(struct rtm_strips *s, const struct sl_device *dev, bool gpu, size_t sc, int count, bool host,
                    float *store, float *stage, int nstage);
/* Save the strip of U's current level as strip I (0 .. count - 1, ascending); U's kernels
 * run on USTREAM (NULL: the default stream). */
int rtm_strips_save(struct rtm_strips *s, struct prop *u, void *ustream, int i);
/* Load strip I into U's current level (descending from the highest saved strip, each
 * once): the host store prefetches the next NSTAGE on the copy stream. */
int rtm_strips_load(struct rtm_strips *s, struct prop *u, void *ustream, int i);
/* Streams and events (the buffers are the caller's).  After a device synchronisation. */
void rtm_strips_fini(struct rtm_strips *s);

#ifdef __cplusplus
}
#endif

#endif
