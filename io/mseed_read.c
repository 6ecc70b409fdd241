/* mseed_read — libmseed 2 decoding into segments and blocks (see mseed_read.h). */
#define LOG_COMPONENT "mseed"
#include "io/mseed_read.h"

#include <errno.h>
#include <libmseed.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/dir_list.h"
#include "stream/error.h"
#include "stream/log.h"

/* libmseed prints its own diagnostics ("Error: ...", "Warning: ...") to stderr unless
 * told otherwise; they are routed into seislive's log (component "libmseed") so every
 * line has a time, a level and a component.  A failed Steim integrity check is reported
 * only as such a message, so the first diagnostic of the record being decoded is also
 * kept (per thread: each ingest thread decodes its own records) and inspected. */
static _Thread_local char diag[256];
static _Thread_local int diag_set;

static void on_diag(char *msg)
{
    char line[256];
    snprintf(line, sizeof line, "%s", msg);
    line[strcspn(line, "\r\n")] = 0;
    if (!diag_set) {
        snprintf(diag, sizeof diag, "%s", line);
        diag_set = 1;
    }
    log_write(LOG_WARN, "libmseed", "%s", line);
}

static void on_log(char *msg)
{
    char line[256];
    snprintf(line, sizeof line, "%s", msg);
    line[strcspn(line, "\r\n")] = 0;
    log_write(LOG_DEBUG, "libmseed", "%s", line);
}

static void route_log(void)
{
    /* No prefixes: the log line's level says what the message is. */
    ms_loginit(on_log, "", on_diag, "");
}

void mseed_log_init(void)
{
    /* ms_loginit sets libmseed's global parameters: once, before any thread decodes. */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, route_log);
}

/* Bytes per sample of the fixed-size encodings libmseed 2 decodes, 0 for Steim-1/2
 * (variable size), -1 for an encoding it cannot decode. */
static int sample_bytes(int enc)
{
    switch (enc) {
    case DE_ASCII: return 1;
    case DE_INT16: case DE_GEOSCOPE163: case DE_GEOSCOPE164: case DE_CDSN: case DE_SRO: case DE_DWWSSN: return 2;
    case DE_GEOSCOPE24: return 3;
    case DE_INT32: case DE_FLOAT32: return 4;
    case DE_FLOAT64: return 8;
    case DE_STEIM1: case DE_STEIM2: return 0;
    default: return -1;
    }
}

