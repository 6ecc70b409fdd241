/* cuda_check — every CUDA call and launch is checked, and a failure becomes an error
 * with the call's text, the CUDA error name and file:line (err_msg()).
 *
 *   CUDA_TRY(cudaMalloc(&p, n));        // returns -EIO from the enclosing function
 *   kernel<<<g, b, 0, s>>>(...); CUDA_TRY_LAUNCH();
 *
 * Include only from .cu files. */
#ifndef SEISLIVE_CUDA_CHECK_H
#define SEISLIVE_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <errno.h>

#include "stream/error.h"

#define CUDA_ERR(call_text, e)                                                              \
    err_set(-EIO, "CUDA %s failed: %s (%s) at %s:%d", call_text, cudaGetErrorName(e),         \
            cudaGetErrorString(e), __FILE__, __LINE__)

#define CUDA_TRY(call)                                                                       \
    do {                                                                                     \
        cudaError_t cuda_try_e_ = (call);                                                    \
        if (cuda_try_e_ != cudaSuccess)                                                      \
            return CUDA_ERR(#call, cuda_try_e_);                                             \
    } while (0)

/* After a launch: configuration errors show at once; execution errors at the next sync. */
#define CUDA_TRY_LAUNCH() CUDA_TRY(cudaGetLastError())

/* For cleanup paths that cannot return: record the first failure, keep going. */
#define CUDA_CHECK_INTO(rc, call)                                                            \
    do {                                                                                     \
        cudaError_t cuda_try_e_ = (call);                                                    \
        if (cuda_try_e_ != cudaSuccess && (rc) == 0)                                         \
            (rc) = CUDA_ERR(#call, cuda_try_e_);                                             \
    } while (0)

#endif
