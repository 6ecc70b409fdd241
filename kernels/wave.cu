/* wave.cu — the CUDA twin of the propagator (kernels/wave.c holds the layout, life cycle
 * and the CPU reference; this file only the device memory and kernels).
 *
 * One step = psi update in the layers only (3 small launches) + the interior update
 * (naive: one thread per point; tiled: Micikevicius 2009 2.5D, an x-y tile of p in
 * shared memory and a register queue of 2R+1 values along z, z split in chunks) over
 * the box that holds no layer, so the interior never branches on the boundary + the
 * stretched update of the 6 layer boxes + the free-surface mirror.  Without CPML (or
 * for a reverse step) the interior kernel covers the whole padded grid. */
#include "kernels/cuda_check.h"
#include "kernels/points.h"
#include "kernels/wave_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#define MAXR (WAVE_ORDER_MAX / 2)

struct KArgs {
    const float *__restrict__ p; /* p(n) */
    float *__restrict__ q;       /* p(n-1) in, p(n+1) out */
    const float *__restrict__ vel;
    long long sy, sz;
    int h;
    float c2[3][MAXR + 1];
    float c1[3][MAXR + 1];
};

struct PArgs {
    float *psi[3], *zeta[3];
    const float *pa[3], *pb[3];
    int npad[3];
    int pml[6];
};

struct Box {
    int lo[3], hi[3];
};

static KArgs kargs(const wave_sim *s)
{
    KArgs a;
    a.p = s->cur;
    a.q = s->prev;
    a.vel = s->vel;
    a.sy = (long long)s->L.stride_y;
    a.sz = (long long)s->L.stride_z;
    a.h = s->L.halo;
    memcpy(a.c2, s->c2, sizeof a.c2);
    memcpy(a.c1, s->c1, sizeof a.c1);
    return a;
}

static PArgs pargs(const wave_sim *s)
{
    PArgs a;
    for (int i = 0; i < 3; i++) {
        a.psi[i] = s->psi[i];
        a.zeta[i] = s->zeta[i];
        a.pa[i] = s->pa[i];
        a.pb[i] = s->pb[i];
        a.npad[i] = s->L.npad[i];
    }
    for (int f = 0; f < 6; f++)
        a.pml[f] = s->L.pml[f];
    return a;
}

__device__ __forceinline__ int slab_index(int i, int npad, int wlo, int whi)
{
    if (i < 0 || i >= npad)
        return -1;
    if (i < wlo)
        return i;
    if (i >= npad - whi)
        return i - (npad - whi) + wlo;
    return -1;
}

__device__ __forceinline__ long long slab_elem(const PArgs &m, int a, int i, int j, int k, int js)
{
    if (a == 0)
        return ((long long)k * m.npad[1] + j) * (m.pml[0] + m.pml[1]) + js;
    if (a == 1)
        return ((long long)k * (m.pml[2] + m.pml[3]) + js) * m.npad[0] + i;
    return ((long long)js * m.npad[1] + j) * m.npad[0] + i;
}

/* ---- interior: naive ------------------------------------------------------------------ */

template <int R>
__global__ void k_naive(KArgs a, Box b)
{
    int i = b.lo[0] + blockIdx.x * blockDim.x + threadIdx.x;
    int j = b.lo[1] + blockIdx.y * blockDim.y + threadIdx.y;
    int k = b.lo[2] + blockIdx.z;
    if (i >= b.hi[0] || j >= b.hi[1])
        return;
    long long c = (long long)(k + a.h) * a.sz + (long long)(j + a.h) * a.sy + (i + a.h);
    const float *p = a.p;
    float lap = (a.c2[0][0] + a.c2[1][0] + a.c2[2][0]) * p[c];
#pragma unroll
    for (int l = 1; l <= R; l++)
        lap += a.c2[0][l] * (p[c + l] + p[c - l]) + a.c2[1][l] * (p[c + l * a.sy] + p[c - l * a.sy]) +
               a.c2[2][l] * (p[c + l * a.sz] + p[c - l * a.sz]);
    a.q[c] = 2.0f * p[c] - a.q[c] + a.vel[c] * lap;
}

/* ---- interior: 2.5D tiled ------------------------------------------------------------- */

#define TX 32
#define ZCHUNK 128 /* longest z chunk of one block */

/* Block of TX x BY threads; each thread owns NY rows of the TX x (BY NY) tile (rows
 * ty, ty + BY, ...), each with its own register queue along z.  Everything plane k
 * needs from global memory (the queue's new value p(k+R), the x and y halos, p(k-1)
 * and v) is loaded PD planes ahead into registers (software pipelining, slots used in
 * turn with compile-time indices so no register waits on a load before its use):
 * a memory-bound stencil needs many bytes in flight per SM, and the two barriers per
 * plane would otherwise expose the memory latency once per plane. */
