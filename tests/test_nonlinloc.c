/* NonLinLoc grids: headers and buffers that must be refused with the file and the place
 * (found with the fuzz harness, tests/fuzz/fuzz_nonlinloc.c); the TRANSFORM projections
 * against Snyder's worked examples and NonLinLoc's definitions; both file namings;
 * stations without grids skipped and counted; events read back in latitude/longitude;
 * the locate job end to end on Grid2Time-named grids. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/config.h"
#include "io/events.h"
#include "io/nll_transform.h"
#include "io/nonlinloc.h"
#include "io/stations.h"
#include "kernels/traveltime.h"
#include "stream/error.h"
#include "stream/locate_nll.h"
#include "stream/locate_setup.h"
#include "stream/locate_tables.h"
#include "tests/support.h"

static void write_buf(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(p, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

/* A NaN or infinite value in the buffer went into the travel-time table unnoticed. */
Test(nonlinloc, non_finite_value_named_with_its_byte)
{
    char *dir = test_tmpdir();
    char root[4096];
    snprintf(root, sizeof root, "%s/g", dir);
    free(test_write_file(dir, "g.hdr", "1 1 3 0 0 0 1 1 1 VELOCITY FLOAT\n"));
    float v[3] = {5.0f, NAN, 6.0f};
    write_buf(dir, "g.buf", v, sizeof v);
    struct nll_grid g;
    cr_expect_eq(nll_read(root, &g), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "g.buf: byte 4: value 1 is not finite"), "%s", err_msg());
    cr_expect_null(g.v);
    /* DOUBLE values beyond the float range become infinite when converted. */
    free(test_write_file(dir, "g.hdr", "1 1 2 0 0 0 1 1 1 VELOCITY DOUBLE\n"));
    double d[2] = {5.0, 1e300};
    write_buf(dir, "g.buf", d, sizeof d);
    cr_expect_eq(nll_read(root, &g), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "g.buf: byte 8: value 1 is not finite"), "%s", err_msg());
    cr_expect_null(g.v);
    test_rmtree(dir);
    free(dir);
}

/* A header line longer than the read buffer was cut, its tail read as the next line. */
Test(nonlinloc, overlong_header_line_is_an_error)
{
    char *dir = test_tmpdir();
    char root[4096];
    snprintf(root, sizeof root, "%s/g", dir);
    char hdr[1600];
    int n = sprintf(hdr, "1 1 1 0 0 0 1 1 1 TIME FLOAT");
    while (n < 1400)
        hdr[n++] = ' ';
    sprintf(hdr + n, "\nSTA 0 0 0\n");
    free(test_write_file(dir, "g.hdr", hdr));
    float v = 1.0f;
    write_buf(dir, "g.buf", &v, sizeof v);
    struct nll_grid g;
    cr_expect_eq(nll_read(root, &g), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "g.hdr:1: line longer than"), "%s", err_msg());
    test_rmtree(dir);
    free(dir);
}

/* ---- TRANSFORM, file naming, missing grids (issue 18) ---- */


/* A 3D P or S time grid of 5 x 5 x 5 nodes 1 km apart from (-2, -2, -1) km for station
 * LABEL at SRC (km), times = distance / 5 km/s, header TRANSFORM line TR. */
static void write_time_grid(const char *root, const char *label, const double src[3], const char *tr)
{
    struct nll_grid g = {.n = {5, 5, 5}, .o = {-2, -2, -1}, .d = {1, 1, 1}, .type = "TIME",
                         .src = {src[0], src[1], src[2]}};
    snprintf(g.label, sizeof g.label, "%s", label);
    snprintf(g.transform, sizeof g.transform, "%s", tr);
    g.v = malloc(125 * sizeof(float));
    cr_assert_not_null(g.v);
    for (int i = 0; i < 125; i++) {
        double x = -2 + i / 25 - src[0], y = -2 + (i / 5) % 5 - src[1], z = -1 + i % 5 - src[2];
        g.v[i] = (float)(sqrt(x * x + y * y + z * z) / 5.0);
    }
    cr_assert_eq(nll_write(root, &g), 0, "%s", err_msg());
    nll_free(&g);
}

static struct sl_config load_conf(const char *dir, const char *stations, const char *coords, const char *pattern,
                                  const char *phases)
{
    char text[4096];
    snprintf(text, sizeof text,
             "[job]\nkind = \"locate\"\n[locate]\nstations = \"%s/%s\"\ncoords = \"%s\"\nphases = \"%s\"\n"
             "traveltime = \"nonlinloc\"\nnll_p = \"%s/time/lay\"\nnll_s = \"%s/time/lay\"\nnll_pattern = \"%s\"\n"
             "[input]\nkind = \"files\"\npaths = [\"x.mseed\"]\n",
             dir, stations, coords, phases, dir, dir, pattern);
    struct sl_config cfg;
    cr_assert_eq(config_load_string(text, "t.toml", &cfg), 0, "%s", err_msg());
    return cfg;
}

