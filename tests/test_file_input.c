/* File input hardening (issue 12): a shot enters the image and the ledger only when it
 * is complete and located; a file still being written is waited for; a shot id met
 * again is a quiet skip (same content) or an error naming both places (different);
 * Seismic Unix files of either byte order decode; a crafted state file is refused by
 * byte and kept.  The files are written here, byte by byte where the layout matters. */
#include <criterion/criterion.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/image_files.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

#define NTR 20
#define NS 40

struct seg_opts {
    int per_ensemble;  /* binary header byte 3213; 0 = not set */
    bool no_geometry;  /* every coordinate 0 and field record 0 (as the sand-tank files) */
    int64_t id;        /* the shot id written; 0 = the shot's own (100 + k) */
};

/* A SEG-Y file (IEEE) of shots ks[0..n) into a malloc'd buffer; *LEN its size. */
static char *segy_bytes(const int *ks, int n, const struct seg_opts *o, size_t *len)
{
    size_t tb = 240 + 4 * (size_t)NS;
    *len = 3600 + (size_t)n * NTR * tb;
    char *b = calloc(1, *len);
    memset(b, ' ', 3200);
    segy_set_bfield(b + 3200, SEGY_BIN_INTERVAL, 4000);
    segy_set_bfield(b + 3200, SEGY_BIN_SAMPLES, NS);
    segy_set_bfield(b + 3200, SEGY_BIN_FORMAT, 5);
    segy_set_bfield(b + 3200, SEGY_BIN_TRACES, o->per_ensemble);
    char *p = b + 3600;
    for (int j = 0; j < n; j++) {
        struct shot s;
        ts_make_shot(ks[j], NTR, NS, &s);
        for (int i = 0; i < NTR; i++, p += tb) {
            int32_t id = o->no_geometry ? 0 : (int32_t)(o->id ? o->id : s.id);
            segy_set_field(p, SEGY_TR_FIELD_RECORD, id);
            segy_set_field(p, SEGY_TR_NUMBER_ORIG_FIELD, i + 1);
            segy_set_field(p, SEGY_TR_SAMPLE_COUNT, NS);
            segy_set_field(p, SEGY_TR_SAMPLE_INTER, 4000);
            if (!o->no_geometry) {
                segy_set_field(p, SEGY_TR_SOURCE_GROUP_SCALAR, -10);
                segy_set_field(p, SEGY_TR_ELEV_SCALAR, -100);
                segy_set_field(p, SEGY_TR_SOURCE_X, (int32_t)lrint(s.src[0] * 10));
                segy_set_field(p, SEGY_TR_SOURCE_Y, (int32_t)lrint(s.src[1] * 10));
                segy_set_field(p, SEGY_TR_SOURCE_DEPTH, (int32_t)lrint(s.src[2] * 100));
                segy_set_field(p, SEGY_TR_GROUP_X, (int32_t)lrint(s.rec[3 * i] * 10));
                segy_set_field(p, SEGY_TR_GROUP_Y, (int32_t)lrint(s.rec[3 * i + 1] * 10));
                segy_set_field(p, SEGY_TR_RECV_GROUP_ELEV, (int32_t)lrint(-s.rec[3 * i + 2] * 100));
            }
            memcpy(p + 240, s.data + (size_t)i * NS, 4 * (size_t)NS);
            segy_from_native(5, NS, p + 240);
        }
        ts_shot_free(&s);
    }
    return b;
}

