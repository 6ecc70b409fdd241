/* RTM with the implicit operator ([propagator] operator = "implicit"): the strategies
 * give the image of `full` — boundary to float rounding (its reconstruction carries the
 * interface values, kernels/implicit.h); random as close to full as with the Taylor
 * operator on the same shot (the difference is the energy the random layers scatter
 * back, tests/test_rtm_strategies.c; on this small model 3.1 % with Taylor, measured).  (Checkpoints only save and restore
 * states, whatever the operator: tests/test_wave_physics.c's bitwise test covers them;
 * left out here to keep the CPU time of this test down.) */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/rtm.h"
#include "stream/error.h"
#include "tests/support.h"
#include "tests/test_rtm_common.h"

static float *migrate_with(struct rtm_engine *e, const struct shot *sh, int strategy, int schedule, size_t *cells)
{
    int off[3], n[3];
    cr_assert_eq(rtm_engine_patch(e, RTM_SHOT(sh), off, n), 0, "%s", err_msg());
    *cells = (size_t)n[0] * n[1] * n[2];
    float *img = malloc(*cells * sizeof(float));
    cr_assert(img);
    rtm_engine_force_strategy(e, strategy, schedule);
    struct rtm_shot_stats st;
    cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(sh), img, NULL, &st), 0, "%s", err_msg());
    cr_assert_eq(st.strategy, strategy);
    return img;
}

Test(implicit_rtm, every_strategy_gives_the_full_image, .timeout = 240)
{
    struct rtm_case c;
    /* 40 x 8 x 32 cells of 10 m, order 8; dt 1.5 ms is stable for the implicit operator
     * up to 2700 m/s in 3D (implicit_symbol_max(8) = 8.69) */
    rtm_case_init(&c, 40, 8, 32, 10.0, 8, 200, 2000.0);
    c.pml = 16;
    for (int z = 20; z < 32; z++)
        for (size_t i = 0; i < (size_t)40 * 8; i++)
            c.v_true[(size_t)z * 40 * 8 + i] = 2600.0f;
    struct shot sh;
    rtm_case_shot(&c, 3, 200.0, 40.0, 80.0, 2, 38, 1, 80.0, &sh);
    double eb[2], er[2];
    struct sl_config cfg;
    for (int op = 0; op < 2; op++) {
        rtm_case_config(&c, &cfg);
        cfg.propagator.op = op ? OPERATOR_IMPLICIT : OPERATOR_TAYLOR;
        cfg.rtm.random_width = 16;
        struct rtm_engine *e = rtm_case_engine(&c, &cfg);
        size_t cells;
        float *full = migrate_with(e, &sh, STRAT_FULL, -1, &cells);
        double norm = 0;
        for (size_t i = 0; i < cells; i++)
            norm += (double)full[i] * full[i];
        cr_assert_gt(norm, 0);
        float *bnd = op ? migrate_with(e, &sh, STRAT_BOUNDARY, -1, &cells) : NULL;
        eb[op] = bnd ? test_rel_l2_f32(bnd, full, cells) : 0;
        float *rnd = migrate_with(e, &sh, STRAT_RANDOM, -1, &cells);
        er[op] = test_rel_l2_f32(rnd, full, cells);
        free(full);
        free(bnd);
        free(rnd);
        rtm_engine_destroy(e);
        config_free(&cfg);
    }
    fprintf(stderr, "implicit rtm: boundary vs full %.3g; random vs full %.3g (taylor 8: %.3g)\n", eb[1], er[1],
            er[0]);
    cr_assert_lt(eb[1], 1e-4, "boundary vs full: %.3g", eb[1]);
    cr_assert_leq(er[1], er[0], "random vs full: implicit %.3g, taylor %.3g", er[1], er[0]);
    rtm_case_shot_free(&sh);
    rtm_case_free(&c);
}
