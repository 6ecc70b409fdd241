/* The final image's files: the SEG-Y copy holds a depth interval mm cannot (dz above
 * 65.535 m, stated in the textual header and the JSON sidecar), and a grid SEG-Y
 * cannot hold at all (more than 65535 depth samples) costs only the SEG-Y copy, never
 * the job: `seislive run` writes the raw float32 + JSON, logs the error and exits 0. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <segyio/segy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zmq.h>

#include "io/image_files.h"
#include "io/wire.h"
#include "stream/error.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

static int read_interval(const char *path, char *line2, size_t cap)
{
    segy_file *fp = segy_open(path, "rb");
    cr_assert_not_null(fp, "%s", path);
    char bin[SEGY_BINARY_HEADER_SIZE], text[3201];
    cr_assert_eq(segy_binheader(fp, bin), SEGY_OK);
    cr_assert_eq(segy_read_textheader(fp, text), SEGY_OK);
    snprintf(line2, cap, "%.80s", text + 80);
    int iv = 0;
    cr_assert_eq(segy_get_bfield(bin, SEGY_BIN_INTERVAL, &iv), SEGY_OK);
    segy_close(fp);
    return iv;
}

Test(rtm_outputs, image_segy_with_dz_beyond_65_m)
{
    char *dir = test_tmpdir();
    const int n[3] = {3, 2, 5};
    float v[30];
    for (int i = 0; i < 30; i++)
        v[i] = (float)i;
    struct image_meta m = {.n = {n[0], n[1], n[2]}, .d = {50, 50, 100.0}, .units = 2, .final = true, .job = "rtm"};
    cr_assert_eq(image_files_write(dir, "image", &m, v), 0, "%s", err_msg());
    cr_assert_eq(image_files_write_segy(dir, "image", &m, v), 0, "%s", err_msg());
    char path[4200], line2[81];
    snprintf(path, sizeof path, "%s/image.segy", dir);
    /* 100 m = 10000 cm (100000 mm would not fit 16 bits) */
    cr_assert_eq(read_interval(path, line2, sizeof line2), 10000);
    cr_assert_not_null(strstr(line2, "interval in cm (10000 x 0.01 m)"), "%s", line2);
    snprintf(path, sizeof path, "%s/image.json", dir);
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    cr_assert_not_null(o, "%s", je.text);
    json_t *si = json_object_get(o, "segy_depth_interval");
    cr_assert_not_null(si);
    cr_assert_eq(json_integer_value(json_object_get(si, "value")), 10000);
    cr_assert_str_eq(json_string_value(json_object_get(si, "unit")), "cm");
    cr_assert_float_eq(json_real_value(json_object_get(si, "unit_m")), 0.01, 1e-15);
    json_decref(o);
    /* a whole number of mm stays in mm, as before */
    m.d[2] = 12.5;
    cr_assert_eq(image_files_write_segy(dir, "image", &m, v), 0, "%s", err_msg());
    snprintf(path, sizeof path, "%s/image.segy", dir);
    cr_assert_eq(read_interval(path, line2, sizeof line2), 12500);
    cr_assert_not_null(strstr(line2, "interval in mm"), "%s", line2);
    test_rmtree(dir);
    free(dir);
}

/* nz = 65536 depth samples: SEG-Y's sample count is 16 bits.  The job still ends 0
 * with the image in image.f32 + image.json. */
Test(rtm_outputs, run_keeps_the_image_when_segy_cannot_hold_it, .timeout = 120)
{
    char *dir = test_tmpdir();
    char ep_in[512], ep_out[512], text[4096], log[600];
    snprintf(ep_in, sizeof ep_in, "ipc://%s/in", dir);
    snprintf(ep_out, sizeof ep_out, "ipc://%s/out", dir);
    snprintf(text, sizeof text,
             "[job]\nkind = \"rtm\"\n"
             "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [2, 2, 65536]\nd = [10.0, 10.0, 10.0]\n"
             "[propagator]\norder = 4\nt_max = 0.24\npml_width = [5, 5, 5, 5, 5, 5]\nf_peak = 12.0\n"
             "[rtm]\nstrategy = \"full\"\naperture = 0.0\n[runtime]\ndevice = \"cpu\"\n[log]\nlevel = \"info\"\n"
             "[input]\nkind = \"zmq\"\nendpoint = \"%s\"\nslots = 2\nslot_mib = 1.0\n"
             "[output]\nendpoint = \"%s\"\ndir = \"%s/files\"\n",
             ep_in, ep_out, dir);
    char *cfgpath = test_write_file(dir, "rtm.toml", text);
    snprintf(log, sizeof log, "%s/run.log", dir);
    pid_t pid = ts_spawn_run(cfgpath, log);
    void *z = zmq_ctx_new();
    void *push = ts_push(z, ep_in);
    cr_assert_eq(wire_send_end(push, 0), 0);
    cr_assert_eq(ts_wait(pid, 90), 0, "seislive run exits 0 (see %s)", log);
    cr_assert_eq(ts_count_in_file(log, "no SEG-Y copy"), 1, "the SEG-Y failure is logged (%s)", log);
    cr_assert_geq(ts_count_in_file(log, "65536 samples per trace"), 1, "with the reason (%s)", log);
    char out[600];
    snprintf(out, sizeof out, "%s/files", dir);
    struct image_meta meta;
    float *img;
    cr_assert_eq(image_files_read(out, "image", &meta, &img), 0, "%s", err_msg());
    cr_assert_eq(meta.n[2], 65536);
    cr_assert(meta.final);
    free(img);
    char segy[700];
    snprintf(segy, sizeof segy, "%s/image.segy", out);
    struct stat st;
    cr_assert_neq(stat(segy, &st), 0, "no partial SEG-Y left behind");
    zmq_close(push);
    zmq_ctx_term(z);
    free(cfgpath);
    test_rmtree(dir);
    free(dir);
}
