/* fuzz_state — a checkpoint file through stream/state.c state_load, as a job does at
 * start (and, when it loads, the ledger look-ups a resumed run makes).  The
 * fingerprint the job would pass is taken from the input itself (bytes 8-15, where the
 * file keeps it), so inputs get past the "another configuration" check and reach the
 * sizes, the arrays and the checksum. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"
#include "stream/state.h"
#include "tests/fuzz/fuzz.h"

int fuzz_state(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    int rc = fuzz_write("state.bin", data, size);
    if (rc)
        return err_set(rc, "state.bin: cannot write the input");
    uint64_t fp = 0;
    if (size >= 16)
        memcpy(&fp, data + 8, sizeof fp);
    struct state s;
    rc = state_load(fuzz_dir(), fp, &s);
    if (!rc) {
        (void)state_ledger_has(&s, 1);
        rc = state_ledger_add(&s, 1);
        if (!rc && !state_ledger_has(&s, 1))
            abort();
        state_free(&s);
    }
    return rc;
}
