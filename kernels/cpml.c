#include "kernels/cpml.h"

#include <math.h>

/* One point at distance X (m) into a layer of thickness L, damping degree N. */
static void coeffs(double x, double l, double dt, double vmax, double r, double f_ref, int n, float *a,
                   float *b)
{
    double d0 = -(n + 1.0) * vmax * log(r) / (2.0 * l);
    double q = x / l;
    /* d0 q^N multiplied out left to right: for N = 2 the (d0 q) q it always was */
    double d = d0;
    for (int k = 0; k < n; k++)
        d *= q;
    double alpha = M_PI * f_ref * (1.0 - q);
    if (alpha < 0)
        alpha = 0;
    double bb = exp(-(d + alpha) * dt);
    *b = (float)bb;
    *a = (d + alpha) > 0 ? (float)(d * (bb - 1.0) / (d + alpha)) : 0.0f;
}

void cpml_profile(int npad, int wlo, int whi, double h, double dt, double vmax, double r,
                  double f_ref, int n, float *a, float *b)
{
    for (int i = 0; i < npad; i++)
        a[i] = b[i] = 0.0f;
    /* The first layer point sits one spacing outside the last interior point; the wall
     * (last layer point) has the full damping d0. */
    for (int j = 1; j <= wlo; j++)
        coeffs(j * h, wlo * h, dt, vmax, r, f_ref, n, &a[wlo - j], &b[wlo - j]);
    for (int j = 1; j <= whi; j++)
        coeffs(j * h, whi * h, dt, vmax, r, f_ref, n, &a[npad - whi - 1 + j], &b[npad - whi - 1 + j]);
}
