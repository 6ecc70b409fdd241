/* implicit_kernels — the CUDA sweeps of the implicit operator (kernels/implicit.h): per
 * line the tridiagonal system b g[i-1] + g[i] + b g[i+1] = r[i] by the Thomas algorithm
 * (forward sweep d[i] = (r[i] - b d[i-1]) inv[i], backward g[i] = d[i] - cp[i] g[i+1]),
 * the same arithmetic as the CPU reference (kernels/implicit_step.c).
 *
 *   x  a block of 32 threads loads 32 x lines (row pitch odd: no bank conflicts) into
 *      shared memory with coalesced loads, each thread runs the recursion of one line in
 *      shared memory (d written over the field values the recursion no longer reads),
 *      then the block writes g (plus the CPML terms) to lap, coalesced;
 *   y, z  each thread owns one x lane of one x-z (y sweep) or x-y (z sweep) plane and
 *      marches along the axis: loads coalesced across the warp, the 2K + 1 field values
 *      of the right-hand side in a register window (each field value read once), d
 *      stored to a scratch field, then the backward march applies g.  The z sweep, last,
 *      also does the leapfrog update of q (no separate pass over lap). */
#include "kernels/implicit_cuda.h"

/* ---- x: lines in shared memory --------------------------------------------------------- */

#define XROWS 32 /* lines per block (one per thread of the warp) */

template <int K, int R>
__global__ void __launch_bounds__(XROWS) k_sweep_x(IArgs A, int r0, int r1, int pitch)
{
    extern __shared__ float sh[];
    const int ny = A.bhi[1] - A.blo[1], nz = A.bhi[2] - A.blo[2];
    const long long rows = (long long)ny * nz;
    const long long row0 = (long long)blockIdx.x * XROWS;
    const int m = r1 - r0, w = m + 2 * K;
    const int t = threadIdx.x;
    /* load: row by row, the warp across x (coalesced) */
    for (int rr = 0; rr < XROWS; rr++) {
        const long long q = row0 + rr;
        if (q >= rows)
            break;
        const int j = A.blo[1] + (int)(q % ny), k = A.blo[2] + (int)(q / ny);
        const float *f = A.p + idx(A, r0 - K, j, k);
        for (int x = t; x < w; x += XROWS)
            sh[rr * pitch + x] = f[x];
    }
    __syncthreads();
    const long long q = row0 + t;
    if (q < rows) {
        const int j = A.blo[1] + (int)(q % ny), k = A.blo[2] + (int)(q / ny);
        float *F = sh + t * pitch;
        const float b = A.b;
        float ga = 0, gb = 0;
        if (A.ifc) {
            const long long li = ifc_line<0>(A, 0, j, k);
            ga = A.ifc_in[A.ifc_off[0] + li];
            gb = A.ifc_in[A.ifc_off[0] + A.ifc_half[0] + li];
        }
        float d = 0;
        for (int i = 0; i < m; i++) {
            float r = A.c[0][0] * F[i + K];
#pragma unroll
            for (int l = 1; l <= K; l++)
                r += A.c[0][l] * (F[i + K + l] + F[i + K - l]);
            if (i == 0)
                r -= b * ga;
            if (i == m - 1)
                r -= b * gb;
            d = i == 0 ? r * A.inv[0] : (r - b * d) * A.inv[i];
            F[i] = d; /* F[i] (f at i - K) is read for the last time above */
        }
        float g = F[m - 1];
        for (int i = m - 2; i >= 0; i--) {
            g = F[i] - A.cp[i] * g;
            F[i] = g;
        }
    }
    __syncthreads();
    /* write: row by row, the warp across x */
    for (int rr = 0; rr < XROWS; rr++) {
        const long long qq = row0 + rr;
        if (qq >= rows)
            break;
        const int j = A.blo[1] + (int)(qq % ny), k = A.blo[2] + (int)(qq / ny);
        const float *F = sh + rr * pitch;
        if (A.ifc_out) {
            if (t < 2) {
                const int at = t == 0 ? A.pml[0] + A.lo[0] - 1 : A.pml[0] + A.hi[0];
                const float g = at >= r0 && at < r1 ? F[at - r0] : 0.0f;
                A.ifc_out[A.ifc_off[0] + t * A.ifc_half[0] + ifc_line<0>(A, 0, j, k)] = g;
            }
            continue;
        }
        for (int i = A.blo[0] + t; i < A.bhi[0]; i += XROWS) {
            float g = i >= r0 && i < r1 ? F[i - r0] : 0.0f;
            if (A.cpml)
                g = cpml_term<0, R>(A, i, j, k, g);
            const long long c = idx(A, i, j, k);
            A.lap[c] = A.first ? g : A.lap[c] + g;
        }
    }
}

