/* Time jumps in the locate stream: a jump longer than the largest travel time plus a
 * block (a year ahead, a record dated 1900) restarts the stream instead of feeding the
 * gap sample by sample: it finishes promptly, the events before and after the jump are
 * found, the restart is counted.  Overlaps drop the duplicated samples (counted), never
 * use them twice.  `seislive run` honours SIGTERM while such a stream arrives. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "io/mseed_read.h"
#include "io/mseed_write.h"
#include "io/wire.h"
#include "kernels/locate_engine.h"
#include "stream/locate_setup.h"
#include "stream/error.h"
#include "tests/support.h"
#include "tests/test_locate_synth.h"
#include "tests/test_stream_support.h"

#define YEAR_NS (31557600LL * 1000000000LL) /* 365.25 days */

/* 64 stations at trace SNR 2, 250 samples/s, 16 s, events at 5 s and 10 s. */
static void scene(struct synth *s)
{
    static const double ev[2][4] = {{437.0, 612.0, 655.0, 5.0}, {320.0, 250.0, 530.0, 10.0}};
    s->nev = 2;
    memcpy(s->ev, ev, sizeof ev);
    synth_make(s, 64, 4000, 0.004, 2.0, 7);
}

static struct locate_engine *engine(const struct synth *s, struct synth_found *f)
{
    struct sl_config cfg;
    synth_config(&cfg);
    struct sl_device dev = {.kind = SL_DEVICE_CPU, .index = -1};
    struct locate_engine *e = NULL;
    cr_assert_eq(locate_engine_from_config(&e, &cfg, &dev, &s->st), 0, "%s", err_msg());
    config_free(&cfg);
    if (f)
        locate_engine_on_event(e, synth_on_event, f);
    return e;
}

/* Samples [OFF, OFF + N) of S as a block starting SHIFT_NS after their true time. */
static struct trace_block block_of(const struct synth *s, int off, int n, int64_t shift_ns, float *buf)
{
    int nch = s->nsta * 3;
    for (int c = 0; c < nch; c++)
        memcpy(buf + (size_t)c * n, s->data + (size_t)c * s->ns + off, n * sizeof(float));
    struct trace_block b = {.seq = off, .t0_ns = s->t0_ns + (int64_t)llround(off * s->dt * 1e9) + shift_ns,
                            .dt = s->dt, .nrec = nch, .ns = n, .chan = s->chan, .data = buf};
    return b;
}

/* Event A found again as B, SHIFT_NS later: same best cell, within a sample and 25 m. */
static void expect_same_event(const struct locate_event *a, const struct locate_event *b, int64_t shift_ns,
                              double dt, int i)
{
    cr_expect(a->ix == b->ix && a->iy == b->iy && a->iz == b->iz, "event %d: cell (%d %d %d), reference (%d %d %d)",
              i, b->ix, b->iy, b->iz, a->ix, a->iy, a->iz);
    double d = sqrt(pow(a->x - b->x, 2) + pow(a->y - b->y, 2) + pow(a->z - b->z, 2));
    cr_expect(d < 25.0, "event %d moved by %.1f m", i, d);
    cr_expect(llabs(b->origin_ns - shift_ns - a->origin_ns) <= (long long)llround(dt * 1e9),
              "event %d: origin %lld, reference %lld + %lld", i, (long long)b->origin_ns, (long long)a->origin_ns,
              (long long)shift_ns);
}

static struct synth_found reference(const struct synth *s)
{
    struct synth_found ref = {0};
    struct locate_engine *e = engine(s, &ref);
    int sizes[] = {1000};
    cr_assert_eq(synth_feed(e, s, sizes, 1, NULL, NULL), 0, "%s", err_msg());
    locate_engine_destroy(e);
    cr_assert_eq(ref.n, 2, "%d events in the reference", ref.n);
    return ref;
}

