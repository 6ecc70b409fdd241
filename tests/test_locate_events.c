/* Detection and location on synthetic streams (tests/test_locate_synth.h): events at
 * trace SNR 0.5 are found, located within one grid cell and timed within two samples;
 * pure noise gives no event at the same threshold. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/locate_engine.h"
#include "stream/locate_setup.h"
#include "tests/test_locate_synth.h"

struct peak {
    float mmax;   /* largest live m(t) */
    double level; /* level at that time */
};

static void on_trace(int64_t t, float m, int32_t j, int live, double level, void *user)
{
    struct peak *f = user;
    (void)t;
    (void)j;
    if (live && m > f->mmax) {
        f->mmax = m;
        f->level = level;
    }
}

/* 400 three-component stations, 250 samples/s, 20 s. */
static void scene(struct synth *s, int with_events, uint64_t seed)
{
    static const double ev[2][4] = {{437.0, 612.0, 655.0, 6.0}, {320.0, 250.0, 530.0, 13.0}};
    s->nev = with_events ? 2 : 0;
    for (int e = 0; e < s->nev; e++)
        for (int k = 0; k < 4; k++)
            s->ev[e][k] = ev[e][k];
    synth_make(s, 400, 5000, 0.004, 0.5, seed);
}

static void run(const struct synth *s, struct synth_found *f, struct peak *pk)
{
    struct sl_config cfg;
    synth_config(&cfg);
    struct sl_device dev = {.kind = SL_DEVICE_CPU, .index = -1};
    struct locate_engine *e;
    cr_assert_eq(locate_engine_from_config(&e, &cfg, &dev, &s->st), 0);
    locate_engine_on_event(e, synth_on_event, f);
    locate_engine_on_trace(e, on_trace, pk);
    int sizes[] = {1000};
    cr_assert_eq(synth_feed(e, s, sizes, 1, NULL, NULL), 0);
    locate_engine_destroy(e);
    config_free(&cfg);
}

Test(locate_events, found_located_timed_at_snr_half, .timeout = 120)
{
    for (uint64_t seed = 11; seed <= 12; seed++) {
        struct synth s = {0};
        scene(&s, 1, seed);
        struct synth_found f = {0};
        struct peak pk = {0};
        run(&s, &f, &pk);
        for (int i = 0; i < f.n && i < SYN_MAXFOUND; i++)
            cr_log_info("seed %llu event %d: t %.4f s (%.1f, %.1f, %.1f) m, coalescence %.4f level %.4f",
                        (unsigned long long)seed, i, (f.ev[i].origin_ns - s.t0_ns) * 1e-9, f.ev[i].x, f.ev[i].y,
                        f.ev[i].z, f.ev[i].coalescence, f.ev[i].level);
        cr_assert_eq(f.n, s.nev, "seed %llu: %d events found, %d made", (unsigned long long)seed, f.n, s.nev);
        for (int i = 0; i < s.nev; i++) {
            const struct locate_event *ev = &f.ev[i];
            double dt_s = (ev->origin_ns - s.t0_ns) * 1e-9 - s.ev[i][3];
            cr_expect(fabs(ev->x - s.ev[i][0]) <= 100.0 && fabs(ev->y - s.ev[i][1]) <= 100.0 &&
                          fabs(ev->z - s.ev[i][2]) <= 100.0,
                      "seed %llu event %d: (%.1f, %.1f, %.1f) is more than one cell from (%.1f, %.1f, %.1f)",
                      (unsigned long long)seed, i, ev->x, ev->y, ev->z, s.ev[i][0], s.ev[i][1], s.ev[i][2]);
            cr_expect(fabs(dt_s) <= 2 * s.dt, "seed %llu event %d: origin time off by %.4f s (%.1f samples)",
                      (unsigned long long)seed, i, dt_s, dt_s / s.dt);
        }
        synth_free(&s);
    }
}

Test(locate_events, no_event_in_pure_noise, .timeout = 120)
{
    for (uint64_t seed = 11; seed <= 11; seed++) {
        struct synth s = {0};
        scene(&s, 0, seed);
        struct synth_found f = {0};
        struct peak pk = {0};
        run(&s, &f, &pk);
        cr_log_info("seed %llu: noise only, largest m(t) %.4f at level %.4f", (unsigned long long)seed, pk.mmax,
                    pk.level);
        cr_expect_eq(f.n, 0, "seed %llu: %d false events (first at %.3f s, coalescence %.4f, level %.4f)",
                     (unsigned long long)seed, f.n, f.n ? (f.ev[0].origin_ns - s.t0_ns) * 1e-9 : 0.0,
                     f.n ? f.ev[0].coalescence : 0.0, f.n ? f.ev[0].level : 0.0);
        synth_free(&s);
    }
}
