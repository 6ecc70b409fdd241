/* laplacian_filter — CPU reference; see laplacian_filter.h. */
#include "kernels/laplacian_filter.h"

#include <stddef.h>

/* The second difference along one axis at position P of N, stride S: mirrored at the
 * faces (the neighbour outside is the one inside), nothing along an axis of one cell.
 * Identical arithmetic in laplacian_filter.cu. */
static inline float d2(const float *in, size_t i, int p, int n, size_t s)
{
    if (n < 2)
        return 0.0f;
    const float *c = in + i;
    float lo = p > 0 ? c[-(ptrdiff_t)s] : c[s];
    float hi = p < n - 1 ? c[s] : c[-(ptrdiff_t)s];
    return lo - 2.0f * c[0] + hi;
}

void laplacian_filter_cpu(const int n[3], const double d[3], const float *in, float *out)
{
    const int nx = n[0], ny = n[1], nz = n[2];
    const double h = laplacian_filter_h(n, d);
    const float cx = (float)(h * h / (d[0] * d[0]));
    const float cy = (float)(h * h / (d[1] * d[1]));
    const float cz = (float)(h * h / (d[2] * d[2]));
    const size_t sy = (size_t)nx, sz = (size_t)nx * (size_t)ny;
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++) {
            size_t row = (size_t)z * sz + (size_t)y * sy;
            for (int x = 0; x < nx; x++) {
                size_t i = row + (size_t)x;
                float lap = cx * d2(in, i, x, nx, 1) + cy * d2(in, i, y, ny, sy) + cz * d2(in, i, z, nz, sz);
                out[i] = -lap;
            }
        }
}
