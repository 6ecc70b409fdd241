/* nll_transform — the map projection of a NonLinLoc grid header's TRANSFORM line, which
 * places the grid's rectangular frame (x east, y north, km; rotated RotCW degrees
 * clockwise) on the Earth.  Written by hand from NonLinLoc's documented formulas (its
 * GridLib/geo code, GMT-derived, and Snyder, "Map projections - a working manual", USGS
 * PP 1395): NonLinLoc's SIMPLE is its own, not any library's projection, and a
 * grid is only right with the exact formulas (and ellipsoid table) it was computed with.
 *
 *   NONE                                                        x, y are the frame itself
 *   SIMPLE  LatOrig LongOrig RotCW                              x = dlon 111.111 cos(lat)
 *   LAMBERT RefEllipsoid LatOrig LongOrig Paral1 Paral2 RotCW   conformal conic, 2 parallels
 *   TRANS_MERC RefEllipsoid LatOrig LongOrig RotCW              transverse Mercator, k0 = 1
 *   AZIMUTHAL_EQUIDIST RefEllipsoid LatOrig LongOrig RotCW      azimuthal equidistant on the
 *                                                               sphere of radius a (as GMT)
 *
 * (the parameter names may appear before their values, as NonLinLoc writes them:
 * "TRANSFORM  SIMPLE LatOrig 46.0  LongOrig 7.0  RotCW 0.0").  Anything else (GLOBAL, SDC,
 * ...) is refused with the header's file and line. */
#ifndef SEISLIVE_NLL_TRANSFORM_H
#define SEISLIVE_NLL_TRANSFORM_H

#ifdef __cplusplus
extern "C" {
#endif

enum nll_proj { NLL_PROJ_NONE, NLL_PROJ_SIMPLE, NLL_PROJ_LAMBERT, NLL_PROJ_TRANS_MERC, NLL_PROJ_AZIMUTHAL_EQUIDIST };

struct nll_transform {
    int kind;                  /* enum nll_proj */
    double lat0, lon0, rot;    /* degrees; rot clockwise */
    double par1, par2;         /* LAMBERT standard parallels, degrees */
    char ellipsoid[24];        /* LAMBERT / TRANS_MERC / AZIMUTHAL_EQUIDIST: NonLinLoc's RefEllipsoid name */
    /* derived */
    double a, e2, e;           /* semi-major axis (m), eccentricity squared, eccentricity */
    double cosr, sinr;         /* of -rot */
    double k[8];               /* projection constants */
};

/* Parse LINE ("TRANSFORM ..." or the part after the keyword).  WHERE ("file:line") is
 * put in front of the error.  0 or -EINVAL / -ENOTSUP with err_msg(). */
int nll_transform_parse(const char *line, const char *where, struct nll_transform *t);
/* 1 when the frame is geographic (anything but NONE). */
int nll_transform_geographic(const struct nll_transform *t);
/* Latitude, longitude (deg) to the grid frame x, y (km), and back. */
void nll_latlon_to_xy(const struct nll_transform *t, double lat, double lon, double *x, double *y);
void nll_xy_to_latlon(const struct nll_transform *t, double x, double y, double *lat, double *lon);
/* 1 when A and B describe the same projection. */
int nll_transform_same(const struct nll_transform *a, const struct nll_transform *b);
/* A short description for logs ("SIMPLE lat0 46 lon0 7 rot 0"). */
const char *nll_transform_describe(const struct nll_transform *t, char *buf, int len);

#ifdef __cplusplus
}
#endif

#endif
