/* time_ledger — which stretches of recording time a block job has already processed.
 *
 * The locate job's exactly-once rule after a crash is "a block already processed is
 * skipped when it comes again".  A single high-water mark ("the latest block end seen")
 * is enough only while time never jumps: one block stamped a year ahead (a GPS glitch,
 * a recorder with a wrong clock) would make every later, correctly stamped block look
 * "already stacked" and be dropped for good, and the engine, which restarts its stream
 * on such jumps, would never see them.  So the ledger keeps the processed time as a
 * short sorted list of disjoint intervals: a block is skipped only when one interval
 * covers it completely, and a block across a jump simply opens a new interval.
 *
 * Blocks closer than JOIN_GAP to an interval are joined to it (the engine fills such
 * short gaps itself, so that time counts as processed); the list is bounded
 * (TIME_LEDGER_MAX intervals): past it the two intervals with the smallest gap between
 * them are joined, and the caller is told so it can log it.  The intervals are saved in
 * the state file's ledger as (start, end) pairs of int64 nanoseconds. */
#ifndef SEISLIVE_TIME_LEDGER_H
#define SEISLIVE_TIME_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TIME_LEDGER_MAX 1024

struct time_ledger {
    int64_t *iv;     /* 2 * n values: start0, end0, start1, end1, ... sorted, disjoint */
    size_t n, cap;   /* intervals */
};

void time_ledger_init(struct time_ledger *t);
void time_ledger_free(struct time_ledger *t);

/* Whether [start, end] lies wholly inside one processed interval. */
bool time_ledger_covers(const struct time_ledger *t, int64_t start, int64_t end);

/* Record [start, end] as processed, joining intervals closer than join_gap ns.
 * Returns 0, 1 when the bound forced two distant intervals together (log it), or
 * -ENOMEM / -EINVAL (end < start). */
int time_ledger_add(struct time_ledger *t, int64_t start, int64_t end, int64_t join_gap);

/* The latest end recorded, or -1 when empty. */
int64_t time_ledger_last(const struct time_ledger *t);

/* Load from a state file: PAIRS (2 * n_pairs values) as saved by a current seislive, or,
 * when there are none, a version-1 high-water mark LAST_T_NS (>= 0) as the one interval
 * "everything up to LAST_T_NS".  Returns 0, or -EINVAL with err_msg() when the pairs are
 * not sorted, disjoint intervals (a damaged ledger), or -ENOMEM. */
int time_ledger_load(struct time_ledger *t, const int64_t *pairs, size_t n_values, int64_t last_t_ns);

#endif
