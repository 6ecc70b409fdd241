/* wire — parse, validate and encode the ZeroMQ messages of DESIGN.md (jansson). */
#include "io/wire.h"

#include <errno.h>
#include <jansson.h>
#include <libmseed.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <segyio/segy.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "io/mseed_read.h"
#include "stream/error.h"

static const char *const reject_names[WIRE_REJ_N] = {
    "bad JSON", "wrong version", "unknown type", "missing or mistyped field",
    "value out of range", "wrong frame count", "wrong payload size", "bad payload",
    "unit larger than a slot", "duplicate unit"};

const char *wire_reject_name(enum wire_reject r)
{
    return (unsigned)r < WIRE_REJ_N ? reject_names[r] : "?";
}

uint64_t wire_stats_rejected_total(const struct wire_stats *s)
{
    uint64_t t = 0;
    for (int i = 0; i < WIRE_REJ_N; i++)
        if (i != WIRE_REJ_DUPLICATE)
            t += s->rejected[i];
    return t;
}

/* Count the reason and record the message; returns -EINVAL (or CODE). */
static int reject(struct wire_stats *st, enum wire_reject why, uint64_t seq, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int reject(struct wire_stats *st, enum wire_reject why, uint64_t seq, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (st)
        st->rejected[why]++;
    return err_set(why == WIRE_REJ_TOO_LARGE ? -EFBIG : -EINVAL, "message %llu: %s: %s",
                   (unsigned long long)seq, wire_reject_name(why), buf);
}

/* What a JSON value is, for messages ("is a string, expected an integer"). */
static const char *json_kind(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a non-integral number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* Required integer field; JSON reals with an integral value are accepted.  Returns 0,
 * or -1 with WHY saying whether KEY is missing or of which type it is instead (a sender
 * that writes "v":"1" must read "is a string", not "missing"). */
static int field_int(json_t *o, const char *key, int64_t *v, char *why, size_t cap)
{
    json_t *j = json_object_get(o, key);
    if (json_is_integer(j)) {
        *v = json_integer_value(j);
        return 0;
    }
    if (json_is_real(j)) {
        double d = json_real_value(j);
        if (d == floor(d) && fabs(d) < 9e15) {
            *v = (int64_t)d;
            return 0;
        }
    }
    if (!j)
        snprintf(why, cap, "\"%s\" missing", key);
    else
        snprintf(why, cap, "\"%s\" is %s, expected an integer", key, json_kind(j));
    return -1;
}

static int field_num(json_t *o, const char *key, double *v, char *why, size_t cap)
{
    json_t *j = json_object_get(o, key);
    if (json_is_number(j)) {
        *v = json_number_value(j);
        return 0;
    }
    if (!j)
        snprintf(why, cap, "\"%s\" missing", key);
    else
        snprintf(why, cap, "\"%s\" is %s, expected a number", key, json_kind(j));
    return -1;
}

static int field_str(json_t *o, const char *key, const char **v, char *why, size_t cap)
{
    json_t *j = json_object_get(o, key);
    if (json_is_string(j)) {
        *v = json_string_value(j);
        return 0;
    }
    if (!j)
        snprintf(why, cap, "\"%s\" missing", key);
    else
        snprintf(why, cap, "\"%s\" is %s, expected a string", key, json_kind(j));
    return -1;
}

/* KEY: an array of N numbers. */
static int field_vec(json_t *o, const char *key, double *v, int n, char *why, size_t cap)
{
    json_t *j = json_object_get(o, key);
    if (!j) {
        snprintf(why, cap, "\"%s\" missing", key);
        return -1;
    }
    if (!json_is_array(j) || json_array_size(j) != (size_t)n) {
        if (json_is_array(j))
            snprintf(why, cap, "\"%s\" has %zu elements, expected an array of %d numbers", key,
                     json_array_size(j), n);
        else
            snprintf(why, cap, "\"%s\" is %s, expected an array of %d numbers", key,
                     json_kind(j), n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        json_t *c = json_array_get(j, (size_t)i);
        if (!json_is_number(c)) {
            snprintf(why, cap, "\"%s\"[%d] is %s, expected a number", key, i, json_kind(c));
            return -1;
        }
        v[i] = json_number_value(c);
    }
    return 0;
}

int wire_parse_header(const void *json, size_t len, uint64_t seq, struct wire_header *h,
                      struct wire_stats *st)
{
    memset(h, 0, sizeof *h);
    h->sender_seq = -1;
    json_error_t jerr;
    json_t *o = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!o)
        return reject(st, WIRE_REJ_JSON, seq, "frame 0, column %d: %s", jerr.column, jerr.text);
    int rc = 0;
    if (!json_is_object(o)) {
        rc = reject(st, WIRE_REJ_JSON, seq, "frame 0 is not a JSON object");
        goto out;
    }
    int64_t v;
    char why[256];
    if (field_int(o, "v", &v, why, sizeof why) < 0) {
        rc = reject(st, WIRE_REJ_VERSION, seq, "%s (expected %d)", why, WIRE_VERSION);
        goto out;
    }
    if (v != WIRE_VERSION) {
        rc = reject(st, WIRE_REJ_VERSION, seq, "\"v\" is %lld, this build speaks %d",
                    (long long)v, WIRE_VERSION);
        goto out;
    }
    const char *type = NULL, *fmt = NULL;
    if (field_str(o, "type", &type, why, sizeof why) < 0) {
        rc = reject(st, WIRE_REJ_TYPE, seq, "%s", why);
        goto out;
    }
    int64_t sseq;
    if (json_object_get(o, "seq")) {
        /* optional, but a "seq" that is there must be an integer: a gap count built on a
         * mistyped one would be wrong without anyone noticing */
        if (field_int(o, "seq", &sseq, why, sizeof why) < 0) {
            rc = reject(st, WIRE_REJ_FIELD, seq, "%s", why);
            goto out;
        }
        h->sender_seq = sseq;
    }
    if (strcmp(type, "end") == 0) {
        h->kind = WIRE_END;
    } else if (strcmp(type, "shot") == 0) {
        struct wire_shot_hdr *s = &h->shot;
        int64_t id, ns, ntr;
        h->kind = WIRE_SHOT;
        if (field_int(o, "shot_id", &id, why, sizeof why) < 0 ||
            field_int(o, "ns", &ns, why, sizeof why) < 0 ||
            field_int(o, "ntr", &ntr, why, sizeof why) < 0 ||
            field_num(o, "dt", &s->dt, why, sizeof why) < 0 ||
            field_vec(o, "src", s->src, 3, why, sizeof why) < 0 ||
            field_str(o, "format", &fmt, why, sizeof why) < 0) {
            rc = reject(st, WIRE_REJ_FIELD, seq,
                        "%s (a shot needs integer shot_id, ns, ntr, number dt, src [x,y,z] and "
                        "format)", why);
            goto out;
        }
        if (ns <= 0 || ns > WIRE_MAX_NS || ntr <= 0 || ntr > WIRE_MAX_TRACES ||
            !(s->dt > 0) || !isfinite(s->dt) || id < 0) {
            rc = reject(st, WIRE_REJ_VALUE, seq,
                        "shot %lld: ns %lld, ntr %lld, dt %g out of range (ns 1..%d, ntr 1..%d, "
                        "dt > 0, shot_id >= 0)",
                        (long long)id, (long long)ns, (long long)ntr, s->dt, WIRE_MAX_NS,
                        WIRE_MAX_TRACES);
            goto out;
        }
        s->shot_id = id;
        s->ns = (int)ns;
        s->ntr = (int)ntr;
        if (strcmp(fmt, "f32") == 0)
            s->format = WIRE_F32;
        else if (strcmp(fmt, "segy") == 0)
            s->format = WIRE_SEGY;
        else {
            rc = reject(st, WIRE_REJ_VALUE, seq, "shot format \"%s\" (expected f32 or segy)", fmt);
            goto out;
        }
        int64_t sf = SEGY_IEEE_FLOAT_4_BYTE;
        if (json_object_get(o, "segy_format") && field_int(o, "segy_format", &sf, why, sizeof why) < 0) {
            rc = reject(st, WIRE_REJ_FIELD, seq, "%s", why);
            goto out;
        }
        if (sf != SEGY_IBM_FLOAT_4_BYTE && sf != SEGY_IEEE_FLOAT_4_BYTE) {
            rc = reject(st, WIRE_REJ_VALUE, seq, "segy_format %lld (1 = IBM or 5 = IEEE)",
                        (long long)sf);
            goto out;
        }
        s->segy_format = (int)sf;
        for (int i = 0; i < 3; i++)
            if (!isfinite(s->src[i])) {
                rc = reject(st, WIRE_REJ_VALUE, seq, "src[%d] is not finite", i);
                goto out;
            }
    } else if (strcmp(type, "traces") == 0) {
        struct wire_traces_hdr *t = &h->traces;
        int64_t t0, nrec, ns;
        h->kind = WIRE_TRACES;
        if (field_int(o, "t0_ns", &t0, why, sizeof why) < 0 ||
            field_int(o, "nrec", &nrec, why, sizeof why) < 0 ||
            field_int(o, "ns", &ns, why, sizeof why) < 0 ||
            field_num(o, "dt", &t->dt, why, sizeof why) < 0 ||
            field_str(o, "format", &fmt, why, sizeof why) < 0) {
            rc = reject(st, WIRE_REJ_FIELD, seq,
                        "%s (a trace block needs integer t0_ns, nrec, ns, number dt and format)",
                        why);
            goto out;
        }
        if (ns <= 0 || ns > WIRE_MAX_NS || nrec <= 0 || nrec > WIRE_MAX_TRACES ||
            !(t->dt > 0) || !isfinite(t->dt)) {
            rc = reject(st, WIRE_REJ_VALUE, seq, "traces: ns %lld, nrec %lld, dt %g out of range",
                        (long long)ns, (long long)nrec, t->dt);
            goto out;
        }
        /* Time bounded so that t0 + the block's length fits int64 ns (the years 1685-2255),
         * which every consumer computes: a t0_ns near INT64_MAX overflowed there. */
        if (t->dt > 1000.0 || (double)ns * t->dt > 1e8 || t0 > 9000000000000000000LL ||
            t0 < -9000000000000000000LL) {
            rc = reject(st, WIRE_REJ_VALUE, seq,
                        "traces: t0_ns %lld, dt %g s, ns %lld out of range (t0 within the years "
                        "1685-2255, dt at most 1000 s, a block at most 1e8 s)",
                        (long long)t0, t->dt, (long long)ns);
            goto out;
        }
        t->t0_ns = t0;
        t->nrec = (int)nrec;
        t->ns = (int)ns;
        if (strcmp(fmt, "f32") == 0)
            t->format = WIRE_F32;
        else if (strcmp(fmt, "mseed") == 0)
            t->format = WIRE_MSEED;
        else {
            rc = reject(st, WIRE_REJ_VALUE, seq, "traces format \"%s\" (expected f32 or mseed)",
                        fmt);
            goto out;
        }
        json_t *ch = json_object_get(o, "channels");
        if (ch) {
            if (!json_is_array(ch) || json_array_size(ch) != (size_t)nrec) {
                rc = reject(st, WIRE_REJ_FIELD, seq,
                            "\"channels\" must be an array of nrec = %lld names", (long long)nrec);
                goto out;
            }
            t->chan = calloc((size_t)nrec, sizeof *t->chan);
            if (!t->chan) {
                rc = err_set(-ENOMEM, "message %llu: out of memory", (unsigned long long)seq);
                goto out;
            }
            for (size_t i = 0; i < (size_t)nrec; i++) {
                const char *name = json_string_value(json_array_get(ch, i));
                if (!name || wire_parse_channel(name, &t->chan[i]) < 0) {
                    rc = reject(st, WIRE_REJ_VALUE, seq,
                                "channels[%zu] is not a NET.STA.LOC.CHA name", i);
                    wire_header_free(h);
                    goto out;
                }
            }
        }
    } else {
        rc = reject(st, WIRE_REJ_TYPE, seq, "\"type\" is \"%s\" (expected shot or traces)", type);
    }
out:
    json_decref(o);
    return rc;
}

void wire_header_free(struct wire_header *h)
{
    if (h->kind == WIRE_TRACES) {
        free(h->traces.chan);
        h->traces.chan = NULL;
    }
}

int wire_parse_channel(const char *s, struct trace_channel *c)
{
    memset(c, 0, sizeof *c);
    char *parts[4] = {c->net, c->sta, c->loc, c->cha};
    size_t caps[4] = {sizeof c->net, sizeof c->sta, sizeof c->loc, sizeof c->cha};
    int k = 0;
    size_t j = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '.') {
            if (++k > 3)
                return -EINVAL;
            j = 0;
            continue;
        }
        if (j + 1 >= caps[k])
            return -EINVAL;
        parts[k][j++] = *p;
    }
    return c->sta[0] ? 0 : -EINVAL;
}

