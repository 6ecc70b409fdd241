/* decompose — the split of one grid into per-rank subdomains (stream/decompose.h). */
#include "stream/decompose.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

/* Layer cells beyond outer face F of the whole grid (CPML and random layers). */
static int outer_width(const struct prop_params *w, int f)
{
    int k = w->grid.face[f];
    return k == PROP_FACE_CPML || k == PROP_FACE_RANDOM ? w->grid.width[f] : 0;
}

/* K parts of N interior planes with LO and HI layer planes outside: boundaries into CUT
 * (K + 1), balanced on the planes computed (layers included), each part at least H
 * planes.  -EINVAL when N < K * H. */
static int cut_axis(int n, int lo, int hi, int k, int h, int *cut)
{
    if (k > 1 && (long)k * h > n)
        return -EINVAL;
    const long total = (long)lo + n + hi;
    cut[0] = 0;
    cut[k] = n;
    for (int i = 1; i < k; i++) {
        long b = (i * total + k / 2) / k - lo;
        cut[i] = (int)(b < 0 ? 0 : b > n ? n : b);
    }
    /* every part >= h: push boundaries up from the top, then down from the bottom */
    for (int i = 1; i < k; i++)
        if (cut[i] < cut[i - 1] + h)
            cut[i] = cut[i - 1] + h;
    for (int i = k - 1; i >= 1; i--)
        if (cut[i] > cut[i + 1] - h)
            cut[i] = cut[i + 1] - h;
    return 0;
}

int dd_plan_make(const struct prop_params *whole, int nranks, const int split[3], struct dd_plan *out)
{
    memset(out, 0, sizeof *out);
    int rc = prop_check(whole);
    if (rc < 0)
        return rc;
    if (nranks < 1 || nranks > DD_MAX_PARTS)
        return err_set(-EINVAL, "decompose: %d ranks (1..%d)", nranks, DD_MAX_PARTS);
    const struct prop_grid *g = &whole->grid;
    for (int a = 0; a < 3; a++)
        if (g->global_n[a] || g->origin[a])
            return err_set(-EINVAL, "decompose: the grid given is already a subdomain");
    const int h = whole->op.order / 2;
    const bool two_d = g->n[1] == 1;
    const int maxz = g->n[2] / h, maxy = two_d ? 1 : g->n[1] / h;
    int s[3] = {1, 1, 1};
    if (split && (split[0] || split[1] || split[2])) {
        if (split[0] != 1 || split[1] < 1 || split[2] < 1)
            return err_set(-EINVAL, "[runtime] split [%d, %d, %d]: give [1, ny, nz] (x is never cut)", split[0],
                           split[1], split[2]);
        if ((long)split[1] * split[2] != nranks)
            return err_set(-EINVAL, "[runtime] split [1, %d, %d] makes %d subdomains for %d ranks: the product must "
                           "be the rank count", split[1], split[2], split[1] * split[2], nranks);
        if (two_d && split[1] > 1)
            return err_set(-EINVAL, "[runtime] split [1, %d, %d]: a 2D grid (n[1] = 1) cannot be cut along y",
                           split[1], split[2]);
        for (int a = 1; a < 3; a++)
            if (split[a] > 1 && g->n[a] / split[a] < h)
                return err_set(-EINVAL, "[runtime] split [1, %d, %d]: %d subdomains along %c of a grid of %d planes "
                               "are thinner than the halo (order %d needs %d planes on each side of a cut): at "
                               "most %d along %c", split[1], split[2], split[a], "xyz"[a], g->n[a], whole->op.order,
                               h, g->n[a] / h, "xyz"[a]);
        memcpy(s, split, sizeof s);
    } else if (nranks <= maxz) {
        s[2] = nranks;
    } else {
        for (int kz = maxz < nranks ? maxz : nranks; kz >= 1 && s[1] * s[2] != nranks; kz--)
            if (nranks % kz == 0 && nranks / kz <= maxy) {
                s[1] = nranks / kz;
                s[2] = kz;
            }
        if (s[1] * s[2] != nranks)
            return err_set(-EINVAL, "[runtime] decompose = \"domain\": %d ranks are more than the grid allows: its %d "
                           "z-planes%s give at most %d x %d subdomains of at least %d planes (the halo of order %d; "
                           "a thinner one would need its neighbours' neighbours), and the rank count must factor "
                           "into them; use fewer ranks", nranks, g->n[2], two_d ? " (2D: no y cuts)" : " and y-planes",
                           maxy, maxz, h, whole->op.order);
    }
    out->whole = *whole;
    out->nranks = nranks;
    out->halo = h;
    memcpy(out->split, s, sizeof s);
    for (int a = 0; a < 3; a++) {
        out->cut[a] = malloc((size_t)(s[a] + 1) * sizeof(int));
        if (!out->cut[a]) {
            dd_plan_free(out);
            return err_set(-ENOMEM, "decompose: out of memory");
        }
        if (cut_axis(g->n[a], outer_width(whole, 2 * a), outer_width(whole, 2 * a + 1), s[a], h, out->cut[a]) < 0) {
            dd_plan_free(out);
            return err_set(-EINVAL, "[runtime] decompose = \"domain\": %d subdomains along %c of a grid of %d planes "
                           "are thinner than the halo (order %d: %d planes); at most %d", s[a], "xyz"[a], g->n[a],
                           whole->op.order, h, g->n[a] / h);
        }
    }
    return 0;
}

