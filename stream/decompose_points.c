/* decompose_points — a decomposed grid's sources and receivers (decompose_points.h). */
#include "stream/decompose_points.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/points.h"
#include "kernels/wave.h"
#include "stream/error.h"

/* Layer cells beyond face F of the whole grid (as the wave kernels lay them out). */
static int layers(const struct dd_plan *p, int f)
{
    int k = p->whole.grid.face[f];
    return k == PROP_FACE_CPML || k == PROP_FACE_RANDOM ? p->whole.grid.width[f] : 0;
}

/* The part (0..split[a]-1) holding global node index I along A (layers: the end parts). */
static int part_of(const struct dd_plan *p, int a, int i)
{
    int k = 0;
    while (k + 1 < p->split[a] && i >= p->cut[a][k + 1])
        k++;
    return k;
}

int dd_points_plan(const struct dd_plan *p, int rank, const double *xyz, size_t n, struct dd_points *out)
{
    return dd_points_plan_interp(p, rank, xyz, n, PROP_INTERP_SINC, out);
}

int dd_points_plan_interp(const struct dd_plan *p, int rank, const double *xyz, size_t n, int interp,
                          struct dd_points *out)
{
    memset(out, 0, sizeof *out);
    const struct prop_grid *g = &p->whole.grid;
    const bool two_d = g->n[1] == 1;
    const int ns = points_support(interp), nsy = two_d ? 1 : ns, nrow = nsy * ns;
    if (!ns)
        return err_set(-EINVAL, "decompose: unknown interpolation %d", interp);
    out->n = n;
    out->ns = ns;
    out->nsy = nsy;
    out->rank = rank;
    size_t m = n ? n : 1;
    out->w = calloc(3 * ns * m, sizeof *out->w);
    out->first = calloc(3 * m, sizeof *out->first);
    out->row_owner = calloc((size_t)nrow * m, sizeof *out->row_owner);
    out->slot = calloc(m, sizeof *out->slot);
    if (!out->w || !out->first || !out->row_owner || !out->slot) {
        dd_points_free(out, NULL);
        return err_set(-ENOMEM, "decompose: out of memory for %zu points", n);
    }
    for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++) {
            float *w = out->w + (3 * i + a) * ns;
            int *first = out->first + 3 * i + a;
            if (a == 1 && two_d) {
                w[0] = 1.0f; /* the one y node, as wave_points_create sets it */
                *first = 0;
                continue;
            }
            /* the whole grid's coordinates, computed as wave_points_create does */
            double x = (xyz[3 * i + a] - g->o[a]) / g->d[a];
            if (!(x >= -1e-9 && x <= g->n[a] - 1 + 1e-9)) {
                dd_points_free(out, NULL);
                return err_set(-EINVAL, "point %zu at (%g, %g, %g) m lies outside the model grid (axis %c: %g..%g m)",
                               i, xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2], "xyz"[a], g->o[a],
                               g->o[a] + (g->n[a] - 1) * g->d[a]);
            }
            points_axis_weights(x, interp, a == 2 && g->face[4] == PROP_FACE_FREE, first, w);
            if (*first < -layers(p, 2 * a) || *first + ns - 1 > g->n[a] - 1 + layers(p, 2 * a + 1)) {
                dd_points_free(out, NULL);
                return err_set(-EINVAL, "point %zu at (%g, %g, %g) m: its interpolation support (%d nodes) leaves "
                               "the grid along %c; move it inside or widen the absorbing layers", i, xyz[3 * i],
                               xyz[3 * i + 1], xyz[3 * i + 2], ns, "xyz"[a]);
            }
        }
        const int *f = out->first + 3 * i;
        size_t owned = 0;
        for (int kz = 0; kz < ns; kz++)
            for (int ky = 0; ky < nsy; ky++) {
                int cy = two_d ? 0 : part_of(p, 1, f[1] + ky), cz = part_of(p, 2, f[2] + kz);
                int r = cz * p->split[1] + cy;
                out->row_owner[i * nrow + kz * nsy + ky] = r;
                owned += r == rank;
            }
        if (owned == 0) {
            out->slot[i] = (size_t)-1;
            continue;
        }
        out->slot[i] = out->nslots;
        out->nslots += owned == (size_t)nrow ? 1 : owned; /* held whole: its sum */
        out->nnodes += owned * ns;
    }
    return 0;
}

