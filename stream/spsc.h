/* spsc — a bounded single-producer / single-consumer queue of slot indices.
 *
 * The threads of the pipeline hand slots to each other through these (ingest ->
 * worker: filled slots; worker -> ingest: free slots).  Push and pop are lock-free
 * on the fast path (one atomic load and one store each); a side that finds the queue
 * full or empty waits on a condition variable with a timeout, so it can poll the
 * stop flag and never spins the CPU away from the OpenMP kernels. */
#ifndef SEISLIVE_SPSC_H
#define SEISLIVE_SPSC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct spsc {
    int cap;                 /* power of two */
    int *buf;
    _Atomic unsigned head;   /* next to pop (consumer) */
    _Atomic unsigned tail;   /* next to push (producer) */
    _Atomic int closed;      /* producer finished: pop returns -EPIPE once empty */
    _Atomic int waiters;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* A queue holding up to CAP indices (rounded up to a power of two). 0 or -ENOMEM. */
int spsc_init(struct spsc *q, int cap);
void spsc_destroy(struct spsc *q);

/* Non-blocking: 0, or -EAGAIN when full / empty. */
int spsc_try_push(struct spsc *q, int v);
int spsc_try_pop(struct spsc *q, int *v);

/* Blocking with a timeout in ms (< 0 = forever): 0, -ETIMEDOUT, or for pop -EPIPE
 * when the queue is closed and empty. */
int spsc_push(struct spsc *q, int v, int timeout_ms);
int spsc_pop(struct spsc *q, int *v, int timeout_ms);

/* Producer side: no more pushes; wakes the consumer. */
void spsc_close(struct spsc *q);
int spsc_size(struct spsc *q);

#ifdef __cplusplus
}
#endif

#endif
