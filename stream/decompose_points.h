/* decompose_points — sources and receivers of a decomposed grid (stream/decompose.h),
 * bit for bit what the whole grid injects and records.
 *
 * A point's interpolation support (8 nodes per axis for sinc) may cross a cut.  Each rank
 * computes the whole grid's weights (points_axis_weights, as wave_points_create does,
 * from the whole grid's coordinates) and handles the support nodes it owns -- its
 * interior along a cut, the layers along the whole grid's faces -- through a set of single
 * nodes (prop_points_create_nodes):
 *   - injection: each owned node gets amp * (wx wy wz), the very product the whole grid
 *     adds there, so every cell ends up as the whole grid's (cells are independent;
 *     points that share a cell add in point order, as there);
 *   - sampling: the whole grid sums sum_z sum_y (wy wz) * (sum_x wx p) in that order.
 *     Rows along x are never cut, so each rank computes the terms of the rows it owns;
 *     a point whose rows are all on one rank is summed there, the others' terms go to
 *     rank 0, which adds them in the whole grid's order (dd_points_assemble).
 * Interpolation: sinc (PROP_INTERP_SINC), the model job's, or as dd_points_plan_interp says. */
#ifndef SEISLIVE_DECOMPOSE_POINTS_H
#define SEISLIVE_DECOMPOSE_POINTS_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/propagator.h"
#include "stream/decompose.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One rank's share of a set of points. */
struct dd_points {
    size_t n;               /* points */
    int ns, nsy;            /* support per axis; nsy = 1 in 2D */
    float *w;               /* 3 * ns per point: whole-grid weights x, y, z */
    int *first;             /* 3 per point: global index of the first support node */
    int *row_owner;         /* per point nsy * ns rows (kz major): the rank owning each row */
    /* this rank */
    int rank;
    size_t *slot;           /* per point: first slot of its values in a step, or (size_t)-1 */
    size_t nslots;          /* values per step: 1 per point held whole, 1 per owned row else */
    size_t nnodes;          /* owned support nodes */
    struct prop_points *nodes; /* the owned nodes (NULL before dd_points_bind) */
    float *buf;             /* nnodes: amplitudes out / samples in */
};

/* The share of RANK in the points XYZ (N, metres) on plan P.  A point outside the whole
 * grid, or whose support leaves it with its layers, is refused as the whole grid would
 * (-EINVAL naming it).  No propagator needed: rank 0 computes every rank's share. */
int dd_points_plan(const struct dd_plan *p, int rank, const double *xyz, size_t n, struct dd_points *out);
/* The same with interpolation INTERP (enum prop_interp: the rtm job's trilinear receivers). */
int dd_points_plan_interp(const struct dd_plan *p, int rank, const double *xyz, size_t n, int interp,
                          struct dd_points *out);
/* Create the node set of the share on this rank's propagator S. */
int dd_points_bind(struct dd_points *dp, struct prop *s);
void dd_points_free(struct dd_points *dp, struct prop *s);

/* Inject AMPS[i * STRIDE] * SCALE at every point (host amplitudes) with FLAGS
 * (PROP_INJECT_PHYSICAL). */
int dd_points_inject(struct dd_points *dp, struct prop *s, const float *amps, size_t stride, float scale,
                     unsigned flags);
/* This rank's nslots values of the current field into OUT[k * STRIDE], k < nslots. */
int dd_points_sample(struct dd_points *dp, struct prop *s, float *out, size_t stride);

/* Rank 0: traces of every point from every rank's values.  VALS[r]: rank r's values,
 * slot-major (nslots_r rows of NT values); SHARES[r]: dd_points_plan of rank r.  Writes
 * NT values per point into TR (point-major, stride NT). */
void dd_points_assemble(const struct dd_points *shares, int nranks, const float *const *vals, size_t nt, float *tr);

#ifdef __cplusplus
}
#endif

#endif
