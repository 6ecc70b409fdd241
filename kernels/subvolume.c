/* subvolume — see subvolume.h. */
#include "kernels/subvolume.h"

#include <errno.h>
#include <math.h>

#include "stream/error.h"

size_t subvolume_cells(const struct subvolume *sv)
{
    return (size_t)sv->n[0] * (size_t)sv->n[1] * (size_t)sv->n[2];
}

int subvolume_axis_contains(int n, double d, double o, double p)
{
    /* An axis of one cell (the y of a 2D model) holds the points on its line: within the
     * rounding of float32 coordinates (receivers) of the line's position. */
    if (n == 1)
        return fabs(p - o) <= 1e-6 * (fabs(o) + d);
    double t = (p - o) / d;
    /* a hair of tolerance so that points exactly on the last node count */
    return t >= -1e-9 && t <= (double)(n - 1) + 1e-9;
}

int subvolume_contains(const int n[3], const double d[3], const double o[3], const double p[3])
{
    for (int a = 0; a < 3; a++)
        if (!subvolume_axis_contains(n[a], d[a], o[a], p[a]))
            return 0;
    return 1;
}

static int clampi(int i, int lo, int hi)
{
    return i < lo ? lo : i > hi ? hi : i;
}

int subvolume_of_shot(const int n[3], const double d[3], const double o[3], const double src[3],
                      const float *rec, size_t nrec, double aperture, struct subvolume *out)
{
    if (!subvolume_contains(n, d, o, src))
        return err_set(-EINVAL, "source at (%g, %g, %g) m lies outside the model (%g..%g, %g..%g, %g..%g m)",
                       src[0], src[1], src[2], o[0], o[0] + (n[0] - 1) * d[0], o[1],
                       o[1] + (n[1] - 1) * d[1], o[2], o[2] + (n[2] - 1) * d[2]);
    double lo[2] = {src[0], src[1]}, hi[2] = {src[0], src[1]};
    for (size_t r = 0; r < nrec; r++) {
        double p[3] = {rec[3 * r], rec[3 * r + 1], rec[3 * r + 2]};
        if (!subvolume_contains(n, d, o, p))
            continue;
        for (int a = 0; a < 2; a++) {
            lo[a] = p[a] < lo[a] ? p[a] : lo[a];
            hi[a] = p[a] > hi[a] ? p[a] : hi[a];
        }
    }
    for (int a = 0; a < 2; a++) {
        int i0 = (int)floor((lo[a] - aperture - o[a]) / d[a] + 1e-9);
        int i1 = (int)ceil((hi[a] + aperture - o[a]) / d[a] - 1e-9);
        i0 = clampi(i0, 0, n[a] - 1);
        i1 = clampi(i1, 0, n[a] - 1);
        out->off[a] = i0;
        out->n[a] = i1 - i0 + 1;
    }
    out->off[2] = 0;
    out->n[2] = n[2];
    for (int a = 0; a < 3; a++)
        out->o[a] = o[a] + out->off[a] * d[a];
    return 0;
}

void subvolume_cut(const int n[3], const float *full, const struct subvolume *sv, float *part)
{
    const size_t nx = (size_t)n[0], ny = (size_t)n[1];
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < sv->n[2]; z++)
        for (int y = 0; y < sv->n[1]; y++) {
            const float *src = full + ((size_t)(z + sv->off[2]) * ny + (size_t)(y + sv->off[1])) * nx +
                               (size_t)sv->off[0];
            float *dst = part + ((size_t)z * (size_t)sv->n[1] + (size_t)y) * (size_t)sv->n[0];
            for (int x = 0; x < sv->n[0]; x++)
                dst[x] = src[x];
        }
}

void subvolume_paste_add(const int n[3], float *full, const struct subvolume *sv, const float *part)
{
    const size_t nx = (size_t)n[0], ny = (size_t)n[1];
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < sv->n[2]; z++)
        for (int y = 0; y < sv->n[1]; y++) {
            float *dst = full + ((size_t)(z + sv->off[2]) * ny + (size_t)(y + sv->off[1])) * nx +
                         (size_t)sv->off[0];
            const float *src = part + ((size_t)z * (size_t)sv->n[1] + (size_t)y) * (size_t)sv->n[0];
            for (int x = 0; x < sv->n[0]; x++)
                dst[x] += src[x];
        }
}
