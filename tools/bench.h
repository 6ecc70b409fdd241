/* bench — the table of seislive-bench.  Each benchmark: int bench_NAME(argc, argv)
 * with argv[0] = NAME; prints a Markdown table on stdout (JSON with --json) and
 * returns 0, or non-zero when it could not run. */
#ifndef SEISLIVE_BENCH_H
#define SEISLIVE_BENCH_H

struct bench {
    const char *name;
    const char *doc;
    int (*run)(int argc, char **argv);
};

int bench_stencil(int argc, char **argv);
int bench_rtm(int argc, char **argv);
int bench_stack(int argc, char **argv);
int bench_pipeline(int argc, char **argv);
int bench_tdt(int argc, char **argv);
int bench_dispersion(int argc, char **argv);
int bench_scaling(int argc, char **argv);
int bench_cpml(int argc, char **argv);

#endif