static void write_bytes(const char *path, const char *mode, const char *b, size_t n)
{
    FILE *f = fopen(path, mode);
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

static float *read_image(const char *outdir, int64_t *units)
{
    struct image_meta meta;
    float *img = NULL;
    cr_assert_eq(image_files_read(outdir, "image", &meta, &img), 0, "no final image in %s",
                 outdir);
    *units = meta.units;
    return img;
}

static void job_config(char *cfg, size_t n, const char *paths, const char *out, const char *extra)
{
    snprintf(cfg, n,
             "[input]\nkind = \"files\"\npaths = [\"%s\"]\nslots = 2\nslot_mib = 0.1\n%s"
             "[output]\ndir = \"%s\"\n[log]\nlevel = \"info\"\n",
             paths, extra, out);
}

/* `seislive run` (the small rtm job) on INPUT_CFG's [input], final image into OUT. */
static float *run_rtm(const char *dir, const char *name, const char *input, int64_t *units,
                      const char *log)
{
    char out[600], text[4096];
    snprintf(out, sizeof out, "%s/%s-out", dir, name);
    snprintf(text, sizeof text, TS_SMALL_RTM_CFG "[input]\n%s[output]\ndir = \"%s\"\n"
             "[log]\nlevel = \"info\"\n", input, out);
    char cfgname[64];
    snprintf(cfgname, sizeof cfgname, "%s.toml", name);
    char *cfg = test_write_file(dir, cfgname, text);
    cr_assert_eq(ts_wait(ts_spawn_run(cfg, log), 120), 0, "seislive run failed, see %s", log);
    free(cfg);
    return read_image(out, units);
}

/* Issue 12.1: a recorder still writing a file in a watched folder.  The watcher used to
 * read it once its size held still over two listings (0.4 s), stack the partial last
 * shot (10 of its 20 traces), ledger it, and never look at the file again. */
Test(file_input, growing_file_is_stacked_once_and_complete, .timeout = 240)
{
    char *dir = test_tmpdir();
    char rec[512], seg[600], whole[600], log[600], log2[600], in[1200];
    snprintf(rec, sizeof rec, "%s/recorder", dir);
    cr_assert_eq(mkdir(rec, 0755), 0);
    snprintf(seg, sizeof seg, "%s/line1.segy", rec);
    snprintf(whole, sizeof whole, "%s/whole.segy", dir);
    snprintf(log, sizeof log, "%s/grow.log", dir);
    snprintf(log2, sizeof log2, "%s/whole.log", dir);
    int ks[2] = {3, 9};
    struct seg_opts o = {0};
    size_t len;
    char *b = segy_bytes(ks, 2, &o, &len);
    write_bytes(whole, "wb", b, len);
    /* The reference: the complete file, not watched. */
    snprintf(in, sizeof in, "kind = \"files\"\npaths = [\"%s\"]\n", whole);
    int64_t u_ref;
    float *ref = run_rtm(dir, "whole", in, &u_ref, log2);
    cr_assert_eq(u_ref, 2);
    /* The recorder: the first shot and half of the second, a pause, the rest. */
    size_t cut = 3600 + (size_t)(NTR + NTR / 2) * (240 + 4 * NS);
    write_bytes(seg, "wb", b, cut);
    snprintf(in, sizeof in, "kind = \"files\"\npaths = [\"%s\"]\nwatch = true\nwatch_idle = 4.0\n",
             rec);
    char out[600], text[4096];
    snprintf(out, sizeof out, "%s/grow-out", dir);
    snprintf(text, sizeof text, TS_SMALL_RTM_CFG "[input]\n%s[output]\ndir = \"%s\"\n"
             "[log]\nlevel = \"info\"\n", in, out);
    char *cfg = test_write_file(dir, "grow.toml", text);
    pid_t pid = ts_spawn_run(cfg, log);
    usleep(1000000);
    write_bytes(seg, "ab", b + cut, len - cut);
    cr_assert_eq(ts_wait(pid, 120), 0, "see %s", log);
    int64_t units;
    float *img = read_image(out, &units);
    cr_assert_eq(units, 2, "each shot stacked once");
    cr_assert_eq(ts_count_in_file(log, "shot 109 stacked"), 1);
    cr_assert_eq(ts_count_in_file(log, "traces 20..39 (byte"), 1, "shot 109 whole: 20 traces");
    size_t cells = 24 * 20 * 14;
    for (size_t i = 0; i < cells; i++)
        cr_assert_eq(img[i], ref[i], "cell %zu: %g, the complete file gives %g", i, img[i], ref[i]);
    free(img);
    free(ref);
    free(cfg);
    free(b);
    test_rmtree(dir);
    free(dir);
}

/* A recorder that pauses longer than [input] settle: the partial shot disagrees with
 * the binary header's trace count and is refused (counted, with file and byte); when
 * the file grows it is read again, the shot already stacked is skipped quietly and the
 * completed one stacked: the image equals the batch image of both shots. */
Test(file_input, paused_recorder_partial_shot_refused_then_stacked, .timeout = 60)
{
    char *dir = test_tmpdir();
    char rec[512], seg[600], log[600], out[600], cfg[2048];
    snprintf(rec, sizeof rec, "%s/recorder", dir);
    cr_assert_eq(mkdir(rec, 0755), 0);
    snprintf(seg, sizeof seg, "%s/line1.segy", rec);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    int ks[2] = {3, 9};
    struct seg_opts o = {.per_ensemble = NTR};
    size_t len;
    char *b = segy_bytes(ks, 2, &o, &len);
    size_t cut = 3600 + (size_t)(NTR + NTR / 2) * (240 + 4 * NS);
    write_bytes(seg, "wb", b, cut);
    job_config(cfg, sizeof cfg, rec, out, "watch = true\nwatch_idle = 3.0\nsettle = 0.3\n");
    pid_t pid = ts_spawn_job(cfg, log);
    usleep(1500000);
    write_bytes(seg, "ab", b + cut, len - cut);
    cr_assert_eq(ts_wait(pid, 30), 0);
    cr_assert_eq(ts_count_in_file(log, "shot 109, the last of the file, has 10 traces, the binary "
                                       "header (byte 3213) and every earlier shot 20"), 1);
    cr_assert_eq(ts_count_in_file(log, "line1.segy: traces 20..29 (byte 11600)"), 1);
    cr_assert_eq(ts_count_in_file(log, "grew from"), 1);
    cr_assert_eq(ts_count_in_file(log, "again: it was also in"), 0, "a re-read is no repeat");
    cr_assert_eq(ts_count_in_file(log, "shot 103 already stacked (ledger): skipped"), 1);
    cr_assert_eq(ts_count_in_file(log, "rejected: 1 x wrong payload size"), 1);
    int64_t units;
    float *img = read_image(out, &units);
    cr_assert_eq(units, 2);
    float want[TS_CELLS];
    ts_batch_image(ks, 2, NTR, NS, want);
    for (int i = 0; i < TS_CELLS; i++)
        cr_assert_eq(img[i], want[i], "cell %d", i);
    free(img);
    free(b);
    test_rmtree(dir);
    free(dir);
}

/* A recorder that has moved on to the next file is done with the previous one: it is
 * read at once, without waiting [input] settle; the newest file waits for it. */
Test(file_input, a_later_file_settles_the_earlier_one, .timeout = 60)
{
    char *dir = test_tmpdir();
    char rec[512], p[700], log[600], out[600], cfg[2048];
    snprintf(rec, sizeof rec, "%s/recorder", dir);
    cr_assert_eq(mkdir(rec, 0755), 0);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    int ks[2] = {3, 9};
    struct seg_opts o = {0};
    for (int j = 0; j < 2; j++) {
        size_t len;
        char *b = segy_bytes(&ks[j], 1, &o, &len);
        snprintf(p, sizeof p, "%s/rec%d.segy", rec, j);
        write_bytes(p, "wb", b, len);
        free(b);
    }
    job_config(cfg, sizeof cfg, rec, out, "watch = true\nwatch_idle = 2.0\nsettle = 600.0\n");
    cr_assert_eq(ts_wait(ts_spawn_job(cfg, log), 30), 0);
    cr_assert_eq(ts_count_in_file(log, "rec0.segy"), 2, "read (and its shot stacked)");
    cr_assert_eq(ts_count_in_file(log, "rec1.segy"), 0, "still settling: not read");
    int64_t units;
    float *img = read_image(out, &units);
    cr_assert_eq(units, 1);
    float want[TS_CELLS];
    ts_batch_image(ks, 1, NTR, NS, want);
    for (int i = 0; i < TS_CELLS; i++)
        cr_assert_eq(img[i], want[i], "cell %d", i);
    free(img);
    test_rmtree(dir);
    free(dir);
}

/* A file the end of which cuts a trace (not watched): the cut shot is refused, the
 * whole one before it stacked. */
Test(file_input, truncated_file_refuses_the_cut_shot, .timeout = 60)
{
    char *dir = test_tmpdir();
    char seg[600], log[600], out[600], cfg[2048];
    snprintf(seg, sizeof seg, "%s/cut.segy", dir);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    int ks[2] = {3, 9};
    struct seg_opts o = {0};
    size_t len;
    char *b = segy_bytes(ks, 2, &o, &len);
    write_bytes(seg, "wb", b, len - 100);
    job_config(cfg, sizeof cfg, seg, out, "");
    cr_assert_eq(ts_wait(ts_spawn_job(cfg, log), 30), 0);
    cr_assert_eq(ts_count_in_file(log, "shot 109: the file ends inside trace 39"), 1);
    int64_t units;
    float *img = read_image(out, &units);
    cr_assert_eq(units, 1);
    float want[TS_CELLS];
    ts_batch_image(ks, 1, NTR, NS, want);
    for (int i = 0; i < TS_CELLS; i++)
        cr_assert_eq(img[i], want[i], "cell %d", i);
    free(img);
    free(b);
    test_rmtree(dir);
    free(dir);
}

/* Issue 12.2: files without geometry (every coordinate and field record 0, as the
 * sand-tank recordings): the first used to be migrated as one shot at the corner and
 * the second skipped as "already stacked" at info level. */
Test(file_input, shots_without_geometry_are_refused, .timeout = 60)
{
    char *dir = test_tmpdir();
    char a[600], c[600], log[600], out[600], cfg[2048], glob[600];
    snprintf(a, sizeof a, "%s/WL1.sgy", dir);
    snprintf(c, sizeof c, "%s/WL2.sgy", dir);
    snprintf(glob, sizeof glob, "%s/WL*.sgy", dir);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    struct seg_opts o = {.no_geometry = true};
    size_t len;
    int k1 = 1, k2 = 2;
    char *b = segy_bytes(&k1, 1, &o, &len);
    write_bytes(a, "wb", b, len);
    free(b);
    b = segy_bytes(&k2, 1, &o, &len);
    write_bytes(c, "wb", b, len);
    free(b);
    job_config(cfg, sizeof cfg, glob, out, "");
    cr_assert_eq(ts_wait(ts_spawn_job(cfg, log), 30), 0);
    cr_assert_eq(ts_count_in_file(log, "WL1.sgy: traces 0..19 (byte 3600): shot 0 has no "
                                       "geometry"), 1);
    cr_assert_eq(ts_count_in_file(log, "WL2.sgy: traces 0..19 (byte 3600): shot 0 has no "
                                       "geometry"), 1);
    cr_assert_eq(ts_count_in_file(log, "warn "), 2, "both refusals are warnings at least");
    cr_assert_eq(ts_count_in_file(log, "already stacked"), 0);
    int64_t units;
    float *img = read_image(out, &units);
    cr_assert_eq(units, 0);
    free(img);
    test_rmtree(dir);
    free(dir);
}

/* Issue 12.1: a shot id that comes again.  The same content (a replayed file) is a
 * quiet skip; a different content under the same id is an error that names both
 * files, never a silent skip.  Both repeats are warned of at ingest with both places. */
Test(file_input, repeated_shot_id_same_content_skipped_different_refused, .timeout = 60)
{
    char *dir = test_tmpdir();
    char d[600], log[600], out[600], cfg[2048], p[700];
    snprintf(d, sizeof d, "%s/in", dir);
    cr_assert_eq(mkdir(d, 0755), 0);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    int k0 = 0, k1 = 1;
    struct seg_opts o = {0};
    size_t len;
    char *b = segy_bytes(&k0, 1, &o, &len);
    snprintf(p, sizeof p, "%s/a.segy", d);
    write_bytes(p, "wb", b, len);
    snprintf(p, sizeof p, "%s/b.segy", d); /* the same shot again */
    write_bytes(p, "wb", b, len);
    free(b);
    struct seg_opts other = {.id = 100}; /* shot k = 1's traces under shot 0's id */
    b = segy_bytes(&k1, 1, &other, &len);
    snprintf(p, sizeof p, "%s/c.segy", d);
    write_bytes(p, "wb", b, len);
    free(b);
    job_config(cfg, sizeof cfg, d, out, "");
    cr_assert_eq(ts_wait(ts_spawn_job(cfg, log), 30), 0);
    cr_assert_eq(ts_count_in_file(log, "b.segy: traces 0..19 (byte 3600): shot 100 already "
                                       "stacked (ledger): skipped"), 1);
    cr_assert_eq(ts_count_in_file(log, "shot 100 again: it was also in a.segy"), 2);
    cr_assert_eq(ts_count_in_file(log, "error rtm-job  c.segy: traces 0..19 (byte 3600): shot "
                                       "100 differs from the shot 100 already stacked from "
                                       "a.segy: traces 0..19 (byte 3600)"), 1);
    int64_t units;
    float *img = read_image(out, &units);
    cr_assert_eq(units, 1);
    float want[TS_CELLS];
    ts_batch_image(&k0, 1, NTR, NS, want);
    for (int i = 0; i < TS_CELLS; i++)
        cr_assert_eq(img[i], want[i], "cell %d", i);
    free(img);
    test_rmtree(dir);
    free(dir);
}

/* An SU file of shots ks[0..n) in the given byte order, written byte by byte. */
static void write_su(const char *path, const int *ks, int n, bool le)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    unsigned char th[240], smp[4 * NS];
    for (int j = 0; j < n; j++) {
        struct shot s;
        ts_make_shot(ks[j], NTR, NS, &s);
        for (int i = 0; i < NTR; i++) {
            memset(th, 0, sizeof th);
            struct { int byte, size; int32_t v; } fl[] = {
                {9, 4, (int32_t)s.id}, {71, 2, -10}, {69, 2, -100},
                {73, 4, (int32_t)lrint(s.src[0] * 10)}, {77, 4, (int32_t)lrint(s.src[1] * 10)},
                {49, 4, (int32_t)lrint(s.src[2] * 100)},
                {81, 4, (int32_t)lrint(s.rec[3 * i] * 10)},
                {85, 4, (int32_t)lrint(s.rec[3 * i + 1] * 10)},
                {41, 4, (int32_t)lrint(-s.rec[3 * i + 2] * 100)}, {115, 2, NS}, {117, 2, 4000}};
            for (size_t q = 0; q < sizeof fl / sizeof fl[0]; q++)
                for (int k = 0; k < fl[q].size; k++)
                    th[fl[q].byte - 1 + (le ? k : fl[q].size - 1 - k)] =
                        (unsigned char)((uint32_t)fl[q].v >> (8 * k));
            for (int t = 0; t < NS; t++) {
                uint32_t u;
                memcpy(&u, &s.data[(size_t)i * NS + t], 4);
                for (int k = 0; k < 4; k++)
                    smp[4 * t + (le ? k : 3 - k)] = (unsigned char)(u >> (8 * k));
            }
            fwrite(th, 1, sizeof th, f);
            fwrite(smp, 1, sizeof smp, f);
        }
        ts_shot_free(&s);
    }
    cr_assert_eq(fclose(f), 0);
}