int wire_check_payload(const struct wire_header *h, const size_t *len, int nframes, uint64_t seq,
                       struct wire_stats *st)
{
    if (h->kind == WIRE_END) {
        if (nframes != 0)
            return reject(st, WIRE_REJ_FRAMES, seq, "end: %d payload frames, expected none",
                          nframes);
        return 0;
    }
    if (h->kind == WIRE_SHOT) {
        const struct wire_shot_hdr *s = &h->shot;
        if (s->format == WIRE_F32) {
            if (nframes != 2)
                return reject(st, WIRE_REJ_FRAMES, seq,
                              "shot %lld (f32): %d payload frames, expected 2 (receivers, samples)",
                              (long long)s->shot_id, nframes);
            size_t want_r = (size_t)s->ntr * 3 * sizeof(float);
            size_t want_d = (size_t)s->ntr * (size_t)s->ns * sizeof(float);
            if (len[0] != want_r)
                return reject(st, WIRE_REJ_SIZE, seq,
                              "shot %lld: receiver frame %zu bytes, expected ntr x 3 x 4 = %zu",
                              (long long)s->shot_id, len[0], want_r);
            if (len[1] != want_d)
                return reject(st, WIRE_REJ_SIZE, seq,
                              "shot %lld: sample frame %zu bytes, expected ntr x ns x 4 = %zu",
                              (long long)s->shot_id, len[1], want_d);
        } else {
            if (nframes != 1)
                return reject(st, WIRE_REJ_FRAMES, seq,
                              "shot %lld (segy): %d payload frames, expected 1",
                              (long long)s->shot_id, nframes);
            size_t want = (size_t)s->ntr * (240 + (size_t)s->ns * 4);
            if (len[0] != want)
                return reject(st, WIRE_REJ_SIZE, seq,
                              "shot %lld: SEG-Y frame %zu bytes, expected ntr x (240 + 4 ns) = %zu",
                              (long long)s->shot_id, len[0], want);
        }
        return 0;
    }
    const struct wire_traces_hdr *t = &h->traces;
    if (t->format == WIRE_F32) {
        if (nframes != 1)
            return reject(st, WIRE_REJ_FRAMES, seq, "traces (f32): %d payload frames, expected 1",
                          nframes);
        size_t want = (size_t)t->nrec * (size_t)t->ns * sizeof(float);
        if (len[0] != want)
            return reject(st, WIRE_REJ_SIZE, seq,
                          "traces t0 %lld: frame %zu bytes, expected nrec x ns x 4 = %zu",
                          (long long)t->t0_ns, len[0], want);
        return 0;
    }
    if (nframes < 1)
        return reject(st, WIRE_REJ_FRAMES, seq, "traces (mseed): no record frames");
    for (int i = 0; i < nframes; i++)
        if (len[i] < 48)
            return reject(st, WIRE_REJ_SIZE, seq,
                          "traces (mseed): frame %d has %zu bytes, shorter than a record header",
                          i + 1, len[i]);
    return 0;
}

