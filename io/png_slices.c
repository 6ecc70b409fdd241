/* png_slices — see png_slices.h. */
#include "io/png_slices.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

float png_robust_clip(const float *x, size_t n, double percentile)
{
    if (n == 0)
        return 0.0f;
    /* An even sample keeps the sort cheap on large volumes; the percentile of a few
     * million values is as good as that of all of them for a colour scale. */
    const size_t max_samples = (size_t)1 << 22;
    size_t stride = n > max_samples ? (n + max_samples - 1) / max_samples : 1;
    size_t m = 0;
    float *a = malloc(((n + stride - 1) / stride) * sizeof *a);
    if (!a)
        return 0.0f;
    for (size_t i = 0; i < n; i += stride)
        if (isfinite(x[i]))
            a[m++] = fabsf(x[i]);
    float clip = 0.0f;
    if (m > 0) {
        qsort(a, m, sizeof *a, cmp_float);
        double p = percentile <= 0 ? 0 : percentile > 100 ? 100 : percentile;
        size_t k = (size_t)floor(p / 100.0 * (double)(m - 1) + 0.5);
        clip = a[k];
        if (clip == 0.0f) /* sparse images: fall back to the largest value */
            clip = a[m - 1];
    }
    free(a);
    return clip;
}

/* ColorBrewer RdBu (11 classes, ends and middle), reversed so negative is blue. */
static const uint8_t rdbu[5][3] = {
    {5, 48, 97}, {67, 147, 195}, {247, 247, 247}, {214, 96, 77}, {103, 0, 31}};

void png_diverging_rgb(float v, float clip, uint8_t rgb[3])
{
    double t = 0.0; /* -1 .. 1 */
    if (clip > 0.0f && isfinite(v)) {
        t = (double)v / (double)clip;
        t = t < -1 ? -1 : t > 1 ? 1 : t;
    }
    double s = (t + 1.0) * 2.0; /* 0 .. 4 over the five anchors */
    int i = (int)s;
    if (i > 3)
        i = 3;
    double f = s - i;
    for (int c = 0; c < 3; c++)
        rgb[c] = (uint8_t)lround(rdbu[i][c] + f * (rdbu[i + 1][c] - rdbu[i][c]));
}

int png_write_section(const char *path, const float *data, int w, int h, float clip, int scale)
{
    if (w <= 0 || h <= 0 || scale <= 0)
        return err_set(-EINVAL, "%s: bad picture size %d x %d (scale %d)", path, w, h, scale);
    FILE *f = fopen(path, "wb");
    if (!f)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    size_t W = (size_t)w * (size_t)scale;
    uint8_t *row = malloc(W * 3);
    if (!png || !info || !row) {
        png_destroy_write_struct(&png, &info);
        free(row);
        fclose(f);
        return err_set(-ENOMEM, "%s: out of memory", path);
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(row);
        fclose(f);
        return err_set(-EIO, "%s: libpng failed to write the picture", path);
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)W, (png_uint_32)((size_t)h * scale), 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            uint8_t rgb[3];
            png_diverging_rgb(data[(size_t)y * w + x], clip, rgb);
            for (int k = 0; k < scale; k++)
                memcpy(row + ((size_t)x * scale + k) * 3, rgb, 3);
        }
        for (int k = 0; k < scale; k++)
            png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    if (fclose(f) != 0)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    return 0;
}

int png_auto_scale(const int n[3])
{
    int m = n[0];
    for (int i = 1; i < 3; i++)
        if (n[i] > m)
            m = n[i];
    int s = (400 + m - 1) / (m > 0 ? m : 1);
    return s < 1 ? 1 : s > 8 ? 8 : s;
}

int png_write_slices(const char *prefix, const float *vol, const int n[3], const int at[3],
                     double percentile, int scale)
{
    size_t nx = (size_t)n[0], ny = (size_t)n[1], nz = (size_t)n[2];
    int ix = at && at[0] >= 0 && at[0] < n[0] ? at[0] : n[0] / 2;
    int iy = at && at[1] >= 0 && at[1] < n[1] ? at[1] : n[1] / 2;
    int iz = at && at[2] >= 0 && at[2] < n[2] ? at[2] : n[2] / 2;
    if (scale <= 0)
        scale = png_auto_scale(n);
    float clip = png_robust_clip(vol, nx * ny * nz, percentile);
    size_t big = nx * ny > nx * nz ? nx * ny : nx * nz;
    if (ny * nz > big)
        big = ny * nz;
    float *buf = malloc(big * sizeof *buf);
    if (!buf)
        return err_set(-ENOMEM, "%s: out of memory", prefix);
    char path[4096];
    int rc;
    /* depth slice: x across, y down */
    memcpy(buf, vol + (size_t)iz * nx * ny, nx * ny * sizeof *buf);
    snprintf(path, sizeof path, "%s_z.png", prefix);
    if ((rc = png_write_section(path, buf, (int)nx, (int)ny, clip, scale)) < 0)
        goto out;
    /* inline section at y = iy: x across, depth down */
    for (size_t z = 0; z < nz; z++)
        memcpy(buf + z * nx, vol + (z * ny + (size_t)iy) * nx, nx * sizeof *buf);
    snprintf(path, sizeof path, "%s_y.png", prefix);
    if ((rc = png_write_section(path, buf, (int)nx, (int)nz, clip, scale)) < 0)
        goto out;
    /* crossline section at x = ix: y across, depth down */
    for (size_t z = 0; z < nz; z++)
        for (size_t y = 0; y < ny; y++)
            buf[z * ny + y] = vol[(z * ny + y) * nx + (size_t)ix];
    snprintf(path, sizeof path, "%s_x.png", prefix);
    rc = png_write_section(path, buf, (int)ny, (int)nz, clip, scale);
out:
    free(buf);
    return rc;
}
