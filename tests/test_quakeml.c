/* QuakeML 1.2 output (io/quakeml.h): the catalogue validates against the QuakeML 1.2
 * schema (xmllint with tests/data/quakeml/QuakeML-1.2.xsd, which imports the BED
 * schema) after every event; the values read back (libxml2) are the events' own, the
 * latitude/longitude uncertainties the frame sigmas over the metres per degree; a
 * cartesian-only frame is refused, by the writer and by the job. */
#include <criterion/criterion.h>
#include <errno.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/events.h"
#include "io/quakeml.h"
#include "io/stations.h"
#include "stream/error.h"
#include "stream/locate_setup.h"
#include "tests/support.h"

/* tests/data/quakeml/QuakeML-1.2.xsd of this checkout (SEISLIVE_BUILD is ROOT/build/KIND). */
static void schema_path(char *out, size_t len)
{
    const char *b = getenv("SEISLIVE_BUILD");
    struct stat sb;
    if (b) {
        snprintf(out, len, "%s/../../tests/data/quakeml/QuakeML-1.2.xsd", b);
        if (stat(out, &sb) == 0)
            return;
    }
    snprintf(out, len, "tests/data/quakeml/QuakeML-1.2.xsd");
}

static void validate(const char *xml)
{
    char xsd[PATH_MAX];
    schema_path(xsd, sizeof xsd);
    struct stat sb;
    cr_assert_eq(stat("/usr/bin/xmllint", &sb), 0,
                 "xmllint is not installed: tools/install-deps.sh installs it (Debian libxml2-utils)");
    const char *argv[] = {"/usr/bin/xmllint", "--noout", "--schema", xsd, xml, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_expect_eq(r.status, 0, "%s does not validate against %s:\n%s", xml, xsd, r.err);
    cr_expect_not_null(strstr(r.err, "validates"), "%s", r.err);
    test_run_free(&r);
}

static double xpath_num(xmlXPathContextPtr ctx, const char *expr)
{
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST expr, ctx);
    cr_assert_not_null(o, "%s", expr);
    double v = xmlXPathCastToNumber(o);
    xmlXPathFreeObject(o);
    return v;
}

static char *xpath_str(xmlXPathContextPtr ctx, const char *expr)
{
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST expr, ctx);
    cr_assert_not_null(o, "%s", expr);
    xmlChar *s = xmlXPathCastToString(o);
    xmlXPathFreeObject(o);
    char *r = strdup((const char *)s);
    xmlFree(s);
    return r;
}

