/* miniSEED records whose header does not fit the record: valid records are packed here
 * with libmseed (msr_pack), then their sample count (or data offset, encoding, Steim
 * frame count) is patched.  Each such record is rejected before decoding, counted and
 * logged with its place (file + byte offset; message number + frame + byte offset for
 * ZeroMQ payloads); the records around it are kept intact.  libmseed's own messages
 * arrive as seislive log lines. */
#include <criterion/criterion.h>
#include <libmseed.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/mseed_read.h"
#include "io/mseed_write.h"
#include "io/wire.h"
#include "stream/error.h"
#include "stream/log.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

struct mem {
    char *buf;
    size_t n, cap;
};

static void sink(char *rec, int len, void *h)
{
    struct mem *m = h;
    if (m->n + (size_t)len > m->cap) {
        m->cap = (m->n + len) * 2;
        m->buf = realloc(m->buf, m->cap);
        cr_assert_not_null(m->buf);
    }
    memcpy(m->buf + m->n, rec, len);
    m->n += len;
}

static const hptime_t T0 = (hptime_t)1700000000 * HPTMODULUS;
#define RECLEN 512

/* N samples (0, 1, 2 ... as TYPE 'i', 'f', 'd' or 'a') of ENC into big-endian records. */
static int pack(struct mem *m, const char *cha, int enc, int n)
{
    MSRecord *msr = msr_init(NULL);
    strcpy(msr->network, "XX");
    strcpy(msr->station, "S1");
    strcpy(msr->channel, cha);
    msr->dataquality = 'D';
    msr->starttime = T0;
    msr->samprate = 100.0;
    msr->reclen = RECLEN;
    msr->encoding = (int8_t)enc;
    msr->byteorder = 1;
    msr->sequence_number = 1;
    char type = enc == DE_ASCII ? 'a' : enc == DE_FLOAT32 ? 'f' : enc == DE_FLOAT64 ? 'd' : 'i';
    size_t es = type == 'd' ? 8 : type == 'a' ? 1 : 4;
    msr->datasamples = malloc(n * es);
    for (int i = 0; i < n; i++) {
        if (type == 'i')
            ((int32_t *)msr->datasamples)[i] = i;
        else if (type == 'f')
            ((float *)msr->datasamples)[i] = (float)i;
        else if (type == 'd')
            ((double *)msr->datasamples)[i] = i;
        else
            ((char *)msr->datasamples)[i] = (char)('a' + i % 26);
    }
    msr->numsamples = n;
    msr->sampletype = type;
    int64_t packed = 0;
    int recs = msr_pack(msr, sink, m, &packed, 1, 0);
    msr_free(&msr);
    cr_assert_eq(packed, n);
    return recs;
}

static unsigned be16(const char *p)
{
    return (unsigned)(unsigned char)p[0] << 8 | (unsigned char)p[1];
}

static void set_be16(char *p, unsigned v)
{
    p[0] = (char)(v >> 8);
    p[1] = (char)v;
}

/* Header fields of a packed (big-endian) record. */
static unsigned rec_count(const char *r) { return be16(r + 30); }
static unsigned rec_offset(const char *r) { return be16(r + 44); }

/* Samples the data section of record R can hold in fixed-size encoding of SZ bytes. */
static unsigned capacity(const char *r, int sz)
{
    return (RECLEN - rec_offset(r)) / (unsigned)sz;
}

/* Blockette TYPE of R (the chain from the header's first-blockette offset). */
static char *blockette(char *r, unsigned type)
{
    for (unsigned off = be16(r + 46), k = 0; off >= 48 && off + 4 <= RECLEN && k < 8; off = be16(r + off + 2), k++)
        if (be16(r + off) == type)
            return r + off;
    cr_assert_fail("no blockette %u", type);
    return NULL;
}

/* The log of this test process in a file, read back as one string. */
static char *g_logdir, g_logpath[512];

