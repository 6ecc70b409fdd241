/* wave_interior — the interior kernels of the CUDA propagator: the update
 *   q = 2p - q + v^2 dt^2 lap p   (plain Laplacian, no CPML terms)
 * over a box of the padded grid.  Naive (one thread per point) and tiled (k_ring,
 * kernels/wave_ring.cuh: Micikevicius 2009 2.5D, an x-y tile of p in shared memory fed
 * by a cp.async ring of planes and a register queue of 2R+1 values along z), in the
 * tile and depth measured fastest for each order.  Which one runs: the plan
 * (wave_plan.cu); the other tiled variants are in tools/wave_research.cu.  2D grids
 * (wave_is_2d) run instantiations without the y terms. */
#include "kernels/wave_ring.cuh"

/* ---- interior: naive ------------------------------------------------------------------ */

/* One thread per point.  3D (Y): threads over x and y, blocks over z.  2D (!Y): no y
 * term, threads over x and z (the one y row). */
template <int R, bool Y>
__global__ void k_naive(KArgs a, Box b)
{
    int i = b.lo[0] + blockIdx.x * blockDim.x + threadIdx.x;
    if constexpr (Y) {
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
    } else {
        int k = b.lo[2] + blockIdx.y * blockDim.y + threadIdx.y;
        if (i >= b.hi[0] || k >= b.hi[2])
            return;
        long long c = (long long)(k + a.h) * a.sz + (long long)(b.lo[1] + a.hy) * a.sy + (i + a.h);
        const float *p = a.p;
        float lap = (a.c2[0][0] + a.c2[2][0]) * p[c];
#pragma unroll
        for (int l = 1; l <= R; l++)
            lap += a.c2[0][l] * (p[c + l] + p[c - l]) + a.c2[2][l] * (p[c + l * a.sz] + p[c - l * a.sz]);
        a.q[c] = 2.0f * p[c] - a.q[c] + a.vel[c] * lap;
    }
}

/* ---- launchers ----------------------------------------------------------------------- */

/* The interior update over box IN with the variant of the plan: the naive kernel, the
 * ring in this order's default tile and depth (the one ring instantiation per order and
 * dimension the library holds; in 2D a single row RING2D_W wide), or a research variant
 * through its hook. */
template <int R, bool Y>
static int launch_interior(const wave_sim *s, const WavePlan &pl, const Box &in, const KArgs &a, cudaStream_t st)
{
    if (pl.naive) {
        const int bx = pl.bx, by = pl.by;
        const int gx = (in.hi[0] - in.lo[0] + bx - 1) / bx;
        dim3 blk(bx, by);
        dim3 grd = Y ? dim3(gx, (in.hi[1] - in.lo[1] + by - 1) / by, in.hi[2] - in.lo[2])
                     : dim3(gx, (in.hi[2] - in.lo[2] + by - 1) / by, 1);
        k_naive<R, Y><<<grd, blk, 0, st>>>(a, in);
        CUDA_TRY_LAUNCH();
        return 0;
    }
    if (pl.research)
        return wave_cu_research()->interior(s, pl, in, st);
    constexpr int T = ring_default_tile(R), D = ring_default_depth(R);
    if constexpr (Y)
        return launch_ring<R, tile_by(T), tile_ny(T), D>(in, a, s, st);
    else
        return launch_ring<R, 1, 1, D, false, RING2D_W>(in, a, s, st);
}

int wave_cu_interior(const wave_sim *s, const WavePlan &pl, const Box &in, cudaStream_t st)
{
    const KArgs a = kargs(s);
    return with_r_y(s, [&](auto r, auto y) {
        return launch_interior<decltype(r)::value, decltype(y)::value>(s, pl, in, a, st);
    });
}
