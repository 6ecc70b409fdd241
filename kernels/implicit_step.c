/* implicit_step — the CPU reference of the implicit operator's step (implicit.h says
 * what the line ends, the CPML and the boundary strategy do).  Lines along x are solved
 * one by one; lines along y and z as panels of all x at once (one x-z or x-y plane per
 * thread, the recursion marching along the axis, vectorised across x: the same shape as
 * the CUDA y and z sweeps). */
#include "kernels/implicit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpml.h"
#include "kernels/propagator.h"
#include "kernels/wave_internal.h"
#include "stream/error.h"

int implicit_params_check(const struct wave_params *p)
{
    for (int f = 0; f < 6; f++)
        if (wave_face_kind(p, f) == WAVE_FACE_HALO)
            return err_set(-ENOTSUP, "wave: the implicit operator solves each grid line as a whole and cannot run "
                           "on a subdomain (face %d is HALO): use operator = \"taylor\" or \"optimized\" with "
                           "subdomains", f);
    return 0;
}

int implicit_init(struct wave_sim *s)
{
    struct implicit_state *im = calloc(1, sizeof *im);
    if (!im)
        return err_set(-ENOMEM, "wave: out of memory (implicit operator)");
    s->imp = im;
    int rc = implicit_design(s->p.order, s->p.op_band, &im->co);
    if (rc < 0)
        return rc;
    const struct wave_layout *L = &s->L;
    im->K = im->co.K;
    im->b = (float)im->co.b;
    for (int a = 0; a < 3; a++)
        for (int k = 0; k <= im->K; k++)
            im->c[a][k] = (float)(im->co.c[k] / (s->p.d[a] * s->p.d[a]));
    /* A safety net (the callers check stability: kernels/stability.h, rtm.c): the
     * symbol peaks at implicit_symbol_max, above Taylor's, so a dt chosen by the Taylor
     * rule can be unstable here. */
    double k = 0, smax = implicit_symbol_max(s->p.order, s->p.op_band);
    for (int a = 0; a < 3; a++)
        if (a != 1 || !wave_is_2d(s))
            k += 1.0 / (s->p.d[a] * s->p.d[a]);
    const double dt_max = 2.0 / (s->vmax * sqrt(smax * k));
    if (s->p.dt > dt_max)
        return err_set(-EINVAL, "wave: dt %g s exceeds the implicit operator's stable limit %g s (order %d, band "
                       "%.3f, velocity up to %g m/s)", s->p.dt, dt_max, s->p.order, im->co.band, s->vmax);
    im->nmax = L->npad[0];
    for (int a = 1; a < 3; a++)
        if (L->npad[a] > im->nmax)
            im->nmax = L->npad[a];
    for (int a = 0; a < 3; a++) {
        const int np = L->npad[a], wlo = L->pml[2 * a], whi = L->pml[2 * a + 1];
        if (!(im->taps[a] = calloc((size_t)np, sizeof *im->taps[a])))
            return err_set(-ENOMEM, "wave: out of memory (implicit operator)");
        for (int x = 0; x < np; x++) {
            struct implicit_tap *t = &im->taps[a][x];
            t->js = cpml_slab_index(x, np, wlo, whi);
            if (t->js < 0)
                continue;
            float cu[WAVE_ORDER_MAX / 2 + 1], cd[WAVE_ORDER_MAX / 2 + 1];
            size_t ou[WAVE_ORDER_MAX / 2 + 1], od[WAVE_ORDER_MAX / 2 + 1];
            wave_cpml_dpsi_taps(s, a, x, t->js, 1, cu, cd, ou, od);
            for (int l = 1; l <= s->r; l++) {
                t->cu[l] = cu[l];
                t->cd[l] = cd[l];
                t->ou[l] = (int)ou[l];
                t->od[l] = (int)od[l];
            }
        }
    }
    im->cp = malloc(sizeof(float) * im->nmax);
    im->inv = malloc(sizeof(float) * im->nmax);
    if (!im->cp || !im->inv)
        return err_set(-ENOMEM, "wave: out of memory (implicit operator)");
    implicit_factor(im->co.b, im->nmax, im->cp, im->inv);
    /* the inner box: interior points >= K from every face that has a strip (a NONE
     * axis has no strip and no lines) */
    bool empty = false;
    for (int a = 0; a < 3; a++) {
        bool none = s->p.face[2 * a] == WAVE_FACE_NONE;
        im->lo[a] = none ? 0 : im->K;
        im->hi[a] = none ? L->n[a] : L->n[a] - im->K;
        empty = empty || im->hi[a] <= im->lo[a];
    }
    im->ifc_count = 0;
    for (int a = 0; a < 3; a++) {
        if (empty || (a == 1 && wave_is_2d(s))) {
            im->ifc_n[a] = 0;
            continue;
        }
        size_t lines = 1;
        for (int q = 0; q < 3; q++)
            if (q != a)
                lines *= (size_t)(im->hi[q] - im->lo[q]);
        im->ifc_n[a] = 2 * lines;
        im->ifc_count += im->ifc_n[a];
    }
    return 0;
}

