/* The pieces of the migration on their own: imaging conditions against a direct
 * double-precision computation, the Laplacian filter on a polynomial whose Laplacian
 * is known, sub-volume cut and paste, the random boundary's reproducibility and
 * range, and the image stack's paste, clipping and ledger. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "kernels/imaging.h"
#include "kernels/laplacian_filter.h"
#include "kernels/random_boundary.h"
#include "kernels/subvolume.h"
#include "stream/image_stack.h"

static float frand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 65536.0f - 0.5f;
}

Test(imaging, conditions_match_direct_computation)
{
    /* wavefield arrays 13 x 9 x 7 with the image box 8 x 5 x 4 at (3, 2, 1); u stored
     * compactly (its own box), q in the padded layout */
    const int P[3] = {13, 9, 7};
    struct imaging_box bq = {{8, 5, 4}, {3, 2, 1}, {P[0], P[1]}};
    struct imaging_box bu = {{8, 5, 4}, {0, 0, 0}, {8, 5}};
    size_t nw = (size_t)P[0] * P[1] * P[2], ni = imaging_cells(&bq);
    const int steps = 6;
    float *u = malloc(steps * ni * sizeof(float)), *q = malloc(steps * nw * sizeof(float));
    unsigned s = 1;
    for (size_t i = 0; i < steps * ni; i++)
        u[i] = frand(&s);
    for (size_t i = 0; i < steps * nw; i++)
        q[i] = frand(&s);
    for (int cond = IMG_XCORR; cond <= IMG_BOTH; cond++) {
        float *num = calloc(ni, 4), *ils = calloc(ni, 4), *ilr = calloc(ni, 4), *out = malloc(ni * 4);
        struct imaging_acc acc = {num, ils, imaging_needs_receiver(cond) ? ilr : NULL};
        for (int t = 0; t < steps; t++)
            imaging_accumulate_cpu(&bu, u + t * ni, &bq, q + t * nw, &acc);
        imaging_finalize_cpu(&bq, cond, &acc, out);
        /* direct */
        double *dn = calloc(ni, 8), *ds = calloc(ni, 8), *dr = calloc(ni, 8);
        for (int t = 0; t < steps; t++)
            for (int z = 0; z < 4; z++)
                for (int y = 0; y < 5; y++)
                    for (int x = 0; x < 8; x++) {
                        size_t i = ((size_t)z * 5 + y) * 8 + x;
                        size_t w = ((size_t)(z + 1) * P[1] + (y + 2)) * P[0] + (x + 3);
                        double a = u[t * ni + i], b = q[t * nw + w];
                        dn[i] += a * b;
                        ds[i] += a * a;
                        dr[i] += b * b;
                    }
        double ms = 0, mr = 0;
        for (size_t i = 0; i < ni; i++) {
            ms = fmax(ms, ds[i]);
            mr = fmax(mr, dr[i]);
        }
        for (size_t i = 0; i < ni; i++) {
            double es = IMAGING_EPS_REL * ms, er = IMAGING_EPS_REL * mr, want;
            switch (cond) {
            case IMG_XCORR: want = dn[i]; break;
            case IMG_SOURCE: want = dn[i] / (ds[i] + es); break;
            case IMG_RECEIVER: want = dn[i] / (dr[i] + er); break;
            default: want = dn[i] / sqrt((ds[i] + es) * (dr[i] + er)); break;
            }
            cr_assert_float_eq(out[i], want, 1e-5 * (1 + fabs(want)), "cond %d cell %zu: %g vs %g", cond, i,
                               out[i], want);
            cr_assert_float_eq(ils[i], ds[i], 1e-5 * (1 + ds[i]));
        }
        free(num), free(ils), free(ilr), free(out), free(dn), free(ds), free(dr);
    }
    /* extract: the box of q, compact */
    float *ex = malloc(ni * 4);
    imaging_extract_cpu(&bq, q, ex);
    for (int z = 0; z < 4; z++)
        for (int y = 0; y < 5; y++)
            for (int x = 0; x < 8; x++)
                cr_assert_eq(ex[((size_t)z * 5 + y) * 8 + x], q[((size_t)(z + 1) * P[1] + (y + 2)) * P[0] + (x + 3)]);
    free(ex);
    free(u);
    free(q);
}

