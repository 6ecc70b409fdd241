/* picture — the numbers behind the pictures (gain, clip, slices) and their files; the
 * drawing is io/picture_draw.c.  See picture.h. */
#include "io/picture.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/picture_impl.h"
#include "io/png_slices.h"
#include "stream/error.h"

void picture_opts_default(struct picture_opts *o)
{
    *o = (struct picture_opts){.gain = 0, .agc = 0, .percentile = 99, .at = {-1, -1, -1},
                               .size = 640};
}

int picture_opts_check(const struct picture_opts *o)
{
    if (!(o->gain >= 0 && o->gain <= 8))
        return err_set(-EINVAL, "picture gain %g: must be in [0, 8]", o->gain);
    if (!(o->agc >= 0 && o->agc < 1e9))
        return err_set(-EINVAL, "picture AGC window %g m: must be >= 0", o->agc);
    if (!(o->percentile > 0 && o->percentile <= 100))
        return err_set(-EINVAL, "picture percentile %g: must be in (0, 100]", o->percentile);
    if (o->size < 64 || o->size > 8192)
        return err_set(-EINVAL, "picture size %d: must be 64 to 8192 pixels", o->size);
    return 0;
}

#ifdef __SANITIZE_ADDRESS__
/* fontconfig (under cairo's text) keeps its configuration caches for the life of the
 * process and frees them only in FcFini, which cairo never calls: not this program's
 * leak.  LeakSanitizer (make SAN=1) is told so here, in the file that draws text, so
 * that every program that links it reports only its own leaks. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libfontconfig.so\n"; }
#endif

/* The same robust clip as the plain PNG slices (one implementation: io/png_slices.c). */
float picture_robust_clip(const float *x, size_t n, double percentile)
{
    return png_robust_clip(x, n, percentile);
}

/* AGC of one column (LEN values STRIDE apart): each value over the RMS of the values
 * within HALF cells of it (running sums of squares: O(LEN)).  FLOOR keeps a window of
 * zeros (above the first arrival, a dead trace) at zero instead of dividing by zero. */
static void agc_column(float *out, const float *in, size_t stride, int len, int half,
                       double floor2, double *cum)
{
    cum[0] = 0;
    for (int k = 0; k < len; k++) {
        double x = in[(size_t)k * stride];
        cum[k + 1] = cum[k] + (isfinite(x) ? x * x : 0);
    }
    for (int k = 0; k < len; k++) {
        int a = k - half < 0 ? 0 : k - half, b = k + half >= len ? len - 1 : k + half;
        double ms = (cum[b + 1] - cum[a]) / (b - a + 1);
        out[(size_t)k * stride] = (float)(in[(size_t)k * stride] / sqrt(ms + floor2));
    }
}

void picture_apply_gain(float *out, const float *vol, const int n[3], const double d[3],
                        double gain, double agc)
{
    size_t nx = (size_t)n[0], ny = (size_t)n[1], nz = (size_t)n[2], nxy = nx * ny;
    /* depth^k with depth in cells below the grid's top, at least half a cell: only the
     * shape matters (the clip is relative), and the top row is not zeroed */
    for (size_t k = 0; k < nz; k++) {
        double g = gain > 0 ? pow(k > 0 ? (double)k : 0.5, gain) : 1.0;
        for (size_t i = 0; i < nxy; i++)
            out[k * nxy + i] = (float)(vol[k * nxy + i] * g);
    }
    if (!(agc > 0))
        return;
    double all = 0;
    for (size_t i = 0; i < nxy * nz; i++)
        if (isfinite(out[i]))
            all += (double)out[i] * out[i];
    /* a window's mean square below 1e-12 of the volume's counts as silence */
    double floor2 = 1e-12 * all / (double)(nxy * nz) + 1e-300;
    int half = (int)lround(0.5 * agc / (d[2] > 0 ? d[2] : 1));
    if (half < 1)
        half = 1;
    double *cum = malloc((nz + 1) * sizeof *cum);
    if (!cum)
        return; /* no AGC rather than no picture; the depth gain is applied */
    for (size_t i = 0; i < nxy; i++)
        agc_column(out + i, out + i, nxy, (int)nz, half, floor2, cum);
    free(cum);
}

int picture_prepare(struct picture **pp, const float *vol, const struct picture_meta *m,
                    const struct picture_opts *o)
{
    *pp = NULL;
    struct picture_opts def;
    picture_opts_default(&def);
    if (!o)
        o = &def;
    int rc = picture_opts_check(o);
    if (rc)
        return rc;
    for (int k = 0; k < 3; k++)
        if (m->n[k] < 1 || m->n[k] > (1 << 20) || !(m->d[k] > 0) || !isfinite(m->o[k]))
            return err_set(-EINVAL, "picture: bad grid on axis %d (n %d, d %g, o %g)", k,
                           m->n[k], m->d[k], m->o[k]);
    struct picture *p = calloc(1, sizeof *p);
    if (!p)
        return err_set(-ENOMEM, "picture: out of memory");
    size_t cells = (size_t)m->n[0] * m->n[1] * m->n[2];
    p->m = *m;
    p->o = *o;
    snprintf(p->job, sizeof p->job, "%s", m->job ? m->job : "");
    snprintf(p->unit_name, sizeof p->unit_name, "%s", m->unit_name ? m->unit_name : "shots stacked");
    p->m.job = p->job;
    p->m.unit_name = p->unit_name;
    p->v = vol;
    if (o->gain > 0 || o->agc > 0) {
        if (!(p->own = malloc(cells * sizeof *p->own))) {
            free(p);
            return err_set(-ENOMEM, "picture: out of memory for the gained copy (%zu cells)", cells);
        }
        picture_apply_gain(p->own, vol, m->n, m->d, o->gain, o->agc);
        p->v = p->own;
    }
    p->clip = picture_robust_clip(p->v, cells, o->percentile);
    *pp = p;
    return 0;
}

