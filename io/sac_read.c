/* sac_read — SAC binary files, both byte orders (see sac_read.h).  By hand: Debian has
 * no SAC library (ObsPy's reader is Python). */
#include "io/sac_read.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stream/error.h"

#define SAC_UNDEF (-12345)

static uint32_t word(const unsigned char *b, size_t off, int swap)
{
    uint32_t v;
    memcpy(&v, b + off, 4);
    return swap ? __builtin_bswap32(v) : v;
}

static int32_t iword(const unsigned char *b, int index, int swap)
{
    return (int32_t)word(b, (size_t)index * 4, swap);
}

static float fword(const unsigned char *b, int index, int swap)
{
    uint32_t v = word(b, (size_t)index * 4, swap);
    float f;
    memcpy(&f, &v, 4);
    return f;
}

/* An 8-byte SAC string at OFF into OUT (trimmed; "-12345" = undefined = ""). */
static void kstring(const unsigned char *b, size_t off, char *out, size_t len)
{
    char s[9];
    memcpy(s, b + off, 8);
    s[8] = 0;
    size_t n = strcspn(s, " ");
    s[n] = 0;
    /* NULs and non-printing bytes end the name too: they are never part of a SEED code */
    for (size_t i = 0; i < n; i++)
        if (s[i] < 33 || s[i] > 126) {
            s[i] = 0;
            break;
        }
    if (strcmp(s, "-12345") == 0)
        s[0] = 0;
    snprintf(out, len, "%s", s);
}

/* Byte order: the one in which NVHDR (int word 76) reads 6; -1 when neither does. */
static int byte_order(const unsigned char *b)
{
    if (iword(b, 76, 0) == 6)
        return 0;
    if (iword(b, 76, 1) == 6)
        return 1;
    return -1;
}

int sac_detect(const void *buf, size_t len)
{
    return len >= SAC_HEADER_BYTES && byte_order(buf) >= 0;
}

