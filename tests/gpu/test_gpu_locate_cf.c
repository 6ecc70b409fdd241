/* Per-phase characteristic functions on the GPU (kernels/cf.cu) against the CPU
 * reference: two functions (P and S units, their delays absorbed in the rows' delays),
 * with per-phase keys and with the derived defaults (log scale), on a stream cut into
 * uneven blocks with a dead station and a gap: the same maximum points at every time,
 * the same events. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "kernels/backend.h"
#include "kernels/locate_engine.h"
#include "stream/error.h"
#include "stream/locate_setup.h"
#include "tests/gpu/gpu_support.h"
#include "tests/support.h"
#include "tests/test_locate_synth.h"

#ifdef SEISLIVE_CUDA
struct out {
    float *m;
    int32_t *j;
    size_t nt, cap;
    struct synth_found found;
};

static void on_trace(int64_t t, float m, int32_t j, int live, double level, void *user)
{
    struct out *o = user;
    (void)t, (void)live, (void)level;
    if (o->nt == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 4096;
        o->m = realloc(o->m, o->cap * sizeof(float));
        o->j = realloc(o->j, o->cap * sizeof(int32_t));
    }
    o->m[o->nt] = m;
    o->j[o->nt++] = j;
}

/* DERIVED: no CF key (the derived defaults); else per-phase bands and windows. */
static void run(const struct sl_device *dev, const struct synth *s, const uint8_t *ok, int derived, struct out *o)
{
    struct sl_config cfg;
    synth_config(&cfg);
    struct locate_conf *lc = &cfg.locate;
    lc->cf = CF_STALTA;
    lc->sta = lc->lta = 0.0;
    lc->band[0] = lc->band[1] = -1.0;
    if (!derived) {
        lc->band_p[0] = 12.0, lc->band_p[1] = 50.0;
        lc->band_s[0] = 1.5, lc->band_s[1] = 7.0;
        lc->sta_p = 0.04, lc->lta_p = 0.4, lc->sta_s = 0.25, lc->lta_s = 2.5;
    }
    lc->block_samples = 500;
    lc->mad_window = 6.0;
    struct locate_engine *e = NULL;
    cr_assert_eq(locate_engine_from_config(&e, &cfg, dev, &s->st), 0, "%s", err_msg());
    locate_engine_on_event(e, synth_on_event, &o->found);
    locate_engine_on_trace(e, on_trace, o);
    static const int cuts[] = {700, 333, 1024, 1, 517};
    cr_assert_eq(synth_feed(e, s, cuts, 5, NULL, ok), 0, "%s: %s", dev->name, err_msg());
    locate_engine_destroy(e);
    config_free(&cfg);
}
#endif

Test(gpu_locate_cf, per_phase_functions_gpu_match_cpu, .timeout = 180)
{
    GPU_REQUIRED();
#ifdef SEISLIVE_CUDA
    struct sl_device gpu, cpu = {.kind = SL_DEVICE_CPU, .index = -1};
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    snprintf(cpu.name, sizeof cpu.name, "CPU");
    static const double ev[4] = {437.0, 612.0, 655.0, 5.0};
    struct synth s = {.nev = 1, .f_peak = 25.0, .f_peak_s = 4.0};
    memcpy(s.ev[0], ev, sizeof ev);
    synth_make(&s, 49, 3000, 0.004, 1.5, 23);
    uint8_t *ok = malloc((size_t)s.nsta * 3);
    for (int c = 0; c < s.nsta * 3; c++)
        ok[c] = c / 3 != 5;
    for (int i = 1200; i < 1400; i++)
        s.data[(size_t)(3 * 9 + 1) * s.ns + i] = NAN; /* a gap on station 9's N */
    for (int derived = 0; derived <= 1; derived++) {
        struct out oc = {0}, og = {0};
        run(&cpu, &s, ok, derived, &oc);
        run(&gpu, &s, ok, derived, &og);
        cr_assert_eq(og.nt, oc.nt, "stacked times: GPU %zu, CPU %zu", og.nt, oc.nt);
        int jd = 0;
        for (size_t t = 0; t < oc.nt; t++)
            jd += og.j[t] != oc.j[t];
        double em = test_rel_l2_f32(og.m, oc.m, oc.nt);
        cr_log_info("%s: %zu times, max trace rel. error %.3g, %d points differ, events GPU %d CPU %d",
                    derived ? "derived defaults" : "per-phase keys", oc.nt, em, jd, og.found.n, oc.found.n);
        cr_expect_eq(jd, 0, "%d of %zu maximum points differ", jd, oc.nt);
        cr_expect_lt(em, 1e-5, "maximum trace relative error %.3g", em);
        cr_expect_geq(oc.found.n, 1, "the CPU found no event");
        cr_assert_eq(og.found.n, oc.found.n, "GPU %d events, CPU %d", og.found.n, oc.found.n);
        for (int k = 0; k < oc.found.n && k < SYN_MAXFOUND; k++) {
            const struct locate_event *a = &og.found.ev[k], *b = &oc.found.ev[k];
            cr_log_info("event %d: GPU t %lld (%.2f, %.2f, %.2f); CPU t %lld (%.2f, %.2f, %.2f)", k,
                        (long long)a->origin_ns, a->x, a->y, a->z, (long long)b->origin_ns, b->x, b->y, b->z);
            cr_expect(a->sample == b->sample && a->ix == b->ix && a->iy == b->iy && a->iz == b->iz,
                      "event %d: peak sample/cell differ", k);
            cr_expect_lt(fabs(a->x - b->x) + fabs(a->y - b->y) + fabs(a->z - b->z), 1e-2, "event %d location", k);
            cr_expect_lt(llabs(a->origin_ns - b->origin_ns), 1000, "event %d origin", k);
        }
        free(oc.m), free(oc.j), free(og.m), free(og.j);
    }
    free(ok);
    synth_free(&s);
#endif
}
