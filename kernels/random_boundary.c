/* random_boundary — see random_boundary.h. */
#include "kernels/random_boundary.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>

#include "kernels/fd_coeffs.h"
#include "stream/error.h"

double random_boundary_uniform(uint64_t seed, uint64_t stream, uint64_t i) { return rb_uniform(seed, stream, i); }

double random_boundary_vstable(int order, double dt, const double d[3])
{
    return random_boundary_vstable_dims(order, dt, d, false);
}

double random_boundary_vstable_dims(int order, double dt, const double d[3], bool two_d)
{
    double s = fd_second_abs_sum(order);
    double k = 0.0;
    for (int a = 0; a < 3; a++)
        if (!(two_d && a == 1)) /* a 2D grid has no y term */
            k += 1.0 / (d[a] * d[a]);
    return 2.0 / (dt * sqrt(s * k));
}

double random_boundary_vnyquist(double fmax, const double d[3])
{
    double dm = d[0] > d[1] ? d[0] : d[1];
    dm = dm > d[2] ? dm : d[2];
    return 2.0 * fmax * dm;
}

double random_boundary_ramp(int ramp, double xi) { return rb_ramp(ramp, xi); }

int random_boundary_check(const struct random_boundary *rb, const int npad[3], const int n[3], const int pml[6])
{
    if (rb->width < 1 || !(rb->vstable > 0.0) || !(rb->vmin > 0.0) ||
        (rb->range == RB_RANGE_NYQUIST && !(rb->vnyquist > 0.0)))
        return err_set(-EINVAL, "random boundary: width %d, vstable %g, vmin %g, vnyquist %g",
                       rb->width, rb->vstable, rb->vmin, rb->vnyquist);
    for (int a = 0; a < 3; a++)
        if (npad[a] != n[a] + pml[2 * a] + pml[2 * a + 1])
            return err_set(-EINVAL, "random boundary: padded size %d != %d + %d + %d on axis %d",
                           npad[a], n[a], pml[2 * a], pml[2 * a + 1], a);
    return 0;
}

int random_boundary_apply(const struct random_boundary *rb, const int npad[3], const int n[3],
                          const int pml[6], uint64_t shot_id, float *v)
{
    struct rb_frame g; /* a whole grid is its own frame */
    for (int a = 0; a < 3; a++) {
        g.npad[a] = npad[a];
        g.n[a] = n[a];
        g.shift[a] = 0;
    }
    for (int f = 0; f < 6; f++)
        g.pml[f] = pml[f];
    return random_boundary_apply_in(rb, &g, npad, n, pml, shot_id, v);
}

int random_boundary_check_in(const struct random_boundary *rb, const struct rb_frame *g, const int npad[3],
                             const int n[3], const int pml[6])
{
    int rc = random_boundary_check(rb, npad, n, pml);
    if (rc == 0)
        rc = random_boundary_check(rb, g->npad, g->n, g->pml);
    if (rc < 0)
        return rc;
    for (int a = 0; a < 3; a++)
        if (g->shift[a] < 0 || g->shift[a] + npad[a] > g->npad[a])
            return err_set(-EINVAL, "random boundary: axis %d: padded cells %d..%d outside the whole grid's %d",
                           a, g->shift[a], g->shift[a] + npad[a] - 1, g->npad[a]);
    return 0;
}

int random_boundary_apply_in(const struct random_boundary *rb, const struct rb_frame *g, const int npad[3],
                             const int n[3], const int pml[6], uint64_t shot_id, float *v)
{
    int rc = random_boundary_check_in(rb, g, npad, n, pml);
    if (rc < 0)
        return rc;
    const double vhi = 0.99 * rb->vstable;
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < npad[2]; z++)
        for (int y = 0; y < npad[1]; y++)
            for (int x = 0; x < npad[0]; x++)
                rb_cell_in(rb, g, npad, shot_id, vhi, x, y, z, v);
    return 0;
}
