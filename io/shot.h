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

#ifdef __cplusplus
}
#endif

#endif
