/* check — what `seislive check` verifies beyond the schema: everything `run` would
 * fail on before or while it runs, for every job and input kind (endpoints that
 * cannot bind, input paths that match nothing, output folders that cannot be made,
 * model files of the wrong size, velocities in km/s, byte-swapped values), each named
 * by the config's FILE:LINE:COL with a hint; and the numerical error of the time
 * stepping the run will have. */
#ifndef SEISLIVE_CHECK_H
#define SEISLIVE_CHECK_H

#include <stdio.h>

#include "conf/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 0 when CFG can run as far as can be told without running it; else a negative code
 * with err_msg() "FILE:LINE:COL: [section] key: reason (hint)".  Notes (the time
 * dispersion) go to OUT. */
int check_runnable(const struct sl_config *cfg, FILE *out);

/* Does ENDPOINT parse as ZeroMQ would take it for a bind (BIND) or a connect?  0, or
 * -EINVAL with err_msg() the reason (no "FILE:LINE" prefix). */
int check_endpoint(const char *endpoint, bool bind);

#ifdef __cplusplus
}
#endif

#endif
