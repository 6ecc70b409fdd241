/* Travel times: the eikonal solver against analytic first arrivals (homogeneous and a
 * two-layer model with refraction and head waves); NonLinLoc grids written and read
 * back; tables from NonLinLoc grids against the analytic times. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/nonlinloc.h"
#include "kernels/traveltime.h"
#include "stream/error.h"
#include "stream/locate_tables.h"
#include "tests/support.h"

static struct tt_station one_station(double x, double y, double z)
{
    struct tt_station s = {.x = x, .y = y, .z = z};
    strcpy(s.name, "A");
    return s;
}

static const struct tt_grid grid = {{11, 11, 11}, {100.0, 100.0, 100.0}, {-300.0, -200.0, 0.0}};

static void point(size_t j, double p[3])
{
    p[0] = grid.o[0] + (double)(j % 11) * grid.d[0];
    p[1] = grid.o[1] + (double)((j / 11) % 11) * grid.d[1];
    p[2] = grid.o[2] + (double)(j / 121) * grid.d[2];
}

/* Two layers: v1 above depth H, v2 below; source at the surface (z = 0), receiver at
 * horizontal distance r and depth z.  First arrival by Fermat: direct or, below H, the
 * transmitted ray minimized over its crossing point; above H also the head wave. */
static double two_layer(double v1, double v2, double H, double r, double z)
{
    if (z <= H) {
        double t = hypot(r, z) / v1;
        if (v2 > v1) {
            double ic = asin(v1 / v2), xc = (H + (H - z)) * tan(ic);
            if (r >= xc)
                t = fmin(t, r / v2 + (2.0 * H - z) * cos(ic) / v1);
        }
        return t;
    }
    double a = 0, b = r;
    for (int i = 0; i < 200; i++) { /* the time is convex in the crossing point */
        double m1 = a + (b - a) / 3, m2 = b - (b - a) / 3;
        double f1 = hypot(m1, H) / v1 + hypot(r - m1, z - H) / v2;
        double f2 = hypot(m2, H) / v1 + hypot(r - m2, z - H) / v2;
        if (f1 < f2)
            b = m2;
        else
            a = m1;
    }
    double x = 0.5 * (a + b);
    return hypot(x, H) / v1 + hypot(r - x, z - H) / v2;
}

Test(traveltime, eikonal_homogeneous_matches_straight_rays)
{
    struct tt_station st = one_station(40.0, 10.0, -30.0);
    double top = 0, vp = 3000, vs = 1700;
    struct tt_layers m = {1, &top, &vp, &vs};
    struct tt_table e, h;
    cr_assert_eq(tt_layered(&grid, &st, 1, TT_PHASES_PS, &m, &e), 0, "%s", err_msg());
    cr_assert_eq(tt_homogeneous(&grid, &st, 1, TT_PHASES_PS, vp, vs, &h), 0);
    double worst = 0;
    for (size_t i = 0; i < 2 * h.nj; i++) {
        double p[3];
        point(i % h.nj, p);
        double v = i < h.nj ? vp : vs, exact = sqrt(pow(p[0] - 40, 2) + pow(p[1] - 10, 2) + pow(p[2] + 30, 2)) / v;
        cr_assert_float_eq(h.t[i], exact, 1e-6 * exact + 1e-9);
        worst = fmax(worst, fabs(e.t[i] - exact) / exact);
    }
    cr_log_info("eikonal homogeneous: worst relative error %.4f", worst);
    /* exact in the source layer; the bilinear lookup in the (r, z) grid (6.25 m) remains */
    cr_expect_lt(worst, 0.005, "eikonal vs analytic: %.4f relative", worst);
    tt_free(&e);
    tt_free(&h);
}

