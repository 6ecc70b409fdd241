/* seedlink_blocks — live records into trace blocks (see seedlink_blocks.h). */
#define LOG_COMPONENT "seedlink"
#include "io/seedlink_blocks.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"
#include "stream/log.h"

#define SEQ_NONE UINT64_MAX
#define MAX_CHANNELS 4096
#define MAX_STATIONS 4096
/* Room beyond the latency for one record (65536-byte Steim-2 holds < 131072 samples). */
#define RECORD_ROOM 131072

struct pending {
    uint64_t seq;
    int64_t end; /* sample index after the record's last sample */
};

struct chan {
    struct trace_channel id;
    int sta;               /* index into stations */
    float *x;              /* samples [cursor, cursor + cap) */
    uint8_t *m;            /* 1 = present */
    int64_t cap;
    int64_t hw;            /* index after the last sample received; INT64_MIN: none yet */
    int64_t last_start;    /* start of the latest record (out-of-order detection) */
    struct pending *q;     /* records with samples at or after the cursor, oldest first */
    int nq, qcap;
    bool late;             /* missing at the end of the last block (logged once per episode) */
    int64_t samples, gaps, gap_samples, overlap, ooo, late_samples, late_dropped, resumed;
};

struct station {
    char id[24];
    uint64_t last_seq;     /* last data sequence received; SEQ_NONE: none */
    uint64_t resume_seq;   /* from the state: ask for this one */
};

struct seedlink_blocks {
    int ns;
    double latency_s;
    bool have_grid, started;
    int64_t g_ns;          /* time of sample index 0 */
    double rate;
    int64_t cursor;        /* first sample of the next block */
    int64_t floor;         /* resumed: samples before this index were delivered already */
    int64_t maxcap;
    struct chan *ch;
    int nch;
    struct station *st;
    int nst;
    int64_t blocks, rejected, unknown;
    char *resume;          /* text after the last block */
    size_t resume_cap;
    int64_t max_hw;        /* the furthest any channel has reached */
    double *reach;         /* reach[j]: wall time (s) max_hw first reached the end of the
                              j-th block from the cursor (the latency clock of that block) */
    int nreach, reach_cap;
};

int seedlink_blocks_create(struct seedlink_blocks **out, int block_samples, double latency_s)
{
    if (block_samples < 1 || block_samples > (1 << 24))
        return err_set(-EINVAL, "seedlink blocks: block_samples %d (1 .. %d)", block_samples, 1 << 24);
    struct seedlink_blocks *b = calloc(1, sizeof *b);
    if (!b)
        return err_set(-ENOMEM, "seedlink: out of memory");
    b->ns = block_samples;
    b->latency_s = latency_s > 0 ? latency_s : 0;
    b->floor = INT64_MIN;
    b->max_hw = INT64_MIN;
    *out = b;
    return 0;
}

void seedlink_blocks_destroy(struct seedlink_blocks *b)
{
    if (!b)
        return;
    for (int i = 0; i < b->nch; i++) {
        free(b->ch[i].x);
        free(b->ch[i].m);
        free(b->ch[i].q);
    }
    free(b->ch);
    free(b->st);
    free(b->resume);
    free(b->reach);
    free(b);
}

static int station_index(struct seedlink_blocks *b, const char *id)
{
    for (int i = 0; i < b->nst; i++)
        if (strcmp(b->st[i].id, id) == 0)
            return i;
    if (b->nst >= MAX_STATIONS)
        return err_set(-E2BIG, "seedlink: more than %d stations", MAX_STATIONS);
    struct station *p = realloc(b->st, (size_t)(b->nst + 1) * sizeof *p);
    if (!p)
        return err_set(-ENOMEM, "seedlink: out of memory");
    b->st = p;
    struct station *s = &p[b->nst];
    memset(s, 0, sizeof *s);
    snprintf(s->id, sizeof s->id, "%s", id);
    s->last_seq = s->resume_seq = SEQ_NONE;
    return b->nst++;
}

static bool same_id(const struct trace_channel *a, const struct trace_channel *b)
{
    return !strcmp(a->net, b->net) && !strcmp(a->sta, b->sta) && !strcmp(a->loc, b->loc) &&
           !strcmp(a->cha, b->cha);
}

static int find_chan(const struct seedlink_blocks *b, const struct trace_channel *id)
{
    for (int i = 0; i < b->nch; i++)
        if (same_id(&b->ch[i].id, id))
            return i;
    return -1;
}

