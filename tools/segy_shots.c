/* segy_shots — see segy_shots.h. */
#include "tools/segy_shots.h"

#include <errno.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/wire.h"
#include "stream/error.h"

struct segy_shots {
    char path[4096];
    segy_file *f;
    int format, ns, ntraces, bsize, next;
    long trace0;
    float dt_bin; /* s, from the binary header */
};

static double scaled(int32_t v, int32_t scalar)
{
    if (scalar > 0)
        return (double)v * scalar;
    if (scalar < 0)
        return (double)v / -scalar;
    return (double)v;
}

int segy_shots_open(const char *path, struct segy_shots **out)
{
    struct segy_shots *s = calloc(1, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    s->f = segy_open(path, "rb");
    if (!s->f) {
        int e = errno ? errno : EIO;
        free(s);
        return err_set(-e, "%s: %s", path, strerror(e));
    }
    char bin[SEGY_BINARY_HEADER_SIZE];
    int rc = segy_binheader(s->f, bin);
    if (rc != SEGY_OK) {
        segy_shots_close(s);
        return err_set(-EINVAL, "%s: byte 3200: cannot read the binary header", path);
    }
    s->format = segy_format(bin);
    s->ns = segy_samples(bin);
    s->trace0 = segy_trace0(bin);
    int32_t dt_us = 0;
    segy_get_bfield(bin, SEGY_BIN_INTERVAL, &dt_us);
    s->dt_bin = (float)dt_us * 1e-6f;
    if (s->ns <= 0 || (s->format != SEGY_IEEE_FLOAT_4_BYTE && s->format != SEGY_IBM_FLOAT_4_BYTE)) {
        rc = err_set(-EINVAL, "%s: byte 3220: %d samples, format %d (expected IBM 1 or IEEE 5)",
                     path, s->ns, s->format);
        segy_shots_close(s);
        return rc;
    }
    s->bsize = segy_trsize(s->format, s->ns);
    if ((rc = segy_traces(s->f, &s->ntraces, s->trace0, s->bsize)) != SEGY_OK) {
        rc = err_set(-EINVAL, "%s: the file size is not a whole number of %d-sample traces",
                     path, s->ns);
        segy_shots_close(s);
        return rc;
    }
    segy_set_format(s->f, s->format);
    *out = s;
    return 0;
}

int segy_shots_traces(const struct segy_shots *s) { return s->ntraces; }
int segy_shots_samples(const struct segy_shots *s) { return s->ns; }
int segy_shots_format(const struct segy_shots *s) { return s->format; }

static int header(struct segy_shots *s, int t, char *th)
{
    if (segy_traceheader(s->f, t, th, s->trace0, s->bsize) != SEGY_OK)
        return err_set(-EIO, "%s: trace %d (byte %ld): cannot read the trace header", s->path, t,
                       s->trace0 + (long)t * (240 + s->bsize));
    return 0;
}

int segy_shots_next(struct segy_shots *s, struct shot *out)
{
    memset(out, 0, sizeof *out);
    if (s->next >= s->ntraces)
        return 0;
    char th[SEGY_TRACE_HEADER_SIZE];
    int rc = header(s, s->next, th);
    if (rc < 0)
        return rc;
    int32_t id;
    segy_get_field(th, SEGY_TR_FIELD_RECORD, &id);
    int n = 1;
    while (s->next + n < s->ntraces) { /* traces of the same field record */
        char h2[SEGY_TRACE_HEADER_SIZE];
        if ((rc = header(s, s->next + n, h2)) < 0)
            return rc;
        int32_t id2;
        segy_get_field(h2, SEGY_TR_FIELD_RECORD, &id2);
        if (id2 != id)
            break;
        n++;
    }
    out->id = id;
    out->ns = s->ns;
    out->ntr = n;
    out->rec = malloc((size_t)n * 3 * sizeof(float));
    out->data = malloc((size_t)n * s->ns * sizeof(float));
    if (!out->rec || !out->data) {
        segy_shots_free_shot(out);
        return err_set(-ENOMEM, "%s: out of memory for a shot of %d traces", s->path, n);
    }
    for (int i = 0; i < n; i++) {
        int t = s->next + i;
        if ((rc = header(s, t, th)) < 0) {
            segy_shots_free_shot(out);
            return rc;
        }
        int32_t sxy, sel, sx, sy, sd, gx, gy, ge, dt_us;
        segy_get_field(th, SEGY_TR_SOURCE_GROUP_SCALAR, &sxy);
        segy_get_field(th, SEGY_TR_ELEV_SCALAR, &sel);
        segy_get_field(th, SEGY_TR_SOURCE_X, &sx);
        segy_get_field(th, SEGY_TR_SOURCE_Y, &sy);
        segy_get_field(th, SEGY_TR_SOURCE_DEPTH, &sd);
        segy_get_field(th, SEGY_TR_GROUP_X, &gx);
        segy_get_field(th, SEGY_TR_GROUP_Y, &gy);
        segy_get_field(th, SEGY_TR_RECV_GROUP_ELEV, &ge);
        segy_get_field(th, SEGY_TR_SAMPLE_INTER, &dt_us);
        if (i == 0) {
            out->src[0] = scaled(sx, sxy);
            out->src[1] = scaled(sy, sxy);
            out->src[2] = scaled(sd, sel);
            out->dt = dt_us > 0 ? dt_us * 1e-6 : s->dt_bin;
            if (!(out->dt > 0)) {
                segy_shots_free_shot(out);
                return err_set(-EINVAL, "%s: trace %d: no sample interval (bytes 117, 3217)",
                               s->path, t);
            }
        }
        out->rec[3 * i + 0] = (float)scaled(gx, sxy);
        out->rec[3 * i + 1] = (float)scaled(gy, sxy);
        out->rec[3 * i + 2] = (float)-scaled(ge, sel);
        float *tr = out->data + (size_t)i * s->ns;
        if (segy_readtrace(s->f, t, tr, s->trace0, s->bsize) != SEGY_OK) {
            segy_shots_free_shot(out);
            return err_set(-EIO, "%s: trace %d: cannot read the samples", s->path, t);
        }
        segy_to_native(s->format, s->ns, tr);
    }
    s->next += n;
    return 1;
}

int segy_shots_raw(struct segy_shots *s, int t0, int n, char *buf)
{
    size_t per = (size_t)240 + (size_t)s->bsize;
    for (int i = 0; i < n; i++) {
        /* segyio reads headers and samples as stored (big-endian), which is what the
         * wire's "segy" payload carries */
        if (segy_traceheader(s->f, t0 + i, buf + per * i, s->trace0, s->bsize) != SEGY_OK ||
            segy_readtrace(s->f, t0 + i, buf + per * i + 240, s->trace0, s->bsize) != SEGY_OK)
            return err_set(-EIO, "%s: trace %d: cannot read", s->path, t0 + i);
    }
    return 0;
}

void segy_shots_free_shot(struct shot *s)
{
    free(s->rec);
    free(s->data);
    s->rec = NULL;
    s->data = NULL;
}

void segy_shots_close(struct segy_shots *s)
{
    if (!s)
        return;
    if (s->f)
        segy_close(s->f);
    free(s);
}

int segy_shots_send(struct segy_shots *s, void *sock, const struct shot *sh, int t0,
                    int64_t seq, int as_segy)
{
    if (!as_segy)
        return wire_send_shot_f32(sock, sh, seq, 0);
    size_t len = (size_t)sh->ntr * (240 + 4 * (size_t)sh->ns);
    char *raw = malloc(len);
    if (!raw)
        return err_set(-ENOMEM, "shot %lld: %zu bytes: out of memory", (long long)sh->id, len);
    struct wire_shot_hdr h = {sh->id, sh->ns, sh->dt, sh->ntr,
                              {sh->src[0], sh->src[1], sh->src[2]}, WIRE_SEGY,
                              segy_shots_format(s)};
    int rc = segy_shots_raw(s, t0, sh->ntr, raw);
    if (rc == 0)
        rc = wire_send_shot_segy(sock, &h, raw, len, seq, 0);
    free(raw);
    return rc;
}
