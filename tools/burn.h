/* burn — the synthetic unit of GPU work of the pipeline benchmark (tools/bench_pipeline.c)
 * and the runtime's GPU test (tests/gpu/test_gpu_pipeline.c): not part of the library.
 * tools/burn.cu is linked into seislive-bench only, and into gpu-tests through
 * tests/gpu/burn.cu (which includes it: one kernel text). */
#ifndef SEISLIVE_BURN_H
#define SEISLIVE_BURN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef SEISLIVE_CUDA
/* ACC[i] += sum over PASSES of a damped recurrence on DATA[i] (device pointers), queued
 * on STREAM (a cudaStream_t): memory-bound at a few passes, compute-bound at many, the
 * cost PASSES x N FMAs: y = fmaf(y, 0.999f, x * x) PASSES times from y = 0, then
 * acc += y (the GPU test recomputes it on the host).  Returns 0 or -EIO with err_msg(). */
int burn_run(float *acc, const float *data, size_t n, int passes, void *stream);
#endif

#ifdef __cplusplus
}
#endif

#endif
