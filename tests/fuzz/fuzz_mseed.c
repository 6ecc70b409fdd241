/* fuzz_mseed — miniSEED bytes through io/mseed_read.c as the locate job's file input
 * uses them: mseed_read_buffer (records decoded, bad ones counted), then, when the
 * channels agree on a rate, the span cut into blocks (mseed_set_blocks) whose samples
 * are all read.  The blocks are cut only when the span is small (the job bounds it by
 * its window; here at most 2^22 samples in all, to keep each run short). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io/mseed_read.h"
#include "stream/error.h"
#include "tests/fuzz/fuzz.h"

static int on_block(const struct trace_block *b, void *user)
{
    /* Read every sample (ASan checks the extent), count the valid ones. */
    size_t *valid = user;
    for (int r = 0; r < b->nrec; r++)
        for (int k = 0; k < b->ns; k++)
            *valid += (size_t)trace_block_valid(b, r, k);
    return 0;
}

int fuzz_mseed(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return -ENOMEM;
    memcpy(buf, data, size);
    struct mseed_set set = {0};
    struct mseed_stats st = {0};
    int rc = mseed_read_buffer("fuzz-input.mseed", buf, size, &set, &st);
    free(buf);
    double rate = 0;
    int64_t t0 = 0, t1 = 0;
    if (!rc && set.ntr > 0 && mseed_set_span(&set, &rate, &t0, &t1) == 0) {
        double samples = ((double)t1 - (double)t0) * 1e-9 * rate * set.ntr;
        if (samples >= 0 && samples < (double)(1 << 22)) {
            size_t valid = 0;
            rc = mseed_set_blocks(&set, 256, on_block, &valid, NULL);
            if ((int64_t)valid > st.samples) /* more valid samples than were decoded */
                abort();
        }
    }
    mseed_set_free(&set);
    if (!rc && st.rejected > 0)
        return err_set(-EINVAL, "fuzz-input.mseed: %lld records rejected",
                       (long long)st.rejected);
    return rc;
}
