/* random_boundary.cu — the CUDA twin of random_boundary_apply: the random layers of
 * RTM's source simulation built where the velocity lives, instead of a round trip of
 * the padded model through host memory (0.26-0.28 s of a 400 x 400 x 200 shot's setup
 * on the H100).  The per-cell arithmetic is rb_cell in random_boundary.h, shared with
 * the CPU loop. */
#include "kernels/random_boundary.h"

#include "kernels/cuda_check.h"

struct RbGrid {
    int npad[3], n[3], pml[6];
};

__global__ void k_random_boundary(struct random_boundary rb, RbGrid g, uint64_t shot_id, double vhi, float *v)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
    if (x >= g.npad[0] || y >= g.npad[1])
        return;
    rb_cell(&rb, g.npad, g.n, g.pml, shot_id, vhi, x, y, z, v);
}

extern "C" int random_boundary_apply_cuda(const struct random_boundary *rb, const int npad[3], const int n[3],
                                          const int pml[6], uint64_t shot_id, float *v, void *stream)
{
    int rc = random_boundary_check(rb, npad, n, pml);
    if (rc < 0)
        return rc;
    RbGrid g;
    for (int a = 0; a < 3; a++) {
        g.npad[a] = npad[a];
        g.n[a] = n[a];
    }
    for (int f = 0; f < 6; f++)
        g.pml[f] = pml[f];
    cudaStream_t st = (cudaStream_t)stream;
    dim3 blk(32, 8), grd((npad[0] + 31) / 32, (npad[1] + 7) / 8, npad[2]);
    k_random_boundary<<<grd, blk, 0, st>>>(*rb, g, shot_id, 0.99 * rb->vstable, v);
    CUDA_TRY_LAUNCH();
    return 0;
}
