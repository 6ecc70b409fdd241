/* nll_transform — NonLinLoc's TRANSFORM projections (see nll_transform.h).  Written by
 * hand: PROJ has TM and LCC, but not NonLinLoc's SIMPLE, and NonLinLoc's grids are
 * computed with its own ellipsoid table and series (GMT's, after Snyder), which a
 * different implementation would reproduce only to centimetres. */
#include "io/nll_transform.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

#define D2R (M_PI / 180.0)
#define R2D (180.0 / M_PI)
/* NonLinLoc's c111: km per degree (the metre's definition, 10000 km pole to equator) */
#define C111 (10000.0 / 90.0)

/* NonLinLoc's ellipsoid table (map_project.c, after Snyder's Table 1): the values its
 * grids were computed with, WGS-84 flattening 1/298.254 included. */
static const struct {
    const char *name;
    double a, invf;
} ellipsoids[] = {
    {"WGS-84", 6378137.0, 298.254},        {"GRS-80", 6378137.0, 298.257},
    {"WGS-72", 6378135.0, 298.26},         {"Australian", 6378160.0, 298.25},
    {"Krasovsky", 6378245.0, 298.3},       {"International", 6378388.0, 297.0},
    {"Hayford-1909", 6378388.0, 297.0},    {"Clarke-1880", 6378249.1, 293.46},
    {"Clarke-1866", 6378206.4, 294.98},    {"Airy", 6377563.4, 299.32},
    {"Bessel", 6377397.2, 299.15},         {"Hayford-1830", 6377276.3, 300.80},
    {"Sphere", 6371008.7714, 0.0},         {"NAD-27", 6378206.4, 294.98},
    {"NAD-83", 6378137.4, 294.26},
};

/* The next number of S (after an optional parameter name such as "LatOrig"). */
static int next_number(const char **s, const char *name, double lo, double hi, const char *where, double *v)
{
    const char *p = *s;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t nl = strlen(name);
    if (strncmp(p, name, nl) == 0 && (p[nl] == ' ' || p[nl] == '\t'))
        p += nl;
    char *end;
    *v = strtod(p, &end);
    if (end == p || !isfinite(*v) || *v < lo || *v > hi)
        return err_set(-EINVAL, "%s: TRANSFORM: %s: expected a number in [%g, %g]", where, name, lo, hi);
    *s = end;
    return 0;
}

static int next_word(const char **s, const char *name, char *out, size_t len, const char *where)
{
    const char *p = *s;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t nl = strlen(name);
    if (strncmp(p, name, nl) == 0 && (p[nl] == ' ' || p[nl] == '\t'))
        p += nl;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = strcspn(p, " \t\r\n");
    if (n == 0 || n >= len)
        return err_set(-EINVAL, "%s: TRANSFORM: %s: expected a name", where, name);
    memcpy(out, p, n);
    out[n] = 0;
    *s = p + n;
    return 0;
}

/* Meridian distance constants (Snyder 3-21) and the inverse series (3-26). */
static double meridian(const struct nll_transform *t, double phi)
{
    const double *k = t->k;
    return t->a * (k[0] * phi - k[1] * sin(2 * phi) + k[2] * sin(4 * phi) - k[3] * sin(6 * phi));
}

static void tm_setup(struct nll_transform *t)
{
    double e2 = t->e2, e4 = e2 * e2, e6 = e4 * e2;
    t->k[0] = 1 - e2 / 4 - 3 * e4 / 64 - 5 * e6 / 256;
    t->k[1] = 3 * e2 / 8 + 3 * e4 / 32 + 45 * e6 / 1024;
    t->k[2] = 15 * e4 / 256 + 45 * e6 / 1024;
    t->k[3] = 35 * e6 / 3072;
    t->k[4] = meridian(t, t->lat0 * D2R); /* M0: y is counted from the origin's parallel */
}

/* Snyder 8-9, 8-10 with k0 = 1 (NonLinLoc's map_scale_factor). */
static void tm_forward(const struct nll_transform *t, double lat, double lon, double *x, double *y)
{
    double dlon = remainder(lon - t->lon0, 360.0) * D2R, phi = lat * D2R;
    double ep2 = t->e2 / (1 - t->e2), s = sin(phi), c = cos(phi), tn = tan(phi);
    double N = t->a / sqrt(1 - t->e2 * s * s), T = tn * tn, C = ep2 * c * c, A = dlon * c;
    double A2 = A * A, A3 = A2 * A, A4 = A3 * A, A5 = A4 * A, A6 = A5 * A;
    *x = N * (A + (1 - T + C) * A3 / 6 + (5 - 18 * T + T * T + 72 * C - 58 * ep2) * A5 / 120);
    *y = meridian(t, phi) - t->k[4] +
         N * tn * (A2 / 2 + (5 - T + 9 * C + 4 * C * C) * A4 / 24 + (61 - 58 * T + T * T + 600 * C - 330 * ep2) * A6 / 720);
}

