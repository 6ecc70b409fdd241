/* `seislive model -c FILE -o OUT.segy` end to end: the SEG-Y it writes is read back with
 * segyio (and byte by byte for the big-endian binary header) with the right headers, and
 * the direct wave arrives when it should.  A bad dt is refused with exit 2. */
#include <criterion/criterion.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <signal.h>
#include <unistd.h>

#include "tests/support.h"
#include "tests/test_stream_support.h"

static const char *conf_text =
    "[job]\nkind = \"model\"\n\n"
    "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [36, 30, 24]\nd = [10.0, 10.0, 10.0]\n"
    "o = [1000.0, 2000.0, 0.0]\n\n"
    "[propagator]\norder = 8\nt_max = 0.3\nf_peak = 15.0\npml_width = 10\nfree_surface = %s\n%s\n"
    "[acquisition]\nsources = [[1100.0, 2150.0, 60.0], [1250.5, 2150.0, 60.0]]\n"
    "receivers = [[1050.0, 2100.0, 50.0], [1200.0, 2150.0, 50.0], [1300.0, 2200.0, 50.0]]\n"
    "dt_out = 0.002\n";

static char *write_conf(const char *dir, const char *fs, const char *extra)
{
    char text[4096];
    snprintf(text, sizeof text, conf_text, fs, extra);
    return test_write_file(dir, "model.toml", text);
}

Test(model_cli, writes_segy_with_headers, .timeout = 120)
{
    char *dir = test_tmpdir();
    char *conf = write_conf(dir, "false", "");
    char out[4096];
    snprintf(out, sizeof out, "%s/shots.segy", dir);
    const char *argv[] = {test_prog("seislive"), "model", "-c", conf, "-o", out, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 100, &r), 0);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    test_run_free(&r);
    char part[4200];
    snprintf(part, sizeof part, "%s.part", out);
    cr_assert_neq(access(part, F_OK), 0, "%s left behind after a complete run", part);

    /* Binary header bytes 3217-3218 (interval) and 3221-3222 (samples), big-endian. */
    FILE *f = fopen(out, "rb");
    cr_assert_not_null(f);
    unsigned char b[400];
    fseek(f, 3200, SEEK_SET);
    cr_assert_eq(fread(b, 1, 400, f), 400);
    fclose(f);
    cr_assert_eq(b[16] << 8 | b[17], 2000, "interval");
    cr_assert_eq(b[20] << 8 | b[21], 151, "samples");
    cr_assert_eq(b[24] << 8 | b[25], 5, "format");

    segy_file *fp = segy_open(out, "rb");
    cr_assert_not_null(fp);
    char bin[SEGY_BINARY_HEADER_SIZE];
    cr_assert_eq(segy_binheader(fp, bin), SEGY_OK);
    int ns = segy_samples(bin);
    long trace0 = segy_trace0(bin);
    int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, ns), ntr = 0;
    cr_assert_eq(ns, 151);
    cr_assert_eq(segy_traces(fp, &ntr, trace0, bsize), SEGY_OK);
    cr_assert_eq(ntr, 6);
    const double src[2][3] = {{1100, 2150, 60}, {1250.5, 2150, 60}};
    const double rec[3][3] = {{1050, 2100, 50}, {1200, 2150, 50}, {1300, 2200, 50}};
    float *tr = malloc(ns * sizeof *tr);
    for (int t = 0; t < 6; t++) {
        char th[SEGY_TRACE_HEADER_SIZE];
        cr_assert_eq(segy_traceheader(fp, t, th, trace0, bsize), SEGY_OK);
        int32_t v;
        int s = t / 3, q = t % 3;
#define FIELD(name, want)                                                                    \
    do {                                                                                     \
        segy_get_field(th, name, &v);                                                        \
        cr_assert_eq(v, (int32_t)(want), "trace %d " #name ": %d, want %d", t, v, (int32_t)(want)); \
    } while (0)
        FIELD(SEGY_TR_SEQ_LINE, t + 1);
        FIELD(SEGY_TR_FIELD_RECORD, s + 1);
        FIELD(SEGY_TR_ENERGY_SOURCE_POINT, s + 1);
        FIELD(SEGY_TR_NUMBER_ORIG_FIELD, q + 1);
        FIELD(SEGY_TR_SOURCE_GROUP_SCALAR, -100);
        FIELD(SEGY_TR_ELEV_SCALAR, -100);
        FIELD(SEGY_TR_SOURCE_X, lround(src[s][0] * 100));
        FIELD(SEGY_TR_SOURCE_Y, lround(src[s][1] * 100));
        FIELD(SEGY_TR_SOURCE_DEPTH, lround(src[s][2] * 100));
        FIELD(SEGY_TR_GROUP_X, lround(rec[q][0] * 100));
        FIELD(SEGY_TR_GROUP_Y, lround(rec[q][1] * 100));
        FIELD(SEGY_TR_RECV_GROUP_ELEV, lround(-rec[q][2] * 100));
        FIELD(SEGY_TR_OFFSET, lround(hypot(rec[q][0] - src[s][0], rec[q][1] - src[s][1])));
        FIELD(SEGY_TR_SAMPLE_COUNT, 151);
        FIELD(SEGY_TR_SAMPLE_INTER, 2000);
        /* The direct wave: the trace peaks at t0 + r / c (Ricker, 15 Hz, t0 = 0.1 s). */
        cr_assert_eq(segy_readtrace(fp, t, tr, trace0, bsize), SEGY_OK);
        segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, ns, tr);
        int imax = 0;
        for (int i = 1; i < ns; i++)
            if (tr[i] > tr[imax])
                imax = i;
        double rr = sqrt(pow(rec[q][0] - src[s][0], 2) + pow(rec[q][1] - src[s][1], 2) +
                         pow(rec[q][2] - src[s][2], 2));
        double want = 1.5 / 15 + rr / 2000;
        cr_assert_lt(fabs(imax * 0.002 - want), 0.0041, "trace %d peaks at %g s, expected %g s", t, imax * 0.002, want);
        /* Amplitude of the Green's function: peak ~ 1 / (4 pi r). */
        cr_assert_float_eq(tr[imax], 1.0 / (4 * M_PI * rr), 0.1 / (4 * M_PI * rr), "trace %d peak %g", t, tr[imax]);
    }
    free(tr);
    segy_close(fp);
    test_rmtree(dir);
    free(dir);
    free(conf);
}