/* ---- x, one line per warp (tuning implicit_x = warp) ------------------------------------
 * The line-per-thread kernel above holds 32 whole lines per block: at 512 points 66 KB,
 * 3 warps per SM, and each step of its recursion waits on shared memory and on the
 * previous step with nothing else to run (latency-bound).  Here a warp solves one line:
 * lane t owns the rows [t ch, (t + 1) ch) (ch = ceil(m / 32) made odd: the lanes' rows
 * fall in 32 different banks).  The Thomas recursions are affine in their carry:
 *   forward   d[i] = (r[i] - b d[i-1]) inv[i]   so  d[end of chunk] = L + P d[before],
 *   backward  g[i] = d[i] - cp[i] g[i+1]         so  g[start of chunk] = L' + Q g[after],
 * with L, P (L', Q) from a pass over the chunk from a zero carry.  A warp scan of these
 * maps (5 shuffle steps) gives every lane its exact carry, and a second pass over the
 * chunk runs the reference recursion from it: the same arithmetic as the serial solve
 * except the carry's rounding.  Per block XW_WARPS lines, the factors cp, inv copied to
 * shared memory once per block (the grid covers the SMs once, the warps loop over lines);
 * shared memory per line 2 m + 2 K floats (8 warps at 512: 37 KB; order 8 compiles to 48
 * registers: 5 blocks, 40 warps per SM). */

#define XW_WARPS 8