void dd_plan_free(struct dd_plan *p)
{
    for (int a = 0; a < 3; a++) {
        free(p->cut[a]);
        p->cut[a] = NULL;
    }
}

void dd_coords(const struct dd_plan *p, int rank, int c[3])
{
    c[0] = 0;
    c[1] = rank % p->split[1];
    c[2] = rank / p->split[1];
}

int dd_neighbour(const struct dd_plan *p, int rank, int f)
{
    int c[3];
    dd_coords(p, rank, c);
    int a = f / 2, step = f % 2 ? 1 : -1;
    c[a] += step;
    if (c[a] < 0 || c[a] >= p->split[a])
        return -1;
    return c[2] * p->split[1] + c[1];
}

void dd_sub_params(const struct dd_plan *p, int rank, double vmax_cpml, struct prop_params *out)
{
    *out = p->whole;
    struct prop_grid *g = &out->grid;
    int c[3];
    dd_coords(p, rank, c);
    for (int a = 0; a < 3; a++) {
        g->global_n[a] = p->whole.grid.n[a];
        g->origin[a] = p->cut[a][c[a]];
        g->n[a] = p->cut[a][c[a] + 1] - p->cut[a][c[a]];
        g->o[a] = p->whole.grid.o[a] + g->origin[a] * p->whole.grid.d[a];
        for (int side = 0; side < 2; side++)
            if (dd_neighbour(p, rank, 2 * a + side) >= 0) {
                g->face[2 * a + side] = PROP_FACE_HALO;
                /* width: the whole grid's layer there (places the subdomain in it) */
                g->width[2 * a + side] = outer_width(&p->whole, 2 * a + side);
            }
    }
    out->vmax_cpml = vmax_cpml;
}

int dd_rank_info(const struct dd_plan *p, int rank, struct dd_rank_info *out)
{
    memset(out, 0, sizeof *out);
    struct prop_params sp;
    dd_sub_params(p, rank, 1.0, &sp);
    struct prop_layout L;
    int rc = prop_layout_of(&sp, &L);
    if (rc < 0)
        return rc;
    for (int a = 0; a < 3; a++) {
        out->origin[a] = sp.grid.origin[a];
        out->n[a] = sp.grid.n[a];
        out->npad[a] = L.npad[a];
    }
    /* floats per halo cell: the acoustic field, once a step; TTI's p and q after the step
     * and the pass-1 products of both between its passes (kernels/tti_internal.h), through
     * buffers of two floats a cell */
    const size_t fields = p->whole.physics == PROP_TTI ? 2 : 1, exchanges = fields;
    size_t cells = 0;
    for (int f = 0; f < PROP_FACES; f++)
        if (sp.grid.face[f] == PROP_FACE_HALO) {
            int a = f / 2, b = (a + 1) % 3, c = (a + 2) % 3;
            cells += (size_t)p->halo * L.npad[b] * L.npad[c];
        }
    out->halo_bytes = cells * fields * exchanges * sizeof(float);
    out->prop_bytes = prop_memory_bytes(&sp);
    out->buffer_bytes = 2 * cells * fields * sizeof(float);
    return 0;
}
