/* http_image — the status page's slice pictures: the one function to switch when a
 * better renderer lands (it draws with io/png_slices.h today). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/png_slices.h"
#include "stream/error.h"
#include "stream/http_status.h"

/* Like seislive-sub's PNGs: the 99th percentile of |image| is the clip. */
#define SLICE_PERCENTILE 99.0

/* The plane of AXIS at INDEX of the volume V (n[0] x n[1] x n[2], x fastest) into
 * OUT (w x h, row 0 at the top; depth downwards). */
static void cut(const float *v, const int n[3], char axis, int index, float *out, int *w, int *h)
{
    size_t nx = (size_t)n[0], ny = (size_t)n[1], nz = (size_t)n[2];
    if (axis == 'z') {
        *w = n[0], *h = n[1];
        memcpy(out, v + (size_t)index * nx * ny, nx * ny * sizeof *out);
    } else if (axis == 'y') {
        *w = n[0], *h = n[2];
        for (size_t z = 0; z < nz; z++)
            memcpy(out + z * nx, v + z * nx * ny + (size_t)index * nx, nx * sizeof *out);
    } else {
        *w = n[1], *h = n[2];
        for (size_t z = 0; z < nz; z++)
            for (size_t y = 0; y < ny; y++)
                out[z * ny + y] = v[z * nx * ny + y * nx + (size_t)index];
    }
}

/* Read the whole of FD into a malloc'd buffer. */
static int slurp(int fd, unsigned char **buf, size_t *len)
{
    off_t end = lseek(fd, 0, SEEK_END);
    if (end < 0 || lseek(fd, 0, SEEK_SET) < 0)
        return err_set(-errno, "slice picture: %s", strerror(errno));
    unsigned char *b = malloc((size_t)end + 1);
    if (!b)
        return err_set(-ENOMEM, "slice picture: out of memory");
    size_t got = 0;
    while (got < (size_t)end) {
        ssize_t r = read(fd, b + got, (size_t)end - got);
        if (r <= 0) {
            free(b);
            return err_set(r < 0 ? -errno : -EIO, "slice picture: short read");
        }
        got += (size_t)r;
    }
    *buf = b;
    *len = got;
    return 0;
}

int http_slice_png(const struct snap_image *im, char axis, int index, unsigned char **png,
                   size_t *len)
{
    const int *n = im->h.n;
    int k = axis == 'x' ? 0 : axis == 'y' ? 1 : axis == 'z' ? 2 : -1;
    if (k < 0)
        return err_set(-EINVAL, "slice axis '%c': not x, y or z", axis);
    if (im->h.slices)
        index = im->h.at[k]; /* only the published planes exist */
    else if (index < 0)
        index = n[k] / 2;
    else if (index >= n[k])
        index = n[k] - 1;
    size_t cells = (size_t)n[0] * (size_t)n[1] * (size_t)n[2];
    size_t plane = axis == 'z' ? (size_t)n[0] * n[1] : axis == 'y' ? (size_t)n[0] * n[2] : (size_t)n[1] * n[2];
    float *buf = malloc(plane * sizeof *buf);
    if (!buf)
        return err_set(-ENOMEM, "slice picture: out of memory");
    int w, h;
    float clip;
    if (im->h.slices) {
        /* frames: xy at iz, xz at iy, yz at ix */
        const float *f = im->frame[axis == 'z' ? 0 : axis == 'y' ? 1 : 2];
        memcpy(buf, f, plane * sizeof *buf);
        w = axis == 'x' ? n[1] : n[0];
        h = axis == 'z' ? n[1] : n[2];
        clip = png_robust_clip(buf, plane, SLICE_PERCENTILE);
    } else {
        cut(im->frame[0], n, axis, index, buf, &w, &h);
        clip = png_robust_clip(im->frame[0], cells, SLICE_PERCENTILE);
    }
    /* png_slices writes files: an anonymous in-memory one keeps the disk out of it. */
    int fd = memfd_create("seislive-slice", MFD_CLOEXEC);
    if (fd < 0) {
        free(buf);
        return err_set(-errno, "slice picture: memfd: %s", strerror(errno));
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int rc = png_write_section(path, buf, w, h, clip, png_auto_scale(n));
    free(buf);
    if (!rc)
        rc = slurp(fd, png, len);
    close(fd);
    return rc;
}