template <int K, int R>
__global__ void __launch_bounds__(32 * XW_WARPS) k_sweep_x_warp(IArgs A, int r0, int r1, int ch, int wpitch)
{
    extern __shared__ float sh[];
    const unsigned FULL = 0xffffffffu;
    const int m = r1 - r0;
    float *scp = sh, *sinv = sh + m;
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    float *F = sh + 2 * m + wid * wpitch; /* F[x]: f at row x - K of the line, x < m + 2K */
    float *D = F + m + 2 * K;             /* r, then d, then g of rows 0..m-1 */
    for (int i = threadIdx.x; i < m; i += blockDim.x) {
        scp[i] = A.cp[i];
        sinv[i] = A.inv[i];
    }
    __syncthreads();
    const int ny = A.bhi[1] - A.blo[1], nz = A.bhi[2] - A.blo[2];
    const long long rows = (long long)ny * nz;
    const float b = A.b;
    const int i0 = min(m, lane * ch), i1 = min(m, i0 + ch);
    for (long long q = (long long)blockIdx.x * XW_WARPS + wid; q < rows; q += (long long)gridDim.x * XW_WARPS) {
        const int j = A.blo[1] + (int)(q % ny), k = A.blo[2] + (int)(q / ny);
        const float *f = A.p + idx(A, r0 - K, j, k);
#pragma unroll 4
        for (int x = lane; x < m + 2 * K; x += 32)
            F[x] = f[x];
        float ga = 0, gb = 0;
        if (A.ifc) {
            const long long li = ifc_line<0>(A, 0, j, k);
            ga = A.ifc_in[A.ifc_off[0] + li];
            gb = A.ifc_in[A.ifc_off[0] + A.ifc_half[0] + li];
        }
        __syncwarp();
        /* forward, pass 1: r (kept in D) and the chunk's map d -> L + P d */
        float L = 0, P = 1;
        if (i0 < i1) {
            float win[2 * K + 1]; /* win[K + l] = F[i + K + l] */
#pragma unroll
            for (int l = 0; l <= 2 * K; l++)
                win[l] = F[i0 + l];
            for (int i = i0; i < i1; i++) {
                float r = A.c[0][0] * win[K];
#pragma unroll
                for (int l = 1; l <= K; l++)
                    r += A.c[0][l] * (win[K + l] + win[K - l]);
                if (i == 0)
                    r -= b * ga;
                if (i == m - 1)
                    r -= b * gb;
                D[i] = r;
                const float iv = sinv[i];
                L = (r - b * L) * iv;
                P *= -b * iv;
#pragma unroll
                for (int l = 0; l < 2 * K; l++)
                    win[l] = win[l + 1];
                if (i + 1 < i1)
                    win[2 * K] = F[i + 1 + 2 * K];
            }
        }
        /* inclusive scan of the maps from lane 0 up: L = d at the end of this chunk */
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const float Lo = __shfl_up_sync(FULL, L, o), Po = __shfl_up_sync(FULL, P, o);
            if (lane >= o) {
                L += P * Lo;
                P *= Po;
            }
        }
        float d = __shfl_up_sync(FULL, L, 1);
        if (lane == 0)
            d = 0; /* row 0: d = r inv[0] */
        /* forward, pass 2: the reference recursion from the exact carry */
        for (int i = i0; i < i1; i++) {
            d = (D[i] - b * d) * sinv[i];
            D[i] = d;
        }
        /* backward, pass 1: g[start] = L + Q g[after] */
        L = 0;
        float Q = 1;
        for (int i = i1 - 1; i >= i0; i--) {
            const float c = scp[i];
            L = D[i] - c * L;
            Q *= -c;
        }
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const float Lo = __shfl_down_sync(FULL, L, o), Qo = __shfl_down_sync(FULL, Q, o);
            if (lane + o < 32) {
                L += Q * Lo;
                Q *= Qo;
            }
        }
        float g = __shfl_down_sync(FULL, L, 1);
        if (lane == 31)
            g = 0; /* beyond row m - 1: g[m - 1] = d[m - 1] */
        for (int i = i1 - 1; i >= i0; i--) {
            g = D[i] - scp[i] * g;
            D[i] = g;
        }
        __syncwarp();
        /* write: the warp across x */
        if (A.ifc_out) {
            if (lane < 2) {
                const int at = lane == 0 ? A.pml[0] + A.lo[0] - 1 : A.pml[0] + A.hi[0];
                const float gv = at >= r0 && at < r1 ? D[at - r0] : 0.0f;
                A.ifc_out[A.ifc_off[0] + lane * A.ifc_half[0] + ifc_line<0>(A, 0, j, k)] = gv;
            }
        } else {
            for (int i = A.blo[0] + lane; i < A.bhi[0]; i += 32) {
                float gv = i >= r0 && i < r1 ? D[i - r0] : 0.0f;
                if (A.cpml)
                    gv = cpml_term<0, R>(A, i, j, k, gv);
                const long long c = idx(A, i, j, k);
                A.lap[c] = A.first ? gv : A.lap[c] + gv;
            }
        }
        __syncwarp(); /* F and D are the next line's */
    }
}

/* ---- y and z: marching columns ----------------------------------------------------------- */

/* AX = 1: threads over (x, z), march y; AX = 2: threads over (x, y), march z.  LAST: the
 * z sweep, which updates q = 2 p - q + vel (lap + g). */
