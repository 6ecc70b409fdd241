/* operator — the spatial derivative operators (struct prop_operator's kind) as
 * coefficients, symbols and the symbol's largest magnitude: what the kernels apply, what
 * the stability limit and the dispersion analysis (kernels/dispersion.h) read.
 *
 * Symbols.  A second-derivative operator D2 applied to exp(i k x) on a grid of spacing h
 * gives sigma(k) exp(i k x); operator_symbol returns S(theta) = -h^2 sigma(k), theta = k h
 * in [0, pi], which is theta^2 for the exact derivative.  For the explicit stencils
 *     h^2 f''(0) ~ c0 f(0) + sum_{l=1..r} c_l (f(l) + f(-l)),    S(theta) = -c0 - 2 sum c_l cos(l theta).
 * The phase velocity of the semi-discrete wave equation (space alone) along one axis is
 * v sqrt(S(theta)) / theta, so S / theta^2 - 1 is about twice the phase-velocity error.
 *
 * Operators:
 *   taylor     the centred Fornberg weights of accuracy ORDER (kernels/fd_coeffs.h),
 *              bit for bit what the propagator always used.
 *   optimized  explicit, the same half-width r = ORDER/2 and so the same cost; weights
 *              designed at start-up (never typed in) by a weighted minimax fit of the
 *              relative symbol error over the band:
 *                  minimize over c_1..c_r  max_{0 < theta <= band pi} |S(theta)/theta^2 - 1| (band pi / theta),
 *              c0 = -2 sum c_l (a constant field has zero derivative) and
 *              sum l^2 c_l = 1 (exact as theta -> 0, so the weighted error stays
 *              bounded there; half-width 1 is then Taylor's 2nd order), solved with
 *              Lawson's iteratively reweighted least squares (which converges to the
 *              weighted minimax, equiripple, solution; Householder QR for each fit).
 *              The weight lets the error grow linearly with the wavenumber up to its
 *              bound at the band edge: a wavelet's energy lies well below its fmax (a
 *              Ricker peaks at fmax / 2.5), where a plain minimax would spend the same
 *              error as at the edge.  Measured on the Green's function at 3 points per
 *              wavelength (tests/test_operator_physics.c): 0.85 % relative L2 with the
 *              weight, 1.36 % with the plain minimax, 1.08 % with a quadratic weight.
 *              The phase-velocity error then stays within that bound at every
 *              wavenumber of the band and, since the phase velocity in an oblique
 *              direction is a weighted mean of per-axis ratios at smaller wavenumbers,
 *              in every direction.  Default band (operator_band = 0): the widest band
 *              whose weighted minimax phase-velocity error is at most OPERATOR_DESIGN_TOL
 *              (0.08 %: a margin under the 0.1 % goal, so that the error has clearly
 *              crossed 0.1 % where the ppw of 0.1 % is measured), found by bisection;
 *              for half-width 4 that is 0.632 of Nyquist, i.e. 0.1 % from 3.14 points
 *              per wavelength on (Taylor 8th order: 4.75), see docs/operators.md for
 *              every half-width.
 *              First derivatives (the CPML memory terms only; TTI does not take this
 *              operator): the Taylor weights of ORDER.  They act only inside absorbing
 *              layers, where the CPML's absorption is measured with them
 *              (tests/test_operator_physics.c: >= 40 dB).
 *   implicit   the recursive operator (kernels/implicit_op.h: minimax design, a rational
 *              symbol); here its symbol and maximum, and Taylor's explicit weights of
 *              ORDER (its CPML memory terms' first derivatives; the recursion itself
 *              lives in kernels/implicit.h).
 *
 * No function here allocates.  A design takes a few milliseconds, the default band about
 * 15 of them; the last designs are kept (a small table under a mutex), so the stability
 * rule, the report and every simulation of a run share one.  Thread-safe. */
#ifndef SEISLIVE_OPERATOR_H
#define SEISLIVE_OPERATOR_H

