/* The GPU's quantised TTI medium (v_pz^2 dt^2, the eps-delta codes, the tilt codes),
 * built on the device from the interior model (kernels/tti_medium.cu, the default) and,
 * forced (tti_force_host_medium), on the host a slab of planes at a time and uploaded
 * through a page-locked double buffer (kernels/tti.c set_medium_slabs, the fallback
 * where the device has no room for the model's copy), against the CPU simulation's
 * arrays of the same model, built over the whole grid at once: the three device arrays,
 * downloaded into poisoned buffers, equal the CPU's byte for byte over the whole
 * allocated layout (the halo cells included: 0 on both), for both builds (each asserted
 * to be the one that ran).  Models random per point (v_pz, eps, delta with some delta >
 * eps and some eps < 0, theta, phi of either sign, so that the device's fmod, nearbyint
 * and clamps meet both signs and both ends), grids with layers of odd widths (tapers of
 * every depth), a free surface, constant angles, 2D; the 3D grids' planes are large
 * enough for TTI_MEDIUM_SLAB_BYTES to hold 1 or 2 of them, so that the host's medium
 * goes up in 7-10 slabs with a last partial one (asserted from the layout): a slab
 * skipped leaves zeros, one built or copied to the wrong planes leaves another plane's
 * random values, and either fails here. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/device.h"
#include "kernels/tti.h"
#include "kernels/tti_internal.h"
#include "stream/error.h"
#include "tests/gpu/gpu_support.h"

static double urand(double lo, double hi) { return lo + (hi - lo) * ((double)rand() / RAND_MAX); }

struct mcase {
    const char *name;
    int n[3], pml[6], order;
    bool fs, two_d, const_angles;
    int min_slabs; /* the slabs the layout must give (0: any) */
    bool const_ed; /* eps, delta constant too (the shots' model: v_pz per point alone) */
};

/* The first element where A and B (COUNT 4-byte words) differ, or COUNT. */
static size_t first_diff(const uint32_t *a, const uint32_t *b, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (a[i] != b[i])
            return i;
    return count;
}

