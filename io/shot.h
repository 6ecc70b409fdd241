/* shot — the unit of the rtm job: the traces of one source firing, with the source
 * and receiver coordinates.  Produced by every shot source (ZeroMQ wire messages,
 * SEG-Y files grouped by trace headers, the generator) and consumed by the migration. */
#ifndef SEISLIVE_SHOT_H
#define SEISLIVE_SHOT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct shot {
    int64_t id;        /* shot number: unique in a survey; the state ledger keys on it */
    int ns;            /* samples per trace */
    double dt;         /* sample interval, s */
    int ntr;           /* traces (receivers) */
    double src[3];     /* source x, y, z in m (z positive down) */
    float *rec;        /* ntr x 3: receiver x, y, z in m */
    float *data;       /* ntr x ns, trace by trace (time fastest) */
};

/* Bytes of payload a shot of this size needs (receivers + samples). */
static inline size_t shot_payload_bytes(int ntr, int ns)
{
    return (size_t)ntr * 3 * sizeof(float) + (size_t)ntr * (size_t)ns * sizeof(float);
}

/* A 64-bit digest of a shot's content: id, ns, dt, ntr, the source, every receiver
 * position and every sample (their bits).  The ledger keeps it per stacked shot so
 * that a shot id met again is told apart: the same content is a replay (skipped
 * quietly), a different one is another shot under a used number (an error).  Not a
 * cryptographic hash: it tells accidents apart (two 64-bit digests of different
 * shots agree with odds 2^-64), not an adversary. */
uint64_t shot_digest(const struct shot *s);

/* Where a stacked shot came from and what it held: one ledger entry's provenance. */
#define SHOT_ORIGIN_LEN 160
struct shot_source {
    uint64_t digest;                /* shot_digest(); 0 = unknown (an older state file) */
    char origin[SHOT_ORIGIN_LEN];   /* "a.segy: traces 0..47 (byte 3600)", "message 12" */
};

#ifdef __cplusplus
}
#endif

#endif
