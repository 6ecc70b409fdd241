/* Subdomains: a grid cut in two along x, y or z, each half a simulation of its own with
 * a HALO face at the cut, stepped side by side with the halo planes copied by hand
 * (wave_halo_pack on one side, wave_halo_unpack on the other, after every step) gives
 * bit for bit the whole grid's fields -- absorbing layers included -- for each outer face
 * kind (CPML, a rigid wall, a free surface on top, randomized layers, 2D's NONE faces)
 * and every order 2..16, forward and reverse, with a source near the cut.  Also: the
 * face checks, explicit faces equal the old pml/free_surface meaning bit for bit, and
 * the propagator interface carries the faces and subdomains through. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "kernels/backend.h"
#include "kernels/propagator.h"
#include "kernels/random_boundary.h"
#include "kernels/stability.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tests/wave_support.h"

enum { C = WAVE_FACE_CPML, F = WAVE_FACE_FREE, R = WAVE_FACE_RANDOM, N = WAVE_FACE_NONE, H = WAVE_FACE_HALO };

static const int NSTEP = 40, NREV = 12;

/* A whole grid with outer faces KIND (2D when the y faces are NONE).  Layer widths differ
 * per face, and ymax of a CPML grid is a rigid wall (width 0). */
static struct wave_params whole_params(int order, const int kind[6])
{
    bool two_d = kind[2] == N;
    struct wave_params p = {.n = {22, two_d ? 1 : 18, 20}, .d = {10, 12, 9}, .o = {100, -40, 0},
                            .order = order, .pml_reflection = 1e-4, .f_ref = 12};
    const int width[6] = {5, 7, 6, kind[0] == C ? 0 : 4, 8, 6};
    for (int f = 0; f < 6; f++) {
        p.face[f] = kind[f];
        p.pml[f] = kind[f] == C || kind[f] == R ? width[f] : 0;
    }
    p.dt = 0.8 * stability_dt_max(order, p.d, 2600);
    return p;
}

/* A heterogeneous velocity (1800..2600 m/s) on the interior of P. */
static float *velocity(const struct wave_params *p)
{
    size_t nn = (size_t)p->n[0] * p->n[1] * p->n[2];
    float *v = malloc(nn * sizeof *v);
    srand(11);
    for (size_t i = 0; i < nn; i++)
        v[i] = 1800.0f + 800.0f * (float)rand() / (float)RAND_MAX;
    return v;
}

