/* wave_xfer — device memory of the CUDA propagator and what moves through it: the
 * allocation of a simulation, the velocity (v^2 dt^2 on the device), Clapp's random
 * layers, the boundary strip of time reversal, and the copy bandwidth of the roofline. */
#include "kernels/wave_cuda.h"

#include "kernels/random_boundary.h"

/* ---- memory ------------------------------------------------------------------------------- */

static int cu_alloc(float **p, size_t count)
{
    *p = NULL;
    if (!count)
        return 0;
    cudaError_t e = cudaMalloc((void **)p, count * sizeof(float));
    if (e != cudaSuccess) {
        *p = NULL;
        (void)cudaGetLastError();
        return err_set(-ENOMEM, "wave: cudaMalloc of %.1f MiB failed: %s", count * 4.0 / 1048576.0,
                       cudaGetErrorName(e));
    }
    CUDA_TRY(cudaMemset(*p, 0, count * sizeof(float)));
    return 0;
}

extern "C" int wave_cu_alloc(struct wave_sim *s)
{
    /* the tuning is checked once, here, so that no step meets a choice it cannot run */
    WavePlan pl;
    int rc = wave_cu_plan(s, &pl);
    if (rc < 0)
        return rc;
    cudaStream_t aux;
    cudaEvent_t e1, e2;
    CUDA_TRY(cudaStreamCreateWithFlags(&aux, cudaStreamNonBlocking));
    s->aux_stream = aux;
    CUDA_TRY(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
    s->ev_fork = e1;
    CUDA_TRY(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
    s->ev_join = e2;
    if ((rc = cu_alloc(&s->cur, s->L.count)) < 0 || (rc = cu_alloc(&s->prev, s->L.count)) < 0 ||
        (rc = cu_alloc(&s->vel, s->L.count)) < 0)
        return rc;
    for (int a = 0; a < 3; a++) {
        if ((rc = cu_alloc(&s->psi[a], s->slab_count[a])) < 0 ||
            (rc = cu_alloc(&s->psi_alt[a], s->slab_count[a])) < 0 ||
            (rc = cu_alloc(&s->zeta[a], s->slab_count[a])) < 0 ||
            (rc = cu_alloc(&s->pa[a], s->L.npad[a])) < 0 || (rc = cu_alloc(&s->pb[a], s->L.npad[a])) < 0)
            return rc;
        CUDA_TRY(cudaMemcpy(s->pa[a], s->ha[a], s->L.npad[a] * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_TRY(cudaMemcpy(s->pb[a], s->hb[a], s->L.npad[a] * sizeof(float), cudaMemcpyHostToDevice));
    }
    return 0;
}

extern "C" void wave_cu_free(struct wave_sim *s)
{
    cudaFree(s->cur);
    cudaFree(s->prev);
    cudaFree(s->vel);
    for (int a = 0; a < 3; a++) {
        cudaFree(s->psi[a]);
        cudaFree(s->psi_alt[a]);
        cudaFree(s->zeta[a]);
        cudaFree(s->pa[a]);
        cudaFree(s->pb[a]);
    }
    cudaFree(s->scratch);
    if (s->ev_fork)
        cudaEventDestroy((cudaEvent_t)s->ev_fork);
    if (s->ev_join)
        cudaEventDestroy((cudaEvent_t)s->ev_join);
    if (s->aux_stream)
        cudaStreamDestroy((cudaStream_t)s->aux_stream);
}

extern "C" int wave_cu_memcpy(void *dst, const void *src, size_t bytes, int dir, void *stream)
{
    cudaMemcpyKind k = dir == 0 ? cudaMemcpyHostToDevice : dir == 1 ? cudaMemcpyDeviceToHost
                                                                    : cudaMemcpyDeviceToDevice;
    CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, k, (cudaStream_t)stream));
    return 0;
}

extern "C" int wave_cu_zero(void *p, size_t bytes, void *stream)
{
    CUDA_TRY(cudaMemsetAsync(p, 0, bytes, (cudaStream_t)stream));
    return 0;
}

extern "C" int wave_cu_sync(void *stream)
{
    CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream));
    return 0;
}

