/* traveltime — homogeneous and layered (eikonal) tables (see traveltime.h). */
#define LOG_COMPONENT "traveltime"
#include "kernels/traveltime.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"
#include "stream/log.h"

int tt_phase_list(int phases, int phase[2])
{
    switch (phases) {
    case TT_PHASES_P: phase[0] = 0; return 1;
    case TT_PHASES_S: phase[0] = 1; return 1;
    default: phase[0] = 0; phase[1] = 1; return 2;
    }
}

int tt_table_alloc(const struct tt_grid *g, int nsta, int phases, struct tt_table *out)
{
    memset(out, 0, sizeof *out);
    out->grid = *g;
    out->nsta = nsta;
    out->nphase = tt_phase_list(phases, out->phase);
    out->nj = (size_t)g->n[0] * g->n[1] * g->n[2];
    out->t = malloc((size_t)out->nsta * out->nphase * out->nj * sizeof(float));
    if (!out->t)
        return err_set(-ENOMEM, "travel-time table: out of memory (%zu MiB)",
                       ((size_t)out->nsta * out->nphase * out->nj * 4) >> 20);
    return 0;
}

/* Add the corrections and find the range; negative totals are kept (the engine shifts). */
void tt_table_finish(const struct tt_station *st, struct tt_table *t)
{
    double lo = DBL_MAX, hi = -DBL_MAX;
    for (int s = 0; s < t->nsta; s++)
        for (int p = 0; p < t->nphase; p++) {
            float *row = t->t + ((size_t)s * t->nphase + p) * t->nj;
            double c = st[s].corr[t->phase[p]];
            for (size_t j = 0; j < t->nj; j++) {
                row[j] = (float)(row[j] + c);
                lo = fmin(lo, row[j]);
                hi = fmax(hi, row[j]);
            }
        }
    t->tmin = lo;
    t->tmax = hi;
}

int tt_homogeneous(const struct tt_grid *g, const struct tt_station *st, int nsta, int phases,
                   double vp, double vs, struct tt_table *out)
{
    int rc = tt_table_alloc(g, nsta, phases, out);
    if (rc)
        return rc;
#pragma omp parallel for schedule(static)
    for (int s = 0; s < nsta; s++)
        for (int p = 0; p < out->nphase; p++) {
            double v = out->phase[p] == 0 ? vp : vs;
            float *row = out->t + ((size_t)s * out->nphase + p) * out->nj;
            for (size_t j = 0; j < out->nj; j++) {
                double q[3];
                tt_point(g, j, q);
                double dx = q[0] - st[s].x, dy = q[1] - st[s].y, dz = q[2] - st[s].z;
                row[j] = (float)(sqrt(dx * dx + dy * dy + dz * dz) / v);
            }
        }
    tt_table_finish(st, out);
    return 0;
}

/* ---- layered: eikonal ---------------------------------------------------------- */

static int layer_of(const struct tt_layers *m, double z)
{
    int i = 0;
    while (i + 1 < m->n && z >= m->top[i + 1])
        i++;
    return i;
}

int eikonal_sweep_2d(int nr, int nz, double h, double z0, double zs, const float *slow,
                     int init, double *t)
{
    size_t n = (size_t)nr * nz;
    for (size_t i = 0; i < n; i++)
        t[i] = INFINITY;
    int ks = (int)lround((zs - z0) / h);
    double ss = slow[(size_t)ks * nr];
    /* Exact straight-ray times wherever the straight path stays in the source's slowness
     * (the source's layer, or within INIT cells when INIT >= 0): they are true path
     * times, so the sweeps below can only lower them where a refracted or head wave
     * is faster, and the first-order error only builds up outside the source layer. */
    int klo = ks, khi = ks;
    while (klo > 0 && slow[(size_t)(klo - 1) * nr] == ss)
        klo--;
    while (khi + 1 < nz && slow[(size_t)(khi + 1) * nr] == ss)
        khi++;
    for (int k = klo; k <= khi; k++) {
        if (init >= 0 && abs(k - ks) > init)
            continue;
        for (int i = 0; i < nr; i++) {
            double dz = z0 + k * h - zs, r = i * h;
            if (init >= 0 && r * r + dz * dz > (double)init * init * h * h)
                continue;
            t[(size_t)k * nr + i] = sqrt(r * r + dz * dz) * ss;
        }
    }
    int sweeps = 0;
    for (int iter = 0; iter < 200; iter++) {
        int changed = 0;
        for (int dir = 0; dir < 4; dir++) {
            int di = (dir & 1) ? -1 : 1, dk = (dir & 2) ? -1 : 1;
            for (int kk = 0; kk < nz; kk++) {
                int k = dk > 0 ? kk : nz - 1 - kk;
                for (int ii = 0; ii < nr; ii++) {
                    int i = di > 0 ? ii : nr - 1 - ii;
                    size_t c = (size_t)k * nr + i;
                    /* r = 0 is a symmetry axis: the neighbour at -h equals the one at +h. */
                    double a = i > 0 ? t[c - 1] : (nr > 1 ? t[c + 1] : INFINITY);
                    if (i + 1 < nr && t[c + 1] < a)
                        a = t[c + 1];
                    double b = k > 0 ? t[c - nr] : INFINITY;
                    if (k + 1 < nz && t[c + nr] < b)
                        b = t[c + nr];
                    if (isinf(a) && isinf(b))
                        continue;
                    double fh = slow[c] * h, tn;
                    if (fabs(a - b) >= fh)
                        tn = fmin(a, b) + fh;
                    else
                        tn = 0.5 * (a + b + sqrt(2.0 * fh * fh - (a - b) * (a - b)));
                    if (tn < t[c]) {
                        if (t[c] - tn > 1e-7 * tn)
                            changed = 1;
                        t[c] = tn;
                    }
                }
            }
            sweeps++;
        }
        if (!changed)
            break;
    }
    return sweeps;
}

