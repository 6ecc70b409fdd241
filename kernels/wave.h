/* wave — the 3D (and 2D) acoustic finite-difference propagator (THE propagator API).
 *
 * Equation: constant density acoustic, p_tt = v^2 lap(p) + f, second order in time
 * (leapfrog), even order 2..16 in space (coefficients from kernels/fd_coeffs.h; op =
 * PROP_OP_IMPLICIT: the implicit operator of half-width order/2, kernels/implicit.h),
 * separate dx, dy, dz.  Absorbing boundary: CPML for the second-order equation
 * (Pasalic & McGarry 2010, kernels/cpml.h) in layers added OUTSIDE the interior grid;
 * optional free surface (p = 0) on the top interior plane z = o[2].  What lies beyond
 * each face is set per face (wave_params.face, enum wave_face).
 *
 * 2D: n = [nx, 1, nz] with both y faces WAVE_FACE_NONE runs the 2D equation
 *     p_tt = v^2 (p_xx + p_zz) + v^2 f
 * (no y term at all, no y layers, no y halo).  It is the 3D equation for a model and a
 * source that do not vary along y: a point of the 2D grid is a LINE source along y.
 * WAVE_INJECT_PHYSICAL scales a 2D source per unit area (dx dz) instead of per unit
 * volume, so a source s(t) gives the 2D Green's function convolved with s:
 *     p(r, t) = (G * s)(t),  G(r, t) = H(t - r/v) / (2 pi sqrt(t^2 - r^2 / v^2))
 * (per unit length of the line; no 1/r decay: ~ 1/sqrt(r) far away, with a tail).
 * Points of a 2D simulation ignore their y coordinate (the model is invariant along y).
 *
 * Subdomains: a grid may be one piece of a whole grid (wave_params.origin, global_n);
 * faces shared with a neighbour are WAVE_FACE_HALO, and the neighbour's planes are
 * copied into the halo with wave_halo_pack / wave_halo_unpack before each step.  CPML
 * profiles and the random boundary are computed in the whole grid's coordinates, so the
 * subdomains stepped side by side give bit for bit the whole grid's result.
 *
 * One simulation lives on one device (CPU: host memory, OpenMP; CUDA: device memory).
 * All float arrays are x fastest, then y, then z (depth slices).
 *
 * Grids (per axis a):
 *   interior:  n[a] points, point i at o[a] + i d[a] (the model grid);
 *   padded:    npad[a] = n[a] + pml_lo[a] + pml_hi[a] (interior + absorbing layers);
 *              this is the grid the update runs on and whose velocity can be replaced;
 *   allocated: the padded grid plus a halo of `halo` = order/2 cells on every side
 *              (none along a NONE axis; zero Dirichlet outside, the free-surface mirror
 *              on top, the neighbour's planes beyond a HALO face), x rows padded for
 *              alignment.  Element (ix, iy, iz) of the INTERIOR grid is at
 *              (iz + off[2]) * stride_z + (iy + off[1]) * stride_y + (ix + off[0]).
 *
 * Time levels: the simulation holds `cur` (p at step n) and `prev` (p at step n-1).
 * wave_step() writes p(n+1) over prev and swaps, so afterwards cur = p(n+1).
 * Discrete scheme (Green's function convention, see wave_inject):
 *   p(n+1) = 2 p(n) - p(n-1) + dt^2 v^2 lap p(n) + dt^2 f(n)
 * i.e. a source sample f(n) belongs to time n dt and first shows in p(n+1).
 * Typical loop:   for it in 0..nt-1: wave_step; wave_inject(src, s[it]); wave_sample(rec, tr[it+1])
 *
 * Errors: functions return 0 or a negative errno with err_msg() set (stream/error.h).
 * Threading: a simulation is used from one thread at a time.  CUDA work is queued on
 * the simulation's stream (wave_set_stream); functions that return data to host
 * memory synchronise that stream, the others do not. */
#ifndef SEISLIVE_WAVE_H
#define SEISLIVE_WAVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WAVE_ORDER_MAX 16

/* Same values as enum kernel_variant of conf/config.h ([propagator] kernel). */
enum wave_kernel {
    WAVE_KERNEL_AUTO = 0,   /* tiled on CUDA */
    WAVE_KERNEL_NAIVE = 1,  /* one thread per point, all neighbours from global memory */
    WAVE_KERNEL_TILED = 2,  /* 2.5D: x-y tile in shared memory, register queue along z */
};

