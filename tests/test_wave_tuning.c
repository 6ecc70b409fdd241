/* The kernel tuning's names and checks (kernels/wave_tuning.h): every name a flag may
 * give sets the value the library reads and names back, bad values and impossible
 * combinations are refused with the key in the message, and the all-zero tuning (the
 * production defaults) passes for both kernels. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "kernels/wave.h"
#include "kernels/wave_tuning.h"
#include "stream/error.h"

Test(wave_tuning, names_round_trip)
{
    for (int v = 1; v < WAVE_TILE_N; v++) {
        struct wave_tuning t = {0};
        cr_assert_eq(wave_tuning_set(&t, "tile", wave_tile_name(v)), 0, "%s", err_msg());
        cr_assert_eq(t.tile, v);
    }
    for (int v = 1; v < WAVE_PIPE_N; v++) {
        struct wave_tuning t = {0};
        cr_assert_eq(wave_tuning_set(&t, "pipe", wave_pipe_name(v)), 0, "%s", err_msg());
        cr_assert_eq(t.pipe, v);
    }
    for (int v = 1; v < WAVE_CPML_N; v++) {
        struct wave_tuning t = {0};
        cr_assert_eq(wave_tuning_set(&t, "cpml", wave_cpml_name(v)), 0, "%s", err_msg());
        cr_assert_eq(t.cpml, v);
    }
    for (int v = 1; v < WAVE_IMPLICIT_X_N; v++) {
        struct wave_tuning t = {0};
        cr_assert_eq(wave_tuning_set(&t, "implicit-x", wave_implicit_x_name(v)), 0, "%s", err_msg());
        cr_assert_eq(t.implicit_x, v);
    }
    for (int v = 1; v < WAVE_IMPLICIT_YZ_N; v++) {
        struct wave_tuning t = {0};
        cr_assert_eq(wave_tuning_set(&t, "implicit-yz", wave_implicit_yz_name(v)), 0, "%s", err_msg());
        cr_assert_eq(t.implicit_yz, v);
    }
    cr_assert_str_eq(wave_implicit_x_name(WAVE_IMPLICIT_X_WARP), "warp");
    cr_assert_str_eq(wave_implicit_yz_name(WAVE_IMPLICIT_YZ_CHUNKS), "chunks");
    cr_assert_null(wave_implicit_x_name(0));
    cr_assert_null(wave_implicit_yz_name(WAVE_IMPLICIT_YZ_N));
    /* 0 means the production choice, never itself */
    struct wave_tuning z = {0};
    cr_assert_eq(wave_implicit_x_of(&z), WAVE_IMPLICIT_X_PROD);
    cr_assert_eq(wave_implicit_yz_of(&z), WAVE_IMPLICIT_YZ_PROD);
    cr_assert_null(wave_tile_name(0));
    cr_assert_null(wave_tile_name(WAVE_TILE_N));
    cr_assert_str_eq(wave_tile_name(WAVE_TILE_8x2), "8x2");
    cr_assert_str_eq(wave_pipe_name(WAVE_PIPE_REGS), "regs");
    cr_assert_str_eq(wave_cpml_name(WAVE_CPML_LINES), "lines");
}

