/* SAC input (io/sac_read.h): both byte orders read back as the same samples and header
 * fields; damaged files are refused with the byte offset; the locate job finds the same
 * events in SAC files (half of them byte-swapped) as in the miniSEED files they were
 * converted from; and the [input] time window leaves out what lies outside it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf/config.h"
#include "io/mseed_read.h"
#include "io/sac_read.h"
#include "stream/error.h"
#include "tests/support.h"

/* A SAC v6 header and data, written here word by word from the SAC manual's table
 * (independently of the reader): floats 0..69, ints 70..109, strings from byte 440. */
struct sac_hdr {
    float delta, b;
    int32_t nzyear, nzjday, nzhour, nzmin, nzsec, nzmsec;
    const char *kstnm, *kcmpnm, *knetwk, *khole;
};

static void put32(unsigned char *p, uint32_t v, int swap)
{
    if (swap)
        v = __builtin_bswap32(v);
    memcpy(p, &v, 4);
}

static void putf(unsigned char *p, float f, int swap)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    put32(p, v, swap);
}

static void putk(unsigned char *p, const char *s)
{
    const char *v = s ? s : "-12345";
    size_t n = strlen(v) < 8 ? strlen(v) : 8;
    memset(p, ' ', 8);
    memcpy(p, v, n);
}

static size_t sac_image(unsigned char **out, const struct sac_hdr *h, const float *x, int n, int swap)
{
    size_t len = 632 + 4 * (size_t)n;
    unsigned char *b = calloc(1, len);
    cr_assert_not_null(b);
    for (int w = 0; w < 70; w++)
        putf(b + 4 * w, -12345.0f, swap);
    for (int w = 70; w < 110; w++)
        put32(b + 4 * w, (uint32_t)-12345, swap);
    for (int k = 0; k < 24; k++)
        putk(b + 440 + 8 * k, NULL); /* 440 + 24 x 8 = 632 */
    memcpy(b + 448, "-12345          ", 16); /* KEVNM is 16 characters */
    putf(b + 0, h->delta, swap);
    putf(b + 20, h->b, swap);
    putf(b + 24, h->b + h->delta * (float)(n - 1), swap); /* E */
    int32_t ref[6] = {h->nzyear, h->nzjday, h->nzhour, h->nzmin, h->nzsec, h->nzmsec};
    for (int k = 0; k < 6; k++)
        put32(b + 280 + 4 * k, (uint32_t)ref[k], swap);
    put32(b + 304, 6, swap);         /* NVHDR */
    put32(b + 316, (uint32_t)n, swap); /* NPTS */
    put32(b + 340, 1, swap);         /* IFTYPE = ITIME */
    put32(b + 420, 1, swap);         /* LEVEN */
    putk(b + 440, h->kstnm);
    putk(b + 464, h->khole);
    putk(b + 592, h->kcmpnm);
    putk(b + 600, h->knetwk);
    for (int i = 0; i < n; i++)
        putf(b + 632 + 4 * i, x[i], swap);
    *out = b;
    return len;
}

