/* decompose_model — the model job on a decomposed grid ([runtime] decompose = "domain",
 * `mpirun -np N seislive model ...`; docs/mpi.md).
 *
 * stream/job_model.c keeps its plan, output and loop; on a decomposed grid it calls these
 * in place of creating the whole propagator, injecting and sampling: each rank holds its
 * subdomain, injects and samples the support nodes it owns (stream/decompose_points.h)
 * and exchanges the halo planes after every step (stream/decompose_halo.h).  Rank 0
 * gathers the traces (and snapshots) at the end of each shot and alone writes outputs.
 * The traces equal the one-rank run's bit for bit on the CPU backend (tests/test_mpi_model.c).
 * The exchange runs beside the interior: the step in parts (prop_step_part: the planes
 * next to the cuts, the exchange begun, the rest, the exchange ended), over MPI (CPU),
 * NCCL or pinned staging (GPU; [runtime] halo_transport, stream/decompose_halo.h).
 * So far: acoustic physics. */
#ifndef SEISLIVE_DECOMPOSE_MODEL_H
#define SEISLIVE_DECOMPOSE_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/config.h"
#include "kernels/backend.h"
#include "kernels/propagator.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dd_model;

/* This rank's part of the whole grid WHOLE with model M, receivers REC (NREC x 3 m),
 * NT steps per shot: its propagator into *S (the caller steps nothing itself, resets it
 * per shot and destroys it after dd_model_close).  Refused on every rank, with the reason:
 * ranks started with different configurations (a fingerprint of the resolved config),
 * a split the grid cannot hold (stream/decompose.h), TTI. */
int dd_model_open(const struct sl_config *cfg, const struct sl_device *dev, const struct prop_params *whole,
                  const struct prop_model *m, const double *rec, size_t nrec, int nt, struct prop **s,
                  struct dd_model **out);
/* A new shot from the point XYZ (m); clears the traces. */
int dd_model_source(struct dd_model *d, const double xyz[3]);
/* Step IT: step, inject AMP (host memory, also on a GPU), exchange the halos, record. */
int dd_model_step(struct dd_model *d, const float *amp, int it);
/* Whether to stop (any rank asked): decided together every few steps, so every rank
 * leaves the loop at the same step. */
bool dd_model_stop(struct dd_model *d, int it);
/* The shot's traces (NREC x (NT + 1), sample 0 zero) into TR on rank 0. */
int dd_model_traces(struct dd_model *d, float *tr);
/* The whole interior field (cur) into FIELD on rank 0 (snapshots). */
int dd_model_field(struct dd_model *d, float *field);
void dd_model_close(struct dd_model *d);

#ifdef __cplusplus
}
#endif

#endif
