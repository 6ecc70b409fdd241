/* make_seeds — writes the seed corpora of tests/fuzz/corpus/NAME with the project's own
 * writers (wire encoders, segy_write, mseed_write, state_save, nll_write), so every
 * seed is a valid input that reaches deep into its parser, plus a few classic
 * malformed ones.  Seeds named ok-* are valid and must be accepted
 * (tests/test_fuzz_corpus.c checks that the targets still reach their parsers' ends),
 * bad-* are malformed on purpose.  `make fuzz-seeds` runs it; the output is committed (small). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/mseed_write.h"
#include "io/nonlinloc.h"
#include "io/segy_write.h"
#include "io/wire.h"
#include "stream/error.h"
#include "stream/state.h"
#include "tests/fuzz/fuzz.h"

static const char *out_root;

struct buf {
    char *p;
    size_t n;
};

static void put(struct buf *b, const void *d, size_t n)
{
    b->p = realloc(b->p, b->n + n + 1);
    if (!b->p)
        abort();
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void puts_(struct buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void save(const char *target, const char *name, const void *d, size_t n)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/corpus/%s", out_root, target);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/corpus/%s/%s", out_root, target, name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(d, 1, n, f) != n || fclose(f) != 0) {
        perror(p);
        exit(1);
    }
}

static void save_buf(const char *target, const char *name, struct buf *b)
{
    save(target, name, b->p, b->n);
    free(b->p);
    b->p = NULL;
    b->n = 0;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)len + 1);
    if (!p || fread(p, 1, (size_t)len, f) != (size_t)len)
        abort();
    fclose(f);
    *n = (size_t)len;
    return p;
}

static void frame(struct buf *b)
{
    put(b, FUZZ_FRAME_SEP, FUZZ_FRAME_SEP_LEN);
}

/* Records of two channels, 40 samples each from T0, in ENC with RECLEN-byte records. */
static void mseed_records(struct mseed_buf *mb, int enc, int reclen, int64_t t0, int nsamp)
{
    float x[256];
    for (int i = 0; i < nsamp; i++)
        x[i] = (float)((i % 7) - 3) * 1.5f;
    struct mseed_channel ch[2] = {
        {"XX", "STA1", "00", "HHZ", 100.0, enc, reclen, 1000.0, 1},
        {"XX", "STA2", "", "HHZ", 100.0, enc, reclen, 1000.0, 1},
    };
    for (int c = 0; c < 2; c++)
        if (mseed_pack_f32(&ch[c], t0, x, (size_t)nsamp, mseed_buf_sink, mb) < 0) {
            fprintf(stderr, "mseed_pack_f32: %s\n", err_msg());
            exit(1);
        }
}

