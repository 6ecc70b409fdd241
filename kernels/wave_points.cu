/* wave_points — injection and sampling of the CUDA propagator: the point sets' weights
 * on the device (computed on the host by kernels/points.c). */
#include "kernels/wave_cuda.h"

#include "kernels/device.h"

#include <stdlib.h>

extern "C" int wave_cu_points_upload(struct wave_points *pts)
{
    size_t n = pts->n ? pts->n : 1;
    const struct sl_device *dev = pts->s->dev;
    if (pts->ns != 1 && pts->ns != 2 && pts->ns != 8) /* k_sample's instances */
        return err_set(-EINVAL, "point support of %d nodes an axis: the CUDA sampling has 1, 2 and 8", pts->ns);
    const size_t wb = 3 * (size_t)pts->ns * pts->n * sizeof(float);
    int rc = dev_alloc(dev, 3 * n * sizeof(int), (void **)&pts->d_base);
    if (rc == 0)
        rc = dev_alloc(dev, 3 * (size_t)pts->ns * n * sizeof(float), (void **)&pts->d_w);
    if (rc == 0)
        rc = dev_copy(dev, pts->d_base, pts->base, 3 * pts->n * sizeof(int), DEV_H2D, NULL);
    if (rc == 0)
        rc = dev_copy(dev, pts->d_w, pts->w, wb, DEV_H2D, NULL);
    return rc;
}

extern "C" void wave_cu_points_free(struct wave_points *pts)
{
    dev_free(pts->s->dev, pts->d_base);
    dev_free(pts->s->dev, pts->d_w);
    pts->d_base = NULL;
    pts->d_w = NULL;
}

/* One block per point, threads over its ns x nsy x ns support nodes (nsy = 1 in 2D: the
 * one y node, weight 1; the weights' stride stays ns); overlapping supports of different
 * points meet through atomicAdd. */
__global__ void k_inject(float *f, const float *vel, const int *base, const float *w, int ns, int nsy,
                         long long sy, long long sz, const float *amps, long long stride, float scale,
                         bool phys, float dvinv, int n)
{
    int pt = blockIdx.x;
    if (pt >= n)
        return;
    float amp = amps[pt * stride] * scale;
    const int *b = base + 3 * pt;
    const float *wx = w + (size_t)3 * pt * ns, *wy = wx + ns, *wz = wy + ns;
    int nn = ns * nsy * ns;
    for (int t = threadIdx.x; t < nn; t += blockDim.x) {
        int kx = t % ns, ky = t / ns % nsy, kz = t / (ns * nsy);
        long long c = (long long)(b[2] + kz) * sz + (long long)(b[1] + ky) * sy + (b[0] + kx);
        float v = amp * (wx[kx] * wy[ky] * wz[kz]);
        atomicAdd(&f[c], phys ? v * (vel[c] * dvinv) : v);
    }
}

/* The same for small supports (trilinear: 8 nodes a point in 3D), one thread per (point,
 * node) pair: one block per point left 120 of its 128 threads idle, and the RTM's 40 000
 * receivers took 40 000 blocks a step (issue 20, session 13).  Same arithmetic; the
 * atomicAdd order of overlapping supports differs, as it does between runs of either. */
__global__ void k_inject_flat(float *f, const float *vel, const int *base, const float *w, int ns, int nsy,
                              long long sy, long long sz, const float *amps, long long stride, float scale,
                              bool phys, float dvinv, int n)
{
    const int nn = ns * nsy * ns;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)n * nn)
        return;
    const int pt = (int)(t / nn), node = (int)(t % nn);
    const float amp = amps[pt * stride] * scale;
    const int *b = base + 3 * pt;
    const float *wx = w + (size_t)3 * pt * ns, *wy = wx + ns, *wz = wy + ns;
    const int kx = node % ns, ky = node / ns % nsy, kz = node / (ns * nsy);
    const long long c = (long long)(b[2] + kz) * sz + (long long)(b[1] + ky) * sy + (b[0] + kx);
    const float v = amp * (wx[kx] * wy[ky] * wz[kz]);
    atomicAdd(&f[c], phys ? v * (vel[c] * dvinv) : v);
}

/* Sampling: a warp per point (POINT_WARPS points a block), lane l over the support nodes
 * l, l + 32, ... of the point's NS x NSY x NS nodes, x fastest, so the NS x nodes of a row
 * are adjacent lanes reading adjacent floats; NS divides 32 (1, 2 or 8: kernels/points.h),
 * so a lane keeps its x node and steps 32 / NS rows, all its loads unrolled and in flight
 * together; the partial sums meet by shuffles.  (The first form, k_inject's block of 128
 * threads a point with a shared-memory tree of seven barriers, took 30.4 us a step for
 * 10 000 receivers on the H100 (ncu), this one's unspecialised loop 17.0.) */
