/* Per-phase characteristic functions ([locate] sta_p ... band_s, docs/locate.md): a
 * synthetic event whose P pulses (verticals) are 25 Hz and S pulses (horizontals) 4 Hz
 * is found and located with a band per phase, and missed or mislocated with either band
 * used for both phases; the keys' resolution (all-or-nothing per phase, the old keys
 * unchanged), the refusals with file:line, and the derived defaults. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "kernels/cf.h"
#include "kernels/locate_engine.h"
#include "stream/error.h"
#include "stream/locate_setup.h"
#include "tests/test_locate_synth.h"

/* 49 three-component stations, 250 samples/s, 12 s; one event at 5 s.  The trace SNR
 * (peak / noise sigma, white noise) is 1 for both phases, so neither band alone holds
 * the event: the P band takes the S pulses away and the S band most of the P pulses. */
static const double EV[4] = {437.0, 612.0, 655.0, 5.0};

static void make(struct synth *s, uint64_t seed)
{
    s->nev = 1;
    memcpy(s->ev[0], EV, sizeof EV);
    s->f_peak = 25.0;
    s->f_peak_s = 4.0;
    synth_make(s, 49, 3000, 0.004, 1.0, seed);
}

enum variant { PER_PHASE, P_BAND_BOTH, S_BAND_BOTH };

static void configure(struct sl_config *cfg, enum variant v)
{
    synth_config(cfg);
    struct locate_conf *lc = &cfg->locate;
    lc->cf = CF_STALTA;
    lc->sta = lc->lta = 0.0;
    lc->band[0] = lc->band[1] = -1.0;
    lc->sta_p = 0.04;
    lc->lta_p = 0.4;
    lc->sta_s = 0.25;
    lc->lta_s = 2.5;
    const double bp[2] = {12.0, 50.0}, bs[2] = {1.5, 7.0};
    const double *b = v == S_BAND_BOTH ? bs : bp;
    if (v == PER_PHASE) {
        memcpy(lc->band_p, bp, sizeof bp);
        memcpy(lc->band_s, bs, sizeof bs);
    } else {
        memcpy(lc->band, b, sizeof bp);
    }
}

static void run(const struct synth *s, enum variant v, struct synth_found *f)
{
    struct sl_config cfg;
    configure(&cfg, v);
    struct sl_device dev = {.kind = SL_DEVICE_CPU, .index = -1};
    struct locate_engine *e;
    cr_assert_eq(locate_engine_from_config(&e, &cfg, &dev, &s->st), 0, "%s", err_msg());
    locate_engine_on_event(e, synth_on_event, f);
    int sizes[] = {1000};
    cr_assert_eq(synth_feed(e, s, sizes, 1, NULL, NULL), 0, "%s", err_msg());
    locate_engine_destroy(e);
    config_free(&cfg);
}

static double miss(const struct locate_event *ev)
{
    return sqrt(pow(ev->x - EV[0], 2) + pow(ev->y - EV[1], 2) + pow(ev->z - EV[2], 2));
}

