/* Trace blocks without channel names (f32 "traces" messages with no "channels") are
 * matched to the station file by position, as docs/wire-format.md says: channel r is
 * station r.  The oracle is the same stream with the channels named after their
 * stations (matched by name): the events must be identical.  Through `seislive run`
 * over ZeroMQ, unnamed blocks locate the same events as the named stream fed to the
 * engine directly. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "io/wire.h"
#include "kernels/locate_engine.h"
#include "stream/locate_setup.h"
#include "stream/error.h"
#include "tests/support.h"
#include "tests/test_locate_synth.h"
#include "tests/test_stream_support.h"

#define NSTA 36
#define NS 4000
#define BLOCK 1000

/* Two events under 36 stations, vertical channels only (one channel per station: the
 * case position matching is for), P phase. */
static void scene(struct synth *s, float **z)
{
    static const double ev[2][4] = {{437.0, 612.0, 655.0, 5.0}, {320.0, 250.0, 530.0, 10.0}};
    s->nev = 2;
    memcpy(s->ev, ev, sizeof ev);
    synth_make(s, NSTA, NS, 0.004, 3.0, 11);
    *z = malloc((size_t)NSTA * NS * sizeof(float));
    for (int i = 0; i < NSTA; i++)
        memcpy(*z + (size_t)i * NS, s->data + (size_t)i * 3 * NS, NS * sizeof(float));
}

static void config(struct sl_config *cfg)
{
    synth_config(cfg);
    cfg->locate.phases = PHASES_P;
}

/* Feed the NSTA vertical traces (plus EXTRA rows repeating the first ones), in blocks. */
static struct synth_found run_engine(const struct synth *s, const float *z, const struct trace_channel *chan,
                               int extra, struct locate_stats *st)
{
    struct sl_config cfg;
    config(&cfg);
    struct sl_device dev = {.kind = SL_DEVICE_CPU, .index = -1};
    struct locate_engine *e = NULL;
    cr_assert_eq(locate_engine_from_config(&e, &cfg, &dev, &s->st), 0, "%s", err_msg());
    config_free(&cfg);
    struct synth_found f = {0};
    locate_engine_on_event(e, synth_on_event, &f);
    int nrec = NSTA + extra;
    float *buf = malloc((size_t)nrec * BLOCK * sizeof(float));
    for (int off = 0, seq = 0; off < NS; off += BLOCK, seq++) {
        for (int r = 0; r < nrec; r++)
            memcpy(buf + (size_t)r * BLOCK, z + (size_t)(r % NSTA) * NS + off, BLOCK * sizeof(float));
        struct trace_block b = {.seq = seq, .t0_ns = s->t0_ns + (int64_t)llround(off * s->dt * 1e9),
                                .dt = s->dt, .nrec = nrec, .ns = BLOCK, .chan = chan, .data = buf};
        cr_assert_eq(locate_feed(e, &b), 0, "%s", err_msg());
    }
    cr_assert_eq(locate_engine_flush(e), 0, "%s", err_msg());
    locate_engine_stats(e, st);
    locate_engine_destroy(e);
    free(buf);
    return f;
}

static void named_channels(const struct synth *s, struct trace_channel *chan)
{
    for (int i = 0; i < NSTA; i++)
        chan[i] = s->chan[i * 3]; /* XX.Snn..HHZ */
}

static void expect_same(const struct synth_found *a, const struct synth_found *b, const char *what)
{
    cr_assert_eq(a->n, b->n, "%s: %d events, by name %d", what, a->n, b->n);
    for (int i = 0; i < a->n && i < SYN_MAXFOUND; i++)
        cr_expect(a->ev[i].origin_ns == b->ev[i].origin_ns && a->ev[i].x == b->ev[i].x &&
                      a->ev[i].y == b->ev[i].y && a->ev[i].z == b->ev[i].z &&
                      a->ev[i].coalescence == b->ev[i].coalescence,
                  "%s: event %d at (%.3f %.3f %.3f) t %lld, by name (%.3f %.3f %.3f) t %lld", what, i,
                  a->ev[i].x, a->ev[i].y, a->ev[i].z, (long long)a->ev[i].origin_ns, b->ev[i].x, b->ev[i].y,
                  b->ev[i].z, (long long)b->ev[i].origin_ns);
}

/* The named run finds both events near where they were put (the oracle is sound). */
static void expect_true_locations(const struct synth *s, const struct synth_found *f)
{
    cr_assert_eq(f->n, 2, "%d events by name", f->n);
    for (int i = 0; i < 2; i++) {
        double d = sqrt(pow(f->ev[i].x - s->ev[i][0], 2) + pow(f->ev[i].y - s->ev[i][1], 2) +
                        pow(f->ev[i].z - s->ev[i][2], 2));
        cr_expect(d < 100.0, "event %d located %.1f m from the truth", i, d);
    }
}

