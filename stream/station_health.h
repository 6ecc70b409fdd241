/* station_health — per-station health of a live locate run, for the status message and
 * the status page (docs/http.md): each station's last valid sample and its gaps.
 *
 * The worker thread accounts each trace block (station_health_block) before the engine
 * takes it: one pass over the block's validity (io/trace_block.h: chan_ok, mask, NaN),
 * far cheaper than the engine's own passes, and only made when something reads it (the
 * locate runtime creates the table only with an [output] endpoint or a page).  A gap is
 * a run of invalid samples on a channel (within a block or across blocks) or a jump
 * forward in time between blocks (every channel).  A station shows its WORST channel:
 * the oldest last valid sample, the most gaps, the most seconds missing, so a dead
 * component is not hidden by a live one.
 *
 * Readers (the publisher thread, once per status) copy the per-station figures under a
 * lock the worker holds only to store them (O(stations) per block).  The positions are
 * static: station_health_positions gives them once, for /stations.json. */
#ifndef SEISLIVE_STATION_HEALTH_H
#define SEISLIVE_STATION_HEALTH_H

#include "io/stations.h"
#include "io/trace_block.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stations listed in a status; the rest are summed up in "more". */
#define STATION_HEALTH_LIST 32

struct station_health;

/* A table for the stations of ST (copied).  0 or -ENOMEM with err_msg(). */
int station_health_create(struct station_health **out, const struct station_set *st);
void station_health_destroy(struct station_health *h);

/* Worker thread: account block B (channels matched to stations as the engine does: by
 * station name, and network when the file gives one; by position when every channel's
 * station is empty). */
void station_health_block(struct station_health *h, const struct trace_block *b);

/* A malloc'd JSON array of the stations: [{"name", "x", "y", "z"}] (m, the events'
 * local frame, z down), in the station file's order; NULL when out of memory. */
char *station_health_positions(const struct station_health *h);

/* A malloc'd JSON object for the status's "stations": {"n": stations, "list": [at most
 * MAX_LISTED of {"name", "channels", "last" (s since the epoch of the last valid
 * sample, null: none yet), "gaps", "gap_s"}], the worst first (no data, then the
 * oldest last sample, then the most gaps), "more": {"n", "gaps", "last"} summing up the
 * rest (absent when none)}.  NULL when out of memory. */
char *station_health_status(struct station_health *h, int max_listed);

#ifdef __cplusplus
}
#endif

#endif
