/* operator — see operator.h.  The minimax design is written here by hand: it is a
 * handful of unknowns on a few hundred points, which no Debian library packages as a
 * symbol fit (LAPACK would do the least squares, not the reweighting). */
#include "kernels/operator.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "kernels/fd_coeffs.h"
#include "kernels/implicit_op.h"
#include "kernels/propagator.h"
#include "stream/error.h"

#define NPTS 256      /* design points over the band */
#define LAWSON_IT 150 /* reweighting passes (the maximum no longer moves in its 4th digit) */

const char *operator_name(int kind)
{
    switch (kind) {
    case PROP_OP_TAYLOR: return "taylor";
    case PROP_OP_OPTIMIZED: return "optimized";
    case PROP_OP_IMPLICIT: return "implicit";
    default: return "?";
    }
}

/* Basis of the relative symbol: S(theta) / theta^2 = sum_l c_l g_l(theta),
 * g_l = 2 (1 - cos l theta) / theta^2 = (2 sin(l theta / 2) / theta)^2 (no cancellation). */
static double basis(int l, double th)
{
    double s = 2.0 * sin(0.5 * l * th) / th;
    return s * s;
}

/* Weighted least squares min || sqrt(w) (A c - t) || for the M x R matrix A (row major)
 * by Householder QR; A is overwritten. */
static void wls(int m, int r, double *a, const double *w, const double *t, double *c)
{
    double b[NPTS];
    for (int i = 0; i < m; i++) {
        double sw = sqrt(w[i]);
        b[i] = sw * t[i];
        for (int j = 0; j < r; j++)
            a[i * r + j] *= sw;
    }
    for (int j = 0; j < r; j++) {
        double nrm = 0;
        for (int i = j; i < m; i++)
            nrm += a[i * r + j] * a[i * r + j];
        nrm = sqrt(nrm);
        double alpha = a[j * r + j] > 0 ? -nrm : nrm;
        double v0 = a[j * r + j] - alpha, vn = v0 * v0;
        for (int i = j + 1; i < m; i++)
            vn += a[i * r + j] * a[i * r + j];
        if (vn == 0)
            continue;
        /* apply H = I - 2 v v^T / (v^T v), v = (v0, a[j+1..m-1, j]) to columns > j and b */
        for (int k = j + 1; k < r; k++) {
            double s = v0 * a[j * r + k];
            for (int i = j + 1; i < m; i++)
                s += a[i * r + j] * a[i * r + k];
            s *= 2.0 / vn;
            a[j * r + k] -= s * v0;
            for (int i = j + 1; i < m; i++)
                a[i * r + k] -= s * a[i * r + j];
        }
        double s = v0 * b[j];
        for (int i = j + 1; i < m; i++)
            s += a[i * r + j] * b[i];
        s *= 2.0 / vn;
        b[j] -= s * v0;
        for (int i = j + 1; i < m; i++)
            b[i] -= s * a[i * r + j];
        a[j * r + j] = alpha;
    }
    for (int j = r - 1; j >= 0; j--) {
        double s = b[j];
        for (int k = j + 1; k < r; k++)
            s -= a[j * r + k] * c[k];
        c[j] = s / a[j * r + j];
    }
}

/* Lawson's weighted minimax fit of S / theta^2 = 1 over (0, band pi] of the weights
 * c_1..c_R into C[0..R] (c0 = -2 sum c_l, sum l^2 c_l = 1): minimize max |e(theta)| band pi / theta.
 * Returns that maximum of the phase-velocity error (the error at the band edge's scale)
 * over the design points. */
