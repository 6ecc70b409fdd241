/* implicit_cuda — what the CUDA files of the implicit operator share (C++ / nvcc only):
 * the kernels' arguments, the device helpers every sweep uses, and the launchers of
 * implicit_kernels.cu (the first sweeps: thread, warp, march, chunks) and
 * implicit_scan.cu (the register-chunk sweeps linked by scans: x regs, y/z scan), which
 * implicit_cuda.cu (allocation, the step, the boundary strategy's interface values)
 * calls.  The arithmetic is the CPU reference's (kernels/implicit_step.c). */
#ifndef SEISLIVE_IMPLICIT_CUDA_H
#define SEISLIVE_IMPLICIT_CUDA_H

#include "kernels/cpml.h"
#include "kernels/implicit.h"
#include "kernels/wave_cuda.h"

struct IArgs {
    const float *__restrict__ p;    /* the field (cur) */
    float *__restrict__ lap;        /* the Laplacian summed over the axes before z */
    const float *lap2;              /* y/z overlap: the y sweep's own field, which z adds too (else NULL) */
    float *__restrict__ d;          /* y and z sweeps: the forward sweep's d (allocated layout) */
    float *__restrict__ q;          /* z sweep: p(n-1) in, p(n+1) out */
    const float *__restrict__ vel;
    const float *__restrict__ cp;   /* Thomas factors */
    const float *__restrict__ inv;
    long long sy, sz;
    int h, hy;                      /* allocated index of padded 0 along x/z and along y */
    float c[3][IMPLICIT_K_MAX + 1]; /* ck / h_a^2 */
    float b;
    int blo[3], bhi[3];             /* the box written (padded) */
    int lo[3], hi[3];               /* the inner box (interior) */
    int pml[6];                     /* layers (padded frame offsets) */
    int npad[3];
    bool cpml;                      /* add the CPML terms (layers of each axis) */
    bool ifc;                       /* lines closed by the interface values ifc_in */
    bool first;                     /* this axis writes lap (else adds) */
    bool mirror;                    /* free surface: z lines start on the surface */
    int x_blocks_per_sm;            /* x sweep's grid: blocks per SM (0: as many as fit; overlap: room for y) */
    const float *ifc_in;            /* device: interface values (ifc) */
    float *ifc_out;                 /* device: g at the interfaces goes here (no field written) */
    long long ifc_off[3];           /* offset of axis a's planes in ifc_in / ifc_out */
    long long ifc_half[3];          /* lines of axis a (the B plane follows the A plane) */
    PArgs m;                        /* CPML memory and profiles */
    float c1[3][MAXR + 1];          /* first-derivative weights (CPML) */
};

/* ---- device helpers of every sweep ------------------------------------------------------ */

__device__ __forceinline__ long long idx(const IArgs &A, int i, int j, int k)
{
    return (long long)(k + A.h) * A.sz + (long long)(j + A.hy) * A.sy + (i + A.h);
}

/* Axis AX's contribution at padded (i, j, k): g, plus the CPML terms in a layer of that
 * axis (explicit first derivatives of psi; zeta updated), as implicit_step.c's. */
template <int AX, int R>
__device__ __forceinline__ float cpml_term(const IArgs &A, int i, int j, int k, float g)
{
    const int x = AX == 0 ? i : AX == 1 ? j : k;
    const int np = A.m.npad[AX], wlo = A.m.pml[2 * AX], whi = A.m.pml[2 * AX + 1];
    const int js = cpml_slab_index(x, np, wlo, whi);
    if (js < 0)
        return g;
    const long long sst = AX == 0 ? 1 : AX == 1 ? (long long)A.m.npad[0] : (long long)A.m.npad[0] * A.m.npad[1];
    const long long e = slab_elem(A.m, AX, i, j, k, js);
    const float *psi = A.m.psi[AX];
    float dpsi = 0;
#pragma unroll
    for (int l = 1; l <= R; l++) {
        const int xu = x + l, xd = x - l;
        const bool oku = xu < np && (xu < wlo || xu >= np - whi);
        const bool okd = xd >= 0 && (xd < wlo || xd >= np - whi);
        const float cu = oku ? A.c1[AX][l] : 0.0f, cd = okd ? A.c1[AX][l] : 0.0f;
        const long long ou = oku ? (long long)(cpml_slab_index(xu, np, wlo, whi) - js) * sst : 0;
        const long long od = okd ? (long long)(js - cpml_slab_index(xd, np, wlo, whi)) * sst : 0;
        dpsi += cu * psi[e + ou] - cd * psi[e - od];
    }
    const float t = g + dpsi;
    const float z = A.m.pb[AX][x] * A.m.zeta[AX][e] + A.m.pa[AX][x] * t;
    A.m.zeta[AX][e] = z;
    return t + z;
}

/* Index of line (u, v) in the interface planes of axis AX (implicit_step.c's ifc_line). */
template <int AX>
__device__ __forceinline__ long long ifc_line(const IArgs &A, int i, int j, int k)
{
    if (AX == 0)
        return (long long)(k - A.pml[4] - A.lo[2]) * (A.hi[1] - A.lo[1]) + (j - A.pml[2] - A.lo[1]);
    const int v = AX == 1 ? k - A.pml[4] - A.lo[2] : j - A.pml[2] - A.lo[1];
    return (long long)v * (A.hi[0] - A.lo[0]) + (i - A.pml[0] - A.lo[0]);
}

/* ---- launchers --------------------------------------------------------------------------- */

/* The rows [r0, r1) of axis A's lines (padded), as implicit_step.c's line_rows. */
void implicit_cu_rows(const wave_sim *s, int a, bool ifc, int *r0, int *r1);

/* The x sweep (lines in shared memory), the y and z sweeps (marching columns; z also
 * updates q when IArgs.ifc_out is NULL).  0 or a negative errno. */
int implicit_cu_sweep_x(const wave_sim *s, const IArgs &A, cudaStream_t st);
int implicit_cu_sweep_y(const wave_sim *s, const IArgs &A, cudaStream_t st);
int implicit_cu_sweep_z(const wave_sim *s, const IArgs &A, cudaStream_t st);

/* implicit_scan.cu.  XR_MAX / YS_MAX: the longest line each holds (rows); the callers
 * fall back to the warp / march kernels beyond. */
#define IMPLICIT_XR_MAX 512
#define IMPLICIT_YS_MAX 512
int implicit_cu_sweep_x_regs(const wave_sim *s, const IArgs &A, cudaStream_t st, int r0, int r1, long long rows);
int implicit_cu_sweep_scan(const wave_sim *s, const IArgs &A, cudaStream_t st, int ax, int r0, int r1);

#endif
