/* rtm_strips — see rtm_strips.h. */
#include "kernels/rtm_strips.h"

#include <errno.h>
#include <string.h>

#include "kernels/device.h"
#include "stream/error.h"

int rtm_strip_host_get(struct rtm_strip_host *h, const struct sl_device *dev, size_t bytes, int how, size_t unit)
{
    /* a registration piece must hold whole strips: the same unit, or the one piece */
    if (h->p && h->bytes >= bytes && (h->unit == unit || h->how != DEV_PIN_PIECES))
        return 0;
    rtm_strip_host_free(h, dev);
    int rc = dev_host_alloc(dev, bytes, how, unit, &h->p);
    if (rc < 0)
        return err_prefix(rc, "boundary strips in host memory (%.2f GiB)", bytes / 1073741824.0);
    h->bytes = bytes;
    h->how = how;
    h->unit = unit;
    return 1;
}

void rtm_strip_host_free(struct rtm_strip_host *h, const struct sl_device *dev)
{
    dev_host_free(dev, h->p, h->bytes, h->how, h->unit);
    h->p = NULL;
    h->bytes = 0;
}

int rtm_strips_init(struct rtm_strips *s, const struct sl_device *dev, bool gpu, size_t sc, int count, bool host,
                    float *store, float *stage, int nstage)
{
    memset(s, 0, sizeof *s);
    s->dev = dev;
    s->gpu = gpu;
    s->sc = sc;
    s->count = count;
    s->host = host;
    s->store = store;
    s->want = -1;
    s->fetched = -1;
    if (!host)
        return 0;
    if (nstage < 1 || nstage > RTM_STRIP_STAGES_MAX)
        return err_set(-EINVAL, "strip store: %d staging slots (1..%d)", nstage, RTM_STRIP_STAGES_MAX);
    s->stage = stage;
    s->nstage = nstage;
    for (int k = 0; k < nstage; k++)
        s->tag[k] = -1;
    int rc = dev_stream_create(dev, &s->copy);
    for (int k = 0; k < nstage && rc == 0; k++) {
        rc = dev_event_create(dev, &s->filled[k], false);
        if (rc == 0)
            rc = dev_event_create(dev, &s->drained[k], false);
    }
    return rc;
}

void rtm_strips_fini(struct rtm_strips *s)
{
    for (int k = 0; k < s->nstage; k++) {
        dev_event_destroy(s->dev, s->filled[k]);
        dev_event_destroy(s->dev, s->drained[k]);
    }
    dev_stream_destroy(s->dev, s->copy);
    s->copy = NULL;
    s->nstage = 0;
}

static float *slot(const struct rtm_strips *s, int k) { return s->stage + (size_t)k * s->sc; }
static float *strip(const struct rtm_strips *s, int i) { return s->store + (size_t)i * s->sc; }

/* CPU: a slot whose strip has been consumed is filled with NaN, so that a load from the
 * wrong slot (or before its copy) shows in the image instead of passing unseen.  The
 * GPU keeps the cycles: the same slot arithmetic runs there. */
static void poison(const struct rtm_strips *s, int k)
{
    if (!s->gpu)
        memset(slot(s, k), 0xff, s->sc * sizeof(float));
}

static int check_index(const struct rtm_strips *s, int i, const char *what)
{
    if (i < 0 || i >= s->count)
        return err_set(-EINVAL, "strip store: %s of strip %d of %d", what, i, s->count);
    return 0;
}

int rtm_strips_save(struct rtm_strips *s, struct prop *u, void *ustream, int i)
{
    int rc = check_index(s, i, "save");
    if (rc < 0)
        return rc;
    if (!s->host)
        return prop_strip_save(u, strip(s, i), s->gpu);
    const int k = i % s->nstage;
    /* the slot's previous strip must be on the host before the kernel overwrites it */
    if (s->tag[k] >= 0 && (rc = dev_stream_wait(s->dev, ustream, s->drained[k])) < 0)
        return rc;
    s->tag[k] = i;
    if ((rc = prop_strip_save(u, slot(s, k), s->gpu)) < 0 ||
        (rc = dev_event_record(s->dev, s->filled[k], ustream)) < 0 ||
        (rc = dev_stream_wait(s->dev, s->copy, s->filled[k])) < 0 ||
        (rc = dev_copy(s->dev, strip(s, i), slot(s, k), s->sc * sizeof(float), s->gpu ? DEV_D2H : DEV_H2H,
                       s->copy)) < 0 ||
        (rc = dev_event_record(s->dev, s->drained[k], s->copy)) < 0)
        return rc;
    poison(s, k);
    s->d2h++;
    return 0;
}

/* Host store: strip J into its slot on the copy stream, once the slot's last consumer
 * (the D2H of the forward sweep, or the load of strip J + NSTAGE) is done. */
static int fetch(struct rtm_strips *s, int j)
{
    const int k = j % s->nstage;
    int rc = 0;
    if (s->tag[k] >= 0 && (rc = dev_stream_wait(s->dev, s->copy, s->drained[k])) < 0)
        return rc;
    s->tag[k] = j;
    if ((rc = dev_copy(s->dev, slot(s, k), strip(s, j), s->sc * sizeof(float), s->gpu ? DEV_H2D : DEV_H2H,
                       s->copy)) < 0 ||
        (rc = dev_event_record(s->dev, s->filled[k], s->copy)) < 0)
        return rc;
    s->fetched = j;
    s->h2d++;
    return 0;
}

int rtm_strips_load(struct rtm_strips *s, struct prop *u, void *ustream, int i)
{
    int rc = check_index(s, i, "load");
    if (rc < 0)
        return rc;
    if (!s->host)
        return prop_strip_load(u, strip(s, i), s->gpu);
    if (s->want < 0) {
        /* the first load: the NSTAGE strips from I down, ahead */
        for (int j = i; j > i - s->nstage && j >= 0 && rc == 0; j--)
            rc = fetch(s, j);
        if (rc < 0)
            return rc;
    } else if (i != s->want) {
        return err_set(-EINVAL, "strip store: load of strip %d, strip %d expected (loads go down by one)", i,
                       s->want);
    }
    const int k = i % s->nstage;
    if (s->tag[k] != i)
        return err_set(-EIO, "strip store: slot %d holds strip %d, strip %d wanted", k, s->tag[k], i);
    if ((rc = dev_stream_wait(s->dev, ustream, s->filled[k])) < 0 ||
        (rc = prop_strip_load(u, slot(s, k), s->gpu)) < 0 || (rc = dev_event_record(s->dev, s->drained[k], ustream)) < 0)
        return rc;
    poison(s, k);
    s->want = i - 1;
    /* the slot is free once the kernel has read it: the strip NSTAGE further down goes in */
    if (i - s->nstage >= 0)
        rc = fetch(s, i - s->nstage);
    return rc;
}
