/* Shots stacked into the image equal the sum of their separate images, each at its
 * place; the ledger keeps the ids; auto picks full when memory is plentiful and falls
 * back to boundary, checkpoint and random as the budget shrinks. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/rtm.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "stream/image_stack.h"
#include "tests/test_rtm_common.h"

#define NX 40
#define NY 12
#define NZ 24

Test(rtm_stack, stack_is_the_sum_of_the_shots, .timeout = 120)
{
    struct rtm_case c;
    rtm_case_init(&c, NX, NY, NZ, 10.0, 4, 160, 2000.0);
    c.pml = 6;
    struct sl_config cfg;
    rtm_case_config(&c, &cfg);
    cfg.rtm.aperture = 40.0; /* patches smaller than the model, at different places */
    struct rtm_engine *e = rtm_case_engine(&c, &cfg);
    struct shot s[2];
    rtm_case_synth_shot(&c, 101, 140.0, &s[0]);
    rtm_case_synth_shot(&c, 102, 250.0, &s[1]);
    int n[3] = {NX, NY, NZ};
    size_t N = (size_t)NX * NY * NZ;
    float *sum = calloc(N, 4), *isum = calloc(N, 4);
    int offs[2][3];
    for (int k = 0; k < 2; k++) {
        int off[3], pn[3];
        cr_assert_eq(rtm_engine_patch(e, RTM_SHOT(&s[k]), off, pn), 0, "%s", err_msg());
        memcpy(offs[k], off, sizeof off);
        cr_assert_lt(pn[0], NX, "the patch is a part of the model");
        size_t pc = (size_t)pn[0] * pn[1] * pn[2];
        float *img = malloc(pc * 4), *ill = malloc(pc * 4);
        cr_assert_eq(rtm_engine_migrate_patch(e, RTM_SHOT(&s[k]), img, ill, NULL), 0, "%s", err_msg());
        double e2 = 0;
        for (int z = 0; z < pn[2]; z++)
            for (int y = 0; y < pn[1]; y++)
                for (int x = 0; x < pn[0]; x++) {
                    size_t i = ((size_t)(z + off[2]) * n[1] + (y + off[1])) * n[0] + (x + off[0]);
                    size_t j = ((size_t)z * pn[1] + y) * pn[0] + x;
                    sum[i] += img[j];
                    isum[i] += ill[j];
                    e2 += (double)img[j] * img[j];
                }
        cr_assert_gt(e2, 0.0);
        free(img);
        free(ill);
    }
    cr_assert_neq(offs[0][0], offs[1][0]);
    struct image_stack st;
    const double d[3] = {10, 10, 10}, o[3] = {0, 0, 0};
    cr_assert_eq(image_stack_init(&st, n, d, o), 0);
    struct rtm_shot_stats ss;
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(rtm_stack_shot(e, &s[k], &st, &ss), 0, "%s", err_msg());
        cr_assert_eq(ss.shot_id, s[k].id);
        cr_assert_gt(ss.seconds, 0.0);
        cr_assert_gt(ss.mem_bytes, 0);
    }
    cr_assert_eq(rtm_stack_shot(e, &s[0], &st, NULL), -EEXIST, "a shot is never stacked twice");
    cr_assert_eq(st.shots, 2);
    size_t nid;
    const int64_t *ids = image_stack_ids(&st, &nid);
    cr_assert(nid == 2 && ids[0] == 101 && ids[1] == 102);
    cr_assert_eq(memcmp(st.image, sum, N * 4), 0, "stack differs from the sum of the shot images");
    cr_assert_eq(memcmp(st.illum, isum, N * 4), 0, "stacked illumination differs");
    image_stack_free(&st);
    free(sum);
    free(isum);
    for (int k = 0; k < 2; k++) {
        free(s[k].rec);
        free(s[k].data);
    }
    rtm_engine_destroy(e);
    config_free(&cfg);
    rtm_case_free(&c);
}

/* The strategy an engine with BUDGET_BYTES picks for SH; with RUN, by migrating it
 * (the engine's own path, stats.strategy), else by its plan (the same code, no run). */
