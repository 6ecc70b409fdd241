/* segy_read — SEG-Y / SU headers and samples from memory (segyio field readers). */
#include "io/segy_read.h"

#include <errno.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdio.h>
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
    int32_t per = 0;
    segy_get_bfield(bin, SEGY_BIN_TRACES, &per);
    /* Sample count and interval are unsigned 16-bit fields (segyio hands them out
     * sign-extended): 65535 samples is 65535, not -1. */
    ns = (uint16_t)ns;
    dt_us = (uint16_t)dt_us;
    per = (uint16_t)per;
    if (fmt != SEGY_IBM_FLOAT_4_BYTE && fmt != SEGY_IEEE_FLOAT_4_BYTE) {
        static const char *const names[] = {"?", "IBM float", "4-byte integer",
                                            "2-byte integer", "fixed point with gain",
                                            "IEEE float", "8-byte IEEE float", "3-byte integer",
                                            "1-byte integer"};
        return err_set(-EINVAL,
                       "%s: byte 3225: sample format code %d (%s): this reader takes 1 = IBM "
                       "float or 5 = IEEE float shot records", path, fmt,
                       fmt >= 1 && fmt <= 8 ? names[fmt] : "unknown");
    }
    if (ns <= 0)
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
    l->per_ensemble = per;
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
    int32_t v = 0;
    if (l->su && l->le)
        v = two ? le16(p) : le32(p);
    else
        segy_get_field(th, f, &v); /* big-endian: SEG-Y, and SU written big-endian */
    /* Sample count and interval are unsigned (65535 samples is not -1). */
    if (f == SEGY_TR_SAMPLE_COUNT || f == SEGY_TR_SAMPLE_INTER)
        v = (uint16_t)v;
    return v;
}

/* How plausible the first trace header is as an SU trace in one byte order: -1 when
 * impossible (no samples or no interval), else a score (higher = more plausible). */
static int su_score(const unsigned char *h, size_t len, uint64_t size, bool le, int *ns_out,
                    int *dt_out, char *why, size_t wl)
{
    struct segy_layout t = {.su = true, .le = le};
    int ns = field(&t, h, SEGY_TR_SAMPLE_COUNT), dt = field(&t, h, SEGY_TR_SAMPLE_INTER);
    *ns_out = ns;
    *dt_out = dt;
    if (ns <= 0 || dt <= 0) {
        snprintf(why, wl, "%d samples at %d us", ns, dt);
        return -1;
    }
    size_t tb = SEGY_TRACE_HEADER + (size_t)ns * 4;
    int score = 0;
    bool whole = size % tb == 0;
    score += whole ? 4 : 0;
    bool second = false;
    if (len >= 2 * tb) { /* the second trace header says the same */
        struct segy_layout t2 = t;
        second = field(&t2, h + tb, SEGY_TR_SAMPLE_COUNT) == ns;
        score += second ? 2 : 0;
    }
    /* Samples in the wrong order are mostly denormals, huge or not finite. */
    size_t n = (len - SEGY_TRACE_HEADER) / 4;
    if (n > (size_t)ns)
        n = (size_t)ns;
    if (n > 256)
        n = 256;
    size_t ok = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *q = h + SEGY_TRACE_HEADER + 4 * i;
        uint32_t u = le ? (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
                              (uint32_t)q[3] << 24
                        : (uint32_t)q[3] | (uint32_t)q[2] << 8 | (uint32_t)q[1] << 16 |
                              (uint32_t)q[0] << 24;
        float v;
        memcpy(&v, &u, 4);
        float a = fabsf(v);
        ok += isfinite(v) && (v == 0 || (a > 1e-25f && a < 1e25f));
    }
    bool samples = n > 0 && ok * 10 >= n * 9;
    score += samples ? 2 : 0;
    snprintf(why, wl, "%d samples at %d us%s%s%s", ns, dt,
             whole ? ", a whole number of traces" : ", not a whole number of traces",
             len >= 2 * tb ? (second ? ", trace 2 agrees" : ", trace 2 disagrees") : "",
             n ? (samples ? ", plausible samples" : ", implausible samples") : "");
    return score;
}

