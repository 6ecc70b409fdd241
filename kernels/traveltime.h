/* traveltime — P and S travel times from every station to every trial source point,
 * built once per run: homogeneous (straight rays, exact), 1D layered (first-order
 * fast-sweeping eikonal solver, Zhao 2005, on a fine (r, z) grid per station, then
 * bilinear lookup: a 1D model is cylindrically symmetric about each station, so the
 * 2D solution in the vertical plane is the 3D one), or NonLinLoc time grids.
 *
 * Rows are (station, phase) pairs: row = station * nphase + phase_index.  Times include
 * the station corrections.  The stack uses integer sample delays (kernels/stack.h);
 * the engine keeps these float seconds for the sub-sample refinement of each event. */
#ifndef SEISLIVE_TRAVELTIME_H
#define SEISLIVE_TRAVELTIME_H

#include <stddef.h>

#include "conf/config.h"
#include "io/stations.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tt_grid {
    int n[3];          /* trial points per axis (x fastest, z slowest) */
    double d[3], o[3]; /* m */
};

struct tt_table {
    struct tt_grid grid;
    int nsta;
    int nphase;        /* 1 or 2 */
    int phase[2];      /* 0 = P, 1 = S for each phase index */
    size_t nj;         /* trial points */
    float *t;          /* (nsta * nphase) x nj, s */
    double tmin, tmax; /* over the table, s */
};

/* A layered model: layer i spans depths [top[i], top[i+1]) (z down, m); the first
 * layer also extends upwards, the last downwards. */
struct tt_layers {
    int n;
    double *top, *vp, *vs;
};

/* Build the table the [locate] section asks for.  Errors name the config key or file. */
int tt_build(const struct sl_config *cfg, const struct station_set *st, struct tt_table *out);

int tt_homogeneous(const struct tt_grid *g, const struct station_set *st, int phases,
                   double vp, double vs, struct tt_table *out);
int tt_layered(const struct tt_grid *g, const struct station_set *st, int phases,
               const struct tt_layers *m, struct tt_table *out);
int tt_nonlinloc(const struct tt_grid *g, const struct station_set *st, int phases,
                 const char *root_p, const char *root_s, struct tt_table *out);

/* "depth vp vs" per line, tops increasing. */
int tt_layers_load(const char *path, struct tt_layers *m);
void tt_layers_free(struct tt_layers *m);

/* The eikonal solver itself: first-arrival times on an nr x nz grid of spacing h
 * (r = i h, z = z0 + k h, r fastest) from a source at (0, zs) through the slowness
 * S (nr x nz, s/m).  Nodes whose straight path from the source stays in the source's
 * slowness get the exact time (only those within INIT cells when INIT >= 0; INIT < 0:
 * the whole source layer); then Gauss-Seidel sweeps in the 4
 * orderings until no time changes by more than 1e-7 relative.  Returns sweeps used. */
int eikonal_sweep_2d(int nr, int nz, double h, double z0, double zs, const float *slow,
                     int init, double *t);

/* Phases per config value (PHASES_P / PHASES_S / PHASES_PS). */
int tt_phase_list(int phases, int phase[2]);
size_t tt_bytes(const struct tt_table *t);
void tt_free(struct tt_table *t);

#ifdef __cplusplus
}
#endif

#endif