Test(wave_tuning, numbers_and_switches)
{
    struct wave_tuning t = {0};
    cr_assert_eq(wave_tuning_set(&t, "prefetch", "3"), 0);
    cr_assert_eq(t.prefetch, 3);
    cr_assert_eq(wave_tuning_set(&t, "cpml-overlap", "off"), 0);
    cr_assert_eq(t.cpml_overlap, WAVE_OVERLAP_OFF);
    cr_assert_eq(wave_tuning_set(&t, "cpml-overlap", "on"), 0);
    cr_assert_eq(t.cpml_overlap, WAVE_OVERLAP_ON);
    cr_assert_eq(wave_tuning_set(&t, "naive-block", "256x4"), 0);
    cr_assert_eq(t.naive_block[0], 256);
    cr_assert_eq(t.naive_block[1], 4);
    cr_assert_eq(wave_tuning_set(&t, "layer-zchunk", "5"), 0);
    cr_assert_eq(t.layer_zchunk, 5);
    cr_assert_eq(wave_tuning_set(&t, "ring-waves", "3"), 0);
    cr_assert_eq(t.ring_waves, 3);
    /* "default" puts each back to 0 */
    cr_assert_eq(wave_tuning_set(&t, "implicit-x", "warp"), 0);
    cr_assert_eq(wave_tuning_set(&t, "implicit-yz", "chunks"), 0);
    const char *keys[] = {"tile",        "pipe",         "prefetch",   "cpml", "cpml-overlap",
                          "naive-block", "layer-zchunk", "implicit-x", "implicit-yz", "ring-waves"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        cr_assert_eq(wave_tuning_set(&t, keys[k], "default"), 0, "%s", keys[k]);
    struct wave_tuning zero = {0};
    cr_assert_eq(memcmp(&t, &zero, sizeof t), 0);
}

Test(wave_tuning, bad_values_refused)
{
    static const char *const bad[][2] = {
        {"tile", "8x8"},         {"tile", ""},          {"pipe", "rings"},          {"prefetch", "0"},
        {"prefetch", "4"},       {"prefetch", "2x"},    {"cpml", "line"},           {"cpml-overlap", "1"},
        {"naive-block", "48x4"}, {"naive-block", "512x4"}, {"naive-block", "128x4x"}, {"layer-zchunk", "0"},
        {"layer-zchunk", "-3"},  {"tiles", "8x2"},     {"implicit-x", "chunks"},   {"implicit-yz", "warp"},
        {"ring-waves", "0"},     {"ring-waves", "65"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct wave_tuning t = {0};
        cr_assert_eq(wave_tuning_set(&t, bad[i][0], bad[i][1]), -EINVAL, "%s %s", bad[i][0], bad[i][1]);
        cr_assert(strstr(err_msg(), bad[i][0]) != NULL, "%s", err_msg());
        struct wave_tuning zero = {0};
        cr_assert_eq(memcmp(&t, &zero, sizeof t), 0, "%s %s changed the tuning", bad[i][0], bad[i][1]);
    }
}

Test(wave_tuning, combinations_checked)
{
    struct wave_tuning t = {0};
    cr_assert_eq(wave_tuning_check(&t, WAVE_KERNEL_AUTO), 0);
    cr_assert_eq(wave_tuning_check(&t, WAVE_KERNEL_NAIVE), 0);
    /* ring has no 16x1 / 8x1, regs no 8x4 and no depth 3 */
    t.tile = WAVE_TILE_16x1;
    cr_assert_eq(wave_tuning_check(&t, WAVE_KERNEL_TILED), -EINVAL);
    t.pipe = WAVE_PIPE_REGS;
    cr_assert_eq(wave_tuning_check(&t, WAVE_KERNEL_TILED), 0);
    t.tile = WAVE_TILE_8x4;
    cr_assert_eq(wave_tuning_check(&t, WAVE_KERNEL_TILED), -EINVAL);
    /* the tiled kernel's fields are not the naive kernel's business */
    cr_assert_eq(wave_tuning_check(&t, WAVE_KERNEL_NAIVE), 0);
    t.tile = WAVE_TILE_4x4;
    t.prefetch = 3;
    cr_assert_eq(wave_tuning_check(&t, WAVE_KERNEL_TILED), -EINVAL);
    t.prefetch = 2;
    cr_assert_eq(wave_tuning_check(&t, WAVE_KERNEL_TILED), 0);
    /* out of range numbers (a struct filled by code, not by the parser) */
    struct wave_tuning u = {.cpml = 7};
    cr_assert_eq(wave_tuning_check(&u, WAVE_KERNEL_TILED), -EINVAL);
    u = (struct wave_tuning){.cpml_overlap = 2};
    cr_assert_eq(wave_tuning_check(&u, WAVE_KERNEL_TILED), -EINVAL);
    u = (struct wave_tuning){.implicit_x = WAVE_IMPLICIT_X_N};
    cr_assert_eq(wave_tuning_check(&u, WAVE_KERNEL_TILED), -EINVAL);
    u = (struct wave_tuning){.implicit_yz = -1};
    cr_assert_eq(wave_tuning_check(&u, WAVE_KERNEL_TILED), -EINVAL);
    u = (struct wave_tuning){.naive_block = {64, 0}};
    cr_assert_eq(wave_tuning_check(&u, WAVE_KERNEL_NAIVE), -EINVAL);
    u = (struct wave_tuning){.layer_zchunk = -1};
    cr_assert_eq(wave_tuning_check(&u, WAVE_KERNEL_TILED), -EINVAL);
    u = (struct wave_tuning){.ring_waves = WAVE_RING_WAVES_MAX + 1};
    cr_assert_eq(wave_tuning_check(&u, WAVE_KERNEL_TILED), -EINVAL);
    u = (struct wave_tuning){.ring_waves = WAVE_RING_WAVES_MAX};
    cr_assert_eq(wave_tuning_check(&u, WAVE_KERNEL_TILED), 0);
}