size_t wire_unit_bytes(const struct wire_header *h)
{
    if (h->kind == WIRE_END)
        return 0;
    if (h->kind == WIRE_SHOT)
        return shot_payload_bytes(h->shot.ntr, h->shot.ns);
    return (size_t)h->traces.nrec * (size_t)h->traces.ns * sizeof(float) +
           (size_t)h->traces.nrec * sizeof(struct trace_channel);
}

/* ---- payload copy into a slot ----
 *
 * The one copy the runtime makes of a received payload: from the ZeroMQ message into
 * its pinned slot (libzmq's own receive into the message cannot be avoided: the API
 * has no way to receive into caller memory without a further copy).  One core copies
 * about 7 GB/s into pinned memory, so a 64 MiB unit takes ~10 ms: slower than the H2D
 * copy (~1.2 ms) and than a fast GPU unit.  Large payloads are split over several
 * OpenMP threads; the finiteness check of shots runs on each cache-sized piece right
 * after it is copied, instead of a second pass over the slot. */

#define COPY_PAR_MIN ((size_t)8 << 20)   /* below this, one thread */
#define COPY_PER_THREAD ((size_t)2 << 20) /* at least this much per thread */
#define COPY_PIECE ((size_t)64 << 10)     /* floats copied then checked while in L2 */

static int g_copy_threads; /* 0 = automatic */

void wire_set_copy_threads(int n)
{
    g_copy_threads = n < 0 ? 0 : n;
}

