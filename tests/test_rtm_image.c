/* rtm images of modeled shots land where the reflectors are: a horizontal reflector
 * at its depth within one cell over the illuminated span, a dipping one at its dip.
 *
 * Position is read from the envelope of each image column (|analytic signal| in z):
 * injecting the traces at a line of receivers back-propagates them with a constant
 * phase rotation (a line of point sources in 3D is half a time-integration away from
 * a plane), which moves the peak of the raw image by a fraction of a wavelength but
 * leaves the envelope's peak on the reflector. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/rtm.h"
#include "stream/error.h"
#include "tests/test_rtm_common.h"

#define NX 60
#define NY 6
#define NZ 40

static float *migrate(struct rtm_case *c, double sx, struct shot *sh, int n[3])
{
    rtm_case_shot(c, 1, sx, (NY / 2) * 10.0, 20.0, 3, NX - 4, 1, 20.0, sh);
    struct sl_config cfg;
    rtm_case_config(c, &cfg);
    struct rtm_engine *e = rtm_case_engine(c, &cfg);
    int off[3];
    cr_assert_eq(rtm_engine_patch(e, RTM_SHOT(sh), off, n), 0, "%s", err_msg());
    cr_assert_eq(n[0], NX);
    cr_assert_eq(n[2], NZ);
    float *img = malloc((size_t)n[0] * n[1] * n[2] * sizeof(float));
    struct rtm_shot_stats st;
    cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(sh), img, NULL, &st), 0, "%s", err_msg());
    cr_assert_eq(st.strategy, STRAT_FULL);
    rtm_engine_destroy(e);
    config_free(&cfg);
    return img;
}

Test(rtm_image, horizontal_reflector_at_its_depth, .timeout = 120)
{
    struct rtm_case c;
    rtm_case_init(&c, NX, NY, NZ, 10.0, 8, 290, 2000.0);
    c.pml = 8;
    c.f_peak = 20.0;
    const int zr = 25; /* first cell of the faster layer: the interface is at 24.5 */
    for (int z = zr; z < NZ; z++)
        for (size_t i = 0; i < (size_t)NX * NY; i++)
            c.v_true[(size_t)z * NX * NY + i] = 2600.0f;
    struct shot sh;
    int n[3];
    float *img = migrate(&c, 30 * 10.0, &sh, n);
    /* The illuminated span: reflection points lie halfway between the source and the
     * receivers; keep clear of the spread's ends.  Depth window: below the source's
     * near-field footprint, above the bottom layer (see the dip test). */
    int checked = 0;
    for (int x = 18; x <= 42; x++) {
        if (x == 30)
            continue; /* the column through the source: u's near field dominates it at every depth */
        double pk, z = envelope_peak(img, n, x, n[1] / 2, 12, NZ - 10, &pk);
        cr_assert_gt(pk, 0.0);
        cr_assert_leq(fabs(z - (zr - 0.5)), 1.0, "column %d: image peaks at z = %.2f, reflector at %.1f", x, z,
                      zr - 0.5);
        checked++;
    }
    cr_assert_eq(checked, 24);
    free(img);
    rtm_case_shot_free(&sh);
    rtm_case_free(&c);
}

Test(rtm_image, dipping_reflector_at_its_dip, .timeout = 120)
{
    struct rtm_case c;
    rtm_case_init(&c, NX, NY, NZ, 10.0, 8, 290, 2000.0);
    c.pml = 8;
    c.f_peak = 20.0;
    const double dip = 15.0 * M_PI / 180.0, z0 = 22.0; /* interface depth (cells) at x = 30 */
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++)
                if (z >= z0 + (x - 30) * tan(dip))
                    c.v_true[((size_t)z * NY + y) * NX + x] = 2600.0f;
    struct shot sh;
    int n[3];
    float *img = migrate(&c, 30 * 10.0, &sh, n);
    /* Least-squares line through the envelope peaks of the well-lit columns: a dipping
     * reflector is lit up-dip of the source (x 10..36 here); the depth window stops
     * above the bottom layer, whose imperfect absorption differs between the two
     * models and so survives the direct-wave subtraction. */
    double sx = 0, sz = 0, sxx = 0, sxz = 0, m = 0, top = 0;
    double pk[NX], zp[NX];
    for (int x = 0; x < NX; x++) {
        zp[x] = envelope_peak(img, n, x, n[1] / 2, 12, NZ - 10, &pk[x]);
        top = fmax(top, pk[x]);
    }
    for (int x = 10; x <= 36; x++) {
        if (pk[x] < 0.3 * top)
            continue;
        sx += x;
        sz += zp[x];
        sxx += (double)x * x;
        sxz += x * zp[x];
        m++;
    }
    cr_assert_geq(m, 18, "only %.0f columns lit", m);
    double slope = (m * sxz - sx * sz) / (m * sxx - sx * sx);
    double got = atan(slope) * 180.0 / M_PI;
    cr_log_info("dip: %.2f degrees over %.0f columns (true 15)", got, m);
    cr_assert_leq(fabs(got - 15.0), 3.0, "imaged dip %.2f degrees, true 15", got);
    free(img);
    rtm_case_shot_free(&sh);
    rtm_case_free(&c);
}