static void su_run(bool le)
{
    char *dir = test_tmpdir();
    char su[600], log[600], out[600], cfg[2048];
    snprintf(su, sizeof su, "%s/shots.su", dir);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    int ks[3] = {2, 5, 7};
    write_su(su, ks, 3, le);
    job_config(cfg, sizeof cfg, su, out, "");
    cr_assert_eq(ts_wait(ts_spawn_job(cfg, log), 30), 0);
    cr_assert_eq(ts_count_in_file(log, le ? "Seismic Unix, little-endian, detected"
                                          : "Seismic Unix, big-endian, detected"), 1);
    int64_t units;
    float *img = read_image(out, &units);
    cr_assert_eq(units, 3, "see %s", log);
    float want[TS_CELLS];
    ts_batch_image(ks, 3, NTR, NS, want);
    for (int i = 0; i < TS_CELLS; i++)
        cr_assert_eq(img[i], want[i], "cell %d", i);
    free(img);
    test_rmtree(dir);
    free(dir);
}

/* Issue 12.3: SU files were read little-endian only. */
Test(file_input, seismic_unix_big_endian_file, .timeout = 60)
{
    su_run(false);
}

Test(file_input, seismic_unix_little_endian_file, .timeout = 60)
{
    su_run(true);
}

/* Issue 12.5: a crafted state file (an image of 2^36 floats in its header) is refused
 * with the file and the byte, the job refuses to start, and the file is kept. */