template <int K, int R, int AX>
__global__ void __launch_bounds__(128) k_sweep_march(IArgs A, int r0, int r1)
{
    const int i = A.blo[0] + (int)(blockIdx.x * blockDim.x + threadIdx.x);
    const int o = (AX == 1 ? A.blo[2] : A.blo[1]) + (int)blockIdx.y;
    if (i >= A.bhi[0])
        return;
    const int j = AX == 1 ? 0 : o, k = AX == 1 ? o : 0;
    const long long st = AX == 1 ? A.sy : A.sz;
    const long long base = idx(A, i, j, k); /* row 0 of the column */
    const float b = A.b;
    const bool mirror = AX == 2 && A.mirror;
    float ga = 0, gb = 0;
    if (A.ifc) {
        const long long li = ifc_line<AX>(A, i, j, k);
        ga = A.ifc_in[A.ifc_off[AX] + li];
        gb = A.ifc_in[A.ifc_off[AX] + A.ifc_half[AX] + li];
    }
    /* window: win[K + l] = f(t + l), l = -K..K */
    float win[2 * K + 1];
#pragma unroll
    for (int l = -K; l <= K; l++) {
        const int tt = r0 + l;
        win[K + l] = mirror && tt < 0 ? -A.p[base + (long long)(-tt) * st] : A.p[base + (long long)tt * st];
    }
    float d = 0;
    for (int t = r0; t < r1; t++) {
        float r = A.c[AX][0] * win[K];
#pragma unroll
        for (int l = 1; l <= K; l++)
            r += A.c[AX][l] * (win[K + l] + win[K - l]);
        if (t == r0)
            r -= b * ga;
        if (t == r1 - 1)
            r -= b * gb;
        d = t == r0 ? r * A.inv[0] : (r - b * d) * A.inv[t - r0];
        A.d[base + (long long)t * st] = d;
#pragma unroll
        for (int l = 0; l < 2 * K; l++)
            win[l] = win[l + 1];
        if (t + 1 < r1) /* f(r1 + K) would be one plane beyond the halo */
            win[2 * K] = A.p[base + (long long)(t + K + 1) * st];
    }
    if (A.ifc_out) {
        /* g at the interfaces only: march back to the upper one */
        const int at[2] = {A.pml[2 * AX] + A.lo[AX] - 1, A.pml[2 * AX] + A.hi[AX]};
        float g = 0;
        const long long li = ifc_line<AX>(A, i, j, k);
        for (int t = r1 - 1; t >= r0 && t >= at[0]; t--) {
            g = t == r1 - 1 ? A.d[base + (long long)t * st] : A.d[base + (long long)t * st] - A.cp[t - r0] * g;
            if (t == at[1])
                A.ifc_out[A.ifc_off[AX] + A.ifc_half[AX] + li] = g;
            if (t == at[0])
                A.ifc_out[A.ifc_off[AX] + li] = g;
        }
        if (at[0] < r0) /* the surface row: g = 0 */
            A.ifc_out[A.ifc_off[AX] + li] = 0.0f;
        return;
    }
    float g = 0;
    const int blo = AX == 1 ? A.blo[1] : A.blo[2], bhi = AX == 1 ? A.bhi[1] : A.bhi[2];
    for (int t = r1 - 1; t >= blo; t--) {
        if (t >= r0) {
            const float dd = A.d[base + (long long)t * st];
            g = t == r1 - 1 ? dd : dd - A.cp[t - r0] * g;
        } else {
            g = 0.0f; /* the surface row */
        }
        if (t >= bhi)
            continue;
        float gc = g;
        const int jj = AX == 1 ? t : j, kk = AX == 2 ? t : k;
        if (A.cpml)
            gc = cpml_term<AX, R>(A, i, jj, kk, gc);
        const long long c = base + (long long)t * st;
        if (AX == 2) {
            const float lap = A.first ? gc : A.lap[c] + gc;
            A.q[c] = 2.0f * A.p[c] - A.q[c] + A.vel[c] * lap;
        } else {
            A.lap[c] = A.first ? gc : A.lap[c] + gc;
        }
    }
}

/* ---- y and z: lines split into chunks (tuning implicit_yz = chunks) ---------------------
 * The marching kernel above stores the forward sweep's d and reads it back (8 B per
 * point and axis) because a thread cannot hold a whole column.  Here a block holds whole
 * lines: thread (lane, c) owns the rows [c CH, c CH + CH) of its x lane's column in
 * registers (CH = 16; at most 32 chunks, lines up to 512 rows; longer ones, and the
 * interface-value passes, run the marching kernel).  32 x lanes, 16 for lines of more
 * than 16 chunks: at most 512 threads a block, so that two blocks share an SM (64
 * registers a thread) and one loads while the other computes; a half warp still reads 64
 * contiguous bytes.  The chunks are linked
 * as in k_sweep_x_warp: each chunk's forward map d -> L + P d and backward map
 * g -> L' + Q g from a zero carry, the carries composed through shared memory (each
 * chunk composes the maps before it, in order), then the reference recursions from the
 * exact carries.  d never leaves the registers: the y sweep reads p and lap and writes
 * lap (12 B per point instead of 20), the z sweep reads p, lap, vel, q and writes q (20
 * instead of 32: its second read of p, for the update, should hit L2).  Loads: every
 * thread its CH + 2K rows up front (the 2K halo rows are its neighbours' too: L1/L2
 * hits), coalesced across the x lanes. */

