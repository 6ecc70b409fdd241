#include "stream/spsc.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

int spsc_init(struct spsc *q, int cap)
{
    int c = 1;
    while (c < cap)
        c <<= 1;
    q->cap = c;
    q->buf = calloc((size_t)c, sizeof *q->buf);
    if (!q->buf)
        return -ENOMEM;
    atomic_init(&q->head, 0);
    atomic_init(&q->tail, 0);
    atomic_init(&q->closed, 0);
    atomic_init(&q->waiters, 0);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    return 0;
}

void spsc_destroy(struct spsc *q)
{
    if (!q->buf)
        return;
    free(q->buf);
    q->buf = NULL;
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
}

static void wake(struct spsc *q)
{
    /* Pairs with the waiter's increment-then-recheck: either it sees the new index or
     * we see it waiting (a lost wakeup would still end at the wait's timeout). */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(&q->waiters)) {
        pthread_mutex_lock(&q->mu);
        pthread_cond_broadcast(&q->cv);
        pthread_mutex_unlock(&q->mu);
    }
}

int spsc_try_push(struct spsc *q, int v)
{
    unsigned t = atomic_load_explicit(&q->tail, memory_order_relaxed);
    unsigned h = atomic_load_explicit(&q->head, memory_order_acquire);
    if (t - h >= (unsigned)q->cap)
        return -EAGAIN;
    q->buf[t & (unsigned)(q->cap - 1)] = v;
    atomic_store_explicit(&q->tail, t + 1, memory_order_release);
    wake(q);
    return 0;
}

int spsc_try_pop(struct spsc *q, int *v)
{
    unsigned h = atomic_load_explicit(&q->head, memory_order_relaxed);
    unsigned t = atomic_load_explicit(&q->tail, memory_order_acquire);
    if (h == t)
        return -EAGAIN;
    *v = q->buf[h & (unsigned)(q->cap - 1)];
    atomic_store_explicit(&q->head, h + 1, memory_order_release);
    wake(q);
    return 0;
}

static void deadline(struct timespec *ts, int ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* Wait until TRY succeeds, the deadline passes, or (pop) the queue is closed and empty. */
int spsc_push(struct spsc *q, int v, int timeout_ms)
{
    struct timespec ts;
    if (timeout_ms >= 0)
        deadline(&ts, timeout_ms);
    for (;;) {
        if (spsc_try_push(q, v) == 0)
            return 0;
        pthread_mutex_lock(&q->mu);
        atomic_fetch_add(&q->waiters, 1);
        int rc = 0;
        /* Re-check under the lock: the consumer's wake() takes it too. */
        unsigned t = atomic_load(&q->tail), h = atomic_load(&q->head);
        if (t - h >= (unsigned)q->cap)
            rc = timeout_ms >= 0 ? pthread_cond_timedwait(&q->cv, &q->mu, &ts)
                                 : pthread_cond_wait(&q->cv, &q->mu);
        atomic_fetch_sub(&q->waiters, 1);
        pthread_mutex_unlock(&q->mu);
        /* One last try at the deadline, and its outcome is final: looping after a
         * successful try would push V a second time. */
        if (rc == ETIMEDOUT)
            return spsc_try_push(q, v) == 0 ? 0 : -ETIMEDOUT;
    }
}

int spsc_pop(struct spsc *q, int *v, int timeout_ms)
{
    struct timespec ts;
    if (timeout_ms >= 0)
        deadline(&ts, timeout_ms);
    for (;;) {
        if (spsc_try_pop(q, v) == 0)
            return 0;
        if (atomic_load(&q->closed) && spsc_try_pop(q, v) != 0)
            return -EPIPE;
        pthread_mutex_lock(&q->mu);
        atomic_fetch_add(&q->waiters, 1);
        int rc = 0;
        if (atomic_load(&q->head) == atomic_load(&q->tail) && !atomic_load(&q->closed))
            rc = timeout_ms >= 0 ? pthread_cond_timedwait(&q->cv, &q->mu, &ts)
                                 : pthread_cond_wait(&q->cv, &q->mu);
        atomic_fetch_sub(&q->waiters, 1);
        pthread_mutex_unlock(&q->mu);
        /* One last try at the deadline, and its outcome is final: looping after a
         * successful try would overwrite *V with the next item (or time out), and the
         * item popped here would be lost (a slot lost this way stalled a job). */
        if (rc == ETIMEDOUT) {
            if (spsc_try_pop(q, v) == 0)
                return 0;
            return atomic_load(&q->closed) ? -EPIPE : -ETIMEDOUT;
        }
    }
}

void spsc_close(struct spsc *q)
{
    atomic_store(&q->closed, 1);
    pthread_mutex_lock(&q->mu);
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

int spsc_size(struct spsc *q)
{
    return (int)(atomic_load(&q->tail) - atomic_load(&q->head));
}
