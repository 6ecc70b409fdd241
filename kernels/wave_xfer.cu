/* wave_xfer — device memory of the CUDA propagator and what moves through it: the
 * allocation of a simulation, the velocity (v^2 dt^2 on the device), Clapp's random
 * layers, the boundary strip of time reversal, and the copy bandwidth of the roofline. */
#include "kernels/wave_cuda.h"

#include "kernels/device.h"
#include "kernels/random_boundary.h"

/* ---- memory ------------------------------------------------------------------------------- */

/* COUNT floats of zeroed device memory (NULL for 0: a layer-less axis has no CPML memory). */
static int alloc_zero(const wave_sim *s, float **p, size_t count)
{
    *p = NULL;
    if (!count)
        return 0;
    void *v;
    int rc = dev_alloc(s->dev, count * sizeof(float), &v);
    if (rc < 0)
        return err_prefix(rc, "wave");
    *p = (float *)v;
    return dev_zero(s->dev, v, count * sizeof(float), NULL);
}

extern "C" int wave_cu_alloc(struct wave_sim *s)
{
    /* the tuning is checked once, here, so that no step meets a choice it cannot run */
    WavePlan pl;
    int rc = wave_cu_plan(s, &pl);
    if (rc < 0 || (rc = dev_stream_create(s->dev, &s->aux_stream)) < 0 ||
        (rc = dev_event_create(s->dev, &s->ev_fork, false)) < 0 ||
        (rc = dev_event_create(s->dev, &s->ev_join, false)) < 0)
        return rc;
    if ((rc = alloc_zero(s, &s->cur, s->L.count)) < 0 || (rc = alloc_zero(s, &s->prev, s->L.count)) < 0 ||
        (rc = alloc_zero(s, &s->vel, s->L.count)) < 0)
        return rc;
    for (int a = 0; a < 3; a++) {
        const size_t np = (size_t)s->L.npad[a];
        if ((rc = alloc_zero(s, &s->psi[a], s->slab_count[a])) < 0 ||
            (rc = alloc_zero(s, &s->psi_alt[a], s->slab_count[a])) < 0 ||
            (rc = alloc_zero(s, &s->zeta[a], s->slab_count[a])) < 0 || (rc = alloc_zero(s, &s->pa[a], np)) < 0 ||
            (rc = alloc_zero(s, &s->pb[a], np)) < 0 ||
            (rc = dev_copy(s->dev, s->pa[a], s->ha[a], np * sizeof(float), DEV_H2D, NULL)) < 0 ||
            (rc = dev_copy(s->dev, s->pb[a], s->hb[a], np * sizeof(float), DEV_H2D, NULL)) < 0)
            return rc;
    }
    return 0;
}

extern "C" void wave_cu_free(struct wave_sim *s)
{
    dev_free(s->dev, s->cur);
    dev_free(s->dev, s->prev);
    dev_free(s->dev, s->vel);
    for (int a = 0; a < 3; a++) {
        dev_free(s->dev, s->psi[a]);
        dev_free(s->dev, s->psi_alt[a]);
        dev_free(s->dev, s->zeta[a]);
        dev_free(s->dev, s->pa[a]);
        dev_free(s->dev, s->pb[a]);
    }
    dev_free(s->dev, s->scratch);
    dev_event_destroy(s->dev, s->ev_fork);
    dev_event_destroy(s->dev, s->ev_join);
    dev_stream_destroy(s->dev, s->aux_stream);
}


/* Device scratch (wave_cuda.h). */
int wave_cu_scratch(wave_sim *s, size_t bytes, void **out)
{
    if (s->scratch_bytes < bytes) {
        int rc = dev_stream_sync(s->dev, s->stream); /* the old scratch may be in use */
        if (rc < 0)
            return rc;
        dev_free(s->dev, s->scratch);
        s->scratch = NULL;
        s->scratch_bytes = 0;
        if ((rc = dev_alloc(s->dev, bytes, &s->scratch)) < 0)
            return err_prefix(rc, "wave: scratch");
        s->scratch_bytes = bytes;
    }
    *out = s->scratch;
    return 0;
}

/* ---- velocity ------------------------------------------------------------------------------ */