Test(locate_cf_phase, per_phase_bands_matter, .timeout = 120)
{
    static const char *const names[3] = {"per-phase bands", "the P band for both", "the S band for both"};
    for (uint64_t seed = 21; seed <= 22; seed++) {
        struct synth s = {0};
        make(&s, seed);
        for (int v = PER_PHASE; v <= S_BAND_BOTH; v++) {
            struct synth_found f = {0};
            run(&s, (enum variant)v, &f);
            for (int i = 0; i < f.n && i < SYN_MAXFOUND; i++)
                cr_log_info("seed %llu, %s: event %d at %.3f s (%.1f, %.1f, %.1f) m, %.1f m off, coalescence %.3f "
                            "(level %.3f)", (unsigned long long)seed, names[v], i, (f.ev[i].origin_ns - s.t0_ns) * 1e-9,
                            f.ev[i].x, f.ev[i].y, f.ev[i].z, miss(&f.ev[i]), f.ev[i].coalescence, f.ev[i].level);
            if (f.n == 0)
                cr_log_info("seed %llu, %s: no event", (unsigned long long)seed, names[v]);
            if (v == PER_PHASE) {
                cr_assert_eq(f.n, 1, "seed %llu, per-phase bands: %d events, expected 1", (unsigned long long)seed,
                             f.n);
                double dt_s = (f.ev[0].origin_ns - s.t0_ns) * 1e-9 - EV[3];
                cr_expect(miss(&f.ev[0]) <= 100.0, "seed %llu, per-phase bands: %.1f m from the source",
                          (unsigned long long)seed, miss(&f.ev[0]));
                /* 5 samples = half a P period: the depth / origin-time trade-off of a
                 * surface array moves the time by depth error / vp (50 m: 14 ms) */
                cr_expect(fabs(dt_s) <= 5 * s.dt, "seed %llu, per-phase bands: origin time off by %.4f s",
                          (unsigned long long)seed, dt_s);
            } else {
                /* missed, or no event within two cells of the source */
                int near = 0;
                for (int i = 0; i < f.n && i < SYN_MAXFOUND; i++)
                    near |= miss(&f.ev[i]) <= 200.0;
                cr_expect(!near, "seed %llu, %s: the event was found within 200 m all the same",
                          (unsigned long long)seed, names[v]);
            }
        }
        synth_free(&s);
    }
}

/* ---- the keys ---------------------------------------------------------------------- */

static int load(const char *body, struct sl_config *cfg)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[job]\nkind = \"locate\"\n[input]\nkind = \"zmq\"\n[locate]\nstations = \"/dev/null\"\n%s", body);
    return config_load_string(text, "cf.toml", cfg);
}

Test(locate_cf_phase, old_keys_give_one_function_as_before)
{
    struct sl_config cfg;
    cr_assert_eq(load("sta = 0.08\nlta = 0.9\nband = [3.0, 20.0]\n", &cfg), 0, "%s", err_msg());
    struct locate_params p;
    locate_params_from_config(&cfg.locate, &p);
    cr_expect_eq(p.cf_per_phase, 0);
    cr_expect(p.cf.sta == 0.08 && p.cf.lta == 0.9 && p.cf.band[0] == 3.0 && p.cf.band[1] == 20.0 &&
              p.cf.kurtosis_window == 0.2 && p.cf.scale == 0);
    config_free(&cfg);
    /* one old key alone: the others take the old fixed defaults (no filter, 0.5 s) */
    cr_assert_eq(load("sta = 0.03\n", &cfg), 0, "%s", err_msg());
    locate_params_from_config(&cfg.locate, &p);
    cr_expect_eq(p.cf_per_phase, 0);
    cr_expect(p.cf.sta == 0.03 && p.cf.lta == 0.5 && p.cf.band[0] == 0.0 && p.cf.band[1] == 0.0);
    config_free(&cfg);
}

Test(locate_cf_phase, per_phase_keys_fall_back_to_the_shared_ones)
{
    struct sl_config cfg;
    cr_assert_eq(load("sta = 0.05\nlta = 0.6\nband_s = [2.0, 10.0]\nsta_s = 0.2\nlta_s = 2.0\n", &cfg), 0, "%s",
                 err_msg());
    struct locate_params p;
    locate_params_from_config(&cfg.locate, &p);
    cr_expect_eq(p.cf_per_phase, 1);
    cr_expect(p.cf.sta == 0.05 && p.cf.lta == 0.6 && p.cf.band[0] == 0.0 && p.cf.band[1] == 0.0);
    cr_expect(p.cf_s.sta == 0.2 && p.cf_s.lta == 2.0 && p.cf_s.band[0] == 2.0 && p.cf_s.band[1] == 10.0);
    config_free(&cfg);
}

