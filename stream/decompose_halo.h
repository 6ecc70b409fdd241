/* decompose_halo — the halo exchange of one rank's subdomain (stream/decompose.h) over
 * MPI with host buffers (the CPU backend; docs/mpi.md).
 *
 * After each step and injection, every HALO face sends the planes next to it
 * (prop_halo_pack) to the neighbour across it and receives the neighbour's into its halo
 * (prop_halo_unpack): then the subdomains step as the whole grid does, bit for bit
 * (tests/test_subdomain.c shows it in one process, tests/test_mpi_model.c over mpirun).
 * Split into begin (pack, post the receives and sends) and end (wait, unpack), so work
 * that needs no halo -- sampling now, the interior of the next step later -- can run in
 * between; a GPU transport (NCCL, or staging through pinned buffers) replaces the two
 * calls, not their callers. */
#ifndef SEISLIVE_DECOMPOSE_HALO_H
#define SEISLIVE_DECOMPOSE_HALO_H

#include <stddef.h>

#include "kernels/propagator.h"
#include "stream/decompose.h"
#include "stream/mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dd_halo {
    int nb[PROP_FACES];         /* neighbour rank across each face, -1 none */
    size_t count[PROP_FACES];   /* floats one way */
    float *send[PROP_FACES], *recv[PROP_FACES];
    struct sl_mpi_xfer x;
    size_t bytes_step;          /* sent per step */
};

int dd_halo_init(struct dd_halo *h, const struct dd_plan *p, int rank, struct prop *s);
int dd_halo_begin(struct dd_halo *h, struct prop *s);
int dd_halo_end(struct dd_halo *h, struct prop *s);
void dd_halo_free(struct dd_halo *h);

#ifdef __cplusplus
}
#endif

#endif
