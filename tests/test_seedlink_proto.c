/* The SeedLink client's protocol layer against a scripted server (a socket pair): every
 * malformed or hostile reply gives a bounded, clear error naming the server and the
 * last sequence number; the parsers of HELLO, selectors and INFO answers; and the block
 * assembler's counts (gaps, overlaps, out-of-order, late), its invalid -- never zero --
 * missing samples, and its resume text (no sample repeated, none skipped). */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io/mseed_write.h"
#include "io/seedlink.h"
#include "io/seedlink_blocks.h"
#include "io/seedlink_source.h"
#include "stream/error.h"

/* A client connected to a "server" that already sent BYTES (N of them) and then, when
 * CLOSE, hung up.  *SRV: the server's end (-1 when closed). */
static void scripted(struct seedlink_conn *c, const void *bytes, size_t n, bool close_after, int *srv,
                     double timeout_s)
{
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cr_assert_eq(write(sv[1], bytes, n), (ssize_t)n);
    if (close_after) {
        close(sv[1]);
        sv[1] = -1;
    }
    *srv = sv[1];
    seedlink_init(c, timeout_s, NULL, NULL);
    cr_assert_eq(seedlink_adopt(c, sv[0], "fake:18000"), 0);
}

static void done(struct seedlink_conn *c, int srv)
{
    seedlink_close(c);
    if (srv >= 0)
        close(srv);
}

/* One 512-byte float32 record of NET.STA..CHA with N samples from T0_NS. */
static size_t record(char *out, const char *sta, const char *cha, int64_t t0_ns, int n, float v0)
{
    float x[200];
    for (int i = 0; i < n; i++)
        x[i] = v0 + (float)i;
    struct mseed_channel ch = {.net = "XX", .sta = sta, .loc = "", .chan = cha, .rate = 100.0,
                               .encoding = MSEED_ENC_FLOAT32, .reclen = 512, .int_scale = 1, .sequence = 1};
    struct mseed_buf b = {0};
    cr_assert_eq(mseed_pack_f32(&ch, t0_ns, x, (size_t)n, mseed_buf_sink, &b), 1);
    cr_assert_eq(b.len, 512);
    memcpy(out, b.p, 512);
    free(b.p);
    return 512;
}

