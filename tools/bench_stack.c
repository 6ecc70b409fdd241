/* bench_stack — `seislive-bench stack`: throughput of the coherent stack (station-phase
 * sums per second) on trial grids of growing size, for the locate job's real-time case:
 * S single-phase stations at FS Hz, blocks of BLOCK seconds (nt = BLOCK x FS times per
 * stack call, each reading its CF window plus the travel-time overlap).  Prints per grid
 * the time of one block's stack, the real-time factor (stack + characteristic functions
 * of the block, over the block's duration; < 1 keeps up), the largest grid that keeps up
 * and a roofline model of the kernel with the ceilings measured in the same run.
 *
 *   seislive-bench stack [--grids 32,64,96,128,160] [--stations 2048] [--fs 500]
 *                        [--block 1.0] [--kernels staged,staged-db,direct] [--cpu-grid 16]
 *                        [--cpu-problems iceland,array50|none] [--cpu-norm count|none|geometric]
 *                        [--cpu-ref 1|0] [--device SPEC] [--json]
 *
 * The CPU rows: the old N^3 grid with the GPU's station count (--cpu-grid), and the
 * realistic problems of tools/stack_problem.h (--cpu-problems), each timed with the
 * reference (stack_run_cpu_ref, --cpu-ref 0 leaves it out) and every instruction-set
 * variant this CPU runs, with the threads, sums/s and the GB/s of unique data touched.
 * tools/bench-qm.sh times QuakeMigrate's C core on the same problems.
 *
 * Geometry: a 4 x 4 x 3 km volume 0.5 km below the surface, sampled by an N^3 trial grid;
 * stations on a jittered square surface array over it; P at 4000 m/s, straight rays
 * (delay tables built on the GPU by stack_cuda_delays_straight); CF rows random and
 * valid (every row takes part in every sum, as in a healthy array). */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf/config.h"
#include "kernels/backend.h"
#include "kernels/cf.h"
#include "kernels/device.h"
#include "kernels/stack.h"
#include "stream/error.h"
#include "stream/locate_setup.h"
#include "stream/log.h"
#include "tools/bench.h"
#include "tools/options.h"
#include "tools/stack_problem.h"

#define MAXG 16
static const double VOL[3] = {4000.0, 4000.0, 3000.0}, TOP = 500.0, VP = 4000.0;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static unsigned rng = 1u;
static double urand(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (double)(rng >> 8) / 16777216.0;
}

/* Stations: a jittered sqrt(S) x sqrt(S) array over the volume's surface. */
static float *make_stations(int ns)
{
    float *s = malloc((size_t)ns * 3 * sizeof(float));
    if (!s)
        return NULL;
    int side = (int)ceil(sqrt((double)ns));
    for (int i = 0; i < ns; i++) {
        double gx = (i % side + 0.5) / side, gy = (i / side + 0.5) / side;
        s[3 * i] = (float)((gx + 0.3 * (urand() - 0.5) / side) * VOL[0]);
        s[3 * i + 1] = (float)((gy + 0.3 * (urand() - 0.5) / side) * VOL[1]);
        s[3 * i + 2] = 0.0f;
    }
    return s;
}

static void grid_of(int n, int gn[3], double gd[3], double go[3])
{
    for (int a = 0; a < 3; a++) {
        gn[a] = n;
        gd[a] = VOL[a] / (n > 1 ? n - 1 : 1);
        go[a] = a == 2 ? TOP : 0.0;
    }
}

/* Host twin of stack_cuda_delays_straight's arithmetic for row R (the CPU row and the
 * window statistics). */
static void delays_row(const float *sta, int r, const int gn[3], const double gd[3], const double go[3], double dt,
                       uint16_t *out, size_t nj_pad)
{
    size_t nj = (size_t)gn[0] * gn[1] * gn[2];
    double inv = 1.0 / (VP * dt);
    for (size_t j = 0; j < nj_pad; j++) {
        if (j >= nj) {
            out[j] = 0;
            continue;
        }
        size_t i = j % (size_t)gn[0], m = (j / (size_t)gn[0]) % (size_t)gn[1], k = j / ((size_t)gn[0] * gn[1]);
        double x = go[0] + (double)i * gd[0] - sta[3 * r], y = go[1] + (double)m * gd[1] - sta[3 * r + 1],
               z = go[2] + (double)k * gd[2] - sta[3 * r + 2];
        out[j] = (uint16_t)llrint(sqrt(x * x + y * y + z * z) * inv);
    }
}

/* Largest delay over all rows (the farthest station from a grid corner) and the mean CF
 * window a 32-point tile stages per row (128 times + delay spread), over a sample of rows. */
