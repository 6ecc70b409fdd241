#ifndef SEISLIVE_GPU_SUPPORT_H
#define SEISLIVE_GPU_SUPPORT_H

#include <criterion/criterion.h>

#include "kernels/backend.h"

/* Skip the calling test, with the reason, when no CUDA device is usable. */
#define GPU_REQUIRED()                                                                     \
    do {                                                                                   \
        char gpu_why_[256] = "";                                                           \
        if (backend_cuda_count(gpu_why_, sizeof gpu_why_) <= 0)                            \
            cr_skip_test("no CUDA device: %s", gpu_why_);                                  \
    } while (0)

#endif
