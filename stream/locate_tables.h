/* locate_tables — the travel-time tables the [locate] section asks for, with the files
 * they come from read here (kernels/traveltime.h computes, it reads nothing):
 *
 *   homogeneous   straight rays at [locate] vp / vs (tt_homogeneous);
 *   layered       the 1D model file [locate] layers ("top_depth_m vp vs" per line, tops
 *                 increasing, '#' comments), then the eikonal solver (tt_layered);
 *   nonlinloc     NonLinLoc time grids ROOT.P.STATION.time or ROOT.STATION.P.time (and S;
 *                 io/nonlinloc.h nll_time_root, roots [locate] nll_p / nll_s, naming
 *                 [locate] nll_pattern) sampled at every trial point (trilinear,
 *                 nll_value; a trial point outside a grid is an error naming the file).
 *
 * Every table gets the station corrections added (tt_table_finish). */
#ifndef SEISLIVE_LOCATE_TABLES_H
#define SEISLIVE_LOCATE_TABLES_H

#include "conf/config.h"
#include "kernels/traveltime.h"

/* enum tt_phases for the config's enum phase_set. */
int locate_tt_phases(int phase_set);

/* The table for the NSTA stations ST (kernel views, stream/locate_setup.h).  Errors
 * name the config key or the file. */
int locate_tables_build(const struct sl_config *cfg, const struct tt_station *st, int nsta, struct tt_table *out);

/* From NonLinLoc time grids under ROOT_P for P and ROOT_S for S, named as NAMING (enum
 * nll_naming) says (PHASES: enum tt_phases). */
int locate_tables_nonlinloc(const struct tt_grid *g, const struct tt_station *st, int nsta, int phases,
                            const char *root_p, const char *root_s, int naming, struct tt_table *out);

/* A layered model file (see above) into M; errors name the file and line. */
int locate_layers_load(const char *path, struct tt_layers *m);
void locate_layers_free(struct tt_layers *m);

#endif