int wire_copy_threads(size_t bytes)
{
    if (bytes < COPY_PAR_MIN)
        return 1;
    int nt = g_copy_threads;
    if (nt <= 0) {
        /* Half the cores, at most 8: enough to outrun the H2D copy of the previous unit
         * without taking every core from the other threads. */
        nt = omp_get_num_procs() / 2;
        if (nt > 8)
            nt = 8;
    }
    size_t cap = bytes / COPY_PER_THREAD;
    if ((size_t)nt > cap)
        nt = (int)cap;
    return nt < 1 ? 1 : nt;
}

/* Copy floats [i0, i1); with CHECK, the index of the first non-finite one, else SIZE_MAX. */
static size_t copy_range(float *dst, const void *src, size_t i0, size_t i1, bool check)
{
    const char *s = src;
    for (size_t i = i0; i < i1; i += COPY_PIECE / sizeof(float)) {
        size_t n = i1 - i < COPY_PIECE / sizeof(float) ? i1 - i : COPY_PIECE / sizeof(float);
        /* memcpy from the byte pointer: a message buffer need not be float-aligned. */
        memcpy(dst + i, s + i * sizeof(float), n * sizeof(float));
        if (check)
            for (size_t k = i; k < i + n; k++)
                if (!isfinite(dst[k]))
                    return k;
    }
    return SIZE_MAX;
}

size_t wire_copy_f32(float *dst, const void *src, size_t n, bool check)
{
    int nt = wire_copy_threads(n * sizeof(float));
    if (nt <= 1)
        return copy_range(dst, src, 0, n, check);
    size_t bad = SIZE_MAX;
#pragma omp parallel num_threads(nt) reduction(min : bad)
    {
        size_t k = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
        size_t per = ((n + k - 1) / k + 15) / 16 * 16; /* whole cache lines per thread */
        size_t a = t * per < n ? t * per : n, b = a + per < n ? a + per : n;
        bad = copy_range(dst, src, a, b, check);
    }
    return bad;
}

static int all_finite(const float *x, size_t n, size_t *bad)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) {
            *bad = i;
            return 0;
        }
    return 1;
}

int wire_decode_shot(const struct wire_header *h, const void *const *frames,
                     const size_t *len, int nframes, uint64_t seq, struct shot *out,
                     struct wire_stats *st)
{
    const struct wire_shot_hdr *s = &h->shot;
    (void)nframes;
    (void)len;
    out->id = s->shot_id;
    out->ns = s->ns;
    out->dt = s->dt;
    out->ntr = s->ntr;
    memcpy(out->src, s->src, sizeof out->src);
    size_t nrec = (size_t)s->ntr * 3, nd = (size_t)s->ntr * (size_t)s->ns, bad;
    if (s->format == WIRE_F32) {
        /* x86 and aarch64 hosts are little-endian like the wire: a plain copy. */
        memcpy(out->rec, frames[0], nrec * sizeof(float));
        if (!all_finite(out->rec, nrec, &bad))
            return reject(st, WIRE_REJ_PAYLOAD, seq, "shot %lld: receiver %zu coordinate not finite",
                          (long long)s->shot_id, bad / 3);
        if ((bad = wire_copy_f32(out->data, frames[1], nd, true)) != SIZE_MAX)
            return reject(st, WIRE_REJ_PAYLOAD, seq,
                          "shot %lld: trace %zu sample %zu is not finite", (long long)s->shot_id,
                          bad / (size_t)s->ns, bad % (size_t)s->ns);
        return 0;
    }
    /* SEG-Y trace bytes: header + big-endian samples per trace. */
    const unsigned char *p = frames[0];
    size_t trb = 240 + (size_t)s->ns * 4;
    for (int i = 0; i < s->ntr; i++) {
        const char *th = (const char *)p + (size_t)i * trb;
        int32_t ns_h = 0, scal = 0, gx = 0, gy = 0, ge = 0, escal = 0;
        segy_get_field(th, SEGY_TR_SAMPLE_COUNT, &ns_h);
        if (ns_h != 0 && ns_h != s->ns)
            return reject(st, WIRE_REJ_PAYLOAD, seq,
                          "shot %lld: SEG-Y trace %d (byte %zu) has %d samples, header says %d",
                          (long long)s->shot_id, i, (size_t)i * trb, ns_h, s->ns);
        segy_get_field(th, SEGY_TR_SOURCE_GROUP_SCALAR, &scal);
        segy_get_field(th, SEGY_TR_GROUP_X, &gx);
        segy_get_field(th, SEGY_TR_GROUP_Y, &gy);
        segy_get_field(th, SEGY_TR_RECV_GROUP_ELEV, &ge);
        segy_get_field(th, SEGY_TR_ELEV_SCALAR, &escal);
        double f = scal > 0 ? scal : scal < 0 ? -1.0 / scal : 1.0;
        double fe = escal > 0 ? escal : escal < 0 ? -1.0 / escal : 1.0;
        out->rec[3 * i + 0] = (float)(gx * f);
        out->rec[3 * i + 1] = (float)(gy * f);
        /* elevation up -> depth down; in double: -INT32_MIN overflows an int */
        out->rec[3 * i + 2] = (float)(-(double)ge * fe);
        float *dst = out->data + (size_t)i * s->ns;
        memcpy(dst, th + 240, (size_t)s->ns * 4);
        segy_to_native(s->segy_format, s->ns, dst);
    }
    if (!all_finite(out->data, nd, &bad))
        return reject(st, WIRE_REJ_PAYLOAD, seq, "shot %lld: SEG-Y trace %zu sample %zu not finite",
                      (long long)s->shot_id, bad / (size_t)s->ns, bad % (size_t)s->ns);
    return 0;
}

int wire_decode_traces_f32(const struct wire_header *h, const void *frame, size_t len,
                           uint64_t seq, float *dst, struct wire_stats *st)
{
    /* NaN marks a gap in a trace block (io/trace_block.h): copied, not rejected. */
    (void)seq;
    (void)st;
    (void)h;
    wire_copy_f32(dst, frame, len / sizeof(float), false);
    return 0;
}

