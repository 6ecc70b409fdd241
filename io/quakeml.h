/* quakeml — the locate job's events as a QuakeML 1.2 catalogue (BED), written with
 * libxml2 and kept crash-safe: after each event the whole document is written to
 * PATH.tmp, fsync'ed and renamed over PATH (and the folder fsync'ed), so a reader or a
 * crash sees the previous catalogue or the new one, never half a file.  Each event is
 * serialized once; the rewrite is a write of the file's bytes (about 1.6 kB per event)
 * and two fsyncs: 16 ms per event for a 1000-event catalogue on the dev VM's disk.
 *
 * Per event: <event> with <preferredOriginID> and one <origin>:
 *   time          the origin time, uncertainty = the jackknife sigma_t (s)
 *   latitude, longitude   degrees (WGS84 through the stations' or grids' projection),
 *                 uncertainty = the jackknife sigma_x/sigma_y carried through the same
 *                 projection (first-order: sqrt((dlat/dx sx)^2 + (dlat/dy sy)^2)), deg
 *   depth         m below sea level (the frame's z), uncertainty sigma_z (m);
 *                 depthType "from location"
 *   quality       usedPhaseCount = the station-phase rows that contributed
 *   methodID      smi:local/seislive/method/coherent-stack; evaluationMode automatic,
 *                 evaluationStatus preliminary; creationInfo (author seislive, version,
 *                 creation time); a comment with the frame position, coalescence, level.
 * Resource ids: smi:local/seislive/NAME/{event,origin}/ORIGIN_NS (NAME the job's name,
 * characters outside [A-Za-z0-9._-] replaced by '_'): an event keeps its id when the
 * same data are located again.
 * QuakeML needs latitude and longitude: without a geographic frame (GEO->to_geographic
 * NULL) quakeml_open refuses. */
#ifndef SEISLIVE_QUAKEML_H
#define SEISLIVE_QUAKEML_H

#include "kernels/locate_engine.h"

#ifdef __cplusplus
extern "C" {
#endif

struct quakeml_writer;

/* Create PATH (an empty catalogue, written at once).  GEO (copied) turns the frame
 * into latitude/longitude; NAME goes into the resource ids; VERSION into creationInfo. */
int quakeml_open(struct quakeml_writer **out, const char *path, const char *name, const char *version,
                 const struct locate_geo *geo);
/* Append EV and rewrite PATH (temp file, fsync, rename). */
int quakeml_add(struct quakeml_writer *q, const struct locate_event *ev);
const char *quakeml_path(const struct quakeml_writer *q);
void quakeml_close(struct quakeml_writer *q);

#ifdef __cplusplus
}
#endif

#endif