int sac_read_buffer(const char *name, const void *buf, size_t len, struct sac_trace *out)
{
    memset(out, 0, sizeof *out);
    const unsigned char *b = buf;
    if (len < SAC_HEADER_BYTES)
        return err_set(-EINVAL, "%s: byte %zu: file ends inside the %d-byte SAC header", name, len,
                       SAC_HEADER_BYTES);
    int swap = byte_order(b);
    if (swap < 0) {
        int32_t v = iword(b, 76, 0);
        if (v == 7 || iword(b, 76, 1) == 7)
            return err_set(-ENOTSUP, "%s: byte 304: NVHDR 7 (SAC with a double-precision footer) is not read; "
                           "write the file as version 6", name);
        return err_set(-EINVAL, "%s: byte 304: NVHDR is %d (0x%08x), 6 in neither byte order: not a SAC binary "
                       "file", name, (int)v, (unsigned)v);
    }
    out->swapped = swap;
    int32_t npts = iword(b, 79, swap);
    int64_t avail = (int64_t)(len - SAC_HEADER_BYTES) / 4;
    if (npts < 0 || npts == SAC_UNDEF)
        return err_set(-EINVAL, "%s: byte 316: NPTS %d is not a sample count", name, (int)npts);
    if ((int64_t)npts > avail)
        return err_set(-EINVAL, "%s: byte %zu: file ends after %lld of the %d samples NPTS (byte 316) announces "
                       "(truncated)", name, len, (long long)avail, (int)npts);
    if ((int64_t)npts < avail || (len - SAC_HEADER_BYTES) % 4)
        return err_set(-EINVAL, "%s: byte %lld: %lld bytes after the %d samples NPTS (byte 316) announces", name,
                       (long long)SAC_HEADER_BYTES + 4LL * npts, (long long)(len - SAC_HEADER_BYTES - 4ULL * npts),
                       (int)npts);
    int32_t iftype = iword(b, 85, swap), leven = iword(b, 105, swap);
    if (iftype != 1 && iftype != SAC_UNDEF)
        return err_set(-EINVAL, "%s: byte 340: IFTYPE %d is not a time series (ITIME = 1)", name, (int)iftype);
    if (leven != 1)
        return err_set(-EINVAL, "%s: byte 420: LEVEN %d: only evenly spaced files are read", name, (int)leven);
    double delta = fword(b, 0, swap);
    if (!(delta > 0) || !isfinite(delta) || delta > 1e6)
        return err_set(-EINVAL, "%s: byte 0: DELTA %g is not a sample interval", name, delta);
    double beg = fword(b, 5, swap);
    if (!isfinite(beg) || beg == SAC_UNDEF || fabs(beg) > 1e9)
        return err_set(-EINVAL, "%s: byte 20: B %g is not a begin time", name, beg);
    /* reference time: year, day of year, hour, minute, second, millisecond */
    static const char *const names[6] = {"NZYEAR", "NZJDAY", "NZHOUR", "NZMIN", "NZSEC", "NZMSEC"};
    static const int lo[6] = {1000, 1, 0, 0, 0, 0}, hi[6] = {9999, 366, 23, 59, 60, 999};
    int32_t ref[6];
    for (int k = 0; k < 6; k++) {
        ref[k] = iword(b, 70 + k, swap);
        if (ref[k] < lo[k] || ref[k] > hi[k])
            return err_set(-EINVAL, "%s: byte %d: %s %d is not in [%d, %d]%s", name, (70 + k) * 4, names[k],
                           (int)ref[k], lo[k], hi[k], ref[k] == SAC_UNDEF ? " (undefined)" : "");
    }
    int leap = (ref[0] % 4 == 0 && ref[0] % 100 != 0) || ref[0] % 400 == 0;
    if (ref[1] > 365 + leap)
        return err_set(-EINVAL, "%s: byte 284: NZJDAY %d is past the end of %d", name, (int)ref[1], (int)ref[0]);
    struct tm tm = {.tm_year = ref[0] - 1900, .tm_mon = 0, .tm_mday = 1, .tm_hour = ref[2], .tm_min = ref[3],
                    .tm_sec = ref[4]};
    int64_t day0 = (int64_t)timegm(&tm); /* 1 January of NZYEAR at the reference hour */
    int64_t ref_s = day0 + (int64_t)(ref[1] - 1) * 86400;
    /* The first sample in int64 ns, and the trace's end after it, as every consumer
     * computes them: the years 1685-2255 (io/mseed_read.h mseed_start_fits, the wire
     * format's bound; NZYEAR up to 9999 overflowed ref_s * 1e9, found by fuzz_sac), and a
     * trace of at most 1e8 s (the wire format's block bound; DELTA reaches 1e6 s). */
    double t0_s = (double)ref_s + ref[5] * 1e-3 + beg;
    if (!(fabs((double)ref_s) <= 9e9 && fabs(t0_s) <= 9e9))
        return err_set(-EINVAL, "%s: byte 280: the first sample (NZYEAR %d, NZJDAY %d, B %g s) is %.6g s from 1970: "
                       "outside the years 1685-2255", name, (int)ref[0], (int)ref[1], beg, t0_s);
    if ((double)npts * delta > 1e8)
        return err_set(-EINVAL, "%s: byte 316: NPTS %d samples of DELTA %g s span %.6g s, more than 1e8 s", name,
                       (int)npts, delta, (double)npts * delta);
    int64_t ref_ns = ref_s * 1000000000LL + (int64_t)ref[5] * 1000000LL;
    /* B is a float: kept to the nearest microsecond, its own resolution near a few hours */
    out->t0_ns = ref_ns + (int64_t)llround(beg * 1e6) * 1000;
    /* DELTA is a float: 1/250 s is stored as 0.0040000002.  Taken literally, the rate
     * would be 249.99999 and every window length that falls on half a sample (0.05 s =
     * 12.5 samples) would round the other way than for the same data in miniSEED.  The
     * interval meant is the one of the round rate (to 1 mHz) whose float is DELTA. */
    double r = round(1.0 / delta * 1000.0) / 1000.0;
    if (r > 0 && (float)(1.0 / r) == (float)delta)
        delta = 1.0 / r;
    out->delta = delta;
    out->npts = npts;
    kstring(b, 440, out->id.sta, sizeof out->id.sta);
    kstring(b, 464, out->id.loc, sizeof out->id.loc);
    kstring(b, 592, out->id.cha, sizeof out->id.cha);
    kstring(b, 600, out->id.net, sizeof out->id.net);
    if (!out->id.sta[0])
        return err_set(-EINVAL, "%s: byte 440: KSTNM is undefined (the station is needed to match the station "
                       "file)", name);
    out->x = malloc(npts > 0 ? (size_t)npts * sizeof(float) : 1);
    if (!out->x)
        return err_set(-ENOMEM, "%s: out of memory for %d samples", name, (int)npts);
    for (int32_t i = 0; i < npts; i++) {
        uint32_t v = word(b, SAC_HEADER_BYTES + (size_t)i * 4, swap);
        memcpy(&out->x[i], &v, 4);
    }
    return 0;
}

int sac_read_file(const char *path, struct sac_trace *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return err_set(-errno, "%s: cannot open: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n < 0 || n > (long)SAC_HEADER_BYTES + 4L * INT32_MAX) {
        fclose(f);
        return err_set(-EINVAL, "%s: size %ld is not that of a SAC file", path, n);
    }
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf) {
        fclose(f);
        return err_set(-ENOMEM, "%s: out of memory", path);
    }
    int rc = 0;
    if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)
        rc = err_set(-EIO, "%s: read error", path);
    fclose(f);
    if (!rc)
        rc = sac_read_buffer(path, buf, (size_t)n, out);
    free(buf);
    if (rc)
        sac_trace_free(out);
    return rc;
}

void sac_trace_free(struct sac_trace *t)
{
    free(t->x);
    t->x = NULL;
}
