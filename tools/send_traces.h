/* send_traces — send an f32 trace block with its channel names ("channels" in the
 * header, io/wire.h), so the receiver matches channels to stations by name rather than
 * by position.  Used by seislive-gen micro and seislive-replay. */
#ifndef SEISLIVE_SEND_TRACES_H
#define SEISLIVE_SEND_TRACES_H

#include <stdint.h>

#include "io/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* H->chan (nrec names) may be NULL: then the same as wire_send_traces_f32.
 * Blocks on the high-water mark.  Returns 0 or -errno with err_msg(). */
int send_traces_f32_named(void *sock, const struct wire_traces_hdr *h, const float *data,
                          int64_t sender_seq);

#ifdef __cplusplus
}
#endif

#endif
