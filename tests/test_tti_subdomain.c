/* TTI subdomains (kernels/tti_internal.h, prop_step_stage): a TTI grid cut in two along
 * x, y or z, each half a simulation of its own with a HALO face at the cut, stepped side
 * by side through the propagator interface -- pass 1, the pass-1 products exchanged, the
 * update, the injection, then p and q exchanged -- gives bit for bit the whole grid's p
 * at both time levels, in a heterogeneous tilted medium (eps, delta, theta and phi per
 * point) with CPML layers (and a rigid wall) or random-velocity layers crossing the cut,
 * or a free surface on top, in 3D and 2D, orders 2 to 16, with a source next to the cut.  The control: the same
 * halves stepped with only the field exchange (the acoustic protocol) differ, so the
 * products' exchange is what makes them agree.  Also the stage protocol's refusals. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/propagator.h"
#include "kernels/random_boundary.h"
#include "kernels/tti.h"
#include "stream/error.h"
#include "tests/wave_support.h"

enum { C = PROP_FACE_CPML, F = PROP_FACE_FREE, R = PROP_FACE_RANDOM, N = PROP_FACE_NONE, H = PROP_FACE_HALO };

static const int NSTEP = 30;

/* The whole grid: faces KIND (2D when the y faces are NONE), layer widths differing per
 * face, ymax a rigid wall (width 0) when CPML. */
static struct prop_params whole_params(int order, const int kind[6])
{
    const bool two_d = kind[2] == N;
    const int n[3] = {20, two_d ? 1 : 16, 18};
    const double d[3] = {10, 12, 9}, o[3] = {100, -40, 0};
    struct prop_params p;
    prop_params_init(&p, n, d, o, 0, 0);
    p.physics = PROP_TTI;
    p.op.order = order;
    const int width[6] = {5, 7, 6, kind[3] == C ? 0 : 4, 8, 6};
    for (int f = 0; f < 6; f++) {
        p.grid.face[f] = kind[f];
        p.grid.width[f] = kind[f] == C || kind[f] == R ? width[f] : 0;
    }
    return p;
}

struct medium {
    float *v[5]; /* vp, eps, delta, theta, phi */
    size_t n;
};

/* A heterogeneous tilted medium on the interior of P (random per point, eps >= delta). */
static struct medium medium(const struct prop_params *p)
{
    struct medium m = {.n = (size_t)p->grid.n[0] * p->grid.n[1] * p->grid.n[2]};
    for (int i = 0; i < 5; i++)
        m.v[i] = malloc(m.n * sizeof(float));
    srand(23);
    for (size_t i = 0; i < m.n; i++) {
        const float u[5] = {(float)rand() / RAND_MAX, (float)rand() / RAND_MAX, (float)rand() / RAND_MAX,
                            (float)rand() / RAND_MAX, (float)rand() / RAND_MAX};
        m.v[0][i] = 1800.0f + 700.0f * u[0];
        m.v[1][i] = 0.05f + 0.25f * u[1];
        m.v[2][i] = m.v[1][i] * u[2];
        m.v[3][i] = (float)(-0.9 + 1.8 * u[3]);
        m.v[4][i] = (float)(2.0 * M_PI * u[4]);
    }
    return m;
}

static struct prop_model model_of(const struct medium *m)
{
    struct prop_model pm = {.vp = m->v[0], .epsilon = m->v[1], .delta = m->v[2], .theta = m->v[3], .phi = m->v[4]};
    return pm;
}

/* The part of the whole interior V (grid W) that the subdomain grid G holds. */
static float *sub_volume(const struct prop_grid *w, const struct prop_grid *g, const float *v)
{
    float *o = malloc((size_t)g->n[0] * g->n[1] * g->n[2] * sizeof *o);
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            memcpy(o + ((size_t)k * g->n[1] + j) * g->n[0],
                   v + ((size_t)(k + g->origin[2]) * w->n[1] + j + g->origin[1]) * w->n[0] + g->origin[0],
                   g->n[0] * sizeof *o);
    return o;
}

/* Half SIDE of P along AX cut at CUT, a HALO face (the whole grid's width there) at the
 * cut, the whole model's CPML speed VMAX. */
