/* A step in two parts (kernels/propagator.h: prop_step_part; kernels/wave.h:
 * wave_step_part): the cut slabs first, then the rest, gives bit for bit what one
 * wave_step gives -- both time levels over the whole allocated arrays, the CPML memory
 * (the full state) -- for subdomains with HALO faces on one or both sides of z, y and x,
 * beside every other face kind (CPML, a rigid wall, a free surface, random layers, 2D's
 * NONE faces), orders 2..16, with a source injected and the neighbour's planes (random
 * values, the same for both) unpacked into the halo every step.  And the planes
 * wave_halo_pack sends after the first part are already the whole step's.  This is what
 * the decomposed model job relies on to run the halo exchange beside the interior
 * (stream/decompose_model.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/propagator.h"
#include "kernels/stability.h"
#include "kernels/wave.h"
#include "stream/error.h"
#include "tests/wave_support.h"

enum { C = WAVE_FACE_CPML, F = WAVE_FACE_FREE, R = WAVE_FACE_RANDOM, N = WAVE_FACE_NONE, H = WAVE_FACE_HALO };

static const int NSTEP = 14;

/* A subdomain of a whole grid whose faces are KIND with H where it is cut: each cut side
 * gives 5 points to the neighbour beyond it. */
static struct wave_params sub_params(int order, const int kind[6])
{
    const bool two_d = kind[2] == N;
    const int whole[3] = {24, two_d ? 1 : 20, 22};
    struct wave_params p = {.d = {10, 12, 9}, .o = {100, -40, 0}, .order = order, .pml_reflection = 1e-4,
                            .f_ref = 12, .vmax_cpml = 2600};
    const int width[6] = {5, 7, 6, 0, 8, 6}; /* ymax: a rigid wall where it is CPML */
    for (int a = 0; a < 3; a++) {
        p.n[a] = whole[a];
        p.global_n[a] = whole[a];
    }
    for (int f = 0; f < 6; f++) {
        p.face[f] = kind[f];
        p.pml[f] = kind[f] == C || kind[f] == R || kind[f] == H ? width[f] : 0;
        if (kind[f] == H) {
            p.n[f / 2] -= 5;
            if (f % 2 == 0)
                p.origin[f / 2] = 5;
        }
    }
    for (int a = 0; a < 3; a++)
        p.o[a] += p.origin[a] * p.d[a];
    p.free_surface = kind[4] == F;
    p.dt = 0.8 * stability_dt_max(order, p.d, 2600);
    return p;
}

static float *velocity(const struct wave_params *p)
{
    size_t nn = (size_t)p->n[0] * p->n[1] * p->n[2];
    float *v = malloc(nn * sizeof *v);
    srand(7);
    for (size_t i = 0; i < nn; i++)
        v[i] = 1800.0f + 800.0f * (float)rand() / (float)RAND_MAX;
    return v;
}

static void same_state(struct wave_sim *a, struct wave_sim *b, const char *what, int it)
{
    const size_t n = wave_layout(a)->count;
    cr_assert(!memcmp(wave_cur(a), wave_cur(b), n * sizeof(float)), "%s step %d: cur differs", what, it);
    cr_assert(!memcmp(wave_prev(a), wave_prev(b), n * sizeof(float)), "%s step %d: prev differs", what, it);
    size_t sb = wave_state_bytes(a);
    char *sa = malloc(sb), *sbuf = malloc(sb);
    cr_assert_eq(wave_state_save(a, sa, false), 0);
    cr_assert_eq(wave_state_save(b, sbuf, false), 0);
    cr_assert(!memcmp(sa, sbuf, sb), "%s step %d: the CPML memory or step index differs", what, it);
    free(sa);
    free(sbuf);
}

