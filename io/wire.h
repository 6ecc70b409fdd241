/* wire — the ZeroMQ wire format of seislive (see DESIGN.md, "Wire format").
 *
 * In (PULL/SUB), multipart, frame 0 a UTF-8 JSON header:
 *   shot:   {"type":"shot","v":1,"shot_id":..,"ns":..,"dt":..,"ntr":..,"src":[x,y,z],
 *            "format":"f32"|"segy"}
 *           f32  -> frame 1: receivers f32 ntr x 3, frame 2: samples f32 ntr x ns
 *                   (trace by trace, time fastest), little-endian
 *           segy -> frame 1: the SEG-Y trace bytes of the shot (240-byte trace headers +
 *                   samples, big-endian IEEE or IBM as "segy_format" says, default 5 =
 *                   IEEE); ns/ntr/dt must match the traces
 *   traces: {"type":"traces","v":1,"t0_ns":..,"dt":..,"nrec":..,"ns":..,
 *            "format":"f32"|"mseed"}
 *           f32   -> frame 1: samples f32 nrec x ns (receiver by receiver)
 *           mseed -> frames 1..: miniSEED records
 *           optional "channels": ["NET.STA.LOC.CHA", ...] (nrec names); without
 *           it the channels of an f32 block are unnamed (all fields empty) and the
 *           locate engine matches channel r to station r of the station file
 *   end:    {"type":"end","v":1} — no payload; the sender's stream is over (the run
 *           ends after the units before it).
 *   An optional "seq" (sender's sequence number) is kept for messages.
 *
 * Out (XPUB), frame 0 the topic ("image", "coherence", "event", "status"), frame 1 a
 * JSON header carrying "seq" (the publisher's sequence number, +1 per message on every
 * topic, so a subscriber sees gaps), frames 2.. float32 payload (little-endian).
 *
 * Every parse failure returns a negative code with err_msg() naming the message
 * ("message 17: ...") and increments one reason counter in struct wire_stats, so the
 * caller logs it and goes on: nothing is rejected silently. */
#ifndef SEISLIVE_WIRE_H
#define SEISLIVE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/shot.h"
#include "io/trace_block.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WIRE_VERSION 1
/* Sanity bounds: a header asking for more than this is malformed, not a big shot. */
#define WIRE_MAX_NS (1 << 24)
#define WIRE_MAX_TRACES (1 << 24)

enum wire_kind { WIRE_SHOT = 1, WIRE_TRACES = 2, WIRE_END = 3 };
enum wire_format { WIRE_F32 = 0, WIRE_SEGY = 1, WIRE_MSEED = 2 };

/* Why a message was rejected (one counter each). */
enum wire_reject {
    WIRE_REJ_JSON = 0,     /* frame 0 is not a JSON object */
    WIRE_REJ_VERSION,      /* "v" missing or not WIRE_VERSION */
    WIRE_REJ_TYPE,         /* "type" missing or unknown */
    WIRE_REJ_FIELD,        /* a required field missing or of the wrong type */
    WIRE_REJ_VALUE,        /* a field out of range (ns <= 0, dt <= 0, NaN, ...) */
    WIRE_REJ_FRAMES,       /* wrong number of frames */
    WIRE_REJ_SIZE,         /* a payload frame of the wrong size (truncated, extra) */
    WIRE_REJ_PAYLOAD,      /* payload contents invalid (SEG-Y / miniSEED decode, NaN) */
    WIRE_REJ_TOO_LARGE,    /* the unit does not fit a slot */
    WIRE_REJ_DUPLICATE,    /* a unit already processed (ledger) — counted, not an error */
    WIRE_REJ_N
};
const char *wire_reject_name(enum wire_reject r);

struct wire_stats {
    uint64_t received;              /* messages seen */
    uint64_t accepted;
    uint64_t rejected[WIRE_REJ_N];
};
uint64_t wire_stats_rejected_total(const struct wire_stats *s);

/* Header of a shot message. */
struct wire_shot_hdr {
    int64_t shot_id;
    int ns;
    double dt;          /* s */
    int ntr;
    double src[3];      /* m */
    int format;         /* WIRE_F32 | WIRE_SEGY */
    int segy_format;    /* SEG-Y sample format code of the trace bytes: 1 IBM, 5 IEEE */
};

/* Header of a trace-block message (continuous recording). */
struct wire_traces_hdr {
    int64_t t0_ns;      /* time of the first sample, ns since the Unix epoch */
    double dt;          /* s */
    int nrec;
    int ns;
    int format;         /* WIRE_F32 | WIRE_MSEED */
    struct trace_channel *chan; /* nrec names when the header has "channels" (owned by
                                   the wire_header: wire_header_free), else NULL */
};

struct wire_header {
    int kind;           /* enum wire_kind */
    int64_t sender_seq; /* "seq" of the sender, -1 when absent */
    union {
        struct wire_shot_hdr shot;
        struct wire_traces_hdr traces;
    };
};