Test(file_input, crafted_state_refused_and_kept, .timeout = 60)
{
    char *dir = test_tmpdir();
    char sd[600], st[700], seg[600], log[600], out[600], cfg[4096], extra[1400];
    snprintf(sd, sizeof sd, "%s/state", dir);
    snprintf(st, sizeof st, "%s/state.bin", sd);
    snprintf(seg, sizeof seg, "%s/a.segy", dir);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    int k = 0;
    struct seg_opts o = {0};
    size_t len;
    char *b = segy_bytes(&k, 1, &o, &len);
    write_bytes(seg, "wb", b, len);
    free(b);
    /* A first run writes a genuine state (same config, so the same fingerprint). */
    snprintf(extra, sizeof extra,
             "[output]\ndir = \"%s\"\nstate_dir = \"%s\"\ncheckpoint_every = 1\n", out, sd);
    snprintf(cfg, sizeof cfg, "[input]\nkind = \"files\"\npaths = [\"%s\"]\nslots = 2\n"
             "slot_mib = 0.1\n%s[log]\nlevel = \"info\"\n", seg, extra);
    cr_assert_eq(ts_wait(ts_spawn_job(cfg, log), 30), 0);
    FILE *f = fopen(st, "r+b");
    cr_assert_not_null(f, "the first run left no state");
    uint64_t big = 1ULL << 36;
    fseek(f, 32, SEEK_SET);
    cr_assert_eq(fwrite(&big, 8, 1, f), 1);
    fclose(f);
    struct stat s0, s1;
    cr_assert_eq(stat(st, &s0), 0);
    char log2[600];
    snprintf(log2, sizeof log2, "%s/job2.log", dir);
    cr_assert_neq(ts_wait(ts_spawn_job(cfg, log2), 30), 0, "refuses to start");
    cr_assert_eq(ts_count_in_file(log2, "state.bin: byte 32: image of 68719476736 floats"), 1,
                 "see %s", log2);
    cr_assert_eq(stat(st, &s1), 0, "the state file is kept");
    cr_assert_eq(s1.st_size, s0.st_size);
    cr_assert_eq(s1.st_mtime, s0.st_mtime);
    test_rmtree(dir);
    free(dir);
}

