/* tti — the pseudo-acoustic tilted transversely isotropic (TTI) propagator of Fletcher,
 * Du & Fowler (Geophysics 74(6), WCA179, 2009), with a finite vertical shear velocity.
 *
 * Equations (two coupled fields p, q; p is the recorded pressure):
 *   p_tt = v_px^2 H2 p + v_pz^2 H1 q + v_sz^2 H1 (p - q)
 *   q_tt = v_pn^2 H2 p + v_pz^2 H1 q - v_sz^2 H2 (p - q)
 *   v_px^2 = v_pz^2 (1 + 2 eps),  v_pn^2 = v_pz^2 (1 + 2 delta),
 *   v_sz^2 = v_pz^2 |eps - delta| / sigma
 *   H1 = (n . grad)^2, the second derivative along the symmetry axis
 *        n = (sin theta cos phi, sin theta sin phi, cos theta), H2 = laplacian - H1.
 * For a homogeneous medium the plane-wave dispersion relation of this system is exactly
 * the qP-qSV one of a TI solid with c44 = rho v_sz^2 (Tsvankin 2001, eq. 1.41), so the
 * qP wave travels with Thomsen's exact phase velocity for that V_S0.  |eps - delta|
 * rather than eps - delta: with eps < delta a negative v_sz^2 makes the qSV branch
 * imaginary (exponential growth); the magnitude keeps the Christoffel matrix positive
 * definite and changes the qP kinematics only through V_S0 (tti_create logs how many
 * points have eps < delta).  sigma (Fletcher's 0.75 by default) trades qSV artefact
 * energy (larger sigma: slower, weaker shear) against stability in rapidly varying tilt.
 *
 * Discretisation (second order in time, even order 2..16 in space, kernels/fd_coeffs.h):
 * the pure second derivatives d_aa with the centred second-derivative stencil, each mixed
 * derivative d_ab (a != b) as the first-derivative stencil along b of the first-derivative
 * stencil along a (first derivatives of first derivatives, not a 2D product stencil).
 * With these symbols both -H1 and -H2 are non-negative (the first-derivative symbol
 * squared never exceeds the second-derivative one), so the discrete system is stable in
 * a homogeneous medium under the bound of tti_dt_max.  Per field:
 *   L f  = S_x f + S_y f + S_z f,        S_a = d_aa (stretched in the CPML, below)
 *   H1 f = sum n_a^2 S_a f + 2 sum_{a<b} n_a n_b d_b(d_a f)
 * and, with A_p = v_px^2 dt^2, A_q = (v_pn^2 - v_sz^2) dt^2, C = (v_pz^2 - v_sz^2) dt^2,
 * S = v_sz^2 dt^2, the update is
 *   p(n+1) = 2 p - p(n-1) + A_p L p + ((S - A_p) H1 p + C H1 q)
 *   q(n+1) = 2 q - q(n-1) + A_q L p + (C H1 q - A_q H1 p) + S L q
 * (the grouping makes eps = delta = 0 give q = p and exactly the acoustic update
 * p(n+1) = 2p - p(n-1) + v^2 dt^2 L p: the parenthesised H1 terms cancel bit for bit).
 * 2D (n[1] = 1, NONE y faces): a y-invariant 3D field, so every y derivative is zero:
 * L = d_xx + d_zz, H1 = n_x^2 d_xx + n_z^2 d_zz + 2 n_x n_z d_z(d_x) (any phi).
 *
 * Storage (per point of the allocated grid, layout of kernels/wave.h): the fields p, q at
 * two time levels (4 floats) and the parameters v_pz^2 dt^2, eps, delta, n_x, n_y, n_z
 * (6 floats: the trig of theta, phi is evaluated once at create; the four coefficients
 * above are 6 flops from them), so 40 bytes per point; the CPU reference adds the first
 * derivatives d_x f (and d_y f in 3D) of both fields as scratch (16 bytes in 3D, 8 in 2D).
 *
 * Absorbing boundary: CPML (Pasalic & McGarry 2010, kernels/cpml.h) applied to every
 * spatial derivative of the system: S_a = d_aa + d_a psi_a + zeta_a in the layers of axis
 * a (as in kernels/wave.c), and each mixed term uses the stretched first derivatives
 *   g_a = d_a f + psi_a,   d~_b g_a = d_b g_a + chi_ab,   chi_ab <- b_b chi_ab + a_b d_b g_a
 * (chi_xy in the y layers, chi_xz and chi_yz in the z layers; per field).  Inside the
 * layers eps and delta are tapered smoothly to 0 (w = (1 + cos(pi xi)) / 2, xi the depth
 * into the layer over its width, the deepest axis): the outer part of every layer is
 * isotropic, where the CPML is known to be stable; tilted anisotropy can violate the
 * PML stability condition of Becache, Fauqueux & Joly (2003).
 * (tests/test_tti.c: >= 32 dB down at every incidence angle 0-73 degrees in a 45 degree TTI
 * medium with 20 cells in 2D, >= 36 dB with 16 cells in 3D at 30 degrees azimuth.)
 * Free surface: p = q = 0 on the top interior plane, odd mirror of both above it.
 * Random boundary (Clapp 2009): v_pz of the layers randomized as in kernels/wave.c; the
 * layers are isotropic at depth by the taper above.
 * Not supported (-ENOTSUP): HALO faces (subdomains), CUDA devices (no kernels yet).
 *
 * Known limit: with point-wise coefficients the system is not energy-stable where the
 * tilt varies fast.  Tilt swinging 0..60 degrees over 20 cells (3 degrees per cell) runs
 * 20,000 steps bounded; over 10 cells the energy starts growing after ~6000 steps, over 5
 * cells after ~1500, at any dt, with or without CPML (and with the mixed terms in
 * self-adjoint form).  Smooth the tilt to a few degrees per cell, or see the stable
 * formulations of Duveneck & Bakker (2011) and Zhang, Zhang & Zhang (2011).
 *
 * Sources: a sample f is added to BOTH p and q (scaled by v_pz^2 dt^2 / dV at each node
 * with TTI_INJECT_PHYSICAL, as kernels/wave.h does with v = v_pz), so in the isotropic
 * limit p = s(t - r/v) / (4 pi r) exactly as the acoustic propagator; the recorded and
 * imaged field is p.  Time convention, points, strips and states: as kernels/wave.h,
 * with both fields (and all CPML memory) in strips and states.
 *
 * Errors: 0 or a negative errno with err_msg().  One thread at a time per simulation. */
