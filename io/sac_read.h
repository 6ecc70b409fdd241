/* sac_read — SAC binary files (evenly sampled time series, header version NVHDR = 6) in
 * either byte order.  Written by hand: no Debian library reads SAC.
 *
 * Layout (SAC manual, "SAC data file format"): a 632-byte header of 70 float32 words,
 * 40 int32 words and 24 eight-byte strings (KEVNM 16), then NPTS float32 samples.
 * Used here:
 *   DELTA  float  0  (byte   0)   sample interval, s (> 0; taken as 1 / the round rate, to
 *                                 1 mHz, whose float it is: 0.004f is 1/250 s)
 *   B      float  5  (byte  20)   first sample, s after the reference time
 *   NZYEAR..NZMSEC int 70..75 (bytes 280..300)  reference time (year, day of year, h, min, s, ms)
 *   NVHDR  int   76  (byte 304)   6: the byte order is the one that reads 6 here
 *   NPTS   int   79  (byte 316)   samples; 632 + 4 NPTS must be the file size
 *   IFTYPE int   85  (byte 340)   1 (ITIME) or undefined; spectra and xy files are refused
 *   LEVEN  int  105  (byte 420)   1: evenly spaced (0 refused)
 *   KSTNM  (byte 440), KHOLE (464, location), KCMPNM (592, channel), KNETWK (600, network)
 * Undefined values (-12345, "-12345") become empty names; an undefined reference time
 * or B is an error (the samples could not be placed in time).  Every error names the
 * file and the byte offset of the offending field. */
#ifndef SEISLIVE_SAC_READ_H
#define SEISLIVE_SAC_READ_H

#include <stddef.h>
#include <stdint.h>

#include "io/trace_block.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SAC_HEADER_BYTES 632

struct sac_trace {
    struct trace_channel id;   /* KNETWK, KSTNM, KHOLE, KCMPNM */
    double delta;              /* s */
    int64_t t0_ns;             /* first sample, ns since 1970 UTC (reference time + B) */
    int64_t npts;
    int swapped;               /* 1 when the file's byte order is not the host's */
    float *x;                  /* npts samples (host order) */
};

/* 1 when BUF (LEN bytes, at least the header) has NVHDR = 6 at byte 304 in one byte
 * order: a SAC file (what the locate job's format "auto" tells miniSEED from). */
int sac_detect(const void *buf, size_t len);
/* Decode the file image BUF (LEN bytes; NAME for messages) into OUT. */
int sac_read_buffer(const char *name, const void *buf, size_t len, struct sac_trace *out);
/* Read and decode PATH. */
int sac_read_file(const char *path, struct sac_trace *out);
void sac_trace_free(struct sac_trace *t);

#ifdef __cplusplus
}
#endif

#endif
