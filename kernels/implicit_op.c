/* implicit_op — design of the implicit second-derivative operator (rational minimax by
 * the Remez exchange) and its tridiagonal line solve; implicit_op.h says what and why. */
#include "kernels/implicit_op.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "stream/error.h"

#define GRID 4000    /* fine grid over the band where E's extrema are sought */
#define ITERS 60

static double phi(int k, double t)
{
    if (t < 1e-6)
        return (double)k * k;
    double s = sin(0.5 * k * t);
    return 4.0 * s * s / (t * t);
}

double implicit_symbol_of(const struct implicit_coeffs *co, double t)
{
    double num = 0;
    for (int k = 1; k <= co->K; k++) {
        double s = sin(0.5 * k * t);
        num += co->c[k] * 4.0 * s * s;
    }
    return num / (1.0 + 2.0 * co->b * cos(t));
}

/* Relative error E(t) = S(t) / t^2 - 1 (its limit at 0). */
static double rel_err(const double *c, double b, int K, double t)
{
    double num = 0;
    for (int k = 1; k <= K; k++)
        num += c[k] * phi(k, t);
    return num / (1.0 + 2.0 * b * cos(t)) - 1.0;
}

/* Gaussian elimination with partial pivoting on an N x N system (N <= K_MAX + 2): LAPACK
 * is not a dependency of the kernels, and these systems are tiny.  -1 when singular. */
static int dense_solve(int n, double *a, double *x)
{
    for (int col = 0; col < n; col++) {
        int piv = col;
        for (int r = col + 1; r < n; r++)
            if (fabs(a[r * (n + 1) + col]) > fabs(a[piv * (n + 1) + col]))
                piv = r;
        if (fabs(a[piv * (n + 1) + col]) < 1e-300)
            return -1;
        if (piv != col)
            for (int q = 0; q <= n; q++) {
                double t = a[col * (n + 1) + q];
                a[col * (n + 1) + q] = a[piv * (n + 1) + q];
                a[piv * (n + 1) + q] = t;
            }
        for (int r = col + 1; r < n; r++) {
            double f = a[r * (n + 1) + col] / a[col * (n + 1) + col];
            for (int q = col; q <= n; q++)
                a[r * (n + 1) + q] -= f * a[col * (n + 1) + q];
        }
    }
    for (int r = n - 1; r >= 0; r--) {
        double s = a[r * (n + 1) + n];
        for (int q = r + 1; q < n; q++)
            s -= a[r * (n + 1) + q] * x[q];
        x[r] = s / a[r * (n + 1) + r];
    }
    return 0;
}

/* The next reference: NR alternating extrema of E on the grid (largest |E| of each run of
 * one sign; the smaller end dropped while there are too many).  0, or -1 when E does
 * not alternate NR times (keep the old reference). */
static int exchange(const double *e, const double *t, int nr, double *ref)
{
    double ext[GRID + 1], et[GRID + 1];
    int ne = 0;
    for (int i = 0; i < GRID; i++) {
        bool is_ext = (i == 0 || fabs(e[i]) >= fabs(e[i - 1])) && (i == GRID - 1 || fabs(e[i]) >= fabs(e[i + 1]));
        if (!is_ext)
            continue;
        if (ne > 0 && (e[i] > 0) == (ext[ne - 1] > 0)) {
            if (fabs(e[i]) > fabs(ext[ne - 1])) {
                ext[ne - 1] = e[i];
                et[ne - 1] = t[i];
            }
            continue;
        }
        ext[ne] = e[i];
        et[ne] = t[i];
        ne++;
    }
    if (ne < nr)
        return -1;
    int lo = 0, hi = ne - 1;
    while (hi - lo + 1 > nr) {
        if (fabs(ext[lo]) < fabs(ext[hi]))
            lo++;
        else
            hi--;
    }
    for (int i = 0; i < nr; i++)
        ref[i] = et[lo + i];
    return 0;
}

/* Remez over [0, tmax]: free b (HOLD = 0) or b held at BH.  c[1..K], *b, returns max |E|
 * on the grid; NAN when it fails. */