Test(imaging, laplacian_of_a_quadratic)
{
    /* f = a x^2 + b y^2 + c z^2 (x, y, z in m): lap f = 2 (a + b + c), exact for the
     * second-order stencil; out = -h^2 lap f inside, 0 on the faces. */
    const int n[3] = {9, 7, 6};
    const double d[3] = {2.0, 3.0, 4.0}, a = 0.5, b = -0.25, c = 0.125;
    size_t N = (size_t)n[0] * n[1] * n[2];
    float *f = malloc(N * 4), *o = malloc(N * 4);
    for (int z = 0; z < n[2]; z++)
        for (int y = 0; y < n[1]; y++)
            for (int x = 0; x < n[0]; x++) {
                double X = x * d[0], Y = y * d[1], Z = z * d[2];
                f[((size_t)z * n[1] + y) * n[0] + x] = (float)(a * X * X + b * Y * Y + c * Z * Z);
            }
    laplacian_filter_cpu(n, d, f, o);
    double want = -4.0 * 2.0 * (a + b + c);
    /* Every cell off the far faces: the interior, and the near faces (x, y or z = 0),
     * where f is even about the face so the mirrored stencil is exact too. */
    for (int z = 0; z < n[2] - 1; z++)
        for (int y = 0; y < n[1] - 1; y++)
            for (int x = 0; x < n[0] - 1; x++) {
                float v = o[((size_t)z * n[1] + y) * n[0] + x];
                cr_assert_float_eq(v, want, 2e-3, "(%d,%d,%d): %g vs %g", x, y, z, v, want);
            }
    free(f);
    free(o);
}

/* A 2D-like image: N cells along x, THICK (1 or 2) along y, a flat reflector (a
 * Gaussian in z around cell 12) everywhere.  The filtered image must not be empty and
 * must peak on the reflector's depth, on every column, faces included. */
static void thin_model_reflector(int thick)
{
    const int n[3] = {16, thick, 24};
    const double d[3] = {5.0, 5.0, 5.0};
    size_t N = (size_t)n[0] * n[1] * n[2];
    float *f = malloc(N * 4), *o = malloc(N * 4);
    for (int z = 0; z < n[2]; z++)
        for (int y = 0; y < n[1]; y++)
            for (int x = 0; x < n[0]; x++)
                f[((size_t)z * n[1] + y) * n[0] + x] = (float)exp(-0.5 * (z - 12) * (z - 12));
    laplacian_filter_cpu(n, d, f, o);
    for (int y = 0; y < n[1]; y++)
        for (int x = 0; x < n[0]; x++) {
            int zmax = -1;
            float vmax = 0;
            for (int z = 0; z < n[2]; z++) {
                float v = o[((size_t)z * n[1] + y) * n[0] + x];
                if (v > vmax)
                    vmax = v, zmax = z;
            }
            cr_assert_gt(vmax, 0.5f, "thickness %d column (%d,%d): image empty (max %g)", thick, x, y, vmax);
            cr_assert_eq(zmax, 12, "thickness %d column (%d,%d): peak at z %d, reflector at 12", thick, x,
                         y, zmax);
            /* no lateral variation: the filter adds nothing along x or y */
            float want = (float)(-(exp(-0.5) - 2.0 + exp(-0.5)));
            cr_assert_float_eq(vmax, want, 1e-5, "(%d,%d): %g vs %g", x, y, vmax, want);
        }
    free(f);
    free(o);
}

Test(imaging, laplacian_of_a_one_cell_thick_model)
{
    thin_model_reflector(1);
}

Test(imaging, laplacian_of_a_two_cell_thick_model)
{
    thin_model_reflector(2);
}

Test(imaging, laplacian_interior_is_the_plain_stencil)
{
    /* random field: every cell off the faces gets exactly the 7-point stencil */
    const int n[3] = {11, 8, 9};
    const double d[3] = {2.0, 3.0, 2.5};
    size_t N = (size_t)n[0] * n[1] * n[2];
    float *f = malloc(N * 4), *o = malloc(N * 4);
    unsigned s = 7;
    for (size_t i = 0; i < N; i++)
        f[i] = frand(&s);
    laplacian_filter_cpu(n, d, f, o);
    const size_t sy = (size_t)n[0], sz = (size_t)n[0] * n[1];
    for (int z = 1; z < n[2] - 1; z++)
        for (int y = 1; y < n[1] - 1; y++)
            for (int x = 1; x < n[0] - 1; x++) {
                size_t i = z * sz + y * sy + (size_t)x;
                double c = f[i];
                double want = -(4.0 / 4.0 * (f[i - 1] - 2 * c + f[i + 1]) + 4.0 / 9.0 * (f[i - sy] - 2 * c + f[i + sy]) +
                                4.0 / 6.25 * (f[i - sz] - 2 * c + f[i + sz]));
                cr_assert_float_eq(o[i], want, 1e-5, "(%d,%d,%d): %g vs %g", x, y, z, o[i], want);
            }
    free(f);
    free(o);
}

