/* Velocity models from files: raw float32 (byte order, layout), SEG-Y, layered, EM
 * (permittivity); bad files refused with the file, byte offset and grid index; the
 * stability check refuses a bad dt naming the config key's file:line:col. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "conf/config.h"
#include "io/model.h"
#include "io/segy_write.h"
#include <segyio/segy.h>
#include "kernels/stability.h"
#include "stream/error.h"
#include "stream/stability_conf.h"
#include "tests/support.h"

#define JOB "[job]\nkind = \"model\"\n\n"

static char *write_raw(const char *dir, const char *name, const float *v, size_t n, bool big)
{
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        if (big)
            u = __builtin_bswap32(u);
        fwrite(&u, 4, 1, f);
    }
    fclose(f);
    return path;
}

static int load_cfg(const char *dir, const char *text, struct sl_config *cfg)
{
    char *p = test_write_file(dir, "c.toml", text);
    int rc = config_load(p, cfg);
    free(p);
    return rc;
}

/* A model with a value that tells its grid index: v = 1000 + i + 10 j + 100 k. */
static float *indexed(const int n[3])
{
    float *v = malloc(sizeof(float) * n[0] * n[1] * n[2]);
    for (int k = 0; k < n[2]; k++)
        for (int j = 0; j < n[1]; j++)
            for (int i = 0; i < n[0]; i++)
                v[(k * n[1] + j) * n[0] + i] = 1000.0f + i + 10 * j + 100 * k;
    return v;
}

Test(model_io, raw_layouts_and_byte_order)
{
    char *dir = test_tmpdir();
    const int n[3] = {4, 3, 5};
    float *v = indexed(n);
    /* z-fastest, big-endian file: element (i, j, k) at ((i * ny + j) * nz + k). */
    float *zf = malloc(sizeof(float) * 60);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 5; k++)
                zf[(i * 3 + j) * 5 + k] = v[(k * 3 + j) * 4 + i];
    free(write_raw(dir, "m.bin", zf, 60, true));
    struct sl_config cfg;
    cr_assert_eq(load_cfg(dir, JOB "[model]\ntype = \"raw\"\nfile = \"m.bin\"\nn = [4, 3, 5]\n"
                               "byte_order = \"big\"\nlayout = \"z-fastest\"\n", &cfg), 0, "%s", err_msg());
    struct sl_model m;
    cr_assert_eq(model_load(&cfg, &m), 0, "%s", err_msg());
    for (int e = 0; e < 60; e++)
        cr_assert_eq(m.v[e], v[e], "element %d: %g vs %g", e, m.v[e], v[e]);
    cr_assert_eq(m.vmin, 1000);
    cr_assert_eq(m.vmax, 1000 + 3 + 20 + 400);
    model_free(&m);
    config_free(&cfg);
    free(v);
    free(zf);
    test_rmtree(dir);
    free(dir);
}

Test(model_io, bad_raw_files_refused_with_place)
{
    char *dir = test_tmpdir();
    const int n[3] = {4, 3, 5};
    float *v = indexed(n);
    struct sl_config cfg;
    struct sl_model m;
    const char *conf = JOB "[model]\ntype = \"raw\"\nfile = \"m.bin\"\nn = [4, 3, 5]\n";
    /* Wrong size. */
    free(write_raw(dir, "m.bin", v, 59, false));
    cr_assert_eq(load_cfg(dir, conf, &cfg), 0, "%s", err_msg());
    cr_assert_eq(model_load(&cfg, &m), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "m.bin: 236 bytes"), "%s", err_msg());
    cr_assert_not_null(strstr(err_msg(), "needs 240"), "%s", err_msg());
    config_free(&cfg);
    /* NaN at (i=2, j=1, k=3): element 3*12 + 1*4 + 2 = 42, byte 168. */
    v[42] = NAN;
    free(write_raw(dir, "m.bin", v, 60, false));
    cr_assert_eq(load_cfg(dir, conf, &cfg), 0);
    cr_assert_eq(model_load(&cfg, &m), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "m.bin: byte offset 168 (x 2, y 1, z 3): velocity is NaN"), "%s", err_msg());
    config_free(&cfg);
    /* Negative velocity at element 7 (byte 28). */
    v[42] = 1500;
    v[7] = -1500;
    free(write_raw(dir, "m.bin", v, 60, false));
    cr_assert_eq(load_cfg(dir, conf, &cfg), 0);
    cr_assert_eq(model_load(&cfg, &m), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "byte offset 28 (x 3, y 1, z 0): velocity -1500 m/s is not positive"), "%s", err_msg());
    config_free(&cfg);
    free(v);
    test_rmtree(dir);
    free(dir);
}

