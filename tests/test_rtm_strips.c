/* Boundary's strips in host memory (kernels/rtm_strips.h, [rtm] strip_store): on the CPU
 * the "device" is the host, so the staging ring, its slot arithmetic and the order of
 * the copies run as on the GPU, with consumed slots poisoned with NaN.  What is checked:
 *   - the store alone: every strip saved comes back exactly, through 1, 3 or 16 slots,
 *     and a load out of order is refused;
 *   - the plan: where the strips go (device, host, neither) for each budget and
 *     strip_store, and auto picking boundary with host strips where it could not before;
 *   - the engine: boundary's image with host strips is the device store's bit for bit,
 *     acoustic and TTI, separate and fused backward sweeps; auto spills on a small
 *     budget with strip_store = "host", never on the CPU with "auto"; a host budget too
 *     small for the strips is refused with a message naming it; a host store that cannot
 *     be allocated makes auto plan the shot again without it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "kernels/backend.h"
#include "kernels/propagator.h"
#include "kernels/rtm.h"
#include "kernels/rtm_memory.h"
#include "kernels/rtm_strips.h"
#include "stream/error.h"
#include "stream/rtm_config.h"
#include "tests/support.h"
#include "tests/test_rtm_common.h"

/* ---- the store alone ------------------------------------------------------------------ */

static void store_round_trip(int nstage)
{
    struct sl_device cpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    const int n[3] = {20, 16, 12};
    const double d[3] = {10, 10, 10}, o[3] = {0, 0, 0};
    struct prop_params pp;
    prop_params_init(&pp, n, d, o, 1e-3, 4);
    pp.op.order = 4;
    float *v = malloc((size_t)n[0] * n[1] * n[2] * sizeof *v);
    for (size_t i = 0; i < (size_t)n[0] * n[1] * n[2]; i++)
        v[i] = 2000.0f;
    const struct prop_model pm = {.vp = v};
    struct prop *u = NULL;
    cr_assert_eq(prop_create(&cpu, &pp, &pm, &u), 0, "%s", err_msg());
    const size_t sc = prop_strip_count(u), cells = prop_state_bytes(u) / sizeof(float);
    cr_assert_gt(sc, 0);
    const struct prop_layout *L = prop_layout(u);
    const size_t fcount = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
    (void)cells;
    const int count = 10;
    float *host = malloc((size_t)count * sc * sizeof(float));
    float *stage = malloc((size_t)nstage * sc * sizeof(float));
    float *ref = malloc((size_t)count * sc * sizeof(float)), *got = malloc(sc * sizeof(float));
    cr_assert(host && stage && ref && got);
    struct rtm_strips st;
    cr_assert_eq(rtm_strips_init(&st, &cpu, false, sc, count, true, host, stage, nstage), 0, "%s", err_msg());
    /* the current field: a pattern that differs from strip to strip (the CPU's field is
     * host memory; the test writes it directly) */
    float *f = (float *)prop_field(u);
    for (int i = 0; i < count; i++) {
        for (size_t c = 0; c < fcount; c++)
            f[c] = (float)(i * 1000 + (int)(c % 997));
        cr_assert_eq(prop_strip_save(u, ref + (size_t)i * sc, false), 0);
        cr_assert_eq(rtm_strips_save(&st, u, NULL, i), 0, "%s", err_msg());
    }
    cr_assert_eq(st.d2h, count);
    for (int i = count - 1; i >= 0; i--) {
        memset(f, 0, fcount * sizeof(float));
        cr_assert_eq(rtm_strips_load(&st, u, NULL, i), 0, "strip %d: %s", i, err_msg());
        cr_assert_eq(prop_strip_save(u, got, false), 0);
        cr_assert_eq(memcmp(got, ref + (size_t)i * sc, sc * sizeof(float)), 0, "strip %d, %d slots: not the strip "
                     "saved", i, nstage);
        /* the load writes the strip and nothing else */
        size_t nonzero = 0;
        for (size_t c = 0; c < fcount; c++)
            nonzero += f[c] != 0.0f;
        cr_assert_leq(nonzero, sc, "strip %d: %zu cells written, the strip has %zu", i, nonzero, sc);
    }
    cr_assert_eq(st.h2d, count, "each strip fetched once: %ld", st.h2d);
    rtm_strips_fini(&st);

    /* out of order: refused, naming the strip expected */
    cr_assert_eq(rtm_strips_init(&st, &cpu, false, sc, count, true, host, stage, nstage), 0);
    cr_assert_eq(rtm_strips_load(&st, u, NULL, count - 1), 0, "%s", err_msg());
    cr_assert_eq(rtm_strips_load(&st, u, NULL, count - 3), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "expected"), "%s", err_msg());
    cr_assert_eq(rtm_strips_save(&st, u, NULL, count), -EINVAL, "past the store");
    rtm_strips_fini(&st);
    cr_assert_eq(rtm_strips_init(&st, &cpu, false, sc, count, true, host, stage, 0), -EINVAL, "no slots");
    free(host), free(stage), free(ref), free(got), free(v);
    prop_destroy(u);
}

