/* fuzz_wire — one ZeroMQ message through the receiver's checks and decoders, in the
 * order io/zmq_source.c applies them: wire_parse_header, wire_check_payload, the slot
 * size (wire_unit_bytes against a 16 MiB slot), then wire_decode_shot /
 * wire_decode_traces_f32 / wire_decode_traces_mseed into a slot-sized buffer.  Frame 0
 * is also read back as an out header (wire_parse_volume, wire_parse_seq: subscribers). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io/wire.h"
#include "stream/error.h"
#include "tests/fuzz/fuzz.h"

#define MAX_FRAMES 64                /* io/zmq_source.c keeps as many */
#define SLOT_BYTES ((size_t)16 << 20) /* a small [input] slot_mib: 16 */

int fuzz_wire(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    const void *frame[MAX_FRAMES];
    size_t len[MAX_FRAMES];
    int n = 0;
    const uint8_t *p = data, *end = data + size;
    for (;;) {
        const uint8_t *sep = size >= FUZZ_FRAME_SEP_LEN
                                 ? memmem(p, (size_t)(end - p), FUZZ_FRAME_SEP, FUZZ_FRAME_SEP_LEN)
                                 : NULL;
        const uint8_t *stop = sep ? sep : end;
        if (n == MAX_FRAMES) /* the receiver rejects more frames before parsing them */
            return err_set(-EINVAL, "message 1: more than %d frames", MAX_FRAMES);
        frame[n] = p;
        len[n] = (size_t)(stop - p);
        n++;
        if (!sep)
            break;
        p = sep + FUZZ_FRAME_SEP_LEN;
    }

    struct wire_volume_hdr vh;
    (void)wire_parse_volume(frame[0], len[0], &vh);
    (void)wire_parse_seq(frame[0], len[0]);

    struct wire_stats st = {0};
    struct wire_header h;
    memset(&h, 0, sizeof h);
    const uint64_t seq = 1;
    int rc = wire_parse_header(frame[0], len[0], seq, &h, &st);
    if (!rc)
        rc = wire_check_payload(&h, len + 1, n - 1, seq, &st);
    if (!rc && h.kind != WIRE_END && wire_unit_bytes(&h) > SLOT_BYTES)
        rc = err_set(-EFBIG, "message 1: %zu bytes, a slot holds %zu", wire_unit_bytes(&h),
                     SLOT_BYTES);
    if (!rc && h.kind != WIRE_END) {
        char *slot = malloc(wire_unit_bytes(&h) + 16);
        if (!slot) {
            wire_header_free(&h);
            return err_set(-ENOMEM, "message 1: out of memory");
        }
        if (h.kind == WIRE_SHOT) {
            struct shot s = {0};
            s.rec = (float *)slot;
            s.data = (float *)slot + (size_t)h.shot.ntr * 3;
            rc = wire_decode_shot(&h, frame + 1, len + 1, n - 1, seq, &s, &st);
        } else if (h.traces.format == WIRE_F32) {
            rc = wire_decode_traces_f32(&h, frame[1], len[1], seq, (float *)slot, &st);
        } else {
            size_t nd = (size_t)h.traces.nrec * (size_t)h.traces.ns;
            struct trace_channel *chan = (struct trace_channel *)(slot + nd * sizeof(float));
            rc = wire_decode_traces_mseed(&h, frame + 1, len + 1, n - 1, seq, (float *)slot,
                                          chan, &st);
        }
        free(slot);
    }
    wire_header_free(&h);
    /* One counter per rejected message, none for an accepted one (wire.h). */
    uint64_t counted = wire_stats_rejected_total(&st);
    if ((rc < 0 && counted != 1 && rc != -EFBIG) || (rc == 0 && counted != 0))
        abort();
    return rc;
}
