/* stations — station file, projection and time corrections (see stations.h). */
#define LOG_COMPONENT "stations"
#include "io/stations.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "stream/error.h"
#include "stream/log.h"

#define WGS84_A 6378137.0
#define WGS84_F (1.0 / 298.257223563)
#define DEG (M_PI / 180.0)

/* Radii of curvature of WGS84 at latitude LAT (rad). */
static void radii(double lat, double *m, double *n)
{
    double e2 = WGS84_F * (2.0 - WGS84_F);
    double s = sin(lat), w = sqrt(1.0 - e2 * s * s);
    *n = WGS84_A / w;
    *m = WGS84_A * (1.0 - e2) / (w * w * w);
}

enum col { COL_NONE, COL_NAME, COL_X, COL_Y, COL_Z, COL_LAT, COL_LON, COL_ELEV_M, COL_ELEV_KM };

static int split(char *line, char **tok, int max)
{
    int n = 0;
    for (char *p = strtok(line, " \t,;\r\n"); p && n < max; p = strtok(NULL, " \t,;\r\n"))
        tok[n++] = p;
    return n;
}

static enum col col_of(const char *s)
{
    static const struct { const char *name; enum col c; } names[] = {
        {"name", COL_NAME}, {"station", COL_NAME}, {"sta", COL_NAME}, {"x", COL_X},
        {"y", COL_Y}, {"z", COL_Z}, {"depth", COL_Z}, {"latitude", COL_LAT}, {"lat", COL_LAT},
        {"longitude", COL_LON}, {"lon", COL_LON}, {"elevation", COL_ELEV_KM},
        {"elevation_km", COL_ELEV_KM}, {"elevation_m", COL_ELEV_M}, {"elev_m", COL_ELEV_M},
        {"elev", COL_ELEV_M},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(s, names[i].name) == 0)
            return names[i].c;
    return COL_NONE;
}

static int parse_num(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return (end == s || *end || errno || !isfinite(*v)) ? -1 : 0;
}

static int set_name(struct station *st, const char *s)
{
    const char *dot = strchr(s, '.');
    size_t nl = dot ? (size_t)(dot - s) : 0;
    const char *sta = dot ? dot + 1 : s;
    if (nl >= sizeof st->net || strlen(sta) >= sizeof st->name || !*sta)
        return -1;
    memcpy(st->net, s, nl);
    st->net[nl] = 0;
    strcpy(st->name, sta);
    return 0;
}

/* fgets, but a line that does not fit LINE is an error naming PATH:LINENO rather than
 * two lines: the tail of a long comment would otherwise be read as a station.
 * Returns 1 with a line, 0 at the end, or a negative code. */
static int read_line(FILE *f, char *line, int size, const char *path, int lineno)
{
    if (!fgets(line, size, f))
        return 0;
    if (!strchr(line, '\n') && !feof(f))
        return err_set(-EINVAL, "%s:%d: line longer than %d characters", path, lineno, size - 2);
    return 1;
}

