/* png_slices — pictures of a 3D image: three orthogonal slices as PNG files (libpng),
 * with a diverging colour map (blue - white - red, ColorBrewer RdBu) and a robust clip
 * (a percentile of |value|, so one strong artifact does not wash the picture out).
 *
 * Volumes are in the engine layout: x fastest, then y, z slowest (z = depth, drawn
 * downwards).  Used by seislive-sub for every image it receives. */
#ifndef SEISLIVE_PNG_SLICES_H
#define SEISLIVE_PNG_SLICES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The PERCENTILE (0 < p <= 100) of |x| over the finite values of X; 0 when there are
 * none.  Large arrays are sampled evenly (at most ~4 million values). */
float png_robust_clip(const float *x, size_t n, double percentile);

/* The colour of V in [-clip, clip] (clamped outside) on the diverging map: negative
 * blue, zero white, positive red.  A clip <= 0 draws everything white. */
void png_diverging_rgb(float v, float clip, uint8_t rgb[3]);

/* Write a W x H picture of DATA (row-major, W fastest; row 0 at the top) to PATH,
 * each cell drawn as SCALE x SCALE pixels.  Returns 0 or -errno with err_msg(). */
int png_write_section(const char *path, const float *data, int w, int h, float clip, int scale);

/* The three orthogonal slices of VOL (n[0] x n[1] x n[2], x fastest) through the cell
 * AT (an index < 0 means the middle): PREFIX_z.png (depth slice, x across, y down),
 * PREFIX_y.png (x across, depth down), PREFIX_x.png (y across, depth down), with one
 * clip for all three (PERCENTILE of |vol|).  SCALE <= 0 picks one so that the largest
 * dimension is drawn with at least 400 pixels (at most 8 per cell). */
int png_write_slices(const char *prefix, const float *vol, const int n[3], const int at[3],
                     double percentile, int scale);

/* The SCALE png_write_slices uses for a volume of N when asked for 0. */
int png_auto_scale(const int n[3]);

#ifdef __cplusplus
}
#endif

#endif
