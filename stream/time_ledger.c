/* time_ledger — processed time as sorted disjoint intervals (see time_ledger.h). */
#include "stream/time_ledger.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

void time_ledger_init(struct time_ledger *t)
{
    memset(t, 0, sizeof *t);
}

void time_ledger_free(struct time_ledger *t)
{
    free(t->iv);
    time_ledger_init(t);
}

bool time_ledger_covers(const struct time_ledger *t, int64_t start, int64_t end)
{
    /* binary search for the last interval starting at or before START */
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->iv[2 * mid] <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && end <= t->iv[2 * (lo - 1) + 1];
}

int64_t time_ledger_last(const struct time_ledger *t)
{
    return t->n ? t->iv[2 * t->n - 1] : -1;
}

/* a - b without overflow, saturated to [0, INT64_MAX] (a >= b expected) */
static int64_t gap(int64_t a, int64_t b)
{
    if (a <= b)
        return 0;
    uint64_t d = (uint64_t)a - (uint64_t)b;
    return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}

static void remove_at(struct time_ledger *t, size_t i)
{
    memmove(&t->iv[2 * i], &t->iv[2 * (i + 1)], (t->n - i - 1) * 2 * sizeof(int64_t));
    t->n--;
}

int time_ledger_add(struct time_ledger *t, int64_t start, int64_t end, int64_t join_gap)
{
    if (end < start)
        return err_set(-EINVAL, "time ledger: interval ends (%lld) before it starts (%lld)",
                       (long long)end, (long long)start);
    if (join_gap < 0)
        join_gap = 0;
    /* first interval whose end reaches START - join_gap */
    size_t i = 0;
    while (i < t->n && gap(start, t->iv[2 * i + 1]) > join_gap)
        i++;
    if (i < t->n && gap(t->iv[2 * i], end) <= join_gap) {
        /* overlaps or nearly touches interval i: widen it, then swallow what follows */
        if (start < t->iv[2 * i])
            t->iv[2 * i] = start;
        if (end > t->iv[2 * i + 1])
            t->iv[2 * i + 1] = end;
        while (i + 1 < t->n && gap(t->iv[2 * (i + 1)], t->iv[2 * i + 1]) <= join_gap) {
            if (t->iv[2 * (i + 1) + 1] > t->iv[2 * i + 1])
                t->iv[2 * i + 1] = t->iv[2 * (i + 1) + 1];
            remove_at(t, i + 1);
        }
        return 0;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        int64_t *p = realloc(t->iv, cap * 2 * sizeof *p);
        if (!p)
            return err_set(-ENOMEM, "time ledger: out of memory (%zu intervals)", cap);
        t->iv = p;
        t->cap = cap;
    }
    memmove(&t->iv[2 * (i + 1)], &t->iv[2 * i], (t->n - i) * 2 * sizeof(int64_t));
    t->iv[2 * i] = start;
    t->iv[2 * i + 1] = end;
    t->n++;
    if (t->n <= TIME_LEDGER_MAX)
        return 0;
    /* Bounded: join the two neighbours closest in time.  Only a block replayed into
     * that gap later could then be skipped by mistake; the caller logs it. */
    size_t best = 0;
    int64_t best_gap = INT64_MAX;
    for (size_t k = 0; k + 1 < t->n; k++) {
        int64_t g = gap(t->iv[2 * (k + 1)], t->iv[2 * k + 1]);
        if (g < best_gap) {
            best_gap = g;
            best = k;
        }
    }
    t->iv[2 * best + 1] = t->iv[2 * (best + 1) + 1];
    remove_at(t, best + 1);
    return 1;
}

int time_ledger_load(struct time_ledger *t, const int64_t *pairs, size_t n_values, int64_t last_t_ns)
{
    time_ledger_free(t);
    if (n_values == 0) {
        if (last_t_ns < 0)
            return 0;
        return time_ledger_add(t, INT64_MIN, last_t_ns, 0) < 0 ? -ENOMEM : 0;
    }
    if (n_values % 2)
        return err_set(-EINVAL, "time ledger: %zu values, not (start, end) pairs", n_values);
    if (n_values / 2 > TIME_LEDGER_MAX)
        return err_set(-EINVAL, "time ledger: %zu intervals, at most %d are kept", n_values / 2,
                       TIME_LEDGER_MAX);
    for (size_t k = 0; k < n_values / 2; k++) {
        if (pairs[2 * k + 1] < pairs[2 * k] || (k && pairs[2 * k] <= pairs[2 * k - 1]))
            return err_set(-EINVAL, "time ledger: interval %zu [%lld, %lld] is not after the one "
                           "before it: a damaged ledger", k, (long long)pairs[2 * k],
                           (long long)pairs[2 * k + 1]);
    }
    t->iv = malloc(n_values * sizeof *t->iv);
    if (!t->iv)
        return err_set(-ENOMEM, "time ledger: out of memory");
    memcpy(t->iv, pairs, n_values * sizeof *t->iv);
    t->n = t->cap = n_values / 2;
    return 0;
}
