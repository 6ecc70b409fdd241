/* stations — the receivers of the locate job: names and positions in the local
 * Cartesian frame of the trial grid, plus per-station, per-phase time corrections.
 *
 * Station file (one station per line; '#' starts a comment; fields separated by
 * blanks or commas):
 *   cartesian:   NAME X Y Z          metres; Z is depth, positive down (the grid's z)
 *   geographic:  NAME LAT LON ELEV   degrees (WGS84) and metres above sea level
 * A first line naming the columns (e.g. the QuakeMigrate "Latitude,Longitude,Elevation,Name")
 * sets the column order instead; a header column called "Elevation" (no unit) is in km,
 * as in QuakeMigrate files; "elevation_m" / "elev_m" is in metres.  NAME may be "STA" or
 * "NET.STA" (then the network must match too).
 *
 * Projection of geographic stations (documented in docs/CONFIG.md through the schema):
 * local equirectangular (plate carree) tangent to the WGS84 ellipsoid at the array
 * centre (mean latitude, mean longitude):
 *   x = N(lat0) cos(lat0) (lon - lon0)      east, m
 *   y = M(lat0) (lat - lat0)                north, m
 *   z = -elevation                          depth below sea level, m
 * with M, N the meridional and prime-vertical radii of curvature.  Over an array of
 * 10 km the distortion is below 1e-5 relative (under 0.1 m), far below any grid cell;
 * stations_to_geographic() inverts it for the event files.
 *
 * Corrections file: "NAME PHASE SECONDS" per line (PHASE P or S); the correction is
 * added to the modeled travel time of that station and phase. */
#ifndef SEISLIVE_STATIONS_H
#define SEISLIVE_STATIONS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct station {
    char net[8];       /* "" = any network */
    char name[16];
    double x, y, z;    /* m, local frame, z down */
    double lat, lon, elev; /* geographic input (deg, deg, m); NaN for cartesian files */
    double corr[2];    /* s, P and S time corrections */
};

struct station_set {
    struct station *st;
    int n;
    int geographic;    /* 1 when projected from lat/lon */
    double lat0, lon0; /* projection centre, degrees */
    /* Another projection of the local frame (a NonLinLoc grid's TRANSFORM,
     * stream/locate_nll.h): when set, stations_to_geographic goes through it.  PROJ is
     * owned (stations_free frees it). */
    void *proj;
    void (*proj_to_geo)(const void *proj, double x_m, double y_m, double *lat, double *lon);
};

/* Read PATH; GEOGRAPHIC selects the column meaning when the file has no header.
 * Errors name the file and line. */
int stations_load(const char *path, int geographic, struct station_set *out);
/* Read a corrections file into SET (unknown stations are an error naming the line). */
int stations_load_corrections(struct station_set *set, const char *path);
/* Index of the station called NET.STA (net may be "" or match any), or -1. */
int stations_find(const struct station_set *set, const char *net, const char *sta);
/* Local (x, y, z) back to latitude, longitude (deg) and elevation (m): through PROJ when
 * set, else the equirectangular projection above (NaN for cartesian stations). */
void stations_to_geographic(const struct station_set *set, double x, double y, double z,
                            double *lat, double *lon, double *elev);
void stations_free(struct station_set *set);

#ifdef __cplusplus
}
#endif

#endif
