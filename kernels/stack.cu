/* stack — CUDA twin of the coherent stack (see stack.h).
 *
 * Thread block: 4 warps x 32 lanes.  A lane owns TP = 4 times (t, t+32, t+64, t+96) and
 * a warp JP = 8 consecutive trial points, so a block covers 32 points x 128 times.  For
 * each row the warp loads the 8 delays of its points in one 16-byte broadcast load, then
 * every lane reads CF[row][t + d] for its times: the 32 lanes read 32 consecutive floats
 * (one coalesced, L1-resident access per 32 sums).  Sums and counts live in registers;
 * the reductions (max over points per time, max over times per point) go through shared
 * memory, warp shuffles and one 64-bit / 32-bit atomicMax per time / point and block,
 * on order-preserving integer images of the floats (ties -> smallest j, as the CPU). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "conf/config.h"
#include "kernels/cuda_check.h"
#include "kernels/stack.h"

#define JP 8
#define TP 4
#define WARPS 4

struct stack_cuda {
    unsigned long long *tmax;
    unsigned *cohu;
    size_t nt_cap, nj_cap;
};

static __device__ __forceinline__ unsigned ord_of(float v)
{
    unsigned u = __float_as_uint(v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static __device__ __forceinline__ float float_of(unsigned u)
{
    return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}

template <int NORM>
static __device__ __forceinline__ float norm_value(float sum, int cnt)
{
    if (NORM == NORM_NONE)
        return sum;
    if (cnt == 0)
        return 0.0f;
    float m = sum / (float)cnt;
    return NORM == NORM_GEOMETRIC ? expf(m) : m;
}

template <int NORM>
__global__ void __launch_bounds__(32 * WARPS)
stack_kernel(int nrow, size_t nj, size_t nj_pad, const uint16_t *__restrict__ delay,
             const float *__restrict__ cf, size_t cf_stride, int nt,
             unsigned long long *__restrict__ tmax, unsigned *__restrict__ cohu)
{
    __shared__ unsigned long long red[WARPS][32 * TP];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const size_t jbase = ((size_t)blockIdx.x * WARPS + warp) * JP;
    const int tbase = blockIdx.y * (32 * TP);
    float acc[JP][TP];
    int cnt[JP][TP];
#pragma unroll
    for (int p = 0; p < JP; p++)
#pragma unroll
        for (int q = 0; q < TP; q++) {
            acc[p][q] = 0.0f;
            cnt[p][q] = 0;
        }
    const uint16_t *dl = delay + jbase;
    const float *c0 = cf + tbase + lane;
#pragma unroll 2
    for (int r = 0; r < nrow; r++) {
        uint4 dv = __ldg((const uint4 *)(dl + (size_t)r * nj_pad));
        unsigned w[4] = {dv.x, dv.y, dv.z, dv.w};
        const float *row = c0 + (size_t)r * cf_stride;
#pragma unroll
        for (int p = 0; p < JP; p++) {
            unsigned d = (p & 1) ? (w[p >> 1] >> 16) : (w[p >> 1] & 0xffffu);
#pragma unroll
            for (int q = 0; q < TP; q++) {
                float v = __ldg(row + d + 32 * q);
                if (NORM == NORM_NONE) {
                    acc[p][q] += (v == v) ? v : 0.0f;
                } else {
                    bool ok = v == v;
                    acc[p][q] += ok ? v : 0.0f;
                    cnt[p][q] += ok;
                }
            }
        }
    }
    /* (a) max over the points of this warp per time, then over the warps, then atomics */
#pragma unroll
    for (int q = 0; q < TP; q++) {
        unsigned best = 0, bj = 0;
#pragma unroll
        for (int p = 0; p < JP; p++) {
            size_t j = jbase + p;
            if (j < nj) {
                unsigned k = ord_of(norm_value<NORM>(acc[p][q], cnt[p][q]));
                if (k > best) {
                    best = k;
                    bj = (unsigned)j;
                }
            }
        }
        red[warp][q * 32 + lane] = best ? ((unsigned long long)best << 32) | (0xffffffffu - bj) : 0ull;
    }
    /* (b) max over this block's times per point: lanes hold times, reduce with shuffles */
#pragma unroll
    for (int p = 0; p < JP; p++) {
        unsigned k = 0;
#pragma unroll
        for (int q = 0; q < TP; q++)
            if (tbase + 32 * q + lane < nt) {
                unsigned kq = ord_of(norm_value<NORM>(acc[p][q], cnt[p][q]));
                k = kq > k ? kq : k;
            }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            unsigned other = __shfl_xor_sync(0xffffffffu, k, o);
            k = other > k ? other : k;
        }
        size_t j = jbase + p;
        if (lane == 0 && j < nj && k)
            atomicMax(cohu + j, k);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 32 * TP; i += blockDim.x) {
        unsigned long long m = red[0][i];
#pragma unroll
        for (int w2 = 1; w2 < WARPS; w2++)
            m = red[w2][i] > m ? red[w2][i] : m;
        int t = tbase + i;
        if (t < nt && m && m > tmax[t])
            atomicMax(tmax + t, m);
    }
}

