/* tti — the pseudo-acoustic tilted transversely isotropic (TTI) propagator of Fletcher,
 * Du & Fowler (Geophysics 74(6), WCA179, 2009), with a finite vertical shear velocity.
 *
 * Equations (two coupled fields p, q; p is the recorded pressure):
 *   p_tt = v_px^2 H2 p + v_pz^2 H1 q + v_sz^2 H1 (p - q)
 *   q_tt = v_pn^2 H2 p + v_pz^2 H1 q - v_sz^2 H2 (p - q)
 *   v_px^2 = v_pz^2 (1 + 2 eps),  v_pn^2 = v_pz^2 (1 + 2 delta),
 *   v_sz^2 = v_pz^2 (eps - delta) / sigma
 *   H1 = (n . grad)^2, the second derivative along the symmetry axis
 *        n = (sin theta cos phi, sin theta sin phi, cos theta), H2 = laplacian - H1.
 * For a homogeneous medium the plane-wave dispersion relation of this system is exactly
 * the qP-qSV one of a TI solid with c44 = rho v_sz^2 (Tsvankin 2001, eq. 1.41), so the
 * qP wave travels with Thomsen's exact phase velocity for that V_S0.  sigma (Fletcher's
 * 0.75 by default) trades qSV artefact energy (larger sigma: slower, weaker shear).
 *
 * eps < delta: delta is lowered to eps at such points (delta_eff = min(delta, eps); the
 * point becomes elliptic, v_sz = 0; tti_create logs the count, `seislive check` reports
 * it).  Why: a system u_tt = C2 H2 u + C1 H1 u with H1, H2 symmetric negative semi-definite
 * is energy-stable in any heterogeneity of n when one constant positive definite W makes
 * W C1 and W C2 symmetric positive semi-definite; for Fletcher's C1, C2 that W exists iff
 * eps >= delta, and for eps < delta no 2 x 2 pseudo-acoustic system with the TI qP-qSV
 * dispersion relation has one (the condition reduces to (c11 - c44)(c33 - c44) >=
 * (c13 + c44)^2, i.e. eps >= delta, for every c44).  Where the tilt varies fast such points
 * grow without bound (as the literature reports: Bakker & Duveneck 2011, Bube et al. 2012).
 * The cost is kinematic: at those points the NMO velocity is v_pz sqrt(1 + 2 eps).
 *
 * Discretisation (second order in time, even order 2..16 in space, kernels/fd_coeffs.h),
 * self-adjoint so that fast tilt changes stay stable (docs/tti.md):
 *   L f  = S_x f + S_y f + S_z f,           S_a = d_aa (second-derivative stencil)
 *   H1 f = sum_a D_a (n_a s),   s = sum_b n_b D_b f   (D_a: first-derivative stencil)
 * i.e. H1 = -D^T N D with N = n n^T point-wise: symmetric and negative semi-definite for
 * any n(x); H2 = L - H1 is too, as D_a^T D_a <= -S_a (the first-derivative symbol squared
 * never exceeds the second-derivative one).  (The point-wise form n_a n_b d_ab f is not
 * symmetric and grows where the tilt turns by more than ~3 degrees per cell.)  With A_p =
 * v_px^2 dt^2, A_q = (v_pn^2 - v_sz^2) dt^2, C = (v_pz^2 - v_sz^2) dt^2, S = v_sz^2 dt^2:
 *   p(n+1) = 2 p - p(n-1) + A_p L p + ((S - A_p) H1 p + C H1 q)
 *   q(n+1) = 2 q - q(n-1) + A_q L p + (C H1 q - A_q H1 p) + S L q
 * (the grouping makes eps = delta = 0 give q = p and exactly the acoustic update
 * p(n+1) = 2p - p(n-1) + v^2 dt^2 L p: the parenthesised H1 terms cancel bit for bit).
 * Each step is two passes: s of both fields over the padded grid, then L, H1 and the
 * update.  An update reads f up to 2r cells away along an axis (r = order / 2), so the
 * boundary strips of time reversal are 2 halos wide.
 * 2D (n[1] = 1, NONE y faces): no y terms (any phi).
 *
 * Storage (per point of the allocated grid, layout of kernels/wave.h): the fields p, q at
 * two time levels (16 bytes), v_pz^2 dt^2 and the medium quantised to 16 bits per
 * parameter (eps, delta_eff, theta, phi: 8 bytes; kernels/tti_internal.h states the
 * steps), so 28 bytes per point on a GPU; the CPU reference adds the decoded eps, delta,
 * n_x, n_y, n_z and s of both fields (28 bytes).
 *
 * Absorbing boundary: CPML (Pasalic & McGarry 2010, kernels/cpml.h) on every spatial
 * derivative: S_a = d_aa + d_a psi_a + zeta_a in the layers of axis a (as kernels/wave.c),
 * D_b f + psi_b inside s, and each outer derivative m_a = D_a(n_a s) stretched as
 *   m_a <- m_a + chi_a,   chi_a <- b_a chi_a + a_a D_a(n_a s)      (axis a's layers).
 * Inside the layers eps and delta are tapered smoothly to 0 over the layer's outer 40 %
 * (w = (1 + cos(pi t)) / 2, t = (xi - TTI_TAPER_START) / (1 - TTI_TAPER_START) clamped to
 * [0, 1], xi the depth into the layer over its width, the deepest axis): the outermost
 * cells, where the damping is strongest, are isotropic, where the CPML is known to be
 * stable; tilted anisotropy can violate the PML stability condition of Becache, Fauqueux &
 * Joly (2003).  Why the taper starts 0.6 of the way in, not at the layer's inner edge:
 * the taper is itself a gradient of the medium, and at 45 degrees of tilt it was most of
 * what the layers reflected (2D, tests/test_tti.c, 16 cells: -29.3 dB tapered over the
 * whole width, -40.6 dB from 0.5, -46.5 dB from 0.6, -51.6 dB with no taper); noise in
 * 10- and 12-cell layers decayed over 20,000-60,000 steps with either taper, and with
 * none (docs/tti.md).
 * Free surface: p = q = 0 on the top interior plane, odd mirror of both above it; the
 * rows above it hold the image medium (n_z negated) and the image of s (negated), so n_z s
 * is even about the surface.
 * Random boundary (Clapp 2009): v_pz of the layers randomized as in kernels/wave.c; the
 * layers are isotropic at depth by the taper above.
 * Subdomains (HALO faces): on the CPU, with the fields exchanged after a step and the
 * pass-1 products between its passes (kernels/tti_internal.h, tti_step_stage); a GPU
 * simulation refuses HALO faces at create (-ENOTSUP) so far.
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

/* Where the eps-delta taper of the layers begins, as a fraction of the layer's width
 * (above). */