static double remez(int K, double tmax, bool hold, double bh, double *c, double *bout)
{
    const int nu = hold ? K + 1 : K + 2; /* unknowns: c1..cK, [b], E */
    const int nr = nu - 1;               /* reference points (row 0: E(0) = 0) */
    double ref[IMPLICIT_K_MAX + 2], t[GRID + 1], e[GRID + 1];
    for (int i = 0; i < nr; i++)
        ref[i] = tmax * 0.5 * (1.0 - cos(M_PI * (i + 1) / nr));
    for (int i = 0; i <= GRID; i++)
        t[i] = tmax * i / GRID;
    double b = hold ? bh : 0, best = INFINITY;
    double cb[IMPLICIT_K_MAX + 1] = {0}, bb = b;
    for (int it = 0; it < ITERS; it++) {
        double a[(IMPLICIT_K_MAX + 2) * (IMPLICIT_K_MAX + 3)] = {0}, x[IMPLICIT_K_MAX + 2];
        /* row 0: exact for long waves, sum k^2 ck = 1 + 2 b (E(0) = 0) */
        for (int k = 1; k <= K; k++)
            a[k - 1] = (double)k * k;
        if (hold) {
            a[nu] = 1.0 + 2.0 * bh;
        } else {
            a[K] = -2.0;
            a[nu] = 1.0;
        }
        for (int i = 0; i < nr; i++) {
            double *row = a + (i + 1) * (nu + 1);
            double dprev = 1.0 + 2.0 * b * cos(ref[i]);
            double sgn = i % 2 ? -1.0 : 1.0;
            for (int k = 1; k <= K; k++)
                row[k - 1] = phi(k, ref[i]);
            if (hold) {
                row[K] = -sgn * dprev;
                row[nu] = dprev; /* exact: the denominator is known */
            } else {
                row[K] = -2.0 * cos(ref[i]);
                row[K + 1] = -sgn * dprev;
                row[nu] = 1.0;
            }
        }
        if (dense_solve(nu, a, x) < 0)
            break;
        double cc[IMPLICIT_K_MAX + 1] = {0};
        for (int k = 1; k <= K; k++)
            cc[k] = x[k - 1];
        double bn = hold ? bh : x[K];
        if (!(fabs(bn) < 0.5))
            bn = bn > 0 ? 0.4999 : -0.4999; /* keep the next pass pole free */
        double mx = 0;
        for (int i = 0; i <= GRID; i++) {
            e[i] = rel_err(cc, bn, K, t[i]);
            if (fabs(e[i]) > mx)
                mx = fabs(e[i]);
        }
        if (mx < best) {
            best = mx;
            memcpy(cb, cc, sizeof cc);
            bb = bn;
        }
        double lev = fabs(x[nu - 1]);
        b = bn;
        if (mx - lev <= 1e-9 * mx + 1e-15)
            break;
        if (exchange(e + 1, t + 1, nr, ref) < 0) /* E(0) = 0 is not an extremum */
            break;
    }
    memcpy(c, cb, sizeof cb);
    *bout = bb;
    return best;
}

static int design_raw(int order, double band, struct implicit_coeffs *o)
{
    memset(o, 0, sizeof *o);
    o->order = order;
    o->K = order / 2;
    o->band = band;
    const double tmax = band * M_PI;
    double b;
    double err = remez(o->K, tmax, false, 0, o->c, &b);
    if (!(fabs(b) < IMPLICIT_B_MAX) || !isfinite(err)) {
        double bh = b < 0 ? -IMPLICIT_B_MAX : IMPLICIT_B_MAX;
        err = remez(o->K, tmax, true, bh, o->c, &b);
        o->b_held = 1;
    }
    if (!isfinite(err))
        return err_set(-EDOM, "implicit operator: the Remez design of order %d over %.3f of Nyquist failed",
                       order, band);
    o->b = b;
    o->err = err;
    o->c[0] = 0;
    for (int k = 1; k <= o->K; k++)
        o->c[0] -= 2.0 * o->c[k];
    return 0;
}

/* phase error of a design: the worst of sqrt(1 + E) - 1 over the band */
static double phase_err(const struct implicit_coeffs *o)
{
    return fabs(sqrt(1.0 + o->err) - 1.0) > fabs(sqrt(fmax(1.0 - o->err, 0)) - 1.0)
               ? fabs(sqrt(1.0 + o->err) - 1.0)
               : fabs(sqrt(fmax(1.0 - o->err, 0)) - 1.0);
}

static double default_band_raw(int order)
{
    struct implicit_coeffs o;
    double lo = 0.2, hi = IMPLICIT_BAND_GOAL;
    if (design_raw(order, hi, &o) == 0 && phase_err(&o) <= IMPLICIT_PHASE_GOAL)
        return hi;
    for (int i = 0; i < 30; i++) {
        double mid = 0.5 * (lo + hi);
        if (design_raw(order, mid, &o) == 0 && phase_err(&o) <= IMPLICIT_PHASE_GOAL)
            lo = mid;
        else
            hi = mid;
    }
    return floor(lo * 1000.0) / 1000.0; /* a round number, on the safe side */
}

/* ---- cache (designs are asked for by every simulation and by the dispersion tables) ---- */

