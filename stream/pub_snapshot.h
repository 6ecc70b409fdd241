/* pub_snapshot — what the publisher caches, readable from other threads (the HTTP
 * status page, stream/http_status.h).
 *
 * The publisher thread puts every status, image, event and coherence message it sends
 * here; a reader takes copies (text) or a reference (the image: its payload frames are
 * shared with the sent ones, never copied) under the lock and does its slow work (JSON,
 * PNG, writing to a socket) after letting go.  The publisher never waits for a reader:
 * its only cost is the lock held for a pointer swap.  The snapshot outlives the
 * publisher thread, so the page can still show the end of a run. */
#ifndef SEISLIVE_PUB_SNAPSHOT_H
#define SEISLIVE_PUB_SNAPSHOT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "io/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SNAP_EVENTS 1024   /* the last events kept (as the publisher's cache) */
#define SNAP_COHERENCE 600 /* the last coherence windows kept (peak per window) */

/* One image message: its header and its payload frames (shared, read-only). */
struct snap_image {
    struct wire_volume_hdr h;
    char *header;            /* JSON text as published */
    const float *frame[3];   /* 1 frame (the volume) or 3 (slices: xy, xz, yz) */
    size_t bytes[3];
    int nframes;
    void *priv;              /* the message copies that keep the frames alive */
    int refs;                /* under the snapshot's lock */
};

/* How many of each kind were put so far (a reader compares to see what changed). */
struct snap_counts {
    uint64_t status, image, events, coherence;
    int closed;              /* pub_snapshot_close was called */
};

struct pub_snapshot {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct snap_counts n;
    char *status;
    struct snap_image *image;
    char *events[SNAP_EVENTS];     /* JSON headers, ring */
    int64_t event_seq[SNAP_EVENTS];
    size_t ev_head, ev_n;
    double coh_t[SNAP_COHERENCE];  /* window start, s since the epoch */
    float coh_peak[SNAP_COHERENCE];/* the window's largest coherence */
    size_t coh_head, coh_n;
    char *stations;                /* JSON array of the station positions; NULL = none */
};

int pub_snapshot_init(struct pub_snapshot *s);
void pub_snapshot_destroy(struct pub_snapshot *s);
/* Wake every waiting reader for good (the job is over and the page is going away). */
void pub_snapshot_close(struct pub_snapshot *s);

/* Publisher thread: message of topic T (enum wire_topic) with its JSON header and
 * payload frames MSGS[0..N) (zmq_msg_t *; shared, not consumed). */
void pub_snapshot_put(struct pub_snapshot *s, int t, const char *header, size_t len, void *msgs, int n);

/* The station positions (a JSON array, taken over; static: set once before the page
 * starts, or again when they change). */
void pub_snapshot_set_stations(struct pub_snapshot *s, char *json);
/* A malloc'd copy of them, or NULL (none: not a locate run). */
char *pub_snapshot_stations(struct pub_snapshot *s);

/* Readers.  A malloc'd copy of the latest status JSON, or NULL (none yet). */
char *pub_snapshot_status(struct pub_snapshot *s);
/* A malloc'd JSON array of the cached event headers with seq > AFTER (-1: all). */
char *pub_snapshot_events(struct pub_snapshot *s, int64_t after);
/* A malloc'd JSON array of [t, peak] pairs, oldest first. */
char *pub_snapshot_coherence(struct pub_snapshot *s);
/* A reference to the latest image (NULL: none yet); give it back with _release. */
struct snap_image *pub_snapshot_image(struct pub_snapshot *s);
void pub_snapshot_image_release(struct pub_snapshot *s, struct snap_image *im);
/* The counts now. */
void pub_snapshot_counts(struct pub_snapshot *s, struct snap_counts *c);
/* Wait until the counts differ from SEEN, or TIMEOUT s pass; NOW gets the counts. */
void pub_snapshot_wait(struct pub_snapshot *s, const struct snap_counts *seen, double timeout,
                       struct snap_counts *now);

#ifdef __cplusplus
}
#endif

#endif