/* Snyder (USGS PP 1395, p. 269): transverse Mercator on Clarke 1866, central meridian
 * 75 W, origin on the equator, k0 = 0.9996: 40 30' N, 73 30' W is at x = 127,106.5 m,
 * y = 4,484,124.4 m.  NonLinLoc's TRANS_MERC has k0 = 1: the same divided by 0.9996.
 * Tolerance 0.25 m: Snyder rounds to 0.1 m and NonLinLoc's Clarke-1866 (1/f = 294.98)
 * differs from Snyder's e^2 = 0.00676866 by 3e-8 (a few cm at 4500 km). */
Test(nonlinloc, trans_merc_matches_snyder)
{
    struct nll_transform t;
    cr_assert_eq(nll_transform_parse("TRANSFORM  TRANS_MERC RefEllipsoid Clarke-1866  LatOrig 0.0  LongOrig -75.0  RotCW 0.0",
                                     "t", &t), 0, "%s", err_msg());
    double x, y;
    nll_latlon_to_xy(&t, 40.5, -73.5, &x, &y);
    cr_expect_leq(fabs(x * 1000 - 127106.5 / 0.9996), 0.25, "x %.3f m", x * 1000);
    cr_expect_leq(fabs(y * 1000 - 4484124.4 / 0.9996), 0.25, "y %.3f m", y * 1000);
    double lat, lon;
    nll_xy_to_latlon(&t, 127106.5 / 0.9996 / 1000, 4484124.4 / 0.9996 / 1000, &lat, &lon);
    cr_expect_leq(fabs(lat - 40.5), 3e-6, "lat %.9f", lat); /* 0.25 m */
    cr_expect_leq(fabs(lon + 73.5), 3e-6, "lon %.9f", lon);
}

/* Snyder (p. 296): Lambert conformal conic on Clarke 1866, parallels 33 and 45 N, origin
 * 23 N 96 W: 35 N, 75 W is at x = 1,894,410.9 m, y = 1,564,649.5 m. */
Test(nonlinloc, lambert_matches_snyder)
{
    struct nll_transform t;
    cr_assert_eq(nll_transform_parse("TRANSFORM  LAMBERT RefEllipsoid Clarke-1866  LatOrig 23.0  LongOrig -96.0  "
                                     "FirstStdParal 33.0  SecondStdParal 45.0  RotCW 0.0", "t", &t), 0, "%s", err_msg());
    double x, y;
    nll_latlon_to_xy(&t, 35.0, -75.0, &x, &y);
    cr_expect_leq(fabs(x * 1000 - 1894410.9), 0.25, "x %.3f m", x * 1000);
    cr_expect_leq(fabs(y * 1000 - 1564649.5), 0.25, "y %.3f m", y * 1000);
    double lat, lon;
    nll_xy_to_latlon(&t, 1894.4109, 1564.6495, &lat, &lon);
    cr_expect_leq(fabs(lat - 35.0), 3e-6, "lat %.9f", lat);
    cr_expect_leq(fabs(lon + 75.0), 3e-6, "lon %.9f", lon);
    /* round trip with a rotation, south of the origin too */
    cr_assert_eq(nll_transform_parse("TRANSFORM LAMBERT WGS-84 45.0 10.0 44.0 46.0 25.0", "t", &t), 0, "%s", err_msg());
    nll_latlon_to_xy(&t, 44.7, 10.4, &x, &y);
    nll_xy_to_latlon(&t, x, y, &lat, &lon);
    cr_expect_leq(fabs(lat - 44.7) + fabs(lon - 10.4), 1e-9, "%.12f %.12f", lat, lon);
}

/* Snyder (p. 338): azimuthal equidistant on a sphere of radius R = 3, centre 40 N,
 * 100 W: 20 S, 100 E is at x = -5.8311398, y = 5.5444634 (units of R / 3).  NonLinLoc
 * uses the sphere of radius a: on its "Sphere" (a = 6371008.7714 m) the same point is at
 * (x, y) / 3 a.  Snyder gives 8 digits: relative tolerance 1e-7. */
