/* locate_blocks — trace blocks (io/trace_block.h) through the streaming runtime
 * (stream/pipeline.h), for the locate job: [input] (ZeroMQ "traces" messages, or
 * miniSEED files / folders, optionally watched) is cut into blocks that reach a
 * consumer on the worker thread in stream order; its events and coherence volumes are
 * published on [output], and [output] state_dir keeps the crash-safe state.
 *
 * State: the stretches of recording time processed (a ledger) and the event catalogue
 * (every event published, one JSON line each) are checkpointed atomically; on restart,
 * blocks the ledger covers are skipped (replaying an input never processes a block
 * twice) and the catalogue is carried on. */
#ifndef SEISLIVE_LOCATE_BLOCKS_H
#define SEISLIVE_LOCATE_BLOCKS_H

#include "conf/config.h"
#include "io/stations.h"
#include "io/trace_block.h"
#include "io/wire.h"
#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A consumer of trace blocks: FEED is called on the worker thread with each block in
 * stream order (contiguous, io/trace_block.h), FLUSH once after the last (not after a
 * stop: the engine's tail is kept for the replay).  Inside them,
 * locate_blocks_publish_event / locate_blocks_publish_coherence reach the subscribers. */
struct block_consumer {
    const char *name;        /* "locate" */
    void *user;
    int (*feed)(const struct trace_block *b, void *user);
    int (*flush)(void *user);
    /* The stations (NULL: none), for their health in the status and their positions on
     * the page (stream/station_health.h); read at the start only. */
    const struct station_set *stations;
};

/* Run [input] into BC on DEV, publishing on [output].  0 or < 0 with err_msg(). */
int locate_blocks_run(const struct sl_config *cfg, const struct sl_device *dev,
                        const struct block_consumer *bc);

/* From FEED/FLUSH (worker thread): publish an event / a coherence volume (copied), and
 * add the event to the catalogue.  No-ops without an [output] endpoint; a full
 * publisher queue drops and counts. */
int locate_blocks_publish_event(const struct wire_event *e);
int locate_blocks_publish_coherence(const struct wire_volume_hdr *h, const float *v);

#ifdef __cplusplus
}
#endif

#endif