static int add_chan(struct seedlink_blocks *b, const struct trace_channel *id, const char *station)
{
    if (b->nch >= MAX_CHANNELS)
        return err_set(-E2BIG, "seedlink: more than %d channels", MAX_CHANNELS);
    int s = station_index(b, station);
    if (s < 0)
        return s;
    struct chan *p = realloc(b->ch, (size_t)(b->nch + 1) * sizeof *p);
    if (!p)
        return err_set(-ENOMEM, "seedlink: out of memory");
    b->ch = p;
    struct chan *c = &p[b->nch];
    memset(c, 0, sizeof *c);
    c->id = *id;
    c->sta = s;
    c->hw = INT64_MIN;
    c->last_start = INT64_MIN;
    return b->nch++;
}

int seedlink_blocks_declare(struct seedlink_blocks *b, const struct trace_channel *id, const char *station)
{
    if (b->started || find_chan(b, id) >= 0)
        return 0;
    int rc = add_chan(b, id, station);
    return rc < 0 ? rc : 0;
}

int seedlink_blocks_channels(const struct seedlink_blocks *b)
{
    return b->nch;
}

static void name_of(const struct trace_channel *c, char *s, size_t n)
{
    snprintf(s, n, "%s.%s.%s.%s", c->net, c->sta, c->loc, c->cha);
}

/* ---- resumption text ---- */

int seedlink_blocks_resume(struct seedlink_blocks *b, const char *text)
{
    const char *p = text;
    int line = 0;
    bool head = false, grid = false;
    while (*p) {
        line++;
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        char buf[256];
        if (l >= sizeof buf)
            return err_set(-EINVAL, "SeedLink resume state: line %d longer than %zu bytes", line, sizeof buf);
        memcpy(buf, p, l);
        buf[l] = '\0';
        p += l + (e ? 1 : 0);
        char a[64], bb[64], c[64], d[64];
        long long ll1, ll2;
        double rate;
        int ver;
        if (!head) {
            if (sscanf(buf, "seedlink-resume %d", &ver) != 1 || ver != 1)
                return err_set(-EINVAL, "SeedLink resume state: line %d: \"%s\" is not \"seedlink-resume 1\"",
                               line, buf);
            head = true;
        } else if (sscanf(buf, "grid %lld %lf %lld", &ll1, &rate, &ll2) == 3) {
            if (!(rate > 0 && rate < 1e7))
                return err_set(-EINVAL, "SeedLink resume state: line %d: rate %g", line, rate);
            b->g_ns = ll1;
            b->rate = rate;
            b->cursor = b->floor = ll2;
            b->have_grid = b->started = true;
            grid = true;
        } else if (sscanf(buf, "station %23s %63s", a, bb) == 2) {
            int s = station_index(b, a);
            if (s < 0)
                return s;
            if (strcmp(bb, "-") != 0) {
                char *end;
                unsigned long long v = strtoull(bb, &end, 10);
                if (*end)
                    return err_set(-EINVAL, "SeedLink resume state: line %d: sequence \"%s\"", line, bb);
                b->st[s].resume_seq = v;
            }
        } else if (sscanf(buf, "channel %63s %63s %63s %63s %lld", a, bb, c, d, &ll1) == 5) {
            /* net sta loc cha samples; "-" for an empty code */
            struct trace_channel id;
            memset(&id, 0, sizeof id);
            const char *f[4] = {a, bb, c, d};
            char *dst[4] = {id.net, id.sta, id.loc, id.cha};
            size_t cap[4] = {sizeof id.net, sizeof id.sta, sizeof id.loc, sizeof id.cha};
            for (int k = 0; k < 4; k++) {
                if (strcmp(f[k], "-") == 0)
                    continue;
                if (strlen(f[k]) >= cap[k])
                    return err_set(-EINVAL, "SeedLink resume state: line %d: code \"%s\" too long", line, f[k]);
                strcpy(dst[k], f[k]);
            }
            char st[40];
            snprintf(st, sizeof st, "%s_%s", id.net, id.sta);
            int i = find_chan(b, &id);
            if (i < 0 && (i = add_chan(b, &id, st)) < 0)
                return i;
            b->ch[i].samples = ll1;
        } else if (buf[0]) {
            return err_set(-EINVAL, "SeedLink resume state: line %d: \"%.60s\" not understood", line, buf);
        }
    }
    if (!head || !grid)
        return err_set(-EINVAL, "SeedLink resume state: no %s line", head ? "grid" : "seedlink-resume");
    return 0;
}

