/* tti_phase — the qP phase velocity of the pseudo-acoustic TTI medium of kernels/tti.h
 * (finite v_sz^2 = v_pz^2 (eps - delta_eff) / sigma, delta_eff = min(delta, eps)) and its slowest value over directions
 * and over a model: the speed behind the points-per-wavelength check of TTI (the slowest
 * wave the grid must resolve), as tti_qp_vmax / tti_dt_max_model are behind the time step.
 *
 * Thomsen's exact qP phase velocity (Tsvankin 2001, eq. 1.41), v_pz = 1, s = sin^2 of the
 * phase angle from the symmetry axis, f = 1 - v_sz^2 / v_pz^2, multiplied through by f so
 * that f -> 0 (eps - delta = sigma) has no division (delta is delta_eff throughout):
 *   V^2(s) = 1 + eps s - f/2 + sqrt(Q(s)) / 2,
 *   Q(s)   = (f + 2 eps s)^2 - 8 f (eps - delta) s (1 - s).
 * It equals the qP eigenvalue of tti.h's 2 x 2 system (tests/test_tti_check.c checks both
 * against each other through tti_qp_vmax).
 *
 * The slowest direction is found in closed form: V^2 is extremal where Q' = -4 eps sqrt(Q),
 * so Q'^2 = 16 eps^2 Q, a quadratic in s:
 *   32 f (eps - delta) (A s^2 + B s) + B^2 - 16 eps^2 f^2 = 0,
 *   A = 4 eps^2 + 8 f (eps - delta),  B = 4 f eps - 8 f (eps - delta)
 * (Q = A s^2 + B s + f^2).  The minimum over s in [0, 1] is at an end (the axis, V = 1;
 * the plane, V^2 = 1 + 2 eps) or at a root in between; all are evaluated.  Weak-anisotropy
 * reading, V ~ 1 + delta s (1 - s) + eps s^2: an interior minimum needs delta < 0 and
 * eps > delta / 2 (the qP speed first falls away from the axis); with eps < delta the
 * medium is run elliptic (delta_eff = eps) and the slowest direction is the axis or the
 * plane. */
#ifndef SEISLIVE_TTI_PHASE_H
#define SEISLIVE_TTI_PHASE_H

#include <stddef.h>

#include "kernels/tti.h"

#ifdef __cplusplus
extern "C" {
#endif

/* V^2 / v_pz^2 at S = sin^2 of the phase angle from the axis (0: along the axis, 1: in
 * the isotropy plane) for EPS, DELTA and SIGMA (> 0). */
double tti_qp_phase_v2(double s, double eps, double delta, double sigma);

/* The slowest qP phase velocity over all directions, in units of v_pz: at most 1 and
 * sqrt(1 + 2 eps).  *S_AT (optional) gets the sin^2 of its angle from the axis.  (A 2D grid whose axis
 * leaves the x-z plane, phi != 0, reaches only some directions: there this is a lower
 * bound, the safe side for a points-per-wavelength check.) */
double tti_qp_vmin(double eps, double delta, double sigma, double *s_at);

/* The slowest qP phase velocity (m/s) over the N points of M: min of v_pz tti_qp_vmin.
 * M as tti_model_check accepts it (call that first: no point is checked here). */
double tti_qp_vmin_model(const struct tti_model *m, size_t n, double sigma);

#ifdef __cplusplus
}
#endif

#endif
