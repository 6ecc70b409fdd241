/* trace_block — the unit of the locate job: R channels x K samples of continuous
 * recording, time-stamped.  Produced by every trace source (miniSEED files through
 * io/mseed_read, ZeroMQ "traces" wire messages, raw f32, the generator) and consumed
 * by the locate engine (kernels/locate_engine.h), one block after the other.
 *
 * Contract (kept stable: the streaming runtime builds these):
 *  - Consecutive blocks of one stream have the same channels in the same order, the
 *    same dt, and are contiguous: block n+1 starts at t0_ns + ns * dt of block n.  The
 *    engine carries the overlap it needs itself; producers never repeat samples.
 *  - Block sizes may differ from block to block; the events found do not depend on
 *    where the stream was cut.
 *  - A sample is VALID when chan_ok (if given) is non-zero for its channel, mask (if
 *    given) is non-zero for it, and its value is finite.  So a gap may be marked by NaN,
 *    by the mask, or both; a dead channel by chan_ok[r] = 0 (its data may be anything).
 *    Invalid samples are left out of the stack AND out of its normalization: they are
 *    never treated as zeros.
 *  - All arrays are owned by the producer and only read by the consumer during the
 *    call that receives the block. */
#ifndef SEISLIVE_TRACE_BLOCK_H
#define SEISLIVE_TRACE_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The identity of one channel: SEED network.station.location.channel.  The engine
 * matches `sta` (and `net` when the station file gives one) against the station file
 * and takes the component from the last letter of `cha` ('Z' vertical -> P;
 * 'N','E','1','2' horizontals -> S; anything else is used for both phases only when
 * a station has a single channel).  A block whose channels all have an empty `sta`
 * (f32 blocks sent without "channels") is matched by position instead: channel r is
 * station r of the station file, one component used for every phase. */
struct trace_channel {
    char net[8];
    char sta[16];
    char loc[8];
    char cha[8];
};

struct trace_block {
    int64_t seq;        /* block sequence number in the stream (0, 1, 2, ...) */
    int64_t t0_ns;      /* time of sample 0, ns since 1970-01-01 UTC */
    double dt;          /* sample interval, s */
    int nrec;           /* R: channels */
    int ns;             /* K: samples per channel in this block */
    const struct trace_channel *chan; /* R channel identities */
    const float *data;  /* R x K, channel by channel (time fastest) */
    const uint8_t *mask;    /* R x K, 1 = sample valid; NULL = every sample valid */
    const uint8_t *chan_ok; /* R, 0 = dead channel for this block; NULL = all alive */
};

/* Index of sample K of channel R in data and mask. */
static inline size_t trace_block_at(const struct trace_block *b, int r, int k)
{
    return (size_t)r * (size_t)b->ns + (size_t)k;
}

/* Is sample K of channel R valid (see the contract above)? */
static inline int trace_block_valid(const struct trace_block *b, int r, int k)
{
    if (b->chan_ok && !b->chan_ok[r])
        return 0;
    size_t i = trace_block_at(b, r, k);
    if (b->mask && !b->mask[i])
        return 0;
    float v = b->data[i];
    return v == v && v - v == 0.0f; /* finite, without <math.h> */
}

#ifdef __cplusplus
}
#endif

#endif