static double minimax(int r, double band, double *c)
{
    double th[NPTS], w[NPTS], ww[NPTS], sc[NPTS], t[NPTS], a[NPTS * OPERATOR_R_MAX], x[OPERATOR_R_MAX + 1];
    const double top = band * M_PI;
    /* Chebyshev-like spacing, denser towards the band edge where the error bends */
    for (int i = 0; i < NPTS; i++) {
        th[i] = top * sin(0.5 * M_PI * (i + 1.0) / NPTS);
        w[i] = 1.0 / NPTS;
        sc[i] = top / th[i]; /* the error allowed grows linearly with theta (operator.h) */
        t[i] = 1.0 - basis(1, th[i]);
    }
    /* exact at theta -> 0 (sum l^2 c_l = 1, second-order consistency): c_1 is eliminated,
     * the unknowns are c_2..c_r with the basis g_l - l^2 g_1 */
    const int q = r - 1;
    for (int it = 0; q > 0 && it < LAWSON_IT; it++) {
        for (int i = 0; i < NPTS; i++) {
            for (int l = 2; l <= r; l++)
                a[i * q + l - 2] = basis(l, th[i]) - l * l * basis(1, th[i]);
            ww[i] = w[i] * sc[i] * sc[i];
        }
        wls(NPTS, q, a, ww, t, x + 2);
        double sum = 0;
        for (int i = 0; i < NPTS; i++) {
            double e = -t[i];
            for (int l = 2; l <= r; l++)
                e += x[l] * (basis(l, th[i]) - l * l * basis(1, th[i]));
            w[i] *= fabs(e) * sc[i] + 1e-300;
            sum += w[i];
        }
        for (int i = 0; i < NPTS; i++)
            w[i] /= sum;
    }
    x[1] = 1.0;
    for (int l = 2; l <= r; l++)
        x[1] -= l * l * x[l];
    c[0] = 0;
    for (int l = 1; l <= r; l++) {
        c[l] = x[l];
        c[0] -= 2.0 * x[l];
    }
    double emax = 0;
    for (int i = 0; i < NPTS; i++) {
        double s2 = 0;
        for (int l = 1; l <= r; l++)
            s2 += c[l] * basis(l, th[i]);
        emax = fmax(emax, fabs(sqrt(fmax(s2, 0)) - 1) * sc[i]);
    }
    return emax;
}

static double symbol_c(const double *c, int r, double th)
{
    double s = -c[0];
    for (int l = 1; l <= r; l++)
        s -= 2.0 * c[l] * cos(l * th);
    return s;
}

/* The largest S over [0, pi]: a dense scan, then golden-section on the best bracket. */
static double symbol_max(const double *c, int r)
{
    const int ns = 512;
    int best = 0;
    double sb = -INFINITY;
    for (int i = 0; i <= ns; i++) {
        double s = symbol_c(c, r, M_PI * i / ns);
        if (s > sb) {
            sb = s;
            best = i;
        }
    }
    double lo = M_PI * (best > 0 ? best - 1 : 0) / ns, hi = M_PI * (best < ns ? best + 1 : ns) / ns;
    const double g = 0.5 * (sqrt(5.0) - 1.0);
    for (int it = 0; it < 60; it++) {
        double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
        if (symbol_c(c, r, x1) > symbol_c(c, r, x2))
            hi = x2;
        else
            lo = x1;
    }
    return fmax(sb, symbol_c(c, r, 0.5 * (lo + hi)));
}

static int check_order(int order)
{
    if (order < 2 || order > 2 * OPERATOR_R_MAX || order % 2)
        return err_set(-EINVAL, "operator: order %d: must be even, 2..%d", order, 2 * OPERATOR_R_MAX);
    return 0;
}

double operator_default_band(int kind, int order)
{
    if (kind != PROP_OP_OPTIMIZED || check_order(order) < 0)
        return NAN;
    /* the widest band whose minimax error is within the tolerance: bisection (the error
     * grows monotonically with the band) */
    double lo = 0.02, hi = 0.98, c[OPERATOR_R_MAX + 1];
    for (int it = 0; it < 14; it++) {
        double mid = 0.5 * (lo + hi);
        if (minimax(order / 2, mid, c) <= OPERATOR_DESIGN_TOL)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

double operator_band_auto(double fmax, double vmin, double h, double scale)
{
    if (!(fmax > 0 && vmin > 0 && h > 0 && scale > 0))
        return NAN;
    const double b = scale * 2.0 * h * fmax / vmin;
    return b < OPERATOR_BAND_AUTO_MIN   ? OPERATOR_BAND_AUTO_MIN
           : b > OPERATOR_BAND_AUTO_MAX ? OPERATOR_BAND_AUTO_MAX
                                        : b;
}

double operator_band_resolve(int kind, double band, double f_max, double vmin, const double d[3], int two_d)
{
    if (kind == PROP_OP_TAYLOR)
        return 0;
    if (band >= 0)
        return band;
    const double h = two_d ? fmax(d[0], d[2]) : fmax(d[0], fmax(d[1], d[2]));
    return operator_band_auto(f_max, vmin, h, OPERATOR_BAND_AUTO_SCALE);
}

/* The designs made so far (few: one per order and band a run uses), newest first. */
#define CACHE 16
static struct operator_coeffs cache[CACHE];
static double cache_band[CACHE]; /* the band as asked (0: default) */
static int ncache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int design(int kind, int order, double band, struct operator_coeffs *out);

int operator_design(int kind, int order, double band, struct operator_coeffs *out)
{
    if (kind != PROP_OP_OPTIMIZED)
        return design(kind, order, band, out); /* nothing worth keeping */
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < ncache; i++)
        if (cache[i].order == order && cache_band[i] == band) {
            *out = cache[i];
            pthread_mutex_unlock(&cache_lock);
            return 0;
        }
    pthread_mutex_unlock(&cache_lock);
    int rc = design(kind, order, band, out);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&cache_lock);
    int n = ncache < CACHE ? ncache + 1 : CACHE;
    memmove(cache + 1, cache, sizeof cache[0] * (size_t)(n - 1));
    memmove(cache_band + 1, cache_band, sizeof cache_band[0] * (size_t)(n - 1));
    cache[0] = *out;
    cache_band[0] = band;
    ncache = n;
    pthread_mutex_unlock(&cache_lock);
    return 0;
}

