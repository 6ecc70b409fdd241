/* seedlink_source — [input] kind = "seedlink" as a runtime source (io/source.h): the
 * SeedLink client (io/seedlink.h) feeding the block assembler (io/seedlink_blocks.h),
 * each block committed to a slot with its resume text (slot_hdr.resume) for the
 * crash-safe state.  docs/seedlink.md.
 *
 * A connection: HELLO, the protocol (auto / 3 / 4), INFO STREAMS (the stream list:
 * fixes the channel set and expands wildcard selectors into the stations present, so
 * each station gets its own sequence number), per station STATION + SELECT + DATA
 * (the saved next sequence; else TIME / DATA ALL with [input] seedlink_start; else the
 * next packet), END, then packets.  A failed connection, a malformed packet or
 * nothing for [input] seedlink_timeout: logged with the server and the sequence
 * number, then a reconnection after a back-off that doubles from 0.5 s up to
 * [input] seedlink_backoff_max; within a run the client resumes each station at its
 * next sequence number.  The input ends after [input] watch_idle seconds without a
 * record (0 = never; the clock restarts at each connection) or at a stop (SIGTERM). */
#ifndef SEISLIVE_SEEDLINK_SOURCE_H
#define SEISLIVE_SEEDLINK_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "io/source.h"

#ifdef __cplusplus
extern "C" {
#endif

struct seedlink_source_conf {
    const char *server;          /* "host:port" */
    char *const *streams;        /* "NET_STA[:SEL ...]" (io/seedlink.h) */
    size_t n_streams;
    int protocol;                /* 0 auto, 3, 4 */
    double timeout_s;            /* network timeout */
    double backoff_max_s;        /* cap of the reconnection back-off */
    double latency_s;            /* data time waited for a late station */
    double idle_s;               /* end after this long without a record; 0 = never */
    int64_t start_ns;            /* INT64_MIN: from the next packet */
    int block_samples;
    const char *resume;          /* resume text from the state, or NULL */
};

struct seedlink_source;

/* Check the selectors and load RESUME; nothing is connected yet (run does). */
int seedlink_source_open(struct seedlink_source **out, const struct seedlink_source_conf *c);
struct source seedlink_source_as_source(struct seedlink_source *s);

#ifdef __cplusplus
}
#endif

#endif
