/* The locate job's ledger of processed recording time (stream/time_ledger.c): a block is
 * skipped only when already-processed time covers it, so a block stamped a year ahead no
 * longer makes every later, correctly stamped block "already stacked". */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "io/wire.h"
#include "stream/error.h"
#include "stream/time_ledger.h"
#include "tests/support.h"
#include "tests/test_locate_synth.h"
#include "tests/test_stream_support.h"

#define YEAR_NS (31557600LL * 1000000000LL)

Test(time_ledger, contiguous_blocks_make_one_interval_and_are_covered)
{
    struct time_ledger t;
    time_ledger_init(&t);
    for (int k = 0; k < 10; k++)
        cr_assert_eq(time_ledger_add(&t, k * 100, (k + 1) * 100, 0), 0);
    cr_assert_eq(t.n, 1);
    cr_assert(time_ledger_covers(&t, 0, 1000));
    cr_assert(time_ledger_covers(&t, 300, 400));
    cr_assert(!time_ledger_covers(&t, 950, 1050), "a block reaching past the end is new data");
    cr_assert(!time_ledger_covers(&t, -50, 50));
    cr_assert_eq(time_ledger_last(&t), 1000);
    time_ledger_free(&t);
}

Test(time_ledger, a_jump_ahead_opens_a_second_interval_and_the_time_behind_it_stays_open)
{
    struct time_ledger t;
    time_ledger_init(&t);
    cr_assert_eq(time_ledger_add(&t, 0, 100, 1000), 0);
    cr_assert_eq(time_ledger_add(&t, YEAR_NS, YEAR_NS + 100, 1000), 0);
    cr_assert_eq(t.n, 2);
    /* the next correctly stamped block is NOT covered: it must be processed */
    cr_assert(!time_ledger_covers(&t, 100, 200));
    cr_assert_eq(time_ledger_add(&t, 100, 200, 1000), 0);
    cr_assert_eq(t.n, 2);
    cr_assert(time_ledger_covers(&t, 0, 200));
    cr_assert(time_ledger_covers(&t, YEAR_NS, YEAR_NS + 100));
    cr_assert(!time_ledger_covers(&t, 300, 400));
    cr_assert_eq(time_ledger_last(&t), YEAR_NS + 100);
    /* a block dated far back (1900) likewise */
    int64_t y1900 = -70LL * YEAR_NS;
    cr_assert(!time_ledger_covers(&t, y1900, y1900 + 100));
    cr_assert_eq(time_ledger_add(&t, y1900, y1900 + 100, 1000), 0);
    cr_assert_eq(t.n, 3);
    cr_assert_eq(t.iv[0], y1900, "kept sorted");
    time_ledger_free(&t);
}

Test(time_ledger, short_gaps_join_and_a_bridging_block_merges_neighbours)
{
    struct time_ledger t;
    time_ledger_init(&t);
    cr_assert_eq(time_ledger_add(&t, 0, 100, 50), 0);
    cr_assert_eq(time_ledger_add(&t, 140, 200, 50), 0); /* gap 40 <= 50: joined */
    cr_assert_eq(t.n, 1);
    cr_assert_eq(time_ledger_add(&t, 400, 500, 50), 0);
    cr_assert_eq(time_ledger_add(&t, 800, 900, 50), 0);
    cr_assert_eq(t.n, 3);
    cr_assert_eq(time_ledger_add(&t, 190, 820, 50), 0); /* spans both gaps */
    cr_assert_eq(t.n, 1);
    cr_assert_eq(t.iv[0], 0);
    cr_assert_eq(t.iv[1], 900);
    cr_assert_eq(time_ledger_add(&t, 10, 5, 0), -EINVAL);
    time_ledger_free(&t);
}

Test(time_ledger, bounded_by_joining_the_closest_neighbours)
{
    struct time_ledger t;
    time_ledger_init(&t);
    int joined = 0;
    for (int k = 0; k <= TIME_LEDGER_MAX; k++) {
        /* gaps of 1000 ns, except a gap of 10 ns after interval 7 */
        int64_t s = (int64_t)k * 1100 - (k > 7 ? 990 : 0);
        int rc = time_ledger_add(&t, s, s + 100, 0);
        cr_assert_geq(rc, 0);
        joined += rc;
    }
    cr_assert_eq(joined, 1);
    cr_assert_eq(t.n, TIME_LEDGER_MAX);
    cr_assert(time_ledger_covers(&t, 7 * 1100, 8 * 1100 - 990 + 100), "the 10 ns gap was the one joined");
    time_ledger_free(&t);
}

