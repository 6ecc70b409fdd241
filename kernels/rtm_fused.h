/* rtm_fused — RTM's fused backward step on two acoustic simulations (issue 20).
 *
 * The backward sweep of the boundary and random strategies steps the receiver wavefield
 * q forward in its own time (CPML on), the source wavefield u in reverse (no CPML; the
 * boundary strategy over the interior only) and images with both at every imaging
 * step.  Done apart, that is three passes over the grid per step (q's step, u's step, the
 * imaging condition reading u and q again).  One fused step does all of it in one pass,
 * each field read once:
 *
 *   q:   (cur q(n+1), prev q(n+2)) -> (cur q(n),   prev q(n+1))   as wave_step does
 *   u:   (cur u(n),   prev u(n+1)) -> (cur u(n-1), prev u(n))     as wave_step_reverse does
 *   ACC (when not NULL) += u(n+1) q(n+1), u(n+1)^2, q(n+1)^2 over the image box B
 *
 * The imaging condition takes the levels BEFORE the steps (u's prev, which u's update
 * reads and overwrites, and q's cur, the centre of q's stencil): they are complete (q's
 * receiver injection, u's source injection and boundary strip went in after the previous
 * step), so the caller keeps its injections and strip loads after each step as before
 * and images level n + 1 during the steps to level n.  The steps are the separate
 * kernels' arithmetic, so the wavefields, and with the caller imaging the same levels in
 * the same order the image, are bit for bit those of the separate passes on the CPU
 * (tests/test_rtm_fused.c); the CUDA kernel holds the CPU reference to 1e-5
 * (tests/gpu/test_gpu_rtm_fused.c).
 *
 * What it needs (wave_fused_create says which is missing): both simulations on one
 * device, the same layout, derivative weights and explicit operator (not implicit); on
 * CUDA the tiled ring kernel in its default shape for both and q's CPML in the lines
 * arrangement (the defaults), and both on one stream at every fused step (the image
 * step below steps q alone, u may be on another stream).
 *
 * On the H100 the fused step is slower than the separate passes (docs/rtm.md): RTM keeps
 * the separate passes by default (rtm_tuning.backward). */
#ifndef SEISLIVE_RTM_FUSED_H
#define SEISLIVE_RTM_FUSED_H

#include "kernels/imaging.h"
#include "kernels/wave_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wave_fused;

/* The fused step of receiver simulation Q and source simulation U, both owned by the
 * caller (they must outlive it).  VARIANT: the CUDA kernel's shape, 0 the default
 * (seislive-bench rtm --fused-variant; ignored on the CPU).  -ENOTSUP with the reason
 * when the pair cannot be fused. */
int wave_fused_create(struct wave_sim *q, struct wave_sim *u, int variant, struct wave_fused **out);
void wave_fused_destroy(struct wave_fused *f);

/* One fused step (see above); ACC NULL: no imaging this step.  B: the image box, the
 * same in both simulations.  CUDA: queued on the simulations' stream. */
int wave_fused_step(struct wave_fused *f, const struct imaging_box *b, const struct imaging_acc *acc);

/* Half of it: q's step with the imaging condition in it, u not stepped (the caller steps
 * u itself, e.g. on its own stream beside q's CPML kernels):
 *   q:   (cur q(n+1), prev q(n+2)) -> (cur q(n), prev q(n+1))   as wave_step does
 *   ACC (when not NULL) += u's prev q(n+1), ... over the image box B
 * CUDA: on q's stream; EV (a cudaEvent_t, or NULL) is recorded there right after the
 * kernel that reads u's prev, before q's CPML kernels, so that u's next step (which
 * overwrites u's prev) can wait for it alone.  u's prev must be complete on q's stream
 * (the caller's event).  CPU: the separate passes' own calls (imaging, then wave_step). */
int wave_fused_image_step(struct wave_fused *f, const struct imaging_box *b, const struct imaging_acc *acc,
                          void *ev);

/* The CUDA variants wave_fused_create accepts: 0 .. WAVE_FUSED_VARIANTS - 1. */
#define WAVE_FUSED_VARIANTS 4

#ifdef SEISLIVE_CUDA
/* kernels/rtm_fused.cu: what the CUDA side needs of the pair (plans, velocities),
 * checked once; the step. */
struct wave_fused_cu;
/* VDIFF: the cells where u's velocity is not q's, inside the interior and in the layers
 * (the kernel reads u's own only where it differs) */
int wave_cu_fused_create(struct wave_sim *q, struct wave_sim *u, int variant, struct wave_fused_cu **out,
                         unsigned vdiff[2]);
void wave_cu_fused_destroy(struct wave_fused_cu *f);
int wave_cu_fused_step(struct wave_fused_cu *f, const struct imaging_box *b, const struct imaging_acc *acc);
int wave_cu_fused_image_step(struct wave_fused_cu *f, const struct imaging_box *b, const struct imaging_acc *acc,
                             void *ev);
#endif

#ifdef __cplusplus
}
#endif

#endif
