/* picture_impl — what io/picture.c (the numbers: gain, clip, slices, files) and
 * io/picture_draw.c (cairo) share.  Not for other callers: use io/picture.h. */
#ifndef SEISLIVE_PICTURE_IMPL_H
#define SEISLIVE_PICTURE_IMPL_H

#include <cairo.h>

#include "io/picture.h"

struct picture {
    const float *v;       /* the gained volume (own copy) or the caller's volume */
    float *own;           /* the copy, freed with the picture; NULL when V is the caller's */
    float clip;
    struct picture_meta m;
    struct picture_opts o;
    char job[64], unit_name[48];
};

/* One slice of P as SW x SH floats (row-major, across fastest, row 0 at the top) and
 * what its axes are: H and V the volume axes (0 x, 1 y, 2 z) across and down. */
struct picture_slice {
    float *s;
    int sw, sh, h, v, at;
    char axis;
};
int picture_extract(const struct picture *p, char axis, int at, struct picture_slice *sl);

/* Draw SL of P into a cairo image surface and hand the PNG to WRITE with CLOSURE. */
int picture_draw(const struct picture *p, const struct picture_slice *sl, cairo_write_func_t write,
                 void *closure, struct picture_layout *layout);

#endif