Test(rtm_strips, store_gives_every_strip_back_through_1_slot) { store_round_trip(1); }
Test(rtm_strips, store_gives_every_strip_back_through_3_slots) { store_round_trip(3); }
Test(rtm_strips, store_gives_every_strip_back_through_16_slots) { store_round_trip(16); }

/* ---- the plan -------------------------------------------------------------------------- */

static void plan(int store, size_t host_budget, struct rtm_mem_input *in, struct rtm_mem *m)
{
    const int n[3] = {60, 40, 40};
    const double d[3] = {10, 10, 10}, o[3] = {0, 0, 0};
    memset(in, 0, sizeof *in);
    prop_params_init(&in->pp, n, d, o, 1e-3, 10);
    in->pp.op.order = 8;
    in->random_width = 10;
    in->nt = 800;
    in->image_every = 1;
    in->ntr = 40;
    in->imaging = 0;
    in->schedule = RTM_CKPT_BINOMIAL;
    in->strip_store = store;
    in->host_budget = host_budget;
    cr_assert_eq(rtm_memory_estimate(in, m), 0, "%s", err_msg());
}

Test(rtm_strips, plan_places_the_strips)
{
    struct rtm_mem_input in;
    struct rtm_mem m;
    const size_t big = (size_t)1 << 40;
    plan(RTM_STRIPS_AUTO, big, &in, &m);
    cr_log_info("MiB: full %.1f, boundary device %.1f, boundary host %.1f (+ %.1f of strips), checkpoint %.1f, "
                "random %.1f", m.need[RTM_FULL] / 1048576.0, m.boundary_dev / 1048576.0, m.boundary_host / 1048576.0,
                m.strips_bytes / 1048576.0, m.need[RTM_CHECKPOINT] / 1048576.0, m.need[RTM_RANDOM] / 1048576.0);
    /* the device's share with host strips: the staging strips instead of nt of them */
    cr_assert_eq(m.boundary_dev - m.boundary_host, (size_t)(in.nt - RTM_STRIP_STAGES) * m.strip);
    cr_assert_eq(m.strips_bytes, (size_t)in.nt * m.strip);
    cr_assert_eq(m.need[RTM_BOUNDARY], m.boundary_dev, "auto plans the device first");
    cr_assert_gt(m.need[RTM_FULL], m.boundary_dev);
    int s, snaps;
    bool host;
    char why[768];
    /* the device holds them */
    cr_assert_eq(rtm_memory_pick_strips(&m, &in, m.boundary_dev, &s, &snaps, &host, why, sizeof why), 0);
    cr_assert_eq(s, RTM_BOUNDARY);
    cr_assert(!host, "%s", why);
    cr_assert_eq(rtm_memory_strips_where(&m, &in, m.boundary_dev), 0);
    /* it does not: they go to the host, and the reason says so */
    size_t small = m.boundary_dev - 4096;
    cr_assert_eq(rtm_memory_pick_strips(&m, &in, small, &s, &snaps, &host, why, sizeof why), 0);
    cr_assert_eq(s, RTM_BOUNDARY, "%s", why);
    cr_assert(host, "%s", why);
    cr_assert_not_null(strstr(why, "pinned host memory"), "%s", why);
    cr_assert_eq(rtm_memory_strips_where(&m, &in, small), 1);
    /* no host budget (auto on the CPU, or strip_store = "device"): what auto did before */
    int before, bsnaps;
    struct rtm_mem_input none = in;
    none.host_budget = 0;
    cr_assert_eq(rtm_memory_pick_strips(&m, &none, small, &before, &bsnaps, &host, why, sizeof why), 0);
    cr_assert_neq(before, RTM_BOUNDARY, "%s", why);
    cr_assert(!host);
    cr_assert_eq(rtm_memory_strips_where(&m, &none, small), -ENOMEM);
    struct rtm_mem_input dev = in;
    dev.strip_store = RTM_STRIPS_DEVICE;
    cr_assert_eq(rtm_memory_pick_strips(&m, &dev, small, &s, &snaps, &host, why, sizeof why), 0);
    cr_assert_eq(s, before, "strip_store device: as without a host budget");
    /* a host budget below the strips: not boundary, and the refusal names the host memory */
    struct rtm_mem_input tight = in;
    tight.host_budget = m.strips_bytes - 1;
    cr_assert_eq(rtm_memory_pick_strips(&m, &tight, small, &s, &snaps, &host, why, sizeof why), 0);
    cr_assert_eq(s, before, "%s", why);
    cr_assert_eq(rtm_memory_strips_where(&m, &tight, small), -ENOMEM);
    cr_assert_not_null(strstr(err_msg(), "host memory"), "%s", err_msg());
    /* the device's share itself too large */
    cr_assert_eq(rtm_memory_strips_where(&m, &in, m.boundary_host - 1), -ENOMEM);
    cr_assert_not_null(strstr(err_msg(), "still needs"), "%s", err_msg());
    /* strip_store = "host": always the host, planned with the device's share */
    struct rtm_mem_input hin;
    struct rtm_mem hm;
    plan(RTM_STRIPS_HOST, big, &hin, &hm);
    cr_assert_eq(hm.need[RTM_BOUNDARY], hm.boundary_host);
    cr_assert_eq(rtm_memory_pick_strips(&hm, &hin, hm.boundary_dev, &s, &snaps, &host, why, sizeof why), 0);
    cr_assert_eq(s, RTM_BOUNDARY);
    cr_assert(host, "%s", why);
    /* more staging strips: more of the device */
    hin.strip_stages = 8;
    cr_assert_eq(rtm_memory_estimate(&hin, &hm), 0);
    cr_assert_eq(hm.boundary_host, m.boundary_host + (size_t)(8 - RTM_STRIP_STAGES) * m.strip);
}

