/* fused_case — a receiver and a source simulation as RTM's backward sweep holds them
 * (kernels/rtm_fused.h), for the fused step's tests on the CPU (tests/test_rtm_fused.c)
 * and on the GPU (tests/gpu/test_gpu_rtm_fused.c): q with CPML (or a free surface on
 * top), u either q's twin stepping back over the interior only (the boundary strategy)
 * or a simulation of its own with undamped layers of other velocities (random), both
 * with non-zero fields everywhere, layers and CPML memory included (a few forward steps
 * from random fields). */
#ifndef SEISLIVE_TESTS_FUSED_CASE_H
#define SEISLIVE_TESTS_FUSED_CASE_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/imaging.h"
#include "kernels/rtm_fused.h"
#include "kernels/stability.h"
#include "kernels/wave.h"
#include "stream/error.h"

enum { FC_BOUNDARY = 0, FC_RANDOM = 1 };

struct fused_case {
    const struct sl_device *dev;
    struct wave_sim *q, *u;
    struct imaging_box b;
    struct imaging_acc acc; /* device memory on a GPU */
    size_t cells;
};

static inline float fc_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 65536.0f - 0.5f;
}

/* Random interior fields into both levels of S (seed SEED), then STEPS forward steps. */
static inline void fc_fill(struct wave_sim *s, unsigned seed, int steps)
{
    const struct wave_layout *L = wave_layout(s);
    size_t n = (size_t)L->n[0] * L->n[1] * L->n[2];
    float *h = malloc(n * sizeof(float));
    cr_assert(h);
    for (int lev = 0; lev < 2; lev++) {
        for (size_t i = 0; i < n; i++)
            h[i] = fc_rand(&seed);
        cr_assert_eq(wave_copy_in(s, lev == 1, h), 0, "%s", err_msg());
    }
    free(h);
    for (int t = 0; t < steps; t++)
        cr_assert_eq(wave_step(s), 0, "%s", err_msg());
}

/* The case KIND (FC_BOUNDARY, FC_RANDOM) on DEV: 3D 26 x 18 x 22 or 2D (TWO_D) 40 x 1 x 30
 * interior points, 6 layers, ORDER, a free surface on top when FREE; accumulators for
 * condition COND (ill_s kept only when it needs it). */
