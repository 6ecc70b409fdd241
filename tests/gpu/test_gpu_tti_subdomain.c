/* A TTI subdomain on the GPU: refused at create with the reason (the CUDA kernels have no
 * exchange of the pass-1 products inside the step yet; kernels/tti_internal.h), while the
 * same grid without the HALO face is created; the CPU creates the subdomain. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/propagator.h"
#include "stream/error.h"
#include "tests/gpu/gpu_support.h"

Test(gpu_tti_subdomain, halo_faces_refused_on_the_gpu, .timeout = 60)
{
    GPU_REQUIRED();
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    const int n[3] = {16, 12, 10};
    const double d[3] = {10, 10, 10}, o[3] = {0, 0, 0};
    struct prop_params p;
    prop_params_init(&p, n, d, o, 1e-3, 4);
    p.physics = PROP_TTI;
    static float v[16 * 12 * 10];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        v[i] = 2000.0f;
    struct prop_model m = {.vp = v, .epsilon0 = 0.2, .delta0 = 0.1, .theta0 = 0.5};
    struct prop *s = NULL;
    cr_assert_eq(prop_create(&gpu, &p, &m, &s), 0, "%s", err_msg());
    prop_destroy(s);
    /* the low z half of a grid of 20 planes */
    p.grid.face[5] = PROP_FACE_HALO;
    p.grid.global_n[0] = 16;
    p.grid.global_n[1] = 12;
    p.grid.global_n[2] = 20;
    p.vmax_cpml = 2600;
    cr_assert_eq(prop_create(&gpu, &p, &m, &s), -ENOTSUP);
    cr_assert_not_null(strstr(err_msg(), "CPU only"), "%s", err_msg());
    cr_assert_eq(prop_create(&cpu, &p, &m, &s), 0, "%s", err_msg());
    cr_assert_gt(prop_halo_count(s, 5), 0);
    prop_destroy(s);
}
