/* revolve — checkpoint schedules; see revolve.h. */
#include "kernels/revolve.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

/* beta(s, r) = C(s + r, s): how many states s snaps reverse with r sweeps. */
static double beta(int s, int r)
{
    if (r < 0)
        return 0.0;
    double b = 1.0;
    for (int k = 1; k <= r; k++)
        b = b * (double)(s + k) / (double)k;
    return b;
}

long revolve_min_steps(int n, int snaps)
{
    if (n <= 1)
        return 0;
    if (snaps < 1)
        return -1;
    if (snaps == 1)
        return (long)n * (long)(n - 1) / 2;
    /* r: the repetition number, beta(s, r - 1) < n <= beta(s, r). */
    int r = 0;
    double b = 1.0;
    while (b < (double)n) {
        r++;
        b = b * (double)(snaps + r) / (double)r;
    }
    double steps = (double)r * (double)n - beta(snaps + 1, r - 1);
    if (steps > (double)LONG_MAX / 2)
        return -1;
    return (long)(steps + 0.5);
}

int revolve_uniform_segment(int n, int snaps)
{
    if (snaps < 1)
        snaps = 1;
    return (n + snaps - 1) / snaps;
}

static int push(struct rv_schedule *s, enum rv_action act, int slot, int from, int to)
{
    if (s->n_ops == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        struct rv_op *p = realloc(s->ops, cap * sizeof *p);
        if (!p)
            return err_set(-ENOMEM, "revolve: schedule of %zu operations", cap);
        s->ops = p;
        s->cap = cap;
    }
    s->ops[s->n_ops++] = (struct rv_op){act, slot, from, to};
    if (act == RV_ADVANCE)
        s->advances += to - from;
    return 0;
}

/* Where the current state is while generating. */
struct gen {
    struct rv_schedule *s;
    int cur;
};

static int advance(struct gen *g, int to)
{
    int rc = push(g->s, RV_ADVANCE, -1, g->cur, to);
    g->cur = to;
    return rc;
}

static int restore(struct gen *g, int slot, int state)
{
    if (g->cur == state)
        return 0;
    g->cur = state;
    return push(g->s, RV_RESTORE, slot, state, state);
}

/* Visit states a+n-1 .. a; state a is in SLOT; slots SLOT .. SLOT+S-1 are ours. */
static int rec(struct gen *g, int a, int n, int s, int slot)
{
    int rc;
    while (n > 1) {
        if (s == 1) {
            for (int j = n - 1; j >= 0; j--) {
                if ((rc = restore(g, slot, a)) || (j > 0 && (rc = advance(g, a + j))) ||
                    (rc = push(g->s, RV_VISIT, -1, a + j, a + j)))
                    return rc;
            }
            return 0;
        }
        /* Split where m + steps(n - m, s - 1) + steps(m, s) is least. */
        int best_m = 1;
        long best = -1;
        for (int m = 1; m < n; m++) {
            long c1 = revolve_min_steps(n - m, s - 1), c2 = revolve_min_steps(m, s);
            if (c1 < 0 || c2 < 0)
                continue;
            long c = m + c1 + c2;
            if (best < 0 || c < best) {
                best = c;
                best_m = m;
            }
        }
        if (best < 0)
            return err_set(-EOVERFLOW, "revolve: %d states with %d snaps overflows", n, s);
        if ((rc = restore(g, slot, a)) || (rc = advance(g, a + best_m)) ||
            (rc = push(g->s, RV_STORE, slot + 1, a + best_m, a + best_m)))
            return rc;
        if ((rc = rec(g, a + best_m, n - best_m, s - 1, slot + 1)))
            return rc;
        /* Then the first part, with all our slots free again. */
        n = best_m;
    }
    if ((rc = restore(g, slot, a)))
        return rc;
    return push(g->s, RV_VISIT, -1, a, a);
}

int revolve_binomial(int n, int snaps, struct rv_schedule *s)
{
    memset(s, 0, sizeof *s);
    if (n < 1 || snaps < 1)
        return err_set(-EINVAL, "revolve: %d states with %d snaps", n, snaps);
    if (snaps > n)
        snaps = n;
    s->n = n;
    s->snaps = snaps;
    struct gen g = {s, 0};
    int rc = push(s, RV_STORE, 0, 0, 0);
    if (!rc)
        rc = rec(&g, 0, n, snaps, 0);
    if (rc)
        revolve_free(s);
    return rc;
}