static void wire_seeds(void)
{
    struct buf b = {0};
    /* f32 shot: 2 traces of 4 samples. */
    struct wire_shot_hdr sh = {.shot_id = 7, .ns = 4, .dt = 0.002, .ntr = 2, .src = {10, 20, 5},
                               .format = WIRE_F32, .segy_format = 5};
    char *j = wire_encode_shot_header(&sh, 3);
    float rec[6] = {0, 0, 0, 10, 0, 0}, smp[8] = {0, 1, 2, 3, -1, -2, -3, 0.5f};
    puts_(&b, j);
    frame(&b);
    put(&b, rec, sizeof rec);
    frame(&b);
    put(&b, smp, sizeof smp);
    save_buf("wire", "ok-shot-f32", &b);
    /* The same header with a truncated sample frame (WIRE_REJ_SIZE). */
    puts_(&b, j);
    frame(&b);
    put(&b, rec, sizeof rec);
    frame(&b);
    put(&b, smp, sizeof smp - 4);
    save_buf("wire", "bad-shot-f32-truncated", &b);
    free(j);
    /* segy shot: 2 traces of 4 big-endian IEEE samples behind 240-byte headers. */
    sh.format = WIRE_SEGY;
    j = wire_encode_shot_header(&sh, 4);
    puts_(&b, j);
    frame(&b);
    for (int t = 0; t < 2; t++) {
        unsigned char th[240] = {0};
        th[8] = 0, th[11] = 7;     /* field record 7 */
        th[114] = 0, th[115] = 4;  /* 4 samples */
        th[116] = 0x07, th[117] = 0xd0; /* 2000 us */
        th[71] = 1; /* coordinate scalar 1 */
        th[83] = (unsigned char)(10 * t); /* group x */
        put(&b, th, sizeof th);
        for (int i = 0; i < 4; i++) {
            float v = smp[t * 4 + i];
            unsigned char be[4], *le = (unsigned char *)&v;
            be[0] = le[3], be[1] = le[2], be[2] = le[1], be[3] = le[0];
            put(&b, be, 4);
        }
    }
    save_buf("wire", "ok-shot-segy", &b);
    free(j);
    /* f32 trace block with channel names. */
    struct trace_channel chn[2] = {{"XX", "STA1", "00", "HHZ"}, {"XX", "STA2", "", "HHZ"}};
    struct wire_traces_hdr th = {.t0_ns = 1700000000000000000LL, .dt = 0.01, .nrec = 2, .ns = 4,
                                 .format = WIRE_F32, .chan = chn};
    j = wire_encode_traces_header(&th, 5);
    puts_(&b, j);
    frame(&b);
    put(&b, smp, sizeof smp);
    save_buf("wire", "ok-traces-f32", &b);
    free(j);
    /* miniSEED trace block: two channels of 40 samples, one record each. */
    th.format = WIRE_MSEED;
    th.ns = 40;
    j = wire_encode_traces_header(&th, 6);
    struct mseed_buf mb = {0};
    mseed_records(&mb, MSEED_ENC_STEIM2, 512, th.t0_ns, 40);
    puts_(&b, j);
    frame(&b);
    put(&b, mb.p, mb.len);
    save_buf("wire", "ok-traces-mseed", &b);
    free(mb.p);
    free(j);
    puts_(&b, "{\"type\":\"end\",\"v\":1}");
    save_buf("wire", "ok-end", &b);
    struct wire_volume_hdr vh = {.seq = 9, .units = 3, .n = {4, 3, 2}, .d = {10, 10, 5},
                                 .o = {0, 0, 0}, .final = true, .slices = true, .at = {1, 1, 1}};
    j = wire_encode_volume(&vh);
    puts_(&b, j);
    save_buf("wire", "bad-volume-as-input", &b);
    free(j);
    puts_(&b, "{\"type\":\"shot\",\"v\":2,\"shot_id\":1}");
    save_buf("wire", "bad-version", &b);
    puts_(&b, "{\"type\":\"traces\",\"v\":1,\"t0_ns\":0,\"dt\":-1,\"nrec\":99999999,\"ns\":0,\"format\":\"f32\"}");
    save_buf("wire", "bad-values", &b);
    puts_(&b, "not json at all");
    save_buf("wire", "bad-not-json", &b);
}

static void segy_seeds(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/seed.sgy", fuzz_dir());
    struct segy_writer *w;
    if (segy_writer_open(path, 8, 2000, -100, "C 1 fuzz seed", &w) != 0) {
        fprintf(stderr, "%s\n", err_msg());
        exit(1);
    }
    float x[8] = {0, 0.5f, 1, -1, 0.25f, 0, 3, -2};
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < 2; r++) {
            struct segy_trace_info ti = {.shot = s + 1, .channel = r + 1, .src = {100.0 * s, 0, 5},
                                         .rec = {50.0 * r, 10, 0}};
            segy_writer_trace(w, &ti, x);
        }
    if (segy_writer_close(w) != 0) {
        fprintf(stderr, "%s\n", err_msg());
        exit(1);
    }
    size_t n;
    char *p = slurp(path, &n);
    unlink(path);
    save("segy", "ok-ieee-2shots", p, n);
    /* The same as IBM floats (format code 1 at byte 3225): the samples decode differently
     * but stay finite. */
    p[3225] = 1;
    save("segy", "ok-ibm-2shots", p, n);
    p[3225] = 5;
    /* One extended textual header announced (byte 3505) that the file does not hold. */
    p[3504] = 0, p[3505] = 1;
    save("segy", "bad-ext-header-missing", p, 3600 + 240);
    free(p);

    /* Seismic Unix: the same traces, little-endian headers, no file header. */
    struct buf b = {0};
    for (int t = 0; t < 3; t++) {
        unsigned char h[240] = {0};
        h[8] = (unsigned char)(1 + t / 2);     /* field record, LE */
        h[114] = 8;                            /* ns = 8 */
        h[116] = 0xd0, h[117] = 0x07;          /* dt = 2000 us */
        h[70] = 0x9c, h[71] = 0xff;            /* coordinate scalar -100 */
        h[80] = (unsigned char)(t * 10);       /* group x */
        put(&b, h, sizeof h);
        put(&b, x, sizeof x);
    }
    save_buf("su", "ok-three-traces", &b);
    unsigned char h[240] = {0};
    h[114] = 0xff, h[115] = 0xff; /* 65535 samples, none there */
    h[116] = 1;
    save("su", "bad-ns-65535-short", h, sizeof h);
}

