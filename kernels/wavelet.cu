/* wavelet.cu — the CUDA twin of wavelet_resampler_apply (kernels/wavelet.c is the
 * reference): a thread an output sample, the same weights (uploaded once) summed in the
 * same order in double.  Why: the model job's 10 000 traces resampled on the 16 cores of
 * the H100 machine took 0.05-0.07 s after a GPU shot of ~0.2 s, plus their download at
 * the simulation's rate; here only the resampled traces come down. */
#include "kernels/cuda_check.h"
#include "kernels/wavelet.h"

#include <stdlib.h>

struct resampler_cuda {
    long long *k0;
    int *nk;
    double *w;
};

extern "C" void wavelet_cu_resampler_free(struct wavelet_resampler *r)
{
    struct resampler_cuda *c = (struct resampler_cuda *)r->cu;
    if (!c)
        return;
    cudaFree(c->k0);
    cudaFree(c->nk);
    cudaFree(c->w);
    free(c);
    r->cu = NULL;
}

static int upload(struct wavelet_resampler *r)
{
    struct resampler_cuda *c = (struct resampler_cuda *)calloc(1, sizeof *c);
    long long *k0 = (long long *)malloc((r->n_out ? r->n_out : 1) * sizeof *k0);
    if (!c || !k0) {
        free(c);
        free(k0);
        return err_set(-ENOMEM, "resampling weights on the GPU: out of memory");
    }
    r->cu = c;
    for (size_t i = 0; i < r->n_out; i++)
        k0[i] = r->k0[i];
    const size_t no = r->n_out ? r->n_out : 1;
    int rc = 0;
    CUDA_CHECK_INTO(rc, cudaMalloc((void **)&c->k0, no * sizeof(long long)));
    if (rc == 0)
        CUDA_CHECK_INTO(rc, cudaMalloc((void **)&c->nk, no * sizeof(int)));
    if (rc == 0)
        CUDA_CHECK_INTO(rc, cudaMalloc((void **)&c->w, no * (size_t)r->taps * sizeof(double)));
    if (rc == 0)
        CUDA_CHECK_INTO(rc, cudaMemcpy(c->k0, k0, r->n_out * sizeof(long long), cudaMemcpyHostToDevice));
    if (rc == 0)
        CUDA_CHECK_INTO(rc, cudaMemcpy(c->nk, r->nk, r->n_out * sizeof(int), cudaMemcpyHostToDevice));
    if (rc == 0)
        CUDA_CHECK_INTO(rc, cudaMemcpy(c->w, r->w, r->n_out * (size_t)r->taps * sizeof(double), cudaMemcpyHostToDevice));
    free(k0);
    if (rc < 0)
        wavelet_cu_resampler_free(r);
    return rc;
}

__global__ void k_resample(const float *in, long long in_stride, float *out, long long out_stride, long long n_out,
                           int ntr, const long long *k0, const int *nk, const double *w, int taps, double fc)
{
    const long long total = (long long)ntr * n_out;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long t = i / n_out, o = i - t * n_out;
        const double *wo = w + o * taps;
        const float *x = in + t * in_stride + k0[o];
        double sum = 0;
        for (int j = 0; j < nk[o]; j++)
            sum += x[j] * fc * wo[j]; /* wavelet_resampler_apply's order */
        out[t * out_stride + o] = (float)sum;
    }
}

extern "C" int wavelet_cu_resample(struct wavelet_resampler *r, const float *in, size_t in_stride, float *out,
                                   size_t out_stride, size_t ntr)
{
    if (!ntr || !r->n_out)
        return 0;
    if (!r->cu) {
        int rc = upload(r);
        if (rc < 0)
            return rc;
    }
    const struct resampler_cuda *c = (const struct resampler_cuda *)r->cu;
    /* traces of a launch: the grid's index stays well inside an int of blocks */
    const size_t per = (size_t)1 << 24;
    for (size_t t0 = 0; t0 < ntr;) {
        size_t nb = per / r->n_out;
        if (nb < 1)
            nb = 1;
        if (nb > ntr - t0)
            nb = ntr - t0;
        const long long total = (long long)nb * (long long)r->n_out;
        const unsigned grid = (unsigned)((total + 255) / 256 > 65535 ? 65535 : (total + 255) / 256);
        k_resample<<<grid, 256>>>(in + t0 * in_stride, (long long)in_stride, out + t0 * out_stride,
                                  (long long)out_stride, (long long)r->n_out, (int)nb, c->k0, c->nk, c->w, r->taps,
                                  r->fc);
        CUDA_TRY_LAUNCH();
        t0 += nb;
    }
    CUDA_TRY(cudaDeviceSynchronize());
    return 0;
}