#define YZ_CH 16
#define YZ_NC_MAX 32
#define YZ_THREADS 512 /* 32 x lanes x 16 chunks, or 16 x 32: two blocks per SM at 64 registers */

template <int K, int R, int AX>
__global__ void __launch_bounds__(YZ_THREADS, 2) k_sweep_chunks(IArgs A, int r0, int r1)
{
    __shared__ float sL[YZ_NC_MAX][33], sP[YZ_NC_MAX][33];
    const int lane = threadIdx.x, c = threadIdx.y, nc = blockDim.y;
    const int i = A.blo[0] + (int)(blockIdx.x * blockDim.x) + lane;
    const bool act = i < A.bhi[0];
    const int o = (AX == 1 ? A.blo[2] : A.blo[1]) + (int)blockIdx.y;
    const int j = AX == 1 ? 0 : o, k = AX == 1 ? o : 0;
    const long long st = AX == 1 ? A.sy : A.sz;
    const long long base = idx(A, act ? i : A.blo[0], j, k); /* row 0 of the column */
    const float b = A.b;
    const bool mirror = AX == 2 && A.mirror;
    const int m = r1 - r0;
    const int i0 = min(m, c * YZ_CH);
    const int n = act ? min(m - i0, YZ_CH) : 0; /* rows of this chunk (0: the identity maps) */
    float ga = 0, gb = 0;
    if (A.ifc && act) {
        const long long li = ifc_line<AX>(A, i, j, k);
        ga = A.ifc_in[A.ifc_off[AX] + li];
        gb = A.ifc_in[A.ifc_off[AX] + A.ifc_half[AX] + li];
    }
    /* the field rows i0 - K .. i0 + n - 1 + K of the line (row t of the line: r0 + t) */
    float fw[YZ_CH + 2 * K];
#pragma unroll
    for (int l = 0; l < YZ_CH + 2 * K; l++) {
        const int tt = r0 + i0 - K + l;
        fw[l] = 0.0f;
        if (l < n + 2 * K)
            fw[l] = mirror && tt < 0 ? -A.p[base + (long long)(-tt) * st] : A.p[base + (long long)tt * st];
    }
    /* forward, pass 1: r (in v) and the chunk's map */
    float v[YZ_CH];
    float L = 0, P = 1;
#pragma unroll
    for (int u = 0; u < YZ_CH; u++) {
        float r = A.c[AX][0] * fw[u + K];
#pragma unroll
        for (int l = 1; l <= K; l++)
            r += A.c[AX][l] * (fw[u + K + l] + fw[u + K - l]);
        if (i0 + u == 0)
            r -= b * ga;
        if (i0 + u == m - 1)
            r -= b * gb;
        v[u] = r;
        if (u < n) {
            const float iv = A.inv[i0 + u];
            L = (r - b * L) * iv;
            P *= -b * iv;
        }
    }
    sL[c][lane] = L;
    sP[c][lane] = P;
    __syncthreads();
    float d = 0; /* d before row i0: the maps of the chunks before, in order */
    for (int cc = 0; cc < c; cc++)
        d = sL[cc][lane] + sP[cc][lane] * d;
    __syncthreads();
#pragma unroll
    for (int u = 0; u < YZ_CH; u++)
        if (u < n) {
            d = (v[u] - b * d) * A.inv[i0 + u];
            v[u] = d;
        }
    /* backward, pass 1 */
    L = 0;
    float Q = 1;
#pragma unroll
    for (int u = YZ_CH - 1; u >= 0; u--)
        if (u < n) {
            const float cq = A.cp[i0 + u];
            L = v[u] - cq * L;
            Q *= -cq;
        }
    sL[c][lane] = L;
    sP[c][lane] = Q;
    __syncthreads();
    float g = 0; /* g after the chunk's last row: the maps of the chunks after, in order */
    for (int cc = nc - 1; cc > c; cc--)
        g = sL[cc][lane] + sP[cc][lane] * g;
#pragma unroll
    for (int u = YZ_CH - 1; u >= 0; u--)
        if (u < n) {
            g = v[u] - A.cp[i0 + u] * g;
            v[u] = g;
        }
    if (!act)
        return;
    /* write the rows of the box: this chunk's, and (chunk 0) the surface rows before r0 */
    const int blo = AX == 1 ? A.blo[1] : A.blo[2], bhi = AX == 1 ? A.bhi[1] : A.bhi[2];
#pragma unroll
    for (int u = 0; u < YZ_CH + 1; u++) {
        int t;
        float gv;
        if (u < YZ_CH) {
            if (u >= n)
                continue;
            t = r0 + i0 + u;
            gv = v[u];
        } else {
            if (c != 0 || blo >= r0)
                continue;
            t = blo; /* the surface row (mirror: r0 = 1): g = 0 */
            gv = 0.0f;
        }
        if (t < blo || t >= bhi)
            continue;
        const int jj = AX == 1 ? t : j, kk = AX == 2 ? t : k;
        if (A.cpml)
            gv = cpml_term<AX, R>(A, i, jj, kk, gv);
        const long long cix = base + (long long)t * st;
        if (AX == 2) {
            const float lap = A.first ? gv : A.lap[cix] + gv;
            A.q[cix] = 2.0f * A.p[cix] - A.q[cix] + A.vel[cix] * lap;
        } else {
            A.lap[cix] = A.first ? gv : A.lap[cix] + gv;
        }
    }
}