/* Interpolation of points that are not on grid nodes (wave_points_create). */
enum wave_interp {
    WAVE_INTERP_SINC = 0,      /* Kaiser-windowed sinc, 8 nodes per axis (Hicks 2002,
                                  half-width 4, b = 6.31): accurate to ~2/3 of Nyquist */
    WAVE_INTERP_TRILINEAR = 1, /* 2 nodes per axis */
    WAVE_INTERP_NEAREST = 2,   /* the nearest node */
};

/* Flags of wave_inject / wave_sample. */
enum {
    WAVE_BUF_DEVICE = 1 << 0,  /* amps / out is device memory (CUDA simulations only) */
    WAVE_INJECT_PHYSICAL = 1 << 1, /* scale by v^2 dt^2 / (dx dy dz) at each node, so a
                                  source s(t) gives p = s(t - r/v) / (4 pi r) in a
                                  homogeneous medium (2D: v^2 dt^2 / (dx dz), a line
                                  source, see above); without it amplitudes are added
                                  to p as they are (times weights and SCALE) */
};

/* What lies beyond a face of the grid (wave_params.face; faces xmin xmax ymin ymax zmin
 * zmax, face f is on axis f / 2).  WAVE_FACE_AUTO keeps the old meaning of pml[] and
 * free_surface: CPML layers of pml[f] cells (a rigid wall when 0), the free surface on
 * zmin when free_surface.  wave_params_check says which combinations are refused. */
enum wave_face {
    WAVE_FACE_AUTO = 0,
    WAVE_FACE_CPML = 1,   /* pml[f] cells of CPML (0: rigid p = 0 wall) */
    WAVE_FACE_FREE = 2,   /* free surface p = 0 on the first interior plane (zmin only;
                             pml[4] = 0; implies free_surface) */
    WAVE_FACE_RANDOM = 3, /* pml[f] cells of undamped layers for Clapp's random boundary:
                             the simulation starts with the CPML off (wave_set_cpml) and
                             the layers repeating the edge velocity until
                             wave_randomize_layers; no CPML face with layers may be
                             beside it (the damping is one switch for all layers) */
    WAVE_FACE_NONE = 4,   /* nothing: the y axis of a 2D model (n[1] = 1, both y faces
                             NONE, pml 0): no y derivative, no y layers, no y halo */
    WAVE_FACE_HALO = 5,   /* a neighbour subdomain: no layers here; the halo beyond the
                             face holds the neighbour's planes (wave_halo_unpack), never
                             a wall.  pml[f] is the WHOLE grid's layer width on that side
                             (held by another subdomain), which places this subdomain in
                             the whole grid's padded frame (random boundary); needs
                             global_n, and n[a] >= order/2 on that axis */
};

/* Kernel choices, read once at create (never from the environment at launch).  Zero
 * fields are the production defaults (measured on the H100, docs/PERFORMANCE.md);
 * docs/TUNING.md lists them and seislive-bench stencil sets them from flags. */
struct wave_tuning {
    int tile;               /* tiled kernel x-y tile: 0 default, else enum wave_tile (kernels/wave_tuning.h) */
    int pipe;               /* tiled kernel queue: 0 default (ring), 1 ring, 2 registers */
    int prefetch;           /* planes in flight: 0 default, 1..3 */
    int cpml;               /* CPML arrangement: 0 default (ring where it runs, else lines), 1 split, 2 fused, 3 lines, 4 ring */
    int cpml_overlap;       /* 0 default (CPML on a second stream), 1 on, -1 off */
    int naive_block[2];     /* naive kernel thread block W x H; 0 = default */
    int layer_zchunk;       /* z planes per CPML layer block; 0 = default (48) */
    int implicit_x;         /* implicit operator's x sweep: 0 default, else enum wave_implicit_x */
    int implicit_yz;        /* implicit operator's y, z sweeps: 0 default, else enum wave_implicit_yz */
    int ring_waves;         /* tiled ring interior kernel: z chunks for about this many waves of
                               resident blocks; 0 = default (6) */
};

