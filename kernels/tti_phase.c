/* tti_phase — see tti_phase.h. */
#include "kernels/tti_phase.h"

#include <math.h>

double tti_qp_phase_v2(double s, double eps, double delta, double sigma)
{
    delta = fmin(delta, eps); /* delta_eff (kernels/tti.h) */
    const double f = 1.0 - (eps - delta) / sigma;
    const double g = f + 2.0 * eps * s;
    const double q = g * g - 8.0 * f * (eps - delta) * s * (1.0 - s);
    return 1.0 + eps * s - 0.5 * f + 0.5 * sqrt(q > 0 ? q : 0);
}

double tti_qp_vmin(double eps, double delta, double sigma, double *s_at)
{
    delta = fmin(delta, eps); /* delta_eff (kernels/tti.h) */
    const double f = 1.0 - (eps - delta) / sigma, ed = eps - delta;
    const double A = 4.0 * eps * eps + 8.0 * f * ed, B = 4.0 * f * eps - 8.0 * f * ed;
    const double a = 32.0 * f * ed * A, b = 32.0 * f * ed * B, c = B * B - 16.0 * eps * eps * f * f;
    /* Candidates: both ends, the roots, and the vertex (where a double root sits when
     * rounding makes the discriminant slightly negative).  Each is evaluated with the
     * exact V^2, so a spurious candidate can only be slower than the true minimum, never
     * faster: extra ones are harmless. */
    double cand[5] = {0.0, 1.0, -1.0, -1.0, -1.0};
    const double scale = fabs(a) + fabs(b) + fabs(c);
    if (fabs(a) > 1e-14 * scale) {
        const double disc = b * b - 4.0 * a * c, r = sqrt(disc > 0 ? disc : 0);
        /* the stable pair of roots: no cancellation between -b and r */
        const double qq = -0.5 * (b + (b >= 0 ? r : -r));
        cand[2] = qq / a;
        cand[3] = qq != 0 ? c / qq : -1.0;
        cand[4] = -b / (2.0 * a);
    } else if (fabs(b) > 1e-14 * scale) {
        cand[2] = -c / b;
    }
    double best = INFINITY, at = 0;
    for (int k = 0; k < 5; k++) {
        if (!(cand[k] >= 0.0 && cand[k] <= 1.0))
            continue;
        const double v2 = tti_qp_phase_v2(cand[k], eps, delta, sigma);
        if (v2 < best) {
            best = v2;
            at = cand[k];
        }
    }
    if (s_at)
        *s_at = at;
    return sqrt(best);
}

static double val_at(const float *a, double c, size_t i) { return a ? (double)a[i] : c; }

double tti_qp_vmin_model(const struct tti_model *m, size_t n, double sigma)
{
    double vmin = INFINITY;
    if (!m->eps && !m->delta) { /* one medium: one evaluation */
        const double r = tti_qp_vmin(m->eps0, m->delta0, sigma, NULL);
        for (size_t i = 0; i < n; i++)
            vmin = fmin(vmin, (double)m->vpz[i]);
        return vmin * r;
    }
#pragma omp parallel for reduction(min : vmin) schedule(static)
    for (size_t i = 0; i < n; i++) {
        const double v = m->vpz[i] * tti_qp_vmin(val_at(m->eps, m->eps0, i), val_at(m->delta, m->delta0, i), sigma,
                                                 NULL);
        if (v < vmin)
            vmin = v;
    }
    return vmin;
}