/* ---- launchers ------------------------------------------------------------------------- */


/* The line-per-warp x sweep (k_sweep_x_warp). */
static int sweep_x_warp(const wave_sim *s, const IArgs &A, cudaStream_t st, int r0, int r1, long long rows)
{
    const int K = s->imp->K, m = r1 - r0;
    const int ch = ((m + 31) / 32) | 1; /* odd: the lanes' rows in 32 different banks */
    const int wpitch = 2 * m + 2 * K;
    const size_t shmem = ((size_t)2 * m + (size_t)XW_WARPS * wpitch) * sizeof(float);
    const int optin = s->imp->smem_optin, sms = sm_count(s);
    if (shmem > (size_t)optin)
        return err_set(-ENOTSUP, "implicit: x lines of %d points do not fit the x sweep's shared memory (at most "
                       "%zu points)", m, ((size_t)optin / sizeof(float) - 2 * (size_t)XW_WARPS * K) /
                                              (2 + 2 * (size_t)XW_WARPS));
    return with_r(s, [&](auto kk) {
        constexpr int KK = decltype(kk)::value;
        auto kern = k_sweep_x_warp<KK, KK>;
        CUDA_TRY(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
        int per_sm = 0;
        CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, 32 * XW_WARPS, shmem));
        if (A.x_blocks_per_sm > 0 && A.x_blocks_per_sm < per_sm)
            per_sm = A.x_blocks_per_sm;
        long long blocks = (rows + XW_WARPS - 1) / XW_WARPS;
        const long long cap = (long long)(per_sm > 0 ? per_sm : 1) * sms;
        if (blocks > cap)
            blocks = cap; /* one wave; the warps loop over the lines */
        kern<<<(unsigned)blocks, 32 * XW_WARPS, shmem, st>>>(A, r0, r1, ch, wpitch);
        CUDA_TRY_LAUNCH();
        return 0;
    });
}

