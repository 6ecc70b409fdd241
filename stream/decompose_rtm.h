/* decompose_rtm — the rtm job on a decomposed grid ([runtime] decompose = "domain",
 * `mpirun -np N seislive run -c CFG` with [job] kind = "rtm"; docs/mpi.md).
 *
 * Rank 0 runs the job's pipeline (input, ledger, stack, publishing, state, files) and
 * hands each shot it migrates to the other ranks (dd_rtm_send_shot); they wait for shots
 * (dd_rtm_recv) and migrate them with it, until rank 0 says the input has ended.  Every
 * rank runs the RTM engine (kernels/rtm.h) on the same shot with the hooks of
 * struct rtm_domain filled here: the shot's grid (its sub-volume with layers) cut as the
 * model job cuts its grid (stream/decompose.h), the halo planes exchanged after every
 * step of each wavefield (stream/decompose_halo.h), sources and receivers as the nodes
 * each rank owns with the whole grid's weights (stream/decompose_points.h), the
 * strategy rank 0's, the raw image accumulators gathered on rank 0 in the whole grid's
 * order.  On the CPU backend the image is the one-rank image bit for bit
 * (tests/test_mpi_rtm.c); on a GPU every transfer is staged through host memory. */
#ifndef SEISLIVE_DECOMPOSE_RTM_H
#define SEISLIVE_DECOMPOSE_RTM_H

#include <stdbool.h>

#include "conf/config.h"
#include "io/shot.h"
#include "kernels/rtm.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dd_rtm;

/* This rank's side of the decomposition of CFG's shots.  MODEL_GRID: the propagator
 * parameters of a shot covering the whole model (the largest shot grid: a shot's is its
 * sub-volume).  Refused on every rank, with the reason: ranks running different
 * configurations, a physics without halo exchange, a model grid the rank count cannot
 * split (stream/decompose.h; a smaller shot grid that cannot be split is that shot's
 * refusal, logged, the job going on). */
int dd_rtm_open(const struct sl_config *cfg, const struct prop_params *model_grid, struct dd_rtm **out);
/* The hooks to give the engine (rtm_engine_set_domain); valid until dd_rtm_close. */
const struct rtm_domain *dd_rtm_domain(struct dd_rtm *d);
void dd_rtm_close(struct dd_rtm *d);

/* The engine's stop request on a decomposed shot: SIGTERM / SIGINT seen by any rank,
 * decided by all together (the engine asks at the same points on every rank). */
bool dd_rtm_cancel(void *user);

/* Rank 0: SHOT to every other rank, which migrates it next. */
int dd_rtm_send_shot(const struct shot *shot);
/* Rank 0: the input has ended; RC is the job's result, which every rank returns. */
int dd_rtm_send_end(int rc);
/* The other ranks: the next shot into SHOT (arrays malloc'd: free with dd_rtm_shot_free),
 * or *END with rank 0's result in *RC. */
int dd_rtm_recv(struct shot *shot, bool *end, int *rc);
void dd_rtm_shot_free(struct shot *shot);

#ifdef __cplusplus
}
#endif

#endif