static void delay_stats(const float *sta, int ns, const int gn[3], const double gd[3], const double go[3],
                        double dt, int *max_delay, double *mean_window)
{
    size_t nj = (size_t)gn[0] * gn[1] * gn[2], nj_pad = stack_nj_pad(nj);
    double inv = 1.0 / (VP * dt), far = 0;
    for (int r = 0; r < ns; r++)
        for (int c = 0; c < 8; c++) {
            double x = go[0] + (c & 1 ? gn[0] - 1 : 0) * gd[0] - sta[3 * r];
            double y = go[1] + (c & 2 ? gn[1] - 1 : 0) * gd[1] - sta[3 * r + 1];
            double z = go[2] + (c & 4 ? gn[2] - 1 : 0) * gd[2] - sta[3 * r + 2];
            far = fmax(far, sqrt(x * x + y * y + z * z));
        }
    *max_delay = (int)llrint(far * inv) + 1;
    uint16_t *row = malloc(nj_pad * sizeof(uint16_t));
    double sum = 0;
    size_t tiles = 0;
    int step = ns > 16 ? ns / 16 : 1;
    for (int r = 0; row && r < ns; r += step) {
        delays_row(sta, r, gn, gd, go, dt, row, nj_pad);
        for (size_t t = 0; t < nj_pad; t += STACK_J_TILE) {
            int lo = 65535, hi = 0;
            for (size_t j = t; j < t + STACK_J_TILE && j < nj; j++) {
                lo = row[j] < lo ? row[j] : lo;
                hi = row[j] > hi ? row[j] : hi;
            }
            sum += STACK_T_TILE + hi - lo;
            tiles++;
        }
    }
    free(row);
    *mean_window = tiles ? sum / (double)tiles : 0;
}

struct row {
    const char *dev, *kernel;
    int n;
    size_t nj;
    double sec, sums_s, rtf, window;
    int max_delay;
    char note[160];
};

#ifdef SEISLIVE_CUDA
/* Seconds per block of the characteristic functions (default [locate] cf with a 2-30 Hz
 * band-pass) and the row combination for NS channels of NT samples, on the GPU. */
static int time_cf(const struct sl_device *dev, int ns, int nt, double dt, double *sec)
{
    struct sl_config cfg;
    config_defaults(&cfg);
    cfg.locate.band[0] = 2.0;
    cfg.locate.band[1] = 30.0;
    struct cf_params p;
    struct cf_spec spec = locate_cf_spec(&cfg.locate);
    int rc = cf_params_init(&p, &spec, dt);
    if (rc) {
        config_free(&cfg);
        return rc;
    }
    size_t sl = cf_state_len(&p), n = (size_t)ns * nt;
    float *x = malloc(n * sizeof(float));
    int *rowch = malloc((size_t)ns * CF_MAXC * sizeof(int));
    double *st0 = calloc((size_t)ns * sl, sizeof(double));
    float *dx = NULL, *dch = NULL, *drows = NULL;
    double *dstate = NULL, *dcoef = NULL;
    int *drc = NULL;
    if (!x || !rowch || !st0)
        rc = err_set(-ENOMEM, "bench stack: out of memory");
    for (size_t i = 0; !rc && i < n; i++)
        x[i] = (float)(urand() - 0.5);
    for (int r = 0; !rc && r < ns; r++)
        for (int c = 0; c < CF_MAXC; c++)
            rowch[r * CF_MAXC + c] = c ? -1 : r;
    if (!rc && !(rc = dev_alloc(dev, n * sizeof(float), (void **)&dx)) &&
        !(rc = dev_alloc(dev, n * sizeof(float), (void **)&dch)) &&
        !(rc = dev_alloc(dev, n * sizeof(float), (void **)&drows)) &&
        !(rc = dev_alloc(dev, (size_t)ns * sl * sizeof(double), (void **)&dstate)) &&
        !(rc = dev_alloc(dev, (size_t)p.ncoef * sizeof(double), (void **)&dcoef)) &&
        !(rc = dev_alloc(dev, (size_t)ns * CF_MAXC * sizeof(int), (void **)&drc)) &&
        !(rc = dev_copy(dev, dx, x, n * sizeof(float), DEV_H2D, NULL)) &&
        !(rc = dev_copy(dev, dstate, st0, (size_t)ns * sl * sizeof(double), DEV_H2D, NULL)) &&
        !(rc = dev_copy(dev, dcoef, p.coef, (size_t)p.ncoef * sizeof(double), DEV_H2D, NULL)) &&
        !(rc = dev_copy(dev, drc, rowch, (size_t)ns * CF_MAXC * sizeof(int), DEV_H2D, NULL))) {
        const int reps = 4;
        double t0 = 0;
        for (int i = 0; i <= reps && !rc; i++) {
            if (i == 1 && !(rc = dev_sync(dev)))
                t0 = now_s();
            if (!rc)
                rc = cf_run_cuda(&p, dcoef, ns, nt, dx, (size_t)nt, dch, (size_t)nt, dstate, NULL);
            if (!rc)
                rc = cf_combine_cuda(ns, nt, drc, dch, (size_t)nt, drows, (size_t)nt, 0, NULL);
        }
        if (!rc && !(rc = dev_sync(dev)))
            *sec = (now_s() - t0) / reps;
    }
    dev_free(dev, dx), dev_free(dev, dch), dev_free(dev, drows);
    dev_free(dev, dstate), dev_free(dev, dcoef), dev_free(dev, drc);
    free(x), free(rowch), free(st0);
    cf_params_free(&p);
    config_free(&cfg);
    return rc;
}