static int design(int kind, int order, double band, struct operator_coeffs *out)
{
    memset(out, 0, sizeof *out);
    int rc = check_order(order);
    if (rc < 0)
        return rc;
    if (!(band >= 0 && band < 1))
        return err_set(-EINVAL, "operator: band %g: must be in [0, 1) (0: the operator's default)", band);
    out->kind = kind;
    out->order = order;
    out->r = order / 2;
    switch (kind) {
    case PROP_OP_TAYLOR:
        fd_second_coeffs(order, out->c2);
        fd_first_coeffs(order, out->c1);
        out->smax = fd_second_abs_sum(order); /* at Nyquist: the weights alternate in sign */
        return 0;
    case PROP_OP_OPTIMIZED:
        if (band > 0 && band < 0.02)
            return err_set(-EINVAL, "operator: band %g: must be >= 0.02 of Nyquist", band);
        out->band = band > 0 ? band : operator_default_band(kind, order);
        minimax(out->r, out->band, out->c2);
        fd_first_coeffs(order, out->c1); /* CPML memory terms only (operator.h) */
        out->smax = symbol_max(out->c2, out->r);
        return 0;
    case PROP_OP_IMPLICIT: {
        /* The recursive operator (kernels/implicit_op.h): its symbol is a rational
         * function of cos theta (operator_symbol_of asks implicit_symbol); the explicit
         * weights here are Taylor's of ORDER (the CPML memory terms' first derivatives). */
        struct implicit_coeffs ic;
        if ((rc = implicit_design(order, band, &ic)) < 0)
            return rc;
        out->band = ic.band;
        fd_second_coeffs(order, out->c2);
        fd_first_coeffs(order, out->c1);
        out->smax = implicit_symbol_max(order, band);
        return 0;
    }
    default:
        return err_set(-EINVAL, "operator: kind %d: unknown", kind);
    }
}

double operator_symbol_of(const struct operator_coeffs *oc, double theta)
{
    switch (oc->kind) {
    case PROP_OP_TAYLOR:
    case PROP_OP_OPTIMIZED:
        return symbol_c(oc->c2, oc->r, theta);
    case PROP_OP_IMPLICIT:
        return implicit_symbol(oc->order, oc->band, theta);
    default:
        return NAN;
    }
}

int operator_second_coeffs(int kind, int order, double band, double *c)
{
    struct operator_coeffs oc;
    int rc = operator_design(kind, order, band, &oc);
    if (rc < 0)
        return rc;
    memcpy(c, oc.c2, sizeof(double) * (size_t)(oc.r + 1));
    return 0;
}

int operator_first_coeffs(int kind, int order, double band, double *c)
{
    struct operator_coeffs oc;
    int rc = operator_design(kind, order, band, &oc);
    if (rc < 0)
        return rc;
    memcpy(c, oc.c1, sizeof(double) * (size_t)(oc.r + 1));
    return 0;
}

double operator_symbol(int kind, int order, double band, double kh)
{
    struct operator_coeffs oc;
    return operator_design(kind, order, band, &oc) < 0 ? NAN : operator_symbol_of(&oc, kh);
}

double operator_symbol_max(int kind, int order, double band)
{
    struct operator_coeffs oc;
    return operator_design(kind, order, band, &oc) < 0 ? NAN : oc.smax;
}

double operator_vscale(int kind, int order, double band)
{
    if (kind == PROP_OP_TAYLOR)
        return 1.0;
    return sqrt(fd_second_abs_sum(order) / operator_symbol_max(kind, order, band));
}
