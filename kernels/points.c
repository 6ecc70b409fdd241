/* points — interpolation weights and the CPU reference of injection and sampling. */
#include "kernels/points.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kaiser.h"
#include "kernels/wave_internal.h"
#include "stream/error.h"

int points_support(int interp)
{
    switch (interp) {
    case WAVE_INTERP_SINC: return 2 * POINTS_SINC_HALF;
    case WAVE_INTERP_TRILINEAR: return 2;
    case WAVE_INTERP_NEAREST: return 1;
    }
    return 0;
}


int points_weights_1d(double x, int interp, int *first, float *w)
{
    int ns = points_support(interp);
    double fl = floor(x);
    if (interp == WAVE_INTERP_NEAREST) {
        *first = (int)lround(x);
        w[0] = 1.0f;
        return 1;
    }
    if (interp == WAVE_INTERP_TRILINEAR) {
        *first = (int)fl;
        w[0] = (float)(1.0 - (x - fl));
        w[1] = (float)(x - fl);
        return 2;
    }
    *first = (int)fl - POINTS_SINC_HALF + 1;
    const double r = POINTS_SINC_HALF, b = POINTS_SINC_B, i0b = kaiser_i0(b);
    for (int k = 0; k < ns; k++)
        w[k] = (float)kaiser_sinc(x - (*first + k), r, b, i0b);
    return ns;
}

int points_axis_weights(double x, int interp, bool fold, int *first, float *w)
{
    int ns = points_weights_1d(x, interp, first, w);
    if (fold && *first < 0) {
        /* Support above the surface: the field there is the odd mirror of the field
         * below (p(-m) = -p(m), p(0) = 0), so fold each weight onto its mirror node
         * with the opposite sign (Hicks 2002) and start the support at the
         * surface.  Exact for sampling, and by adjointness for injection. */
        float f[POINTS_MAX_SUPPORT] = {0};
        for (int k = 0; k < ns; k++) {
            int idx = *first + k;
            if (idx > 0)
                f[idx] += w[k];
            else if (idx < 0)
                f[-idx] -= w[k];
        }
        for (int k = 0; k < ns; k++)
            w[k] = f[k];
        *first = 0;
    }
    return ns;
}

int wave_points_create(struct wave_sim *s, const double *xyz, size_t n, int interp,
                       struct wave_points **out)
{
    *out = NULL;
    int ns = points_support(interp);
    if (!ns)
        return err_set(-EINVAL, "wave points: unknown interpolation %d", interp);
    struct wave_points *pts = calloc(1, sizeof *pts);
    if (!pts)
        return err_set(-ENOMEM, "wave points: out of memory");
    pts->s = s;
    pts->n = n;
    pts->ns = ns;
    const bool two_d = wave_is_2d(s);
    for (int a = 0; a < 3; a++)
        pts->nsa[a] = a == 1 && two_d ? 1 : ns;
    pts->base = malloc(sizeof(int) * 3 * (n ? n : 1));
    pts->w = malloc(sizeof(float) * 3 * (size_t)ns * (n ? n : 1));
    if (!pts->base || !pts->w) {
        wave_points_destroy(pts);
        return err_set(-ENOMEM, "wave points: out of memory");
    }
    const struct wave_layout *L = &s->L;
    const struct wave_params *p = &s->p;
    for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++) {
            if (a == 1 && two_d) {
                /* 2D: the model does not vary along y; the one y node, weight 1 (the
                 * y coordinate is not used) */
                float *w = pts->w + (3 * i + a) * ns;
                for (int k = 0; k < ns; k++)
                    w[k] = k == 0 ? 1.0f : 0.0f;
                pts->base[3 * i + a] = L->off[1];
                continue;
            }
            double x = (xyz[3 * i + a] - p->o[a]) / p->d[a];
            if (!(x >= -1e-9 && x <= L->n[a] - 1 + 1e-9)) {
                wave_points_destroy(pts);
                return err_set(-EINVAL, "point %zu at (%g, %g, %g) m lies outside the model grid "
                               "(axis %c: %g..%g m)", i, xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2],
                               "xyz"[a], p->o[a], p->o[a] + (L->n[a] - 1) * p->d[a]);
            }
            int first;
            float *w = pts->w + (3 * i + a) * ns;
            points_axis_weights(x, interp, a == 2 && p->free_surface, &first, w);
            int lo = first + L->off[a], hi = lo + ns - 1;
            if (lo < L->pad_off[a] || hi >= L->pad_off[a] + L->npad[a]) {
                wave_points_destroy(pts);
                return err_set(-EINVAL, "point %zu at (%g, %g, %g) m: its interpolation support "
                               "(%d nodes) leaves the grid along %c; move it inside or widen the "
                               "absorbing layers", i, xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2], ns, "xyz"[a]);
            }
            pts->base[3 * i + a] = lo;
        }
    }
