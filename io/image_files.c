/* image_files — raw float32 + JSON sidecar, atomically. */
#include "io/image_files.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/segy_write.h"
#include "stream/error.h"

static int write_atomic(const char *path, const void *p, size_t n)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return err_set(-errno, "%s: %s", tmp, strerror(errno));
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            return err_set(-e, "%s: write: %s", tmp, strerror(e));
        }
        c += w;
        n -= (size_t)w;
    }
    if (fsync(fd) < 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return err_set(-e, "%s: fsync: %s", tmp, strerror(e));
    }
    close(fd);
    if (rename(tmp, path) < 0)
        return err_set(-errno, "rename %s: %s", tmp, strerror(errno));
    return 0;
}

int image_files_write(const char *dir, const char *name, const struct image_meta *m,
                      const float *v)
{
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return err_set(-errno, "%s: mkdir: %s", dir, strerror(errno));
    char path[4096];
    size_t cells = (size_t)m->n[0] * (size_t)m->n[1] * (size_t)m->n[2];
    snprintf(path, sizeof path, "%s/%s.f32", dir, name);
    int rc = write_atomic(path, v, cells * sizeof(float));
    if (rc)
        return rc;
    json_t *o = json_pack("{s:s, s:s, s:[i,i,i], s:[f,f,f], s:[f,f,f], s:I, s:b, s:s, s:s}", "data",
                          strrchr(path, '/') + 1, "dtype", "f32", "n", m->n[0], m->n[1], m->n[2],
                          "d", m->d[0], m->d[1], m->d[2], "o", m->o[0], m->o[1], m->o[2], "units",
                          (json_int_t)m->units, "final", m->final, "job", m->job ? m->job : "",
                          "layout", "x fastest, then y, z slowest; little-endian");
    /* The SEG-Y copy's depth sample interval is in a unit that depends on dz (its field
     * has 16 bits): say which, so a reader need not parse the textual header. */
    int iv;
    const char *unit;
    double unit_m;
    if (o && segy_depth_interval(m->d[2], &iv, &unit, &unit_m) == 0)
        json_object_set_new(o, "segy_depth_interval",
                            json_pack("{s:i, s:s, s:f}", "value", iv, "unit", unit, "unit_m", unit_m));
    char *js = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    json_decref(o);
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    rc = write_atomic(path, js, strlen(js));
    free(js);
    return rc;
}

int image_files_write_segy(const char *dir, const char *name, const struct image_meta *m,
                           const float *v)
{
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return err_set(-errno, "%s: mkdir: %s", dir, strerror(errno));
    char path[4096], text[400];
    snprintf(path, sizeof path, "%s/%s.segy", dir, name);
    /* dz in mm overflowed the 16-bit field above 65.535 m: a unit that holds it */
    int interval;
    const char *unit;
    double unit_m;
    int rc = segy_depth_interval(m->d[2], &interval, &unit, &unit_m);
    if (rc)
        return err_prefix(rc, "%s", path);
    snprintf(text, sizeof text,
             "seislive %s image, %lld units%s\nsamples: depth, interval in %s (%d x %g m)\n"
             "grid %d x %d x %d, spacing %g %g %g m, origin %g %g %g m",
             m->job ? m->job : "", (long long)m->units, m->final ? " (final)" : "", unit, interval, unit_m,
             m->n[0], m->n[1], m->n[2], m->d[0], m->d[1], m->d[2], m->o[0], m->o[1], m->o[2]);
    int nx = m->n[0], ny = m->n[1], nz = m->n[2];
    struct segy_writer *w;
    rc = segy_writer_open(path, nz, interval, -100, text, &w);
    if (rc)
        return rc;
    float *tr = malloc((size_t)nz * sizeof(float));
    if (!tr) {
        segy_writer_close(w);
        return err_set(-ENOMEM, "%s: out of memory", path);
    }
    for (int iy = 0; iy < ny && !rc; iy++)
        for (int ix = 0; ix < nx && !rc; ix++) {
            for (int iz = 0; iz < nz; iz++)
                tr[iz] = v[((size_t)iz * ny + iy) * nx + ix];
            double x = m->o[0] + ix * m->d[0], y = m->o[1] + iy * m->d[1];
            struct segy_trace_info ti = {.shot = 1, .channel = iy * nx + ix + 1,
                                         .src = {x, y, 0}, .rec = {x, y, 0}, .has_cdp = true,
                                         .cdp = iy * nx + ix + 1, .inline_no = iy + 1,
                                         .crossline_no = ix + 1, .cdp_xy = {x, y}};
            rc = segy_writer_trace(w, &ti, tr);
        }
    free(tr);
    int crc = segy_writer_close(w);
    return rc ? rc : crc;
}

int image_files_read(const char *dir, const char *name, struct image_meta *m, float **v)
{
    char path[4096];
    memset(m, 0, sizeof *m);
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    json_error_t e;
    json_t *o = json_load_file(path, 0, &e);
    if (!o)
        return err_set(-EINVAL, "%s:%d: %s", path, e.line, e.text);
    json_int_t units = 0;
    int fin = 0;
    int rc = json_unpack_ex(o, &e, 0, "{s:[iii], s:[FFF], s:[FFF], s:I, s:b}", "n", &m->n[0],
                            &m->n[1], &m->n[2], "d", &m->d[0], &m->d[1], &m->d[2], "o", &m->o[0],
                            &m->o[1], &m->o[2], "units", &units, "final", &fin);
    json_decref(o);
    if (rc)
        return err_set(-EINVAL, "%s: %s", path, e.text);
    m->units = units;
    m->final = fin;
    size_t cells = (size_t)m->n[0] * (size_t)m->n[1] * (size_t)m->n[2];
    snprintf(path, sizeof path, "%s/%s.f32", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    *v = malloc(cells * sizeof(float) + 1);
    size_t got = fread(*v, sizeof(float), cells, f);
    fclose(f);
    if (got != cells) {
        free(*v);
        *v = NULL;
        return err_set(-EIO, "%s: %zu of %zu floats", path, got, cells);
    }
    return 0;
}
