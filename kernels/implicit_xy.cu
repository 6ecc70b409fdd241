/* implicit_xy — the implicit operator's x and y sweeps in one kernel (tuning implicit_yz
 * = xyfused; kernels/wave_tuning.h): an x-y plane of the field goes through the shared
 * memory of a thread-block cluster (Hopper's distributed shared memory) once, the x and
 * y solutions are summed in the block and written once (lap = gx + gy), and the z sweep
 * (implicit_scan.cu) adds gz and updates q.  Bytes per point (3D, no CPML): p in, lap out
 * (8), then z's 20: 28 instead of the three sweeps' 40.  Same arithmetic as the CPU
 * reference (kernels/implicit_step.c) except the rounding of the chunks' carries.
 *
 * Why a cluster: a line of 512 points in each of two directions means a 512 x 512 plane
 * (1 MB) in one place, more than a block's 227 KB; a cluster of CL = ceil(ny / 32) <= 16
 * blocks holds one, each block 32 y rows of the plane (plus K halo rows each side, read
 * again from L2) and all x.
 *   - y: a thread per x column holds its 32 rows in registers (a chunk of the y line);
 *     each block's chunk maps (implicit_cuda.h) go to its shared memory, and after a
 *     cluster barrier every thread reads the maps of the same column in the other blocks
 *     (distributed shared memory) and composes its carry.
 *   - x: a warp per x line of the block's rows, 16 rows a lane, linked by warp scans (as
 *     implicit_scan.cu's x regs); gx written back over the line's field row (which only
 *     that warp reads once y has its right-hand sides).
 *   - then lap = gx + gy, plus each axis's CPML terms, coalesced along x.
 * One block per SM (about 100 KB of shared memory and 512 threads of up to 128
 * registers); x lines of up to 512 rows and y lines of up to 512 (16 blocks: a
 * non-portable cluster size, which an H100 runs); interface-value passes, 2D, longer
 * lines, devices before sm_90 and a GPU that cannot place such a cluster run the
 * sequential sweeps instead (implicit_cuda.cu). */
#include "kernels/implicit_cuda.h"

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#define XY_YT 32      /* y rows per block */
#define XY_CL_MAX 16  /* blocks per cluster */
#define XY_THREADS 512
#define XY_WARPS (XY_THREADS / 32)
#define XY_XCH 16     /* x rows per lane */

/* Position of x (a field column + K, or a solution row) in a row of the plane: one pad
 * float every 16, so that lane t's rows 16 t + l fall in 32 different banks. */
__host__ __device__ __forceinline__ int xy_pos(int x) { return x + (x >> 4); }

template <int K, int R>
__global__ void __launch_bounds__(XY_THREADS, 1) k_sweep_xy(IArgs A, int mx, int my, int pitch)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ float sh[];
    cg::cluster_group cl = cg::this_cluster();
    const int rank = (int)cl.block_rank(), ncl = (int)cl.num_blocks();
    float *P = sh;                                /* rows -K .. XY_YT + K - 1 of the plane */
    float *yF = P + (XY_YT + 2 * K) * pitch;      /* forward maps: L [0, 512), P [512, 1024) */
    float *yB = yF + 2 * XY_THREADS;              /* backward maps */
    float *xinv = yB + 2 * XY_THREADS, *xcp = xinv + xy_pos(XY_THREADS) + 1;
    const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
    const int k = A.blo[2] + (int)blockIdx.y;
    const int y0 = rank * XY_YT;                  /* the block's first y row (padded) */
    const int ny = max(0, min(XY_YT, my - y0));
    const float b = A.b;
    /* the plane rows y0 - K .. y0 + ny + K - 1, columns -K .. mx + K - 1 */
    const int w = mx + 2 * K;