Test(model_io, segy_model_and_bad_value_offset)
{
    char *dir = test_tmpdir();
    const int n[3] = {3, 2, 6};
    float *v = indexed(n);
    char path[4096];
    snprintf(path, sizeof path, "%s/m.segy", dir);
    struct segy_writer *w;
    cr_assert_eq(segy_writer_open(path, n[2], 1000, -100, "model", &w), 0, "%s", err_msg());
    float tr[6];
    for (int j = 0; j < n[1]; j++)
        for (int i = 0; i < n[0]; i++) {
            for (int k = 0; k < n[2]; k++)
                tr[k] = v[(k * n[1] + j) * n[0] + i];
            struct segy_trace_info ti = {.shot = 1, .channel = j * 3 + i + 1};
            cr_assert_eq(segy_writer_trace(w, &ti, tr), 0);
        }
    cr_assert_eq(segy_writer_close(w), 0);
    struct sl_config cfg;
    struct sl_model m;
    cr_assert_eq(load_cfg(dir, JOB "[model]\ntype = \"segy\"\nfile = \"m.segy\"\nn = [3, 2, 6]\n", &cfg), 0, "%s", err_msg());
    cr_assert_eq(model_load(&cfg, &m), 0, "%s", err_msg());
    for (int e = 0; e < 36; e++)
        cr_assert_eq(m.v[e], v[e], "element %d", e);
    model_free(&m);
    config_free(&cfg);
    /* Wrong nz for this file. */
    cr_assert_eq(load_cfg(dir, JOB "[model]\ntype = \"segy\"\nfile = \"m.segy\"\nn = [3, 2, 5]\n", &cfg), 0);
    cr_assert_eq(model_load(&cfg, &m), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "6 samples per trace, but [model] n[2] (nz) = 5"), "%s", err_msg());
    config_free(&cfg);
    /* A NaN in trace 5 (i = 1, j = 1), sample 4: byte 3600 + 4 * (240 + 24) + 240 + 16. */
    cr_assert_eq(segy_writer_open(path, n[2], 1000, -100, "model", &w), 0);
    for (int t = 0; t < 6; t++) {
        for (int k = 0; k < 6; k++)
            tr[k] = t == 4 && k == 4 ? NAN : 2000;
        struct segy_trace_info ti = {.shot = 1, .channel = t + 1};
        segy_writer_trace(w, &ti, tr);
    }
    segy_writer_close(w);
    cr_assert_eq(load_cfg(dir, JOB "[model]\ntype = \"segy\"\nfile = \"m.segy\"\nn = [3, 2, 6]\n", &cfg), 0);
    cr_assert_eq(model_load(&cfg, &m), -EINVAL);
    char want[128];
    snprintf(want, sizeof want, "byte offset %d (x 1, y 1, z 4): velocity is NaN", 3600 + 4 * 264 + 240 + 16);
    cr_assert_not_null(strstr(err_msg(), want), "%s", err_msg());
    config_free(&cfg);
    free(v);
    test_rmtree(dir);
    free(dir);
}