static void log_to_file(void)
{
    g_logdir = test_tmpdir();
    snprintf(g_logpath, sizeof g_logpath, "%s/log", g_logdir);
    cr_assert_eq(log_set_file(g_logpath), 0);
}

static void log_done(void)
{
    log_set_file(NULL);
    test_rmtree(g_logdir);
    free(g_logdir);
}

static int log_has(const char *needle)
{
    return ts_count_in_file(g_logpath, needle);
}

static const struct {
    int enc, size; /* size 0: Steim */
    const char *cha;
} ENCS[] = {{DE_INT16, 2, "HH1"},   {DE_INT32, 4, "HH2"},  {DE_FLOAT32, 4, "HH3"},
            {DE_FLOAT64, 8, "HH4"}, {DE_STEIM1, 0, "HH5"}, {DE_STEIM2, 0, "HH6"}};
#define NENC (sizeof ENCS / sizeof ENCS[0])

/* For each encoding: 3 records; record 1 claims one sample more than its data section
 * holds (fixed-size) or than its frames hold (Steim), record 2 (the last of the buffer,
 * where an over-read leaves the allocation) claims 65535. */
Test(mseed_validate, counts_beyond_the_record_are_rejected_in_every_encoding)
{
    log_to_file();
    for (size_t e = 0; e < NENC; e++) {
        struct mem m = {0};
        /* exactly 3 full records: pack once to learn a record's count, then 3 times that */
        struct mem probe = {0};
        pack(&probe, ENCS[e].cha, ENCS[e].enc, 2000);
        unsigned per = rec_count(probe.buf);
        free(probe.buf);
        cr_assert_gt(per, 0u);
        int recs = pack(&m, ENCS[e].cha, ENCS[e].enc, 3 * (int)per);
        cr_assert_eq(recs, 3, "encoding %d: %d records", ENCS[e].enc, recs);
        char *r1 = m.buf + RECLEN, *r2 = m.buf + 2 * RECLEN;
        unsigned too_many;
        if (ENCS[e].size) {
            too_many = capacity(r1, ENCS[e].size) + 1;
        } else {
            unsigned frames = (RECLEN - rec_offset(r1)) / 64, w = ENCS[e].enc == DE_STEIM1 ? 4 : 7;
            too_many = w * (15 * frames - 2) + 1;
        }
        set_be16(r1 + 30, too_many);
        set_be16(r2 + 30, 65535);
        struct mseed_set set = {0};
        struct mseed_stats st = {0};
        cr_assert_eq(mseed_read_buffer("mem.mseed", m.buf, m.n, &set, &st), 0, "%s", err_msg());
        cr_expect_eq(st.rejected, 2, "encoding %d: %lld rejected", ENCS[e].enc, (long long)st.rejected);
        cr_expect_eq(st.records, 1);
        cr_assert_eq(set.ntr, 1);
        cr_assert_eq(set.tr[0].nseg, 1);
        cr_assert_eq(set.tr[0].seg[0].n, (int64_t)per, "encoding %d: %lld samples kept, record 0 has %u",
                     ENCS[e].enc, (long long)set.tr[0].seg[0].n, per);
        for (unsigned i = 0; i < per; i++)
            cr_assert_eq(set.tr[0].seg[0].x[i], (float)i);
        mseed_set_free(&set);
        free(m.buf);
    }
    log_done();
}

/* The rejection names the file and byte offset and says why. */
Test(mseed_validate, rejection_names_the_byte_offset_and_the_reason)
{
    log_to_file();
    struct mem m = {0};
    pack(&m, "HHZ", DE_FLOAT32, 3 * 112);
    cr_assert_eq(m.n, 3u * RECLEN);
    char *r1 = m.buf + RECLEN;
    unsigned cap = capacity(r1, 4);
    set_be16(r1 + 30, cap + 1);
    struct mseed_set set = {0};
    struct mseed_stats st = {0};
    cr_assert_eq(mseed_read_buffer("x.mseed", m.buf, m.n, &set, &st), 0);
    cr_expect_eq(st.rejected, 1);
    char want[256];
    snprintf(want, sizeof want, "x.mseed: byte 512: record rejected: header says %u samples of", cap + 1);
    cr_expect_eq(log_has(want), 1, "no line with '%s'", want);
    cr_expect_eq(log_has("the data section holds"), 1);
    mseed_set_free(&set);
    free(m.buf);
    log_done();
}