Test(nonlinloc, azimuthal_equidistant_matches_snyder)
{
    struct nll_transform t;
    cr_assert_eq(nll_transform_parse("TRANSFORM  AZIMUTHAL_EQUIDIST RefEllipsoid Sphere  LatOrig 40.0  LongOrig -100.0  "
                                     "RotCW 0.0", "t", &t), 0, "%s", err_msg());
    double x, y, a = 6371.0087714;
    nll_latlon_to_xy(&t, -20.0, 100.0, &x, &y);
    cr_expect_leq(fabs(x / a - -5.8311398 / 3) / (5.8311398 / 3), 1e-7, "x/a %.9f", x / a);
    cr_expect_leq(fabs(y / a - 5.5444634 / 3) / (5.5444634 / 3), 1e-7, "y/a %.9f", y / a);
    double lat, lon;
    nll_xy_to_latlon(&t, x, y, &lat, &lon);
    cr_expect_leq(fabs(lat + 20.0) + fabs(lon - 100.0), 1e-9, "%.12f %.12f", lat, lon);
    /* the centre maps to the origin, and a rotated frame round-trips */
    nll_latlon_to_xy(&t, 40.0, -100.0, &x, &y);
    cr_expect_leq(fabs(x) + fabs(y), 1e-9);
    cr_assert_eq(nll_transform_parse("TRANSFORM AZIMUTHAL_EQUIDIST WGS-84 46.5 8.0 -15.0", "t", &t), 0, "%s",
                 err_msg());
    nll_latlon_to_xy(&t, 46.43, 8.11, &x, &y);
    nll_xy_to_latlon(&t, x, y, &lat, &lon);
    cr_expect_leq(fabs(lat - 46.43) + fabs(lon - 8.11), 1e-9, "%.12f %.12f", lat, lon);
}

/* NonLinLoc's SIMPLE, evaluated here separately from its definition (GridLib
 * latlon2rect): x' = dlon 10000/90 cos(lat), y' = dlat 10000/90 km, then the frame is
 * turned RotCW degrees clockwise: x = x' cos(r) + y' sin(r), y = y' cos(r) - x' sin(r). */
static void simple_by_hand(double lat0, double lon0, double rot, double lat, double lon, double *x, double *y)
{
    double k = 10000.0 / 90.0, r = rot * M_PI / 180;
    double xp = (lon - lon0) * k * cos(lat * M_PI / 180), yp = (lat - lat0) * k;
    *x = xp * cos(r) + yp * sin(r);
    *y = yp * cos(r) - xp * sin(r);
}

Test(nonlinloc, simple_transform_by_hand)
{
    struct nll_transform t;
    cr_assert_eq(nll_transform_parse("TRANSFORM  SIMPLE LatOrig 64.0  LongOrig -17.0  RotCW 30.0", "t", &t), 0, "%s",
                 err_msg());
    double x, y, hx, hy;
    nll_latlon_to_xy(&t, 64.05, -16.9, &x, &y);
    simple_by_hand(64.0, -17.0, 30.0, 64.05, -16.9, &hx, &hy);
    cr_expect_leq(fabs(x - hx) + fabs(y - hy), 1e-9, "(%.9f %.9f) vs (%.9f %.9f)", x, y, hx, hy);
    /* a point due north, frame turned 90 degrees clockwise: on the +x axis */
    cr_assert_eq(nll_transform_parse("TRANSFORM SIMPLE 10.0 20.0 90.0", "t", &t), 0, "%s", err_msg());
    nll_latlon_to_xy(&t, 10.09, 20.0, &x, &y);
    cr_expect_leq(fabs(x - 10.0) + fabs(y), 1e-9, "(%.12f, %.12f)", x, y);
}

Test(nonlinloc, unsupported_transform_named_with_file_and_line)
{
    char *dir = test_tmpdir();
    char root[4096];
    snprintf(root, sizeof root, "%s/g", dir);
    free(test_write_file(dir, "g.hdr", "1 1 1 0 0 0 1 1 1 TIME FLOAT\nSTA 0 0 0\n"
                                       "TRANSFORM  SDC LatOrig 1 LongOrig 2 RotCW 0\n"));
    float v = 1.0f;
    write_buf(dir, "g.buf", &v, sizeof v);
    struct nll_grid g;
    cr_expect_eq(nll_read(root, &g), -ENOTSUP);
    cr_expect_not_null(strstr(err_msg(), "g.hdr:3: TRANSFORM SDC is not supported"), "%s", err_msg());
    free(test_write_file(dir, "g.hdr", "1 1 1 0 0 0 1 1 1 TIME FLOAT\nSTA 0 0 0\nTRANSFORM  SIMPLE LatOrig 95 0 0\n"));
    cr_expect_eq(nll_read(root, &g), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "g.hdr:3: TRANSFORM: LatOrig"), "%s", err_msg());
    free(test_write_file(dir, "g.hdr", "1 1 1 0 0 0 1 1 1 TIME FLOAT\nSTA 0 0 0\nTRANSFORM LAMBERT Mars 1 2 3 4 0\n"));
    cr_expect_eq(nll_read(root, &g), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "g.hdr:3: TRANSFORM: unknown RefEllipsoid 'Mars'"), "%s", err_msg());
    test_rmtree(dir);
    free(dir);
}

