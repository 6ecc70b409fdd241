/* RTM's fused backward step (kernels/rtm_fused.h) against the separate passes it
 * replaces, on the CPU: bit for bit.  Why bit for bit holds (and is asserted, not a
 * tolerance): the fused pass runs the separate steps' own row functions (kernels/wave.c)
 * and the imaging condition's own row function on the same levels, and the sweep images
 * the same levels in the same order, so every float operation is the same one.
 *
 *   wave level: a receiver and a source simulation as the backward sweep holds them
 *     (tests/fused_case.h), seven steps with imaging at every other one, for the
 *     boundary and random pairs, 3D, 3D under a free surface and 2D, orders 8 and 4,
 *     every imaging condition: both levels of both fields and every accumulator equal;
 *   engine level: a shot migrated with each fused backward sweep (rtm_tuning.backward:
 *     the fused pass, the imaging inside the receiver step) and the separate one, boundary
 *     and random, every condition, imaging every step, second and third: the images and
 *     source illuminations equal, the stats saying which sweep ran, the images not empty;
 *   refusals: pairs the fused pass cannot step (grids that differ, the implicit
 *     operator, an unknown variant) are refused with the reason, and the engine then
 *     runs the separate sweep. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/rtm.h"
#include "stream/error.h"
#include "stream/rtm_config.h"
#include "tests/fused_case.h"
#include "tests/support.h"
#include "tests/test_rtm_common.h"

/* NSTEPS fused steps on A, the separate passes on B (imaging every other step). */
static void run_both(struct fused_case *a, struct fused_case *b, int nsteps)
{
    struct wave_fused *f = NULL;
    cr_assert_eq(wave_fused_create(a->q, a->u, 0, &f), 0, "%s", err_msg());
    for (int t = 0; t < nsteps; t++) {
        const bool img = t % 2 == 0;
        cr_assert_eq(wave_fused_step(f, &a->b, img ? &a->acc : NULL), 0, "%s", err_msg());
        if (img)
            imaging_accumulate_cpu(&b->b, wave_prev(b->u), &b->b, wave_cur(b->q), &b->acc);
        cr_assert_eq(wave_step(b->q), 0, "%s", err_msg());
        cr_assert_eq(wave_step_reverse(b->u), 0, "%s", err_msg());
    }
    wave_fused_destroy(f);
    cr_assert_eq(wave_step_index(a->q), wave_step_index(b->q));
    cr_assert_eq(wave_step_index(a->u), wave_step_index(b->u));
}

static void check_wave(int kind, bool two_d, bool fs, int order)
{
    struct sl_device cpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    for (int cond = IMAGING_XCORR; cond <= IMAGING_BOTH; cond++) {
        struct fused_case a, b;
        fused_case_init(&a, &cpu, kind, two_d, fs, order, cond);
        fused_case_init(&b, &cpu, kind, two_d, fs, order, cond);
        run_both(&a, &b, 7);
        size_t n;
        float *ha = fc_state(&a, &n), *hb = fc_state(&b, &n);
        size_t diff = 0, nz = 0;
        for (size_t i = 0; i < n; i++) {
            diff += memcmp(&ha[i], &hb[i], sizeof(float)) != 0;
            nz += ha[i] != 0.0f;
        }
        cr_assert_eq(diff, 0, "kind %d, 2D %d, free %d, order %d, condition %d: %zu of %zu values differ", kind,
                     two_d, fs, order, cond, diff, n);
        /* not all zero: the fields and the image hold something */
        cr_assert_gt(nz, n / 4, "kind %d condition %d: only %zu of %zu values non-zero", kind, cond, nz, n);
        double img = 0;
        for (size_t i = 0; i < a.cells; i++)
            img += fabs(a.acc.num[i]);
        cr_assert_gt(img, 0.0);
        free(ha);
        free(hb);
        fused_case_free(&a);
        fused_case_free(&b);
    }
}

Test(rtm_fused, boundary_pair_bitwise) { check_wave(FC_BOUNDARY, false, false, 8); }
Test(rtm_fused, random_pair_bitwise) { check_wave(FC_RANDOM, false, false, 8); }
Test(rtm_fused, free_surface_bitwise)
{
    check_wave(FC_BOUNDARY, false, true, 8);
    check_wave(FC_RANDOM, false, true, 8);
}
Test(rtm_fused, two_d_and_order_4_bitwise)
{
    check_wave(FC_BOUNDARY, true, false, 8);
    check_wave(FC_RANDOM, true, false, 4);
    check_wave(FC_BOUNDARY, false, false, 4);
}