struct wave_params {
    int n[3];               /* interior points nx, ny, nz (>= 1 each) */
    double d[3];            /* spacing dx, dy, dz, m */
    double o[3];            /* coordinates of interior point (0,0,0), m */
    int order;              /* even, 2..16 */
    double dt;              /* s (the caller checks stability: kernels/stability.h) */
    int pml[6];             /* absorbing cells: xmin xmax ymin ymax zmin zmax (>= 0);
                               on a HALO face the whole grid's width there (see above) */
    double pml_reflection;  /* theoretical normal-incidence reflection, e.g. 1e-4 */
    double f_ref;           /* Hz: reference (dominant) frequency for the CPML alpha */
    bool free_surface;      /* p = 0 on the plane z = o[2]; pml[4] must be 0 then */
    int kernel;             /* enum wave_kernel (ignored on the CPU) */
    int op;                 /* enum prop_op_kind (kernels/propagator.h): 0 taylor */
    double op_band;         /* design band of op, fraction of Nyquist; 0 = op's default */
    int face[6];            /* enum wave_face; all WAVE_FACE_AUTO by default (see above) */
    double vmax_cpml;       /* m/s for the CPML damping; 0: max of the velocity given.  A
                               subdomain passes the whole model's maximum, so that its
                               layers damp exactly as the whole grid's do */
    int origin[3];          /* a subdomain: index of its interior (0,0,0) in the whole grid */
    int global_n[3];        /* the whole interior grid (all 0: this grid is whole).  A face
                               that is not HALO must lie on the whole grid's boundary */
    struct wave_tuning tuning; /* CUDA kernel choices (ignored on the CPU) */
    int cpml_memory;        /* enum wave_cpml_memory: how psi and zeta are stored (CPU and
                               CUDA alike, so the CPU stays the reference) */
    int pml_degree;         /* polynomial degree of the CPML damping (kernels/cpml.h), 1..6;
                               0 = 2, the reference profile */
};

/* Storage of the CPML memory variables psi and zeta (wave_params.cpml_memory).  The
 * arithmetic is fp32 either way; BF16 rounds each stored value to bfloat16 (round to
 * nearest even: 8 significant bits, fp32's exponent range, so no scaling of the field's
 * units is needed), which halves the bytes the layers add to a step.  The buffers keep
 * their fp32 size (a saved state has the same layout; the upper half is unused). */
enum wave_cpml_memory {
    WAVE_CPML_MEM_FP32 = 0, /* the reference */
    WAVE_CPML_MEM_BF16 = 1, /* explicit operators (taylor, optimized) only */
};

/* Where things are in the arrays of a simulation (all counts in elements). */
struct wave_layout {
    int n[3];               /* interior */
    int pml[6];             /* layers this grid holds: as given, 0 on FREE, NONE, HALO faces */
    int npad[3];            /* padded = interior + absorbing layers */
    int halo;               /* order / 2 */
    int dim[3];             /* allocated dims; dim[0] >= npad[0] + 2 halo (aligned);
                               dim[1] = 1 in 2D (no y halo) */
    int off[3];             /* index of interior (0,0,0) in the allocated array */
    int pad_off[3];         /* index of padded (0,0,0) = halo (0 along a NONE axis) */
    size_t stride_y, stride_z;
    size_t count;           /* elements of one allocated field array */
};

struct wave_sim;
struct wave_points;

/* ---- planning (no allocation) -------------------------------------------------------- */

/* Check P (order, dims, widths, dt > 0, free surface vs pml[4], the face kinds and the
 * subdomain); 0 or -EINVAL with the reason. */
int wave_params_check(const struct wave_params *p);

/* The layout a simulation of P would have. */
int wave_layout_of(const struct wave_params *p, struct wave_layout *out);

/* Bytes of device memory (CUDA) or host memory (CPU) a simulation of P allocates:
 * two wavefields, the v^2 dt^2 array (op = implicit: two scratch fields more, one on the
 * CPU), CPML memory (with CUDA's second psi buffer; the CPU has none, so there this is an
 * upper bound) and profiles.  Lets RTM plan its
 * strategy without allocating.  Does not include point sets or caller buffers. */
size_t wave_memory_bytes(const struct wave_params *p);

/* Bytes of one saved state (wave_state_bytes) of a simulation of P: both time levels
 * and the CPML memory psi and zeta.  For RTM's checkpoint plan. */
size_t wave_state_bytes_of(const struct wave_params *p);

/* ---- life cycle ----------------------------------------------------------------------- */