static void run_case(int order, const int kind[6], const char *what)
{
    struct sl_device dev = test_cpu();
    struct wave_params p = sub_params(order, kind);
    float *v = velocity(&p);
    struct wave_sim *a = NULL, *b = NULL;
    cr_assert_eq(wave_create(&dev, &p, v, &a), 0, "%s order %d: %s", what, order, err_msg());
    cr_assert_eq(wave_create(&dev, &p, v, &b), 0, "%s", err_msg());
    free(v);
    /* A source on a node of the first cut slab (2 planes in from the cut), 2 planes under
     * a free surface: B injects it right after the first part, as the decomposed job
     * does with the slabs' nodes (before their planes are sent), A after the whole step.
     * Under a free surface that is before the mirror of those cells: the parts must
     * mirror them before the injection, as the whole step does. */
    int node[3];
    for (int ax = 0; ax < 3; ax++)
        node[ax] = kind[2 * ax] == H ? 0 : kind[2 * ax + 1] == H ? p.n[ax] - 1 : p.n[ax] / 2;
    if (kind[4] == F)
        node[2] = 2;
    if (kind[2] == N)
        node[1] = 0;
    bool slab = false;
    for (int ax = 0; ax < 3; ax++)
        slab = slab || (kind[2 * ax] == H && node[ax] < order / 2) ||
               (kind[2 * ax + 1] == H && node[ax] >= p.n[ax] - order / 2);
    double src[3];
    for (int ax = 0; ax < 3; ax++)
        src[ax] = p.o[ax] + node[ax] * p.d[ax];
    struct wave_points *pa = NULL, *pb = NULL;
    cr_assert_eq(wave_points_create(a, src, 1, WAVE_INTERP_NEAREST, &pa), 0, "%s", err_msg());
    cr_assert_eq(wave_points_create(b, src, 1, WAVE_INTERP_NEAREST, &pb), 0, "%s", err_msg());
    size_t most = 0, any = 0;
    for (int f = 0; f < 6; f++) {
        size_t c = wave_halo_count(a, f);
        most = c > most ? c : most;
        any += c;
    }
    cr_assert_gt(any, 0, "%s: no HALO face", what);
    float *nb = malloc(most * sizeof *nb), *sa = malloc(most * sizeof *sa), *sb = malloc(most * sizeof *sb);
    srand(3);
    for (int it = 0; it < NSTEP; it++) {
        float amp = (float)(it % 5) - 2.0f;
        cr_assert_eq(wave_step(a), 0, "%s", err_msg());
        cr_assert_eq(wave_step_part(b, WAVE_PART_CUT), 0, "%s order %d: %s", what, order, err_msg());
        /* what the first part leaves in cur is what the neighbours get from the whole step */
        for (int f = 0; f < 6; f++) {
            size_t c = wave_halo_count(a, f);
            if (!c)
                continue;
            cr_assert_eq(wave_halo_pack(a, f, sa), 0);
            cr_assert_eq(wave_halo_pack(b, f, sb), 0);
            cr_assert(!memcmp(sa, sb, c * sizeof *sa), "%s order %d step %d: face %d's planes after the cut "
                      "slabs are not the whole step's", what, order, it, f);
        }
        if (slab)
            cr_assert_eq(wave_inject(b, pb, &amp, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        cr_assert_eq(wave_step_part(b, WAVE_PART_REST), 0, "%s", err_msg());
        if (!slab)
            cr_assert_eq(wave_inject(b, pb, &amp, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        cr_assert_eq(wave_inject(a, pa, &amp, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        for (int f = 0; f < 6; f++) {
            size_t c = wave_halo_count(a, f);
            for (size_t i = 0; i < c; i++)
                nb[i] = (float)rand() / (float)RAND_MAX - 0.5f;
            if (c) {
                cr_assert_eq(wave_halo_unpack(a, f, nb), 0);
                cr_assert_eq(wave_halo_unpack(b, f, nb), 0);
            }
        }
        same_state(a, b, what, it);
    }
    cr_assert_eq(wave_step_index(a), NSTEP);
    cr_assert_eq(wave_step_index(b), NSTEP);
    free(nb);
    free(sa);
    free(sb);
    wave_points_destroy(pa);
    wave_points_destroy(pb);
    wave_destroy(a);
    wave_destroy(b);
}

static void all_orders(const int kind[6], const char *what)
{
    for (int order = 2; order <= 16; order += 2)
        run_case(order, kind, what);
}

Test(prop_part, z_cuts_both_sides_cpml)
{
    all_orders((const int[6]){C, C, C, C, H, H}, "z cuts, CPML around");
}

Test(prop_part, z_cut_below_free_surface)
{
    all_orders((const int[6]){C, C, C, C, F, H}, "free surface, z cut below");
}

Test(prop_part, y_cut_free_surface_and_bottom_layers)
{
    /* the y slab holds the surface plane and crosses the z layers */
    all_orders((const int[6]){C, C, H, C, F, C}, "y cut, free surface");
}

Test(prop_part, y_and_z_cuts)
{
    all_orders((const int[6]){C, C, H, H, H, C}, "y and z cuts");
}

Test(prop_part, x_cuts_and_rigid_wall)
{
    all_orders((const int[6]){H, H, C, C, C, C}, "x cuts");
}

Test(prop_part, random_layers)
{
    /* random faces: the CPML starts off (no psi), the layers are plain medium */
    all_orders((const int[6]){R, R, R, R, H, R}, "random layers, z cut");
}

Test(prop_part, two_d)
{
    all_orders((const int[6]){C, C, N, N, H, H}, "2D, z cuts");
    all_orders((const int[6]){C, H, N, N, F, C}, "2D, x cut, free surface");
}

Test(prop_part, no_halo_face_is_a_whole_step)
{
    struct sl_device dev = test_cpu();
    struct wave_params p = sub_params(8, (const int[6]){C, C, C, C, F, C});
    float *v = velocity(&p);
    struct wave_sim *a = NULL, *b = NULL;
    cr_assert_eq(wave_create(&dev, &p, v, &a), 0);
    cr_assert_eq(wave_create(&dev, &p, v, &b), 0);
    free(v);
    float *f = malloc(wave_layout(a)->count * sizeof *f);
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    for (size_t i = 0; i < nn; i++)
        f[i] = (float)(i % 13) - 6.0f;
    cr_assert_eq(wave_copy_in(a, false, f), 0);
    cr_assert_eq(wave_copy_in(b, false, f), 0);
    for (int it = 0; it < 5; it++) {
        cr_assert_eq(wave_step(a), 0);
        cr_assert_eq(wave_step_part(b, WAVE_PART_CUT), 0);
        cr_assert_eq(wave_step_part(b, WAVE_PART_REST), 0);
        same_state(a, b, "no HALO face", it);
    }
    free(f);
    wave_destroy(a);
    wave_destroy(b);
}

Test(prop_part, refusals)
{
    struct sl_device dev = test_cpu();
    struct wave_params p = sub_params(4, (const int[6]){C, C, C, C, H, H});
    float *v = velocity(&p);
    struct wave_sim *a = NULL;
    cr_assert_eq(wave_create(&dev, &p, v, &a), 0);
    cr_assert_eq(wave_step_part(a, WAVE_PART_REST), -EINVAL, "the rest before the cut slabs");
    cr_assert_eq(wave_step_part(a, WAVE_PART_CUT), 0);
    cr_assert_eq(wave_step_part(a, WAVE_PART_CUT), -EINVAL, "the cut slabs twice");
    cr_assert_eq(wave_step(a), -EINVAL, "a whole step in the middle of one in parts");
    cr_assert_eq(wave_step_part(a, WAVE_PART_REST), 0);
    cr_assert_eq(wave_step_part(a, 7), -EINVAL);
    wave_destroy(a);
    /* the implicit operator has no parts (and no subdomains) */
    p = sub_params(4, (const int[6]){C, C, C, C, C, C});
    p.op = 2;
    free(v);
    v = velocity(&p);
    cr_assert_eq(wave_create(&dev, &p, v, &a), 0, "%s", err_msg());
    cr_assert_eq(wave_step_part(a, WAVE_PART_CUT), -ENOTSUP);
    wave_destroy(a);
    free(v);
}

/* Through the propagator interface: the acoustic physics has parts, the pair is a step. */
Test(prop_part, propagator_interface)
{
    struct sl_device dev = test_cpu();
    const int n[3] = {20, 16, 18};
    const double d[3] = {10, 10, 10}, o[3] = {0, 0, 0};
    struct prop_params pp;
    prop_params_init(&pp, n, d, o, 0.8 * stability_dt_max(8, d, 2500), 6);
    pp.grid.face[5] = PROP_FACE_HALO;
    pp.grid.global_n[0] = 20;
    pp.grid.global_n[1] = 16;
    pp.grid.global_n[2] = 30;
    pp.vmax_cpml = 2500;
    float *v = test_constant_grid(n, 2000.0f);
    struct prop_model m = {.vp = v};
    struct prop *a = NULL, *b = NULL;
    cr_assert_eq(prop_create(&dev, &pp, &m, &a), 0, "%s", err_msg());
    cr_assert_eq(prop_create(&dev, &pp, &m, &b), 0, "%s", err_msg());
    cr_assert(prop_has_step_part(a));
    double src[3] = {100, 80, 90};
    struct prop_points *sa = NULL, *sb = NULL;
    cr_assert_eq(prop_points_create(a, src, 1, PROP_INTERP_SINC, &sa), 0, "%s", err_msg());
    cr_assert_eq(prop_points_create(b, src, 1, PROP_INTERP_SINC, &sb), 0, "%s", err_msg());
    size_t nn = (size_t)n[0] * n[1] * n[2];
    float *fa = malloc(nn * sizeof *fa), *fb = malloc(nn * sizeof *fb);
    double mass = 0;
    for (int it = 0; it < 20; it++) {
        float amp = it < 6 ? 1.0f : 0.0f;
        cr_assert_eq(prop_step(a), 0);
        cr_assert_eq(prop_step_part(b, PROP_PART_CUT_SLABS), 0, "%s", err_msg());
        cr_assert_eq(prop_step_part(b, PROP_PART_REST), 0, "%s", err_msg());
        cr_assert_eq(prop_inject(a, sa, &amp, 1, 1.0f, PROP_INJECT_PHYSICAL), 0);
        cr_assert_eq(prop_inject(b, sb, &amp, 1, 1.0f, PROP_INJECT_PHYSICAL), 0);
    }
    for (int lev = 0; lev < 2; lev++) {
        cr_assert_eq(prop_copy_out(a, lev, fa), 0);
        cr_assert_eq(prop_copy_out(b, lev, fb), 0);
        cr_assert(!memcmp(fa, fb, nn * sizeof *fa), "level %d differs", lev);
        for (size_t i = 0; i < nn; i++)
            mass += fa[i] < 0 ? -fa[i] : fa[i];
    }
    cr_assert_gt(mass, 0);
    cr_assert_eq(prop_step_index(b), 20);
    free(fa);
    free(fb);
    free(v);
    prop_points_destroy(a, sa);
    prop_points_destroy(b, sb);
    prop_destroy(a);
    prop_destroy(b);
}
