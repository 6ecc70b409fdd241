/* bench_pipeline — the streaming runtime's two targets:
 *
 *  1. overlap: N units of M MiB stream through the full runtime (ingest thread fills
 *     the pinned slots, the worker copies each to the GPU on the copy stream while the
 *     previous unit computes on the compute stream) against the same kernels run
 *     back to back on data already on the GPU.  Target: >= 95 % (copies hidden).
 *     The kernel (burn_run, tools/burn.cu) does PASSES FMAs per element; PASSES is calibrated so a
 *     unit computes for about --compute-ms (default 20 ms), well above its copy.
 *     The memory source copies each unit into its slot with wire_copy_f32, the copy a
 *     ZeroMQ receive makes (io/wire.h): once on one thread (the runtime before the
 *     parallel copy) and once on wire_copy_threads() threads (the runtime now).
 *     Each run gives two rows: STEADY STATE (first to last unit finished, N - 1
 *     intervals: the rate of a long stream) and WALL (the whole pipeline_run call,
 *     with the one-time setup of the slots and the pipeline fill).  The verdict line
 *     under the table compares the steady state with the target.
 *  2. file ingest: io_uring reads (fixed buffers, O_DIRECT) of a file into the pinned
 *     slots against `dd iflag=direct` of the same file.  Target: >= 80 %.
 *     Plus the full runtime fed from that file (io_uring -> slots -> H2D -> compute).
 *
 *   seislive-bench pipeline [--units N] [--mib M] [--compute-ms T] [--file PATH]
 *                           [--file-mib F] [--json]
 * GPU rows need a CUDA build and device; the file rows run anywhere. */
#define LOG_COMPONENT "bench"
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/uring_reader.h"
#include "io/wire.h"
#include "kernels/backend.h"
#include "kernels/device.h"
#include "stream/error.h"
#include "stream/log.h"
#include "stream/metrics.h"
#include "stream/pipeline.h"
#include "tools/bench.h"
#include "tools/burn.h"

struct opts {
    int units;
    double mib;
    double compute_ms;
    const char *file;
    double file_mib;
    int json;
};

struct row {
    const char *what;
    double seconds, units_per_s, gb_per_s, ratio;
    const char *note;
};

static struct row rows[16];
static int nrows;
static char verdict[400]; /* the overlap target, stated under the table */

static void add_row(const char *what, double s, double ups, double gbps, double ratio,
                    const char *note)
{
    if (nrows < (int)(sizeof rows / sizeof rows[0]))
        rows[nrows++] = (struct row){what, s, ups, gbps, ratio, note};
}

/* ---- sources for the runtime ---- */

#ifdef SEISLIVE_CUDA

struct mem_src {
    const float *src;      /* one unit's data in ordinary memory (what a receive delivers) */
    size_t bytes;
    int units;
    struct uring_file *file; /* when set: read the units from it instead */
};

static int mem_run(void *ctx, struct ingest *in)
{
    struct mem_src *m = ctx;
    for (int u = 0; u < m->units; u++) {
        double t0 = now_s();
        int i = ingest_reserve(in);
        if (i < 0)
            return 0;
        struct slot_hdr *h = &in->hdr[i];
        double t1 = now_s();
        if (m->file) {
            ssize_t got = uring_reader_read(in->ring, m->file, ingest_slot(in, i), m->bytes,
                                            (off_t)((size_t)u * m->bytes) % m->file->size, i);
            if (got < (ssize_t)m->bytes)
                return got < 0 ? (int)got : err_set(-EIO, "short read");
        } else {
            wire_copy_f32(ingest_slot(in, i), m->src, m->bytes / sizeof(float), false);
        }
        h->kind = SLOT_RAW;
        h->id = u;
        h->bytes = m->bytes;
        h->t_arrive = t0;
        h->wait_s = t1 - t0;
        h->decode_s = now_s() - t1;
        ingest_commit(in, i);
    }
    return 0;
}

static void mem_close(void *ctx)
{
    (void)ctx;
}

struct burn_job {
    float *acc;
    size_t n;
    int passes;
    int finished;
    double t_first, t_last; /* first and last unit finished (steady-state rate) */
};

static int burn_process(void *ctx, const struct pipeline_unit *u, bool snap)
{
    struct burn_job *b = ctx;
    (void)snap;
    return burn_run(b->acc, u->dev, b->n, b->passes, u->stream);
}

