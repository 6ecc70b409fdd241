/* revolve — checkpoint schedules for visiting the states of a forward time loop in
 * reverse order with little memory.
 *
 * The problem: states x_0 .. x_{n-1} of a loop x_{i+1} = F(x_i) are needed in the
 * order x_{n-1}, x_{n-2}, ..., x_0 (RTM: the source wavefield for the backward
 * receiver wavefield), only x_0 is known at the start, and at most SNAPS full states
 * may be held (x_0 counts as one).  A schedule is a list of operations on a machine
 * with one current state and SNAPS checkpoint slots:
 *   ADVANCE  from -> to   step the current state forward (to - from steps)
 *   STORE    slot         copy the current state into a checkpoint slot
 *   RESTORE  slot         make the checkpoint the current state
 *   VISIT                 consume the current state (index `from`)
 *   STORE_BUF / VISIT_BUF slot: the uniform schedule's segment buffer (only the field
 *                         needed by the consumer, not a full state)
 *
 * Binomial: Griewank's revolve (Griewank 1992; Griewank & Walther 2000, ACM TOMS
 * 26:19), the least number of forward steps for a given number of snaps:
 *   steps(n, s) = r n - C(s + r, s + 1) ... in closed form revolve_min_steps().
 * Uniform: checkpoints every ceil(n / s) states; each segment is recomputed once into
 * a buffer of that many fields and visited backward from it (2 forward sweeps in all,
 * memory s states + n/s fields). */
#ifndef SEISLIVE_REVOLVE_H
#define SEISLIVE_REVOLVE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum rv_action { RV_ADVANCE, RV_STORE, RV_RESTORE, RV_VISIT, RV_STORE_BUF, RV_VISIT_BUF };

struct rv_op {
    enum rv_action act;
    int slot;   /* STORE, RESTORE, *_BUF */
    int from;   /* state index: current state before the op (ADVANCE), or the state stored/visited */
    int to;     /* ADVANCE: state index after */
};

struct rv_schedule {
    struct rv_op *ops;
    size_t n_ops, cap;
    int n;              /* states */
    int snaps;          /* checkpoint slots used */
    int buf;            /* buffer slots (uniform) */
    long advances;      /* total forward steps in the schedule */
};

/* Optimal binomial schedule for N states with SNAPS >= 1 slots.  0 or -ENOMEM/-EINVAL. */
int revolve_binomial(int n, int snaps, struct rv_schedule *s);
/* Uniform schedule: SNAPS checkpoints and a segment buffer of ceil(N / SNAPS) fields. */
int revolve_uniform(int n, int snaps, struct rv_schedule *s);
void revolve_free(struct rv_schedule *s);

/* The least number of forward steps any schedule with SNAPS slots needs to visit N
 * states in reverse (Griewank's closed form).  -1 on overflow. */
long revolve_min_steps(int n, int snaps);

/* Segment length of the uniform schedule. */
int revolve_uniform_segment(int n, int snaps);

/* Check that S visits n-1 .. 0 in order with consistent state tracking; returns 0 or
 * -EINVAL with err_msg() naming the first bad op (used by tests and as a guard). */
int revolve_check(const struct rv_schedule *s);

#ifdef __cplusplus
}
#endif

#endif