Test(model_cli, bad_dt_refused, .timeout = 30)
{
    char *dir = test_tmpdir();
    char *conf = write_conf(dir, "true", "dt = 0.01\n");
    char out[4096];
    snprintf(out, sizeof out, "%s/x.segy", dir);
    const char *argv[] = {test_prog("seislive"), "model", "-c", conf, "-o", out, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 30, &r), 0);
    cr_assert_neq(r.status, 0);
    cr_assert_not_null(strstr(r.err, "model.toml:17:1: [propagator] dt = 0.01 s exceeds the largest stable dt"), "%s", r.err);
    test_run_free(&r);
    const char *chk[] = {test_prog("seislive"), "check", "-c", conf, NULL};
    cr_assert_eq(test_run(chk, 30, &r), 0);
    cr_assert_eq(r.status, 2, "check exit %d: %s", r.status, r.err);
    test_run_free(&r);
    test_rmtree(dir);
    free(dir);
    free(conf);
}

/* Snapshots every N steps: raw float32 interior volumes named by shot and step. */
Test(model_cli, snapshots, .timeout = 60)
{
    char *dir = test_tmpdir();
    char extra[512];
    snprintf(extra, sizeof extra, "snapshot_every = 50\nsnapshot_dir = \"%s/snaps\"\nt_max = 0.1\n", dir);
    char text[4096];
    /* t_max given twice would be a duplicate key: build this config without the first. */
    snprintf(text, sizeof text, conf_text, "false", extra);
    char *tm = strstr(text, "t_max = 0.3\n");
    cr_assert_not_null(tm);
    memmove(tm, tm + strlen("t_max = 0.3\n"), strlen(tm + strlen("t_max = 0.3\n")) + 1);
    char *conf = test_write_file(dir, "snap.toml", text);
    char out[4096];
    snprintf(out, sizeof out, "%s/s.segy", dir);
    const char *argv[] = {test_prog("seislive"), "model", "-c", conf, "-o", out, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    test_run_free(&r);
    /* dt = 0.9 x the stable limit for 2000 m/s at 10 m, order 8: steps of ~2.04 ms, 50
     * steps per snapshot: snapshots at steps 50 (both shots) only within 0.1 s. */
    for (int shot = 1; shot <= 2; shot++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/snaps/shot%04d_step%06d_36x30x24.f32", dir, shot, 50);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "missing %s", path);
        fseek(f, 0, SEEK_END);
        cr_assert_eq(ftell(f), 36L * 30 * 24 * 4);
        float *v = malloc(36 * 30 * 24 * sizeof *v);
        fseek(f, 0, SEEK_SET);
        cr_assert_eq(fread(v, sizeof *v, 36 * 30 * 24, f), 36u * 30 * 24);
        fclose(f);
        double e = 0;
        for (int i = 0; i < 36 * 30 * 24; i++)
            e += (double)v[i] * v[i];
        cr_assert_gt(e, 0, "snapshot of shot %d is all zero", shot);
        free(v);
    }
    test_rmtree(dir);
    free(dir);
    free(conf);
}

/* Electromagnetic (GPR) mode: relative permittivity 4 gives v = c0 / 2; the trace is
 * written with its interval in picoseconds and the direct wave arrives at t0 + r / v. */
Test(model_cli, gpr_permittivity_model, .timeout = 60)
{
    char *dir = test_tmpdir();
    char *conf = test_write_file(dir, "em.toml",
        "[job]\nkind = \"model\"\n\n[model]\ntype = \"constant\"\nquantity = \"permittivity\"\n"
        "permittivity = 4.0\nn = [40, 24, 24]\nd = [0.04, 0.04, 0.04]\n\n[propagator]\norder = 8\n"
        "t_max = 2.5e-8\nf_peak = 2e8\npml_width = 10\n\n[acquisition]\n"
        "sources = [[0.3, 0.48, 0.48]]\nreceivers = [[1.3, 0.48, 0.48]]\n");
    char out[4096];
    snprintf(out, sizeof out, "%s/gpr.segy", dir);
    const char *argv[] = {test_prog("seislive"), "model", "-c", conf, "-o", out, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    test_run_free(&r);
    segy_file *fp = segy_open(out, "rb");
    cr_assert_not_null(fp);
    char bin[SEGY_BINARY_HEADER_SIZE];
    cr_assert_eq(segy_binheader(fp, bin), SEGY_OK);
    int32_t dt_ps;
    segy_get_bfield(bin, SEGY_BIN_INTERVAL, &dt_ps);
    int ns = segy_samples(bin);
    long trace0 = segy_trace0(bin);
    int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, ns);
    cr_assert(dt_ps > 10 && dt_ps < 1000, "interval %d ps", dt_ps);
    float *tr = malloc(ns * sizeof *tr);
    cr_assert_eq(segy_readtrace(fp, 0, tr, trace0, bsize), SEGY_OK);
    segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, ns, tr);
    int imax = 0;
    for (int i = 1; i < ns; i++)
        if (tr[i] > tr[imax])
            imax = i;
    double want = 1.5 / 2e8 + 1.0 / (299792458.0 / 2);
    cr_assert_lt(fabs(imax * dt_ps * 1e-12 - want), 2.0 * dt_ps * 1e-12, "peak at %g s, expected %g s",
                 imax * dt_ps * 1e-12, want);
    free(tr);
    segy_close(fp);
    test_rmtree(dir);
    free(dir);
    free(conf);
}

