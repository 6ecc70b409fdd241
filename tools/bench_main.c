/* seislive-bench — benchmarks that print tables (never tests): stencil, rtm, stack,
 * pipeline.  `seislive-bench NAME [--json] [options]`, `seislive-bench all`.
 * Each benchmark lives in tools/bench_<name>.c and has one line in the table below. */
#include <stdio.h>
#include <string.h>

#include "tools/bench.h"

static const struct bench benches[] = {
    /* {"stencil", "...", bench_stencil}, added as each lands */
    {"stencil", "propagator step: Gpts/s per kernel and order vs the copy roofline", bench_stencil},
    {"rtm", "one reference shot migrated with each source-wavefield strategy: time, peak memory, vs stencil", bench_rtm},
    {"stack", "coherent stack: sums/s per trial grid, real-time factor, largest real-time grid, roofline", bench_stack},
    {"pipeline", "ingest + H2D + compute overlap vs compute alone; io_uring file ingest vs dd", bench_pipeline},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: seislive-bench NAME [--json] [options]\n\nbenchmarks:\n");
    for (const struct bench *b = benches; b->name; b++)
        fprintf(f, "  %-10s %s\n", b->name, b->doc);
    fprintf(f, "  %-10s every benchmark above, with its defaults\n", "all");
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "all") == 0) {
        int rc = 0;
        for (const struct bench *b = benches; b->name; b++) {
            char *args[] = {(char *)b->name, NULL};
            rc |= b->run(1, args) != 0;
        }
        return rc;
    }
    for (const struct bench *b = benches; b->name; b++)
        if (strcmp(argv[1], b->name) == 0)
            return b->run(argc - 1, argv + 1) == 0 ? 0 : 1;
    fprintf(stderr, "seislive-bench: unknown benchmark '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