Test(locate_jumps, a_year_ahead_restarts_the_stream_with_events_on_both_sides, .timeout = 60)
{
    struct synth s = {0};
    scene(&s);
    struct synth_found ref = reference(&s), f = {0};
    struct locate_engine *e = engine(&s, &f);
    float *buf = malloc((size_t)s.nsta * 3 * 1000 * sizeof(float));
    /* 8 s (event 0), then the next 8 s (event 1) stamped a year later */
    for (int off = 0; off < s.ns; off += 1000) {
        struct trace_block b = block_of(&s, off, 1000, off >= 2000 ? YEAR_NS : 0, buf);
        cr_assert_eq(locate_feed(e, &b), 0, "%s", err_msg());
    }
    cr_assert_eq(locate_engine_flush(e), 0, "%s", err_msg());
    struct locate_stats st;
    locate_engine_stats(e, &st);
    locate_engine_destroy(e);
    cr_expect_eq(st.restarts, 1);
    cr_expect_eq(st.gap_samples, 0, "the year was fed as a gap (%lld samples)", (long long)st.gap_samples);
    cr_expect_eq(st.samples, s.ns);
    cr_expect_eq(st.blocks, 4);
    cr_assert_eq(f.n, 2, "%d events, one before and one after the jump expected", f.n);
    expect_same_event(&ref.ev[0], &f.ev[0], 0, s.dt, 0);
    expect_same_event(&ref.ev[1], &f.ev[1], YEAR_NS, s.dt, 1);
    free(buf);
    synth_free(&s);
}

Test(locate_jumps, overlaps_are_dropped_and_counted_backward_jumps_restart, .timeout = 60)
{
    struct synth s = {0};
    s.nev = 0;
    synth_make(&s, 9, 2000, 0.004, 2.0, 3);
    float *buf = malloc((size_t)27 * 300 * sizeof(float));
    struct locate_engine *e = engine(&s, NULL);
    struct locate_stats st;
    struct trace_block b = block_of(&s, 0, 250, 0, buf);
    cr_assert_eq(locate_feed(e, &b), 0, "%s", err_msg());
    b = block_of(&s, 250, 250, 0, buf);
    cr_assert_eq(locate_feed(e, &b), 0, "%s", err_msg());
    /* starts 100 samples before the end: those 100 are dropped, the other 150 fed */
    b = block_of(&s, 400, 250, 0, buf);
    cr_assert_eq(locate_feed(e, &b), 0, "%s", err_msg());
    locate_engine_stats(e, &st);
    cr_expect_eq(st.overlap_samples, 100);
    cr_expect_eq(st.samples, 650, "%lld samples: the overlap was used twice or dropped whole",
                 (long long)st.samples);
    /* contiguous with that block: no gap */
    b = block_of(&s, 650, 250, 0, buf);
    cr_assert_eq(locate_feed(e, &b), 0, "%s", err_msg());
    locate_engine_stats(e, &st);
    cr_expect_eq(st.gap_samples, 0);
    cr_expect_eq(st.samples, 900);
    /* wholly before the end: rejected, counted */
    b = block_of(&s, 100, 250, 0, buf);
    cr_assert_eq(locate_feed(e, &b), 0, "%s", err_msg());
    locate_engine_stats(e, &st);
    cr_expect_eq(st.rejected_blocks, 1);
    cr_expect_eq(st.samples, 900);
    /* a year back: the clock was reset; the stream restarts there and goes on */
    b = block_of(&s, 900, 250, -YEAR_NS, buf);
    cr_assert_eq(locate_feed(e, &b), 0, "%s", err_msg());
    b = block_of(&s, 1150, 250, -YEAR_NS, buf);
    cr_assert_eq(locate_feed(e, &b), 0, "%s", err_msg());
    locate_engine_stats(e, &st);
    cr_expect_eq(st.restarts, 1);
    cr_expect_eq(st.rejected_blocks, 1, "the blocks after the reset were rejected");
    cr_expect_eq(st.samples, 1400);
    cr_expect_eq(st.gap_samples, 0);
    cr_expect_eq(locate_engine_flush(e), 0, "%s", err_msg());
    locate_engine_destroy(e);
    free(buf);
    synth_free(&s);
}

static int feed_block(const struct trace_block *b, void *user)
{
    return locate_feed(user, b);
}

/* A record of one channel dated 1900, then the stream: read from miniSEED, cut into
 * blocks (the 124 years between are not cut into blocks), located. */