#pragma unroll 4
    for (int t = 0; t < XY_YT + 2 * K; t++) {
        if (t >= ny + 2 * K)
            break;
        const float *f = A.p + idx(A, -K, y0 - K + t, k);
        for (int x = tid; x < w; x += XY_THREADS)
            P[t * pitch + xy_pos(x)] = f[x];
    }
    for (int i = tid; i < mx; i += XY_THREADS) {
        xinv[xy_pos(i)] = A.inv[i];
        xcp[xy_pos(i)] = A.cp[i];
    }
    __syncthreads();
    /* y, pass 1: column tid's right-hand sides (kept) and its chunk's forward map */
    const int col = tid;
    const int nyc = col < mx ? ny : 0;            /* rows of this thread's y chunk */
    float v[XY_YT], L, Pm;
    {
        float fw[XY_YT + 2 * K];
#pragma unroll
        for (int l = 0; l < XY_YT + 2 * K; l++)
            fw[l] = l < nyc + 2 * K ? P[l * pitch + xy_pos(col + K)] : 0.0f;
        chunk_forward_map<XY_YT, K>(fw, A.c[1], b, nyc, -1, -1, 0.0f, 0.0f, Sh{A.inv + y0}, v, L, Pm);
    }
    yF[col] = L;
    yF[XY_THREADS + col] = Pm;
    __syncthreads(); /* every column has its right-hand sides: the rows are x's now */
    /* x: warp wid the lines wid, wid + 16 of the block's rows; gx over the line's row */
    {
        const int i0 = lane * XY_XCH;
        const int n = max(0, min(XY_XCH, mx - i0));
        const Sh iv{xinv + xy_pos(i0)}, cq{xcp + xy_pos(i0)}; /* i0 a multiple of 16: rows i0..i0+15 contiguous */
        for (int t = wid; t < ny; t += XY_WARPS) {
            float *F = P + (t + K) * pitch;
            float fw[XY_XCH + 2 * K], xv[XY_XCH], xL, xP;
#pragma unroll
            for (int l = 0; l < XY_XCH + 2 * K; l++)
                fw[l] = l < n + 2 * K ? F[17 * lane + l + (l >> 4)] : 0.0f; /* xy_pos(i0 + l) */
            chunk_forward_map<XY_XCH, K>(fw, A.c[0], b, n, -1, -1, 0.0f, 0.0f, iv, xv, xL, xP);
            chunk_forward<XY_XCH>(xv, b, n, iv, warp_carry<true>(xL, xP, lane));
            chunk_backward_map<XY_XCH>(xv, n, cq, xL, xP);
            chunk_backward<XY_XCH>(xv, n, cq, warp_carry<false>(xL, xP, lane));
            __syncwarp(); /* the row's field is read */
#pragma unroll
            for (int u = 0; u < XY_XCH; u++)
                if (u < n)
                    F[xy_pos(K + i0 + u)] = xv[u]; /* gx of column i0 + u where its field was */
            __syncwarp();
        }
    }
    cl.sync(); /* the forward maps of every block, and this block's gx */
    /* y: the carry into this chunk, the maps of the blocks before composed in order */
    float d = 0;
    {
        float rl[XY_CL_MAX], rp[XY_CL_MAX];
#pragma unroll
        for (int r = 0; r < XY_CL_MAX; r++)
            if (r < rank) {
                const float *o = cl.map_shared_rank(yF, r);
                rl[r] = o[col];
                rp[r] = o[XY_THREADS + col];
            }
#pragma unroll
        for (int r = 0; r < XY_CL_MAX; r++)
            if (r < rank)
                d = rl[r] + rp[r] * d;
    }
    const Sh yiv{A.inv + y0}, ycq{A.cp + y0};
    chunk_forward<XY_YT>(v, b, nyc, yiv, d);
    chunk_backward_map<XY_YT>(v, nyc, ycq, L, Pm);
    yB[col] = L;
    yB[XY_THREADS + col] = Pm;
    cl.sync(); /* the backward maps */
    float g = 0;
    {
        float rl[XY_CL_MAX], rq[XY_CL_MAX];
#pragma unroll
        for (int r = 0; r < XY_CL_MAX; r++)
            if (r > rank && r < ncl) {
                const float *o = cl.map_shared_rank(yB, r);
                rl[r] = o[col];
                rq[r] = o[XY_THREADS + col];
            }
#pragma unroll
        for (int r = XY_CL_MAX - 1; r >= 0; r--)
            if (r > rank && r < ncl)
                g = rl[r] + rq[r] * g;
    }
    cl.barrier_arrive(); /* this block reads no other block's memory from here on */
    chunk_backward<XY_YT>(v, nyc, ycq, g);
    /* lap = gx + gy over the box's rows of this block, x along the threads */
    if (col >= A.blo[0] && col < A.bhi[0]) {
#pragma unroll
        for (int t = 0; t < XY_YT; t++) {
            const int j = y0 + t;
            if (t >= nyc || j < A.blo[1] || j >= A.bhi[1])
                continue;
            float gx = P[(t + K) * pitch + xy_pos(col + K)], gy = v[t];
            if (A.cpml) {
                gx = cpml_term<0, R>(A, col, j, k, gx);
                gy = cpml_term<1, R>(A, col, j, k, gy);
            }
            A.lap[idx(A, col, j, k)] = gx + gy;
        }
    }
    cl.barrier_wait(); /* no block leaves while another may read its maps */
#endif
}

int implicit_cu_sweep_xy(const wave_sim *s, const IArgs &A, cudaStream_t st)
{
    if (wave_is_2d(s) || A.ifc || A.ifc_out)
        return -ENOTSUP;
    int r0x, r1x, r0y, r1y;
    implicit_cu_rows(s, 0, false, &r0x, &r1x);
    implicit_cu_rows(s, 1, false, &r0y, &r1y);
    const int mx = r1x - r0x, my = r1y - r0y, nz = A.bhi[2] - A.blo[2];
    const int ncl = (my + XY_YT - 1) / XY_YT;
    if (mx > XY_THREADS || ncl > XY_CL_MAX || r0x != 0 || r0y != 0 || nz <= 0 || s->imp->xy_ok < 0)
        return -ENOTSUP;
    const int K = s->imp->K;
    const int pitch = xy_pos(mx + 2 * K - 1) + 1;
    const size_t shmem =
        ((size_t)(XY_YT + 2 * K) * pitch + 4 * XY_THREADS + 2 * (size_t)(xy_pos(XY_THREADS) + 1)) * sizeof(float);
    return with_r(s, [&](auto kk) {
        constexpr int KK = decltype(kk)::value;
        auto kern = k_sweep_xy<KK, KK>;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(ncl, nz);
        cfg.blockDim = dim3(XY_THREADS);
        cfg.dynamicSmemBytes = shmem;
        cfg.stream = st;
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = ncl;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        if (s->imp->xy_ok == 0) {
            /* once: can this device run it (sm_90, the shared memory, the cluster size)? */
            int dev = 0, major = 0, nact = 0;
            CUDA_TRY(cudaGetDevice(&dev));
            CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
            bool ok = major >= 9 && shmem <= (size_t)s->imp->smem_optin;
            if (ok && (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem) !=
                           cudaSuccess ||
                       cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess ||
                       cudaOccupancyMaxActiveClusters(&nact, kern, &cfg) != cudaSuccess || nact < 1))
                ok = false;
            (void)cudaGetLastError(); /* a refusal above is an answer, not an error */
            s->imp->xy_ok = ok ? 1 : -1;
            if (!ok)
                return -ENOTSUP;
        }
        CUDA_TRY(cudaLaunchKernelEx(&cfg, kern, A, mx, my, pitch));
        CUDA_TRY_LAUNCH();
        return 0;
    });
}