Test(time_ledger, load_keeps_pairs_and_reads_an_old_high_water_mark)
{
    struct time_ledger t;
    time_ledger_init(&t);
    int64_t pairs[4] = {0, 100, 500, 600};
    cr_assert_eq(time_ledger_load(&t, pairs, 4, 600), 0);
    cr_assert_eq(t.n, 2);
    cr_assert(!time_ledger_covers(&t, 200, 300));
    cr_assert_eq(time_ledger_load(&t, NULL, 0, 1000), 0); /* a state written before */
    cr_assert(time_ledger_covers(&t, -5000, 1000));
    cr_assert(!time_ledger_covers(&t, 900, 1100));
    cr_assert_eq(time_ledger_load(&t, NULL, 0, -1), 0);
    cr_assert_eq(t.n, 0);
    int64_t bad[4] = {0, 100, 50, 600};
    cr_assert_eq(time_ledger_load(&t, bad, 4, 600), -EINVAL);
    cr_assert_eq(time_ledger_load(&t, bad, 3, 600), -EINVAL);
    time_ledger_free(&t);
}

/* `seislive run` (locate over ZeroMQ): four blocks, one stamped a year ahead, then the
 * stream goes on with correct stamps.  Before, the ledger's high-water mark skipped
 * every block after the glitch as "already stacked (ledger)": 3 blocks of data lost. */
Test(time_ledger, run_processes_the_blocks_after_a_glitch_a_year_ahead, .timeout = 120)
{
    enum { NSTA = 9, NS = 2000, BLOCK = 250 };
    struct synth s = {0};
    s.nev = 0;
    synth_make(&s, NSTA, NS, 0.004, 2.0, 5);
    char *dir = test_tmpdir();
    char ep_in[512], log[600];
    pid_t pid = ts_spawn_locate_run(&s, dir, BLOCK, "state_dir = \"state\"\n", ep_in, sizeof ep_in, log, sizeof log);
    void *zc = zmq_ctx_new();
    void *push = ts_push(zc, ep_in);
    float *buf = malloc((size_t)NSTA * BLOCK * sizeof(float));
    int seq = 0;
    for (int off = 0; off < NS; off += BLOCK, seq++) {
        for (int r = 0; r < NSTA; r++)
            memcpy(buf + (size_t)r * BLOCK, s.data + (size_t)r * 3 * NS + off, BLOCK * sizeof(float));
        int64_t shift = off == 4 * BLOCK ? YEAR_NS : 0; /* block 4 only: a clock glitch */
        struct wire_traces_hdr h = {.t0_ns = s.t0_ns + (int64_t)llround(off * s.dt * 1e9) + shift,
                                    .dt = s.dt, .nrec = NSTA, .ns = BLOCK, .format = WIRE_F32,
                                    .chan = NULL};
        cr_assert_eq(wire_send_traces_f32(push, &h, buf, seq, 0), 0);
    }
    cr_assert_eq(wire_send_end_wait(zc, push, 60000, NULL), 0);
    int rc = ts_wait(pid, 90);
    if (rc == -1)
        kill(pid, SIGKILL);
    cr_assert_eq(rc, 0, "seislive run: status %d (see %s)", rc, log);
    cr_expect_eq(ts_count_in_file(log, "already stacked"), 0, "blocks skipped as stacked (see %s)", log);
    cr_expect_eq(ts_count_in_file(log, "8 blocks processed"), 1, "not every block processed (see %s)", log);
    free(buf);
    zmq_close(push);
    zmq_ctx_term(zc);
    synth_free(&s);
    if (rc == 0)
        test_rmtree(dir);
    free(dir);
}

/* A trace block whose t0_ns plus its length would overflow int64 ns is refused by the
 * wire parser, counted, before any consumer computes its end (a t0_ns near INT64_MAX
 * made the ledger refuse the block and the locate job stop). */
Test(time_ledger, wire_refuses_block_times_beyond_int64)
{
    const char *bad[] = {
        "{\"type\":\"traces\",\"v\":1,\"t0_ns\":9223372036854775000,\"dt\":0.004,\"nrec\":1,\"ns\":10,\"format\":\"f32\"}",
        "{\"type\":\"traces\",\"v\":1,\"t0_ns\":-9223372036854775000,\"dt\":0.004,\"nrec\":1,\"ns\":10,\"format\":\"f32\"}",
        "{\"type\":\"traces\",\"v\":1,\"t0_ns\":0,\"dt\":1e300,\"nrec\":1,\"ns\":10,\"format\":\"f32\"}",
    };
    for (int i = 0; i < 3; i++) {
        struct wire_header h;
        struct wire_stats st = {0};
        cr_assert_lt(wire_parse_header(bad[i], strlen(bad[i]), 7, &h, &st), 0, "header %d accepted", i);
        cr_assert_eq(st.rejected[WIRE_REJ_VALUE], 1, "header %d not counted as a value out of range", i);
        cr_assert(strstr(err_msg(), "message 7") != NULL, "%s", err_msg());
    }
    const char *ok = "{\"type\":\"traces\",\"v\":1,\"t0_ns\":1700000000000000000,\"dt\":0.004,\"nrec\":1,\"ns\":10,\"format\":\"f32\"}";
    struct wire_header h;
    cr_assert_eq(wire_parse_header(ok, strlen(ok), 8, &h, NULL), 0, "%s", err_msg());
    wire_header_free(&h);
}