/* Snyder 8-12 .. 8-18 (footpoint latitude by the 3-26 series). */
static void tm_inverse(const struct nll_transform *t, double x, double y, double *lat, double *lon)
{
    double e2 = t->e2, ep2 = e2 / (1 - e2), r = sqrt(1 - e2), e1 = (1 - r) / (1 + r);
    double mu = (t->k[4] + y) / (t->a * t->k[0]);
    double phi1 = mu + (1.5 * e1 - 27 * pow(e1, 3) / 32) * sin(2 * mu) +
                  (21 * e1 * e1 / 16 - 55 * pow(e1, 4) / 32) * sin(4 * mu) + (151 * pow(e1, 3) / 96) * sin(6 * mu) +
                  (1097 * pow(e1, 4) / 512) * sin(8 * mu);
    double s = sin(phi1), c = cos(phi1), tn = tan(phi1);
    double C1 = ep2 * c * c, T1 = tn * tn, w = 1 - e2 * s * s;
    double N1 = t->a / sqrt(w), R1 = t->a * (1 - e2) / (w * sqrt(w)), D = x / N1;
    double D2 = D * D, D3 = D2 * D, D4 = D3 * D, D5 = D4 * D, D6 = D5 * D;
    double phi = phi1 - (N1 * tn / R1) * (D2 / 2 - (5 + 3 * T1 + 10 * C1 - 4 * C1 * C1 - 9 * ep2) * D4 / 24 +
                                          (61 + 90 * T1 + 298 * C1 + 45 * T1 * T1 - 252 * ep2 - 3 * C1 * C1) * D6 / 720);
    double dl = (D - (1 + 2 * T1 + C1) * D3 / 6 + (5 - 2 * C1 + 28 * T1 - 3 * C1 * C1 + 8 * ep2 + 24 * T1 * T1) * D5 / 120) / c;
    *lat = phi * R2D;
    *lon = t->lon0 + dl * R2D;
}

/* Snyder 15-7, 15-9 (t and m of a latitude) for the conformal conic. */
static double lcc_t(const struct nll_transform *t, double phi)
{
    double es = t->e * sin(phi);
    return tan(M_PI / 4 - phi / 2) / pow((1 - es) / (1 + es), t->e / 2);
}

static double lcc_m(const struct nll_transform *t, double phi)
{
    double s = sin(phi);
    return cos(phi) / sqrt(1 - t->e2 * s * s);
}

static void lcc_setup(struct nll_transform *t)
{
    double p1 = t->par1 * D2R, p2 = t->par2 * D2R;
    double n = p1 != p2 ? (log(lcc_m(t, p1)) - log(lcc_m(t, p2))) / (log(lcc_t(t, p1)) - log(lcc_t(t, p2))) : sin(p1);
    double F = lcc_m(t, p1) / (n * pow(lcc_t(t, p1), n));
    t->k[0] = n;
    t->k[1] = F;
    t->k[2] = t->a * F * pow(lcc_t(t, t->lat0 * D2R), n); /* rho0 */
}

static void lcc_forward(const struct nll_transform *t, double lat, double lon, double *x, double *y)
{
    double n = t->k[0], rho = t->a * t->k[1] * pow(lcc_t(t, lat * D2R), n);
    double theta = n * remainder(lon - t->lon0, 360.0) * D2R;
    *x = rho * sin(theta);
    *y = t->k[2] - rho * cos(theta);
}

static void lcc_inverse(const struct nll_transform *t, double x, double y, double *lat, double *lon)
{
    double n = t->k[0], dy = t->k[2] - y;
    double rho = copysign(hypot(x, dy), n);
    double theta = n > 0 ? atan2(x, dy) : atan2(-x, -dy);
    double tt = pow(rho / (t->a * t->k[1]), 1 / n);
    double phi = M_PI / 2 - 2 * atan(tt);
    for (int i = 0; i < 50; i++) { /* Snyder 7-9: converges to 1e-12 in a few steps */
        double es = t->e * sin(phi);
        double next = M_PI / 2 - 2 * atan(tt * pow((1 - es) / (1 + es), t->e / 2));
        double d = fabs(next - phi);
        phi = next;
        if (d < 1e-13)
            break;
    }
    *lat = phi * R2D;
    *lon = t->lon0 + theta / n * R2D;
}

/* Snyder 25-2..25-4 (spherical, radius a: NonLinLoc's map_project.c forces the sphere
 * for this projection, as GMT did). */