/* HY: the index of padded y = 0 (h, or 0 in 2D). */
__global__ void k_vel(float *vel, const float *v, int n0, int n1, int n2, long long sy, long long sz,
                      int h, int hy, float dt2, bool to_field)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y, k = blockIdx.z;
    if (i >= n0 || j >= n1)
        return;
    long long c = (long long)(k + h) * sz + (long long)(j + hy) * sy + (i + h);
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
        void *t = NULL;
        int rc = wave_cu_scratch(s, np * sizeof(float), &t);
        if (rc < 0)
            return rc;
        dv = (float *)t;
        if (to_field && (rc = dev_copy(s->dev, dv, v, np * sizeof(float), DEV_H2D, s->stream)) < 0)
            return rc;
    }
    dim3 blk(32, 8), grd((L->npad[0] + 31) / 32, (L->npad[1] + 7) / 8, L->npad[2]);
    k_vel<<<grd, blk, 0, stream_of(s)>>>(s->vel, dv, L->npad[0], L->npad[1], L->npad[2],
                                        (long long)L->stride_y, (long long)L->stride_z, L->halo, L->pad_off[1],
                                        (float)(s->p.dt * s->p.dt), to_field);
    CUDA_TRY_LAUNCH();
    if (!on_device) {
        int rc = to_field ? 0 : dev_copy(s->dev, v, dv, np * sizeof(float), DEV_D2H, s->stream);
        return rc < 0 ? rc : dev_stream_sync(s->dev, s->stream);
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
extern "C" int wave_cu_randomize_layers(struct wave_sim *s, const struct random_boundary *rb,
                                        const struct rb_frame *g, uint64_t shot_id)
{
    const struct wave_layout *L = &s->L;
    size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
    void *t = NULL;
    int rc = wave_cu_scratch(s, np * sizeof(float), &t);
    if (rc == 0)
        rc = vel_io(s, (float *)t, true, false);
    if (rc == 0)
        rc = random_boundary_apply_cuda(rb, g, L->npad, L->n, L->pml, shot_id, (float *)t, s->stream);
    if (rc == 0)
        rc = vel_io(s, (float *)t, true, true);
    if (rc == 0)
        rc = dev_stream_sync(s->dev, s->stream);
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
    float *const f[1] = {s->cur};
    return wave_cu_strip_fields(s, f, 1, s->L.halo, buf, on_device, save);
}

extern "C" int wave_cu_strip_fields(struct wave_sim *s, float *const *fields, int nf, int h, float *buf,
                                    bool on_device, bool save)
{
    const size_t cnt = (size_t)nf * wave_strip_count_width(s, h);
    if (!cnt)
        return 0;
    float *db = buf;
    if (!on_device) {
        void *t = NULL;
        int rc = wave_cu_scratch(s, cnt * sizeof(float), &t);
        if (rc < 0)
            return rc;
        db = (float *)t;
        if (!save && (rc = dev_copy(s->dev, db, buf, cnt * sizeof(float), DEV_H2D, s->stream)) < 0)
            return rc;
    }
    int lo[6][3], hi[6][3];
    wave_strip_boxes_width(s, h, lo, hi);
    Off3 off = {{s->L.off[0], s->L.off[1], s->L.off[2]}};
    size_t at = 0;
    for (int f = 0; f < nf; f++)
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
                fields[f], db + at, bx, off, (long long)s->L.stride_y, (long long)s->L.stride_z, save);
            CUDA_TRY_LAUNCH();
            at += n;
        }
    if (!on_device) {
        int rc = save ? dev_copy(s->dev, buf, db, cnt * sizeof(float), DEV_D2H, s->stream) : 0;
        return rc < 0 ? rc : dev_stream_sync(s->dev, s->stream);
    }
    return 0;
}

/* ---- benchmark helper ---------------------------------------------------------------------------- */

extern "C" int wave_copy_bandwidth(const struct sl_device *dev, size_t bytes, int reps, double *gbs)
{
    *gbs = 0;
    if (dev->kind != SL_DEVICE_CUDA)
        return err_set(-ENOTSUP, "wave_copy_bandwidth: not a CUDA device");
    void *a = NULL, *b = NULL, *t0 = NULL, *t1 = NULL;
    int rc = dev_alloc(dev, bytes, &a);
    if (rc == 0)
        rc = dev_alloc(dev, bytes, &b);
    if (rc == 0)
        rc = dev_event_create(dev, &t0, true);
    if (rc == 0)
        rc = dev_event_create(dev, &t1, true);
    if (rc == 0)
        rc = dev_zero(dev, a, bytes, NULL);
    if (rc == 0)
        rc = dev_copy(dev, b, a, bytes, DEV_D2D, NULL); /* warm up */
    float ms = 0;
    if (rc == 0) {
        /* the copies themselves as the kernels' stream work is queued: asynchronous, on
         * the default stream, between two events */
        cudaEventRecord((cudaEvent_t)t0);
        for (int r = 0; r < reps; r++)
            cudaMemcpyAsync(r % 2 ? a : b, r % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord((cudaEvent_t)t1);
        rc = dev_event_sync(dev, t1);
        if (rc == 0)
            rc = dev_event_elapsed_ms(dev, t0, t1, &ms);
    }
    dev_event_destroy(dev, t0);
    dev_event_destroy(dev, t1);
    dev_free(dev, a);
    dev_free(dev, b);
    if (rc < 0)
        return err_prefix(rc, "wave_copy_bandwidth");
    *gbs = 2.0 * (double)bytes * reps / (ms * 1e-3) / 1e9;
    return 0;
}
