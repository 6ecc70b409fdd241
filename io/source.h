/* source — where the units of a run come from (ZeroMQ messages: io/zmq_source.h; files:
 * io/file_source.h), and what a source fills: the slots of the runtime, seen through
 * struct ingest.  The runtime (stream/pipeline.h) runs source.run on its ingest thread
 * with an ingest over its pinned slots; the factory that picks a source from the
 * config is stream/sources.h.  Nothing here knows the runtime: the runtime hands in its
 * slots and a table of the few operations a source needs.
 *
 * A source, per unit:
 *   i = ingest_reserve(in)                  a free slot (waits while all are full)
 *   fill ingest_slot(in, i) and in->hdr[i]  (the header says what the slot holds)
 *   ingest_commit(in, i)                    to the worker -- or ingest_unreserve(in, i)
 *                                           and ingest_rejected(in, "what") for a bad unit
 * and polls ingest_stopping(in) in long loops. */
#ifndef SEISLIVE_SOURCE_H
#define SEISLIVE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "io/shot.h"
#include "io/trace_block.h"
#include "io/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

struct uring_reader;

enum slot_kind { SLOT_EMPTY = 0, SLOT_SHOT = 1, SLOT_TRACES = 2, SLOT_RAW = 3, SLOT_END = 4 };

/* What a slot holds; filled by the source, read by the worker. */
struct slot_hdr {
    int kind;                 /* enum slot_kind; SLOT_END: the input is finished */
    int64_t id;               /* shot id, block sequence number, or raw unit number */
    uint64_t msg_seq;         /* message / unit number of the source (for messages) */
    char origin[160];         /* "message 12", "a.segy: traces 0..47" */
    size_t bytes;             /* payload bytes used from the start of the slot */
    struct shot shot;         /* SLOT_SHOT: rec and data point into the slot */
    struct trace_block block; /* SLOT_TRACES: data (and chan, mask) point into the slot */
    double t_arrive;          /* monotonic s (source_now_s): the unit started arriving */
    double wait_s;            /* ingest waited this long for a free slot and for data */
    double decode_s;          /* receive/read + decode into the slot */
    double input_frac;        /* share of a known-length input read with this unit (0..1,
                                 for progress and time left); 0 = unknown: a stream or a
                                 watched folder */
    const char *resume;       /* the source's position after this unit, as text for the
                                 crash-safe state (SeedLink: sequence numbers); NULL =
                                 none.  Points into the slot. */
};

/* What the runtime does for a source (RT: the runtime's own context). */
struct ingest_ops {
    /* True when the ingest should stop (the run's stop, SIGTERM/SIGINT). */
    bool (*stopping)(void *rt);
    /* A free slot, waiting while every slot is full (back-pressure), polling the stop:
     * its index (header zeroed, wait_s set), or -ECANCELED when stopping. */
    int (*reserve)(void *rt);
    /* Hand slot I, filled, to the worker. */
    void (*commit)(void *rt, int i);
    /* Give reserved slot I back unused. */
    void (*unreserve)(void *rt, int i);
    /* Add to the run's counters of units received and rejected. */
    void (*count)(void *rt, uint64_t received, uint64_t rejected);
    /* Count and log one rejected WHAT ("shot", "file", ...); the reason is err_msg(). */
    void (*rejected)(void *rt, const char *what);
};

/* What the ingest thread hands to a source. */
struct ingest {
    int nslots;
    size_t slot_bytes;           /* per slot */
    char *base;                  /* nslots x slot_bytes, page aligned */
    struct slot_hdr *hdr;        /* nslots */
    char *staging;               /* ingest-only buffer for reads that need decoding (NULL = none);
                                    io_uring fixed buffer index nslots */
    size_t staging_bytes;
    struct uring_reader *ring;   /* file reads into the slots and the staging buffer */
    void *zctx;                  /* ZeroMQ context */
    struct wire_stats stats;     /* rejects by reason (written by the source) */
    const struct ingest_ops *ops;
    void *rt;
};

static inline void *ingest_slot(const struct ingest *in, int i)
{
    return in->base + (size_t)i * in->slot_bytes;
}

static inline bool ingest_stopping(const struct ingest *in)
{
    return in->ops->stopping(in->rt);
}

static inline int ingest_reserve(struct ingest *in)
{
    return in->ops->reserve(in->rt);
}

static inline void ingest_commit(struct ingest *in, int i)
{
    in->ops->commit(in->rt, i);
}

static inline void ingest_unreserve(struct ingest *in, int i)
{
    in->ops->unreserve(in->rt, i);
}

static inline void ingest_count(struct ingest *in, uint64_t received, uint64_t rejected)
{
    in->ops->count(in->rt, received, rejected);
}

static inline void ingest_rejected(struct ingest *in, const char *what)
{
    in->ops->rejected(in->rt, what);
}

/* The clock of slot_hdr.t_arrive and the runtime's timings: monotonic seconds. */
static inline double source_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct source {
    const char *name;
    void *ctx;
    /* Ingest thread: fill and commit slots until the input ends (0), a stop (0) or a
     * fatal error (< 0 with err_msg()).  Malformed units are counted, logged, skipped. */
    int (*run)(void *ctx, struct ingest *in);
    void (*close)(void *ctx);
};

#ifdef __cplusplus
}
#endif

#endif