int implicit_cu_sweep_x(const wave_sim *s, const IArgs &A, cudaStream_t st)
{
    int r0, r1;
    implicit_cu_rows(s, 0, A.ifc, &r0, &r1);
    const int K = s->imp->K;
    const long long rows = (long long)(A.bhi[1] - A.blo[1]) * (A.bhi[2] - A.blo[2]);
    if (r1 <= r0 || rows <= 0)
        return 0;
    const int xv = wave_implicit_x_of(&s->p.tuning);
    if (xv == WAVE_IMPLICIT_X_WARPL && A.cpml && A.first && !A.ifc_out) {
        /* the sweep writes g alone, the layers' pass adds the CPML terms (implicit_layers.cu) */
        IArgs G = A;
        G.cpml = false;
        const int rc = sweep_x_warp(s, G, st, r0, r1, rows);
        return rc < 0 ? rc : implicit_cu_x_layers(s, A, st);
    }
    if (xv == WAVE_IMPLICIT_X_REGS && r1 - r0 <= IMPLICIT_XR_MAX)
        return implicit_cu_sweep_x_regs(s, A, st, r0, r1, rows);
    if (xv == WAVE_IMPLICIT_X_WARP || xv == WAVE_IMPLICIT_X_REGS || xv == WAVE_IMPLICIT_X_WARPL) /* regs: longer */
        return sweep_x_warp(s, A, st, r0, r1, rows);
    int pitch = r1 - r0 + 2 * K;
    pitch |= 1; /* odd: the 32 lines of a block fall in 32 different banks */
    const size_t shmem = (size_t)XROWS * pitch * sizeof(float);
    const size_t max_sh = (size_t)s->imp->smem_optin; /* H100: 227 KB, A100: 163 KB */
    if (shmem > max_sh)
        return err_set(-ENOTSUP, "implicit: x lines of %d points do not fit the x sweep's shared memory (at most "
                       "%zu points)", r1 - r0, max_sh / sizeof(float) / XROWS - 2 * K);
    return with_r(s, [&](auto kk) {
        constexpr int KK = decltype(kk)::value;
        auto kern = k_sweep_x<KK, KK>;
        CUDA_TRY(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
        kern<<<(unsigned)((rows + XROWS - 1) / XROWS), XROWS, shmem, st>>>(A, r0, r1, pitch);
        CUDA_TRY_LAUNCH();
        return 0;
    });
}

template <int AX>
static int sweep_march(const wave_sim *s, const IArgs &A, cudaStream_t st)
{
    int r0, r1;
    implicit_cu_rows(s, AX, A.ifc, &r0, &r1);
    const int nx = A.bhi[0] - A.blo[0], no = AX == 1 ? A.bhi[2] - A.blo[2] : A.bhi[1] - A.blo[1];
    if (nx <= 0 || no <= 0 || r1 <= r0)
        return 0;
    const int nc = (r1 - r0 + YZ_CH - 1) / YZ_CH;
    const int yzv = wave_implicit_yz_of(&s->p.tuning);
    const bool tile = (yzv >= WAVE_IMPLICIT_YZ_TILE && yzv <= WAVE_IMPLICIT_YZ_TILEZ) ||
                      wave_implicit_yz_is_xyc(yzv) || yzv == WAVE_IMPLICIT_YZ_TILEQ ||
                      yzv == WAVE_IMPLICIT_YZ_TILEQN || yzv == WAVE_IMPLICIT_YZ_TILEQW;
    if (tile && !A.ifc_out && r1 - r0 <= IMPLICIT_YS_MAX)
        return implicit_cu_sweep_tile(s, A, st, AX, r0, r1);
    if (yzv >= WAVE_IMPLICIT_YZ_SCAN && !A.ifc_out && r1 - r0 <= IMPLICIT_YS_MAX) /* scan*, overlap, xy* */
        return implicit_cu_sweep_scan(s, A, st, AX, r0, r1);
    if (yzv == WAVE_IMPLICIT_YZ_CHUNKS && !A.ifc_out && nc <= YZ_NC_MAX)
        return with_r(s, [&](auto kk) {
            constexpr int KK = decltype(kk)::value;
            const int w = YZ_THREADS / nc >= 32 ? 32 : 16;
            dim3 blk(w, nc), grd((nx + w - 1) / w, no);
            k_sweep_chunks<KK, KK, AX><<<grd, blk, 0, st>>>(A, r0, r1);
            CUDA_TRY_LAUNCH();
            return 0;
        });
    return with_r(s, [&](auto kk) {
        constexpr int KK = decltype(kk)::value;
        dim3 blk(128), grd((nx + 127) / 128, no);
        k_sweep_march<KK, KK, AX><<<grd, blk, 0, st>>>(A, r0, r1);
        CUDA_TRY_LAUNCH();
        return 0;
    });
}

int implicit_cu_sweep_y(const wave_sim *s, const IArgs &A, cudaStream_t st) { return sweep_march<1>(s, A, st); }
int implicit_cu_sweep_z(const wave_sim *s, const IArgs &A, cudaStream_t st) { return sweep_march<2>(s, A, st); }
