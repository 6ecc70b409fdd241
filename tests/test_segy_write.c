/* io/segy_write: a block of traces (segy_writer_traces, what the model job writes) is
 * the same file, byte for byte, as the same traces one call each; segyio reads back the
 * headers and samples written; a write that fails (the file size limit) is an error
 * naming the file and the traces, they are not counted and the file is cut back to its
 * whole traces, so that the block written again lands where it belongs. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <segyio/segy.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "io/segy_write.h"
#include "stream/error.h"
#include "tests/support.h"

#define NS 37
#define NTR 41
#define STRIDE (NS + 5)

static void make(struct segy_trace_info *info, float *s)
{
    for (int i = 0; i < NTR; i++) {
        info[i] = (struct segy_trace_info){.shot = 3 + i / 10, .channel = i + 1};
        info[i].src[0] = 1000.25;
        info[i].src[1] = 2000.5;
        info[i].src[2] = 12.0;
        info[i].rec[0] = 100.0 + 12.5 * i;
        info[i].rec[1] = 50.0 - 3.25 * i;
        info[i].rec[2] = 7.5;
        if (i % 3 == 0) {
            info[i].has_cdp = true;
            info[i].cdp = 100 + i;
            info[i].inline_no = 7;
            info[i].crossline_no = i;
            info[i].cdp_xy[0] = 11.0 * i;
            info[i].cdp_xy[1] = -4.0 * i;
        }
        for (int k = 0; k < STRIDE; k++)
            s[(size_t)i * STRIDE + k] = k < NS ? sinf(0.3f * k + i) * (1.0f + i) : NAN; /* past NS: not written */
    }
}

static char *slurp(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    rewind(f);
    char *b = malloc((size_t)*len);
    cr_assert_eq(fread(b, 1, (size_t)*len, f), (size_t)*len);
    fclose(f);
    return b;
}

Test(segy_write, block_equals_single_traces)
{
    char *dir = test_tmpdir();
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s/one.segy", dir);
    snprintf(b, sizeof b, "%s/block.segy", dir);
    static struct segy_trace_info info[NTR];
    static float s[NTR * STRIDE];
    make(info, s);
    struct segy_writer *w;
    cr_assert_eq(segy_writer_open(a, NS, 2000, -100, "one by one", &w), 0, "%s", err_msg());
    for (int i = 0; i < NTR; i++)
        cr_assert_eq(segy_writer_trace(w, &info[i], s + (size_t)i * STRIDE), 0, "%s", err_msg());
    cr_assert_eq(segy_writer_count(w), NTR);
    cr_assert_eq(segy_writer_close(w), 0, "%s", err_msg());
    /* the same traces in blocks of 1, 17 and 23 (past the first block's buffer) */
    cr_assert_eq(segy_writer_open(b, NS, 2000, -100, "one by one", &w), 0, "%s", err_msg());
    cr_assert_eq(segy_writer_traces(w, info, s, STRIDE, 1), 0, "%s", err_msg());
    cr_assert_eq(segy_writer_traces(w, info + 1, s + STRIDE, STRIDE, 17), 0, "%s", err_msg());
    cr_assert_eq(segy_writer_traces(w, info + 18, s + 18 * STRIDE, STRIDE, NTR - 18), 0, "%s", err_msg());
    cr_assert_eq(segy_writer_traces(w, info, s, STRIDE, 0), 0);
    cr_assert_eq(segy_writer_count(w), NTR);
    cr_assert_eq(segy_writer_close(w), 0, "%s", err_msg());
    long la, lb;
    char *da = slurp(a, &la), *db = slurp(b, &lb);
    cr_assert_eq(la, 3600 + NTR * (240 + 4 * NS));
    cr_assert_eq(lb, la);
    cr_assert_eq(memcmp(da, db, (size_t)la), 0, "the block file differs from the one-trace file");
    free(da);
    free(db);

    /* segyio reads back what was written */
    segy_file *fp = segy_open(b, "rb");
    cr_assert_not_null(fp);
    char bin[SEGY_BINARY_HEADER_SIZE];
    cr_assert_eq(segy_binheader(fp, bin), SEGY_OK);
    cr_assert_eq(segy_samples(bin), NS);
    const long trace0 = segy_trace0(bin);
    const int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, NS);
    for (int i = 0; i < NTR; i += 5) {
        char th[SEGY_TRACE_HEADER_SIZE];
        int32_t v;
        cr_assert_eq(segy_traceheader(fp, i, th, trace0, bsize), SEGY_OK);
        segy_get_field(th, SEGY_TR_SEQ_FILE, &v);
        cr_assert_eq(v, i + 1);
        segy_get_field(th, SEGY_TR_FIELD_RECORD, &v);
        cr_assert_eq(v, info[i].shot);
        segy_get_field(th, SEGY_TR_NUMBER_ORIG_FIELD, &v);
        cr_assert_eq(v, i + 1);
        segy_get_field(th, SEGY_TR_GROUP_X, &v);
        cr_assert_eq(v, (int32_t)lround(info[i].rec[0] * 100), "trace %d group x %d", i, v);
        segy_get_field(th, SEGY_TR_OFFSET, &v);
        cr_assert_eq(v, (int32_t)lround(hypot(info[i].rec[0] - 1000.25, info[i].rec[1] - 2000.5)));
        segy_get_field(th, SEGY_TR_ENSEMBLE, &v);
        cr_assert_eq(v, info[i].has_cdp ? 100 + i : 0);
        float tr[NS];
        cr_assert_eq(segy_readtrace(fp, i, tr, trace0, bsize), SEGY_OK);
        segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, NS, tr);
        for (int k = 0; k < NS; k++)
            cr_assert_eq(tr[k], s[(size_t)i * STRIDE + k], "trace %d sample %d", i, k);
    }
    segy_close(fp);
    test_rmtree(dir);
}