void implicit_free(struct wave_sim *s)
{
    struct implicit_state *im = s->imp;
    if (!im)
        return;
    free(im->cp);
    free(im->inv);
    for (int a = 0; a < 3; a++)
        free(im->taps[a]);
    if (s->dev->kind != SL_DEVICE_CUDA) {
        free(im->lap);
        free(im->ifc);
    }
    free(im);
    s->imp = NULL;
}

/* ---- the pieces of a sweep ----------------------------------------------------------- */

/* R[(t - r0) W + w] = c0 f(t) + sum_k ck (f(t+k) + f(t-k)) for rows r0 <= t < r1 of W
 * lanes; F is lane 0's point at row 0, rows ST apart, lanes contiguous.  MIRROR: f(t) =
 * -f(-t) above row 0 (the free surface). */
static void rhs(const float *F, ptrdiff_t st, int W, int r0, int r1, const float *c, int K, bool mirror, float *R)
{
    for (int t = r0; t < r1; t++) {
        float *row = R + (size_t)(t - r0) * W;
        const float *f0 = F + (ptrdiff_t)t * st;
        for (int w = 0; w < W; w++)
            row[w] = c[0] * f0[w];
        for (int k = 1; k <= K; k++) {
            const float *up = F + (ptrdiff_t)(t + k) * st;
            if (mirror && t - k < 0) {
                const float *dn = F + (ptrdiff_t)(k - t) * st;
                for (int w = 0; w < W; w++)
                    row[w] += c[k] * (up[w] - dn[w]);
            } else {
                const float *dn = F + (ptrdiff_t)(t - k) * st;
                for (int w = 0; w < W; w++)
                    row[w] += c[k] * (up[w] + dn[w]);
            }
        }
    }
}

/* The rows of axis A's lines that a sweep solves, padded coordinates [*r0, *r1), and
 * whether the interface values close them (IFC) — see implicit.h. */
static void line_rows(const struct wave_sim *s, int a, bool ifc, int *r0, int *r1, bool *mirror)
{
    const struct implicit_state *im = s->imp;
    const struct wave_layout *L = &s->L;
    *mirror = a == 2 && s->p.free_surface;
    if (ifc) {
        *r0 = L->pml[2 * a] + im->lo[a];
        *r1 = L->pml[2 * a] + im->hi[a];
    } else {
        *r0 = *mirror ? 1 : 0; /* the surface row: g = 0 exactly */
        *r1 = L->npad[a];
    }
}

/* Axis A's contribution at padded point (i, j, k), allocated index C: g, plus the CPML
 * terms (explicit first derivatives of psi, zeta updated) in a layer of that axis. */
static inline float cpml_term(struct wave_sim *s, int a, int i, int j, int k, float g)
{
    const struct wave_layout *L = &s->L;
    const int x = a == 0 ? i : a == 1 ? j : k;
    const struct implicit_tap *tp = &s->imp->taps[a][x];
    if (tp->js < 0)
        return g;
    const size_t sst = a == 0 ? 1 : a == 1 ? (size_t)L->npad[0] : (size_t)L->npad[0] * L->npad[1];
    const size_t e = wave_slab_elem(L, a, i, j, k, tp->js);
    const float *psi = s->psi[a];
    float dpsi = 0;
    for (int l = 1; l <= s->r; l++)
        dpsi += tp->cu[l] * psi[e + tp->ou[l] * sst] - tp->cd[l] * psi[e - tp->od[l] * sst];
    const float t = g + dpsi;
    const float z = s->pb[a][x] * s->zeta[a][e] + s->pa[a][x] * t;
    s->zeta[a][e] = z;
    return t + z;
}

/* ---- the sweeps ------------------------------------------------------------------------ */

struct sweep {
    const float *p;     /* the field */
    float *lap;         /* the Laplacian being summed (allocated layout) */
    int blo[3], bhi[3]; /* the box written, padded coordinates */
    bool cpml, ifc, first;
    float *ifc_out;     /* implicit_ifc_compute_cpu: g at the interfaces goes here instead */
};

