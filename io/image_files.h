/* image_files — the final result on disk: DIR/NAME.f32 (raw float32, little-endian,
 * x fastest, then y, z slowest) with DIR/NAME.json beside it (grid, spacing, origin,
 * units stacked, dtype), each written atomically (temp file, fsync, rename). */
#ifndef SEISLIVE_IMAGE_FILES_H
#define SEISLIVE_IMAGE_FILES_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct image_meta {
    int n[3];
    double d[3], o[3];
    int64_t units;        /* shots (rtm) or windows (locate) in it */
    bool final;
    const char *job;      /* "rtm", "locate" */
};

/* Write NAME.f32 and NAME.json into DIR (created if missing).  0 or -errno. */
int image_files_write(const char *dir, const char *name, const struct image_meta *m,
                      const float *v);
/* Write DIR/NAME.segy: one trace per (x, y) column, x fastest among traces, depth
 * samples (sample interval = dz in mm, or in the unit segy_depth_interval picks when
 * mm do not hold it: named in the textual header's second line and in NAME.json's
 * "segy_depth_interval"), inline = iy + 1, crossline = ix + 1, CDP x/y the column's
 * position (io/segy_write.h).  0 or -errno (a grid SEG-Y cannot hold: -EINVAL). */
int image_files_write_segy(const char *dir, const char *name, const struct image_meta *m,
                           const float *v);
/* Read NAME.f32 back (tests, tools): *V malloc'd with n[0]*n[1]*n[2] floats read from
 * the sidecar's grid.  0 or -errno. */
int image_files_read(const char *dir, const char *name, struct image_meta *m, float **v);

#ifdef __cplusplus
}
#endif

#endif