/* Parse and validate frame 0.  SEQ is the receiver's message number (used in messages).
 * Returns 0, or a negative code with err_msg() set; on failure, if STATS is not NULL, one
 * reason counter is incremented (STATS->received is the caller's). */
int wire_parse_header(const void *json, size_t len, uint64_t seq, struct wire_header *h,
                      struct wire_stats *stats);
/* Free what a parsed header owns (channel names). */
void wire_header_free(struct wire_header *h);
/* Parse "NET.STA.LOC.CHA" (missing parts empty); 0 or -EINVAL. */
int wire_parse_channel(const char *s, struct trace_channel *c);

/* Check the payload frame sizes against the header (NFRAMES payload frames, without
 * frame 0).  f32 shot: exactly 2 frames of the exact sizes; segy shot: 1 frame of
 * ntr x (240 + 4 ns) bytes; f32 traces: 1 frame of nrec x ns x 4; mseed: >= 1 frame. */
int wire_check_payload(const struct wire_header *h, const size_t *frame_len, int nframes,
                       uint64_t seq, struct wire_stats *stats);

/* Bytes the decoded unit occupies in a slot (shot: shot_payload_bytes(); traces:
 * nrec x ns x 4 + nrec channel names; the same for mseed as announced). */
size_t wire_unit_bytes(const struct wire_header *h);

/* Decode a checked shot message into OUT, whose rec/data point into caller memory of
 * at least shot_payload_bytes(ntr, ns) (a slot).  f32: copies (little-endian);
 * segy: decodes the traces (IBM/IEEE, big-endian) and checks ns against each trace
 * header.  Samples that are not finite are a payload error. */
int wire_decode_shot(const struct wire_header *h, const void *const *frames,
                     const size_t *frame_len, int nframes, uint64_t seq, struct shot *out,
                     struct wire_stats *stats);

/* Copy N floats of a received payload (SRC: any alignment) into DST (a slot), on
 * wire_copy_threads() OpenMP threads; with CHECK, returns the index of the first value
 * that is not finite (the copy may stop there), else SIZE_MAX.  The decoders use it. */
size_t wire_copy_f32(float *dst, const void *src, size_t n, bool check);
/* Threads a copy of BYTES uses: 1 below 8 MiB, else half the cores (at most 8, at least
 * 2 MiB each) unless wire_set_copy_threads(N > 0) fixed N (0 = automatic again). */
int wire_copy_threads(size_t bytes);
void wire_set_copy_threads(int n);

/* Decode a checked f32 trace block into DST (nrec x ns floats). */
int wire_decode_traces_f32(const struct wire_header *h, const void *frame, size_t len,
                           uint64_t seq, float *dst, struct wire_stats *stats);

/* Decode miniSEED record frames of a checked "traces" message into DST (nrec x ns,
 * NaN where no record covers a sample: a gap) and CHAN (nrec names: the header's
 * "channels" order, else the order of first appearance).  Records are placed by their
 * start time relative to t0_ns; a record that does not parse, has another sample
 * rate, or a channel beyond nrec is a payload error (the whole message is rejected). */
int wire_decode_traces_mseed(const struct wire_header *h, const void *const *frames,
                             const size_t *frame_len, int nframes, uint64_t seq, float *dst,
                             struct trace_channel *chan, struct wire_stats *stats);

/* Whether this libzmq can apply CURVE keys (zmq_has("curve")).  wire_force_no_curve(true)
 * makes it answer false, so tests can show what a build without CURVE does. */
bool wire_has_curve(void);
void wire_force_no_curve(bool on);

/* ---- encoding (senders: generator, replay, tests) ---- */

/* JSON header of a shot; malloc'd, NUL-terminated. */
char *wire_encode_shot_header(const struct wire_shot_hdr *h, int64_t sender_seq);
char *wire_encode_traces_header(const struct wire_traces_hdr *h, int64_t sender_seq);

/* Send a whole message on a ZeroMQ socket (PUSH/PUB).  Blocks on the HWM unless FLAGS
 * has ZMQ_DONTWAIT.  Returns 0 or -errno. */
int wire_send_shot_f32(void *sock, const struct shot *s, int64_t sender_seq, int flags);
int wire_send_shot_segy(void *sock, const struct wire_shot_hdr *h, const void *traces,
                        size_t len, int64_t sender_seq, int flags);
int wire_send_traces_f32(void *sock, const struct wire_traces_hdr *h, const float *data,
                         int64_t sender_seq, int flags);
int wire_send_end(void *sock, int flags);
/* The end of the stream, delivered: send it on SOCK (a socket of CTX that connected to
 * the receiver), then keep the socket open until the receiver disconnects (seislive
 * closes its input once it has taken the end), at most TIMEOUT_MS or until STOP() (may be
 * NULL) says stop.  A sender calls it instead of wire_send_end before it closes, so that
 * neither the units it still has queued nor the end are lost with the connection.
 * Returns 0, -ETIMEDOUT (err_msg() says the units may be lost), -EINTR or -errno. */
