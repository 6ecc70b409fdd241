/* The locate engine as a stream consumer: the events do not depend on how the stream
 * is cut into blocks; a dead station and a gap do not move the location; bad blocks
 * (other channels, other dt, out of order, a time jump) give clear errors or counted
 * rejections. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/locate_engine.h"
#include "stream/locate_setup.h"
#include "stream/error.h"
#include "tests/test_locate_synth.h"

/* 64 stations at trace SNR 2, 250 samples/s, 16 s, two events. */
static void scene(struct synth *s)
{
    static const double ev[2][4] = {{437.0, 612.0, 655.0, 5.0}, {320.0, 250.0, 530.0, 10.0}};
    s->nev = 2;
    memcpy(s->ev, ev, sizeof ev);
    synth_make(s, 64, 4000, 0.004, 2.0, 7);
}

static struct locate_engine *engine(const struct synth *s, int block_samples, struct synth_found *f)
{
    struct sl_config cfg;
    synth_config(&cfg);
    cfg.locate.block_samples = block_samples;
    struct sl_device dev = {.kind = SL_DEVICE_CPU, .index = -1};
    struct locate_engine *e = NULL;
    cr_assert_eq(locate_engine_from_config(&e, &cfg, &dev, &s->st), 0, "%s", err_msg());
    config_free(&cfg);
    if (f)
        locate_engine_on_event(e, synth_on_event, f);
    return e;
}

Test(locate_stream, block_cuts_give_identical_events, .timeout = 120)
{
    struct synth s = {0};
    scene(&s);
    static const int cut_a[] = {4000}, cut_b[] = {1000}, cut_c[] = {137, 1999, 64, 731};
    struct {
        const int *sizes;
        int n, block_samples;
    } cuts[] = {{cut_a, 1, 1000}, {cut_a, 1, 1000}, {cut_b, 1, 1000}, {cut_c, 4, 1000}, {cut_b, 1, 333}};
    struct synth_found ref = {0};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        struct synth_found f = {0};
        struct locate_engine *e = engine(&s, cuts[c].block_samples, &f);
        cr_assert_eq(synth_feed(e, &s, cuts[c].sizes, cuts[c].n, NULL, NULL), 0, "%s", err_msg());
        locate_engine_destroy(e);
        if (c == 0) {
            ref = f;
            cr_assert_eq(ref.n, 2, "%d events in the reference cut", ref.n);
            continue;
        }
        cr_assert_eq(f.n, ref.n, "cut %zu: %d events, reference %d", c, f.n, ref.n);
        for (int i = 0; i < f.n; i++) {
            const struct locate_event *a = &f.ev[i], *b = &ref.ev[i];
            cr_expect(a->origin_ns == b->origin_ns && a->x == b->x && a->y == b->y && a->z == b->z &&
                          a->coalescence == b->coalescence && a->sx == b->sx && a->ix == b->ix && a->iy == b->iy &&
                          a->iz == b->iz && a->rows_used == b->rows_used,
                      "cut %zu event %d: t %lld (%.6f, %.6f, %.6f) c %.9g differs from t %lld (%.6f, %.6f, %.6f) c %.9g",
                      c, i, (long long)a->origin_ns, a->x, a->y, a->z, a->coalescence, (long long)b->origin_ns, b->x,
                      b->y, b->z, b->coalescence);
        }
    }
    synth_free(&s);
}

Test(locate_stream, dead_station_and_gap_keep_the_location, .timeout = 120)
{
    struct synth s = {0};
    scene(&s);
    int nch = s.nsta * 3, sizes[] = {1000};
    struct synth_found ref = {0}, f = {0};
    struct locate_engine *e = engine(&s, 1000, &ref);
    cr_assert_eq(synth_feed(e, &s, sizes, 1, NULL, NULL), 0);
    locate_engine_destroy(e);
    cr_assert_eq(ref.n, 2);

    /* station 27 dead (all three channels); station 9 has a 3 s gap over the first event */
    uint8_t *ok = malloc(nch), *mask = malloc((size_t)nch * s.ns);
    memset(ok, 1, nch);
    memset(mask, 1, (size_t)nch * s.ns);
    for (int c = 0; c < 3; c++) {
        ok[27 * 3 + c] = 0;
        memset(mask + (size_t)(9 * 3 + c) * s.ns + (int)(4.5 / s.dt), 0, (size_t)(3.0 / s.dt));
    }
    e = engine(&s, 1000, &f);
    cr_assert_eq(synth_feed(e, &s, sizes, 1, mask, ok), 0);
    struct locate_stats st;
    locate_engine_stats(e, &st);
    locate_engine_destroy(e);
    cr_expect_eq(st.invalid_samples, (int64_t)3 * s.ns + (int64_t)3 * (int)(3.0 / s.dt));
    cr_assert_eq(f.n, 2, "%d events with a dead station and a gap", f.n);
    for (int i = 0; i < 2; i++) {
        cr_expect(f.ev[i].ix == ref.ev[i].ix && f.ev[i].iy == ref.ev[i].iy && f.ev[i].iz == ref.ev[i].iz,
                  "event %d: best cell (%d %d %d), without damage (%d %d %d)", i, f.ev[i].ix, f.ev[i].iy,
                  f.ev[i].iz, ref.ev[i].ix, ref.ev[i].iy, ref.ev[i].iz);
        double d = sqrt(pow(f.ev[i].x - ref.ev[i].x, 2) + pow(f.ev[i].y - ref.ev[i].y, 2) +
                        pow(f.ev[i].z - ref.ev[i].z, 2));
        cr_expect(d < 25.0, "event %d moved by %.1f m", i, d);
        cr_expect(fabs((double)(f.ev[i].origin_ns - ref.ev[i].origin_ns)) <= 1e9 * s.dt,
                  "event %d: origin moved by %lld ns", i, (long long)(f.ev[i].origin_ns - ref.ev[i].origin_ns));
        /* the dead rows are left out of the count, not averaged in as zeros */
        cr_expect(f.ev[i].rows_used <= ref.ev[i].rows_used - 2);
    }
    free(ok);
    free(mask);
    synth_free(&s);
}

