/* The built-in demo (tools/demo.sh, `make demo`, the README's first command) runs to
 * completion and its final image shows the demo model's horizontal reflectors at their
 * depths.  The model (tools/survey_model.c, seislive-gen shots defaults) has interfaces
 * at 150 m (1800 -> 2300 m/s) and 380 m (-> 2900 m/s), both positive reflection
 * coefficients, so the stacked cross-correlation image has a positive lobe at each. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

/* demo's image: 81 x 21 x 51 cells of 10 m (tools/demo.toml), x fastest */
enum { NX = 81, NY = 21, NZ = 51 };
static const double DZ = 10.0;

/* The signed depth profile on the receiver line (the middle y) averaged over the
 * central columns: horizontal reflectors add up, migration noise cancels. */
static void profile(const float *img, double *p)
{
    int j = NY / 2;
    for (int k = 0; k < NZ; k++) {
        double s = 0;
        int n = 0;
        for (int i = NX / 8; i < NX - NX / 8; i++, n++)
            s += img[((size_t)k * NY + j) * NX + i];
        p[k] = s / n;
    }
}

/* Depth index of the largest positive value of P in [z0, z1] metres. */
static int peak_in(const double *p, double z0, double z1)
{
    int best = -1;
    for (int k = (int)ceil(z0 / DZ); k <= (int)(z1 / DZ) && k < NZ; k++)
        if (best < 0 || p[k] > p[best])
            best = k;
    return best;
}

Test(demo_rtm, image_shows_the_reflectors_at_their_depths, .timeout = 600)
{
    const char *b = getenv("SEISLIVE_BUILD");
    const char *argv[] = {"/bin/bash", "tools/demo.sh", b ? b : "build/release", NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 560, &r), 0);
    cr_assert_eq(r.status, 0, "demo failed:\n%s\n%s", r.out, r.err);
    cr_assert_not_null(strstr(r.out, "final image: 4 shots"), "%s", r.out);
    test_run_free(&r);

    const char *path = "demo-out/image/image_final.f32";
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    float *img = malloc(sizeof(float) * NX * NY * NZ);
    cr_assert_eq(fread(img, sizeof(float), (size_t)NX * NY * NZ, f), (size_t)NX * NY * NZ,
                 "%s: short", path);
    cr_assert_eq(fgetc(f), EOF, "%s: longer than %d x %d x %d", path, NX, NY, NZ);
    fclose(f);
    for (size_t i = 0; i < (size_t)NX * NY * NZ; i++)
        cr_assert(isfinite(img[i]), "%s: value %zu is not finite", path, i);

    double p[NZ];
    profile(img, p);
    /* the deep background: below the deepest reflector's lobes */
    double bg = 0;
    int nb = 0;
    for (int k = (int)(440 / DZ); k < NZ - 1; k++, nb++)
        bg += p[k] * p[k];
    bg = sqrt(bg / nb);

    /* Each reflector's positive lobe within two cells (20 m, under a quarter of the
     * 12 Hz wavelength in 1800 m/s), well above the deep background; the search windows
     * are the reflector +- 50 m, so the lobe found is that reflector's. */
    const double z_ref[2] = {150.0, 380.0};
    for (int r2 = 0; r2 < 2; r2++) {
        int k = peak_in(p, z_ref[r2] - 50, z_ref[r2] + 50);
        fprintf(stderr, "demo image: reflector %.0f m imaged at %.0f m (%.3g, background %.3g)\n",
                z_ref[r2], k * DZ, p[k], bg);
        cr_assert_leq(fabs(k * DZ - z_ref[r2]), 20.0, "reflector at %.0f m imaged at %.0f m",
                      z_ref[r2], k * DZ);
        cr_assert_gt(p[k], 5 * bg, "reflector at %.0f m: lobe %.3g not above background %.3g",
                     z_ref[r2], p[k], bg);
    }
    /* the shallow reflector is the strongest event of the section below the surface
     * (the direct wave was subtracted from the records) */
    int kmax = peak_in(p, 30, (NZ - 1) * DZ);
    cr_assert_leq(fabs(kmax * DZ - z_ref[0]), 20.0, "strongest lobe at %.0f m", kmax * DZ);
    free(img);
}