static char *write_bytes(const char *dir, const char *name, const void *p, size_t n)
{
    char *path = malloc(4096);
    snprintf(path, 4096, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(p, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
    return path;
}

Test(sac, both_byte_orders_read_back_the_same)
{
    char *dir = test_tmpdir();
    enum { N = 1000 };
    float x[N];
    for (int i = 0; i < N; i++) /* values whose bytes differ: a swap mix-up cannot go unseen */
        x[i] = (float)(sin(0.037 * i) * 1234.5 + i * 1e-3);
    /* 2024, day 122 = 1 May (leap year), 12:00:00.250, B = 1.5 s: first sample at
     * 2024-05-01T12:00:01.750Z = 1714521600 + 43201.75 s */
    struct sac_hdr h = {.delta = 0.004f, .b = 1.5f, .nzyear = 2024, .nzjday = 122, .nzhour = 12, .nzmin = 0,
                        .nzsec = 0, .nzmsec = 250, .kstnm = "SKR01", .kcmpnm = "HHZ", .knetwk = "7L", .khole = NULL};
    const int64_t want_t0 = (1714521600LL + 43201) * 1000000000LL + 750000000LL;
    struct sac_trace t[2];
    for (int swap = 0; swap < 2; swap++) {
        unsigned char *img;
        size_t len = sac_image(&img, &h, x, N, swap);
        char *path = write_bytes(dir, swap ? "swapped.sac" : "native.sac", img, len);
        cr_expect_eq(sac_detect(img, len), 1);
        cr_assert_eq(sac_read_file(path, &t[swap]), 0, "%s", err_msg());
        cr_expect_eq(t[swap].swapped, swap);
        cr_expect_eq(t[swap].npts, N);
        cr_expect_eq(t[swap].t0_ns, want_t0, "t0 %lld ns", (long long)t[swap].t0_ns);
        cr_expect(t[swap].delta == 1.0 / 250.0, "DELTA 0.004f is 1/250 s, not %.12g", t[swap].delta);
        cr_expect_str_eq(t[swap].id.sta, "SKR01");
        cr_expect_str_eq(t[swap].id.cha, "HHZ");
        cr_expect_str_eq(t[swap].id.net, "7L");
        cr_expect_str_eq(t[swap].id.loc, "", "undefined KHOLE is an empty location");
        cr_expect_eq(memcmp(t[swap].x, x, sizeof x), 0, "samples differ (byte order %d)", swap);
        free(img);
        free(path);
    }
    cr_expect_eq(memcmp(t[0].x, t[1].x, sizeof x), 0);
    sac_trace_free(&t[0]);
    sac_trace_free(&t[1]);
    test_rmtree(dir);
    free(dir);
}

Test(sac, damaged_files_refused_with_the_byte_offset)
{
    char *dir = test_tmpdir();
    float x[100] = {0};
    struct sac_hdr h = {.delta = 0.01f, .b = 0, .nzyear = 2024, .nzjday = 1, .kstnm = "A", .kcmpnm = "HHZ"};
    unsigned char *img;
    size_t len = sac_image(&img, &h, x, 100, 1);
    struct sac_trace t;
    /* truncated inside the data: 50 whole samples and half of one */
    cr_expect_eq(sac_read_buffer("t.sac", img, 632 + 202, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "t.sac: byte 834: file ends after 50 of the 100 samples NPTS (byte 316)"),
                       "%s", err_msg());
    /* truncated inside the header */
    cr_expect_eq(sac_read_buffer("t.sac", img, 300, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "t.sac: byte 300: file ends inside the 632-byte SAC header"), "%s",
                       err_msg());
    /* bytes after the data */
    unsigned char *big = calloc(1, len + 8);
    memcpy(big, img, len);
    cr_expect_eq(sac_read_buffer("t.sac", big, len + 8, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "t.sac: byte 1032: 8 bytes after the 100 samples"), "%s", err_msg());
    free(big);
    /* not a SAC file: NVHDR */
    put32(img + 304, 5, 1);
    cr_expect_eq(sac_detect(img, len), 0);
    cr_expect_eq(sac_read_buffer("t.sac", img, len, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "t.sac: byte 304: NVHDR"), "%s", err_msg());
    put32(img + 304, 6, 1);
    /* a sample count beyond the file, negative, or a sample interval of 0 */
    put32(img + 316, 0x7fffffff, 1);
    cr_expect_eq(sac_read_buffer("t.sac", img, len, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "of the 2147483647 samples NPTS"), "%s", err_msg());
    put32(img + 316, (uint32_t)-7, 1);
    cr_expect_eq(sac_read_buffer("t.sac", img, len, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "t.sac: byte 316: NPTS -7"), "%s", err_msg());
    put32(img + 316, 100, 1);
    putf(img + 0, 0.0f, 1);
    cr_expect_eq(sac_read_buffer("t.sac", img, len, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "t.sac: byte 0: DELTA 0"), "%s", err_msg());
    putf(img + 0, 0.01f, 1);
    /* undefined reference time */
    put32(img + 280, (uint32_t)-12345, 1);
    cr_expect_eq(sac_read_buffer("t.sac", img, len, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "t.sac: byte 280: NZYEAR -12345"), "%s", err_msg());
    put32(img + 280, 2023, 1);
    put32(img + 284, 366, 1); /* 2023 has 365 days */
    cr_expect_eq(sac_read_buffer("t.sac", img, len, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "t.sac: byte 284: NZJDAY 366 is past the end of 2023"), "%s", err_msg());
    /* a reference time beyond int64 ns (NZYEAR 9999: the fuzzer's signed overflow), one
     * inside but with B past the year 2255, and a trace longer than 1e8 s */
    put32(img + 280, 9999, 1);
    put32(img + 284, 1, 1);
    cr_expect_eq(sac_read_buffer("t.sac", img, len, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "t.sac: byte 280: the first sample (NZYEAR 9999, NZJDAY 1, B 0 s) is "
                                         "2.53371e+11 s from 1970: outside the years 1685-2255"), "%s", err_msg());
    put32(img + 280, 2255, 1);
    putf(img + 20, 9e8f, 1);
    cr_expect_eq(sac_read_buffer("t.sac", img, len, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "t.sac: byte 280: the first sample (NZYEAR 2255, NZJDAY 1, B 9e+08 s)"),
                       "%s", err_msg());
    putf(img + 20, 0, 1);
    put32(img + 280, 2024, 1);
    {
        float y[150] = {0};
        struct sac_hdr hl = {.delta = 1e6f, .b = 0, .nzyear = 2024, .nzjday = 1, .kstnm = "A", .kcmpnm = "HHZ"};
        unsigned char *il;
        size_t ll = sac_image(&il, &hl, y, 150, 1);
        cr_expect_eq(sac_read_buffer("t.sac", il, ll, &t), -EINVAL);
        cr_expect_not_null(strstr(err_msg(), "t.sac: byte 316: NPTS 150 samples of DELTA 1e+06 s span 1.5e+08 s, "
                                             "more than 1e8 s"), "%s", err_msg());
        free(il);
    }
    /* unevenly spaced */
    put32(img + 420, 0, 1);
    cr_expect_eq(sac_read_buffer("t.sac", img, len, &t), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "t.sac: byte 420: LEVEN 0"), "%s", err_msg());
    put32(img + 420, 1, 1);
    cr_expect_eq(sac_read_buffer("t.sac", img, len, &t), 0, "%s", err_msg());
    sac_trace_free(&t);
    free(img);
    test_rmtree(dir);
    free(dir);
}

/* ---- the locate job on SAC files, and the time window ---- */

static struct run_result run_prog(const char *const argv[])
{
    struct run_result r;
    cr_assert_eq(test_run(argv, 240, &r), 0);
    return r;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc(1, (size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void write_conf(const char *dir, const char *name, const char *paths, const char *format, const char *extra,
                       const char *out)
{
    char text[16384];
    snprintf(text, sizeof text,
             "[job]\nkind = \"locate\"\n[locate]\nstations = \"%s/rec/stations.txt\"\nvp = 3500.0\nvs = 2000.0\n"
             "grid_n = [17, 17, 17]\ngrid_d = [50.0, 50.0, 50.0]\ngrid_o = [0.0, 0.0, 500.0]\ntrigger = \"mad\"\n"
             "threshold = 8.0\n[input]\nkind = \"files\"\npaths = [\"%s\"]\nformat = \"%s\"\n%s\n[output]\n"
             "dir = \"%s/%s\"\n[runtime]\ndevice = \"cpu\"\n",
             dir, paths, format, extra, dir, out);
    free(test_write_file(dir, name, text));
}

Test(sac, locate_job_same_events_as_miniseed_and_time_window, .timeout = 240)
{
    char *dir = test_tmpdir();
    char rec[4096], sacdir[4096];
    snprintf(rec, sizeof rec, "%s/rec", dir);
    snprintf(sacdir, sizeof sacdir, "%s/sac", dir);
    const char *gen[] = {test_prog("seislive-gen"), "micro", "-o", rec, "--count", "5,5", "--spacing", "200",
                         "--event", "400,400,900,3.0", "--event", "500,300,1100,9.0", "--duration", "14",
                         "--noise", "0.02", "--seed", "11", NULL};
    struct run_result r = run_prog(gen);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    /* every miniSEED channel as a SAC file, every other one byte-swapped */
    struct mseed_set set = {0};
    struct mseed_stats ms = {0};
    char glob_ms[4200];
    cr_assert_eq(mkdir(sacdir, 0777), 0);
    snprintf(glob_ms, sizeof glob_ms, "%s", rec);
    cr_assert_eq(mseed_read_path(glob_ms, &set, &ms), 0, "%s", err_msg());
    cr_assert_gt(set.ntr, 20);
    for (int c = 0; c < set.ntr; c++) {
        const struct mseed_trace *t = &set.tr[c];
        cr_assert_eq(t->nseg, 1);
        /* the reference time at the first sample's whole second, B the rest (exact in float
         * for the generator's start on a whole second) */
        int64_t s0 = t->seg[0].t0_ns / 1000000000LL;
        cr_assert_eq(t->seg[0].t0_ns % 1000000000LL, 0);
        time_t tt = (time_t)s0;
        struct tm tm;
        gmtime_r(&tt, &tm);
        struct sac_hdr h = {.delta = (float)(1.0 / t->rate), .b = 0, .nzyear = tm.tm_year + 1900,
                            .nzjday = tm.tm_yday + 1, .nzhour = tm.tm_hour, .nzmin = tm.tm_min, .nzsec = tm.tm_sec,
                            .nzmsec = 0, .kstnm = t->id.sta, .kcmpnm = t->id.cha, .knetwk = t->id.net,
                            .khole = t->id.loc[0] ? t->id.loc : NULL};
        cr_assert(h.delta == 0.004f, "the generator's 250 samples/s");
        unsigned char *img;
        size_t len = sac_image(&img, &h, t->seg[0].x, (int)t->seg[0].n, c % 2);
        char name[64];
        snprintf(name, sizeof name, "%s.%s.%s.sac", t->id.net, t->id.sta, t->id.cha);
        free(write_bytes(sacdir, name, img, len));
        free(img);
    }
    mseed_set_free(&set);
    /* DELTA 0.004f is taken as 1/250 s (sac_read.h): the same samples at the same times */
    char paths[4200];
    snprintf(paths, sizeof paths, "%s/*.mseed", rec);
    write_conf(dir, "ms.toml", paths, "mseed", "", "out-ms");
    write_conf(dir, "sac.toml", sacdir, "auto", "", "out-sac");
    write_conf(dir, "win.toml", sacdir, "sac", "start_time = \"2026-01-01T00:00:06Z\"", "out-win");
    const char *names[3] = {"ms.toml", "sac.toml", "win.toml"}, *outs[3] = {"out-ms", "out-sac", "out-win"};
    char *csv[3];
    for (int k = 0; k < 3; k++) {
        char conf[4200], path[4200];
        snprintf(conf, sizeof conf, "%s/%s", dir, names[k]);
        const char *argv[] = {test_prog("seislive"), "run", "-c", conf, NULL};
        r = run_prog(argv);
        cr_assert_eq(r.status, 0, "%s: %s", names[k], r.err);
        if (k == 1)
            cr_expect_not_null(strstr(r.err, "0 miniSEED files (0 records), 75 SAC files"), "%s", r.err);
        if (k == 2) {
            /* 6 s of 250 samples/s on 75 channels before the window */
            cr_expect_not_null(strstr(r.err, "112500 samples outside it not stacked"), "%s", r.err);
            cr_expect_not_null(strstr(r.err, "112500 samples outside the time window"), "%s", r.err);
        }
        test_run_free(&r);
        snprintf(path, sizeof path, "%s/%s/events.csv", dir, outs[k]);
        csv[k] = slurp(path);
        cr_log_info("%s:\n%s", names[k], csv[k]);
    }
    cr_expect_eq(count_lines(csv[0]), 3, "miniSEED: header + 2 events:\n%s", csv[0]);
    cr_expect_str_eq(csv[1], csv[0], "SAC and miniSEED give different events");
    /* the window from 6 s: the event at 3 s is gone, the one at 9 s is still found */
    cr_expect_eq(count_lines(csv[2]), 2, "window: header + 1 event:\n%s", csv[2]);
    cr_expect_not_null(strstr(csv[2], "2026-01-01T00:00:09"), "%s", csv[2]);
    for (int k = 0; k < 3; k++)
        free(csv[k]);
    test_rmtree(dir);
    free(dir);
}

/* The window keeps the samples at times in [start, end), counted exactly. */
Test(sac, window_keeps_start_inclusive_end_exclusive)
{
    struct mseed_set set = {0};
    struct mseed_stats st = {0};
    struct trace_channel id = {"XX", "A", "", "HHZ"};
    float x[100];
    for (int i = 0; i < 100; i++)
        x[i] = (float)i;
    /* 100 samples at 10 ms from t = 1 s, and a second segment 2 s later */
    cr_assert_eq(mseed_set_add(&set, &id, 100.0, 1000000000LL, x, 100, &st, "a"), 0, "%s", err_msg());
    cr_assert_eq(mseed_set_add(&set, &id, 100.0, 4000000000LL, x, 100, &st, "b"), 0, "%s", err_msg());
    cr_assert_eq(set.tr[0].nseg, 2);
    /* [1.255 s, 4.5 s): samples 26..99 of the first (ceil(25.5) = 26), 0..49 of the second */
    int64_t dropped = mseed_set_window(&set, 1255000000LL, 4500000000LL);
    cr_expect_eq(dropped, 26 + 50);
    cr_assert_eq(set.tr[0].nseg, 2);
    cr_expect_eq(set.tr[0].seg[0].n, 74);
    cr_expect_eq(set.tr[0].seg[0].t0_ns, 1260000000LL);
    cr_expect(set.tr[0].seg[0].x[0] == 26.0f);
    cr_expect_eq(set.tr[0].seg[1].n, 50);
    cr_expect(set.tr[0].seg[1].x[49] == 49.0f);
    /* a window past everything leaves nothing */
    cr_expect_eq(mseed_set_window(&set, 9000000000LL, INT64_MAX), 124);
    cr_expect_eq(set.tr[0].nseg, 0);
    mseed_set_free(&set);
}

/* A window time that does not parse, or an end not after the start, stops the config
 * load naming the key's line. */
Test(sac, window_keys_checked_at_load)
{
    static const char *const bad[][2] = {
        {"start_time = \"yesterday\"", "t.toml:4"},
        {"end_time = \"2024-13-01T00:00:00Z\"", "t.toml:4"},
        {"start_time = \"2024-05-01T12:00:00Z\"\nend_time = \"2024-05-01T11:00:00Z\"", "t.toml:5"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "[input]\nkind = \"files\"\npaths = [\"x\"]\n%s\n[job]\nkind = \"locate\"\n"
                 "[locate]\nstations = \"/dev/null\"\n", bad[i][0]);
        struct sl_config cfg;
        cr_expect_eq(config_load_string(text, "t.toml", &cfg), -EINVAL, "case %zu", i);
        cr_expect_not_null(strstr(err_msg(), bad[i][1]), "case %zu: %s", i, err_msg());
        cr_expect_not_null(strstr(err_msg(), "_time"), "case %zu: %s", i, err_msg());
        config_free(&cfg);
    }
    struct sl_config cfg;
    cr_assert_eq(config_load_string("[input]\nkind = \"files\"\npaths = [\"x\"]\n"
                                    "start_time = \"2024-05-01T12:00:00.25Z\"\nend_time = \"2024-05-02\"\n"
                                    "[job]\nkind = \"locate\"\n[locate]\nstations = \"/dev/null\"\n",
                                    "t.toml", &cfg), 0, "%s", err_msg());
    config_free(&cfg);
    /* where it would be ignored (the rtm job; watched folders) it is refused */
    cr_expect_eq(config_load_string("[input]\nkind = \"files\"\npaths = [\"x\"]\nstart_time = \"2024-05-01\"\n",
                                    "t.toml", &cfg), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "t.toml:4"), "%s", err_msg());
    cr_expect_not_null(strstr(err_msg(), "would be ignored"), "%s", err_msg());
    config_free(&cfg);
    cr_expect_eq(config_load_string("[input]\nkind = \"files\"\npaths = [\"x\"]\nwatch = true\n"
                                    "end_time = \"2024-05-01\"\n[job]\nkind = \"locate\"\n[locate]\n"
                                    "stations = \"/dev/null\"\n", "t.toml", &cfg), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "t.toml:5"), "%s", err_msg());
    config_free(&cfg);
}
