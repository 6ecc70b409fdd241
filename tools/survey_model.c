/* survey_model — see survey_model.h. */
#include "tools/survey_model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

double survey_velocity(const struct survey_model *m, double x, double y, double z)
{
    double v = m->v0;
    for (int i = 0; i < m->nlayers; i++)
        if (z >= m->layer_z[i])
            v = m->layer_v[i];
    /* below the dipping interface the rock is at least dip_v fast: a dipping layer that
     * the deeper, faster horizontal layers cut off */
    if (m->dip_v > 0 && z >= m->dip_z + x * tan(m->dip_deg * M_PI / 180.0) && v < m->dip_v)
        v = m->dip_v;
    if (survey_in_salt(m, x, y, z))
        v = m->salt_v;
    return v;
}

int survey_in_salt(const struct survey_model *m, double x, double y, double z)
{
    if (!(m->salt_v > 0 && z >= m->salt_top && z <= m->salt_top + m->salt_h))
        return 0;
    /* a dome: the horizontal section shrinks with height above the base like a half
     * ellipse, with a flat top */
    double h = (z - m->salt_top) / m->salt_h;       /* 0 at the top, 1 at the base */
    double s = sqrt(fmin(1.0, 0.35 + 0.65 * h));   /* relative radius */
    double ex = (x - m->salt_c[0]) / (m->salt_r[0] * s);
    double ey = (y - m->salt_c[1]) / (m->salt_r[1] * s);
    return ex * ex + ey * ey <= 1.0;
}

struct survey_tti survey_tti_at(const struct survey_model *m, double x, double y, double z)
{
    struct survey_tti t = {0, 0, 0, 0};
    if (!m->tti)
        return t;
    t.theta = m->theta;
    t.phi = m->phi;
    if (!survey_in_salt(m, x, y, z)) {
        t.eps = m->eps;
        t.delta = m->delta;
    }
    return t;
}

void survey_fill_tti(const struct survey_model *m, float *eps, float *delta, float *theta, float *phi)
{
    size_t nx = (size_t)m->n[0], ny = (size_t)m->n[1], nz = (size_t)m->n[2];
#pragma omp parallel for
    for (size_t k = 0; k < nz; k++)
        for (size_t j = 0; j < ny; j++)
            for (size_t i = 0; i < nx; i++) {
                size_t at = (k * ny + j) * nx + i;
                struct survey_tti t = survey_tti_at(m, (double)i * m->d[0], (double)j * m->d[1], (double)k * m->d[2]);
                eps[at] = (float)t.eps;
                delta[at] = (float)t.delta;
                theta[at] = (float)t.theta;
                phi[at] = (float)t.phi;
            }
}

void survey_fill(const struct survey_model *m, float *v)
{
    size_t nx = (size_t)m->n[0], ny = (size_t)m->n[1], nz = (size_t)m->n[2];
#pragma omp parallel for
    for (size_t k = 0; k < nz; k++)
        for (size_t j = 0; j < ny; j++)
            for (size_t i = 0; i < nx; i++)
                v[(k * ny + j) * nx + i] = (float)survey_velocity(m, (double)i * m->d[0],
                                                                  (double)j * m->d[1],
                                                                  (double)k * m->d[2]);
}

/* One pass of a running box mean of half-width R along axis AX (stride S, length N). */
static void box_1d(float *v, const int n[3], int ax, int r)
{
    size_t nx = (size_t)n[0], ny = (size_t)n[1], nz = (size_t)n[2];
    size_t stride = ax == 0 ? 1 : ax == 1 ? nx : nx * ny;
    int len = n[ax];
    size_t lines = nx * ny * nz / (size_t)len;
#pragma omp parallel
    {
        double *tmp = malloc((size_t)len * sizeof *tmp);
#pragma omp for
        for (size_t l = 0; l < lines; l++) {
            /* the first element of line l */
            size_t base;
            if (ax == 0)
                base = l * nx;
            else if (ax == 1)
                base = (l / nx) * nx * ny + l % nx;
            else
                base = l;
            for (int i = 0; i < len; i++) {
                double s = 0;
                int c = 0;
                for (int k = i - r; k <= i + r; k++)
                    if (k >= 0 && k < len) {
                        s += v[base + (size_t)k * stride];
                        c++;
                    }
                tmp[i] = s / c;
            }
            for (int i = 0; i < len; i++)
                v[base + (size_t)i * stride] = (float)tmp[i];
        }
        free(tmp);
    }
}

int survey_smooth(float *v, const int n[3], int r)
{
    if (r <= 0)
        return 0;
    for (int ax = 0; ax < 3; ax++)
        box_1d(v, n, ax, r);
    return 0;
}

int survey_write_f32(const char *path, const float *v, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    /* the engine and the file are both little-endian on every supported machine */
    size_t w = fwrite(v, sizeof *v, n, f);
    int bad = w != n;
    if (fclose(f) != 0 || bad)
        return err_set(-EIO, "%s: short write (%zu of %zu values)", path, w, n);
    return 0;
}
