/* seedlink_blocks — live miniSEED records (one channel each, arriving station by
 * station, in any order) assembled into the locate job's trace blocks
 * (io/trace_block.h): R channels x block_samples on one time grid, the same grid and
 * cut as the miniSEED file reader (io/mseed_read.h) gives for the same records.
 *
 * The channel set is fixed before the first block (the engine wants the same channels
 * in every block): the streams the server's INFO STREAMS lists for the selectors, plus
 * any channel whose records arrive before the first block.  A channel first seen later
 * is counted and logged, its records dropped (until a restart from scratch).
 *
 * A block [T, T + ns dt) leaves when every channel has data up to its end, or `latency`
 * seconds (wall clock) after the first channel reached its end (the others are late:
 * their missing samples are invalid -- NaN, mask 0 -- never zeros).  Wall clock, not
 * recording time: a server sends a backlog station by station, so one channel may run
 * minutes of recording ahead of the others for a fraction of a second.  A hard bound
 * on the buffer (seedlink_blocks_fits) forces blocks out when data run far ahead.  At the end of the input the rest
 * leaves.  Counted per channel and logged: samples delivered, gaps (a record starting
 * after the channel's data ended) and the samples missing inside the data, overlapping
 * samples (already there: the first one wins, as in the file reader), out-of-order
 * records, samples missing at a block's end (a late station), and late samples dropped
 * (their block had left).
 *
 * Resumption: after each block, seedlink_blocks_resume_text() gives the grid, the next
 * block's start, per station the sequence number to ask for (the oldest record with
 * samples not yet in a block, else the last one + 1) and per channel the samples
 * delivered so far.  Loaded back, the next run asks the server for exactly those
 * records and drops (counts as "resumed") the samples before the saved cursor: no
 * sample delivered twice, none skipped. */
#ifndef SEISLIVE_SEEDLINK_BLOCKS_H
#define SEISLIVE_SEEDLINK_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/trace_block.h"

#ifdef __cplusplus
extern "C" {
#endif

struct seedlink_blocks;

struct seedlink_record {
    struct trace_channel id;
    const char *station;  /* "NET_STA": the SeedLink station it came from */
    uint64_t seq;         /* its SeedLink sequence number */
    int64_t t0_ns;        /* first sample */
    double rate;          /* samples per second */
    const float *x;
    int64_t n;
};

struct seedlink_blocks_stats {
    int64_t blocks, samples, gaps, gap_samples, overlap_samples, out_of_order, late_samples,
        late_dropped, resumed_dropped, rejected, unknown_channel_records;
};

/* BLOCK_SAMPLES per block, LATENCY_S (wall clock) waited for a late channel. */
int seedlink_blocks_create(struct seedlink_blocks **out, int block_samples, double latency_s);
void seedlink_blocks_destroy(struct seedlink_blocks *b);

/* A channel of the set (from INFO STREAMS); ignored once the first block has left or
 * when it is known already. */
int seedlink_blocks_declare(struct seedlink_blocks *b, const struct trace_channel *id, const char *station);
/* Load a resume text (from the state); 0 or -EINVAL with err_msg() naming the line. */
int seedlink_blocks_resume(struct seedlink_blocks *b, const char *text);
/* The sequence number to ask STATION ("NET_STA") for, or UINT64_MAX when unknown: the
 * packet after the last one received (the buffer keeps the rest), else the one the
 * state saved. */
uint64_t seedlink_blocks_next_seq(const struct seedlink_blocks *b, const char *station);
/* Was packet SEQ of STATION received already (a server resends from the lowest
 * sequence asked for when one connection serves several stations)? */
bool seedlink_blocks_seen(const struct seedlink_blocks *b, const char *station, uint64_t seq);

/* Does a record ending at END_NS fit the buffer?  If not, emit (forced) first. */
bool seedlink_blocks_fits(const struct seedlink_blocks *b, int64_t end_ns);
/* Add a record, arrived at wall time NOW (s, any monotonic clock).  0; 1 when it was
 * rejected or dropped (counted, logged). */
int seedlink_blocks_add(struct seedlink_blocks *b, const struct seedlink_record *r, double now);

/* Is a block ready (FLUSH: the input ended, anything left goes)? */
bool seedlink_blocks_ready(const struct seedlink_blocks *b, bool flush, double now);
/* Bytes seedlink_blocks_emit needs (data, mask, channels, resume text). */
size_t seedlink_blocks_bytes(const struct seedlink_blocks *b);
/* Build the next block into MEM (BYTES): *BLK points into MEM, *RESUME too (the
 * resume text after this block).  FORCE: leave now even if not ready.  Returns 0,
 * 1 when nothing was left to emit, < 0 (-EFBIG: MEM too small). */
int seedlink_blocks_emit(struct seedlink_blocks *b, void *mem, size_t bytes, bool force,
                         struct trace_block *blk, const char **resume);

void seedlink_blocks_stats(const struct seedlink_blocks *b, struct seedlink_blocks_stats *st);
/* Log one line per channel: "channel NET.STA.LOC.CHA: N samples, ..." (parseable). */
void seedlink_blocks_log_counts(const struct seedlink_blocks *b);
/* Channels in the set. */
int seedlink_blocks_channels(const struct seedlink_blocks *b);

#ifdef __cplusplus
}
#endif

#endif