static int why_fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int why_fail(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* The header of M (parsed without its samples) against its record length and encoding.
 * libmseed 2 decodes the fixed-size encodings by the header's sample count alone: a
 * count larger than the data section reads past the record (garbage, or a crash at the
 * end of a buffer).  Steim: the frames must lie in the record, and the count must not
 * exceed what they can hold (15 words of a 64-byte frame minus the 2 integration
 * constants of frame 0; 4 differences a word for Steim-1, 7 for Steim-2). */
static int check_header(const MSRecord *m, char *why, size_t n)
{
    int64_t cnt = m->samplecnt;
    if (cnt <= 0)
        return 0; /* no samples, nothing is decoded */
    int off = m->fsdh ? m->fsdh->data_offset : 0;
    if (off < 48 || off >= m->reclen)
        return why_fail(why, n, "data offset %d outside the %d-byte record (header says %lld samples)", off,
                        m->reclen, (long long)cnt);
    int64_t room = m->reclen - off;
    int sz = sample_bytes(m->encoding);
    if (sz < 0)
        return why_fail(why, n, "encoding %d (%s) cannot be decoded", m->encoding,
                        ms_encodingstr((char)m->encoding));
    if (sz > 0) {
        if (cnt * sz > room)
            return why_fail(why, n, "header says %lld samples of %s (%d bytes each, %lld bytes); the data "
                            "section holds %lld bytes (record %d bytes, data from byte %d)", (long long)cnt,
                            ms_encodingstr((char)m->encoding), sz, (long long)(cnt * sz), (long long)room,
                            m->reclen, off);
        return 0;
    }
    int64_t frames = room / 64;
    if (m->Blkt1001 && m->Blkt1001->framecnt > 0) {
        if (m->Blkt1001->framecnt > frames)
            return why_fail(why, n, "blockette 1001 says %d Steim frames; the data section (%lld bytes from byte "
                            "%d) holds %lld", m->Blkt1001->framecnt, (long long)room, off, (long long)frames);
        frames = m->Blkt1001->framecnt;
    }
    int64_t per_word = m->encoding == DE_STEIM1 ? 4 : 7, cap = frames > 0 ? per_word * (15 * frames - 2) : 0;
    if (cnt > cap)
        return why_fail(why, n, "header says %lld samples; %lld %s frames hold at most %lld", (long long)cnt,
                        (long long)frames, m->encoding == DE_STEIM1 ? "Steim-1" : "Steim-2", (long long)cap);
    return 0;
}

int mseed_decode_record(char *rec, int reclen, MSRecord **m, char *why, size_t whylen)
{
    mseed_log_init();
    why[0] = 0;
    diag_set = 0;
    /* The header first, without the samples: nothing is decoded before it is checked. */
    int rc = msr_parse(rec, reclen, m, reclen, 0, 0);
    if (rc == MS_NOERROR && !*m)
        rc = MS_GENERROR;
    if (rc != MS_NOERROR)
        return why_fail(why, whylen, "%s", rc > 0 ? "incomplete record" : ms_errorstr(rc));
    if ((rc = check_header(*m, why, whylen)))
        return rc;
    diag_set = 0;
    rc = msr_parse(rec, reclen, m, reclen, 1, 0);
    if (rc == MS_NOERROR && !*m)
        rc = MS_GENERROR;
    if (rc != MS_NOERROR)
        snprintf(why, whylen, "%s%s%s", rc > 0 ? "incomplete record" : ms_errorstr(rc), diag_set ? ": " : "",
                 diag_set ? diag : "");
    else if (diag_set && strstr(diag, "ntegrity"))
        snprintf(why, whylen, "%s", diag);
    else if ((*m)->numsamples != (*m)->samplecnt)
        snprintf(why, whylen, "%lld samples decoded, header says %lld", (long long)(*m)->numsamples,
                 (long long)(*m)->samplecnt);
    else if ((*m)->numsamples > 0 && !((*m)->samprate > 0))
        snprintf(why, whylen, "sample rate %g", (*m)->samprate);
    else if ((*m)->numsamples > 0 && (*m)->sampletype != 'i' && (*m)->sampletype != 'f' && (*m)->sampletype != 'd')
        snprintf(why, whylen, "sample type '%c' is not numeric", (*m)->sampletype ? (*m)->sampletype : '?');
    return why[0] ? -EINVAL : 0;
}

/* The trace of channel NET.STA.LOC.CHA in SET, created (at RATE) when new; NULL when out
 * of memory. */
static struct mseed_trace *trace_for_id(struct mseed_set *set, const char *net, const char *sta, const char *loc,
                                        const char *cha, double rate)
{
    for (int i = set->ntr - 1; i >= 0; i--) {
        struct trace_channel *c = &set->tr[i].id;
        if (!strcmp(c->net, net) && !strcmp(c->sta, sta) && !strcmp(c->loc, loc) && !strcmp(c->cha, cha))
            return &set->tr[i];
    }
    if (set->ntr == set->cap) {
        int cap = set->cap ? set->cap * 2 : 16;
        struct mseed_trace *p = realloc(set->tr, (size_t)cap * sizeof *p);
        if (!p)
            return NULL;
        set->tr = p;
        set->cap = cap;
    }
    struct mseed_trace *t = &set->tr[set->ntr++];
    memset(t, 0, sizeof *t);
    snprintf(t->id.net, sizeof t->id.net, "%.7s", net);
    snprintf(t->id.sta, sizeof t->id.sta, "%.15s", sta);
    snprintf(t->id.loc, sizeof t->id.loc, "%.7s", loc);
    snprintf(t->id.cha, sizeof t->id.cha, "%.7s", cha);
    t->rate = rate;
    return t;
}

static struct mseed_trace *trace_for(struct mseed_set *set, const MSRecord *m)
{
    return trace_for_id(set, m->network, m->station, m->location, m->channel, m->samprate);
}

/* Samples of a record (or a SAC file: TYPE 'f', io/sac_read.h) at T0_NS onto trace T:
 * extends its last segment when they follow it within half a sample, else opens a new
 * one (gap or overlap, counted and logged). */
static int append_samples(struct mseed_trace *t, char type, const void *samples, int64_t nsamp, int64_t t0_ns,
                          struct mseed_stats *st, const char *name, size_t off)
{
    double dt_ns = 1e9 / t->rate;
    struct mseed_segment *s = t->nseg ? &t->seg[t->nseg - 1] : NULL;
    if (s) {
        double end = (double)s->t0_ns + (double)s->n * dt_ns; /* time of the next expected sample */
        double diff = (double)t0_ns - end;
        if (fabs(diff) > 0.5 * dt_ns) {
            if (diff < 0) {
                int64_t over = (int64_t)llround(-diff / dt_ns);
                if (over > nsamp)
                    over = nsamp;
                st->overlap_samples += over;
                log_warn("%s: byte %zu: %s.%s overlaps the previous record by %lld samples; first read wins",
                         name, off, t->id.sta, t->id.cha, (long long)over);
            } else {
                st->gaps++;
                log_info("%s: byte %zu: %s.%s: gap of %.3f s", name, off, t->id.sta, t->id.cha, diff * 1e-9);
            }
            s = NULL;
        }
    }
    if (!s) {
        if (t->nseg == t->segcap) {
            int cap = t->segcap ? t->segcap * 2 : 4;
            struct mseed_segment *p = realloc(t->seg, (size_t)cap * sizeof *p);
            if (!p)
                return -ENOMEM;
            t->seg = p;
            t->segcap = cap;
        }
        s = &t->seg[t->nseg++];
        memset(s, 0, sizeof *s);
        s->t0_ns = t0_ns;
    }
    if (s->n + nsamp > s->cap) {
        int64_t cap = s->cap ? s->cap * 2 : 4096;
        while (cap < s->n + nsamp)
            cap *= 2;
        float *p = realloc(s->x, (size_t)cap * sizeof(float));
        if (!p)
            return -ENOMEM;
        s->x = p;
        s->cap = cap;
    }
    for (int64_t i = 0; i < nsamp; i++) {
        float v;
        switch (type) {
        case 'i': v = (float)((const int32_t *)samples)[i]; break;
        case 'f': v = ((const float *)samples)[i]; break;
        default: v = (float)((const double *)samples)[i]; break;
        }
        s->x[s->n + i] = v;
    }
    s->n += nsamp;
    st->samples += nsamp;
    return 0;
}

static _Thread_local int (*g_stop)(void);

void mseed_read_set_stop(int (*stop)(void))
{
    g_stop = stop;
}

static int stop_now(void)
{
    return g_stop && g_stop();
}

static void reject(struct mseed_stats *st, const char *name, size_t off, const char *why)
{
    st->rejected++;
    log_warn("%s: byte %zu: record rejected: %s (%lld rejected so far)", name, off, why, (long long)st->rejected);
}

int mseed_read_buffer(const char *name, char *buf, size_t len, struct mseed_set *set, struct mseed_stats *st)
{
    size_t off = 0;
    int last_len = 0, in_junk = 0;
    MSRecord *m = NULL;
    for (unsigned iter = 0; off + 48 <= len; iter++) {
        /* a large file of junk is scanned byte by byte: poll the stop flag as it goes */
        if ((iter & 1023) == 0 && stop_now()) {
            msr_free(&m);
            st->bytes += (int64_t)off;
            return err_set(-ECANCELED, "%s: stopped at byte %zu", name, off);
        }
        int remain = len - off > (size_t)1 << 30 ? 1 << 30 : (int)(len - off);
        int reclen = ms_detect(buf + off, remain);
        if (reclen <= 0 || (size_t)reclen > len - off) {
            if (!in_junk)
                reject(st, name, off, reclen == 0 ? "record length unknown" :
                                      reclen > 0 ? "record truncated at end of data" : "not a miniSEED header");
            in_junk = 1;
            off += 1; /* records may start anywhere after junk: look at every byte */
            continue;
        }
        in_junk = 0;
        last_len = reclen;
        char why[320];
        mseed_decode_record(buf + off, reclen, &m, why, sizeof why);
        if (why[0]) {
            reject(st, name, off, why);
        } else if (m->numsamples > 0) {
            struct mseed_trace *t = trace_for(set, m);
            if (!t) {
                msr_free(&m);
                return err_set(-ENOMEM, "%s: out of memory", name);
            }
            /* a far-off start time overflowed the conversion below (found by the mseed
             * fuzz target) */
            if (!MS_ISRATETOLERABLE(m->samprate, t->rate)) {
                reject(st, name, off, "sample rate differs from the channel's earlier records");
            } else if (!mseed_start_fits(m->starttime)) {
                reject(st, name, off, "start time outside the years 1685-2255");
            } else if (append_samples(t, m->sampletype, m->datasamples, m->numsamples,
                                              (int64_t)m->starttime * (1000000000 / HPTMODULUS), st, name, off) != 0) {
                msr_free(&m);
                return err_set(-ENOMEM, "%s: out of memory", name);
            } else {
                st->records++;
            }
        } else {
            st->records++; /* a record without samples (e.g. a log record) is no data */
        }
        off += (size_t)reclen;
    }
    if (off < len && !in_junk)
        reject(st, name, off, "trailing bytes shorter than a record header");
    (void)last_len;
    msr_free(&m);
    st->bytes += (int64_t)len;
    return 0;
}

static int read_file(const char *path, struct mseed_set *set, struct mseed_stats *st)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return err_set(-errno, "%s: cannot open: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf) {
        fclose(f);
        return err_set(-ENOMEM, "%s: out of memory", path);
    }
    if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return err_set(-EIO, "%s: read error", path);
    }
    fclose(f);
    int rc = mseed_read_buffer(path, buf, n > 0 ? (size_t)n : 0, set, st);
    free(buf);
    st->files++;
    return rc;
}

