/* sources — the factory of the runtime's sources: the one [input] describes.
 *
 *   kind = "zmq"    io/zmq_source.h (PULL bound / SUB connected to [input] endpoint)
 *   kind = "files"  io/file_source.h ([input] paths, watch, format, ...)
 *   kind = "seedlink" io/seedlink_source.h ([input] seedlink, streams, seedlink_*)
 *
 * The sources themselves live in io/ and know nothing of the config or the runtime
 * (io/source.h); this is where the config meets them. */
#ifndef SEISLIVE_SOURCES_H
#define SEISLIVE_SOURCES_H

#include "conf/config.h"
#include "io/source.h"

/* The source [input] describes, for units of KIND (SLOT_SHOT or SLOT_TRACES; trace
 * blocks are cut into [locate] block_samples).  ZCTX: the ZeroMQ context.  Returns 0
 * (OUT->close frees it) or < 0 with err_msg() naming the key (bind failure, no files). */
int pipeline_open_source(const struct sl_config *cfg, void *zctx, int kind, struct source *out);
/* The same, resuming from RESUME (the state's input position, slot_hdr.resume of the
 * last unit checkpointed; NULL = a fresh start): used by SeedLink. */
int pipeline_open_source_at(const struct sl_config *cfg, void *zctx, int kind, const char *resume,
                            struct source *out);

#endif
