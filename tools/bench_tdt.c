/* bench_tdt — what the time-dispersion correction costs ([propagator] time_dispersion =
 * "correct", kernels/time_dispersion.h): the forward and the inverse transform of a
 * shot's traces on the host (OpenMP over the traces, FFTW), per trace length.
 *
 *   seislive-bench tdt [--lengths N,N,...] [--traces N] [--repeat N] [--json]
 *
 * The rtm job pays one forward transform per trace and shot (and one for the wavelet),
 * the model job a forward for the wavelet and an inverse per trace. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/time_dispersion.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tools/bench.h"

#define MAX_LENGTHS 16

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int bench_tdt(int argc, char **argv)
{
    int lengths[MAX_LENGTHS] = {1001, 4001, 16001}, nlen = 3, traces = 1000, repeat = 3, json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--lengths") && i + 1 < argc) {
            nlen = 0;
            for (char *s = argv[++i]; *s && nlen < MAX_LENGTHS;) {
                char *end;
                long v = strtol(s, &end, 10);
                if (end == s || v < 2 || v > (1L << 24)) {
                    fprintf(stderr, "bench tdt: --lengths: %s is not a length of 2 .. 2^24 samples\n", s);
                    return 2;
                }
                lengths[nlen++] = (int)v;
                s = *end == ',' ? end + 1 : end;
                if (*end && *end != ',') {
                    fprintf(stderr, "bench tdt: --lengths: unexpected '%s'\n", end);
                    return 2;
                }
            }
        } else if (!strcmp(argv[i], "--traces") && i + 1 < argc) {
            traces = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
            repeat = atoi(argv[++i]);
        } else {
            fprintf(stderr, "bench tdt: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (traces < 1 || repeat < 1 || nlen < 1) {
        fprintf(stderr, "bench tdt: --traces, --repeat and --lengths need at least 1\n");
        return 2;
    }
    if (json)
        printf("{\"benchmark\":\"tdt\",\"threads\":%d,\"traces\":%d,\"rows\":[", omp_get_max_threads(), traces);
    else
        printf("host, %d OpenMP threads; %d traces per shot, best of %d\n\n| samples per trace | forward ms/shot | "
               "inverse ms/shot | forward us/trace | inverse us/trace |\n| ---: | ---: | ---: | ---: | ---: |\n",
               omp_get_max_threads(), traces, repeat);
    for (int l = 0; l < nlen; l++) {
        const size_t n = (size_t)lengths[l];
        float *x = malloc(n * (size_t)traces * sizeof *x);
        struct tdt *t = NULL;
        if (!x || tdt_create(n, 1e-3, &t) < 0) {
            fprintf(stderr, "bench tdt: %zu samples x %d traces: %s\n", n, traces, x ? err_msg() : "out of memory");
            free(x);
            return 1;
        }
        double best[2] = {INFINITY, INFINITY};
        for (int dir = 0; dir < 2; dir++)
            for (int r = 0; r < repeat; r++) {
                for (int k = 0; k < traces; k++)
                    wavelet_ricker_fill(x + (size_t)k * n, n, 1e-3, 20.0 + k % 7);
                double t0 = now();
                if (tdt_apply(t, dir, x, (size_t)traces, n, NULL) < 0) {
                    fprintf(stderr, "bench tdt: %s\n", err_msg());
                    tdt_destroy(t);
                    free(x);
                    return 1;
                }
                best[dir] = fmin(best[dir], now() - t0);
            }
        if (json)
            printf("%s{\"samples\":%zu,\"forward_s\":%.6f,\"inverse_s\":%.6f}", l ? "," : "", n, best[0], best[1]);
        else
            printf("| %zu | %.1f | %.1f | %.1f | %.1f |\n", n, 1e3 * best[0], 1e3 * best[1], 1e6 * best[0] / traces,
                   1e6 * best[1] / traces);
        tdt_destroy(t);
        free(x);
    }
    if (json)
        printf("]}\n");
    return 0;
}
