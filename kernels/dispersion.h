/* dispersion — phase-velocity error of a derivative operator (kernels/operator.h) on a
 * grid, in space alone and with the leapfrog in time, against points per wavelength.
 *
 * A plane wave exp(i (k.x - w t)) of wavenumber k = |k| n on spacings d_a sees, per axis,
 * the symbol S(theta_a) / d_a^2 with theta_a = k n_a d_a (operator_symbol_of).  Then
 *   space alone:     w = v sqrt(K),                 K = sum_a S(theta_a) / d_a^2
 *   space and time:  cos(w dt) = 1 - (v dt)^2 K / 2  (p(n+1) - 2 p(n) + p(n-1) = v^2 dt^2 lap p)
 * and the relative phase-velocity error is w / (v k) - 1 (negative: the numerical wave
 * lags; the leapfrog alone makes it lead).  Points per wavelength are counted on the
 * coarsest spacing, as stability_ppw does: ppw = 2 pi / (k max_a d_a).
 *
 * Directions: the axes, the face diagonals and the body diagonal (a 2D grid: x and z,
 * the xz diagonal, no body diagonal), and "worst": the error of largest magnitude over
 * those and a 10 x 10 grid of directions of the octant (2D: 40 directions of the
 * quadrant); by symmetry of the stencils one octant is every direction.
 *
 * Pure functions of their arguments; no allocation. */
#ifndef SEISLIVE_DISPERSION_H
#define SEISLIVE_DISPERSION_H

#include <stdbool.h>

#include "kernels/operator.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dispersion_grid {
    struct operator_coeffs op; /* operator_design */
    double d[3];               /* spacing, m */
    bool two_d;                /* no y axis */
    double v;                  /* the velocity, m/s (only the time term needs it) */
    double dt;                 /* s; 0: space alone */
};

enum dispersion_dir { DISP_AXIS = 0, DISP_FACE = 1, DISP_BODY = 2, DISP_WORST = 3, DISP_NDIR };

/* "axis", "face diagonal", "body diagonal", "worst". */
const char *dispersion_dir_name(int dir);

/* The relative phase-velocity error along the unit vector N at PPW points per
 * wavelength; INFINITY where the leapfrog has no real frequency (|cos w dt| > 1). */
double dispersion_error_along(const struct dispersion_grid *g, double ppw, const double n[3]);

/* The error of largest magnitude (with its sign) over the directions of class DIR; NAN
 * for DISP_BODY on a 2D grid. */
double dispersion_error(const struct dispersion_grid *g, double ppw, int dir);

/* The smallest points per wavelength from which on (up to 1000) |error| in class DIR
 * stays at most TOL: scanned on a fine geometric grid from 2 up, then bisected to 1e-4
 * relative.  2 if the whole range holds; INFINITY if not even 1000 ppw do. */
double dispersion_ppw_at(const struct dispersion_grid *g, double tol, int dir);

#ifdef __cplusplus
}
#endif

#endif