static int same_chan(const struct trace_channel *a, const MSRecord *m)
{
    return strncmp(a->net, m->network, sizeof a->net - 1) == 0 &&
           strncmp(a->sta, m->station, sizeof a->sta - 1) == 0 &&
           strncmp(a->loc, m->location, sizeof a->loc - 1) == 0 &&
           strncmp(a->cha, m->channel, sizeof a->cha - 1) == 0;
}

int wire_decode_traces_mseed(const struct wire_header *h, const void *const *frames,
                             const size_t *len, int nframes, uint64_t seq, float *dst,
                             struct trace_channel *chan, struct wire_stats *st)
{
    const struct wire_traces_hdr *t = &h->traces;
    size_t nd = (size_t)t->nrec * (size_t)t->ns;
    for (size_t i = 0; i < nd; i++)
        dst[i] = NAN;
    int nchan = 0;
    if (t->chan) {
        memcpy(chan, t->chan, (size_t)t->nrec * sizeof *chan);
        nchan = t->nrec;
    } else {
        memset(chan, 0, (size_t)t->nrec * sizeof *chan);
    }
    MSRecord *msr = NULL;
    int rc = 0;
    for (int fi = 0; fi < nframes && !rc; fi++) {
        size_t off = 0;
        /* libmseed wants a writable buffer (it may swap in place): one copy per frame. */
        char *buf = malloc(len[fi]);
        if (!buf) {
            rc = err_set(-ENOMEM, "message %llu: out of memory", (unsigned long long)seq);
            break;
        }
        memcpy(buf, frames[fi], len[fi]);
        while (off < len[fi] && !rc) {
            size_t n = len[fi] - off;
            /* The record's length from its header, then its header checked against that
             * length and its encoding before a sample is decoded (io/mseed_read.h). */
            int reclen = ms_detect(buf + off, (int)(n > INT32_MAX ? INT32_MAX : n));
            char why[320];
            if (reclen <= 0 || (size_t)reclen > n) {
                rc = reject(st, WIRE_REJ_PAYLOAD, seq, "miniSEED frame %d byte %zu: %s", fi + 1, off,
                            reclen > 0 ? "truncated record" : "not a valid record");
                break;
            }
            if (mseed_decode_record(buf + off, reclen, &msr, why, sizeof why) != 0) {
                rc = reject(st, WIRE_REJ_PAYLOAD, seq, "miniSEED frame %d byte %zu: %s", fi + 1, off, why);
                break;
            }
            if (fabs(msr->samprate * t->dt - 1.0) > 1e-6) {
                rc = reject(st, WIRE_REJ_PAYLOAD, seq,
                            "miniSEED frame %d byte %zu: %s.%s sampled at %g Hz, header dt %g s",
                            fi + 1, off, msr->network, msr->station, msr->samprate, t->dt);
                break;
            }
            int r = 0;
            while (r < nchan && !same_chan(&chan[r], msr))
                r++;
            if (r == nchan) {
                if (t->chan || nchan == t->nrec) {
                    rc = reject(st, WIRE_REJ_PAYLOAD, seq,
                                "miniSEED frame %d byte %zu: channel %s.%s.%s.%s not among the "
                                "%d announced", fi + 1, off, msr->network, msr->station,
                                msr->location, msr->channel, t->nrec);
                    break;
                }
                snprintf(chan[r].net, sizeof chan[r].net, "%.7s", msr->network);
                snprintf(chan[r].sta, sizeof chan[r].sta, "%s", msr->station);
                snprintf(chan[r].loc, sizeof chan[r].loc, "%.7s", msr->location);
                snprintf(chan[r].cha, sizeof chan[r].cha, "%.7s", msr->channel);
                nchan++;
            }
            /* hptime is in microseconds; t0 in ns. */
            double k0 = ((double)msr->starttime * 1e3 - (double)t->t0_ns) * 1e-9 / t->dt;
            long long k = llround(k0);
            for (int64_t j = 0; j < msr->numsamples; j++) {
                long long kk = k + j;
                if (kk < 0 || kk >= t->ns)
                    continue; /* outside this block: belongs to a neighbour */
                double v;
                switch (msr->sampletype) {
                case 'i': v = ((int32_t *)msr->datasamples)[j]; break;
                case 'f': v = ((float *)msr->datasamples)[j]; break;
                case 'd': v = ((double *)msr->datasamples)[j]; break;
                default: v = NAN;
                }
                dst[(size_t)r * (size_t)t->ns + (size_t)kk] = (float)v;
            }
            off += (size_t)reclen;
        }
        free(buf);
    }
    msr_free(&msr);
    for (int r = nchan; r < t->nrec; r++)
        snprintf(chan[r].sta, sizeof chan[r].sta, "R%04d", r); /* no record: all gap */
    return rc;
}

static bool g_no_curve;

bool wire_has_curve(void)
{
    return !g_no_curve && zmq_has("curve");
}

void wire_force_no_curve(bool on)
{
    g_no_curve = on;
}

/* ---- encoding ---- */

static char *dump(json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(o);
    return s;
}

char *wire_encode_shot_header(const struct wire_shot_hdr *h, int64_t sender_seq)
{
    json_t *o = json_pack("{s:s, s:i, s:I, s:i, s:f, s:i, s:[f,f,f], s:s}", "type", "shot", "v",
                          WIRE_VERSION, "shot_id", (json_int_t)h->shot_id, "ns", h->ns, "dt",
                          h->dt, "ntr", h->ntr, "src", h->src[0], h->src[1], h->src[2], "format",
                          h->format == WIRE_SEGY ? "segy" : "f32");
    if (h->format == WIRE_SEGY)
        json_object_set_new(o, "segy_format",
                            json_integer(h->segy_format ? h->segy_format : SEGY_IEEE_FLOAT_4_BYTE));
    if (sender_seq >= 0)
        json_object_set_new(o, "seq", json_integer(sender_seq));
    return dump(o);
}

