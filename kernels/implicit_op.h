/* implicit_op — the implicit (recursive) second-derivative operator: its design and the
 * tridiagonal line solve (Bartana, Kosloff et al., SEG 2015).
 *
 * Operator.  On a line of spacing h, with Dk f[j] = f[j+k] + f[j-k],
 *     h^2 d2f ~ g,   (1 + b D1) g = (c0 + c1 D1 + ... + cK DK) f,
 * i.e. per line the tridiagonal system  b g[j-1] + g[j] + b g[j+1] = r[j],
 * r[j] = c0 f[j] + sum_k ck (f[j+k] + f[j-k]).  Half-width K = order / 2 (the same
 * reach into the field as the explicit stencil of that order, so the halo, the strip
 * width and the CPML layers stay as they are).  Its Fourier symbol (f = exp(i k x),
 * theta = k h):
 *     -h^2 symbol = S(theta) = sum_k ck 4 sin^2(k theta / 2) / (1 + 2 b cos theta)
 * (c0 = -2 sum ck, so that S(0) = 0: a constant has no second derivative).
 *
 * Design (at start-up, never typed in).  The K + 1 free numbers c1..cK, b minimise the
 * largest RELATIVE error of the symbol,  E(theta) = S(theta) / theta^2 - 1,  over
 * [0, band pi] (the phase-velocity error of the space operator is sqrt(1 + E) - 1, about
 * E / 2): a rational minimax fit by the Remez exchange, linearised in the denominator
 * (each pass solves  sum_k ck phi_k(t_i) - 2 b cos t_i - (-1)^i E D_prev(t_i) = 1  on
 * K + 2 reference points, then moves the reference to the K + 2 alternating extrema of
 * E on a fine grid; phi_k(t) = 4 sin^2(k t / 2) / t^2, phi_k(0) = k^2).  |b| < 1/2 keeps
 * the tridiagonal system diagonally dominant (and 1 + 2 b cos theta > 0, no pole): when
 * the free fit wants more, b is held at +-IMPLICIT_B_MAX and the c's are refitted by the
 * (then linear) Remez.  The worst direction is the axis: along a diagonal each axis sees
 * a smaller theta, and the symbol there is a weighted mean of the axes' relative errors
 * over smaller theta, so the axis bound over the band holds for every direction.
 *
 * Long waves are exact: E(0) = 0 is imposed (sum k^2 ck = 1 + 2 b, one equation of each
 * pass, so the error equioscillates on K + 1 points of (0, band pi] instead of K + 2).
 *
 * Default band (operator_band = 0): 0.84 (the goal: 0.1 % phase error at 2.4
 * points per wavelength, theta = 2 pi / 2.4 = 0.833 pi), when the design of that order
 * keeps |sqrt(1 + E) - 1| <= 0.95e-3 over it (orders >= 8); else the widest band that does
 * (bisection).  Not wider for the high orders: the minimax error equioscillates over the
 * whole band, long waves included, and a wider band buys its reach with a larger ripple
 * where a wavelet has most of its energy (order 8 over 0.904 of Nyquist: 0.09 % phase
 * error ripple, 0.86-0.97 % relative L2 on tests/test_implicit_wave.c's Green's function
 * at 3 points per wavelength; over 0.84: 0.03 %, and 0.29-0.38 %).
 *
 * Errors: functions that can fail return 0 or a negative errno with err_msg(). */
#ifndef SEISLIVE_IMPLICIT_OP_H
#define SEISLIVE_IMPLICIT_OP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IMPLICIT_K_MAX 8         /* order 16 */
#define IMPLICIT_B_MAX 0.45      /* |b| bound of the design (< 1/2: diagonal dominance) */
#define IMPLICIT_PHASE_GOAL 0.95e-3 /* the default band's phase-error bound */
#define IMPLICIT_BAND_GOAL 0.84  /* 2.4 points per wavelength (0.833), rounded up */

struct implicit_coeffs {
    int order, K;
    double band;                 /* the design band used (fraction of Nyquist) */
    double c[IMPLICIT_K_MAX + 1]; /* c0..cK (for h = 1: divide by h^2) */
    double b;
    double err;                  /* max |E| over the band (the levelled error) */
    int b_held;                  /* 1 when b was held at the IMPLICIT_B_MAX bound */
};

/* Design the operator of ORDER (even, 2..16) over BAND (fraction of Nyquist, (0, 1);
 * 0 = the default band).  Cached: repeated calls with the same arguments are cheap and
 * thread safe. */
int implicit_design(int order, double band, struct implicit_coeffs *out);

/* The default band of ORDER (see above); NAN for a bad order. */
double implicit_default_band(int order);

/* S(kh) = -h^2 times the Fourier symbol of the designed operator at theta = KH (radians,
 * 0..pi), i.e. ~ kh^2; for the dispersion module.  NAN for bad arguments. */
double implicit_symbol(int order, double band, double kh);
double implicit_symbol_of(const struct implicit_coeffs *co, double kh);

/* max of S over [0, pi] (for the stability limit: v^2 dt^2 sum_a Smax / h_a^2 <= 4). */
double implicit_symbol_max(int order, double band);

/* ---- the tridiagonal line solve ------------------------------------------------------ */

/* The Thomas factors of  b g[i-1] + g[i] + b g[i+1] = r[i]  for lines of up to N rows
 * (they do not depend on the line length: the last row only drops its g[m] = 0 term):
 *   CP[0] = b, INV[0] = 1;  INV[i] = 1 / (1 - b CP[i-1]),  CP[i] = b INV[i].
 * Computed in double, stored as float. */
void implicit_factor(double b, int n, float *cp, float *inv);

/* Solve one system of M rows in place: R (stride RS between rows) holds the right-hand
 * side and receives g; the rows beyond are g[-1] = GA, g[M] = GB (0: the zero closure).
 * The forward sweep  d[i] = (r[i] - b d[i-1]) inv[i],  then the backward one
 * g[i] = d[i] - cp[i] g[i+1]. */
void implicit_solve_line(float b, const float *cp, const float *inv, int m, float *r, ptrdiff_t rs, float ga,
                         float gb);

/* The same for W systems side by side (lanes): row i of all lanes at R + i W; GA, GB the
 * W values beyond each end (NULL: 0).  The form the y and z sweeps use (vectorised
 * across x). */
void implicit_solve_panel(float b, const float *cp, const float *inv, int m, int w, float *r, const float *ga,
                          const float *gb);

#ifdef __cplusplus
}
#endif

#endif
