/* station_health — per-station last sample and gaps of a live locate run. */
#include "stream/station_health.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

#define NONE INT64_MIN /* no valid sample yet */

struct sta_fig {           /* what a reader sees of one station */
    int64_t last_ns;       /* the worst channel's last valid sample; NONE */
    int64_t gaps;          /* the worst channel's gaps */
    double gap_s;          /* the worst channel's seconds of invalid samples */
    int channels;          /* channels matched to it */
};

struct chan_state {        /* worker only */
    int sta;               /* station index, -1 unmatched */
    bool in_gap;           /* its last sample (or the time before it) was missing */
    int64_t last_ns, gaps;
    double gap_s;
    struct trace_channel id;
};

struct station_health {
    int n;
    struct station *st;            /* copies: names and positions */
    pthread_mutex_t mu;
    struct sta_fig *fig;           /* n, under mu */
    struct sta_fig *work;          /* n, worker only (built, then stored under mu) */
    struct chan_state *ch;         /* worker only */
    int nch;
    int64_t next_t0;               /* the expected start of the next block; NONE first */
};

int station_health_create(struct station_health **out, const struct station_set *st)
{
    *out = NULL;
    struct station_health *h = calloc(1, sizeof *h);
    int n = st->n > 0 ? st->n : 0;
    if (!h || !(h->st = calloc((size_t)n + 1, sizeof *h->st)) || !(h->fig = calloc((size_t)n + 1, sizeof *h->fig)) ||
        !(h->work = calloc((size_t)n + 1, sizeof *h->work))) {
        if (h) {
            free(h->st);
            free(h->fig);
        }
        free(h);
        return err_set(-ENOMEM, "station health: out of memory for %d stations", n);
    }
    h->n = n;
    if (n)
        memcpy(h->st, st->st, (size_t)n * sizeof *h->st);
    for (int i = 0; i < n; i++)
        h->fig[i].last_ns = NONE;
    h->next_t0 = NONE;
    pthread_mutex_init(&h->mu, NULL);
    *out = h;
    return 0;
}

void station_health_destroy(struct station_health *h)
{
    if (!h)
        return;
    pthread_mutex_destroy(&h->mu);
    free(h->st);
    free(h->fig);
    free(h->work);
    free(h->ch);
    free(h);
}

static int find_station(const struct station_health *h, const struct trace_channel *c)
{
    for (int i = 0; i < h->n; i++) {
        const struct station *s = &h->st[i];
        if (strcmp(s->name, c->sta) == 0 && (!s->net[0] || !c->net[0] || strcmp(s->net, c->net) == 0))
            return i;
    }
    return -1;
}

/* The channels changed (the first block, or a restarted stream): match them again and
 * start their counts afresh. */
static int rematch(struct station_health *h, const struct trace_block *b)
{
    struct chan_state *ch = calloc((size_t)b->nrec + 1, sizeof *ch);
    if (!ch)
        return -ENOMEM;
    bool by_position = true;
    for (int r = 0; r < b->nrec && b->chan; r++)
        if (b->chan[r].sta[0])
            by_position = false;
    for (int r = 0; r < b->nrec; r++) {
        if (b->chan)
            ch[r].id = b->chan[r];
        ch[r].sta = by_position ? (r < h->n ? r : -1) : find_station(h, &b->chan[r]);
        ch[r].last_ns = NONE;
    }
    free(h->ch);
    h->ch = ch;
    h->nch = b->nrec;
    return 0;
}

static bool same_channels(const struct station_health *h, const struct trace_block *b)
{
    if (!h->ch || h->nch != b->nrec)
        return false;
    for (int r = 0; r < b->nrec && b->chan; r++)
        if (memcmp(&h->ch[r].id, &b->chan[r], sizeof b->chan[r]) != 0)
            return false;
    return true;
}

