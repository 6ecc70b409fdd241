/* implicit — the implicit (recursive) operator inside the acoustic propagator: its state
 * in a simulation and the steps that apply it (CPU reference implicit_step.c, CUDA
 * implicit_cuda.cu + implicit_kernels.cu).  Not for users: kernels/wave.h with
 * wave_params.op = PROP_OP_IMPLICIT.  The operator and its design: implicit_op.h.
 *
 * The step.  lap p = sum over the axes of g_a, g_a the solution of the tridiagonal
 * system of every line along axis a (implicit_op.h), the rest is wave.c's leapfrog.
 *
 * Line ends (closures):
 *   - the padded grid's edges (CPML or random layers, a rigid wall): the field beyond is
 *     the halo of zeros the explicit step reads, and g beyond the line is 0 (the
 *     "zero closure": the system simply ends);
 *   - the free surface: the z lines start ON the surface, where g = 0 exactly (the field
 *     is odd about the surface, so is its second derivative); the rows below it are
 *     solved with g(surface) = 0 moved to the right-hand side, and f above the surface is
 *     read as -f of its mirror point below (computed, not read from the halo);
 *   - the 2D y axis (NONE): no y lines at all;
 *   - HALO faces (subdomains): refused — a line-global operator cannot be cut into
 *     pieces that exchange order/2 planes.
 * CPML: in a layer of axis a the second derivative is g_a (implicit) and the memory
 * terms keep EXPLICIT first derivatives (psi, d psi / dx of wave.c's CPML, same order):
 * the layer stretches the operator, it does not have to be the minimal-dispersion one.
 *
 * Boundary strategy (exact reconstruction).  The reverse step rebuilds the inner part of
 * the interior (interior points >= K from each face that has a strip) from p(n), p(n+1)
 * and the saved strip; with a line-global operator its g depends on the whole line,
 * absorbing layers included, which a reverse step cannot rebuild.  But a tridiagonal
 * system whose solution is known at two points A < B of a line is, between them, the
 * system of rows A+1..B-1 with b g[A] and b g[B] moved to the right-hand side — the same
 * g there.  So the strip also carries g_a of the saved field at the two interface points
 * A = K - 1 and B = n - K of every line through the inner box (interior coordinates):
 * wave_strip_save computes them (an extra line solve of the lines through the inner box,
 * the forward sweep's extra cost), wave_strip_load hands them to the next reverse step,
 * which solves only rows K..n-K-1, reading f at 0..n-1: all rebuilt or loaded.  The
 * strip width (K = order / 2 cells) does not change; the strip grows by 2 planes per
 * axis (implicit_ifc_count). */
#ifndef SEISLIVE_IMPLICIT_H
#define SEISLIVE_IMPLICIT_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/implicit_op.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wave_sim;

struct implicit_tap {
    int js;                          /* slab index (-1: not in a layer of the axis) */
    float cu[IMPLICIT_K_MAX + 1], cd[IMPLICIT_K_MAX + 1];
    int ou[IMPLICIT_K_MAX + 1], od[IMPLICIT_K_MAX + 1]; /* in slab elements along the axis */
};

struct implicit_state {
    struct implicit_coeffs co;
    int K;
    float c[3][IMPLICIT_K_MAX + 1]; /* ck / h_a^2 per axis */
    float b;
    int nmax;                       /* longest line (padded) */
    float *cp, *inv;                /* Thomas factors (host), nmax each */
    float *lap;                     /* scratch Laplacian, allocated layout (host, or device) */
    /* boundary strategy: g at the interfaces of the lines through the inner box */
    int lo[3], hi[3];               /* inner box, interior coordinates (y of 2D: 0, 1) */
    size_t ifc_n[3];                /* floats per axis: 2 per line */
    size_t ifc_count;
    float *ifc;                     /* host, or device for CUDA */
    bool ifc_valid;                 /* loaded since the last step: the next reverse step uses it */
    /* CPU CPML: per axis and position along it, the taps of d psi / dx (wave.c's) */
    struct implicit_tap *taps[3];
    /* CUDA */
    float *d_cp, *d_inv;
    float *d_scratch;               /* the x sweeps' transposed intermediate etc. */
    int smem_optin;                 /* CUDA: the device's opt-in shared memory per block (bytes) */
    int xy_ok;                      /* CUDA: the x-y cluster kernel runs here (1), not (-1), unknown (0) */
    int xy_clusters;                /* CUDA: how many of its clusters run at once */
    void *xy_stream;                /* CUDA: a stream of the highest priority for the x-y kernel (xyco) */
};

/* Whether the x-y kernel of tuning xyct (kernels/implicit_xyc.cu, k_sweep_xyct) can
 * address a field of COUNT elements and x stride STRIDE_Y: it computes every element's
 * index in 32 bits (a plane's k offset times the z stride plus a per-thread offset, then
 * one widening multiply-add onto the field's pointer, not 64-bit arithmetic a row), so
 * the indices must stay below 2^31 (COUNT <= 2^31), and it takes the x stride as the
 * compile-time STRIDE_WANT (its rows' addresses as immediate offsets).  Where not, the
 * caller runs xycs's kernel (64-bit indices, runtime stride). */
#define IMPLICIT_XYCT_MAX_COUNT ((size_t)1 << 31)
/* The x stride it is built for at half-width K: x lines of 512 rows, K halo columns each
 * side, rounded up to 32 floats (wave.c's wave_layout_of, ALIGN_X) */
#define IMPLICIT_XYCT_STRIDE(K) ((512 + 2 * (K) + 31) / 32 * 32)
static inline bool implicit_xyct_fits(size_t count, size_t stride_y, size_t stride_want)
{
    return count > 0 && count <= IMPLICIT_XYCT_MAX_COUNT && stride_y == stride_want;
}

/* Set up S's implicit state after wave_shell_init (S->p.op == PROP_OP_IMPLICIT): design,
 * factors, scratch (host here; wave_cu_alloc's twin implicit_cu_alloc on a GPU). */
int implicit_init(struct wave_sim *s);
void implicit_free(struct wave_sim *s);
/* Refusals specific to the implicit operator (wave_params_check). */
struct wave_params;
int implicit_params_check(const struct wave_params *p);

/* CPU step (wave.c's step_cpu for op = implicit): same meaning of CPML and INTERIOR. */
int implicit_step_cpu(struct wave_sim *s, bool cpml, bool interior);
/* g of cur at the interfaces into BUF (implicit_state.ifc_count floats, host). */
int implicit_ifc_compute_cpu(struct wave_sim *s, float *buf);

#ifdef SEISLIVE_CUDA
int implicit_cu_alloc(struct wave_sim *s);
void implicit_cu_free(struct wave_sim *s);
int implicit_cu_step(struct wave_sim *s, bool cpml, bool interior);
/* Save: g of cur at the interfaces into BUF; load: BUF's values for the next reverse
 * step (BUF device memory with ON_DEVICE, else host). */
int implicit_cu_ifc_io(struct wave_sim *s, float *buf, bool on_device, bool save);
/* seislive-bench: the psi pass (CPML on), the x, y, z sweeps and (tuning xyfused) the
 * x-y kernel each alone, REPS times; the mean ms of each into MS[5] (0 for a part that
 * does not run). */
int implicit_cu_sweep_times(struct wave_sim *s, int reps, double ms[5]);
#endif

#ifdef __cplusplus
}
#endif

#endif