Test(model_io, layered_and_em)
{
    struct sl_config cfg;
    struct sl_model m;
    cr_assert_eq(config_load_string(JOB "[model]\ntype = \"layered\"\nn = [2, 2, 10]\nd = [5, 5, 10]\n"
                                    "layer_depths = [30.0, 65.0]\nlayer_velocities = [1500.0, 2500.0, 4000.0]\n",
                                    "l.toml", &cfg), 0, "%s", err_msg());
    cr_assert_eq(model_load(&cfg, &m), 0, "%s", err_msg());
    const float want[10] = {1500, 1500, 1500, 2500, 2500, 2500, 2500, 4000, 4000, 4000};
    for (int k = 0; k < 10; k++)
        cr_assert_eq(m.v[k * 4 + 3], want[k], "z %d: %g", k, m.v[k * 4 + 3]);
    model_free(&m);
    config_free(&cfg);
    cr_assert_eq(config_load_string(JOB "[model]\nquantity = \"permittivity\"\npermittivity = 9.0\n"
                                    "permeability = 1.0\nn = [2, 2, 2]\n", "e.toml", &cfg), 0, "%s", err_msg());
    cr_assert_eq(model_load(&cfg, &m), 0, "%s", err_msg());
    cr_assert_float_eq(m.v[0], 299792458.0f / 3.0f, 1.0f);
    model_free(&m);
    config_free(&cfg);
    /* A permittivity file with a value below 1 is refused. */
    char *dir = test_tmpdir();
    float e[8] = {4, 4, 4, 4, 4, 0.5f, 4, 4};
    free(write_raw(dir, "eps.bin", e, 8, false));
    cr_assert_eq(load_cfg(dir, JOB "[model]\ntype = \"raw\"\nquantity = \"permittivity\"\nfile = \"eps.bin\"\nn = [2, 2, 2]\n", &cfg), 0);
    cr_assert_eq(model_load(&cfg, &m), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "byte offset 20 (x 1, y 0, z 1): relative permittivity 0.5 is below 1"), "%s", err_msg());
    config_free(&cfg);
    test_rmtree(dir);
    free(dir);
}

Test(model_io, stability_refuses_bad_dt_with_place)
{
    struct sl_config cfg;
    cr_assert_eq(config_load_string(JOB "[model]\nd = [10.0, 10.0, 10.0]\n\n[propagator]\norder = 8\n"
                                    "dt = 0.003\n", "run.toml", &cfg), 0, "%s", err_msg());
    double dt, lim;
    cr_assert_eq(stability_resolve(&cfg, 1500, 3000, 20, &dt, &lim, NULL), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "run.toml:9:1: [propagator] dt = 0.003 s exceeds the largest stable dt"),
                       "%s", err_msg());
    char want[64];
    snprintf(want, sizeof want, "%.6g s", lim);
    cr_assert_not_null(strstr(err_msg(), want), "%s", err_msg());
    cr_assert_lt(lim, 0.003);
    config_free(&cfg);
    /* dt = 0: automatic, cfl x limit. */
    cr_assert_eq(config_load_string(JOB "[propagator]\ncfl = 0.5\n", "a.toml", &cfg), 0);
    cr_assert_eq(stability_resolve(&cfg, 1500, 3000, 20, &dt, &lim, NULL), 0);
    cr_assert_float_eq(dt, 0.5 * lim, 1e-15);
    config_free(&cfg);
}