#ifdef __cplusplus
extern "C" {
#endif

#define OPERATOR_R_MAX 8          /* half-width of order 16 */
#define OPERATOR_DESIGN_TOL 8e-4 /* phase-velocity error the default band holds */

/* The coefficients of one operator (kind, order, band), designed once. */
struct operator_coeffs {
    int kind;            /* enum prop_op_kind (kernels/propagator.h) */
    int order;           /* even, 2..16 */
    int r;               /* half-width order / 2 */
    double band;         /* the band the design holds (fraction of Nyquist; the default
                            resolved); 0 for taylor */
    double c2[OPERATOR_R_MAX + 1]; /* second derivative, weights for h^2 (see above) */
    double c1[OPERATOR_R_MAX + 1]; /* first derivative: h f'(0) ~ sum c1_l (f(l) - f(-l)) */
    double smax;         /* max over [0, pi] of S (the stability limit's symbol magnitude) */
};

/* Design operator KIND of ORDER over BAND (fraction of Nyquist in (0, 1); 0 = default)
 * into *OUT.  -EINVAL for a bad order or band. */
int operator_design(int kind, int order, double band, struct operator_coeffs *out);

/* S(theta) = -h^2 x the second-derivative symbol at theta = k h (see above). */
double operator_symbol_of(const struct operator_coeffs *oc, double theta);

/* The requested entry points, designing each time (callers in loops use the two above). */
int operator_second_coeffs(int kind, int order, double band, double *c);
int operator_first_coeffs(int kind, int order, double band, double *c);
double operator_symbol(int kind, int order, double band, double kh);
/* The largest S over [0, pi] (NAN when KIND cannot be designed): for Taylor the sum
 * |c0| + 2 sum |c_l| at Nyquist (fd_second_abs_sum, unchanged); for a designed stencil the
 * true maximum, which need not lie at Nyquist (dense scan, then golden-section refine). */
double operator_symbol_max(int kind, int order, double band);

/* sqrt(Taylor's symbol maximum / this operator's): the factor by which a velocity or dt
 * limit derived for Taylor weights of ORDER shrinks with operator KIND (exactly 1 for
 * taylor; NAN when KIND cannot be designed).  For the random boundary's vstable. */
double operator_vscale(int kind, int order, double band);

/* The band the default of KIND, ORDER resolves to (NAN for taylor / implicit). */
double operator_default_band(int kind, int order);

/* The band "auto" designs for (optimized, implicit): the fraction of the Nyquist
 * wavenumber that a wave of frequency FMAX reaches at velocity VMIN on spacing H (the
 * coarsest axis), 2 h fmax / vmin = 2 / (points per wavelength), times SCALE (1: the band
 * ends at fmax), within [OPERATOR_BAND_AUTO_MIN, OPERATOR_BAND_AUTO_MAX].  NAN for
 * arguments that are not positive.  SCALE = OPERATOR_BAND_AUTO_SCALE, measured with
 * seislive-bench dispersion (docs/operators.md): the band ends at 0.9 fmax (a Ricker's
 * spectrum there is 9 % of its peak); 0.85 to 0.925 pass the same grids, 0.95 and wider
 * fail them (a wider band costs accuracy where the wavelet's energy lies), 0.8 too. */
#define OPERATOR_BAND_AUTO_MIN 0.1
#define OPERATOR_BAND_AUTO_MAX 0.95
#define OPERATOR_BAND_AUTO_SCALE 0.9
double operator_band_auto(double fmax, double vmin, double h, double scale);

/* A band as a job configures it ([propagator] operator_band): a band >= 0 as it is (0:
 * the operator's default), or OPERATOR_BAND_AUTO: operator_band_auto at
 * OPERATOR_BAND_AUTO_SCALE for the wavelet's FMAX, the slowest speed VMIN and the coarsest
 * spacing of D that the grid has (2D, TWO_D: x and z).  Taylor has no band: 0.  NAN where
 * auto cannot be resolved (FMAX or VMIN not positive: say so where it is configured).
 * Why one function: the stability rule, the dispersion report, the model job and the RTM
 * engine must all design the same operator, or the dt picked would be another operator's. */
#define OPERATOR_BAND_AUTO (-1.0)
double operator_band_resolve(int kind, double band, double fmax, double vmin, const double d[3], int two_d);

/* "taylor", "optimized", "implicit" or "?". */
const char *operator_name(int kind);

#ifdef __cplusplus
}
#endif

#endif