/* Device scratch (wave_cuda.h). */
int wave_cu_scratch(wave_sim *s, size_t bytes, void **out)
{
    if (s->scratch_bytes < bytes) {
        CUDA_TRY(cudaStreamSynchronize(stream_of(s)));
        cudaFree(s->scratch);
        s->scratch = NULL;
        s->scratch_bytes = 0;
        CUDA_TRY(cudaMalloc(&s->scratch, bytes));
        s->scratch_bytes = bytes;
    }
    *out = s->scratch;
    return 0;
}

/* ---- velocity ------------------------------------------------------------------------------ */

__global__ void k_vel(float *vel, const float *v, int n0, int n1, int n2, long long sy, long long sz,
                      int h, float dt2, bool to_field)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y, k = blockIdx.z;
    if (i >= n0 || j >= n1)
        return;
    long long c = (long long)(k + h) * sz + (long long)(j + h) * sy + (i + h);
    long long e = ((long long)k * n1 + j) * n0 + i;
    if (to_field)
        vel[c] = (float)((double)v[e] * v[e] * dt2);
    else
        ((float *)v)[e] = (float)(sqrt((double)vel[c] / dt2));
}

static int vel_io(wave_sim *s, float *v, bool on_device, bool to_field)
{
    const struct wave_layout *L = &s->L;
    size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
    float *dv = v;
    if (!on_device) {
        void *t;
        int rc = wave_cu_scratch(s, np * sizeof(float), &t);
        if (rc < 0)
            return rc;
        dv = (float *)t;
        if (to_field)
            CUDA_TRY(cudaMemcpyAsync(dv, v, np * sizeof(float), cudaMemcpyHostToDevice, stream_of(s)));
    }
    dim3 blk(32, 8), grd((L->npad[0] + 31) / 32, (L->npad[1] + 7) / 8, L->npad[2]);
    k_vel<<<grd, blk, 0, stream_of(s)>>>(s->vel, dv, L->npad[0], L->npad[1], L->npad[2],
                                        (long long)L->stride_y, (long long)L->stride_z, L->halo,
                                        (float)(s->p.dt * s->p.dt), to_field);
    CUDA_TRY_LAUNCH();
    if (!on_device) {
        if (!to_field)
            CUDA_TRY(cudaMemcpyAsync(v, dv, np * sizeof(float), cudaMemcpyDeviceToHost, stream_of(s)));
        CUDA_TRY(cudaStreamSynchronize(stream_of(s)));
    }
    return 0;
}

extern "C" int wave_cu_set_vel(struct wave_sim *s, const float *v, bool on_device)
{
    return vel_io(s, (float *)v, on_device, true);
}

extern "C" int wave_cu_get_vel(struct wave_sim *s, float *host) { return vel_io(s, host, false, false); }

/* The padded velocity (m/s) into device scratch, the random layers there
 * (random_boundary.cu), and back into v^2 dt^2: the same steps as the CPU path, on the
 * device. */
extern "C" int wave_cu_randomize_layers(struct wave_sim *s, const struct random_boundary *rb, uint64_t shot_id)
{
    const struct wave_layout *L = &s->L;
    size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
    void *t = NULL;
    int rc = wave_cu_scratch(s, np * sizeof(float), &t);
    if (rc == 0)
        rc = vel_io(s, (float *)t, true, false);
    if (rc == 0)
        rc = random_boundary_apply_cuda(rb, L->npad, L->n, L->pml, shot_id, (float *)t, s->stream);
    if (rc == 0)
        rc = vel_io(s, (float *)t, true, true);
    if (rc == 0)
        CUDA_TRY(cudaStreamSynchronize(stream_of(s)));
    return rc;
}

