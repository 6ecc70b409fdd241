/* time_dispersion.cu — the CUDA twin of tdt_apply (kernels/time_dispersion.c is the
 * reference): the same plan (lengths, centring, Lagrange tables, cut), the FFTs by cuFFT
 * in double precision, a batch of traces at a time:
 *   k_pack     the signals, centred and zero-padded to M (the reference's rin);
 *   D2Z        cuFFT, batched (FFTW's r2c);
 *   k_energy   each signal's energy and the part past the cut (the reference's rule);
 *   k_warp     the spectrum at the warped frequencies: 16-point Lagrange over the
 *              centred bins, mirrored as extend() does, times the phase;
 *   Z2D        cuFFT, batched (FFTW's c2r);
 *   k_unpack   scaled by 1 / L and cut to the signal's N samples.
 * Why: a model job's 10 000 traces took 0.03-0.05 s of FFTW on the 16 cores of the H100
 * machine after a GPU shot of ~0.2 s, and their download and resampling as much again
 * (docs/time-dispersion.md); here they never leave the device until resampled. */
#include <cufft.h>

#include "kernels/cuda_check.h"
#include "kernels/time_dispersion_internal.h"

#include <stdlib.h>

/* Traces a batch: the scratch is ~4 x 16 x M bytes a trace (69 KB at 1029 samples); a
 * batch keeps it under TDT_CU_BYTES. */
#define TDT_CU_BYTES ((size_t)256 << 20)
#define TDT_CU_BATCH_MAX 1024

struct tdt_cuda {
    int batch;
    cufftHandle r2c, c2r;
    bool have_r2c, have_c2r;
    double *rin, *rout;
    cufftDoubleComplex *cin, *cout;
    double *e;             /* batch x 2: energy, out-of-band part */
    /* the two directions' tables (warp_init's) */
    long long *j0[2];
    double *w[2], *phase[2];
    unsigned char *valid[2];
};

#define CUFFT_TRY(call)                                                                             \
    do {                                                                                            \
        cufftResult cufft_r_ = (call);                                                              \
        if (cufft_r_ != CUFFT_SUCCESS)                                                              \
            return err_set(-EIO, "cuFFT %s failed: error %d at %s:%d", #call, (int)cufft_r_, __FILE__, \
                           __LINE__);                                                               \
    } while (0)

extern "C" void tdt_cu_free(struct tdt *t)
{
    struct tdt_cuda *c = t->cu;
    if (!c)
        return;
    if (c->have_r2c)
        cufftDestroy(c->r2c);
    if (c->have_c2r)
        cufftDestroy(c->c2r);
    cudaFree(c->rin);
    cudaFree(c->rout);
    cudaFree(c->cin);
    cudaFree(c->cout);
    cudaFree(c->e);
    for (int d = 0; d < 2; d++) {
        cudaFree(c->j0[d]);
        cudaFree(c->w[d]);
        cudaFree(c->phase[d]);
        cudaFree(c->valid[d]);
    }
    free(c);
    t->cu = NULL;
}