int dd_points_bind(struct dd_points *dp, struct prop *s)
{
    const struct prop_grid *g = &prop_params_of(s)->grid;
    const int ns = dp->ns, nsy = dp->nsy, nrow = ns * nsy;
    int *ijk = malloc(3 * (dp->nnodes ? dp->nnodes : 1) * sizeof *ijk);
    dp->buf = malloc((dp->nnodes ? dp->nnodes : 1) * sizeof *dp->buf);
    if (!ijk || !dp->buf) {
        free(ijk);
        return err_set(-ENOMEM, "decompose: out of memory for %zu nodes", dp->nnodes);
    }
    size_t k = 0;
    for (size_t i = 0; i < dp->n; i++) {
        if (dp->slot[i] == (size_t)-1)
            continue;
        const int *f = dp->first + 3 * i;
        for (int kz = 0; kz < ns; kz++)
            for (int ky = 0; ky < nsy; ky++) {
                if (dp->row_owner[i * nrow + kz * nsy + ky] != dp->rank)
                    continue;
                for (int kx = 0; kx < ns; kx++, k++) {
                    ijk[3 * k] = f[0] + kx - g->origin[0];
                    ijk[3 * k + 1] = f[1] + ky - g->origin[1];
                    ijk[3 * k + 2] = f[2] + kz - g->origin[2];
                }
            }
    }
    int rc = prop_points_create_nodes(s, ijk, dp->nnodes, &dp->nodes);
    free(ijk);
    return rc;
}

void dd_points_free(struct dd_points *dp, struct prop *s)
{
    if (dp->nodes)
        prop_points_destroy(s, dp->nodes);
    free(dp->w);
    free(dp->first);
    free(dp->row_owner);
    free(dp->slot);
    free(dp->buf);
    memset(dp, 0, sizeof *dp);
}

int dd_points_inject(struct dd_points *dp, struct prop *s, const float *amps, size_t stride, float scale,
                     unsigned flags)
{
    const int ns = dp->ns, nsy = dp->nsy, nrow = ns * nsy;
    size_t k = 0;
    for (size_t i = 0; i < dp->n; i++) {
        if (dp->slot[i] == (size_t)-1)
            continue;
        const float amp = amps[i * stride] * scale;
        const float *wx = dp->w + 3 * i * ns, *wy = wx + ns, *wz = wy + ns;
        for (int kz = 0; kz < ns; kz++)
            for (int ky = 0; ky < nsy; ky++) {
                if (dp->row_owner[i * nrow + kz * nsy + ky] != dp->rank)
                    continue;
                /* the product wave_inject adds at this node (kernels/points.c) */
                for (int kx = 0; kx < ns; kx++)
                    dp->buf[k++] = amp * (wx[kx] * wy[ky] * wz[kz]);
            }
    }
    if (!dp->nnodes)
        return 0;
    return prop_inject(s, dp->nodes, dp->buf, 1, 1.0f, flags & PROP_INJECT_PHYSICAL);
}

int dd_points_sample(struct dd_points *dp, struct prop *s, float *out, size_t stride)
{
    if (!dp->nnodes)
        return 0;
    int rc = prop_sample(s, dp->nodes, dp->buf, 1, 0);
    if (rc < 0)
        return rc;
    const int ns = dp->ns, nsy = dp->nsy, nrow = ns * nsy;
    size_t k = 0;
    for (size_t i = 0; i < dp->n; i++) {
        if (dp->slot[i] == (size_t)-1)
            continue;
        const float *wx = dp->w + 3 * i * ns, *wy = wx + ns, *wz = wy + ns;
        size_t at = dp->slot[i];
        float sum = 0;
        int mine = 0;
        bool whole = true;
        for (int q = 0; q < nrow && whole; q++)
            whole = dp->row_owner[i * nrow + q] == dp->rank;
        for (int kz = 0; kz < ns; kz++)
            for (int ky = 0; ky < nsy; ky++) {
                if (dp->row_owner[i * nrow + kz * nsy + ky] != dp->rank)
                    continue;
                /* wave_sample's arithmetic, in its order (kernels/points.c) */
                float row = 0;
                for (int kx = 0; kx < ns; kx++)
                    row += wx[kx] * dp->buf[k++];
                float term = wy[ky] * wz[kz] * row;
                sum += term;
                if (!whole)
                    out[(at + mine++) * stride] = term;
            }
        if (whole)
            out[at * stride] = sum;
    }
    return 0;
}

void dd_points_assemble(const struct dd_points *shares, int nranks, const float *const *vals, size_t nt, float *tr)
{
    const struct dd_points *d0 = &shares[0];
    const int nrow = d0->ns * d0->nsy;
    int count[DD_MAX_PARTS];
    for (size_t i = 0; i < d0->n; i++) {
        const int *owner = d0->row_owner + i * nrow;
        float *t = tr + i * nt;
        bool whole = true;
        for (int q = 1; q < nrow; q++)
            whole = whole && owner[q] == owner[0];
        if (whole) {
            const struct dd_points *d = &shares[owner[0]];
            memcpy(t, vals[owner[0]] + d->slot[i] * nt, nt * sizeof *t);
            continue;
        }
        for (size_t it = 0; it < nt; it++) {
            float sum = 0;
            memset(count, 0, (size_t)nranks * sizeof *count);
            for (int q = 0; q < nrow; q++) {
                int r = owner[q];
                sum += vals[r][(shares[r].slot[i] + count[r]++) * nt + it];
            }
            t[it] = sum;
        }
    }
}
