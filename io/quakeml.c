/* quakeml — QuakeML 1.2 event catalogue with libxml2 (see quakeml.h). */
#include "io/quakeml.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/events.h"
#include "stream/error.h"

#define NS_Q "http://quakeml.org/xmlns/quakeml/1.2"
#define NS_BED "http://quakeml.org/xmlns/bed/1.2"

/* The catalogue is kept as text: what comes before the events, the events serialized
 * once each as they come, and what follows them.  Rewriting the file then costs a
 * write of its bytes, not a serialization of every event so far. */
struct quakeml_writer {
    char *path, *tmp;
    char name[64], version[64];
    struct locate_geo geo;
    xmlDocPtr doc;          /* root and <eventParameters>; events pass through it */
    xmlNodePtr params;      /* <eventParameters> */
    char *head, *tail;      /* the document's text before and after the events */
    xmlBufferPtr body;      /* the events' text */
    long long events;
};

static xmlNodePtr child(xmlNodePtr parent, const char *name, const char *text)
{
    return xmlNewTextChild(parent, NULL, BAD_CAST name, text ? BAD_CAST text : NULL);
}

static void child_num(xmlNodePtr parent, const char *name, double v, const char *fmt)
{
    char buf[64];
    snprintf(buf, sizeof buf, fmt, v);
    child(parent, name, buf);
}

/* <NAME><value>V</value>[<uncertainty>U</uncertainty>]</NAME> */
static void quantity(xmlNodePtr parent, const char *name, double v, double u, const char *fmt)
{
    xmlNodePtr q = child(parent, name, NULL);
    child_num(q, "value", v, fmt);
    if (isfinite(u) && u >= 0)
        child_num(q, "uncertainty", u, fmt);
}