static void ae_forward(const struct nll_transform *t, double lat, double lon, double *x, double *y)
{
    double p1 = t->lat0 * D2R, phi = lat * D2R, dl = remainder(lon - t->lon0, 360.0) * D2R;
    double cc = sin(p1) * sin(phi) + cos(p1) * cos(phi) * cos(dl);
    if (fabs(cc) >= 1.0) { /* the centre (or its antipode, where the projection has no value) */
        *x = *y = 0;
        return;
    }
    double c = acos(cc), k = t->a * c / sin(c);
    *x = k * cos(phi) * sin(dl);
    *y = k * (cos(p1) * sin(phi) - sin(p1) * cos(phi) * cos(dl));
}

/* Snyder 20-14, 25-15. */
static void ae_inverse(const struct nll_transform *t, double x, double y, double *lat, double *lon)
{
    double rho = hypot(x, y), p1 = t->lat0 * D2R;
    if (rho == 0) {
        *lat = t->lat0, *lon = t->lon0;
        return;
    }
    double c = rho / t->a, sc = sin(c), cc = cos(c);
    *lat = asin(cc * sin(p1) + y * sc * cos(p1) / rho) * R2D;
    *lon = t->lon0 + atan2(x * sc, rho * cos(p1) * cc - y * sin(p1) * sc) * R2D;
}

static int set_ellipsoid(struct nll_transform *t, const char *where)
{
    for (size_t i = 0; i < sizeof ellipsoids / sizeof *ellipsoids; i++)
        if (strcmp(t->ellipsoid, ellipsoids[i].name) == 0) {
            double f = ellipsoids[i].invf > 0 ? 1 / ellipsoids[i].invf : 0;
            t->a = ellipsoids[i].a;
            t->e2 = 2 * f - f * f;
            t->e = sqrt(t->e2);
            return 0;
        }
    return err_set(-EINVAL, "%s: TRANSFORM: unknown RefEllipsoid '%s' (NonLinLoc's names: WGS-84, GRS-80, "
                   "WGS-72, Australian, Krasovsky, International, Hayford-1909, Clarke-1880, Clarke-1866, Airy, "
                   "Bessel, Hayford-1830, Sphere, NAD-27, NAD-83)", where, t->ellipsoid);
}

int nll_transform_parse(const char *line, const char *where, struct nll_transform *t)
{
    memset(t, 0, sizeof *t);
    t->cosr = 1;
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (strncmp(p, "TRANSFORM", 9) == 0)
        p += 9;
    char kind[32];
    if (next_word(&p, "", kind, sizeof kind, where))
        return err_set(-EINVAL, "%s: TRANSFORM: no projection named", where);
    int rc = 0;
    if (strcmp(kind, "NONE") == 0) {
        t->kind = NLL_PROJ_NONE;
    } else if (strcmp(kind, "SIMPLE") == 0) {
        t->kind = NLL_PROJ_SIMPLE;
    } else if (strcmp(kind, "LAMBERT") == 0) {
        t->kind = NLL_PROJ_LAMBERT;
    } else if (strcmp(kind, "TRANS_MERC") == 0) {
        t->kind = NLL_PROJ_TRANS_MERC;
    } else if (strcmp(kind, "AZIMUTHAL_EQUIDIST") == 0) {
        t->kind = NLL_PROJ_AZIMUTHAL_EQUIDIST;
    } else {
        return err_set(-ENOTSUP, "%s: TRANSFORM %s is not supported (seislive reads NONE, SIMPLE, LAMBERT, "
                       "TRANS_MERC and AZIMUTHAL_EQUIDIST; recompute the grids with one of those)", where, kind);
    }
    int ellipsoidal = t->kind == NLL_PROJ_LAMBERT || t->kind == NLL_PROJ_TRANS_MERC ||
                      t->kind == NLL_PROJ_AZIMUTHAL_EQUIDIST;
    if (ellipsoidal)
        rc = next_word(&p, "RefEllipsoid", t->ellipsoid, sizeof t->ellipsoid, where);
    if (!rc && t->kind != NLL_PROJ_NONE) {
        rc = next_number(&p, "LatOrig", -90, 90, where, &t->lat0);
        if (!rc)
            rc = next_number(&p, "LongOrig", -180, 180, where, &t->lon0);
    }
    if (!rc && t->kind == NLL_PROJ_LAMBERT) {
        rc = next_number(&p, "FirstStdParal", -90, 90, where, &t->par1);
        if (!rc)
            rc = next_number(&p, "SecondStdParal", -90, 90, where, &t->par2);
        if (!rc && (fabs(t->par1) >= 89.999 || fabs(t->par2) >= 89.999 || fabs(t->par1 + t->par2) < 1e-9))
            rc = err_set(-EINVAL, "%s: TRANSFORM LAMBERT: standard parallels %g, %g define no cone", where,
                         t->par1, t->par2);
    }
    if (!rc && t->kind != NLL_PROJ_NONE)
        rc = next_number(&p, "RotCW", -360, 360, where, &t->rot);
    if (!rc && ellipsoidal)
        rc = set_ellipsoid(t, where);
    if (!rc && t->kind == NLL_PROJ_SIMPLE && fabs(t->lat0) > 89.0)
        rc = err_set(-EINVAL, "%s: TRANSFORM SIMPLE: LatOrig %g is too close to a pole", where, t->lat0);
    if (rc)
        return rc;
    t->cosr = cos(-t->rot * D2R);
    t->sinr = sin(-t->rot * D2R);
    if (t->kind == NLL_PROJ_TRANS_MERC)
        tm_setup(t);
    else if (t->kind == NLL_PROJ_LAMBERT)
        lcc_setup(t);
    return 0;
}

