/* points — sources and receivers at arbitrary coordinates: the interpolation weights
 * behind wave_points_create / wave_inject / wave_sample (kernels/wave.h).
 *
 * Weights are separable: w(x, y, z) = wx(x) wy(y) wz(z) over ns nodes per axis.
 *   sinc:      Kaiser-windowed sinc (Hicks, Geophysics 67, 2002), half-width 4 nodes,
 *              b = 6.31: w_i = sinc(u_i) I0(b sqrt(1 - (u_i/4)^2)) / I0(b), u_i = x - i,
 *              accurate up to ~2/3 of the Nyquist wavenumber; a point on a node gets
 *              weight 1 there and 0 elsewhere.  The same weights inject (adjoint) and
 *              sample, so injection and sampling are transposes of each other.
 *   trilinear: 2 nodes per axis, linear weights.
 *   nearest:   1 node.
 * Under a free surface (p = 0 at z = o[2], odd mirror above) support nodes above the
 * surface are folded onto their mirror nodes with the opposite sign.
 * Injection adds amp * w into the field (times v^2 dt^2 / dV with WAVE_INJECT_PHYSICAL);
 * sampling returns sum w p. */
#ifndef SEISLIVE_POINTS_H
#define SEISLIVE_POINTS_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define POINTS_SINC_HALF 4
#define POINTS_SINC_B 6.31
#define POINTS_MAX_SUPPORT (2 * POINTS_SINC_HALF)

/* Nodes per axis of interpolation INTERP (enum wave_interp), 0 when unknown. */
int points_support(int interp);

/* Weights for a point at X grid units (fractional index along one axis): *FIRST gets the
 * index of the first node, W the points_support() weights.  Returns the support. */
int points_weights_1d(double x, int interp, int *first, float *w);

/* The weights wave_points_create gives along one axis: points_weights_1d, then, when FOLD
 * (the z axis under a free surface at index 0), the support above the surface folded onto
 * its mirror nodes (*FIRST becomes 0).  Subdomains (stream/decompose_points.c) compute the
 * whole grid's weights with it, so theirs are the same bit for bit. */
int points_axis_weights(double x, int interp, bool fold, int *first, float *w);

#ifdef __cplusplus
}
#endif

#endif
