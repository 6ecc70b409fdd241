/* mseed_read — miniSEED 2 (libmseed 2.19) into per-channel continuous traces and out
 * again as trace blocks (io/trace_block.h) on a common time grid.
 *
 * Decoding: every record libmseed can unpack (Steim-1, Steim-2, int16/int32, float32,
 * float64) becomes float samples.  A record is REJECTED, counted, and logged with its
 * file and byte offset when its header does not fit its length and encoding (checked
 * before decoding, see mseed_decode_record), when libmseed cannot parse or decode it,
 * when libmseed reports a failed Steim integrity check (first/last sample mismatch),
 * when its sample count disagrees with the header, its sample rate is not positive, or
 * its samples are text.
 * Bytes that are not a record (no SEED header) are skipped byte by byte until the next
 * valid header, counted as one rejected stretch.
 *
 * Continuity: records of a channel that follow each other within half a sample extend
 * one segment; a later start opens a new segment (a gap: the block extraction marks
 * those samples invalid); an earlier start (an overlap) also opens a segment, whose
 * overlapping samples are counted and never used twice: when two segments cover the
 * same sample, the one read first wins.
 *
 * Time base: a block of NS samples from T0_NS at interval DT takes each segment sample
 * to the nearest block sample (a segment offset by a fraction of a sample is off by at
 * most DT/2; all channels must have the same sample rate). */
#ifndef SEISLIVE_MSEED_READ_H
#define SEISLIVE_MSEED_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/trace_block.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mseed_segment {
    int64_t t0_ns;
    int64_t n, cap;
    float *x;
};

struct mseed_trace {
    struct trace_channel id;
    double rate;                 /* samples per second */
    struct mseed_segment *seg;
    int nseg, segcap;
};

struct mseed_set {
    struct mseed_trace *tr;
    int ntr, cap;
};

struct mseed_stats {
    int64_t files, bytes;
    int64_t records;             /* decoded and kept */
    int64_t rejected;            /* records (or non-record stretches) rejected */
    int64_t samples;
    int64_t overlap_samples;     /* samples of records that start before the previous one ended */
    int64_t gaps;                /* segment breaks for later starts */
};

/* Send libmseed's own diagnostics to seislive's log (component "libmseed", level warn;
 * its informational lines at debug) instead of its stderr default.  Idempotent; the
 * decoders and writers here call it. */
void mseed_log_init(void);

/* Decode the record of RECLEN bytes at REC (RECLEN from ms_detect) into *M (libmseed's
 * MSRecord, reused across calls; msr_free it at the end).  The header is checked against
 * the record length and the encoding BEFORE any sample is decoded: a fixed-size encoding
 * (int16/int32/float32/float64, text, the old 2- and 3-byte codes) must fit its count
 * in the data section; Steim-1/2 frames must lie in the record and hold the count;
 * unknown encodings are refused.  After decoding: a failed Steim integrity check, a
 * count that differs from the header, a non-positive rate or text samples reject it.
 * Returns 0, or -EINVAL with the reason in WHY (nothing of the record is used). */
struct MSRecord_s;
int mseed_decode_record(char *rec, int reclen, struct MSRecord_s **m, char *why, size_t whylen);

/* STOP (NULL: none) is polled by mseed_read_buffer / mseed_read_path in the calling
 * thread while they scan (every 1024 records or junk bytes, before each file of a
 * folder); non-zero makes them return -ECANCELED. */
void mseed_read_set_stop(int (*stop)(void));

/* Decode the records in BUF (LEN bytes; NAME for messages) into SET. */
int mseed_read_buffer(const char *name, char *buf, size_t len, struct mseed_set *set, struct mseed_stats *st);
/* A file, or every regular file in a directory (sorted by name), in that order. */
int mseed_read_path(const char *path, struct mseed_set *set, struct mseed_stats *st);

/* Whether a record's libmseed start time (HPTMODULUS ticks since 1970) can be taken: its
 * ns, plus a block after it, must fit int64, i.e. the years 1685-2255 (the wire format's
 * t0_ns bound too).  libmseed 2 takes years to 65535, which overflowed the conversion. */
bool mseed_start_fits(int64_t hptime);

/* Samples X[0..N) of channel ID at RATE from T0_NS (a SAC file, io/sac_read.h) into SET,
 * with the continuity rules above (NAME for messages). */
int mseed_set_add(struct mseed_set *set, const struct trace_channel *id, double rate, int64_t t0_ns,
                  const float *x, int64_t n, struct mseed_stats *st, const char *name);
/* Keep only the samples at times in [START_NS, END_NS) (the file input's time window,
 * [input] start_time / end_time); returns how many samples were dropped. */
int64_t mseed_set_window(struct mseed_set *set, int64_t start_ns, int64_t end_ns);
/* Common sample rate (error if channels disagree) and the time span covered. */
int mseed_set_span(const struct mseed_set *set, double *rate, int64_t *t0_ns, int64_t *t1_ns);
/* Fill DATA and MASK (ntr x ns, channel order of SET) for the block; invalid samples
 * are NaN with mask 0. */
void mseed_set_extract(const struct mseed_set *set, int64_t t0_ns, double dt, int ns, float *data,
                       uint8_t *mask);
/* The channel identities of SET, in order (ntr entries, owned by the caller). */
struct trace_channel *mseed_set_channels(const struct mseed_set *set);
/* Cut SET's whole span into consecutive blocks of NS samples (the last may be
 * shorter) and hand each to FN; stops at the first non-zero return of FN, or when
 * STOP (may be NULL) returns non-zero.  A block that would hold no sample at all is not
 * handed over: the next block starts at the next data (FN sees the jump in t0).
 * Returns 0, FN's code, or -EINVAL / -ENOMEM. */
typedef int (*mseed_block_fn)(const struct trace_block *b, void *user);
int mseed_set_blocks(const struct mseed_set *set, int ns, mseed_block_fn fn, void *user, int (*stop)(void));
void mseed_set_free(struct mseed_set *set);

#ifdef __cplusplus
}
#endif

#endif
