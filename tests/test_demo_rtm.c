/* The built-in demo (tools/demo.sh, `make demo`, the README's first command) runs to
 * completion and its final image shows the demo model's horizontal reflectors at their
 * depths.  The model (tools/survey_model.c, seislive-gen shots defaults) has interfaces
 * at 150 m (1800 -> 2300 m/s) and 380 m (-> 2900 m/s), both positive reflection
 * coefficients, so the stacked cross-correlation image has a positive lobe at each.
 * Its pictures (issue 19) show every interface of the model: the two reflectors, the
 * dipping interface (250 m at x = 0, 6 degrees) and the top of the dome (275 m at
 * x = 496 m), each within two cells of its true depth on the depth^3-gained image the
 * PNGs draw, none of them lost in the gain's balance. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/picture.h"
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

/* The gained image on the receiver line at (x m, z m), linear between cells in depth. */
static double at_depth(const float *g, int i, double z)
{
    double f = z / DZ;
    int k = (int)floor(f);
    if (k < 0 || k + 1 >= NZ)
        return 0;
    const float *c = g + (size_t)(NY / 2) * NX + i;
    return (1 - (f - k)) * c[(size_t)k * NX * NY] + (f - k) * c[(size_t)(k + 1) * NX * NY];
}

/* Each interface of the demo model: columns I0..I1 where it is alone, its depth Z0 at
 * x = 0 and its dip.  The profile along the interface (the columns shifted so that the
 * interface is at 0) has its largest positive lobe within two cells of 0. */
static void interfaces(const float *img)
{
    float *g = malloc(sizeof(float) * NX * NY * NZ);
    const int n[3] = {NX, NY, NZ};
    const double d[3] = {10, 10, DZ};
    picture_apply_gain(g, img, n, d, 3.0, 0); /* tools/demo.toml picture_gain */
    const struct { const char *name; int i0, i1; double z0, dip; } ifc[] = {
        {"reflector at 150 m", 8, 72, 150, 0},
        {"reflector at 380 m (left of the dome)", 6, 39, 380, 0},
        {"dipping interface", 5, 39, 250, 6},
        {"top of the dome", 47, 52, 275, 0}};
    double first = 0;
    for (int f = 0; f < 4; f++) {
        double best = -1e30;
        int kb = 0;
        for (int k = -10; k <= 10; k++) { /* +-50 m in steps of 5 */
            double s = 0;
            for (int i = ifc[f].i0; i <= ifc[f].i1; i++)
                s += at_depth(g, i, ifc[f].z0 + i * 10.0 * tan(ifc[f].dip * M_PI / 180) + 5.0 * k);
            s /= ifc[f].i1 - ifc[f].i0 + 1;
            if (s > best)
                best = s, kb = k;
        }
        if (f == 0)
            first = best;
        fprintf(stderr, "demo picture: %s imaged %+d m off, %.2f of the 150 m reflector\n",
                ifc[f].name, 5 * kb, best / first);
        cr_assert_leq(abs(5 * kb), 20, "%s imaged %d m off", ifc[f].name, 5 * kb);
        cr_assert_gt(best, 0.15 * first, "%s: %.3g, the 150 m reflector %.3g: too faint to see",
                     ifc[f].name, best, first);
    }
    free(g);
}

/* The pictures: seislive-sub's and the job's own, three each. */
static void pictures(void)
{
    const char *files[] = {"demo-out/image/image_final_x.png", "demo-out/image/image_final_y.png",
                           "demo-out/image/image_final_z.png", "demo-out/rtm/image_x.png",
                           "demo-out/rtm/image_y.png", "demo-out/rtm/image_z.png"};
    for (int i = 0; i < 6; i++) {
        FILE *f = fopen(files[i], "rb");
        cr_assert_not_null(f, "%s missing", files[i]);
        unsigned char sig[8];
        cr_assert_eq(fread(sig, 1, 8, f), 8u);
        cr_assert_eq(memcmp(sig, "\x89PNG\r\n\x1a\n", 8), 0, "%s: not a PNG", files[i]);
        fclose(f);
    }
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
    interfaces(img);
    free(img);
    pictures();
}
