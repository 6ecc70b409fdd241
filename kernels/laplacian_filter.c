/* laplacian_filter — CPU reference; see laplacian_filter.h. */
#include "kernels/laplacian_filter.h"

#include <stdbool.h>
#include <stddef.h>

void laplacian_filter_cpu(const int n[3], const double d[3], const float *in, float *out)
{
    const int nx = n[0], ny = n[1], nz = n[2];
    double h = d[0] < d[1] ? d[0] : d[1];
    h = h < d[2] ? h : d[2];
    const float cx = (float)(h * h / (d[0] * d[0]));
    const float cy = (float)(h * h / (d[1] * d[1]));
    const float cz = (float)(h * h / (d[2] * d[2]));
    const size_t sy = (size_t)nx, sz = (size_t)nx * (size_t)ny;
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++) {
            size_t row = (size_t)z * sz + (size_t)y * sy;
            bool edge = z == 0 || z == nz - 1 || y == 0 || y == ny - 1;
            for (int x = 0; x < nx; x++) {
                size_t i = row + (size_t)x;
                if (edge || x == 0 || x == nx - 1) {
                    out[i] = 0.0f;
                    continue;
                }
                float c = in[i];
                float lap = cx * (in[i - 1] - 2.0f * c + in[i + 1]) +
                            cy * (in[i - sy] - 2.0f * c + in[i + sy]) +
                            cz * (in[i - sz] - 2.0f * c + in[i + sz]);
                out[i] = -lap;
            }
        }
}
