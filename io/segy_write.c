#include "io/segy_write.h"

#include <errno.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

struct segy_writer {
    segy_file *fp;
    char *path;
    int ns, interval, scalar;
    long trace0;
    int bsize;
    int count;
    float *buf;
};

/* Coordinate V (m) in units of the SEG-Y scalar S (negative: divide, positive: multiply). */
static int32_t scaled(double v, int s)
{
    double q = s < 0 ? v * -s : s > 0 ? v / s : v;
    return (int32_t)lround(q);
}

int segy_depth_interval(double dz, int *interval, const char **unit, double *unit_m)
{
    static const struct {
        const char *name;
        double m;
    } units[] = {{"um", 1e-6}, {"mm", 1e-3}, {"cm", 1e-2}, {"dm", 1e-1}, {"m", 1.0},
                 {"dam", 10.0}, {"hm", 100.0}, {"km", 1000.0}};
    /* A whole number of mm stays in mm (what every reader of these files has seen so
     * far); otherwise the finest unit that fits, for the least rounding. */
    double mm = dz / 1e-3;
    int first = mm >= 1 && mm < 65535.5 && fabs(mm - (double)lround(mm)) <= 1e-6 * mm ? 1 : 0;
    for (int i = first; i < (int)(sizeof units / sizeof units[0]); i++) {
        double q = dz / units[i].m;
        if (q >= 1 && q < 65535.5) {
            *interval = (int)lround(q);
            *unit = units[i].name;
            *unit_m = units[i].m;
            return 0;
        }
    }
    return err_set(-EINVAL, "depth interval %g m: no unit from 1 um to 1 km holds it in SEG-Y's 1..65535", dz);
}

int segy_writer_open(const char *path, int ns, int interval, int scalar, const char *text,
                     struct segy_writer **out)
{
    *out = NULL;
    if (ns < 1 || ns > 65535)
        return err_set(-EINVAL, "%s: %d samples per trace: SEG-Y allows 1..65535", path, ns);
    if (interval < 1 || interval > 65535)
        return err_set(-EINVAL, "%s: sample interval %d: SEG-Y allows 1..65535 (microseconds)", path,
                       interval);
    struct segy_writer *w = calloc(1, sizeof *w);
    if (!w)
        return err_set(-ENOMEM, "%s: out of memory", path);
    w->path = strdup(path);
    w->ns = ns;
    w->interval = interval;
    w->scalar = scalar;
    w->buf = malloc((size_t)ns * sizeof(float));
    w->fp = segy_open(path, "w+b");
    if (!w->fp || !w->path || !w->buf) {
        int e = errno ? errno : ENOMEM;
        segy_writer_close(w);
        return err_set(-e, "%s: cannot create: %s", path, strerror(e));
    }
    /* Textual header: 40 card images of 80 columns, ASCII here, EBCDIC on disk. */
    char th[3201];
    memset(th, ' ', 3200);
    th[3200] = '\0';
    int line = 0;
    const char *p = text ? text : "";
    while (line < 40) {
        char card[81];
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        snprintf(card, sizeof card, "C%2d %-76.*s", line + 1, (int)(len > 76 ? 76 : len), p);
        memcpy(th + 80 * line, card, strlen(card));
        line++;
        if (!nl)
            break;
        p = nl + 1;
    }
    for (; line < 40; line++) {
        char card[81];
        snprintf(card, sizeof card, "C%2d", line + 1);
        memcpy(th + 80 * line, card, strlen(card));
    }
    int rc = segy_write_textheader(w->fp, 0, th);
    char bin[400];
    memset(bin, 0, sizeof bin);
    segy_set_bfield(bin, SEGY_BIN_INTERVAL, interval);
    segy_set_bfield(bin, SEGY_BIN_SAMPLES, ns);
    segy_set_bfield(bin, SEGY_BIN_FORMAT, SEGY_IEEE_FLOAT_4_BYTE);
    segy_set_bfield(bin, SEGY_BIN_SEGY_REVISION, 0x0100);
    segy_set_bfield(bin, SEGY_BIN_TRACE_FLAG, 1);
    segy_set_bfield(bin, SEGY_BIN_EXT_HEADERS, 0);
    if (rc == SEGY_OK)
        rc = segy_write_binheader(w->fp, bin);
    if (rc != SEGY_OK) {
        segy_writer_close(w);
        return err_set(-EIO, "%s: writing the file headers failed (segyio error %d)", path, rc);
    }
    w->trace0 = segy_trace0(bin);
    w->bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, ns);
    *out = w;
    return 0;
}