/* Device-to-device copy bandwidth (bytes read + written per second) of BYTES-sized buffers. */
static int copy_bw(const struct sl_device *dev, size_t bytes, int reps, double *bw)
{
    void *a = NULL, *b = NULL;
    int rc = dev_alloc(dev, bytes, &a);
    if (!rc)
        rc = dev_alloc(dev, bytes, &b);
    if (!rc)
        rc = dev_copy(dev, b, a, bytes, DEV_D2D, NULL);
    double t0 = now_s();
    for (int i = 0; i < reps && !rc; i++)
        rc = dev_copy(dev, i & 1 ? a : b, i & 1 ? b : a, bytes, DEV_D2D, NULL);
    if (!rc && !(rc = dev_sync(dev)))
        *bw = 2.0 * (double)bytes * reps / (now_s() - t0);
    dev_free(dev, a);
    dev_free(dev, b);
    return rc;
}

/* One grid on the GPU with each kernel in KERNELS: fills one row per kernel. */
static int gpu_grid(const struct sl_device *dev, int n, int ns, int nt, double dt, const float *sta,
                    const int *kernels, int nk, double cf_sec, double block_s, struct row *rows)
{
    int gn[3];
    double gd[3], go[3], window;
    int max_delay;
    grid_of(n, gn, gd, go);
    delay_stats(sta, ns, gn, gd, go, dt, &max_delay, &window);
    size_t nj = (size_t)gn[0] * gn[1] * gn[2], nj_pad = stack_nj_pad(nj);
    size_t stride = (stack_cf_need(nt, max_delay) + 31) / 32 * 32;
    uint16_t *dd = NULL;
    float *dcf = NULL, *dval = NULL, *dcoh = NULL, *hcf = NULL;
    int32_t *didx = NULL;
    struct stack_cuda *ctx = NULL;
    int rc = dev_alloc(dev, (size_t)ns * nj_pad * sizeof(uint16_t), (void **)&dd);
    if (!rc)
        rc = stack_cuda_delays_straight(dd, nj_pad, ns, sta, gn, gd, go, VP, dt);
    if (!rc && !(hcf = malloc((size_t)ns * stride * sizeof(float))))
        rc = err_set(-ENOMEM, "bench stack: out of memory");
    for (size_t i = 0; !rc && i < (size_t)ns * stride; i++)
        hcf[i] = (float)(0.5 + urand());
    if (!rc && !(rc = dev_alloc(dev, (size_t)ns * stride * sizeof(float), (void **)&dcf)) &&
        !(rc = dev_copy(dev, dcf, hcf, (size_t)ns * stride * sizeof(float), DEV_H2D, NULL)) &&
        !(rc = dev_alloc(dev, (size_t)nt * sizeof(float), (void **)&dval)) &&
        !(rc = dev_alloc(dev, (size_t)nt * sizeof(int32_t), (void **)&didx)))
        rc = dev_alloc(dev, nj * sizeof(float), (void **)&dcoh);
    for (int k = 0; k < nk && !rc; k++) {
        struct row *r = &rows[k];
        /* the kernel is the context's tuning, read once: one context per kernel (the
         * untimed first call below allocates its scratch) */
        struct stack_tuning tuning = {.kernel = kernels[k]};
        stack_cuda_destroy(ctx);
        ctx = NULL;
        if ((rc = stack_cuda_create(&ctx, &tuning)))
            break;
        struct stack_args a = {
            .nrow = ns, .nj = nj, .nj_pad = nj_pad, .delay = dd, .max_delay = max_delay, .cf = dcf,
            .cf_stride = stride, .nt = nt, .norm = STACK_NORM_COUNT, .max_val = dval, .max_idx = didx, .coh = dcoh,
        };
        if ((rc = stack_run_cuda(ctx, &a, NULL)) || (rc = dev_sync(dev)))
            break;
        /* repeat until a second of work (at least 2, at most 20 calls) */
        int reps = 0;
        double t0 = now_s(), t = 0;
        while (!rc && (reps < 2 || (t < 1.0 && reps < 20))) {
            if (!(rc = stack_run_cuda(ctx, &a, NULL)) && !(rc = dev_sync(dev)))
                reps++;
            t = now_s() - t0;
        }
        if (rc)
            break;
        r->dev = "GPU";
        r->kernel = stack_kernel_name(kernels[k]);
        r->n = n;
        r->nj = nj;
        r->sec = t / reps;
        r->sums_s = (double)nj * ns * nt / r->sec;
        r->rtf = (r->sec + cf_sec) / block_s;
        r->window = window;
        r->max_delay = max_delay;
    }
    stack_cuda_destroy(ctx);
    dev_free(dev, dd), dev_free(dev, dcf), dev_free(dev, dval), dev_free(dev, didx), dev_free(dev, dcoh);
    free(hcf);
    return rc;
}
#endif

