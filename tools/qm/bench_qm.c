/* bench_qm — QuakeMigrate's C core beside seislive's CPU stack, on the same problems
 * (tools/stack_problem.h), in one process.  Built only by tools/bench-qm.sh, and only
 * when .peers/quakemigrate/ holds QuakeMigrate's migratelib.c (GPL-3.0, never in this
 * repository): this folder is outside the Makefile's tools/ wildcard on purpose.
 *
 *   bench-qm [--problems iceland,array50] [--tag TEXT]
 *
 * A sum is one CF sample added for one trial point, one time and one row (station x
 * phase), as in `seislive-bench stack`: sums per call = points x times x rows.  QM's
 * migrate gets what its Python layer gives it: onsets as double rows of the same CF
 * (fsmp = 0, lsmp = stride - nt), the same delays as an int32 node x row table, and a
 * zeroed map4d of nodes x times doubles (zeroed outside the timing, so its pages are
 * already touched: QM's best case).  migrate stacks and takes exp(sum / rows) for every
 * node and time; find_max_coa then scans map4d for the maximum over nodes per time,
 * which seislive's stack makes on the fly, so both rows are printed.  The timing is
 * seislive-bench's: an untimed first call, then calls until a second of work (at least
 * 3), mean and shortest.  Then seislive's stack (normalize = geometric, the same exp(mean)) runs on
 * the same problem and the argmax per time is compared with find_max_coa's. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/stack.h"
#include "tools/stack_problem.h"

/* QuakeMigrate's entry points (quakemigrate/core/src/qmlib.h) */
void migrate(double *, int32_t *, double *, int32_t, int32_t, int32_t, int32_t, int32_t, int64_t, int64_t);
void find_max_coa(double *, double *, double *, int64_t *, int32_t, int64_t, int64_t);

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int run(const char *name, const char *tag, int threads)
{
    struct stack_problem p;
    if (stack_problem_preset(name, &p)) {
        fprintf(stderr, "bench-qm: unknown problem '%s' (iceland, array50)\n", name);
        return 2;
    }
    if (stack_problem_build(&p)) {
        fprintf(stderr, "bench-qm: %s: cannot build the problem\n", name);
        return 1;
    }
    size_t nj = p.nj, nt = (size_t)p.nt, nr = (size_t)p.nrow;
    double *onsets = malloc(nr * p.stride * sizeof(double)), *map = malloc(nj * nt * sizeof(double));
    int32_t *lut = malloc(nj * nr * sizeof(int32_t));
    double *mx = malloc(nt * sizeof(double)), *mxn = malloc(nt * sizeof(double));
    int64_t *mxi = malloc(nt * sizeof(int64_t));
    float *val = malloc(nt * sizeof(float)), *coh = malloc(nj * sizeof(float));
    int32_t *idx = malloc(nt * sizeof(int32_t));
    if (!onsets || !map || !lut || !mx || !mxn || !mxi || !val || !coh || !idx) {
        fprintf(stderr, "bench-qm: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < nr * p.stride; i++)
        onsets[i] = p.cf[i];
    for (size_t r = 0; r < nr; r++)
        for (size_t j = 0; j < nj; j++)
            lut[j * nr + r] = p.delay[r * p.nj_pad + j];
    int32_t lsmp = (int32_t)(p.stride - nt);
    double sums = stack_problem_sums(&p);
    /* migrate alone, and migrate + find_max_coa */
    double sec[2] = {0, 0}, best[2] = {INFINITY, INFINITY}, cpu[2] = {0, 0};
    for (int with_max = 0; with_max < 2; with_max++) {
        int reps = -1;
        double tsum = 0;
        while (reps < 3 || (tsum < 1.0 && reps < 50)) {
            memset(map, 0, nj * nt * sizeof(double));
            double t0 = now_s(), c0 = cpu_s();
            migrate(onsets, lut, map, 0, lsmp, (int32_t)nt, (int32_t)nr, (int32_t)nr, (int64_t)nj, threads);
            if (with_max)
                find_max_coa(map, mx, mxn, mxi, (int32_t)nt, (int64_t)nj, threads);
            double t = now_s() - t0, c = cpu_s() - c0;
            if (reps >= 0) {
                tsum += t;
                cpu[with_max] += c;
                best[with_max] = fmin(best[with_max], t);
            }
            reps++;
        }
        sec[with_max] = tsum / reps;
        cpu[with_max] /= reps;
    }
    /* bytes touched: delays int32, onsets double window, map4d read (zeros) + written */
    double bytes = (double)nj * nr * 4 + (double)nr * (nt + p.max_delay) * 8 + (double)nj * nt * 16;
    const char *what[2] = {"migrate", "migrate + find_max_coa"};
    for (int k = 0; k < 2; k++)
        printf("| %s | %d x %d x %d = %zu | %zu | %zu | %d | QuakeMigrate %s (%s) | %d | %.2f | %.2f | %.3g | %.3g | "
               "%.3g | %.2f |\n",
               p.name, p.n[0], p.n[1], p.n[2], nj, nr, nt, p.max_delay, what[k], tag, threads, sec[k] * 1e3,
               best[k] * 1e3, sums / sec[k], sums / best[k], sums / cpu[k], bytes / sec[k] * 1e-9);
    /* the same problem through seislive: argmax over points per time must agree */
    struct stack_args a = {
        .nrow = p.nrow, .nj = nj, .nj_pad = p.nj_pad, .delay = p.delay, .max_delay = p.max_delay, .cf = p.cf,
        .cf_stride = p.stride, .nt = p.nt, .norm = STACK_NORM_GEOMETRIC, .max_val = val, .max_idx = idx, .coh = coh,
    };
    if (stack_run_cpu(&a)) {
        fprintf(stderr, "bench-qm: seislive's stack failed\n");
        return 1;
    }
    int same = 0;
    double rel = 0;
    for (size_t t = 0; t < nt; t++) {
        same += idx[t] == mxi[t];
        rel = fmax(rel, fabs(val[t] - mx[t]) / mx[t]);
    }
    printf("\n%s: seislive (normalize = geometric) vs QuakeMigrate: same best point at %d of %zu times, maximum "
           "relative difference of the best value %.2e (float vs double sums)\n\n",
           p.name, same, nt, rel);
    stack_problem_free(&p);
    free(onsets), free(map), free(lut), free(mx), free(mxn), free(mxi), free(val), free(coh), free(idx);
    return 0;
}

int main(int argc, char **argv)
{
    const char *list = "iceland,array50", *tag = "-O3";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--problems") && i + 1 < argc)
            list = argv[++i];
        else if (!strcmp(argv[i], "--tag") && i + 1 < argc)
            tag = argv[++i];
        else {
            fprintf(stderr, "usage: bench-qm [--problems iceland,array50] [--tag TEXT]\n");
            return 2;
        }
    }
    int threads = omp_get_max_threads();
    printf("QuakeMigrate's C core (migrate, find_max_coa) on seislive-bench stack's CPU problems; a sum = one CF "
           "sample for one trial point, time and row (station x phase); mean and shortest of the calls after an "
           "untimed first; "
           "sums per core-s = sums / CPU seconds of all threads; "
           "GB/s = unique bytes touched (int32 delays + double onsets + map4d zeroed and written) / time\n\n"
           "| problem | points | rows | times | max delay | variant | threads | ms per call | best ms | sums/s | "
           "sums/s at best | sums per core-s | GB/s |\n"
           "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        int rc = run(name, tag, threads);
        if (rc)
            return rc;
    }
    return 0;
}