static void creation_info(const struct quakeml_writer *q, xmlNodePtr parent)
{
    char now[64];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    events_iso_time((int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec, now, sizeof now);
    xmlNodePtr ci = child(parent, "creationInfo", NULL);
    child(ci, "author", "seislive");
    child(ci, "creationTime", now);
    child(ci, "version", q->version);
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Persist the document: PATH.tmp, fsync, rename, fsync of the folder. */
static int persist(struct quakeml_writer *q)
{
    int fd = open(q->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return err_set(-errno, "%s: cannot create: %s", q->tmp, strerror(errno));
    int bad = write_all(fd, q->head, strlen(q->head)) != 0;
    bad |= write_all(fd, (const char *)xmlBufferContent(q->body), (size_t)xmlBufferLength(q->body)) != 0;
    bad |= write_all(fd, q->tail, strlen(q->tail)) != 0;
    if (bad) {
        int e = errno ? errno : EIO;
        close(fd);
        unlink(q->tmp);
        return err_set(-e, "%s: write failed: %s", q->tmp, strerror(e));
    }
    if (fsync(fd) != 0) {
        int e = errno;
        close(fd);
        unlink(q->tmp);
        return err_set(-e, "%s: fsync: %s", q->tmp, strerror(e));
    }
    if (close(fd) != 0 || rename(q->tmp, q->path) != 0) {
        int e = errno;
        unlink(q->tmp);
        return err_set(-e, "%s: cannot replace: %s", q->path, strerror(e));
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", q->path);
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) { /* the rename itself durable; a folder that cannot be opened only loses that */
        fsync(dfd);
        close(dfd);
    }
    return 0;
}

/* The document's text around its events: serialized once (libxml2), cut before the
 * closing </eventParameters>. */
static int split_document(struct quakeml_writer *q)
{
    xmlChar *text = NULL;
    int len = 0;
    xmlDocDumpFormatMemoryEnc(q->doc, &text, &len, "UTF-8", 1);
    if (!text)
        return err_set(-ENOMEM, "%s: out of memory", q->path);
    const char *end = strstr((const char *)text, "</eventParameters>");
    if (!end) {
        xmlFree(text);
        return err_set(-EIO, "%s: serialized catalogue has no </eventParameters>", q->path);
    }
    size_t h = (size_t)(end - (const char *)text);
    q->head = strndup((const char *)text, h);
    q->tail = strdup(end);
    q->body = xmlBufferCreate();
    xmlFree(text);
    if (!q->head || !q->tail || !q->body)
        return err_set(-ENOMEM, "%s: out of memory", q->path);
    return 0;
}

int quakeml_open(struct quakeml_writer **out, const char *path, const char *name, const char *version,
                 const struct locate_geo *geo)
{
    *out = NULL;
    if (!geo || !geo->to_geographic)
        return err_set(-EINVAL, "%s: QuakeML needs latitude and longitude, and the events here are in a cartesian "
                       "frame only: give geographic stations ([locate] coords = \"geographic\") or NonLinLoc grids "
                       "with a geographic TRANSFORM, or set [locate] quakeml = false", path);
    LIBXML_TEST_VERSION
    struct quakeml_writer *q = calloc(1, sizeof *q);
    size_t n = strlen(path);
    if (!q || !(q->path = strdup(path)) || !(q->tmp = malloc(n + 5))) {
        if (q)
            free(q->path);
        free(q);
        return err_set(-ENOMEM, "%s: out of memory", path);
    }
    snprintf(q->tmp, n + 5, "%s.tmp", path);
    /* the resource id pattern allows [\w\d\-.*()_~'] in a path segment: keep it simple */
    snprintf(q->name, sizeof q->name, "%s", name && *name ? name : "seislive");
    for (char *c = q->name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '_' || *c == '-'))
            *c = '_';
    snprintf(q->version, sizeof q->version, "%s", version ? version : "");
    q->geo = *geo;
    q->doc = xmlNewDoc(BAD_CAST "1.0");
    xmlNodePtr root = xmlNewNode(NULL, BAD_CAST "quakeml");
    xmlNsPtr nsq = xmlNewNs(root, BAD_CAST NS_Q, BAD_CAST "q");
    xmlSetNs(root, nsq);
    xmlNsPtr bed = xmlNewNs(root, BAD_CAST NS_BED, NULL);
    xmlDocSetRootElement(q->doc, root);
    q->params = xmlNewChild(root, bed, BAD_CAST "eventParameters", NULL);
    char id[160];
    snprintf(id, sizeof id, "smi:local/seislive/%s/catalog", q->name);
    xmlNewProp(q->params, BAD_CAST "publicID", BAD_CAST id);
    creation_info(q, q->params);
    int rc = split_document(q);
    if (!rc)
        rc = persist(q);
    if (rc) {
        quakeml_close(q);
        return rc;
    }
    *out = q;
    return 0;
}

int quakeml_add(struct quakeml_writer *q, const struct locate_event *ev)
{
    char id[192], oid[192], iso[64], text[512];
    snprintf(id, sizeof id, "smi:local/seislive/%s/event/%lld", q->name, (long long)ev->origin_ns);
    snprintf(oid, sizeof oid, "smi:local/seislive/%s/origin/%lld", q->name, (long long)ev->origin_ns);
    double lat = ev->lat, lon = ev->lon, elev;
    if (!isfinite(lat) || !isfinite(lon))
        q->geo.to_geographic(&q->geo, ev->x, ev->y, ev->z, &lat, &lon, &elev);
    if (!isfinite(lat) || !isfinite(lon) || fabs(lat) > 90)
        return err_set(-EINVAL, "%s: event %lld at (%.1f, %.1f, %.1f) m has no latitude/longitude", q->path,
                       (long long)ev->id, ev->x, ev->y, ev->z);
    /* the frame's sigmas through the projection, to first order (1 m steps) */
    double la_x, lo_x, la_y, lo_y;
    q->geo.to_geographic(&q->geo, ev->x + 1, ev->y, ev->z, &la_x, &lo_x, &elev);
    q->geo.to_geographic(&q->geo, ev->x, ev->y + 1, ev->z, &la_y, &lo_y, &elev);
    double sx = isfinite(ev->sx) ? ev->sx : NAN, sy = isfinite(ev->sy) ? ev->sy : NAN;
    double slat = hypot((la_x - lat) * sx, (la_y - lat) * sy);
    double slon = hypot(remainder(lo_x - lon, 360.0) * sx, remainder(lo_y - lon, 360.0) * sy);

    xmlNodePtr e = xmlNewChild(q->params, NULL, BAD_CAST "event", NULL);
    xmlNewProp(e, BAD_CAST "publicID", BAD_CAST id);
    child(e, "preferredOriginID", oid);
    xmlNodePtr o = child(e, "origin", NULL);
    xmlNewProp(o, BAD_CAST "publicID", BAD_CAST oid);
    xmlNodePtr t = child(o, "time", NULL);
    child(t, "value", events_iso_time(ev->origin_ns, iso, sizeof iso));
    if (isfinite(ev->st) && ev->st >= 0)
        child_num(t, "uncertainty", ev->st, "%.6f");
    quantity(o, "latitude", lat, slat, "%.8f");
    quantity(o, "longitude", remainder(lon, 360.0), slon, "%.8f");
    quantity(o, "depth", ev->z, ev->sz, "%.2f");
    child(o, "depthType", "from location");
    child(o, "methodID", "smi:local/seislive/method/coherent-stack");
    xmlNodePtr qual = child(o, "quality", NULL);
    snprintf(text, sizeof text, "%d", ev->rows_used);
    child(qual, "usedPhaseCount", text);
    child(o, "type", "hypocenter");
    child(o, "evaluationMode", "automatic");
    child(o, "evaluationStatus", "preliminary");
    creation_info(q, o);
    xmlNodePtr c = child(e, "comment", NULL);
    snprintf(text, sizeof text,
             "seislive event %lld: frame position (%.2f, %.2f, %.2f) m, sigma (%.2f, %.2f, %.2f) m, coalescence %.6g, "
             "trigger level %.6g, grid cell (%d, %d, %d)",
             (long long)ev->id, ev->x, ev->y, ev->z, ev->sx, ev->sy, ev->sz, ev->coalescence, ev->level, ev->ix,
             ev->iy, ev->iz);
    child(c, "text", text);
    creation_info(q, e);
    /* the event's text, indented as a child of <eventParameters>, then the node is gone */
    xmlBufferCCat(q->body, "  ");
    int n = xmlNodeDump(q->body, q->doc, e, 2, 1);
    xmlBufferCCat(q->body, "\n");
    xmlUnlinkNode(e);
    xmlFreeNode(e);
    if (n < 0)
        return err_set(-ENOMEM, "%s: event %lld: serialization failed", q->path, (long long)ev->id);
    q->events++;
    return persist(q);
}

const char *quakeml_path(const struct quakeml_writer *q)
{
    return q->path;
}

void quakeml_close(struct quakeml_writer *q)
{
    if (!q)
        return;
    if (q->doc)
        xmlFreeDoc(q->doc);
    if (q->body)
        xmlBufferFree(q->body);
    free(q->head);
    free(q->tail);
    free(q->path);
    free(q->tmp);
    free(q);
}
