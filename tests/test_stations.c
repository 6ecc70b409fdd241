/* Station files: cartesian and geographic (QuakeMigrate header) files, the local
 * projection against an independent great-circle distance, corrections, and bad files
 * that must fail with the file and line. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/stations.h"
#include "stream/error.h"
#include "tests/support.h"

Test(stations, cartesian_with_comments_and_commas)
{
    char *dir = test_tmpdir();
    char *p = test_write_file(dir, "st.txt", "# name x y z\nA01 100 200 -5.5\n\nZK.B02, -50.25, 0, 12 # buried\n");
    struct station_set s;
    cr_assert_eq(stations_load(p, 0, &s), 0, "%s", err_msg());
    cr_assert_eq(s.n, 2);
    cr_expect_str_eq(s.st[0].name, "A01");
    cr_expect_str_eq(s.st[1].net, "ZK");
    cr_expect_str_eq(s.st[1].name, "B02");
    cr_expect(s.st[0].x == 100 && s.st[0].y == 200 && s.st[0].z == -5.5);
    cr_expect(s.st[1].x == -50.25 && s.st[1].z == 12);
    cr_expect_eq(stations_find(&s, "XX", "A01"), 0);
    cr_expect_eq(stations_find(&s, "ZK", "B02"), 1);
    cr_expect_eq(stations_find(&s, "XX", "B02"), -1, "the network must match when the file gives one");
    char *c = test_write_file(dir, "corr.txt", "A01 P 0.012\nZK.B02 s -0.004\n");
    cr_assert_eq(stations_load_corrections(&s, c), 0, "%s", err_msg());
    cr_expect_float_eq(s.st[0].corr[0], 0.012, 1e-15);
    cr_expect_float_eq(s.st[1].corr[1], -0.004, 1e-15);
    free(c);
    c = test_write_file(dir, "corr2.txt", "A01 P 0.01\nC03 P 0.02\n");
    cr_expect_eq(stations_load_corrections(&s, c), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "corr2.txt:2: station 'C03'"), "%s", err_msg());
    free(c);
    c = test_write_file(dir, "corr3.txt", "A01 Q 0.01\n");
    cr_expect_eq(stations_load_corrections(&s, c), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "corr3.txt:1: phase 'Q'"), "%s", err_msg());
    free(c);
    stations_free(&s);
    free(p);
    test_rmtree(dir);
    free(dir);
}

static double haversine(double la1, double lo1, double la2, double lo2)
{
    double d = M_PI / 180, a = pow(sin((la2 - la1) * d / 2), 2) + cos(la1 * d) * cos(la2 * d) * pow(sin((lo2 - lo1) * d / 2), 2);
    return 2 * 6371008.8 * asin(sqrt(a));
}

Test(stations, geographic_header_projection)
{
    char *dir = test_tmpdir();
    /* the QuakeMigrate layout: elevation in km */
    char *p = test_write_file(dir, "qm.csv", "Latitude,Longitude,Elevation,Name\n64.32799,-17.22406,1.2951,SKR01\n"
                                             "64.33272,-17.21822,1.2490,SKR07\n64.31833,-17.22341,1.2040,SKG09\n");
    struct station_set s;
    cr_assert_eq(stations_load(p, 0, &s), 0, "%s", err_msg());
    cr_assert_eq(s.n, 3);
    cr_expect(s.geographic);
    cr_expect_float_eq(s.st[0].elev, 1295.1, 1e-9);
    cr_expect_float_eq(s.st[0].z, -1295.1, 1e-9);
    cr_expect_float_eq(s.lat0, (64.32799 + 64.33272 + 64.31833) / 3, 1e-12);
    for (int i = 0; i < 3; i++)
        for (int k = i + 1; k < 3; k++) {
            double dp = hypot(s.st[i].x - s.st[k].x, s.st[i].y - s.st[k].y);
            double dh = haversine(s.st[i].lat, s.st[i].lon, s.st[k].lat, s.st[k].lon);
            /* sphere vs ellipsoid radii differ by < 0.5%; the projection error is ~1e-5 */
            cr_expect_lt(fabs(dp - dh) / dh, 0.005, "%d-%d: projected %.2f m, great circle %.2f m", i, k, dp, dh);
        }
    for (int i = 0; i < 3; i++) {
        double la, lo, el;
        stations_to_geographic(&s, s.st[i].x, s.st[i].y, s.st[i].z, &la, &lo, &el);
        cr_expect_float_eq(la, s.st[i].lat, 1e-10);
        cr_expect_float_eq(lo, s.st[i].lon, 1e-10);
        cr_expect_float_eq(el, s.st[i].elev, 1e-9);
    }
    stations_free(&s);
    free(p);
    /* headerless geographic: elevation in m */
    p = test_write_file(dir, "geo.txt", "S1 45.0 7.0 300\nS2 45.01 7.0 250\n");
    cr_assert_eq(stations_load(p, 1, &s), 0, "%s", err_msg());
    cr_expect_float_eq(s.st[0].z, -300.0, 1e-9);
    /* 0.01 degree of latitude at 45 N on WGS84: 1111.4 m (meridian arc) */
    cr_expect_float_eq(s.st[1].y - s.st[0].y, 1111.4, 0.5);
    stations_free(&s);
    free(p);
    test_rmtree(dir);
    free(dir);
}