#define TTI_TAPER_START 0.6

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/tti_check.h"
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
    /* A check of this model its caller ran and it passed, with what it saw
     * (kernels/tti_check.h, tti_check_record): tti_create takes its results instead of
     * checking again where they are of these very points and sigma.  Zeroed: none. */
    struct tti_check checked;
};

struct tti_sim;
struct random_boundary;

/* Check the parameters (wave_params_check, sigma > 0). */
int tti_params_check(const struct wave_params *p, double sigma);

/* Bytes a simulation of P allocates (fields, parameters, scratch, CPML memory, profiles). */
size_t tti_memory_bytes(const struct wave_params *p);
/* Bytes of one saved state of a simulation of P (both fields at both levels, all CPML
 * memory, the step index). */
size_t tti_state_bytes_of(const struct wave_params *p);

/* Check every point of M over N points for a stable system: v_pz finite > 0; eps, delta
 * finite, > -1/2 and < 1.5 (kernels/tti_internal.h's 16-bit range); theta, phi finite and in range; with delta_eff =
 * min(delta, eps), v_sz^2 = v_pz^2 (eps - delta_eff) / sigma below v_pz^2 and v_pn^2 and
 * the qSV branch real (see tti.h's top).  -EINVAL naming the
 * parameter, point and value.  *VMAX (optional) gets the largest qP phase velocity
 * (tti_qp_vmax) over the points, *NLESS (optional) the count of points with eps < delta. */