Test(locate_positions, unnamed_channels_match_stations_by_position, .timeout = 120)
{
    struct synth s = {0};
    float *z;
    scene(&s, &z);
    struct trace_channel named[NSTA + 2], unnamed[NSTA + 2];
    memset(named, 0, sizeof named);
    memset(unnamed, 0, sizeof unnamed);
    named_channels(&s, named);
    struct locate_stats st_n, st_u, st_x;
    struct synth_found by_name = run_engine(&s, z, named, 0, &st_n);
    expect_true_locations(&s, &by_name);
    cr_expect_eq(st_n.unmatched_channels, 0);

    struct synth_found by_pos = run_engine(&s, z, unnamed, 0, &st_u);
    cr_expect_eq(st_u.unmatched_channels, 0, "%d unnamed channels unmatched", st_u.unmatched_channels);
    cr_expect_eq(st_u.dead_rows, 0);
    expect_same(&by_pos, &by_name, "unnamed");

    /* Two rows more than stations: counted as unmatched and left out; the rest is the same. */
    struct synth_found extra = run_engine(&s, z, unnamed, 2, &st_x);
    cr_expect_eq(st_x.unmatched_channels, 2, "%d unmatched, 2 rows beyond the stations", st_x.unmatched_channels);
    expect_same(&extra, &by_name, "unnamed + 2 rows");
    free(z);
    synth_free(&s);
}

/* Read OUTDIR/events.jsonl into F. */
static void read_events(const char *outdir, struct synth_found *f)
{
    char path[700];
    snprintf(path, sizeof path, "%.600s/events.jsonl", outdir);
    FILE *fp = fopen(path, "r");
    cr_assert(fp, "%s missing", path);
    char line[8192];
    memset(f, 0, sizeof *f);
    while (fgets(line, sizeof line, fp)) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        cr_assert(o, "%s: %s", path, je.text);
        if (f->n < SYN_MAXFOUND) {
            struct locate_event *e = &f->ev[f->n];
            e->origin_ns = json_integer_value(json_object_get(o, "origin_ns"));
            json_t *x = json_object_get(o, "x");
            e->x = json_real_value(json_array_get(x, 0));
            e->y = json_real_value(json_array_get(x, 1));
            e->z = json_real_value(json_array_get(x, 2));
        }
        f->n++;
        json_decref(o);
    }
    fclose(fp);
}

Test(stream_locate_positions, unnamed_f32_blocks_through_seislive_run, .timeout = 120)
{
    struct synth s = {0};
    float *z;
    scene(&s, &z);
    struct trace_channel named[NSTA];
    named_channels(&s, named);
    struct locate_stats st;
    struct synth_found ref = run_engine(&s, z, named, 0, &st);
    expect_true_locations(&s, &ref);

    char *dir = test_tmpdir();
    char ep_in[512], log[600], out[600];
    snprintf(out, sizeof out, "%s/files", dir);
    pid_t pid = ts_spawn_locate_run(&s, dir, BLOCK, NULL, ep_in, sizeof ep_in, log, sizeof log);
    void *zc = zmq_ctx_new();
    void *push = ts_push(zc, ep_in);
    float *buf = malloc((size_t)NSTA * BLOCK * sizeof(float));
    for (int off = 0, seq = 0; off < NS; off += BLOCK, seq++) {
        for (int r = 0; r < NSTA; r++)
            memcpy(buf + (size_t)r * BLOCK, z + (size_t)r * NS + off, BLOCK * sizeof(float));
        /* No "channels" in the header: the receiver must match rows to stations by position. */
        struct wire_traces_hdr h = {.t0_ns = s.t0_ns + (int64_t)llround(off * s.dt * 1e9), .dt = s.dt,
                                    .nrec = NSTA, .ns = BLOCK, .format = WIRE_F32, .chan = NULL};
        cr_assert_eq(wire_send_traces_f32(push, &h, buf, seq, 0), 0);
    }
    cr_assert_eq(wire_send_end(push, 0), 0);
    cr_assert_eq(ts_wait(pid, 90), 0, "seislive run failed (see %s)", log);
    cr_expect_eq(ts_count_in_file(log, "station not in the station file"), 0);
    cr_expect_eq(ts_count_in_file(log, " 0 unmatched channels"), 1, "unmatched channels (see %s)", log);
    struct synth_found got;
    read_events(out, &got);
    cr_assert_eq(got.n, ref.n, "%d events through seislive run, %d by name", got.n, ref.n);
    for (int i = 0; i < got.n; i++) {
        cr_expect_eq(got.ev[i].origin_ns, ref.ev[i].origin_ns, "event %d origin", i);
        cr_expect(fabs(got.ev[i].x - ref.ev[i].x) < 1e-6 && fabs(got.ev[i].y - ref.ev[i].y) < 1e-6 &&
                      fabs(got.ev[i].z - ref.ev[i].z) < 1e-6,
                  "event %d at (%.3f %.3f %.3f), by name (%.3f %.3f %.3f)", i, got.ev[i].x, got.ev[i].y,
                  got.ev[i].z, ref.ev[i].x, ref.ev[i].y, ref.ev[i].z);
    }
    free(buf);
    int linger = 0;
    zmq_setsockopt(push, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(push);
    zmq_ctx_term(zc);
    free(z);
    synth_free(&s);
    test_rmtree(dir);
    free(dir);
}
