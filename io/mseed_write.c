/* mseed_write — see mseed_write.h. */
#include "io/mseed_write.h"

#include <errno.h>
#include <libmseed.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/mseed_read.h"
#include "stream/error.h"

int mseed_encoding_parse(const char *name)
{
    static const char *const names[] = {"float32", "int32", "steim1", "steim2"};
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

static int copy_code(char *dst, const char *src, size_t max, const char *what)
{
    size_t len = src ? strlen(src) : 0;
    if (len > max)
        return err_set(-EINVAL, "miniSEED %s code \"%s\" is longer than %zu characters", what, src,
                       max);
    memcpy(dst, src ? src : "", len);
    dst[len] = '\0';
    return 0;
}

int mseed_pack_f32(struct mseed_channel *ch, int64_t t0_ns, const float *x, size_t n,
                   mseed_sink sink, void *arg)
{
    static const int8_t enc[] = {DE_FLOAT32, DE_INT32, DE_STEIM1, DE_STEIM2};
    if (ch->encoding < 0 || ch->encoding > MSEED_ENC_STEIM2)
        return err_set(-EINVAL, "miniSEED: unknown encoding %d", ch->encoding);
    if (ch->reclen < 128 || ch->reclen > 65536 || (ch->reclen & (ch->reclen - 1)))
        return err_set(-EINVAL, "miniSEED: record length %d is not a power of 2 in 128..65536",
                       ch->reclen);
    if (!(ch->rate > 0))
        return err_set(-EINVAL, "miniSEED: sample rate %g is not positive", ch->rate);
    if (n == 0)
        return 0;
    MSRecord *msr = msr_init(NULL);
    if (!msr)
        return err_set(-ENOMEM, "miniSEED: out of memory");
    int rc;
    if ((rc = copy_code(msr->network, ch->net, 2, "network")) < 0 ||
        (rc = copy_code(msr->station, ch->sta, 5, "station")) < 0 ||
        (rc = copy_code(msr->location, ch->loc, 2, "location")) < 0 ||
        (rc = copy_code(msr->channel, ch->chan, 3, "channel")) < 0) {
        msr_free(&msr);
        return rc;
    }
    void *samples;
    if (ch->encoding == MSEED_ENC_FLOAT32) {
        float *s = malloc(n * sizeof *s);
        if (s)
            memcpy(s, x, n * sizeof *s);
        samples = s;
        msr->sampletype = 'f';
    } else {
        int32_t *s = malloc(n * sizeof *s);
        for (size_t i = 0; s && i < n; i++) {
            double v = nearbyint((double)x[i] * ch->int_scale);
            /* Steim differences must fit 32 bits too; clamp well inside */
            s[i] = (int32_t)(v > 1e9 ? 1e9 : v < -1e9 ? -1e9 : v);
        }
        samples = s;
        msr->sampletype = 'i';
    }
    if (!samples) {
        msr_free(&msr);
        return err_set(-ENOMEM, "miniSEED: out of memory");
    }
    msr->datasamples = samples; /* msr_free frees it */
    msr->numsamples = (int64_t)n;
    msr->samprate = ch->rate;
    msr->encoding = enc[ch->encoding];
    msr->reclen = ch->reclen;
    msr->byteorder = 1; /* big-endian, the SEED default */
    msr->dataquality = 'D';
    msr->sequence_number = ch->sequence > 0 ? ch->sequence : 1;
    /* hptime is in microseconds; round to the nearest */
    msr->starttime = (hptime_t)((t0_ns >= 0 ? t0_ns + 500 : t0_ns - 500) / 1000);
    /* The fixed header keeps 0.1 ms; blockette 1001 carries the microseconds. */
    struct blkt_1001_s b1001;
    memset(&b1001, 0, sizeof b1001);
    if (!msr_addblockette(msr, (char *)&b1001, sizeof b1001, 1001, 0)) {
        msr_free(&msr);
        return err_set(-ENOMEM, "miniSEED: out of memory");
    }
    int64_t packed = 0;
    mseed_log_init(); /* libmseed's own messages into the log */
    int nrec = msr_pack(msr, sink, arg, &packed, 1, 0);
    ch->sequence = msr->sequence_number;
    msr_free(&msr);
    if (nrec < 0 || packed != (int64_t)n)
        return err_set(-EIO, "miniSEED: msr_pack packed %lld of %zu samples of %s.%s.%s.%s",
                       (long long)packed, n, ch->net, ch->sta, ch->loc, ch->chan);
    return nrec;
}

struct file_sink {
    FILE *f;
    int failed;
};

static void write_record(char *record, int len, void *arg)
{
    struct file_sink *s = arg;
    if (fwrite(record, 1, (size_t)len, s->f) != (size_t)len)
        s->failed = errno ? errno : EIO;
}

int mseed_write_f32(FILE *f, const char *name, struct mseed_channel *ch, int64_t t0_ns,
                    const float *x, size_t n)
{
    struct file_sink s = {f, 0};
    int nrec = mseed_pack_f32(ch, t0_ns, x, n, write_record, &s);
    if (nrec < 0)
        return err_prefix(nrec, "%s", name);
    if (s.failed)
        return err_set(-s.failed, "%s: %s", name, strerror(s.failed));
    return nrec;
}

void mseed_buf_sink(char *record, int len, void *arg)
{
    struct mseed_buf *b = arg;
    if (b->len + (size_t)len > b->cap) {
        size_t cap = (b->len + (size_t)len) * 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, record, (size_t)len);
    b->len += (size_t)len;
}