/* The oldest record of station S with samples not yet in a block (SEQ_NONE: none). */
static uint64_t oldest_pending(const struct seedlink_blocks *b, int s)
{
    uint64_t best = SEQ_NONE;
    for (int i = 0; i < b->nch; i++)
        if (b->ch[i].sta == s && b->ch[i].nq && b->ch[i].q[0].seq < best)
            best = b->ch[i].q[0].seq;
    return best;
}

static int find_station(const struct seedlink_blocks *b, const char *station)
{
    for (int i = 0; i < b->nst; i++)
        if (strcmp(b->st[i].id, station) == 0)
            return i;
    return -1;
}

uint64_t seedlink_blocks_next_seq(const struct seedlink_blocks *b, const char *station)
{
    int s = find_station(b, station);
    if (s < 0)
        return SEQ_NONE;
    /* within a run the buffer still holds what was received: the packet after the last */
    if (b->st[s].last_seq != SEQ_NONE)
        return b->st[s].last_seq + 1;
    return b->st[s].resume_seq;
}

/* For the state: the oldest record with samples not yet in a block (a restart loses
 * the buffer), else the packet after the last one received. */
static uint64_t resume_seq(const struct seedlink_blocks *b, int s)
{
    uint64_t p = oldest_pending(b, s);
    if (p != SEQ_NONE)
        return p;
    if (b->st[s].last_seq != SEQ_NONE)
        return b->st[s].last_seq + 1;
    return b->st[s].resume_seq;
}

bool seedlink_blocks_seen(const struct seedlink_blocks *b, const char *station, uint64_t seq)
{
    int s = find_station(b, station);
    if (s < 0)
        return false;
    uint64_t next = seedlink_blocks_next_seq(b, station);
    return next != SEQ_NONE && seq < next;
}

static int build_resume(struct seedlink_blocks *b)
{
    size_t need = 128 + (size_t)b->nst * 64 + (size_t)b->nch * 96;
    if (need > b->resume_cap) {
        char *p = realloc(b->resume, need);
        if (!p)
            return err_set(-ENOMEM, "seedlink: out of memory");
        b->resume = p;
        b->resume_cap = need;
    }
    size_t k = 0;
    char *r = b->resume;
    k += (size_t)snprintf(r + k, need - k, "seedlink-resume 1\ngrid %lld %.17g %lld\n", (long long)b->g_ns,
                          b->rate, (long long)b->cursor);
    for (int i = 0; i < b->nst; i++) {
        uint64_t s = resume_seq(b, i);
        if (s == SEQ_NONE)
            k += (size_t)snprintf(r + k, need - k, "station %s -\n", b->st[i].id);
        else
            k += (size_t)snprintf(r + k, need - k, "station %s %" PRIu64 "\n", b->st[i].id, s);
    }
    for (int i = 0; i < b->nch; i++) {
        const struct trace_channel *c = &b->ch[i].id;
        k += (size_t)snprintf(r + k, need - k, "channel %s %s %s %s %lld\n", c->net[0] ? c->net : "-",
                              c->sta[0] ? c->sta : "-", c->loc[0] ? c->loc : "-", c->cha[0] ? c->cha : "-",
                              (long long)b->ch[i].samples);
    }
    return 0;
}

/* ---- records in ---- */

static int64_t index_of(const struct seedlink_blocks *b, int64_t t_ns)
{
    return llround((double)(t_ns - b->g_ns) * 1e-9 * b->rate);
}

static int64_t time_of(const struct seedlink_blocks *b, int64_t k)
{
    return b->g_ns + (int64_t)llround((double)k * 1e9 / b->rate);
}

/* The most samples a channel buffer holds past the cursor. */
/* The latency part of the buffer in samples is capped: the rate comes off the wire (a
 * record may claim 1e9 Hz), and latency x rate would size every channel's buffer.  2^22
 * samples (16 MiB a channel) hold 70 minutes of latency at 1 kHz, 11 hours at 100 Hz. */
#define LATENCY_SAMPLES_MAX ((int64_t)1 << 22)

