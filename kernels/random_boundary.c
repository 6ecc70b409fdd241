/* random_boundary — see random_boundary.h. */
#include "kernels/random_boundary.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>

#include "conf/config.h"
#include "kernels/fd_coeffs.h"
#include "stream/error.h"

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double random_boundary_uniform(uint64_t seed, uint64_t stream, uint64_t i)
{
    uint64_t k = mix64(seed + 0x9e3779b97f4a7c15ULL * (stream + 1));
    uint64_t z = mix64(k ^ (i * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL));
    return (double)(z >> 11) * 0x1.0p-53;
}

double random_boundary_vstable(int order, double dt, const double d[3])
{
    double s = fd_second_abs_sum(order);
    double k = 0.0;
    for (int a = 0; a < 3; a++)
        k += 1.0 / (d[a] * d[a]);
    return 2.0 / (dt * sqrt(s * k));
}

double random_boundary_vnyquist(double fmax, const double d[3])
{
    double dm = d[0] > d[1] ? d[0] : d[1];
    dm = dm > d[2] ? dm : d[2];
    return 2.0 * fmax * dm;
}

double random_boundary_ramp(int ramp, double xi)
{
    xi = xi < 0.0 ? 0.0 : xi > 1.0 ? 1.0 : xi;
    switch (ramp) {
    case RAMP_QUADRATIC:
        return xi * xi;
    case RAMP_EXPONENTIAL:
        return (exp(3.0 * xi) - 1.0) / (exp(3.0) - 1.0);
    default:
        return xi;
    }
}

/* Depth into the layers of padded index i on an axis: 0 inside the interior, else the
 * distance in cells from the interior edge (1 = first layer cell). */
static int depth_into(int i, int lo, int n)
{
    if (i < lo)
        return lo - i;
    if (i >= lo + n)
        return i - (lo + n - 1);
    return 0;
}

static int clampi(int i, int lo, int hi)
{
    return i < lo ? lo : i > hi ? hi : i;
}

int random_boundary_apply(const struct random_boundary *rb, const int npad[3], const int n[3],
                          const int pml[6], uint64_t shot_id, float *v)
{
    if (rb->width < 1 || !(rb->vstable > 0.0) || !(rb->vmin > 0.0) ||
        (rb->range == RRANGE_NYQUIST && !(rb->vnyquist > 0.0)))
        return err_set(-EINVAL, "random boundary: width %d, vstable %g, vmin %g, vnyquist %g",
                       rb->width, rb->vstable, rb->vmin, rb->vnyquist);
    for (int a = 0; a < 3; a++)
        if (npad[a] != n[a] + pml[2 * a] + pml[2 * a + 1])
            return err_set(-EINVAL, "random boundary: padded size %d != %d + %d + %d on axis %d",
                           npad[a], n[a], pml[2 * a], pml[2 * a + 1], a);
    const double vhi = 0.99 * rb->vstable;
    const double lo_full = 0.5 * rb->vmin;
    const size_t sy = (size_t)npad[0], sz = (size_t)npad[0] * (size_t)npad[1];
    const int lox = pml[0], loy = pml[2], loz = pml[4];
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < npad[2]; z++)
        for (int y = 0; y < npad[1]; y++)
            for (int x = 0; x < npad[0]; x++) {
                int dx = depth_into(x, lox, n[0]), dy = depth_into(y, loy, n[1]),
                    dz = depth_into(z, loz, n[2]);
                if (!dx && !dy && !dz)
                    continue;
                /* Normalized depth: the deepest of the three axes, over that face's
                 * randomized width (the outer `width` cells of the layer). */
                double xi = 0.0;
                int d3[3] = {dx, dy, dz};
                int ix[3] = {x, y, z}, lo3[3] = {lox, loy, loz};
                for (int a = 0; a < 3; a++) {
                    if (!d3[a])
                        continue;
                    int w = ix[a] < lo3[a] ? pml[2 * a] : pml[2 * a + 1];
                    int rw = rb->width < w ? rb->width : w;
                    int start = w - rw; /* cells of plain extension before the random part */
                    double t = rw > 0 ? (double)(d3[a] - start) / (double)rw : 0.0;
                    if (t > xi)
                        xi = t;
                }
                size_t i = (size_t)z * sz + (size_t)y * sy + (size_t)x;
                /* v0: the velocity the layer holds before randomization (the caller's
                 * edge extension), at the nearest interior cell. */
                size_t e = (size_t)clampi(z, loz, loz + n[2] - 1) * sz +
                           (size_t)clampi(y, loy, loy + n[1] - 1) * sy +
                           (size_t)clampi(x, lox, lox + n[0] - 1);
                double v0 = v[e];
                double lo, hi;
                switch (rb->range) {
                case RRANGE_NYQUIST:
                    lo = rb->vnyquist;
                    hi = vhi;
                    break;
                case RRANGE_SYMMETRIC: {
                    double w = vhi - v0 < 0.5 * v0 ? vhi - v0 : 0.5 * v0;
                    w = w < 0.0 ? 0.0 : w;
                    lo = v0 - w;
                    hi = v0 + w;
                    break;
                }
                default:
                    lo = lo_full;
                    hi = vhi;
                    break;
                }
                if (lo > hi)
                    lo = hi;
                double r = random_boundary_uniform(rb->seed, shot_id, i);
                double vv = v0 + random_boundary_ramp(rb->ramp, xi) * (lo + r * (hi - lo) - v0);
                v[i] = (float)(vv > vhi ? vhi : vv);
            }
    return 0;
}
