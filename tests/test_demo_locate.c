/* The second demo (tools/demo-locate.sh, `make demo-locate`): the generator's
 * microseismic stream, located by `seislive run` with tools/demo-locate.toml, gives back
 * the events the generator put in (demo-out/micro/events.csv): each found once, at its
 * origin time and place to within the trial grid's resolution, and anything else found
 * much weaker than the real events. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

struct ev {
    long long t_ns;
    double x, y, z, strength;
};

/* Rows of a CSV with a header: origin_ns in column TCOL, x y z from XCOL, strength in
 * SCOL (-1: none).  Columns are 0-based. */
static int read_csv(const char *path, int tcol, int xcol, int scol, struct ev *out, int max)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[2048];
    int n = 0;
    cr_assert_not_null(fgets(line, sizeof line, f));
    while (n < max && fgets(line, sizeof line, f)) {
        char *fld[64];
        int nf = 0;
        for (char *save = NULL, *t = strtok_r(line, ",\n", &save); t && nf < 64;
             t = strtok_r(NULL, ",\n", &save))
            fld[nf++] = t;
        cr_assert_gt(nf, xcol + 2, "%s: short line", path);
        out[n].t_ns = atoll(fld[tcol]);
        out[n].x = atof(fld[xcol]);
        out[n].y = atof(fld[xcol + 1]);
        out[n].z = atof(fld[xcol + 2]);
        out[n].strength = scol >= 0 && scol < nf ? atof(fld[scol]) : 0;
        n++;
    }
    fclose(f);
    return n;
}

/* Column index of NAME in the header of PATH. */
static int column(const char *path, const char *name)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[2048];
    cr_assert_not_null(fgets(line, sizeof line, f));
    fclose(f);
    int i = 0;
    for (char *save = NULL, *t = strtok_r(line, ",\n", &save); t; t = strtok_r(NULL, ",\n", &save), i++)
        if (strcmp(t, name) == 0)
            return i;
    cr_assert_fail("%s: no column %s", path, name);
    return -1;
}

Test(demo_locate, stream_gives_back_the_events, .timeout = 400)
{
    const char *b = getenv("SEISLIVE_BUILD");
    const char *argv[] = {"/bin/bash", "tools/demo-locate.sh", b ? b : "build/release", NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 360, &r), 0);
    cr_assert_eq(r.status, 0, "demo-locate failed:\n%s\n%s", r.out, r.err);
    /* the subscriber printed event lines as they arrived */
    /* ids are 0-based, as in events.csv and the log */
    cr_assert_not_null(strstr(r.out, "event 0: 2026-01-01T"), "%s", r.out);
    test_run_free(&r);

    struct ev truth[16], found[64];
    int nt = read_csv("demo-out/micro/events.csv", 2, 3, -1, truth, 16);
    const char *fp = "demo-out/locate/events.csv";
    int nf = read_csv(fp, column(fp, "origin_ns"), column(fp, "x_m"), column(fp, "coalescence"),
                      found, 64);
    cr_assert_eq(nt, 4);
    /* the trial grid is 50 m; the characteristic function and the origin time trade
     * off against depth: within 1.5 cells and 5 samples (20 ms at 250 Hz) */
    const double dxy = 50.0, dz = 75.0, dt_ns = 20e6;
    int used[64] = {0};
    double weakest = 1e300;
    for (int i = 0; i < nt; i++) {
        int match = -1;
        for (int j = 0; j < nf; j++)
            if (fabs((double)(found[j].t_ns - truth[i].t_ns)) < dt_ns &&
                fabs(found[j].x - truth[i].x) <= dxy && fabs(found[j].y - truth[i].y) <= dxy &&
                fabs(found[j].z - truth[i].z) <= dz) {
                cr_assert_eq(match, -1, "true event %d found twice", i + 1);
                match = j;
            }
        cr_assert_neq(match, -1,
                      "true event %d (t %lld ns, %.0f %.0f %.0f m) not found among %d events",
                      i + 1, truth[i].t_ns, truth[i].x, truth[i].y, truth[i].z, nf);
        used[match] = 1;
        if (found[match].strength < weakest)
            weakest = found[match].strength;
    }
    for (int j = 0; j < nf; j++)
        if (!used[j])
            cr_assert_lt(found[j].strength, 0.5 * weakest,
                         "a spurious event (t %lld ns, %.0f %.0f %.0f m) as strong as real ones",
                         found[j].t_ns, found[j].x, found[j].y, found[j].z);
}
