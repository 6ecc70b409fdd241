/* traveltime — P and S travel times from every station to every trial source point,
 * built once per run: homogeneous (straight rays, exact) or 1D layered (first-order
 * fast-sweeping eikonal solver, Zhao 2005, on a fine (r, z) grid per station, then
 * bilinear lookup: a 1D model is cylindrically symmetric about each station, so the
 * 2D solution in the vertical plane is the 3D one).  Tables from NonLinLoc time grids
 * are filled by the job (stream/locate_tables.h) with tt_table_alloc / tt_table_finish;
 * the files (station, layer model, grids) are read there too.
 *
 * Rows are (station, phase) pairs: row = station * nphase + phase_index.  Times include
 * the station corrections.  The stack uses integer sample delays (kernels/stack.h);
 * the engine keeps these float seconds for the sub-sample refinement of each event. */
#ifndef SEISLIVE_TRAVELTIME_H
#define SEISLIVE_TRAVELTIME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A station as the kernels see it (the job converts io/stations.h's). */
struct tt_station {
    char net[8];       /* "" = any network */
    char name[16];
    double x, y, z;    /* m, the trial grid's frame, z down */
    double corr[2];    /* s, P and S time corrections */
};

/* Which phases (the [locate] phases key; the job maps it). */
enum tt_phases { TT_PHASES_P = 0, TT_PHASES_S = 1, TT_PHASES_PS = 2 };

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

/* Trial point J of G (x fastest), m. */
static inline void tt_point(const struct tt_grid *g, size_t j, double p[3])
{
    size_t nx = (size_t)g->n[0], nxy = nx * (size_t)g->n[1];
    p[0] = g->o[0] + (double)(j % nx) * g->d[0];
    p[1] = g->o[1] + (double)((j % nxy) / nx) * g->d[1];
    p[2] = g->o[2] + (double)(j / nxy) * g->d[2];
}

/* NSTA stations of ST; PHASES: enum tt_phases. */
int tt_homogeneous(const struct tt_grid *g, const struct tt_station *st, int nsta, int phases,
                   double vp, double vs, struct tt_table *out);
int tt_layered(const struct tt_grid *g, const struct tt_station *st, int nsta, int phases,
               const struct tt_layers *m, struct tt_table *out);

/* For tables filled elsewhere: OUT with room for NSTA stations x PHASES on G (times
 * unset), then, once every row holds its modeled times, the corrections of ST added and
 * the range found. */
int tt_table_alloc(const struct tt_grid *g, int nsta, int phases, struct tt_table *out);
void tt_table_finish(const struct tt_station *st, struct tt_table *t);

/* The eikonal solver itself: first-arrival times on an nr x nz grid of spacing h
 * (r = i h, z = z0 + k h, r fastest) from a source at (0, zs) through the slowness
 * S (nr x nz, s/m).  Nodes whose straight path from the source stays in the source's
 * slowness get the exact time (only those within INIT cells when INIT >= 0; INIT < 0:
 * the whole source layer); then Gauss-Seidel sweeps in the 4
 * orderings until no time changes by more than 1e-7 relative.  Returns sweeps used. */
int eikonal_sweep_2d(int nr, int nz, double h, double z0, double zs, const float *slow,
                     int init, double *t);

/* The phase indices (0 = P, 1 = S) of enum tt_phases PHASES; returns their number. */
int tt_phase_list(int phases, int phase[2]);
size_t tt_bytes(const struct tt_table *t);
void tt_free(struct tt_table *t);

#ifdef __cplusplus
}
#endif

#endif
