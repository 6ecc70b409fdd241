/* random_boundary — the random-velocity boundary of Clapp (2009, "Reverse time
 * migration with random boundaries", SEG Expanded Abstracts 28, 2809).
 *
 * In the `random` strategy the source wavefield runs with no damping at all: the
 * absorbing layers hold random velocities instead, so waves that reach them scatter
 * incoherently rather than reflect coherently, and the whole simulation stays exactly
 * time-reversible (nothing needs storing).  The scattered energy that returns into
 * the interior correlates weakly with the receiver wavefield and stacks out.
 *
 * Velocity in a layer cell at normalized depth xi in [0, 1] into the layer (0 at its
 * inner edge, 1 at the outer wall), edge velocity v0 (the model's edge value that the
 * layer would otherwise repeat), random number r in [0, 1):
 *     v = v0 + a(xi) (lo + r (hi - lo) - v0)
 * a(xi): ramp  linear xi, quadratic xi^2, exponential (e^(3 xi) - 1)/(e^3 - 1): how
 * fast randomness grows (a slow start reflects less at the layer's edge).
 * [lo, hi]: range  full       [vmin/2, vstable]: as much contrast as stability allows;
 *                  nyquist    [2 fmax max(d), vstable]: no slower than a wave of fmax
 *                             still sampled at 2 points per wavelength;
 *                  symmetric  [v0 - w, v0 + w], w = min(vstable - v0, v0 / 2).
 * vstable = 0.99 x the largest velocity stable at the simulation's dt and order.
 *
 * r comes from a counter-based hash of (seed, shot id, cell index): any cell's value is
 * recomputed on demand, nothing is stored between the forward and reverse runs, and
 * the same seed gives the same boundary on every device.  Only the outer
 * `width` cells of each absorbing layer are randomized (all of it if narrower). */
#ifndef SEISLIVE_RANDOM_BOUNDARY_H
#define SEISLIVE_RANDOM_BOUNDARY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct random_boundary {
    int ramp;           /* enum random_ramp */
    int range;          /* enum random_range */
    int width;          /* cells */
    uint64_t seed;
    double vstable;     /* m/s: the largest stable velocity (see random_boundary_vstable) */
    double vmin;        /* m/s: the model's smallest velocity */
    double vnyquist;    /* m/s: 2 fmax max(d), the slowest velocity sampled at 2 points per
                           wavelength at the source's highest frequency */
};

/* The uniform number in [0, 1) of cell I for SEED and STREAM (the shot id): a
 * splitmix64-style finalizer over the mixed counter (no state). */
double random_boundary_uniform(uint64_t seed, uint64_t stream, uint64_t i);

/* The largest velocity for which leapfrog with DT and the ORDER stencil on spacings D
 * is stable: 2 / (dt sqrt(S sum_a 1/d_a^2)), S = fd_second_abs_sum(order). */
double random_boundary_vstable(int order, double dt, const double d[3]);

/* 2 FMAX max(d). */
double random_boundary_vnyquist(double fmax, const double d[3]);

/* Ramp a(xi). */
double random_boundary_ramp(int ramp, double xi);

/* Randomize the absorbing layers of a padded velocity V (m/s, NPAD[0] x NPAD[1] x
 * NPAD[2], x fastest) whose interior starts at PML_LO and has N cells per axis
 * (layer widths PML[6] = xmin xmax ymin ymax zmin zmax).  Interior cells are left as
 * they are.  Faces with a zero-width layer (free surface) are not randomized.
 * SHOT_ID varies the pattern between shots.  Returns 0 or -EINVAL. */
int random_boundary_apply(const struct random_boundary *rb, const int npad[3], const int n[3],
                          const int pml[6], uint64_t shot_id, float *v);

#ifdef __cplusplus
}
#endif

#endif
