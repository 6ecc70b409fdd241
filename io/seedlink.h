/* seedlink — a SeedLink client, written from the protocol (Debian has no libslink):
 * protocol 3.1 and 4.0, chosen from what the server's HELLO announces ("SLPROTO:4.0"
 * switches to v4 with the SLPROTO 4.0 command; otherwise v3).  docs/seedlink.md.
 *
 *   connect -> HELLO -> [SLPROTO 4.0] -> INFO STREAMS (the stream list)
 *   -> per station: STATION, SELECT, DATA [next sequence] (v3 TIME for a start time,
 *      v4 DATA ALL <time>) -> END -> packets
 *
 * Packets: v3 "SL" + 6 hex digits of sequence + a miniSEED record (its length from
 * the record's header), "SLINFO" + flag + 512-byte INFO record; v4 "SE" + format +
 * subformat + payload length (u32 LE) + sequence (u64 LE) + station id length (u8) +
 * station id + payload.  Every length from the wire is bounded before it is used
 * (SEEDLINK_MAX_LINE, SEEDLINK_MAX_PAYLOAD, SEEDLINK_MAX_RECORD); a violation is an
 * error naming the server and the last sequence number received, and the caller
 * reconnects.  Every wait polls STOP (SIGTERM) and the network timeout.
 *
 * This file is the protocol only; io/seedlink_blocks.h assembles records into trace
 * blocks and io/seedlink_source.h is the runtime source built from both. */
#ifndef SEISLIVE_SEEDLINK_H
#define SEISLIVE_SEEDLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SEEDLINK_MAX_LINE 512            /* a reply line, CR LF included */
#define SEEDLINK_MAX_PAYLOAD (1 << 20)   /* a v4 packet's payload (INFO JSON, records) */
#define SEEDLINK_MAX_RECORD 65536        /* a miniSEED record */
#define SEEDLINK_MAX_INFO (4 << 20)      /* a whole v3 INFO answer (several records) */
#define SEEDLINK_SEQ_NONE UINT64_MAX

/* One station selector of the config: "NET_STA" or "NET_STA:SEL1 SEL2" with SEL the
 * SeedLink v3 form "LLCCC" or "CCC" ('?' any one character; NET and STA also take '*'). */
struct seedlink_selector {
    char net[12], sta[12];
    char sel[8][8]; /* up to 8 channel selectors; none = every channel */
    int nsel;
};

/* Parse S into *OUT; 0 or -EINVAL with err_msg() saying what is wrong. */
int seedlink_selector_parse(const char *s, struct seedlink_selector *out);
/* Does NET.STA.LOC.CHA match? ('?' one character, '*' any run.) */
bool seedlink_selector_match(const struct seedlink_selector *s, const char *net, const char *sta,
                             const char *loc, const char *cha);
/* Shell-style match of NAME against PAT with '?' and '*'. */
bool seedlink_wildmatch(const char *pat, const char *name);

enum seedlink_pkt { SL_PKT_DATA = 1, SL_PKT_INFO = 2, SL_PKT_OTHER = 3 };

struct seedlink_packet {
    int kind;              /* enum seedlink_pkt */
    uint64_t seq;          /* SEEDLINK_SEQ_NONE for INFO */
    char station[64];      /* v4: the station id of the header ("NET_STA"); v3: "" */
    char format, subformat;/* v4 header; v3: '2', 'D' (data) or 'I' (info) */
    bool info_last;        /* v3 INFO: the last record of an answer */
    char *payload;         /* into the connection's buffer: valid until the next read */
    size_t len;
};

struct seedlink_conn {
    int fd;
    char server[256];      /* "host:port", for messages */
    int proto;             /* 3 or 4 once negotiated */
    bool server_v4;        /* the HELLO announced SLPROTO:4.0 */
    char ident[160];       /* HELLO's first line */
    double timeout_s;      /* no byte for this long: an error (a keepalive is sent at half) */
    bool (*stop)(void *);  /* polled every 100 ms; true: -ECANCELED */
    void *stop_arg;
    uint64_t last_seq;     /* last data sequence received, for messages */
    char *buf;             /* receive buffer: [lo, hi) unread */
    size_t lo, hi, cap;
    double last_rx;        /* monotonic s of the last byte received */
    double quiet_s;        /* time spent waiting for bytes since the last one came (not the
                              time the caller spent elsewhere, e.g. held by back-pressure) */
    bool keepalive_sent;
    bool streaming;        /* END sent: a quiet connection gets an INFO ID keepalive */
};

void seedlink_init(struct seedlink_conn *c, double timeout_s, bool (*stop)(void *), void *arg);
/* Connect to SERVER ("host:port"); 0 or < 0 with err_msg() naming it. */
int seedlink_connect(struct seedlink_conn *c, const char *server);
/* Adopt a connected socket FD (tests); SERVER names it in messages. */
int seedlink_adopt(struct seedlink_conn *c, int fd, const char *server);
void seedlink_close(struct seedlink_conn *c);

/* HELLO, then protocol WANT (0: the highest both speak, 3 or 4: that one or an error). */
int seedlink_hello(struct seedlink_conn *c, int want);
/* Send a command line (no CR LF) and read its reply: 0 on "OK", -EPROTO with the
 * server's own words on "ERROR ...", -EBADMSG on anything else. */
int seedlink_command(struct seedlink_conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Send a command that has no reply (END, INFO). */
int seedlink_send(struct seedlink_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Read the next packet.  0 and *P filled, -ECANCELED on stop, -ETIMEDOUT after the
 * network timeout, < 0 with err_msg() on a malformed packet or a lost connection. */
int seedlink_read(struct seedlink_conn *c, struct seedlink_packet *p);
/* Like seedlink_read but gives up after WAIT_S seconds without a packet: returns 1
 * then (the connection stays usable). */
int seedlink_read_wait(struct seedlink_conn *c, struct seedlink_packet *p, double wait_s);

/* One stream of the server's INFO STREAMS answer. */
struct seedlink_stream {
    char net[8], sta[16], loc[8], cha[8];
};
/* Ask INFO STREAMS (before END) and collect the streams (*OUT malloc'd, *N of them).
 * v3 answers are XML in text records, v4 JSON (jansson). */
int seedlink_info_streams(struct seedlink_conn *c, struct seedlink_stream **out, int *n);

/* Protocol 3 sequence numbers have 24 bits and wrap: SEQ as the number nearest to the
 * one before NEXT (the station's next expected; UINT64_MAX or 0: none), so that
 * ordering by number survives the wrap. */
uint64_t seedlink_seq_unwrap24(uint64_t next, uint64_t seq);

/* "2026-01-01T00:00:00[.f][Z]" (or "2026,01,01,00,00,00") -> ns since 1970; 0 or -EINVAL. */
int seedlink_parse_time(const char *s, int64_t *ns);

/* Parsers used by the above, exposed for tests.  The hello line: which protocols.  */
void seedlink_parse_hello(const char *line, bool *v3, bool *v4);
/* Parse the v4 info JSON / v3 info XML text of LEN bytes into streams (appended). */
int seedlink_parse_streams_json(const char *txt, size_t len, struct seedlink_stream **out, int *n);
int seedlink_parse_streams_xml(const char *txt, size_t len, struct seedlink_stream **out, int *n);

#ifdef __cplusplus
}
#endif

#endif