/* Real files carry 1 in byte 3213 for 64-trace shots (the sand-tank recordings): a
 * count below the shots' is a wrong field, warned of once per file, not a reason to
 * refuse every shot. */
Test(file_input, binary_header_count_below_the_shots_is_warned_once, .timeout = 60)
{
    char *dir = test_tmpdir();
    char seg[600], log[600], out[600], cfg[2048];
    snprintf(seg, sizeof seg, "%s/a.segy", dir);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    int ks[2] = {3, 9};
    struct seg_opts o = {.per_ensemble = 1};
    size_t len;
    char *b = segy_bytes(ks, 2, &o, &len);
    write_bytes(seg, "wb", b, len);
    free(b);
    job_config(cfg, sizeof cfg, seg, out, "");
    cr_assert_eq(ts_wait(ts_spawn_job(cfg, log), 30), 0);
    cr_assert_eq(ts_count_in_file(log, "the binary header (byte 3213) says 1 per shot: that field "
                                       "is taken as not a fixed count"), 1);
    int64_t units;
    float *img = read_image(out, &units);
    cr_assert_eq(units, 2);
    float want[TS_CELLS];
    ts_batch_image(ks, 2, NTR, NS, want);
    for (int i = 0; i < TS_CELLS; i++)
        cr_assert_eq(img[i], want[i], "cell %d", i);
    free(img);
    test_rmtree(dir);
    free(dir);
}

