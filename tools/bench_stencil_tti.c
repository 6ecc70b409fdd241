/* bench_stencil_tti — the TTI rows of `seislive-bench stencil` (tools/bench_stencil.c):
 * the step of kernels/tti.h with the naive CUDA twin and each tiled variant (the shared
 * ring of planes and the column register queues, kernels/tti_cuda.h; `--kernels tiled`
 * runs both, each row naming its variant), in a homogeneous
 * tilted medium (v_pz 2000 m/s, eps 0.2, delta 0.1, theta 30 deg, phi 20 deg), with and
 * without CPML.
 *
 * Byte floor: what a step must move with the chosen storage (kernels/tti_internal.h):
 * p, q at two levels read (16 B), vel, ed, tilt read (12 B), p, q written (8 B): 36 B per
 * point; with CPML also psi, zeta and chi of both fields read and written once per
 * layer element (48 B), i.e. 36 + 96 x dims x PML / SIZE B per point on a cube (on an
 * NX x NY x NZ grid of --grids: 36 + 96 x PML x (1/NX + 1/NY + 1/NZ)).
 *
 * SEISLIVE_BENCH_TTI_VARIANTS (environment, research: a profiler run of one kernel):
 * the variant numbers to run, comma separated (0 naive, 1..20: the table in
 * bench_stencil_tti below);
 * unset: all of them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kernels/device.h"
#include "kernels/tti.h"
#include "kernels/wave_tuning.h"
#include "stream/error.h"
#include "tools/bench_stencil_tti.h"

#define TTI_B_PER_POINT 36.0

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int create(const struct sl_device *dev, int kernel, int pipe, int layers, int order, const int g[3], int pml,
                  bool two_d, struct tti_sim **out)
{
    struct wave_params p = {.d = {10, 10, 10}, .order = order, .pml_reflection = 1e-4, .f_ref = 10,
                            .kernel = kernel, .tuning = {.pipe = pipe, .cpml = layers}};
    for (int a = 0; a < 3; a++)
        p.n[a] = g[a] - 2 * pml;
    for (int f = 0; f < 6; f++)
        p.pml[f] = pml;
    if (two_d) {
        p.n[1] = 1;
        p.pml[2] = p.pml[3] = 0;
        p.face[2] = p.face[3] = WAVE_FACE_NONE;
    }
    const double eps = 0.2, delta = 0.1, theta = M_PI / 6, phi = M_PI / 9, v = 2000;
    p.dt = 0.9 * tti_dt_max(order, p.d, two_d, v, eps, delta, theta, phi, TTI_SIGMA_DEFAULT);
    const size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *vp = malloc(nn * sizeof *vp);
    if (!vp)
        return err_set(-ENOMEM, "out of memory");
    for (size_t i = 0; i < nn; i++)
        vp[i] = (float)v;
    const struct tti_model m = {.vpz = vp, .eps0 = eps, .delta0 = delta, .theta0 = theta, .phi0 = phi};
    int rc = tti_create(dev, &p, TTI_SIGMA_DEFAULT, &m, out);
    free(vp);
    return rc;
}

static int measure(const struct sl_device *dev, struct tti_sim *s, double points, bool cpml, int steps,
                   struct tti_row *r)
{
    int rc = 0;
    tti_set_cpml(s, cpml);
    tti_describe(s, r->variant, sizeof r->variant);
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = tti_step(s);
    if (rc == 0)
        rc = dev_sync(dev);
    const double t0 = now_s();
    for (int i = 0; i < steps && rc == 0; i++)
        rc = tti_step(s);
    if (rc == 0)
        rc = dev_sync(dev);
    const double t = now_s() - t0;
    if (rc < 0)
        return rc;
    r->gpts = points * steps / t / 1e9;
    r->ms = t / steps * 1e3;
    return 0;
}

int bench_stencil_tti(const struct sl_device *dev, const int (*grids)[3], int ngrids, const int *orders, int norders,
                      int steps, int pml, bool two_d, const bool use[3], double bw, struct tti_row *rows, int max)
{
    const char *names[3] = {"tti auto", "tti naive", "tti tiled"};
    const int dims = two_d ? 2 : 3;
    /* the variants (kernels/tti_cuda.h): 0 the naive twin; then tuning.pipe (enum
     * tti_tiled_kind: 1 the shared ring, 2 the column queues, 3 the same with the halo
     * queues in shared memory; 2D grids run the ring only) and tuning.cpml (enum
     * tti_layers_kind: 1 the naive passes beside the core, 2..5 their z-marching forms, 6
     * the CPML terms in the column kernel, 7 the same with its halo queues in shared
     * memory, 8 the naive passes on a second stream beside the core, 9 and 10 the layer
     * boxes' passes with one field and both fields per thread, 11 the latter on a second
     * stream, 12 its pass 2 after the naive pass 1, 13 that on a second stream) with the
     * column kernel (tuning.pipe 2) as the core; 16: tuning.pipe 4, the column pairs (two
     * x-adjacent columns a thread), naive passes beside the core; 17: the defaults
     * (TTI_TILED_PROD, TTI_LAYERS_PROD: tuning 0 / 0); 18: tuning.pipe 5 (the column
     * pairs, halo d_z scattered: tti_cols3.cu) with the default passes beside the core;
     * 19: tuning.pipe 6 (the same in clusters of two tiles: tti_cols4.cu), the same; 20:
     * tuning.pipe 7 (the column pairs, tilt codes prefetched: tti_cols3.cu), the same; 21:
     * tuning.pipe 8 (the column pairs with asynchronous copies: tti_cols2.cu), the same; 22:
     * tuning.pipe 4 with the default passes (the old default, whatever TTI_TILED_PROD is);
     * 23: the default core with tuning.cpml 14 (13 with pass 2 in x-adjacent pairs) */
    enum { NV = 24 };
    static const int vpipe[NV] = {0, 1, 2, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 4, 0, 5, 6, 7, 8, 4, 0};
    static const int vlay[NV] = {1, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1, 0, 0, 0, 0, 0, 0, 14};
    bool want[NV];
    const char *only = getenv("SEISLIVE_BENCH_TTI_VARIANTS");
    for (int kv = 0; kv < NV; kv++)
        want[kv] = !only;
    for (const char *c = only; c && *c;) {
        char *end;
        const long v = strtol(c, &end, 10);
        if (end == c || v < 0 || v >= NV)
            return err_set(-EINVAL, "SEISLIVE_BENCH_TTI_VARIANTS \"%s\": numbers 0..%d separated by commas", only,
                           NV - 1);
        want[v] = true;
        c = *end == ',' ? end + 1 : end;
    }
    int nr = 0;
    for (int si = 0; si < ngrids; si++)
        for (int oi = 0; oi < norders; oi++)
            for (int kv = 0; kv < NV; kv++) {
                const int k = kv ? WAVE_KERNEL_TILED : WAVE_KERNEL_NAIVE, pipe = vpipe[kv], layers = vlay[kv];
                if (!use[k] || !want[kv] || (two_d && kv >= 2))
                    continue;
                struct tti_sim *s;
                const int *g = grids[si];
                char gname[48];
                if (g[0] == g[2] && (g[1] == g[0] || (two_d && g[1] == 1)))
                    snprintf(gname, sizeof gname, "%d^%d", g[0], dims);
                else
                    snprintf(gname, sizeof gname, "%dx%dx%d", g[0], g[1], g[2]);
                int rc = create(dev, k, pipe, layers, orders[oi], g, pml, two_d, &s);
                if (rc < 0)
                    return err_prefix(rc, "%s order %d %s", names[k], orders[oi], gname);
                for (int c = 1; c >= 0 && nr < max; c--) {
                    struct tti_row *r = &rows[nr];
                    r->kernel = names[k];
                    r->order = orders[oi];
                    r->size = g[0];
                    for (int a = 0; a < 3; a++)
                        r->n[a] = g[a];
                    r->cpml = c;
                    const double points = (double)g[0] * (two_d ? 1 : g[1]) * g[2];
                    rc = measure(dev, s, points, c, steps, r);
                    if (rc < 0) {
                        tti_destroy(s);
                        return err_prefix(rc, "%s order %d %s", r->kernel, r->order, gname);
                    }
                    /* 48 B per layer element, 2 x PML layer planes across each axis */
                    const double across = 1.0 / g[0] + 1.0 / g[2] + (two_d ? 0.0 : 1.0 / g[1]);
                    r->floor_bpp = TTI_B_PER_POINT + (c ? 96.0 * pml * across : 0.0);
                    r->floor_gpts = bw / r->floor_bpp;
                    nr++;
                    fprintf(stderr, "stencil: %s [%s] order %d %s CPML %s: %.1f Gpts/s\n", r->kernel, r->variant,
                            r->order, gname, c ? "on" : "off", r->gpts);
                }
                tti_destroy(s);
            }
    return nr;
}