char *wire_encode_traces_header(const struct wire_traces_hdr *h, int64_t sender_seq)
{
    json_t *o = json_pack("{s:s, s:i, s:I, s:f, s:i, s:i, s:s}", "type", "traces", "v",
                          WIRE_VERSION, "t0_ns", (json_int_t)h->t0_ns, "dt", h->dt, "nrec",
                          h->nrec, "ns", h->ns, "format", h->format == WIRE_MSEED ? "mseed" : "f32");
    if (sender_seq >= 0)
        json_object_set_new(o, "seq", json_integer(sender_seq));
    return dump(o);
}

/* Send N frames; the last without SNDMORE. */
static int send_frames(void *sock, const void *const *p, const size_t *n, int nf, int flags)
{
    for (int i = 0; i < nf; i++) {
        int f = flags | (i + 1 < nf ? ZMQ_SNDMORE : 0);
        if (zmq_send(sock, p[i], n[i], f) < 0)
            return err_set(-errno, "zmq_send frame %d: %s", i, zmq_strerror(errno));
    }
    return 0;
}

int wire_send_shot_f32(void *sock, const struct shot *s, int64_t sender_seq, int flags)
{
    struct wire_shot_hdr h = {.shot_id = s->id, .ns = s->ns, .dt = s->dt, .ntr = s->ntr,
                              .format = WIRE_F32};
    memcpy(h.src, s->src, sizeof h.src);
    char *js = wire_encode_shot_header(&h, sender_seq);
    if (!js)
        return -ENOMEM;
    const void *p[3] = {js, s->rec, s->data};
    size_t n[3] = {strlen(js), (size_t)s->ntr * 3 * sizeof(float),
                   (size_t)s->ntr * (size_t)s->ns * sizeof(float)};
    int rc = send_frames(sock, p, n, 3, flags);
    free(js);
    return rc;
}

int wire_send_shot_segy(void *sock, const struct wire_shot_hdr *h, const void *traces, size_t len,
                        int64_t sender_seq, int flags)
{
    struct wire_shot_hdr c = *h;
    c.format = WIRE_SEGY;
    char *js = wire_encode_shot_header(&c, sender_seq);
    if (!js)
        return -ENOMEM;
    const void *p[2] = {js, traces};
    size_t n[2] = {strlen(js), len};
    int rc = send_frames(sock, p, n, 2, flags);
    free(js);
    return rc;
}

int wire_send_traces_f32(void *sock, const struct wire_traces_hdr *h, const float *data,
                         int64_t sender_seq, int flags)
{
    struct wire_traces_hdr c = *h;
    c.format = WIRE_F32;
    char *js = wire_encode_traces_header(&c, sender_seq);
    if (!js)
        return -ENOMEM;
    const void *p[2] = {js, data};
    size_t n[2] = {strlen(js), (size_t)h->nrec * (size_t)h->ns * sizeof(float)};
    int rc = send_frames(sock, p, n, 2, flags);
    free(js);
    return rc;
}

int wire_send_end(void *sock, int flags)
{
    static const char js[] = "{\"type\":\"end\",\"v\":1}";
    if (zmq_send(sock, js, sizeof js - 1, flags) < 0)
        return err_set(-errno, "zmq_send end: %s", zmq_strerror(errno));
    return 0;
}

int wire_send_end_wait(void *ctx, void *sock, int timeout_ms, bool (*stop)(void))
{
    /* Why not a long ZMQ_LINGER: libzmq counts a message as sent once it is written to
     * the connection, and what the receiver had not read when the sender closed was
     * lost with the connection (the last units and the end).  The receiver closes its
     * input when it has taken the end: that disconnection is the acknowledgement. */
    char ep[64];
    snprintf(ep, sizeof ep, "inproc://seislive-end-%p", sock);
    if (zmq_socket_monitor(sock, ep, ZMQ_EVENT_DISCONNECTED) < 0)
        return err_set(-errno, "end of stream: monitor: %s", zmq_strerror(errno));
    void *mon = zmq_socket(ctx, ZMQ_PAIR);
    int rc = 0;
    if (!mon || zmq_connect(mon, ep) < 0)
        rc = err_set(-errno, "end of stream: monitor: %s", zmq_strerror(errno));
    if (!rc)
        rc = wire_send_end(sock, 0);
    double waited = 0;
    while (!rc) {
        zmq_pollitem_t it = {mon, 0, ZMQ_POLLIN, 0};
        int np = zmq_poll(&it, 1, 200); /* short steps: the stop flag is honoured */
        if (np > 0) {
            zmq_msg_t m;
            zmq_msg_init(&m);
            uint16_t ev = 0;
            if (zmq_msg_recv(&m, mon, 0) >= 0 && zmq_msg_size(&m) >= 2)
                memcpy(&ev, zmq_msg_data(&m), 2);
            int more = zmq_msg_more(&m);
            zmq_msg_close(&m);
            while (more) { /* the address frame */
                zmq_msg_init(&m);
                more = zmq_msg_recv(&m, mon, 0) >= 0 && zmq_msg_more(&m);
                zmq_msg_close(&m);
            }
            if (ev == ZMQ_EVENT_DISCONNECTED)
                break; /* the receiver took the end and closed */
            continue;
        }
        if (np < 0 && errno != EINTR) {
            rc = err_set(-errno, "end of stream: poll: %s", zmq_strerror(errno));
            break;
        }
        if (stop && stop()) {
            rc = err_set(-EINTR, "end of stream sent; stopped before the receiver finished");
            break;
        }
        waited += 200;
        if (waited >= timeout_ms)
            rc = err_set(-ETIMEDOUT,
                         "end of stream sent, but the receiver did not finish within %d s: the "
                         "units still queued may be lost", timeout_ms / 1000);
    }
    zmq_socket_monitor(sock, NULL, 0);
    if (mon)
        zmq_close(mon);
    return rc;
}