#define US_CONF                                                                                      \
    "[job]\nkind = \"model\"\n\n[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [80, 20, 20]\n"     \
    "d = [0.1, 0.1, 0.1]\n\n[propagator]\norder = 8\ndt = 7.4e-6\nt_max = 0.007\nf_peak = 800.0\n"       \
    "pml_width = 10\n\n[acquisition]\nsources = [[1.0, 1.0, 1.0]]\nreceivers = [[7.0, 1.0, 1.0]]\n"

/* The propagator's dt (7.4 us here) is not a whole number of microseconds, SEG-Y's
 * unit: the traces must be resampled to the interval the header states (7 us), not
 * written at 7.4 us under a 7 us header (a 5.4 % stretch of the time axis).  The
 * direct wave, read at the header's interval, arrives at t0 + r / v. */
Test(model_cli, output_interval_whole_us_and_arrival_time_right, .timeout = 120)
{
    char *dir = test_tmpdir();
    char *conf = test_write_file(dir, "m.toml", US_CONF "");
    char out[4096];
    snprintf(out, sizeof out, "%s/m.segy", dir);
    const char *argv[] = {test_prog("seislive"), "model", "-c", conf, "-o", out, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 100, &r), 0);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    test_run_free(&r);
    segy_file *fp = segy_open(out, "rb");
    cr_assert_not_null(fp);
    char bin[SEGY_BINARY_HEADER_SIZE];
    cr_assert_eq(segy_binheader(fp, bin), SEGY_OK);
    int32_t dt_us;
    segy_get_bfield(bin, SEGY_BIN_INTERVAL, &dt_us);
    cr_assert_eq(dt_us, 7);
    int ns = segy_samples(bin);
    long trace0 = segy_trace0(bin);
    int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, ns);
    cr_assert_eq(ns, 1001, "t_max / 7 us + 1 samples");
    float *tr = malloc(ns * sizeof *tr);
    cr_assert_eq(segy_readtrace(fp, 0, tr, trace0, bsize), SEGY_OK);
    segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, ns, tr);
    int imax = 1;
    for (int i = 1; i < ns - 1; i++)
        if (tr[i] > tr[imax])
            imax = i;
    /* sub-sample peak (parabola through the three samples) */
    double a = tr[imax - 1], b = tr[imax], c = tr[imax + 1];
    double tpk = (imax + 0.5 * (a - c) / (a - 2 * b + c)) * dt_us * 1e-6;
    double want = 1.5 / 800.0 + 6.0 / 2000.0;
    cr_assert_lt(fabs(tpk - want), 4 * 7e-6, "peak at %.6f s, expected %.6f s", tpk, want);
    fprintf(stderr, "model_cli: direct wave at %.6f s, analytic %.6f s\n", tpk, want);
    free(tr);
    segy_close(fp);
    test_rmtree(dir);
    free(dir);
    free(conf);
}