/* Create a simulation on DEV (CPU or CUDA; DEV must outlive it) for P, with the
 * velocity V (m/s, host memory, the interior grid n[0] x n[1] x n[2], x fastest)
 * extended into the absorbing layers by repeating the edge values.  The CPML damping
 * uses P's vmax_cpml, or max(V) when it is 0.  Fields start at zero; with RANDOM faces
 * the CPML starts off.  *OUT is owned by the caller: wave_destroy. */
int wave_create(const struct sl_device *dev, const struct wave_params *p, const float *v,
                struct wave_sim **out);
/* A simulation with the parameters, device and current velocity of LIKE (copied on the
 * device: no host work), fields zero.  For RTM, whose source and receiver simulations
 * share one model.  Stream: the default one, as after wave_create. */
int wave_create_like(const struct wave_sim *like, struct wave_sim **out);
void wave_destroy(struct wave_sim *s);

/* The parameters (faces resolved: no WAVE_FACE_AUTO, free_surface set exactly when
 * face[4] is FREE), layout and device of S. */
const struct wave_params *wave_params_of(const struct wave_sim *s);
const struct wave_layout *wave_layout(const struct wave_sim *s);
const struct sl_device *wave_device(const struct wave_sim *s);

/* CUDA: queue all work of S on STREAM (a cudaStream_t; NULL = the default stream).
 * No-op on the CPU. */
void wave_set_stream(struct wave_sim *s, void *stream);
/* Wait until all work queued for S is done (CUDA); no-op on the CPU. */
int wave_sync(struct wave_sim *s);

/* Zero both time levels and the CPML memory; step counter back to 0. */
int wave_reset(struct wave_sim *s);

/* ---- velocity and boundary ------------------------------------------------------------ */

/* Replace the velocity (m/s) of the interior grid (host, n[0] x n[1] x n[2]), extended
 * into the absorbing layers by repeating edge values.  CPML profiles are not changed. */
int wave_set_velocity(struct wave_sim *s, const float *v);

/* Replace the velocity (m/s) of the whole PADDED grid, absorbing layers included
 * (npad[0] x npad[1] x npad[2], x fastest).  V is host memory, or device memory when
 * ON_DEVICE (CUDA).  For RTM's random boundary (Clapp 2009): upload randomized
 * velocities in the layers and switch the CPML off with wave_set_cpml(s, false). */
int wave_set_velocity_padded(struct wave_sim *s, const float *v, bool on_device);

/* Read back the padded velocity (m/s) into host memory (npad product floats). */
int wave_get_velocity_padded(struct wave_sim *s, float *v);

/* Replace the velocity of the absorbing layers with Clapp's random boundary
 * (kernels/random_boundary.h: RB's pattern for SHOT_ID, from the edge velocities the
 * layers hold), where the simulation lives: no copy of the model through host memory
 * on a GPU.  Interior cells are not changed.  Pair with wave_set_cpml(s, false). */
struct random_boundary;
int wave_randomize_layers(struct wave_sim *s, const struct random_boundary *rb, uint64_t shot_id);

/* CPML damping on (default) or off.  Off: the absorbing layers are plain medium with a
 * rigid (p = 0) outer wall, the update is exactly time-reversible, and the CPML memory
 * is neither read nor written. */
void wave_set_cpml(struct wave_sim *s, bool enabled);
bool wave_cpml_enabled(const struct wave_sim *s);

/* ---- stepping ------------------------------------------------------------------------- */

/* One time step n -> n+1 over the padded grid: interior update and CPML update fused or
 * ordered so that the CPML work runs only in the absorbing layers (no extra full-volume
 * pass; CUDA arrangements: kernels/wave.cu), the free-surface mirror, then the time
 * levels swap (cur = p(n+1), prev = p(n)). */
int wave_step(struct wave_sim *s);

/* One reverse step: from cur = p(n), prev = p(n+1) compute
 *   p(n-1) = 2 p(n) - p(n+1) + dt^2 v^2 lap p(n)
 * over the padded grid WITHOUT CPML terms (whatever wave_set_cpml says), then swap
 * (cur = p(n-1), prev = p(n)).  Inside the interior this inverts wave_step exactly
 * except within `halo` cells of the absorbing layers: restore that strip with
 * wave_strip_load (boundary strategy), or run with the CPML off (random boundary).
 * Sources: since p(n-1) = 2 p(n) - p(n+1) + dt^2 v^2 lap p(n) + dt^2 f(n), after the
 * reverse step from p(n) inject f(n) exactly as in the forward run (same sign/flags).
 * Call wave_swap once before the first reverse step after a forward run. */
