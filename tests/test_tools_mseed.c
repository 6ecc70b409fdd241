/* miniSEED writer: records read back with libmseed give the same codes, start time,
 * rate and samples (exact for float32; to the count for Steim-2), record after record. */
#include <criterion/criterion.h>
#include <libmseed.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/mseed_write.h"
#include "tests/support.h"

/* Read every record of PATH; concatenate the samples (as double) and check headers. */
static size_t read_back(const char *path, double *out, size_t cap, hptime_t *t0, double *rate,
                        int *nrec, const char *sta)
{
    MSFileParam *fp = NULL;
    MSRecord *msr = NULL;
    size_t n = 0;
    *nrec = 0;
    int rc;
    while ((rc = ms_readmsr_r(&fp, &msr, path, 0, NULL, NULL, 1, 1, 0)) == MS_NOERROR) {
        if (*nrec == 0) {
            *t0 = msr->starttime;
            *rate = msr->samprate;
        }
        cr_assert_str_eq(msr->network, "XX");
        cr_assert_str_eq(msr->station, sta);
        cr_assert_str_eq(msr->channel, "HHZ");
        cr_assert_eq(msr->sequence_number, *nrec + 1);
        /* records are contiguous */
        cr_assert_eq(msr->starttime, *t0 + (hptime_t)llround(n * 1e6 / *rate));
        for (int64_t i = 0; i < msr->numsamples && n < cap; i++)
            out[n++] = msr->sampletype == 'f' ? ((float *)msr->datasamples)[i]
                                              : ((int32_t *)msr->datasamples)[i];
        (*nrec)++;
    }
    cr_assert_eq(rc, MS_ENDOFFILE, "libmseed: %s", ms_errorstr(rc));
    ms_readmsr_r(&fp, &msr, NULL, 0, NULL, NULL, 0, 0, 0);
    return n;
}

Test(tools_mseed, float32_and_steim2_round_trip)
{
    char *dir = test_tmpdir();
    size_t n = 5000;
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(sin(0.01 * i) * 3.0 + 0.001 * (double)(i % 7));
    const int64_t t0_ns = 1767225600000000000LL + 123456000LL; /* 2026-01-01 + 0.123456 s */
    const char *encs[] = {"float32", "steim2"};
    for (int e = 0; e < 2; e++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.mseed", dir, encs[e]);
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        struct mseed_channel ch = {"XX", "ST01", "", "HHZ", 500.0, mseed_encoding_parse(encs[e]),
                                   512, 1000.0, 1};
        int nrec = mseed_write_f32(f, path, &ch, t0_ns, x, n);
        cr_assert_gt(nrec, 1);
        /* a second call continues the sequence numbers and the time */
        int nrec2 = mseed_write_f32(f, path, &ch, t0_ns + (int64_t)n * 2000000, x, 100);
        cr_assert_gt(nrec2, 0);
        fclose(f);

        double *y = malloc((n + 100) * sizeof *y);
        hptime_t t0 = 0;
        double rate = 0;
        int got_rec;
        size_t m = read_back(path, y, n + 100, &t0, &rate, &got_rec, "ST01");
        cr_assert_eq(got_rec, nrec + nrec2);
        cr_assert_eq(m, n + 100);
        cr_assert_eq(t0, (hptime_t)(t0_ns / 1000));
        cr_assert_float_eq(rate, 500.0, 1e-9);
        for (size_t i = 0; i < n; i++) {
            if (e == 0)
                cr_assert_eq((float)y[i], x[i], "sample %zu", i);
            else
                cr_assert_eq(y[i], nearbyint(x[i] * 1000.0), "sample %zu", i);
        }
        for (size_t i = 0; i < 100; i++)
            cr_assert_float_eq(y[n + i], e == 0 ? x[i] : nearbyint(x[i] * 1000.0), 1e-6);
        free(y);
    }
    free(x);
    test_rmtree(dir);
    free(dir);
}

Test(tools_mseed, bad_codes_and_record_length_refused)
{
    float x[4] = {0};
    struct mseed_channel ch = {"XX", "TOOLONG", "", "HHZ", 100.0, MSEED_ENC_FLOAT32, 512, 1, 1};
    FILE *f = fopen("/dev/null", "wb");
    cr_assert_lt(mseed_write_f32(f, "null", &ch, 0, x, 4), 0);
    ch.sta = "OK";
    ch.reclen = 500;
    cr_assert_lt(mseed_write_f32(f, "null", &ch, 0, x, 4), 0);
    fclose(f);
    cr_assert_eq(mseed_encoding_parse("steim1"), MSEED_ENC_STEIM1);
    cr_assert_eq(mseed_encoding_parse("ieee"), -1);
}