/* A SEG-Y file that announces an extended textual header (binary header byte 3505) it
 * does not hold, so no complete trace: before, 0 traces were read in silence (received
 * 0, rejected 0); now the file is rejected by name with the byte offsets.  The input is
 * the segy fuzz target's seed of that shape. */
Test(file_input, announced_headers_without_traces_rejected_by_name, .timeout = 60)
{
    const char *b = getenv("SEISLIVE_BUILD");
    cr_assert_not_null(b);
    char seed[4096];
    snprintf(seed, sizeof seed, "%s/../../tests/fuzz/corpus/segy/bad-ext-header-missing", b);
    FILE *f = fopen(seed, "rb");
    cr_assert_not_null(f, "%s", seed);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    cr_assert_gt(n, 3600);
    char *dir = test_tmpdir();
    char path[1024], text[4096], log[1024];
    snprintf(path, sizeof path, "%s/a.segy", dir);
    f = fopen(path, "wb");
    cr_assert_eq(fwrite(buf, 1, n, f), n);
    fclose(f);
    snprintf(text, sizeof text,
             TS_SMALL_RTM_CFG "[input]\nkind = \"files\"\npaths = [\"%s\"]\n[output]\ndir = \"%s/out\"\n"
             "[log]\nlevel = \"info\"\n", path, dir);
    char *cfg = test_write_file(dir, "r.toml", text);
    snprintf(log, sizeof log, "%s/run.log", dir);
    pid_t pid = ts_spawn_run(cfg, log);
    int rc = ts_wait(pid, 50);
    cr_assert_eq(rc, 0, "status %d (see %s)", rc, log);
    cr_assert_eq(ts_count_in_file(log, "no complete trace"), 1, "not rejected by name (see %s)", log);
    cr_assert_eq(ts_count_in_file(log, "received 1, rejected 1"), 1, "not counted (see %s)", log);
    free(cfg);
    test_rmtree(dir);
    free(dir);
}