template <int R, int BY, int NY, int PD>
__global__ void __launch_bounds__(TX *BY, NY == 1 ? 2048 / (TX * BY) / 2 : 2) k_tiled(KArgs a, Box b, int zchunk)
{
    constexpr int TYT = BY * NY;          /* tile height */
    constexpr int HY = (R + BY - 1) / BY; /* y-halo rows per thread (above and below) */
    __shared__ float sm[TYT + 2 * R][TX + 2 * R];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x0 = b.lo[0] + blockIdx.x * TX, y0 = b.lo[1] + blockIdx.y * TYT;
    const int i = x0 + tx;
    const int kb = b.lo[2] + blockIdx.z * zchunk;
    const int ke = min(kb + zchunk, b.hi[2]);
    const float *__restrict__ p = a.p;
    const float *__restrict__ vel = a.vel;
    float *__restrict__ q = a.q;
    const long long sy = a.sy, sz = a.sz;
    /* Points up to R beyond the box are still inside the allocation and feed the stencil
     * of the box's last points; further ones are never read. */
    const bool xin = i < b.hi[0], xld = i < b.hi[0] + R;
    /* The weights stay in the kernel-parameter (constant) bank. */
    const float c0 = a.c2[0][0] + a.c2[1][0] + a.c2[2][0];
    long long col[NY];
    bool inside[NY], loadable[NY], lx_ok[NY], rx_ok[NY];
#pragma unroll
    for (int m = 0; m < NY; m++) {
        int j = y0 + ty + m * BY;
        col[m] = (long long)(j + a.h) * sy + (i + a.h);
        inside[m] = xin && j < b.hi[1];
        loadable[m] = xld && j < b.hi[1] + R;
        lx_ok[m] = tx < R && j < b.hi[1] + R;
        rx_ok[m] = tx < R && x0 + TX + tx < b.hi[0] + R && j < b.hi[1] + R;
    }
    /* y halos: rows y0 - R + r (above) and y0 + TYT + r (below), r = ty + h BY < R. */
    long long ycol_b[HY], ycol_t[HY];
    bool yb_ok[HY], yt_ok[HY];
#pragma unroll
    for (int h = 0; h < HY; h++) {
        int r = ty + h * BY;
        ycol_b[h] = (long long)(y0 - R + r + a.h) * sy + (i + a.h);
        ycol_t[h] = (long long)(y0 + TYT + r + a.h) * sy + (i + a.h);
        yb_ok[h] = r < R && xld;
        yt_ok[h] = r < R && xld && y0 + TYT + r < b.hi[1] + R;
    }
    float qz[NY][2 * R + 1]; /* qz[m][u] = p(k - R + u) of row m */
#pragma unroll
    for (int m = 0; m < NY; m++)
#pragma unroll
        for (int u = 0; u < 2 * R; u++)
            qz[m][u] = loadable[m] ? __ldg(p + col[m] + (long long)(kb - R + u + a.h) * sz) : 0.0f;
    float nz[PD][NY], hl[PD][NY], hr[PD][NY], qo[PD][NY], vv[PD][NY], hb[PD][HY], ht[PD][HY];
    /* Load what plane KK needs into slot SL. */
    auto fetch = [&](auto slc, int kk) {
        constexpr int sl = decltype(slc)::value;
        const long long pl = (long long)(kk + a.h) * sz;
        const bool ok = kk < ke;
#pragma unroll
        for (int m = 0; m < NY; m++) {
            nz[sl][m] = ok && loadable[m] ? __ldg(p + col[m] + pl + R * sz) : 0.0f;
            hl[sl][m] = ok && lx_ok[m] ? __ldg(p + col[m] + pl - R) : 0.0f;
            hr[sl][m] = ok && rx_ok[m] ? __ldg(p + col[m] + pl + TX) : 0.0f;
            qo[sl][m] = ok && inside[m] ? q[col[m] + pl] : 0.0f;
            vv[sl][m] = ok && inside[m] ? __ldg(vel + col[m] + pl) : 0.0f;
        }
#pragma unroll
        for (int h = 0; h < HY; h++) {
            hb[sl][h] = ok && yb_ok[h] ? __ldg(p + ycol_b[h] + pl) : 0.0f;
            ht[sl][h] = ok && yt_ok[h] ? __ldg(p + ycol_t[h] + pl) : 0.0f;
        }
    };
    /* Update plane KK from slot SL, then refill SL with plane KK + PD. */
    auto plane_step = [&](auto slc, int kk) {
        constexpr int sl = decltype(slc)::value;
        __syncthreads();
#pragma unroll
        for (int m = 0; m < NY; m++) {
            qz[m][2 * R] = nz[sl][m];
            const int row = ty + m * BY + R;
            sm[row][tx + R] = qz[m][R];
            if (tx < R) {
                sm[row][tx] = hl[sl][m];
                sm[row][tx + TX + R] = hr[sl][m];
            }
        }
#pragma unroll
        for (int h = 0; h < HY; h++) {
            int r = ty + h * BY;
            if (r < R) {
                sm[r][tx + R] = hb[sl][h];
                sm[TYT + R + r][tx + R] = ht[sl][h];
            }
        }
        __syncthreads();
        float qcur[NY], vcur[NY];
#pragma unroll
        for (int m = 0; m < NY; m++) {
            qcur[m] = qo[sl][m];
            vcur[m] = vv[sl][m];
        }
        fetch(slc, kk + PD);
        const long long pl = (long long)(kk + a.h) * sz;
#pragma unroll
        for (int m = 0; m < NY; m++) {
            if (inside[m]) {
                const int row = ty + m * BY + R;
                float lap = c0 * qz[m][R];
#pragma unroll
                for (int l = 1; l <= R; l++)
                    lap += a.c2[0][l] * (sm[row][tx + R + l] + sm[row][tx + R - l]) +
                           a.c2[1][l] * (sm[row + l][tx + R] + sm[row - l][tx + R]) +
                           a.c2[2][l] * (qz[m][R + l] + qz[m][R - l]);
                q[col[m] + pl] = 2.0f * qz[m][R] - qcur[m] + vcur[m] * lap;
            }
#pragma unroll
            for (int u = 0; u < 2 * R; u++)
                qz[m][u] = qz[m][u + 1];
        }
    };
    using S0 = std::integral_constant<int, 0>;
    using S1 = std::integral_constant<int, PD - 1>;
    fetch(S0{}, kb);
    if (PD > 1)
        fetch(S1{}, kb + 1);
    for (int k = kb; k < ke; k += PD) {
        plane_step(S0{}, k);
        if (PD > 1 && k + 1 < ke)
            plane_step(S1{}, k + 1);
    }
}

