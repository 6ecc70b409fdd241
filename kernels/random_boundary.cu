/* random_boundary.cu — the CUDA twin of random_boundary_apply_in: the random layers of
 * RTM's source simulation built where the velocity lives, instead of a round trip of
 * the padded model through host memory (0.26-0.28 s of a 400 x 400 x 200 shot's setup
 * on the H100).  The per-cell arithmetic is rb_cell_in in random_boundary.h, shared with
 * the CPU loop. */
#include "kernels/random_boundary.h"

#include "kernels/cuda_check.h"

struct RbDims {
    int npad[3];
};

__global__ void k_random_boundary(struct random_boundary rb, struct rb_frame g, RbDims l, uint64_t shot_id,
                                  double vhi, float *v)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
    if (x >= l.npad[0] || y >= l.npad[1])
        return;
    rb_cell_in(&rb, &g, l.npad, shot_id, vhi, x, y, z, v);
}

extern "C" int random_boundary_apply_cuda(const struct random_boundary *rb, const struct rb_frame *g,
                                          const int npad[3], const int n[3], const int pml[6], uint64_t shot_id,
                                          float *v, void *stream)
{
    int rc = random_boundary_check_in(rb, g, npad, n, pml);
    if (rc < 0)
        return rc;
    RbDims l;
    for (int a = 0; a < 3; a++)
        l.npad[a] = npad[a];
    cudaStream_t st = (cudaStream_t)stream;
    dim3 blk(32, 8), grd((npad[0] + 31) / 32, (npad[1] + 7) / 8, npad[2]);
    k_random_boundary<<<grd, blk, 0, st>>>(*rb, *g, l, shot_id, 0.99 * rb->vstable, v);
    CUDA_TRY_LAUNCH();
    return 0;
}
