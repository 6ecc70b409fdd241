/* job_rtm — the rtm job through the streaming runtime, and the shot-stacking job it is
 * built on.
 *
 * A shot job receives shots from [input] (ZeroMQ or files, stream/pipeline.h), skips
 * shots already in the ledger of its image stack, migrates each new shot into the stack
 * with MIGRATE, publishes the stacked image ([output] image_every / image_interval,
 * optionally only three slices), checkpoints image + illumination + ledger atomically
 * to [output] state_dir (stream/state.h) and, at the end, writes the final image
 * (io/image_files.h) and publishes it with "final": true.  A matching state is resumed
 * on start; a state written under another configuration is refused.
 *
 * The rtm job (job_rtm_ops) uses the RTM engine of kernels/rtm.h as MIGRATE, through
 * rtm_stack_shot (stream/rtm_config.h: the engine migrates, the job stacks); tests use
 * the same runtime with a simpler MIGRATE. */
#ifndef SEISLIVE_JOB_RTM_H
#define SEISLIVE_JOB_RTM_H

#include <stdint.h>

#include "conf/config.h"
#include "io/shot.h"
#include "kernels/backend.h"
#include "stream/image_stack.h"
#include "stream/job.h"
#include "stream/metrics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Add the image of SHOT into STACK (image_stack_add).  0, -EEXIST (already stacked),
 * -ECANCELED (stop requested; stack untouched) or another negative code (the shot is
 * rejected and the run goes on; -EIO ends the run). */
typedef int (*shot_migrate_fn)(void *ctx, const struct shot *shot, struct image_stack *stack);

struct shots_progress;

struct shot_job {
    const char *name;        /* "rtm" */
    int n[3];                /* image grid */
    double d[3], o[3];
    uint64_t fingerprint;    /* config_fingerprint() (+ anything else that changes numbers) */
    bool laplacian;          /* publish and write the Laplacian-filtered image */
    shot_migrate_fn migrate;
    void *ctx;
    /* decompose = "shots" (stream/shots.h).  PATCH (may be NULL): the shot's image as a
     * patch of the grid, image then illumination in one malloc'd block *BUF -- what a
     * worker rank sends back; without it a worker migrates into a zeroed whole-grid
     * stack and sends all of it. */
    int (*patch)(void *ctx, const struct shot *shot, float **buf, struct image_patch *p);
    /* Set on rank 0 by shots_job_run: SUBMIT replaces MIGRATE (the shot goes to a worker
     * rank), POLL takes the images returned meanwhile, and both add them into STACK in
     * submission order and return how many they added (or < 0); DRAIN waits for the
     * shots still out before the end's checkpoint and image; PROGRESS (per rank) goes out
     * with every status.  With them, image_every and checkpoint_every count shots added. */
    int (*submit)(void *ctx, const struct shot *shot, uint64_t digest, const char *origin,
                  struct image_stack *stack);
    int (*poll)(void *ctx, struct image_stack *stack);
    int (*drain)(void *ctx, struct image_stack *stack, bool stopped);
    struct shots_progress *progress;
};

/* Run J with the [input] and [output] of CFG on DEV.  M (may be NULL): metrics out.
 * Returns 0 or < 0 with err_msg(). */
int shot_job_run(const struct sl_config *cfg, const struct sl_device *dev, const struct shot_job *j,
                 struct metrics *m);

extern const struct job_ops job_rtm_ops;

#ifdef __cplusplus
}
#endif

#endif