Test(seedlink_proto, hello_of_something_else_is_refused)
{
    struct seedlink_conn c;
    int srv;
    static const char reply[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    scripted(&c, reply, sizeof reply - 1, false, &srv, 2.0);
    cr_assert_eq(seedlink_hello(&c, 0), -EPROTO);
    cr_expect(strstr(err_msg(), "fake:18000") && strstr(err_msg(), "not a SeedLink server"), "%s", err_msg());
    done(&c, srv);
}

Test(seedlink_proto, endless_line_is_bounded)
{
    struct seedlink_conn c;
    int srv;
    char junk[4000];
    memset(junk, 'A', sizeof junk);
    scripted(&c, junk, sizeof junk, false, &srv, 2.0);
    cr_assert_eq(seedlink_hello(&c, 0), -EBADMSG);
    cr_expect(strstr(err_msg(), "longer than 512 bytes"), "%s", err_msg());
    done(&c, srv);
}

Test(seedlink_proto, protocol_4_asked_of_a_v3_server)
{
    struct seedlink_conn c;
    int srv;
    static const char reply[] = "SeedLink v3.1 (2020.075) :: SLPROTO:3.1 CAP EXTREPLY\r\nsome org\r\n";
    scripted(&c, reply, sizeof reply - 1, false, &srv, 2.0);
    cr_assert_eq(seedlink_hello(&c, 4), -EPROTONOSUPPORT);
    cr_expect(strstr(err_msg(), "protocol 4 asked"), "%s", err_msg());
    done(&c, srv);
    bool v3, v4;
    seedlink_parse_hello("SeedLink v4.0 (RingServer/4.5.3) :: SLPROTO:4.0 SLPROTO:3.1 CAP WS:13", &v3, &v4);
    cr_expect(v3 && v4);
    seedlink_parse_hello("SeedLink v3.1 (2017.052 RC) :: SLPROTO:3.1 CAP EXTREPLY NSWILDCARD", &v3, &v4);
    cr_expect(v3 && !v4);
}

Test(seedlink_proto, refused_command_gives_the_servers_words)
{
    struct seedlink_conn c;
    int srv;
    static const char reply[] = "ERROR ARGUMENTS Invalid characters in station ID\r\n";
    scripted(&c, reply, sizeof reply - 1, false, &srv, 2.0);
    cr_assert_eq(seedlink_command(&c, "STATION XX_S#1"), -EPROTO);
    cr_expect(strstr(err_msg(), "refused \"STATION XX_S#1\"") && strstr(err_msg(), "Invalid characters"),
              "%s", err_msg());
    done(&c, srv);
}

Test(seedlink_proto, huge_v4_packet_is_refused_before_reading_it)
{
    struct seedlink_conn c;
    int srv;
    unsigned char h[17] = {'S', 'E', '2', 'D', 0xff, 0xff, 0xff, 0xff, 7, 0, 0, 0, 0, 0, 0, 0, 5};
    scripted(&c, h, sizeof h, false, &srv, 2.0);
    struct seedlink_packet p;
    cr_assert_eq(seedlink_read(&c, &p), -EMSGSIZE);
    cr_expect(strstr(err_msg(), "fake:18000") && strstr(err_msg(), "4294967295 bytes") &&
                  strstr(err_msg(), "before any data"), "%s", err_msg());
    done(&c, srv);
}

Test(seedlink_proto, v4_station_id_and_bytes_are_checked)
{
    struct seedlink_conn c;
    int srv;
    unsigned char h[17 + 200] = {'S', 'E', '2', 'D', 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 200};
    scripted(&c, h, sizeof h, false, &srv, 2.0);
    struct seedlink_packet p;
    cr_assert_eq(seedlink_read(&c, &p), -EBADMSG);
    cr_expect(strstr(err_msg(), "station id of 200 bytes"), "%s", err_msg());
    done(&c, srv);
}

Test(seedlink_proto, v3_sequence_must_be_hex)
{
    struct seedlink_conn c;
    int srv;
    char pkt[8 + 512];
    memcpy(pkt, "SLZZ0001", 8);
    record(pkt + 8, "S1", "HHZ", 0, 100, 0);
    scripted(&c, pkt, sizeof pkt, false, &srv, 2.0);
    struct seedlink_packet p;
    cr_assert_eq(seedlink_read(&c, &p), -EBADMSG);
    cr_expect(strstr(err_msg(), "six hex digits"), "%s", err_msg());
    done(&c, srv);
}

Test(seedlink_proto, record_length_from_the_header_is_bounded)
{
    struct seedlink_conn c;
    int srv;
    char pkt[8 + 512];
    memcpy(pkt, "SL00002A", 8);
    record(pkt + 8, "S1", "HHZ", 0, 100, 0);
    /* libmseed writes blockette 1001 at byte 48, then blockette 1000 at 56: its record
     * length exponent is byte 62 */
    cr_assert_eq(pkt[8 + 56], 0x03);
    cr_assert_eq((unsigned char)pkt[8 + 57], 0xe8);
    pkt[8 + 62] = 20; /* 2^20 bytes */
    scripted(&c, pkt, sizeof pkt, false, &srv, 2.0);
    struct seedlink_packet p;
    int rc = seedlink_read(&c, &p);
    cr_assert_lt(rc, 0);
    cr_expect(strstr(err_msg(), "fake:18000") && (strstr(err_msg(), "1048576") || strstr(err_msg(), "not a miniSEED")),
              "%s", err_msg());
    done(&c, srv);
}

Test(seedlink_proto, packets_then_a_cut_name_the_last_sequence)
{
    struct seedlink_conn c;
    int srv;
    char buf[2 * (8 + 512)];
    memcpy(buf, "SL00002A", 8);
    record(buf + 8, "S1", "HHZ", 0, 100, 1);
    memcpy(buf + 520, "SL00002B", 8);
    record(buf + 528, "S1", "HHZ", 1000000000, 100, 2);
    scripted(&c, buf, 520 + 300, true, &srv, 2.0); /* the second packet cut short */
    struct seedlink_packet p;
    cr_assert_eq(seedlink_read(&c, &p), 0, "%s", err_msg());
    cr_expect_eq(p.kind, SL_PKT_DATA);
    cr_expect_eq(p.seq, 42);
    cr_expect_eq(p.len, 512);
    cr_assert_eq(seedlink_read(&c, &p), -ECONNRESET);
    cr_expect(strstr(err_msg(), "closed by the server (after sequence 42)"), "%s", err_msg());
    done(&c, srv);
}

Test(seedlink_proto, garbage_in_the_stream_is_named)
{
    struct seedlink_conn c;
    int srv;
    static const char junk[] = "XYZ\x01\x02 not seedlink";
    scripted(&c, junk, sizeof junk - 1, false, &srv, 2.0);
    struct seedlink_packet p;
    cr_assert_eq(seedlink_read(&c, &p), -EBADMSG);
    cr_expect(strstr(err_msg(), "is not a SeedLink packet") && strstr(err_msg(), "XYZ\\x01"), "%s", err_msg());
    done(&c, srv);
}

Test(seedlink_proto, silence_is_a_timeout_and_stop_is_honoured)
{
    struct seedlink_conn c;
    int srv;
    scripted(&c, "", 0, false, &srv, 0.3);
    struct seedlink_packet p;
    cr_expect_eq(seedlink_read_wait(&c, &p, 0.15), 1, "a bounded wait just says nothing came");
    cr_assert_eq(seedlink_read(&c, &p), -ETIMEDOUT);
    cr_expect(strstr(err_msg(), "nothing received for 0.3 s"), "%s", err_msg());
    done(&c, srv);
}

static bool always(void *arg)
{
    (void)arg;
    return true;
}

Test(seedlink_proto, stop_flag_ends_a_wait)
{
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    struct seedlink_conn c;
    seedlink_init(&c, 60.0, always, NULL);
    cr_assert_eq(seedlink_adopt(&c, sv[0], "fake:18000"), 0);
    struct seedlink_packet p;
    cr_assert_eq(seedlink_read(&c, &p), -ECANCELED);
    done(&c, sv[1]);
}

Test(seedlink_proto, info_streams_json_and_xml)
{
    static const char js[] =
        "{\"software\":\"x\",\"station\":[{\"id\":\"XX_S01\",\"stream\":[{\"id\":\"_H_H_Z\"},"
        "{\"id\":\"00_H_H_N\"},{\"id\":\"10_LOG\"}]},{\"id\":\"YY_A\",\"stream\":[{\"id\":\"_B_H_E\"}]}]}";
    struct seedlink_stream *s = NULL;
    int n = 0;
    cr_assert_eq(seedlink_parse_streams_json(js, sizeof js - 1, &s, &n), 0, "%s", err_msg());
    cr_assert_eq(n, 4);
    cr_expect_str_eq(s[0].net, "XX");
    cr_expect_str_eq(s[0].sta, "S01");
    cr_expect_str_eq(s[0].loc, "");
    cr_expect_str_eq(s[0].cha, "HHZ");
    cr_expect_str_eq(s[1].loc, "00");
    cr_expect_str_eq(s[2].cha, "LOG");
    cr_expect_str_eq(s[3].cha, "BHE");
    free(s);
    s = NULL;
    n = 0;
    cr_expect_eq(seedlink_parse_streams_json("{\"station\": [", 13, &s, &n), -EBADMSG);
    cr_expect(strstr(err_msg(), "INFO STREAMS JSON: byte"), "%s", err_msg());
    static const char xml[] =
        "<?xml version=\"1.0\"?><seedlink software=\"x\"><station name=\"S01\" network=\"XX\">"
        "<stream location=\"\" seedname=\"HHZ\" type=\"D\"/><stream location=\"00\" seedname=\"HHN\" "
        "type=\"D\"/></station></seedlink>";
    cr_assert_eq(seedlink_parse_streams_xml(xml, sizeof xml - 1, &s, &n), 0, "%s", err_msg());
    cr_assert_eq(n, 2);
    cr_expect_str_eq(s[1].loc, "00");
    cr_expect_str_eq(s[1].cha, "HHN");
    free(s);
    s = NULL;
    n = 0;
    cr_expect_eq(seedlink_parse_streams_xml("<html>", 6, &s, &n), -EBADMSG);
    cr_expect_eq(seedlink_parse_streams_xml("<seedlink><station name=\"x", 26, &s, &n), -EBADMSG);
    cr_expect(strstr(err_msg(), "unterminated tag"), "%s", err_msg());
    free(s);
}

Test(seedlink_proto, selectors)
{
    struct seedlink_selector s;
    cr_assert_eq(seedlink_selector_parse("XX_S*:HH? 00EHZ", &s), 0, "%s", err_msg());
    cr_expect_eq(s.nsel, 2);
    cr_expect(seedlink_selector_match(&s, "XX", "S01", "", "HHZ"));
    cr_expect(seedlink_selector_match(&s, "XX", "S01", "00", "EHZ"));
    cr_expect(!seedlink_selector_match(&s, "XX", "S01", "10", "EHZ"));
    cr_expect(!seedlink_selector_match(&s, "XX", "A01", "", "HHZ"));
    cr_expect(!seedlink_selector_match(&s, "YY", "S01", "", "HHZ"));
    cr_assert_eq(seedlink_selector_parse("XX_S01", &s), 0);
    cr_expect(seedlink_selector_match(&s, "XX", "S01", "", "LOG"));
    cr_expect_eq(seedlink_selector_parse("S01", &s), -EINVAL);
    cr_expect_eq(seedlink_selector_parse("XX_S01:HHHZ", &s), -EINVAL);
    cr_expect(strstr(err_msg(), "not CCC or LLCCC"), "%s", err_msg());
    cr_expect_eq(seedlink_selector_parse("XX_S 01", &s), -EINVAL);
    cr_expect_eq(seedlink_selector_parse("XX_S01:", &s), -EINVAL);
    cr_expect(seedlink_wildmatch("S*1", "S0001"));
    cr_expect(!seedlink_wildmatch("S?1", "S0001"));
    /* v3's 24-bit numbers across their wrap */
    cr_expect_eq(seedlink_seq_unwrap24(UINT64_MAX, 0x123), 0x123);
    cr_expect_eq(seedlink_seq_unwrap24(0xFFFFFF, 0xFFFFFF), 0xFFFFFF);
    cr_expect_eq(seedlink_seq_unwrap24(0x1000000, 0x000002), 0x1000002, "after the wrap: ahead");
    cr_expect_eq(seedlink_seq_unwrap24(0x1000003, 0xFFFFF0), 0xFFFFF0, "before the wrap: behind");
    cr_expect_eq(seedlink_seq_unwrap24(0x3000010, 0x00000F), 0x300000F);
    int64_t ns;
    cr_expect_eq(seedlink_parse_time("2026-01-01T00:00:01Z", &ns), 0);
    cr_expect_eq(ns, 1767225601000000000LL);
    cr_expect_eq(seedlink_parse_time("yesterday", &ns), -EINVAL);
}

/* ---- the assembler ---- */

static struct seedlink_record rec(const char *cha, uint64_t seq, int64_t k0, int n, const float *x)
{
    struct seedlink_record r;
    memset(&r, 0, sizeof r);
    strcpy(r.id.net, "XX");
    strcpy(r.id.sta, "S1");
    strcpy(r.id.cha, cha);
    r.station = "XX_S1";
    r.seq = seq;
    r.t0_ns = 1000000000LL * 100 + k0 * 10000000LL; /* 100 Hz */
    r.rate = 100.0;
    r.x = x;
    r.n = n;
    return r;
}

static int emit(struct seedlink_blocks *b, char *mem, size_t bytes, struct trace_block *blk, const char **res)
{
    return seedlink_blocks_emit(b, mem, bytes, false, blk, res);
}

Test(seedlink_proto, assembler_counts_and_never_zero_fills)
{
    static float x[100];
    for (int i = 0; i < 100; i++)
        x[i] = (float)(i + 1);
    struct seedlink_blocks *b;
    cr_assert_eq(seedlink_blocks_create(&b, 50, 0.5), 0);
    struct seedlink_record r = rec("HHZ", 1, 0, 20, x);
    cr_assert_eq(seedlink_blocks_add(b, &r, 0.0), 0);
    r = rec("HHZ", 2, 30, 30, x + 30); /* a gap of 10 samples */
    cr_assert_eq(seedlink_blocks_add(b, &r, 0.0), 0);
    r = rec("HHZ", 3, 20, 15, x + 20); /* out of order: fills the gap, 5 samples overlap */
    cr_assert_eq(seedlink_blocks_add(b, &r, 0.0), 0);
    r = rec("HHN", 4, 0, 30, x);       /* the second channel is late after sample 30 */
    cr_assert_eq(seedlink_blocks_add(b, &r, 0.0), 0);
    cr_assert(!seedlink_blocks_ready(b, false, 0.0), "HHN has not reached the block's end");
    cr_assert(seedlink_blocks_ready(b, false, 1.0), "0.5 s later the late channel is waited for no longer");
    size_t bytes = seedlink_blocks_bytes(b);
    char *mem = malloc(bytes);
    struct trace_block blk;
    const char *res;
    cr_assert_eq(emit(b, mem, bytes, &blk, &res), 0, "%s", err_msg());
    cr_assert_eq(blk.nrec, 2);
    cr_assert_eq(blk.ns, 50);
    cr_expect_eq(blk.t0_ns, 100000000000LL);
    int z = strcmp(blk.chan[0].cha, "HHZ") == 0 ? 0 : 1, n = 1 - z;
    for (int k = 0; k < 50; k++)
        cr_expect_eq(blk.data[z * 50 + k], (float)(k + 1), "HHZ sample %d", k);
    for (int k = 30; k < 50; k++) {
        cr_expect_eq(blk.mask[n * 50 + k], 0, "late HHN sample %d must be invalid", k);
        cr_expect(isnan(blk.data[n * 50 + k]), "late HHN sample %d must be NaN, not a zero", k);
    }
    struct seedlink_blocks_stats st;
    seedlink_blocks_stats(b, &st);
    cr_expect_eq(st.gaps, 1);
    cr_expect_eq(st.out_of_order, 1);
    cr_expect_eq(st.overlap_samples, 5);
    cr_expect_eq(st.late_samples, 20);
    cr_expect_eq(st.samples, 80);
    /* HHN's late record arrives after its block left: dropped and counted */
    r = rec("HHN", 5, 30, 30, x + 30);
    cr_expect_eq(seedlink_blocks_add(b, &r, 2.0), 1);
    seedlink_blocks_stats(b, &st);
    cr_expect_eq(st.late_dropped, 20);
    seedlink_blocks_destroy(b);
    free(mem);
}

Test(seedlink_proto, resume_text_neither_repeats_nor_skips)
{
    static float x[300];
    for (int i = 0; i < 300; i++)
        x[i] = (float)i;
    struct seedlink_blocks *b;
    cr_assert_eq(seedlink_blocks_create(&b, 50, 60.0), 0);
    /* records of 40 samples: record 1 (seq 11) straddles the block end at 50 */
    for (int j = 0; j < 2; j++) {
        struct seedlink_record r = rec("HHZ", 10 + (uint64_t)j, 40 * j, 40, x + 40 * j);
        cr_assert_eq(seedlink_blocks_add(b, &r, 0.0), 0);
    }
    size_t bytes = seedlink_blocks_bytes(b);
    char *mem = malloc(bytes);
    struct trace_block blk;
    const char *res;
    cr_assert(seedlink_blocks_ready(b, false, 0.0));
    cr_assert_eq(emit(b, mem, bytes, &blk, &res), 0);
    char *saved = strdup(res);
    cr_expect(strstr(saved, "station XX_S1 11\n"), "the straddling record is asked again:\n%s", saved);
    cr_expect(strstr(saved, "channel XX S1 - HHZ 50\n"), "%s", saved);
    seedlink_blocks_destroy(b); /* a crash: the buffered samples 50..79 are lost */

    cr_assert_eq(seedlink_blocks_create(&b, 50, 60.0), 0);
    cr_assert_eq(seedlink_blocks_resume(b, saved), 0, "%s", err_msg());
    cr_expect_eq(seedlink_blocks_next_seq(b, "XX_S1"), 11);
    cr_expect(seedlink_blocks_seen(b, "XX_S1", 10));
    cr_expect(!seedlink_blocks_seen(b, "XX_S1", 11));
    for (int j = 1; j < 5; j++) {
        struct seedlink_record r = rec("HHZ", 10 + (uint64_t)j, 40 * j, 40, x + 40 * j);
        cr_assert_eq(seedlink_blocks_add(b, &r, 0.0), 0);
    }
    int64_t next = 50;
    while (seedlink_blocks_ready(b, true, 0.0)) {
        cr_assert_eq(emit(b, mem, bytes, &blk, &res), 0);
        cr_expect_eq(blk.t0_ns, 100000000000LL + next * 10000000LL, "blocks continue where the state was");
        for (int k = 0; k < blk.ns; k++)
            cr_expect_eq(blk.data[k], (float)(next + k));
        next += blk.ns;
    }
    cr_expect_eq(next, 200);
    struct seedlink_blocks_stats st;
    seedlink_blocks_stats(b, &st);
    cr_expect_eq(st.samples, 200, "50 before the crash + 150 after");
    cr_expect_eq(st.resumed_dropped, 10, "the part of record 11 already delivered");
    cr_expect_eq(st.overlap_samples + st.late_dropped + st.gap_samples + st.late_samples, 0);
    /* damaged resume texts are refused by line */
    cr_expect_eq(seedlink_blocks_resume(b, "seedlink-resume 2\n"), -EINVAL);
    cr_expect_eq(seedlink_blocks_resume(b, "seedlink-resume 1\nstation XX_S1 12x\n"), -EINVAL);
    cr_expect(strstr(err_msg(), "line 2"), "%s", err_msg());
    seedlink_blocks_destroy(b);
    free(saved);
    free(mem);
}

/* ---- the [input] keys, checked with the file:line of the key ---- */

#include "conf/config.h"
#include "tests/support.h"

static char g_st[700]; /* a station file: [locate] stations must exist */

static void refused(const char *input, const char *want)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[job]\nkind = \"locate\"\n[locate]\nstations = \"%s\"\n[input]\nkind = \"seedlink\"\n%s", g_st, input);
    struct sl_config cfg;
    int rc = config_load_string(text, "sl.toml", &cfg);
    cr_expect_lt(rc, 0, "accepted: %s", input);
    cr_expect(strstr(err_msg(), want), "want \"%s\" in: %s", want, err_msg());
    if (rc == 0)
        config_free(&cfg);
}