Test(locate_jumps, mseed_record_dated_1900_then_normal_records, .timeout = 60)
{
    struct synth s = {0};
    scene(&s);
    struct synth_found ref = reference(&s), f = {0};
    struct mseed_buf mb = {0};
    int nch = s.nsta * 3;
    const int64_t t1900 = -2208988800LL * 1000000000LL;
    for (int c = -1; c < nch; c++) {
        const struct trace_channel *id = &s.chan[c < 0 ? 0 : c];
        struct mseed_channel ch = {.net = id->net, .sta = id->sta, .loc = "", .chan = id->cha, .rate = 1.0 / s.dt,
                                   .encoding = MSEED_ENC_FLOAT32, .reclen = 4096, .sequence = 1};
        if (c < 0) /* 100 samples on 1900-01-01 */
            cr_assert_gt(mseed_pack_f32(&ch, t1900, s.data, 100, mseed_buf_sink, &mb), 0, "%s", err_msg());
        else
            cr_assert_gt(mseed_pack_f32(&ch, s.t0_ns, s.data + (size_t)c * s.ns, (size_t)s.ns, mseed_buf_sink, &mb),
                         0, "%s", err_msg());
    }
    cr_assert_eq(mb.failed, 0);
    struct mseed_set set = {0};
    struct mseed_stats ms = {0};
    cr_assert_eq(mseed_read_buffer("1900.mseed", mb.p, mb.len, &set, &ms), 0, "%s", err_msg());
    cr_assert_eq(ms.rejected, 0);
    cr_assert_eq(set.ntr, nch);
    struct locate_engine *e = engine(&s, &f);
    cr_assert_eq(mseed_set_blocks(&set, 1000, feed_block, e, NULL), 0, "%s", err_msg());
    cr_assert_eq(locate_engine_flush(e), 0, "%s", err_msg());
    struct locate_stats st;
    locate_engine_stats(e, &st);
    locate_engine_destroy(e);
    cr_expect_eq(st.restarts, 1);
    /* the 1900 block (1000 samples, 100 of them data), then the stream: nothing between */
    cr_expect_eq(st.samples, 1000 + s.ns, "%lld samples fed", (long long)st.samples);
    cr_assert_eq(f.n, 2, "%d events after the 1900 record", f.n);
    for (int i = 0; i < 2; i++)
        expect_same_event(&ref.ev[i], &f.ev[i], 0, s.dt, i);
    mseed_set_free(&set);
    free(mb.p);
    synth_free(&s);
}

/* `seislive run` (locate, ZeroMQ input) gets blocks, then one a year ahead and more;
 * SIGTERM then ends it cleanly within 10 s (the bound is only for a hung process). */
Test(locate_jumps, seislive_run_honours_sigterm_on_a_big_gap_stream, .timeout = 90)
{
    enum { NSTA = 9, NS = 2000, BLOCK = 250 };
    struct synth s = {0};
    s.nev = 0;
    synth_make(&s, NSTA, NS, 0.004, 2.0, 5);
    char *dir = test_tmpdir();
    char ep_in[512], log[600];
    pid_t pid = ts_spawn_locate_run(&s, dir, BLOCK, NULL, ep_in, sizeof ep_in, log, sizeof log);
    void *zc = zmq_ctx_new();
    void *push = ts_push(zc, ep_in);
    float *buf = malloc((size_t)NSTA * BLOCK * sizeof(float));
    for (int off = 0, seq = 0; off < NS; off += BLOCK, seq++) {
        for (int r = 0; r < NSTA; r++) /* the verticals, matched to the stations by position */
            memcpy(buf + (size_t)r * BLOCK, s.data + (size_t)r * 3 * NS + off, BLOCK * sizeof(float));
        int64_t shift = off >= NS / 2 ? YEAR_NS : 0;
        struct wire_traces_hdr h = {.t0_ns = s.t0_ns + (int64_t)llround(off * s.dt * 1e9) + shift, .dt = s.dt,
                                    .nrec = NSTA, .ns = BLOCK, .format = WIRE_F32, .chan = NULL};
        cr_assert_eq(wire_send_traces_f32(push, &h, buf, seq, 0), 0);
    }
    /* no end message: the run would wait for more; give it time to reach the jump */
    for (int i = 0; i < 100 && ts_count_in_file(log, "stream restarted") <= 0; i++) /* -1: no log yet */
        usleep(100000);
    cr_assert_eq(kill(pid, SIGTERM), 0);
    int rc = ts_wait(pid, 10);
    cr_expect_eq(rc, 0, "seislive run: status %d after SIGTERM (-1: still running after 10 s; see %s)", rc, log);
    cr_expect_eq(ts_count_in_file(log, "stream restarted"), 1, "no restart logged (see %s)", log);
    free(buf);
    int linger = 0;
    zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(push);
    zmq_ctx_term(zc);
    synth_free(&s);
    if (rc == 0)
        test_rmtree(dir);
    free(dir);
}

