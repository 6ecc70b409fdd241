/* imaging — CUDA twin of imaging.c (same arithmetic). */
#include "kernels/imaging.h"

#include "kernels/cuda_check.h"

#include <stdint.h>

/* Box geometry passed by value to the kernels. */
struct box_g {
    int ox, oy, oz, px, py;
};

static box_g geom(const struct imaging_box *b)
{
    box_g g = {b->off[0], b->off[1], b->off[2], b->pitch[0], b->pitch[1]};
    return g;
}

__device__ __forceinline__ size_t at(box_g g, int x, int y, int z)
{
    return ((size_t)(z + g.oz) * (size_t)g.py + (size_t)(y + g.oy)) * (size_t)g.px + (size_t)(g.ox + x);
}

__global__ void imaging_extract_kernel(int nx, int ny, box_g g, const float *__restrict__ f,
                                       float *__restrict__ out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z;
    if (x >= nx || y >= ny)
        return;
    out[((size_t)z * ny + y) * nx + x] = f[at(g, x, y, z)];
}

extern "C" int imaging_extract_cuda(const struct imaging_box *b, const float *field, float *out, void *stream)
{
    dim3 block(32, 8, 1);
    dim3 grid((b->n[0] + 31) / 32, (b->n[1] + 7) / 8, b->n[2]);
    imaging_extract_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(b->n[0], b->n[1], geom(b), field, out);
    CUDA_TRY_LAUNCH();
    return 0;
}

/* acc + x y, product and sum each rounded to nearest: the CPU reference's arithmetic,
 * so GPU and CPU accumulators agree bit for bit. */
__device__ __forceinline__ float mac_rn(float acc, float x, float y) { return __fadd_rn(acc, __fmul_rn(x, y)); }

__global__ void imaging_acc_kernel(int nx, int ny, box_g gu, box_g gq, const float *__restrict__ u,
                                   const float *__restrict__ q, float *__restrict__ num,
                                   float *__restrict__ ills, float *__restrict__ illr)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z;
    if (x >= nx || y >= ny)
        return;
    size_t o = ((size_t)z * ny + y) * nx + x;
    float a = u[at(gu, x, y, z)], c = q[at(gq, x, y, z)];
    num[o] = mac_rn(num[o], a, c);
    if (ills)
        ills[o] = mac_rn(ills[o], a, a);
    if (illr)
        illr[o] = mac_rn(illr[o], c, c);
}

/* The same, 4 cells of a row per thread as float4: 4x the bytes per load instruction,
 * so more of them are in flight (the scalar kernel reached ~2.2 TB/s on the H100).
 * Only when every row of u, q and the accumulators starts 16-byte aligned. */
__global__ void imaging_acc4_kernel(int nx4, int ny, box_g gu, box_g gq, const float *__restrict__ u,
                                    const float *__restrict__ q, float *__restrict__ num,
                                    float *__restrict__ ills, float *__restrict__ illr)
{
    int x4 = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z;
    if (x4 >= nx4 || y >= ny)
        return;
    size_t o = ((size_t)z * ny + y) * nx4 + x4;
    float4 a = *(const float4 *)(u + at(gu, 4 * x4, y, z)), c = *(const float4 *)(q + at(gq, 4 * x4, y, z));
    float4 n = ((float4 *)num)[o];
    ((float4 *)num)[o] =
        make_float4(mac_rn(n.x, a.x, c.x), mac_rn(n.y, a.y, c.y), mac_rn(n.z, a.z, c.z), mac_rn(n.w, a.w, c.w));
    if (ills) {
        float4 s = ((float4 *)ills)[o];
        ((float4 *)ills)[o] =
            make_float4(mac_rn(s.x, a.x, a.x), mac_rn(s.y, a.y, a.y), mac_rn(s.z, a.z, a.z), mac_rn(s.w, a.w, a.w));
    }
    if (illr) {
        float4 r = ((float4 *)illr)[o];
        ((float4 *)illr)[o] =
            make_float4(mac_rn(r.x, c.x, c.x), mac_rn(r.y, c.y, c.y), mac_rn(r.z, c.z, c.z), mac_rn(r.w, c.w, c.w));
    }
}

static bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* Every row of box B in field F starts on 16 bytes. */
static bool rows_aligned(const struct imaging_box *b, const float *f)
{
    return aligned16(f) && b->off[0] % 4 == 0 && b->pitch[0] % 4 == 0;
}

extern "C" int imaging_accumulate_cuda(const struct imaging_box *bu, const float *u,
                                       const struct imaging_box *bq, const float *q,
                                       const struct imaging_acc *acc, bool scalar, void *stream)
{
    if (!scalar && bq->n[0] % 4 == 0 && rows_aligned(bu, u) && rows_aligned(bq, q) && aligned16(acc->num) &&
        (!acc->ill_s || aligned16(acc->ill_s)) && (!acc->ill_r || aligned16(acc->ill_r))) {
        int nx4 = bq->n[0] / 4;
        dim3 block(32, 8, 1);
        dim3 grid((nx4 + 31) / 32, (bq->n[1] + 7) / 8, bq->n[2]);
        imaging_acc4_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(nx4, bq->n[1], geom(bu), geom(bq), u, q,
                                                                      acc->num, acc->ill_s, acc->ill_r);
        CUDA_TRY_LAUNCH();
        return 0;
    }
    dim3 block(32, 8, 1);
    dim3 grid((bq->n[0] + 31) / 32, (bq->n[1] + 7) / 8, bq->n[2]);
    imaging_acc_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(bq->n[0], bq->n[1], geom(bu), geom(bq), u, q,
                                                                 acc->num, acc->ill_s, acc->ill_r);
    CUDA_TRY_LAUNCH();
    return 0;
}

/* Non-negative floats order like their bit patterns as ints: atomicMax on the bits. */
__global__ void max_kernel(const float *__restrict__ a, size_t n, float *out)
{
    float m = 0.0f;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        m = fmaxf(m, a[i]);
    for (int s = 16; s > 0; s >>= 1)
        m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, s));
    if ((threadIdx.x & 31) == 0)
        atomicMax((int *)out, __float_as_int(m));
}

__global__ void finalize_kernel(size_t n, int cond, const float *__restrict__ num,
                                const float *__restrict__ ills, const float *__restrict__ illr,
                                const float *__restrict__ mx, float *out)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float es = cond != IMAGING_RECEIVER ? (float)IMAGING_EPS_REL * mx[0] : 0.0f;
    float er = (cond == IMAGING_RECEIVER || cond == IMAGING_BOTH) ? (float)IMAGING_EPS_REL * mx[1] : 0.0f;
    float den;
    if (cond == IMAGING_SOURCE)
        den = ills[i] + es;
    else if (cond == IMAGING_RECEIVER)
        den = illr[i] + er;
    else
        den = sqrtf(__fmul_rn(ills[i] + es, illr[i] + er));
    out[i] = den > 0.0f ? num[i] / den : 0.0f;
}

extern "C" int imaging_finalize_cuda(const struct imaging_box *b, int cond, const struct imaging_acc *acc,
                                     float *out, float *scratch, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    size_t n = imaging_cells(b);
    if (cond == IMAGING_XCORR) {
        if (out != acc->num)
            CUDA_TRY(cudaMemcpyAsync(out, acc->num, n * sizeof(float), cudaMemcpyDeviceToDevice, s));
        return 0;
    }
    CUDA_TRY(cudaMemsetAsync(scratch, 0, 2 * sizeof(float), s));
    if (cond != IMAGING_RECEIVER) {
        max_kernel<<<1024, 256, 0, s>>>(acc->ill_s, n, scratch);
        CUDA_TRY_LAUNCH();
    }
    if (imaging_needs_receiver(cond)) {
        max_kernel<<<1024, 256, 0, s>>>(acc->ill_r, n, scratch + 1);
        CUDA_TRY_LAUNCH();
    }
    finalize_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(n, cond, acc->num, acc->ill_s, acc->ill_r,
                                                                scratch, out);
    CUDA_TRY_LAUNCH();
    return 0;
}