/* ---- the engine ----------------------------------------------------------------------- */

#define NX 32
#define NY 10
#define NZ 24

static void setup(struct rtm_case *c, struct shot *sh)
{
    rtm_case_layered(c, NX, NY, NZ, 1.0e-3, sh); /* dt under both physics' limits */
}

static struct rtm_volume volume(const struct rtm_case *c, bool tti)
{
    struct rtm_volume vol = {.n = {c->n[0], c->n[1], c->n[2]}, .d = {c->d[0], c->d[1], c->d[2]},
                             .o = {c->o[0], c->o[1], c->o[2]}, .v = c->v_mig};
    if (tti) {
        vol.epsilon0 = 0.2;
        vol.delta0 = 0.1;
        vol.theta0 = M_PI / 6;
        vol.phi0 = 0.3;
    }
    return vol;
}

/* The image of SH with P (forced strategy FORCE, or P's own with RTM_AUTO); *ST its stats;
 * the return code in *RC (the image is NULL unless it is 0). */
static float *image_with(const struct rtm_params *p, const struct rtm_volume *vol, const struct shot *sh, int force,
                         struct rtm_shot_stats *st, int *rc)
{
    struct sl_device cpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    struct rtm_engine *e = NULL;
    cr_assert_eq(rtm_engine_create(p, &cpu, vol, &e), 0, "%s", err_msg());
    int off[3], n[3];
    cr_assert_eq(rtm_engine_patch(e, RTM_SHOT(sh), off, n), 0, "%s", err_msg());
    size_t cells = (size_t)n[0] * n[1] * n[2];
    float *img = malloc(cells * sizeof(float));
    rtm_engine_force_strategy(e, force, -1);
    memset(st, 0, sizeof *st);
    *rc = rtm_engine_migrate_patch(e, RTM_SHOT(sh), img, NULL, st);
    rtm_engine_destroy(e);
    if (*rc < 0) {
        free(img);
        return NULL;
    }
    double e2 = 0;
    for (size_t i = 0; i < cells; i++)
        e2 += (double)img[i] * img[i];
    cr_assert(e2 > 0 && isfinite(e2), "image empty or not finite");
    return img;
}

