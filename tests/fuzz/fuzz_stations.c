/* fuzz_stations — a station file and a corrections file (split at FUZZ_PART_SEP)
 * through io/stations.c: stations_load, read both as cartesian and as geographic when
 * the file has no header, then stations_load_corrections and the projection back
 * (stations_to_geographic) for every station, as the locate job does for its events.
 * Invariants checked: loaded stations have finite positions and each finds itself. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/stations.h"
#include "stream/error.h"
#include "tests/fuzz/fuzz.h"

int fuzz_stations(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    const uint8_t *sep = size >= FUZZ_PART_SEP_LEN ? memmem(data, size, FUZZ_PART_SEP, FUZZ_PART_SEP_LEN) : NULL;
    size_t slen = sep ? (size_t)(sep - data) : size;
    int rc = fuzz_write("stations.txt", data, slen);
    if (!rc && sep)
        rc = fuzz_write("corrections.txt", sep + FUZZ_PART_SEP_LEN,
                        (size_t)(data + size - sep - FUZZ_PART_SEP_LEN));
    if (rc)
        return err_set(rc, "stations.txt: cannot write the input");
    char path[512], corr[512];
    snprintf(path, sizeof path, "%s/stations.txt", fuzz_dir());
    snprintf(corr, sizeof corr, "%s/corrections.txt", fuzz_dir());
    /* Accepted when either reading accepts it (a file is cartesian or geographic). */
    int first = 0, loaded = 0;
    for (int geo = 0; geo < 2; geo++) {
        struct station_set s;
        rc = stations_load(path, geo, &s);
        if (rc) {
            if (!first)
                first = rc;
            continue;
        }
        if (s.n < 1 || !s.st)
            abort(); /* loaded means at least one station */
        rc = sep ? stations_load_corrections(&s, corr) : 0;
        if (rc && !first)
            first = rc;
        loaded |= rc == 0;
        for (int i = 0; i < s.n; i++) {
            /* A loaded station has a finite position (the grid and the travel times
             * are computed from it). */
            if (!isfinite(s.st[i].x) || !isfinite(s.st[i].y) || !isfinite(s.st[i].z))
                abort();
            double lat, lon, elev;
            stations_to_geographic(&s, s.st[i].x, s.st[i].y, s.st[i].z, &lat, &lon, &elev);
            if (stations_find(&s, s.st[i].net, s.st[i].name) != i)
                abort(); /* duplicates are refused, so every station finds itself */
        }
        stations_free(&s);
    }
    return loaded ? 0 : first;
}
