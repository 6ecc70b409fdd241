/* miniSEED reading: records packed here with libmseed (msr_pack) in every encoding
 * decode to the same samples; gaps and overlaps become segments and masks; damaged
 * records and non-record bytes are rejected and counted, the rest is kept. */
#include <criterion/criterion.h>
#include <libmseed.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/mseed_read.h"
#include "stream/error.h"

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
    }
    memcpy(m->buf + m->n, rec, len);
    m->n += len;
}

/* Pack N samples (of TYPE 'i', 'f' or 'd') starting at T0 (us) into records of RECLEN. */
static int pack(struct mem *m, const char *sta, const char *cha, hptime_t t0, double rate, int enc, const void *x,
                char type, int n, int reclen)
{
    MSRecord *msr = msr_init(NULL);
    strcpy(msr->network, "XX");
    strcpy(msr->station, sta);
    strcpy(msr->channel, cha);
    msr->dataquality = 'D';
    msr->starttime = t0;
    msr->samprate = rate;
    msr->reclen = reclen;
    msr->encoding = (int8_t)enc;
    msr->byteorder = 1;
    msr->sequence_number = 1;
    size_t es = type == 'd' ? 8 : 4;
    msr->datasamples = malloc(n * es);
    memcpy(msr->datasamples, x, n * es);
    msr->numsamples = n;
    msr->sampletype = type;
    int64_t packed = 0;
    int recs = msr_pack(msr, sink, m, &packed, 1, 0);
    msr_free(&msr);
    return recs;
}

static const hptime_t T0 = (hptime_t)1700000000 * HPTMODULUS;

Test(mseed_read, every_encoding_round_trips)
{
    int n = 3000;
    int32_t *xi = malloc(n * sizeof *xi);
    float *xf = malloc(n * sizeof *xf);
    double *xd = malloc(n * sizeof *xd);
    for (int i = 0; i < n; i++) {
        xi[i] = (int32_t)(20000.0 * sin(0.05 * i) + (i % 7) * 300 - 1000);
        xf[i] = (float)(1.5e-3 * sin(0.11 * i) + 1e-5 * i);
        xd[i] = -2.25e4 * cos(0.07 * i);
    }
    struct {
        int enc;
        char type;
        const void *x;
        const char *cha;
    } cases[] = {{DE_STEIM1, 'i', xi, "HHZ"}, {DE_STEIM2, 'i', xi, "HHN"}, {DE_INT32, 'i', xi, "HHE"},
                 {DE_FLOAT32, 'f', xf, "HH1"}, {DE_FLOAT64, 'd', xd, "HH2"}};
    struct mem m = {0};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        cr_assert_gt(pack(&m, "S1", cases[c].cha, T0, 100.0, cases[c].enc, cases[c].x, cases[c].type, n, 512), 0);
    struct mseed_set set = {0};
    struct mseed_stats st = {0};
    cr_assert_eq(mseed_read_buffer("mem", m.buf, m.n, &set, &st), 0, "%s", err_msg());
    cr_expect_eq(st.rejected, 0);
    cr_expect_eq(st.samples, 5 * n);
    cr_assert_eq(set.ntr, 5);
    for (int c = 0; c < 5; c++) {
        const struct mseed_trace *t = &set.tr[c];
        cr_expect_str_eq(t->id.cha, cases[c].cha);
        cr_expect_str_eq(t->id.sta, "S1");
        cr_assert_eq(t->nseg, 1, "%s: %d segments", t->id.cha, t->nseg);
        cr_assert_eq(t->seg[0].n, n);
        cr_expect_eq(t->seg[0].t0_ns, (int64_t)T0 * 1000);
        for (int i = 0; i < n; i++) {
            float want = cases[c].type == 'i' ? (float)xi[i] : cases[c].type == 'f' ? xf[i] : (float)xd[i];
            if (t->seg[0].x[i] != want)
                cr_assert_fail("%s sample %d: %g, packed %g", t->id.cha, i, t->seg[0].x[i], want);
        }
    }
    mseed_set_free(&set);
    free(m.buf);
    free(xi);
    free(xf);
    free(xd);
}

Test(mseed_read, gaps_and_overlaps)
{
    int32_t x[1000];
    for (int i = 0; i < 1000; i++)
        x[i] = i;
    struct mem m = {0};
    pack(&m, "S1", "HHZ", T0, 100.0, DE_STEIM2, x, 'i', 1000, 512);
    /* 0.5 s (50 samples) after the end */
    pack(&m, "S1", "HHZ", T0 + 10500000, 100.0, DE_STEIM2, x, 'i', 500, 512);
    /* overlapping the last 100 samples of the previous run */
    pack(&m, "S1", "HHZ", T0 + 14500000, 100.0, DE_STEIM2, x, 'i', 300, 512);
    struct mseed_set set = {0};
    struct mseed_stats st = {0};
    cr_assert_eq(mseed_read_buffer("mem", m.buf, m.n, &set, &st), 0);
    cr_expect_eq(st.gaps, 1);
    cr_expect_eq(st.overlap_samples, 100);
    cr_expect_eq(st.rejected, 0);
    double rate;
    int64_t a, b;
    cr_assert_eq(mseed_set_span(&set, &rate, &a, &b), 0);
    cr_expect_eq(a, (int64_t)T0 * 1000);
    cr_expect_eq(b, (int64_t)T0 * 1000 + 17500000000LL);
    int ns = 1750;
    float *d = malloc(ns * sizeof(float));
    uint8_t *mk = malloc(ns);
    mseed_set_extract(&set, a, 0.01, ns, d, mk);
    for (int k = 0; k < ns; k++) {
        int in_gap = k >= 1000 && k < 1050;
        float want = k < 1000 ? (float)k : k < 1550 ? (float)(k - 1050) : (float)(k - 1450);
        cr_assert_eq(mk[k], !in_gap, "sample %d: mask %d", k, mk[k]);
        if (!in_gap)
            cr_assert_eq(d[k], want, "sample %d: %g, expected %g (first read wins)", k, d[k], want);
        else
            cr_assert(isnan(d[k]));
    }
    free(d);
    free(mk);
    mseed_set_free(&set);
    free(m.buf);
}

