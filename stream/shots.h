/* shots — shot-parallel migration: [runtime] decompose = "shots" (docs/mpi.md).
 *
 * Ranks migrate different shots of one stream at the same time.  Rank 0 runs the
 * ordinary shot job (stream/job_rtm.h) -- the input of any kind, the ledger, the image
 * stack, checkpoints, publications and the final files, all single-writer as with one
 * rank -- except that each shot, instead of being migrated there, is handed to a worker
 * rank that has asked for one (stream/mpi_shots.h): a rank that finishes sends its
 * shot's image back and that reply is its request for the next, so a slow rank simply
 * asks less often and never holds the others up.
 *
 * Determinism: rank 0 adds the returned images into the stack in the order it handed
 * the shots out (the input's order, the one-rank run's), holding an image that comes
 * back early until the ones before it are in.  The sum is therefore the one-rank sum
 * term for term and the image is bitwise the one-rank image (when every rank migrates
 * a shot the same way: same backend, same strategy).  Checkpoints save only that
 * in-order prefix with its ledger, so after a crash the replay stacks the rest in the
 * same order again: exactly once, and the same image.
 *
 * Rank 0 migrates nothing (its engine holds a host copy of the model, no device memory):
 * while migrating it could not answer the workers, and they would wait for it.  N GPUs:
 * run N + 1 ranks (rank 0 shares a GPU and uses none of its memory).  One rank: the
 * ordinary job, nothing handed out. */
#ifndef SEISLIVE_SHOTS_H
#define SEISLIVE_SHOTS_H

#include <stdbool.h>
#include <stdio.h>

#include "conf/config.h"
#include "kernels/backend.h"
#include "stream/image_stack.h"
#include "stream/job_rtm.h"
#include "stream/metrics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* decompose = "shots" with several ranks. */
bool shots_parallel(const struct sl_config *cfg);

/* Run J as decompose = "shots" (shot_job_run calls it): rank 0 runs shot_job_run handing
 * the shots out, the other ranks migrate what they are given (J's patch, else its
 * migrate) until told to stop; with one rank, shot_job_run itself.  Every rank calls it.
 * 0 or < 0. */
int shots_job_run(const struct sl_config *cfg, const struct sl_device *dev, const struct shot_job *j,
                  struct metrics *m);

/* `seislive check` with decompose = "shots": the ranks' roles for [runtime] ranks (or
 * this run's) and what each shot sends to rank 0.  Nothing for another decompose. */
void shots_report(const struct sl_config *cfg, FILE *out);

/* A worker rank's loop (stream/shots_worker.c). */
int shots_worker_run(const struct sl_device *dev, const struct shot_job *j);

/* The rtm job's patch hook (struct shot_job.patch): the RTM engine CTX's image of SHOT
 * over its patch, the image and illumination in one malloc'd block *BUF. */
int shots_rtm_patch(void *ctx, const struct shot *shot, float **buf, struct image_patch *p);

#ifdef __cplusplus
}
#endif

#endif
