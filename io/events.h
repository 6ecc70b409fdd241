/* events — where the locate job's results go: events as CSV (one header line) and as
 * JSON lines (jansson, one object per event, the same fields), optionally also as a
 * QuakeML 1.2 catalogue (io/quakeml.h, events.xml), and coherence volumes
 * as raw float32 (x fastest) with a JSON sidecar (n, d, o, origin-time span, block). */
#ifndef SEISLIVE_EVENTS_H
#define SEISLIVE_EVENTS_H

#include <stdint.h>
#include <stdio.h>

#include "kernels/locate_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

struct quakeml_writer;

struct event_writer {
    FILE *csv, *jsonl;
    char *csv_path, *jsonl_path;
    struct quakeml_writer *qml; /* NULL: no QuakeML */
    int64_t written;
};

/* Create DIR/events.csv and DIR/events.jsonl (truncated). */
int events_open(struct event_writer *w, const char *dir);
/* Also write DIR/events.xml (QuakeML 1.2) from now on; GEO gives latitude and longitude
 * (refused with a message when it has none), NAME and VERSION go into the ids and the
 * creation info. */
int events_enable_quakeml(struct event_writer *w, const char *dir, const char *name, const char *version,
                          const struct locate_geo *geo);
/* Append one event to every file and flush them (an event is never left in a buffer;
 * the QuakeML catalogue is rewritten and renamed into place). */
int events_write(struct event_writer *w, const struct locate_event *ev);
int events_close(struct event_writer *w);

/* "YYYY-MM-DDTHH:MM:SS.mmmmmmZ" for NS since 1970 (BUF >= 32 bytes). */
const char *events_iso_time(int64_t ns, char *buf, size_t len);
/* The JSON text of one event (malloc'd; the wire `event` topic uses the same). */
char *events_json(const struct locate_event *ev);

/* DIR/coherence_SEQ.f32 + .json. */
int coherence_write(const char *dir, const float *coh, const struct tt_grid *g, int64_t seq,
                    int64_t t0_ns, int64_t t1_ns);

#ifdef __cplusplus
}
#endif

#endif