Test(mseed_read, damaged_records_are_counted_and_skipped)
{
    int n = 2000;
    int32_t *x = malloc(n * sizeof *x);
    for (int i = 0; i < n; i++)
        x[i] = (int32_t)(1000.0 * sin(0.3 * i)) + i;
    struct mem good = {0};
    int recs = pack(&good, "S1", "HHZ", T0, 100.0, DE_STEIM2, x, 'i', n, 512);
    cr_assert_geq(recs, 4);
    /* record 0 | 700 bytes of junk | records 1, 2 | record 3 with damaged Steim frames | rest, cut short */
    struct mem bad = {0};
    sink(good.buf, 512, &bad);
    char junk[700];
    for (int i = 0; i < 700; i++)
        junk[i] = (char)(i * 37 + 11);
    sink(junk, 700, &bad);
    sink(good.buf + 512, 1024, &bad);
    char rec3[512];
    memcpy(rec3, good.buf + 1536, 512);
    for (int i = 128; i < 320; i++) /* frames 1-3: wrong differences, wrong count */
        rec3[i] ^= (char)0x5a;
    sink(rec3, 512, &bad);
    sink(good.buf + 2048, good.n - 2048 - 100, &bad);
    struct mseed_set set = {0};
    struct mseed_stats st = {0};
    cr_assert_eq(mseed_read_buffer("bad.mseed", bad.buf, bad.n, &set, &st), 0, "%s", err_msg());
    cr_expect_eq(st.rejected, 3, "junk, damaged record, truncated last record: %lld rejected", (long long)st.rejected);
    cr_expect_eq(st.records, recs - 2, "%lld records kept of %d", (long long)st.records, recs);
    /* what was kept is exactly the packed samples at their times */
    cr_assert_eq(set.ntr, 1);
    int64_t kept = 0;
    for (int s = 0; s < set.tr[0].nseg; s++) {
        const struct mseed_segment *g = &set.tr[0].seg[s];
        int64_t k0 = (g->t0_ns - (int64_t)T0 * 1000) / 10000000;
        for (int64_t i = 0; i < g->n; i++)
            cr_assert_eq(g->x[i], (float)x[k0 + i], "segment %d sample %lld", s, (long long)i);
        kept += g->n;
    }
    cr_expect_eq(kept, st.samples);
    cr_expect_lt(kept, n);
    mseed_set_free(&set);
    /* garbage only: no crash, counted */
    memset(&st, 0, sizeof st);
    cr_expect_eq(mseed_read_buffer("junk", junk, sizeof junk, &set, &st), 0);
    cr_expect_eq(st.rejected, 1);
    cr_expect_eq(set.ntr, 0);
    mseed_set_free(&set);
    free(good.buf);
    free(bad.buf);
    free(x);
}

Test(mseed_read, blocks_cover_the_span_contiguously)
{
    int32_t x[1234];
    for (int i = 0; i < 1234; i++)
        x[i] = i;
    struct mem m = {0};
    pack(&m, "S1", "HHZ", T0, 200.0, DE_STEIM1, x, 'i', 1234, 512);
    pack(&m, "S2", "HHZ", T0 + 1000000, 200.0, DE_STEIM1, x, 'i', 1000, 512);
    struct mseed_set set = {0};
    struct mseed_stats st = {0};
    cr_assert_eq(mseed_read_buffer("mem", m.buf, m.n, &set, &st), 0);
    struct acc {
        int64_t next_ns;
        int blocks, total;
        double sum;
    } acc = {(int64_t)T0 * 1000, 0, 0, 0};
    int fn(const struct trace_block *b, void *u);
    cr_assert_eq(mseed_set_blocks(&set, 300, fn, &acc, NULL), 0);
    cr_expect_eq(acc.total, 1234);
    cr_expect_eq(acc.blocks, 5);
    /* S1 holds 0..1233, S2 0..999 shifted by 200 samples: every sample once */
    cr_expect_float_eq(acc.sum, 1233.0 * 1234 / 2 + 999.0 * 1000 / 2, 1e-6);
    mseed_set_free(&set);
    free(m.buf);
}

int fn(const struct trace_block *b, void *u)
{
    struct {
        int64_t next_ns;
        int blocks, total;
        double sum;
    } *a = u;
    cr_expect_eq(b->t0_ns, a->next_ns, "block %lld starts at %lld, expected %lld", (long long)b->seq,
                 (long long)b->t0_ns, (long long)a->next_ns);
    cr_expect_eq(b->nrec, 2);
    for (int r = 0; r < b->nrec; r++)
        for (int k = 0; k < b->ns; k++)
            if (trace_block_valid(b, r, k))
                a->sum += b->data[trace_block_at(b, r, k)];
    a->next_ns = b->t0_ns + (int64_t)llround(b->ns * b->dt * 1e9);
    a->blocks++;
    a->total += b->ns;
    return 0;
}