static void mseed_seeds(void)
{
    static const struct { int enc, reclen; const char *name; } k[] = {
        {MSEED_ENC_FLOAT32, 256, "ok-float32-256"}, {MSEED_ENC_INT32, 512, "ok-int32-512"},
        {MSEED_ENC_STEIM1, 512, "ok-steim1-512"}, {MSEED_ENC_STEIM2, 256, "ok-steim2-256"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        struct mseed_buf mb = {0};
        mseed_records(&mb, k[i].enc, k[i].reclen, 1700000000000000000LL, 200);
        save("mseed", k[i].name, mb.p, mb.len);
        free(mb.p);
    }
    /* A gap, an overlap and junk between records. */
    struct mseed_buf mb = {0};
    mseed_records(&mb, MSEED_ENC_STEIM2, 512, 1700000000000000000LL, 40);
    mseed_buf_sink("junk-junk-junk-junk-junk-junk-junk-junk-junk-junk", 50, &mb);
    mseed_records(&mb, MSEED_ENC_STEIM2, 512, 1700000001000000000LL, 40);
    mseed_records(&mb, MSEED_ENC_STEIM1, 512, 1700000001200000000LL, 40);
    save("mseed", "bad-gap-overlap-junk", mb.p, mb.len);
    free(mb.p);
}

/* A raw float32 volume of N values V0 + STEP i (little-endian, x fastest) into B. */
static void put_volume(struct buf *b, int n, float v0, float step)
{
    for (int i = 0; i < n; i++) {
        float v = v0 + step * (float)i;
        put(b, &v, 4);
    }
}

/* A SEG-Y model volume (one trace of NZ depth samples per x-y column, x fastest, IEEE)
 * of NXY columns, values V0 + STEP i, into B, written by the project's SEG-Y writer. */
static void put_segy_volume(struct buf *b, int nxy, int nz, float v0, float step)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/model.sgy", fuzz_dir());
    struct segy_writer *w;
    if (segy_writer_open(path, nz, 1000, -100, "C 1 fuzz seed: a model volume", &w) != 0) {
        fprintf(stderr, "%s\n", err_msg());
        exit(1);
    }
    float x[64];
    for (int t = 0; t < nxy; t++) {
        for (int k = 0; k < nz; k++)
            x[k] = v0 + step * (float)(t * nz + k);
        struct segy_trace_info ti = {.shot = 1, .channel = t + 1};
        segy_writer_trace(w, &ti, x);
    }
    if (segy_writer_close(w) != 0) {
        fprintf(stderr, "%s\n", err_msg());
        exit(1);
    }
    size_t n;
    char *d = slurp(path, &n);
    unlink(path);
    put(b, d, n);
    free(d);
}

static void part(struct buf *b)
{
    put(b, FUZZ_PART_SEP, FUZZ_PART_SEP_LEN);
}

/* The config target: the repository's own files (the demo files name data the demo
 * writes first: rejected here, a missing path named by file:line, which is a fine seed
 * too), then small configurations with their files (tests/fuzz/fuzz_config.c: the TOML,
 * then p1 .. p5 after FUZZ_PART_SEP) that reach the model loader, the TTI parameter
 * files (raw and SEG-Y), the wavelet file and the time step's limit. */