#define WIRE_END_WAIT_MS (10 * 60 * 1000)
int wire_send_end_wait(void *ctx, void *sock, int timeout_ms, bool (*stop)(void));
int wire_send_traces_mseed(void *sock, const struct wire_traces_hdr *h, const void *records,
                           size_t len, int64_t sender_seq, int flags);

/* ---- out messages (publisher; subscribers parse them back) ---- */

#define WIRE_TOPIC_IMAGE "image"
#define WIRE_TOPIC_COHERENCE "coherence"
#define WIRE_TOPIC_EVENT "event"
#define WIRE_TOPIC_STATUS "status"

/* image and coherence volumes: payload frame 2 = n[0] x n[1] x n[2] f32 (x fastest);
 * with slices = true: three frames, the xy plane at at[2], xz at at[1], yz at at[0]. */
struct wire_volume_hdr {
    uint64_t seq;
    int64_t units;      /* "shots" for images: shots stacked; windows for coherence */
    int n[3];
    double d[3];
    double o[3];
    bool final;
    bool slices;
    int at[3];          /* slice indices (slices only) */
    int64_t t0_ns;      /* coherence: window start; 0 for images */
};

struct wire_event {
    uint64_t seq;
    int64_t origin_ns;  /* origin time, ns since the epoch */
    double x, y, z;     /* m */
    double strength;
    int64_t id;         /* the event's id: 0-based, the same as in events.csv and the log */
};

/* The out topics in the order of wire_status.topic_count / topic_last_seq. */
enum wire_topic { WIRE_T_IMAGE, WIRE_T_COHERENCE, WIRE_T_EVENT, WIRE_T_STATUS, WIRE_T_N };
extern const char *const wire_topic_names[WIRE_T_N];
/* The index of TOPIC (N bytes), or -1. */
int wire_topic_index(const char *topic, size_t n);

struct wire_status {
    uint64_t seq;
    const char *job;        /* "rtm" / "locate" */
    const char *health;     /* "ok", "degraded: ...", "stopping", "stopped" (the last one) */
    int64_t units;          /* units processed */
    int64_t skipped;        /* units skipped (already in the ledger) */
    uint64_t received, rejected; /* in: messages seen, messages rejected */
    /* out: "dropped" is their sum: the publisher's own queue was full (drop_queue),
     * a message had more frames than it carries (drop_refused), the XPUB socket did
     * not take it (drop_send).  A subscriber's own high-water-mark drops cannot be seen
     * by a PUB socket: the subscriber finds them from seq gaps and topic_last_seq. */
    uint64_t drop_queue, drop_refused, drop_send;
    uint64_t published;     /* messages published before this one (all topics) */
    uint64_t topic_count[WIRE_T_N];   /* messages published per topic before this one */
    int64_t topic_last_seq[WIRE_T_N]; /* seq of the last one of each topic, -1 none */
    double rate;            /* units/s over the last interval */
    double latency_ms;      /* last end-to-end latency */
    double wait_ms, decode_ms, h2d_ms, compute_ms, publish_ms; /* last unit's stages */
    double gpu_mem_free_mib;/* -1 on the CPU */
    double gpu_mem_total_mib;/* -1 on the CPU */
    int64_t current;        /* id of the unit in flight, -1 none */
    /* For the status page (docs/http.md): */
    double uptime_s;        /* since the start */
    const char *version;    /* "0.1.0 (git rev)"; NULL = not sent */
    uint64_t fingerprint;   /* the config's fingerprint (config_fingerprint); 0 = not sent */
    uint64_t rejected_by[WIRE_REJ_N]; /* "rejects": input messages rejected, by reason */
    int64_t units_total;    /* the survey's length when known, else -1 (no "eta_s") */
    double unit_ms_mean, unit_ms_p95; /* compute time per unit over the last units */
    const char *stations;   /* locate: per-station health, a JSON object (stream/station_health.h); NULL = none */
    const char *ranks;      /* decompose = "shots": per-rank progress, a JSON array (stream/shots_progress.h); NULL = none */
};

/* malloc'd JSON text of each out header. */
char *wire_encode_volume(const struct wire_volume_hdr *h);
char *wire_encode_event(const struct wire_event *e);
char *wire_encode_status(const struct wire_status *s);

/* Parse an image/coherence header back (subscribers, tests).  Returns 0 or -EINVAL. */
int wire_parse_volume(const void *json, size_t len, struct wire_volume_hdr *h);
/* Check the payload frames of a parsed volume header: one frame of n0 x n1 x n2 x 4
 * bytes, or with slices three frames (xy, xz, yz planes).  0 or -EINVAL (err_msg()). */
int wire_check_volume_payload(const struct wire_volume_hdr *h, const size_t *frame_len,
                              int nframes);
/* The "seq" of any out header, or -1. */
int64_t wire_parse_seq(const void *json, size_t len);

#ifdef __cplusplus
}
#endif

#endif
