#ifndef SEISLIVE_GPU_SUPPORT_H
#define SEISLIVE_GPU_SUPPORT_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"

/* True when SEISLIVE_REQUIRE_GPU is set to anything but "" or "0" (tools/gpu-run.sh and
 * `make test-gpu` set it): on the GPU machine a missing device is a broken driver or
 * a lost GPU, and 16 skipped tests must not read as a green run. */
static inline int gpu_required_by_env(void)
{
    const char *e = getenv("SEISLIVE_REQUIRE_GPU");
    return e && *e && strcmp(e, "0") != 0;
}

/* Skip the calling test, with the reason, when no CUDA device is usable; fail it
 * instead when SEISLIVE_REQUIRE_GPU says a device must be there. */
#define GPU_REQUIRED()                                                                     \
    do {                                                                                   \
        char gpu_why_[256] = "";                                                           \
        if (backend_cuda_count(gpu_why_, sizeof gpu_why_) <= 0) {                          \
            if (gpu_required_by_env())                                                     \
                cr_assert_fail("no CUDA device, and SEISLIVE_REQUIRE_GPU=%s asks for one: %s", \
                               getenv("SEISLIVE_REQUIRE_GPU"), gpu_why_);                 \
            cr_skip_test("no CUDA device: %s", gpu_why_);                                  \
        }                                                                                  \
    } while (0)

#endif