Test(seedlink_config, keys_are_checked_with_their_place)
{
    char *dir = test_tmpdir();
    char *st = test_write_file(dir, "st.txt", "S01 0 0 0\n");
    snprintf(g_st, sizeof g_st, "%s", st);
    refused("streams = [\"XX_*\"]\n", "sl.toml:6:1: [input] kind: kind \"seedlink\" needs [input] seedlink");
    refused("seedlink = \"localhost\"\nstreams = [\"XX_*\"]\n",
            "sl.toml:7:1: [input] seedlink: \"localhost\" is not HOST:PORT");
    refused("seedlink = \"localhost:99999\"\nstreams = [\"XX_*\"]\n", "sl.toml:7:1: [input] seedlink");
    refused("seedlink = \"localhost:18000\"\n", "sl.toml:6:1: [input] kind: kind \"seedlink\" needs [input] streams");
    refused("seedlink = \"localhost:18000\"\nstreams = [\"XX_S01\", \"S02\"]\n",
            "sl.toml:8:1: [input] streams: element 2: stream \"S02\": not NET_STA");
    refused("seedlink = \"localhost:18000\"\nstreams = [\"XX_S01:HHHZ\"]\n", "not CCC or LLCCC");
    refused("seedlink = \"localhost:18000\"\nstreams = [\"XX_S01\"]\nseedlink_start = \"yesterday\"\n",
            "sl.toml:9:1: [input] seedlink_start: \"yesterday\": not a UTC time");
    refused("seedlink = \"localhost:18000\"\nstreams = [\"XX_S01\"]\nseedlink_protocol = \"5\"\n",
            "[input] seedlink_protocol");
    refused("seedlink = \"localhost:18000\"\nstreams = [\"XX_S01\"]\nseedlink_timeout = 0\n",
            "[input] seedlink_timeout");
    /* a good one, and the rtm job refuses the kind */
    struct sl_config cfg;
    char ok[2048];
    snprintf(ok, sizeof ok, "[job]\nkind = \"locate\"\n[locate]\nstations = \"%s\"\n[input]\n"
             "kind = \"seedlink\"\nseedlink = \"127.0.0.1:18000\"\n"
             "streams = [\"XX_S*:HH? 00EHZ\", \"YY_A01\"]\nseedlink_protocol = \"3\"\n"
             "seedlink_start = \"2026-01-01T00:00:00Z\"\n", g_st);
    cr_assert_eq(config_load_string(ok, "ok.toml", &cfg), 0, "%s", err_msg());
    cr_expect_eq(cfg.input.kind, INPUT_SEEDLINK);
    cr_expect_eq(cfg.input.n_streams, 2);
    cr_expect_str_eq(cfg.input.streams[0], "XX_S*:HH? 00EHZ", "selectors are not paths");
    cr_expect_eq(cfg.input.seedlink_protocol, 1);
    config_free(&cfg);
    cr_expect_lt(config_load_string("[job]\nkind = \"rtm\"\n[input]\nkind = \"seedlink\"\nseedlink = \"h:1\"\n"
                                    "streams = [\"XX_S01\"]\n", "rtm.toml", &cfg), 0);
    cr_expect(strstr(err_msg(), "feeds the locate job"), "%s", err_msg());
    free(st);
    test_rmtree(dir);
    free(dir);
}