int wire_send_traces_mseed(void *sock, const struct wire_traces_hdr *h, const void *records,
                           size_t len, int64_t sender_seq, int flags)
{
    struct wire_traces_hdr c = *h;
    c.format = WIRE_MSEED;
    char *js = wire_encode_traces_header(&c, sender_seq);
    if (!js)
        return -ENOMEM;
    const void *p[2] = {js, records};
    size_t n[2] = {strlen(js), len};
    int rc = send_frames(sock, p, n, 2, flags);
    free(js);
    return rc;
}

/* ---- out messages ---- */

static json_t *vec3d(const double *v)
{
    return json_pack("[f,f,f]", v[0], v[1], v[2]);
}

char *wire_encode_volume(const struct wire_volume_hdr *h)
{
    json_t *o = json_pack("{s:I, s:I, s:[i,i,i], s:o, s:o, s:s, s:b}", "seq", (json_int_t)h->seq,
                          "shots", (json_int_t)h->units, "n", h->n[0], h->n[1], h->n[2], "d",
                          vec3d(h->d), "o", vec3d(h->o), "dtype", "f32", "final", h->final);
    if (h->slices) {
        json_object_set_new(o, "slices", json_true());
        json_object_set_new(o, "at", json_pack("[i,i,i]", h->at[0], h->at[1], h->at[2]));
    }
    if (h->t0_ns)
        json_object_set_new(o, "t0_ns", json_integer(h->t0_ns));
    return dump(o);
}

char *wire_encode_event(const struct wire_event *e)
{
    return dump(json_pack("{s:I, s:I, s:I, s:[f,f,f], s:f}", "seq", (json_int_t)e->seq, "id",
                          (json_int_t)e->id, "origin_ns", (json_int_t)e->origin_ns, "xyz", e->x,
                          e->y, e->z, "strength", e->strength));
}

const char *const wire_topic_names[WIRE_T_N] = {WIRE_TOPIC_IMAGE, WIRE_TOPIC_COHERENCE,
                                                 WIRE_TOPIC_EVENT, WIRE_TOPIC_STATUS};

int wire_topic_index(const char *topic, size_t n)
{
    for (int i = 0; i < WIRE_T_N; i++)
        if (strlen(wire_topic_names[i]) == n && memcmp(wire_topic_names[i], topic, n) == 0)
            return i;
    return -1;
}

char *wire_encode_status(const struct wire_status *s)
{
    json_t *o = json_pack(
        "{s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:{s:I, s:I, s:I}, s:I, s:f, s:f, "
        "s:{s:f, s:f, s:f, s:f, s:f}, s:I}",
        "seq", (json_int_t)s->seq, "job", s->job ? s->job : "", "health",
        s->health ? s->health : "ok", "units", (json_int_t)s->units, "skipped",
        (json_int_t)s->skipped, "received", (json_int_t)s->received, "rejected",
        (json_int_t)s->rejected, "dropped",
        (json_int_t)(s->drop_queue + s->drop_refused + s->drop_send), "drops", "queue",
        (json_int_t)s->drop_queue, "refused", (json_int_t)s->drop_refused, "send",
        (json_int_t)s->drop_send, "published", (json_int_t)s->published, "rate", s->rate,
        "latency_ms", s->latency_ms, "stage_ms", "wait", s->wait_ms, "decode", s->decode_ms,
        "h2d", s->h2d_ms, "compute", s->compute_ms, "publish", s->publish_ms, "current",
        (json_int_t)s->current);
    json_t *t = json_object();
    for (int i = 0; i < WIRE_T_N; i++)
        json_object_set_new(t, wire_topic_names[i],
                            json_pack("{s:I, s:I}", "count", (json_int_t)s->topic_count[i],
                                      "last_seq", (json_int_t)s->topic_last_seq[i]));
    json_object_set_new(o, "topics", t);
    if (s->gpu_mem_free_mib >= 0)
        json_object_set_new(o, "gpu_mem_free_mib", json_real(s->gpu_mem_free_mib));
    if (s->gpu_mem_total_mib > 0)
        json_object_set_new(o, "gpu_mem_total_mib", json_real(s->gpu_mem_total_mib));
    json_t *r = json_object();
    for (int k = 0; k < WIRE_REJ_N; k++)
        json_object_set_new(r, wire_reject_name(k), json_integer((json_int_t)s->rejected_by[k]));
    json_object_set_new(o, "rejects", r);
    json_object_set_new(o, "uptime_s", json_real(s->uptime_s));
    json_object_set_new(o, "unit_ms", json_pack("{s:f, s:f}", "mean", s->unit_ms_mean, "p95",
                                                 s->unit_ms_p95));
    if (s->version)
        json_object_set_new(o, "version", json_string(s->version));
    if (s->fingerprint) {
        char fp[20];
        snprintf(fp, sizeof fp, "%016llx", (unsigned long long)s->fingerprint);
        json_object_set_new(o, "config_fingerprint", json_string(fp));
    }
    json_t *sta = s->stations ? json_loads(s->stations, 0, NULL) : NULL;
    if (json_is_object(sta))
        json_object_set_new(o, "stations", sta);
    else
        json_decref(sta);
    json_t *rk = s->ranks ? json_loads(s->ranks, 0, NULL) : NULL;
    if (json_is_array(rk))
        json_object_set_new(o, "ranks", rk);
    else
        json_decref(rk);
    if (s->units_total > 0) {
        json_object_set_new(o, "units_total", json_integer((json_int_t)s->units_total));
        /* At the rate so far; none before the first unit. */
        if (s->rate > 0 && s->units + s->skipped <= s->units_total)
            json_object_set_new(o, "eta_s",
                                json_real((double)(s->units_total - s->units - s->skipped) / s->rate));
    }
    return dump(o);
}

/* A volume a subscriber will allocate and index: each axis 1..WIRE_MAX_AXIS, the cell count
 * bounded so n0 x n1 x n2 x 4 cannot overflow or ask for an absurd buffer. */