/* ---- CPML ------------------------------------------------------------------------------ */

/* psi <- b psi + a dp/dx_A over the layers of axis A (box over the slab: x = slab index
 * for axis A). */
template <int R>
__global__ void k_psi(KArgs a, PArgs m, int ax, int n0, int n1, int n2)
{
    int u = blockIdx.x * blockDim.x + threadIdx.x, v = blockIdx.y * blockDim.y + threadIdx.y,
        w = blockIdx.z;
    if (u >= n0 || v >= n1 || w >= n2)
        return;
    int ijk[3] = {u, v, w};
    int js = ijk[ax];
    int wlo = m.pml[2 * ax], whi = m.pml[2 * ax + 1];
    ijk[ax] = js < wlo ? js : m.npad[ax] - whi + (js - wlo);
    const long long st[3] = {1, a.sy, a.sz};
    long long c = (long long)(ijk[2] + a.h) * a.sz + (long long)(ijk[1] + a.h) * a.sy + (ijk[0] + a.h);
    float d1 = 0;
#pragma unroll
    for (int l = 1; l <= R; l++)
        d1 += a.c1[ax][l] * (a.p[c + l * st[ax]] - a.p[c - l * st[ax]]);
    long long e = slab_elem(m, ax, ijk[0], ijk[1], ijk[2], js);
    int x = ijk[ax];
    m.psi[ax][e] = m.pb[ax][x] * m.psi[ax][e] + m.pa[ax][x] * d1;
}

/* The stretched update of one axis group of the layers: box B is in slab-index space
 * along axis AX ([0, wlo + whi), both faces in one launch, the storage order of that
 * axis's CPML memory) and in padded coordinates along the other two. */
template <int R>
__global__ void k_pml(KArgs a, PArgs m, int gax, Box b)
{
    int ijk[3] = {b.lo[0] + (int)(blockIdx.x * blockDim.x + threadIdx.x),
                  b.lo[1] + (int)(blockIdx.y * blockDim.y + threadIdx.y), b.lo[2] + (int)blockIdx.z};
    if (ijk[0] >= b.hi[0] || ijk[1] >= b.hi[1])
        return;
    {
        int js = ijk[gax], wlo = m.pml[2 * gax], whi = m.pml[2 * gax + 1];
        ijk[gax] = js < wlo ? js : m.npad[gax] - whi + (js - wlo);
    }
    const int i = ijk[0], j = ijk[1], k = ijk[2];
    const long long st[3] = {1, a.sy, a.sz};
    const long long sst[3] = {1, m.npad[0], (long long)m.npad[0] * m.npad[1]};
    long long c = (long long)(k + a.h) * a.sz + (long long)(j + a.h) * a.sy + (i + a.h);
    const float *__restrict__ p = a.p;
    float lap = 0;
#pragma unroll
    for (int ax = 0; ax < 3; ax++) {
        float d2 = a.c2[ax][0] * __ldg(p + c);
#pragma unroll
        for (int l = 1; l <= R; l++)
            d2 += a.c2[ax][l] * (__ldg(p + c + l * st[ax]) + __ldg(p + c - l * st[ax]));
        const int np = m.npad[ax], wlo = m.pml[2 * ax], whi = m.pml[2 * ax + 1];
        const int x = ijk[ax];
        const int js = slab_index(x, np, wlo, whi);
        if (js < 0) {
            lap += d2;
            continue;
        }
        const long long e = slab_elem(m, ax, i, j, k, js);
        const float *__restrict__ psi = m.psi[ax];
        float dpsi = 0;
#pragma unroll
        for (int l = 1; l <= R; l++) {
            int xu = x + l, xd = x - l;
            float up = 0, dn = 0;
            if (xu < np && (xu < wlo || xu >= np - whi))
                up = __ldg(psi + e + (long long)(slab_index(xu, np, wlo, whi) - js) * sst[ax]);
            if (xd >= 0 && (xd < wlo || xd >= np - whi))
                dn = __ldg(psi + e - (long long)(js - slab_index(xd, np, wlo, whi)) * sst[ax]);
            dpsi += a.c1[ax][l] * (up - dn);
        }
        float t = d2 + dpsi;
        float z = m.pb[ax][x] * m.zeta[ax][e] + m.pa[ax][x] * t;
        m.zeta[ax][e] = z;
        lap += t + z;
    }
    a.q[c] = 2.0f * __ldg(p + c) - a.q[c] + __ldg(a.vel + c) * lap;
}

