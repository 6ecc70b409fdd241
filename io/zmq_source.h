/* zmq_source — units from ZeroMQ: a PULL socket bound to [input] endpoint (senders
 * connect and PUSH; back-pressure reaches them through their high-water mark), or a
 * SUB socket connected to a publisher (subscribed to everything; a SUB cannot hold a
 * publisher back, so its drops show as gaps in the sender's "seq", which are counted).
 *
 * Back-pressure: a slot is reserved BEFORE a message is received, so while every slot
 * is full nothing is read from the socket, its queue (RCVHWM) fills up and a PUSH
 * sender blocks.  Every malformed message is counted by reason, logged with its
 * message number, and skipped; the run goes on.  The stream ends at an "end" message,
 * or after [input] watch_idle seconds without a message (0 = never). */
#ifndef SEISLIVE_ZMQ_SOURCE_H
#define SEISLIVE_ZMQ_SOURCE_H

#include "io/source.h"

#ifdef __cplusplus
extern "C" {
#endif

struct zmq_source_conf {
    const char *endpoint;
    int socket;           /* SOCK_PULL | SOCK_SUB (conf/config.h) */
    double idle_s;        /* end after this long without a message; 0 = never */
    int rcvhwm;           /* messages queued in the socket; 0 = 2 */
};

struct zmq_source;

/* Bind (PULL) or connect (SUB) now, so senders can connect before the run starts.
 * Returns 0 or -errno with err_msg() naming the endpoint. */
int zmq_source_open(struct zmq_source **out, void *zctx, const struct zmq_source_conf *c);
/* The endpoint actually bound (a wildcard port resolved). */
const char *zmq_source_endpoint(const struct zmq_source *z);
/* The source interface for pipeline_run (close frees Z). */
struct source zmq_source_as_source(struct zmq_source *z);

#ifdef __cplusplus
}
#endif

#endif