static int cu_setup(struct tdt *t)
{
    struct tdt_cuda *c = (struct tdt_cuda *)calloc(1, sizeof *c);
    if (!c)
        return err_set(-ENOMEM, "time-dispersion transform (CUDA): out of memory");
    t->cu = c;
    const size_t mk = t->m / 2 + 1, lk = t->l / 2 + 1;
    const size_t per = t->m * 8 + mk * 16 + lk * 16 + t->l * 8;
    size_t b = TDT_CU_BYTES / per;
    c->batch = (int)(b < 1 ? 1 : b > TDT_CU_BATCH_MAX ? TDT_CU_BATCH_MAX : b);
    CUDA_TRY(cudaMalloc((void **)&c->rin, (size_t)c->batch * t->m * sizeof(double)));
    CUDA_TRY(cudaMalloc((void **)&c->rout, (size_t)c->batch * t->l * sizeof(double)));
    CUDA_TRY(cudaMalloc((void **)&c->cin, (size_t)c->batch * mk * sizeof(cufftDoubleComplex)));
    CUDA_TRY(cudaMalloc((void **)&c->cout, (size_t)c->batch * lk * sizeof(cufftDoubleComplex)));
    CUDA_TRY(cudaMalloc((void **)&c->e, (size_t)c->batch * 2 * sizeof(double)));
    int m = (int)t->m, l = (int)t->l;
    CUFFT_TRY(cufftPlanMany(&c->r2c, 1, &m, NULL, 1, m, NULL, 1, (int)mk, CUFFT_D2Z, c->batch));
    c->have_r2c = true;
    CUFFT_TRY(cufftPlanMany(&c->c2r, 1, &l, NULL, 1, (int)lk, NULL, 1, l, CUFFT_Z2D, c->batch));
    c->have_c2r = true;
    long long *j0 = (long long *)malloc(lk * sizeof *j0);
    if (!j0)
        return err_set(-ENOMEM, "time-dispersion transform (CUDA): out of memory");
    for (int d = 0; d < 2; d++) {
        const struct warp *w = &t->warp[d];
        for (size_t k = 0; k < lk; k++)
            j0[k] = w->valid[k] ? (long long)w->j0[k] : 0; /* warp_init leaves invalid bins unset */
        int rc = 0; /* each step only after the ones before it succeeded: no copy to a failed allocation */
        CUDA_CHECK_INTO(rc, cudaMalloc((void **)&c->j0[d], lk * sizeof(long long)));
        if (rc == 0)
            CUDA_CHECK_INTO(rc, cudaMalloc((void **)&c->w[d], lk * NLAG * sizeof(double)));
        if (rc == 0)
            CUDA_CHECK_INTO(rc, cudaMalloc((void **)&c->phase[d], lk * 2 * sizeof(double)));
        if (rc == 0)
            CUDA_CHECK_INTO(rc, cudaMalloc((void **)&c->valid[d], lk));
        if (rc == 0)
            CUDA_CHECK_INTO(rc, cudaMemcpy(c->j0[d], j0, lk * sizeof(long long), cudaMemcpyHostToDevice));
        if (rc == 0)
            CUDA_CHECK_INTO(rc, cudaMemcpy(c->valid[d], w->valid, lk, cudaMemcpyHostToDevice));
        /* the weights and phases of invalid bins are never read (k_warp tests valid) */
        if (rc == 0)
            CUDA_CHECK_INTO(rc, cudaMemcpy(c->w[d], w->w, lk * NLAG * sizeof(double), cudaMemcpyHostToDevice));
        if (rc == 0)
            CUDA_CHECK_INTO(rc, cudaMemcpy(c->phase[d], w->phase, lk * 2 * sizeof(double), cudaMemcpyHostToDevice));
        if (rc < 0) {
            free(j0);
            return rc;
        }
    }
    free(j0);
    return 0;
}

/* rin[b][j] = x_b[(j + shift) mod M] where that is a sample, else 0 (the reference's
 * rin[(k + M - shift) mod M] = x[k]). */
__global__ void k_pack(const float *x, long long stride, long long n, long long m, long long shift, int nb,
                       double *rin)
{
    const long long total = (long long)nb * m;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long b = i / m, j = i - b * m, k = (j + shift) % m;
        rin[i] = k < n ? (double)x[b * stride + k] : 0.0;
    }
}

/* A block a signal: its energy (bins 1 .. M/2 - 1 twice) and the part from the first bin
 * at or past CUT on (that bin with the sliver between the cut and it). */
__global__ void k_energy(const cufftDoubleComplex *cin, long long m, double cut, double *e)
{
    __shared__ double se[256], so[256];
    const long long mk = m / 2 + 1;
    const cufftDoubleComplex *c = cin + blockIdx.x * mk;
    const double h = 2.0 * M_PI / (double)m;
    /* the first bin at or past the cut, as the reference's loop finds it */
    long long jc = (long long)ceil(cut / h);
    while (jc > 0 && (double)(jc - 1) * h >= cut)
        jc--;
    while ((double)jc * h < cut)
        jc++;
    double te = 0, to = 0;
    for (long long j = threadIdx.x; j < mk; j += blockDim.x) {
        const double a = c[j].x * c[j].x + c[j].y * c[j].y;
        const double wgt = (j == 0 || 2 * j == m) ? 1.0 : 2.0;
        te += wgt * a;
        if (j == jc)
            to += a * (1.0 + 2.0 * ((double)j * h - cut) / h);
        else if (j > jc)
            to += wgt * a;
    }
    se[threadIdx.x] = te;
    so[threadIdx.x] = to;
    __syncthreads();
    for (int o = blockDim.x / 2; o > 0; o >>= 1) {
        if ((int)threadIdx.x < o) {
            se[threadIdx.x] += se[threadIdx.x + o];
            so[threadIdx.x] += so[threadIdx.x + o];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        e[2 * blockIdx.x] = se[0];
        e[2 * blockIdx.x + 1] = so[0];
    }
}

/* The centred spectrum at bin J (any integer in -NLAG .. M/2 + NLAG): extend()'s mirror. */
__device__ __forceinline__ cufftDoubleComplex bin(const cufftDoubleComplex *c, long long j, long long m)
{
    if (j < 0) {
        cufftDoubleComplex v = c[-j];
        v.y = -v.y;
        return v;
    }
    if (j > m / 2) {
        cufftDoubleComplex v = c[m - j];
        v.y = -v.y;
        return v;
    }
    return c[j];
}

__global__ void k_warp(const cufftDoubleComplex *cin, long long m, long long lk, int nb, const long long *j0,
                       const double *w, const double *phase, const unsigned char *valid, cufftDoubleComplex *cout)
{
    const long long mk = m / 2 + 1, total = (long long)nb * lk;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long b = i / lk, k = i - b * lk;
        cufftDoubleComplex y = {0.0, 0.0};
        if (valid[k]) {
            const cufftDoubleComplex *c = cin + b * mk;
            const double *wk = w + k * NLAG;
            double re = 0, im = 0;
            for (int a = 0; a < NLAG; a++) {
                const cufftDoubleComplex v = bin(c, j0[k] + a, m);
                re += wk[a] * v.x;
                im += wk[a] * v.y;
            }
            const double pr = phase[2 * k], pi = phase[2 * k + 1];
            y.x = re * pr - im * pi;
            y.y = re * pi + im * pr;
        }
        cout[i] = y;
    }
}