/* The CPU reference on an N^3 grid (same geometry). */
static int cpu_grid(int n, int ns, int nt, double dt, const float *sta, double block_s, struct row *r)
{
    int gn[3], max_delay;
    double gd[3], go[3], window;
    grid_of(n, gn, gd, go);
    delay_stats(sta, ns, gn, gd, go, dt, &max_delay, &window);
    size_t nj = (size_t)gn[0] * gn[1] * gn[2], nj_pad = stack_nj_pad(nj);
    size_t stride = stack_cf_need(nt, max_delay);
    uint16_t *dl = malloc((size_t)ns * nj_pad * sizeof(uint16_t));
    float *cf = malloc((size_t)ns * stride * sizeof(float)), *val = malloc((size_t)nt * sizeof(float));
    float *coh = malloc(nj * sizeof(float));
    int32_t *idx = malloc((size_t)nt * sizeof(int32_t));
    int rc = 0;
    if (!dl || !cf || !val || !coh || !idx)
        rc = err_set(-ENOMEM, "bench stack: out of memory");
    for (int s = 0; !rc && s < ns; s++)
        delays_row(sta, s, gn, gd, go, dt, dl + (size_t)s * nj_pad, nj_pad);
    for (size_t i = 0; !rc && i < (size_t)ns * stride; i++)
        cf[i] = (float)(0.5 + urand());
    struct stack_args a = {
        .nrow = ns, .nj = nj, .nj_pad = nj_pad, .delay = dl, .max_delay = max_delay, .cf = cf, .cf_stride = stride,
        .nt = nt, .norm = STACK_NORM_COUNT, .max_val = val, .max_idx = idx, .coh = coh,
    };
    if (!rc) {
        double t0 = now_s();
        rc = stack_run_cpu(&a);
        r->sec = now_s() - t0;
        if (!rc) {
            t0 = now_s();
            rc = stack_run_cpu(&a);
            r->sec = now_s() - t0;
        }
    }
    if (!rc) {
        r->dev = "CPU";
        r->kernel = stack_cpu_isa_name(stack_cpu_isa_best());
        r->n = n;
        r->nj = nj;
        r->sums_s = (double)nj * ns * nt / r->sec;
        r->rtf = r->sec / block_s;
        r->window = window;
        r->max_delay = max_delay;
        snprintf(r->note, sizeof r->note, "OpenMP, %d threads, second call; CF not included", omp_get_max_threads());
    }
    free(dl), free(cf), free(val), free(coh), free(idx);
    return rc;
}


/* CPU seconds of the process, all threads (the core time a call took, whatever else the
 * machine ran meanwhile). */
static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Mean and shortest seconds of one stack call after an untimed first one: calls until a
 * second of work, at least MINREPS, at most 50, and its mean CPU seconds over all threads.
 * With ISA < 0 the reference.  (On a machine shared with other work, the shortest time
 * and the sums per core-second are the figures to compare.) */
static int time_cpu(const struct stack_args *a, int isa, int minreps, double *sec, double *best, double *cpu)
{
    int rc = isa < 0 ? stack_run_cpu_ref(a) : stack_run_cpu_isa(a, isa);
    int reps = 0;
    double tsum = 0, c0 = cpu_s();
    *best = INFINITY;
    while (!rc && (reps < minreps || (tsum < 1.0 && reps < 50))) {
        double t0 = now_s();
        rc = isa < 0 ? stack_run_cpu_ref(a) : stack_run_cpu_isa(a, isa);
        double t = now_s() - t0;
        tsum += t;
        *best = fmin(*best, t);
        reps++;
    }
    if (!rc) {
        *sec = tsum / reps;
        *cpu = (cpu_s() - c0) / reps;
    }
    return rc;
}