static int strategy_under(struct rtm_case *c, const struct shot *sh, double budget_bytes, bool run, size_t need[5],
                          int *rc)
{
    struct sl_config cfg;
    rtm_case_config(c, &cfg);
    cfg.rtm.strategy = STRAT_AUTO;
    cfg.rtm.memory_budget = budget_bytes / 1048576.0;
    struct rtm_engine *e = rtm_case_engine(c, &cfg);
    int strategy = -1;
    if (need)
        cr_assert_eq(rtm_engine_memory(e, RTM_SHOT(sh), need), 0, "%s", err_msg());
    if (run) {
        struct rtm_shot_stats st;
        memset(&st, 0, sizeof st);
        float *img = malloc((size_t)NX * NY * NZ * 4);
        *rc = rtm_engine_migrate_patch(e, RTM_SHOT(sh), img, NULL, &st);
        if (*rc == 0)
            strategy = st.strategy;
        if (need && *rc == 0)
            cr_assert_eq(memcmp(need, st.mem_need, sizeof st.mem_need), 0, "plan and run disagree");
        free(img);
    } else {
        *rc = rtm_engine_pick(e, RTM_SHOT(sh), &strategy);
    }
    rtm_engine_destroy(e);
    config_free(&cfg);
    return strategy;
}

Test(rtm_stack, auto_falls_back_as_the_budget_shrinks, .timeout = 120)
{
    struct rtm_case c;
    rtm_case_init(&c, NX, NY, NZ, 10.0, 4, 280, 2000.0);
    c.pml = 4;
    struct shot sh;
    rtm_case_synth_shot(&c, 5, 200.0, &sh);
    size_t need[5];
    int rc;
    cr_assert_eq(strategy_under(&c, &sh, 1e12, false, need, &rc), STRAT_FULL);
    cr_assert_eq(rc, 0, "%s", err_msg());
    cr_log_info("need MiB: full %.2f boundary %.2f checkpoint %.2f random %.2f", need[STRAT_FULL] / 1048576.0,
                need[STRAT_BOUNDARY] / 1048576.0, need[STRAT_CHECKPOINT] / 1048576.0,
                need[STRAT_RANDOM] / 1048576.0);
    /* this geometry orders them full > boundary > random, and between boundary and
     * random there is room for enough binomial checkpoints (at most RTM_AUTO_MAX_SWEEPS) */
    cr_assert_gt(need[STRAT_FULL], need[STRAT_BOUNDARY]);
    cr_assert_gt(need[STRAT_BOUNDARY], need[STRAT_RANDOM]);
    /* two through a whole migration (the engine uses its pick, its plan matches) */
    cr_assert_eq(strategy_under(&c, &sh, (double)need[STRAT_FULL], true, need, &rc), STRAT_FULL);
    cr_assert_eq(rc, 0, "%s", err_msg());
    cr_assert_eq(strategy_under(&c, &sh, (double)need[STRAT_BOUNDARY] - 4096, true, NULL, &rc), STRAT_CHECKPOINT);
    cr_assert_eq(rc, 0, "%s", err_msg());
    /* the rest by plan */
    cr_assert_eq(strategy_under(&c, &sh, (double)need[STRAT_FULL] - 4096, false, NULL, &rc), STRAT_BOUNDARY);
    cr_assert_eq(rc, 0, "%s", err_msg());
    cr_assert_eq(strategy_under(&c, &sh, (double)need[STRAT_RANDOM] + 4096, false, NULL, &rc), STRAT_RANDOM);
    cr_assert_eq(rc, 0, "%s", err_msg());
    strategy_under(&c, &sh, (double)need[STRAT_RANDOM] - 4096, false, NULL, &rc);
    cr_assert_eq(rc, -ENOMEM, "below the smallest need: refused");
    cr_assert_not_null(strstr(err_msg(), "memory budget"));
    /* and a migration under it fails the same way, stack untouched */
    strategy_under(&c, &sh, (double)need[STRAT_RANDOM] - 4096, true, NULL, &rc);
    cr_assert_eq(rc, -ENOMEM);
    free(sh.rec);
    free(sh.data);
    rtm_case_free(&c);
}