/* ---- the stop flag in the long loops (the job passes SIGTERM's flag) ---- */

static int g_polls, g_stop_at;

static int cancel_after(void *user)
{
    (void)user;
    return ++g_polls >= g_stop_at;
}

Test(locate_jumps, cancel_stops_a_long_block_and_a_gap_between_chunks, .timeout = 60)
{
    struct synth s = {0};
    s.nev = 0;
    synth_make(&s, 9, 4000, 0.004, 2.0, 9);
    struct sl_config cfg;
    synth_config(&cfg);
    cfg.locate.block_samples = 100; /* one block of 4000 samples is 40 chunks */
    struct sl_device dev = {.kind = SL_DEVICE_CPU, .index = -1};
    struct locate_engine *e = NULL;
    cr_assert_eq(locate_engine_from_config(&e, &cfg, &dev, &s.st), 0, "%s", err_msg());
    config_free(&cfg);
    locate_engine_set_cancel(e, cancel_after, NULL);
    float *buf = malloc((size_t)27 * 4000 * sizeof(float));
    g_polls = 0;
    g_stop_at = 5;
    struct trace_block b = block_of(&s, 0, 4000, 0, buf);
    cr_expect_eq(locate_feed(e, &b), -ECANCELED);
    struct locate_stats st;
    locate_engine_stats(e, &st);
    cr_expect_eq(st.samples, 400, "%lld samples fed: the stop was polled between 100-sample chunks",
                 (long long)st.samples);
    cr_expect_eq(st.blocks, 0);
    /* a short gap (fed as invalid samples, chunk by chunk) stops at the first poll */
    locate_engine_set_cancel(e, NULL, NULL);
    b = block_of(&s, 400, 100, 0, buf);
    cr_assert_eq(locate_feed(e, &b), 0, "%s", err_msg());
    locate_engine_set_cancel(e, cancel_after, NULL);
    g_polls = 0;
    g_stop_at = 1;
    b = block_of(&s, 800, 100, 0, buf); /* 300 samples after the end: a gap of 3 chunks */
    cr_expect_eq(locate_feed(e, &b), -ECANCELED);
    locate_engine_stats(e, &st);
    cr_expect_eq(st.gap_samples, 0);
    cr_expect_eq(st.samples, 500);
    locate_engine_destroy(e);
    free(buf);
    synth_free(&s);
}

static int stop_yes(void)
{
    return 1;
}

Test(locate_jumps, stop_ends_a_long_mseed_scan)
{
    size_t n = (size_t)4 << 20; /* 4 MiB of junk: scanned byte by byte for a record header */
    char *junk = malloc(n);
    for (size_t i = 0; i < n; i++)
        junk[i] = (char)(i * 37 + 11);
    struct mseed_set set = {0};
    struct mseed_stats st = {0};
    mseed_read_set_stop(stop_yes);
    cr_expect_eq(mseed_read_buffer("junk", junk, n, &set, &st), -ECANCELED);
    cr_expect_not_null(strstr(err_msg(), "junk: stopped at byte"), "%s", err_msg());
    mseed_read_set_stop(NULL);
    memset(&st, 0, sizeof st);
    cr_expect_eq(mseed_read_buffer("junk", junk, n, &set, &st), 0, "%s", err_msg());
    cr_expect_eq(st.rejected, 1);
    mseed_set_free(&set);
    free(junk);
}
