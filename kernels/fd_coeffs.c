#include "kernels/fd_coeffs.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

/* Fornberg, "Generation of finite difference formulas on arbitrarily spaced grids",
 * Math. Comp. 51 (1988): the recursion over nodes and derivative orders. */
int fd_fornberg(int m, double x0, const double *x, int n, double *c)
{
    if (m < 0 || n < 1)
        return err_set(-EINVAL, "fd_fornberg: derivative %d on %d nodes", m, n);
    memset(c, 0, sizeof(double) * (size_t)(m + 1) * (size_t)n);
    double c1 = 1.0, c4 = x[0] - x0;
    c[0] = 1.0;
    for (int i = 1; i < n; i++) {
        int mn = i < m ? i : m;
        double c2 = 1.0, c5 = c4;
        c4 = x[i] - x0;
        for (int j = 0; j < i; j++) {
            double c3 = x[i] - x[j];
            c2 *= c3;
            if (j == i - 1) {
                for (int k = mn; k >= 1; k--)
                    c[k * n + i] = c1 * (k * c[(k - 1) * n + i - 1] - c5 * c[k * n + i - 1]) / c2;
                c[i] = -c1 * c5 * c[i - 1] / c2;
            }
            for (int k = mn; k >= 1; k--)
                c[k * n + j] = (c4 * c[k * n + j] - k * c[(k - 1) * n + j]) / c3;
            c[j] = c4 * c[j] / c3;
        }
        c1 = c2;
    }
    return 0;
}

static int centred(int deriv, int order, double *out)
{
    if (order < 2 || order > 16 || order % 2)
        return err_set(-EINVAL, "finite-difference order %d: must be even, 2..16", order);
    int r = order / 2, n = 2 * r + 1;
    double x[33], c[3 * 33];
    for (int j = 0; j < n; j++)
        x[j] = j - r;
    fd_fornberg(deriv, 0.0, x, n, c);
    for (int l = 0; l <= r; l++)
        out[l] = c[deriv * n + r + l];
    if (deriv == 1)
        out[0] = 0.0; /* exactly antisymmetric */
    return 0;
}

int fd_second_coeffs(int order, double *c) { return centred(2, order, c); }
int fd_first_coeffs(int order, double *c) { return centred(1, order, c); }

double fd_second_abs_sum(int order)
{
    double c[9];
    if (fd_second_coeffs(order, c) < 0)
        return NAN;
    double s = fabs(c[0]);
    for (int l = 1; l <= order / 2; l++)
        s += 2.0 * fabs(c[l]);
    return s;
}
