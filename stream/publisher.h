/* publisher — the XPUB endpoint of [output]: topics image, coherence, event, status.
 *
 * One publisher thread owns the XPUB socket (and the ZAP socket under CURVE); every
 * other thread reaches it through its own inproc PUSH socket (publisher_client), so
 * each ZeroMQ socket is used from one thread only.  Messages out are
 *   frame 0: topic, frame 1: JSON header with "seq" (+1 per message, all topics),
 *   frames 2..: float32 payload,
 * payloads sent zero-copy: the buffer the worker hands over is freed by ZeroMQ's free
 * callback once the last subscriber's copy is on the wire.
 *
 * Caches for late joiners and for subscribers that lost messages: the latest image,
 * the latest status and the last PUBLISHER_EVENT_CACHE events are kept (shared, not
 * copied) and resent, with "cached":true added to their header and their original seq,
 * when a subscription to their topic arrives (other subscribers of that topic see them
 * again with the same seq: they skip what they already have).  seislive-sub asks again
 * (unsubscribe + subscribe) when it finds it is behind.
 * Slow subscribers: each has a send high-water mark ([output] hwm); beyond it libzmq
 * drops that subscriber's messages and never blocks the sender, so a dead subscriber
 * cannot stall processing.  A PUB socket is not told about those drops, so every status
 * carries the number and the last seq of the messages of each topic: a subscriber finds
 * a loss from a gap in seq, and a loss at the end from the final status (fetched from
 * the cache if it was lost too).  What the publisher itself cannot send is counted
 * (metrics pub_dropped: its inproc queue was full; pub_refused: too many frames;
 * pub_send_failed: the XPUB send failed), logged, and published in every status.
 * End: after the last message (a status with health "stopped") the publisher keeps
 * answering subscriptions from the caches for up to the linger time while subscribers
 * are connected, so one that lost the end can still fetch the final image.
 * ZMQ_LINGER is bounded, so shutdown cannot hang on a dead peer.
 * CURVE (optional): the server keys from [output]; a ZAP handler accepts only client
 * public keys listed in curve_clients and refuses every other client.  A configured key
 * that this libzmq cannot apply (built without CURVE) is a start-up error. */
#ifndef SEISLIVE_PUBLISHER_H
#define SEISLIVE_PUBLISHER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "stream/metrics.h"
#include "stream/pub_snapshot.h"
#include "stream/station_health.h"

#ifdef __cplusplus
extern "C" {
#endif

struct shots_progress;

struct publisher_conf {
    const char *endpoint;       /* "tcp://...", "ipc://..." */
    int hwm;
    const char *curve_secret;   /* Z85; NULL or "" = no CURVE */
    const char *curve_public;
    const char *curve_clients;  /* file of allowed client public keys */
    double status_interval;     /* s between status messages; 0 = none */
    const char *job;            /* job name for status */
    int linger_ms;              /* the drain after the end ([output] drain); 0 = 1000 */
    struct pub_snapshot *snap;  /* what is sent also goes here (the status page); NULL = no */
    const char *version;        /* for status ("version"); NULL = not sent */
    uint64_t fingerprint;       /* for status ("config_fingerprint"); 0 = not sent */
    struct station_health *stations; /* locate: per-station health for status; NULL = none */
    struct shots_progress *ranks; /* decompose = "shots": per-rank progress for status; NULL = none */
};

struct publisher {
    void *zctx;
    pthread_t thread;
    int started;
    char inproc[64];
    char bound[256];            /* the endpoint actually bound (resolved wildcard port) */
    struct publisher_conf conf;
    struct metrics *m;
    _Atomic int stop;
    int start_rc;
    char start_err[512];        /* err_msg() of the thread's start failure (err_msg is per thread) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char **allowed;             /* CURVE client keys (Z85) */
    size_t n_allowed;
    _Atomic long refused;       /* clients refused by the ZAP handler */
    char health[128];           /* status "health" (set by publisher_set_health) */
    _Atomic long subscriptions; /* subscribe messages seen (tests wait on it) */
};

/* Payload frames a message may carry (publisher_send refuses more). */
#define PUBLISHER_MAX_PAYLOAD 14
/* Events kept for subscribers that join late or lost some. */
#define PUBLISHER_EVENT_CACHE 1024

/* Bind and start the thread.  ZCTX: the process's ZeroMQ context.  Returns 0 or -errno
 * with err_msg() (bad endpoint, port in use, bad keys, CURVE keys without CURVE). */
int publisher_start(struct publisher *p, void *zctx, const struct publisher_conf *c,
                    struct metrics *m);
/* Send what is queued and the final status, answer late subscriptions from the caches
 * while subscribers are connected (at most the linger time), close, join. */
void publisher_stop(struct publisher *p);

/* A PUSH socket for the calling thread (close it with publisher_client_close before
 * publisher_stop); NULL with err_msg() when it cannot be made. */
void *publisher_client(struct publisher *p);
void publisher_client_close(void *client);

/* Hand a message to the publisher thread without waiting.  HEADER: JSON text of the
 * header without "seq" (the publisher numbers every message).  PAYLOAD[i] of BYTES[i]
 * bytes is taken over and released with FREE_FN(PAYLOAD[i]) (NULL: not freed).
 * T_ARRIVE (monotonic s, 0 = unknown): when the unit arrived, for the latency metric.
 * Returns 0, -EAGAIN when the publisher is behind (the message is dropped and counted),
 * -E2BIG when N > PUBLISHER_MAX_PAYLOAD (refused and counted, never truncated), or
 * another negative code (err_msg()); on every failure each PAYLOAD[i] is freed. */
int publisher_send(struct publisher *p, void *client, const char *topic, const char *header,
                   double t_arrive, void *const *payload, const size_t *bytes, int n,
                   void (*free_fn)(void *));

void publisher_set_health(struct publisher *p, const char *health);

#ifdef __cplusplus
}
#endif

#endif
