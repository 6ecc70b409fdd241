/* locate_setup — the locate job's side of the engine (kernels/locate_engine.h), which
 * knows nothing of configs, files or sources: the [locate] section becomes its
 * parameters, the station file (io/stations.h) its station views and projection, the
 * tables come from stream/locate_tables.h, and trace blocks (io/trace_block.h) become
 * its blocks.  Used by the job (stream/job_locate.c), the tests and the benchmarks. */
#ifndef SEISLIVE_LOCATE_SETUP_H
#define SEISLIVE_LOCATE_SETUP_H

#include "conf/config.h"
#include "io/stations.h"
#include "io/trace_block.h"
#include "kernels/locate_engine.h"

/* The characteristic function [locate] asks for, for PHASE (0 = P, 1 = S; conf/config.h:
 * locate_cf_resolve); values left to derive are "not set" (kernels/cf.h). */
struct cf_spec locate_cf_spec_phase(const struct locate_conf *lc, int phase);
/* The same for the first phase stacked (P, or S with phases = "S"). */
struct cf_spec locate_cf_spec(const struct locate_conf *lc);

/* The engine's parameters from [locate] (the stack kernel: the default). */
void locate_params_from_config(const struct locate_conf *lc, struct locate_params *p);

/* SET's stations as the kernels see them: *OUT is SET->n entries (free() it). */
int locate_station_views(const struct station_set *set, struct tt_station **out);

/* SET's projection, for the events' latitude, longitude and elevation. */
struct locate_geo locate_geo_of(const struct station_set *set);

/* The engine CFG's [locate] section describes, for the stations of ST (read already,
 * corrections included), on DEV: tables built (stream/locate_tables.h), parameters and
 * stations handed over.  Returns 0 or < 0 with err_msg() ("locate: travel times: ..."). */
int locate_engine_from_config(struct locate_engine **out, const struct sl_config *cfg, const struct sl_device *dev,
                              const struct station_set *st);

/* Feed trace block B to E (locate_engine_process on its view). */
int locate_feed(struct locate_engine *e, const struct trace_block *b);

#endif