/* The SEG-Y writer for image volumes: CDP, inline/crossline and CDP coordinates. */
Test(model_io, segy_writer_image_headers)
{
    char *dir = test_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/img.segy", dir);
    struct segy_writer *w;
    cr_assert_eq(segy_writer_open(path, 8, 5000, -10, "image\nline two", &w), 0, "%s", err_msg());
    float tr[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    struct segy_trace_info ti = {.shot = 0, .channel = 1, .has_cdp = true, .cdp = 17,
                                 .inline_no = 3, .crossline_no = 5, .cdp_xy = {1234.5, 678.9}};
    cr_assert_eq(segy_writer_trace(w, &ti, tr), 0);
    cr_assert_eq(segy_writer_count(w), 1);
    cr_assert_eq(segy_writer_close(w), 0);
    segy_file *fp = segy_open(path, "rb");
    char bin[SEGY_BINARY_HEADER_SIZE], th[SEGY_TRACE_HEADER_SIZE];
    cr_assert_eq(segy_binheader(fp, bin), SEGY_OK);
    cr_assert_eq(segy_samples(bin), 8);
    long trace0 = segy_trace0(bin);
    int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, 8);
    cr_assert_eq(segy_traceheader(fp, 0, th, trace0, bsize), SEGY_OK);
    int32_t v;
    segy_get_field(th, SEGY_TR_ENSEMBLE, &v);
    cr_assert_eq(v, 17);
    segy_get_field(th, SEGY_TR_INLINE, &v);
    cr_assert_eq(v, 3);
    segy_get_field(th, SEGY_TR_CROSSLINE, &v);
    cr_assert_eq(v, 5);
    segy_get_field(th, SEGY_TR_CDP_X, &v);
    cr_assert_eq(v, 12345);
    segy_get_field(th, SEGY_TR_CDP_Y, &v);
    cr_assert_eq(v, 6789);
    segy_get_field(th, SEGY_TR_SAMPLE_INTER, &v);
    cr_assert_eq(v, 5000);
    float got[8];
    cr_assert_eq(segy_readtrace(fp, 0, got, trace0, bsize), SEGY_OK);
    segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, 8, got);
    cr_assert_eq(memcmp(got, tr, sizeof tr), 0);
    char text[3201];
    cr_assert_eq(segy_read_textheader(fp, text), SEGY_OK);
    cr_assert_eq(strncmp(text, "C 1 image", 9), 0, "%.80s", text);
    cr_assert_eq(strncmp(text + 80, "C 2 line two", 12), 0, "%.80s", text + 80);
    segy_close(fp);
    test_rmtree(dir);
    free(dir);
}

/* nx * ny beyond 2^31: 65536 x 32769 overflows int (a negative trace count in the
 * message).  The count must be compared in size_t and the file refused before the
 * 8.6 GB volume is allocated (the address space is capped here, so an allocation
 * first fails with ENOMEM instead). */
Test(model_io, segy_trace_count_beyond_int_refused)
{
    struct rlimit rl = {(rlim_t)2 << 30, (rlim_t)2 << 30};
    cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
    char *dir = test_tmpdir();
    char path[4096];
    snprintf(path, sizeof path, "%s/m.segy", dir);
    struct segy_writer *w;
    cr_assert_eq(segy_writer_open(path, 1, 1000, -100, "model", &w), 0, "%s", err_msg());
    float one = 2000.0f;
    for (int t = 0; t < 1000; t++) {
        struct segy_trace_info ti = {.shot = 1, .channel = t + 1};
        cr_assert_eq(segy_writer_trace(w, &ti, &one), 0);
    }
    cr_assert_eq(segy_writer_close(w), 0);
    struct sl_config cfg;
    struct sl_model m;
    cr_assert_eq(load_cfg(dir, JOB "[model]\ntype = \"segy\"\nfile = \"m.segy\"\nn = [65536, 32769, 1]\n", &cfg),
                 0, "%s", err_msg());
    cr_assert_eq(model_load(&cfg, &m), -EINVAL, "%s", err_msg());
    cr_assert_not_null(strstr(err_msg(), "1000 traces"), "%s", err_msg());
    cr_assert_not_null(strstr(err_msg(), "2147549184"), "%s", err_msg());
    config_free(&cfg);
    test_rmtree(dir);
    free(dir);
}

/* A grid larger than the machine's memory is refused by name, not attempted. */
Test(model_io, grid_beyond_memory_refused)
{
    struct sl_config cfg;
    struct sl_model m;
    char *dir = test_tmpdir();
    cr_assert_eq(load_cfg(dir, JOB "[model]\ntype = \"constant\"\nn = [65536, 65536, 65536]\n", &cfg), 0, "%s",
                 err_msg());
    cr_assert_eq(model_load(&cfg, &m), -EINVAL, "%s", err_msg());
    cr_assert_not_null(strstr(err_msg(), "[model] n = [65536, 65536, 65536]"), "%s", err_msg());
    cr_assert_not_null(strstr(err_msg(), "281474976710656 cells"), "%s", err_msg());
    config_free(&cfg);
    test_rmtree(dir);
    free(dir);
}