#define POINT_WARPS 8
template <int NS, int NSY>
__global__ void k_sample(const float *f, const int *base, const float *w, long long sy, long long sz, float *out,
                         long long stride, int n)
{
    const int lane = threadIdx.x & 31;
    const long long pt = (long long)blockIdx.x * POINT_WARPS + (threadIdx.x >> 5);
    if (pt >= n)
        return;
    const int *b = base + 3 * pt;
    const float *wx = w + (size_t)3 * pt * NS, *wy = wx + NS, *wz = wy + NS;
    constexpr int ROWS = NSY * NS, STEP = 32 / NS;
    const int kx = lane % NS;
    const float wxk = wx[kx];
    const float *fp = f + (long long)b[2] * sz + (long long)b[1] * sy + (b[0] + kx);
    float sum = 0;
#pragma unroll
    for (int r0 = 0; r0 < ROWS; r0 += STEP) {
        const int r = r0 + lane / NS;
        if (ROWS % STEP == 0 || r < ROWS) {
            const int ky = r % NSY, kz = r / NSY;
            sum += wxk * wy[ky] * wz[kz] * fp[kz * sz + ky * sy];
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0)
        out[pt * stride] = sum;
}

extern "C" int wave_cu_inject(struct wave_sim *s, const struct wave_points *pts, const float *amps,
                              size_t stride, float scale, unsigned flags)
{
    if (!pts->n)
        return 0;
    const float *da = amps;
    long long dstride = (long long)stride;
    if (!(flags & WAVE_BUF_DEVICE)) {
        /* Gather the strided host amplitudes and stage them on the device. */
        void *t = NULL;
        int rc = wave_cu_scratch(s, pts->n * sizeof(float), &t);
        if (rc < 0)
            return rc;
        float *h = (float *)malloc(pts->n * sizeof(float));
        if (!h)
            return err_set(-ENOMEM, "wave_inject: out of memory");
        for (size_t i = 0; i < pts->n; i++)
            h[i] = amps[i * stride];
        rc = dev_copy(s->dev, t, h, pts->n * sizeof(float), DEV_H2D, s->stream);
        if (rc == 0)
            rc = dev_stream_sync(s->dev, s->stream); /* H is freed below */
        free(h);
        if (rc < 0)
            return err_prefix(rc, "wave_inject: amplitudes");
        da = (const float *)t;
        dstride = 1;
    }
    const struct wave_layout *L = &s->L;
    /* per unit volume in 3D, per unit area (a line source) in 2D, as kernels/points.c */
    const float dvinv = wave_is_2d(s) ? (float)(1.0 / (s->p.d[0] * s->p.d[2]))
                                      : (float)(1.0 / (s->p.d[0] * s->p.d[1] * s->p.d[2]));
    const int nn = pts->ns * pts->nsa[1] * pts->ns;
    if (nn <= 32) /* a point's nodes fill a quarter of the block or less: a thread per node */
        k_inject_flat<<<(unsigned)(((long long)pts->n * nn + 127) / 128), 128, 0, stream_of(s)>>>(
            s->cur, s->vel, pts->d_base, pts->d_w, pts->ns, pts->nsa[1], (long long)L->stride_y,
            (long long)L->stride_z, da, dstride, scale, (flags & WAVE_INJECT_PHYSICAL) != 0, dvinv, (int)pts->n);
    else
        k_inject<<<(unsigned)pts->n, 128, 0, stream_of(s)>>>(
            s->cur, s->vel, pts->d_base, pts->d_w, pts->ns, pts->nsa[1], (long long)L->stride_y,
            (long long)L->stride_z, da, dstride, scale, (flags & WAVE_INJECT_PHYSICAL) != 0, dvinv, (int)pts->n);
    CUDA_TRY_LAUNCH();
    return 0;
}

extern "C" int wave_cu_sample(struct wave_sim *s, const struct wave_points *pts, float *out,
                              size_t stride, unsigned flags)
{
    if (!pts->n)
        return 0;
    const struct wave_layout *L = &s->L;
    float *dout = out;
    long long dstride = (long long)stride;
    if (!(flags & WAVE_BUF_DEVICE)) {
        void *t = NULL;
        int rc = wave_cu_scratch(s, pts->n * sizeof(float), &t);
        if (rc < 0)
            return rc;
        dout = (float *)t;
        dstride = 1;
    }
    const unsigned grid = (unsigned)((pts->n + POINT_WARPS - 1) / POINT_WARPS);
    const long long sy = (long long)L->stride_y, sz = (long long)L->stride_z;
    const int nsy = pts->nsa[1], n = (int)pts->n;
#define SAMPLE(NS, NSY)                                                                                               \
    k_sample<NS, NSY><<<grid, 32 * POINT_WARPS, 0, stream_of(s)>>>(s->cur, pts->d_base, pts->d_w, sy, sz, dout, dstride, n)
    if (pts->ns == 8 && nsy == 8)
        SAMPLE(8, 8);
    else if (pts->ns == 8)
        SAMPLE(8, 1); /* 2D */
    else if (pts->ns == 2 && nsy == 2)
        SAMPLE(2, 2);
    else if (pts->ns == 2)
        SAMPLE(2, 1);
    else
        SAMPLE(1, 1);
#undef SAMPLE
    CUDA_TRY_LAUNCH();
    if (!(flags & WAVE_BUF_DEVICE)) {
        float *h = (float *)malloc(pts->n * sizeof(float));
        if (!h)
            return err_set(-ENOMEM, "wave_sample: out of memory");
        int rc = dev_copy(s->dev, h, dout, pts->n * sizeof(float), DEV_D2H, s->stream);
        if (rc == 0)
            rc = dev_stream_sync(s->dev, s->stream);
        if (rc < 0) {
            free(h);
            return err_prefix(rc, "wave_sample: samples");
        }
        for (size_t i = 0; i < pts->n; i++)
            out[i * stride] = h[i];
        free(h);
    }
    return 0;
}

