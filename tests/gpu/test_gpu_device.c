/* GPU tests run only where a CUDA device is usable (make test-gpu on the GPU machine);
 * elsewhere each skips with the reason the backend gives, or fails with it when
 * SEISLIVE_REQUIRE_GPU=1 (tools/gpu-run.sh) says the device must be there. */
#include <criterion/criterion.h>
#include <string.h>

#include "kernels/backend.h"
#include "stream/error.h"
#include "tests/gpu/gpu_support.h"

Test(gpu_device, auto_picks_the_gpu)
{
    GPU_REQUIRED();
    struct sl_device d;
    cr_assert_eq(backend_select("auto", &d), 0, "%s", err_msg());
    cr_assert_eq(d.kind, SL_DEVICE_CUDA);
    cr_assert_geq(d.cc_major, 8);
    cr_assert_gt(d.mem_free, 0);
    cr_assert_eq(backend_select("cuda:0", &d), 0, "%s", err_msg());
    cr_assert_eq(backend_mem_info(&d), 0);
}
