/* [propagator] operator = "optimized" on the GPU against the CPU reference: the CUDA
 * kernels read the same weights from the simulation (kernels/wave.c create: s->c2, s->c1,
 * copied into every launch's arguments, kernels/wave_cuda.h), so nothing in them changes;
 * this checks that it stays so.  Random interior fields at both time levels, a source
 * injected every step, 60 steps, CPML on five faces and the free surface on top, 3D and
 * 2D, orders 4, 8 and 16, the naive and tiled interior kernels:
 * ||gpu - cpu|| / ||cpu|| < 1e-5 over the interior, and the optimized run differs from
 * the Taylor one (the weights did reach the GPU). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/backend.h"
#include "kernels/propagator.h"
#include "kernels/stability.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/gpu/gpu_support.h"

static void run(const struct sl_device *dev, const struct wave_params *p, const float *v, const float *init,
                float *out)
{
    struct wave_sim *s;
    cr_assert_eq(wave_create(dev, p, v, &s), 0, "%s", err_msg());
    cr_assert_eq(wave_copy_in(s, false, init), 0, "%s", err_msg());
    cr_assert_eq(wave_copy_in(s, true, init), 0, "%s", err_msg());
    const double src[3] = {p->n[0] * p->d[0] * 0.4, p->n[1] > 1 ? p->n[1] * p->d[1] * 0.5 : 0,
                           p->n[2] * p->d[2] * 0.3};
    struct wave_points *ps;
    cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
    for (int it = 0; it < 60; it++) {
        cr_assert_eq(wave_step(s), 0, "%s", err_msg());
        float a = (float)wavelet_ricker(it * p->dt, 15, wavelet_ricker_delay(15));
        cr_assert_eq(wave_inject(s, ps, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0, "%s", err_msg());
    }
    cr_assert_eq(wave_copy_out(s, false, out), 0, "%s", err_msg());
    wave_points_destroy(ps);
    wave_destroy(s);
}

static double rel(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]))
            return INFINITY;
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return sqrt(num / den);
}

Test(gpu_operator, optimized_cuda_matches_cpu, .timeout = 300)
{
    GPU_REQUIRED();
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    const int orders[3] = {4, 8, 16}, kernels[2] = {WAVE_KERNEL_NAIVE, WAVE_KERNEL_TILED};
    for (int two_d = 0; two_d < 2; two_d++)
        for (int oi = 0; oi < 3; oi++)
            for (int ki = 0; ki < 2; ki++) {
                struct wave_params p = {.n = {45, two_d ? 1 : 37, 41}, .d = {10, 12, 9}, .order = orders[oi],
                                        .op = PROP_OP_OPTIMIZED, .kernel = kernels[ki],
                                        .pml = {8, 7, two_d ? 0 : 6, two_d ? 0 : 9, 0, 8}, .pml_reflection = 1e-4,
                                        .f_ref = 15, .free_surface = true};
                if (two_d)
                    p.face[2] = p.face[3] = WAVE_FACE_NONE;
                p.dt = 0.8 * stability_dt_max_op(PROP_OP_OPTIMIZED, p.order, 0, p.d, 3000, two_d);
                size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
                float *v = malloc(nn * sizeof *v), *init = malloc(nn * sizeof *init);
                float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *t = malloc(nn * sizeof *t);
                srand(11 + oi);
                for (size_t i = 0; i < nn; i++) {
                    v[i] = 1500.0f + 1500.0f * (float)rand() / RAND_MAX;
                    init[i] = (float)rand() / RAND_MAX - 0.5f;
                }
                run(&cpu, &p, v, init, a);
                run(&gpu, &p, v, init, b);
                double e = rel(b, a, nn);
                p.op = PROP_OP_TAYLOR;
                run(&cpu, &p, v, init, t);
                double d = rel(t, a, nn);
                fprintf(stderr, "gpu optimized %s order %2d %s: rel L2 gpu vs cpu %.3g (optimized vs taylor %.3g)\n",
                        two_d ? "2D" : "3D", orders[oi], ki ? "tiled" : "naive", e, d);
                cr_expect_lt(e, 1e-5, "%s order %d %s: %g", two_d ? "2D" : "3D", orders[oi], ki ? "tiled" : "naive",
                             e);
                cr_expect_gt(d, 1e-3, "the optimized weights changed nothing (%g)", d);
                free(v), free(init), free(a), free(b), free(t);
            }
}
