/* fuzz_segy, fuzz_su — a SEG-Y or Seismic Unix file through io/segy_read.c the way
 * io/file_source.c's read_segy walks it: the layout from the first bytes, then every
 * whole trace: its header (shot key, geometry, sample count checked against the
 * file's) and its samples (decoded, checked finite).  A trailing partial trace is left
 * unread there too. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io/segy_read.h"
#include "stream/error.h"
#include "tests/fuzz/fuzz.h"

static int walk(const uint8_t *data, size_t size, bool su)
{
    fuzz_quiet();
    const char *path = su ? "fuzz-input.su" : "fuzz-input.sgy";
    struct segy_layout l;
    /* read_segy hands the parsers the first 3600 bytes (or the whole, shorter file). */
    size_t head = size < SEGY_FILE_HEADER ? size : SEGY_FILE_HEADER;
    int rc = su ? su_layout_parse(data, head, path, &l) : segy_layout_parse(data, head, path, &l);
    if (rc)
        return rc;
    if (l.trace0 > size) /* the file ends inside its extended textual headers */
        return err_set(-EINVAL, "%s: %zu bytes, the traces start at byte %zu", path, size, l.trace0);
    size_t ntraces = (size - l.trace0) / l.trace_bytes;
    float *out = malloc((size_t)l.ns * sizeof(float));
    if (!out)
        return err_set(-ENOMEM, "%s: out of memory", path);
    int first = 0;
    for (size_t t = 0; t < ntraces; t++) {
        const uint8_t *tr = data + l.trace0 + t * l.trace_bytes;
        size_t off = l.trace0 + t * l.trace_bytes;
        struct segy_trace_hdr ti;
        segy_trace_header(&l, tr, &ti);
        if (ti.ns != 0 && ti.ns != l.ns) {
            if (!first)
                first = err_set(-EINVAL, "%s: trace %zu (byte %zu): header byte 115 says %d "
                                "samples, the file %d", path, t, off, ti.ns, l.ns);
            continue;
        }
        int r = segy_trace_samples(&l, tr, out, path, (long)t, off);
        if (r && !first)
            first = r;
    }
    free(out);
    return first;
}

int fuzz_segy(const uint8_t *data, size_t size)
{
    return walk(data, size, false);
}

int fuzz_su(const uint8_t *data, size_t size)
{
    return walk(data, size, true);
}