bool mseed_start_fits(int64_t hptime)
{
    const int64_t lim = 9000000000000000000LL / (1000000000 / HPTMODULUS);
    return hptime <= lim && hptime >= -lim;
}

int mseed_read_path(const char *path, struct mseed_set *set, struct mseed_stats *st)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return read_file(path, set, st);
    char **names;
    size_t n;
    int rc = dir_list_sorted(path, &names, &n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (!rc && stop_now())
            rc = err_set(-ECANCELED, "%s: stopped before %s", path, names[i]);
        if (!rc && stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode))
            rc = read_file(names[i], set, st);
        free(names[i]);
    }
    free(names);
    return rc;
}

int mseed_set_span(const struct mseed_set *set, double *rate, int64_t *t0_ns, int64_t *t1_ns)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    double r = 0;
    for (int i = 0; i < set->ntr; i++) {
        const struct mseed_trace *t = &set->tr[i];
        if (r == 0)
            r = t->rate;
        else if (!MS_ISRATETOLERABLE(t->rate, r))
            return err_set(-EINVAL, "channel %s.%s.%s.%s: %g samples/s, others have %g", t->id.net, t->id.sta,
                           t->id.loc, t->id.cha, t->rate, r);
        for (int s = 0; s < t->nseg; s++) {
            int64_t a = t->seg[s].t0_ns, b = a + (int64_t)llround((double)t->seg[s].n * 1e9 / t->rate);
            lo = a < lo ? a : lo;
            hi = b > hi ? b : hi;
        }
    }
    if (r == 0 || lo >= hi)
        return err_set(-EINVAL, "no samples");
    *rate = r;
    *t0_ns = lo;
    *t1_ns = hi;
    return 0;
}