int su_layout_detect(const void *head, size_t len, uint64_t file_size, int order,
                     const char *path, struct segy_layout *l)
{
    memset(l, 0, sizeof *l);
    l->su = true;
    if (len < SEGY_TRACE_HEADER)
        return err_set(-EINVAL, "%s: %zu bytes, shorter than a Seismic Unix trace header", path,
                       len);
    char wb[120], wl[120];
    int nsb, dtb, nsl, dtl;
    int sb = su_score(head, len, file_size, false, &nsb, &dtb, wb, sizeof wb);
    int sl = su_score(head, len, file_size, true, &nsl, &dtl, wl, sizeof wl);
    bool le;
    if (order == SU_ORDER_BIG || order == SU_ORDER_LITTLE) {
        le = order == SU_ORDER_LITTLE;
        snprintf(l->note, sizeof l->note, "%s-endian ([input] su_byte_order): %s",
                 le ? "little" : "big", le ? wl : wb);
    } else {
        if (sb < 0 && sl < 0)
            return err_set(-EINVAL,
                           "%s: byte 115: not a Seismic Unix trace header in either byte order "
                           "(big-endian: %s; little-endian: %s)", path, wb, wl);
        le = sl > sb; /* a tie: big-endian, SU's own (XDR) order */
        snprintf(l->note, sizeof l->note, "%s-endian, detected (%s; %s-endian would be %s)",
                 le ? "little" : "big", le ? wl : wb, le ? "big" : "little", le ? wb : wl);
    }
    l->le = le;
    int ns = le ? nsl : nsb, dt_us = le ? dtl : dtb;
    if (ns <= 0)
        return err_set(-EINVAL, "%s: byte 115: %d samples per trace (%s-endian)", path, ns,
                       le ? "little" : "big");
    if (dt_us <= 0)
        return err_set(-EINVAL, "%s: byte 117: sample interval %d us (%s-endian)", path, dt_us,
                       le ? "little" : "big");
    l->format = SEGY_IEEE_FLOAT_4_BYTE;
    l->ns = ns;
    l->dt = dt_us * 1e-6;
    l->trace0 = 0;
    l->trace_bytes = SEGY_TRACE_HEADER + (size_t)ns * 4;
    return 0;
}

int su_layout_parse(const void *head, size_t len, const char *path, struct segy_layout *l)
{
    return su_layout_detect(head, len, len, SU_ORDER_AUTO, path, l);
}

bool segy_scalar_valid(int32_t s)
{
    int32_t a = s < 0 ? -s : s;
    return a == 0 || a == 1 || a == 10 || a == 100 || a == 1000 || a == 10000;
}

/* A scalar SEG-Y does not allow (the land shot 3360 file carries 32 with coordinates in
 * plain metres) is a writer's private convention or damage: taken as 1, which keeps
 * the numbers as stored; the file source warns of it. */
static double scaled(int32_t v, int32_t s)
{
    if (!segy_scalar_valid(s))
        s = 1;
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
    t->scalar_xy = sxy;
    t->scalar_z = sel;
}

int segy_trace_samples(const struct segy_layout *l, const void *trace, float *out,
                       const char *path, long trace_no, size_t byte_off)
{
    memcpy(out, (const char *)trace + SEGY_TRACE_HEADER, (size_t)l->ns * 4);
    if (!(l->su && l->le)) /* big-endian IBM or IEEE (SEG-Y, big-endian SU) */
        segy_to_native(l->format, l->ns, out);
    for (int i = 0; i < l->ns; i++)
        if (!isfinite(out[i]))
            return err_set(-EINVAL, "%s: trace %ld (byte %zu): sample %d is not finite", path,
                           trace_no, byte_off + SEGY_TRACE_HEADER + (size_t)i * 4, i);
    return 0;
}
