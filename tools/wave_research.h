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
#endif

#ifdef __cplusplus
}
#endif

#endif