Test(imaging, subvolume_of_a_shot)
{
    const int n[3] = {100, 50, 20};
    const double d[3] = {10, 10, 5}, o[3] = {1000, 2000, 0};
    float rec[] = {1300, 2100, 0, 1500, 2200, 0, 99999, 2100, 0 /* outside: ignored */};
    double src[3] = {1400, 2150, 5};
    struct subvolume sv;
    cr_assert_eq(subvolume_of_shot(n, d, o, src, rec, 3, 100.0, &sv), 0);
    /* x: 1300 - 100 .. 1500 + 100 -> cells 20..60; y: 2000 .. 2300 -> 0..30 */
    cr_assert_eq(sv.off[0], 20);
    cr_assert_eq(sv.n[0], 41);
    cr_assert_eq(sv.off[1], 0);
    cr_assert_eq(sv.n[1], 31);
    cr_assert_eq(sv.off[2], 0);
    cr_assert_eq(sv.n[2], 20);
    cr_assert_float_eq(sv.o[0], 1200.0, 1e-9);
    double bad[3] = {0, 0, 0};
    cr_assert_eq(subvolume_of_shot(n, d, o, bad, rec, 2, 100.0, &sv), -EINVAL);
    /* cut then paste-add twice into zeros gives twice the cut part, nothing else */
    size_t N = (size_t)n[0] * n[1] * n[2];
    float *full = malloc(N * 4), *acc = calloc(N, 4);
    for (size_t i = 0; i < N; i++)
        full[i] = (float)i;
    cr_assert_eq(subvolume_of_shot(n, d, o, src, rec, 2, 100.0, &sv), 0);
    float *part = malloc(subvolume_cells(&sv) * 4);
    subvolume_cut(n, full, &sv, part);
    subvolume_paste_add(n, acc, &sv, part);
    subvolume_paste_add(n, acc, &sv, part);
    for (int z = 0; z < n[2]; z++)
        for (int y = 0; y < n[1]; y++)
            for (int x = 0; x < n[0]; x++) {
                size_t i = ((size_t)z * n[1] + y) * n[0] + x;
                bool in = x >= sv.off[0] && x < sv.off[0] + sv.n[0] && y >= sv.off[1] && y < sv.off[1] + sv.n[1];
                cr_assert_eq(acc[i], in ? 2.0f * full[i] : 0.0f);
            }
    free(full), free(acc), free(part);
}

/* A padded velocity as the propagator builds it: the interior (x 4..13, y 3..10,
 * z 0..5 of 18 x 14 x 11) extended into the layers by repeating edge values. */
static float orig_of(const int np[3], size_t i)
{
    int x = (int)(i % (size_t)np[0]), y = (int)(i / (size_t)np[0] % (size_t)np[1]),
        z = (int)(i / ((size_t)np[0] * np[1]));
    x = x < 4 ? 4 : x > 13 ? 13 : x;
    y = y < 3 ? 3 : y > 10 ? 10 : y;
    z = z > 5 ? 5 : z;
    return 2000.0f + (float)((x * 7 + y * 3 + z) % 11);
}