/* Grid2Time's ROOT.PHASE.STATION.time and the older ROOT.STATION.PHASE.time both load,
 * give the same table, and a folder holding different files under both names is refused
 * unless nll_pattern says which. */
Test(nonlinloc, both_name_patterns)
{
    char *dir = test_tmpdir();
    char path[4096], rootdir[2048];
    snprintf(rootdir, sizeof rootdir, "%s/time", dir);
    cr_assert_eq(mkdir(rootdir, 0777), 0);
    double src[3] = {0.2, -0.1, 0.0};
    struct tt_station st = {.name = "ST1", .x = 200, .y = -100, .z = 0};
    struct tt_grid tg = {{3, 3, 3}, {500, 500, 500}, {-1000, -1000, 0}};
    struct tt_table a, b;
    /* NonLinLoc's naming */
    snprintf(path, sizeof path, "%s/lay.P.ST1.time", rootdir);
    write_time_grid(path, "ST1", src, "TRANSFORM  NONE");
    snprintf(path, sizeof path, "%s/lay", rootdir);
    cr_assert_eq(locate_tables_nonlinloc(&tg, &st, 1, TT_PHASES_P, path, NULL, NLL_NAMING_AUTO, &a), 0, "%s", err_msg());
    cr_assert_eq(locate_tables_nonlinloc(&tg, &st, 1, TT_PHASES_P, path, NULL, NLL_NAMING_PHASE_STATION, &b), 0, "%s",
                 err_msg());
    cr_expect_eq(memcmp(a.t, b.t, a.nj * sizeof(float)), 0);
    tt_free(&b);
    /* asked for the other naming: not found, the error names the file it looked for */
    cr_expect_eq(locate_tables_nonlinloc(&tg, &st, 1, TT_PHASES_P, path, NULL, NLL_NAMING_STATION_PHASE, &b), -ENOENT);
    cr_expect_not_null(strstr(err_msg(), "lay.ST1.P.time.hdr does not exist"), "%s", err_msg());
    /* the same grid under the old name (a link: the same file) is not ambiguous */
    char old[4096], target[4096];
    for (int k = 0; k < 2; k++) {
        snprintf(old, sizeof old, "%s/lay.ST1.P.time.%s", rootdir, k ? "buf" : "hdr");
        snprintf(target, sizeof target, "%s/lay.P.ST1.time.%s", rootdir, k ? "buf" : "hdr");
        cr_assert_eq(symlink(target, old), 0);
    }
    cr_expect_eq(locate_tables_nonlinloc(&tg, &st, 1, TT_PHASES_P, path, NULL, NLL_NAMING_AUTO, &b), 0, "%s", err_msg());
    tt_free(&b);
    /* different files under both names: ambiguous, both named */
    for (int k = 0; k < 2; k++) {
        snprintf(old, sizeof old, "%s/lay.ST1.P.time.%s", rootdir, k ? "buf" : "hdr");
        unlink(old);
    }
    snprintf(old, sizeof old, "%s/lay.ST1.P.time", rootdir);
    double src2[3] = {0.3, -0.1, 0.0};
    write_time_grid(old, "ST1", src2, "TRANSFORM  NONE");
    cr_expect_eq(locate_tables_nonlinloc(&tg, &st, 1, TT_PHASES_P, path, NULL, NLL_NAMING_AUTO, &b), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "ambiguous"), "%s", err_msg());
    cr_expect_not_null(strstr(err_msg(), "lay.ST1.P.time.hdr"), "%s", err_msg());
    cr_expect_not_null(strstr(err_msg(), "lay.P.ST1.time.hdr"), "%s", err_msg());
    /* seislive's naming chosen: that grid (source 100 m further east: other times) */
    cr_assert_eq(locate_tables_nonlinloc(&tg, &st, 1, TT_PHASES_P, path, NULL, NLL_NAMING_STATION_PHASE, &b), 0, "%s",
                 err_msg());
    int differ = 0;
    for (size_t j = 0; j < a.nj; j++)
        differ += a.t[j] != b.t[j];
    cr_expect_gt(differ, 0, "the station-phase grid was not the one read");
    tt_free(&a);
    tt_free(&b);
    test_rmtree(dir);
    free(dir);
}

/* Three stations, grids for two: the third is left out and counted; with none at all
 * the job fails naming the files it looked for. */
