/* wave_support — helpers shared by the propagator tests (test_wave_*.c, test_tti.c,
 * test_subdomain.c): the CPU device, constant models, a forward run's traces, error
 * measures, and the checkpoint and time-reversal runs that the 3D and 2D tests both make.
 * The helpers assert with Criterion, as the tests' own code did. */
#ifndef SEISLIVE_TEST_WAVE_SUPPORT_H
#define SEISLIVE_TEST_WAVE_SUPPORT_H

#include <stddef.h>

#include "kernels/backend.h"
#include "kernels/wave.h"

/* The CPU device (asserts that it is there). */
struct sl_device test_cpu(void);

/* N floats, all V (malloc'd). */
float *test_constant(size_t n, float v);
/* A grid of N[0] x N[1] x N[2] cells, all V (malloc'd). */
float *test_constant_grid(const int n[3], float v);

/* Forward run on DEV: a Ricker of peak FP at SRC, NREC receivers at REC (INTERP: a
 * WAVE_INTERP_*); TR[r * (nt+1) + it] is the trace of receiver r at time it dt
 * (TR[.., 0] = 0). */
void test_wave_traces(const struct sl_device *dev, const struct wave_params *p, const float *v,
                      const double src[3], const double *rec, size_t nrec, int nt, double fp, int interp,
                      float *tr);

/* Order convergence against REF, the analytic trace (NT + 1 samples) of a receiver at
 * REC, distance R from the source at SRC: the traces of orders 2, 4 and 8 (each asserted
 * under the stability limit for velocity C); asserts the 8th order within 1 % and each
 * order better than the one before.  LABEL starts the log lines.  Leaves P's order at 8. */
void test_wave_order_convergence(const struct sl_device *dev, struct wave_params *p, const float *v,
                                 const double src[3], const double rec[3], int nt, double fp, double c,
                                 const double *ref, double r, const char *label);

/* Relative L2 difference ||a - b|| / ||b|| of a float trace against a double reference. */
double test_rel_l2_f32_f64(const float *a, const double *b, int n);

/* A trace against the same trace in a much larger domain: 10 log10 of the energy of the
 * difference over that of REF (the reflection in dB); *DEN gets the energy of REF. */
double test_reflection_db(const float *trial, const float *ref, size_t n, double *den);

/* Checkpoints: run S to step TOTAL (a Ricker of peak FP into PS each step), saving the
 * state after step SAVED; restore it, run the rest again, and assert that the final
 * fields (NN cells) are the same bit for bit and not zero. */
void test_wave_checkpoint_replays(struct wave_sim *s, struct wave_points *ps, double dt, double fp, size_t nn,
                                  int saved, int total);

/* Boundary strategy, forward: NT steps injecting SRC_T[it] into PS, the strip after step
 * it + 1 saved at STRIPS + (it + 1) NS, the field after step M copied to SNAP. */
void test_wave_forward_strips(struct wave_sim *s, struct wave_points *ps, const float *src_t, int nt, int m,
                              float *strips, size_t ns, float *snap);
/* Backward from the swapped last two levels down to step M: each reverse step
 * re-injects the source and loads the strip the forward run saved. */
void test_wave_back_strips(struct wave_sim *s, struct wave_points *ps, const float *src_t, int nt, int m,
                           const float *strips, size_t ns);

#endif
