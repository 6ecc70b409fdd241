/* http_image — the status page's slice pictures, drawn by io/picture.h (axes in metres,
 * colour bar, robust clip), the same pictures as the rtm job's final PNGs and
 * seislive-sub's, and the layout the page needs to map a click to a cell. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/picture.h"
#include "stream/error.h"
#include "stream/http_status.h"

/* The three published slices back into a volume, zeros elsewhere (as seislive-sub). */
static float *unslice(const struct snap_image *im)
{
    const int *n = im->h.n, *at = im->h.at;
    size_t nx = (size_t)n[0], ny = (size_t)n[1], nz = (size_t)n[2];
    float *v = calloc(nx * ny * nz, sizeof *v);
    if (!v)
        return NULL;
    const float *xy = im->frame[0], *xz = im->frame[1], *yz = im->frame[2];
    memcpy(v + (size_t)at[2] * nx * ny, xy, nx * ny * sizeof *v);
    for (size_t z = 0; z < nz; z++) {
        memcpy(v + (z * ny + (size_t)at[1]) * nx, xz + z * nx, nx * sizeof *v);
        for (size_t y = 0; y < ny; y++)
            v[(z * ny + y) * nx + (size_t)at[0]] = yz[z * ny + y];
    }
    return v;
}

void http_picture_cache_free(struct http_picture_cache *c)
{
    picture_free(c->pic);
    free(c->owned);
    if (c->im)
        pub_snapshot_image_release(c->snap, c->im);
    c->pic = NULL;
    c->owned = NULL;
    c->im = NULL;
}

/* C's picture made from IM (the reference taken over), unless C holds IM's already.
 * Under C's lock. */
static int prepare(struct http_picture_cache *c, struct snap_image *im)
{
    if (c->im == im) { /* C's reference keeps IM alive, so the pointer names it */
        pub_snapshot_image_release(c->snap, im);
        return 0;
    }
    http_picture_cache_free(c);
    c->im = im;
    const int *n = im->h.n;
    struct picture_opts o;
    picture_opts_default(&o);
    if (im->h.slices) {
        memcpy(o.at, im->h.at, sizeof o.at);
        if (!(c->owned = unslice(im)))
            return err_set(-ENOMEM, "slice picture: out of memory");
    }
    const struct picture_meta pm = {{n[0], n[1], n[2]},
                                    {im->h.d[0], im->h.d[1], im->h.d[2]},
                                    {im->h.o[0], im->h.o[1], im->h.o[2]},
                                    "",
                                    (long long)im->h.units,
                                    NULL,
                                    (double)time(NULL),
                                    im->h.final};
    int rc = picture_prepare(&c->pic, c->owned ? c->owned : im->frame[0], &pm, &o);
    if (rc)
        http_picture_cache_free(c);
    return rc;
}

int http_slice_png(struct http_picture_cache *c, struct snap_image *im, char axis, int index, unsigned char **png,
                   size_t *len, struct picture_layout *layout)
{
    const int k = axis == 'x' ? 0 : axis == 'y' ? 1 : axis == 'z' ? 2 : -1;
    if (k < 0) {
        pub_snapshot_image_release(c->snap, im);
        return err_set(-EINVAL, "slice axis '%c': not x, y or z", axis);
    }
    if (im->h.slices)
        index = im->h.at[k]; /* only the published planes exist */
    else if (index >= im->h.n[k])
        index = im->h.n[k] - 1;
    pthread_mutex_lock(&c->mu);
    int rc = prepare(c, im);
    if (rc == 0)
        rc = picture_render_png(c->pic, axis, index, png, len, layout);
    pthread_mutex_unlock(&c->mu);
    return rc;
}
