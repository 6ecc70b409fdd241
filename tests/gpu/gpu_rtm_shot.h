/* The GPU rtm tests' synthetic shot (test_gpu_rtm.c, test_gpu_rtm_strips.c), and the
 * small two-layer case with its config and poisoned image (test_gpu_rtm_strips.c,
 * test_gpu_tti_rtm.c). */
#ifndef SEISLIVE_GPU_RTM_SHOT_H
#define SEISLIVE_GPU_RTM_SHOT_H

#include <stdbool.h>
#include <stdint.h>

#include "conf/config.h"
#include "io/shot.h"
#include "kernels/backend.h"
#include "kernels/rtm.h"

/* Shot ID on a grid of D m cells: source at (24 d, 10 d, 20 m), 40 receivers every cell
 * along x from cell 4 at the same y and depth, 301 samples of DT s holding a 15 Hz Ricker
 * that arrives later with offset (a reflector 210 m down).  Free rec and data. */
void gpu_rtm_synth_shot(struct shot *sh, int64_t id, double d, double dt);

/* The two-layer case: GPU_RTM_NX x NY x NZ cells. */
#define GPU_RTM_NX 48
#define GPU_RTM_NY 20
#define GPU_RTM_NZ 36

/* Its config: order 8, 10-cell layers, no free surface, imaging "both" every EVERY steps,
 * acoustic or TTI (dt 1.5 or 1.0 ms).  Free with config_free. */
void gpu_rtm_config(struct sl_config *cfg, bool tti, int every);

/* Its volume on D m cells: 2000 m/s over 2600 m/s from cell 22 down; with TTI epsilon 0.2,
 * delta 0.1, tilt 30 degrees, azimuth 0.3 rad.  Returns the velocity (malloc'd: free it). */
float *gpu_rtm_volume(struct rtm_volume *vol, double d, bool tti);

/* The image of SH by STRATEGY on DEV with P (tuning and strip_store as set), poisoned
 * first; its stats in *ST (may be NULL). */
float *gpu_rtm_image(const struct rtm_params *p, const struct sl_device *dev, const struct rtm_volume *vol,
                     const struct shot *sh, int strategy, struct rtm_shot_stats *st);

#endif