static void run_case(const struct mcase *t)
{
    GPU_REQUIRED();
    struct sl_device cpu, gpu;
    cr_assert_eq(backend_select("cpu", &cpu), 0);
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    struct wave_params p = {.d = {10, 12, 9}, .order = t->order, .pml_reflection = 1e-4, .f_ref = 12};
    memcpy(p.n, t->n, sizeof p.n);
    memcpy(p.pml, t->pml, sizeof p.pml);
    if (t->two_d) {
        p.face[2] = p.face[3] = WAVE_FACE_NONE;
        p.pml[2] = p.pml[3] = 0;
    }
    if (t->fs) {
        p.free_surface = true;
        p.pml[4] = 0;
        p.face[4] = WAVE_FACE_FREE;
    }
    const size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *vp = malloc(nn * 4), *ep = malloc(nn * 4), *de = malloc(nn * 4), *th = malloc(nn * 4), *ph = malloc(nn * 4);
    cr_assert(vp && ep && de && th && ph);
    srand(t->n[0] * 7 + t->n[2] * 131 + t->fs * 3 + t->two_d * 17 + t->const_angles * 1001);
    for (size_t i = 0; i < nn; i++) {
        vp[i] = (float)urand(1500, 3000);
        ep[i] = (float)urand(-0.05, 0.3);
        de[i] = ep[i] + (float)urand(-0.2, 0.05); /* a few delta > eps: lowered to eps */
        th[i] = (float)urand(-1.5, 1.5);
        ph[i] = (float)urand(-6.2, 6.2);
    }
    struct tti_model m = {.vpz = vp, .eps = ep, .delta = de, .theta = th, .phi = ph};
    if (t->const_angles) { /* one tilt code for every point (set_medium's constant path) */
        m.theta = m.phi = NULL;
        m.theta0 = -0.7;
        m.phi0 = -2.3;
    }
    if (t->const_ed) { /* delta > eps: lowered to eps in the interior, the taper's product in the layers */
        m.eps = m.delta = NULL;
        m.eps0 = 0.1;
        m.delta0 = 0.25;
    }
    p.dt = 0.5 * tti_dt_max_model(&m, nn, t->order, p.d, t->two_d, TTI_SIGMA_DEFAULT);
    cr_assert_gt(p.dt, 0);
    struct tti_sim *c = NULL, *g = NULL;
    cr_assert_eq(tti_create(&cpu, &p, TTI_SIGMA_DEFAULT, &m, &c), 0, "%s", err_msg());
    for (int path = 0; path < 2; path++) {
        /* the device build (the default), then the host's slabs (its fallback) */
        tti_force_host_medium(path == 1);
        cr_assert_eq(tti_create(&gpu, &p, TTI_SIGMA_DEFAULT, &m, &g), 0, "%s", err_msg());
        tti_force_host_medium(false);
        const int want = path == 0 ? TTI_MEDIUM_DEVICE : TTI_MEDIUM_SLABS;
        cr_assert_eq(g->medium_on, want, "%s: medium built %d, want %d", t->name, g->medium_on, want);
        const struct wave_layout *L = tti_layout(g);
        /* the slabs set_medium_gpu makes of this layout */
        size_t per = TTI_MEDIUM_SLAB_BYTES / (L->stride_z * sizeof(float));
        per = per < 1 ? 1 : per > (size_t)L->npad[2] ? (size_t)L->npad[2] : per;
        const size_t slabs = ((size_t)L->npad[2] + per - 1) / per;
        fprintf(stderr, "%s: padded %d x %d x %d, %zu allocated, %zu slabs of %zu planes (last %zu)\n", t->name,
                L->npad[0], L->npad[1], L->npad[2], L->count, slabs, per, L->npad[2] - (slabs - 1) * per);
        cr_assert_geq(slabs, (size_t)t->min_slabs, "%s: %zu slabs, the case wants >= %d", t->name, slabs, t->min_slabs);
        const size_t count = L->count, bytes = count * sizeof(uint32_t);
        uint32_t *h = malloc(bytes);
        cr_assert_not_null(h);
        const struct {
            const char *name;
            const void *dev, *cpu;
        } arr[3] = {{"vel", g->w.vel, c->w.vel}, {"ed", g->ed, c->ed}, {"tilt", g->tilt, c->tilt}};
        for (int a = 0; a < 3; a++) {
            memset(h, 0xff, bytes);
            cr_assert_eq(dev_copy(&gpu, h, arr[a].dev, bytes, DEV_D2H, NULL), 0, "%s", err_msg());
            const size_t i = first_diff(h, arr[a].cpu, count);
            size_t nz = 0; /* cells the check covers that are not 0 (a medium, not an empty array) */
            for (size_t e = 0; e < count; e++)
                nz += ((const uint32_t *)arr[a].cpu)[e] != 0;
            fprintf(stderr, "  %s, %s: %s %s (%zu nonzero cells)\n", t->name, path == 0 ? "device build" : "host slabs",
                    arr[a].name, i == count ? "equal" : "DIFFERS", nz);
            cr_assert_gt(nz, count / 3, "%s: %s: only %zu of %zu cells set on the CPU", t->name, arr[a].name, nz,
                         count);
            if (i < count) {
                const long plane = (long)(i / L->stride_z) - L->pad_off[2]; /* padded z index */
                cr_assert_fail("%s (%s): %s differs first at element %zu (padded plane %ld, slab %ld): gpu 0x%08x, "
                               "cpu 0x%08x", t->name, path == 0 ? "device build" : "host slabs", arr[a].name, i, plane,
                               plane >= 0 ? plane / (long)per : -1L, h[i], ((const uint32_t *)arr[a].cpu)[i]);
            }
        }
        free(h);
        tti_destroy(g);
        g = NULL;
    }
    tti_destroy(c);
    free(vp);
    free(ep);
    free(de);
    free(th);
    free(ph);
}

#define CASE(nm, ...)                                                                                                 \
    Test(gpu_tti_medium, nm, .timeout = 120)                                                                          \
    {                                                                                                                 \
        const struct mcase t = {#nm, __VA_ARGS__};                                                                    \
        run_case(&t);                                                                                                 \
    }

/* padded 417 x 409 x 13, planes of 448 x 417 floats: 2 a slab, 7 slabs, the last of 1 */
CASE(cpml_two_planes_a_slab, {401, 395, 6}, {7, 9, 8, 6, 3, 4}, 8, false, false, false, 7, false)
/* free surface (no zmin layers), order 6: padded 406 x 420 x 17, 2 planes a slab, 9
 * slabs, the last of 1 */
CASE(free_surface, {389, 403, 11}, {10, 7, 9, 8, 0, 6}, 6, true, false, false, 9, false)
/* constant theta, phi (one tilt code), order 4: planes of 640 x 614 floats, 1 a slab */
CASE(constant_angles_one_plane_a_slab, {601, 598, 4}, {5, 6, 7, 5, 2, 3}, 4, false, false, true, 9, false)
/* 2D with a free surface: one slab of every plane (a plane is one row) */
CASE(two_d_free_surface, {1201, 1, 301}, {9, 0, 0, 0, 0, 11}, 8, true, true, false, 1, false)
/* the shots' model: v_pz per point, every other parameter constant (the device reads no
 * parameter array); 12-cell layers all round as the reference shot's random layers */
CASE(constant_parameters, {301, 297, 9}, {12, 12, 12, 12, 12, 12}, 8, false, false, true, 0, true)
