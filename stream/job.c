#include "stream/job.h"

#include <stddef.h>

/* One line per job as it lands (stream/job_<kind>.c defines job_<kind>_ops). */
const struct job_ops *job_find(int kind)
{
    switch (kind) {
    case JOB_RTM: { extern const struct job_ops job_rtm_ops; return &job_rtm_ops; }
    case JOB_LOCATE: { extern const struct job_ops job_locate_ops; return &job_locate_ops; }
    case JOB_MODEL: { extern const struct job_ops job_model_ops; return &job_model_ops; }
    }
    return NULL;
}