#define CACHE 32
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct implicit_coeffs cache[CACHE];
static double cache_req[CACHE]; /* the band asked for (0: default) */
static int cache_n, cache_next;
static double def_band[IMPLICIT_K_MAX + 1];

static bool order_ok(int order) { return order >= 2 && order <= 2 * IMPLICIT_K_MAX && order % 2 == 0; }

double implicit_default_band(int order)
{
    if (!order_ok(order))
        return NAN;
    pthread_mutex_lock(&cache_mu);
    double b = def_band[order / 2];
    pthread_mutex_unlock(&cache_mu);
    if (b > 0)
        return b;
    b = default_band_raw(order);
    pthread_mutex_lock(&cache_mu);
    def_band[order / 2] = b;
    pthread_mutex_unlock(&cache_mu);
    return b;
}

int implicit_design(int order, double band, struct implicit_coeffs *out)
{
    if (!order_ok(order))
        return err_set(-EINVAL, "implicit operator: order %d: must be even, 2..%d", order, 2 * IMPLICIT_K_MAX);
    if (!(band >= 0 && band < 1))
        return err_set(-EINVAL, "implicit operator: band %g: must be in (0, 1) (0: the default)", band);
    pthread_mutex_lock(&cache_mu);
    for (int i = 0; i < cache_n; i++)
        if (cache[i].order == order && cache_req[i] == band) {
            *out = cache[i];
            pthread_mutex_unlock(&cache_mu);
            return 0;
        }
    pthread_mutex_unlock(&cache_mu);
    double use = band > 0 ? band : implicit_default_band(order);
    int rc = design_raw(order, use, out);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&cache_mu);
    cache[cache_next] = *out;
    cache_req[cache_next] = band;
    cache_next = (cache_next + 1) % CACHE;
    if (cache_n < CACHE)
        cache_n++;
    pthread_mutex_unlock(&cache_mu);
    return 0;
}

double implicit_symbol(int order, double band, double kh)
{
    struct implicit_coeffs o;
    if (implicit_design(order, band, &o) < 0)
        return NAN;
    return implicit_symbol_of(&o, kh);
}

double implicit_symbol_max(int order, double band)
{
    struct implicit_coeffs o;
    if (implicit_design(order, band, &o) < 0)
        return NAN;
    double m = 0;
    for (int i = 0; i <= GRID; i++) {
        double s = fabs(implicit_symbol_of(&o, M_PI * i / GRID));
        if (s > m)
            m = s;
    }
    return m;
}

/* ---- line solve ---------------------------------------------------------------------- */

void implicit_factor(double b, int n, float *cp, float *inv)
{
    double c = b;
    if (n < 1)
        return;
    cp[0] = (float)b;
    inv[0] = 1.0f;
    for (int i = 1; i < n; i++) {
        double iv = 1.0 / (1.0 - b * c);
        c = b * iv;
        inv[i] = (float)iv;
        cp[i] = (float)c;
    }
}

void implicit_solve_line(float b, const float *cp, const float *inv, int m, float *r, ptrdiff_t rs, float ga,
                         float gb)
{
    if (m < 1)
        return;
    r[0] -= b * ga;
    r[(m - 1) * rs] -= b * gb;
    float d = r[0] * inv[0];
    r[0] = d;
    for (int i = 1; i < m; i++) {
        d = (r[i * rs] - b * d) * inv[i];
        r[i * rs] = d;
    }
    float g = r[(m - 1) * rs];
    for (int i = m - 2; i >= 0; i--) {
        g = r[i * rs] - cp[i] * g;
        r[i * rs] = g;
    }
}

void implicit_solve_panel(float b, const float *cp, const float *inv, int m, int w, float *r, const float *ga,
                          const float *gb)
{
    if (m < 1)
        return;
    if (ga)
        for (int l = 0; l < w; l++)
            r[l] -= b * ga[l];
    if (gb)
        for (int l = 0; l < w; l++)
            r[(size_t)(m - 1) * w + l] -= b * gb[l];
    for (int l = 0; l < w; l++)
        r[l] = r[l] * inv[0];
    for (int i = 1; i < m; i++) {
        float *ri = r + (size_t)i * w;
        const float *rp = ri - w;
        const float iv = inv[i];
        for (int l = 0; l < w; l++)
            ri[l] = (ri[l] - b * rp[l]) * iv;
    }
    for (int i = m - 2; i >= 0; i--) {
        float *ri = r + (size_t)i * w;
        const float *rn = ri + w;
        const float c = cp[i];
        for (int l = 0; l < w; l++)
            ri[l] = ri[l] - c * rn[l];
    }
}