#define WIRE_MAX_AXIS (1 << 20)
#define WIRE_MAX_CELLS ((int64_t)1 << 32)

int wire_parse_volume(const void *json, size_t len, struct wire_volume_hdr *h)
{
    memset(h, 0, sizeof *h);
    json_error_t e;
    json_t *o = json_loadb(json, len, 0, &e);
    if (!json_is_object(o)) {
        json_decref(o);
        return err_set(-EINVAL, "volume header is not a JSON object");
    }
    char why[256] = "";
    int rc = 0;
    int64_t seq = -1, units = 0, t0 = 0;
    double n[3], at[3];
    json_t *fin = json_object_get(o, "final"), *sl = json_object_get(o, "slices");
    if (field_int(o, "seq", &seq, why, sizeof why) < 0 ||
        field_int(o, "shots", &units, why, sizeof why) < 0 ||
        field_vec(o, "n", n, 3, why, sizeof why) < 0 ||
        field_vec(o, "d", h->d, 3, why, sizeof why) < 0 ||
        field_vec(o, "o", h->o, 3, why, sizeof why) < 0 ||
        (json_object_get(o, "t0_ns") && field_int(o, "t0_ns", &t0, why, sizeof why) < 0)) {
        rc = -EINVAL;
    } else if (!json_is_boolean(fin)) {
        if (fin)
            snprintf(why, sizeof why, "\"final\" is %s, expected true or false", json_kind(fin));
        else
            snprintf(why, sizeof why, "\"final\" missing");
        rc = -EINVAL;
    } else if (sl && !json_is_boolean(sl)) {
        snprintf(why, sizeof why, "\"slices\" is %s, expected true or false", json_kind(sl));
        rc = -EINVAL;
    } else if (seq < 0) {
        snprintf(why, sizeof why, "\"seq\" = %lld is negative", (long long)seq);
        rc = -EINVAL;
    }
    int64_t cells = 1;
    for (int i = 0; !rc && i < 3; i++) {
        /* every axis is bounded before it is multiplied or used as a size */
        if (!(n[i] >= 1 && n[i] <= WIRE_MAX_AXIS && n[i] == floor(n[i]))) {
            snprintf(why, sizeof why, "n[%d] = %g (expected an integer 1..%d)", i, n[i],
                     WIRE_MAX_AXIS);
            rc = -EINVAL;
            break;
        }
        h->n[i] = (int)n[i];
        cells *= h->n[i];
        if (!(h->d[i] > 0) || !isfinite(h->d[i])) {
            snprintf(why, sizeof why, "d[%d] = %g (expected a finite spacing > 0)", i, h->d[i]);
            rc = -EINVAL;
        } else if (!isfinite(h->o[i])) {
            snprintf(why, sizeof why, "o[%d] is not finite", i);
            rc = -EINVAL;
        }
    }
    if (!rc && cells > WIRE_MAX_CELLS) {
        snprintf(why, sizeof why, "n = [%d, %d, %d]: %lld cells, more than %lld", h->n[0],
                 h->n[1], h->n[2], (long long)cells, (long long)WIRE_MAX_CELLS);
        rc = -EINVAL;
    }
    if (!rc && json_is_true(sl)) {
        h->slices = true;
        if (field_vec(o, "at", at, 3, why, sizeof why) < 0)
            rc = -EINVAL;
        for (int i = 0; !rc && i < 3; i++) {
            /* the slice planes are written into a volume at these indices */
            if (!(at[i] >= 0 && at[i] < h->n[i] && at[i] == floor(at[i]))) {
                snprintf(why, sizeof why, "at[%d] = %g outside 0..%d (n[%d] = %d)", i, at[i],
                         h->n[i] - 1, i, h->n[i]);
                rc = -EINVAL;
            } else {
                h->at[i] = (int)at[i];
            }
        }
    }
    if (!rc) {
        h->seq = (uint64_t)seq;
        h->units = units;
        h->final = json_is_true(fin);
        h->t0_ns = t0;
    }
    json_decref(o);
    if (rc)
        return seq >= 0 ? err_set(rc, "volume header (seq %lld): %s", (long long)seq, why)
                        : err_set(rc, "volume header: %s", why);
    return 0;
}

int wire_check_volume_payload(const struct wire_volume_hdr *h, const size_t *len, int nframes)
{
    size_t nx = (size_t)h->n[0], ny = (size_t)h->n[1], nz = (size_t)h->n[2];
    unsigned long long seq = (unsigned long long)h->seq;
    if (!h->slices) {
        if (nframes != 1)
            return err_set(-EINVAL, "volume seq %llu: %d payload frames, expected 1", seq,
                           nframes);
        if (len[0] != nx * ny * nz * sizeof(float))
            return err_set(-EINVAL, "volume seq %llu: payload of %zu bytes, expected n0 x n1 x "
                           "n2 x 4 = %zu", seq, len[0], nx * ny * nz * sizeof(float));
        return 0;
    }
    if (nframes != 3)
        return err_set(-EINVAL, "volume seq %llu: %d slice frames, expected 3 (xy, xz, yz)", seq,
                       nframes);
    const size_t want[3] = {nx * ny * 4, nx * nz * 4, ny * nz * 4};
    static const char *const plane[3] = {"xy", "xz", "yz"};
    for (int i = 0; i < 3; i++)
        if (len[i] != want[i])
            return err_set(-EINVAL, "volume seq %llu: %s slice frame of %zu bytes, expected %zu",
                           seq, plane[i], len[i], want[i]);
    return 0;
}

int64_t wire_parse_seq(const void *json, size_t len)
{
    json_t *o = json_loadb(json, len, 0, NULL);
    json_t *s = json_object_get(o, "seq");
    int64_t v = json_is_integer(s) ? json_integer_value(s) : -1;
    json_decref(o);
    return v;
}