Test(traveltime, eikonal_two_layers_matches_fermat_times)
{
    struct tt_station st = one_station(0.0, 0.0, 0.0);
    double top[2] = {-1000.0, 450.0}, vp[2] = {2000.0, 4000.0}, vs[2] = {1200.0, 2300.0};
    struct tt_layers m = {2, top, vp, vs};
    struct tt_table e;
    cr_assert_eq(tt_layered(&grid, &st, 1, TT_PHASES_PS, &m, &e), 0, "%s", err_msg());
    double worst = 0, worst_abs = 0;
    int head = 0;
    for (size_t i = 0; i < 2 * e.nj; i++) {
        double p[3];
        point(i % e.nj, p);
        int s = i >= e.nj;
        double r = hypot(p[0], p[1]);
        double exact = two_layer(s ? vs[0] : vp[0], s ? vs[1] : vp[1], top[1], r, p[2]);
        head += p[2] < top[1] && exact < hypot(r, p[2]) / (s ? vs[0] : vp[0]) - 1e-9;
        if (exact > 0) {
            worst = fmax(worst, fabs(e.t[i] - exact) / exact);
            worst_abs = fmax(worst_abs, fabs(e.t[i] - exact));
        }
    }
    cr_log_info("eikonal two layers: worst relative error %.4f (%.2f ms), %d head-wave points", worst,
                worst_abs * 1e3, head);
    cr_expect_gt(head, 0, "the grid should reach the head-wave region");
    /* first-order upwind scheme on a 6.25 m grid below the interface: within 1% */
    cr_expect_lt(worst, 0.01, "eikonal vs Fermat: %.4f relative", worst);
    tt_free(&e);
}

Test(traveltime, layered_model_file_errors)
{
    char *dir = test_tmpdir();
    struct tt_layers m;
    char *p = test_write_file(dir, "bad.txt", "0 3000 1700\n500 2000\n");
    cr_expect_eq(locate_layers_load(p, &m), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "bad.txt:2:"), "%s", err_msg());
    free(p);
    p = test_write_file(dir, "order.txt", "# top vp vs\n0 3000 1700\n500 4000 2300\n400 5000 2900\n");
    cr_expect_eq(locate_layers_load(p, &m), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "order.txt:4:"), "%s", err_msg());
    free(p);
    /* an infinite velocity ("inf", or a number beyond the double range), and a comment
     * longer than the line buffer whose tail would have been read as a layer (review
     * of the 2026-11-25 fuzz campaign) */
    p = test_write_file(dir, "inf.txt", "0 3000 1700\n500 1e999 2300\n");
    cr_expect_eq(locate_layers_load(p, &m), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "inf.txt:2: expected 'top_depth_m vp_m/s vs_m/s' with finite positive"),
                       "%s", err_msg());
    free(p);
    p = test_write_file(dir, "inf2.txt", "0 3000 inf\n");
    cr_expect_eq(locate_layers_load(p, &m), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "inf2.txt:1:"), "%s", err_msg());
    free(p);
    char longc[800];
    int k = snprintf(longc, sizeof longc, "0 3000 1700\n#");
    memset(longc + k, 'x', 600);
    snprintf(longc + k + 600, sizeof longc - (size_t)k - 600, " 900 5000 2900\n");
    p = test_write_file(dir, "long.txt", longc);
    cr_expect_eq(locate_layers_load(p, &m), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "long.txt:2: line longer than 510 characters"), "%s", err_msg());
    free(p);
    p = test_write_file(dir, "good.txt", "0 3000 1700 # top\n500 4000 2300\n");
    cr_assert_eq(locate_layers_load(p, &m), 0, "%s", err_msg());
    cr_expect_eq(m.n, 2);
    cr_expect_float_eq(m.vs[1], 2300.0, 1e-12);
    locate_layers_free(&m);
    free(p);
    test_rmtree(dir);
    free(dir);
}