Test(seedlink_proto, a_time_jump_moves_the_grid_without_a_huge_buffer)
{
    static float x[100];
    for (int i = 0; i < 100; i++)
        x[i] = 1.0f;
    struct seedlink_blocks *b;
    cr_assert_eq(seedlink_blocks_create(&b, 50, 1.0), 0);
    struct seedlink_record r = rec("HHZ", 1, 0, 100, x);
    cr_assert_eq(seedlink_blocks_add(b, &r, 0.0), 0);
    size_t bytes = seedlink_blocks_bytes(b);
    char *mem = malloc(bytes);
    struct trace_block blk;
    const char *res;
    /* a record a day later (8.64e6 samples at 100 Hz): what is buffered goes first */
    r = rec("HHZ", 2, 8640000, 100, x);
    int forced = 0;
    while (!seedlink_blocks_fits(b, r.t0_ns + 1000000000LL) &&
           seedlink_blocks_emit(b, mem, bytes, true, &blk, &res) == 0)
        forced++;
    cr_expect_eq(forced, 2, "the two buffered blocks");
    cr_assert_eq(seedlink_blocks_add(b, &r, 0.0), 0);
    cr_assert(seedlink_blocks_ready(b, true, 0.0));
    cr_assert_eq(seedlink_blocks_emit(b, mem, bytes, false, &blk, &res), 0);
    cr_expect_eq(blk.t0_ns, 100000000000LL + 8640000LL * 10000000LL, "the next block starts at the next data");
    cr_expect_eq(blk.ns, 50);
    struct seedlink_blocks_stats st;
    seedlink_blocks_stats(b, &st);
    cr_expect_eq(st.samples, 150);
    cr_expect_eq(st.gaps, 1);
    seedlink_blocks_destroy(b);
    free(mem);
}