int nll_transform_geographic(const struct nll_transform *t)
{
    return t->kind != NLL_PROJ_NONE;
}

void nll_latlon_to_xy(const struct nll_transform *t, double lat, double lon, double *x, double *y)
{
    double xt, yt;
    switch (t->kind) {
    case NLL_PROJ_SIMPLE:
        xt = remainder(lon - t->lon0, 360.0) * C111 * cos(lat * D2R);
        yt = (lat - t->lat0) * C111;
        break;
    case NLL_PROJ_TRANS_MERC:
        tm_forward(t, lat, lon, &xt, &yt);
        xt /= 1000, yt /= 1000;
        break;
    case NLL_PROJ_LAMBERT:
        lcc_forward(t, lat, lon, &xt, &yt);
        xt /= 1000, yt /= 1000;
        break;
    case NLL_PROJ_AZIMUTHAL_EQUIDIST:
        ae_forward(t, lat, lon, &xt, &yt);
        xt /= 1000, yt /= 1000;
        break;
    default:
        *x = lon, *y = lat; /* NonLinLoc's NONE: the identity */
        return;
    }
    /* rotation by RotCW clockwise: NonLinLoc's latlon2rect */
    *x = xt * t->cosr - yt * t->sinr;
    *y = yt * t->cosr + xt * t->sinr;
}

void nll_xy_to_latlon(const struct nll_transform *t, double x, double y, double *lat, double *lon)
{
    if (t->kind == NLL_PROJ_NONE) {
        *lat = y, *lon = x;
        return;
    }
    double xt = x * t->cosr + y * t->sinr, yt = y * t->cosr - x * t->sinr;
    switch (t->kind) {
    case NLL_PROJ_SIMPLE:
        *lat = t->lat0 + yt / C111;
        *lon = t->lon0 + xt / (C111 * cos(*lat * D2R));
        break;
    case NLL_PROJ_TRANS_MERC:
        tm_inverse(t, xt * 1000, yt * 1000, lat, lon);
        break;
    case NLL_PROJ_AZIMUTHAL_EQUIDIST:
        ae_inverse(t, xt * 1000, yt * 1000, lat, lon);
        break;
    default:
        lcc_inverse(t, xt * 1000, yt * 1000, lat, lon);
        break;
    }
    *lon = remainder(*lon, 360.0); /* within [-180, 180] */
}

int nll_transform_same(const struct nll_transform *a, const struct nll_transform *b)
{
    return a->kind == b->kind && a->lat0 == b->lat0 && a->lon0 == b->lon0 && a->rot == b->rot &&
           a->par1 == b->par1 && a->par2 == b->par2 && strcmp(a->ellipsoid, b->ellipsoid) == 0;
}

const char *nll_transform_describe(const struct nll_transform *t, char *buf, int len)
{
    static const char *const names[] = {"NONE", "SIMPLE", "LAMBERT", "TRANS_MERC", "AZIMUTHAL_EQUIDIST"};
    if (t->kind == NLL_PROJ_NONE)
        snprintf(buf, (size_t)len, "NONE (cartesian)");
    else if (t->kind == NLL_PROJ_LAMBERT)
        snprintf(buf, (size_t)len, "LAMBERT %s lat0 %.6f lon0 %.6f parallels %g %g rot %g", t->ellipsoid, t->lat0,
                 t->lon0, t->par1, t->par2, t->rot);
    else
        snprintf(buf, (size_t)len, "%s%s%s lat0 %.6f lon0 %.6f rot %g", names[t->kind], t->ellipsoid[0] ? " " : "",
                 t->ellipsoid, t->lat0, t->lon0, t->rot);
    return buf;
}