Test(stations, bad_files_name_file_and_line)
{
    char *dir = test_tmpdir();
    struct {
        const char *name, *text, *expect;
        int geo;
    } cases[] = {
        {"count.txt", "A 1 2 3\nB 1 2\n", "count.txt:2: expected 4 fields", 0},
        {"num.txt", "A 1 2 3\nB 1 x 3\n", "num.txt:2: field 3: 'x' is not a number", 0},
        {"dup.txt", "A 1 2 3\nA 4 5 6\n", "dup.txt:2: station 'A' listed twice", 0},
        {"empty.txt", "# nothing\n\n", "empty.txt: no stations", 0},
        {"lat.txt", "A 95 7 100\n", "lat.txt:1: latitude 95", 1},
        {"hdr.txt", "name,latitude,x,z\nA,1,2,3\n", "hdr.txt:1: header must name either", 0},
        {"long.txt", "ABCDEFGHIJKLMNOPQRS 1 2 3\n", "long.txt:1: bad station name", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *p = test_write_file(dir, cases[i].name, cases[i].text);
        struct station_set s;
        cr_expect_eq(stations_load(p, cases[i].geo, &s), -EINVAL, "%s", cases[i].name);
        cr_expect_not_null(strstr(err_msg(), cases[i].expect), "%s: '%s'", cases[i].name, err_msg());
        cr_expect_null(s.st);
        free(p);
    }
    struct station_set s;
    cr_expect_lt(stations_load("/nonexistent/stations.txt", 0, &s), 0);
    cr_expect_not_null(strstr(err_msg(), "/nonexistent/stations.txt"), "%s", err_msg());
    test_rmtree(dir);
    free(dir);
}

/* Found with the fuzz harness's invariant (tests/fuzz/fuzz_stations.c): an elevation in
 * km that is finite as read but overflows once converted to metres gave a station at
 * z = -inf. */
Test(stations, elevation_overflow_is_an_error_naming_the_line)
{
    char *dir = test_tmpdir();
    char *p = test_write_file(dir, "km.csv",
                              "Latitude,Longitude,Elevation,Name\n64.1,-17.2,1.2,SK01\n"
                              "64.2,-17.1,1e306,SK02\n");
    struct station_set s;
    cr_expect_eq(stations_load(p, 0, &s), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "km.csv:3: "), "%s", err_msg());
    cr_expect_not_null(strstr(err_msg(), "elevation"), "%s", err_msg());
    cr_expect_null(s.st);
    free(p);
    test_rmtree(dir);
    free(dir);
}