/* A file cut inside the first trace of the NEXT shot leaves the last shot whole: it is
 * stacked, and the partial trace is counted once (before: the complete shot 109 was
 * refused as "incomplete" and the cut counted twice). */
Test(file_input, cut_inside_the_next_shot_keeps_the_last_shot, .timeout = 60)
{
    char *dir = test_tmpdir();
    char seg[600], log[600], out[600], cfg[2048];
    snprintf(seg, sizeof seg, "%s/cut.segy", dir);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    int ks[3] = {3, 9, 5};
    struct seg_opts o = {0};
    size_t len, tb = 240 + 4 * (size_t)NS;
    char *b = segy_bytes(ks, 3, &o, &len);
    /* shots 103 and 109 whole, then 300 bytes of shot 105's first trace */
    write_bytes(seg, "wb", b, 3600 + 2 * NTR * tb + 300);
    job_config(cfg, sizeof cfg, seg, out, "");
    cr_assert_eq(ts_wait(ts_spawn_job(cfg, log), 30), 0);
    cr_assert_eq(ts_count_in_file(log, "a truncated trace"), 1, "see %s", log);
    cr_assert_eq(ts_count_in_file(log, "incomplete"), 0, "a whole shot refused, see %s", log);
    cr_assert_eq(ts_count_in_file(log, "received 3, rejected 1"), 1, "counts, see %s", log);
    int64_t units;
    float *img = read_image(out, &units);
    cr_assert_eq(units, 2);
    float want[TS_CELLS];
    ts_batch_image(ks, 2, NTR, NS, want);
    for (int i = 0; i < TS_CELLS; i++)
        cr_assert_eq(img[i], want[i], "cell %d", i);
    free(img);
    free(b);
    test_rmtree(dir);
    free(dir);
}

/* A shot in the middle of a file with fewer traces than the binary header's count (byte
 * 3213; a fixed channel count with fewer live traces) is not "being written": it is
 * stacked, the field is said to be no fixed count once, and the shots after it too
 * (before: refused as incomplete, a whole survey lost shot by shot). */
Test(file_input, fewer_traces_mid_file_is_not_a_cut_shot, .timeout = 60)
{
    char *dir = test_tmpdir();
    char seg[600], log[600], out[600], cfg[2048];
    snprintf(seg, sizeof seg, "%s/live.segy", dir);
    snprintf(log, sizeof log, "%s/job.log", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    int ks[3] = {3, 9, 5};
    struct seg_opts o = {.per_ensemble = NTR};
    size_t len, tb = 240 + 4 * (size_t)NS;
    char *b = segy_bytes(ks, 3, &o, &len);
    /* drop the last 5 traces of the middle shot (109) */
    size_t cut_at = 3600 + (2 * NTR - 5) * tb, cut = 5 * tb;
    memmove(b + cut_at, b + cut_at + cut, len - cut_at - cut);
    write_bytes(seg, "wb", b, len - cut);
    job_config(cfg, sizeof cfg, seg, out, "");
    cr_assert_eq(ts_wait(ts_spawn_job(cfg, log), 30), 0);
    cr_assert_eq(ts_count_in_file(log, "taken as not a fixed count"), 1, "see %s", log);
    cr_assert_eq(ts_count_in_file(log, "incomplete"), 0, "a shot refused, see %s", log);
    cr_assert_eq(ts_count_in_file(log, "received 3, rejected 0"), 1, "counts, see %s", log);
    int64_t units;
    float *img = read_image(out, &units);
    cr_assert_eq(units, 3);
    free(img);
    free(b);
    test_rmtree(dir);
    free(dir);
}