#ifndef SEISLIVE_TTI_H
#define SEISLIVE_TTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/wave.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TTI_SIGMA_DEFAULT 0.75

/* The earth model on the interior grid (host memory, x fastest).  A NULL array takes the
 * constant beside it.  Angles in radians: theta, the tilt of the symmetry axis from the
 * vertical, in [-pi/2, pi/2]; phi, its azimuth from x towards y, in [-2 pi, 2 pi]. */
struct tti_model {
    const float *vpz;        /* m/s, required */
    const float *eps, *delta, *theta, *phi;
    double eps0, delta0, theta0, phi0;
};

struct tti_sim;
struct random_boundary;

/* Check the parameters (wave_params_check, HALO faces refused with -ENOTSUP, sigma > 0). */
int tti_params_check(const struct wave_params *p, double sigma);

/* Bytes a simulation of P allocates (fields, parameters, scratch, CPML memory, profiles). */
size_t tti_memory_bytes(const struct wave_params *p);
/* Bytes of one saved state of a simulation of P (both fields at both levels, all CPML
 * memory, the step index). */
size_t tti_state_bytes_of(const struct wave_params *p);

/* Check every point of M over N points for a stable system: v_pz finite > 0; eps, delta
 * finite and > -1/2; theta, phi finite and in range; v_sz^2 = v_pz^2 |eps - delta| / sigma
 * below v_pz^2 and v_pn^2 and the qSV branch real (see tti.h's top).  -EINVAL naming the
 * parameter, point and value.  *VMAX (optional) gets the largest qP phase velocity
 * (tti_qp_vmax) over the points, *NLESS (optional) the count of points with eps < delta. */
int tti_model_check(const struct tti_model *m, size_t n, double sigma, double *vmax, size_t *nless);

/* Largest qP phase velocity over all directions of a medium with v_pz = 1, EPS, DELTA and
 * SIGMA (in units of v_pz).  It is v_px when the qP velocity grows monotonically from the
 * axis, larger when delta > eps (the maximum lies between axis and plane). */
double tti_qp_vmax(double eps, double delta, double sigma);

/* A rigorous bound on the largest stable dt of the leapfrog TTI scheme of ORDER and
 * spacings D (2D: x and z only) for the largest qP phase velocity VQP (m/s,
 * tti_model_check):   dt_bound = 2 / (VQP sqrt(S sum_a 1/d_a^2)),  S = fd_second_abs_sum.
 * Derivation: in a homogeneous medium the discrete system's eigenvalues for wavenumber K
 * are those of the continuous qP-qSV problem with k_perp^2 = a(K) = -symbol(H2) and
 * k_axis^2 = b(K) = -symbol(H1) (both >= 0, see the top of this file); the qP one is
 * V(psi)^2 (a + b) with tan^2 psi = a / b, at most VQP^2 (a + b), and a + b = -symbol(L)
 * <= S sum_a 1/d_a^2.  Leapfrog needs dt^2 lambda <= 4.  Up to ~15 % below the true limit
 * (the fastest direction is not the one reached at the largest |K|). */