int tti_model_check(const struct tti_model *m, size_t n, double sigma, double *vmax, size_t *nless);
/* Record into C that tti_model_check passed on M's N cells with SIGMA, giving VMAX and
 * NLESS (kernels/tti_check.h); tti_check_matches: whether C is a check of M's N cells
 * with SIGMA (the same arrays and constants). */
void tti_check_record(struct tti_check *c, const struct tti_model *m, size_t n, double sigma, double vmax,
                      size_t nless);
bool tti_check_matches(const struct tti_check *c, const struct tti_model *m, size_t n, double sigma);

/* Largest qP phase velocity over all directions of the simulated medium with v_pz = 1,
 * EPS, DELTA (taken as delta_eff = min(DELTA, EPS)) and SIGMA, in units of v_pz.  v_px
 * when eps >= 0 (the qP velocity then grows monotonically towards the plane), else found
 * by search. */
double tti_qp_vmax(double eps, double delta, double sigma);

/* A rigorous bound on the largest stable dt of the leapfrog TTI scheme of ORDER and
 * spacings D (2D: x and z only) for the largest qP phase velocity VQP (m/s,
 * tti_model_check):   dt_bound = 2 / (VQP sqrt(S sum_a 1/d_a^2)),  S = fd_second_abs_sum.
 * Derivation: in a homogeneous medium the discrete system's eigenvalues for wavenumber K
 * are those of the continuous qP-qSV problem with k_axis^2 = b(K) = -symbol(H1) =
 * (sum_a n_a D_a(K))^2 and k_perp^2 = a(K) = -symbol(L) - b(K) (both >= 0); the larger is
 * V(psi)^2 (a + b) <= VQP^2 (a + b) with a + b = -symbol(L) <= S sum_a 1/d_a^2 (and the
 * qSV one is smaller).  Leapfrog needs dt^2 lambda <= 4.  The bound is reached: at the
 * Nyquist corner every first-derivative symbol vanishes, so b = 0 and lambda = v_px^2
 * (a + b) there, which is VQP^2 (a + b) whenever eps >= 0. */
double tti_dt_bound(int order, const double d[3], bool two_d, double vqp);

/* The largest stable dt of one homogeneous medium (v_pz m/s, eps, delta, theta, phi
 * radians, sigma) on a grid of ORDER and spacings D: tti_dt_bound for v_pz x tti_qp_vmax,
 * less a 1e-3 margin (tests/test_tti.c checks that 0.99 of it runs bounded and 1.1 x
 * grows).  The tilt does not enter (the corner has no H1). */
double tti_dt_max(int order, const double d[3], bool two_d, double vpz, double eps, double delta, double theta,
                  double phi, double sigma);

/* The largest stable dt for a model whose fastest qP phase velocity is VQP (m/s,
 * tti_model_check's *VMAX): tti_dt_bound less the margin of tti_dt_max.  For callers that
 * checked the model already (one pass over it, not two). */
double tti_dt_limit(int order, const double d[3], bool two_d, double vqp);

/* The smallest tti_dt_max over the N points of model M (tti_model_check, then
 * tti_dt_limit); 0 if tti_model_check refuses M. */
double tti_dt_max_model(const struct tti_model *m, size_t n, int order, const double d[3], bool two_d, double sigma);

/* ---- life cycle (as kernels/wave.h; HALO faces on the CPU only) ---- */
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
/* Floats of the strip: the wave strip (kernels/wave.h) of p, then of q, each 2 halos
 * wide (the step reads 2r cells away, top of this file). */
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