Test(seedlink_proto, a_stale_record_before_the_first_block_does_not_size_the_buffers)
{
    static float x[100];
    for (int i = 0; i < 100; i++)
        x[i] = (float)(i + 1);
    struct seedlink_blocks *b;
    cr_assert_eq(seedlink_blocks_create(&b, 50, 1.0), 0);
    struct seedlink_record r = rec("HHZ", 1, 0, 100, x);
    cr_assert_eq(seedlink_blocks_add(b, &r, 0.0), 0);
    /* before the first block, a record of another channel 250 years older (7.9e11
     * samples at 100 Hz): moving the cursor back to it would ask 7.9e11 samples of
     * every channel's buffer */
    r = rec("HHN", 2, -789000000000LL, 100, x);
    int rc = seedlink_blocks_add(b, &r, 0.0);
    cr_assert_eq(rc, 1, "rejected (1), not an error (%d: %s)", rc, err_msg());
    struct seedlink_blocks_stats st;
    seedlink_blocks_stats(b, &st);
    cr_expect_eq(st.rejected, 1, "counted");
    /* the live data go on as if the stale record had not come */
    size_t bytes = seedlink_blocks_bytes(b);
    char *mem = malloc(bytes);
    struct trace_block blk;
    const char *res;
    cr_assert(seedlink_blocks_ready(b, true, 0.0));
    cr_assert_eq(emit(b, mem, bytes, &blk, &res), 0, "%s", err_msg());
    cr_expect_eq(blk.t0_ns, 100000000000LL, "the first block starts at the live record");
    cr_expect_eq(blk.ns, 50);
    int z = strcmp(blk.chan[0].cha, "HHZ") == 0 ? 0 : 1;
    for (int k = 0; k < 50; k++)
        cr_expect_eq(blk.data[z * 50 + k], (float)(k + 1), "HHZ sample %d", k);
    seedlink_blocks_destroy(b);
    free(mem);
}

