/* The bf16 storage of the CPML memory (wave_params.cpml_memory = BF16) on the CPU
 * reference: the rounding is bfloat16's round to nearest even (checked on hand-made
 * values, against the bits IEEE gives), the fp32 reference is untouched by the option,
 * the layers still absorb >= 40 dB on every face (the reflection measurement of
 * tests/test_wave_physics.c) and the traces differ from the fp32 memory's by less than
 * the fp32 layers' own reflection (the storage's error is below the absorber's); the
 * implicit operator refuses it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpml.h"
#include "kernels/propagator.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/wave_support.h"

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

Test(cpml_memory, bf16_rounds_to_nearest_even)
{
    /* exact values stay */
    cr_assert_eq(cpml_bf16_of(1.0f), 0x3f80);
    cr_assert_eq(cpml_bf16_of(-2.0f), 0xc000);
    cr_assert_eq(cpml_bf16_of(0.0f), 0x0000);
    cr_assert_eq(cpml_bf16_of(-0.0f), 0x8000);
    /* 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to the even one, 1 */
    cr_assert_eq(cpml_bf16_of(from_bits(0x3f808000u)), 0x3f80);
    /* 1 + 3 x 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up to the even one */
    cr_assert_eq(cpml_bf16_of(from_bits(0x3f818000u)), 0x3f82);
    /* just above and below halfway */
    cr_assert_eq(cpml_bf16_of(from_bits(0x3f808001u)), 0x3f81);
    cr_assert_eq(cpml_bf16_of(from_bits(0x3f807fffu)), 0x3f80);
    /* the largest finite float rounds up to infinity, as IEEE rounding does */
    cr_assert_eq(cpml_bf16_of(from_bits(0x7f7fffffu)), 0x7f80);
    cr_assert_eq(cpml_bf16_of(INFINITY), 0x7f80);
    /* subnormals keep their top bits (no flush to zero) */
    cr_assert_eq(cpml_bf16_of(from_bits(0x00010000u)), 0x0001);
    /* NaN stays NaN (a quiet one, even when the payload is in the dropped half) */
    cr_assert(isnan(cpml_bf16_val(cpml_bf16_of(from_bits(0x7f800001u)))));
    cr_assert(isnan(cpml_bf16_val(cpml_bf16_of(NAN))));
    /* the value of a stored half is the fp32 with zero low bits */
    cr_assert_eq(cpml_bf16_val(0x3f81), from_bits(0x3f810000u));
    /* relative rounding error at most 2^-9 over many magnitudes */
    for (int e = -100; e <= 100; e += 7)
        for (int k = 0; k < 64; k++) {
            float x = ldexpf(1.0f + (float)k / 64.0f + 1e-3f, e);
            float r = cpml_bf16_val(cpml_bf16_of(x));
            cr_assert_leq(fabsf(r - x), ldexpf(fabsf(x), -9), "%g -> %g", x, r);
        }
}

/* The reflection setup of tests/test_wave_physics.c with MEM storage: traces of the six
 * receivers (100 m from the source towards each face) into TR. */
static void reflection_traces(int mem, int width, float *tr, int nt, bool big)
{
    struct sl_device dev = test_cpu();
    const double c = 2000, fp = 15, h = 10;
    const int E = 30;
    struct wave_params p = {.n = {31, 31, 31}, .d = {h, h, h}, .order = 8, .dt = 1e-3,
                            .pml = {width, width, width, width, width, width}, .pml_reflection = 1e-4,
                            .f_ref = fp, .cpml_memory = mem};
    if (big)
        for (int a = 0; a < 3; a++) {
            p.n[a] += 2 * E;
            p.o[a] = -E * h;
            p.pml[2 * a] = p.pml[2 * a + 1] = 0;
        }
    float *v = test_constant_grid(p.n, (float)c);
    const double src[3] = {150, 150, 150};
    const double rec[6][3] = {{50, 150, 150}, {250, 150, 150}, {150, 50, 150},
                              {150, 250, 150}, {150, 150, 50}, {150, 150, 250}};
    test_wave_traces(&dev, &p, v, src, &rec[0][0], 6, nt, fp, WAVE_INTERP_SINC, tr);
    free(v);
}

