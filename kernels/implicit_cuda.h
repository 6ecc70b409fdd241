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
    bool psi_beside;                /* host: the step's CPML psi pass still to run, beside the x-y kernel (xyco) */
    int x_blocks_per_sm;            /* x sweep's grid: blocks per SM (0: as many as fit; overlap: room for y) */
    const float *ifc_in;            /* device: interface values (ifc) */
    float *ifc_out;                 /* device: g at the interfaces goes here (no field written) */
    long long ifc_off[3];           /* offset of axis a's planes in ifc_in / ifc_out */
    long long ifc_half[3];          /* lines of axis a (the B plane follows the A plane) */
    /* xycf (implicit_xyc.cu): the Thomas recursions of x and y lines of the constant
     * factor cf_c (the factors' limit), corrected at the line's first rows */
    float cf_c, cf_p16;             /* the limit c, and c^16 (a whole chunk's map) */
    float cf_w[2][16];              /* x, y: the correction's weights w_u of rows u < 16 */
    float cf_rho[2];                /* x, y: w_{16+u} / w_u */
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

/* ---- the per-chunk maps of the register sweeps (implicit_scan.cu, implicit_xy.cu) ------
 * A line cut into chunks of CH rows, one a thread; each chunk's forward and backward
 * Thomas recursions as affine maps of their carry, linked by scans (implicit_scan.cu's
 * head comment). */

/* The chunk's Thomas factors (IV: inv, CP: cp of its rows u = 0..CH-1): register arrays
 * (x) or, through Sh, shared memory (y, z: fewer registers). */
struct Sh {
    const float *p;
    __device__ __forceinline__ float operator[](int u) const { return p[u]; }
};

/* Forward pass 1 over the rows u < N of a chunk: V[u] = r (the right-hand side from the
 * field window FW, FW[u + K] = f at row u: a register array, or a functor reading a
 * block's tile), and the map d -> L + P d.  FIRST / LAST: row u is the line's row 0 /
 * m - 1 (the closures GA, GB). */
template <int CH, int K, class FW, class IV>
__device__ __forceinline__ void chunk_forward_map(const FW &fw, const float *c, float b, int n,
                                                  int first_u, int last_u, float ga, float gb, const IV &iv,
                                                  float (&v)[CH], float &L, float &P)
{
    L = 0;
    P = 1;
#pragma unroll
    for (int u = 0; u < CH; u++) {
        float r = c[0] * fw[u + K];
#pragma unroll
        for (int l = 1; l <= K; l++)
            r += c[l] * (fw[u + K + l] + fw[u + K - l]);
        if (u == first_u)
            r -= b * ga;
        if (u == last_u)
            r -= b * gb;
        v[u] = r;
        if (u < n) {
            L = (r - b * L) * iv[u];
            P *= -b * iv[u];
        }
    }
}

template <int CH, class IV>
__device__ __forceinline__ void chunk_forward(float (&v)[CH], float b, int n, const IV &iv, float d)
{
#pragma unroll
    for (int u = 0; u < CH; u++)
        if (u < n) {
            d = (v[u] - b * d) * iv[u];
            v[u] = d;
        }
}

template <int CH, class CP>
__device__ __forceinline__ void chunk_backward_map(const float (&v)[CH], int n, const CP &cp, float &L, float &Q)
{
    L = 0;
    Q = 1;
#pragma unroll
    for (int u = CH - 1; u >= 0; u--)
        if (u < n) {
            L = v[u] - cp[u] * L;
            Q *= -cp[u];
        }
}

template <int CH, class CP>
__device__ __forceinline__ void chunk_backward(float (&v)[CH], int n, const CP &cp, float g)
{
#pragma unroll
    for (int u = CH - 1; u >= 0; u--)
        if (u < n) {
            g = v[u] - cp[u] * g;
            v[u] = g;
        }
}