/* ---- strip ------------------------------------------------------------------------------------ */

struct Off3 {
    int v[3];
};

__global__ void k_strip3(float *f, float *buf, Box b, Off3 off, long long sy, long long sz, bool save)
{
    int n0 = b.hi[0] - b.lo[0], n1 = b.hi[1] - b.lo[1], n2 = b.hi[2] - b.lo[2];
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (long long)n0 * n1 * n2)
        return;
    int i = (int)(e % n0), j = (int)(e / n0 % n1), k = (int)(e / n0 / n1);
    long long c = (long long)(k + b.lo[2] + off.v[2]) * sz + (long long)(j + b.lo[1] + off.v[1]) * sy +
                  (i + b.lo[0] + off.v[0]);
    if (save)
        buf[e] = f[c];
    else
        f[c] = buf[e];
}

extern "C" int wave_cu_strip(struct wave_sim *s, float *buf, bool on_device, bool save)
{
    size_t cnt = wave_strip_count(s);
    if (!cnt)
        return 0;
    float *db = buf;
    if (!on_device) {
        void *t;
        int rc = wave_cu_scratch(s, cnt * sizeof(float), &t);
        if (rc < 0)
            return rc;
        db = (float *)t;
        if (!save)
            CUDA_TRY(cudaMemcpyAsync(db, buf, cnt * sizeof(float), cudaMemcpyHostToDevice, stream_of(s)));
    }
    int lo[6][3], hi[6][3];
    wave_strip_boxes(s, lo, hi);
    Off3 off = {{s->L.off[0], s->L.off[1], s->L.off[2]}};
    size_t at = 0;
    for (int b = 0; b < 6; b++) {
        Box bx;
        for (int q = 0; q < 3; q++) {
            bx.lo[q] = lo[b][q];
            bx.hi[q] = hi[b][q];
        }
        if (box_empty(bx))
            continue;
        size_t n = (size_t)(hi[b][0] - lo[b][0]) * (hi[b][1] - lo[b][1]) * (hi[b][2] - lo[b][2]);
        k_strip3<<<(unsigned)((n + 255) / 256), 256, 0, stream_of(s)>>>(
            s->cur, db + at, bx, off, (long long)s->L.stride_y, (long long)s->L.stride_z, save);
        CUDA_TRY_LAUNCH();
        at += n;
    }
    if (!on_device) {
        if (save)
            CUDA_TRY(cudaMemcpyAsync(buf, db, cnt * sizeof(float), cudaMemcpyDeviceToHost, stream_of(s)));
        CUDA_TRY(cudaStreamSynchronize(stream_of(s)));
    }
    return 0;
}

/* ---- benchmark helper ---------------------------------------------------------------------------- */

extern "C" int wave_copy_bandwidth(const struct sl_device *dev, size_t bytes, int reps, double *gbs)
{
    *gbs = 0;
    if (dev->kind != SL_DEVICE_CUDA)
        return err_set(-ENOTSUP, "wave_copy_bandwidth: not a CUDA device");
    void *a = NULL, *b = NULL;
    CUDA_TRY(cudaMalloc(&a, bytes));
    cudaError_t e = cudaMalloc(&b, bytes);
    if (e != cudaSuccess) {
        cudaFree(a);
        return CUDA_ERR("cudaMalloc", e);
    }
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    cudaMemset(a, 1, bytes);
    cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice); /* warm up */
    cudaEventRecord(t0);
    for (int r = 0; r < reps; r++)
        cudaMemcpyAsync(r % 2 ? a : b, r % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(t1);
    e = cudaEventSynchronize(t1);
    float ms = 0;
    cudaEventElapsedTime(&ms, t0, t1);
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    cudaFree(a);
    cudaFree(b);
    if (e != cudaSuccess)
        return CUDA_ERR("copy", e);
    *gbs = 2.0 * (double)bytes * reps / (ms * 1e-3) / 1e9;
    return 0;
}
