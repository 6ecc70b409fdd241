/* implicit_cuda — what the CUDA files of the implicit operator share (C++ / nvcc only):
 * the kernels' arguments and the launchers of implicit_kernels.cu, which
 * implicit_cuda.cu (allocation, the step, the boundary strategy's interface values)
 * calls.  The arithmetic is the CPU reference's (kernels/implicit_step.c). */
#ifndef SEISLIVE_IMPLICIT_CUDA_H
#define SEISLIVE_IMPLICIT_CUDA_H

#include "kernels/implicit.h"
#include "kernels/wave_cuda.h"

struct IArgs {
    const float *__restrict__ p;    /* the field (cur) */
    float *__restrict__ lap;        /* the Laplacian summed over the axes before z */
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
    const float *ifc_in;            /* device: interface values (ifc) */
    float *ifc_out;                 /* device: g at the interfaces goes here (no field written) */
    long long ifc_off[3];           /* offset of axis a's planes in ifc_in / ifc_out */
    long long ifc_half[3];          /* lines of axis a (the B plane follows the A plane) */
    PArgs m;                        /* CPML memory and profiles */
    float c1[3][MAXR + 1];          /* first-derivative weights (CPML) */
};

/* The rows [r0, r1) of axis A's lines (padded), as implicit_step.c's line_rows. */
void implicit_cu_rows(const wave_sim *s, int a, bool ifc, int *r0, int *r1);

/* The x sweep (lines in shared memory), the y and z sweeps (marching columns; z also
 * updates q when IArgs.ifc_out is NULL).  0 or a negative errno. */
int implicit_cu_sweep_x(const wave_sim *s, const IArgs &A, cudaStream_t st);
int implicit_cu_sweep_y(const wave_sim *s, const IArgs &A, cudaStream_t st);
int implicit_cu_sweep_z(const wave_sim *s, const IArgs &A, cudaStream_t st);

#endif
