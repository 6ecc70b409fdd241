/* stack — CUDA twins of the coherent stack (see stack.h): `direct` (stack_kernel) and
 * `staged` (stack_staged, the default; described above it).
 *
 * direct — thread block: 4 warps x 32 lanes.  A lane owns TP = 4 times (t, t+32, t+64, t+96) and
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
#include <stdlib.h>

#include "kernels/cuda_check.h"
#include "kernels/device.h"
#include "kernels/stack.h"

#define JP 8
#define TP 4
#define WARPS 4

struct stack_cuda {
    unsigned long long *tmax;
    unsigned *cohu;
    size_t nt_cap, nj_cap;
    int kernel; /* enum stack_kernel */
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
    if (NORM == STACK_NORM_NONE)
        return sum;
    if (cnt == 0)
        return 0.0f;
    float m = sum / (float)cnt;
    return NORM == STACK_NORM_GEOMETRIC ? expf(m) : m;
}

/* The end of both stack kernels: a block holds the sums ACC (counts CNT + EXTRA) of P
 * points per warp, from J0, at TP times per lane, from T0 (time T0 + 32 q + lane).
 * (a) per time, the best point of each warp, through RED (one row per warp, W warps),
 * then the best over the warps into TMAX (score in the high word, the point's index
 * inverted in the low one, so atomicMax keeps the largest score and the lowest point);
 * (b) per point, the best time (lanes reduced with shuffles) into COHU. */
template <int NORM, int P, int W>
static __device__ __forceinline__ void reduce_tile(const float (&acc)[P][TP], const int (&cnt)[P][TP], int extra,
                                                   size_t j0, size_t nj, int t0, int nt,
                                                   unsigned long long (*red)[32 * TP], unsigned long long *tmax,
                                                   unsigned *cohu)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int q = 0; q < TP; q++) {
        unsigned best = 0, bj = 0;
#pragma unroll
        for (int p = 0; p < P; p++)
            if (j0 + p < nj) {
                unsigned k = ord_of(norm_value<NORM>(acc[p][q], cnt[p][q] + extra));
                if (k > best) {
                    best = k;
                    bj = (unsigned)(j0 + p);
                }
            }
        red[warp][q * 32 + lane] = best ? ((unsigned long long)best << 32) | (0xffffffffu - bj) : 0ull;
    }
#pragma unroll
    for (int p = 0; p < P; p++) {
        unsigned k = 0;
#pragma unroll
        for (int q = 0; q < TP; q++)
            if (t0 + 32 * q + lane < nt) {
                unsigned kq = ord_of(norm_value<NORM>(acc[p][q], cnt[p][q] + extra));
                k = kq > k ? kq : k;
            }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            unsigned other = __shfl_xor_sync(0xffffffffu, k, o);
            k = other > k ? other : k;
        }
        if (lane == 0 && j0 + p < nj && k)
            atomicMax(cohu + j0 + p, k);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 32 * TP; i += blockDim.x) {
        unsigned long long m = red[0][i];
#pragma unroll
        for (int w2 = 1; w2 < W; w2++)
            m = red[w2][i] > m ? red[w2][i] : m;
        int t = t0 + i;
        if (t < nt && m && m > tmax[t])
            atomicMax(tmax + t, m);
    }
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
                if (NORM == STACK_NORM_NONE) {
                    acc[p][q] += (v == v) ? v : 0.0f;
                } else {
                    bool ok = v == v;
                    acc[p][q] += ok ? v : 0.0f;
                    cnt[p][q] += ok;
                }
            }
        }
    }
    reduce_tile<NORM, JP, WARPS>(acc, cnt, 0, jbase, nj, tbase, nt, red, tmax, cohu);
}

