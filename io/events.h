/* events — where the locate job's results go: events as CSV (one header line) and as
 * JSON lines (jansson, one object per event, the same fields), and coherence volumes
 * as raw float32 (x fastest) with a JSON sidecar (n, d, o, origin-time span, block). */
#ifndef SEISLIVE_EVENTS_H
#define SEISLIVE_EVENTS_H

#include <stdint.h>
#include <stdio.h>

#include "kernels/locate_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

struct event_writer {
    FILE *csv, *jsonl;
    char *csv_path, *jsonl_path;
    int64_t written;
};

/* Create DIR/events.csv and DIR/events.jsonl (truncated). */
int events_open(struct event_writer *w, const char *dir);
/* Append one event to both files and flush them (an event is never left in a buffer). */
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