static struct trace_block block_of(const struct synth *s, int off, int n, float *buf)
{
    int nch = s->nsta * 3;
    for (int c = 0; c < nch; c++)
        memcpy(buf + (size_t)c * n, s->data + (size_t)c * s->ns + off, n * sizeof(float));
    struct trace_block b = {.seq = off / n, .t0_ns = s->t0_ns + (int64_t)llround(off * s->dt * 1e9), .dt = s->dt,
                            .nrec = nch, .ns = n, .chan = s->chan, .data = buf};
    return b;
}

Test(locate_stream, bad_blocks_are_errors_or_counted, .timeout = 60)
{
    struct synth s = {0};
    s.nev = 0;
    synth_make(&s, 9, 1000, 0.004, 2.0, 3);
    int nch = 27, n = 250;
    float *buf = malloc((size_t)(nch + 1) * n * sizeof(float));
    struct trace_channel *chan = malloc((size_t)(nch + 1) * sizeof *chan);
    memcpy(chan, s.chan, (size_t)nch * sizeof *chan);
    /* an extra channel of a station that is not in the station file */
    memset(&chan[nch], 0, sizeof chan[nch]);
    strcpy(chan[nch].net, "XX");
    strcpy(chan[nch].sta, "NOPE");
    strcpy(chan[nch].cha, "HHZ");
    struct locate_engine *e = engine(&s, 1000, NULL);
    struct trace_block b = block_of(&s, 0, n, buf);
    b.nrec = nch + 1;
    b.chan = chan;
    cr_assert_eq(locate_feed(e, &b), 0, "%s", err_msg());
    struct locate_stats st;
    locate_engine_stats(e, &st);
    cr_expect_eq(st.unmatched_channels, 1);

    /* fewer channels than the stream started with */
    b = block_of(&s, n, n, buf);
    cr_expect_eq(locate_feed(e, &b), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "channels"), "%s", err_msg());
    /* a renamed channel */
    b = block_of(&s, n, n, buf);
    b.nrec = nch + 1;
    struct trace_channel *other = malloc((size_t)(nch + 1) * sizeof *other);
    memcpy(other, chan, (size_t)(nch + 1) * sizeof *other);
    strcpy(other[4].cha, "HHX");
    b.chan = other;
    cr_expect_eq(locate_feed(e, &b), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "channel 4 is XX.S01..HHX, expected XX.S01..HHN"), "%s", err_msg());
    /* another sample interval */
    b.chan = chan;
    b.dt = 0.002;
    cr_expect_eq(locate_feed(e, &b), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "dt"), "%s", err_msg());
    /* the next block, in order: accepted */
    b = block_of(&s, n, n, buf);
    b.nrec = nch + 1;
    b.chan = chan;
    cr_expect_eq(locate_feed(e, &b), 0, "%s", err_msg());
    /* the same block again (overlap): rejected and counted, the stream goes on */
    cr_expect_eq(locate_feed(e, &b), 0);
    locate_engine_stats(e, &st);
    cr_expect_eq(st.rejected_blocks, 1);
    /* a block 100 samples late: the missing stretch becomes a gap */
    b = block_of(&s, 2 * n + 100, n, buf);
    b.nrec = nch + 1;
    b.chan = chan;
    cr_expect_eq(locate_feed(e, &b), 0, "%s", err_msg());
    locate_engine_stats(e, &st);
    cr_expect_eq(st.gap_samples, 100);
    cr_expect_eq(st.blocks, 3);
    cr_expect_eq(locate_engine_flush(e), 0);
    /* malformed */
    b.ns = -1;
    cr_expect_eq(locate_feed(e, &b), -EINVAL);
    locate_engine_destroy(e);
    free(other);
    free(chan);
    free(buf);
    synth_free(&s);
}