static struct prop_params half_params(const struct prop_params *p, int ax, int cut, int side, double vmax)
{
    struct prop_params h = *p;
    struct prop_grid *g = &h.grid;
    for (int a = 0; a < 3; a++)
        g->global_n[a] = p->grid.n[a];
    g->n[ax] = side ? p->grid.n[ax] - cut : cut;
    g->origin[ax] = side ? cut : 0;
    g->o[ax] = p->grid.o[ax] + g->origin[ax] * p->grid.d[ax];
    const int f = 2 * ax + (side ? 0 : 1);
    g->face[f] = H;
    g->width[f] = p->grid.face[f] == C || p->grid.face[f] == R ? p->grid.width[f] : 0;
    h.vmax_cpml = vmax;
    return h;
}

struct sim3 {
    struct prop *s[3]; /* whole, low half, high half */
    struct prop_points *src[2];
    const struct sl_device *dev;
    int ax;
};

/* A's high face to B's low face and back, through a host buffer. */
static void exchange(struct prop *a, struct prop *b, int ax)
{
    size_t na = prop_halo_count(a, 2 * ax + 1), nb = prop_halo_count(b, 2 * ax);
    cr_assert_gt(na, 0);
    cr_assert_eq(na, nb, "halo counts %zu and %zu", na, nb);
    float *buf = malloc(na * sizeof *buf);
    cr_assert_eq(prop_halo_pack(a, 2 * ax + 1, buf), 0, "%s", err_msg());
    cr_assert_eq(prop_halo_unpack(b, 2 * ax, buf), 0, "%s", err_msg());
    cr_assert_eq(prop_halo_pack(b, 2 * ax, buf), 0, "%s", err_msg());
    cr_assert_eq(prop_halo_unpack(a, 2 * ax + 1, buf), 0, "%s", err_msg());
    free(buf);
}