static inline void fused_case_init(struct fused_case *c, const struct sl_device *dev, int kind, bool two_d,
                                   bool fs, int order, int cond)
{
    memset(c, 0, sizeof *c);
    c->dev = dev;
    struct wave_params p;
    memset(&p, 0, sizeof p);
    const int n[3] = {two_d ? 40 : 26, two_d ? 1 : 18, two_d ? 30 : 22};
    for (int a = 0; a < 3; a++) {
        p.n[a] = n[a];
        p.d[a] = 10.0;
    }
    p.order = order;
    for (int f = 0; f < 6; f++)
        p.pml[f] = 6;
    if (two_d) {
        p.face[2] = p.face[3] = WAVE_FACE_NONE;
        p.pml[2] = p.pml[3] = 0;
    }
    if (fs) {
        p.face[4] = WAVE_FACE_FREE;
        p.free_surface = true;
        p.pml[4] = 0;
    }
    p.pml_reflection = 1e-4;
    p.f_ref = 15.0;
    p.dt = 0.8 * stability_dt_max(order, p.d, 3000.0);
    size_t nv = (size_t)n[0] * n[1] * n[2];
    float *v = malloc(nv * sizeof(float));
    cr_assert(v);
    for (size_t i = 0; i < nv; i++)
        v[i] = 2000.0f + 1000.0f * (float)((i * 7919u) % 101u) / 100.0f;
    cr_assert_eq(wave_create(dev, &p, v, &c->q), 0, "%s", err_msg());
    if (kind == FC_BOUNDARY) {
        cr_assert_eq(wave_create_like(c->q, &c->u), 0, "%s", err_msg());
    } else {
        struct wave_params pr = p;
        for (int f = 0; f < 6; f++)
            if (wave_params_of(c->q)->face[f] == WAVE_FACE_CPML)
                pr.face[f] = WAVE_FACE_RANDOM;
        cr_assert_eq(wave_create(dev, &pr, v, &c->u), 0, "%s", err_msg());
        /* other velocities in the layers only, as the random boundary has */
        const struct wave_layout *L = wave_layout(c->u);
        size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
        float *vp = malloc(np * sizeof(float));
        cr_assert(vp);
        cr_assert_eq(wave_get_velocity_padded(c->u, vp), 0, "%s", err_msg());
        for (int k = 0; k < L->npad[2]; k++)
            for (int j = 0; j < L->npad[1]; j++)
                for (int i = 0; i < L->npad[0]; i++) {
                    bool in = i >= L->pml[0] && i < L->npad[0] - L->pml[1] && j >= L->pml[2] &&
                              j < L->npad[1] - L->pml[3] && k >= L->pml[4] && k < L->npad[2] - L->pml[5];
                    if (!in)
                        vp[((size_t)k * L->npad[1] + j) * L->npad[0] + i] *= 0.8f + 0.03f * (float)((i + 3 * j + 7 * k) % 11);
                }
        cr_assert_eq(wave_set_velocity_padded(c->u, vp, false), 0, "%s", err_msg());
        free(vp);
    }
    free(v);
    fc_fill(c->q, 11u, 5);
    fc_fill(c->u, 23u, 5);
    wave_swap(c->u); /* the reverse start: cur = u(N - 1), prev = u(N) */
    wave_set_reverse_interior(c->u, kind == FC_BOUNDARY);
    const struct wave_layout *L = wave_layout(c->q);
    for (int a = 0; a < 3; a++) {
        c->b.n[a] = L->n[a];
        c->b.off[a] = L->off[a];
    }
    c->b.pitch[0] = L->dim[0];
    c->b.pitch[1] = L->dim[1];
    c->cells = imaging_cells(&c->b);
    size_t fb = c->cells * sizeof(float);
    float **accs[3] = {&c->acc.num, &c->acc.ill_s, &c->acc.ill_r};
    const bool need[3] = {true, imaging_needs_source(cond) != 0, imaging_needs_receiver(cond) != 0};
    for (int i = 0; i < 3; i++)
        if (need[i]) {
            cr_assert_eq(dev_alloc(dev, fb, (void **)accs[i]), 0, "%s", err_msg());
            cr_assert_eq(dev_zero(dev, *accs[i], fb, NULL), 0, "%s", err_msg());
        }
}

static inline void fused_case_free(struct fused_case *c)
{
    dev_free(c->dev, c->acc.num);
    dev_free(c->dev, c->acc.ill_s);
    dev_free(c->dev, c->acc.ill_r);
    wave_destroy(c->q);
    wave_destroy(c->u);
}

/* Host copies of what a step changes: q's and u's two levels (whole allocated arrays)
 * and the accumulators kept; *N gets the floats.  Free with free(). */
static inline float *fc_state(struct fused_case *c, size_t *n)
{
    const size_t cnt = wave_layout(c->q)->count;
    *n = 4 * cnt + 3 * c->cells;
    float *h = calloc(*n, sizeof(float));
    cr_assert(h);
    const float *src[4] = {wave_cur(c->q), wave_prev(c->q), wave_cur(c->u), wave_prev(c->u)};
    cr_assert_eq(dev_sync(c->dev), 0, "%s", err_msg());
    for (int i = 0; i < 4; i++)
        cr_assert_eq(dev_copy(c->dev, h + i * cnt, src[i], cnt * sizeof(float), DEV_D2H, NULL), 0, "%s", err_msg());
    const float *acc[3] = {c->acc.num, c->acc.ill_s, c->acc.ill_r};
    for (int i = 0; i < 3; i++)
        if (acc[i])
            cr_assert_eq(dev_copy(c->dev, h + 4 * cnt + i * c->cells, acc[i], c->cells * sizeof(float), DEV_D2H, NULL),
                         0, "%s", err_msg());
    return h;
}

#endif