Test(nonlinloc, missing_grid_skipped_and_counted)
{
    char *dir = test_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/time", dir);
    cr_assert_eq(mkdir(path, 0777), 0);
    free(test_write_file(dir, "st.txt", "AAA 0 0 0\nBBB 500 0 0\nCCC 0 500 0\n"));
    const char *names[2] = {"AAA", "CCC"};
    double src[2][3] = {{0, 0, 0}, {0, 0.5, 0}};
    for (int i = 0; i < 2; i++)
        for (int p = 0; p < 2; p++) {
            snprintf(path, sizeof path, "%s/time/lay.%c.%s.time", dir, "PS"[p], names[i]);
            write_time_grid(path, names[i], src[i], "TRANSFORM  NONE");
        }
    struct sl_config cfg = load_conf(dir, "st.txt", "cartesian", "auto", "PS");
    struct station_set st;
    cr_assert_eq(stations_load(cfg.locate.stations, 0, &st), 0, "%s", err_msg());
    struct locate_nll_report rep;
    cr_assert_eq(locate_nll_stations(&cfg, &st, &rep), 0, "%s", err_msg());
    cr_expect_eq(rep.skipped, 1);
    cr_expect_eq(rep.misplaced, 0);
    cr_assert_eq(st.n, 2);
    cr_expect_str_eq(st.st[0].name, "AAA");
    cr_expect_str_eq(st.st[1].name, "CCC");
    cr_expect_null(st.proj_to_geo, "TRANSFORM NONE: no geographic frame");
    /* the engine builds on what is left */
    struct tt_station *views;
    struct tt_table tt;
    cr_assert_eq(locate_station_views(&st, &views), 0);
    cfg.locate.grid_n[0] = cfg.locate.grid_n[1] = cfg.locate.grid_n[2] = 3;
    for (int a = 0; a < 3; a++) {
        cfg.locate.grid_d[a] = 400;
        cfg.locate.grid_o[a] = a == 2 ? 0 : -400;
    }
    cr_expect_eq(locate_tables_build(&cfg, views, st.n, &tt), 0, "%s", err_msg());
    cr_expect_eq(tt.nsta, 2);
    tt_free(&tt);
    free(views);
    stations_free(&st);
    /* a station only with a P grid needs an S grid for phases = PS */
    snprintf(path, sizeof path, "%s/time/lay.S.CCC.time.hdr", dir);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(stations_load(cfg.locate.stations, 0, &st), 0, "%s", err_msg());
    cr_assert_eq(locate_nll_stations(&cfg, &st, &rep), 0, "%s", err_msg());
    cr_expect_eq(rep.skipped, 2);
    cr_expect_eq(st.n, 1);
    stations_free(&st);
    config_free(&cfg);
    /* no station with a grid at all */
    free(test_write_file(dir, "st2.txt", "XXX 0 0 0\nYYY 1 1 1\n"));
    cfg = load_conf(dir, "st2.txt", "cartesian", "auto", "PS");
    cr_assert_eq(stations_load(cfg.locate.stations, 0, &st), 0, "%s", err_msg());
    cr_expect_eq(locate_nll_stations(&cfg, &st, &rep), -ENOENT);
    cr_expect_not_null(strstr(err_msg(), "none of the 2 stations has a NonLinLoc time grid"), "%s", err_msg());
    cr_expect_not_null(strstr(err_msg(), "lay.P.XXX.time.hdr"), "%s", err_msg());
    stations_free(&st);
    config_free(&cfg);
    test_rmtree(dir);
    free(dir);
}