/* ---- staged kernel: the CF windows of 8 rows in shared memory ---------------------------
 *
 * Thread block: SW = 8 warps, a warp owns SJP = 4 consecutive trial points, a lane TP = 4
 * times (t, t+32, t+64, t+96): 32 points x 128 times per block, as above.  Rows go in
 * stages of SR = 8, one per warp.  For its row, a warp loads the 32 delays of the block's
 * points (one coalesced 64-byte load), reduces them to the smallest and largest, and copies
 * the CF window [tb + dmin, tb + 127 + dmax] once into shared memory (coalesced), noting
 * whether it holds NaN.  After a barrier every warp sums all SR rows from shared memory:
 * lanes read consecutive words, so each read is one conflict-free wavefront for 32 sums
 * (an unaligned global read of 32 floats spans two cache lines: two wavefronts).
 * A window without NaN takes the clean path, one add per sum, its row counted once for
 * every (point, time); a window of NaN only (a dead channel) is skipped; a mixed window
 * checks each sample.  Skipping a NaN's +0.0f is exact (the sums start at +0 and never
 * become -0), so the sums stay bit-identical to the reference.  A window wider than WIN
 * (delay spread above WIN - 128 samples within 32 consecutive points) is read straight
 * from global memory instead.
 *
 * Two builds of it: `staged` (one window buffer of WIN = 1024 samples per row, a barrier
 * before and after the sums of a stage) and `staged-db` (two buffers of 640, stages
 * alternate between them, one barrier per stage; 40 KiB of static shared memory). */
#define SW 8
#define SJP 4
#define SR 8
enum { ROW_SKIP = 0, ROW_CLEAN = 1, ROW_MIXED = 2, ROW_GLOBAL = 3 };

/* Sums of one row whose samples may be NaN: W points at the row's window for this lane
 * (shared or global memory), O the points' offsets into it. */
static __device__ __forceinline__ void add_checked(float (&acc)[SJP][TP], int (&cnt)[SJP][TP], const float *w,
                                                   const unsigned (&o)[SJP])
{
#pragma unroll
    for (int p = 0; p < SJP; p++)
#pragma unroll
        for (int q = 0; q < TP; q++) {
            float v = w[o[p] + 32 * q];
            bool ok = v == v;
            acc[p][q] += ok ? v : 0.0f;
            cnt[p][q] += ok;
        }
}