/* The realistic CPU problems: the reference and every instruction-set variant. */
static int cpu_problems(const char *list, int norm, int with_ref, int json)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    int first = 1, threads = omp_get_max_threads();
    static const char *norms[] = {"none", "count", "geometric"};
    if (!json)
        printf("\nCPU stack on realistic grids (tools/stack_problem.h; a sum = one CF sample added for one trial "
               "point, one time and one row = station x phase; normalize = %s; %d OpenMP threads; mean and "
               "shortest of the calls after an untimed first; sums per core-s = sums / CPU seconds of all threads; "
               "GB/s = unique bytes touched per call (delay table uint16 + CF "
               "window + outputs) / time):\n\n"
               "| problem | points | rows | times | max delay | variant | threads | ms per call | best ms | sums/s "
               "| sums/s at best | sums per core-s | GB/s | vs reference | same result |\n| --- | ---: | ---: | ---: "
               "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
               norms[norm], threads);
    else
        printf(",\"cpu_problems\":[");
    for (char *save = NULL, *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        struct stack_problem p;
        if (stack_problem_preset(name, &p)) {
            fprintf(stderr, "bench stack: unknown CPU problem '%s' (iceland, array50)\n", name);
            return -EINVAL;
        }
        int rc = stack_problem_build(&p);
        float *val[2] = {malloc((size_t)p.nt * sizeof(float)), malloc((size_t)p.nt * sizeof(float))};
        float *coh[2] = {malloc(p.nj * sizeof(float)), malloc(p.nj * sizeof(float))};
        int32_t *idx[2] = {malloc((size_t)p.nt * sizeof(int32_t)), malloc((size_t)p.nt * sizeof(int32_t))};
        if (!rc && (!val[0] || !val[1] || !coh[0] || !coh[1] || !idx[0] || !idx[1]))
            rc = -ENOMEM;
        double sums = stack_problem_sums(&p), ref_sec = 0;
        double bytes = (double)p.nrow * p.nj * 2 + (double)p.nrow * (p.nt + p.max_delay) * 4 + (double)p.nj * 4 +
                       (double)p.nt * 8;
        for (int isa = with_ref ? -1 : 0; !rc && isa < STACK_CPU_NISA; isa++) {
            if (isa >= 0 && !stack_cpu_isa_supported(isa))
                continue;
            int o = isa < 0 ? 0 : 1;
            struct stack_args a = {
                .nrow = p.nrow, .nj = p.nj, .nj_pad = p.nj_pad, .delay = p.delay, .max_delay = p.max_delay,
                .cf = p.cf, .cf_stride = p.stride, .nt = p.nt, .norm = norm, .max_val = val[o], .max_idx = idx[o],
                .coh = coh[o],
            };
            double sec = 0, best = 0, cpu = 0;
            if ((rc = time_cpu(&a, isa, isa < 0 ? 1 : 3, &sec, &best, &cpu)))
                break;
            if (isa < 0)
                ref_sec = sec;
            const char *same = "-";
            if (isa >= 0 && with_ref)
                same = memcmp(val[0], val[1], (size_t)p.nt * sizeof(float)) ||
                               memcmp(idx[0], idx[1], (size_t)p.nt * sizeof(int32_t)) ||
                               memcmp(coh[0], coh[1], p.nj * sizeof(float))
                           ? "NO"
                           : "bitwise";
            const char *vname = isa < 0 ? "reference" : stack_cpu_isa_name(isa);
            if (json)
                printf("%s{\"problem\":\"%s\",\"points\":%zu,\"rows\":%d,\"nt\":%d,\"max_delay\":%d,\"variant\":\"%s\","
                       "\"threads\":%d,\"seconds\":%.6f,\"best_seconds\":%.6f,\"sums_per_s\":%.4g,"
                       "\"sums_per_core_s\":%.4g,\"gb_per_s\":%.3f,\"same\":\"%s\"}",
                       first ? "" : ",", p.name, p.nj, p.nrow, p.nt, p.max_delay, vname, threads, sec, best, sums / sec,
                       sums / cpu, bytes / sec * 1e-9, same);
            else {
                char vs[32] = "1";
                if (isa >= 0)
                    snprintf(vs, sizeof vs, ref_sec > 0 ? "%.2fx" : "-", ref_sec / sec);
                printf("| %s | %d x %d x %d = %zu | %d | %d | %d | %s | %d | %.2f | %.2f | %.3g | %.3g | %.3g | %.2f "
                       "| %s | %s |\n",
                       p.name, p.n[0], p.n[1], p.n[2], p.nj, p.nrow, p.nt, p.max_delay, vname, threads, sec * 1e3,
                       best * 1e3, sums / sec, sums / best, sums / cpu, bytes / sec * 1e-9, vs, same);
            }
            first = 0;
        }
        stack_problem_free(&p);
        for (int i = 0; i < 2; i++)
            free(val[i]), free(coh[i]), free(idx[i]);
        if (rc) {
            fprintf(stderr, "bench stack: CPU problem %s: %s\n", name, rc == -ENOMEM ? "out of memory" : err_msg());
            return rc;
        }
    }
    if (json)
        printf("]");
    return 0;
}