Test(segy_write, failed_write_names_file_and_traces)
{
    /* a file size limit past the headers and two traces: the block of the rest fails */
    char *dir = test_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/short.segy", dir);
    static struct segy_trace_info info[NTR];
    static float s[NTR * STRIDE];
    make(info, s);
    signal(SIGXFSZ, SIG_IGN); /* write() then fails with EFBIG instead of killing us */
    struct rlimit rl = {.rlim_cur = 3600 + 2 * (240 + 4 * NS), .rlim_max = RLIM_INFINITY};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    struct segy_writer *w;
    cr_assert_eq(segy_writer_open(path, NS, 2000, -100, "short", &w), 0, "%s", err_msg());
    cr_assert_eq(segy_writer_traces(w, info, s, STRIDE, 2), 0, "%s", err_msg());
    int rc = segy_writer_traces(w, info + 2, s + 2 * STRIDE, STRIDE, 10);
    cr_assert_eq(rc, -EIO);
    cr_assert_not_null(strstr(err_msg(), "short.segy: writing traces 3..12 failed"), "%s", err_msg());
    cr_assert_eq(segy_writer_count(w), 2, "the failed block is not counted");
    /* the file is cut back to its whole traces, and the same block written again once
     * there is room lands where it belongs: the file is then the one-call-a-trace file */
    rl.rlim_cur = RLIM_INFINITY;
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    cr_assert_eq(segy_writer_traces(w, info + 2, s + 2 * STRIDE, STRIDE, 10), 0, "%s", err_msg());
    cr_assert_eq(segy_writer_close(w), 0, "%s", err_msg());
    char ref[4200];
    snprintf(ref, sizeof ref, "%s/ref.segy", dir);
    cr_assert_eq(segy_writer_open(ref, NS, 2000, -100, "short", &w), 0, "%s", err_msg());
    for (int i = 0; i < 12; i++)
        cr_assert_eq(segy_writer_trace(w, &info[i], s + (size_t)i * STRIDE), 0, "%s", err_msg());
    cr_assert_eq(segy_writer_close(w), 0, "%s", err_msg());
    long la, lb;
    char *da = slurp(ref, &la), *db = slurp(path, &lb);
    cr_assert_eq(lb, la, "%ld bytes against %ld", lb, la);
    cr_assert_eq(memcmp(da, db, (size_t)la), 0, "the rewritten file differs from the one-trace file");
    free(da);
    free(db);
    test_rmtree(dir);
}