int wave_step_reverse(struct wave_sim *s);

/* Reverse steps over the interior only (off by default): the absorbing layers are left
 * as they are.  For the boundary strategy, where the layers hold nothing a reverse step
 * could rebuild and wave_strip_load restores the interior cells next to them after every
 * step (the only cells whose stencil reaches into a layer): the result in the interior
 * is the same, and each reverse step skips the layers' share of the grid. */
void wave_set_reverse_interior(struct wave_sim *s, bool on);

/* Exchange cur and prev (turns a forward state (p(N), p(N-1)) into the reverse start
 * (cur = p(N-1), prev = p(N))). */
void wave_swap(struct wave_sim *s);

/* Steps done since create/reset (forward +1, reverse -1). */
int64_t wave_step_index(const struct wave_sim *s);

/* ---- sources and receivers ------------------------------------------------------------ */

/* Prepare N points at coordinates XYZ (m, N x 3, host) for injection and sampling with
 * the interpolation INTERP; weights are precomputed (separable per axis, on the device
 * for CUDA).  A point whose interpolation support leaves the padded grid, or that lies
 * outside the interior grid, is refused with its index and coordinates in err_msg().
 * Near a free surface, support nodes above the surface are folded onto their mirror
 * nodes with the opposite sign (the field is odd about the surface), so shallow points
 * stay accurate; a point exactly on the surface samples 0.  In 2D the y coordinate is not
 * used: the support along y is the one y node, weight 1.
 * *OUT belongs to the caller (wave_points_destroy) and is tied to S's device and grid. */
int wave_points_create(struct wave_sim *s, const double *xyz, size_t n, int interp,
                       struct wave_points **out);
void wave_points_destroy(struct wave_points *pts);
size_t wave_points_count(const struct wave_points *pts);

/* Add amplitude AMPS[i * STRIDE] * SCALE of each point i into cur (all points at once;
 * overlapping supports add up).  With WAVE_INJECT_PHYSICAL the amplitude is a source
 * term f (the value at node k gets f w_k v_k^2 dt^2 / (dx dy dz); 2D: / (dx dz)).  AMPS is host memory,
 * or device memory with WAVE_BUF_DEVICE (CUDA only; then no synchronisation). */
int wave_inject(struct wave_sim *s, const struct wave_points *pts, const float *amps,
                size_t stride, float scale, unsigned flags);

/* Sample cur at every point: OUT[i * STRIDE] = sum_k w_k p_k.  OUT is host memory
 * (synchronises) or device memory with WAVE_BUF_DEVICE. */
int wave_sample(struct wave_sim *s, const struct wave_points *pts, float *out,
                size_t stride, unsigned flags);

/* ---- direct field access -------------------------------------------------------------- */

/* The arrays of the allocated grid (layout: wave_layout); device pointers for CUDA,
 * host pointers on the CPU.  Valid until the next wave_step/wave_step_reverse/wave_swap
 * (which exchange them) or wave_destroy.  VEL holds v^2 dt^2 (not v). */
float *wave_cur(struct wave_sim *s);
float *wave_prev(struct wave_sim *s);
const float *wave_vel2dt2(const struct wave_sim *s);

/* Copy the INTERIOR part of cur (or prev when PREV) to host memory (n product floats,
 * x fastest) / from host memory into it (the absorbing layers are left alone). */
int wave_copy_out(struct wave_sim *s, bool prev, float *host);
int wave_copy_in(struct wave_sim *s, bool prev, const float *host);

/* ---- time reversal: the boundary strip ------------------------------------------------ */

/* Number of floats in the strip: the interior cells within `halo` cells of any of the
 * interior faces (the cells a reverse step cannot rebuild).  NONE and HALO faces have no
 * strip: there is nothing beyond a NONE face, and the neighbour's halo rebuilds the cells
 * next to a HALO face. */
size_t wave_strip_count(const struct wave_sim *s);

/* Save the strip of cur into BUF (host, or device with ON_DEVICE) / write BUF into the
 * strip of cur.  Boundary strategy: after each forward wave_step save the strip of
 * p(n+1); after each reverse step to p(n-1) load the strip saved for p(n-1). */
int wave_strip_save(struct wave_sim *s, float *buf, bool on_device);
int wave_strip_load(struct wave_sim *s, const float *buf, bool on_device);

/* ---- checkpoints of the full state ---------------------------------------------------- */

