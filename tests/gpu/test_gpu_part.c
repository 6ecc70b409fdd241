/* A step in two parts on the GPU (kernels/wave_part.cu; kernels/wave.h: wave_step_part):
 * the cut slabs, then the rest, equals bit for bit a whole wave_step of the split CPML
 * arrangement (tuning.cpml = split) -- the full state: both levels over the allocated
 * arrays, the CPML memory -- for subdomains cut along z (both sides), along y under a
 * free surface (the y slab holds surface cells: each part mirrors its own before its
 * source node is injected) and in 2D, orders 4, 8, 16; and the default one (ring, or lines where ring does not run) within
 * 1e-5.  The halo planes packed on a stream into device memory after the first part
 * (wave_halo_pack_async) are the whole step's, and unpacking from device memory
 * (wave_halo_unpack_async) equals the host path.  tests/test_prop_part.c proves the CPU
 * parts equal the CPU step. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/device.h"
#include "kernels/stability.h"
#include "kernels/wave.h"
#include "stream/error.h"
#include "tests/gpu/gpu_support.h"

enum { C = WAVE_FACE_CPML, F = WAVE_FACE_FREE, N = WAVE_FACE_NONE, H = WAVE_FACE_HALO };

static struct wave_params sub_params(int order, const int kind[6])
{
    const bool two_d = kind[2] == N;
    const int whole[3] = {40, two_d ? 1 : 34, 38};
    struct wave_params p = {.d = {10, 12, 9}, .order = order, .pml_reflection = 1e-4, .f_ref = 12, .vmax_cpml = 2600};
    const int width[6] = {6, 7, 5, 8, 6, 7};
    for (int a = 0; a < 3; a++)
        p.n[a] = p.global_n[a] = whole[a];
    for (int f = 0; f < 6; f++) {
        p.face[f] = kind[f];
        p.pml[f] = kind[f] == C || kind[f] == H ? width[f] : 0;
        if (kind[f] == H) {
            p.n[f / 2] -= 9;
            if (f % 2 == 0)
                p.origin[f / 2] = 9;
        }
    }
    for (int a = 0; a < 3; a++)
        p.o[a] = p.origin[a] * p.d[a];
    p.free_surface = kind[4] == F;
    p.dt = 0.8 * stability_dt_max(order, p.d, 2600);
    return p;
}

static char *state(struct wave_sim *s)
{
    char *b = malloc(wave_state_bytes(s));
    cr_assert_eq(wave_state_save(s, b, false), 0, "%s", err_msg());
    return b;
}

static void run_case(int order, const int kind[6], const char *what)
{
    struct sl_device gpu;
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct wave_params p = sub_params(order, kind);
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v), *init = malloc(nn * sizeof *init);
    srand(order);
    for (size_t i = 0; i < nn; i++) {
        v[i] = 1800.0f + 800.0f * (float)rand() / RAND_MAX;
        init[i] = (float)rand() / RAND_MAX - 0.5f;
    }
    struct wave_params ps = p, pl = p;
    ps.tuning.cpml = 1; /* split: the arrangement the parts run */
    struct wave_sim *a, *b, *l;
    cr_assert_eq(wave_create(&gpu, &ps, v, &a), 0, "%s", err_msg());
    cr_assert_eq(wave_create(&gpu, &p, v, &b), 0, "%s", err_msg());
    cr_assert_eq(wave_create(&gpu, &pl, v, &l), 0, "%s", err_msg());
    struct wave_sim *all[3] = {a, b, l};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(wave_copy_in(all[i], false, init), 0);
        cr_assert_eq(wave_copy_in(all[i], true, init), 0);
    }
    /* a source node in the first cut slab; 2 planes under a free surface */
    int node[3];
    for (int ax = 0; ax < 3; ax++)
        node[ax] = kind[2 * ax] == H ? 0 : kind[2 * ax + 1] == H ? p.n[ax] - 1 : p.n[ax] / 2;
    if (kind[4] == F)
        node[2] = 2;
    if (kind[2] == N)
        node[1] = 0;
    bool slab = false; /* B injects right after the part that computes the node */
    for (int ax = 0; ax < 3; ax++)
        slab = slab || (kind[2 * ax] == H && node[ax] < order / 2) ||
               (kind[2 * ax + 1] == H && node[ax] >= p.n[ax] - order / 2);
    double src[3];
    for (int ax = 0; ax < 3; ax++)
        src[ax] = p.o[ax] + node[ax] * p.d[ax];
    struct wave_points *pts[3];
    for (int i = 0; i < 3; i++)
        cr_assert_eq(wave_points_create(all[i], src, 1, WAVE_INTERP_NEAREST, &pts[i]), 0, "%s", err_msg());
    size_t most = 0;
    for (int f = 0; f < 6; f++)
        most = wave_halo_count(a, f) > most ? wave_halo_count(a, f) : most;
    cr_assert_gt(most, 0);
    float *nb = malloc(most * sizeof *nb), *ha = malloc(most * sizeof *ha), *hb = malloc(most * sizeof *hb);
    float *dbuf = NULL;
    cr_assert_eq(dev_alloc(&gpu, most * sizeof *dbuf, (void **)&dbuf), 0);
    void *st = NULL;
    cr_assert_eq(dev_stream_create(&gpu, &st), 0);
    for (int it = 0; it < 12; it++) {
        float amp = (float)(it % 4) - 1.5f;
        cr_assert_eq(wave_step(a), 0, "%s", err_msg());
        cr_assert_eq(wave_step(l), 0, "%s", err_msg());
        cr_assert_eq(wave_step_part(b, WAVE_PART_CUT), 0, "%s %d: %s", what, order, err_msg());
        cr_assert_eq(wave_sync(b), 0);
        for (int f = 0; f < 6; f++) {
            size_t c = wave_halo_count(a, f);
            if (!c)
                continue;
            cr_assert_eq(wave_halo_pack(a, f, ha), 0);
            cr_assert_eq(wave_halo_pack_async(b, f, dbuf, st), 0, "%s", err_msg());
            cr_assert_eq(dev_stream_sync(&gpu, st), 0);
            cr_assert_eq(dev_copy(&gpu, hb, dbuf, c * sizeof *hb, DEV_D2H, NULL), 0);
            cr_assert(!memcmp(ha, hb, c * sizeof *ha), "%s order %d step %d: face %d's planes after the cut slabs "
                      "are not the whole step's", what, order, it, f);
        }
        if (slab)
            cr_assert_eq(wave_inject(b, pts[1], &amp, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        cr_assert_eq(wave_step_part(b, WAVE_PART_REST), 0, "%s", err_msg());
        if (!slab)
            cr_assert_eq(wave_inject(b, pts[1], &amp, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        cr_assert_eq(wave_inject(a, pts[0], &amp, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        cr_assert_eq(wave_inject(l, pts[2], &amp, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        for (int f = 0; f < 6; f++) {
            size_t c = wave_halo_count(a, f);
            if (!c)
                continue;
            for (size_t i = 0; i < c; i++)
                nb[i] = (float)rand() / RAND_MAX - 0.5f;
            cr_assert_eq(wave_halo_unpack(a, f, nb), 0);
            cr_assert_eq(wave_halo_unpack(l, f, nb), 0);
            cr_assert_eq(dev_copy(&gpu, dbuf, nb, c * sizeof *nb, DEV_H2D, NULL), 0);
            cr_assert_eq(wave_halo_unpack_async(b, f, dbuf, st), 0);
            cr_assert_eq(dev_stream_sync(&gpu, st), 0);
        }
    }
    char *sa = state(a), *sb = state(b);
    size_t bytes = wave_state_bytes(a);
    cr_assert(!memcmp(sa, sb, bytes), "%s order %d: the parts differ from the split arrangement's step", what, order);
    /* against the default arrangement: the interior fields within 1e-5 */
    float *fa = malloc(nn * sizeof *fa), *fl = malloc(nn * sizeof *fl);
    cr_assert_eq(wave_copy_out(b, false, fa), 0);
    cr_assert_eq(wave_copy_out(l, false, fl), 0);
    double num = 0, den = 0;
    for (size_t i = 0; i < nn; i++) {
        num += ((double)fa[i] - fl[i]) * ((double)fa[i] - fl[i]);
        den += (double)fl[i] * fl[i];
    }
    cr_assert_gt(den, 0);
    cr_assert_lt(sqrt(num / den), 1e-5, "%s order %d: parts vs the default arrangement %g", what, order,
                 sqrt(num / den));
    fprintf(stderr, "gpu part %s order %d: bitwise the split step; %.2e from the default one\n", what, order,
            sqrt(num / den));
    free(fa);
    free(fl);
    free(sa);
    free(sb);
    free(nb);
    free(ha);
    free(hb);
    free(v);
    free(init);
    dev_free(&gpu, dbuf);
    dev_stream_destroy(&gpu, st);
    for (int i = 0; i < 3; i++) {
        wave_points_destroy(pts[i]);
        wave_destroy(all[i]);
    }
}

static void orders(const int kind[6], const char *what)
{
    const int o[3] = {4, 8, 16};
    for (int i = 0; i < 3; i++)
        run_case(o[i], kind, what);
}

Test(gpu_part, z_cuts_cpml, .timeout = 120)
{
    GPU_REQUIRED();
    orders((const int[6]){C, C, C, C, H, H}, "z cuts");
}

Test(gpu_part, y_cut_free_surface, .timeout = 120)
{
    GPU_REQUIRED();
    orders((const int[6]){C, C, H, C, F, C}, "y cut, free surface");
}

Test(gpu_part, two_d_z_cut, .timeout = 120)
{
    GPU_REQUIRED();
    orders((const int[6]){C, C, N, N, F, H}, "2D, z cut");
}

/* bf16 CPML memory is the lines kernels' alone: the GPU step in parts (split kernels, fp32
 * memory) refuses it rather than read bf16 as fp32, and the propagator says it has no step
 * in parts there, so the decomposed model job steps whole and exchanges after. */
Test(gpu_part, bf16_cpml_memory_refused, .timeout = 60)
{
    GPU_REQUIRED();
    struct sl_device gpu;
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct wave_params p = sub_params(8, (const int[6]){C, C, C, C, H, H});
    p.cpml_memory = WAVE_CPML_MEM_BF16;
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    for (size_t i = 0; i < nn; i++)
        v[i] = 2000.0f;
    struct wave_sim *s;
    cr_assert_eq(wave_create(&gpu, &p, v, &s), 0, "%s", err_msg());
    int rc = wave_step_part(s, WAVE_PART_CUT);
    cr_assert_eq(rc, -ENOTSUP, "bf16 memory in parts on the GPU: rc %d (%s)", rc, err_msg());
    cr_assert_not_null(strstr(err_msg(), "bf16"), "%s", err_msg());
    cr_assert_eq(wave_step(s), 0, "the whole step still runs: %s", err_msg());
    wave_destroy(s);
    free(v);
}
