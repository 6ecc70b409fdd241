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
 * r comes from a counter-based hash of (seed, shot id, cell index: the index in the whole
 * grid's padded frame, so a subdomain draws its part of the whole grid's layers, struct
 * rb_frame): any cell's value is recomputed on demand, nothing is stored between the
 * forward and reverse runs, and the same seed gives the same boundary on every device.
 * Only the outer `width` cells of each absorbing layer are randomized (all of it if
 * narrower). */
#ifndef SEISLIVE_RANDOM_BOUNDARY_H
#define SEISLIVE_RANDOM_BOUNDARY_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define RB_HD __host__ __device__
#else
#define RB_HD
#endif
/* a * b + c rounded twice, as the host computes it: nvcc would otherwise contract it
 * into one fma on the device and the layers could differ in the last bit */
#ifdef __CUDA_ARCH__
#define RB_MULADD(a, b, c) __dadd_rn(__dmul_rn((a), (b)), (c))
#else
#define RB_MULADD(a, b, c) ((a) * (b) + (c))
#endif

/* The ramps and ranges above (the twins of conf/config.h's enum random_ramp and enum
 * random_range, same values). */
enum rb_ramp { RB_RAMP_LINEAR = 0, RB_RAMP_EXPONENTIAL = 1, RB_RAMP_QUADRATIC = 2 };
enum rb_range { RB_RANGE_FULL = 0, RB_RANGE_NYQUIST = 1, RB_RANGE_SYMMETRIC = 2 };

struct random_boundary {
    int ramp;           /* enum rb_ramp */
    int range;          /* enum rb_range */
    int width;          /* cells */
    uint64_t seed;
    double vstable;     /* m/s: the largest stable velocity (see random_boundary_vstable) */
    double vmin;        /* m/s: the model's smallest velocity */
    double vnyquist;    /* m/s: 2 fmax max(d), the slowest velocity sampled at 2 points per
                           wavelength at the source's highest frequency */
};

/* The per-cell arithmetic is inline here so that the CPU loop (random_boundary.c) and
 * the CUDA kernel (random_boundary.cu) run the same code and give the same layers: the
 * same operations, rounded alike (RB_MULADD); only exp() of the exponential ramp comes
 * from two libraries, CUDA's within 1 ulp of glibc's (equal bit for bit on every cell
 * of tests/gpu/test_gpu_rtm.c's grid). */

static inline RB_HD uint64_t rb_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The uniform number in [0, 1) of cell I for SEED and STREAM (the shot id): a
 * splitmix64-style finalizer over the mixed counter (no state). */
static inline RB_HD double rb_uniform(uint64_t seed, uint64_t stream, uint64_t i)
{
    uint64_t k = rb_mix64(seed + 0x9e3779b97f4a7c15ULL * (stream + 1));
    uint64_t z = rb_mix64(k ^ (i * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL));
    return (double)(z >> 11) * (1.0 / 9007199254740992.0); /* 2^-53 */
}

static inline RB_HD double rb_ramp(int ramp, double xi)
{
    xi = xi < 0.0 ? 0.0 : xi > 1.0 ? 1.0 : xi;
    switch (ramp) {
    case RB_RAMP_QUADRATIC:
        return xi * xi;
    case RB_RAMP_EXPONENTIAL:
        return (exp(3.0 * xi) - 1.0) / (exp(3.0) - 1.0);
    default:
        return xi;
    }
}

/* Depth into the layers of padded index I on an axis whose interior starts at LO and
 * has N cells: 0 inside the interior, else the distance in cells from the interior
 * edge (1 = first layer cell). */
static inline RB_HD int rb_depth_into(int i, int lo, int n)
{
    if (i < lo)
        return lo - i;
    if (i >= lo + n)
        return i - (lo + n - 1);
    return 0;
}

static inline RB_HD int rb_clampi(int i, int lo, int hi) { return i < lo ? lo : i > hi ? hi : i; }

/* Where a grid's padded cells lie in the padded grid of the whole model, so that a
 * subdomain draws the very layers of the whole grid: the whole grid's padded and interior
 * sizes and layer widths, and SHIFT, the whole-grid padded index of this grid's padded
 * cell (0, 0, 0).  A whole grid is its own frame (shift 0). */
struct rb_frame {
    int npad[3], n[3], pml[6];
    int shift[3];
};

/* Randomize padded cell (x, y, z) of V in place (see random_boundary_apply); interior
 * cells are left alone.  VHI = 0.99 vstable.  V is this grid's padded array (LNPAD); the
 * depth into the layers, the ramp and the random number's cell index come from the whole
 * grid's frame G, so every subdomain holds exactly its part of the whole grid's layers. */