__global__ void k_free_surface(float *q, long long plane, int h)
{
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= plane)
        return;
    q[(long long)h * plane + e] = 0.0f;
    for (int m = 1; m <= h; m++)
        q[(long long)(h - m) * plane + e] = -q[(long long)(h + m) * plane + e];
}

/* ---- dispatch ---------------------------------------------------------------------------- */

/* Shape of the tiled kernel's thread block, from SEISLIVE_WAVE_TILE: "16x1" (16 thread
 * rows, one point each), "8x1", "8x2" (8 rows, 2 points each: 32 x 16 tile) or "4x4"
 * (32 x 16 tile).  A tuning knob for seislive-bench: every shape gives the same numbers
 * (each is checked against the CPU reference), only speed differs.  Unset: the shape
 * measured fastest on the H100 (docs/PERFORMANCE.md): 4x4 up to order 8, 8x2 above. */
enum tile_shape { TILE_16x1, TILE_8x1, TILE_8x2, TILE_4x4 };
static const char *const tile_names[] = {"16x1", "8x1", "8x2", "4x4"};

static int tile_shape(int r)
{
    static int t = -2;
    if (t == -2) {
        const char *e = getenv("SEISLIVE_WAVE_TILE");
        t = -1;
        for (int k = 0; e && k < 4; k++)
            if (!strcmp(e, tile_names[k]))
                t = k;
    }
    return t >= 0 ? t : r <= 4 ? TILE_4x4 : TILE_8x2;
}

/* Planes loaded ahead by the tiled kernel: SEISLIVE_WAVE_PREFETCH=1 or 2 (default). */
#define PREFETCH_DEFAULT 2
static int prefetch_depth(void)
{
    static int d = 0;
    if (!d) {
        const char *e = getenv("SEISLIVE_WAVE_PREFETCH");
        d = e && (atoi(e) == 1 || atoi(e) == 2) ? atoi(e) : PREFETCH_DEFAULT;
    }
    return d;
}

/* SEISLIVE_WAVE_CPML_OVERLAP=0 runs the CPML kernels on the simulation's own stream
 * (for measuring what the overlap gains); default: on a second stream. */
static bool cpml_overlap(void)
{
    static int o = -1;
    if (o < 0) {
        const char *e = getenv("SEISLIVE_WAVE_CPML_OVERLAP");
        o = !(e && !strcmp(e, "0"));
    }
    return o;
}

template <int R, int BY, int NY, int PD>
static void launch_tiled(const Box &in, const KArgs &a, int sms, cudaStream_t st)
{
    constexpr int TYT = BY * NY;
    int gx = (in.hi[0] - in.lo[0] + TX - 1) / TX, gy = (in.hi[1] - in.lo[1] + TYT - 1) / TYT;
    int nz = in.hi[2] - in.lo[2];
    /* z chunks: long enough to amortise the queue's 2R-plane preload, short enough for
     * ~8 waves of blocks (2048 threads per SM). */
    long long slots = (long long)sms * (2048 / (TX * BY));
    long long want = (long long)nz * gx * gy / (8 * slots);
    int zc = (int)(want < 4 * R ? 4 * R : want > ZCHUNK ? ZCHUNK : want);
    dim3 blk(TX, BY), grd(gx, gy, (nz + zc - 1) / zc);
    k_tiled<R, BY, NY, PD><<<grd, blk, 0, st>>>(a, in, zc);
}

static cudaStream_t stream_of(const wave_sim *s) { return (cudaStream_t)s->stream; }

static bool box_empty(const Box &b)
{
    return b.hi[0] <= b.lo[0] || b.hi[1] <= b.lo[1] || b.hi[2] <= b.lo[2];
}