static int burn_finish(void *ctx, const struct slot_hdr *h, const struct pipeline_io *io, bool p,
                       bool c)
{
    struct burn_job *b = ctx;
    (void)h, (void)io, (void)p, (void)c;
    double t = now_s();
    if (b->finished++ == 0)
        b->t_first = t;
    b->t_last = t;
    return 0;
}

/* Compute alone: UNITS kernels on data already on the device, back to back. */
static int compute_only(const struct sl_device *dev, struct burn_job *b, float *dsrc, int units, double *secs)
{
    void *st, *e0 = NULL, *e1 = NULL;
    int rc = dev_stream_create(dev, &st);
    if (rc)
        return rc;
    if (!(rc = dev_event_create(dev, &e0, true)) && !(rc = dev_event_create(dev, &e1, true)))
        rc = burn_run(b->acc, dsrc, b->n, b->passes, st); /* warm-up */
    if (!rc)
        rc = dev_event_record(dev, e0, st);
    for (int u = 0; u < units && !rc; u++)
        rc = burn_run(b->acc, dsrc, b->n, b->passes, st);
    if (!rc)
        rc = dev_event_record(dev, e1, st);
    if (!rc)
        rc = dev_event_sync(dev, e1);
    float ms = 0;
    if (!rc)
        rc = dev_event_elapsed_ms(dev, e0, e1, &ms);
    *secs = 1e-3 * ms;
    dev_event_destroy(dev, e0);
    dev_event_destroy(dev, e1);
    dev_stream_destroy(dev, st);
    return rc;
}

static int run_pipeline(const struct sl_device *dev, struct burn_job *b, struct mem_src *m,
                        int slots, double *secs, struct metrics *mt)
{
    struct pipeline_conf pc = {.slots = slots, .slot_bytes = m->bytes, .io_method = URING_AUTO,
                               .publish_every = 1};
    struct source src = {.name = m->file ? "file" : "memory", .ctx = m, .run = mem_run,
                         .close = mem_close};
    struct pipeline_ops ops = {.name = "burn", .ctx = b, .wants_device = true, .async = true,
                               .process = burn_process, .finish = burn_finish};
    metrics_init(mt);
    b->finished = 0;
    double t0 = now_s();
    int rc = pipeline_run(&pc, dev, NULL, &src, &ops, mt);
    *secs = now_s() - t0;
    return rc;
}
#endif

/* dd with O_DIRECT over FILE: seconds, or < 0. */
static double dd_seconds(const char *file, double mib)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "dd if='%s' of=/dev/null bs=4M iflag=direct 2>&1", file);
    double t0 = now_s();
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[512], last[512] = "";
    while (fgets(line, sizeof line, p))
        snprintf(last, sizeof last, "%s", line);
    int st = pclose(p);
    double s = now_s() - t0;
    if (st != 0) {
        log_warn("dd failed: %s", last);
        return -1;
    }
    (void)mib;
    return s;
}

/* io_uring (fixed buffers, O_DIRECT) reads of the whole file into rotating slots. */
static int uring_ingest(const char *file, size_t unit, int nslots, double *secs, bool *direct,
                        bool *fixed, bool *uring)
{
    struct uring_reader r;
    int rc = uring_reader_init(&r, URING_AUTO);
    if (rc)
        return rc;
    struct slots s;
    rc = slots_create(&s, nslots, unit, 0, &r, NULL);
    if (rc) {
        uring_reader_close(&r);
        return rc;
    }
    struct uring_file f;
    rc = uring_file_open(&f, file, true);
    if (!rc) {
        *direct = f.fd_direct >= 0;
        *fixed = r.registered;
        *uring = r.uring;
        double t0 = now_s();
        int k = 0;
        for (off_t off = 0; off < f.size && !rc; off += (off_t)unit, k = (k + 1) % nslots) {
            ssize_t got = uring_reader_read(&r, &f, slot_data(&s, k), unit, off, k);
            if (got < 0)
                rc = (int)got;
        }
        *secs = now_s() - t0;
        uring_file_close(&f);
    }
    slots_destroy(&s);
    uring_reader_close(&r);
    return rc;
}

/* The ingest copy alone: one unit from ordinary memory into a slot (page-locked for
 * PIN when it is a GPU) with wire_copy_f32 on 1, 2, 4, 8 threads (up to the cores), as rows. */
