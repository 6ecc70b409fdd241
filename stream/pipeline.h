/* pipeline — the streaming runtime: an ingest thread fills pinned slots from a source,
 * a worker thread bound to the device moves each slot to the GPU on a copy stream and
 * runs the job's kernels on a compute stream, and the publisher thread sends results.
 *
 *   ingest:  source -> slots_reserve -> decode into the slot -> slots_commit
 *   worker:  slots_acquire -> H2D (copy stream, event) -> compute stream waits the
 *            event -> job.process (enqueued) -> release the slot once its H2D event
 *            completed -> job.finish of the PREVIOUS unit once its compute event
 *            completed (ledger, publish, checkpoint)
 * So the copy of unit i+1 runs while unit i computes; the worker is the only thread
 * that waits on the GPU, and only on events (never a device-wide sync).  On the CPU
 * backend the same loop runs with process synchronous and no copies.
 *
 * A job plugs in through struct pipeline_ops; sources through struct source
 * (io/source.h: the runtime hands them its slots through struct ingest).  The source
 * the config asks for: stream/sources.h; trace blocks (the locate job) through this
 * runtime: stream/locate_blocks.h. */
#ifndef SEISLIVE_PIPELINE_H
#define SEISLIVE_PIPELINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "io/source.h"
#include "io/wire.h"
#include "kernels/backend.h"
#include "stream/metrics.h"
#include "stream/publisher.h"
#include "stream/slots.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One unit as the job sees it. */
struct pipeline_unit {
    const struct slot_hdr *hdr;
    void *host;          /* the slot (pinned) */
    void *dev;           /* device copy of the slot's first hdr->bytes (CUDA, wants_device) */
    void *stream;        /* compute stream (CUDA) or NULL */
};

/* What a job gets to publish and checkpoint with. */
struct pipeline_io {
    struct publisher *pub;   /* NULL when [output] endpoint is "" */
    void *client;            /* the worker's inproc socket to the publisher */
    struct metrics *m;
};

struct pipeline_ops {
    const char *name;
    void *ctx;
    bool wants_device;       /* copy each slot to the device before process */
    bool async;              /* CUDA: process only enqueues on u->stream; the result is
                                complete at the stream's event (finish runs after the next
                                unit's process, overlapping them).  false: process has
                                finished the unit when it returns (finish runs before the
                                next unit's process, so what it publishes is exactly the
                                units so far) */
    /* Worker thread, device bound, before the first unit. */
    int (*begin)(void *ctx, const struct sl_device *dev, void *compute_stream);
    /* Already done (ledger)?  Skipped units are counted and released. */
    bool (*skip)(void *ctx, const struct slot_hdr *h);
    /* Process one unit.  CUDA: may enqueue on u->stream and return; SNAPSHOT asks for a
     * stream-ordered copy of the result after this unit (for finish to publish or
     * checkpoint).  Returns 0, or < 0: the unit is rejected (logged, counted), the run
     * goes on — unless the code is -EIO (device failure): then the run stops. */
    int (*process)(void *ctx, const struct pipeline_unit *u, bool snapshot);
    /* The unit's compute has completed: record it in the ledger, then publish and/or
     * checkpoint as asked. */
    int (*finish)(void *ctx, const struct slot_hdr *h, const struct pipeline_io *io, bool publish,
                  bool checkpoint);
    /* No unit for 100 ms (may be NULL): a job whose results also come from elsewhere takes
     * them in (decompose = "shots": shot images returned by the ranks, stream/shots.h).
     * Returns 0, or < 0 to end the run. */
    int (*idle)(void *ctx, const struct pipeline_io *io);
    /* After the last finish (input ended, or STOPPED by a signal): the final checkpoint
     * (CHECKPOINT: state is on), the final publication and files. */
    int (*end)(void *ctx, const struct pipeline_io *io, bool checkpoint, bool stopped);
};

struct pipeline_conf {
    int slots;
    size_t slot_bytes;
    size_t staging_bytes;        /* ingest staging buffer (file decoding); 0 = none */
    int io_method;               /* enum uring_method */
    int publish_every;           /* units */
    double publish_interval;     /* s; 0 = by count only */
    int checkpoint_every;        /* units; 0 = never */
    double checkpoint_interval;  /* s */
    struct publisher_conf pub;   /* endpoint NULL or "" = no publishing */
    const char *http;            /* status page HOST:PORT; NULL or "" = none */
    const char *http_token;
    double http_keep;            /* s the page stays up after the run */
    int64_t expected_units;      /* the input's length ([input] expected_shots); 0 = unknown */
};

/* Fill a pipeline_conf from [input] and [output]. */
struct sl_config;
void pipeline_conf_from(const struct sl_config *cfg, const char *job, struct pipeline_conf *pc);

/* Run SRC through OPS on DEV until the input ends or a stop is asked.  M: metrics (the
 * caller prints them).  Returns 0 or < 0 with err_msg(). */
int pipeline_run(const struct pipeline_conf *pc, const struct sl_device *dev, void *zctx,
                 struct source *src, const struct pipeline_ops *ops, struct metrics *m);

/* The calling worker thread's io while pipeline_run runs it (for job code called from
 * process, e.g. the trace-block runtime's publishing), else NULL. */
const struct pipeline_io *pipeline_worker_io(void);

/* Ask a running pipeline to stop (tests, benchmarks): like SIGTERM. */
void pipeline_request_stop(void);

#ifdef __cplusplus
}
#endif

#endif
