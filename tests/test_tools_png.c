/* PNG slices: valid PNG files of the expected size (read back with libpng), the
 * diverging colours in the right places, and a clip that ignores a lone outlier. */
#include <criterion/criterion.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/png_slices.h"
#include "tests/support.h"

/* Read PATH back as 8-bit RGB with libpng's simplified API. */
static uint8_t *read_png(const char *path, int *w, int *h)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    cr_assert(png_image_begin_read_from_file(&img, path), "%s: %s", path, img.message);
    img.format = PNG_FORMAT_RGB;
    uint8_t *buf = malloc(PNG_IMAGE_SIZE(img));
    cr_assert(png_image_finish_read(&img, NULL, buf, 0, NULL), "%s: %s", path, img.message);
    *w = (int)img.width;
    *h = (int)img.height;
    return buf;
}

Test(tools_png, three_slices_sizes_and_colours)
{
    char *dir = test_tmpdir();
    const int n[3] = {20, 12, 16};
    size_t nxy = (size_t)n[0] * n[1];
    float *vol = calloc(nxy * n[2], sizeof *vol);
    const int at[3] = {5, 7, 9};
    /* a positive cell and a negative cell on the slices through AT */
    vol[(size_t)9 * nxy + 7 * n[0] + 3] = 1.0f;  /* z=9, y=7, x=3 */
    vol[(size_t)2 * nxy + 7 * n[0] + 5] = -1.0f; /* z=2, y=7, x=5 */
    char prefix[4096];
    snprintf(prefix, sizeof prefix, "%s/img", dir);
    const int scale = 3;
    cr_assert_eq(png_write_slices(prefix, vol, n, at, 99.0, scale), 0);

    const struct { const char *suffix; int w, h; } want[] = {
        {"_z.png", 20, 12}, {"_y.png", 20, 16}, {"_x.png", 12, 16}};
    for (int i = 0; i < 3; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s%s", prefix, want[i].suffix);
        int w, h;
        uint8_t *rgb = read_png(path, &w, &h);
        cr_assert_eq(w, want[i].w * scale, "%s width", path);
        cr_assert_eq(h, want[i].h * scale, "%s height", path);
        if (i == 1) { /* inline y=7: red at (x=3, z=9), blue at (x=5, z=2), white elsewhere */
            const uint8_t *red = rgb + ((size_t)(9 * scale) * w + 3 * scale) * 3;
            const uint8_t *blue = rgb + ((size_t)(2 * scale + 1) * w + 5 * scale + 2) * 3;
            const uint8_t *white = rgb + ((size_t)(12 * scale) * w + 12 * scale) * 3;
            cr_assert(red[0] > 90 && red[2] < 40, "red %d %d %d", red[0], red[1], red[2]);
            cr_assert(blue[2] > 90 && blue[0] < 20, "blue %d %d %d", blue[0], blue[1], blue[2]);
            cr_assert(white[0] == 247 && white[1] == 247 && white[2] == 247);
        }
        if (i == 0) { /* depth slice z=9 holds the positive cell at x=3, y=7 */
            const uint8_t *red = rgb + ((size_t)(7 * scale) * w + 3 * scale) * 3;
            cr_assert(red[0] > 90 && red[2] < 40);
        }
        if (i == 2) { /* crossline x=5 holds the negative cell at y=7, z=2 */
            const uint8_t *blue = rgb + ((size_t)(2 * scale) * w + 7 * scale) * 3;
            cr_assert(blue[2] > 90 && blue[0] < 20);
        }
        free(rgb);
    }
    free(vol);
    test_rmtree(dir);
    free(dir);
}

Test(tools_png, robust_clip_ignores_outlier)
{
    size_t n = 10000;
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((i % 100) + 1) * ((i & 1) ? -0.01f : 0.01f); /* |x| uniform on 0.01..1 */
    x[17] = 1e6f;
    float c = png_robust_clip(x, n, 98.0);
    cr_assert(c > 0.95f && c <= 1.0f, "clip %g", c);
    cr_assert_float_eq(png_robust_clip(x, n, 100.0), 1e6f, 1.0f);
    free(x);
}

Test(tools_png, colour_map_ends_and_middle)
{
    uint8_t rgb[3];
    png_diverging_rgb(0.0f, 1.0f, rgb);
    cr_assert(rgb[0] == 247 && rgb[1] == 247 && rgb[2] == 247);
    png_diverging_rgb(-5.0f, 1.0f, rgb); /* clamped to the blue end */
    cr_assert(rgb[0] == 5 && rgb[1] == 48 && rgb[2] == 97);
    png_diverging_rgb(2.0f, 1.0f, rgb);
    cr_assert(rgb[0] == 103 && rgb[1] == 0 && rgb[2] == 31);
    cr_assert_eq(png_auto_scale((const int[]){50, 20, 30}), 8);
    cr_assert_eq(png_auto_scale((const int[]){200, 20, 30}), 2);
    cr_assert_eq(png_auto_scale((const int[]){1000, 20, 30}), 1);
}
