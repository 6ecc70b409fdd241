/* decompose_report — what `seislive check` prints about a decomposed grid ([runtime]
 * decompose = "domain"; docs/mpi.md): per rank the subdomain, the halo bytes it sends
 * per step and the memory it takes, for the rank count `check --ranks N` or [runtime]
 * ranks gives (else this run's).  A split the grid cannot hold is refused here as the
 * run would refuse it. */
#ifndef SEISLIVE_DECOMPOSE_REPORT_H
#define SEISLIVE_DECOMPOSE_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "conf/config.h"
#include "kernels/propagator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* WHOLE: the job's propagator parameters; REC: NREC receivers (m); NT steps per shot;
 * MODEL_BYTES: the model every rank reads whole. */
int dd_report(const struct sl_config *cfg, const struct prop_params *whole, const double *rec, size_t nrec, int nt,
              size_t model_bytes, FILE *out);

#ifdef __cplusplus
}
#endif

#endif