/* A dt_out SEG-Y cannot state is not taken silently: the warning names the key and
 * its place, and the interval actually written. */
Test(model_cli, dt_out_not_whole_us_warned_with_place, .timeout = 120)
{
    char *dir = test_tmpdir();
    char *conf = test_write_file(dir, "m.toml", US_CONF "dt_out = 7.4e-6\n");
    char out[4096];
    snprintf(out, sizeof out, "%s/m.segy", dir);
    const char *argv[] = {test_prog("seislive"), "model", "-c", conf, "-o", out, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 100, &r), 0);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.err, "m.toml:20:"), "%s", r.err);
    cr_assert_not_null(strstr(r.err, "[acquisition] dt_out = 7.4e-06 s is not a whole number of microseconds: "
                                     "traces written at 7 us"), "%s", r.err);
    test_run_free(&r);
    test_rmtree(dir);
    free(dir);
    free(conf);
}

/* A model run stopped by SIGTERM half way is not a result: its complete shots are kept in
 * OUT.part, OUT is not written and the exit status says it failed (before: exit 0 and a
 * SEG-Y file holding only the shots done so far, under the result's name). */
Test(model_cli, stopped_run_leaves_no_result_under_its_name, .timeout = 120)
{
    char *dir = test_tmpdir();
    char text[4096], log[4200], out[4200], part[4300];
    snprintf(text, sizeof text,
             "[job]\nkind = \"model\"\nname = \"long\"\n"
             "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [60, 60, 60]\nd = [10.0, 10.0, 10.0]\n"
             "[propagator]\norder = 8\nt_max = 3.0\nf_peak = 15.0\npml_width = 10\n"
             "[acquisition]\nsources = [[300.0, 300.0, 60.0], [310.0, 300.0, 60.0], [320.0, 300.0, 60.0]]\n"
             "receivers = [[200.0, 300.0, 50.0], [400.0, 300.0, 50.0]]\n"
             "[output]\ndir = \"%s\"\n[runtime]\ndevice = \"cpu\"\n[log]\nlevel = \"info\"\n", dir);
    char *conf = test_write_file(dir, "long.toml", text);
    snprintf(log, sizeof log, "%s/run.log", dir);
    snprintf(out, sizeof out, "%s/long.segy", dir);
    snprintf(part, sizeof part, "%s.part", out);
    pid_t pid = ts_spawn_run(conf, log);
    for (int i = 0; i < 600 && access(part, F_OK) != 0; i++) /* the writer is open */
        usleep(50000);
    cr_assert_eq(access(part, F_OK), 0, "no %s (see %s)", part, log);
    usleep(500000);
    cr_assert_eq(kill(pid, SIGTERM), 0);
    int rc = ts_wait(pid, 60);
    if (rc == -1)
        kill(pid, SIGKILL);
    cr_assert_eq(rc, 1, "seislive run: status %d after SIGTERM (see %s)", rc, log);
    cr_expect_neq(access(out, F_OK), 0, "%s exists: a stopped run left a short result", out);
    cr_expect_eq(access(part, F_OK), 0, "the partial output was not kept");
    cr_expect_eq(ts_count_in_file(log, "not written"), 1, "the log does not say so (see %s)", log);
    free(conf);
    if (rc == 1)
        test_rmtree(dir);
    free(dir);
}