#ifdef SEISLIVE_CUDA
    if (s->dev->kind == SL_DEVICE_CUDA) {
        int rc = wave_cu_points_upload(pts);
        if (rc < 0) {
            wave_points_destroy(pts);
            return rc;
        }
    }
#endif
    *out = pts;
    return 0;
}

void wave_points_destroy(struct wave_points *pts)
{
    if (!pts)
        return;
#ifdef SEISLIVE_CUDA
    wave_cu_points_free(pts);
#endif
    free(pts->base);
    free(pts->w);
    free(pts);
}

size_t wave_points_count(const struct wave_points *pts) { return pts->n; }

static inline size_t node_index(const struct wave_layout *L, const int *b, int kx, int ky, int kz)
{
    return (size_t)(b[2] + kz) * L->stride_z + (size_t)(b[1] + ky) * L->stride_y + (size_t)(b[0] + kx);
}

int wave_inject(struct wave_sim *s, const struct wave_points *pts, const float *amps,
                size_t stride, float scale, unsigned flags)
{
    if (pts->s != s)
        return err_set(-EINVAL, "wave_inject: point set belongs to another simulation");
#ifdef SEISLIVE_CUDA
    if (s->dev->kind == SL_DEVICE_CUDA)
        return wave_cu_inject(s, pts, amps, stride, scale, flags);
#endif
    if (flags & WAVE_BUF_DEVICE)
        return err_set(-EINVAL, "wave_inject: device buffer given to a CPU simulation");
    const struct wave_layout *L = &s->L;
    const int ns = pts->ns, nsy = pts->nsa[1];
    const bool phys = flags & WAVE_INJECT_PHYSICAL;
    /* per unit volume in 3D, per unit area (a line source) in 2D */
    const float dvinv = wave_is_2d(s) ? (float)(1.0 / (s->p.d[0] * s->p.d[2]))
                                      : (float)(1.0 / (s->p.d[0] * s->p.d[1] * s->p.d[2]));
    /* Serial over points: supports of different points may overlap. */
    for (size_t i = 0; i < pts->n; i++) {
        const float amp = amps[i * stride] * scale;
        const int *b = pts->base + 3 * i;
        const float *wx = pts->w + 3 * i * ns, *wy = wx + ns, *wz = wy + ns;
        for (int kz = 0; kz < ns; kz++)
            for (int ky = 0; ky < nsy; ky++)
                for (int kx = 0; kx < ns; kx++) {
                    size_t c = node_index(L, b, kx, ky, kz);
                    float w = amp * (wx[kx] * wy[ky] * wz[kz]);
                    s->cur[c] += phys ? w * (s->vel[c] * dvinv) : w;
                }
    }
    return 0;
}

int wave_sample(struct wave_sim *s, const struct wave_points *pts, float *out, size_t stride,
                unsigned flags)
{
    if (pts->s != s)
        return err_set(-EINVAL, "wave_sample: point set belongs to another simulation");
#ifdef SEISLIVE_CUDA
    if (s->dev->kind == SL_DEVICE_CUDA)
        return wave_cu_sample(s, pts, out, stride, flags);
#endif
    if (flags & WAVE_BUF_DEVICE)
        return err_set(-EINVAL, "wave_sample: device buffer given to a CPU simulation");
    const struct wave_layout *L = &s->L;
    const int ns = pts->ns, nsy = pts->nsa[1];
#pragma omp parallel for schedule(static) if (pts->n > 64)
    for (size_t i = 0; i < pts->n; i++) {
        const int *b = pts->base + 3 * i;
        const float *wx = pts->w + 3 * i * ns, *wy = wx + ns, *wz = wy + ns;
        float sum = 0;
        for (int kz = 0; kz < ns; kz++)
            for (int ky = 0; ky < nsy; ky++) {
                float row = 0;
                for (int kx = 0; kx < ns; kx++)
                    row += wx[kx] * s->cur[node_index(L, b, kx, ky, kz)];
                sum += wy[ky] * wz[kz] * row;
            }
        out[i * stride] = sum;
    }
    return 0;
}