/* 20 layers (the default width) and 10: bf16 memory absorbs as fp32 does (>= 40 dB at
 * 20 layers; within 1 dB of fp32 at both), and its traces differ from fp32's by less
 * than the fp32 layers reflect. */
Test(cpml_memory, bf16_absorbs_and_stays_close_to_fp32, .timeout = 180)
{
    const double fp = 15;
    const int nt = (int)((wavelet_ricker_delay(fp) + 200.0 / 2000.0 + 1.2 / fp) / 1e-3);
    const size_t n = 6 * (size_t)(nt + 1);
    float *ref = malloc(n * sizeof *ref), *t32 = malloc(n * sizeof *t32), *t16 = malloc(n * sizeof *t16);
    reflection_traces(WAVE_CPML_MEM_FP32, 0, ref, nt, true);
    const int widths[2] = {20, 10};
    const char *face[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
    for (int w = 0; w < 2; w++) {
        reflection_traces(WAVE_CPML_MEM_FP32, widths[w], t32, nt, false);
        reflection_traces(WAVE_CPML_MEM_BF16, widths[w], t16, nt, false);
        double den, best32 = 0;
        for (int f = 0; f < 6; f++) {
            size_t o = (size_t)f * (nt + 1);
            double db32 = test_reflection_db(t32 + o, ref + o, nt + 1, &den);
            double db16 = test_reflection_db(t16 + o, ref + o, nt + 1, &den);
            double dmem = test_reflection_db(t16 + o, t32 + o, nt + 1, &den);
            fprintf(stderr, "cpml memory: %d layers, face %s: reflection fp32 %.1f dB, bf16 %.1f dB; bf16 - fp32 "
                    "%.1f dB\n", widths[w], face[f], db32, db16, dmem);
            if (widths[w] == 20)
                cr_assert_lt(db16, -40.0, "face %s: bf16 reflection only %.1f dB down", face[f], db16);
            cr_assert_lt(fabs(db16 - db32), 1.0, "face %s, %d layers: bf16 %.1f dB, fp32 %.1f dB", face[f],
                         widths[w], db16, db32);
            cr_assert_lt(dmem, db32, "face %s, %d layers: the storage's error (%.1f dB) is not below the layers' "
                         "reflection (%.1f dB)", face[f], widths[w], dmem, db32);
            best32 = db32 < best32 ? db32 : best32;
        }
        cr_assert_lt(best32, 0.0);
    }
    free(ref);
    free(t32);
    free(t16);
}

/* fp32 (0, the zeroed field's value) is the reference and the default; bf16 reaches
 * the CPU step (other bits, once the wave is in the layers).  That fp32 results stay
 * what they were is tests/test_golden.c's record. */
Test(cpml_memory, fp32_is_the_default_and_bf16_reaches_the_cpu_step, .timeout = 60)
{
    cr_assert_eq(WAVE_CPML_MEM_FP32, 0);
    const int nt = 200;
    const size_t n = 6 * (size_t)(nt + 1);
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    reflection_traces(0, 6, a, nt, false);
    reflection_traces(WAVE_CPML_MEM_FP32, 6, b, nt, false);
    cr_assert_eq(memcmp(a, b, n * sizeof *a), 0);
    reflection_traces(WAVE_CPML_MEM_BF16, 6, b, nt, false);
    cr_assert_neq(memcmp(a, b, n * sizeof *a), 0);
    free(a);
    free(b);
}

Test(cpml_memory, bf16_refused_for_the_implicit_operator_and_bad_values)
{
    struct wave_params p = {.n = {20, 20, 20}, .d = {10, 10, 10}, .order = 8, .dt = 5e-4,
                            .pml = {5, 5, 5, 5, 5, 5}, .pml_reflection = 1e-4, .f_ref = 12,
                            .op = PROP_OP_IMPLICIT, .cpml_memory = WAVE_CPML_MEM_BF16};
    cr_assert_lt(wave_params_check(&p), 0);
    cr_assert(strstr(err_msg(), "bf16") && strstr(err_msg(), "implicit"), "%s", err_msg());
    p.op = PROP_OP_TAYLOR;
    cr_assert_eq(wave_params_check(&p), 0, "%s", err_msg());
    p.cpml_memory = 7;
    cr_assert_lt(wave_params_check(&p), 0);
    cr_assert(strstr(err_msg(), "cpml_memory"), "%s", err_msg());
}
