/* metrics — per-stage timing (wait, decode, H2D, compute, publish) and end-to-end
 * latency of every unit, plus the counters of the run (received, rejected, dropped,
 * skipped).  Written by the pipeline threads, read by the status messages and the
 * final report; a mutex keeps the few updates per unit consistent. */
#ifndef SEISLIVE_METRICS_H
#define SEISLIVE_METRICS_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum metric_stage { ST_WAIT, ST_DECODE, ST_H2D, ST_COMPUTE, ST_PUBLISH, ST_LATENCY, ST_N };

#define METRICS_WINDOW 1024 /* last units kept for percentiles */
#define METRICS_REJ_N 16    /* >= WIRE_REJ_N (checked where they meet, stream/pipeline.c) */

struct stage_stats {
    uint64_t n;
    double sum, max, last;          /* s */
    float window[METRICS_WINDOW];   /* s, ring of the last values */
};

struct metrics {
    pthread_mutex_t mu;
    struct stage_stats st[ST_N];
    uint64_t units;        /* processed */
    uint64_t skipped;      /* already in the ledger */
    uint64_t received;     /* messages / file units seen */
    uint64_t rejected;     /* malformed, counted by reason in the sources */
    uint64_t published;    /* out messages handed to the XPUB socket */
    uint64_t pub_dropped;  /* out messages the publisher's own queue could not take */
    uint64_t pub_refused;  /* out messages refused (more payload frames than it carries) */
    uint64_t pub_send_failed; /* out messages the XPUB socket did not take (send error) */
    int64_t current;       /* unit in flight, -1 none */
    double gpu_free_mib;   /* free device memory after the last unit; -1 on the CPU */
    double gpu_total_mib;  /* the device's memory; -1 on the CPU */
    double t_start;        /* monotonic s */
    uint64_t rejected_by[METRICS_REJ_N]; /* input rejects by reason (enum wire_reject) */
    int64_t units_total;   /* the survey's length when a source knows it, else -1 */
};

void metrics_init(struct metrics *m);
void metrics_destroy(struct metrics *m);
void metrics_add(struct metrics *m, enum metric_stage s, double seconds);
/* Locked snapshot copy. */
void metrics_get(struct metrics *m, struct metrics *out);
/* Percentile P (0..100) of the window of stage S, seconds. */
double metrics_percentile(const struct metrics *m, enum metric_stage s, double p);
/* A Markdown table of the stages (mean, p50, p95, max in ms) and the counters. */
void metrics_print(struct metrics *m, FILE *out);

/* Monotonic clock, seconds. */
double now_s(void);

static inline const char *metric_stage_name(enum metric_stage s)
{
    static const char *const names[ST_N] = {"wait", "decode", "h2d", "compute", "publish",
                                            "latency"};
    return names[s];
}

#ifdef __cplusplus
}
#endif

#endif