int tt_layered(const struct tt_grid *g, const struct tt_station *st, int nsta, int phases,
               const struct tt_layers *m, struct tt_table *out)
{
    int rc = tt_table_alloc(g, nsta, phases, out);
    if (rc)
        return rc;
    /* The eikonal grid is 16x finer than the trial grid (at least 1 m), coarsened only
     * when a station is so far that the (r, z) grid would exceed 4 M nodes. */
    double dmin = fmin(g->d[0], fmin(g->d[1], g->d[2]));
    double gx1 = g->o[0] + (g->n[0] - 1) * g->d[0], gy1 = g->o[1] + (g->n[1] - 1) * g->d[1];
    double gz0 = g->o[2], gz1 = g->o[2] + (g->n[2] - 1) * g->d[2];
    int fail = 0;
#pragma omp parallel for schedule(dynamic, 1)
    for (int s = 0; s < nsta; s++) {
        const struct tt_station *sta = &st[s];
        double rmax = 0;
        for (int c = 0; c < 4; c++) {
            double x = (c & 1) ? gx1 : g->o[0], y = (c & 2) ? gy1 : g->o[1];
            rmax = fmax(rmax, hypot(x - sta->x, y - sta->y));
        }
        double zlo = fmin(sta->z, gz0), zhi = fmax(sta->z, gz1);
        double h = fmax(dmin / 16.0, 1.0);
        while ((rmax / h + 3) * ((zhi - zlo) / h + 5) > 4e6)
            h *= 1.5;
        int nr = (int)ceil(rmax / h) + 3;
        int kabove = (int)ceil((sta->z - zlo) / h) + 2;
        double z0 = sta->z - kabove * h;
        int nz = (int)ceil((zhi - z0) / h) + 3;
        float *slow = malloc((size_t)nr * nz * sizeof(float));
        double *t = malloc((size_t)nr * nz * sizeof(double));
        if (!slow || !t) {
            free(slow);
            free(t);
#pragma omp atomic write
            fail = 1;
            continue;
        }
        for (int p = 0; p < out->nphase; p++) {
            for (int k = 0; k < nz; k++) {
                int L = layer_of(m, z0 + k * h);
                float sl = (float)(1.0 / (out->phase[p] == 0 ? m->vp[L] : m->vs[L]));
                for (int i = 0; i < nr; i++)
                    slow[(size_t)k * nr + i] = sl;
            }
            int sweeps = eikonal_sweep_2d(nr, nz, h, z0, sta->z, slow, -1, t);
            log_debug("station %s phase %c: eikonal %d x %d at h = %.2f m, %d sweeps", sta->name,
                      "PS"[out->phase[p]], nr, nz, h, sweeps);
            float *row = out->t + ((size_t)s * out->nphase + p) * out->nj;
            for (size_t j = 0; j < out->nj; j++) {
                double q[3];
                tt_point(g, j, q);
                double u = hypot(q[0] - sta->x, q[1] - sta->y) / h, w = (q[2] - z0) / h;
                int i0 = (int)u, k0 = (int)w;
                if (i0 > nr - 2)
                    i0 = nr - 2;
                if (k0 > nz - 2)
                    k0 = nz - 2;
                double fu = u - i0, fw = w - k0;
                const double *c = t + (size_t)k0 * nr + i0;
                row[j] = (float)((1 - fw) * ((1 - fu) * c[0] + fu * c[1]) +
                                 fw * ((1 - fu) * c[nr] + fu * c[nr + 1]));
            }
        }
        free(slow);
        free(t);
    }
    if (fail) {
        tt_free(out);
        return err_set(-ENOMEM, "layered travel times: out of memory for the eikonal grid");
    }
    tt_table_finish(st, out);
    return 0;
}

size_t tt_bytes(const struct tt_table *t)
{
    return (size_t)t->nsta * t->nphase * t->nj * sizeof(float);
}

void tt_free(struct tt_table *t)
{
    free(t->t);
    memset(t, 0, sizeof *t);
}
