/* File ingest through the runtime: the same shots from a SEG-Y file (io_uring or pread
 * into the pinned staging buffer, decoded into slots) give the same image as over
 * ZeroMQ; a watched folder picks up files a "recorder" writes while the job runs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/image_files.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

#define NTR 12
#define NS 50

static float *final_image(const char *dir, int64_t *units)
{
    char out[600];
    snprintf(out, sizeof out, "%s/files", dir);
    struct image_meta meta;
    float *img = NULL;
    cr_assert_eq(image_files_read(out, "image", &meta, &img), 0);
    *units = meta.units;
    return img;
}

static void run_segy_file(const char *io)
{
    char *dir = test_tmpdir();
    char seg[512], log[512], cfg[2048];
    snprintf(seg, sizeof seg, "%s/shots.segy", dir);
    snprintf(log, sizeof log, "%s/job.log", dir);
    int ks[5] = {0, 1, 2, 3, 4};
    cr_assert_eq(ts_write_segy(seg, ks, 5, NTR, NS, 5), 0);
    /* slot_mib small enough that one staging read holds a few traces only: shots
     * straddle chunk boundaries. */
    snprintf(cfg, sizeof cfg,
             "[input]\nkind = \"files\"\npaths = [\"%s\"]\nslots = 2\nslot_mib = 0.01\nio = \"%s\"\n"
             "[output]\ndir = \"%s/files\"\n[log]\nlevel = \"info\"\n",
             seg, io, dir);
    cr_assert_eq(ts_wait(ts_spawn_job(cfg, log), 30), 0);
    int64_t units;
    float *img = final_image(dir, &units);
    cr_assert_eq(units, 5);
    float want[TS_CELLS];
    ts_batch_image(ks, 5, NTR, NS, want);
    for (int i = 0; i < TS_CELLS; i++)
        cr_assert_eq(img[i], want[i], "cell %d: %g != %g (%s)", i, img[i], want[i], io);
    free(img);
    /* Which reader ran is logged: pread when asked, else io_uring or the logged fallback. */
    if (strcmp(io, "pread") == 0)
        cr_assert_eq(ts_count_in_file(log, "file reads: pread"), 1);
    else
        cr_assert_eq(ts_count_in_file(log, "file reads: io_uring") +
                         ts_count_in_file(log, "io_uring unavailable"), 1);
    if (ts_count_in_file(log, "fixed buffers") > 0)
        fprintf(stderr, "stream_files: io_uring with fixed buffers\n");
    /* Progress: a file's length is known, so every shot but the last says what is still
     * to come, and the last says it was the last. */
    cr_assert_eq(ts_count_in_file(log, "to come)"), 4);
    cr_assert_eq(ts_count_in_file(log, "the last of the input"), 1);
    test_rmtree(dir);
    free(dir);
}

Test(stream_files, segy_file_equals_batch_with_io_uring, .timeout = 60)
{
    run_segy_file("auto");
}

Test(stream_files, segy_file_equals_batch_with_pread, .timeout = 60)
{
    run_segy_file("pread");
}

Test(stream_files, watched_directory_picks_up_new_files, .timeout = 60)
{
    char *dir = test_tmpdir();
    char rec[512], log[512], cfg[2048];
    snprintf(rec, sizeof rec, "%s/recorder", dir);
    cr_assert_eq(mkdir(rec, 0755), 0);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(cfg, sizeof cfg,
             "[input]\nkind = \"files\"\npaths = [\"%s\"]\nwatch = true\nwatch_idle = 2.0\n"
             "slots = 2\nslot_mib = 0.1\n[output]\ndir = \"%s/files\"\n[log]\nlevel = \"info\"\n",
             rec, dir);
    pid_t pid = ts_spawn_job(cfg, log);
    /* The recorder writes one file per shot while the job runs, under a temporary
     * name first (ignored), then renamed. */
    int ks[4] = {3, 1, 4, 0};
    for (int j = 0; j < 4; j++) {
        usleep(300000);
        char tmp[600], fin[600];
        snprintf(tmp, sizeof tmp, "%s/shot%02d.segy.part", rec, j);
        snprintf(fin, sizeof fin, "%s/shot%02d.segy", rec, j);
        cr_assert_eq(ts_write_segy(tmp, &ks[j], 1, NTR, NS, 5), 0);
        cr_assert_eq(rename(tmp, fin), 0);
    }
    cr_assert_eq(ts_wait(pid, 30), 0);
    cr_assert_eq(ts_count_in_file(log, "reading "), 4, "every file read once");
    int64_t units;
    float *img = final_image(dir, &units);
    cr_assert_eq(units, 4);
    float want[TS_CELLS];
    ts_batch_image(ks, 4, NTR, NS, want);
    for (int i = 0; i < TS_CELLS; i++)
        cr_assert_eq(img[i], want[i], "cell %d", i);
    free(img);
    test_rmtree(dir);
    free(dir);
}
