/* imaging — CPU reference; see imaging.h. */
#include "kernels/imaging.h"

#include <math.h>

/* Below this many cells a loop runs on one thread: a parallel region per time step
 * costs more than the work on small grids (and much more on a busy machine). */
#define PAR_MIN 65536

int imaging_needs_receiver(int cond)
{
    return cond == IMAGING_RECEIVER || cond == IMAGING_BOTH;
}

int imaging_needs_source(int cond)
{
    return cond == IMAGING_SOURCE || cond == IMAGING_BOTH;
}

size_t imaging_cells(const struct imaging_box *b)
{
    return (size_t)b->n[0] * (size_t)b->n[1] * (size_t)b->n[2];
}

static size_t row_of(const struct imaging_box *b, int y, int z)
{
    return ((size_t)(z + b->off[2]) * (size_t)b->pitch[1] + (size_t)(y + b->off[1])) * (size_t)b->pitch[0] +
           (size_t)b->off[0];
}

void imaging_extract_cpu(const struct imaging_box *b, const float *field, float *out)
{
    const int nx = b->n[0], ny = b->n[1], nz = b->n[2];
#pragma omp parallel for collapse(2) schedule(static) if ((size_t)nx * ny * nz >= PAR_MIN)
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++) {
            const float *src = field + row_of(b, y, z);
            float *dst = out + ((size_t)z * (size_t)ny + (size_t)y) * (size_t)nx;
            for (int x = 0; x < nx; x++)
                dst[x] = src[x];
        }
}

void imaging_accumulate_row_cpu(const struct imaging_box *bu, const float *u, const struct imaging_box *bq,
                                const float *q, const struct imaging_acc *acc, int y, int z)
{
    const int nx = bq->n[0];
    float *num = acc->num, *ills = acc->ill_s, *illr = acc->ill_r;
    const float *ur = u + row_of(bu, y, z), *qr = q + row_of(bq, y, z);
    size_t o = ((size_t)z * (size_t)bq->n[1] + (size_t)y) * (size_t)nx;
    for (int x = 0; x < nx; x++) {
        float a = ur[x], c = qr[x];
        num[o + (size_t)x] += a * c;
        if (ills)
            ills[o + (size_t)x] += a * a;
        if (illr)
            illr[o + (size_t)x] += c * c;
    }
}

void imaging_accumulate_cpu(const struct imaging_box *bu, const float *u,
                            const struct imaging_box *bq, const float *q,
                            const struct imaging_acc *acc)
{
    const int nx = bq->n[0], ny = bq->n[1], nz = bq->n[2];
#pragma omp parallel for collapse(2) schedule(static) if ((size_t)nx * ny * nz >= PAR_MIN)
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            imaging_accumulate_row_cpu(bu, u, bq, q, acc, y, z);
}

static float max_of(const float *a, size_t n)
{
    float m = 0.0f;
#pragma omp parallel for reduction(max : m) schedule(static) if (n >= PAR_MIN)
    for (size_t i = 0; i < n; i++)
        m = a[i] > m ? a[i] : m;
    return m;
}

void imaging_finalize_cpu(const struct imaging_box *b, int cond, const struct imaging_acc *acc,
                          float *out)
{
    const size_t n = imaging_cells(b);
    if (cond == IMAGING_XCORR) {
        if (out != acc->num)
            for (size_t i = 0; i < n; i++)
                out[i] = acc->num[i];
        return;
    }
    const float es = cond != IMAGING_RECEIVER ? (float)IMAGING_EPS_REL * max_of(acc->ill_s, n) : 0.0f;
    const float er = imaging_needs_receiver(cond) ? (float)IMAGING_EPS_REL * max_of(acc->ill_r, n) : 0.0f;
#pragma omp parallel for schedule(static) if (n >= PAR_MIN)
    for (size_t i = 0; i < n; i++) {
        float den;
        if (cond == IMAGING_SOURCE)
            den = acc->ill_s[i] + es;
        else if (cond == IMAGING_RECEIVER)
            den = acc->ill_r[i] + er;
        else
            den = sqrtf((acc->ill_s[i] + es) * (acc->ill_r[i] + er));
        out[i] = den > 0.0f ? acc->num[i] / den : 0.0f;
    }
}
