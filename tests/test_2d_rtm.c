/* 2D RTM end to end: seislive-gen shots models a 2D survey (n = [nx, 1, nz], one line of
 * shots and receivers at y = 0, the direct wave subtracted) over a two-layer model, then
 * `seislive run` migrates the SEG-Y file with the rtm job (files input, CPU) in the
 * generator's smoothed model, and the final image is read back:
 *   - a flat reflector (2000 -> 2600 m/s at 500 m) is imaged at its depth, within 2
 *     cells, in the average over the middle of the line and in (nearly) every column of
 *     it, well above the background;
 *   - a dipping reflector (300 m at x = 0, dipping 12 degrees toward +x) is imaged along
 *     its line: a straight line fitted through the per-column reflector depths below the
 *     direct-wave zone has the interface's dip (within 2 degrees) and its depth in the
 *     middle of the line (within 2 cells).
 * Where a reflector is in the image: the engine's image of an interface (2D and 3D alike:
 * the demo's 3D image of its 150 m reflector has its positive lobe at 135 m and its
 * negative one at 180 m) is a doublet, a positive lobe above and a negative one below
 * with the zero crossing on the interface: the cross-correlation of the source field with
 * a receiver field back-propagated from monopole sources carries a phase near -90
 * degrees (time-reversal with monopoles only integrates the reconstructed field once).
 * A positive reflection coefficient gives the positive lobe on top.  The depth measured
 * is therefore the zero crossing between the strongest positive lobe and the negative
 * one within half a wavelength below it (at 12 Hz in 2000 m/s, 8 cells); the largest
 * value alone would sit a quarter wavelength (2 to 3 cells) above the interface. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/image_files.h"
#include "stream/error.h"
#include "tests/support.h"

enum { NX = 201, NZ = 101 };
static const double D = 10.0;

static void run_or_fail(const char *const *argv, int timeout_s, const char *what)
{
    struct run_result r;
    cr_assert_eq(test_run(argv, timeout_s, &r), 0, "%s: cannot run", what);
    cr_assert_eq(r.status, 0, "%s: exit %d\n%s\n%s", what, r.status, r.out, r.err);
    test_run_free(&r);
}

/* Model the survey over the generator's model given by MODEL_ARGS (NULL-terminated
 * options) into DIR/survey, migrate it into DIR/out, and return the image (NX x 1 x NZ). */
static float *survey_and_migrate(const char *dir, const char *const *model_args, double t_max)
{
    char survey[4200], tmax[32];
    snprintf(survey, sizeof survey, "%s/survey", dir);
    snprintf(tmax, sizeof tmax, "%g", t_max);
    const char *argv[64] = {test_prog("seislive-gen"), "shots", "-o", survey, "--n", "201,1,101", "--d", "10",
                            "--v0", "2000", "--salt", "none", "--shots", "5", "--receivers", "101",
                            "--t-max", tmax, "--dt", "0.002", "--f-peak", "12", "--direct", "subtract",
                            "--device", "cpu"};
    int n = 0;
    while (argv[n])
        n++;
    for (int i = 0; model_args[i]; i++)
        argv[n++] = model_args[i];
    argv[n] = NULL;
    run_or_fail(argv, 120, "seislive-gen shots (2D)");

    char text[16384];
    snprintf(text, sizeof text,
             "[job]\nkind = \"rtm\"\nname = \"rtm2d\"\n\n"
             "[model]\ntype = \"raw\"\nfile = \"%s/model_smooth.f32\"\nn = [%d, 1, %d]\n"
             "d = [10.0, 10.0, 10.0]\no = [0.0, 0.0, 0.0]\n\n"
             "[propagator]\norder = 8\nt_max = %g\nf_peak = 12.0\npml_width = 20\n\n"
             "[rtm]\nstrategy = \"auto\"\nimaging = \"source\"\nlaplacian = true\naperture = 2000.0\n\n"
             "[input]\nkind = \"files\"\npaths = [\"%s/shots.segy\"]\n\n"
             "[output]\ndir = \"%s/out\"\n\n[runtime]\ndevice = \"cpu\"\n",
             survey, NX, NZ, t_max, survey, dir);
    char *cfg = test_write_file(dir, "rtm2d.toml", text);
    run_or_fail((const char *[]){test_prog("seislive"), "run", "-c", cfg, NULL}, 150, "seislive run (2D rtm)");
    free(cfg);

    char out[4200];
    snprintf(out, sizeof out, "%s/out", dir);
    struct image_meta meta;
    float *img = NULL;
    cr_assert_eq(image_files_read(out, "image", &meta, &img), 0, "%s", err_msg());
    cr_assert(meta.final, "the final image");
    cr_assert_eq(meta.units, 5, "5 shots stacked, not %lld", (long long)meta.units);
    cr_assert_eq(meta.n[0], NX);
    cr_assert_eq(meta.n[1], 1, "a 2D image");
    cr_assert_eq(meta.n[2], NZ);
    for (size_t i = 0; i < (size_t)NX * NZ; i++)
        cr_assert(isfinite(img[i]), "image value %zu is not finite", i);
    return img;
}

/* Depth (m) of the interface a doublet marks in the depth trace P (NZ samples): the
 * pair (k, j), k >= K0, j in (k, k + 8], with P[k] > 0 > P[j] and the largest P[k] -
 * P[j]; the zero crossing between them, linear between samples.  *STRENGTH gets P[k] -
 * P[j].  -1 when there is no such pair. */
