/* locate_nll — station set and NonLinLoc grids made to agree (see locate_nll.h). */
#define LOG_COMPONENT "locate"
#include "stream/locate_nll.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/nonlinloc.h"
#include "stream/error.h"
#include "stream/log.h"

static void proj_to_geo(const void *proj, double x_m, double y_m, double *lat, double *lon)
{
    nll_xy_to_latlon(proj, x_m / 1000.0, y_m / 1000.0, lat, lon);
}

struct first_hdr {
    int have;
    char path[4200];
    int line;
    struct nll_transform tr;
};

/* Header checks of one station's grid for one phase: same TRANSFORM as the first grid;
 * source position near the station's (counted in *MISPLACED). */
static int check_grid(const char *root, const struct station *s, struct first_hdr *first, int geo_stations,
                      int *misplaced, int *warned)
{
    struct nll_grid g;
    int rc = nll_read_header(root, &g);
    if (rc)
        return rc;
    if (!first->have) {
        first->have = 1;
        snprintf(first->path, sizeof first->path, "%s.hdr", root);
        first->line = g.transform_line;
        first->tr = g.tr;
    } else if (!nll_transform_same(&g.tr, &first->tr)) {
        char a[160], b[160];
        return err_set(-EINVAL, "%s.hdr:%d: TRANSFORM %s differs from %s:%d (%s): all grids must share one frame",
                       root, g.transform_line, nll_transform_describe(&g.tr, a, sizeof a), first->path, first->line,
                       nll_transform_describe(&first->tr, b, sizeof b));
    }
    if (!g.label[0])
        return 0;
    /* where the grid says its station is (km), against the station file (m); for
     * geographic stations their projection is compared once it is made (caller) */
    double x = s->x, y = s->y;
    if (geo_stations && nll_transform_geographic(&g.tr)) {
        nll_latlon_to_xy(&g.tr, s->lat, s->lon, &x, &y);
        x *= 1000, y *= 1000;
    }
    double dx = x - g.src[0] * 1000, dy = y - g.src[1] * 1000, dz = s->z - g.src[2] * 1000;
    double cell = 1000 * fmax(g.d[0], fmax(g.d[1], g.d[2]));
    if (g.n[0] == 2) /* 2D grid: only depth is compared (the source is at its distance 0) */
        dx = dy = 0;
    if (sqrt(dx * dx + dy * dy + dz * dz) > cell) {
        if (!*warned)
            log_warn("station %s at (%.1f, %.1f, %.1f) m but %s.hdr has its source at (%.1f, %.1f, %.1f) m (more "
                     "than a grid cell, %.0f m, away)", s->name, x, y, s->z, root, g.src[0] * 1000, g.src[1] * 1000,
                     g.src[2] * 1000, cell);
        *warned = 1;
        (*misplaced)++;
    }
    return 0;
}

int locate_nll_stations(const struct sl_config *cfg, struct station_set *st, struct locate_nll_report *rep)
{
    memset(rep, 0, sizeof *rep);
    const struct locate_conf *lc = &cfg->locate;
    if (lc->traveltime != TT_NONLINLOC)
        return 0;
    const char *roots[2] = {lc->phases != PHASES_S ? lc->nll_p : NULL, lc->phases != PHASES_P ? lc->nll_s : NULL};
    for (int p = 0; p < 2; p++)
        if (roots[p] && !roots[p][0])
            return err_set(-EINVAL, "[locate] nll_%c: no NonLinLoc grid root given for phase %c (phases = \"%s\")",
                           "ps"[p], "PS"[p], config_enum_name("locate", "phases", lc->phases));
    struct first_hdr first = {0};
    int kept = 0, rc = 0;
    char first_missing[512] = "";
    for (int i = 0; i < st->n && !rc; i++) {
        struct station *s = &st->st[i];
        int ok = 1, warned = 0;
        for (int p = 0; p < 2 && ok && !rc; p++) {
            if (!roots[p])
                continue;
            char path[4096];
            rc = nll_time_root(roots[p], s->name, "PS"[p], lc->nll_pattern, path, sizeof path);
            if (rc == -ENOENT) {
                log_warn("station %s skipped: %s", s->name, err_msg());
                if (!first_missing[0])
                    snprintf(first_missing, sizeof first_missing, "%s", err_msg());
                ok = 0;
                rc = 0;
            } else if (!rc) {
                rc = check_grid(path, s, &first, st->geographic, &rep->misplaced, &warned);
            }
        }
        if (rc)
            break;
        if (ok)
            st->st[kept++] = *s;
        else
            rep->skipped++;
    }
    if (rc)
        return rc;
    if (kept == 0)
        return err_set(-ENOENT, "locate: none of the %d stations has a NonLinLoc time grid (e.g. %s)", st->n,
                       first_missing);
    if (rep->skipped)
        log_warn("%d of %d stations skipped: no NonLinLoc time grid (listed above)", rep->skipped, st->n);
    if (rep->misplaced)
        log_warn("%d stations are more than a grid cell from their time grid's source position", rep->misplaced);
    st->n = kept;
    rep->geographic = nll_transform_geographic(&first.tr);
    nll_transform_describe(&first.tr, rep->transform, sizeof rep->transform);
    if (st->geographic && !rep->geographic) {
        char where[4300];
        if (first.line)
            snprintf(where, sizeof where, "%s:%d", first.path, first.line);
        else
            snprintf(where, sizeof where, "%s", first.path);
        return err_set(-EINVAL, "%s: the grids have no geographic TRANSFORM (%s), so geographic stations cannot be "
                       "placed in their frame: give the stations in the grid frame ([locate] coords = "
                       "\"cartesian\", metres)", where, rep->transform);
    }
    if (!rep->geographic)
        return 0;
    struct nll_transform *tr = malloc(sizeof *tr);
    if (!tr)
        return err_set(-ENOMEM, "locate: out of memory");
    *tr = first.tr;
    if (st->geographic)
        for (int i = 0; i < st->n; i++) {
            struct station *s = &st->st[i];
            double x, y;
            nll_latlon_to_xy(tr, s->lat, s->lon, &x, &y);
            s->x = x * 1000; /* z stays -elevation: NonLinLoc's depth is below sea level too */
            s->y = y * 1000;
        }
    free(st->proj);
    st->proj = tr;
    st->proj_to_geo = proj_to_geo;
    log_info("NonLinLoc grids: TRANSFORM %s (from %s:%d); %d stations%s", rep->transform, first.path, first.line,
             st->n, st->geographic ? " placed in the grid frame through it" : "");
    return 0;
}
