/* seislive-compare: the depth picks it prints are where synthetic doublets were put (the
 * maximum, and the zero crossing below it, linear between samples), above --z-min is
 * ignored, the columns are the ones asked for; the PNG holds the sections side by side
 * with a white gap, each with its own clip (an image 1000 times stronger draws the same
 * colours); images of different grids are refused. */
#include <criterion/criterion.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/image_files.h"
#include "stream/error.h"
#include "tests/support.h"

enum { NX = 30, NZ = 40, GAP = 4, SCALE = 2 };

/* DIR/NAME/image.*: every column the depth trace 5 at 30 m (a shallow spike), and a
 * doublet 1, 0.5, -0.5, -1 from cell K, all times AMP; NX_ columns. */
static char *write_image(const char *dir, const char *name, int k, float amp, int nx)
{
    char *path = malloc(4200);
    snprintf(path, 4200, "%s/%s", dir, name);
    float *v = calloc((size_t)nx * NZ, sizeof *v);
    const float dbl[4] = {1.0f, 0.5f, -0.5f, -1.0f};
    for (int i = 0; i < nx; i++) {
        v[3 * nx + i] = 5 * amp;
        for (int q = 0; q < 4; q++)
            v[(size_t)(k + q) * nx + i] = dbl[q] * amp;
    }
    struct image_meta m = {.n = {nx, 1, NZ}, .d = {10, 10, 10}, .o = {0, 0, 0}, .units = 1, .final = true,
                           .job = "rtm"};
    cr_assert_eq(image_files_write(path, "image", &m, v), 0, "%s", err_msg());
    free(v);
    return path;
}

static struct run_result compare(const char *const *args)
{
    const char *argv[32] = {test_prog("seislive-compare")};
    int i = 1;
    for (; args[i - 1]; i++)
        argv[i] = args[i - 1];
    argv[i] = NULL;
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    return r;
}

Test(tools_compare, picks_and_side_by_side_png)
{
    char *dir = test_tmpdir();
    char *a = write_image(dir, "a", 20, 1.0f, NX), *b = write_image(dir, "b", 27, 1000.0f, NX);
    char png[4200], line[4400];
    snprintf(png, sizeof png, "%s/ab.png", dir);
    struct run_result r = compare((const char *[]){"-o", png, "--z-min", "50", "--columns", "0,290", "--scale", "2",
                                                   a, b, NULL});
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    /* doublet from cell 20: maximum at 200 m, the crossing halfway between 210 and 220 m */
    snprintf(line, sizeof line, "%s: maximum at 200.0 m, zero crossing at 215.0 m (x 0..290 m, below 50 m)\n", a);
    cr_assert_not_null(strstr(r.out, line), "'%s' lacks '%s'", r.out, line);
    snprintf(line, sizeof line, "%s: maximum at 270.0 m, zero crossing at 285.0 m (x 0..290 m, below 50 m)\n", b);
    cr_assert_not_null(strstr(r.out, line), "'%s' lacks '%s'", r.out, line);
    test_run_free(&r);
    /* without --z-min the shallow spike is the maximum; the default columns are the
     * middle fifth */
    r = compare((const char *[]){"-o", png, a, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(line, sizeof line, "%s: maximum at 30.0 m, zero crossing at 215.0 m (x 120..170 m, below 0 m)\n", a);
    cr_assert_not_null(strstr(r.out, line), "'%s' lacks '%s'", r.out, line);
    test_run_free(&r);

    r = compare((const char *[]){"-o", png, "--scale", "2", a, b, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    cr_assert(png_image_begin_read_from_file(&img, png), "%s: %s", png, img.message);
    img.format = PNG_FORMAT_RGB;
    uint8_t *rgb = malloc(PNG_IMAGE_SIZE(img));
    cr_assert(png_image_finish_read(&img, NULL, rgb, 0, NULL), "%s", img.message);
    const int w = (2 * NX + GAP) * SCALE;
    cr_assert_eq((int)img.width, w);
    cr_assert_eq((int)img.height, NZ * SCALE);
#define PX(cell_x, cell_z) (rgb + ((size_t)((cell_z) * SCALE) * w + (size_t)(cell_x) * SCALE) * 3)
    /* the spikes (the clip: the largest values) full red, the doublet's bottom bluish */
    const uint8_t *ra = PX(5, 3), *rb = PX(NX + GAP + 5, 3), *gap = PX(NX + 1, 20), *bl = PX(5, 23);
    cr_assert(ra[0] > 90 && ra[2] < 40, "left: the spike is not red (%d %d %d)", ra[0], ra[1], ra[2]);
    cr_assert(bl[2] > bl[0], "left: the doublet's bottom is not blue (%d %d %d)", bl[0], bl[1], bl[2]);
    cr_assert(memcmp(ra, rb, 3) == 0, "each its own clip: left %d %d %d, right (x 1000) %d %d %d", ra[0], ra[1],
              ra[2], rb[0], rb[1], rb[2]);
    cr_assert(gap[0] == 247 && gap[1] == 247 && gap[2] == 247, "the gap is white");
#undef PX
    free(rgb);

    /* another grid is refused; a missing -o is a usage error */
    char *c = write_image(dir, "c", 20, 1.0f, NX + 1);
    r = compare((const char *[]){"-o", png, a, c, NULL});
    cr_assert_eq(r.status, 1);
    cr_assert_not_null(strstr(r.err, "differs from"), "%s", r.err);
    test_run_free(&r);
    r = compare((const char *[]){a, NULL});
    cr_assert_eq(r.status, 2);
    cr_assert_not_null(strstr(r.err, "-o OUT.png is required"), "%s", r.err);
    test_run_free(&r);
    free(a), free(b), free(c);
    test_rmtree(dir);
    free(dir);
}
