/* The GPU rtm tests' synthetic shot (test_gpu_rtm.c, test_gpu_rtm_strips.c). */
#ifndef SEISLIVE_GPU_RTM_SHOT_H
#define SEISLIVE_GPU_RTM_SHOT_H

#include <stdint.h>

#include "io/shot.h"

/* Shot ID on a grid of D m cells: source at (24 d, 10 d, 20 m), 40 receivers every cell
 * along x from cell 4 at the same y and depth, 301 samples of DT s holding a 15 Hz Ricker
 * that arrives later with offset (a reflector 210 m down).  Free rec and data. */
void gpu_rtm_synth_shot(struct shot *sh, int64_t id, double d, double dt);

#endif
