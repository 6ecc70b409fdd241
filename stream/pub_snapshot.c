/* pub_snapshot — the publisher's latest messages, shared with the status page. */
#include "stream/pub_snapshot.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

struct image_frames {
    zmq_msg_t m[3];
    int n;
};

int pub_snapshot_init(struct pub_snapshot *s)
{
    memset(s, 0, sizeof *s);
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&s->cv, &a);
    pthread_condattr_destroy(&a);
    if (rc)
        return -rc;
    pthread_mutex_init(&s->mu, NULL);
    return 0;
}

static void image_free(struct snap_image *im)
{
    struct image_frames *f = im->priv;
    for (int i = 0; f && i < f->n; i++)
        zmq_msg_close(&f->m[i]);
    free(f);
    free(im->header);
    free(im);
}

/* Under the lock: drop one reference. */
static void image_unref(struct snap_image *im)
{
    if (im && --im->refs == 0)
        image_free(im);
}

void pub_snapshot_destroy(struct pub_snapshot *s)
{
    free(s->status);
    free(s->stations);
    image_unref(s->image);
    for (size_t i = 0; i < SNAP_EVENTS; i++)
        free(s->events[i]);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
}

void pub_snapshot_close(struct pub_snapshot *s)
{
    pthread_mutex_lock(&s->mu);
    s->n.closed = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* An image message as a snap_image with shared copies of its frames; NULL when it is
 * not a valid one (never expected from our own jobs). */
static struct snap_image *image_make(const char *header, size_t len, zmq_msg_t *msgs, int n)
{
    struct snap_image *im = calloc(1, sizeof *im);
    struct image_frames *f = calloc(1, sizeof *f);
    if (!im || !f || !(im->header = strndup(header, len)) ||
        wire_parse_volume(header, len, &im->h) < 0 || n < 1 || n > 3) {
        free(f);
        if (im)
            free(im->header);
        free(im);
        return NULL;
    }
    im->priv = f;
    for (int i = 0; i < n; i++) {
        zmq_msg_init(&f->m[i]);
        if (zmq_msg_copy(&f->m[i], &msgs[i]) < 0) {
            zmq_msg_close(&f->m[i]);
            image_free(im);
            return NULL;
        }
        f->n = i + 1;
        im->frame[i] = zmq_msg_data(&f->m[i]);
        im->bytes[i] = zmq_msg_size(&f->m[i]);
    }
    im->nframes = n;
    if (wire_check_volume_payload(&im->h, im->bytes, n) < 0) {
        image_free(im);
        return NULL;
    }
    im->refs = 1;
    return im;
}

void pub_snapshot_put(struct pub_snapshot *s, int t, const char *header, size_t len, void *msgs, int n)
{
    zmq_msg_t *m = msgs;
    if (t == WIRE_T_STATUS) {
        char *js = strndup(header, len);
        if (!js)
            return;
        pthread_mutex_lock(&s->mu);
        free(s->status);
        s->status = js;
        s->n.status++;
    } else if (t == WIRE_T_IMAGE) {
        /* The frames are shared (a reference count), so this costs no copy. */
        struct snap_image *im = image_make(header, len, m, n);
        if (!im)
            return;
        pthread_mutex_lock(&s->mu);
        image_unref(s->image);
        s->image = im;
        s->n.image++;
    } else if (t == WIRE_T_EVENT) {
        char *js = strndup(header, len);
        if (!js)
            return;
        int64_t seq = wire_parse_seq(header, len);
        pthread_mutex_lock(&s->mu);
        size_t k = (s->ev_head + s->ev_n) % SNAP_EVENTS;
        if (s->ev_n == SNAP_EVENTS)
            s->ev_head = (s->ev_head + 1) % SNAP_EVENTS; /* the oldest goes */
        else
            s->ev_n++;
        free(s->events[k]);
        s->events[k] = js;
        s->event_seq[k] = seq;
        s->n.events++;
    } else if (t == WIRE_T_COHERENCE && n >= 1) {
        /* One number per window (its peak) for the page's trace: a pass over the
         * trial grid, done here on the publisher thread, never on the worker. */
        struct wire_volume_hdr h;
        if (wire_parse_volume(header, len, &h) < 0)
            return;
        const float *v = zmq_msg_data(&m[0]);
        size_t nv = zmq_msg_size(&m[0]) / sizeof(float);
        float peak = 0;
        for (size_t i = 0; i < nv; i++)
            if (v[i] > peak)
                peak = v[i];
        pthread_mutex_lock(&s->mu);
        size_t k = (s->coh_head + s->coh_n) % SNAP_COHERENCE;
        if (s->coh_n == SNAP_COHERENCE)
            s->coh_head = (s->coh_head + 1) % SNAP_COHERENCE;
        else
            s->coh_n++;
        s->coh_t[k] = 1e-9 * (double)h.t0_ns;
        s->coh_peak[k] = peak;
        s->n.coherence++;
    } else {
        return;
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

void pub_snapshot_set_stations(struct pub_snapshot *s, char *json)
{
    pthread_mutex_lock(&s->mu);
    free(s->stations);
    s->stations = json;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

char *pub_snapshot_stations(struct pub_snapshot *s)
{
    pthread_mutex_lock(&s->mu);
    char *js = s->stations ? strdup(s->stations) : NULL;
    pthread_mutex_unlock(&s->mu);
    return js;
}

char *pub_snapshot_status(struct pub_snapshot *s)
{
    pthread_mutex_lock(&s->mu);
    char *js = s->status ? strdup(s->status) : NULL;
    pthread_mutex_unlock(&s->mu);
    return js;
}

char *pub_snapshot_events(struct pub_snapshot *s, int64_t after)
{
    pthread_mutex_lock(&s->mu);
    size_t total = 3;
    for (size_t i = 0; i < s->ev_n; i++) {
        size_t k = (s->ev_head + i) % SNAP_EVENTS;
        if (s->event_seq[k] > after)
            total += strlen(s->events[k]) + 1;
    }
    char *out = malloc(total), *p = out;
    if (out) {
        *p++ = '[';
        bool first = true;
        for (size_t i = 0; i < s->ev_n; i++) {
            size_t k = (s->ev_head + i) % SNAP_EVENTS;
            if (s->event_seq[k] <= after)
                continue;
            if (!first)
                *p++ = ',';
            first = false;
            size_t l = strlen(s->events[k]);
            memcpy(p, s->events[k], l);
            p += l;
        }
        *p++ = ']';
        *p = '\0';
    }
    pthread_mutex_unlock(&s->mu);
    return out;
}

char *pub_snapshot_coherence(struct pub_snapshot *s)
{
    pthread_mutex_lock(&s->mu);
    size_t cap = 3 + s->coh_n * 48, used = 0;
    char *out = malloc(cap);
    if (out) {
        used += (size_t)snprintf(out + used, cap - used, "[");
        for (size_t i = 0; i < s->coh_n; i++) {
            size_t k = (s->coh_head + i) % SNAP_COHERENCE;
            used += (size_t)snprintf(out + used, cap - used, "%s[%.3f,%.6g]", i ? "," : "",
                                     s->coh_t[k], isfinite(s->coh_peak[k]) ? s->coh_peak[k] : 0.0);
        }
        snprintf(out + used, cap - used, "]");
    }
    pthread_mutex_unlock(&s->mu);
    return out;
}

struct snap_image *pub_snapshot_image(struct pub_snapshot *s)
{
    pthread_mutex_lock(&s->mu);
    struct snap_image *im = s->image;
    if (im)
        im->refs++;
    pthread_mutex_unlock(&s->mu);
    return im;
}

void pub_snapshot_image_release(struct pub_snapshot *s, struct snap_image *im)
{
    if (!im)
        return;
    pthread_mutex_lock(&s->mu);
    image_unref(im);
    pthread_mutex_unlock(&s->mu);
}

void pub_snapshot_counts(struct pub_snapshot *s, struct snap_counts *c)
{
    pthread_mutex_lock(&s->mu);
    *c = s->n;
    pthread_mutex_unlock(&s->mu);
}

static bool counts_equal(const struct snap_counts *a, const struct snap_counts *b)
{
    return a->status == b->status && a->image == b->image && a->events == b->events &&
           a->coherence == b->coherence && a->closed == b->closed;
}

void pub_snapshot_wait(struct pub_snapshot *s, const struct snap_counts *seen, double timeout,
                       struct snap_counts *now)
{
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    double t = (double)dl.tv_nsec * 1e-9 + timeout;
    dl.tv_sec += (time_t)t;
    dl.tv_nsec = (long)((t - (double)(time_t)t) * 1e9);
    pthread_mutex_lock(&s->mu);
    while (!s->n.closed && counts_equal(&s->n, seen))
        if (pthread_cond_timedwait(&s->cv, &s->mu, &dl) == ETIMEDOUT)
            break;
    *now = s->n;
    pthread_mutex_unlock(&s->mu);
}
