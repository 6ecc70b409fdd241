/* locate_nll — the station set of a locate job with NonLinLoc travel times
 * ([locate] traveltime = "nonlinloc"), made to agree with the grids:
 *
 *   - a station without a time grid for a phase it needs (io/nonlinloc.h nll_time_root,
 *     either naming) is left out with a warning, counted; no station left is an error;
 *   - every grid header's TRANSFORM must be the same projection (else an error naming
 *     both headers); when it is geographic, geographic stations are placed in the grids'
 *     own frame through it (not the array-centre projection of io/stations.h) and the
 *     events' latitude and longitude come back through it, for cartesian stations too
 *     (their x, y, z are taken to be in the grid frame, metres);
 *   - geographic stations with grids that have no geographic TRANSFORM are refused;
 *   - a station whose position differs from its P (or S) grid's source position by more
 *     than a grid cell is warned about (the grid was computed for another place). */
#ifndef SEISLIVE_LOCATE_NLL_H
#define SEISLIVE_LOCATE_NLL_H

#include "conf/config.h"
#include "io/stations.h"

struct locate_nll_report {
    int skipped;            /* stations without a grid, left out */
    int misplaced;          /* stations away from their grid's source position */
    int geographic;         /* the grids' TRANSFORM is geographic */
    char transform[160];    /* described (nll_transform_describe) */
};

/* Apply the above to ST (does nothing unless CFG's traveltime is nonlinloc).  0 or < 0
 * with err_msg() naming the file. */
int locate_nll_stations(const struct sl_config *cfg, struct station_set *st, struct locate_nll_report *rep);

#endif