static int copy_sweep(size_t unit, const struct sl_device *pin)
{
    struct slots sl;
    if (slots_create(&sl, 2, unit, 0, NULL, pin) < 0) {
        log_warn("copy sweep: %s", err_msg());
        return 1;
    }
    int best = 1;
    double best_s = 1e30;
    float *src = malloc(unit);
    for (size_t i = 0; i < unit / 4; i++)
        src[i] = (float)(i % 977) * 1e-3f;
    static char what[4][96], note[4][96];
    int k = 0;
    for (int t = 1; t <= 8 && t <= omp_get_num_procs(); t *= 2, k++) {
        wire_set_copy_threads(t);
        wire_copy_f32(slot_data(&sl, 0), src, unit / 4, false); /* warm */
        double t0 = now_s();
        const int reps = 8;
        for (int r = 0; r < reps; r++)
            wire_copy_f32(slot_data(&sl, r % 2), src, unit / 4, false);
        double per = (now_s() - t0) / reps;
        if (per < best_s) {
            best_s = per;
            best = t;
        }
        snprintf(what[k], sizeof what[k], "ingest copy into %s slot, %d thread%s", pin ? "pinned" : "a",
                 t, t > 1 ? "s" : "");
        snprintf(note[k], sizeof note[k], "wire_copy_f32 of one unit, mean of %d", reps);
        add_row(what[k], per, 1 / per, unit / per / 1e9, 0, note[k]);
    }
    wire_set_copy_threads(0);
    int nt = wire_copy_threads(unit);
    for (int i = 0; i < k; i++)
        if ((1 << i) == nt)
            snprintf(note[i] + strlen(note[i]), sizeof note[i] - strlen(note[i]),
                     " (the runtime's choice)");
    free(src);
    slots_destroy(&sl);
    return best;
}

static int make_file(const char *path, double mib)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    size_t chunk = 8 << 20;
    float *buf = malloc(chunk);
    for (size_t i = 0; i < chunk / 4; i++)
        buf[i] = (float)(i % 1000) * 1e-3f;
    size_t total = (size_t)(mib * 1048576.0);
    for (size_t done = 0; done < total;) {
        size_t n = total - done < chunk ? total - done : chunk;
        if (write(fd, buf, n) != (ssize_t)n) {
            free(buf);
            close(fd);
            return err_set(-EIO, "%s: write", path);
        }
        done += n;
    }
    free(buf);
    fdatasync(fd);
    close(fd);
    /* Drop the file from the page cache so buffered fallbacks are not flattered. */
    fd = open(path, O_RDONLY);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    return 0;
}

static void print_table(const struct opts *o, const char *device)
{
    if (o->json) {
        printf("{\"benchmark\":\"pipeline\",\"device\":\"%s\",\"rows\":[", device);
        for (int i = 0; i < nrows; i++)
            printf("%s{\"what\":\"%s\",\"seconds\":%.4f,\"units_per_s\":%.3f,\"gb_per_s\":%.3f,"
                   "\"ratio\":%.4f,\"note\":\"%s\"}", i ? "," : "", rows[i].what, rows[i].seconds,
                   rows[i].units_per_s, rows[i].gb_per_s, rows[i].ratio, rows[i].note);
        printf("]%s%s%s}\n", verdict[0] ? ",\"verdict\":\"" : "", verdict,
               verdict[0] ? "\"" : "");
        return;
    }
    printf("device: %s; %d units of %.0f MiB\n\n", device, o->units, o->mib);
    printf("| run | seconds | units/s | GB/s | vs reference | note |\n");
    printf("| --- | ---: | ---: | ---: | ---: | --- |\n");
    for (int i = 0; i < nrows; i++) {
        char ups[32] = "-", ratio[32] = "";
        if (rows[i].units_per_s > 0)
            snprintf(ups, sizeof ups, "%.2f", rows[i].units_per_s);
        if (rows[i].ratio > 0)
            snprintf(ratio, sizeof ratio, "%.1f %%", 100 * rows[i].ratio);
        printf("| %s | %.3f | %s | %.2f | %s | %s |\n", rows[i].what, rows[i].seconds, ups,
               rows[i].gb_per_s, ratio, rows[i].note);
    }
    if (verdict[0])
        printf("\n%s\n", verdict);
}

