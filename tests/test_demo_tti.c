/* The TTI demo (tools/demo-tti.sh, `make demo-tti`) runs to completion; the TTI
 * migration of its TTI data puts the flat reflector (700 m) at its depth within one cell,
 * the isotropic migration in v_pz puts it shallower by more than three cells (waves
 * travel faster than v_pz in every direction but along the tilted symmetry axis); the
 * depths the demo prints are the ones measured here from its image files; the side-by-side
 * PNG holds both sections.
 * Where a reflector is: the zero crossing of its image's doublet (docs/rtm.md), found as
 * tests/test_2d_rtm.c finds it, over the middle 1200 m of the line, below 150 m. */
#include <criterion/criterion.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/image_files.h"
#include "stream/error.h"
#include "tests/support.h"

enum { NX = 201, NZ = 101 };
static const double D = 10.0, Z_REF = 700.0, Z_MIN = 150.0;

/* The zero crossing (m) between the strongest positive lobe at or below K0 and the most
 * negative sample within 8 cells below it (tests/test_2d_rtm.c's doublet_depth). */
static double doublet_depth(const double *p, int k0)
{
    int bk = -1, bj = -1;
    double best = 0;
    for (int k = k0; k < NZ - 1; k++) {
        if (!(p[k] > 0))
            continue;
        int j = k + 1;
        for (int q = k + 1; q <= k + 8 && q < NZ; q++)
            if (p[q] < p[j])
                j = q;
        if (p[j] < 0 && p[k] - p[j] > best) {
            best = p[k] - p[j];
            bk = k;
            bj = j;
        }
    }
    for (int q = bk; bk >= 0 && q < bj; q++)
        if (p[q] >= 0 && p[q + 1] < 0)
            return (q + p[q] / (p[q] - p[q + 1])) * D;
    return -1;
}

/* The reflector depth of OUT/tti/NAME's final image. */
static double image_depth(const char *out, const char *name)
{
    char dir[4400];
    snprintf(dir, sizeof dir, "%s/tti/%s", out, name);
    struct image_meta m;
    float *img = NULL;
    cr_assert_eq(image_files_read(dir, "image", &m, &img), 0, "%s", err_msg());
    cr_assert(m.final);
    cr_assert_eq(m.units, 5, "%s: %lld shots", name, (long long)m.units);
    cr_assert(m.n[0] == NX && m.n[1] == 1 && m.n[2] == NZ, "%s: %d x %d x %d", name, m.n[0], m.n[1], m.n[2]);
    double p[NZ];
    for (int k = 0; k < NZ; k++) {
        double s = 0;
        for (int i = 40; i <= 160; i++) {
            cr_assert(isfinite(img[(size_t)k * NX + i]));
            s += img[(size_t)k * NX + i];
        }
        p[k] = s / 121;
    }
    free(img);
    return doublet_depth(p, (int)(Z_MIN / D));
}

/* The depth the demo printed after LABEL (its summary lines "  TTI migration:  Z m"). */
static double printed(const char *out, const char *label)
{
    const char *at = strstr(out, label);
    cr_assert_not_null(at, "no '%s' in:\n%s", label, out);
    double z = -1;
    cr_assert_eq(sscanf(at + strlen(label), " %lf m", &z), 1, "%s", at);
    return z;
}

Test(demo_tti, tti_image_at_the_depth_isotropic_too_shallow, .timeout = 300)
{
    char *out = test_tmpdir();
    setenv("SEISLIVE_DEMO_OUT", out, 1);
    const char *b = getenv("SEISLIVE_BUILD");
    const char *argv[] = {"/bin/bash", "tools/demo-tti.sh", b ? b : "build/release", NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 280, &r), 0);
    cr_assert_eq(r.status, 0, "demo-tti failed:\n%s\n%s", r.out, r.err);

    const double z_tti = image_depth(out, "tti"), z_iso = image_depth(out, "isotropic");
    fprintf(stderr, "demo-tti: reflector at %.0f m: TTI image %.1f m, isotropic image %.1f m\n", Z_REF, z_tti, z_iso);
    cr_assert_leq(fabs(z_tti - Z_REF), D, "TTI image of the %.0f m reflector at %.1f m", Z_REF, z_tti);
    cr_assert_lt(z_iso, Z_REF - 3 * D, "isotropic image at %.1f m: not shallower than %.0f m by 3 cells", z_iso,
                 Z_REF);
    cr_assert_gt(z_iso, Z_REF - 20 * D, "isotropic image at %.1f m: not the reflector", z_iso);
    /* what the demo prints is what its images hold */
    cr_assert_leq(fabs(printed(r.out, "\n  TTI migration:") - z_tti), 0.1, "%s", r.out);
    cr_assert_leq(fabs(printed(r.out, "\n  isotropic migration:") - z_iso), 0.1, "%s", r.out);
    test_run_free(&r);

    char png[4400];
    snprintf(png, sizeof png, "%s/tti/tti_vs_isotropic.png", out);
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    cr_assert(png_image_begin_read_from_file(&img, png), "%s: %s", png, img.message);
    cr_assert_eq(img.width % (2 * NX + 4), 0, "width %u: not two sections and the gap", img.width);
    cr_assert_eq(img.height, img.width / (2 * NX + 4) * NZ, "height %u", img.height);
    png_image_free(&img);
    test_rmtree(out);
    free(out);
}
