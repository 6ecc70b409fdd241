/* events — CSV / JSON-lines event files and coherence volumes (see events.h). */
#include "io/events.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/quakeml.h"
#include "stream/error.h"

const char *events_iso_time(int64_t ns, char *buf, size_t len)
{
    int64_t s = ns >= 0 ? ns / 1000000000 : -((-ns + 999999999) / 1000000000);
    int64_t frac = ns - s * 1000000000;
    time_t tt = (time_t)s;
    struct tm tm;
    gmtime_r(&tt, &tm);
    char d[32];
    strftime(d, sizeof d, "%Y-%m-%dT%H:%M:%S", &tm);
    int us = (int)(frac / 1000) % 1000000;
    snprintf(buf, len, "%.20s.%06dZ", d, us);
    return buf;
}

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int events_open(struct event_writer *w, const char *dir)
{
    memset(w, 0, sizeof *w);
    w->csv_path = path_join(dir, "events.csv");
    w->jsonl_path = path_join(dir, "events.jsonl");
    if (!w->csv_path || !w->jsonl_path) {
        events_close(w);
        return err_set(-ENOMEM, "events: out of memory");
    }
    w->csv = fopen(w->csv_path, "w");
    if (!w->csv) {
        int rc = err_set(-errno, "%s: cannot create: %s", w->csv_path, strerror(errno));
        events_close(w);
        return rc;
    }
    w->jsonl = fopen(w->jsonl_path, "w");
    if (!w->jsonl) {
        int rc = err_set(-errno, "%s: cannot create: %s", w->jsonl_path, strerror(errno));
        events_close(w);
        return rc;
    }
    fprintf(w->csv, "id,origin_time,origin_ns,x_m,y_m,z_m,sigma_x_m,sigma_y_m,sigma_z_m,sigma_t_s,"
                    "latitude,longitude,elevation_m,coalescence,level,ix,iy,iz,rows_used\n");
    fflush(w->csv);
    return 0;
}

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

char *events_json(const struct locate_event *ev)
{
    char iso[64];
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(ev->id));
    json_object_set_new(o, "origin_time", json_string(events_iso_time(ev->origin_ns, iso, sizeof iso)));
    json_object_set_new(o, "origin_ns", json_integer(ev->origin_ns));
    json_object_set_new(o, "x", json_pack("[fff]", ev->x, ev->y, ev->z));
    json_object_set_new(o, "sigma", json_pack("[fff]", ev->sx, ev->sy, ev->sz));
    json_object_set_new(o, "sigma_t", json_real(ev->st));
    json_object_set_new(o, "latitude", num_or_null(ev->lat));
    json_object_set_new(o, "longitude", num_or_null(ev->lon));
    json_object_set_new(o, "elevation", num_or_null(ev->elev));
    json_object_set_new(o, "coalescence", json_real(ev->coalescence));
    json_object_set_new(o, "level", num_or_null(ev->level));
    json_object_set_new(o, "cell", json_pack("[iii]", ev->ix, ev->iy, ev->iz));
    json_object_set_new(o, "rows_used", json_integer(ev->rows_used));
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(o);
    return s;
}

int events_enable_quakeml(struct event_writer *w, const char *dir, const char *name, const char *version,
                          const struct locate_geo *geo)
{
    char *path = path_join(dir, "events.xml");
    if (!path)
        return err_set(-ENOMEM, "events: out of memory");
    int rc = quakeml_open(&w->qml, path, name, version, geo);
    free(path);
    return rc;
}

int events_write(struct event_writer *w, const struct locate_event *ev)
{
    char iso[64];
    fprintf(w->csv, "%lld,%s,%lld,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.6f,%.7f,%.7f,%.2f,%.6g,%.6g,%d,%d,%d,%d\n",
            (long long)ev->id, events_iso_time(ev->origin_ns, iso, sizeof iso), (long long)ev->origin_ns, ev->x,
            ev->y, ev->z, ev->sx, ev->sy, ev->sz, ev->st, ev->lat, ev->lon, ev->elev, ev->coalescence, ev->level,
            ev->ix, ev->iy, ev->iz, ev->rows_used);
    char *js = events_json(ev);
    if (!js)
        return err_set(-ENOMEM, "events: out of memory");
    fprintf(w->jsonl, "%s\n", js);
    free(js);
    if (fflush(w->csv) != 0 || fflush(w->jsonl) != 0 || ferror(w->csv) || ferror(w->jsonl))
        return err_set(-EIO, "%s: write failed", w->csv_path);
    if (w->qml) {
        int rc = quakeml_add(w->qml, ev);
        if (rc)
            return rc;
    }
    w->written++;
    return 0;
}

int events_close(struct event_writer *w)
{
    int bad = 0;
    if (w->csv)
        bad |= fclose(w->csv) != 0;
    if (w->jsonl)
        bad |= fclose(w->jsonl) != 0;
    int rc = bad ? err_set(-EIO, "%s: close failed", w->csv_path ? w->csv_path : "events") : 0;
    quakeml_close(w->qml);
    free(w->csv_path);
    free(w->jsonl_path);
    memset(w, 0, sizeof *w);
    return rc;
}

int coherence_write(const char *dir, const float *coh, const struct tt_grid *g, int64_t seq,
                    int64_t t0_ns, int64_t t1_ns)
{
    char path[4096];
    size_t n = (size_t)g->n[0] * g->n[1] * g->n[2];
    snprintf(path, sizeof path, "%s/coherence_%06lld.f32", dir, (long long)seq);
    FILE *f = fopen(path, "wb");
    if (!f)
        return err_set(-errno, "%s: cannot create: %s", path, strerror(errno));
    int bad = fwrite(coh, sizeof(float), n, f) != n;
    bad |= fclose(f) != 0;
    if (bad)
        return err_set(-EIO, "%s: write failed", path);
    snprintf(path, sizeof path, "%s/coherence_%06lld.json", dir, (long long)seq);
    json_t *o = json_pack("{s:I, s:[iii], s:[fff], s:[fff], s:I, s:I, s:s, s:s}", "seq", (json_int_t)seq, "n",
                          g->n[0], g->n[1], g->n[2], "d", g->d[0], g->d[1], g->d[2], "o", g->o[0], g->o[1],
                          g->o[2], "t0_ns", (json_int_t)t0_ns, "t1_ns", (json_int_t)t1_ns, "dtype", "f32",
                          "layout", "x fastest, z slowest; max coalescence over the block's origin times");
    if (!o || json_dump_file(o, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0) {
        json_decref(o);
        return err_set(-EIO, "%s: write failed", path);
    }
    json_decref(o);
    return 0;
}