template <int R>
static int launch_step(wave_sim *s, bool cpml)
{
    const struct wave_layout *L = &s->L;
    cudaStream_t st = stream_of(s);
    KArgs a = kargs(s);
    PArgs m = pargs(s);
    bool any = s->slab_count[0] + s->slab_count[1] + s->slab_count[2] > 0;
    cpml = cpml && any;
    Box in;
    for (int ax = 0; ax < 3; ax++) {
        in.lo[ax] = cpml ? L->pml[2 * ax] : 0;
        in.hi[ax] = cpml ? L->npad[ax] - L->pml[2 * ax + 1] : L->npad[ax];
    }
    /* The CPML kernels (psi, then the layers) touch only the layers' q and memory and
     * read p: they run on a second stream beside the interior kernel (fork/join events),
     * so the latency-bound boundary work hides under the bandwidth-bound interior. */
    cudaStream_t main_st = st;
    const bool fork = cpml && cpml_overlap();
    if (fork) {
        CUDA_TRY(cudaEventRecord((cudaEvent_t)s->ev_fork, main_st));
        st = (cudaStream_t)s->aux_stream;
        CUDA_TRY(cudaStreamWaitEvent(st, (cudaEvent_t)s->ev_fork, 0));
    }
    if (cpml) {
        for (int ax = 0; ax < 3; ax++) {
            if (!s->slab_count[ax])
                continue;
            int n[3] = {L->npad[0], L->npad[1], L->npad[2]};
            n[ax] = L->pml[2 * ax] + L->pml[2 * ax + 1];
            dim3 blk(32, 8), grd((n[0] + 31) / 32, (n[1] + 7) / 8, n[2]);
            k_psi<R><<<grd, blk, 0, st>>>(a, m, ax, n[0], n[1], n[2]);
            CUDA_TRY_LAUNCH();
        }
    }
    if (cpml) {
        /* The layers as 3 disjoint groups, both faces of an axis in one launch: z layers
         * whole, y layers within the inner z range, x layers within inner y and z. */
        for (int ax = 2; ax >= 0; ax--) {
            int w = L->pml[2 * ax] + L->pml[2 * ax + 1];
            if (!w)
                continue;
            Box b;
            for (int q = 0; q < 3; q++) {
                if (q == ax) {
                    b.lo[q] = 0;
                    b.hi[q] = w;
                } else if (q > ax) {
                    b.lo[q] = in.lo[q];
                    b.hi[q] = in.hi[q];
                } else {
                    b.lo[q] = 0;
                    b.hi[q] = L->npad[q];
                }
            }
            if (box_empty(b))
                continue;
            dim3 blk(32, 8), grd((b.hi[0] - b.lo[0] + 31) / 32, (b.hi[1] - b.lo[1] + 7) / 8, b.hi[2] - b.lo[2]);
            k_pml<R><<<grd, blk, 0, st>>>(a, m, ax, b);
            CUDA_TRY_LAUNCH();
        }
    }
    if (fork) {
        CUDA_TRY(cudaEventRecord((cudaEvent_t)s->ev_join, st));
        st = main_st;
    }
    if (!box_empty(in)) {
        if (s->p.kernel == WAVE_KERNEL_NAIVE) {
            dim3 blk(32, 8), grd((in.hi[0] - in.lo[0] + 31) / 32, (in.hi[1] - in.lo[1] + 7) / 8,
                                 in.hi[2] - in.lo[2]);
            k_naive<R><<<grd, blk, 0, st>>>(a, in);
        } else {
            int sms = s->dev->sm_count > 0 ? s->dev->sm_count : 132;
            const bool d2 = prefetch_depth() == 2;
            switch (tile_shape(R)) {
            case TILE_16x1: d2 ? launch_tiled<R, 16, 1, 2>(in, a, sms, st) : launch_tiled<R, 16, 1, 1>(in, a, sms, st); break;
            case TILE_8x1: d2 ? launch_tiled<R, 8, 1, 2>(in, a, sms, st) : launch_tiled<R, 8, 1, 1>(in, a, sms, st); break;
            case TILE_8x2: d2 ? launch_tiled<R, 8, 2, 2>(in, a, sms, st) : launch_tiled<R, 8, 2, 1>(in, a, sms, st); break;
            default: d2 ? launch_tiled<R, 4, 4, 2>(in, a, sms, st) : launch_tiled<R, 4, 4, 1>(in, a, sms, st); break;
            }
        }
        CUDA_TRY_LAUNCH();
    }
    if (fork)
        CUDA_TRY(cudaStreamWaitEvent(st, (cudaEvent_t)s->ev_join, 0));
    if (s->p.free_surface) {
        long long plane = (long long)L->stride_z;
        k_free_surface<<<(unsigned)((plane + 255) / 256), 256, 0, st>>>(s->prev, plane, L->halo);
        CUDA_TRY_LAUNCH();
    }
    return 0;
}

extern "C" int wave_cu_step(struct wave_sim *s, bool cpml)
{
    switch (s->r) {
    case 1: return launch_step<1>(s, cpml);
    case 2: return launch_step<2>(s, cpml);
    case 3: return launch_step<3>(s, cpml);
    case 4: return launch_step<4>(s, cpml);
    case 5: return launch_step<5>(s, cpml);
    case 6: return launch_step<6>(s, cpml);
    case 7: return launch_step<7>(s, cpml);
    case 8: return launch_step<8>(s, cpml);
    }
    return err_set(-EINVAL, "wave: order %d not supported on CUDA", 2 * s->r);
}

/* ---- memory ------------------------------------------------------------------------------- */

static int cu_alloc(float **p, size_t count)
{
    *p = NULL;
    if (!count)
        return 0;
    cudaError_t e = cudaMalloc((void **)p, count * sizeof(float));
    if (e != cudaSuccess) {
        *p = NULL;
        (void)cudaGetLastError();
        return err_set(-ENOMEM, "wave: cudaMalloc of %.1f MiB failed: %s", count * 4.0 / 1048576.0,
                       cudaGetErrorName(e));
    }
    CUDA_TRY(cudaMemset(*p, 0, count * sizeof(float)));
    return 0;
}