/* Bytes of a full state: both time levels (allocated grid), CPML memory, step index. */
size_t wave_state_bytes(const struct wave_sim *s);
/* Save / restore the full state into / from BUF of wave_state_bytes() bytes (host, or
 * device memory with ON_DEVICE on a CUDA simulation).  Restoring reproduces the run
 * bit for bit. */
int wave_state_save(struct wave_sim *s, void *buf, bool on_device);
int wave_state_load(struct wave_sim *s, const void *buf, bool on_device);

/* ---- subdomains: the halo of a HALO face ---------------------------------------------- */

/* Floats that cross FACE (0..5 = xmin xmax ymin ymax zmin zmax) each exchange: `halo`
 * planes of the padded extent of the other two axes (npad[b] x npad[c], layers
 * included); 0 when FACE is not a HALO face. */
size_t wave_halo_count(const struct wave_sim *s, int face);

/* Pack the `halo` padded planes of cur next to FACE (the planes the neighbour beyond FACE
 * reads) into BUF (host memory, wave_halo_count floats, x fastest then y then z over the
 * box) / unpack BUF into the halo cells beyond FACE of cur.  Subdomains A and B sharing
 * a cut (A's face f, B's face f ^ 1): after each step (and injection), pack A's f into
 * B's f ^ 1 and B's f ^ 1 into A's f; then step both.  -EINVAL when FACE is not HALO.
 * CUDA: strided copies through kernels/device.h; they synchronise the simulation. */
int wave_halo_pack(struct wave_sim *s, int face, float *buf);
int wave_halo_unpack(struct wave_sim *s, int face, const float *buf);
/* The same without synchronising: BUF is device memory on CUDA (host memory on the CPU,
 * where these are the calls above), and the copy is queued on STREAM (a cudaStream_t,
 * NULL the default stream), which the caller orders after the step that wrote the
 * planes (an event) and before the step that reads the halo.  For an exchange that
 * runs beside the next part of a step (wave_step_part). */
int wave_halo_pack_async(struct wave_sim *s, int face, float *buf, void *stream);
int wave_halo_unpack_async(struct wave_sim *s, int face, const float *buf, void *stream);

/* ---- a step in two parts: the cut slabs first, then the rest ---------------------------- *
 * So that the planes the neighbours need are ready early and their exchange runs while
 * the rest of the grid is computed:
 *   wave_step_part(s, WAVE_PART_CUT);   the `halo` padded planes next to every HALO face
 *                                       (what wave_halo_pack sends); afterwards cur holds
 *                                       them at the new level (pack them, inject into them)
 *                                       while its other cells are not computed yet;
 *   wave_step_part(s, WAVE_PART_REST);  every other cell, the free-surface mirror; then
 *                                       S is where wave_step leaves it, bit for bit on the
 *                                       CPU (each cell computed by the same code).
 * CUDA: both parts run the split CPML arrangement (k_psi, then k_pml over the layer cells
 * of each part), so they equal a wave_step with tuning.cpml = split bit for bit, and the
 * default (lines) to float rounding in the layers.  Between the parts no other step,
 * sampling or copy of cur sees a whole level.  A grid without HALO faces computes
 * nothing in the first part.  WAVE_PART_ALL is wave_step.  -ENOTSUP for the implicit
 * operator (its sweeps span the grid); -EINVAL for parts out of order. */
enum wave_part { WAVE_PART_ALL = 0, WAVE_PART_CUT = 1, WAVE_PART_REST = 2 };
/* Whether S steps in parts (wave_step_part answers other than -ENOTSUP). */
bool wave_has_step_part(const struct wave_sim *s);
int wave_step_part(struct wave_sim *s, int part);

/* ---- benchmarks ----------------------------------------------------------------------- */

/* A one-line description of the kernel variant a step of S runs now (CUDA: interior
 * kernel, block shape, prefetch, CPML arrangement; see kernels/wave.cu), into BUF. */
void wave_describe_kernel(const struct wave_sim *s, char *buf, size_t len);

/* Device-to-device copy bandwidth of DEV (CUDA): bytes read + written per second over
 * REPS copies of BYTES bytes, into *GBS (1e9 B/s).  -ENOTSUP on the CPU.  Used by
 * seislive-bench stencil for the memory roofline. */
int wave_copy_bandwidth(const struct sl_device *dev, size_t bytes, int reps, double *gbs);

#ifdef __cplusplus
}
#endif

#endif
