/* tti_medium — a GPU simulation's quantised medium built on the device from the interior
 * model (kernels/tti_cuda.h tti_cu_build_medium; kernels/tti.c set_medium_gpu calls it).
 *
 * v_pz and whichever of eps, delta, theta, phi are arrays go up once (pageable copies on
 * the legacy stream, so after tti_cu_alloc's zeroing), then one thread per padded point
 * writes vel, ed and tilt with the host's point functions (tti_internal.h: tti_vel_of,
 * tti_ed_of, tti_tilt_of, the same double arithmetic; fmod and nearbyint are exact) and
 * the taper of the host's table (tti_taper_pick: glibc's cos, evaluated on the host per
 * axis and padded index, not the device's), so the codes are kernels/tti.c
 * medium_planes' byte for byte (tests/gpu/test_gpu_tti_medium.c).  The halo cells keep
 * tti_cu_alloc's zero, as the CPU's and the slab path's do.  The host does no per-point
 * work. */
#include "kernels/tti_cuda.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/device.h"

namespace {

struct MArgs {
    const float *vpz, *eps, *del, *theta, *phi; /* interior model (device); NULL: the constant */
    double eps0, del0, theta0, phi0, dt2;
    uint32_t tilt0;                             /* the tilt code when theta and phi are both constant */
    bool tilt_const;
    const tti_taper *tx, *ty, *tz;              /* per padded index of each axis */
    float *vel;
    uint32_t *ed, *tilt;
    long long sy, sz, base;                     /* allocated strides; index of padded (0, 0, 0) */
    int n[3], npad[3], pml[6];
};

__host__ __device__ __forceinline__ int clampi(int v, int hi) { return v < 0 ? 0 : v >= hi ? hi - 1 : v; }
__host__ __device__ __forceinline__ double at(const float *a, double c, size_t i) { return a ? (double)a[i] : c; }

/* The medium at padded (I, J, K) (host and device: a host build of this function can be
 * checked against the CPU's medium_planes without a GPU). */
__host__ __device__ __forceinline__ void medium_point(const MArgs &a, int i, int j, int k)
{
    const int ix = clampi(i - a.pml[0], a.n[0]), jy = clampi(j - a.pml[2], a.n[1]), kz = clampi(k - a.pml[4], a.n[2]);
    const size_t si = ((size_t)kz * a.n[1] + jy) * a.n[0] + ix;
    const long long c = a.base + (long long)k * a.sz + (long long)j * a.sy + i;
    const double taper = tti_taper_pick(a.tx[i], a.ty[j], a.tz[k]);
    a.vel[c] = tti_vel_of((double)a.vpz[si], a.dt2);
    a.ed[c] = tti_ed_of(taper, at(a.eps, a.eps0, si), at(a.del, a.del0, si));
    a.tilt[c] = a.tilt_const ? a.tilt0 : tti_tilt_of(at(a.theta, a.theta0, si), at(a.phi, a.phi0, si));
}

__global__ void __launch_bounds__(128) k_tti_medium(MArgs a)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= a.npad[0])
        return;
    for (int k = blockIdx.z; k < a.npad[2]; k += gridDim.z)
        for (int j = blockIdx.y; j < a.npad[1]; j += gridDim.y)
            medium_point(a, i, j, k);
}

/* The kernel's arguments: simulation S's layout and medium arrays, model M's constants,
 * D[5] its v_pz, eps, delta, theta, phi where given as arrays (else NULL), TAB the taper
 * table (all where the points run: device memory for the kernel). */
MArgs medium_args(const tti_sim *s, const tti_model *m, float *const d[5], const tti_taper *tab)
{
    const struct wave_layout *L = &s->w.L;
    MArgs a;
    memset(&a, 0, sizeof a);
    a.vpz = d[0];
    a.eps = d[1];
    a.del = d[2];
    a.theta = d[3];
    a.phi = d[4];
    a.eps0 = m->eps0;
    a.del0 = m->delta0;
    a.theta0 = m->theta0;
    a.phi0 = m->phi0;
    a.dt2 = s->w.p.dt * s->w.p.dt;
    a.tilt_const = !m->theta && !m->phi;
    a.tilt0 = tti_tilt_of(m->theta0, m->phi0);
    a.tx = tab;
    a.ty = tab + L->npad[0];
    a.tz = a.ty + L->npad[1];
    a.vel = s->w.vel;
    a.ed = s->ed;
    a.tilt = s->tilt;
    a.sy = (long long)L->stride_y;
    a.sz = (long long)L->stride_z;
    a.base = (long long)L->pad_off[2] * a.sz + (long long)L->pad_off[1] * a.sy + L->pad_off[0];
    for (int k = 0; k < 3; k++) {
        a.n[k] = L->n[k];
        a.npad[k] = L->npad[k];
    }
    for (int f = 0; f < 6; f++)
        a.pml[f] = L->pml[f];
    return a;
}

double secs(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

} // namespace

extern "C" int tti_cu_build_medium(struct tti_sim *s, const struct tti_model *m, const struct tti_taper *tab,
                                   double t[2], size_t *bytes)
{
    t[0] = t[1] = 0;
    *bytes = 0;
    const wave_sim *w = &s->w;
    const struct wave_layout *L = &w->L;
    const sl_device *dev = w->dev;
    const size_t n = (size_t)L->n[0] * L->n[1] * L->n[2], ntab = (size_t)L->npad[0] + L->npad[1] + L->npad[2];
    const float *src[5] = {m->vpz, m->eps, m->delta, m->theta, m->phi};
    int na = 0;
    for (int k = 0; k < 5; k++)
        na += src[k] != NULL;
    /* one block: the arrays given, then the taper table (8-byte aligned: n floats each
     * rounded up to an even count) */
    const size_t fl = (n + 1) / 2 * 2, total = (size_t)na * fl * sizeof(float) + ntab * sizeof(tti_taper);
    const double t0 = secs();
    void *blk = NULL;
    int rc = dev_alloc(dev, total, &blk);
    if (rc < 0)
        return rc; /* -ENOMEM: no room for the model's copy (the caller builds on the host) */
    float *d[5] = {NULL, NULL, NULL, NULL, NULL};
    float *p = (float *)blk;
    for (int k = 0; k < 5 && rc == 0; k++) {
        if (!src[k])
            continue;
        d[k] = p;
        p += fl;
        rc = dev_copy(dev, d[k], src[k], n * sizeof(float), DEV_H2D, NULL);
    }
    tti_taper *dtab = (tti_taper *)p;
    if (rc == 0)
        rc = dev_copy(dev, dtab, tab, ntab * sizeof(tti_taper), DEV_H2D, NULL);
    const double t1 = secs();
    if (rc == 0) {
        const MArgs a = medium_args(s, m, d, dtab);
        const dim3 blkd(128), grd((L->npad[0] + 127) / 128, L->npad[1] < 65535 ? L->npad[1] : 65535,
                                  L->npad[2] < 65535 ? L->npad[2] : 65535);
        k_tti_medium<<<grd, blkd, 0, 0>>>(a);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            rc = CUDA_ERR("k_tti_medium launch", e);
        if (rc == 0)
            rc = dev_sync(dev);
    }
    dev_free(dev, blk);
    t[0] = t1 - t0;
    t[1] = secs() - t1;
    *bytes = (size_t)na * n * sizeof(float);
    return rc;
}