Test(traveltime, nonlinloc_round_trip_and_tables)
{
    char *dir = test_tmpdir();
    /* a 3D P time grid about station A (km), analytic homogeneous times */
    struct nll_grid g = {.n = {61, 61, 41}, .o = {-0.5, -0.4, -0.1}, .d = {0.02, 0.02, 0.03}, .type = "TIME",
                         .label = "A", .src = {0.04, 0.01, -0.03}};
    size_t n = (size_t)g.n[0] * g.n[1] * g.n[2];
    g.v = malloc(n * sizeof(float));
    for (int i = 0; i < g.n[0]; i++)
        for (int j = 0; j < g.n[1]; j++)
            for (int k = 0; k < g.n[2]; k++) {
                double x = g.o[0] + i * g.d[0] - g.src[0], y = g.o[1] + j * g.d[1] - g.src[1],
                       z = g.o[2] + k * g.d[2] - g.src[2];
                g.v[((size_t)i * g.n[1] + j) * g.n[2] + k] = (float)(sqrt(x * x + y * y + z * z) / 3.0);
            }
    strcpy(g.transform, "TRANSFORM  NONE");
    char root[512];
    snprintf(root, sizeof root, "%s/model.A.P.time", dir);
    cr_assert_eq(nll_write(root, &g), 0, "%s", err_msg());
    struct nll_grid r;
    cr_assert_eq(nll_read(root, &r), 0, "%s", err_msg());
    for (int a = 0; a < 3; a++) {
        cr_expect_eq(r.n[a], g.n[a]);
        cr_expect(r.o[a] == g.o[a] && r.d[a] == g.d[a] && r.src[a] == g.src[a], "axis %d header differs", a);
    }
    cr_expect_str_eq(r.type, "TIME");
    cr_expect_str_eq(r.label, "A");
    cr_expect_str_eq(r.transform, "TRANSFORM  NONE");
    cr_expect_eq(memcmp(r.v, g.v, n * sizeof(float)), 0, "buffer read back differs");
    nll_free(&r);

    /* a travel-time table from it equals the analytic times within trilinear error */
    struct tt_station st = one_station(40.0, 10.0, -30.0);
    struct tt_grid tg = {{9, 9, 5}, {100.0, 90.0, 200.0}, {-400.0, -350.0, 0.0}};
    char rp[512];
    snprintf(rp, sizeof rp, "%s/model", dir);
    struct tt_table t, h;
    cr_assert_eq(locate_tables_nonlinloc(&tg, &st, 1, TT_PHASES_P, rp, NULL, NLL_NAMING_AUTO, &t), 0, "%s", err_msg());
    cr_assert_eq(tt_homogeneous(&tg, &st, 1, TT_PHASES_P, 3000.0, 1700.0, &h), 0);
    /* trilinear interpolation of r / v: error at most 3 h^2 / (8 r v) (curvature 1 / (r v)
     * along each axis), h the largest NonLinLoc spacing; points within 2 h are skipped */
    int checked = 0;
    for (size_t j = 0; j < t.nj; j++) {
        double q[3] = {tg.o[0] + (double)(j % 9) * tg.d[0], tg.o[1] + (double)((j / 9) % 9) * tg.d[1],
                       tg.o[2] + (double)(j / 81) * tg.d[2]};
        double r = sqrt(pow(q[0] - 40, 2) + pow(q[1] - 10, 2) + pow(q[2] + 30, 2)) / 1000.0, hk = 0.03;
        if (r < 2 * hk)
            continue;
        double bound = 3.0 * hk * hk / (8.0 * r * 3.0) + 1e-6;
        cr_expect_leq(fabs(t.t[j] - h.t[j]), bound, "point %zu at %.3f km: %.2e s off, bound %.2e", j, r,
                      fabs(t.t[j] - h.t[j]), bound);
        checked++;
    }
    cr_expect_gt(checked, 300);
    tt_free(&t);
    tt_free(&h);
    /* S grids are not there: the error names the file */
    cr_expect_lt(locate_tables_nonlinloc(&tg, &st, 1, TT_PHASES_S, rp, rp, NLL_NAMING_AUTO, &t), 0);
    cr_expect_not_null(strstr(err_msg(), "model.A.S.time.hdr"), "%s", err_msg());
    /* a trial grid reaching outside the NonLinLoc grid */
    tg.o[2] = -2000.0;
    cr_expect_eq(locate_tables_nonlinloc(&tg, &st, 1, TT_PHASES_P, rp, NULL, NLL_NAMING_AUTO, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "outside"), "%s", err_msg());
    /* a truncated buffer */
    snprintf(rp, sizeof rp, "%s/model.A.P.time.buf", dir);
    FILE *f = fopen(rp, "r+");
    cr_assert_not_null(f);
    cr_assert_eq(ftruncate(fileno(f), 1000), 0);
    fclose(f);
    cr_expect_eq(nll_read(root, &r), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "1000 bytes"), "%s", err_msg());
    nll_free(&g);
    test_rmtree(dir);
    free(dir);
}