static inline RB_HD void rb_cell_in(const struct random_boundary *rb, const struct rb_frame *g, const int lnpad[3],
                                    uint64_t shot_id, double vhi, int x, int y, int z, float *v)
{
    const int *npad = g->npad, *n = g->n, *pml = g->pml;
    const int gx = x + g->shift[0], gy = y + g->shift[1], gz = z + g->shift[2];
    const int lox = pml[0], loy = pml[2], loz = pml[4];
    const int d3[3] = {rb_depth_into(gx, lox, n[0]), rb_depth_into(gy, loy, n[1]), rb_depth_into(gz, loz, n[2])};
    if (!d3[0] && !d3[1] && !d3[2])
        return;
    const size_t sy = (size_t)npad[0], sz = (size_t)npad[0] * (size_t)npad[1];
    const size_t lsy = (size_t)lnpad[0], lsz = (size_t)lnpad[0] * (size_t)lnpad[1];
    /* Normalized depth: the deepest of the three axes, over that face's randomized
     * width (the outer `width` cells of the layer). */
    double xi = 0.0;
    const int ix[3] = {gx, gy, gz}, lo3[3] = {lox, loy, loz};
    for (int a = 0; a < 3; a++) {
        if (!d3[a])
            continue;
        int w = ix[a] < lo3[a] ? pml[2 * a] : pml[2 * a + 1];
        int rw = rb->width < w ? rb->width : w;
        int start = w - rw; /* cells of plain extension before the random part */
        double t = rw > 0 ? (double)(d3[a] - start) / (double)rw : 0.0;
        if (t > xi)
            xi = t;
    }
    /* the random number's counter: the cell's index in the whole padded grid */
    size_t i = (size_t)gz * sz + (size_t)gy * sy + (size_t)gx;
    size_t li = (size_t)z * lsz + (size_t)y * lsy + (size_t)x;
    /* v0: the velocity the layer holds before randomization (the caller's edge
     * extension), at the nearest interior cell of the whole grid (which a grid holding
     * this layer cell holds too: it holds that face of the whole grid). */
    size_t e = (size_t)(rb_clampi(gz, loz, loz + n[2] - 1) - g->shift[2]) * lsz +
               (size_t)(rb_clampi(gy, loy, loy + n[1] - 1) - g->shift[1]) * lsy +
               (size_t)(rb_clampi(gx, lox, lox + n[0] - 1) - g->shift[0]);
    double v0 = v[e];
    double lo, hi;
    switch (rb->range) {
    case RB_RANGE_NYQUIST:
        lo = rb->vnyquist;
        hi = vhi;
        break;
    case RB_RANGE_SYMMETRIC: {
        double w = vhi - v0 < 0.5 * v0 ? vhi - v0 : 0.5 * v0;
        w = w < 0.0 ? 0.0 : w;
        lo = v0 - w;
        hi = v0 + w;
        break;
    }
    default:
        lo = 0.5 * rb->vmin;
        hi = vhi;
        break;
    }
    if (lo > hi)
        lo = hi;
    double r = rb_uniform(rb->seed, shot_id, i);
    double vv = RB_MULADD(rb_ramp(rb->ramp, xi), RB_MULADD(r, hi - lo, lo) - v0, v0);
    v[li] = (float)(vv > vhi ? vhi : vv);
}

/* The uniform number in [0, 1) of cell I (rb_uniform, for callers outside C/CUDA
 * inline use). */
double random_boundary_uniform(uint64_t seed, uint64_t stream, uint64_t i);

/* The largest velocity for which leapfrog with DT and the ORDER stencil on spacings D
 * is stable: 2 / (dt sqrt(S sum_a 1/d_a^2)), S = fd_second_abs_sum(order). */
double random_boundary_vstable(int order, double dt, const double d[3]);
/* The same for a 3D grid or, with TWO_D, a 2D one (no y term). */
double random_boundary_vstable_dims(int order, double dt, const double d[3], bool two_d);

/* 2 FMAX max(d). */
double random_boundary_vnyquist(double fmax, const double d[3]);

/* Ramp a(xi). */
double random_boundary_ramp(int ramp, double xi);

/* 0, or -EINVAL with a message when RB or the sizes are not usable (a width under 1,
 * a non-positive velocity bound, NPAD != N + both layers on some axis). */
int random_boundary_check(const struct random_boundary *rb, const int npad[3], const int n[3], const int pml[6]);

/* Randomize the absorbing layers of a padded velocity V (m/s, NPAD[0] x NPAD[1] x
 * NPAD[2], x fastest) whose interior starts at PML_LO and has N cells per axis
 * (layer widths PML[6] = xmin xmax ymin ymax zmin zmax).  Interior cells are left as
 * they are.  Faces with a zero-width layer (free surface) are not randomized.
 * SHOT_ID varies the pattern between shots.  Returns 0 or -EINVAL. */
int random_boundary_apply(const struct random_boundary *rb, const int npad[3], const int n[3],
                          const int pml[6], uint64_t shot_id, float *v);

/* The same for a grid that is one part of the whole grid G (a subdomain): V is this
 * grid's padded velocity (NPAD, interior N, layers PML), and its layers get the values
 * the whole grid's layers have at the same cells.  With G the grid's own frame this is
 * random_boundary_apply.  Returns 0 or -EINVAL (also when G does not contain the grid). */
int random_boundary_apply_in(const struct random_boundary *rb, const struct rb_frame *g, const int npad[3],
                             const int n[3], const int pml[6], uint64_t shot_id, float *v);

/* The same on a CUDA device: V is device memory and the work is queued on STREAM (a
 * cudaStream_t); the caller synchronises (wave_randomize_layers does, once, after the
 * velocity is back in the simulation).  Same checks and errors. */
int random_boundary_apply_cuda(const struct random_boundary *rb, const struct rb_frame *g, const int npad[3],
                               const int n[3], const int pml[6], uint64_t shot_id, float *v, void *stream);

/* The checks of random_boundary_apply_in (both grids, G containing this one), shared by
 * the CPU loop and the CUDA twin. */
int random_boundary_check_in(const struct random_boundary *rb, const struct rb_frame *g, const int npad[3],
                             const int n[3], const int pml[6]);

#ifdef __cplusplus
}
#endif

#endif