int bench_stack(int argc, char **argv)
{
    int grids[MAXG] = {32, 64, 96, 128, 160}, ng = 5, ns = 2048, cpu_n = 16, json = 0, kernels[3] = {STACK_KERNEL_STAGED, STACK_KERNEL_STAGED_DB, STACK_KERNEL_DIRECT}, nk = 3;
    double fs = 500.0, block_s = 1.0;
    const char *device = "auto", *cpu_list = "iceland,array50";
    int cpu_norm = STACK_NORM_COUNT, cpu_ref = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--grids") && i + 1 < argc) {
            ng = options_ints(argv[++i], grids, 1, MAXG);
            if (ng < 0) {
                fprintf(stderr, "seislive-bench: --grids takes 1 to %d whole numbers separated by commas\n", MAXG);
                return 2;
            }
        } else if (!strcmp(argv[i], "--stations") && i + 1 < argc)
            ns = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fs") && i + 1 < argc)
            fs = atof(argv[++i]);
        else if (!strcmp(argv[i], "--block") && i + 1 < argc)
            block_s = atof(argv[++i]);
        else if (!strcmp(argv[i], "--cpu-grid") && i + 1 < argc)
            cpu_n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpu-problems") && i + 1 < argc)
            cpu_list = argv[++i];
        else if (!strcmp(argv[i], "--cpu-ref") && i + 1 < argc)
            cpu_ref = atoi(argv[++i]) != 0;
        else if (!strcmp(argv[i], "--cpu-norm") && i + 1 < argc) {
            const char *v = argv[++i];
            cpu_norm = !strcmp(v, "none") ? STACK_NORM_NONE : !strcmp(v, "count") ? STACK_NORM_COUNT
                       : !strcmp(v, "geometric")                                ? STACK_NORM_GEOMETRIC
                                                                                : -1;
            if (cpu_norm < 0) {
                fprintf(stderr, "bench stack: --cpu-norm takes none, count or geometric\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--device") && i + 1 < argc)
            device = argv[++i];
        else if (!strcmp(argv[i], "--kernels") && i + 1 < argc) {
            /* the stack kernels to time: each a value of struct stack_tuning's kernel */
            const char *k = argv[++i];
            nk = 0;
            char list[256];
            snprintf(list, sizeof list, ",%s,", k);
            static const int all[3] = {STACK_KERNEL_STAGED, STACK_KERNEL_STAGED_DB, STACK_KERNEL_DIRECT};
            for (int a = 0; a < 3; a++) {
                char item[32];
                snprintf(item, sizeof item, ",%s,", stack_kernel_name(all[a]));
                if (strstr(list, item))
                    kernels[nk++] = all[a];
            }
        } else {
            fprintf(stderr, "bench stack: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    int nt = (int)llround(block_s * fs);
    if (ns < 1 || nt < 1 || fs <= 0 || ng < 1 || nk < 1) {
        fprintf(stderr, "bench stack: need stations >= 1, a block of at least one sample, grids and kernels\n");
        return 2;
    }
    double dt = 1.0 / fs;
    log_set_level(LOG_WARN);
    struct sl_device dev;
    if (backend_select(device, &dev) < 0) {
        fprintf(stderr, "bench stack: %s\n", err_msg());
        return 1;
    }
    float *sta = make_stations(ns);
    struct row *rows = calloc((size_t)(ng * nk + 1), sizeof *rows);
    if (!sta || !rows) {
        fprintf(stderr, "bench stack: out of memory\n");
        return 1;
    }
    int nrows = 0, rc = 0;
    double clk = 0, bw_dram = 0, cf_sec = 0;
#ifdef SEISLIVE_CUDA
    if (dev.kind == SL_DEVICE_CUDA) {
        if ((rc = time_cf(&dev, ns, nt, dt, &cf_sec)) || (rc = copy_bw(&dev, (size_t)1 << 30, 10, &bw_dram))) {
            fprintf(stderr, "bench stack: %s\n", err_msg());
            return 1;
        }
        for (int g = 0; g < ng; g++) {
            size_t need = (size_t)ns * stack_nj_pad((size_t)grids[g] * grids[g] * grids[g]) * sizeof(uint16_t);
            backend_mem_info(&dev);
            if (need > dev.mem_free * 0.9) {
                struct row *r = &rows[nrows++];
                r->dev = "GPU";
                r->kernel = "-";
                r->n = grids[g];
                r->nj = (size_t)grids[g] * grids[g] * grids[g];
                snprintf(r->note, sizeof r->note, "delay table %.1f GiB does not fit (%.1f GiB free)",
                         need / 1073741824.0, dev.mem_free / 1073741824.0);
                continue;
            }
            if ((rc = gpu_grid(&dev, grids[g], ns, nt, dt, sta, kernels, nk, cf_sec, block_s, rows + nrows))) {
                fprintf(stderr, "bench stack: %dx%dx%d: %s\n", grids[g], grids[g], grids[g], err_msg());
                return 1;
            }
            nrows += nk;
            if (!json)
                fprintf(stderr, "bench stack: %d^3 done\n", grids[g]);
        }
        if ((rc = stack_cuda_clock_ghz(dev.sm_count, &clk))) {
            fprintf(stderr, "bench stack: %s\n", err_msg());
            return 1;
        }
    }
#endif
    if ((rc = cpu_grid(cpu_n, ns, nt, dt, sta, block_s, &rows[nrows]))) {
        fprintf(stderr, "bench stack: CPU: %s\n", err_msg());
        return 1;
    }
    nrows++;
    /* real time: the largest measured grid, and the points the best rate sustains */
    double best = 0;
    int largest = 0;
    const char *best_kernel = "-";
    for (int i = 0; i < nrows; i++)
        if (!strcmp(rows[i].dev, "GPU") && rows[i].sec > 0) {
            if (rows[i].sums_s > best) {
                best = rows[i].sums_s;
                best_kernel = rows[i].kernel;
            }
            if (rows[i].rtf < 1.0 && rows[i].n > largest)
                largest = rows[i].n;
        }
    double need_sums = (double)ns * fs; /* sums per second per trial point */
    double target = 128.0 * 128 * 128 * need_sums;
    if (json) {
        printf("{\"bench\":\"stack\",\"device\":\"%s\",\"stations\":%d,\"fs\":%g,\"block_s\":%g,\"nt\":%d,"
               "\"sm_clock_ghz\":%.3f,\"copy_gbs\":%.1f,\"cf_ms\":%.3f,\"rows\":[",
               dev.name, ns, fs, block_s, nt, clk, bw_dram * 1e-9, cf_sec * 1e3);
        for (int i = 0; i < nrows; i++)
            printf("%s{\"device\":\"%s\",\"kernel\":\"%s\",\"grid\":%d,\"points\":%zu,\"seconds\":%.6f,"
                   "\"sums_per_s\":%.4g,\"rtf\":%.4f,\"note\":\"%s\"}",
                   i ? "," : "", rows[i].dev, rows[i].kernel, rows[i].n, rows[i].nj, rows[i].sec, rows[i].sums_s,
                   rows[i].rtf, rows[i].note);
        printf("]");
        if (strcmp(cpu_list, "none") && cpu_problems(cpu_list, cpu_norm, cpu_ref, 1))
            return 1;
        printf(",\"largest_realtime_grid\":%d,\"best_sums_per_s\":%.4g}\n", largest, best);
        free(sta);
        free(rows);
        return 0;
    }
    printf("coherent stack on %s: %d single-phase stations, %g Hz, blocks of %g s (%d times per call, each "
           "with its travel-time overlap), normalize = count, every row valid; a %g x %g x %g km volume %g km "
           "deep, P at %g m/s\n\n",
           dev.name, ns, fs, block_s, nt, VOL[0] / 1e3, VOL[1] / 1e3, VOL[2] / 1e3, TOP / 1e3, VP);
    printf("| device | kernel | trial grid | points | max delay (samples) | mean window (samples) | stack per block (ms) "
           "| sums/s | real-time factor | note |\n");
    printf("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for (int i = 0; i < nrows; i++) {
        struct row *r = &rows[i];
        if (r->sec > 0)
            printf("| %s | %s | %d^3 | %zu | %d | %.0f | %.2f | %.3g | %.3f | %s |\n", r->dev, r->kernel, r->n, r->nj,
                   r->max_delay, r->window, r->sec * 1e3, r->sums_s, r->rtf, r->note);
        else
            printf("| %s | %s | %d^3 | %zu | - | - | - | - | - | %s |\n", r->dev, r->kernel, r->n, r->nj, r->note);
    }
    printf("\nreal-time factor = (stack + characteristic functions of the block) / block duration; ");
#ifdef SEISLIVE_CUDA
    if (dev.kind == SL_DEVICE_CUDA) {
        printf("the CF (STA/LTA with a 2-30 Hz FIR band-pass, %d channels x %d samples) takes %.2f ms per block.\n",
               ns, nt, cf_sec * 1e3);
        double pts = best / need_sums;
        char lg[32] = "none";
        if (largest)
            snprintf(lg, sizeof lg, "%d^3", largest);
        printf("largest measured grid in real time: %s; the best rate (%s kernel, %.3g sums/s) sustains %.3g "
               "trial points (%.0f^3) at %d stations x %g Hz; target 128^3 = %.3g sums/s: %s\n\n",
               lg, best_kernel, best, pts, cbrt(pts), ns, fs, target, best >= target ? "met" : "NOT met");
        /* roofline */
        int sms = dev.sm_count;
        double per_clk = (double)sms * clk * 1e9;
        double win = STACK_T_TILE;
        double best_staged = 0, best_direct = 0;
        for (int i = 0; i < nrows; i++)
            if (rows[i].sec > 0 && !strcmp(rows[i].dev, "GPU")) {
                if (rows[i].n == 128)
                    win = rows[i].window;
                if (!strcmp(rows[i].kernel, "direct"))
                    best_direct = fmax(best_direct, rows[i].sums_s);
                else
                    best_staged = fmax(best_staged, rows[i].sums_s);
            }
        double dram_b = 2.0 / STACK_T_TILE, l2_b = win * 4.0 / (STACK_J_TILE * STACK_T_TILE);
        /* load/store-path instructions per row and 32 x 128 tile (4096 sums): 128 sum reads,
         * 8 + 8 reads of the row's kind and offsets (one per warp), the delay load, 2 warp
         * reductions, 2 votes, and a load + a store per 32 samples of the window */
        double lsu_ops = 128 + 16 + 1 + 2 + 2 + 2 * ceil(win / 32);
        double lds = 32.0 * per_clk, lds_eff = 4096.0 / lsu_ops * per_clk, l1u = 16.0 * per_clk;
        printf("roofline (measured in this run: SM clock %.3f GHz, a spin kernel on the %d SMs; device-to-device "
               "copy %.0f GB/s, read + write, 1 GiB buffers):\n\n",
               clk, sms, bw_dram * 1e-9);
        printf("| resource | traffic or work per sum | ceiling (sums/s) | best measured / ceiling |\n"
               "| --- | --- | ---: | ---: |\n");
        printf("| DRAM: delay table, uint16, read once per 128-time tile | %.4f B | %.3g | %.1f %% |\n", dram_b,
               bw_dram / dram_b, 100.0 * best / (bw_dram / dram_b));
        printf("| L2 -> SM: CF window per row and 32-point tile (%.0f samples at 128^3); L2 is at least as fast as "
               "the copy | %.3f B | >= %.3g | <= %.1f %% |\n",
               win, l2_b, bw_dram / l2_b, 100.0 * best / (bw_dram / l2_b));
        printf("| shared memory, staged: one conflict-free 128-B wavefront per 32 sums (128 B/clk/SM) | 4 B | %.3g "
               "| %.1f %% |\n",
               lds, 100.0 * best_staged / lds);
        printf("| the same with the staged kernel's other load/store-path instructions (%.0f per 128 sum reads) | "
               "%.2f instr/32 sums | %.3g | %.1f %% |\n",
               lsu_ops, lsu_ops / 128.0, lds_eff, 100.0 * best_staged / lds_eff);
        printf("| L1, direct: an unaligned 32-float read spans two 128-B lines = 2 wavefronts per 32 sums | 8 B "
               "| %.3g | %.1f %% |\n",
               l1u, 100.0 * best_direct / l1u);
        printf("\nThe CF of a block (%d rows x ~%d samples, %.1f MB) stays in L2, so DRAM carries only the delay "
               "table; the binding ceiling is the SM's load/store path (4 B of shared memory per sum; arithmetic is "
               "one FADD per sum, 1/16 of the FP32 rate).  Best staged %.3g sums/s, direct %.3g.\n",
               ns, rows[0].max_delay + nt, ns * (rows[0].max_delay + nt) * 4e-6, best_staged, best_direct);
    } else
#endif
        printf("no GPU in this run (CPU only).\n");
    if (strcmp(cpu_list, "none") && cpu_problems(cpu_list, cpu_norm, cpu_ref, 0))
        return 1;
#ifndef SEISLIVE_CUDA
    (void)kernels, (void)nk, (void)best_kernel, (void)target;
#endif
    free(sta);
    free(rows);
    return 0;
}