static int64_t max_buffer(const struct seedlink_blocks *b)
{
    double lat = ceil(b->latency_s * b->rate);
    int64_t l = lat < (double)LATENCY_SAMPLES_MAX ? (int64_t)lat : LATENCY_SAMPLES_MAX;
    return (int64_t)4 * b->ns + l + RECORD_ROOM;
}

bool seedlink_blocks_fits(const struct seedlink_blocks *b, int64_t end_ns)
{
    if (!b->have_grid)
        return true;
    return index_of(b, end_ns) - b->cursor <= max_buffer(b);
}

/* Is nothing buffered (every sample received is in a block)? */
static bool buffer_empty(const struct seedlink_blocks *b)
{
    for (int i = 0; i < b->nch; i++)
        for (int64_t k = 0; k < b->ch[i].cap; k++)
            if (b->ch[i].m[k])
                return false;
    return true;
}

/* Make channel C's buffer hold [cursor, cursor + n). */
static int reserve(struct chan *c, int64_t n)
{
    if (n <= c->cap)
        return 0;
    int64_t cap = c->cap ? c->cap : 1024;
    while (cap < n)
        cap *= 2;
    float *x = realloc(c->x, (size_t)cap * sizeof *x);
    if (!x)
        return err_set(-ENOMEM, "seedlink: out of memory");
    c->x = x;
    uint8_t *m = realloc(c->m, (size_t)cap);
    if (!m)
        return err_set(-ENOMEM, "seedlink: out of memory");
    c->m = m;
    memset(c->m + c->cap, 0, (size_t)(cap - c->cap));
    c->cap = cap;
    return 0;
}

/* Before the first block: move the cursor back to NEWC (< cursor), shifting every buffer. */
static int move_cursor_back(struct seedlink_blocks *b, int64_t newc)
{
    int64_t d = b->cursor - newc;
    for (int i = 0; i < b->nch; i++) {
        struct chan *c = &b->ch[i];
        if (!c->cap)
            continue;
        int64_t used = c->cap;
        int rc = reserve(c, used + d);
        if (rc)
            return rc;
        memmove(c->x + d, c->x, (size_t)used * sizeof *c->x);
        memmove(c->m + d, c->m, (size_t)used);
        memset(c->m, 0, (size_t)d);
    }
    b->cursor = newc;
    b->nreach = 0;
    b->max_hw = INT64_MIN; /* the block ends moved: their clocks start again */
    return 0;
}

static int push_pending(struct chan *c, uint64_t seq, int64_t end)
{
    if (c->nq == c->qcap) {
        int cap = c->qcap ? 2 * c->qcap : 16;
        struct pending *q = realloc(c->q, (size_t)cap * sizeof *q);
        if (!q)
            return err_set(-ENOMEM, "seedlink: out of memory");
        c->q = q;
        c->qcap = cap;
    }
    c->q[c->nq++] = (struct pending){seq, end};
    return 0;
}

/* The furthest data moved to K at wall time NOW: start the latency clock of every block
 * whose end it passed for the first time. */
static void note_reach(struct seedlink_blocks *b, int64_t k, double now)
{
    if (b->max_hw != INT64_MIN && k <= b->max_hw)
        return;
    b->max_hw = k;
    int64_t ends = (k - b->cursor) / b->ns; /* block ends reached */
    if (ends > 4096)
        ends = 4096; /* far ahead: the buffer bound (seedlink_blocks_fits) forces those out */
    while (b->nreach < ends) {
        if (b->nreach == b->reach_cap) {
            int cap = b->reach_cap ? 2 * b->reach_cap : 16;
            double *p = realloc(b->reach, (size_t)cap * sizeof *p);
            if (!p)
                return; /* without the clock the block waits for completeness or the bound */
            b->reach = p;
            b->reach_cap = cap;
        }
        b->reach[b->nreach++] = now;
    }
}