int revolve_uniform(int n, int snaps, struct rv_schedule *s)
{
    memset(s, 0, sizeof *s);
    if (n < 1 || snaps < 1)
        return err_set(-EINVAL, "revolve: %d states with %d snaps", n, snaps);
    int seg = revolve_uniform_segment(n, snaps);
    int nck = (n + seg - 1) / seg;
    s->n = n;
    s->snaps = nck;
    s->buf = seg;
    struct gen g = {s, 0};
    int rc = 0;
    for (int k = 0; k < nck && !rc; k++) {
        if (k > 0)
            rc = advance(&g, k * seg);
        if (!rc)
            rc = push(s, RV_STORE, k, k * seg, k * seg);
    }
    for (int k = nck - 1; k >= 0 && !rc; k--) {
        int lo = k * seg, hi = lo + seg < n ? lo + seg : n;
        rc = restore(&g, k, lo);
        for (int i = lo; i < hi && !rc; i++) {
            if (i > lo)
                rc = advance(&g, i);
            if (!rc)
                rc = push(s, RV_STORE_BUF, i - lo, i, i);
        }
        for (int i = hi - 1; i >= lo && !rc; i--)
            rc = push(s, RV_VISIT_BUF, i - lo, i, i);
    }
    if (rc)
        revolve_free(s);
    return rc;
}

void revolve_free(struct rv_schedule *s)
{
    free(s->ops);
    memset(s, 0, sizeof *s);
}

int revolve_check(const struct rv_schedule *s)
{
    int *slot = malloc(((size_t)s->snaps + 1) * sizeof *slot);
    int *buf = malloc(((size_t)s->buf + 1) * sizeof *buf);
    if (!slot || !buf) {
        free(slot);
        free(buf);
        return err_set(-ENOMEM, "revolve_check");
    }
    for (int i = 0; i <= s->snaps; i++)
        slot[i] = -1;
    for (int i = 0; i <= s->buf; i++)
        buf[i] = -1;
    int cur = 0, want = s->n - 1, rc = 0;
    long adv = 0;
    for (size_t k = 0; k < s->n_ops && !rc; k++) {
        const struct rv_op *o = &s->ops[k];
        switch (o->act) {
        case RV_ADVANCE:
            if (o->from != cur || o->to <= o->from)
                rc = err_set(-EINVAL, "op %zu: advance %d->%d while at %d", k, o->from, o->to, cur);
            adv += o->to - o->from;
            cur = o->to;
            break;
        case RV_STORE:
        case RV_RESTORE:
            if (o->slot < 0 || o->slot >= s->snaps) {
                rc = err_set(-EINVAL, "op %zu: slot %d of %d", k, o->slot, s->snaps);
                break;
            }
            if (o->act == RV_STORE) {
                if (o->from != cur)
                    rc = err_set(-EINVAL, "op %zu: store of %d while at %d", k, o->from, cur);
                slot[o->slot] = cur;
            } else {
                if (slot[o->slot] != o->from)
                    rc = err_set(-EINVAL, "op %zu: restore %d from a slot holding %d", k, o->from,
                                 slot[o->slot]);
                cur = o->from;
            }
            break;
        case RV_STORE_BUF:
            if (o->slot < 0 || o->slot >= s->buf || o->from != cur)
                rc = err_set(-EINVAL, "op %zu: buffer store", k);
            else
                buf[o->slot] = cur;
            break;
        case RV_VISIT:
        case RV_VISIT_BUF: {
            int st = o->act == RV_VISIT ? cur : (o->slot >= 0 && o->slot < s->buf ? buf[o->slot] : -1);
            if (st != o->from || st != want)
                rc = err_set(-EINVAL, "op %zu: visits %d (holds %d), expected %d", k, o->from, st, want);
            want--;
            break;
        }
        }
    }
    if (!rc && want != -1)
        rc = err_set(-EINVAL, "schedule stops before state %d", want);
    if (!rc && adv != s->advances)
        rc = err_set(-EINVAL, "advance count %ld, recorded %ld", adv, s->advances);
    free(slot);
    free(buf);
    return rc;
}
