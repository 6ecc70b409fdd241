/* job — what `seislive run` runs: the rtm, locate or model job, chosen by [job] kind.
 * Each job lives in its own file (stream/job_<kind>.c) and registers here. */
#ifndef SEISLIVE_JOB_H
#define SEISLIVE_JOB_H

#include <stdio.h>

#include "conf/config.h"
#include "kernels/backend.h"

/* Exit codes of the seislive program (documented in --help). */
enum {
    EXIT_OK = 0,         /* done (also after SIGTERM/SIGINT with the state saved) */
    EXIT_FAILED = 1,     /* the run failed: I/O, data or device error */
    EXIT_USAGE = 2,      /* bad command line or invalid configuration */
    EXIT_NO_DEVICE = 3,  /* the requested device is not available */
};

struct job_ops {
    const char *name;
    /* Run to completion or until a stop is asked (stream/signals.h); returns 0 or -errno
     * with err_msg() set.  OUTPUT: the -o file of `seislive model`, else NULL. */
    int (*run)(const struct sl_config *cfg, const struct sl_device *dev, const char *output);
    /* Derived quantities for `seislive check` (stable dt, memory, strategy...);
     * returns 0, or a negative code when the config cannot run (exit 2). */
    int (*report)(const struct sl_config *cfg, FILE *out);
};

/* The ops for CFG's job kind, or NULL when this build has none for it. */
const struct job_ops *job_find(int kind);

#endif
