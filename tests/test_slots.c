/* Slots and the SPSC queue: every slot goes round ingest -> worker -> ingest; reserve
 * blocks (back-pressure) while every slot is full; the close drains; a producer and a
 * consumer thread pass a long sequence in order. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "io/uring_reader.h"
#include "stream/slots.h"
#include "stream/spsc.h"

Test(slots, reserve_commit_acquire_release_and_backpressure)
{
    struct uring_reader r;
    cr_assert_eq(uring_reader_init(&r, URING_AUTO), 0);
    struct slots s;
    cr_assert_eq(slots_create(&s, 3, 10000, 5000, &r, NULL), 0);
    cr_assert_eq(s.bytes % 4096, 0, "slots are page multiples");
    cr_assert_eq((uintptr_t)slot_data(&s, 1) % 4096, 0, "slots are page aligned (O_DIRECT)");
    cr_assert_not_null(s.staging);
    int a = slots_reserve(&s, 0), b = slots_reserve(&s, 0), c = slots_reserve(&s, 0);
    cr_assert(a >= 0 && b >= 0 && c >= 0 && a != b && b != c && a != c);
    /* Every slot taken: reserve waits and times out (the ingest stops reading). */
    cr_assert_eq(slots_reserve(&s, 20), -ETIMEDOUT);
    memset(slot_data(&s, a), 1, s.bytes);
    slots_commit(&s, a);
    slots_commit(&s, b);
    slots_unreserve(&s, c); /* a rejected message hands its slot back */
    cr_assert_eq(slots_reserve(&s, 0), c);
    slots_commit(&s, c);
    cr_assert_eq(slots_acquire(&s, 0), a);
    cr_assert_eq(slots_acquire(&s, 0), b);
    slots_release(&s, a);
    cr_assert_eq(slots_reserve(&s, 0), a);
    slots_close(&s);
    cr_assert_eq(slots_acquire(&s, 0), c);
    cr_assert_eq(slots_acquire(&s, 10), -EPIPE, "closed and drained");
    slots_destroy(&s);
    uring_reader_close(&r);
}

struct pc {
    struct spsc *q;
    int n;
    long sum;
    int in_order;
};

static void *producer(void *arg)
{
    struct pc *p = arg;
    for (int i = 0; i < p->n; i++)
        spsc_push(p->q, i, -1);
    spsc_close(p->q);
    return NULL;
}

Test(slots, spsc_threads_in_order)
{
    struct spsc q;
    cr_assert_eq(spsc_init(&q, 3), 0);
    cr_assert_eq(q.cap, 4);
    struct pc p = {.q = &q, .n = 200000, .in_order = 1};
    pthread_t t;
    pthread_create(&t, NULL, producer, &p);
    int v, expect = 0;
    while (spsc_pop(&q, &v, 1000) == 0) {
        if (v != expect)
            p.in_order = 0;
        expect++;
    }
    pthread_join(t, NULL);
    cr_assert(p.in_order);
    cr_assert_eq(expect, p.n);
    spsc_destroy(&q);
}

/* Both ends with deadlines that expire at once (timeout 0), retrying on -ETIMEDOUT:
 * every item arrives exactly once and in order.  An item found by the last try at the
 * deadline must be the call's result, not dropped (pop) or pushed again (push). */
static void *producer_timed(void *arg)
{
    struct pc *p = arg;
    for (int i = 0; i < p->n; i++)
        while (spsc_push(p->q, i, 0) == -ETIMEDOUT)
            ;
    spsc_close(p->q);
    return NULL;
}

Test(slots, spsc_timeouts_lose_and_repeat_nothing)
{
    struct spsc q;
    cr_assert_eq(spsc_init(&q, 2), 0);
    struct pc p = {.q = &q, .n = 50000};
    pthread_t t;
    pthread_create(&t, NULL, producer_timed, &p);
    int v, expect = 0, bad = 0, rc;
    while ((rc = spsc_pop(&q, &v, 0)) != -EPIPE) {
        if (rc == -ETIMEDOUT)
            continue;
        if (v != expect && !bad++)
            cr_log_error("item %d arrived where %d was due", v, expect);
        expect = v + 1;
    }
    pthread_join(t, NULL);
    cr_assert_eq(bad, 0, "%d items out of sequence (lost or repeated)", bad);
    cr_assert_eq(expect, p.n);
    spsc_destroy(&q);
}
