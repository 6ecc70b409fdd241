/* implicit_cuda — the host side of the implicit operator on a GPU: device memory (the
 * Thomas factors, the lap and d scratch fields, the interface values), one step (psi,
 * the x, y and z sweeps, the free surface), and the boundary strategy's interface values
 * (computed on save, handed to the next reverse step on load).  The kernels:
 * implicit_kernels.cu; the design and the CPU reference: implicit_op.c, implicit_step.c. */
#include "kernels/implicit_cuda.h"

#include "kernels/device.h"

static int alloc_f(const wave_sim *s, float **p, size_t n)
{
    *p = NULL;
    if (n == 0)
        return 0;
    int rc = dev_alloc(s->dev, n * sizeof(float), (void **)p);
    if (rc == 0)
        rc = dev_zero(s->dev, *p, n * sizeof(float), NULL);
    return rc;
}

extern "C" int implicit_cu_alloc(struct wave_sim *s)
{
    struct implicit_state *im = s->imp;
    int rc;
    if ((rc = alloc_f(s, &im->d_cp, im->nmax)) < 0 || (rc = alloc_f(s, &im->d_inv, im->nmax)) < 0 ||
        (rc = alloc_f(s, &im->lap, s->L.count)) < 0 || (rc = alloc_f(s, &im->d_scratch, s->L.count)) < 0 ||
        (rc = alloc_f(s, &im->ifc, im->ifc_count)) < 0)
        return err_prefix(rc, "wave: implicit operator");
    /* the x sweeps' shared-memory limit, asked once here and not at every step */
    int dev = 0;
    CUDA_TRY(cudaGetDevice(&dev));
    CUDA_TRY(cudaDeviceGetAttribute(&im->smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    /* xyco's x-y kernel runs here, so that its clusters are placed before the psi pass
     * beside it takes the SMs (kernels/implicit_xyc.cu) */
    int lo = 0, hi = 0;
    cudaStream_t xs;
    CUDA_TRY(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    CUDA_TRY(cudaStreamCreateWithPriority(&xs, cudaStreamNonBlocking, hi));
    im->xy_stream = xs;
    if ((rc = dev_copy(s->dev, im->d_cp, im->cp, im->nmax * sizeof(float), DEV_H2D, NULL)) < 0 ||
        (rc = dev_copy(s->dev, im->d_inv, im->inv, im->nmax * sizeof(float), DEV_H2D, NULL)) < 0)
        return rc;
    return dev_sync(s->dev);
}

extern "C" void implicit_cu_free(struct wave_sim *s)
{
    struct implicit_state *im = s->imp;
    if (!im)
        return;
    dev_free(s->dev, im->d_cp);
    dev_free(s->dev, im->d_inv);
    dev_free(s->dev, im->lap);
    dev_free(s->dev, im->d_scratch);
    dev_free(s->dev, im->ifc);
    if (im->xy_stream)
        cudaStreamDestroy((cudaStream_t)im->xy_stream);
    im->xy_stream = NULL;
    im->d_cp = im->d_inv = im->lap = im->d_scratch = im->ifc = NULL;
}

void implicit_cu_rows(const wave_sim *s, int a, bool ifc, int *r0, int *r1)
{
    const struct implicit_state *im = s->imp;
    const struct wave_layout *L = &s->L;
    const bool mirror = a == 2 && s->p.free_surface;
    if (ifc) {
        *r0 = L->pml[2 * a] + im->lo[a];
        *r1 = L->pml[2 * a] + im->hi[a];
    } else {
        *r0 = mirror ? 1 : 0;
        *r1 = L->npad[a];
    }
}

static IArgs iargs(const wave_sim *s)
{
    const struct implicit_state *im = s->imp;
    const struct wave_layout *L = &s->L;
    IArgs A;
    memset(&A, 0, sizeof A);
    A.p = s->cur;
    A.lap = im->lap;
    A.d = im->d_scratch;
    A.q = s->prev;
    A.vel = s->vel;
    A.cp = im->d_cp;
    A.inv = im->d_inv;
    A.sy = (long long)L->stride_y;
    A.sz = (long long)L->stride_z;
    A.h = L->halo;
    A.hy = L->pad_off[1];
    memcpy(A.c, im->c, sizeof A.c);
    A.b = im->b;
    for (int a = 0; a < 3; a++) {
        A.lo[a] = im->lo[a];
        A.hi[a] = im->hi[a];
        A.npad[a] = L->npad[a];
    }
    for (int f = 0; f < 6; f++)
        A.pml[f] = L->pml[f];
    A.mirror = s->p.free_surface;
    long long off = 0;
    for (int a = 0; a < 3; a++) {
        A.ifc_off[a] = off;
        A.ifc_half[a] = (long long)(im->ifc_n[a] / 2);
        off += (long long)im->ifc_n[a];
    }
    A.ifc_in = im->ifc;
    A.m = pargs(s);
    memcpy(A.c1, s->c1, sizeof A.c1);
    return A;
}

/* Whether the step runs tuning overlap's arrangement: the x sweep on the second stream
 * beside the y sweep, which writes its own field (the d scratch, unused by the scan
 * kernels), z adding both.  3D lines that the scan kernels hold (else the plain order). */
static bool overlap_xy(const wave_sim *s, const IArgs &A)
{
    if (wave_implicit_yz_of(&s->p.tuning) != WAVE_IMPLICIT_YZ_OVERLAP || A.ifc_out || wave_is_2d(s))
        return false;
    int r0, r1;
    for (int a = 1; a < 3; a++) {
        implicit_cu_rows(s, a, A.ifc, &r0, &r1);
        if (r1 - r0 > IMPLICIT_YS_MAX)
            return false;
    }
    return true;
}

static int sweeps_overlap(const wave_sim *s, IArgs &A, cudaStream_t st)
{
    cudaStream_t aux = (cudaStream_t)s->aux_stream;
    int rc;
    if ((rc = dev_event_record(s->dev, s->ev_fork, st)) < 0 || (rc = dev_stream_wait(s->dev, aux, s->ev_fork)) < 0)
        return rc;
    A.first = true;
    A.lap2 = NULL;
    /* the x sweep's persistent grid would fill every SM's registers: half of them, so
     * that y's blocks run beside it (regs: 1 of 2 blocks, warp: 2 of 5) */
    A.x_blocks_per_sm = wave_implicit_x_of(&s->p.tuning) == WAVE_IMPLICIT_X_REGS ? 1 : 2;
    rc = implicit_cu_sweep_x(s, A, aux);
    A.x_blocks_per_sm = 0;
    if (rc < 0)
        return rc;
    IArgs Y = A;
    Y.lap2 = s->imp->d_scratch;
    if ((rc = implicit_cu_sweep_y(s, Y, st)) < 0)
        return rc;
    if ((rc = dev_event_record(s->dev, s->ev_join, aux)) < 0 || (rc = dev_stream_wait(s->dev, st, s->ev_join)) < 0)
        return rc;
    A.first = false;
    A.lap2 = s->imp->d_scratch;
    rc = implicit_cu_sweep_z(s, A, st);
    A.lap2 = NULL;
    return rc;
}

/* The sweeps of every axis over A's box (A.ifc_out: interface values only). */
static int sweeps(wave_sim *s, IArgs &A, cudaStream_t st)
{
    int rc;
    if (overlap_xy(s, A))
        return sweeps_overlap(s, A, st);
    if (wave_implicit_yz_is_xy(wave_implicit_yz_of(&s->p.tuning))) {
        A.first = true;
        rc = implicit_cu_sweep_xy(s, A, st); /* runs the psi pass too where A.psi_beside */
        if (rc != -ENOTSUP) {
            A.first = false;
            A.psi_beside = false;
            return rc < 0 ? rc : implicit_cu_sweep_z(s, A, st);
        }
    }
    if (A.psi_beside) { /* the x-y kernel does not run here: the psi pass first, as usual */
        if ((rc = wave_cu_psi(s, st)) < 0)
            return rc;
        A.psi_beside = false;
    }
    A.first = true;
    if ((rc = implicit_cu_sweep_x(s, A, st)) < 0)
        return rc;
    A.first = false;
    if (!wave_is_2d(s) && (rc = implicit_cu_sweep_y(s, A, st)) < 0)
        return rc;
    return implicit_cu_sweep_z(s, A, st);
}

/* The arguments of a step's sweeps (implicit_cu_step: CPML and INTERIOR as wave.c's). */
static IArgs step_args(struct wave_sim *s, bool &cpml, bool interior)
{
    struct implicit_state *im = s->imp;
    const struct wave_layout *L = &s->L;
    cpml = cpml && (s->slab_count[0] + s->slab_count[1] + s->slab_count[2]) > 0;
    const bool ifc = im->ifc_valid && !cpml && im->ifc_count > 0;
    interior = interior && !cpml;
    IArgs A = iargs(s);
    A.cpml = cpml;
    A.ifc = ifc;
    for (int a = 0; a < 3; a++) {
        if (ifc) {
            A.blo[a] = L->pml[2 * a] + im->lo[a];
            A.bhi[a] = L->pml[2 * a] + im->hi[a];
        } else if (interior) {
            A.blo[a] = L->pml[2 * a];
            A.bhi[a] = L->pml[2 * a] + L->n[a];
        } else {
            A.blo[a] = 0;
            A.bhi[a] = L->npad[a];
        }
    }
    return A;
}

extern "C" int implicit_cu_step(struct wave_sim *s, bool cpml, bool interior)
{
    cudaStream_t st = stream_of(s);
    IArgs A = step_args(s, cpml, interior);
    s->imp->ifc_valid = false;
    int rc;
    /* xyco, xycf, xycs, xycp, xyct: the psi pass beside the x-y kernel (sweeps) */
    const int yz = wave_implicit_yz_of(&s->p.tuning);
    A.psi_beside = cpml && (yz == WAVE_IMPLICIT_YZ_XYCO || yz == WAVE_IMPLICIT_YZ_XYCF || yz == WAVE_IMPLICIT_YZ_XYCS ||
                            yz == WAVE_IMPLICIT_YZ_XYCP || yz == WAVE_IMPLICIT_YZ_XYCT);
    if (cpml && !A.psi_beside && (rc = wave_cu_psi(s, st)) < 0)
        return rc;
    if ((rc = sweeps(s, A, st)) < 0)
        return rc;
    if (s->p.free_surface)
        return wave_cu_free_surface(s, st);
    return 0;
}

extern "C" int implicit_cu_ifc_io(struct wave_sim *s, float *buf, bool on_device, bool save)
{
    struct implicit_state *im = s->imp;
    const size_t bytes = im->ifc_count * sizeof(float);
    if (bytes == 0)
        return 0;
    cudaStream_t st = stream_of(s);
    if (!save) {
        int rc = dev_copy(s->dev, im->ifc, buf, bytes, on_device ? DEV_D2D : DEV_H2D, s->stream);
        if (rc == 0 && !on_device)
            rc = dev_stream_sync(s->dev, s->stream);
        if (rc == 0)
            im->ifc_valid = true;
        return rc;
    }
    float *out = buf;
    if (!on_device) {
        void *t;
        int rc = wave_cu_scratch(s, bytes, &t);
        if (rc < 0)
            return rc;
        out = (float *)t;
    }
    IArgs A = iargs(s);
    A.ifc_out = out;
    for (int a = 0; a < 3; a++) {
        A.blo[a] = s->L.pml[2 * a] + im->lo[a];
        A.bhi[a] = s->L.pml[2 * a] + im->hi[a];
    }
    int rc = sweeps(s, A, st);
    if (rc == 0 && !on_device) {
        rc = dev_copy(s->dev, buf, out, bytes, DEV_D2H, s->stream);
        if (rc == 0)
            rc = dev_stream_sync(s->dev, s->stream);
    }
    return rc;
}

/* For seislive-bench: each part of a step alone, REPS times (the psi pass with CPML on,
 * the x, y and z sweeps in the sequential arrangement, the x-y kernel), mean ms each into
 * MS[5]. */
extern "C" int implicit_cu_sweep_times(struct wave_sim *s, int reps, double ms[5])
{
    cudaStream_t st = stream_of(s);
    bool cpml = s->cpml_on;
    IArgs A = step_args(s, cpml, false);
    cudaEvent_t e0, e1;
    CUDA_TRY(cudaEventCreate(&e0));
    CUDA_TRY(cudaEventCreate(&e1));
    int rc = 0;
    const bool xy = wave_implicit_yz_is_xy(wave_implicit_yz_of(&s->p.tuning));
    for (int part = 0; part < 5 && rc == 0; part++) {
        ms[part] = 0;
        if ((part == 0 && !cpml) || (part == 2 && wave_is_2d(s)) || (part == 4 && !xy))
            continue;
        A.first = part == 1 || part == 4;
        CUDA_TRY(cudaEventRecord(e0, st));
        for (int i = 0; i < reps && rc == 0; i++)
            rc = part == 0 ? wave_cu_psi(s, st)
               : part == 1 ? implicit_cu_sweep_x(s, A, st)
               : part == 2 ? implicit_cu_sweep_y(s, A, st)
               : part == 3 ? implicit_cu_sweep_z(s, A, st)
                           : implicit_cu_sweep_xy(s, A, st);
        if (rc == -ENOTSUP) /* the x-y kernel does not run here */
            rc = 0;
        CUDA_TRY(cudaEventRecord(e1, st));
        CUDA_TRY(cudaEventSynchronize(e1));
        float t = 0;
        CUDA_TRY(cudaEventElapsedTime(&t, e0, e1));
        ms[part] = reps > 0 ? t / reps : 0;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return rc;
}
