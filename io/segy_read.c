/* segy_read — SEG-Y / SU headers and samples from memory (segyio field readers). */
#include "io/segy_read.h"

#include <errno.h>
#include <math.h>
#include <segyio/segy.h>
#include <string.h>

#include "stream/error.h"

int segy_layout_parse(const void *head, size_t len, const char *path, struct segy_layout *l)
{
    memset(l, 0, sizeof *l);
    if (len < SEGY_FILE_HEADER)
        return err_set(-EINVAL, "%s: %zu bytes, shorter than the 3600-byte SEG-Y file header",
                       path, len);
    const char *bin = (const char *)head + 3200;
    int32_t fmt = 0, ns = 0, dt_us = 0, next = 0;
    segy_get_bfield(bin, SEGY_BIN_FORMAT, &fmt);
    segy_get_bfield(bin, SEGY_BIN_SAMPLES, &ns);
    segy_get_bfield(bin, SEGY_BIN_INTERVAL, &dt_us);
    segy_get_bfield(bin, SEGY_BIN_EXT_HEADERS, &next);
    if (fmt != SEGY_IBM_FLOAT_4_BYTE && fmt != SEGY_IEEE_FLOAT_4_BYTE)
        return err_set(-EINVAL,
                       "%s: byte 3225: sample format code %d (this reader takes 1 = IBM float "
                       "or 5 = IEEE float)", path, fmt);
    if (ns <= 0 || ns > 1 << 20)
        return err_set(-EINVAL, "%s: byte 3221: %d samples per trace", path, ns);
    if (dt_us <= 0)
        return err_set(-EINVAL, "%s: byte 3217: sample interval %d us", path, dt_us);
    if (next < 0 || next > 100)
        return err_set(-EINVAL, "%s: byte 3505: %d extended textual headers", path, next);
    l->format = fmt;
    l->ns = ns;
    l->dt = dt_us * 1e-6;
    l->trace0 = SEGY_FILE_HEADER + (size_t)next * 3200;
    l->trace_bytes = SEGY_TRACE_HEADER + (size_t)ns * 4;
    return 0;
}

static int32_t le32(const unsigned char *p)
{
    return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                     (uint32_t)p[3] << 24);
}

static int16_t le16(const unsigned char *p)
{
    return (int16_t)((uint16_t)p[0] | (uint16_t)p[1] << 8);
}

/* A trace header field in the file's byte order; FIELD is the 1-based SEG-Y byte. */
static int32_t field(const struct segy_layout *l, const void *th, int f)
{
    const unsigned char *p = (const unsigned char *)th + f - 1;
    bool two = f == SEGY_TR_ELEV_SCALAR || f == SEGY_TR_SOURCE_GROUP_SCALAR ||
               f == SEGY_TR_SAMPLE_COUNT || f == SEGY_TR_SAMPLE_INTER;
    if (l->su) {
        int32_t v = two ? le16(p) : le32(p);
        if (f == SEGY_TR_SAMPLE_COUNT || f == SEGY_TR_SAMPLE_INTER)
            v = (uint16_t)v;
        return v;
    }
    int32_t v = 0;
    segy_get_field(th, f, &v);
    return v;
}

int su_layout_parse(const void *head, size_t len, const char *path, struct segy_layout *l)
{
    memset(l, 0, sizeof *l);
    l->su = true;
    if (len < SEGY_TRACE_HEADER)
        return err_set(-EINVAL, "%s: %zu bytes, shorter than a Seismic Unix trace header", path,
                       len);
    int ns = field(l, head, SEGY_TR_SAMPLE_COUNT), dt_us = field(l, head, SEGY_TR_SAMPLE_INTER);
    if (ns <= 0)
        return err_set(-EINVAL, "%s: byte 115: %d samples per trace", path, ns);
    if (dt_us <= 0)
        return err_set(-EINVAL, "%s: byte 117: sample interval %d us", path, dt_us);
    l->format = SEGY_IEEE_FLOAT_4_BYTE;
    l->ns = ns;
    l->dt = dt_us * 1e-6;
    l->trace0 = 0;
    l->trace_bytes = SEGY_TRACE_HEADER + (size_t)ns * 4;
    return 0;
}

static double scaled(int32_t v, int32_t s)
{
    return s > 0 ? (double)v * s : s < 0 ? (double)v / -s : (double)v;
}

void segy_trace_header(const struct segy_layout *l, const void *th, struct segy_trace_hdr *t)
{
    int32_t rec = field(l, th, SEGY_TR_FIELD_RECORD);
    t->shot = rec ? rec : field(l, th, SEGY_TR_ENERGY_SOURCE_POINT);
    int32_t sxy = field(l, th, SEGY_TR_SOURCE_GROUP_SCALAR);
    int32_t sel = field(l, th, SEGY_TR_ELEV_SCALAR);
    t->src[0] = scaled(field(l, th, SEGY_TR_SOURCE_X), sxy);
    t->src[1] = scaled(field(l, th, SEGY_TR_SOURCE_Y), sxy);
    t->src[2] = scaled(field(l, th, SEGY_TR_SOURCE_DEPTH), sel);
    t->rec[0] = (float)scaled(field(l, th, SEGY_TR_GROUP_X), sxy);
    t->rec[1] = (float)scaled(field(l, th, SEGY_TR_GROUP_Y), sxy);
    t->rec[2] = (float)-scaled(field(l, th, SEGY_TR_RECV_GROUP_ELEV), sel);
    t->ns = field(l, th, SEGY_TR_SAMPLE_COUNT);
    t->dt_us = field(l, th, SEGY_TR_SAMPLE_INTER);
}

int segy_trace_samples(const struct segy_layout *l, const void *trace, float *out,
                       const char *path, long trace_no, size_t byte_off)
{
    memcpy(out, (const char *)trace + SEGY_TRACE_HEADER, (size_t)l->ns * 4);
    if (!l->su)
        segy_to_native(l->format, l->ns, out);
    for (int i = 0; i < l->ns; i++)
        if (!isfinite(out[i]))
            return err_set(-EINVAL, "%s: trace %ld (byte %zu): sample %d is not finite", path,
                           trace_no, byte_off + SEGY_TRACE_HEADER + (size_t)i * 4, i);
    return 0;
}