Test(imaging, random_boundary_is_reproducible_and_in_range)
{
    const int n[3] = {10, 8, 6}, pml[6] = {4, 4, 3, 3, 0, 5};
    int np[3] = {18, 14, 11};
    size_t N = (size_t)np[0] * np[1] * np[2];
    const double d[3] = {10, 10, 10};
    for (int range = RRANGE_FULL; range <= RRANGE_SYMMETRIC; range++)
        for (int ramp = RAMP_LINEAR; ramp <= RAMP_QUADRATIC; ramp++) {
            float *a = malloc(N * 4), *b = malloc(N * 4), *c = malloc(N * 4);
            for (size_t i = 0; i < N; i++)
                a[i] = b[i] = c[i] = orig_of(np, i);
            struct random_boundary rb = {ramp, range, 3, 42, random_boundary_vstable(8, 1e-3, d), 1500.0,
                                         random_boundary_vnyquist(30.0, d)};
            cr_assert_eq(random_boundary_apply(&rb, np, n, pml, 5, a), 0);
            cr_assert_eq(random_boundary_apply(&rb, np, n, pml, 5, b), 0);
            cr_assert_eq(memcmp(a, b, N * 4), 0, "same seed, same boundary");
            rb.seed = 43;
            cr_assert_eq(random_boundary_apply(&rb, np, n, pml, 5, c), 0);
            cr_assert_neq(memcmp(a, c, N * 4), 0, "another seed, another boundary");
            size_t changed = 0;
            for (int z = 0; z < np[2]; z++)
                for (int y = 0; y < np[1]; y++)
                    for (int x = 0; x < np[0]; x++) {
                        size_t i = ((size_t)z * np[1] + y) * np[0] + x;
                        bool inside = x >= 4 && x < 14 && y >= 3 && y < 11 && z < 6;
                        float orig = orig_of(np, i);
                        if (inside)
                            cr_assert_eq(a[i], orig, "interior cell changed");
                        cr_assert(a[i] > 0.0f && a[i] <= 0.99 * rb.vstable + 1e-3, "v %g", a[i]);
                        /* the first cell of a layer wider than the random width keeps
                         * the edge extension (x layer 4 wide, random width 3) */
                        if (x == 3 && y >= 3 && y < 11 && z < 6)
                            cr_assert_eq(a[i], orig);
                        changed += a[i] != orig;
                    }
            cr_assert_gt(changed, N / 4);
        }
    /* the ramp shapes: 0 at the layer's start, 1 at the wall, increasing */
    for (int r = RAMP_LINEAR; r <= RAMP_QUADRATIC; r++) {
        cr_assert_float_eq(random_boundary_ramp(r, 0.0), 0.0, 1e-12);
        cr_assert_float_eq(random_boundary_ramp(r, 1.0), 1.0, 1e-12);
        for (double x = 0.05; x <= 1.0; x += 0.05)
            cr_assert_gt(random_boundary_ramp(r, x), random_boundary_ramp(r, x - 0.05));
    }
    /* uniform numbers: in [0, 1), mean near 1/2 */
    double m = 0;
    for (uint64_t i = 0; i < 100000; i++) {
        double r = random_boundary_uniform(7, 1, i);
        cr_assert(r >= 0.0 && r < 1.0);
        m += r;
    }
    cr_assert_float_eq(m / 100000, 0.5, 5e-3);
}

Test(imaging, stack_paste_clip_and_ledger)
{
    struct image_stack s;
    const int n[3] = {6, 5, 4};
    const double d[3] = {1, 1, 1}, o[3] = {0, 0, 0};
    cr_assert_eq(image_stack_init(&s, n, d, o), 0);
    float img[3 * 2 * 4], ill[3 * 2 * 4];
    for (int i = 0; i < 24; i++) {
        img[i] = (float)(i + 1);
        ill[i] = 1.0f;
    }
    /* a patch hanging 1 cell over the x end: the overhang is clipped */
    struct image_patch p = {{4, 1, 0}, {3, 2, 4}, img, ill};
    cr_assert_eq(image_stack_add(&s, 11, &p), 0);
    cr_assert_eq(image_stack_add(&s, 11, &p), -EEXIST);
    struct image_patch q = {{0, 0, 0}, {3, 2, 4}, img, NULL};
    cr_assert_eq(image_stack_add(&s, 12, &q), 0);
    size_t nid;
    const int64_t *ids = image_stack_ids(&s, &nid);
    cr_assert_eq(nid, 2);
    cr_assert_eq(ids[0], 11);
    cr_assert_eq(ids[1], 12);
    cr_assert_eq(s.shots, 2);
    cr_assert(image_stack_has(&s, 12));
    cr_assert(!image_stack_has(&s, 13));
    double sum = 0, want = 0;
    for (size_t i = 0; i < image_stack_cells(&s); i++)
        sum += s.image[i];
    for (int z = 0; z < 4; z++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 3; x++) {
                want += img[(z * 2 + y) * 3 + x]; /* patch q, whole */
                if (x < 2)
                    want += img[(z * 2 + y) * 3 + x]; /* patch p, clipped at x = 6 */
            }
    cr_assert_float_eq(sum, want, 1e-3);
    cr_assert_float_eq(s.image[(0 * 5 + 1) * 6 + 4], img[0], 1e-6);
    cr_assert_float_eq(s.illum[(0 * 5 + 1) * 6 + 4], 1.0f, 1e-6);
    cr_assert_float_eq(s.illum[0], 0.0f, 1e-6);
    /* restore into a fresh stack reproduces it */
    struct image_stack t;
    cr_assert_eq(image_stack_init(&t, n, d, o), 0);
    cr_assert_eq(image_stack_restore(&t, s.image, s.illum, ids, nid), 0);
    cr_assert_eq(memcmp(t.image, s.image, image_stack_cells(&s) * 4), 0);
    cr_assert(image_stack_has(&t, 11) && image_stack_has(&t, 12) && t.shots == 2);
    float *r = malloc(image_stack_cells(&s) * 4);
    cr_assert_eq(image_stack_render(&s, false, r), 0);
    cr_assert_eq(memcmp(r, s.image, image_stack_cells(&s) * 4), 0);
    free(r);
    image_stack_free(&t);
    image_stack_free(&s);
}