/* Read events.csv's first event: latitude and longitude columns. */
static void read_event_latlon(const char *dir, double *lat, double *lon, double *elev)
{
    char path[4096], line[1024];
    snprintf(path, sizeof path, "%s/events.csv", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_assert(strstr(line, "latitude,longitude,elevation_m") != NULL, "%s", line);
    cr_assert_not_null(fgets(line, sizeof line, f));
    fclose(f);
    /* id,origin_time,origin_ns,x,y,z,sx,sy,sz,st,lat,lon,elev,... */
    char *p = line;
    for (int c = 0; c < 10; c++) {
        p = strchr(p, ',');
        cr_assert_not_null(p);
        p++;
    }
    cr_assert_eq(sscanf(p, "%lf,%lf,%lf", lat, lon, elev), 3, "%s", line);
}

/* An event at a known node of a grid with TRANSFORM TRANS_MERC, written to events.csv
 * through the job's path (station set -> engine projection -> event writer), reads back
 * as the latitude and longitude of Snyder's worked example (see trans_merc_matches_snyder);
 * with SIMPLE (rotated), as the separately written formula says; geographic stations are
 * placed in the grid frame through the same TRANSFORM. */
Test(nonlinloc, event_at_grid_node_reads_back_lat_lon)
{
    char *dir = test_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/time", dir);
    cr_assert_eq(mkdir(path, 0777), 0);
    const char *tm = "TRANSFORM  TRANS_MERC RefEllipsoid Clarke-1866  LatOrig 0.0  LongOrig -75.0  RotCW 0.0";
    double sx = 127106.5 / 0.9996 / 1000, sy = 4484124.4 / 0.9996 / 1000;
    double src[3] = {sx, sy, -0.25}; /* 250 m above sea level */
    snprintf(path, sizeof path, "%s/time/lay.P.NY1.time", dir);
    write_time_grid(path, "NY1", src, tm);
    /* geographic station at Snyder's point, 250 m up */
    free(test_write_file(dir, "st.txt", "NY1 40.5 -73.5 250\n"));
    struct sl_config cfg = load_conf(dir, "st.txt", "geographic", "auto", "P");
    struct station_set st;
    cr_assert_eq(stations_load(cfg.locate.stations, 1, &st), 0, "%s", err_msg());
    struct locate_nll_report rep;
    cr_assert_eq(locate_nll_stations(&cfg, &st, &rep), 0, "%s", err_msg());
    cr_expect_eq(rep.geographic, 1);
    cr_expect_eq(rep.misplaced, 0, "the station was placed away from its grid's source");
    cr_expect_leq(fabs(st.st[0].x - sx * 1000) + fabs(st.st[0].y - sy * 1000), 0.5, "station at (%.2f, %.2f) m",
                  st.st[0].x, st.st[0].y);
    cr_expect_leq(fabs(st.st[0].z + 250), 1e-9);
    /* an event at the grid node (sx, sy) km, 2 km deep */
    struct locate_geo geo = locate_geo_of(&st);
    cr_assert_not_null(geo.to_geographic);
    struct locate_event ev = {.id = 0, .origin_ns = 1700000000000000000LL, .x = sx * 1000, .y = sy * 1000, .z = 2000};
    geo.to_geographic(&geo, ev.x, ev.y, ev.z, &ev.lat, &ev.lon, &ev.elev);
    struct event_writer w;
    cr_assert_eq(events_open(&w, dir), 0, "%s", err_msg());
    cr_assert_eq(events_write(&w, &ev), 0, "%s", err_msg());
    cr_assert_eq(events_close(&w), 0);
    double lat, lon, elev;
    read_event_latlon(dir, &lat, &lon, &elev);
    cr_expect_leq(fabs(lat - 40.5), 3e-6, "latitude %.7f", lat);  /* CSV keeps 1e-7 degrees */
    cr_expect_leq(fabs(lon + 73.5), 3e-6, "longitude %.7f", lon);
    cr_expect_leq(fabs(elev + 2000), 0.01, "elevation %.2f", elev);
    stations_free(&st);
    config_free(&cfg);

    /* SIMPLE, rotated 30 degrees, cartesian stations in the grid frame: the event at node
     * (1, -1) km reads back as the hand-evaluated inverse of the definition */
    test_rmtree(dir);
    cr_assert_eq(mkdir(dir, 0777), 0);
    snprintf(path, sizeof path, "%s/time", dir);
    cr_assert_eq(mkdir(path, 0777), 0);
    double s0[3] = {0, 0, 0};
    snprintf(path, sizeof path, "%s/time/lay.P.IS1.time", dir);
    write_time_grid(path, "IS1", s0, "TRANSFORM  SIMPLE LatOrig 64.0  LongOrig -17.0  RotCW 30.0");
    free(test_write_file(dir, "st.txt", "IS1 0 0 0\n"));
    cfg = load_conf(dir, "st.txt", "cartesian", "phase-station", "P");
    cr_assert_eq(stations_load(cfg.locate.stations, 0, &st), 0, "%s", err_msg());
    cr_assert_eq(locate_nll_stations(&cfg, &st, &rep), 0, "%s", err_msg());
    geo = locate_geo_of(&st);
    cr_assert_not_null(geo.to_geographic, "cartesian stations in a geographic grid frame: events get lat/lon");
    ev.x = 1000, ev.y = -1000, ev.z = 500;
    geo.to_geographic(&geo, ev.x, ev.y, ev.z, &ev.lat, &ev.lon, &ev.elev);
    double r = 30 * M_PI / 180, k = 10000.0 / 90.0;
    double xp = 1.0 * cos(r) - (-1.0) * sin(r), yp = -1.0 * cos(r) + 1.0 * sin(r); /* frame turned back */
    double hlat = 64.0 + yp / k, hlon = -17.0 + xp / (k * cos(hlat * M_PI / 180));
    cr_expect_leq(fabs(ev.lat - hlat) + fabs(ev.lon - hlon), 1e-10, "(%.9f %.9f) vs (%.9f %.9f)", ev.lat, ev.lon,
                  hlat, hlon);
    double bx, by; /* and the forward definition takes it back to the node */
    simple_by_hand(64.0, -17.0, 30.0, ev.lat, ev.lon, &bx, &by);
    cr_expect_leq(fabs(bx - 1.0) + fabs(by + 1.0), 1e-9, "(%.12f, %.12f)", bx, by);
    stations_free(&st);
    config_free(&cfg);

    /* geographic stations with TRANSFORM NONE grids: refused, naming the header */
    snprintf(path, sizeof path, "%s/time/lay.P.IS1.time", dir);
    write_time_grid(path, "IS1", s0, "TRANSFORM  NONE");
    free(test_write_file(dir, "st.txt", "IS1 64.0 -17.0 0\n"));
    cfg = load_conf(dir, "st.txt", "geographic", "auto", "P");
    cr_assert_eq(stations_load(cfg.locate.stations, 1, &st), 0, "%s", err_msg());
    cr_expect_eq(locate_nll_stations(&cfg, &st, &rep), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "lay.P.IS1.time.hdr:3: the grids have no geographic TRANSFORM"), "%s",
                       err_msg());
    stations_free(&st);
    config_free(&cfg);
    test_rmtree(dir);
    free(dir);
}

