/* job_rtm_report — the rtm part of `seislive check` (stream/job_rtm_report.c). */
#ifndef SEISLIVE_JOB_RTM_REPORT_H
#define SEISLIVE_JOB_RTM_REPORT_H

#include <stdio.h>

#include "conf/config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Print, for the configured model and its first shot, the sub-volume, the steps, the
 * memory each strategy needs and what auto picks.  0, or a negative code (err_msg())
 * when the config cannot migrate (bad model, unstable dt, source outside...). */
int rtm_report(const struct sl_config *cfg, FILE *out);

#ifdef __cplusplus
}
#endif

#endif