double tti_dt_bound(int order, const double d[3], bool two_d, double vqp);

/* The largest stable dt of one homogeneous medium (v_pz m/s, eps, delta, theta, phi
 * radians, sigma) on a grid of ORDER and spacings D.  At the Nyquist corner K = (pi/dx,
 * pi/dy, pi/dz) every first-derivative symbol vanishes, so the mixed terms drop out and
 *   a = sum_a (1 - n_a^2) S / d_a^2,  b = sum_a n_a^2 S / d_a^2
 * there; lambda_c = v_pz^2 x (qP root of the 2 x 2 system at (a, b)) and dt = 2 /
 * sqrt(lambda_c).  That the corner holds the largest eigenvalue is not proved: a brute-force
 * search over the Brillouin zone (300 random 3D media, |eps|, |delta| <= 0.4, any tilt,
 * unequal spacings, order 8) found none larger by more than 5e-5, so the result carries a
 * 1e-3 margin; tests/test_tti.c checks that 0.99 of it runs bounded and 1.1 x grows.  It
 * corner value (before the margin) is at least tti_dt_bound (equal for isotropic media: the
 * acoustic limit). */
double tti_dt_max(int order, const double d[3], bool two_d, double vpz, double eps, double delta, double theta,
                  double phi, double sigma);

/* The smallest tti_dt_max over the N points of model M (tti_model_check first). */
double tti_dt_max_model(const struct tti_model *m, size_t n, int order, const double d[3], bool two_d, double sigma);

/* ---- life cycle (as kernels/wave.h; P's faces may not be HALO) ---- */
int tti_create(const struct sl_device *dev, const struct wave_params *p, double sigma, const struct tti_model *m,
               struct tti_sim **out);
int tti_create_like(const struct tti_sim *like, struct tti_sim **out);
void tti_destroy(struct tti_sim *s);
const struct wave_params *tti_params_of(const struct tti_sim *s);
const struct wave_layout *tti_layout(const struct tti_sim *s);
double tti_sigma(const struct tti_sim *s);
int tti_reset(struct tti_sim *s);

/* ---- boundaries ---- */
void tti_set_cpml(struct tti_sim *s, bool on);
bool tti_cpml_enabled(const struct tti_sim *s);
int tti_randomize_layers(struct tti_sim *s, const struct random_boundary *rb, uint64_t shot_id);

/* ---- stepping (as wave_step, wave_step_reverse, wave_set_reverse_interior, wave_swap) ---- */
int tti_step(struct tti_sim *s);
int tti_step_reverse(struct tti_sim *s);
void tti_set_reverse_interior(struct tti_sim *s, bool on);
void tti_swap(struct tti_sim *s);
int64_t tti_step_index(const struct tti_sim *s);

/* ---- points: wave_points made on this simulation's grid ---- */
enum { TTI_INJECT_PHYSICAL = WAVE_INJECT_PHYSICAL };
int tti_points_create(struct tti_sim *s, const double *xyz, size_t n, int interp, struct wave_points **out);
/* Add AMPS[i * STRIDE] * SCALE into both p and q (TTI_INJECT_PHYSICAL: times
 * v_pz^2 dt^2 / dV per node). */
int tti_inject(struct tti_sim *s, const struct wave_points *pts, const float *amps, size_t stride, float scale,
               unsigned flags);
/* Sample p. */
int tti_sample(struct tti_sim *s, const struct wave_points *pts, float *out, size_t stride, unsigned flags);

/* ---- fields: p (and q) at the current or previous level, allocated layout ---- */
float *tti_p(struct tti_sim *s);
float *tti_q(struct tti_sim *s);
/* Interior of p out; in: the same values into p and q (a pressure field with q = p, as a
 * source makes it). */
int tti_copy_out(struct tti_sim *s, bool prev, float *host);
int tti_copy_in(struct tti_sim *s, bool prev, const float *host);
/* Interior of q out (diagnostics: p - q is the shear artefact). */
int tti_copy_out_q(struct tti_sim *s, bool prev, float *host);

/* ---- time reversal and checkpoints ---- */
/* Floats of the strip: the wave strip (kernels/wave.h) of p, then of q. */
size_t tti_strip_count(const struct tti_sim *s);
int tti_strip_save(struct tti_sim *s, float *buf, bool on_device);
int tti_strip_load(struct tti_sim *s, const float *buf, bool on_device);
size_t tti_state_bytes(const struct tti_sim *s);
int tti_state_save(struct tti_sim *s, void *buf, bool on_device);
int tti_state_load(struct tti_sim *s, const void *buf, bool on_device);

void tti_describe(const struct tti_sim *s, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