static void host_equals_device(bool tti)
{
    struct rtm_case c;
    struct shot sh;
    setup(&c, &sh);
    struct sl_config cfg;
    rtm_case_config(&c, &cfg);
    cfg.propagator.physics = tti ? PHYSICS_TTI : PHYSICS_ACOUSTIC;
    struct rtm_job_params jp;
    cr_assert_eq(rtm_job_params_init(&cfg, &jp), 0, "%s", err_msg());
    struct rtm_volume vol = volume(&c, tti);
    const char *phys = tti ? "TTI" : "acoustic";
    const size_t cells = (size_t)NX * NY * NZ;
    const struct {
        int stages, backward;
    } vs[] = {{3, RTM_BACKWARD_SEPARATE}, {1, RTM_BACKWARD_SEPARATE}, {16, RTM_BACKWARD_SEPARATE},
              {3, RTM_BACKWARD_FUSED},    {2, RTM_BACKWARD_IMAGE}};
    for (size_t k = 0; k < sizeof vs / sizeof *vs; k++) {
        struct rtm_params pd = jp.p, ph;
        pd.tuning.backward = vs[k].backward;
        pd.strip_store = RTM_STRIPS_DEVICE;
        ph = pd;
        ph.strip_store = RTM_STRIPS_HOST;
        ph.tuning.strip_stages = vs[k].stages;
        struct rtm_shot_stats sd, sh_;
        int rc;
        float *di = image_with(&pd, &vol, &sh, RTM_BOUNDARY, &sd, &rc);
        cr_assert_eq(rc, 0, "%s", err_msg());
        float *hi = image_with(&ph, &vol, &sh, RTM_BOUNDARY, &sh_, &rc);
        cr_assert_eq(rc, 0, "%s", err_msg());
        cr_assert(!sd.strips_host && sh_.strips_host, "%s: strips where asked", phys);
        cr_assert_eq(sd.strips_bytes, sh_.strips_bytes);
        cr_assert_eq(memcmp(hi, di, cells * sizeof(float)), 0,
                     "%s, %d stages, backward %d: host strips' image differs from the device store's (%.3g)", phys,
                     vs[k].stages, vs[k].backward, test_rel_l2_f32(hi, di, cells));
        /* the shot's own allocation holds the staging strips, not the strips */
        cr_assert_eq(sd.mem_bytes - sh_.mem_bytes,
                     sd.strips_bytes - (size_t)vs[k].stages * (sd.strips_bytes / (size_t)sd.nt),
                     "%s: device bytes %zu vs %zu", phys, sh_.mem_bytes, sd.mem_bytes);
        cr_log_info("%s, %d stages, backward %d: identical images; allocated %.2f vs %.2f MiB, strips %.2f MiB", phys,
                    vs[k].stages, vs[k].backward, sh_.mem_bytes / 1048576.0, sd.mem_bytes / 1048576.0,
                    sh_.strips_bytes / 1048576.0);
        free(di);
        free(hi);
    }
    rtm_job_params_free(&jp);
    config_free(&cfg);
    rtm_case_shot_free(&sh);
    rtm_case_free(&c);
}