static void config_seeds(const char *repo)
{
    static const char *const files[] = {"conf/seislive.example.toml", "tools/demo.toml", "tools/demo-locate.toml",
                                        "tools/demo-tti.toml", "tools/demo-tti-iso.toml", NULL};
    for (int i = 0; files[i]; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", repo, files[i]);
        size_t n;
        char *t = slurp(p, &n);
        char name[256];
        snprintf(name, sizeof name, "%s%s", i == 0 ? "ok-" : "paths-", strrchr(files[i], '/') + 1);
        if (i == 0) { /* the example: every key, without its comments (within -max_len) */
            size_t m = 0;
            for (char *line = t, *next; line < t + n; line = next) {
                char *nl = memchr(line, '\n', (size_t)(t + n - line));
                next = nl ? nl + 1 : t + n;
                if (*line != '#' && *line != '\n') {
                    memmove(t + m, line, (size_t)(next - line));
                    m += (size_t)(next - line);
                }
            }
            n = m;
        }
        save("config", name, t, n);
        free(t);
    }
    const char *bad = "[job]\nkind = \"rtm\"\n[model]\nnx = -3\nbogus = [1, 2,\n";
    save("config", "bad-syntax.toml", bad, strlen(bad));
    struct buf b = {0};
    /* TTI, constants */
    puts_(&b, "[model]\nn = [8, 4, 6]\nd = [10.0, 10.0, 10.0]\nvelocity = 2500.0\nepsilon = 0.2\ndelta = 0.1\n"
              "theta = 30.0\nphi = 45.0\n[propagator]\nphysics = \"tti\"\ntti_sigma = 0.75\nt_max = 0.2\n"
              "[input]\nkind = \"zmq\"\n");
    save_buf("config", "ok-tti-constant.toml", &b);
    /* a TTI constant without physics = "tti" */
    puts_(&b, "[model]\nn = [8, 4, 6]\nepsilon = 0.1\n");
    save_buf("config", "bad-tti-acoustic.toml", &b);
    /* TTI, every parameter from a raw file (x fastest, little-endian); 36 points */
    static const char tti_raw[] = "[model]\ntype = \"raw\"\nfile = \"p1\"\nn = [4, 3, 3]\nd = [10.0, 10.0, 10.0]\n"
                                  "epsilon_file = \"p2\"\ndelta_file = \"p3\"\ntheta_file = \"p4\"\nphi_file = \"p5\"\n"
                                  "[propagator]\nphysics = \"tti\"\norder = 4\nt_max = 0.1\n[input]\nkind = \"zmq\"\n";
    for (int v = 0; v < 4; v++) {
        puts_(&b, tti_raw);
        part(&b);
        put_volume(&b, 36, 2000, 10);
        part(&b);
        if (v == 1) { /* a NaN epsilon at point 5 (byte offset 20) */
            put_volume(&b, 5, 0.1f, 0.005f);
            float nan = NAN;
            put(&b, &nan, 4);
            put_volume(&b, 30, 0.1f, 0.005f);
        } else {
            put_volume(&b, v == 3 ? 35 : 36, 0.1f, 0.005f); /* 3: one value short */
        }
        part(&b);
        put_volume(&b, 36, 0.05f, 0.002f);
        part(&b);
        put_volume(&b, 36, v == 2 ? 60 : -40, 2.5f); /* 2: the tilt reaches 147.5 degrees */
        part(&b);
        put_volume(&b, 36, -400, 25);
        save_buf("config", v == 0 ? "ok-tti-raw-files" : v == 1 ? "bad-tti-epsilon-nan"
                          : v == 2 ? "bad-tti-theta-range" : "bad-tti-delta-short", &b);
    }
    /* TTI beside a constant velocity: epsilon from SEG-Y (by its name), theta raw */
    puts_(&b, "[model]\nn = [3, 2, 5]\nd = [10.0, 10.0, 10.0]\nvelocity = 3000.0\nepsilon_file = \"p1.sgy\"\n"
              "theta_file = \"p2\"\ndelta = 0.05\n[propagator]\nphysics = \"tti\"\nt_max = 0.1\n"
              "[input]\nkind = \"zmq\"\n");
    part(&b);
    put_segy_volume(&b, 6, 5, 0.1f, 0.01f);
    part(&b);
    put_volume(&b, 30, -30, 2);
    save_buf("config", "ok-tti-segy-beside-constant", &b);
    /* a SEG-Y velocity and TTI files (SEG-Y too: the velocity's format) */
    puts_(&b, "[model]\ntype = \"segy\"\nfile = \"p1\"\nn = [2, 2, 4]\nd = [5.0, 5.0, 5.0]\nphi_file = \"p2\"\n"
              "epsilon = 0.15\n[propagator]\nphysics = \"tti\"\nt_max = 0.05\nf_peak = 20.0\n"
              "[input]\nkind = \"zmq\"\n");
    part(&b);
    put_segy_volume(&b, 4, 4, 1800, 50);
    part(&b);
    put_segy_volume(&b, 4, 4, -720, 90);
    save_buf("config", "ok-tti-segy-files", &b);
    /* a layered model, the optimized operator at the band "auto", a wavelet file */
    puts_(&b, "[model]\ntype = \"layered\"\nn = [10, 1, 12]\nd = [10.0, 10.0, 10.0]\nlayer_depths = [40.0]\n"
              "layer_velocities = [1800.0, 2600.0]\n[propagator]\noperator = \"optimized\"\noperator_band = \"auto\"\n"
              "wavelet = \"file\"\nwavelet_file = \"p1\"\nwavelet_dt = 0.002\nt_max = 0.3\n"
              "[input]\nkind = \"zmq\"\n");
    part(&b);
    puts_(&b, "# a short wavelet, one sample per line\n0\n0.2\n1.0\n0.2\n-0.4\n\n-0.1 # tail\n0\n");
    save_buf("config", "ok-layered-optimized-wavelet-file", &b);
    /* a permittivity (GPR) raw model, z fastest, big-endian; the implicit operator */
    puts_(&b, "[model]\ntype = \"raw\"\nquantity = \"permittivity\"\nfile = \"p1\"\nn = [3, 3, 2]\n"
              "d = [0.05, 0.05, 0.05]\nlayout = \"z-fastest\"\nbyte_order = \"big\"\npermeability = 1.0\n"
              "[propagator]\noperator = \"implicit\"\nt_max = 1e-7\nf_peak = 2e8\n[input]\nkind = \"zmq\"\n");
    part(&b);
    for (int i = 0; i < 18; i++) {
        float e = 4.0f + 0.5f * (float)i;
        uint32_t u;
        memcpy(&u, &e, 4);
        u = __builtin_bswap32(u);
        put(&b, &u, 4);
    }
    save_buf("config", "ok-permittivity-zfast-big", &b);
    /* the RTM and runtime keys: checkpoints, both imaging conditions, a domain split */
    puts_(&b, "[job]\nkind = \"rtm\"\n[model]\nn = [12, 6, 10]\n[propagator]\norder = 8\nt_max = 0.2\n"
              "time_dispersion = \"correct\"\ncpml_memory = \"bf16\"\npml_width = [4, 4, 4, 4, 0, 4]\n"
              "free_surface = true\n[rtm]\nstrategy = \"checkpoint\"\ncheckpoints = 5\n"
              "checkpoint_schedule = \"uniform\"\nimaging = \"both\"\nimage_every = 2\nlaplacian = true\n"
              "random_ramp = \"linear\"\nmemory_budget = 0.5\n[runtime]\ndecompose = \"domain\"\nsplit = [1, 2, 1]\n"
              "ranks = 2\n[output]\nimage_every = 2\npicture_at = [3, 2, 5]\n[input]\nkind = \"zmq\"\n");
    save_buf("config", "ok-rtm-domain.toml", &b);
    /* the locate job: stations and corrections files (p1, p2) */
    puts_(&b, "[job]\nkind = \"locate\"\n[locate]\nstations = \"p1\"\ncorrections = \"p2\"\nphases = \"P\"\n"
              "vp = 3000.0\ngrid_n = [5, 5, 5]\ncf = \"kurtosis\"\nkurtosis_window = 0.5\nband = [2.0, 20.0]\n"
              "[input]\nkind = \"files\"\npaths = [\"p3\"]\nformat = \"mseed\"\n");
    part(&b);
    puts_(&b, "# name x y z\nA01 100 200 -5\nA02 300 100 0\n");
    part(&b);
    puts_(&b, "A01 P 0.01\n");
    part(&b);
    save_buf("config", "ok-locate-files", &b);
}

