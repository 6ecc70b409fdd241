/* http_status — the live status page ([output] http; docs/http.md).
 *
 * An embedded HTTP server (libmicrohttpd from Debian: a small, long-maintained C
 * library that is part of GNU, does HTTP/1.1 parsing, connection limits, request-size
 * limits and timeouts itself, and runs its own threads, so seislive adds no event loop
 * of its own) serving one page (web/status.html, compiled into the binary: no files, no
 * CDN), JSON endpoints, PNG slices of the latest image and a Server-Sent Events stream.
 *
 * Safe by default: it serves only the paths below (404 for anything else, never a
 * file), only GET and HEAD, bodies refused; an optional token (header
 * "Authorization: Bearer T", "X-Seislive-Token: T" or "?token=T") else 401; at most
 * HTTP_MAX_CONN connections (HTTP_MAX_PER_IP per address), HTTP_MAX_REQUEST bytes of
 * request headers, HTTP_IDLE_S s of silence per connection.  It reads only the
 * publisher's snapshot (stream/pub_snapshot.h), copying under its lock and writing to
 * sockets after letting go, one thread per connection: a slow or stuck browser holds
 * only its own thread and never slows the pipeline. */
#ifndef SEISLIVE_HTTP_STATUS_H
#define SEISLIVE_HTTP_STATUS_H

#include <netinet/in.h>
#include <pthread.h>

#include "stream/pub_snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HTTP_MAX_CONN 16
#define HTTP_MAX_PER_IP 8
#define HTTP_MAX_REQUEST 16384
#define HTTP_IDLE_S 30

struct http_status_conf {
    const char *addr;        /* "HOST:PORT" (HOST an IPv4 address or "localhost"; port 0 = any) */
    const char *token;       /* NULL or "" = none */
    const char *job;         /* "rtm" / "locate", for the page before the first status */
};

struct http_status;

/* Parse "HOST:PORT" into SA.  0 or -EINVAL with err_msg(). */
int http_parse_addr(const char *addr, struct sockaddr_in *sa);
/* Parse and bind ADDR for a moment (`seislive check`): 0 or < 0 with err_msg(). */
int http_check_addr(const char *addr);

/* Start serving SNAP (which must outlive the server).  0 or < 0 with err_msg(). */
int http_status_start(struct http_status **out, const struct http_status_conf *c,
                      struct pub_snapshot *snap);
/* The port bound (the one chosen when 0 was asked). */
int http_status_port(const struct http_status *h);
/* Close every connection (SSE streams end) and stop. */
void http_status_stop(struct http_status *h);

/* The prepared picture of the latest image (its gain and clip are a pass over the whole
 * volume: done once per published image, not once per slice request), with the snapshot
 * reference that keeps the volume alive.  Zero-initialised, then http_picture_cache_free. */
struct picture;
struct picture_layout;
struct http_picture_cache {
    pthread_mutex_t mu;
    struct pub_snapshot *snap;
    struct snap_image *im;   /* the reference held, NULL: none yet */
    struct picture *pic;
    float *owned;            /* the volume rebuilt from published slices */
};
void http_picture_cache_free(struct http_picture_cache *c);

/* The PNG of one slice of IM: AXIS 'x' (the y-z plane at x = INDEX), 'y' (x-z at y),
 * 'z' (x-y at z); INDEX < 0 = the middle (or the published slice), clamped to the
 * volume.  *PNG malloc'd.  Drawn by io/picture.h, as the job's own PNGs, from C's
 * prepared picture of IM; LAYOUT (may be NULL) gets where the plot lies and the metres at
 * its edges.  IM is a reference from pub_snapshot_image that the call takes over (kept by
 * C or released).  0 or < 0 with err_msg(). */
int http_slice_png(struct http_picture_cache *c, struct snap_image *im, char axis, int index, unsigned char **png,
                   size_t *len, struct picture_layout *layout);

#ifdef __cplusplus
}
#endif

#endif
