/* fuzz_sac — a SAC file image through io/sac_read.c sac_read_buffer, as the locate
 * job's file input reads it (after sac_detect).  Invariants checked: a decoded trace has
 * 0 <= npts <= what the image holds, a positive finite interval, and a station name. */
#include <stdlib.h>

#include "io/sac_read.h"
#include "stream/error.h"
#include "tests/fuzz/fuzz.h"

int fuzz_sac(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    (void)sac_detect(data, size);
    struct sac_trace t;
    int rc = sac_read_buffer("fuzz-input.sac", data, size, &t);
    if (rc)
        return rc;
    if (t.npts < 0 || (size_t)t.npts > (size - SAC_HEADER_BYTES) / 4 || !(t.delta > 0) || !t.id.sta[0])
        abort();
    volatile float s = 0;
    for (int64_t i = 0; i < t.npts; i++) /* every sample is readable (ASan) */
        s += t.x[i];
    (void)s; /* clang 14 -Wunused-but-set-variable: the sum is never read otherwise */
    sac_trace_free(&t);
    return 0;
}