static double vmax_of(const float *v, size_t n)
{
    float m = 0;
    for (size_t i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

/* Half SIDE (0: points [0, cut), 1: [cut, n)) of P along AX, with a HALO face at the cut;
 * the whole model's vmax for the CPML; pml[] kept (a HALO face's is the whole grid's). */
static struct wave_params half_params(const struct wave_params *p, int ax, int cut, int side, double vmax)
{
    struct wave_params h = *p;
    for (int a = 0; a < 3; a++)
        h.global_n[a] = p->n[a];
    h.n[ax] = side ? p->n[ax] - cut : cut;
    h.origin[ax] = side ? cut : 0;
    h.o[ax] = p->o[ax] + h.origin[ax] * p->d[ax];
    h.face[2 * ax + (side ? 0 : 1)] = H;
    h.vmax_cpml = vmax;
    return h;
}

/* The part of the whole interior V that the subdomain SP holds. */
static float *sub_volume(const struct wave_params *p, const struct wave_params *sp, const float *v)
{
    float *o = malloc((size_t)sp->n[0] * sp->n[1] * sp->n[2] * sizeof *o);
    for (int k = 0; k < sp->n[2]; k++)
        for (int j = 0; j < sp->n[1]; j++)
            memcpy(o + ((size_t)k * sp->n[1] + j) * sp->n[0],
                   v + ((size_t)(k + sp->origin[2]) * p->n[1] + j + sp->origin[1]) * p->n[0] + sp->origin[0],
                   sp->n[0] * sizeof *o);
    return o;
}

/* Copy the halo planes across the cut along AX: A's high face to B's low face and back. */
static void exchange(struct wave_sim *a, struct wave_sim *b, int ax)
{
    size_t na = wave_halo_count(a, 2 * ax + 1), nb = wave_halo_count(b, 2 * ax);
    cr_assert_gt(na, 0);
    cr_assert_eq(na, nb, "halo counts %zu and %zu", na, nb);
    float *buf = malloc(na * sizeof *buf);
    cr_assert_eq(wave_halo_pack(a, 2 * ax + 1, buf), 0, "%s", err_msg());
    cr_assert_eq(wave_halo_unpack(b, 2 * ax, buf), 0, "%s", err_msg());
    cr_assert_eq(wave_halo_pack(b, 2 * ax, buf), 0, "%s", err_msg());
    cr_assert_eq(wave_halo_unpack(a, 2 * ax + 1, buf), 0, "%s", err_msg());
    free(buf);
}

/* Padded fields of SUB equal the same cells of WHOLE, bit for bit (cur and prev); the
 * number of differing rows into *BAD when BAD is given (no assertion then). */
static void compare(struct wave_sim *whole, struct wave_sim *sub, const char *what, size_t *bad)
{
    const struct wave_layout *Lw = wave_layout(whole), *Ls = wave_layout(sub);
    const struct wave_params *sp = wave_params_of(sub);
    int sh[3];
    for (int a = 0; a < 3; a++)
        sh[a] = sp->origin[a] + Lw->pml[2 * a] - Ls->pml[2 * a];
    size_t nbad = 0;
    double mass = 0;
    for (int lev = 0; lev < 2; lev++) {
        const float *fw = lev ? wave_prev(whole) : wave_cur(whole);
        const float *fs = lev ? wave_prev(sub) : wave_cur(sub);
        for (int k = 0; k < Ls->npad[2]; k++)
            for (int j = 0; j < Ls->npad[1]; j++) {
                const float *rs = fs + (size_t)(k + Ls->pad_off[2]) * Ls->stride_z +
                                  (size_t)(j + Ls->pad_off[1]) * Ls->stride_y + Ls->pad_off[0];
                const float *rw = fw + (size_t)(k + sh[2] + Lw->pad_off[2]) * Lw->stride_z +
                                  (size_t)(j + sh[1] + Lw->pad_off[1]) * Lw->stride_y + sh[0] + Lw->pad_off[0];
                if (memcmp(rs, rw, Ls->npad[0] * sizeof *rs)) {
                    if (!bad)
                        cr_assert_fail("%s: level %d row (j %d, k %d) differs from the whole grid", what, lev, j, k);
                    nbad++;
                }
                for (int i = 0; i < Ls->npad[0]; i++)
                    mass += fabs(rs[i]);
            }
    }
    if (bad)
        *bad = nbad;
    else
        cr_assert_gt(mass, 0, "%s: fields are zero", what);
}

static struct random_boundary boundary(const struct wave_params *p, const float *v)
{
    size_t nn = (size_t)p->n[0] * p->n[1] * p->n[2];
    float vmin = v[0];
    for (size_t i = 0; i < nn; i++)
        vmin = v[i] < vmin ? v[i] : vmin;
    struct random_boundary rb = {.ramp = RAMP_QUADRATIC, .range = RRANGE_FULL, .width = 4, .seed = 77,
                                 .vstable = random_boundary_vstable(p->order, p->dt, p->d), .vmin = vmin};
    return rb;
}

struct sim3 {
    struct wave_sim *s[3]; /* whole, low half, high half */
    struct wave_points *src[3];
};

/* The whole grid and its two halves along AX; the same random initial field in both time
 * levels, randomized layers for RANDOM faces, a source 5.3 cells before the cut (its sinc
 * support inside the low half). */
static void setup(struct sim3 *t, const struct wave_params *p, const float *v, int ax, int cut)
{
    struct sl_device dev = test_cpu();
    static struct sl_device keep;
    keep = dev;
    size_t nn = (size_t)p->n[0] * p->n[1] * p->n[2];
    double vmax = vmax_of(v, nn);
    struct wave_params hp[2] = {half_params(p, ax, cut, 0, vmax), half_params(p, ax, cut, 1, vmax)};
    cr_assert_eq(wave_create(&keep, p, v, &t->s[0]), 0, "%s", err_msg());
    for (int h = 0; h < 2; h++) {
        float *sv = sub_volume(p, &hp[h], v);
        cr_assert_eq(wave_create(&keep, &hp[h], sv, &t->s[1 + h]), 0, "%s", err_msg());
        free(sv);
    }
    float *init = malloc(nn * sizeof *init);
    srand(5);
    for (size_t i = 0; i < nn; i++)
        init[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    cr_assert_eq(wave_copy_in(t->s[0], false, init), 0);
    cr_assert_eq(wave_copy_in(t->s[0], true, init), 0);
    for (int h = 0; h < 2; h++) {
        float *si = sub_volume(p, &hp[h], init);
        cr_assert_eq(wave_copy_in(t->s[1 + h], false, si), 0);
        cr_assert_eq(wave_copy_in(t->s[1 + h], true, si), 0);
        free(si);
    }
    free(init);
    bool random = false;
    for (int f = 0; f < 6; f++)
        random = random || p->face[f] == R;
    if (random) {
        struct random_boundary rb = boundary(p, v);
        const struct wave_layout *L = wave_layout(t->s[0]);
        size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2], changed = 0;
        float *before = malloc(np * sizeof *before), *after = malloc(np * sizeof *after);
        cr_assert_eq(wave_get_velocity_padded(t->s[0], before), 0);
        for (int k = 0; k < 3; k++) {
            cr_assert(!wave_cpml_enabled(t->s[k]), "a RANDOM face starts with the CPML off");
            cr_assert_eq(wave_randomize_layers(t->s[k], &rb, 9), 0, "%s", err_msg());
        }
        cr_assert_eq(wave_get_velocity_padded(t->s[0], after), 0);
        for (size_t i = 0; i < np; i++)
            changed += before[i] != after[i];
        cr_assert_gt(changed, np / 10, "the random layers changed only %zu of %zu cells", changed, np);
        free(before);
        free(after);
    }
    double xyz[3];
    for (int a = 0; a < 3; a++)
        xyz[a] = p->o[a] + 0.5 * (p->n[a] - 1) * p->d[a] + 0.37 * p->d[a] * (p->n[a] > 1);
    xyz[ax] = p->o[ax] + (cut - 5.3) * p->d[ax];
    cr_assert_eq(wave_points_create(t->s[0], xyz, 1, WAVE_INTERP_SINC, &t->src[0]), 0, "%s", err_msg());
    cr_assert_eq(wave_points_create(t->s[1], xyz, 1, WAVE_INTERP_SINC, &t->src[1]), 0, "%s", err_msg());
    t->src[2] = NULL;
}

static void teardown(struct sim3 *t)
{
    for (int k = 0; k < 3; k++) {
        wave_points_destroy(t->src[k]);
        wave_destroy(t->s[k]);
    }
}

/* Step all three (forward or reverse), inject the source into the whole grid and the low
 * half, then exchange the halves' halo planes (unless NO_EXCHANGE). */
static void advance(struct sim3 *t, int ax, int it, double dt, bool reverse, bool no_exchange)
{
    float a = (float)(100.0 * wavelet_ricker(it * dt, 25, wavelet_ricker_delay(25)));
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(reverse ? wave_step_reverse(t->s[k]) : wave_step(t->s[k]), 0);
        if (t->src[k])
            cr_assert_eq(wave_inject(t->s[k], t->src[k], &a, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
    }
    if (!no_exchange)
        exchange(t->s[1], t->s[2], ax);
}

static void padded_velocity_equal(struct wave_sim *whole, struct wave_sim *sub)
{
    const struct wave_layout *Lw = wave_layout(whole), *Ls = wave_layout(sub);
    const struct wave_params *sp = wave_params_of(sub);
    size_t nw = (size_t)Lw->npad[0] * Lw->npad[1] * Lw->npad[2], ns = (size_t)Ls->npad[0] * Ls->npad[1] * Ls->npad[2];
    float *vw = malloc(nw * sizeof *vw), *vs = malloc(ns * sizeof *vs);
    cr_assert_eq(wave_get_velocity_padded(whole, vw), 0);
    cr_assert_eq(wave_get_velocity_padded(sub, vs), 0);
    int sh[3];
    for (int a = 0; a < 3; a++)
        sh[a] = sp->origin[a] + Lw->pml[2 * a] - Ls->pml[2 * a];
    for (int k = 0; k < Ls->npad[2]; k++)
        for (int j = 0; j < Ls->npad[1]; j++)
            cr_assert_eq(memcmp(vs + ((size_t)k * Ls->npad[1] + j) * Ls->npad[0],
                                vw + ((size_t)(k + sh[2]) * Lw->npad[1] + j + sh[1]) * Lw->npad[0] + sh[0],
                                Ls->npad[0] * sizeof *vs),
                         0, "padded velocity row (j %d, k %d) differs from the whole grid's", j, k);
    free(vw);
    free(vs);
}

/* Every order 2..16 and every axis that is not NONE: forward NSTEP steps, compare, then
 * NREV reverse steps (no CPML: as RTM's reverse runs), compare again. */
static void split_all(const int kind[6], const char *name)
{
    for (int order = 2; order <= 16; order += 2) {
        struct wave_params p = whole_params(order, kind);
        float *v = velocity(&p);
        for (int ax = 0; ax < 3; ax++) {
            if (kind[2 * ax] == N)
                continue;
            int cut = p.n[ax] / 2;
            struct sim3 t;
            setup(&t, &p, v, ax, cut);
            padded_velocity_equal(t.s[0], t.s[1]);
            padded_velocity_equal(t.s[0], t.s[2]);
            cr_assert_eq(wave_strip_count(t.s[1]) + wave_strip_count(t.s[2]), wave_strip_count(t.s[0]),
                         "%s order %d axis %d: the halves' strips do not add up to the whole's", name, order, ax);
            exchange(t.s[1], t.s[2], ax);
            for (int it = 0; it < NSTEP; it++)
                advance(&t, ax, it, p.dt, false, false);
            char what[96];
            for (int h = 1; h <= 2; h++) {
                snprintf(what, sizeof what, "%s order %d cut along %c, half %d, forward", name, order, "xyz"[ax], h);
                compare(t.s[0], t.s[h], what, NULL);
            }
            for (int k = 0; k < 3; k++)
                wave_swap(t.s[k]);
            for (int it = NSTEP - 1; it >= NSTEP - NREV; it--)
                advance(&t, ax, it, p.dt, true, false);
            for (int h = 1; h <= 2; h++) {
                snprintf(what, sizeof what, "%s order %d cut along %c, half %d, reverse", name, order, "xyz"[ax], h);
                compare(t.s[0], t.s[h], what, NULL);
            }
            teardown(&t);
        }
        free(v);
    }
    fprintf(stderr, "subdomain %s: orders 2..16, every axis: bitwise the whole grid\n", name);
}

Test(subdomain, cpml_faces_and_a_rigid_wall, .timeout = 240)
{
    split_all((const int[6]){C, C, C, C, C, C}, "cpml");
}

Test(subdomain, free_surface_on_top, .timeout = 240)
{
    split_all((const int[6]){C, C, C, C, F, C}, "free surface");
}

Test(subdomain, random_layers, .timeout = 240)
{
    split_all((const int[6]){R, R, R, R, R, R}, "random");
}

Test(subdomain, random_layers_free_surface, .timeout = 240)
{
    split_all((const int[6]){R, R, R, R, F, R}, "random + free surface");
}

Test(subdomain, two_d_cpml, .timeout = 120)
{
    split_all((const int[6]){C, C, N, N, C, C}, "2D cpml");
}

Test(subdomain, two_d_free_surface, .timeout = 120)
{
    split_all((const int[6]){C, C, N, N, F, C}, "2D free surface");
}

Test(subdomain, two_d_random, .timeout = 120)
{
    split_all((const int[6]){R, R, N, N, R, R}, "2D random");
}

/* The comparison can fail: without the exchange the halves drift from the whole grid
 * (their halos stay as they were), in the rows next to the cut. */
Test(subdomain, without_exchange_the_halves_differ)
{
    const int kind[6] = {C, C, C, C, F, C};
    struct wave_params p = whole_params(8, kind);
    float *v = velocity(&p);
    struct sim3 t;
    setup(&t, &p, v, 0, p.n[0] / 2);
    exchange(t.s[1], t.s[2], 0);
    for (int it = 0; it < 5; it++)
        advance(&t, 0, it, p.dt, false, it == 2);
    size_t bad[2];
    compare(t.s[0], t.s[1], "low half", &bad[0]);
    compare(t.s[0], t.s[2], "high half", &bad[1]);
    cr_assert_gt(bad[0], 0);
    cr_assert_gt(bad[1], 0);
    teardown(&t);
    free(v);
}

/* Explicit faces are the old meaning of pml[] and free_surface, bit for bit: CPML faces
 * and a FREE top against AUTO with free_surface; RANDOM faces against AUTO with the CPML
 * switched off by hand (what RTM's random strategy did). */
Test(subdomain, explicit_faces_equal_auto)
{
    struct sl_device dev = test_cpu();
    for (int order = 4; order <= 12; order += 8)
        for (int k = 0; k < 2; k++) {
            bool random = k == 1;
            const int kind[6] = {random ? R : C, random ? R : C, random ? R : C, random ? R : C, F,
                                 random ? R : C};
            struct wave_params pe = whole_params(order, kind);
            struct wave_params pa = pe;
            memset(pa.face, 0, sizeof pa.face);
            pa.free_surface = true;
            float *v = velocity(&pe);
            struct wave_sim *se, *sa;
            cr_assert_eq(wave_create(&dev, &pe, v, &se), 0, "%s", err_msg());
            cr_assert_eq(wave_create(&dev, &pa, v, &sa), 0, "%s", err_msg());
            cr_assert(wave_cpml_enabled(sa));
            cr_assert_eq(wave_cpml_enabled(se), !random);
            if (random) {
                wave_set_cpml(sa, false);
                struct random_boundary rb = boundary(&pe, v);
                cr_assert_eq(wave_randomize_layers(se, &rb, 4), 0);
                cr_assert_eq(wave_randomize_layers(sa, &rb, 4), 0);
            }
            cr_assert(wave_params_of(sa)->free_surface && wave_params_of(sa)->face[4] == F);
            cr_assert_eq(wave_params_of(sa)->face[0], C, "AUTO resolves to CPML");
            const double xyz[3] = {180, 61, 44};
            struct wave_points *qe, *qa;
            cr_assert_eq(wave_points_create(se, xyz, 1, WAVE_INTERP_SINC, &qe), 0);
            cr_assert_eq(wave_points_create(sa, xyz, 1, WAVE_INTERP_SINC, &qa), 0);
            for (int it = 0; it < 60; it++) {
                float a = (float)wavelet_ricker(it * pe.dt, 25, wavelet_ricker_delay(25));
                wave_step(se);
                wave_step(sa);
                wave_inject(se, qe, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL);
                wave_inject(sa, qa, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL);
            }
            cr_assert_eq(wave_state_bytes(se), wave_state_bytes(sa));
            size_t nb = wave_state_bytes(se);
            char *be = malloc(nb), *ba = malloc(nb);
            cr_assert_eq(wave_state_save(se, be, false), 0);
            cr_assert_eq(wave_state_save(sa, ba, false), 0);
            cr_assert_eq(memcmp(be, ba, nb), 0, "order %d %s: explicit faces differ from AUTO", order,
                         random ? "random" : "cpml");
            free(be);
            free(ba);
            wave_points_destroy(qe);
            wave_points_destroy(qa);
            wave_destroy(se);
            wave_destroy(sa);
            free(v);
        }
}

/* Each refused combination is refused with the reason. */
#define REFUSED(BASE, EDIT, SAYS)                                                                        \
    do {                                                                                                 \
        struct wave_params q = (BASE);                                                                   \
        EDIT;                                                                                            \
        cr_assert_eq(wave_params_check(&q), -EINVAL, "accepted: %s", #EDIT);                             \
        cr_assert_not_null(strstr(err_msg(), SAYS), "%s: message \"%s\"", #EDIT, err_msg());            \
    } while (0)

Test(subdomain, params_check_refuses_bad_faces)
{
    const struct wave_params g3 = whole_params(8, (const int[6]){C, C, C, C, C, C});
    const struct wave_params g2 = whole_params(8, (const int[6]){C, C, N, N, F, C});
    cr_assert_eq(wave_params_check(&g3), 0, "%s", err_msg());
    cr_assert_eq(wave_params_check(&g2), 0, "%s", err_msg());
    REFUSED(g3, q.face[1] = 9, "unknown kind");
    REFUSED(g3, q.face[0] = F, "free surface only on zmin");
    REFUSED(g3, (q.face[4] = F, q.pml[4] = 3), "pml[4] (zmin) = 3");
    REFUSED(g3, (q.free_surface = true, q.pml[4] = 0), "free_surface set but face zmin is cpml");
    REFUSED(g3, (q.face[0] = q.face[1] = N, q.pml[0] = q.pml[1] = 0), "only the y faces");
    REFUSED(g3, (q.face[2] = q.face[3] = N, q.pml[2] = q.pml[3] = 0), "need n[1] = 1");
    REFUSED(g2, q.face[3] = C, "both y faces NONE");
    REFUSED(g2, q.pml[2] = 4, "must be 0");
    REFUSED(g3, q.face[5] = R, "RANDOM faces beside CPML faces");
    REFUSED(g3, q.vmax_cpml = -1, "vmax_cpml");
    REFUSED(g3, q.origin[0] = 2, "without global_n");
    REFUSED(g3, q.face[1] = H, "global_n is not set");
    const struct wave_params lo = half_params(&g3, 0, 11, 0, 2600);
    cr_assert_eq(wave_params_check(&lo), 0, "%s", err_msg());
    REFUSED(lo, q.n[0] = 3, "must be >= order/2 = 4");
    REFUSED(lo, q.face[1] = C, "faces inside must be HALO");
    REFUSED(lo, q.face[0] = H, "lies on the whole grid's boundary");
    REFUSED(lo, q.origin[0] = 12, "do not lie in the whole grid");
    /* pack and unpack only on HALO faces */
    struct sl_device dev = test_cpu();
    float *v = velocity(&lo);
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &lo, v, &s), 0, "%s", err_msg());
    cr_assert_eq(wave_halo_count(s, 0), 0);
    cr_assert_eq(wave_halo_count(s, 7), 0);
    const struct wave_layout *L = wave_layout(s);
    cr_assert_eq(wave_halo_count(s, 1), (size_t)L->halo * L->npad[1] * L->npad[2]);
    cr_assert_eq(L->pml[1], 0, "no layers on a HALO face");
    cr_assert_eq(L->npad[0], lo.n[0] + lo.pml[0]);
    float buf[4];
    cr_assert_eq(wave_halo_pack(s, 0, buf), -EINVAL);
    cr_assert_not_null(strstr(err_msg(), "not a HALO face"), "%s", err_msg());
    cr_assert_eq(wave_halo_unpack(s, 3, buf), -EINVAL);
    wave_destroy(s);
    free(v);
}

/* The propagator interface maps its faces (PROP_FACE_*) and the subdomain onto the wave
 * parameters: two halves through prop_* equal the whole grid through prop_* bit for bit,
 * in 3D (free surface, split along z) and 2D (split along x). */
Test(subdomain, through_the_propagator_interface)
{
    struct sl_device dev = test_cpu();
    for (int two_d = 0; two_d < 2; two_d++) {
        const int n[3] = {20, two_d ? 1 : 16, 18}, ax = two_d ? 0 : 2, cut = n[ax] / 2;
        const double d[3] = {10, 10, 10}, o[3] = {0, 0, 0};
        struct prop_params pw;
        prop_params_init(&pw, n, d, o, 1e-3, 6);
        cr_assert_eq(pw.grid.face[2], two_d ? PROP_FACE_NONE : PROP_FACE_CPML);
        pw.grid.face[4] = PROP_FACE_FREE;
        pw.grid.width[4] = 0;
        pw.grid.width[1] = 9;
        cr_assert_eq(prop_check(&pw), 0, "%s", err_msg());
        struct wave_params wp = {.n = {n[0], n[1], n[2]}};
        float *v = velocity(&wp);
        size_t nn = (size_t)n[0] * n[1] * n[2];
        struct prop_model m = {.vp = v};
        struct prop *whole, *half[2];
        cr_assert_eq(prop_create(&dev, &pw, &m, &whole), 0, "%s", err_msg());
        float *sv[2];
        for (int h = 0; h < 2; h++) {
            struct prop_params ph = pw;
            for (int a = 0; a < 3; a++)
                ph.grid.global_n[a] = n[a];
            ph.grid.n[ax] = h ? n[ax] - cut : cut;
            ph.grid.origin[ax] = h ? cut : 0;
            ph.grid.o[ax] = ph.grid.origin[ax] * d[ax];
            ph.grid.face[2 * ax + !h] = PROP_FACE_HALO; /* width: the whole grid's there */
            ph.vmax_cpml = vmax_of(v, nn);
            struct wave_params wh = {.n = {ph.grid.n[0], ph.grid.n[1], ph.grid.n[2]},
                                     .origin = {ph.grid.origin[0], ph.grid.origin[1], ph.grid.origin[2]}};
            sv[h] = sub_volume(&wp, &wh, v);
            struct prop_model mh = {.vp = sv[h]};
            cr_assert_eq(prop_create(&dev, &ph, &mh, &half[h]), 0, "%s", err_msg());
        }
        cr_assert_eq(prop_halo_count(half[0], 2 * ax), 0);
        size_t nh = prop_halo_count(half[0], 2 * ax + 1);
        cr_assert_eq(nh, prop_halo_count(half[1], 2 * ax));
        float *buf = malloc(nh * sizeof *buf);
        const double xyz[3] = {55.5, 71.3, (cut - 4.6) * d[2]};
        struct prop_points *pts[2];
        cr_assert_eq(prop_points_create(whole, xyz, 1, PROP_INTERP_SINC, &pts[0]), 0, "%s", err_msg());
        cr_assert_eq(prop_points_create(half[0], xyz, 1, PROP_INTERP_SINC, &pts[1]), 0, "%s", err_msg());
        for (int it = 0; it < 80; it++) {
            float a = (float)wavelet_ricker(it * 1e-3, 20, wavelet_ricker_delay(20));
            cr_assert_eq(prop_step(whole), 0);
            cr_assert_eq(prop_step(half[0]), 0);
            cr_assert_eq(prop_step(half[1]), 0);
            cr_assert_eq(prop_inject(whole, pts[0], &a, 1, 1.0f, PROP_INJECT_PHYSICAL), 0);
            cr_assert_eq(prop_inject(half[0], pts[1], &a, 1, 1.0f, PROP_INJECT_PHYSICAL), 0);
            cr_assert_eq(prop_halo_pack(half[0], 2 * ax + 1, buf), 0, "%s", err_msg());
            cr_assert_eq(prop_halo_unpack(half[1], 2 * ax, buf), 0, "%s", err_msg());
            cr_assert_eq(prop_halo_pack(half[1], 2 * ax, buf), 0, "%s", err_msg());
            cr_assert_eq(prop_halo_unpack(half[0], 2 * ax + 1, buf), 0, "%s", err_msg());
        }
        float *fw = malloc(nn * sizeof *fw), *fh = malloc(nn * sizeof *fh);
        cr_assert_eq(prop_copy_out(whole, false, fw), 0);
        double mass = 0;
        for (int h = 0; h < 2; h++) {
            struct wave_params wh = {.n = {n[0], n[1], n[2]}};
            wh.n[ax] = h ? n[ax] - cut : cut;
            wh.origin[ax] = h ? cut : 0;
            cr_assert_eq(prop_copy_out(half[h], false, fh), 0);
            float *part = sub_volume(&wp, &wh, fw);
            size_t nh3 = (size_t)wh.n[0] * wh.n[1] * wh.n[2];
            cr_assert_eq(memcmp(part, fh, nh3 * sizeof *fh), 0, "%s half %d differs from the whole grid",
                         two_d ? "2D" : "3D", h);
            for (size_t i = 0; i < nh3; i++)
                mass += fabs(fh[i]);
            free(part);
        }
        cr_assert_gt(mass, 0);
        prop_points_destroy(whole, pts[0]);
        prop_points_destroy(half[0], pts[1]);
        prop_destroy(whole);
        for (int h = 0; h < 2; h++) {
            prop_destroy(half[h]);
            free(sv[h]);
        }
        free(buf);
        free(fw);
        free(fh);
        free(v);
    }
}
