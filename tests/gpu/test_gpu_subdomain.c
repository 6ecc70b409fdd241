/* Subdomains on the GPU: two halves of a 3D grid (CPML, free surface on top) on the
 * device, stepped side by side with the halo planes copied by hand through host buffers
 * (wave_halo_pack / wave_halo_unpack: strided device copies), against the CPU reference
 * of the whole grid: ||gpu half - cpu whole|| / ||cpu whole|| < 1e-5 over each half's
 * interior, cuts along x and z, orders 4, 8 and 16, a source injected near the cut.
 * tests/test_subdomain.c proves the CPU halves equal the CPU whole bit for bit. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/random_boundary.h"
#include "kernels/stability.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/gpu/gpu_support.h"

static float *part(const struct wave_params *p, const int n[3], const int origin[3], const float *v)
{
    float *o = malloc((size_t)n[0] * n[1] * n[2] * sizeof *o);
    for (int k = 0; k < n[2]; k++)
        for (int j = 0; j < n[1]; j++)
            memcpy(o + ((size_t)k * n[1] + j) * n[0],
                   v + ((size_t)(k + origin[2]) * p->n[1] + j + origin[1]) * p->n[0] + origin[0], n[0] * sizeof *o);
    return o;
}

/* RANDOM: Clapp's random layers (randomized in each grid's frame) instead of CPML. */
static void split_case(int order, int ax, bool random)
{
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct wave_params p = {.n = {37, 29, 33}, .d = {10, 12, 9}, .o = {0, 0, 0}, .order = order,
                            .pml = {7, 9, 8, 6, 0, 5}, .pml_reflection = 1e-4, .f_ref = 12,
                            .face = {WAVE_FACE_CPML, WAVE_FACE_CPML, WAVE_FACE_CPML, WAVE_FACE_CPML, WAVE_FACE_FREE,
                                     WAVE_FACE_CPML}};
    p.dt = 0.8 * stability_dt_max(order, p.d, 3000);
    if (random)
        for (int f = 0; f < 6; f++)
            if (p.face[f] == WAVE_FACE_CPML)
                p.face[f] = WAVE_FACE_RANDOM;
    struct random_boundary rb = {.ramp = RB_RAMP_LINEAR, .range = RB_RANGE_FULL, .width = 5, .seed = 42,
                                 .vstable = random_boundary_vstable(order, p.dt, p.d), .vmin = 1500};
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v), *init = malloc(nn * sizeof *init);
    srand(order + 10 * ax);
    float vmax = 0;
    for (size_t i = 0; i < nn; i++) {
        v[i] = 1500.0f + 1500.0f * (float)rand() / RAND_MAX;
        vmax = v[i] > vmax ? v[i] : vmax;
        init[i] = (float)rand() / RAND_MAX - 0.5f;
    }
    struct wave_sim *whole, *half[2];
    cr_assert_eq(wave_create(&cpu, &p, v, &whole), 0, "%s", err_msg());
    if (random)
        cr_assert_eq(wave_randomize_layers(whole, &rb, 7), 0, "%s", err_msg());
    cr_assert_eq(wave_copy_in(whole, false, init), 0);
    cr_assert_eq(wave_copy_in(whole, true, init), 0);
    const int cut = p.n[ax] / 2;
    struct wave_params hp[2];
    for (int h = 0; h < 2; h++) {
        hp[h] = p;
        for (int a = 0; a < 3; a++)
            hp[h].global_n[a] = p.n[a];
        hp[h].n[ax] = h ? p.n[ax] - cut : cut;
        hp[h].origin[ax] = h ? cut : 0;
        hp[h].o[ax] = hp[h].origin[ax] * p.d[ax];
        hp[h].face[2 * ax + !h] = WAVE_FACE_HALO;
        hp[h].vmax_cpml = vmax;
        float *sv = part(&p, hp[h].n, hp[h].origin, v), *si = part(&p, hp[h].n, hp[h].origin, init);
        cr_assert_eq(wave_create(&gpu, &hp[h], sv, &half[h]), 0, "%s", err_msg());
        if (random)
            cr_assert_eq(wave_randomize_layers(half[h], &rb, 7), 0, "%s", err_msg());
        cr_assert_eq(wave_copy_in(half[h], false, si), 0, "%s", err_msg());
        cr_assert_eq(wave_copy_in(half[h], true, si), 0, "%s", err_msg());
        free(sv);
        free(si);
    }
    size_t nh = wave_halo_count(half[0], 2 * ax + 1);
    cr_assert_gt(nh, 0);
    cr_assert_eq(nh, wave_halo_count(half[1], 2 * ax));
    float *buf = malloc(nh * sizeof *buf);
    double xyz[3] = {181.3, 170.7, 150.2};
    xyz[ax] = (cut - 5.3) * p.d[ax];
    struct wave_points *pw, *ph;
    cr_assert_eq(wave_points_create(whole, xyz, 1, WAVE_INTERP_SINC, &pw), 0, "%s", err_msg());
    cr_assert_eq(wave_points_create(half[0], xyz, 1, WAVE_INTERP_SINC, &ph), 0, "%s", err_msg());
    for (int it = 0; it < 60; it++) {
        /* the halves' current planes into each other's halo, then step */
        cr_assert_eq(wave_halo_pack(half[0], 2 * ax + 1, buf), 0, "%s", err_msg());
        cr_assert_eq(wave_halo_unpack(half[1], 2 * ax, buf), 0, "%s", err_msg());
        cr_assert_eq(wave_halo_pack(half[1], 2 * ax, buf), 0, "%s", err_msg());
        cr_assert_eq(wave_halo_unpack(half[0], 2 * ax + 1, buf), 0, "%s", err_msg());
        float a = (float)(100.0 * wavelet_ricker(it * p.dt, 25, wavelet_ricker_delay(25)));
        cr_assert_eq(wave_step(whole), 0);
        cr_assert_eq(wave_inject(whole, pw, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        for (int h = 0; h < 2; h++)
            cr_assert_eq(wave_step(half[h]), 0, "%s", err_msg());
        cr_assert_eq(wave_inject(half[0], ph, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0, "%s", err_msg());
    }
    float *fw = malloc(nn * sizeof *fw), *fh = malloc(nn * sizeof *fh);
    cr_assert_eq(wave_copy_out(whole, false, fw), 0);
    for (int h = 0; h < 2; h++) {
        cr_assert_eq(wave_copy_out(half[h], false, fh), 0, "%s", err_msg());
        float *want = part(&p, hp[h].n, hp[h].origin, fw);
        size_t m = (size_t)hp[h].n[0] * hp[h].n[1] * hp[h].n[2];
        double num = 0, den = 0;
        for (size_t i = 0; i < m; i++) {
            double d = (double)fh[i] - want[i];
            num += isnan(fh[i]) ? INFINITY : d * d;
            den += (double)want[i] * want[i];
        }
        double e = sqrt(num / den);
        fprintf(stderr, "gpu subdomain: order %d cut along %c half %d%s: rel %.3g vs the CPU whole grid\n", order,
                "xyz"[ax], h, random ? " (random layers)" : "", e);
        cr_assert_gt(den, 0);
        cr_assert_lt(e, 1e-5, "order %d cut along %c half %d: rel %g", order, "xyz"[ax], h, e);
        free(want);
    }
    wave_points_destroy(pw);
    wave_points_destroy(ph);
    wave_destroy(whole);
    wave_destroy(half[0]);
    wave_destroy(half[1]);
    free(buf);
    free(fw);
    free(fh);
    free(v);
    free(init);
}

Test(gpu_subdomain, halves_with_halo_exchange_match_cpu_whole, .timeout = 300)
{
    GPU_REQUIRED();
    const int orders[3] = {4, 8, 16};
    for (int k = 0; k < 3; k++) {
        split_case(orders[k], 0, false);
        split_case(orders[k], 2, false);
    }
}

/* The same with random layers: each half draws its layers on the device in the whole
 * grid's frame, so they equal the CPU whole grid's. */
Test(gpu_subdomain, halves_with_random_layers_match_cpu_whole, .timeout = 300)
{
    GPU_REQUIRED();
    split_case(8, 0, true);
    split_case(8, 2, true);
}
