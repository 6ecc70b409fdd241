/* decompose — how the grid of one shot is cut into subdomains, one per MPI rank
 * ([runtime] decompose = "domain"; docs/mpi.md).  Pure planning: no MPI, no allocation
 * of fields, so `seislive check` and the tests use it as the run does.
 *
 * The grid is cut into slabs along z, and along y too when z alone cannot give every
 * rank a subdomain (or as [runtime] split says).  x is never cut: rows along x stay whole
 * on one rank, which keeps the interpolation sums of sources and receivers in the whole
 * grid's order (stream/decompose_points.c).  Ranks go z-major: rank = cz * ny + cy, rank
 * 0 on top.  Cuts balance the planes each rank computes, absorbing layers included (the
 * top and bottom ranks carry the z layers, so they get fewer interior planes).
 *
 * Each subdomain is a struct prop_grid of the propagator (kernels/propagator.h): HALO
 * faces at the cuts (width: the whole grid's there), origin and global_n placing it in
 * the whole grid; the whole grid's faces elsewhere. */
#ifndef SEISLIVE_DECOMPOSE_H
#define SEISLIVE_DECOMPOSE_H

#include <stddef.h>

#include "kernels/propagator.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DD_MAX_PARTS 4096

struct dd_plan {
    struct prop_params whole;   /* the whole grid's parameters */
    int nranks;
    int split[3];               /* subdomains along x (1), y, z */
    int halo;                   /* planes exchanged across a cut: order / 2 */
    int *cut[3];                /* split[a] + 1 boundaries along a, interior index: 0 .. n[a] */
};

/* Plan NRANKS subdomains of WHOLE (checked: prop_check).  SPLIT: [0, 0, 0] to choose, or
 * [1, ny, nz] with ny * nz = NRANKS.  Refused with the reason (-EINVAL): more ranks than
 * the planes allow (every subdomain needs at least `halo` planes along a cut axis, or its
 * neighbours' halos would reach past it), an explicit split that gives a subdomain thinner
 * than the halo, a y cut of a 2D grid, a split that does not multiply to NRANKS. */
int dd_plan_make(const struct prop_params *whole, int nranks, const int split[3], struct dd_plan *out);
void dd_plan_free(struct dd_plan *p);

/* Position of RANK in the split (cx = 0, cy, cz). */
void dd_coords(const struct dd_plan *p, int rank, int c[3]);
/* The rank across face F (0..5) of RANK's subdomain, or -1 at the whole grid's boundary. */
int dd_neighbour(const struct dd_plan *p, int rank, int f);

/* RANK's propagator parameters: the whole's with its grid cut down (n, o, origin,
 * global_n, HALO faces) and VMAX_CPML set (the whole model's largest velocity, so its
 * CPML profiles are the whole grid's). */
void dd_sub_params(const struct dd_plan *p, int rank, double vmax_cpml, struct prop_params *out);

/* What a rank holds and sends, for `seislive check` and the logs. */
struct dd_rank_info {
    int origin[3], n[3];        /* interior points of the subdomain in the whole grid */
    int npad[3];                /* with its layers */
    size_t halo_bytes;          /* sent per step (received: the same) */
    size_t prop_bytes;          /* propagator memory (prop_memory_bytes) */
    size_t buffer_bytes;        /* halo send + receive buffers */
};
int dd_rank_info(const struct dd_plan *p, int rank, struct dd_rank_info *out);

#ifdef __cplusplus
}
#endif

#endif
