/* mseed_write — float samples of one channel into miniSEED 2 records (libmseed
 * msr_pack), to a file or to any sink (the generator streams records over ZeroMQ).
 *
 * Encodings: float32 (exact), int32, Steim-1 and Steim-2 (integers: the samples are
 * multiplied by `int_scale` and rounded, as a digitizer's counts would be). */
#ifndef SEISLIVE_MSEED_WRITE_H
#define SEISLIVE_MSEED_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mseed_encoding { MSEED_ENC_FLOAT32, MSEED_ENC_INT32, MSEED_ENC_STEIM1, MSEED_ENC_STEIM2 };

/* Parse "float32" | "int32" | "steim1" | "steim2"; returns -1 when unknown. */
int mseed_encoding_parse(const char *name);

struct mseed_channel {
    const char *net, *sta, *loc, *chan; /* SEED codes: 2, 5, 2, 3 characters at most */
    double rate;                        /* samples per second */
    int encoding;                       /* enum mseed_encoding */
    int reclen;                         /* record length in bytes: power of 2, 128..65536 */
    double int_scale;                   /* counts per unit for the integer encodings */
    int32_t sequence;                   /* sequence number of the next record (1 at start) */
};

/* Called with each packed record (LEN bytes). */
typedef void (*mseed_sink)(char *record, int len, void *arg);

/* A sink that collects the packed records in one growing buffer (to send a block's
 * records as one message): records land in P[0..LEN); set LEN = 0 to reuse it, free(P)
 * at the end.  FAILED is set when memory ran out (records from then on are lost). */
struct mseed_buf {
    char *p;
    size_t len, cap;
    int failed;
};
void mseed_buf_sink(char *record, int len, void *arg);

/* Pack N samples of X starting at T0_NS (ns since the Unix epoch; libmseed keeps
 * microseconds) into records of CH and hand each to SINK.  CH->sequence advances.
 * Returns the number of records, or -errno with err_msg(). */
int mseed_pack_f32(struct mseed_channel *ch, int64_t t0_ns, const float *x, size_t n,
                   mseed_sink sink, void *arg);

/* The same, appended to F.  Returns the number of records or -errno. */
int mseed_write_f32(FILE *f, const char *name, struct mseed_channel *ch, int64_t t0_ns,
                    const float *x, size_t n);

#ifdef __cplusplus
}
#endif

#endif