Test(rtm_strips, acoustic_host_strips_image_is_the_device_image, .timeout = 120) { host_equals_device(false); }
Test(rtm_strips, tti_host_strips_image_is_the_device_image, .timeout = 120) { host_equals_device(true); }

/* The plan's figures for SH under P: each strategy's bytes with the strips on the device
 * (NEED_D) and with P's strip_store (NEED_H). */
static void plan_figures(const struct rtm_params *p, const struct sl_device *cpu, const struct rtm_volume *vol,
                         const struct shot *sh, size_t need_d[RTM_STRATEGIES], size_t need_h[RTM_STRATEGIES])
{
    struct rtm_engine *e = NULL;
    struct rtm_params pd = *p;
    pd.strip_store = RTM_STRIPS_DEVICE;
    cr_assert_eq(rtm_engine_create(&pd, cpu, vol, &e), 0, "%s", err_msg());
    cr_assert_eq(rtm_engine_memory(e, RTM_SHOT(sh), need_d), 0, "%s", err_msg());
    rtm_engine_destroy(e);
    cr_assert_eq(rtm_engine_create(p, cpu, vol, &e), 0, "%s", err_msg());
    cr_assert_eq(rtm_engine_memory(e, RTM_SHOT(sh), need_h), 0, "%s", err_msg());
    rtm_engine_destroy(e);
}

Test(rtm_strips, auto_spills_to_the_host_under_a_small_budget, .timeout = 120)
{
    struct rtm_case c;
    struct shot sh;
    setup(&c, &sh);
    struct sl_config cfg;
    rtm_case_config(&c, &cfg);
    cfg.rtm.strategy = STRAT_AUTO;
    cfg.rtm.strip_store = STRIPS_HOST;
    struct rtm_job_params jp;
    cr_assert_eq(rtm_job_params_init(&cfg, &jp), 0, "%s", err_msg());
    struct rtm_volume vol = volume(&c, false);
    struct sl_device cpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    /* the plan's figures: boundary with device strips, and with host strips */
    size_t need_d[RTM_STRATEGIES], need_h[RTM_STRATEGIES];
    struct rtm_params pd = jp.p;
    pd.strip_store = RTM_STRIPS_DEVICE;
    plan_figures(&jp.p, &cpu, &vol, &sh, need_d, need_h);
    cr_assert_lt(need_h[RTM_BOUNDARY], need_d[RTM_BOUNDARY]);
    /* a budget between the two: boundary, with host strips, the device store's image */
    const double budget = (double)(need_h[RTM_BOUNDARY] + need_d[RTM_BOUNDARY]) / 2 / 1048576.0;
    struct rtm_params ph = jp.p;
    ph.memory_budget = budget;
    struct rtm_shot_stats st, sd;
    int rc;
    float *hi = image_with(&ph, &vol, &sh, RTM_AUTO, &st, &rc);
    cr_assert_eq(rc, 0, "%s", err_msg());
    cr_assert_eq(st.strategy, RTM_BOUNDARY, "auto picked %s", rtm_strategy_name(st.strategy));
    cr_assert(st.strips_host);
    cr_assert_eq(st.mem_need[RTM_BOUNDARY], need_h[RTM_BOUNDARY], "the run's plan is the host strips' one");
    float *di = image_with(&pd, &vol, &sh, RTM_BOUNDARY, &sd, &rc);
    cr_assert_eq(rc, 0, "%s", err_msg());
    cr_assert_eq(memcmp(hi, di, (size_t)NX * NY * NZ * sizeof(float)), 0, "auto's host-strip image differs");
    free(hi);
    free(di);
    /* strip_store = "auto" on the CPU: the host is the device, nothing spills, auto picks
     * what it picked before this store existed */
    struct rtm_params pa = jp.p;
    pa.strip_store = RTM_STRIPS_AUTO;
    pa.memory_budget = budget;
    float *ai = image_with(&pa, &vol, &sh, RTM_AUTO, &st, &rc);
    cr_assert_eq(rc, 0, "%s", err_msg());
    cr_assert_neq(st.strategy, RTM_BOUNDARY, "auto on the CPU spilled");
    cr_assert(!st.strips_host);
    free(ai);
    /* a configured boundary whose strips exceed the host budget: refused, naming it */
    struct rtm_params pt = jp.p;
    pt.strategy = RTM_BOUNDARY;
    pt.host_memory_budget = 0.001; /* MiB */
    pt.memory_budget = budget;
    float *ti = image_with(&pt, &vol, &sh, RTM_AUTO, &st, &rc);
    cr_assert_null(ti);
    cr_assert_eq(rc, -ENOMEM);
    cr_assert_not_null(strstr(err_msg(), "host memory"), "%s", err_msg());
    cr_assert_not_null(strstr(err_msg(), "host_memory_budget"), "%s", err_msg());
    rtm_job_params_free(&jp);
    config_free(&cfg);
    rtm_case_shot_free(&sh);
    rtm_case_free(&c);
}