void mseed_set_extract(const struct mseed_set *set, int64_t t0_ns, double dt, int ns, float *data, uint8_t *mask)
{
    double dtn = dt * 1e9;
    for (int c = 0; c < set->ntr; c++) {
        float *x = data + (size_t)c * ns;
        uint8_t *mk = mask + (size_t)c * ns;
        for (int i = 0; i < ns; i++) {
            x[i] = NAN;
            mk[i] = 0;
        }
        const struct mseed_trace *t = &set->tr[c];
        for (int s = 0; s < t->nseg; s++) {
            const struct mseed_segment *g = &t->seg[s];
            int64_t k0 = (int64_t)llround(((double)g->t0_ns - (double)t0_ns) / dtn);
            int64_t a = k0 > 0 ? k0 : 0, b = k0 + g->n < ns ? k0 + g->n : ns;
            for (int64_t k = a; k < b; k++)
                if (!mk[k]) {
                    x[k] = g->x[k - k0];
                    mk[k] = 1;
                }
        }
    }
}

struct trace_channel *mseed_set_channels(const struct mseed_set *set)
{
    struct trace_channel *c = malloc((size_t)(set->ntr ? set->ntr : 1) * sizeof *c);
    if (c)
        for (int i = 0; i < set->ntr; i++)
            c[i] = set->tr[i].id;
    return c;
}

int mseed_set_add(struct mseed_set *set, const struct trace_channel *id, double rate, int64_t t0_ns,
                  const float *x, int64_t n, struct mseed_stats *st, const char *name)
{
    struct mseed_trace *t = trace_for_id(set, id->net, id->sta, id->loc, id->cha, rate);
    if (!t)
        return err_set(-ENOMEM, "%s: out of memory", name);
    if (!MS_ISRATETOLERABLE(t->rate, rate))
        return err_set(-EINVAL, "%s: %s.%s.%s.%s at %g samples/s, earlier data of the channel at %g", name, id->net,
                       id->sta, id->loc, id->cha, rate, t->rate);
    if (append_samples(t, 'f', x, n, t0_ns, st, name, 0) != 0)
        return err_set(-ENOMEM, "%s: out of memory", name);
    return 0;
}