int bench_pipeline(int argc, char **argv)
{
    struct opts o = {.units = 32, .mib = 64, .compute_ms = 20, .file = NULL, .file_mib = 2048};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            o.json = 1;
        else if (!strcmp(argv[i], "--units") && i + 1 < argc)
            o.units = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mib") && i + 1 < argc)
            o.mib = atof(argv[++i]);
        else if (!strcmp(argv[i], "--compute-ms") && i + 1 < argc)
            o.compute_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--file") && i + 1 < argc)
            o.file = argv[++i];
        else if (!strcmp(argv[i], "--file-mib") && i + 1 < argc)
            o.file_mib = atof(argv[++i]);
        else {
            fprintf(stderr, "bench pipeline: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (o.units < 2) {
        fprintf(stderr, "bench pipeline: --units must be at least 2 (the steady state is measured "
                        "from the first unit finished to the last)\n");
        return 2;
    }
    log_set_level(LOG_WARN);
    size_t unit = (size_t)(o.mib * 1048576.0) / 4096 * 4096;
    char device[160] = "CPU (no CUDA device)";
    struct sl_device dev;
    bool gpu = backend_select("auto", &dev) == 0 && dev.kind == SL_DEVICE_CUDA;
    char tmpfile[512];
    const char *file = o.file;
    if (!file) {
        snprintf(tmpfile, sizeof tmpfile, "seislive-bench-pipeline.%d.f32", (int)getpid());
        file = tmpfile;
        if (make_file(file, o.file_mib) < 0) {
            fprintf(stderr, "bench pipeline: %s\n", err_msg());
            return 1;
        }
    }
    struct stat st;
    stat(file, &st);
    double fbytes = (double)st.st_size;
#ifdef SEISLIVE_CUDA
    if (gpu) {
        snprintf(device, sizeof device, "%s", dev.name);
        struct burn_job b = {.n = unit / 4, .passes = 16};
        float *dsrc = NULL;
        int rc = dev_alloc(&dev, unit, (void **)&b.acc);
        if (!rc)
            rc = dev_alloc(&dev, unit, (void **)&dsrc);
        if (!rc)
            rc = dev_zero(&dev, dsrc, unit, NULL);
        if (!rc)
            rc = dev_sync(&dev); /* the kernels run on other streams */
        /* Calibrate PASSES for about compute_ms per unit. */
        double s = 0;
        for (int it = 0; it < 6 && !rc; it++) {
            rc = compute_only(&dev, &b, dsrc, 4, &s);
            double per = s / 4 * 1e3;
            if (per > 0.8 * o.compute_ms && per < 1.25 * o.compute_ms)
                break;
            int p = (int)(b.passes * o.compute_ms / (per > 1e-3 ? per : 1e-3));
            b.passes = p < 1 ? 1 : p > 1 << 20 ? 1 << 20 : p;
        }
        double t_comp = 0;
        if (!rc)
            rc = compute_only(&dev, &b, dsrc, o.units, &t_comp);
        double per_comp = t_comp / o.units;
        static char note[12][200];
        int nn = 0;
        int best = 1;
        if (!rc) {
            snprintf(note[nn], sizeof note[nn], "kernels only, data on the GPU (%d passes, %.2f ms/unit)",
                     b.passes, 1e3 * per_comp);
            add_row("compute alone", t_comp, o.units / t_comp, o.units * unit / t_comp / 1e9, 0,
                    note[nn++]);
            best = copy_sweep(unit, &dev);
        }
        float *host = malloc(unit);
        for (size_t i = 0; i < unit / 4; i++)
            host[i] = (float)(i % 977) * 1e-3f;
        /* Memory source: the copy on one thread (the runtime before the parallel copy),
         * on the runtime's automatic thread count, and on the sweep's fastest if other. */
        int auto_threads = wire_copy_threads(unit);
        int copy_threads[3] = {1, auto_threads, best}, nmem = 1;
        if (auto_threads > 1)
            nmem++;
        if (best > 1 && best != auto_threads)
            copy_threads[nmem++] = best;
        struct metrics mm[3], mf;
        double t_mem[3] = {0, 0, 0}, ss_mem[3] = {0, 0, 0}, t_file = 0, ss_file = 0;
        for (int k = 0; k < nmem && !rc; k++) {
            struct mem_src ms = {.src = host, .bytes = unit, .units = o.units};
            wire_set_copy_threads(copy_threads[k]);
            rc = run_pipeline(&dev, &b, &ms, 3, &t_mem[k], &mm[k]);
            ss_mem[k] = (b.t_last - b.t_first) / (o.units - 1);
        }
        wire_set_copy_threads(0);
        struct uring_file uf;
        bool have_file = !rc && uring_file_open(&uf, file, true) == 0 && uf.size >= (off_t)unit;
        if (have_file) {
            struct mem_src fs = {.bytes = unit, .units = o.units, .file = &uf};
            rc = run_pipeline(&dev, &b, &fs, 3, &t_file, &mf);
            ss_file = (b.t_last - b.t_first) / (o.units - 1);
            uring_file_close(&uf);
        }
        if (rc) {
            fprintf(stderr, "bench pipeline: %s\n", err_msg());
        } else {
            for (int k = 0; k < nmem; k++) {
                const struct stage_stats *dec = &mm[k].st[ST_DECODE], *h2d = &mm[k].st[ST_H2D];
                double copy_s = dec->sum / (dec->n ? dec->n : 1), h2d_s = h2d->sum / (h2d->n ? h2d->n : 1);
                static char what[3][2][96];
                snprintf(what[k][0], sizeof what[k][0], "runtime, memory source, %d-thread copy: STEADY STATE",
                         copy_threads[k]);
                snprintf(note[nn], sizeof note[nn],
                         "first to last unit finished (N-1 units); copy %.2f ms + H2D %.2f ms per unit, 3 slots%s",
                         1e3 * copy_s, 1e3 * h2d_s, k == 1 ? "; the runtime's choice" : "");
                add_row(what[k][0], ss_mem[k] * (o.units - 1), 1 / ss_mem[k], unit / ss_mem[k] / 1e9,
                        per_comp / ss_mem[k], note[nn++]);
                snprintf(what[k][1], sizeof what[k][1], "runtime, memory source, %d-thread copy: wall",
                         copy_threads[k]);
                add_row(what[k][1], t_mem[k], o.units / t_mem[k], o.units * unit / t_mem[k] / 1e9,
                        t_comp / t_mem[k], "whole pipeline_run: slot setup + fill included");
                metrics_destroy(&mm[k]);
            }
            if (have_file) {
                add_row("runtime, file source: STEADY STATE", ss_file * (o.units - 1), 1 / ss_file,
                        unit / ss_file / 1e9, per_comp / ss_file,
                        "io_uring O_DIRECT reads into slots + H2D + compute");
                add_row("runtime, file source: wall", t_file, o.units / t_file,
                        o.units * unit / t_file / 1e9, t_comp / t_file,
                        "whole pipeline_run: slot setup + fill included");
                metrics_destroy(&mf);
            }
            int k = nmem > 1 ? 1 : 0; /* the runtime's own choice */
            snprintf(verdict, sizeof verdict,
                     "overlap (memory source, %d-thread copy, as the runtime copies): steady state "
                     "%.1f %% of compute alone, wall %.1f %%; target >= 95 %% in steady state: %s",
                     copy_threads[k], 100 * per_comp / ss_mem[k], 100 * t_comp / t_mem[k],
                     per_comp / ss_mem[k] >= 0.95 ? "MET" : "NOT MET");
        }
        free(host);
        dev_free(&dev, b.acc);
        dev_free(&dev, dsrc);
        if (rc)
            return 1;
    }
#else
    (void)gpu;
    (void)copy_sweep(unit, NULL);
#endif
    /* File ingest: dd O_DIRECT vs io_uring into the slots. */
    double t_dd = dd_seconds(file, o.file_mib);
    double t_ur = 0;
    bool direct = false, fixed = false, uring = false;
    int rc = uring_ingest(file, unit, 3, &t_ur, &direct, &fixed, &uring);
    if (rc) {
        fprintf(stderr, "bench pipeline: %s\n", err_msg());
        return 1;
    }
    static char n1[160], n2[160];
    if (t_dd > 0) {
        snprintf(n1, sizeof n1, "dd bs=4M iflag=direct, %.0f MiB", fbytes / 1048576.0);
        add_row("dd O_DIRECT (reference)", t_dd, 0, fbytes / t_dd / 1e9, 0, n1);
    }
    snprintf(n2, sizeof n2, "%s%s%s, %.0f MiB slots", uring ? "io_uring" : "pread",
             fixed ? " fixed buffers" : "", direct ? " O_DIRECT" : " buffered", o.mib);
    add_row("file -> pinned slots", t_ur, 0, fbytes / t_ur / 1e9, t_dd > 0 ? t_dd / t_ur : 0, n2);
    if (!o.file)
        unlink(file);
    print_table(&o, device);
    return 0;
}