int seedlink_blocks_add(struct seedlink_blocks *b, const struct seedlink_record *r, double now)
{
    char nm[64];
    name_of(&r->id, nm, sizeof nm);
    if (!(r->rate > 0) || r->n < 0) {
        b->rejected++;
        log_warn("%s sequence %" PRIu64 ": sample rate %g: record rejected", nm, r->seq, r->rate);
        return 1;
    }
    int s = station_index(b, r->station);
    if (s < 0)
        return s;
    int i = find_chan(b, &r->id);
    if (i < 0) {
        if (b->started) {
            if (b->unknown++ < 20)
                log_warn("%s sequence %" PRIu64 ": a channel not in the stream's channel set (it "
                         "appeared after the first block): dropped (counted)", nm, r->seq);
            b->st[s].last_seq = r->seq;
            return 1;
        }
        if ((i = add_chan(b, &r->id, r->station)) < 0)
            return i;
        log_info("channel %s joins the stream (from its first record)", nm);
    }
    if (!b->have_grid) {
        b->g_ns = r->t0_ns;
        b->rate = r->rate;
        b->cursor = 0;
        b->have_grid = true;
    } else if (fabs(r->rate / b->rate - 1.0) > 1e-6) {
        b->rejected++;
        log_warn("%s sequence %" PRIu64 ": sampled at %g Hz, the stream at %g Hz: record rejected", nm,
                 r->seq, r->rate, b->rate);
        b->st[s].last_seq = r->seq;
        return 1;
    }
    struct chan *c = &b->ch[i];
    b->st[s].last_seq = r->seq;
    int64_t k0 = index_of(b, r->t0_ns), k1 = k0 + r->n;
    if (!b->started && k0 < b->cursor) {
        /* Before the first block the cursor follows the oldest record back, and every
         * buffer grows by the distance: bounded as the far-ahead case is, or one stale
         * record (a station whose newest data are a day or a century old) sizes the
         * buffers from its time stamp (cursor - k0 samples per channel). */
        int64_t hi = k1;
        for (int j = 0; j < b->nch; j++)
            hi = b->ch[j].hw > hi ? b->ch[j].hw : hi;
        if (hi - k0 > max_buffer(b)) {
            b->rejected++;
            log_warn("%s sequence %" PRIu64 ": starts %lld samples (%.3f s) before the data buffered, "
                     "more than the buffer holds (%lld): record rejected", nm, r->seq, (long long)(b->cursor - k0),
                     (double)(b->cursor - k0) / b->rate, (long long)max_buffer(b));
            return 1;
        }
        int rc = move_cursor_back(b, k0);
        if (rc)
            return rc;
    }
    if (c->hw != INT64_MIN && k0 > c->hw) {
        c->gaps++;
        log_warn("%s sequence %" PRIu64 ": gap of %lld samples (%.3f s) before this record", nm, r->seq,
                 (long long)(k0 - c->hw), (double)(k0 - c->hw) / b->rate);
    }
    if (c->last_start != INT64_MIN && k0 < c->last_start) {
        c->ooo++;
        log_warn("%s sequence %" PRIu64 ": out of order: starts %lld samples before the previous record",
                 nm, r->seq, (long long)(c->last_start - k0));
    }
    c->last_start = k0;
    if (k1 - b->cursor > max_buffer(b)) {
        /* far ahead (a time jump): the caller has emitted what was buffered; the next
         * block starts at this record, as the file reader starts at the next data */
        if (!buffer_empty(b) || r->n > max_buffer(b)) {
            b->rejected++;
            log_warn("%s sequence %" PRIu64 ": %lld samples beyond the buffer: record rejected", nm, r->seq,
                     (long long)(k1 - b->cursor));
            return 1;
        }
        log_warn("%s sequence %" PRIu64 ": the stream jumps %lld samples (%.3f s) ahead", nm, r->seq,
                 (long long)(k0 - b->cursor), (double)(k0 - b->cursor) / b->rate);
        b->cursor = k0;
        b->nreach = 0;
        b->max_hw = INT64_MIN;
        for (int i = 0; i < b->nch; i++)
            b->ch[i].nq = 0; /* every earlier record is in a block */
    }
    int64_t used = k1 - b->cursor;
    if (used > 0) {
        int rc = reserve(c, used);
        if (rc)
            return rc;
    }
    int64_t before = 0, resumed = 0, overlap = 0;
    for (int64_t j = 0; j < r->n; j++) {
        int64_t k = k0 + j;
        if (k < b->cursor) {
            if (k < b->floor)
                resumed++;
            else
                before++;
            continue;
        }
        size_t at = (size_t)(k - b->cursor);
        if (c->m[at]) {
            overlap++;
            continue;
        }
        c->x[at] = r->x[j];
        c->m[at] = 1;
    }
    c->resumed += resumed;
    c->late_dropped += before;
    c->overlap += overlap;
    if (before)
        log_warn("%s sequence %" PRIu64 ": %lld samples late (their block has left): dropped (counted)",
                 nm, r->seq, (long long)before);
    if (overlap)
        log_warn("%s sequence %" PRIu64 ": %lld samples overlap data already received: the first kept",
                 nm, r->seq, (long long)overlap);
    if (k1 > c->hw || c->hw == INT64_MIN)
        c->hw = k1;
    note_reach(b, k1, now);
    if (k1 > b->cursor) {
        int rc = push_pending(c, r->seq, k1);
        if (rc)
            return rc;
    }
    return before ? 1 : 0;
}