static size_t at(const struct wave_layout *L, int i, int j, int k)
{
    return (size_t)(k + L->pad_off[2]) * L->stride_z + (size_t)(j + L->pad_off[1]) * L->stride_y +
           (size_t)(i + L->pad_off[0]);
}

/* Index of line (u, v) (the other two coordinates of axis A, inner-box relative) in the
 * interface planes of axis A; the B plane follows the A plane. */
static size_t ifc_line(const struct implicit_state *im, int a, int u, int v)
{
    if (a == 0)
        return (size_t)v * (im->hi[1] - im->lo[1]) + u;  /* u = j, v = k */
    return (size_t)v * (im->hi[0] - im->lo[0]) + u;      /* u = i, v = k (a = 1) or j (a = 2) */
}

static const float *ifc_base(const struct implicit_state *im, int a)
{
    const float *f = im->ifc;
    for (int q = 0; q < a; q++)
        f += im->ifc_n[q];
    return f;
}

/* The g values of one solved panel: rows [r0, r1) of W lanes in R.  Written into the box
 * (lap), or, for implicit_ifc_compute_cpu, the rows A and B into the interface planes. */
static void deliver(struct wave_sim *s, struct sweep *w, int a, int i0, int j, int k, int W, int r0, int r1,
                    const float *R)
{
    const struct wave_layout *L = &s->L;
    const struct implicit_state *im = s->imp;
    if (w->ifc_out) {
        float *base = w->ifc_out;
        for (int q = 0; q < a; q++)
            base += im->ifc_n[q];
        const size_t half = im->ifc_n[a] / 2;
        const int rows[2] = {L->pml[2 * a] + im->lo[a] - 1, L->pml[2 * a] + im->hi[a]};
        for (int side = 0; side < 2; side++) {
            const int t = rows[side];
            for (int l = 0; l < W; l++) {
                float g = t >= r0 && t < r1 ? R[(size_t)(t - r0) * W + l] : 0.0f;
                size_t li = a == 0 ? ifc_line(im, 0, j - L->pml[2] - im->lo[1], k - L->pml[4] - im->lo[2])
                          : a == 1 ? ifc_line(im, 1, i0 + l - L->pml[0] - im->lo[0], k - L->pml[4] - im->lo[2])
                                   : ifc_line(im, 2, i0 + l - L->pml[0] - im->lo[0], j - L->pml[2] - im->lo[1]);
                base[side * half + li] = g;
            }
        }
        return;
    }
    for (int t = w->blo[a]; t < w->bhi[a]; t++)
        for (int l = 0; l < W; l++) {
            const int ii = a == 0 ? t : i0 + l, jj = a == 1 ? t : j, kk = a == 2 ? t : k;
            float g = t >= r0 && t < r1 ? R[(size_t)(t - r0) * W + l] : 0.0f;
            if (w->cpml)
                g = cpml_term(s, a, ii, jj, kk, g);
            float *dst = w->lap + at(L, ii, jj, kk);
            *dst = w->first ? g : *dst + g;
        }
}