/* ---- the locate job end to end on NonLinLoc grids ---- */

struct csv_event {
    double x, y, z, lat, lon;
    long long origin_ns;
};

static int read_events(const char *path, struct csv_event *ev, int max)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[2048];
    int n = 0;
    cr_assert_not_null(fgets(line, sizeof line, f));
    while (n < max && fgets(line, sizeof line, f)) {
        long long id;
        char iso[64];
        double sx, sy, sz, st;
        cr_assert_eq(sscanf(line, "%lld,%63[^,],%lld,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &id, iso, &ev[n].origin_ns,
                            &ev[n].x, &ev[n].y, &ev[n].z, &sx, &sy, &sz, &st, &ev[n].lat, &ev[n].lon),
                     12, "%s", line);
        n++;
    }
    fclose(f);
    return n;
}

/* The generator's synthetic events located with NonLinLoc grids named as Grid2Time names
 * them (TRANSFORM SIMPLE), one station without grids: that station is skipped and
 * counted, the events come out where straight rays put them (the same as homogeneous
 * travel times over the same 24 stations: the grids hold exactly those times at the
 * trial points), and their latitude/longitude are the SIMPLE inverse of their position. */
Test(nonlinloc, locate_job_on_grid2time_grids, .timeout = 240)
{
    char *dir = test_tmpdir();
    char rec[2048], path[4096];
    snprintf(rec, sizeof rec, "%s/rec", dir);
    const char *gen[] = {test_prog("seislive-gen"), "micro", "-o", rec, "--count", "5,5", "--spacing", "200",
                         "--event", "400,400,900,3.0", "--event", "500,300,1100,9.0", "--duration", "14",
                         "--noise", "0.02", "--seed", "11", NULL};
    struct run_result r;
    cr_assert_eq(test_run(gen, 120, &r), 0);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    snprintf(path, sizeof path, "%s/stations.txt", rec);
    struct station_set st;
    cr_assert_eq(stations_load(path, 0, &st), 0, "%s", err_msg());
    cr_assert_eq(st.n, 25);
    snprintf(path, sizeof path, "%s/time", dir);
    cr_assert_eq(mkdir(path, 0777), 0);
    /* grids on the trial grid's nodes (17^3, 50 m from (0, 0, 500) m), straight rays */
    FILE *less = fopen(strcat(strcpy(path, dir), "/st24.txt"), "w");
    cr_assert_not_null(less);
    const char *tr = "TRANSFORM  SIMPLE LatOrig 64.000000  LongOrig -17.000000  RotCW 0.000000";
    for (int s = 0; s < st.n; s++) {
        if (s == 12) /* S013, the middle station: no grids */
            continue;
        fprintf(less, "%s %.3f %.3f %.3f\n", st.st[s].name, st.st[s].x, st.st[s].y, st.st[s].z);
        for (int p = 0; p < 2; p++) {
            struct nll_grid g = {.n = {17, 17, 17}, .o = {0, 0, 0.5}, .d = {0.05, 0.05, 0.05}, .type = "TIME",
                                 .src = {st.st[s].x / 1000, st.st[s].y / 1000, st.st[s].z / 1000}};
            snprintf(g.label, sizeof g.label, "%s", st.st[s].name);
            snprintf(g.transform, sizeof g.transform, "%s", tr);
            g.v = malloc(17 * 17 * 17 * sizeof(float));
            cr_assert_not_null(g.v);
            for (int i = 0; i < 17; i++)
                for (int j = 0; j < 17; j++)
                    for (int k = 0; k < 17; k++) {
                        double dx = i * 50.0 - st.st[s].x, dy = j * 50.0 - st.st[s].y, dz = 500 + k * 50.0 - st.st[s].z;
                        g.v[(i * 17 + j) * 17 + k] = (float)(sqrt(dx * dx + dy * dy + dz * dz) / (p ? 2000.0 : 3500.0));
                    }
            snprintf(path, sizeof path, "%s/time/lay.%c.%s.time", dir, "PS"[p], st.st[s].name);
            cr_assert_eq(nll_write(path, &g), 0, "%s", err_msg());
            nll_free(&g);
        }
    }
    fclose(less);
    stations_free(&st);
    const char *tt[2] = {"traveltime = \"homogeneous\"\nstations = \"st24.txt\"",
                         "traveltime = \"nonlinloc\"\nnll_p = \"time/lay\"\nnll_s = \"time/lay\"\n"
                         "stations = \"rec/stations.txt\""};
    struct csv_event ev[2][4];
    int n[2];
    for (int k = 0; k < 2; k++) {
        char text[4096];
        snprintf(text, sizeof text,
                 "[job]\nkind = \"locate\"\n[locate]\n%s\nvp = 3500.0\nvs = 2000.0\ngrid_n = [17, 17, 17]\n"
                 "grid_d = [50.0, 50.0, 50.0]\ngrid_o = [0.0, 0.0, 500.0]\ntrigger = \"mad\"\nthreshold = 8.0\n"
                 "[input]\nkind = \"files\"\npaths = [\"rec/*.mseed\"]\n[output]\ndir = \"out%d\"\n[runtime]\n"
                 "device = \"cpu\"\n",
                 tt[k], k);
        char *conf = test_write_file(dir, k ? "nll.toml" : "hom.toml", text);
        const char *argv[] = {test_prog("seislive"), "run", "-c", conf, NULL};
        cr_assert_eq(test_run(argv, 120, &r), 0);
        cr_assert_eq(r.status, 0, "%s", r.err);
        if (k == 1) {
            cr_expect_not_null(strstr(r.err, "station S013 skipped: no P time grid"), "%s", r.err);
            cr_expect_not_null(strstr(r.err, "1 of 25 stations skipped: no NonLinLoc time grid"), "%s", r.err);
            cr_expect_not_null(strstr(r.err, "1 stations skipped (no travel-time grid)"), "%s", r.err);
        }
        test_run_free(&r);
        free(conf);
        snprintf(path, sizeof path, "%s/out%d/events.csv", dir, k);
        n[k] = read_events(path, ev[k], 4);
    }
    cr_assert_eq(n[0], 2, "homogeneous: %d events", n[0]);
    cr_assert_eq(n[1], 2, "NonLinLoc: %d events", n[1]);
    const double truth[2][3] = {{400, 400, 900}, {500, 300, 1100}};
    for (int e = 0; e < 2; e++) {
        const struct csv_event *a = &ev[0][e], *b = &ev[1][e];
        cr_expect_leq(fabs(a->x - b->x) + fabs(a->y - b->y) + fabs(a->z - b->z), 1.0,
                      "event %d: NonLinLoc (%.2f %.2f %.2f) vs homogeneous (%.2f %.2f %.2f)", e, b->x, b->y, b->z, a->x,
                      a->y, a->z);
        cr_expect_leq(llabs(a->origin_ns - b->origin_ns), 1000000LL, "event %d origin times", e);
        cr_expect_leq(fabs(b->x - truth[e][0]) + fabs(b->y - truth[e][1]), 100.0, "event %d far from the truth", e);
        cr_expect(isnan(a->lat), "cartesian homogeneous run: no latitude");
        /* SIMPLE's inverse, by hand (rotation 0) */
        double k111 = 10000.0 / 90.0, lat = 64.0 + b->y / 1000 / k111;
        double lon = -17.0 + b->x / 1000 / (k111 * cos(lat * M_PI / 180));
        cr_expect_leq(fabs(b->lat - lat), 1.5e-7, "event %d latitude %.7f, expected %.7f", e, b->lat, lat);
        cr_expect_leq(fabs(b->lon - lon), 1.5e-7, "event %d longitude %.7f, expected %.7f", e, b->lon, lon);
    }
    test_rmtree(dir);
    free(dir);
}