/* The exclusive carries of 32 chunks, one a lane (lane l chunk l; identity maps (0, 1)
 * beyond the line).  UP: forward (the maps before, from lane 0); else backward (the maps
 * after, from lane 31).  The carry into the chunk. */
template <bool UP>
__device__ __forceinline__ float warp_carry(float L, float P, int lane)
{
    const unsigned FULL = 0xffffffffu;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const float Lo = UP ? __shfl_up_sync(FULL, L, o) : __shfl_down_sync(FULL, L, o);
        const float Po = UP ? __shfl_up_sync(FULL, P, o) : __shfl_down_sync(FULL, P, o);
        if (UP ? lane >= o : lane + o < 32) {
            L += P * Lo;
            P *= Po;
        }
    }
    const float c = UP ? __shfl_up_sync(FULL, L, 1) : __shfl_down_sync(FULL, L, 1);
    return (UP ? lane == 0 : lane == 31) ? 0.0f : c;
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
/* implicit_layers.cu (x warpl): the x CPML terms added to lap (holding the x sweep's g)
 * over the x layers of A's box; 0 without CPML. */
int implicit_cu_x_layers(const wave_sim *s, const IArgs &A, cudaStream_t st);
/* implicit_layers.cu (xyc): lap = the x and y CPML terms of gx (in lap) and gy (in d) over
 * the x and y layers of A's box; 0 without CPML. */
int implicit_cu_xy_layers(const wave_sim *s, const IArgs &A, cudaStream_t st);
/* implicit_tile.cu (tile, tile3): as implicit_cu_sweep_scan, lines of up to YS_MAX. */
int implicit_cu_sweep_tile(const wave_sim *s, const IArgs &A, cudaStream_t st, int ax, int r0, int r1);
/* implicit_xy.cu: lap = gx + gy over A's box in one kernel; -ENOTSUP (no message) where
 * it does not run (2D, interface values, lines over 512, no sm_90 cluster): the caller
 * runs the sequential sweeps. */
int implicit_cu_sweep_xy(const wave_sim *s, const IArgs &A, cudaStream_t st);
/* implicit_xyc.cu (tuning xyc): the same, by the persistent 1024-thread cluster kernel. */
int implicit_cu_sweep_xyc(const wave_sim *s, const IArgs &A, cudaStream_t st);

/* The launch of the x-y cluster kernels (implicit_xy.cu, implicit_xyc.cu): clusters of NCL
 * blocks of THREADS along x, a cluster a plane (grid NCL x NZ), SHMEM bytes a block, on ST;
 * ATTR (one element, the cluster size) must live as long as CFG.  Once per simulation
 * (imp->xy_ok, imp->xy_clusters) it asks whether this device can run KERN so: sm_90, SHMEM
 * within the opt-in, the non-portable cluster size, one cluster resident at least.
 * Returns 0, -ENOTSUP (no message: the caller runs the sequential sweeps) or -EIO. */
template <class KERN>
static int xy_cluster_config(const wave_sim *s, KERN kern, int ncl, int nz, int threads, size_t shmem, cudaStream_t st,
                             cudaLaunchConfig_t &cfg, cudaLaunchAttribute *attr)
{
    cfg = {};
    cfg.gridDim = dim3(ncl, nz);
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = shmem;
    cfg.stream = st;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = ncl;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    if (s->imp->xy_ok == 0) {
        int dev = 0, major = 0, nact = 0;
        CUDA_TRY(cudaGetDevice(&dev));
        CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
        bool ok = major >= 9 && shmem <= (size_t)s->imp->smem_optin;
        if (ok && (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem) != cudaSuccess ||
                   cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess ||
                   cudaOccupancyMaxActiveClusters(&nact, kern, &cfg) != cudaSuccess || nact < 1))
            ok = false;
        (void)cudaGetLastError(); /* a refusal above is an answer, not an error */
        s->imp->xy_ok = ok ? 1 : -1;
        s->imp->xy_clusters = nact;
    }
    return s->imp->xy_ok > 0 ? 0 : -ENOTSUP;
}

#endif