/* ---- blocks out ---- */

bool seedlink_blocks_ready(const struct seedlink_blocks *b, bool flush, double now)
{
    if (!b->have_grid || b->nch == 0)
        return false;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int i = 0; i < b->nch; i++) {
        int64_t h = b->ch[i].hw;
        lo = h < lo ? h : lo;
        hi = h > hi ? h : hi;
    }
    int64_t end = b->cursor + b->ns;
    if (flush)
        return hi > b->cursor;
    if (lo != INT64_MIN && lo >= end)
        return true;
    /* some channel reached the end LATENCY seconds ago (wall time): the rest are late */
    return hi >= end && b->nreach > 0 && now - b->reach[0] >= b->latency_s;
}

size_t seedlink_blocks_bytes(const struct seedlink_blocks *b)
{
    size_t r = (size_t)b->nch, ns = (size_t)b->ns;
    return r * ns * (sizeof(float) + 1) + r * sizeof(struct trace_channel) + 128 + (size_t)b->nst * 64 +
           r * 96 + 64;
}

int seedlink_blocks_emit(struct seedlink_blocks *b, void *mem, size_t bytes, bool force,
                         struct trace_block *blk, const char **resume)
{
    if (!b->have_grid || b->nch == 0)
        return 1;
    int64_t hi = INT64_MIN;
    for (int i = 0; i < b->nch; i++)
        hi = b->ch[i].hw > hi ? b->ch[i].hw : hi;
    if (hi <= b->cursor && !force)
        return 1;
    /* a block without any sample: jump to the next data (as the file reader does) */
    int64_t first = INT64_MAX;
    for (int i = 0; i < b->nch; i++) {
        const struct chan *c = &b->ch[i];
        int64_t lim = c->hw == INT64_MIN ? 0 : c->hw - b->cursor;
        lim = lim < c->cap ? lim : c->cap;
        for (int64_t k = 0; k < lim; k++)
            if (c->m[k]) {
                first = k < first ? k : first;
                break;
            }
    }
    if (first == INT64_MAX)
        return 1; /* nothing buffered at all */
    if (first >= b->ns) {
        int64_t jump = first;
        for (int i = 0; i < b->nch; i++) {
            struct chan *c = &b->ch[i];
            if (c->cap > jump) {
                memmove(c->x, c->x + jump, (size_t)(c->cap - jump) * sizeof *c->x);
                memmove(c->m, c->m + jump, (size_t)(c->cap - jump));
                memset(c->m + c->cap - jump, 0, (size_t)jump);
            } else {
                memset(c->m, 0, (size_t)c->cap);
            }
        }
        log_warn("no data for %lld samples (%.3f s) on any channel: the stream jumps ahead",
                 (long long)jump, (double)jump / b->rate);
        b->cursor += jump;
        b->nreach = 0;
    }
    int ns = b->ns;
    bool flush_tail = hi < b->cursor + ns;
    if (flush_tail && !force) /* the end of the input: a shorter last block */
        ns = (int)(hi - b->cursor);
    if (ns <= 0)
        return 1;
    size_t r = (size_t)b->nch;
    size_t need = r * (size_t)ns * (sizeof(float) + 1) + r * sizeof(struct trace_channel);
    int rc = build_resume(b); /* sized below; built again after the cursor moves */
    if (rc)
        return rc;
    if (need + b->resume_cap > bytes)
        return err_set(-EFBIG, "seedlink: a block of %zu channels x %d samples needs %zu bytes, a slot "
                       "holds %zu ([input] slot_mib)", r, ns, need + b->resume_cap, bytes);
    float *data = mem;
    uint8_t *mask = (uint8_t *)(data + r * (size_t)ns);
    struct trace_channel *chan = (struct trace_channel *)(mask + r * (size_t)ns);
    char *text = (char *)(chan + r);
    int64_t t0 = time_of(b, b->cursor);
    for (size_t i = 0; i < r; i++) {
        struct chan *c = &b->ch[i];
        chan[i] = c->id;
        float *d = data + i * (size_t)ns;
        uint8_t *m = mask + i * (size_t)ns;
        int64_t have = c->cap < ns ? c->cap : ns, valid = 0, gap = 0, late = 0;
        for (int64_t k = 0; k < ns; k++) {
            bool ok = k < have && c->m[k];
            m[k] = ok;
            d[k] = ok ? c->x[k] : NAN;
            if (ok)
                valid++;
            else if (c->hw != INT64_MIN && b->cursor + k < c->hw)
                gap++;
            else
                late++;
        }
        c->samples += valid;
        c->gap_samples += gap;
        c->late_samples += late;
        char nm[64];
        if (late && !c->late) {
            name_of(&c->id, nm, sizeof nm);
            log_warn("%s: late: %lld samples missing at the end of block %lld (t0 %lld ns): invalid, "
                     "not zero (counted)", nm, (long long)late, (long long)b->blocks, (long long)t0);
        } else if (!late && c->late) {
            name_of(&c->id, nm, sizeof nm);
            log_info("%s: caught up", nm);
        }
        c->late = late > 0;
        /* shift the buffer by NS; drop records now wholly delivered */
        if (c->cap > ns) {
            memmove(c->x, c->x + ns, (size_t)(c->cap - ns) * sizeof *c->x);
            memmove(c->m, c->m + ns, (size_t)(c->cap - ns));
            memset(c->m + c->cap - ns, 0, (size_t)ns);
        } else {
            memset(c->m, 0, (size_t)c->cap);
        }
    }
    b->cursor += ns;
    b->started = true;
    if (ns == b->ns && b->nreach > 0) { /* the next block's clock moves to the front */
        memmove(b->reach, b->reach + 1, (size_t)(b->nreach - 1) * sizeof *b->reach);
        b->nreach--;
    } else {
        b->nreach = 0; /* a shorter (last) block: the block ends moved; restart the clocks */
    }
    for (size_t i = 0; i < r; i++) {
        struct chan *c = &b->ch[i];
        int keep = 0;
        for (int j = 0; j < c->nq; j++)
            if (c->q[j].end > b->cursor)
                c->q[keep++] = c->q[j];
        c->nq = keep;
    }
    if ((rc = build_resume(b)))
        return rc;
    size_t tl = strlen(b->resume) + 1;
    if (need + tl > bytes)
        return err_set(-EFBIG, "seedlink: block and resume text need %zu bytes, a slot holds %zu", need + tl,
                       bytes);
    memcpy(text, b->resume, tl);
    *blk = (struct trace_block){.seq = b->blocks, .t0_ns = t0, .dt = 1.0 / b->rate, .nrec = (int)r,
                                .ns = ns, .chan = chan, .data = data, .mask = mask};
    *resume = text;
    b->blocks++;
    return 0;
}