/* All lines of axis A through the box.  0 or -ENOMEM. */
static int sweep_axis(struct wave_sim *s, struct sweep *w, int a)
{
    const struct wave_layout *L = &s->L;
    const struct implicit_state *im = s->imp;
    int r0, r1;
    bool mirror;
    line_rows(s, a, w->ifc, &r0, &r1, &mirror);
    const int m = r1 - r0;
    if (m < 1)
        return 0;
    const float *c = im->c[a];
    const ptrdiff_t st = a == 0 ? 1 : a == 1 ? (ptrdiff_t)L->stride_y : (ptrdiff_t)L->stride_z;
    const int W = a == 0 ? 1 : w->bhi[0] - w->blo[0];
    const int i0 = w->blo[0];
    const int ny = w->bhi[1] - w->blo[1], nz = w->bhi[2] - w->blo[2];
    /* x lines: one per (y, z); y lines: one x-y panel per z; z lines: one x-z panel per y */
    const long total = a == 0 ? (long)ny * nz : a == 1 ? nz : ny;
    int bad = 0;
#pragma omp parallel reduction(| : bad)
    {
        float *R = malloc(sizeof(float) * (size_t)m * W);
        if (!R)
            bad = 1;
#pragma omp for schedule(static)
        for (long q = 0; q < total; q++) {
            if (!R)
                continue;
            const int j = a == 0 ? w->blo[1] + (int)(q % ny) : a == 1 ? 0 : w->blo[1] + (int)q;
            const int k = a == 0 ? w->blo[2] + (int)(q / ny) : a == 1 ? w->blo[2] + (int)q : 0;
            const float *F = w->p + (a == 0   ? at(L, 0, j, k)
                                     : a == 1 ? at(L, i0, 0, k)
                                              : at(L, i0, j, 0));
            rhs(F, st, W, r0, r1, c, im->K, mirror, R);
            const float *pa = NULL, *pb = NULL;
            float ga0 = 0, gb0 = 0;
            if (w->ifc) {
                const float *base = ifc_base(im, a);
                const size_t half = im->ifc_n[a] / 2;
                if (a == 0) {
                    size_t li = ifc_line(im, 0, j - L->pml[2] - im->lo[1], k - L->pml[4] - im->lo[2]);
                    ga0 = base[li];
                    gb0 = base[half + li];
                } else {
                    size_t li = a == 1 ? ifc_line(im, 1, i0 - L->pml[0] - im->lo[0], k - L->pml[4] - im->lo[2])
                                       : ifc_line(im, 2, i0 - L->pml[0] - im->lo[0], j - L->pml[2] - im->lo[1]);
                    pa = base + li;
                    pb = base + half + li;
                }
            }
            if (a == 0)
                implicit_solve_line(im->b, im->cp, im->inv, m, R, 1, ga0, gb0);
            else
                implicit_solve_panel(im->b, im->cp, im->inv, m, W, R, pa, pb);
            deliver(s, w, a, i0, j, k, W, r0, r1, R);
        }
        free(R);
    }
    return bad ? err_set(-ENOMEM, "wave: out of memory (implicit sweeps)") : 0;
}

static bool has_y(const struct wave_sim *s) { return !wave_is_2d(s); }

int implicit_step_cpu(struct wave_sim *s, bool cpml, bool interior)
{
    const struct wave_layout *L = &s->L;
    struct implicit_state *im = s->imp;
    if (!im->lap) {
        im->lap = calloc(L->count, sizeof(float));
        if (!im->lap)
            return err_set(-ENOMEM, "wave: out of memory (implicit operator scratch, %zu floats)", L->count);
    }
    cpml = cpml && (s->slab_count[0] + s->slab_count[1] + s->slab_count[2]) > 0;
    const bool ifc = im->ifc_valid && !cpml && im->ifc_count > 0;
    interior = interior && !cpml;
    im->ifc_valid = false;
    if (cpml)
        wave_psi_update(s);
    struct sweep w = {.p = s->cur, .lap = im->lap, .cpml = cpml, .ifc = ifc};
    for (int a = 0; a < 3; a++) {
        if (ifc) {
            w.blo[a] = L->pml[2 * a] + im->lo[a];
            w.bhi[a] = L->pml[2 * a] + im->hi[a];
        } else if (interior) {
            w.blo[a] = L->pml[2 * a];
            w.bhi[a] = L->pml[2 * a] + L->n[a];
        } else {
            w.blo[a] = 0;
            w.bhi[a] = L->npad[a];
        }
    }
    int rc = 0;
    bool first = true;
    for (int a = 0; a < 3 && rc == 0; a++) {
        if (a == 1 && !has_y(s))
            continue;
        w.first = first;
        rc = sweep_axis(s, &w, a);
        first = false;
    }
    if (rc < 0)
        return rc;
    const float *p = s->cur, *vel = s->vel, *lap = im->lap;
    float *q = s->prev;
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = w.blo[2]; k < w.bhi[2]; k++)
        for (int j = w.blo[1]; j < w.bhi[1]; j++) {
            const size_t row = at(L, 0, j, k);
            for (int i = w.blo[0]; i < w.bhi[0]; i++) {
                const size_t c = row + i;
                q[c] = 2.0f * p[c] - q[c] + vel[c] * lap[c];
            }
        }
    return 0;
}

int implicit_ifc_compute_cpu(struct wave_sim *s, float *buf)
{
    struct implicit_state *im = s->imp;
    const struct wave_layout *L = &s->L;
    if (im->ifc_count == 0)
        return 0;
    /* every line through the inner box, solved whole (as the forward step solves it) */
    struct sweep w = {.p = s->cur, .ifc_out = buf};
    for (int a = 0; a < 3; a++) {
        w.blo[a] = L->pml[2 * a] + im->lo[a];
        w.bhi[a] = L->pml[2 * a] + im->hi[a];
    }
    int rc = 0;
    for (int a = 0; a < 3 && rc == 0; a++)
        if (a != 1 || has_y(s))
            rc = sweep_axis(s, &w, a);
    return rc;
}