template <int NORM, int NBUF, int WIN>
__global__ void __launch_bounds__(32 * SW)
stack_staged(int nrow, size_t nj, size_t nj_pad, const uint16_t *__restrict__ delay,
             const float *__restrict__ cf, size_t cf_stride, int nt,
             unsigned long long *__restrict__ tmax, unsigned *__restrict__ cohu)
{
    static_assert(NBUF * SR * WIN * sizeof(float) >= SW * 32 * TP * sizeof(unsigned long long),
                  "the reductions reuse the window buffer");
    __shared__ __align__(16) float wbuf[NBUF][SR][WIN];
    __shared__ __align__(8) uint16_t obuf[NBUF][SR][32];
    __shared__ int bbuf[NBUF][SR], kbuf[NBUF][SR];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const size_t jb = (size_t)blockIdx.x * 32;
    const int tb = blockIdx.y * (32 * TP);
    float acc[SJP][TP];
    int cnt[SJP][TP], nclean = 0;
#pragma unroll
    for (int p = 0; p < SJP; p++)
#pragma unroll
        for (int q = 0; q < TP; q++) {
            acc[p][q] = 0.0f;
            cnt[p][q] = 0;
        }
    const bool jvalid = jb + lane < nj;
    /* the delay of this lane's point for this warp's row of the next stage, loaded one
     * stage ahead so its DRAM latency overlaps the sums */
    int dnext = warp < nrow ? __ldg(delay + (size_t)warp * nj_pad + jb + lane) : 0;
    for (int r0 = 0, stage = 0; r0 < nrow; r0 += SR, stage++) {
        /* with two buffers, stage s fills one while warps still in stage s-1 read the other:
         * the barrier after the fill is the only one per stage */
        float(*win)[WIN] = wbuf[NBUF > 1 ? stage & 1 : 0];
        uint16_t(*off)[32] = obuf[NBUF > 1 ? stage & 1 : 0];
        int *base = bbuf[NBUF > 1 ? stage & 1 : 0], *kind = kbuf[NBUF > 1 ? stage & 1 : 0];
        const int r = r0 + warp;
        if (r < nrow) {
            const int d = dnext;
            const int lo = (int)__reduce_min_sync(0xffffffffu, jvalid ? (unsigned)d : 65535u);
            const int hi = (int)__reduce_max_sync(0xffffffffu, jvalid ? (unsigned)d : 0u);
            off[warp][lane] = (uint16_t)(jvalid ? d - lo : 0);
            const int len = 32 * TP + hi - lo;
            int k = ROW_GLOBAL;
            if (len <= WIN) {
                const float *src = cf + (size_t)r * cf_stride + tb + lo;
                bool bad = false, good = false;
                /* 8 loads in flight per lane before the first is used */
                for (int i0 = lane; i0 < len; i0 += 32 * 8) {
                    float v[8];
#pragma unroll
                    for (int u = 0; u < 8; u++)
                        v[u] = i0 + 32 * u < len ? __ldg(src + i0 + 32 * u) : 0.0f;
#pragma unroll
                    for (int u = 0; u < 8; u++)
                        if (i0 + 32 * u < len) {
                            win[warp][i0 + 32 * u] = v[u];
                            bad |= v[u] != v[u];
                            good |= v[u] == v[u];
                        }
                }
                bad = __any_sync(0xffffffffu, bad);
                good = __any_sync(0xffffffffu, good);
                k = !good ? ROW_SKIP : bad ? ROW_MIXED : ROW_CLEAN;
            }
            if (lane == 0) {
                base[warp] = lo;
                kind[warp] = k;
            }
        }
        if (r + SR < nrow)
            dnext = __ldg(delay + (size_t)(r + SR) * nj_pad + jb + lane);
        __syncthreads();
        const int nr = min(SR, nrow - r0);
        for (int rr = 0; rr < nr; rr++) {
            const int k = kind[rr];
            if (k == ROW_SKIP)
                continue;
            const uint2 o2 = *(const uint2 *)&off[rr][warp * SJP];
            const unsigned o[SJP] = {o2.x & 0xffffu, o2.x >> 16, o2.y & 0xffffu, o2.y >> 16};
            if (k == ROW_CLEAN) {
                nclean++;
                const float *w = &win[rr][lane];
#pragma unroll
                for (int p = 0; p < SJP; p++)
#pragma unroll
                    for (int q = 0; q < TP; q++)
                        acc[p][q] += w[o[p] + 32 * q];
            } else if (k == ROW_MIXED) {
                add_checked(acc, cnt, &win[rr][lane], o);
            } else {
                add_checked(acc, cnt, cf + (size_t)(r0 + rr) * cf_stride + tb + base[rr] + lane, o);
            }
        }
        if (NBUF == 1)
            __syncthreads();
    }
    if (NBUF > 1)
        __syncthreads();
    /* the reductions (reduce_tile) reuse the window buffers, free now */
    unsigned long long(*red)[32 * TP] = (unsigned long long(*)[32 * TP])&wbuf[0][0][0];
    reduce_tile<NORM, SJP, SW>(acc, cnt, nclean, jb + (size_t)warp * SJP, nj, tb, nt, red, tmax, cohu);
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

extern "C" int stack_cuda_create(struct stack_cuda **ctx, const struct stack_tuning *tuning)
{
    *ctx = (struct stack_cuda *)calloc(1, sizeof **ctx);
    if (!*ctx)
        return err_set(-ENOMEM, "stack: out of memory");
    (*ctx)->kernel = tuning ? tuning->kernel : STACK_KERNEL_STAGED;
    if (!stack_kernel_name((*ctx)->kernel)) {
        int k = (*ctx)->kernel;
        free(*ctx);
        *ctx = NULL;
        return err_set(-EINVAL, "stack: no CUDA kernel variant %d", k);
    }
    return 0;
}

extern "C" void stack_cuda_destroy(struct stack_cuda *ctx)
{
    if (!ctx)
        return;
    dev_cu_free(ctx->tmax);
    dev_cu_free(ctx->cohu);
    free(ctx);
}

extern "C" int stack_run_cuda(struct stack_cuda *ctx, const struct stack_args *a, void *stream)
{
    if (a->nt <= 0 || a->nj == 0)
        return 0;
    if (a->nj_pad % STACK_J_TILE || a->nj_pad < a->nj)
        return err_set(-EINVAL, "stack: nj_pad %zu is not a multiple of %d >= nj", a->nj_pad, STACK_J_TILE);
    cudaStream_t s = (cudaStream_t)stream;
    int rc;
    if ((size_t)a->nt > ctx->nt_cap) {
        dev_cu_free(ctx->tmax);
        ctx->tmax = NULL;
        ctx->nt_cap = 0;
        if ((rc = dev_cu_alloc((size_t)a->nt * sizeof(unsigned long long), (void **)&ctx->tmax)))
            return rc;
        ctx->nt_cap = (size_t)a->nt;
    }
    if (a->nj > ctx->nj_cap) {
        dev_cu_free(ctx->cohu);
        ctx->cohu = NULL;
        ctx->nj_cap = 0;
        if ((rc = dev_cu_alloc(a->nj * sizeof(unsigned), (void **)&ctx->cohu)))
            return rc;
        ctx->nj_cap = a->nj;
    }
    CUDA_TRY(cudaMemsetAsync(ctx->tmax, 0, (size_t)a->nt * sizeof(unsigned long long), s));
    CUDA_TRY(cudaMemsetAsync(ctx->cohu, 0, a->nj * sizeof(unsigned), s));
    dim3 grid((unsigned)(a->nj_pad / STACK_J_TILE), (unsigned)((a->nt + STACK_T_TILE - 1) / STACK_T_TILE));
    if (ctx->kernel == STACK_KERNEL_STAGED || ctx->kernel == STACK_KERNEL_STAGED_DB) {
        dim3 block(32 * SW);
        const bool db = ctx->kernel == STACK_KERNEL_STAGED_DB;
        switch (a->norm) {
        case STACK_NORM_NONE:
            if (db)
                stack_staged<STACK_NORM_NONE, 2, 640><<<grid, block, 0, s>>>(a->nrow, a->nj, a->nj_pad, a->delay, a->cf,
                                                                       a->cf_stride, a->nt, ctx->tmax, ctx->cohu);
            else
                stack_staged<STACK_NORM_NONE, 1, 1024><<<grid, block, 0, s>>>(a->nrow, a->nj, a->nj_pad, a->delay, a->cf,
                                                                        a->cf_stride, a->nt, ctx->tmax, ctx->cohu);
            break;
        case STACK_NORM_GEOMETRIC:
            if (db)
                stack_staged<STACK_NORM_GEOMETRIC, 2, 640><<<grid, block, 0, s>>>(
                    a->nrow, a->nj, a->nj_pad, a->delay, a->cf, a->cf_stride, a->nt, ctx->tmax, ctx->cohu);
            else
                stack_staged<STACK_NORM_GEOMETRIC, 1, 1024><<<grid, block, 0, s>>>(
                    a->nrow, a->nj, a->nj_pad, a->delay, a->cf, a->cf_stride, a->nt, ctx->tmax, ctx->cohu);
            break;
        default:
            if (db)
                stack_staged<STACK_NORM_COUNT, 2, 640><<<grid, block, 0, s>>>(a->nrow, a->nj, a->nj_pad, a->delay, a->cf,
                                                                        a->cf_stride, a->nt, ctx->tmax, ctx->cohu);
            else
                stack_staged<STACK_NORM_COUNT, 1, 1024><<<grid, block, 0, s>>>(a->nrow, a->nj, a->nj_pad, a->delay, a->cf,
                                                                         a->cf_stride, a->nt, ctx->tmax, ctx->cohu);
            break;
        }
    } else {
        dim3 block(32 * WARPS);
        switch (a->norm) {
        case STACK_NORM_NONE:
            stack_kernel<STACK_NORM_NONE><<<grid, block, 0, s>>>(a->nrow, a->nj, a->nj_pad, a->delay, a->cf,
                                                           a->cf_stride, a->nt, ctx->tmax, ctx->cohu);
            break;
        case STACK_NORM_GEOMETRIC:
            stack_kernel<STACK_NORM_GEOMETRIC><<<grid, block, 0, s>>>(a->nrow, a->nj, a->nj_pad, a->delay, a->cf,
                                                                a->cf_stride, a->nt, ctx->tmax, ctx->cohu);
            break;
        default:
            stack_kernel<STACK_NORM_COUNT><<<grid, block, 0, s>>>(a->nrow, a->nj, a->nj_pad, a->delay, a->cf,
                                                            a->cf_stride, a->nt, ctx->tmax, ctx->cohu);
            break;
        }
    }
    CUDA_TRY_LAUNCH();
    size_t n = (size_t)a->nt > a->nj ? (size_t)a->nt : a->nj;
    stack_finish<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(a->nt, a->nj, ctx->tmax, ctx->cohu, a->max_val,
                                                              a->max_idx, a->coh);
    CUDA_TRY_LAUNCH();
    return 0;
}

/* ---- for benchmarks and tests ----------------------------------------------------------- */

__global__ void delays_straight_kernel(uint16_t *delay, size_t nj, size_t nj_pad, const float *sta, int nx, int ny,
                                       double dx, double dy, double dz, double ox, double oy, double oz,
                                       double inv_vdt)
{
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y;
    if (j >= nj_pad)
        return;
    uint16_t d = 0;
    if (j < nj) {
        size_t i = j % (size_t)nx, k = j / ((size_t)nx * ny), m = (j / (size_t)nx) % (size_t)ny;
        /* explicit roundings (no FMA contraction), so the host computes the same delays */
        double x = __dsub_rn(__dadd_rn(ox, __dmul_rn((double)i, dx)), (double)sta[3 * r]);
        double y = __dsub_rn(__dadd_rn(oy, __dmul_rn((double)m, dy)), (double)sta[3 * r + 1]);
        double z = __dsub_rn(__dadd_rn(oz, __dmul_rn((double)k, dz)), (double)sta[3 * r + 2]);
        double s2 = __dadd_rn(__dadd_rn(__dmul_rn(x, x), __dmul_rn(y, y)), __dmul_rn(z, z));
        d = (uint16_t)llrint(__dmul_rn(sqrt(s2), inv_vdt));
    }
    delay[(size_t)r * nj_pad + j] = d;
}

extern "C" int stack_cuda_delays_straight(uint16_t *delay, size_t nj_pad, int nrow, const float *sta_xyz,
                                          const int n[3], const double d[3], const double o[3], double v,
                                          double dt)
{
    size_t nj = (size_t)n[0] * n[1] * n[2];
    float *ds = NULL;
    int rc = dev_cu_alloc((size_t)nrow * 3 * sizeof(float), (void **)&ds);
    if (rc)
        return rc;
    rc = dev_cu_copy(ds, sta_xyz, (size_t)nrow * 3 * sizeof(float), DEV_H2D, NULL);
    if (!rc) {
        dim3 grid((unsigned)((nj_pad + 255) / 256), (unsigned)nrow);
        delays_straight_kernel<<<grid, 256>>>(delay, nj, nj_pad, ds, n[0], n[1], d[0], d[1], d[2], o[0], o[1], o[2],
                                              1.0 / (v * dt));
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        if (e != cudaSuccess)
            rc = CUDA_ERR("delays_straight_kernel", e);
    }
    dev_cu_free(ds);
    return rc;
}

__global__ void spin_kernel(long long cycles, long long *out)
{
    long long t0 = clock64(), t = t0;
    while (t - t0 < cycles)
        t = clock64();
    if (threadIdx.x == 0)
        out[blockIdx.x] = t - t0;
}

extern "C" int stack_cuda_clock_ghz(int sms, double *ghz)
{
    long long *out = NULL;
    CUDA_TRY(cudaMalloc(&out, (size_t)sms * sizeof(long long)));
    cudaEvent_t e0, e1;
    CUDA_TRY(cudaEventCreate(&e0));
    CUDA_TRY(cudaEventCreate(&e1));
    const long long cycles = 50000000; /* ~25 ms */
    spin_kernel<<<sms, 32>>>(cycles / 10, out); /* warm-up */
    CUDA_TRY(cudaEventRecord(e0));
    spin_kernel<<<sms, 32>>>(cycles, out);
    CUDA_TRY(cudaEventRecord(e1));
    CUDA_TRY_LAUNCH();
    CUDA_TRY(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_TRY(cudaEventElapsedTime(&ms, e0, e1));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(out);
    *ghz = (double)cycles / (ms * 1e6);
    return 0;
}