void seedlink_blocks_stats(const struct seedlink_blocks *b, struct seedlink_blocks_stats *st)
{
    memset(st, 0, sizeof *st);
    st->blocks = b->blocks;
    st->rejected = b->rejected;
    st->unknown_channel_records = b->unknown;
    for (int i = 0; i < b->nch; i++) {
        const struct chan *c = &b->ch[i];
        st->samples += c->samples;
        st->gaps += c->gaps;
        st->gap_samples += c->gap_samples;
        st->overlap_samples += c->overlap;
        st->out_of_order += c->ooo;
        st->late_samples += c->late_samples;
        st->late_dropped += c->late_dropped;
        st->resumed_dropped += c->resumed;
    }
}

void seedlink_blocks_log_counts(const struct seedlink_blocks *b)
{
    for (int i = 0; i < b->nch; i++) {
        const struct chan *c = &b->ch[i];
        char nm[64];
        name_of(&c->id, nm, sizeof nm);
        log_info("channel %s: %lld samples, %lld gaps (%lld samples missing), %lld overlapping, "
                 "%lld out-of-order records, %lld late (missing at a block's end), %lld late dropped, "
                 "%lld resumed dropped",
                 nm, (long long)c->samples, (long long)c->gaps, (long long)c->gap_samples,
                 (long long)c->overlap, (long long)c->ooo, (long long)c->late_samples,
                 (long long)c->late_dropped, (long long)c->resumed);
    }
}
