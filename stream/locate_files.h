/* locate_files — the locate job's file input ([input] kind = "files", not watched):
 * every [input] path (globs expanded; a folder: its regular files sorted by name) is
 * read in order, each file as miniSEED (io/mseed_read.h) or SAC (io/sac_read.h):
 * [input] format "mseed" or "sac" says which, "auto" looks at each file (SAC when its
 * header reads NVHDR = 6 in either byte order, else miniSEED).  All land in one
 * mseed_set, so gaps, overlaps and channel matching are the same for both.  Then the
 * time window [input] start_time / end_time (ISO 8601 UTC) keeps the samples at times
 * in [start, end): the others are not stacked, and their count is logged. */
#ifndef SEISLIVE_LOCATE_FILES_H
#define SEISLIVE_LOCATE_FILES_H

#include "conf/config.h"
#include "io/mseed_read.h"

struct locate_files_stats {
    struct mseed_stats ms;      /* miniSEED (and the SAC samples, gaps, overlaps) */
    int64_t sac_files;
    int64_t window_dropped;     /* samples outside [start_time, end_time) */
};

/* Read CFG's input into SET.  STOP (may be NULL) is polled between files.  0 or < 0
 * with err_msg() naming the key or the file (and byte offset). */
int locate_files_read(const struct sl_config *cfg, struct mseed_set *set, struct locate_files_stats *st,
                      int (*stop)(void));

#endif