extern "C" int wave_cu_alloc(struct wave_sim *s)
{
    int rc;
    cudaStream_t aux;
    cudaEvent_t e1, e2;
    CUDA_TRY(cudaStreamCreateWithFlags(&aux, cudaStreamNonBlocking));
    s->aux_stream = aux;
    CUDA_TRY(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
    s->ev_fork = e1;
    CUDA_TRY(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
    s->ev_join = e2;
    if ((rc = cu_alloc(&s->cur, s->L.count)) < 0 || (rc = cu_alloc(&s->prev, s->L.count)) < 0 ||
        (rc = cu_alloc(&s->vel, s->L.count)) < 0)
        return rc;
    for (int a = 0; a < 3; a++) {
        if ((rc = cu_alloc(&s->psi[a], s->slab_count[a])) < 0 ||
            (rc = cu_alloc(&s->zeta[a], s->slab_count[a])) < 0 ||
            (rc = cu_alloc(&s->pa[a], s->L.npad[a])) < 0 || (rc = cu_alloc(&s->pb[a], s->L.npad[a])) < 0)
            return rc;
        CUDA_TRY(cudaMemcpy(s->pa[a], s->ha[a], s->L.npad[a] * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_TRY(cudaMemcpy(s->pb[a], s->hb[a], s->L.npad[a] * sizeof(float), cudaMemcpyHostToDevice));
    }
    return 0;
}

extern "C" void wave_cu_free(struct wave_sim *s)
{
    cudaFree(s->cur);
    cudaFree(s->prev);
    cudaFree(s->vel);
    for (int a = 0; a < 3; a++) {
        cudaFree(s->psi[a]);
        cudaFree(s->zeta[a]);
        cudaFree(s->pa[a]);
        cudaFree(s->pb[a]);
    }
    cudaFree(s->scratch);
    if (s->ev_fork)
        cudaEventDestroy((cudaEvent_t)s->ev_fork);
    if (s->ev_join)
        cudaEventDestroy((cudaEvent_t)s->ev_join);
    if (s->aux_stream)
        cudaStreamDestroy((cudaStream_t)s->aux_stream);
}

extern "C" int wave_cu_memcpy(void *dst, const void *src, size_t bytes, int dir, void *stream)
{
    cudaMemcpyKind k = dir == 0 ? cudaMemcpyHostToDevice : dir == 1 ? cudaMemcpyDeviceToHost
                                                                    : cudaMemcpyDeviceToDevice;
    CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, k, (cudaStream_t)stream));
    return 0;
}

extern "C" int wave_cu_zero(void *p, size_t bytes, void *stream)
{
    CUDA_TRY(cudaMemsetAsync(p, 0, bytes, (cudaStream_t)stream));
    return 0;
}

extern "C" int wave_cu_sync(void *stream)
{
    CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream));
    return 0;
}

/* Device scratch of at least BYTES (grows; freed with the simulation). */
static int scratch(wave_sim *s, size_t bytes, void **out)
{
    if (s->scratch_bytes < bytes) {
        CUDA_TRY(cudaStreamSynchronize(stream_of(s)));
        cudaFree(s->scratch);
        s->scratch = NULL;
        s->scratch_bytes = 0;
        CUDA_TRY(cudaMalloc(&s->scratch, bytes));
        s->scratch_bytes = bytes;
    }
    *out = s->scratch;
    return 0;
}

/* ---- velocity ------------------------------------------------------------------------------ */

__global__ void k_vel(float *vel, const float *v, int n0, int n1, int n2, long long sy, long long sz,
                      int h, float dt2, bool to_field)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y, k = blockIdx.z;
    if (i >= n0 || j >= n1)
        return;
    long long c = (long long)(k + h) * sz + (long long)(j + h) * sy + (i + h);
    long long e = ((long long)k * n1 + j) * n0 + i;
    if (to_field)
        vel[c] = (float)((double)v[e] * v[e] * dt2);
    else
        ((float *)v)[e] = (float)(sqrt((double)vel[c] / dt2));
}

static int vel_io(wave_sim *s, float *v, bool on_device, bool to_field)
{
    const struct wave_layout *L = &s->L;
    size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
    float *dv = v;
    if (!on_device) {
        void *t;
        int rc = scratch(s, np * sizeof(float), &t);
        if (rc < 0)
            return rc;
        dv = (float *)t;
        if (to_field)
            CUDA_TRY(cudaMemcpyAsync(dv, v, np * sizeof(float), cudaMemcpyHostToDevice, stream_of(s)));
    }
    dim3 blk(32, 8), grd((L->npad[0] + 31) / 32, (L->npad[1] + 7) / 8, L->npad[2]);
    k_vel<<<grd, blk, 0, stream_of(s)>>>(s->vel, dv, L->npad[0], L->npad[1], L->npad[2],
                                        (long long)L->stride_y, (long long)L->stride_z, L->halo,
                                        (float)(s->p.dt * s->p.dt), to_field);
    CUDA_TRY_LAUNCH();
    if (!on_device) {
        if (!to_field)
            CUDA_TRY(cudaMemcpyAsync(v, dv, np * sizeof(float), cudaMemcpyDeviceToHost, stream_of(s)));
        CUDA_TRY(cudaStreamSynchronize(stream_of(s)));
    }
    return 0;
}

