/* stack_problem — the CPU stack problems that `seislive-bench stack` times and that the
 * QuakeMigrate driver (tools/qm/bench_qm.c, tools/bench-qm.sh) times on the same data:
 * one definition, so both measure the same stations, trial points, samples and delays.
 *
 *   iceland   the Skeidararjokull icequake example's trial grid: 57 x 62 x 57 points
 *             25 m apart from the surface down, 12 stations x (P, S) at 500 Hz,
 *             P 3841 m/s, S 1970 m/s (QuakeMigrate's example velocities)
 *   array50   a 50-station array: 61 x 61 x 41 points 50 m apart, 0.5 km deep,
 *             50 stations x (P, S) at 500 Hz, P 4000 m/s, S 2300 m/s
 *
 * Stations lie on a jittered square array over the grid's surface (z = 0), delays are
 * straight-ray travel times rounded to whole samples, the CF rows are pseudo-random
 * values in [0.5, 1.5) with no invalid sample, and a call stacks NT = 500 times (1 s).
 * A row is one (station, phase), ordered station by station, P then S. */
#ifndef SEISLIVE_STACK_PROBLEM_H
#define SEISLIVE_STACK_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

struct stack_problem {
    char name[16];
    int n[3];
    double d[3], o[3];
    int nsta, nphase;
    double vel[2], fs;
    int nt;
    /* stack_problem_build fills these */
    int nrow, max_delay;
    size_t nj, nj_pad, stride; /* stride = stack_cf_need(nt, max_delay) */
    float *sta;                /* nsta x 3, m */
    uint16_t *delay;           /* nrow x nj_pad (stack.h layout) */
    float *cf;                 /* nrow x stride */
};

/* Set P to the named preset ("iceland", "array50"); -EINVAL for another name. */
int stack_problem_preset(const char *name, struct stack_problem *p);
/* Stations, delays and CF of P (deterministic); -ENOMEM or -ERANGE (a delay past 65535
 * samples). */
int stack_problem_build(struct stack_problem *p);
void stack_problem_free(struct stack_problem *p);
/* The sums of one call: trial points x times x rows (stations x phases). */
double stack_problem_sums(const struct stack_problem *p);

#endif
