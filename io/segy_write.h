/* segy_write — write SEG-Y files (rev 1, big-endian IEEE float, no extended headers)
 * through segyio: shot records of `seislive model` and image volumes of seislive-sub.
 *
 * Header conventions (the same io/segy_read.c reads):
 *   coordinates x, y (bytes 73/77 source, 81/85 group) scaled by the coordinate scalar
 *   (byte 71), depths by the elevation scalar (byte 69): source depth (49) = z_src,
 *   receiver group elevation (41) = -z_rec (z positive down);
 *   offset (37) = horizontal source-receiver distance, m (rounded);
 *   shot number in field record (9) and energy source point (17); channel in 13;
 *   trace sequence (1, 5); samples (115) and interval (117) in every trace and in the
 *   binary header (3221, 3217); optional CDP (21), CDP x/y (181/185), inline (189) and
 *   crossline (193) for image volumes. */
#ifndef SEISLIVE_SEGY_WRITE_H
#define SEISLIVE_SEGY_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct segy_writer;

struct segy_trace_info {
    int32_t shot;           /* field record / energy source point */
    int32_t channel;        /* trace number within the record (1..) */
    double src[3];          /* m, z positive down */
    double rec[3];          /* m, z positive down */
    bool has_cdp;           /* image traces: also write CDP, CDP x/y, inline, crossline */
    int32_t cdp, inline_no, crossline_no;
    double cdp_xy[2];       /* m */
};

/* Create PATH (truncating) for traces of NS samples every INTERVAL: for time data the
 * sample interval in microseconds (SEG-Y's unit; must be >= 1), for depth data the
 * caller's convention (e.g. mm).  SCALAR is the SEG-Y coordinate/elevation scalar to
 * use, e.g. -100 (centimetres).  TEXT (up to 40 lines of 80 characters, '\n'
 * separated, ASCII) goes into the textual header.  Errors name PATH. */
int segy_writer_open(const char *path, int ns, int interval, int scalar, const char *text,
                     struct segy_writer **out);

/* The sample interval of depth data: SEG-Y's 16-bit field (1..65535) holds DZ (m) in
 * millimetres when it fits, as always; below 1 mm in micrometres; above 65.535 m in
 * the finest of cm, dm, m, dam, hm, km that fits.  *INTERVAL gets the rounded value,
 * *UNIT its name ("mm", ...), *UNIT_M the unit in metres: writers state them in the
 * textual header (and the image's JSON sidecar), since the binary header cannot.
 * -EINVAL (with the reason) for a DZ no unit holds. */
int segy_depth_interval(double dz, int *interval, const char **unit, double *unit_m);

/* Append one trace: header from INFO, SAMPLES (NS floats, host order). */
int segy_writer_trace(struct segy_writer *w, const struct segy_trace_info *info,
                      const float *samples);

/* Append N traces at once: trace i's header from INFO[i], its NS samples at SAMPLES +
 * i STRIDE; encoded in parallel (OpenMP) and written in one call.  The same bytes as N
 * segy_writer_trace calls. */
int segy_writer_traces(struct segy_writer *w, const struct segy_trace_info *info, const float *samples,
                       size_t stride, int n);

/* Traces written so far. */
int segy_writer_count(const struct segy_writer *w);

/* Flush and close (also frees W); returns the first error. */
int segy_writer_close(struct segy_writer *w);

#ifdef __cplusplus
}
#endif

#endif