/* A data offset past the record, an encoding libmseed cannot decode, a Steim frame count
 * beyond the record: rejected before decoding. */
Test(mseed_validate, offset_encoding_and_frame_count_are_checked)
{
    log_to_file();
    /* io/mseed_write's records carry a Blockette 1001 (frame count) after the 1000 */
    struct mem m = {0};
    float x[3000];
    for (int i = 0; i < 3000; i++)
        x[i] = (float)(1000.0 * sin(0.3 * i));
    struct mseed_channel ch = {.net = "XX", .sta = "S1", .loc = "", .chan = "HHZ", .rate = 100.0,
                               .encoding = MSEED_ENC_STEIM2, .reclen = RECLEN, .int_scale = 1.0, .sequence = 1};
    cr_assert_geq(mseed_pack_f32(&ch, (int64_t)T0 * 1000, x, 3000, sink, &m), 4, "%s", err_msg());
    cr_assert_geq(m.n, 4u * RECLEN);
    /* record 1: data offset beyond the record */
    set_be16(m.buf + RECLEN + 44, 600);
    /* record 2: encoding 99 */
    blockette(m.buf + 2 * RECLEN, 1000)[4] = 99;
    /* record 3: blockette 1001 (after the 1000) says 9 frames; 7 fit */
    char *b1001 = blockette(m.buf + 3 * RECLEN, 1001);
    /* msr_pack leaves the frame count 0 ("not given"): claim 9 */
    b1001[7] = 9;
    struct mseed_set set = {0};
    struct mseed_stats st = {0};
    cr_assert_eq(mseed_read_buffer("y.mseed", m.buf, m.n, &set, &st), 0);
    cr_expect_eq(st.rejected, 3, "%lld rejected", (long long)st.rejected);
    cr_expect_eq(log_has("y.mseed: byte 512: record rejected: data offset 600 outside the 512-byte record"), 1);
    cr_expect_eq(log_has("y.mseed: byte 1024: record rejected"), 1);
    cr_expect_eq(log_has("y.mseed: byte 1536: record rejected: blockette 1001 says 9 Steim frames"), 1);
    mseed_set_free(&set);
    free(m.buf);
    log_done();
}

/* Text records: a count beyond the data section is refused before libmseed copies it;
 * a valid text record is refused as not numeric. */
Test(mseed_validate, text_records)
{
    log_to_file();
    struct mem m = {0};
    int recs = pack(&m, "LOG", DE_ASCII, 2 * 456);
    cr_assert_eq(recs, 2);
    set_be16(m.buf + RECLEN + 30, 65535);
    struct mseed_set set = {0};
    struct mseed_stats st = {0};
    cr_assert_eq(mseed_read_buffer("t.mseed", m.buf, m.n, &set, &st), 0);
    cr_expect_eq(st.rejected, 2);
    cr_expect_eq(set.ntr, 0);
    cr_expect_eq(log_has("t.mseed: byte 0: record rejected: sample type 'a' is not numeric"), 1);
    cr_expect_eq(log_has("t.mseed: byte 512: record rejected: header says 65535 samples of"), 1);
    mseed_set_free(&set);
    free(m.buf);
    log_done();
}

/* ZeroMQ "traces" payloads go through the same checks: the message is rejected with its
 * number, frame and byte offset; the payload frame is exactly the records (an
 * over-read leaves its allocation). */