/* ---- the source against a scripted v3 server (a thread on a loopback port) ---- */

struct fake_server {
    int lfd;
    const char *packets; /* sent after END */
    size_t n;
};

static void *fake_server_run(void *arg)
{
    struct fake_server *f = arg;
    int fd = accept(f->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char line[512];
    size_t k = 0;
    char ch;
    while (read(fd, &ch, 1) == 1) {
        if (ch != '\n') {
            if (ch != '\r' && k < sizeof line - 1)
                line[k++] = ch;
            continue;
        }
        line[k] = '\0';
        k = 0;
        const char *reply = "OK\r\n";
        if (strcmp(line, "HELLO") == 0)
            reply = "SeedLink v3.1 (fake) :: SLPROTO:3.1\r\nfake server\r\n";
        else if (strcmp(line, "INFO STREAMS") == 0)
            reply = "ERROR\r\n"; /* no stream list: the client asks for the selector */
        else if (strcmp(line, "END") == 0) {
            (void)!write(fd, f->packets, f->n);
            continue;
        } else if (strcmp(line, "BYE") == 0)
            break;
        (void)!write(fd, reply, strlen(reply));
    }
    close(fd);
    return NULL;
}

struct fake_rt {
    char *base;
    struct slot_hdr hdr[1];
    int blocks;
    int64_t t0[16], samples;
    uint64_t rejected;
};

static bool frt_stopping(void *rt) { (void)rt; return false; }
static int frt_reserve(void *rt) { memset(((struct fake_rt *)rt)->hdr, 0, sizeof(struct slot_hdr)); return 0; }
static void frt_unreserve(void *rt, int i) { (void)rt, (void)i; }
static void frt_count(void *rt, uint64_t received, uint64_t rejected)
{
    (void)received;
    ((struct fake_rt *)rt)->rejected += rejected;
}
static void frt_rejected(void *rt, const char *what) { (void)rt, (void)what; }
static void frt_commit(void *rt, int i)
{
    struct fake_rt *f = rt;
    const struct trace_block *b = &f->hdr[i].block;
    if (f->blocks < 16)
        f->t0[f->blocks] = b->t0_ns;
    f->blocks++;
    for (int k = 0; k < b->nrec * b->ns; k++)
        f->samples += b->mask[k] != 0;
}

/* Run the source against the scripted server sending PK (three "SL" packets of 520
 * bytes, the first one damaged by the caller, then two good records of 100 samples from
 * t = 100 s and 101 s), and check that the first is rejected and counted and the
 * good ones give the same blocks as alone. */
static void first_packet_rejected(char *pk)
{
    memcpy(pk + 520, "SL000002", 8);
    record(pk + 528, "S1", "HHZ", 100000000000LL, 100, 1.0f);
    memcpy(pk + 1040, "SL000003", 8);
    record(pk + 1048, "S1", "HHZ", 101000000000LL, 100, 101.0f);

    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    cr_assert_eq(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(lfd, 1), 0);
    cr_assert_eq(getsockname(lfd, (struct sockaddr *)&a, &al), 0);
    struct fake_server fs = {.lfd = lfd, .packets = pk, .n = 3 * 520};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, fake_server_run, &fs), 0);

    char server[64];
    snprintf(server, sizeof server, "127.0.0.1:%d", ntohs(a.sin_port));
    char *streams[1] = {"XX_S1"};
    struct seedlink_source_conf c = {.server = server, .streams = streams, .n_streams = 1, .protocol = 3,
                                     .timeout_s = 10, .backoff_max_s = 1, .latency_s = 0.1, .idle_s = 1.0,
                                     .start_ns = INT64_MIN, .block_samples = 50};
    struct seedlink_source *s;
    cr_assert_eq(seedlink_source_open(&s, &c), 0, "%s", err_msg());
    struct source src = seedlink_source_as_source(s);
    static struct fake_rt rt;
    memset(&rt, 0, sizeof rt);
    static const struct ingest_ops ops = {.stopping = frt_stopping, .reserve = frt_reserve, .commit = frt_commit,
                                          .unreserve = frt_unreserve, .count = frt_count,
                                          .rejected = frt_rejected};
    rt.base = malloc(1 << 20);
    struct ingest in = {.nslots = 1, .slot_bytes = 1 << 20, .base = rt.base, .hdr = rt.hdr, .ops = &ops, .rt = &rt};
    int rc = src.run(src.ctx, &in);
    src.close(src.ctx);
    pthread_join(th, NULL);
    close(lfd);
    cr_assert_eq(rc, 0, "%s", err_msg());
    cr_expect_eq(rt.rejected, 1, "the damaged record rejected and counted");
    cr_expect_eq(rt.samples, 200, "the two good records, every sample");
    cr_assert_eq(rt.blocks, 4);
    for (int i = 0; i < rt.blocks && i < 16; i++)
        cr_expect_eq(rt.t0[i], 100000000000LL + i * 500000000LL, "block %d t0 %lld", i, (long long)rt.t0[i]);
    free(rt.base);
}

