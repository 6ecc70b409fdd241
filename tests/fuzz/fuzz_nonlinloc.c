/* fuzz_nonlinloc — a NonLinLoc grid (ROOT.hdr and ROOT.buf, split at FUZZ_PART_SEP)
 * through io/nonlinloc.c nll_read, and, when it loads, the look-ups the travel-time
 * tables make (nll_value at the corners, the middle and outside the grid), and its
 * TRANSFORM both ways at the same points (io/nll_transform.h).  Invariant
 * checked: every value of a loaded grid is finite. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/nonlinloc.h"
#include "stream/error.h"
#include "tests/fuzz/fuzz.h"

int fuzz_nonlinloc(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    const uint8_t *sep = size >= FUZZ_PART_SEP_LEN ? memmem(data, size, FUZZ_PART_SEP, FUZZ_PART_SEP_LEN) : NULL;
    size_t hlen = sep ? (size_t)(sep - data) : size;
    const uint8_t *buf = sep ? sep + FUZZ_PART_SEP_LEN : data + size;
    int rc = fuzz_write("grid.hdr", data, hlen);
    if (!rc)
        rc = fuzz_write("grid.buf", buf, (size_t)(data + size - buf));
    if (rc)
        return err_set(rc, "grid.hdr: cannot write the input");
    char root[512];
    snprintf(root, sizeof root, "%s/grid", fuzz_dir());
    struct nll_grid g;
    rc = nll_read(root, &g);
    if (rc)
        return rc;
    /* A loaded grid holds only finite values: a NaN or an infinite travel time would
     * go straight into the locate engine's delays. */
    size_t n = (size_t)g.n[0] * g.n[1] * g.n[2];
    for (size_t i = 0; i < n; i++)
        if (!isfinite(g.v[i]))
            abort();
    for (int c = 0; c < 10; c++) {
        double p[3];
        for (int a = 0; a < 3; a++) {
            double span = (g.n[a] - 1) * g.d[a];
            p[a] = c < 8 ? g.o[a] + (((c >> a) & 1) ? span : 0) : c == 8 ? g.o[a] + span / 2
                                                                         : g.o[a] - 1 - span;
        }
        double v = nll_value(&g, p[0], p[1], p[2]);
        (void)v;
        double lat, lon, x, y;
        nll_xy_to_latlon(&g.tr, p[0], p[1], &lat, &lon);
        nll_latlon_to_xy(&g.tr, lat, lon, &x, &y);
    }
    nll_free(&g);
    return 0;
}
