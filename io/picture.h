/* picture — slices of an image volume as PNG pictures a geophysicist can read, drawn
 * with cairo: the slice (bilinear between cells, never blocky), distance and depth axes
 * in metres with tick labels, a title (job, shots stacked, time, slice position) and a
 * colour bar with its clip value, on a diverging map (blue - white - red, ColorBrewer
 * RdBu: negative blue).
 *
 * Before the clip, an optional gain makes deep reflectors visible: depth^k (amplitudes
 * decay with depth from spreading and transmission losses) and/or AGC (each value over
 * the RMS of its column in a depth window).  The clip is robust: a percentile of
 * |value| over the whole gained volume, one for the three slices, so one strong
 * artifact does not wash the picture out.  Only the picture changes: the volume is
 * read, never written.
 *
 * Volumes are in the engine layout: x fastest, then y, z slowest (z = depth, drawn
 * downwards).  Slices: 'z' (depth slice: x across, y down), 'y' (inline section at one
 * y: x across, depth down), 'x' (crossline section at one x: y across, depth down).
 *
 * io/ knows nothing of the pipeline: callers pass the grid and what the title says. */
#ifndef SEISLIVE_PICTURE_H
#define SEISLIVE_PICTURE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the title says and where the cells are. */
struct picture_meta {
    int n[3];             /* cells nx, ny, nz */
    double d[3], o[3];    /* spacing and origin, m */
    const char *job;      /* job name ("" or NULL: none) */
    long long units;      /* shots stacked (< 0: not shown) */
    const char *unit_name;/* what UNITS counts ("shots stacked" when NULL) */
    double time;          /* seconds since the epoch, shown in UTC; 0 = not shown */
    int final;            /* "final" in the title */
};

/* How to draw it.  picture_opts_default() fills the defaults. */
struct picture_opts {
    double gain;          /* depth gain exponent k: value * (depth / dz)^k; 0 = none */
    double agc;           /* AGC window along depth, m; 0 = none */
    double percentile;    /* clip: this percentile (0, 100] of |gained value| */
    int at[3];            /* slice cells ix, iy, iz; < 0 or beyond the grid: the middle */
    int size;             /* pixels of the plot's longer side (the picture adds margins) */
};
void picture_opts_default(struct picture_opts *o);
/* Check O: 0 or -EINVAL with err_msg() naming the bad field. */
int picture_opts_check(const struct picture_opts *o);

/* Where the renderer put things (for tests and for a page that maps clicks to cells):
 * pixel boxes of the plot, the colour bar and every piece of text (the ink box from
 * cairo_text_extents, placed). */
enum picture_text_kind { PT_TITLE, PT_HTICK, PT_VTICK, PT_HNAME, PT_VNAME, PT_BAR };
struct picture_text {
    int kind;             /* enum picture_text_kind */
    char text[160];
    double value;         /* ticks: the value in metres; colour bar: the value */
    double x, y, w, h;    /* ink box, pixels from the top left */
};
#define PICTURE_MAX_TEXT 64
struct picture_layout {
    int width, height;            /* the whole picture */
    double plot[4], bar[4];       /* x, y, w, h of the slice and of the colour bar */
    double h0, h1, v0, v1;        /* the metres at the plot's left, right, top, bottom */
    float clip;                   /* the colour bar's end (gained units) */
    int ntext;
    struct picture_text text[PICTURE_MAX_TEXT];
};

/* A volume ready to draw: the gained copy (or the volume itself when there is no gain)
 * and the clip.  Prepare once, then draw any number of slices. */
struct picture;
int picture_prepare(struct picture **p, const float *vol, const struct picture_meta *m,
                    const struct picture_opts *o);
void picture_free(struct picture *p);
/* The clip of a prepared volume (gained units). */
float picture_clip(const struct picture *p);

/* Draw slice AXIS ('x', 'y' or 'z') at cell AT (< 0 or beyond: the opts' at, then the
 * middle) as PNG into a malloc'd buffer *PNG of *LEN bytes; LAYOUT (may be NULL) gets
 * the layout.  0 or -errno with err_msg(). */
int picture_render_png(const struct picture *p, char axis, int at, unsigned char **png,
                       size_t *len, struct picture_layout *layout);
/* The same into PATH, atomically (a temp file beside it, fsync, rename). */
int picture_write_png(const struct picture *p, char axis, int at, const char *path,
                      struct picture_layout *layout);

/* One call each, for a caller with one volume and one slice to draw. */
int picture_slice_png(const float *vol, const struct picture_meta *m,
                      const struct picture_opts *o, char axis, unsigned char **png, size_t *len);
int picture_slice_file(const char *path, const float *vol, const struct picture_meta *m,
                       const struct picture_opts *o, char axis);
/* The three slices PREFIX_z.png, PREFIX_y.png, PREFIX_x.png, with one clip. */
int picture_write_slices(const char *prefix, const float *vol, const struct picture_meta *m,
                         const struct picture_opts *o);

/* The gain alone, into OUT (N[0] N[1] N[2] floats; OUT may be VOL): for tests and for
 * whoever wants the numbers behind the picture. */
void picture_apply_gain(float *out, const float *vol, const int n[3], const double d[3],
                        double gain, double agc);
/* The PERCENTILE (0 < p <= 100) of |x| over the finite values; 0 when there are none,
 * the largest |x| when the percentile is 0 (sparse images). */
float picture_robust_clip(const float *x, size_t n, double percentile);
/* A "nice" tick step (1, 2 or 5 x 10^k) giving about TICKS ticks over SPAN. */
double picture_tick_step(double span, int ticks);

#ifdef __cplusplus
}
#endif

#endif