Test(rtm_fused, refuses_what_it_cannot_step)
{
    struct sl_device cpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    struct fused_case a, b;
    fused_case_init(&a, &cpu, FC_RANDOM, false, false, 8, IMAGING_XCORR);
    fused_case_init(&b, &cpu, FC_BOUNDARY, true, false, 8, IMAGING_XCORR);
    struct wave_fused *f = (struct wave_fused *)&a; /* must be reset to NULL on refusal */
    /* a 3D q with a 2D u: other grids */
    cr_assert_eq(wave_fused_create(a.q, b.u, 0, &f), -ENOTSUP);
    cr_assert_null(f);
    cr_assert(strstr(err_msg(), "grids differ"), "%s", err_msg());
    cr_assert_eq(wave_fused_create(a.q, a.q, 0, &f), -EINVAL);
    cr_assert_eq(wave_fused_create(a.q, a.u, WAVE_FUSED_VARIANTS, &f), -EINVAL);
    cr_assert(strstr(err_msg(), "variant"), "%s", err_msg());
    fused_case_free(&a);
    fused_case_free(&b);
    /* the implicit operator */
    struct wave_params p;
    memset(&p, 0, sizeof p);
    for (int ax = 0; ax < 3; ax++) {
        p.n[ax] = 16;
        p.d[ax] = 10.0;
    }
    p.order = 8;
    p.op = PROP_OP_IMPLICIT;
    p.pml_reflection = 1e-4;
    p.dt = 1e-3;
    float *v = malloc(16 * 16 * 16 * sizeof(float));
    for (int i = 0; i < 16 * 16 * 16; i++)
        v[i] = 2000.0f;
    struct wave_sim *q, *u;
    cr_assert_eq(wave_create(&cpu, &p, v, &q), 0, "%s", err_msg());
    cr_assert_eq(wave_create_like(q, &u), 0, "%s", err_msg());
    cr_assert_eq(wave_fused_create(q, u, 0, &f), -ENOTSUP);
    cr_assert(strstr(err_msg(), "implicit"), "%s", err_msg());
    wave_destroy(q);
    wave_destroy(u);
    free(v);
}

/* ---- the engine: fused and separate sweeps of one shot ------------------------------ */

static struct rtm_engine *engine(const struct rtm_case *c, const struct sl_config *cfg, int mode)
{
    struct sl_device dev;
    cr_assert_eq(backend_select("cpu", &dev), 0);
    struct rtm_params p;
    char name[64];
    rtm_params_from_config(cfg, &p, name, sizeof name);
    p.tuning.backward = mode;
    struct rtm_volume vol = {.n = {c->n[0], c->n[1], c->n[2]}, .d = {c->d[0], c->d[1], c->d[2]},
                             .o = {c->o[0], c->o[1], c->o[2]}, .v = c->v_mig};
    struct rtm_engine *e = NULL;
    cr_assert_eq(rtm_engine_create(&p, &dev, &vol, &e), 0, "%s", err_msg());
    return e;
}

/* Image and source illumination of SH by STRATEGY; *RAN: how the backward sweep ran. */
static float *migrate(struct rtm_engine *e, const struct shot *sh, int strategy, size_t *cells, int *ran)
{
    int off[3], n[3];
    cr_assert_eq(rtm_engine_patch(e, RTM_SHOT(sh), off, n), 0, "%s", err_msg());
    *cells = (size_t)n[0] * n[1] * n[2];
    float *out = malloc(2 * *cells * sizeof(float));
    cr_assert(out);
    rtm_engine_force_strategy(e, strategy, -1);
    struct rtm_shot_stats st;
    cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(sh), out, out + *cells, &st), 0, "%s", err_msg());
    cr_assert_eq(st.strategy, strategy);
    *ran = st.backward;
    return out;
}

