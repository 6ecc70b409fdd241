/* dispersion — see dispersion.h. */
#include "kernels/dispersion.h"

#include <math.h>

const char *dispersion_dir_name(int dir)
{
    static const char *const names[] = {"axis", "face diagonal", "body diagonal", "worst"};
    return dir >= 0 && dir < DISP_NDIR ? names[dir] : "?";
}

double dispersion_error_along(const struct dispersion_grid *g, double ppw, const double n[3])
{
    const double dmax = g->two_d ? fmax(g->d[0], g->d[2]) : fmax(g->d[0], fmax(g->d[1], g->d[2]));
    const double k = 2.0 * M_PI / (ppw * dmax);
    double kk = 0;
    for (int a = 0; a < 3; a++) {
        if (g->two_d && a == 1)
            continue;
        double th = fabs(k * n[a] * g->d[a]);
        if (th > 0)
            kk += operator_symbol_of(&g->op, th) / (g->d[a] * g->d[a]);
    }
    if (!(g->dt > 0))
        return sqrt(fmax(kk, 0)) / k - 1.0;
    const double vdt = g->v * g->dt, c = 1.0 - 0.5 * vdt * vdt * kk;
    if (!(c >= -1.0 && c <= 1.0))
        return INFINITY;
    /* w dt = acos(c) = 2 asin(sqrt((1 - c) / 2)): the asin form keeps the digits at small w dt */
    const double w = 2.0 * asin(sqrt(0.25 * vdt * vdt * fmax(kk, 0))) / g->dt;
    return w / (g->v * k) - 1.0;
}

/* keep the error of larger magnitude */
static void worse(double *e, double x)
{
    if (!(fabs(x) <= fabs(*e)))
        *e = x;
}

double dispersion_error(const struct dispersion_grid *g, double ppw, int dir)
{
    const double s2 = sqrt(0.5), s3 = sqrt(1.0 / 3.0);
    double e = 0;
    switch (dir) {
    case DISP_AXIS:
        for (int a = 0; a < 3; a++)
            if (!(g->two_d && a == 1)) {
                double n[3] = {0, 0, 0};
                n[a] = 1;
                worse(&e, dispersion_error_along(g, ppw, n));
            }
        return e;
    case DISP_FACE:
        worse(&e, dispersion_error_along(g, ppw, (const double[3]){s2, 0, s2}));
        if (!g->two_d) {
            worse(&e, dispersion_error_along(g, ppw, (const double[3]){s2, s2, 0}));
            worse(&e, dispersion_error_along(g, ppw, (const double[3]){0, s2, s2}));
        }
        return e;
    case DISP_BODY:
        return g->two_d ? NAN : dispersion_error_along(g, ppw, (const double[3]){s3, s3, s3});
    case DISP_WORST:
        for (int d = 0; d < DISP_WORST; d++)
            if (!(g->two_d && d == DISP_BODY))
                worse(&e, dispersion_error(g, ppw, d));
        if (g->two_d) {
            for (int i = 0; i <= 40; i++) {
                double t = 0.5 * M_PI * i / 40;
                worse(&e, dispersion_error_along(g, ppw, (const double[3]){cos(t), 0, sin(t)}));
            }
        } else {
            for (int i = 0; i <= 10; i++)
                for (int j = 0; j <= 10; j++) {
                    double t = 0.5 * M_PI * i / 10, f = 0.5 * M_PI * j / 10;
                    worse(&e, dispersion_error_along(g, ppw, (const double[3]){sin(t) * cos(f), sin(t) * sin(f), cos(t)}));
                }
        }
        return e;
    default:
        return NAN;
    }
}

double dispersion_ppw_at(const struct dispersion_grid *g, double tol, int dir)
{
    const double lo = 2.0, hi = 1000.0;
    const int ns = 800;
    const double q = pow(hi / lo, 1.0 / ns);
    /* the largest sampled ppw where the error exceeds TOL */
    int bad = -1;
    for (int i = ns; i >= 0; i--)
        if (!(fabs(dispersion_error(g, lo * pow(q, i), dir)) <= tol)) {
            bad = i;
            break;
        }
    if (bad < 0)
        return lo;
    if (bad == ns)
        return INFINITY;
    double a = lo * pow(q, bad), b = lo * pow(q, bad + 1); /* bad at a, good at b */
    while (b - a > 1e-4 * b) {
        double m = 0.5 * (a + b);
        if (fabs(dispersion_error(g, m, dir)) <= tol)
            b = m;
        else
            a = m;
    }
    return b;
}
