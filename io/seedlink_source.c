/* seedlink_source — the SeedLink client and the block assembler as a runtime source
 * (see seedlink_source.h). */
#define LOG_COMPONENT "seedlink"
#include "io/seedlink_source.h"

#include <errno.h>
#include <inttypes.h>
#include <libmseed.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/mseed_read.h"
#include "io/seedlink.h"
#include "io/seedlink_blocks.h"
#include "stream/error.h"
#include "stream/log.h"

#define BACKOFF_START_S 0.5

struct seedlink_source {
    struct seedlink_source_conf c;
    char server[256];
    struct seedlink_selector *sel;
    int nsel;
    struct seedlink_blocks *blocks;
    MSRecord *msr;
    float *x;            /* one record's samples as floats */
    size_t xcap;
    uint64_t records, rejected, connections, resent;
    double last_record;  /* monotonic s: a record, or a (re)connection */
    double held_s;       /* time spent waiting for a free slot (back-pressure) */
    struct ingest *in;
};

static bool stop_cb(void *arg)
{
    return ingest_stopping(arg);
}

int seedlink_source_open(struct seedlink_source **out, const struct seedlink_source_conf *c)
{
    if (!c->server || !c->server[0])
        return err_set(-EINVAL, "[input] seedlink: no server (HOST:PORT)");
    if (c->n_streams == 0)
        return err_set(-EINVAL, "[input] streams: no stream selected (e.g. [\"XX_S01:HH?\"])");
    struct seedlink_source *s = calloc(1, sizeof *s);
    if (!s)
        return err_set(-ENOMEM, "seedlink: out of memory");
    s->c = *c;
    snprintf(s->server, sizeof s->server, "%s", c->server);
    s->sel = calloc(c->n_streams, sizeof *s->sel);
    int rc = s->sel ? 0 : -ENOMEM;
    for (size_t i = 0; !rc && i < c->n_streams; i++)
        rc = seedlink_selector_parse(c->streams[i], &s->sel[s->nsel++]);
    if (!rc)
        rc = seedlink_blocks_create(&s->blocks, c->block_samples, c->latency_s);
    if (!rc && c->resume && c->resume[0]) {
        rc = seedlink_blocks_resume(s->blocks, c->resume);
        if (!rc)
            log_info("SeedLink %s: resuming from the saved state: %d channels", s->server,
                     seedlink_blocks_channels(s->blocks));
    }
    if (rc) {
        seedlink_blocks_destroy(s->blocks);
        free(s->sel);
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* ---- one block out ---- */

/* The clock of the latency rule: wall time less the time the source was held by
 * back-pressure (records queued in the socket meanwhile are not late). */
static double clock_s(const struct seedlink_source *s)
{
    return source_now_s() - s->held_s;
}

static int emit_one(struct seedlink_source *s, struct ingest *in, bool force)
{
    double th = source_now_s();
    int i = ingest_reserve(in);
    double t0 = source_now_s();
    s->held_s += t0 - th;
    if (i < 0)
        return -ECANCELED;
    struct slot_hdr *h = &in->hdr[i];
    const char *resume = NULL;
    int rc = seedlink_blocks_emit(s->blocks, ingest_slot(in, i), in->slot_bytes, force, &h->block, &resume);
    if (rc) {
        ingest_unreserve(in, i);
        return rc;
    }
    h->kind = SLOT_TRACES;
    h->id = h->block.t0_ns;
    h->msg_seq = (uint64_t)h->block.seq;
    h->resume = resume;
    h->bytes = (size_t)(resume + strlen(resume) + 1 - (const char *)ingest_slot(in, i));
    h->t_arrive = t0;
    h->decode_s = source_now_s() - t0;
    snprintf(h->origin, sizeof h->origin, "SeedLink %.100s block %lld", s->server, (long long)h->block.seq);
    ingest_count(in, 1, 0);
    in->stats.accepted++;
    ingest_commit(in, i);
    return 0;
}

static int emit_ready(struct seedlink_source *s, struct ingest *in, bool flush)
{
    while (seedlink_blocks_ready(s->blocks, flush, clock_s(s))) {
        int rc = emit_one(s, in, false);
        if (rc)
            return rc == 1 ? 0 : rc;
    }
    return 0;
}

/* ---- records in ---- */

static int take_record(struct seedlink_source *s, struct ingest *in, const struct seedlink_packet *pk,
                       int proto)
{
    struct seedlink_packet pp = *pk, *p = &pp;
    char why[320];
    if (p->format == '3') {
        s->rejected++;
        ingest_count(in, 0, 1);
        log_warn("SeedLink %s sequence %" PRIu64 ": a miniSEED 3 record: this build decodes miniSEED 2 "
                 "(libmseed 2): rejected (counted)", s->server, p->seq);
        return 0;
    }
    if (mseed_decode_record(p->payload, (int)p->len, &s->msr, why, sizeof why) != 0) {
        s->rejected++;
        ingest_count(in, 0, 1);
        log_warn("SeedLink %s sequence %" PRIu64 ": record rejected: %s", s->server, p->seq, why);
        return 0;
    }
    MSRecord *m = s->msr;
    /* as the file reader bounds it: the conversion below wrapped a year-2400 record to
     * 1815 (a block there) */
    if (!mseed_start_fits(m->starttime)) {
        s->rejected++;
        ingest_count(in, 0, 1);
        log_warn("SeedLink %s sequence %" PRIu64 ": record rejected: start time outside the years 1685-2255",
                 s->server, p->seq);
        return 0;
    }
    /* one sample at most every 1000 s, as the wire format bounds dt: a slower rate
     * (miniSEED 2 reaches 9.3e-10 Hz) overflowed the record's end in ns below, and as
     * the first record's rate it became the grid, rejecting every real record after */
    if (m->numsamples > 0 && m->samprate < 1e-3) {
        s->rejected++;
        ingest_count(in, 0, 1);
        log_warn("SeedLink %s sequence %" PRIu64 ": record rejected: sample rate %g Hz (one sample in more than "
                 "1000 s)", s->server, p->seq, m->samprate);
        return 0;
    }
    /* and at most 1 MHz (no seismic recorder comes near): miniSEED 2 reaches 1.07e9 Hz,
     * and as the first record's rate that became the grid too, rejecting every real
     * record after it (the buffers' latency part is capped besides: seedlink_blocks.c) */
    if (m->numsamples > 0 && m->samprate > 1e6) {
        s->rejected++;
        ingest_count(in, 0, 1);
        log_warn("SeedLink %s sequence %" PRIu64 ": record rejected: sample rate %g Hz (above 1 MHz)", s->server,
                 p->seq, m->samprate);
        return 0;
    }
    int64_t n = m->numsamples;
    if ((size_t)n > s->xcap) {
        float *x = realloc(s->x, (size_t)n * sizeof *x);
        if (!x)
            return err_set(-ENOMEM, "seedlink: out of memory");
        s->x = x;
        s->xcap = (size_t)n;
    }
    for (int64_t j = 0; j < n; j++) {
        switch (m->sampletype) {
        case 'i': s->x[j] = (float)((int32_t *)m->datasamples)[j]; break;
        case 'f': s->x[j] = ((float *)m->datasamples)[j]; break;
        case 'd': s->x[j] = (float)((double *)m->datasamples)[j]; break;
        default: s->x[j] = 0.0f / 0.0f;
        }
    }
    struct seedlink_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.id.net, sizeof r.id.net, "%.7s", m->network);
    snprintf(r.id.sta, sizeof r.id.sta, "%.15s", m->station);
    snprintf(r.id.loc, sizeof r.id.loc, "%.7s", m->location);
    snprintf(r.id.cha, sizeof r.id.cha, "%.7s", m->channel);
    char station[40];
    snprintf(station, sizeof station, "%s_%s", r.id.net, r.id.sta);
    r.station = station;
    if (proto == 3)
        p->seq = seedlink_seq_unwrap24(seedlink_blocks_next_seq(s->blocks, station), p->seq);
    if (seedlink_blocks_seen(s->blocks, station, p->seq)) {
        /* as libslink does: a packet at or before the station's last is a resend */
        if (s->resent++ < 5)
            log_info("SeedLink %s: %s sequence %" PRIu64 " received already: skipped (counted)", s->server,
                     station, p->seq);
        return 0;
    }
    r.seq = p->seq;
    r.t0_ns = (int64_t)m->starttime * 1000; /* libmseed 2: microseconds */
    r.rate = m->samprate;
    r.x = s->x;
    r.n = n;
    int64_t end = r.t0_ns + (int64_t)((double)n / (r.rate > 0 ? r.rate : 1) * 1e9);
    while (!seedlink_blocks_fits(s->blocks, end)) { /* a jump far ahead: make room */
        int rc = emit_one(s, in, true);
        if (rc < 0)
            return rc;
        if (rc == 1)
            break;
    }
    s->records++;
    int rc = seedlink_blocks_add(s->blocks, &r, clock_s(s));
    if (rc < 0)
        return rc;
    return emit_ready(s, in, false);
}

/* ---- a connection ---- */

static void time_arg(int64_t ns, int proto, char *out, size_t n)
{
    time_t t = (time_t)(ns / 1000000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    if (proto == 4)
        strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
    else
        strftime(out, n, "%Y,%m,%d,%H,%M,%S", &tm);
}

/* Ask for STATION (NET_STA; may hold wildcards) with the selectors of SEL. */
static int ask_station(struct seedlink_source *s, struct seedlink_conn *c, const char *net, const char *sta,
                       const struct seedlink_selector *sel, uint64_t floor_seq)
{
    char id[40];
    snprintf(id, sizeof id, "%s_%s", net, sta);
    int rc = c->proto == 4 ? seedlink_command(c, "STATION %s", id) : seedlink_command(c, "STATION %s %s", sta, net);
    for (int k = 0; !rc && k < sel->nsel; k++) {
        const char *q = sel->sel[k];
        if (c->proto == 3) {
            rc = seedlink_command(c, "SELECT %s", q);
        } else if (strlen(q) == 5) { /* LLCCC -> LL_C_C_C (FDSN source id form) */
            bool empty = (q[0] == '-' && q[1] == '-') || (q[0] == ' ' && q[1] == ' ');
            rc = empty ? seedlink_command(c, "SELECT _%c_%c_%c", q[2], q[3], q[4])
                       : seedlink_command(c, "SELECT %c%c_%c_%c_%c", q[0], q[1], q[2], q[3], q[4]);
        } else {
            rc = seedlink_command(c, "SELECT *_%c_%c_%c", q[0], q[1], q[2]);
        }
    }
    if (rc)
        return rc;
    uint64_t seq = seedlink_blocks_next_seq(s->blocks, id);
    if (seq != UINT64_MAX && floor_seq != UINT64_MAX && floor_seq < seq)
        seq = floor_seq; /* see negotiate: a ring-wide sequence */
    char tb[40];
    if (seq != UINT64_MAX) {
        log_info("SeedLink %s: %s from sequence %" PRIu64, s->server, id, seq);
        return c->proto == 4 ? seedlink_command(c, "DATA %" PRIu64, seq)
                             : seedlink_command(c, "DATA %06" PRIX64, seq & 0xFFFFFF);
    }
    if (s->c.start_ns != INT64_MIN) {
        time_arg(s->c.start_ns, c->proto, tb, sizeof tb);
        log_info("SeedLink %s: %s from time %s", s->server, id, tb);
        return c->proto == 4 ? seedlink_command(c, "DATA ALL %s", tb) : seedlink_command(c, "TIME %s", tb);
    }
    log_info("SeedLink %s: %s from the next packet", s->server, id);
    return seedlink_command(c, "DATA");
}

static int negotiate(struct seedlink_source *s, struct seedlink_conn *c)
{
    int rc = seedlink_hello(c, s->c.protocol);
    if (rc)
        return rc;
    /* the stream list: the channel set, and the concrete stations behind wildcards */
    struct seedlink_stream *st = NULL;
    int nst = 0;
    if ((rc = seedlink_info_streams(c, &st, &nst))) {
        if (rc != -EPROTO)
            return rc;
        /* a server may refuse INFO STREAMS (access rules): go on without the list; the
         * channel set then comes from the records before the first block */
        log_warn("%s: going on without the stream list", err_msg());
        rc = 0;
    }
    char (*asked)[40] = calloc((size_t)nst + 1, sizeof *asked);
    int nasked = 0, declared = 0;
    /* ringserver numbers packets across its whole ring and, in a connection with several
     * stations, starts its one reader at the newest packet asked for (slclient.c,
     * "Track the newest packet ID"): a station asked from an older number would lose
     * the packets in between.  So there every station is asked from the lowest next
     * number, and the packets a station had already are skipped here by number
     * (seedlink_blocks_seen).  Servers numbering per station (SeisComP) get each
     * station's own number. */
    uint64_t floor_seq = UINT64_MAX;
    if (strstr(c->ident, "RingServer"))
        for (int i = 0; i < nst; i++) {
            char sid[40];
            snprintf(sid, sizeof sid, "%s_%s", st[i].net, st[i].sta);
            uint64_t q = seedlink_blocks_next_seq(s->blocks, sid);
            if (q < floor_seq)
                floor_seq = q;
        }
    if (!asked) {
        free(st);
        return err_set(-ENOMEM, "seedlink: out of memory");
    }
    for (int k = 0; !rc && k < s->nsel; k++) {
        const struct seedlink_selector *sel = &s->sel[k];
        bool any = false;
        for (int i = 0; !rc && i < nst; i++) {
            if (!seedlink_selector_match(sel, st[i].net, st[i].sta, st[i].loc, st[i].cha))
                continue;
            any = true;
            struct trace_channel id;
            memset(&id, 0, sizeof id);
            snprintf(id.net, sizeof id.net, "%s", st[i].net);
            snprintf(id.sta, sizeof id.sta, "%s", st[i].sta);
            snprintf(id.loc, sizeof id.loc, "%s", st[i].loc);
            snprintf(id.cha, sizeof id.cha, "%s", st[i].cha);
            char sid[40];
            snprintf(sid, sizeof sid, "%s_%s", st[i].net, st[i].sta);
            int before = seedlink_blocks_channels(s->blocks);
            if ((rc = seedlink_blocks_declare(s->blocks, &id, sid)))
                break;
            declared += seedlink_blocks_channels(s->blocks) - before;
            bool done = false;
            for (int j = 0; j < nasked; j++)
                done |= strcmp(asked[j], sid) == 0;
            if (!done) {
                snprintf(asked[nasked++], sizeof asked[0], "%s", sid);
                rc = ask_station(s, c, st[i].net, st[i].sta, sel, floor_seq);
            }
        }
        if (!rc && !any) { /* nothing listed yet: ask for the selector itself */
            log_warn("SeedLink %s: INFO STREAMS lists no stream for \"%s\": asking for it anyway",
                     s->server, s->c.streams[k]);
            rc = ask_station(s, c, sel->net, sel->sta, sel, floor_seq);
        }
    }
    free(asked);
    free(st);
    if (rc)
        return rc;
    if (declared)
        log_info("SeedLink %s: %d channels from INFO STREAMS (%d in the set)", s->server, declared,
                 seedlink_blocks_channels(s->blocks));
    if ((rc = seedlink_send(c, "END")))
        return rc;
    c->streaming = true;
    return 0;
}

/* One connection: 0 when the input ended (idle, stop), < 0 to reconnect or give up.
 * *GOT: records arrived (the back-off starts again from its shortest). */
static int session(struct seedlink_source *s, struct ingest *in, bool *got)
{
    struct seedlink_conn c;
    seedlink_init(&c, s->c.timeout_s, stop_cb, in);
    int rc = seedlink_connect(&c, s->server);
    if (!rc)
        rc = negotiate(s, &c);
    s->connections++;
    s->last_record = source_now_s();
    while (!rc) {
        struct seedlink_packet p;
        rc = seedlink_read_wait(&c, &p, 0.5);
        if (rc == 1) { /* quiet: a late station's block may be due; the idle end? */
            rc = emit_ready(s, in, false);
            if (rc)
                break;
            if (s->c.idle_s > 0 && source_now_s() - s->last_record > s->c.idle_s) {
                log_info("SeedLink %s: no record for %.1f s: input ends", s->server, s->c.idle_s);
                break;
            }
            continue;
        }
        if (rc)
            break;
        if (p.kind != SL_PKT_DATA)
            continue; /* INFO (keepalive answers) and unknown formats */
        *got = true;
        s->last_record = source_now_s();
        rc = take_record(s, in, &p, c.proto);
    }
    if (rc == -ECANCELED)
        rc = 0;
    seedlink_close(&c);
    return rc;
}

static int seedlink_run(void *ctx, struct ingest *in)
{
    struct seedlink_source *s = ctx;
    s->in = in;
    double backoff = BACKOFF_START_S;
    int rc = 0;
    for (;;) {
        bool got = false;
        rc = session(s, in, &got);
        if (ingest_stopping(in)) {
            rc = 0;
            break;
        }
        if (rc == 0) { /* the input ended: what is buffered goes */
            rc = emit_ready(s, in, true);
            if (rc == -ECANCELED)
                rc = 0;
            break;
        }
        if (rc == -EFBIG || rc == -ENOMEM || rc == -EINVAL)
            break; /* no reconnection helps */
        if (got)
            backoff = BACKOFF_START_S;
        log_warn("%s; reconnecting in %.1f s", err_msg(), backoff);
        double t0 = source_now_s();
        while (source_now_s() - t0 < backoff && !ingest_stopping(in)) {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (ingest_stopping(in)) {
            rc = 0;
            break;
        }
        backoff = 2 * backoff < s->c.backoff_max_s ? 2 * backoff : s->c.backoff_max_s;
    }
    struct seedlink_blocks_stats st;
    seedlink_blocks_stats(s->blocks, &st);
    seedlink_blocks_log_counts(s->blocks);
    log_info("SeedLink %s: %" PRIu64 " connections, %" PRIu64 " records, %" PRIu64 " rejected, %" PRIu64
             " resent by the server and skipped; %lld blocks, "
             "%lld samples, %lld gaps (%lld samples missing), %lld overlapping samples, %lld out-of-order "
             "records, %lld late samples (%lld dropped), %lld resumed samples dropped, %lld records of "
             "channels outside the set",
             s->server, s->connections, s->records, s->rejected, s->resent, (long long)st.blocks, (long long)st.samples,
             (long long)st.gaps, (long long)st.gap_samples, (long long)st.overlap_samples,
             (long long)st.out_of_order, (long long)st.late_samples, (long long)st.late_dropped,
             (long long)st.resumed_dropped, (long long)st.unknown_channel_records);
    return rc;
}

static void seedlink_close_source(void *ctx)
{
    struct seedlink_source *s = ctx;
    if (!s)
        return;
    seedlink_blocks_destroy(s->blocks);
    if (s->msr)
        msr_free(&s->msr);
    free(s->x);
    free(s->sel);
    free(s);
}

struct source seedlink_source_as_source(struct seedlink_source *s)
{
    return (struct source){.name = s->server, .ctx = s, .run = seedlink_run, .close = seedlink_close_source};
}