void station_health_block(struct station_health *h, const struct trace_block *b)
{
    if (!h || !b || b->nrec <= 0 || b->ns <= 0 || !(b->dt > 0))
        return;
    if (!same_channels(h, b) && rematch(h, b) < 0)
        return; /* out of memory: the figures stay as they were */
    int64_t t0 = b->t0_ns, dt_ns = llround(b->dt * 1e9);
    /* A jump forward: every channel misses that stretch. */
    if (h->next_t0 != NONE && t0 > h->next_t0 + dt_ns / 2) {
        double jump = 1e-9 * (double)(t0 - h->next_t0);
        for (int r = 0; r < h->nch; r++) {
            struct chan_state *c = &h->ch[r];
            c->gaps += !c->in_gap;
            c->in_gap = true;
            c->gap_s += jump;
        }
    }
    h->next_t0 = t0 + (int64_t)llround((double)b->ns * b->dt * 1e9);
    for (int r = 0; r < h->nch; r++) {
        struct chan_state *c = &h->ch[r];
        if (b->chan_ok && !b->chan_ok[r]) { /* dead for the whole block */
            c->gaps += !c->in_gap;
            c->in_gap = true;
            c->gap_s += (double)b->ns * b->dt;
            continue;
        }
        int last = -1;
        int64_t missing = 0;
        for (int k = 0; k < b->ns; k++) {
            if (trace_block_valid(b, r, k)) {
                last = k;
                c->in_gap = false;
            } else {
                c->gaps += !c->in_gap;
                c->in_gap = true;
                missing++;
            }
        }
        c->gap_s += (double)missing * b->dt;
        if (last >= 0)
            c->last_ns = t0 + (int64_t)llround((double)last * b->dt * 1e9);
    }
    /* Each station: its worst channel. */
    for (int i = 0; i < h->n; i++)
        h->work[i] = (struct sta_fig){.last_ns = NONE};
    for (int r = 0; r < h->nch; r++) {
        const struct chan_state *c = &h->ch[r];
        if (c->sta < 0)
            continue;
        struct sta_fig *f = &h->work[c->sta];
        if (f->channels == 0 || c->last_ns < f->last_ns)
            f->last_ns = c->last_ns;
        if (c->gaps > f->gaps)
            f->gaps = c->gaps;
        if (c->gap_s > f->gap_s)
            f->gap_s = c->gap_s;
        f->channels++;
    }
    pthread_mutex_lock(&h->mu);
    memcpy(h->fig, h->work, (size_t)h->n * sizeof *h->fig);
    pthread_mutex_unlock(&h->mu);
}

static void station_name(const struct station *s, char *out, size_t len)
{
    if (s->net[0])
        snprintf(out, len, "%s.%s", s->net, s->name);
    else
        snprintf(out, len, "%s", s->name);
}

static char *dump(json_t *o)
{
    char *js = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(o);
    return js;
}

char *station_health_positions(const struct station_health *h)
{
    json_t *a = json_array();
    for (int i = 0; a && i < h->n; i++) {
        char name[32];
        station_name(&h->st[i], name, sizeof name);
        json_array_append_new(a, json_pack("{s:s, s:f, s:f, s:f}", "name", name, "x", h->st[i].x, "y",
                                           h->st[i].y, "z", h->st[i].z));
    }
    return dump(a);
}

struct ranked {
    int i;
    struct sta_fig f;
};

/* The worst first: no data, then the oldest last sample, then the most gaps; then the
 * station file's order (a stable table while all is well). */
static int worse_first(const void *pa, const void *pb)
{
    const struct ranked *a = pa, *b = pb;
    if (a->f.last_ns != b->f.last_ns)
        return a->f.last_ns < b->f.last_ns ? -1 : 1; /* NONE is the smallest */
    if (a->f.gaps != b->f.gaps)
        return a->f.gaps > b->f.gaps ? -1 : 1;
    return a->i - b->i;
}

static json_t *last_json(int64_t ns)
{
    return ns == NONE ? json_null() : json_real(1e-9 * (double)ns);
}

char *station_health_status(struct station_health *h, int max_listed)
{
    struct ranked *r = malloc(((size_t)h->n + 1) * sizeof *r);
    if (!r)
        return NULL;
    pthread_mutex_lock(&h->mu);
    for (int i = 0; i < h->n; i++)
        r[i] = (struct ranked){.i = i, .f = h->fig[i]};
    pthread_mutex_unlock(&h->mu);
    qsort(r, (size_t)h->n, sizeof *r, worse_first);
    int listed = h->n < max_listed ? h->n : max_listed;
    json_t *o = json_object(), *list = json_array();
    for (int k = 0; k < listed; k++) {
        char name[32];
        station_name(&h->st[r[k].i], name, sizeof name);
        json_t *e = json_pack("{s:s, s:i, s:I, s:f}", "name", name, "channels", r[k].f.channels, "gaps",
                              (json_int_t)r[k].f.gaps, "gap_s", r[k].f.gap_s);
        json_object_set_new(e, "last", last_json(r[k].f.last_ns));
        json_array_append_new(list, e);
    }
    json_object_set_new(o, "n", json_integer(h->n));
    json_object_set_new(o, "list", list);
    if (listed < h->n) {
        int64_t gaps = 0, last = INT64_MAX;
        for (int k = listed; k < h->n; k++) {
            gaps += r[k].f.gaps;
            if (r[k].f.last_ns < last)
                last = r[k].f.last_ns;
        }
        json_t *m = json_pack("{s:i, s:I}", "n", h->n - listed, "gaps", (json_int_t)gaps);
        json_object_set_new(m, "last", last_json(last));
        json_object_set_new(o, "more", m);
    }
    free(r);
    return dump(o);
}