static void state_seeds(void)
{
    struct state s;
    state_init(&s);
    float img[8] = {1, 2, 3, 4, 5, 6, 7, 8}, ill[8] = {1, 1, 1, 1, 2, 2, 2, 2};
    s.fingerprint = 0x1234abcd5678ef90ULL;
    s.n[0] = 2, s.n[1] = 2, s.n[2] = 2;
    s.image = img, s.n_image = 8;
    s.illum = ill, s.n_illum = 8;
    int64_t led[3] = {4, 9, 2};
    s.ledger = led, s.n_ledger = s.cap_ledger = 3;
    if (state_save(fuzz_dir(), &s) != 0) {
        fprintf(stderr, "%s\n", err_msg());
        exit(1);
    }
    char p[1024];
    snprintf(p, sizeof p, "%s/state.bin", fuzz_dir());
    size_t n;
    char *d = slurp(p, &n);
    save("state", "ok-rtm", d, n);
    free(d);
    /* locate: no image (grid 0), the processed-time intervals in the ledger
     * (stream/time_ledger.h), a catalogue. */
    char cat[] = "2026-11-23T10:00:00Z 100 200 300 0.9\n";
    int64_t iv[4] = {1690000000000000000LL, 1690000100000000000LL, 1700000000000000000LL,
                     1700000100000000000LL};
    s.image = NULL, s.n_image = 0, s.illum = NULL, s.n_illum = 0;
    s.n[0] = s.n[1] = s.n[2] = 0;
    s.ledger = iv, s.n_ledger = 4, s.sources = NULL;
    s.last_t_ns = iv[3];
    s.catalogue = cat, s.catalogue_len = strlen(cat);
    if (state_save(fuzz_dir(), &s) != 0)
        exit(1);
    d = slurp(p, &n);
    save("state", "ok-locate", d, n);
    d[n - 1] ^= 1; /* checksum mismatch */
    save("state", "bad-checksum", d, n);
    free(d);
    unlink(p);
}