Test(mseed_validate, wire_payload_with_a_count_beyond_the_record_is_rejected)
{
    log_to_file();
    for (int which = 0; which < 2; which++) {
        struct mem m = {0};
        pack(&m, "HHZ", DE_FLOAT32, 2 * 112);
        cr_assert_eq(m.n, 2u * RECLEN);
        char *r1 = m.buf + RECLEN;
        unsigned bad = which == 0 ? capacity(r1, 4) + 1 : 65535;
        set_be16(r1 + 30, bad);
        char *frame = malloc(m.n); /* exactly the payload, as a ZeroMQ frame holds it */
        memcpy(frame, m.buf, m.n);
        const void *frames[1] = {frame};
        size_t len[1] = {m.n};
        struct wire_header h = {.kind = WIRE_TRACES, .sender_seq = -1};
        h.traces = (struct wire_traces_hdr){.t0_ns = (int64_t)T0 * 1000, .dt = 0.01, .nrec = 1, .ns = 224,
                                            .format = WIRE_MSEED};
        float *dst = malloc(224 * sizeof(float));
        struct trace_channel chan[1];
        struct wire_stats st = {0};
        int rc = wire_decode_traces_mseed(&h, frames, len, 1, 17, dst, chan, &st);
        cr_expect_lt(rc, 0, "count %u accepted", bad);
        cr_expect_eq(st.rejected[WIRE_REJ_PAYLOAD], 1);
        char want[256];
        snprintf(want, sizeof want, "message 17: bad payload: miniSEED frame 1 byte 512: header says %u samples",
                 bad);
        cr_expect_not_null(strstr(err_msg(), want), "%s", err_msg());
        /* the unmodified payload decodes */
        memcpy(frame, m.buf, m.n);
        set_be16(frame + RECLEN + 30, 112);
        memset(&st, 0, sizeof st);
        cr_expect_eq(wire_decode_traces_mseed(&h, frames, len, 1, 18, dst, chan, &st), 0, "%s", err_msg());
        for (int k = 0; k < 224; k++)
            cr_assert_eq(dst[k], (float)k, "sample %d: %g", k, dst[k]);
        free(dst);
        free(frame);
        free(m.buf);
    }
    log_done();
}

/* libmseed's own diagnostics (here: a Steim integrity failure) are log lines with a
 * level and the component "libmseed", not bare "Warning:" text on stderr. */
Test(mseed_validate, libmseed_messages_are_log_lines)
{
    log_to_file();
    struct mem m = {0};
    int32_t x[2000];
    for (int i = 0; i < 2000; i++)
        x[i] = (int32_t)(1000.0 * sin(0.3 * i)) + i;
    MSRecord *msr = msr_init(NULL);
    strcpy(msr->network, "XX");
    strcpy(msr->station, "S1");
    strcpy(msr->channel, "HHZ");
    msr->starttime = T0;
    msr->samprate = 100.0;
    msr->reclen = RECLEN;
    msr->encoding = DE_STEIM2;
    msr->byteorder = 1;
    msr->datasamples = x;
    msr->numsamples = 2000;
    msr->sampletype = 'i';
    int64_t packed;
    cr_assert_gt(msr_pack(msr, sink, &m, &packed, 1, 0), 3);
    msr->datasamples = NULL;
    msr_free(&msr);
    for (int i = RECLEN + 128; i < RECLEN + 320; i++)
        m.buf[i] ^= 0x5a;
    struct mseed_set set = {0};
    struct mseed_stats st = {0};
    cr_assert_eq(mseed_read_buffer("s.mseed", m.buf, m.n, &set, &st), 0);
    cr_expect_eq(st.rejected, 1);
    cr_expect_eq(log_has("warn  libmseed "), 1, "no libmseed line at WARN in the log");
    cr_expect_eq(log_has("integrity"), 2, "the libmseed line and the rejection");
    mseed_set_free(&set);
    free(m.buf);
    log_done();
}