static double doublet_depth(const double *p, int k0, double *strength)
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
    *strength = best;
    if (bk < 0)
        return -1;
    for (int q = bk; q < bj; q++)
        if (p[q] >= 0 && p[q + 1] < 0)
            return (q + p[q] / (p[q] - p[q + 1])) * D;
    return -1;
}

/* Below the direct-wave zone: the shallowest depth the analysis looks at (the sources
 * and receivers are at 10 m; what the subtraction leaves of the direct wave and the
 * source-normalization's near-source noise stay above this). */
static const double Z_MIN = 150.0;

Test(rtm_2d_cli, flat_reflector_at_its_depth, .timeout = 300)
{
    char *dir = test_tmpdir();
    const double z_ref = 500.0;
    float *img = survey_and_migrate(dir, (const char *[]){"--layer", "500:2600", "--dip", "none", NULL}, 1.0);
    /* the depth profile averaged over the well-illuminated middle of the line */
    double p[NZ];
    for (int k = 0; k < NZ; k++) {
        double s = 0;
        int c = 0;
        for (int i = 40; i <= 160; i++, c++)
            s += img[(size_t)k * NX + i];
        p[k] = s / c;
    }
    double strength;
    double z = doublet_depth(p, (int)(Z_MIN / D), &strength);
    /* the background: the profile away from the reflector's lobes (+- 100 m) */
    double bg = 0;
    int nb = 0;
    for (int q = (int)(Z_MIN / D); q < NZ; q++)
        if (fabs(q * D - z_ref) > 100) {
            bg += p[q] * p[q];
            nb++;
        }
    bg = sqrt(bg / nb);
    fprintf(stderr, "rtm_2d_cli: flat reflector at %.0f m imaged at %.1f m (doublet %.3g, background rms %.3g)\n",
            z_ref, z, strength, bg);
    cr_assert_leq(fabs(z - z_ref), 2 * D, "reflector at %.0f m imaged at %.1f m", z_ref, z);
    cr_assert_gt(strength, 10 * bg, "doublet %.3g not above the background %.3g", strength, bg);
    /* every column of the middle images it there too (not only the average) */
    int off = 0;
    for (int i = 40; i <= 160; i++) {
        double col[NZ], st;
        for (int q = 0; q < NZ; q++)
            col[q] = img[(size_t)q * NX + i];
        double zc = doublet_depth(col, (int)(Z_MIN / D), &st);
        off += !(fabs(zc - z_ref) <= 2 * D);
    }
    cr_assert_leq(off, 6, "%d of 121 columns image it more than 2 cells off %.0f m", off, z_ref);
    free(img);
    test_rmtree(dir);
    free(dir);
}

Test(rtm_2d_cli, dipping_reflector_at_its_depth_and_dip, .timeout = 300)
{
    char *dir = test_tmpdir();
    const double z0 = 300.0, dip = 12.0; /* depth at x = 0, degrees toward +x */
    float *img = survey_and_migrate(dir, (const char *[]){"--layer", "none", "--dip", "300:12:2600", NULL}, 1.2);
    /* Per column of the well-illuminated middle: the depth of the strongest doublet
     * below the direct-wave zone; a least-squares line through them. */
    enum { I0 = 40, I1 = 160 };
    double xs[I1 - I0 + 1], zs[I1 - I0 + 1];
    int m = 0;
    for (int i = I0; i <= I1; i++, m++) {
        double col[NZ], st;
        for (int q = 0; q < NZ; q++)
            col[q] = img[(size_t)q * NX + i];
        xs[m] = i * D;
        zs[m] = doublet_depth(col, (int)(Z_MIN / D), &st);
        cr_assert_geq(zs[m], 0, "column x = %.0f m: no positive-over-negative doublet below %.0f m", xs[m], Z_MIN);
    }
    double sx = 0, sz = 0, sxx = 0, sxz = 0;
    for (int j = 0; j < m; j++) {
        sx += xs[j];
        sz += zs[j];
        sxx += xs[j] * xs[j];
        sxz += xs[j] * zs[j];
    }
    double slope = (m * sxz - sx * sz) / (m * sxx - sx * sx), icpt = (sz - slope * sx) / m;
    double got_dip = atan(slope) * 180 / M_PI, xm = 0.5 * (I0 + I1) * D;
    double want_zm = z0 + xm * tan(dip * M_PI / 180), got_zm = icpt + slope * xm;
    int far = 0;
    for (int j = 0; j < m; j++)
        far += fabs(zs[j] - (icpt + slope * xs[j])) > 2 * D;
    fprintf(stderr, "rtm_2d_cli: dipping reflector: dip %.2f deg (want %.1f), depth at x = %.0f m: %.1f m (want %.1f); "
                    "%d of %d columns more than 2 cells off the line\n",
            got_dip, dip, xm, got_zm, want_zm, far, m);
    cr_assert_lt(fabs(got_dip - dip), 2.0, "dip %.2f deg, want %.1f", got_dip, dip);
    cr_assert_leq(fabs(got_zm - want_zm), 2 * D, "depth at x = %.0f m: %.1f m, want %.1f", xm, got_zm, want_zm);
    /* the maxima follow the line (a fit through scattered noise could still hit the dip) */
    cr_assert_leq(far, m / 10, "%d of %d columns more than 2 cells off the fitted line", far, m);
    free(img);
    test_rmtree(dir);
    free(dir);
}
