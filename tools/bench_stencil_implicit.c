/* bench_stencil_implicit — the implicit operator's rows of `seislive-bench stencil`.
 *
 * Byte floor of the step as the sweeps are arranged (kernels/implicit_kernels.cu), per
 * padded point, no CPML:
 *   x sweep  read p, write lap                                    2 floats
 *   y sweep  read p, write d, read d (back sweep), read + write lap 5 floats
 *   z sweep  read p, write d, read d, read lap, read vel, read q, write q   7 floats
 * 3D: 14 floats = 56 B/point (the explicit step's floor is 16: 3.5x); 2D (x and z): 9
 * floats = 36 B/point.  With the y/z sweeps in register chunks (tuning implicit_yz =
 * chunks: d never stored, p read once by the z sweep): y read p, read + write lap (3), z
 * read p, lap, vel, q, write q (5): 3D 10 floats = 40 B/point, 2D 7 = 28; the same for
 * scan and overlap (overlap: y writes its own field instead of reading and writing lap, z
 * reads both: 40 again).  xyfused / xypipe / xyc (x and y in one cluster kernel): x+y
 * read p, write lap (2), z 5: 3D 28 B/point.  Lines over 512 rows fall back to march: 56 / 36.
 * Why not less: a step must read p, q, vel and write q (16 B); each further pass over the
 * grid moves its intermediate twice (written, read), and the three axes' solves cannot
 * share one pass without a 512 x 512 plane (1 MB) on chip for two of them (a cluster's
 * shared memory holds one: xyfused) or the whole grid for all three.
 * With CPML, the explicit rows' 16 B per psi/zeta layer element on top.  The step is
 * timed as wave_step runs it (psi, the sweeps, free surface none); stderr also gets each
 * part's time alone (implicit_cu_sweep_times). */
#include "tools/bench_stencil_implicit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kernels/implicit.h"
#include "kernels/propagator.h"
#include "kernels/wave.h"
#include "kernels/wave_tuning.h"
#include "stream/error.h"

double bench_implicit_floor_bpp(bool two_d, bool chunks)
{
    return chunks ? (two_d ? 28.0 : 40.0) : (two_d ? 36.0 : 56.0);
}

double bench_implicit_floor_of(bool two_d, int yz, int size)
{
    if (yz == WAVE_IMPLICIT_YZ_MARCH || size > 512) /* the register kernels' fallback: march */
        return bench_implicit_floor_bpp(two_d, false);
    if (wave_implicit_yz_is_xy(yz) && !two_d)
        return 28.0;
    return bench_implicit_floor_bpp(two_d, true);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int create(const struct sl_device *dev, int order, int size, int pml, bool two_d,
                  const struct wave_tuning *var, struct wave_sim **out)
{
    struct wave_params p = {.d = {10, 10, 10}, .order = order, .op = PROP_OP_IMPLICIT, .pml_reflection = 1e-4,
                            .f_ref = 10, .tuning = *var};
    for (int a = 0; a < 3; a++)
        p.n[a] = size - 2 * pml;
    for (int f = 0; f < 6; f++)
        p.pml[f] = pml;
    if (two_d) {
        p.n[1] = 1;
        p.pml[2] = p.pml[3] = 0;
        p.face[2] = p.face[3] = WAVE_FACE_NONE;
    }
    p.dt = 1e-3; /* stable for 2000 m/s at 10 m at every order (implicit_symbol_max <= 9.3) */
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    if (!v)
        return err_set(-ENOMEM, "out of memory");
    for (size_t i = 0; i < nn; i++)
        v[i] = 2000.0f;
    int rc = wave_create(dev, &p, v, out);
    free(v);
    return rc;
}

int bench_stencil_implicit(const struct sl_device *dev, const int *sizes, int nsizes, const int *orders, int norders,
                           int steps, int pml, bool two_d, bool nocpml_rows, double bw,
                           const struct wave_tuning *vars, int nvars,
                           struct tti_row *rows, int max)
{
    int nr = 0;
    const int dims = two_d ? 2 : 3;
    for (int si = 0; si < nsizes; si++)
        for (int oi = 0; oi < norders; oi++)
            for (int vi = 0; vi < nvars; vi++) {
                struct wave_sim *s;
                int rc = create(dev, orders[oi], sizes[si], pml, two_d, &vars[vi], &s);
                if (rc < 0)
                    return err_prefix(rc, "implicit order %d %d^%d", orders[oi], sizes[si], dims);
                for (int c = 1; c >= (nocpml_rows ? 0 : 1) && nr < max; c--) {
                    struct tti_row *r = &rows[nr];
                    r->kernel = "implicit";
                    r->order = orders[oi];
                    r->size = sizes[si];
                    r->cpml = c;
                    wave_set_cpml(s, c);
                    wave_describe_kernel(s, r->variant, sizeof r->variant);
                    for (int i = 0; i < 3 && rc == 0; i++)
                        rc = wave_step(s);
                    if (rc == 0)
                        rc = wave_sync(s);
                    double t0 = now_s();
                    for (int i = 0; i < steps && rc == 0; i++)
                        rc = wave_step(s);
                    if (rc == 0)
                        rc = wave_sync(s);
                    double t = now_s() - t0;
                    if (rc < 0) {
                        wave_destroy(s);
                        return err_prefix(rc, "implicit order %d %d^%d", r->order, r->size, dims);
                    }
                    const double points = (double)r->size * r->size * (two_d ? 1 : r->size);
                    r->gpts = points * steps / t / 1e9;
                    r->ms = t / steps * 1e3;
                    r->floor_bpp = bench_implicit_floor_of(two_d, wave_implicit_yz_of(&vars[vi]), r->size) +
                                   (c ? 32.0 * dims * pml / r->size : 0.0);
                    r->floor_gpts = bw / r->floor_bpp;
                    fprintf(stderr, "stencil: implicit [%s] order %d %d^%d CPML %s: %.1f Gpts/s\n", r->variant,
                            r->order, r->size, dims, c ? "on" : "off", r->gpts);
#ifdef SEISLIVE_CUDA
                    /* where the step's time goes: each part alone (the sequential order) */
                    double ms[5];
                    if (dev->kind == SL_DEVICE_CUDA && implicit_cu_sweep_times(s, steps, ms) == 0)
                        fprintf(stderr, "stencil: implicit [%s] order %d %d^%d CPML %s: parts alone (ms): psi %.3f "
                                "x %.3f y %.3f z %.3f x+y kernel %.3f (step %.3f)\n", r->variant, r->order, r->size,
                                dims, c ? "on" : "off", ms[0], ms[1], ms[2], ms[3], ms[4], r->ms);
#endif
                    nr++;
                }
                wave_destroy(s);
            }
    return nr;
}