__global__ void stack_finish(int nt, size_t nj, const unsigned long long *tmax, const unsigned *cohu,
                             float *max_val, int32_t *max_idx, float *coh)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)nt) {
        unsigned long long m = tmax[i];
        max_val[i] = m ? float_of((unsigned)(m >> 32)) : 0.0f;
        max_idx[i] = m ? (int32_t)(0xffffffffu - (unsigned)(m & 0xffffffffu)) : -1;
    }
    if (i < nj)
        coh[i] = cohu[i] ? float_of(cohu[i]) : -INFINITY;
}

extern "C" int stack_cuda_create(struct stack_cuda **ctx)
{
    *ctx = (struct stack_cuda *)calloc(1, sizeof **ctx);
    return *ctx ? 0 : err_set(-ENOMEM, "stack: out of memory");
}

extern "C" void stack_cuda_destroy(struct stack_cuda *ctx)
{
    if (!ctx)
        return;
    cudaFree(ctx->tmax);
    cudaFree(ctx->cohu);
    free(ctx);
}

extern "C" int stack_run_cuda(struct stack_cuda *ctx, const struct stack_args *a, void *stream)
{
    if (a->nt <= 0 || a->nj == 0)
        return 0;
    if (a->nj_pad % STACK_J_TILE || a->nj_pad < a->nj)
        return err_set(-EINVAL, "stack: nj_pad %zu is not a multiple of %d >= nj", a->nj_pad, STACK_J_TILE);
    cudaStream_t s = (cudaStream_t)stream;
    if ((size_t)a->nt > ctx->nt_cap) {
        cudaFree(ctx->tmax);
        ctx->tmax = NULL;
        CUDA_TRY(cudaMalloc(&ctx->tmax, (size_t)a->nt * sizeof(unsigned long long)));
        ctx->nt_cap = (size_t)a->nt;
    }
    if (a->nj > ctx->nj_cap) {
        cudaFree(ctx->cohu);
        ctx->cohu = NULL;
        CUDA_TRY(cudaMalloc(&ctx->cohu, a->nj * sizeof(unsigned)));
        ctx->nj_cap = a->nj;
    }
    CUDA_TRY(cudaMemsetAsync(ctx->tmax, 0, (size_t)a->nt * sizeof(unsigned long long), s));
    CUDA_TRY(cudaMemsetAsync(ctx->cohu, 0, a->nj * sizeof(unsigned), s));
    dim3 grid((unsigned)(a->nj_pad / STACK_J_TILE), (unsigned)((a->nt + STACK_T_TILE - 1) / STACK_T_TILE));
    dim3 block(32 * WARPS);
    switch (a->norm) {
    case NORM_NONE:
        stack_kernel<NORM_NONE><<<grid, block, 0, s>>>(a->nrow, a->nj, a->nj_pad, a->delay, a->cf,
                                                       a->cf_stride, a->nt, ctx->tmax, ctx->cohu);
        break;
    case NORM_GEOMETRIC:
        stack_kernel<NORM_GEOMETRIC><<<grid, block, 0, s>>>(a->nrow, a->nj, a->nj_pad, a->delay, a->cf,
                                                            a->cf_stride, a->nt, ctx->tmax, ctx->cohu);
        break;
    default:
        stack_kernel<NORM_COUNT><<<grid, block, 0, s>>>(a->nrow, a->nj, a->nj_pad, a->delay, a->cf,
                                                        a->cf_stride, a->nt, ctx->tmax, ctx->cohu);
        break;
    }
    CUDA_TRY_LAUNCH();
    size_t n = (size_t)a->nt > a->nj ? (size_t)a->nt : a->nj;
    stack_finish<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(a->nt, a->nj, ctx->tmax, ctx->cohu, a->max_val,
                                                              a->max_idx, a->coh);
    CUDA_TRY_LAUNCH();
    return 0;
}

static cudaMemcpyKind kind_of(int kind)
{
    return kind == 0 ? cudaMemcpyDeviceToDevice : kind == 1 ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice;
}

extern "C" int stack_cuda_alloc(void **p, size_t bytes)
{
    *p = NULL;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e != cudaSuccess)
        return err_set(e == cudaErrorMemoryAllocation ? -ENOMEM : -EIO, "cudaMalloc(%zu MiB): %s",
                       bytes >> 20, cudaGetErrorString(e));
    return 0;
}

extern "C" void stack_cuda_free(void *p)
{
    cudaFree(p);
}

extern "C" int stack_cuda_copy(void *dst, const void *src, size_t bytes, int kind)
{
    if (bytes)
        CUDA_TRY(cudaMemcpy(dst, src, bytes, kind_of(kind)));
    return 0;
}

extern "C" int stack_cuda_copy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                 size_t height, int kind)
{
    if (width && height)
        CUDA_TRY(cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind_of(kind)));
    return 0;
}

extern "C" int stack_cuda_fill_nan2d(void *dst, size_t pitch, size_t width, size_t height)
{
    if (width && height)
        CUDA_TRY(cudaMemset2D(dst, pitch, 0xff, width, height));
    return 0;
}

extern "C" int stack_cuda_sync(void)
{
    CUDA_TRY(cudaDeviceSynchronize());
    return 0;
}