__global__ void k_unpack(const double *rout, long long l, long long n, long long stride, int nb, float *x)
{
    const long long total = (long long)nb * n;
    const double s = 1.0 / (double)l;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const long long b = i / n, k = i - b * n;
        x[b * stride + k] = (float)(rout[b * l + k] * s);
    }
}

static unsigned grid_for(long long n)
{
    long long g = (n + 255) / 256;
    return (unsigned)(g > 65535 ? 65535 : g < 1 ? 1 : g);
}

extern "C" int tdt_cu_apply(struct tdt *t, int dir, float *x, size_t ntr, size_t stride, double *out_of_band)
{
    if (!t->cu) {
        int rc = cu_setup(t);
        if (rc < 0) {
            tdt_cu_free(t);
            return err_prefix(rc, "time-dispersion transform on the GPU (%zu samples)", t->n);
        }
    }
    struct tdt_cuda *c = t->cu;
    const long long m = (long long)t->m, l = (long long)t->l, n = (long long)t->n, lk = l / 2 + 1;
    double worst = 0;
    double *e = (double *)malloc((size_t)c->batch * 2 * sizeof(double));
    if (!e)
        return err_set(-ENOMEM, "time-dispersion transform (CUDA): out of memory");
    int rc = 0;
    for (size_t b0 = 0; b0 < ntr && rc == 0; b0 += (size_t)c->batch) {
        const int nb = (int)(ntr - b0 < (size_t)c->batch ? ntr - b0 : (size_t)c->batch);
        float *xb = x + b0 * stride;
        k_pack<<<grid_for((long long)nb * m), 256>>>(xb, (long long)stride, n, m, (long long)t->shift, nb, c->rin);
        CUDA_CHECK_INTO(rc, cudaGetLastError());
        /* a batch short of the plan's transforms garbage rows past nb: never read */
        if (rc == 0 && cufftExecD2Z(c->r2c, c->rin, c->cin) != CUFFT_SUCCESS)
            rc = err_set(-EIO, "cuFFT D2Z of %lld points failed", m);
        if (rc == 0) {
            k_energy<<<nb, 256>>>(c->cin, m, t->cut[dir], c->e);
            CUDA_CHECK_INTO(rc, cudaGetLastError());
            k_warp<<<grid_for((long long)nb * lk), 256>>>(c->cin, m, lk, nb, c->j0[dir], c->w[dir], c->phase[dir],
                                                          c->valid[dir], c->cout);
            CUDA_CHECK_INTO(rc, cudaGetLastError());
        }
        if (rc == 0 && cufftExecZ2D(c->c2r, c->cout, c->rout) != CUFFT_SUCCESS)
            rc = err_set(-EIO, "cuFFT Z2D of %lld points failed", l);
        if (rc == 0) {
            k_unpack<<<grid_for((long long)nb * n), 256>>>(c->rout, l, n, (long long)stride, nb, xb);
            CUDA_CHECK_INTO(rc, cudaGetLastError());
            CUDA_CHECK_INTO(rc, cudaMemcpy(e, c->e, (size_t)nb * 2 * sizeof(double), cudaMemcpyDeviceToHost));
        }
        for (int i = 0; rc == 0 && i < nb; i++)
            if (e[2 * i] > 0 && e[2 * i + 1] / e[2 * i] > worst)
                worst = e[2 * i + 1] / e[2 * i];
    }
    free(e);
    if (rc == 0)
        CUDA_CHECK_INTO(rc, cudaDeviceSynchronize());
    if (rc < 0)
        return err_prefix(rc, "time-dispersion transform on the GPU");
    if (out_of_band)
        *out_of_band = worst;
    return 0;
}
