/* cf — CUDA twin of the characteristic functions: one thread per channel runs the
 * same cf_step() as the CPU reference over the block (the functions are recursive in
 * time, so channels are the parallel axis; this costs little next to the stack). */
#include <cuda_runtime.h>

#include "kernels/cf.h"
#include "kernels/cuda_check.h"

__global__ void cf_kernel(struct cf_params p, const double *coef, int nch, int n, const float *in,
                          size_t in_stride, float *out, size_t out_stride, double *state)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= nch)
        return;
    double *s = state + (size_t)c * cf_state_len(&p);
    const float *x = in + (size_t)c * in_stride;
    float *y = out + (size_t)c * out_stride;
    for (int i = 0; i < n; i++)
        y[i] = cf_step(&p, coef, s, x[i]);
}

extern "C" int cf_run_cuda(const struct cf_params *p, const double *coef_dev, int nch, int n,
                           const float *in, size_t in_stride, float *out, size_t out_stride,
                           double *state, void *stream)
{
    if (nch <= 0 || n <= 0)
        return 0;
    struct cf_params q = *p;
    q.coef = NULL;
    q.coef_own = NULL;
    int bs = 64;
    cf_kernel<<<(nch + bs - 1) / bs, bs, 0, (cudaStream_t)stream>>>(q, coef_dev, nch, n, in, in_stride,
                                                                    out, out_stride, state);
    CUDA_TRY_LAUNCH();
    return 0;
}

__global__ void combine_kernel(int nrow, int n, const int *rowch, const float *ch, size_t ch_stride,
                               float *rows, size_t row_stride, int log_out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
    if (i < n)
        rows[(size_t)r * row_stride + i] = cf_combine_one(rowch + (size_t)r * CF_MAXC, ch, ch_stride, i, log_out);
}

extern "C" int cf_combine_cuda(int nrow, int n, const int *rowch_dev, const float *ch, size_t ch_stride,
                               float *rows, size_t row_stride, int log_out, void *stream)
{
    if (nrow <= 0 || n <= 0)
        return 0;
    dim3 grid((unsigned)((n + 255) / 256), (unsigned)nrow);
    combine_kernel<<<grid, 256, 0, (cudaStream_t)stream>>>(nrow, n, rowch_dev, ch, ch_stride, rows, row_stride,
                                                           log_out);
    CUDA_TRY_LAUNCH();
    return 0;
}