Test(quakeml, catalogue_validates_and_reads_back)
{
    char *dir = test_tmpdir();
    /* geographic stations near Skeidararjokull: the frame is the local projection */
    free(test_write_file(dir, "st.txt", "A 64.05 -17.20 100\nB 64.06 -17.18 120\nC 64.04 -17.17 90\n"));
    char path[4096];
    snprintf(path, sizeof path, "%s/st.txt", dir);
    struct station_set st;
    cr_assert_eq(stations_load(path, 1, &st), 0, "%s", err_msg());
    struct locate_geo geo = locate_geo_of(&st);
    struct event_writer w;
    cr_assert_eq(events_open(&w, dir), 0, "%s", err_msg());
    cr_assert_eq(events_enable_quakeml(&w, dir, "ice quakes!", "0.1.0", &geo), 0, "%s", err_msg());
    char xml[4200];
    snprintf(xml, sizeof xml, "%s/events.xml", dir);
    validate(xml); /* the empty catalogue too */
    struct locate_event ev[3] = {
        {.id = 0, .origin_ns = 1767225603001052823LL, .x = 120.5, .y = -80.25, .z = 350.0, .sx = 12, .sy = 20,
         .sz = 30, .st = 0.004, .coalescence = 2162.9, .level = 1.5, .ix = 1, .iy = 2, .iz = 3, .rows_used = 6},
        {.id = 1, .origin_ns = 1767225609006072350LL, .x = -40, .y = 60, .z = 800, .sx = 3, .sy = 4, .sz = 9,
         .st = 0.001, .coalescence = 500, .level = 1.4, .rows_used = 5},
        {.id = 2, .origin_ns = 1767225619000000000LL, .x = 0, .y = 0, .z = -50, .sx = NAN, .sy = NAN, .sz = NAN,
         .st = NAN, .coalescence = 50, .level = NAN, .rows_used = 2},
    };
    for (int i = 0; i < 3; i++) {
        geo.to_geographic(&geo, ev[i].x, ev[i].y, ev[i].z, &ev[i].lat, &ev[i].lon, &ev[i].elev);
        cr_assert_eq(events_write(&w, &ev[i]), 0, "%s", err_msg());
        validate(xml); /* after every event: what a reader sees at any time is a whole catalogue */
    }
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp", xml);
    cr_expect_neq(access(tmp, F_OK), 0, "the temporary file was left behind");
    cr_assert_eq(events_close(&w), 0);

    xmlDocPtr doc = xmlReadFile(xml, NULL, 0);
    cr_assert_not_null(doc);
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathRegisterNs(ctx, BAD_CAST "q", BAD_CAST "http://quakeml.org/xmlns/quakeml/1.2");
    xmlXPathRegisterNs(ctx, BAD_CAST "b", BAD_CAST "http://quakeml.org/xmlns/bed/1.2");
    cr_expect_eq(xpath_num(ctx, "count(/q:quakeml/b:eventParameters/b:event)"), 3);
    char *id = xpath_str(ctx, "/q:quakeml/b:eventParameters/b:event[1]/@publicID");
    cr_expect_str_eq(id, "smi:local/seislive/ice_quakes_/event/1767225603001052823");
    free(id);
    char *t = xpath_str(ctx, "//b:event[1]/b:origin/b:time/b:value");
    cr_expect_str_eq(t, "2026-01-01T00:00:03.001052Z");
    free(t);
    double lat = xpath_num(ctx, "//b:event[1]/b:origin/b:latitude/b:value");
    double lon = xpath_num(ctx, "//b:event[1]/b:origin/b:longitude/b:value");
    cr_expect_leq(fabs(lat - ev[0].lat), 1e-8, "%.9f vs %.9f", lat, ev[0].lat);
    cr_expect_leq(fabs(lon - ev[0].lon), 1e-8, "%.9f vs %.9f", lon, ev[0].lon);
    cr_expect_eq(xpath_num(ctx, "//b:event[1]/b:origin/b:depth/b:value"), 350.0);
    cr_expect_eq(xpath_num(ctx, "//b:event[1]/b:origin/b:depth/b:uncertainty"), 30.0);
    cr_expect_eq(xpath_num(ctx, "//b:event[1]/b:origin/b:time/b:uncertainty"), 0.004);
    cr_expect_eq(xpath_num(ctx, "//b:event[1]/b:origin/b:quality/b:usedPhaseCount"), 6);
    /* the frame here is east/north: sigma_lat = sigma_y / (m per degree of latitude),
     * sigma_lon = sigma_x / (m per degree of longitude); metres per degree on WGS84
     * (Snyder 3-21': M = a(1-e2)/(1-e2 sin^2)^1.5, N cos(lat) for longitude) */
    double a = 6378137.0, f = 1 / 298.257223563, e2 = 2 * f - f * f, ph = st.lat0 * M_PI / 180;
    double w2 = 1 - e2 * sin(ph) * sin(ph);
    double mlat = a * (1 - e2) / (w2 * sqrt(w2)) * M_PI / 180, mlon = a / sqrt(w2) * cos(ph) * M_PI / 180;
    double slat = xpath_num(ctx, "//b:event[1]/b:origin/b:latitude/b:uncertainty");
    double slon = xpath_num(ctx, "//b:event[1]/b:origin/b:longitude/b:uncertainty");
    cr_expect_leq(fabs(slat - 20 / mlat) / (20 / mlat), 1e-3, "%.3e vs %.3e deg", slat, 20 / mlat);
    cr_expect_leq(fabs(slon - 12 / mlon) / (12 / mlon), 1e-3, "%.3e vs %.3e deg", slon, 12 / mlon);
    /* no sigma: no uncertainty element (not NaN) */
    cr_expect_eq(xpath_num(ctx, "count(//b:event[3]/b:origin/b:latitude/b:uncertainty)"), 0);
    cr_expect_eq(xpath_num(ctx, "count(//b:event[3]/b:origin/b:time/b:uncertainty)"), 0);
    cr_expect_eq(xpath_num(ctx, "//b:event[3]/b:origin/b:depth/b:value"), -50.0);
    xmlXPathFreeContext(ctx);
    xmlFreeDoc(doc);
    stations_free(&st);
    test_rmtree(dir);
    free(dir);
}

Test(quakeml, cartesian_frame_refused)
{
    char *dir = test_tmpdir();
    struct locate_geo none = {0};
    struct event_writer w;
    cr_assert_eq(events_open(&w, dir), 0, "%s", err_msg());
    cr_expect_eq(events_enable_quakeml(&w, dir, "x", "0", &none), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "QuakeML needs latitude and longitude"), "%s", err_msg());
    cr_expect_null(w.qml);
    cr_assert_eq(events_close(&w), 0);
    /* the job: refused before anything is read, naming the key */
    free(test_write_file(dir, "st.txt", "A 0 0 0\nB 100 0 0\n"));
    char text[8192];
    snprintf(text, sizeof text,
             "[job]\nkind = \"locate\"\n[locate]\nstations = \"%s/st.txt\"\nquakeml = true\n[input]\nkind = \"files\"\n"
             "paths = [\"%s/none.mseed\"]\n[output]\ndir = \"%s/out\"\n[runtime]\ndevice = \"cpu\"\n",
             dir, dir, dir);
    char *conf = test_write_file(dir, "run.toml", text);
    const char *argv[] = {test_prog("seislive"), "run", "-c", conf, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_expect_neq(r.status, 0);
    cr_expect_not_null(strstr(r.err, "run.toml:5"), "%s", r.err);
    cr_expect_not_null(strstr(r.err, "[locate] quakeml"), "%s", r.err);
    cr_expect_not_null(strstr(r.err, "QuakeML needs latitude and longitude"), "%s", r.err);
    test_run_free(&r);
    free(conf);
    test_rmtree(dir);
    free(dir);
}
