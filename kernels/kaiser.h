/* kaiser — the Kaiser-windowed sinc of band-limited interpolation, shared by
 * points.c (sources and receivers between grid nodes, Hicks 2002) and wavelet.c
 * (resampling traces to the output interval). */
#ifndef SEISLIVE_KAISER_H
#define SEISLIVE_KAISER_H

#include <math.h>

/* Modified Bessel function I0 by its power series (converges fast for x < 10). */
static inline double kaiser_i0(double x)
{
    double sum = 1, term = 1, q = x * x / 4;
    for (int k = 1; k < 60; k++) {
        term *= q / ((double)k * k);
        sum += term;
        if (term < 1e-17 * sum)
            break;
    }
    return sum;
}

/* sinc(u) = sin(pi u) / (pi u) under a Kaiser window of half-width R and shape B
 * (I0B = kaiser_i0(B), passed in so loops compute it once); 0 for |u| >= R. */
static inline double kaiser_sinc(double u, double r, double b, double i0b)
{
    double q = 1.0 - (u / r) * (u / r);
    if (q <= 0)
        return 0.0;
    double sinc = fabs(u) < 1e-12 ? 1.0 : sin(M_PI * u) / (M_PI * u);
    return sinc * kaiser_i0(b * sqrt(q)) / i0b;
}

#endif