/* The first record: 100 samples at t = 100 s; YEAR (0: as written) and the sample rate
 * factor and multiplier (0: as written) patched in its fixed header. */
static void damaged_first(char *pk, int year, int factor, int mult)
{
    memcpy(pk, "SL000001", 8);
    record(pk + 8, "S1", "HHZ", 100000000000LL, 100, 1.0f);
    unsigned char *h = (unsigned char *)pk + 8;
    bool be = h[20] == 0x07 && h[21] == 0xB2; /* year 1970, big endian */
    int at[3] = {20, 32, 34}, v[3] = {year, factor, mult};
    for (int k = 0; k < 3; k++) {
        if (!v[k])
            continue;
        unsigned u = (unsigned)v[k] & 0xFFFF;
        h[at[k]] = (unsigned char)(be ? u >> 8 : u & 0xFF);
        h[at[k] + 1] = (unsigned char)(be ? u & 0xFF : u >> 8);
    }
}

Test(seedlink_proto, a_record_time_beyond_int64_ns_is_rejected_not_wrapped, .timeout = 30)
{
    /* year 2400: its start in ns does not fit int64 (the years 1685-2255 do) */
    static char pk[3 * 520];
    damaged_first(pk, 2400, 0, 0);
    first_packet_rejected(pk);
}

Test(seedlink_proto, a_sample_rate_below_the_wire_formats_is_rejected, .timeout = 30)
{
    /* factor -32767, multiplier -32767: one sample every 32767^2 s (9.3e-10 Hz); 100
     * samples span 1.07e20 ns, beyond int64, and the grid would take this rate */
    static char pk[3 * 520];
    damaged_first(pk, 0, -32767, -32767);
    first_packet_rejected(pk);
}

Test(seedlink_proto, a_sample_rate_above_1_mhz_is_rejected, .timeout = 30)
{
    /* factor 32767, multiplier 32767: 1.07e9 Hz; as the first record's rate it would be
     * the grid, and every 100 Hz record after it would be rejected */
    static char pk[3 * 520];
    damaged_first(pk, 0, 32767, 32767);
    first_packet_rejected(pk);
}
