/* segy_shots — read a SEG-Y file of shot records (segyio) one shot at a time: traces
 * are grouped into a shot while the field record number (bytes 9-12) stays the same.
 *
 * Header conventions (those of `seislive model`, io/segy_write.h):
 *   shot id                field record (9)
 *   source x, y            source X/Y (73, 77) x the coordinate scalar (71)
 *   receiver x, y          group X/Y (81, 85) x the coordinate scalar (71)
 *   source z (down)        source depth (49) x the elevation scalar (69)
 *   receiver z (down)      minus the receiver group elevation (41) x the scalar (69)
 *   sample interval        bytes 117 (trace) or 3217 (binary), microseconds
 * A scalar s > 0 multiplies, s < 0 divides by |s|, 0 means 1 (SEG-Y rev 1). */
#ifndef SEISLIVE_SEGY_SHOTS_H
#define SEISLIVE_SEGY_SHOTS_H

#include <stdint.h>

#include "io/shot.h"

#ifdef __cplusplus
extern "C" {
#endif

struct segy_shots;

/* Open PATH.  Returns 0 or -errno with err_msg() naming the file. */
int segy_shots_open(const char *path, struct segy_shots **out);
/* The next shot into OUT (rec and data malloc'd; free with segy_shots_free_shot).
 * Returns 1 when a shot was read, 0 at the end, or -errno (message names the file
 * and the trace). */
int segy_shots_next(struct segy_shots *s, struct shot *out);
void segy_shots_free_shot(struct shot *s);
void segy_shots_close(struct segy_shots *s);
/* Number of traces and samples per trace of the open file. */
int segy_shots_traces(const struct segy_shots *s);
int segy_shots_samples(const struct segy_shots *s);
/* Sample format code of the file (1 IBM, 5 IEEE, ...). */
int segy_shots_format(const struct segy_shots *s);
/* The raw bytes (240-byte header + samples as stored) of traces [T0, T0 + N) into BUF of
 * N x (240 + 4 ns) bytes: what a "segy" shot message carries. */
int segy_shots_raw(struct segy_shots *s, int t0, int n, char *buf);
/* Send SH, read from S starting at trace T0, as one wire shot message on SOCK with
 * sender sequence SEQ: the traces' raw bytes as stored (AS_SEGY) or float32 samples.
 * Returns 0 or -errno with err_msg(). */
int segy_shots_send(struct segy_shots *s, void *sock, const struct shot *sh, int t0,
                    int64_t seq, int as_segy);

#ifdef __cplusplus
}
#endif

#endif