int64_t mseed_set_window(struct mseed_set *set, int64_t start_ns, int64_t end_ns)
{
    int64_t dropped = 0;
    for (int c = 0; c < set->ntr; c++) {
        struct mseed_trace *t = &set->tr[c];
        double dtn = 1e9 / t->rate;
        int kept = 0;
        for (int s = 0; s < t->nseg; s++) {
            struct mseed_segment *g = &t->seg[s];
            /* first sample at or after START, first at or after END (sample i is at
             * t0 + i dt; the window is [start, end)) */
            int64_t a = 0, b = g->n;
            if (start_ns > g->t0_ns)
                a = (int64_t)ceil(((double)start_ns - (double)g->t0_ns) / dtn - 1e-9);
            if (end_ns < INT64_MAX)
                b = (int64_t)ceil(((double)end_ns - (double)g->t0_ns) / dtn - 1e-9);
            a = a < 0 ? 0 : a > g->n ? g->n : a;
            b = b < a ? a : b > g->n ? g->n : b;
            dropped += g->n - (b - a);
            if (b == a) {
                free(g->x);
                continue;
            }
            if (a > 0)
                memmove(g->x, g->x + a, (size_t)(b - a) * sizeof(float));
            g->t0_ns += (int64_t)llround((double)a * dtn);
            g->n = b - a;
            t->seg[kept++] = *g;
        }
        t->nseg = kept;
    }
    return dropped;
}

void mseed_set_free(struct mseed_set *set)
{
    for (int i = 0; i < set->ntr; i++) {
        for (int s = 0; s < set->tr[i].nseg; s++)
            free(set->tr[i].seg[s].x);
        free(set->tr[i].seg);
    }
    free(set->tr);
    memset(set, 0, sizeof *set);
}

/* Index (samples from T0 at DT) of the first segment sample at or after K; past the end
 * of every segment: INT64_MAX. */
static int64_t next_data(const struct mseed_set *set, int64_t t0, double dt, int64_t k)
{
    int64_t best = INT64_MAX;
    for (int c = 0; c < set->ntr; c++)
        for (int s = 0; s < set->tr[c].nseg; s++) {
            const struct mseed_segment *g = &set->tr[c].seg[s];
            int64_t k0 = (int64_t)llround(((double)g->t0_ns - (double)t0) / (dt * 1e9));
            if (g->n > 0 && k0 + g->n > k) {
                int64_t a = k0 > k ? k0 : k;
                best = a < best ? a : best;
            }
        }
    return best;
}

int mseed_set_blocks(const struct mseed_set *set, int ns, mseed_block_fn fn, void *user, int (*stop)(void))
{
    double rate;
    int64_t t0, t1;
    int rc = mseed_set_span(set, &rate, &t0, &t1);
    if (rc)
        return rc;
    double dt = 1.0 / rate;
    int64_t total = (int64_t)llround(((double)t1 - (double)t0) * 1e-9 * rate);
    struct trace_channel *chan = mseed_set_channels(set);
    float *data = malloc((size_t)set->ntr * ns * sizeof(float));
    uint8_t *mask = malloc((size_t)set->ntr * ns);
    if (!chan || !data || !mask) {
        free(chan);
        free(data);
        free(mask);
        return err_set(-ENOMEM, "miniSEED blocks: out of memory");
    }
    int64_t seq = 0;
    for (int64_t k = 0; k < total && !rc; k += ns, seq++) {
        if (stop && stop())
            break;
        int n = total - k < ns ? (int)(total - k) : ns;
        /* whole-nanosecond block starts from the stream start, so blocks stay contiguous */
        int64_t bt0 = t0 + (int64_t)llround((double)k * dt * 1e9);
        mseed_set_extract(set, bt0, dt, n, data, mask); /* rows of n: the last block is packed too */
        if (!memchr(mask, 1, (size_t)set->ntr * n)) {
            /* No sample in this block: on to the next data instead of cutting the stretch
             * into empty blocks (one record dated 1900 before today's would make 1e9 of
             * them).  The consumer sees the jump in t0 and treats it as a gap. */
            int64_t next = next_data(set, t0, dt, k + n);
            if (next >= total)
                break;
            log_info("miniSEED: no data for %.6g s from t = %lld ns: skipped to the next record",
                     (double)(next - k) * dt, (long long)bt0);
            k = next - ns; /* the loop adds ns */
            seq--;
            continue;
        }
        struct trace_block b = {.seq = seq, .t0_ns = bt0, .dt = dt, .nrec = set->ntr, .ns = n, .chan = chan,
                                .data = data, .mask = mask, .chan_ok = NULL};
        rc = fn(&b, user);
    }
    free(chan);
    free(data);
    free(mask);
    return rc;
}