void picture_free(struct picture *p)
{
    if (p) {
        free(p->own);
        free(p);
    }
}

float picture_clip(const struct picture *p) { return p->clip; }

int picture_extract(const struct picture *p, char axis, int at, struct picture_slice *sl)
{
    const int *n = p->m.n;
    int ax = axis == 'x' ? 0 : axis == 'y' ? 1 : axis == 'z' ? 2 : -1;
    if (ax < 0)
        return err_set(-EINVAL, "picture: no slice axis '%c' (x, y or z)", axis);
    if (at < 0 || at >= n[ax])
        at = p->o.at[ax];
    if (at < 0 || at >= n[ax])
        at = n[ax] / 2;
    size_t nx = (size_t)n[0], ny = (size_t)n[1];
    *sl = (struct picture_slice){.axis = axis, .at = at};
    sl->h = ax == 0 ? 1 : 0;       /* across: y for an x slice, else x */
    sl->v = ax == 2 ? 1 : 2;       /* down: y for a depth slice, else depth */
    sl->sw = n[sl->h];
    sl->sh = n[sl->v];
    if (!(sl->s = malloc((size_t)sl->sw * sl->sh * sizeof *sl->s)))
        return err_set(-ENOMEM, "picture: out of memory");
    for (int r = 0; r < sl->sh; r++)
        for (int c = 0; c < sl->sw; c++) {
            size_t i = ax == 2 ? ((size_t)at * ny + r) * nx + c
                     : ax == 1 ? ((size_t)r * ny + at) * nx + c
                               : ((size_t)r * ny + c) * nx + at;
            sl->s[(size_t)r * sl->sw + c] = p->v[i];
        }
    return 0;
}

struct membuf {
    unsigned char *b;
    size_t len, cap;
    int failed;
};

static cairo_status_t mem_write(void *closure, const unsigned char *data, unsigned int len)
{
    struct membuf *m = closure;
    if (m->len + len > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 65536;
        while (cap < m->len + len)
            cap *= 2;
        unsigned char *b = realloc(m->b, cap);
        if (!b) {
            m->failed = 1;
            return CAIRO_STATUS_WRITE_ERROR;
        }
        m->b = b;
        m->cap = cap;
    }
    memcpy(m->b + m->len, data, len);
    m->len += len;
    return CAIRO_STATUS_SUCCESS;
}

int picture_render_png(const struct picture *p, char axis, int at, unsigned char **png,
                       size_t *len, struct picture_layout *layout)
{
    *png = NULL;
    *len = 0;
    struct picture_slice sl;
    int rc = picture_extract(p, axis, at, &sl);
    if (rc)
        return rc;
    struct membuf m = {0};
    rc = picture_draw(p, &sl, mem_write, &m, layout);
    free(sl.s);
    if (!rc && m.failed)
        rc = err_set(-ENOMEM, "picture: out of memory for the PNG");
    if (rc) {
        free(m.b);
        return rc;
    }
    *png = m.b;
    *len = m.len;
    return 0;
}

int picture_write_png(const struct picture *p, char axis, int at, const char *path,
                      struct picture_layout *layout)
{
    unsigned char *png;
    size_t len;
    int rc = picture_render_png(p, axis, at, &png, &len, layout);
    if (rc)
        return err_prefix(rc, "%s", path);
    /* a reader (a browser, a file watcher) sees the old picture or the new one, never
     * half of one */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        rc = err_set(-errno, "%s: %s", tmp, strerror(errno));
        free(png);
        return rc;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, png + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = err_set(w < 0 ? -errno : -EIO, "%s: write: %s", tmp, strerror(w < 0 ? errno : EIO));
            break;
        }
        off += (size_t)w;
    }
    free(png);
    if (!rc && fchmod(fd, 0644) < 0) /* mkstemp makes 0600; a picture is for others */
        rc = err_set(-errno, "%s: chmod: %s", tmp, strerror(errno));
    if (!rc && fsync(fd) < 0)
        rc = err_set(-errno, "%s: fsync: %s", tmp, strerror(errno));
    if (close(fd) < 0 && !rc)
        rc = err_set(-errno, "%s: close: %s", tmp, strerror(errno));
    if (!rc && rename(tmp, path) < 0)
        rc = err_set(-errno, "rename %s: %s", tmp, strerror(errno));
    if (rc)
        unlink(tmp);
    return rc;
}

int picture_slice_png(const float *vol, const struct picture_meta *m,
                      const struct picture_opts *o, char axis, unsigned char **png, size_t *len)
{
    struct picture *p;
    int rc = picture_prepare(&p, vol, m, o);
    if (!rc)
        rc = picture_render_png(p, axis, -1, png, len, NULL);
    picture_free(p);
    return rc;
}

int picture_slice_file(const char *path, const float *vol, const struct picture_meta *m,
                       const struct picture_opts *o, char axis)
{
    struct picture *p;
    int rc = picture_prepare(&p, vol, m, o);
    if (!rc)
        rc = picture_write_png(p, axis, -1, path, NULL);
    picture_free(p);
    return rc;
}

int picture_write_slices(const char *prefix, const float *vol, const struct picture_meta *m,
                         const struct picture_opts *o)
{
    struct picture *p;
    int rc = picture_prepare(&p, vol, m, o);
    static const char axes[3] = {'z', 'y', 'x'};
    for (int i = 0; !rc && i < 3; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s_%c.png", prefix, axes[i]);
        rc = picture_write_png(p, axes[i], -1, path, NULL);
    }
    picture_free(p);
    return rc;
}