int segy_writer_trace(struct segy_writer *w, const struct segy_trace_info *t, const float *samples)
{
    char th[SEGY_TRACE_HEADER_SIZE];
    memset(th, 0, sizeof th);
    int n = w->count + 1;
    segy_set_field(th, SEGY_TR_SEQ_LINE, n);
    segy_set_field(th, SEGY_TR_SEQ_FILE, n);
    segy_set_field(th, SEGY_TR_FIELD_RECORD, t->shot);
    segy_set_field(th, SEGY_TR_NUMBER_ORIG_FIELD, t->channel);
    segy_set_field(th, SEGY_TR_ENERGY_SOURCE_POINT, t->shot);
    segy_set_field(th, SEGY_TR_TRACE_ID, 1); /* seismic data */
    double off = hypot(t->rec[0] - t->src[0], t->rec[1] - t->src[1]);
    segy_set_field(th, SEGY_TR_OFFSET, (int32_t)lround(off));
    segy_set_field(th, SEGY_TR_RECV_GROUP_ELEV, scaled(-t->rec[2], w->scalar));
    segy_set_field(th, SEGY_TR_SOURCE_DEPTH, scaled(t->src[2], w->scalar));
    segy_set_field(th, SEGY_TR_ELEV_SCALAR, w->scalar);
    segy_set_field(th, SEGY_TR_SOURCE_GROUP_SCALAR, w->scalar);
    segy_set_field(th, SEGY_TR_SOURCE_X, scaled(t->src[0], w->scalar));
    segy_set_field(th, SEGY_TR_SOURCE_Y, scaled(t->src[1], w->scalar));
    segy_set_field(th, SEGY_TR_GROUP_X, scaled(t->rec[0], w->scalar));
    segy_set_field(th, SEGY_TR_GROUP_Y, scaled(t->rec[1], w->scalar));
    segy_set_field(th, SEGY_TR_COORD_UNITS, 1); /* length (metres) */
    segy_set_field(th, SEGY_TR_SAMPLE_COUNT, w->ns);
    segy_set_field(th, SEGY_TR_SAMPLE_INTER, w->interval);
    if (t->has_cdp) {
        segy_set_field(th, SEGY_TR_ENSEMBLE, t->cdp);
        segy_set_field(th, SEGY_TR_CDP_X, scaled(t->cdp_xy[0], w->scalar));
        segy_set_field(th, SEGY_TR_CDP_Y, scaled(t->cdp_xy[1], w->scalar));
        segy_set_field(th, SEGY_TR_INLINE, t->inline_no);
        segy_set_field(th, SEGY_TR_CROSSLINE, t->crossline_no);
    }
    memcpy(w->buf, samples, (size_t)w->ns * sizeof(float));
    segy_from_native(SEGY_IEEE_FLOAT_4_BYTE, w->ns, w->buf);
    int rc = segy_write_traceheader(w->fp, w->count, th, w->trace0, w->bsize);
    if (rc == SEGY_OK)
        rc = segy_writetrace(w->fp, w->count, w->buf, w->trace0, w->bsize);
    if (rc != SEGY_OK)
        return err_set(-EIO, "%s: writing trace %d failed (segyio error %d)", w->path, n, rc);
    w->count++;
    return 0;
}

int segy_writer_count(const struct segy_writer *w) { return w->count; }

int segy_writer_close(struct segy_writer *w)
{
    if (!w)
        return 0;
    int rc = 0;
    if (w->fp) {
        if (segy_flush(w->fp, false) != SEGY_OK)
            rc = err_set(-EIO, "%s: flush failed", w->path);
        if (segy_close(w->fp) != SEGY_OK && rc == 0)
            rc = err_set(-EIO, "%s: close failed", w->path);
    }
    free(w->path);
    free(w->buf);
    free(w);
    return rc;
}