extern "C" int wave_cu_set_vel(struct wave_sim *s, const float *v, bool on_device)
{
    return vel_io(s, (float *)v, on_device, true);
}

extern "C" int wave_cu_get_vel(struct wave_sim *s, float *host) { return vel_io(s, host, false, false); }

/* ---- points ------------------------------------------------------------------------------- */

extern "C" int wave_cu_points_upload(struct wave_points *pts)
{
    size_t n = pts->n ? pts->n : 1;
    CUDA_TRY(cudaMalloc((void **)&pts->d_base, 3 * n * sizeof(int)));
    CUDA_TRY(cudaMalloc((void **)&pts->d_w, 3 * (size_t)pts->ns * n * sizeof(float)));
    CUDA_TRY(cudaMemcpy(pts->d_base, pts->base, 3 * pts->n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(pts->d_w, pts->w, 3 * (size_t)pts->ns * pts->n * sizeof(float), cudaMemcpyHostToDevice));
    return 0;
}

extern "C" void wave_cu_points_free(struct wave_points *pts)
{
    if (pts->d_base)
        cudaFree(pts->d_base);
    if (pts->d_w)
        cudaFree(pts->d_w);
    pts->d_base = NULL;
    pts->d_w = NULL;
}

/* One block per point, threads over its ns^3 support nodes; overlapping supports of
 * different points meet through atomicAdd. */
__global__ void k_inject(float *f, const float *vel, const int *base, const float *w, int ns,
                         long long sy, long long sz, const float *amps, long long stride, float scale,
                         bool phys, float dvinv, int n)
{
    int pt = blockIdx.x;
    if (pt >= n)
        return;
    float amp = amps[pt * stride] * scale;
    const int *b = base + 3 * pt;
    const float *wx = w + (size_t)3 * pt * ns, *wy = wx + ns, *wz = wy + ns;
    int nn = ns * ns * ns;
    for (int t = threadIdx.x; t < nn; t += blockDim.x) {
        int kx = t % ns, ky = t / ns % ns, kz = t / (ns * ns);
        long long c = (long long)(b[2] + kz) * sz + (long long)(b[1] + ky) * sy + (b[0] + kx);
        float v = amp * (wx[kx] * wy[ky] * wz[kz]);
        atomicAdd(&f[c], phys ? v * (vel[c] * dvinv) : v);
    }
}

__global__ void k_sample(const float *f, const int *base, const float *w, int ns, long long sy,
                         long long sz, float *out, long long stride, int n)
{
    __shared__ float red[128];
    int pt = blockIdx.x;
    if (pt >= n)
        return;
    const int *b = base + 3 * pt;
    const float *wx = w + (size_t)3 * pt * ns, *wy = wx + ns, *wz = wy + ns;
    int nn = ns * ns * ns;
    float sum = 0;
    for (int t = threadIdx.x; t < nn; t += blockDim.x) {
        int kx = t % ns, ky = t / ns % ns, kz = t / (ns * ns);
        long long c = (long long)(b[2] + kz) * sz + (long long)(b[1] + ky) * sy + (b[0] + kx);
        sum += wx[kx] * wy[ky] * wz[kz] * f[c];
    }
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o >>= 1) {
        if ((int)threadIdx.x < o)
            red[threadIdx.x] += red[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[pt * stride] = red[0];
}

extern "C" int wave_cu_inject(struct wave_sim *s, const struct wave_points *pts, const float *amps,
                              size_t stride, float scale, unsigned flags)
{
    if (!pts->n)
        return 0;
    const float *da = amps;
    long long dstride = (long long)stride;
    if (!(flags & WAVE_BUF_DEVICE)) {
        /* Gather the strided host amplitudes and stage them on the device. */
        void *t;
        int rc = scratch(s, pts->n * sizeof(float), &t);
        if (rc < 0)
            return rc;
        float *h = (float *)malloc(pts->n * sizeof(float));
        if (!h)
            return err_set(-ENOMEM, "wave_inject: out of memory");
        for (size_t i = 0; i < pts->n; i++)
            h[i] = amps[i * stride];
        cudaError_t e = cudaMemcpyAsync(t, h, pts->n * sizeof(float), cudaMemcpyHostToDevice, stream_of(s));
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(stream_of(s)); /* H is freed below */
        free(h);
        if (e != cudaSuccess)
            return CUDA_ERR("cudaMemcpyAsync(amplitudes)", e);
        da = (const float *)t;
        dstride = 1;
    }
    const struct wave_layout *L = &s->L;
    float dvinv = (float)(1.0 / (s->p.d[0] * s->p.d[1] * s->p.d[2]));
    k_inject<<<(unsigned)pts->n, 128, 0, stream_of(s)>>>(s->cur, s->vel, pts->d_base, pts->d_w, pts->ns,
                                                         (long long)L->stride_y, (long long)L->stride_z, da,
                                                         dstride, scale, (flags & WAVE_INJECT_PHYSICAL) != 0,
                                                         dvinv, (int)pts->n);
    CUDA_TRY_LAUNCH();
    return 0;
}

extern "C" int wave_cu_sample(struct wave_sim *s, const struct wave_points *pts, float *out,
                              size_t stride, unsigned flags)
{
    if (!pts->n)
        return 0;
    const struct wave_layout *L = &s->L;
    float *dout = out;
    long long dstride = (long long)stride;
    if (!(flags & WAVE_BUF_DEVICE)) {
        void *t;
        int rc = scratch(s, pts->n * sizeof(float), &t);
        if (rc < 0)
            return rc;
        dout = (float *)t;
        dstride = 1;
    }
    k_sample<<<(unsigned)pts->n, 128, 0, stream_of(s)>>>(s->cur, pts->d_base, pts->d_w, pts->ns,
                                                         (long long)L->stride_y, (long long)L->stride_z,
                                                         dout, dstride, (int)pts->n);
    CUDA_TRY_LAUNCH();
    if (!(flags & WAVE_BUF_DEVICE)) {
        float *h = (float *)malloc(pts->n * sizeof(float));
        if (!h)
            return err_set(-ENOMEM, "wave_sample: out of memory");
        cudaError_t e = cudaMemcpyAsync(h, dout, pts->n * sizeof(float), cudaMemcpyDeviceToHost, stream_of(s));
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(stream_of(s));
        if (e != cudaSuccess) {
            free(h);
            return CUDA_ERR("cudaMemcpyAsync(samples)", e);
        }
        for (size_t i = 0; i < pts->n; i++)
            out[i * stride] = h[i];
        free(h);
    }
    return 0;
}

/* ---- strip ------------------------------------------------------------------------------------ */

struct Off3 {
    int v[3];
};

__global__ void k_strip3(float *f, float *buf, Box b, Off3 off, long long sy, long long sz, bool save)
{
    int n0 = b.hi[0] - b.lo[0], n1 = b.hi[1] - b.lo[1], n2 = b.hi[2] - b.lo[2];
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (long long)n0 * n1 * n2)
        return;
    int i = (int)(e % n0), j = (int)(e / n0 % n1), k = (int)(e / n0 / n1);
    long long c = (long long)(k + b.lo[2] + off.v[2]) * sz + (long long)(j + b.lo[1] + off.v[1]) * sy +
                  (i + b.lo[0] + off.v[0]);
    if (save)
        buf[e] = f[c];
    else
        f[c] = buf[e];
}

extern "C" int wave_cu_strip(struct wave_sim *s, float *buf, bool on_device, bool save)
{
    size_t cnt = wave_strip_count(s);
    if (!cnt)
        return 0;
    float *db = buf;
    if (!on_device) {
        void *t;
        int rc = scratch(s, cnt * sizeof(float), &t);
        if (rc < 0)
            return rc;
        db = (float *)t;
        if (!save)
            CUDA_TRY(cudaMemcpyAsync(db, buf, cnt * sizeof(float), cudaMemcpyHostToDevice, stream_of(s)));
    }
    int lo[6][3], hi[6][3];
    wave_strip_boxes(s, lo, hi);
    Off3 off = {{s->L.off[0], s->L.off[1], s->L.off[2]}};
    size_t at = 0;
    for (int b = 0; b < 6; b++) {
        Box bx;
        for (int q = 0; q < 3; q++) {
            bx.lo[q] = lo[b][q];
            bx.hi[q] = hi[b][q];
        }
        if (box_empty(bx))
            continue;
        size_t n = (size_t)(hi[b][0] - lo[b][0]) * (hi[b][1] - lo[b][1]) * (hi[b][2] - lo[b][2]);
        k_strip3<<<(unsigned)((n + 255) / 256), 256, 0, stream_of(s)>>>(
            s->cur, db + at, bx, off, (long long)s->L.stride_y, (long long)s->L.stride_z, save);
        CUDA_TRY_LAUNCH();
        at += n;
    }
    if (!on_device) {
        if (save)
            CUDA_TRY(cudaMemcpyAsync(buf, db, cnt * sizeof(float), cudaMemcpyDeviceToHost, stream_of(s)));
        CUDA_TRY(cudaStreamSynchronize(stream_of(s)));
    }
    return 0;
}

/* ---- benchmark helper ---------------------------------------------------------------------------- */

extern "C" int wave_copy_bandwidth(const struct sl_device *dev, size_t bytes, int reps, double *gbs)
{
    *gbs = 0;
    if (dev->kind != SL_DEVICE_CUDA)
        return err_set(-ENOTSUP, "wave_copy_bandwidth: not a CUDA device");
    void *a = NULL, *b = NULL;
    CUDA_TRY(cudaMalloc(&a, bytes));
    cudaError_t e = cudaMalloc(&b, bytes);
    if (e != cudaSuccess) {
        cudaFree(a);
        return CUDA_ERR("cudaMalloc", e);
    }
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    cudaMemset(a, 1, bytes);
    cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice); /* warm up */
    cudaEventRecord(t0);
    for (int r = 0; r < reps; r++)
        cudaMemcpyAsync(r % 2 ? a : b, r % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(t1);
    e = cudaEventSynchronize(t1);
    float ms = 0;
    cudaEventElapsedTime(&ms, t0, t1);
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    cudaFree(a);
    cudaFree(b);
    if (e != cudaSuccess)
        return CUDA_ERR("copy", e);
    *gbs = 2.0 * (double)bytes * reps / (ms * 1e-3) / 1e9;
    return 0;
}