Test(locate_cf_phase, conflicts_are_refused_with_file_and_line)
{
    static const struct {
        const char *body, *msg;
    } bad[] = {
        {"sta = 0.05\nsta_p = 0.02\nsta_s = 0.1\n",
         "cf.toml:7:1: [locate] sta: sta_p / sta_s override it for every phase stacked"},
        {"phases = \"P\"\nband_s = [2.0, 8.0]\n",
         "cf.toml:8:1: [locate] band_s: a setting of the S phase, but phases = \"P\" does not stack it"},
        {"sta_p = 0.3\nlta_p = 0.2\n", "cf.toml:8:1: [locate] lta_p: lta_p (0.2 s) must be longer than sta_p (0.3 s)"},
        {"sta_s = 0.6\n", "cf.toml:7:1: [locate] sta_s: lta (0.5 s, the default) must be longer than sta_s (0.6 s)"},
        {"band_p = [20.0, 5.0]\n", "cf.toml:7:1: [locate] band_p: [20, 5]: the high corner must be above the low one"},
        {"band_s = [-1.0, 5.0]\n", "cf.toml:7:1: [locate] band_s: [-1, 5]: give two corners >= 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct sl_config cfg;
        int rc = load(bad[i].body, &cfg);
        cr_expect_lt(rc, 0, "accepted: %s", bad[i].body);
        cr_expect(strstr(err_msg(), bad[i].msg) != NULL, "for\n%s\ngot: %s\nwanted: %s", bad[i].body, err_msg(),
                  bad[i].msg);
        if (rc == 0)
            config_free(&cfg);
    }
}

Test(locate_cf_phase, derived_defaults_from_rate_and_grid)
{
    /* the Iceland example: 500 samples/s, 25 m cells, vp 3630 m/s, vs 1833 m/s; the
     * largest travel-time change over a cell is 25 m / v */
    struct cf_spec p = {.kind = CF_FN_STALTA, .band = {-1, -1}, .scale = -1}, s = p;
    cf_spec_derive(&p, 0.002, 25.0 / 3630.0);
    cf_spec_derive(&s, 0.002, 25.0 / 1833.0);
    cr_expect_float_eq(p.band[1], 200.0, 1e-9);
    cr_expect_float_eq(s.band[1], 200.0, 1e-9);
    cr_expect_float_eq(p.sta, 100.0 / 3630.0, 1e-12);
    cr_expect_float_eq(p.lta, 1000.0 / 3630.0, 1e-12);
    cr_expect_float_eq(p.band[0], 3630.0 / 200.0, 1e-9);
    cr_expect_float_eq(s.sta, 100.0 / 1833.0, 1e-12);
    cr_expect_float_eq(s.band[0], 1833.0 / 200.0, 1e-9);
    cr_expect(p.scale == 1 && s.scale == 1);
    /* a grid finer than the sampling: STA 2 samples, the lower corner below the upper */
    struct cf_spec q = {.kind = CF_FN_STALTA, .band = {-1, -1}, .scale = -1};
    cf_spec_derive(&q, 0.01, 0.0001);
    cr_expect_float_eq(q.band[1], 40.0, 1e-9);
    cr_expect_float_eq(q.sta, 0.02, 1e-12);
    cr_expect(q.band[0] < q.band[1]);
    /* values given are kept, the scale too */
    struct cf_spec g = {.kind = CF_FN_STALTA, .sta = 0.1, .lta = 1.0, .band = {0, 0}};
    cf_spec_derive(&g, 0.002, 0.01);
    cr_expect(g.sta == 0.1 && g.lta == 1.0 && g.band[0] == 0 && g.band[1] == 0 && g.scale == 0);
    /* no CF key in the config: the phases are left to derive */
    struct sl_config cfg;
    cr_assert_eq(load("", &cfg), 0, "%s", err_msg());
    struct locate_params lp;
    locate_params_from_config(&cfg.locate, &lp);
    cr_expect_eq(lp.cf_per_phase, 1);
    cr_expect(lp.cf.sta == 0 && lp.cf.band[0] < 0 && lp.cf_s.sta == 0 && lp.cf_s.band[1] < 0);
    config_free(&cfg);
}