static void setup(struct sim3 *t, const struct prop_params *p, const struct medium *m, int ax, int cut)
{
    static struct sl_device dev;
    dev = test_cpu();
    t->dev = &dev;
    t->ax = ax;
    const struct prop_model pm = model_of(m);
    cr_assert_eq(prop_create(&dev, p, &pm, &t->s[0]), 0, "%s", err_msg());
    /* the whole grid's CPML speed: its fastest qP speed (tti_model_check) */
    const struct tti_model tm = {.vpz = m->v[0], .eps = m->v[1], .delta = m->v[2], .theta = m->v[3], .phi = m->v[4]};
    double vmax = 0;
    cr_assert_eq(tti_model_check(&tm, m->n, p->tti_sigma, &vmax, NULL), 0, "%s", err_msg());
    float *init = malloc(m->n * sizeof *init);
    srand(5);
    for (size_t i = 0; i < m->n; i++)
        init[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    cr_assert_eq(prop_copy_in(t->s[0], false, init), 0);
    cr_assert_eq(prop_copy_in(t->s[0], true, init), 0);
    for (int h = 0; h < 2; h++) {
        struct prop_params hp = half_params(p, ax, cut, h, vmax);
        float *sv[5];
        for (int i = 0; i < 5; i++)
            sv[i] = sub_volume(&p->grid, &hp.grid, m->v[i]);
        struct prop_model sm = {.vp = sv[0], .epsilon = sv[1], .delta = sv[2], .theta = sv[3], .phi = sv[4]};
        cr_assert_eq(prop_create(&dev, &hp, &sm, &t->s[1 + h]), 0, "%s", err_msg());
        for (int i = 0; i < 5; i++)
            free(sv[i]);
        cr_assert(prop_has_step_stage(t->s[1 + h]));
        float *si = sub_volume(&p->grid, &hp.grid, init);
        cr_assert_eq(prop_copy_in(t->s[1 + h], false, si), 0);
        cr_assert_eq(prop_copy_in(t->s[1 + h], true, si), 0);
        free(si);
    }
    free(init);
    bool random = false;
    for (int f = 0; f < 6; f++)
        random = random || p->grid.face[f] == R;
    if (random) {
        /* the whole grid's random layers in every piece (absorbing off, as RTM runs them) */
        float vmin = m->v[0][0];
        for (size_t i = 0; i < m->n; i++)
            vmin = m->v[0][i] < vmin ? m->v[0][i] : vmin;
        const struct random_boundary rb = {.ramp = RB_RAMP_QUADRATIC, .range = RB_RANGE_FULL, .width = 4,
                                           .seed = 77, .vstable = 0.5 * random_boundary_vstable(p->op.order,
                                                                                                p->dt, p->grid.d),
                                           .vmin = vmin};
        for (int k = 0; k < 3; k++) {
            cr_assert_eq(prop_randomize_layers(t->s[k], &rb, 9), 0, "%s", err_msg());
            prop_set_absorbing(t->s[k], false);
        }
    }
    /* a source 2.4 cells before the cut, trilinear: its support inside the low half */
    double xyz[3];
    for (int a = 0; a < 3; a++)
        xyz[a] = p->grid.o[a] + (a == 1 && p->grid.n[1] == 1 ? 0 : 0.41 * p->grid.n[a] * p->grid.d[a]);
    xyz[ax] = p->grid.o[ax] + (cut - 2.4) * p->grid.d[ax];
    cr_assert_eq(prop_points_create(t->s[0], xyz, 1, PROP_INTERP_TRILINEAR, &t->src[0]), 0, "%s", err_msg());
    cr_assert_eq(prop_points_create(t->s[1], xyz, 1, PROP_INTERP_TRILINEAR, &t->src[1]), 0, "%s", err_msg());
    exchange(t->s[1], t->s[2], ax);
}

static void teardown(struct sim3 *t)
{
    prop_points_destroy(t->s[0], t->src[0]);
    prop_points_destroy(t->s[1], t->src[1]);
    for (int k = 0; k < 3; k++)
        prop_destroy(t->s[k]);
}

/* NSTEP steps of the whole grid and of the halves (PRODUCTS: with the mid-step exchange;
 * else whole steps and only the fields' exchange, the acoustic protocol). */
static void run(struct sim3 *t, bool products)
{
    for (int it = 0; it < NSTEP; it++) {
        const float amp = (float)sin(0.4 * it) * 1e3f;
        cr_assert_eq(prop_step(t->s[0]), 0, "%s", err_msg());
        if (products) {
            for (int h = 1; h < 3; h++)
                cr_assert_eq(prop_step_stage(t->s[h], PROP_STAGE_PASS1), 0, "%s", err_msg());
            exchange(t->s[1], t->s[2], t->ax);
            for (int h = 1; h < 3; h++)
                cr_assert_eq(prop_step_stage(t->s[h], PROP_STAGE_UPDATE), 0, "%s", err_msg());
        } else {
            for (int h = 1; h < 3; h++)
                cr_assert_eq(prop_step(t->s[h]), 0, "%s", err_msg());
        }
        cr_assert_eq(prop_inject(t->s[0], t->src[0], &amp, 1, 1.0f, PROP_INJECT_PHYSICAL), 0, "%s", err_msg());
        cr_assert_eq(prop_inject(t->s[1], t->src[1], &amp, 1, 1.0f, PROP_INJECT_PHYSICAL), 0, "%s", err_msg());
        exchange(t->s[1], t->s[2], t->ax);
    }
}

/* Points of the halves' interiors (both levels) that differ from the whole grid's. */
static size_t differing(struct sim3 *t)
{
    const struct prop_grid *w = &prop_params_of(t->s[0])->grid;
    const size_t nn = (size_t)w->n[0] * w->n[1] * w->n[2];
    float *fw = malloc(nn * sizeof *fw), *fs = malloc(nn * sizeof *fs);
    size_t bad = 0;
    double mass = 0;
    for (int lev = 0; lev < 2; lev++) {
        cr_assert_eq(prop_copy_out(t->s[0], lev, fw), 0);
        for (int h = 1; h < 3; h++) {
            const struct prop_grid *g = &prop_params_of(t->s[h])->grid;
            cr_assert_eq(prop_copy_out(t->s[h], lev, fs), 0);
            float *sw = sub_volume(w, g, fw);
            const size_t n = (size_t)g->n[0] * g->n[1] * g->n[2];
            for (size_t i = 0; i < n; i++) {
                bad += memcmp(&sw[i], &fs[i], sizeof(float)) != 0;
                mass += fabs(fs[i]);
            }
            free(sw);
        }
    }
    cr_assert(isfinite(mass) && mass > 0, "fields zero or not finite");
    free(fw);
    free(fs);
    return bad;
}

static void one_case(int order, const int kind[6], int ax, int cut)
{
    struct prop_params p = whole_params(order, kind);
    struct medium m = medium(&p);
    const struct tti_model tm = {.vpz = m.v[0], .eps = m.v[1], .delta = m.v[2], .theta = m.v[3], .phi = m.v[4]};
    p.dt = 0.8 * tti_dt_max_model(&tm, m.n, order, p.grid.d, p.grid.n[1] == 1, p.tti_sigma);
    cr_assert_gt(p.dt, 0);
    struct sim3 t;
    setup(&t, &p, &m, ax, cut);
    run(&t, true);
    size_t bad = differing(&t);
    cr_assert_eq(bad, 0, "order %d, cut along %c at %d: %zu points differ from the whole grid", order, "xyz"[ax],
                 cut, bad);
    teardown(&t);
    for (int i = 0; i < 5; i++)
        free(m.v[i]);
}

static const int CPML3[6] = {C, C, C, C, C, C}, FREE3[6] = {C, C, C, C, F, C}, CPML2[6] = {C, C, N, N, C, C},
                 FREE2[6] = {C, C, N, N, F, C};

Test(tti_subdomain, cpml_3d_cuts_x_y_z_orders_2_to_8, .timeout = 120)
{
    for (int order = 2; order <= 8; order += 2) {
        one_case(order, CPML3, 2, 9);
        one_case(order, CPML3, 1, 7);
        one_case(order, CPML3, 0, 11);
    }
}

Test(tti_subdomain, free_surface_3d_cuts_z_and_y, .timeout = 120)
{
    for (int order = 4; order <= 8; order += 4) {
        one_case(order, FREE3, 2, 8);
        one_case(order, FREE3, 1, 8);
    }
}

Test(tti_subdomain, two_d_cpml_and_free_surface_orders_2_to_16, .timeout = 120)
{
    for (int order = 2; order <= 16; order += 2) {
        one_case(order, CPML2, 2, 9);
        one_case(order, FREE2, 0, 10);
    }
}

static const int RAND3[6] = {R, R, R, R, R, R}, RANDF3[6] = {R, R, R, R, F, R};

Test(tti_subdomain, random_layers_cut_orders_4_8, .timeout = 120)
{
    for (int order = 4; order <= 8; order += 4) {
        one_case(order, RAND3, 2, 9);
        one_case(order, RAND3, 1, 8);
        one_case(order, RANDF3, 2, 7);
    }
}

/* The control: without the products' exchange the halves go wrong next to the cut. */
Test(tti_subdomain, fields_exchange_alone_is_not_enough, .timeout = 60)
{
    struct prop_params p = whole_params(8, CPML3);
    struct medium m = medium(&p);
    const struct tti_model tm = {.vpz = m.v[0], .eps = m.v[1], .delta = m.v[2], .theta = m.v[3], .phi = m.v[4]};
    p.dt = 0.8 * tti_dt_max_model(&tm, m.n, 8, p.grid.d, false, p.tti_sigma);
    struct sim3 t;
    setup(&t, &p, &m, 2, 9);
    run(&t, false);
    cr_assert_gt(differing(&t), 0);
    teardown(&t);
    for (int i = 0; i < 5; i++)
        free(m.v[i]);
}

Test(tti_subdomain, stages_refused_out_of_order, .timeout = 30)
{
    struct prop_params p = whole_params(4, CPML2);
    struct medium m = medium(&p);
    const struct prop_model pm = model_of(&m);
    p.dt = 1e-4;
    struct sl_device dev = test_cpu();
    struct prop *s = NULL;
    cr_assert_eq(prop_create(&dev, &p, &pm, &s), 0, "%s", err_msg());
    cr_assert_eq(prop_halo_count(s, 4), 0, "no HALO face, no halo");
    cr_assert_eq(prop_halo_pack(s, 4, NULL), -EINVAL);
    cr_assert_eq(prop_step_stage(s, PROP_STAGE_UPDATE), -EINVAL, "an update before pass 1");
    cr_assert(strstr(err_msg(), "pass 1"), "%s", err_msg());
    cr_assert_eq(prop_step_stage(s, PROP_STAGE_PASS1), 0, "%s", err_msg());
    cr_assert_eq(prop_step_stage(s, PROP_STAGE_PASS1), -EINVAL, "pass 1 twice");
    cr_assert_eq(prop_step(s), -EINVAL, "a whole step inside a staged one");
    cr_assert_eq(prop_step_stage(s, PROP_STAGE_UPDATE), 0, "%s", err_msg());
    cr_assert_eq(prop_step_index(s), 1);
    cr_assert_eq(prop_step_stage(s, 7), -EINVAL);
    prop_destroy(s);
    /* acoustic: one exchange per step, no stages */
    p.physics = PROP_ACOUSTIC;
    cr_assert_eq(prop_create(&dev, &p, &pm, &s), 0, "%s", err_msg());
    cr_assert(!prop_has_step_stage(s));
    cr_assert_eq(prop_step_stage(s, PROP_STAGE_PASS1), -ENOTSUP);
    prop_destroy(s);
    for (int i = 0; i < 5; i++)
        free(m.v[i]);
}