static void nll_seeds(void)
{
    struct nll_grid g = {.n = {3, 4, 5}, .o = {-1, -2, 0}, .d = {0.5, 0.5, 0.25}};
    strcpy(g.type, "TIME");
    strcpy(g.label, "STA1");
    g.src[0] = 0.1, g.src[1] = 0.2, g.src[2] = 0;
    strcpy(g.transform, "TRANSFORM  NONE");
    float v[60];
    for (int i = 0; i < 60; i++)
        v[i] = 0.01f * (float)i;
    g.v = v;
    char root[1024];
    snprintf(root, sizeof root, "%s/grid", fuzz_dir());
    for (int twod = 0; twod < 2; twod++) {
        if (twod)
            g.n[0] = 2; /* TIME2D: T(distance, depth) */
        if (nll_write(root, &g) != 0)
            exit(1);
        struct buf b = {0};
        char p[1100];
        snprintf(p, sizeof p, "%s.hdr", root);
        size_t n;
        char *t = slurp(p, &n);
        put(&b, t, n);
        free(t);
        put(&b, FUZZ_PART_SEP, FUZZ_PART_SEP_LEN);
        snprintf(p, sizeof p, "%s.buf", root);
        t = slurp(p, &n);
        put(&b, t, n);
        free(t);
        save_buf("nonlinloc", twod ? "ok-time2d" : "ok-time3d", &b);
    }
    /* A DOUBLE velocity grid of 1 x 2 x 2 with no station line. */
    struct buf b = {0};
    puts_(&b, "1 2 2 0 0 0 1 1 1 VELOCITY DOUBLE\nTRANSFORM  SIMPLE LatOrig 64.0 LongOrig -17.0 RotCW 0\n");
    put(&b, FUZZ_PART_SEP, FUZZ_PART_SEP_LEN);
    double dv[4] = {5.0, 5.5, 6.0, 6.5};
    put(&b, dv, sizeof dv);
    save_buf("nonlinloc", "ok-velocity-double", &b);
    char p[1100];
    snprintf(p, sizeof p, "%s.hdr", root);
    unlink(p);
    snprintf(p, sizeof p, "%s.buf", root);
    unlink(p);
}

static void stations_seeds(void)
{
    struct buf b = {0};
    puts_(&b, "# name x y z\nA01 100 200 -5.5\n\nZK.B02, -50.25, 0, 12 # buried\nC03 0 0 0\n");
    put(&b, FUZZ_PART_SEP, FUZZ_PART_SEP_LEN);
    puts_(&b, "A01 P 0.012\nZK.B02 s -0.004\n");
    save_buf("stations", "ok-cartesian-corrections", &b);
    puts_(&b, "Latitude,Longitude,Elevation,Name\n64.1,-17.2,1.2,SK01\n64.15,-17.1,0.9,SK02\n"
              "64.2,-17.3,1.05,XX.SK03\n");
    save_buf("stations", "ok-quakemigrate", &b);
    puts_(&b, "sta lat lon elev_m\nS1 10.5 20.25 100\nS2 10.6 20.3 -20\n");
    save_buf("stations", "ok-geo-header-m", &b);
    puts_(&b, "A 1 2\nB 1 2 3 4\n");
    save_buf("stations", "bad-fields", &b);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s OUT_DIR REPO (OUT_DIR/corpus/NAME is written)\n", argv[0]);
        return 2;
    }
    out_root = argv[1];
    char p[1024];
    snprintf(p, sizeof p, "%s/corpus", out_root);
    mkdir(out_root, 0755);
    mkdir(p, 0755);
    wire_seeds();
    segy_seeds();
    mseed_seeds();
    config_seeds(argv[2]);
    state_seeds();
    nll_seeds();
    stations_seeds();
    return 0;
}