/* A line longer than the read buffer was cut in two and its tail parsed as a line of
 * its own: the end of a long comment became a station. */
Test(stations, overlong_line_is_an_error_not_two_lines)
{
    char *dir = test_tmpdir();
    char text[2100];
    size_t n = 0;
    text[n++] = '#';
    while (n < 1023)
        text[n++] = '-';
    n += (size_t)sprintf(text + n, "A 1 2 3\nB 4 5 6\n");
    char *p = test_write_file(dir, "longline.txt", text);
    struct station_set s;
    cr_expect_eq(stations_load(p, 0, &s), -EINVAL, "loaded %d stations", s.n);
    cr_expect_not_null(strstr(err_msg(), "longline.txt:1: line longer than"), "%s", err_msg());
    free(p);
    /* The same in a corrections file. */
    p = test_write_file(dir, "st.txt", "A 1 2 3\n");
    cr_assert_eq(stations_load(p, 0, &s), 0, "%s", err_msg());
    char corr[700];
    n = 0;
    corr[n++] = '#';
    while (n < 511)
        corr[n++] = '-';
    sprintf(corr + n, "A P 0.5\n");
    char *c = test_write_file(dir, "corr.txt", corr);
    cr_expect_eq(stations_load_corrections(&s, c), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "corr.txt:1: line longer than"), "%s", err_msg());
    cr_expect_eq(s.st[0].corr[0], 0.0, "the tail of a comment set a correction");
    stations_free(&s);
    free(c);
    free(p);
    test_rmtree(dir);
    free(dir);
}

/* The unit of the elevation for every way a station file can give it (docs/locate.md,
 * "Inputs"): a header's "Elevation" / "elevation_km" is km (QuakeMigrate), "elevation_m",
 * "elev_m" and "elev" are metres, a headerless geographic file has metres; a cartesian
 * file has Z (or a "depth" column) in metres, positive down.  The frame's z is always
 * -elevation in metres. */
Test(stations, elevation_unit_per_format)
{
    char *dir = test_tmpdir();
    static const struct {
        const char *text;
        int geo;
        double elev_m;
    } cases[] = {
        {"Latitude,Longitude,Elevation,Name\n64.3,-17.2,1.25,A\n", 0, 1250.0},
        {"name,lat,lon,elevation_km\nA,64.3,-17.2,1.25\n", 0, 1250.0},
        {"name,lat,lon,elevation_m\nA,64.3,-17.2,1250\n", 0, 1250.0},
        {"name lat lon elev_m\nA 64.3 -17.2 1250\n", 0, 1250.0},
        {"name,latitude,longitude,elev\nA,64.3,-17.2,1250\n", 0, 1250.0},
        {"A 64.3 -17.2 1250\n", 1, 1250.0},
        {"A 100 200 -1250\n", 0, 1250.0},             /* cartesian: Z is depth, m */
        {"name,x,y,depth\nA,100,200,-1250\n", 0, 1250.0},
        {"name,x,y,z\nA,100,200,300\n", 0, -300.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *p = test_write_file(dir, "st.txt", cases[i].text);
        struct station_set s;
        cr_assert_eq(stations_load(p, cases[i].geo, &s), 0, "case %zu: %s", i, err_msg());
        cr_expect_float_eq(s.st[0].z, -cases[i].elev_m, 1e-9, "case %zu: z %g", i, s.st[0].z);
        if (s.geographic)
            cr_expect_float_eq(s.st[0].elev, cases[i].elev_m, 1e-9, "case %zu: elev %g", i, s.st[0].elev);
        double la, lo, el;
        stations_to_geographic(&s, s.st[0].x, s.st[0].y, s.st[0].z, &la, &lo, &el);
        cr_expect_float_eq(el, cases[i].elev_m, 1e-9, "case %zu: event elevation %g", i, el);
        stations_free(&s);
        free(p);
    }
    test_rmtree(dir);
    free(dir);
}