int stations_load(const char *path, int geographic, struct station_set *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(-errno, "%s: cannot open station file: %s", path, strerror(errno));
    enum col cols[8] = {COL_NAME, COL_X, COL_Y, COL_Z};
    if (geographic) {
        cols[1] = COL_LAT;
        cols[2] = COL_LON;
        cols[3] = COL_ELEV_M;
    }
    int ncols = 4, cap = 0, rc = 0, lineno = 0, seen_data = 0;
    char line[1024];
    while ((rc = read_line(f, line, sizeof line, path, lineno + 1)) > 0) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *tok[9];
        int nt = split(line, tok, 9);
        if (nt == 0)
            continue;
        if (!seen_data && col_of(tok[0]) != COL_NONE && parse_num(tok[0], &(double){0}) != 0) {
            /* A header: the column names decide the meaning. */
            if (nt > 8) {
                rc = err_set(-EINVAL, "%s:%d: header has %d columns, at most 8", path, lineno, nt);
                goto fail;
            }
            int have_geo = 0, have_xyz = 0;
            for (int i = 0; i < nt; i++) {
                cols[i] = col_of(tok[i]);
                have_geo |= cols[i] == COL_LAT || cols[i] == COL_LON;
                have_xyz |= cols[i] == COL_X || cols[i] == COL_Y;
            }
            if (have_geo == have_xyz) {
                rc = err_set(-EINVAL, "%s:%d: header must name either latitude/longitude or x/y columns",
                             path, lineno);
                goto fail;
            }
            geographic = have_geo;
            ncols = nt;
            seen_data = 1;
            continue;
        }
        seen_data = 1;
        if (nt != ncols) {
            rc = err_set(-EINVAL, "%s:%d: expected %d fields (%s), found %d", path, lineno, ncols,
                         geographic ? "name lat lon elevation" : "name x y z", nt);
            goto fail;
        }
        if (out->n == cap) {
            cap = cap ? 2 * cap : 64;
            struct station *p = realloc(out->st, (size_t)cap * sizeof *p);
            if (!p) {
                rc = err_set(-ENOMEM, "%s: out of memory", path);
                goto fail;
            }
            out->st = p;
        }
        struct station *st = &out->st[out->n];
        memset(st, 0, sizeof *st);
        st->lat = st->lon = st->elev = NAN;
        int have[COL_ELEV_KM + 1] = {0};
        for (int i = 0; i < nt; i++) {
            double v = 0;
            if (cols[i] == COL_NONE)
                continue;
            if (cols[i] == COL_NAME) {
                if (set_name(st, tok[i]) != 0) {
                    rc = err_set(-EINVAL, "%s:%d: bad station name '%s' (NET.STA, at most 15 characters)",
                                 path, lineno, tok[i]);
                    goto fail;
                }
            } else if (parse_num(tok[i], &v) != 0) {
                rc = err_set(-EINVAL, "%s:%d: field %d: '%s' is not a number", path, lineno, i + 1, tok[i]);
                goto fail;
            }
            have[cols[i]] = 1;
            switch (cols[i]) {
            case COL_X: st->x = v; break;
            case COL_Y: st->y = v; break;
            case COL_Z: st->z = v; break;
            case COL_LAT: st->lat = v; break;
            case COL_LON: st->lon = v; break;
            case COL_ELEV_M: st->elev = v; break;
            case COL_ELEV_KM: st->elev = v * 1000.0; break;
            default: break;
            }
        }
        if (!have[COL_NAME]) {
            rc = err_set(-EINVAL, "%s:%d: no station name column", path, lineno);
            goto fail;
        }
        if (geographic && (!(fabs(st->lat) <= 90.0) || !(fabs(st->lon) <= 360.0))) {
            rc = err_set(-EINVAL, "%s:%d: latitude %g / longitude %g out of range", path, lineno,
                         st->lat, st->lon);
            goto fail;
        }
        if (geographic && isnan(st->elev))
            st->elev = 0.0;
        /* Finite as written, but a km elevation can overflow once in metres. */
        if (!isfinite(st->elev) && !isnan(st->elev)) {
            rc = err_set(-EINVAL, "%s:%d: elevation out of range", path, lineno);
            goto fail;
        }
        if (stations_find(out, st->net, st->name) >= 0) {
            rc = err_set(-EINVAL, "%s:%d: station '%s' listed twice", path, lineno, st->name);
            goto fail;
        }
        out->n++;
    }
    if (rc < 0)
        goto fail;
    if (ferror(f)) {
        rc = err_set(-EIO, "%s: read error", path);
        goto fail;
    }
    fclose(f);
    f = NULL;
    if (out->n == 0) {
        rc = err_set(-EINVAL, "%s: no stations", path);
        goto fail;
    }
    out->geographic = geographic;
    if (geographic) {
        double slat = 0, slon = 0;
        for (int i = 0; i < out->n; i++) {
            slat += out->st[i].lat;
            slon += out->st[i].lon;
        }
        out->lat0 = slat / out->n;
        out->lon0 = slon / out->n;
        double m, nn;
        radii(out->lat0 * DEG, &m, &nn);
        for (int i = 0; i < out->n; i++) {
            struct station *st = &out->st[i];
            st->x = nn * cos(out->lat0 * DEG) * (st->lon - out->lon0) * DEG;
            st->y = m * (st->lat - out->lat0) * DEG;
            st->z = -st->elev;
        }
        log_info("%s: %d stations projected about lat %.6f lon %.6f (local equirectangular, WGS84)",
                 path, out->n, out->lat0, out->lon0);
    }
    return 0;
fail:
    if (f)
        fclose(f);
    stations_free(out);
    return rc;
}

int stations_find(const struct station_set *set, const char *net, const char *sta)
{
    for (int i = 0; i < set->n; i++) {
        const struct station *s = &set->st[i];
        if (strcmp(s->name, sta) == 0 && (!s->net[0] || !net || !net[0] || strcmp(s->net, net) == 0))
            return i;
    }
    return -1;
}

int stations_load_corrections(struct station_set *set, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(-errno, "%s: cannot open corrections file: %s", path, strerror(errno));
    char line[512];
    int lineno = 0, rc = 0;
    while ((rc = read_line(f, line, sizeof line, path, lineno + 1)) > 0) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *tok[4];
        int nt = split(line, tok, 4);
        if (nt == 0)
            continue;
        double v;
        if (nt != 3 || parse_num(tok[2], &v) != 0) {
            rc = err_set(-EINVAL, "%s:%d: expected 'STATION PHASE SECONDS'", path, lineno);
            break;
        }
        int ph = strcasecmp(tok[1], "P") == 0 ? 0 : strcasecmp(tok[1], "S") == 0 ? 1 : -1;
        if (ph < 0) {
            rc = err_set(-EINVAL, "%s:%d: phase '%s' is not P or S", path, lineno, tok[1]);
            break;
        }
        struct station tmp;
        if (set_name(&tmp, tok[0]) != 0) {
            rc = err_set(-EINVAL, "%s:%d: bad station name '%s'", path, lineno, tok[0]);
            break;
        }
        int i = stations_find(set, tmp.net, tmp.name);
        if (i < 0) {
            rc = err_set(-EINVAL, "%s:%d: station '%s' is not in the station file", path, lineno, tok[0]);
            break;
        }
        set->st[i].corr[ph] = v;
    }
    fclose(f);
    return rc;
}

void stations_to_geographic(const struct station_set *set, double x, double y, double z,
                            double *lat, double *lon, double *elev)
{
    if (set->proj_to_geo) {
        set->proj_to_geo(set->proj, x, y, lat, lon);
        *elev = -z;
        return;
    }
    if (!set->geographic) {
        *lat = *lon = NAN;
        *elev = -z;
        return;
    }
    double m, n;
    radii(set->lat0 * DEG, &m, &n);
    *lat = set->lat0 + y / m / DEG;
    *lon = set->lon0 + x / (n * cos(set->lat0 * DEG)) / DEG;
    *elev = -z;
}

void stations_free(struct station_set *set)
{
    free(set->st);
    free(set->proj);
    memset(set, 0, sizeof *set);
}
