/* fd_coeffs — finite-difference weights computed with Fornberg's algorithm (1988),
 * never typed in: any derivative order on any node set, and the centred first and
 * second derivative stencils of even accuracy order 2..16 that the propagator uses. */
#ifndef SEISLIVE_FD_COEFFS_H
#define SEISLIVE_FD_COEFFS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Weights C[k * n + j] (k = 0..m, j = 0..n-1) such that the k-th derivative at X0 is
 * approximately sum_j C[k*n+j] f(X[j]).  Returns 0, or -EINVAL for m < 0 or n < 1. */
int fd_fornberg(int m, double x0, const double *x, int n, double *c);

/* Centred second derivative of accuracy ORDER (even, 2..16), r = ORDER/2:
 *   h^2 f''(0) ~ C[0] f(0) + sum_{l=1..r} C[l] (f(l) + f(-l)).   C has r+1 entries. */
int fd_second_coeffs(int order, double *c);

/* Centred first derivative of accuracy ORDER, r = ORDER/2:
 *   h f'(0) ~ sum_{l=1..r} C[l] (f(l) - f(-l)).   C has r+1 entries, C[0] = 0. */
int fd_first_coeffs(int order, double *c);

/* |C[0]| + 2 sum |C[l]| of the second-derivative stencil: the largest magnitude of its
 * symbol (at the Nyquist wavenumber), which sets the stability limit. */
double fd_second_abs_sum(int order);

#ifdef __cplusplus
}
#endif

#endif
