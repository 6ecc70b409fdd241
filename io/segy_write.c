#include "io/segy_write.h"

#include <errno.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "stream/error.h"
#include "stream/log.h"

/* segyio writes the file headers; the traces go through our own FILE in blocks.  segyio
 * writes a trace as two seeks and writes (header, samples), so a 10 000-receiver shot
 * took 20 000 of them on one thread, ~0.12-0.17 s on the H100 machine for 160 MB, more
 * than stepping the shot's grid (docs/operators.md); a block of traces is encoded in
 * parallel (segyio's segy_set_field and segy_from_native, per trace) and written once. */
struct segy_writer {
    FILE *f;
    char *path;
    int ns, interval, scalar;
    long trace0;
    int bsize;
    int count;
    char *block;     /* encoded traces (240-byte header + samples each) */
    size_t block_cap; /* traces it holds */
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
    segy_file *fp = segy_open(path, "w+b");
    if (!fp || !w->path) {
        int e = errno ? errno : ENOMEM;
        if (fp)
            segy_close(fp);
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
    int rc = segy_write_textheader(fp, 0, th);
    char bin[400];
    memset(bin, 0, sizeof bin);
    segy_set_bfield(bin, SEGY_BIN_INTERVAL, interval);
    segy_set_bfield(bin, SEGY_BIN_SAMPLES, ns);
    segy_set_bfield(bin, SEGY_BIN_FORMAT, SEGY_IEEE_FLOAT_4_BYTE);
    segy_set_bfield(bin, SEGY_BIN_SEGY_REVISION, 0x0100);
    segy_set_bfield(bin, SEGY_BIN_TRACE_FLAG, 1);
    segy_set_bfield(bin, SEGY_BIN_EXT_HEADERS, 0);
    if (rc == SEGY_OK)
        rc = segy_write_binheader(fp, bin);
    if (rc == SEGY_OK)
        rc = segy_flush(fp, false);
    if (segy_close(fp) != SEGY_OK && rc == SEGY_OK)
        rc = SEGY_FWRITE_ERROR;
    if (rc != SEGY_OK) {
        segy_writer_close(w);
        return err_set(-EIO, "%s: writing the file headers failed (segyio error %d)", path, rc);
    }
    w->trace0 = segy_trace0(bin);
    w->bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, ns);
    /* the traces: appended from trace0 on by segy_writer_traces */
    w->f = fopen(path, "r+b");
    if (!w->f || fseek(w->f, w->trace0, SEEK_SET) != 0) {
        int e = errno ? errno : EIO;
        segy_writer_close(w);
        return err_set(-e, "%s: cannot reopen for the traces: %s", path, strerror(e));
    }
    *out = w;
    return 0;
}

/* Trace number N's header from T and its samples, big-endian, into DST (240 + 4 ns bytes). */
static void encode_trace(const struct segy_writer *w, int n, const struct segy_trace_info *t, const float *samples,
                         char *dst)
{
    char *th = dst;
    memset(th, 0, SEGY_TRACE_HEADER_SIZE);
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
    float *buf = (float *)(dst + SEGY_TRACE_HEADER_SIZE);
    memcpy(buf, samples, (size_t)w->ns * sizeof(float));
    segy_from_native(SEGY_IEEE_FLOAT_4_BYTE, w->ns, buf);
}

int segy_writer_traces(struct segy_writer *w, const struct segy_trace_info *info, const float *samples,
                       size_t stride, int n)
{
    if (n <= 0)
        return 0;
    const size_t tb = SEGY_TRACE_HEADER_SIZE + (size_t)w->bsize;
    if ((size_t)n > w->block_cap) {
        char *b = realloc(w->block, (size_t)n * tb);
        if (!b)
            return err_set(-ENOMEM, "%s: out of memory for %d traces", w->path, n);
        w->block = b;
        w->block_cap = (size_t)n;
    }
#pragma omp parallel for schedule(static) if (n >= 16)
    for (int i = 0; i < n; i++)
        encode_trace(w, w->count + i + 1, info + i, samples + (size_t)i * stride, w->block + (size_t)i * tb);
    /* the traces follow each other from trace0 on: the file position is already there.
     * Flushed a block at a time, so that a failure is this block's and not found at close
     * with the traces counted; then the file is cut back to the traces written whole, and
     * the position with it (a later block lands where it belongs). */
    if (fwrite(w->block, tb, (size_t)n, w->f) != (size_t)n || fflush(w->f) != 0) {
        const int e = errno;
        const off_t keep = (off_t)w->trace0 + (off_t)w->count * (off_t)tb;
        clearerr(w->f);
        if (fseeko(w->f, keep, SEEK_SET) != 0 || ftruncate(fileno(w->f), keep) != 0)
            log_warn("%s: could not cut the file back to its %d whole traces: %s", w->path, w->count,
                     strerror(errno));
        return err_set(-EIO, "%s: writing traces %d..%d failed: %s", w->path, w->count + 1, w->count + n,
                       strerror(e));
    }
    w->count += n;
    return 0;
}

int segy_writer_trace(struct segy_writer *w, const struct segy_trace_info *t, const float *samples)
{
    return segy_writer_traces(w, t, samples, (size_t)w->ns, 1);
}

int segy_writer_count(const struct segy_writer *w) { return w->count; }

int segy_writer_close(struct segy_writer *w)
{
    if (!w)
        return 0;
    int rc = 0;
    if (w->f) {
        if (fflush(w->f) != 0)
            rc = err_set(-EIO, "%s: flush failed: %s", w->path, strerror(errno));
        if (fclose(w->f) != 0 && rc == 0)
            rc = err_set(-EIO, "%s: close failed: %s", w->path, strerror(errno));
    }
    free(w->path);
    free(w->block);
    free(w);
    return rc;
}