/* Each fused mode (RTM_BACKWARD_FUSED, _IMAGE) against the separate passes. */
static void check_engine(int imaging, int every)
{
    struct rtm_case c;
    struct shot sh;
    /* test_rtm_strategies.c's layered case: 130 steps, the wavefields reach every face */
    rtm_case_init(&c, 32, 10, 24, 10.0, 8, 130, 2000.0);
    c.pml = 6;
    for (int z = 14; z < 24; z++)
        for (size_t i = 0; i < (size_t)32 * 10; i++)
            c.v_mig[(size_t)z * 32 * 10 + i] = 2500.0f;
    rtm_case_synth_shot(&c, 7, 16 * 10.0, &sh);
    struct sl_config cfg;
    rtm_case_config(&c, &cfg);
    cfg.rtm.imaging = imaging;
    cfg.rtm.image_every = every;
    struct rtm_engine *es = engine(&c, &cfg, RTM_BACKWARD_SEPARATE);
    const int strategies[2] = {RTM_BOUNDARY, RTM_RANDOM};
    for (int mode = RTM_BACKWARD_FUSED; mode <= RTM_BACKWARD_IMAGE; mode++) {
        struct rtm_engine *ef = engine(&c, &cfg, mode);
        for (int s = 0; s < 2; s++) {
            size_t cells;
            int rf, rs;
            float *a = migrate(ef, &sh, strategies[s], &cells, &rf), *b = migrate(es, &sh, strategies[s], &cells, &rs);
            cr_assert_eq(rf, mode, "strategy %d: backward mode %d ran, not %d", strategies[s], rf, mode);
            cr_assert_eq(rs, RTM_BACKWARD_SEPARATE, "strategy %d: the separate sweep was asked for", strategies[s]);
            cr_assert_eq(memcmp(a, b, 2 * cells * sizeof(float)), 0,
                         "strategy %d, mode %d, condition %d, every %d: fused and separate differ (image %.3g, "
                         "illumination %.3g)",
                         strategies[s], mode, imaging, every, test_rel_l2_f32(a, b, cells),
                         test_rel_l2_f32(a + cells, b + cells, cells));
            double norm = 0, ill = 0;
            for (size_t i = 0; i < cells; i++) {
                norm += (double)a[i] * a[i];
                ill += a[cells + i];
            }
            cr_assert_gt(norm, 0.0);
            cr_assert_gt(ill, 0.0);
            free(a);
            free(b);
        }
        rtm_engine_destroy(ef);
    }
    rtm_engine_destroy(es);
    config_free(&cfg);
    rtm_case_shot_free(&sh);
    rtm_case_free(&c);
}

Test(rtm_fused, engine_xcorr_every_step, .timeout = 120) { check_engine(IMG_XCORR, 1); }
Test(rtm_fused, engine_source_every_third, .timeout = 120) { check_engine(IMG_SOURCE, 3); }
Test(rtm_fused, engine_receiver_every_step, .timeout = 120) { check_engine(IMG_RECEIVER, 1); }
Test(rtm_fused, engine_both_every_second, .timeout = 120) { check_engine(IMG_BOTH, 2); }

/* Random layers wider than the CPML: the source simulation's grid is not the receiver
 * simulation's, so random runs the separate passes (and says so in the stats); boundary,
 * whose simulations share the grid, still runs fused. */
Test(rtm_fused, engine_falls_back_where_grids_differ, .timeout = 60)
{
    struct rtm_case c;
    struct shot sh;
    rtm_case_init(&c, 32, 10, 24, 10.0, 8, 60, 2000.0);
    c.pml = 6;
    rtm_case_synth_shot(&c, 7, 16 * 10.0, &sh);
    struct sl_config cfg;
    rtm_case_config(&c, &cfg);
    cfg.rtm.random_width = 8;
    struct rtm_engine *e = engine(&c, &cfg, RTM_BACKWARD_FUSED);
    size_t cells;
    int ran;
    float *a = migrate(e, &sh, RTM_RANDOM, &cells, &ran);
    cr_assert_eq(ran, RTM_BACKWARD_SEPARATE, "random with wider random layers ran fused (%d)", ran);
    free(a);
    a = migrate(e, &sh, RTM_BOUNDARY, &cells, &ran);
    cr_assert_eq(ran, RTM_BACKWARD_FUSED, "boundary did not run fused (%d)", ran);
    free(a);
    rtm_engine_destroy(e);
    config_free(&cfg);
    rtm_case_shot_free(&sh);
    rtm_case_free(&c);
}

/* An unknown backward mode is an error naming it, not a silent default. */
Test(rtm_fused, engine_refuses_unknown_mode)
{
    struct rtm_case c;
    struct shot sh;
    rtm_case_init(&c, 32, 10, 24, 10.0, 8, 20, 2000.0);
    c.pml = 6;
    rtm_case_synth_shot(&c, 7, 16 * 10.0, &sh);
    struct sl_config cfg;
    rtm_case_config(&c, &cfg);
    struct rtm_engine *e = engine(&c, &cfg, 3);
    float *img = malloc(32 * 10 * 24 * sizeof(float));
    rtm_engine_force_strategy(e, RTM_BOUNDARY, -1);
    cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(&sh), img, NULL, NULL), -EINVAL);
    cr_assert(strstr(err_msg(), "backward 3"), "%s", err_msg());
    free(img);
    rtm_engine_destroy(e);
    config_free(&cfg);
    rtm_case_shot_free(&sh);
    rtm_case_free(&c);
}