/* The process's data segment (VmData in /proc/self/status), bytes. */
static size_t vm_data(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    cr_assert_not_null(f);
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmData: %zu kB", &kb) == 1)
            break;
    fclose(f);
    cr_assert_gt(kb, 0);
    return kb * 1024;
}

/* The host store cannot be allocated although the plan saw room for it (on a GPU: memory
 * taken by another process since, a registration the driver refuses; here: the process's
 * data limit, RLIMIT_DATA, set between what the shot needs besides the strips and what it
 * needs with them): auto plans the shot again without the host and the job goes on with
 * auto's next pick, whose image it is; the engine's later shots plan without the host from
 * the start; a configured boundary still fails, naming the store. */
Test(rtm_strips, auto_plans_again_when_the_host_store_cannot_be_allocated, .timeout = 120)
{
    struct rtm_case c;
    struct shot sh;
    rtm_case_init(&c, NX, NY, NZ, 10.0, 4, 1500, 2000.0); /* long: the strips outweigh the rest */
    c.pml = 6;
    c.dt = 1.0e-3;
    for (int z = 14; z < NZ; z++)
        for (size_t i = 0; i < (size_t)NX * NY; i++)
            c.v_mig[(size_t)z * NX * NY + i] = 2500.0f;
    rtm_case_synth_shot(&c, 7, 160.0, &sh);
    struct sl_config cfg;
    rtm_case_config(&c, &cfg);
    cfg.rtm.strategy = STRAT_AUTO;
    cfg.rtm.strip_store = STRIPS_HOST;
    cfg.propagator.t_max = c.nt * c.dt; /* the whole record */
    struct rtm_job_params jp;
    cr_assert_eq(rtm_job_params_init(&cfg, &jp), 0, "%s", err_msg());
    struct rtm_volume vol = volume(&c, false);
    struct sl_device cpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    size_t need_d[RTM_STRATEGIES], need_h[RTM_STRATEGIES];
    struct rtm_engine *e = NULL;
    plan_figures(&jp.p, &cpu, &vol, &sh, need_d, need_h);
    const size_t strips = need_d[RTM_BOUNDARY] - need_h[RTM_BOUNDARY];
    const double budget = (double)(need_h[RTM_BOUNDARY] + need_d[RTM_BOUNDARY]) / 2 / 1048576.0;
    /* what auto picks under that budget without a host store: the image to expect */
    struct rtm_params pn = jp.p;
    pn.strip_store = RTM_STRIPS_DEVICE;
    pn.memory_budget = budget;
    struct rtm_shot_stats sn, st;
    int rc;
    float *want = image_with(&pn, &vol, &sh, RTM_AUTO, &sn, &rc);
    cr_assert_eq(rc, 0, "%s", err_msg());
    cr_assert_neq(sn.strategy, RTM_BOUNDARY);
    /* room for the shot without its strips and for that pick, not for the strips */
    const size_t extra = (need_h[RTM_BOUNDARY] > sn.mem_bytes ? need_h[RTM_BOUNDARY] : sn.mem_bytes) + (4u << 20);
    cr_assert_lt(extra + (4u << 20), need_h[RTM_BOUNDARY] + strips, "the case's strips (%zu B) are too small to "
                 "tell apart", strips);
    struct rtm_params ph = jp.p;
    ph.memory_budget = budget;
    cr_assert_eq(rtm_engine_create(&ph, &cpu, &vol, &e), 0, "%s", err_msg());
    int off[3], n[3];
    cr_assert_eq(rtm_engine_patch(e, RTM_SHOT(&sh), off, n), 0, "%s", err_msg());
    const size_t cells = (size_t)n[0] * n[1] * n[2];
    float *img = calloc(cells, sizeof(float));
    cr_assert_not_null(img);
    struct rlimit old, lim;
    cr_assert_eq(getrlimit(RLIMIT_DATA, &old), 0);
    lim = old;
    lim.rlim_cur = vm_data() + extra;
    cr_assert_eq(setrlimit(RLIMIT_DATA, &lim), 0);
    rc = rtm_engine_migrate_patch(e, RTM_SHOT(&sh), img, NULL, &st);
    cr_assert_eq(setrlimit(RLIMIT_DATA, &old), 0);
    cr_assert_eq(rc, 0, "%s", err_msg());
    cr_assert(st.replanned, "the shot was not planned again (strategy %s)", rtm_strategy_name(st.strategy));
    cr_assert_eq(st.strategy, sn.strategy, "auto's next pick: %s, not %s", rtm_strategy_name(sn.strategy),
                 rtm_strategy_name(st.strategy));
    cr_assert(!st.strips_host);
    cr_assert_eq(memcmp(img, want, cells * sizeof(float)), 0, "image differs from %s's (%.3g)",
                 rtm_strategy_name(sn.strategy), test_rel_l2_f32(img, want, cells));
    /* the next shot of this engine plans without the host from the start */
    rc = rtm_engine_migrate_patch(e, RTM_SHOT(&sh), img, NULL, &st);
    cr_assert_eq(rc, 0, "%s", err_msg());
    cr_assert(!st.replanned);
    cr_assert_eq(st.strategy, sn.strategy);
    rtm_engine_destroy(e);
    free(img);
    free(want);
    /* a configured boundary, room for all it needs but the strips: the store's failure, named */
    struct rtm_params pb = ph;
    pb.strategy = RTM_BOUNDARY;
    cr_assert_eq(rtm_engine_create(&pb, &cpu, &vol, &e), 0, "%s", err_msg());
    img = calloc(cells, sizeof(float));
    lim.rlim_cur = vm_data() + need_h[RTM_BOUNDARY] + (4u << 20);
    cr_assert_eq(setrlimit(RLIMIT_DATA, &lim), 0);
    rc = rtm_engine_migrate_patch(e, RTM_SHOT(&sh), img, NULL, &st);
    cr_assert_eq(setrlimit(RLIMIT_DATA, &old), 0);
    cr_assert_eq(rc, -ENOMEM, "%s", err_msg());
    cr_assert_not_null(strstr(err_msg(), "strips in host memory"), "%s", err_msg());
    rtm_engine_destroy(e);
    free(img);
    rtm_job_params_free(&jp);
    config_free(&cfg);
    rtm_case_shot_free(&sh);
    rtm_case_free(&c);
}
