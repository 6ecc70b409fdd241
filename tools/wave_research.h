/* wave_research — the propagator's research kernel variants (tools/wave_research.cu,
 * CUDA builds only): seislive-bench and gpu-tests call wave_research_register() once,
 * before creating simulations, so that a tuning naming such a variant runs instead of
 * being refused.  Other programs do not link them. */
#ifndef SEISLIVE_WAVE_RESEARCH_H
#define SEISLIVE_WAVE_RESEARCH_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef SEISLIVE_CUDA
int wave_research_register(void);
/* The ring CPML's frame and z-layer kernel shapes at order 8, "FRAME/ZLAYER" with each
 * BYxNYdD (thread rows x rows per thread, planes in flight), e.g. "8x2d2/8x1d2", or ZLAYER
 * "lines": the frame kernel over every plane, then lines' z corrections, and a "bN" suffix
 * for a kernel built for N resident blocks per SM (e.g. "8x1d2b3/8x1d1b3"); NULL or
 * "default": the library's (8x2d2/lines).  0, or -EINVAL naming the shapes held. */
int wave_research_ring_shape(const char *spec);
#endif

#ifdef __cplusplus
}
#endif

#endif
