/* wave — the propagator: layout, life cycle and the CPU reference (OpenMP).
 * The CUDA twin (wave.cu) shares everything here except the kernels. */
#include "kernels/wave.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpml.h"
#include "kernels/device.h"
#include "kernels/fd_coeffs.h"
#include "kernels/implicit.h"
#include "kernels/operator.h"
#include "kernels/propagator.h"
#include "kernels/random_boundary.h"
#include "kernels/wave_internal.h"
#include "kernels/wave_tuning.h"
#include "stream/error.h"

#define ALIGN_X 32 /* x rows rounded up to 128 bytes */

static bool on_gpu(const struct wave_sim *s) { return s->dev->kind == SL_DEVICE_CUDA; }

static const char *const face_names[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
static const char *const kind_names[6] = {"auto", "cpml", "free", "random", "none", "halo"};

/* Layer cells a grid of P holds beyond face F (a HALO face's pml[f] is the whole grid's). */
static int layers_of(const struct wave_params *p, int f)
{
    int k = wave_face_kind(p, f);
    return k == WAVE_FACE_CPML || k == WAVE_FACE_RANDOM ? p->pml[f] : 0;
}

static bool is_whole(const struct wave_params *p)
{
    return !p->global_n[0] && !p->global_n[1] && !p->global_n[2];
}

/* The face kinds and the subdomain (after the basic checks of wave_params_check). */
static int check_faces(const struct wave_params *p)
{
    for (int f = 0; f < 6; f++)
        if (p->face[f] < WAVE_FACE_AUTO || p->face[f] > WAVE_FACE_HALO)
            return err_set(-EINVAL, "wave: face %s: unknown kind %d", face_names[f], p->face[f]);
    if (p->free_surface && wave_face_kind(p, 4) != WAVE_FACE_FREE)
        return err_set(-EINVAL, "wave: free_surface set but face zmin is %s", kind_names[p->face[4]]);
    const int halo = p->order / 2;
    bool random = false, cpml_layers = false;
    for (int f = 0; f < 6; f++) {
        const int k = wave_face_kind(p, f), a = f / 2;
        const char *name = face_names[f];
        switch (k) {
        case WAVE_FACE_FREE:
            if (f != 4)
                return err_set(-EINVAL, "wave: face %s: a free surface only on zmin", name);
            if (p->pml[f] != 0)
                return err_set(-EINVAL, "wave: free surface on top but pml[4] (zmin) = %d: must be 0", p->pml[f]);
            break;
        case WAVE_FACE_NONE:
            if (a != 1)
                return err_set(-EINVAL, "wave: face %s is NONE: only the y faces may be (a 2D model is x-z, "
                               "n = [nx, 1, nz])", name);
            if (wave_face_kind(p, f ^ 1) != WAVE_FACE_NONE)
                return err_set(-EINVAL, "wave: face %s is NONE but %s is %s: a 2D model has both y faces NONE",
                               name, face_names[f ^ 1], kind_names[wave_face_kind(p, f ^ 1)]);
            if (p->n[1] != 1)
                return err_set(-EINVAL, "wave: NONE y faces (2D) need n[1] = 1, not %d", p->n[1]);
            if (p->pml[f] != 0)
                return err_set(-EINVAL, "wave: face %s is NONE: pml[%d] = %d must be 0", name, f, p->pml[f]);
            break;
        case WAVE_FACE_HALO:
            if (is_whole(p))
                return err_set(-EINVAL, "wave: face %s is HALO but global_n is not set: a subdomain needs its "
                               "place in the whole grid (origin, global_n)", name);
            if (p->n[a] < halo)
                return err_set(-EINVAL, "wave: face %s is HALO: n[%d] = %d must be >= order/2 = %d (the planes "
                               "a neighbour reads)", name, a, p->n[a], halo);
            break;
        case WAVE_FACE_RANDOM:
            random = true;
            break;
        case WAVE_FACE_CPML:
            cpml_layers = cpml_layers || p->pml[f] > 0;
            break;
        }
    }
    if (random && cpml_layers)
        return err_set(-EINVAL, "wave: RANDOM faces beside CPML faces with layers: the CPML damping is one "
                       "switch for all layers; make the others RANDOM too (or CPML of width 0)");
    if (!(p->vmax_cpml >= 0) || !isfinite(p->vmax_cpml))
        return err_set(-EINVAL, "wave: vmax_cpml %g: must be >= 0 (0: the model's maximum)", p->vmax_cpml);
    if (is_whole(p)) {
        for (int a = 0; a < 3; a++)
            if (p->origin[a])
                return err_set(-EINVAL, "wave: origin[%d] = %d given without global_n", a, p->origin[a]);
        return 0;
    }
    for (int a = 0; a < 3; a++) {
        const int o = p->origin[a], gn = p->global_n[a];
        if (gn < 1 || o < 0 || o + p->n[a] > gn)
            return err_set(-EINVAL, "wave: subdomain axis %c: points %d..%d do not lie in the whole grid of %d",
                           "xyz"[a], o, o + p->n[a] - 1, gn);
        /* A face inside the whole grid has a neighbour beyond it; one on its boundary has not. */
        const bool inside[2] = {o > 0, o + p->n[a] < gn};
        for (int side = 0; side < 2; side++) {
            const int f = 2 * a + side;
            const bool halo_face = wave_face_kind(p, f) == WAVE_FACE_HALO;
            if (inside[side] && !halo_face)
                return err_set(-EINVAL, "wave: face %s lies inside the whole grid (axis %c: points %d..%d of %d) "
                               "but is %s: faces inside must be HALO", face_names[f], "xyz"[a], o,
                               o + p->n[a] - 1, gn, kind_names[wave_face_kind(p, f)]);
            if (!inside[side] && halo_face)
                return err_set(-EINVAL, "wave: face %s is HALO but lies on the whole grid's boundary (axis %c: "
                               "points %d..%d of %d)", face_names[f], "xyz"[a], o, o + p->n[a] - 1, gn);
        }
    }
    return 0;
}

int wave_params_check(const struct wave_params *p)
{
    if (p->order < 2 || p->order > WAVE_ORDER_MAX || p->order % 2)
        return err_set(-EINVAL, "wave: order %d: must be even, 2..%d", p->order, WAVE_ORDER_MAX);
    if (p->op != PROP_OP_TAYLOR && p->op != PROP_OP_OPTIMIZED && p->op != PROP_OP_IMPLICIT)
        return err_set(-EINVAL, "wave: derivative operator %d: unknown", p->op);
    if (!(p->op_band >= 0 && p->op_band < 1))
        return err_set(-EINVAL, "wave: operator band %g: must be in [0, 1)", p->op_band);
    if (p->op == PROP_OP_OPTIMIZED && p->op_band > 0 && p->op_band < 0.02)
        return err_set(-EINVAL, "wave: operator band %g: must be 0 (default) or >= 0.02 of Nyquist", p->op_band);
    for (int a = 0; a < 3; a++) {
        if (p->n[a] < 1)
            return err_set(-EINVAL, "wave: n[%d] = %d: must be >= 1", a, p->n[a]);
        if (!(p->d[a] > 0) || !isfinite(p->d[a]))
            return err_set(-EINVAL, "wave: d[%d] = %g: must be > 0", a, p->d[a]);
    }
    for (int f = 0; f < 6; f++)
        if (p->pml[f] < 0)
            return err_set(-EINVAL, "wave: pml[%d] = %d: must be >= 0", f, p->pml[f]);
    if (!(p->dt > 0) || !isfinite(p->dt))
        return err_set(-EINVAL, "wave: dt = %g: must be > 0", p->dt);
    if (p->free_surface && p->pml[4] != 0)
        return err_set(-EINVAL, "wave: free surface on top but pml[4] (zmin) = %d: must be 0",
                       p->pml[4]);
    if (!(p->pml_reflection > 0 && p->pml_reflection < 1))
        return err_set(-EINVAL, "wave: pml_reflection %g: must be in (0, 1)", p->pml_reflection);
    if (!(p->f_ref >= 0))
        return err_set(-EINVAL, "wave: f_ref %g: must be >= 0", p->f_ref);
    if (p->pml_degree < 0 || p->pml_degree > CPML_DEGREE_MAX)
        return err_set(-EINVAL, "wave: pml_degree %d: must be 1..%d (0: 2, the reference)", p->pml_degree,
                       CPML_DEGREE_MAX);
    if (p->cpml_memory != WAVE_CPML_MEM_FP32 && p->cpml_memory != WAVE_CPML_MEM_BF16)
        return err_set(-EINVAL, "wave: cpml_memory %d: unknown (0 fp32, 1 bf16)", p->cpml_memory);
    if (p->cpml_memory == WAVE_CPML_MEM_BF16 && p->op == PROP_OP_IMPLICIT)
        return err_set(-EINVAL, "wave: bf16 CPML memory is for the explicit operators (taylor, optimized); the "
                       "implicit operator keeps fp32");
    int rc = check_faces(p);
    if (rc == 0 && p->op == PROP_OP_IMPLICIT)
        rc = implicit_params_check(p);
    return rc;
}

int wave_layout_of(const struct wave_params *p, struct wave_layout *L)
{
    int rc = wave_params_check(p);
    if (rc < 0)
        return rc;
    memset(L, 0, sizeof *L);
    L->halo = p->order / 2;
    for (int f = 0; f < 6; f++)
        L->pml[f] = layers_of(p, f);
    for (int a = 0; a < 3; a++) {
        /* nothing beyond a NONE face: no halo (the 2D y axis is one plane) */
        const int h = wave_face_kind(p, 2 * a) == WAVE_FACE_NONE ? 0 : L->halo;
        L->n[a] = p->n[a];
        L->npad[a] = p->n[a] + L->pml[2 * a] + L->pml[2 * a + 1];
        L->dim[a] = L->npad[a] + 2 * h;
        L->pad_off[a] = h;
        L->off[a] = h + L->pml[2 * a];
    }
    L->dim[0] = (L->dim[0] + ALIGN_X - 1) / ALIGN_X * ALIGN_X;
    L->stride_y = (size_t)L->dim[0];
    L->stride_z = L->stride_y * (size_t)L->dim[1];
    L->count = L->stride_z * (size_t)L->dim[2];
    return 0;
}

size_t wave_memory_bytes(const struct wave_params *p)
{
    struct wave_layout L;
    if (wave_layout_of(p, &L) < 0)
        return 0;
    size_t sc[3];
    size_t slabs = wave_slab_counts(&L, sc);
    /* the implicit operator sums its Laplacian in one more field, and on a GPU keeps its
     * sweeps' d in another (kernels/implicit.h; the CPU has none: an upper bound there) */
    const size_t fields = p->op == PROP_OP_IMPLICIT ? 5 : 3;
    return sizeof(float) * (fields * L.count + 3 * slabs +
                            2 * (size_t)(L.npad[0] + L.npad[1] + L.npad[2]));
}

size_t wave_state_bytes_of(const struct wave_params *p)
{
    struct wave_layout L;
    if (wave_layout_of(p, &L) < 0)
        return 0;
    size_t sc[3];
    return sizeof(float) * (2 * L.count + 2 * wave_slab_counts(&L, sc)) + sizeof(int64_t);
}

/* ---- memory helpers (host or device) -------------------------------------------------- */

static int host_alloc(struct wave_sim *s, float **out, size_t count)
{
    (void)s;
    *out = NULL;
    if (count == 0)
        return 0;
    size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    *out = aligned_alloc(64, bytes);
    if (!*out)
        return err_set(-ENOMEM, "wave: out of host memory (%zu bytes)", bytes);
    memset(*out, 0, bytes);
    return 0;
}

/* Copy BYTES between simulation memory and a caller buffer.  SIM_SIDE_SRC tells which
 * side is the simulation's; CALLER_DEV whether the caller buffer is device memory. */
static int xfer(struct wave_sim *s, void *dst, const void *src, size_t bytes, bool to_caller,
                bool caller_dev)
{
    if (bytes == 0)
        return 0;
#ifdef SEISLIVE_CUDA
    if (on_gpu(s)) {
        int dir = caller_dev ? 2 : (to_caller ? 1 : 0);
        int rc = dev_copy(s->dev, dst, src, bytes, (enum dev_copy_kind)dir, s->stream);
        if (rc == 0 && dir != 2)
            rc = dev_stream_sync(s->dev, s->stream);
        return rc;
    }
#else
    (void)to_caller;
    (void)s;
#endif
    if (caller_dev)
        return err_set(-EINVAL, "wave: device buffer given to a CPU simulation");
    memcpy(dst, src, bytes);
    return 0;
}

static int zero(struct wave_sim *s, float *p, size_t count)
{
    if (!p || !count)
        return 0;
#ifdef SEISLIVE_CUDA
    if (on_gpu(s))
        return dev_zero(s->dev, p, count * sizeof(float), s->stream);
#endif
    (void)s;
    memset(p, 0, count * sizeof(float));
    return 0;
}

/* ---- life cycle ----------------------------------------------------------------------- */

/* Largest velocity of the interior grid V (all finite and > 0), or -EINVAL naming
 * the first bad point.  OpenMP: 128 MB models are checked for every shot. */
static int velocity_max(const struct wave_params *p, const float *v, double *vmax)
{
    size_t ninner = (size_t)p->n[0] * p->n[1] * p->n[2];
    float m = 0;
    int bad = 0;
#pragma omp parallel for reduction(max : m) reduction(| : bad) schedule(static)
    for (size_t i = 0; i < ninner; i++) {
        if (!(v[i] > 0) || !isfinite(v[i]))
            bad = 1;
        else if (v[i] > m)
            m = v[i];
    }
    if (bad)
        for (size_t i = 0; i < ninner; i++)
            if (!(v[i] > 0) || !isfinite(v[i]))
                return err_set(-EINVAL, "wave: velocity %g at interior point %zu (x %zu, y %zu, z %zu): must be finite and > 0",
                               v[i], i, i % p->n[0], i / p->n[0] % p->n[1], i / p->n[0] / p->n[1]);
    *vmax = m;
    return 0;
}

/* A simulation of P on DEV with fields, CPML memory and profiles (damping from VMAX)
 * allocated and zero; the velocity is the caller's to set. */
int wave_shell_init(struct wave_sim *s, const struct sl_device *dev, const struct wave_params *p, double vmax,
                    const char *who)
{
    s->dev = dev;
    s->p = *p;
    s->cpml_on = true;
    int rc = wave_layout_of(p, &s->L);
    if (rc < 0)
        return rc;
    /* Faces resolved once, so that every kernel reads s->p.face (and free_surface) as
     * they are; a random boundary starts undamped, as RTM's random strategy runs it. */
    for (int f = 0; f < 6; f++) {
        s->p.face[f] = wave_face_kind(p, f);
        if (s->p.face[f] == WAVE_FACE_RANDOM)
            s->cpml_on = false;
    }
    s->p.free_surface = s->p.face[4] == WAVE_FACE_FREE;
    s->r = p->order / 2;
    /* The operator's weights (kernels/operator.h: Taylor's are fd_coeffs' own, bit for
     * bit; optimized ones designed over the band, Taylor first derivatives for the CPML;
     * the implicit operator's explicit weights are Taylor's, its recursion is s->imp).
     * Every kernel, CPU and CUDA, reads them from here.
     * (2D: the y weights are computed but no kernel uses them) */
    struct operator_coeffs oc;
    if ((rc = operator_design(p->op, p->order, p->op_band, &oc)) < 0)
        return err_prefix(rc, "%s", who);
    for (int a = 0; a < 3; a++) {
        for (int l = 0; l <= s->r; l++)
            s->c2[a][l] = (float)(oc.c2[l] / (p->d[a] * p->d[a]));
        for (int l = 0; l <= s->r; l++)
            s->c1[a][l] = (float)(oc.c1[l] / p->d[a]);
    }
    s->vmax = vmax;
    wave_slab_counts(&s->L, s->slab_count);
    for (int a = 0; a < 3; a++) {
        int np = s->L.npad[a];
        s->ha[a] = malloc(sizeof(float) * np);
        s->hb[a] = malloc(sizeof(float) * np);
        if (!s->ha[a] || !s->hb[a])
            return err_set(-ENOMEM, "%s: out of memory", who);
        /* A layer's profile depends only on its own width, the depth into it and vmax: a
         * subdomain holding a face of the whole grid (same width, the whole model's
         * vmax_cpml) has that face's profile, bit for bit. */
        cpml_profile(np, s->L.pml[2 * a], s->L.pml[2 * a + 1], p->d[a], p->dt, vmax,
                     p->pml_reflection, p->f_ref, p->pml_degree ? p->pml_degree : 2, s->ha[a], s->hb[a]);
    }
    return 0;
}

static int create_core(const struct sl_device *dev, const struct wave_params *p, double vmax,
                       struct wave_sim **out)
{
    *out = NULL;
    struct wave_sim *s = calloc(1, sizeof *s);
    if (!s)
        return err_set(-ENOMEM, "wave: out of memory");
    int rc = wave_shell_init(s, dev, p, vmax, "wave");
    if (rc == 0 && p->op == PROP_OP_IMPLICIT)
        rc = implicit_init(s);
    if (rc < 0)
        goto fail;
#ifndef SEISLIVE_CUDA
    if (dev->kind == SL_DEVICE_CUDA) {
        rc = err_set(-ENODEV, "wave: CUDA device given, but this build has no CUDA");
        goto fail;
    }
#endif
#ifdef SEISLIVE_CUDA
    if (on_gpu(s)) {
        rc = wave_cu_alloc(s);
        if (rc == 0 && s->imp)
            rc = implicit_cu_alloc(s);
        if (rc < 0)
            goto fail;
    } else
#endif
    {
        if ((rc = host_alloc(s, &s->cur, s->L.count)) < 0 ||
            (rc = host_alloc(s, &s->prev, s->L.count)) < 0 ||
            (rc = host_alloc(s, &s->vel, s->L.count)) < 0)
            goto fail;
        if (s->imp && (rc = host_alloc(s, &s->imp->lap, s->L.count)) < 0)
            goto fail;
        for (int a = 0; a < 3; a++) {
            if ((rc = host_alloc(s, &s->psi[a], s->slab_count[a])) < 0 ||
                (rc = host_alloc(s, &s->zeta[a], s->slab_count[a])) < 0)
                goto fail;
            s->pa[a] = s->ha[a];
            s->pb[a] = s->hb[a];
        }
    }
    *out = s;
    return 0;
fail:
    wave_destroy(s);
    return rc;
}

int wave_create(const struct sl_device *dev, const struct wave_params *p, const float *v,
                struct wave_sim **out)
{
    *out = NULL;
    double vmax = 0;
    struct wave_sim *s;
    int rc = wave_params_check(p);
    if (rc < 0 || (rc = velocity_max(p, v, &vmax)) < 0)
        return rc;
    if (p->vmax_cpml > 0)
        vmax = p->vmax_cpml;
    if ((rc = create_core(dev, p, vmax, &s)) < 0)
        return rc;
    if ((rc = wave_set_velocity(s, v)) < 0) {
        wave_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

int wave_create_like(const struct wave_sim *like, struct wave_sim **out)
{
    struct wave_sim *s;
    int rc = create_core(like->dev, &like->p, like->vmax, &s);
    if (rc < 0)
        return rc;
#ifdef SEISLIVE_CUDA
    if (on_gpu(s)) {
        rc = dev_copy(s->dev, s->vel, like->vel, s->L.count * sizeof(float), DEV_D2D, like->stream);
        if (rc == 0)
            rc = dev_stream_sync(s->dev, like->stream);
    } else
#endif
        memcpy(s->vel, like->vel, s->L.count * sizeof(float));
    if (rc < 0) {
        wave_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

void wave_destroy(struct wave_sim *s)
{
    if (!s)
        return;
#ifdef SEISLIVE_CUDA
    if (on_gpu(s) && s->imp)
        implicit_cu_free(s);
#endif
    implicit_free(s);
#ifdef SEISLIVE_CUDA
    if (on_gpu(s))
        wave_cu_free(s);
    else
#endif
    {
        free(s->cur);
        free(s->prev);
        free(s->vel);
        for (int a = 0; a < 3; a++) {
            free(s->psi[a]);
            free(s->zeta[a]);
        }
    }
    for (int a = 0; a < 3; a++) {
        free(s->ha[a]);
        free(s->hb[a]);
    }
    free(s);
}

const struct wave_params *wave_params_of(const struct wave_sim *s) { return &s->p; }
const struct wave_layout *wave_layout(const struct wave_sim *s) { return &s->L; }
const struct sl_device *wave_device(const struct wave_sim *s) { return s->dev; }
void wave_set_stream(struct wave_sim *s, void *stream) { s->stream = stream; }

int wave_sync(struct wave_sim *s)
{
#ifdef SEISLIVE_CUDA
    if (on_gpu(s))
        return dev_stream_sync(s->dev, s->stream);
#endif
    (void)s;
    return 0;
}

int wave_reset(struct wave_sim *s)
{
    int rc = zero(s, s->cur, s->L.count);
    if (!rc)
        rc = zero(s, s->prev, s->L.count);
    for (int a = 0; a < 3 && !rc; a++) {
        rc = zero(s, s->psi[a], s->slab_count[a]);
        if (!rc)
            rc = zero(s, s->zeta[a], s->slab_count[a]);
    }
    s->step = 0;
    if (s->imp)
        s->imp->ifc_valid = false;
    return rc;
}

/* ---- velocity ------------------------------------------------------------------------- */

int wave_set_velocity(struct wave_sim *s, const float *v)
{
    const struct wave_layout *L = &s->L;
    size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
    float *vp = malloc(np * sizeof(float));
    if (!vp)
        return err_set(-ENOMEM, "wave: out of memory");
#pragma omp parallel for schedule(static)
    for (int k = 0; k < L->npad[2]; k++) {
        int kz = k - L->pml[4];
        kz = kz < 0 ? 0 : kz >= L->n[2] ? L->n[2] - 1 : kz;
        for (int j = 0; j < L->npad[1]; j++) {
            int jy = j - L->pml[2];
            jy = jy < 0 ? 0 : jy >= L->n[1] ? L->n[1] - 1 : jy;
            const float *row = v + ((size_t)kz * L->n[1] + jy) * L->n[0];
            float *o = vp + ((size_t)k * L->npad[1] + j) * L->npad[0];
            for (int i = 0; i < L->npad[0]; i++) {
                int ix = i - L->pml[0];
                ix = ix < 0 ? 0 : ix >= L->n[0] ? L->n[0] - 1 : ix;
                o[i] = row[ix];
            }
        }
    }
    int rc = wave_set_velocity_padded(s, vp, false);
    free(vp);
    return rc;
}

int wave_set_velocity_padded(struct wave_sim *s, const float *v, bool on_device)
{
#ifdef SEISLIVE_CUDA
    if (on_gpu(s))
        return wave_cu_set_vel(s, v, on_device);
#endif
    if (on_device)
        return err_set(-EINVAL, "wave: device buffer given to a CPU simulation");
    const struct wave_layout *L = &s->L;
    double dt2 = s->p.dt * s->p.dt;
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < L->npad[2]; k++)
        for (int j = 0; j < L->npad[1]; j++) {
            const float *row = v + ((size_t)k * L->npad[1] + j) * L->npad[0];
            float *o = s->vel + (size_t)(k + L->halo) * L->stride_z +
                       (size_t)(j + L->pad_off[1]) * L->stride_y + L->halo;
            for (int i = 0; i < L->npad[0]; i++)
                o[i] = (float)((double)row[i] * row[i] * dt2);
        }
    return 0;
}

int wave_get_velocity_padded(struct wave_sim *s, float *v)
{
#ifdef SEISLIVE_CUDA
    if (on_gpu(s))
        return wave_cu_get_vel(s, v);
#endif
    const struct wave_layout *L = &s->L;
    double dt = s->p.dt;
    for (int k = 0; k < L->npad[2]; k++)
        for (int j = 0; j < L->npad[1]; j++) {
            const float *row = s->vel + (size_t)(k + L->halo) * L->stride_z +
                               (size_t)(j + L->pad_off[1]) * L->stride_y + L->halo;
            float *o = v + ((size_t)k * L->npad[1] + j) * L->npad[0];
            for (int i = 0; i < L->npad[0]; i++)
                o[i] = (float)(sqrt((double)row[i]) / dt);
        }
    return 0;
}

/* The whole grid's padded frame of S (random boundary): on a HALO face the whole grid's
 * layers are p.pml[f] (held by another subdomain), elsewhere the layers S holds.  A whole
 * grid is its own frame (shift 0), so one path serves both. */
static void whole_frame(const struct wave_sim *s, struct rb_frame *g)
{
    const struct wave_layout *L = &s->L;
    for (int a = 0; a < 3; a++) {
        for (int side = 0; side < 2; side++) {
            int f = 2 * a + side;
            g->pml[f] = s->p.face[f] == WAVE_FACE_HALO ? s->p.pml[f] : L->pml[f];
        }
        g->n[a] = s->p.global_n[a] ? s->p.global_n[a] : L->n[a];
        g->npad[a] = g->n[a] + g->pml[2 * a] + g->pml[2 * a + 1];
        g->shift[a] = s->p.origin[a] + g->pml[2 * a] - L->pml[2 * a];
    }
}

int wave_randomize_layers(struct wave_sim *s, const struct random_boundary *rb, uint64_t shot_id)
{
    struct rb_frame g;
    whole_frame(s, &g);
#ifdef SEISLIVE_CUDA
    if (on_gpu(s))
        return wave_cu_randomize_layers(s, rb, &g, shot_id);
#endif
    const struct wave_layout *L = &s->L;
    size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
    float *vp = malloc(np * sizeof(float));
    if (!vp)
        return err_set(-ENOMEM, "wave: out of memory (random boundary, %zu cells)", np);
    int rc = wave_get_velocity_padded(s, vp);
    if (rc == 0)
        rc = random_boundary_apply_in(rb, &g, L->npad, L->n, L->pml, shot_id, vp);
    if (rc == 0)
        rc = wave_set_velocity_padded(s, vp, false);
    free(vp);
    return rc;
}

void wave_set_cpml(struct wave_sim *s, bool enabled) { s->cpml_on = enabled; }
void wave_set_reverse_interior(struct wave_sim *s, bool on) { s->rev_interior = on; }
bool wave_cpml_enabled(const struct wave_sim *s) { return s->cpml_on; }

/* ---- CPU reference step ----------------------------------------------------------------- */

/* Element E of CPML memory BASE (psi or zeta of an axis), stored as fp32 or, with H
 * (wave_params.cpml_memory = BF16), as bfloat16 in the first half of the buffer; the
 * arithmetic is fp32 either way.  Loops branch on H once per row (-O3 unswitches them),
 * so the fp32 path is the arithmetic it always was. */
static inline float mem_ld(const float *base, size_t e, bool h)
{
    return h ? cpml_bf16_val(((const uint16_t *)base)[e]) : base[e];
}
static inline void mem_st(float *base, size_t e, float v, bool h)
{
    if (h)
        ((uint16_t *)base)[e] = cpml_bf16_of(v);
    else
        base[e] = v;
}

/* psi <- b psi + a dp/dx_a over the layers of every axis (from p(n)). */
static void psi_update_cpu(struct wave_sim *s)
{
    const bool h16 = s->p.cpml_memory == WAVE_CPML_MEM_BF16;
    const struct wave_layout *L = &s->L;
    const float *p = s->cur;
    const size_t st[3] = {1, L->stride_y, L->stride_z};
    for (int a = 0; a < 3; a++) {
        if (!s->slab_count[a])
            continue;
        const float *c1 = s->c1[a];
        const float *pa = s->pa[a], *pb = s->pb[a];
        float *psi = s->psi[a];
        const int r = s->r;
#pragma omp parallel for collapse(2) schedule(static)
        for (int k = 0; k < L->npad[2]; k++)
            for (int j = 0; j < L->npad[1]; j++) {
                int js = a == 1 ? cpml_slab_index(j, L->npad[1], L->pml[2], L->pml[3])
                       : a == 2 ? cpml_slab_index(k, L->npad[2], L->pml[4], L->pml[5]) : 0;
                if (js < 0)
                    continue;
                const size_t row = (size_t)(k + L->halo) * L->stride_z +
                                   (size_t)(j + L->pad_off[1]) * L->stride_y + L->halo;
                if (a == 0) {
                    for (int i = 0; i < L->npad[0]; i++) {
                        if (i == L->pml[0] && L->npad[0] - L->pml[1] > i)
                            i = L->npad[0] - L->pml[1];
                        if (i >= L->npad[0])
                            break;
                        size_t c = row + i;
                        float d1 = 0;
                        for (int l = 1; l <= r; l++)
                            d1 += c1[l] * (p[c + l] - p[c - l]);
                        size_t e = wave_slab_elem(L, 0, i, j, k, cpml_slab_index(i, L->npad[0], L->pml[0], L->pml[1]));
                        mem_st(psi, e, pb[i] * mem_ld(psi, e, h16) + pa[i] * d1, h16);
                    }
                } else {
                    const int x = a == 1 ? j : k;
                    const float av = pa[x], bv = pb[x];
                    const size_t e0 = wave_slab_elem(L, a, 0, j, k, js);
                    for (int i = 0; i < L->npad[0]; i++) {
                        size_t c = row + i;
                        float d1 = 0;
                        for (int l = 1; l <= r; l++)
                            d1 += c1[l] * (p[c + l * st[a]] - p[c - l * st[a]]);
                        mem_st(psi, e0 + i, bv * mem_ld(psi, e0 + i, h16) + av * d1, h16);
                    }
                }
            }
    }
}

/* Coefficients for d(psi)/dx_a at layer index X (slab index JS) of axis A: the
 * neighbour x +- l is read at element offset +-OFF[l] with weight CU/CD[l], or weight 0
 * when it is outside the layers (psi = 0 there). */
static inline void dpsi_taps(const struct wave_sim *s, int a, int x, int js, size_t sst,
                             float *cu, float *cd, size_t *ou, size_t *od)
{
    const struct wave_layout *L = &s->L;
    const int np = L->npad[a], wlo = L->pml[2 * a], whi = L->pml[2 * a + 1];
    for (int l = 1; l <= s->r; l++) {
        int xu = x + l, xd = x - l;
        bool okd = xd >= 0 && (xd < wlo || xd >= np - whi);
        bool oku = xu < np && (xu < wlo || xu >= np - whi);
        cu[l] = oku ? s->c1[a][l] : 0.0f;
        cd[l] = okd ? s->c1[a][l] : 0.0f;
        ou[l] = oku ? (size_t)(cpml_slab_index(xu, np, wlo, whi) - js) * sst : 0;
        od[l] = okd ? (size_t)(js - cpml_slab_index(xd, np, wlo, whi)) * sst : 0;
    }
}

void wave_psi_update(struct wave_sim *s) { psi_update_cpu(s); }

void wave_cpml_dpsi_taps(const struct wave_sim *s, int a, int x, int js, size_t sst, float *cu, float *cd,
                         size_t *ou, size_t *od)
{
    dpsi_taps(s, a, x, js, sst, cu, cd, ou, od);
}

/* Update cells [i0, i1) of padded row (j, k), all inside the layers of some axis:
 * stretched second derivatives along the axes whose layers hold the cell, plain ones
 * along the others.  Rows in y or z layers vectorise along x (the condition is per row). */
static void pml_row(struct wave_sim *s, const float *p, float *q, int j, int k, int i0, int i1,
                    float *lap)
{
    const struct wave_layout *L = &s->L;
    const size_t st[3] = {1, L->stride_y, L->stride_z};
    const size_t sst[3] = {1, (size_t)L->npad[0], (size_t)L->npad[0] * L->npad[1]};
    const size_t row = (size_t)(k + L->halo) * L->stride_z + (size_t)(j + L->pad_off[1]) * L->stride_y + L->halo;
    const int r = s->r;
    const bool h16 = s->p.cpml_memory == WAVE_CPML_MEM_BF16;
    float cu[WAVE_ORDER_MAX / 2 + 1], cd[WAVE_ORDER_MAX / 2 + 1];
    size_t ou[WAVE_ORDER_MAX / 2 + 1], od[WAVE_ORDER_MAX / 2 + 1];
    for (int i = i0; i < i1; i++)
        lap[i] = 0;
    for (int a = 1; a < 3; a++) {
        if (a == 1 && wave_is_2d(s))
            continue; /* 2D: no y term */
        const float *c2 = s->c2[a];
        const int x = a == 1 ? j : k;
        int js = cpml_slab_index(x, L->npad[a], L->pml[2 * a], L->pml[2 * a + 1]);
        if (js < 0) {
            for (int i = i0; i < i1; i++) {
                size_t c = row + i;
                float d2 = c2[0] * p[c];
                for (int l = 1; l <= r; l++)
                    d2 += c2[l] * (p[c + l * st[a]] + p[c - l * st[a]]);
                lap[i] += d2;
            }
            continue;
        }
        dpsi_taps(s, a, x, js, sst[a], cu, cd, ou, od);
        const float av = s->pa[a][x], bv = s->pb[a][x];
        const float *psi = s->psi[a];
        float *zeta = s->zeta[a];
        const size_t e0 = wave_slab_elem(L, a, 0, j, k, js);
        for (int i = i0; i < i1; i++) {
            size_t c = row + i, e = e0 + i;
            float d2 = c2[0] * p[c];
            float dpsi = 0;
            for (int l = 1; l <= r; l++) {
                d2 += c2[l] * (p[c + l * st[a]] + p[c - l * st[a]]);
                dpsi += cu[l] * mem_ld(psi, e + ou[l], h16) - cd[l] * mem_ld(psi, e - od[l], h16);
            }
            float t = d2 + dpsi;
            float z = bv * mem_ld(zeta, e, h16) + av * t;
            mem_st(zeta, e, z, h16);
            lap[i] += t + z;
        }
    }
    const float *c2 = s->c2[0];
    for (int i = i0; i < i1; i++) {
        size_t c = row + i;
        float d2 = c2[0] * p[c];
        for (int l = 1; l <= r; l++)
            d2 += c2[l] * (p[c + l] + p[c - l]);
        int js = cpml_slab_index(i, L->npad[0], L->pml[0], L->pml[1]);
        if (js < 0) {
            lap[i] += d2;
        } else {
            dpsi_taps(s, 0, i, js, 1, cu, cd, ou, od);
            size_t e = wave_slab_elem(L, 0, i, j, k, js);
            const float *psi = s->psi[0];
            float dpsi = 0;
            for (int l = 1; l <= r; l++)
                dpsi += cu[l] * mem_ld(psi, e + ou[l], h16) - cd[l] * mem_ld(psi, e - od[l], h16);
            float t = d2 + dpsi;
            float z = s->pb[0][i] * mem_ld(s->zeta[0], e, h16) + s->pa[0][i] * t;
            mem_st(s->zeta[0], e, z, h16);
            lap[i] += t + z;
        }
        q[c] = 2.0f * p[c] - q[c] + s->vel[c] * lap[i];
    }
}

/* p = 0 on the surface plane of the new level (prev, before the swap); odd mirror above
 * it, so the stencil sees the image source of opposite sign. */
static void free_surface_cpu(struct wave_sim *s)
{
    const struct wave_layout *L = &s->L;
    const int h = L->halo;
    const size_t sz = L->stride_z, plane = sz;
    float *q = s->prev;
    float *surf = q + (size_t)h * sz;
    memset(surf, 0, plane * sizeof(float));
    for (int m = 1; m <= h; m++) {
        float *up = q + (size_t)(h - m) * sz;
        const float *dn = q + (size_t)(h + m) * sz;
        for (size_t e = 0; e < plane; e++)
            up[e] = -dn[e];
    }
}

/* The x segments [seg[2m], seg[2m+1]) of padded row (j, k) that step PART updates
 * (WAVE_PART_ALL: the whole row).  The cut slabs are the `halo` padded planes next to
 * each HALO face (what wave_halo_pack sends); the rest is the box inside them.  Returns
 * the number of segments (0..2). */
static int part_segments(const struct wave_sim *s, int part, int j, int k, int seg[4])
{
    const struct wave_layout *L = &s->L;
    const int h = L->halo, n0 = L->npad[0];
    if (part == WAVE_PART_ALL) {
        seg[0] = 0;
        seg[1] = n0;
        return 1;
    }
    const bool *cut = s->part_cut;
    const bool in_yz = (cut[2] && j < h) || (cut[3] && j >= L->npad[1] - h) || (cut[4] && k < h) ||
                       (cut[5] && k >= L->npad[2] - h);
    const int lo = cut[0] ? h : 0, hi = cut[1] ? n0 - h : n0;
    if (part == WAVE_PART_REST) {
        seg[0] = lo;
        seg[1] = hi;
        return in_yz || lo >= hi ? 0 : 1;
    }
    if (in_yz) {
        seg[0] = 0;
        seg[1] = n0;
        return 1;
    }
    int m = 0;
    if (lo > 0) {
        seg[2 * m] = 0;
        seg[2 * m++ + 1] = lo < n0 ? lo : n0;
    }
    if (hi < n0) { /* a row shorter than 2 halos: the high slab starts after the low one */
        seg[2 * m] = hi > lo ? hi : lo;
        seg[2 * m++ + 1] = n0;
    }
    return m;
}

static inline int imax(int a, int b) { return a > b ? a : b; }
static inline int imin(int a, int b) { return a < b ? a : b; }

/* Whether padded cell (i, j, k) is in a cut slab (computed by the first part of a step). */
static inline bool in_slab(const struct wave_sim *s, int i, int j, int k)
{
    const struct wave_layout *L = &s->L;
    const bool *cut = s->part_cut;
    const int h = L->halo;
    return (cut[0] && i < h) || (cut[1] && i >= L->npad[0] - h) || (cut[2] && j < h) ||
           (cut[3] && j >= L->npad[1] - h) || (cut[4] && k < h) || (cut[5] && k >= L->npad[2] - h);
}

/* The free surface of step part PART: p = 0 on the surface cells and the odd mirror of
 * the cells below it that this part computed (the halo columns beyond the padded grid go
 * with the rest).  Each part mirrors its cells before their source nodes are injected,
 * as the whole step mirrors before any injection. */
static void free_surface_part_cpu(struct wave_sim *s, int part)
{
    if (part == WAVE_PART_ALL) {
        free_surface_cpu(s);
        return;
    }
    const struct wave_layout *L = &s->L;
    const int h = L->halo;
    const size_t sy = L->stride_y, sz = L->stride_z;
    float *q = s->prev;
    const int ny = L->dim[1];
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < (int)sy; x++) {
            const int i = x - L->pad_off[0], j = y - L->pad_off[1];
            const bool padded = i >= 0 && i < L->npad[0] && j >= 0 && j < L->npad[1];
            const size_t e = (size_t)y * sy + x;
            for (int m = 0; m <= h; m++) {
                const bool cut = padded && in_slab(s, i, j, m);
                if (cut != (part == WAVE_PART_CUT))
                    continue;
                if (m == 0)
                    q[(size_t)h * sz + e] = 0.0f;
                else
                    q[(size_t)(h - m) * sz + e] = -q[(size_t)(h + m) * sz + e];
            }
        }
}

/* Cells [SA, SB) of row (j, k) of the padded grid of a step: CPML and INTERIOR as
 * step_rows normalises them (psi already updated for CPML); LAPBUF: npad[0] floats of
 * scratch.  The whole row ([0, npad[0])) is what the fused backward step computes per
 * row (kernels/rtm_fused.c); a step in parts (wave_step_part) gives its segments. */
static void step_row_seg_cpu(struct wave_sim *s, int j, int k, bool cpml, bool interior, int sa, int sb,
                             float *lapbuf)
{
    const struct wave_layout *L = &s->L;
    const int r = s->r, h = L->halo;
    const size_t sy = L->stride_y, sz = L->stride_z;
    const float *p = s->cur;
    float *q = s->prev;
    const float *vel = s->vel;
    const float *cx = s->c2[0], *cy = s->c2[1], *cz = s->c2[2];
    const float c0 = cx[0] + cy[0] + cz[0], c0_2d = cx[0] + cz[0];
    const size_t row = (size_t)(k + h) * sz + (size_t)(j + L->pad_off[1]) * sy + h;
    int x0 = interior ? L->pml[0] : 0, x1 = interior ? L->npad[0] - L->pml[1] : L->npad[0];
    bool all_pml = false;
    if (cpml) {
        all_pml = cpml_slab_index(j, L->npad[1], L->pml[2], L->pml[3]) >= 0 ||
                  cpml_slab_index(k, L->npad[2], L->pml[4], L->pml[5]) >= 0;
        x0 = all_pml ? x1 : L->pml[0];
        x1 = all_pml ? x1 : L->npad[0] - L->pml[1];
    }
    /* the plain cells of this segment; pml_row below takes the layer cells */
    const int p0 = imax(x0, sa), p1 = imin(x1, sb);
    if (wave_is_2d(s)) {
        /* 2D: no y term at all (there is no y neighbour to read) */
        for (int i = p0; i < p1; i++) {
            size_t c = row + i;
            float lap = c0_2d * p[c];
            for (int l = 1; l <= r; l++)
                lap += cx[l] * (p[c + l] + p[c - l]) + cz[l] * (p[c + l * sz] + p[c - l * sz]);
            q[c] = 2.0f * p[c] - q[c] + vel[c] * lap;
        }
    } else {
        for (int i = p0; i < p1; i++) {
            size_t c = row + i;
            float lap = c0 * p[c];
            for (int l = 1; l <= r; l++)
                lap += cx[l] * (p[c + l] + p[c - l]) + cy[l] * (p[c + l * sy] + p[c - l * sy]) +
                       cz[l] * (p[c + l * sz] + p[c - l * sz]);
            q[c] = 2.0f * p[c] - q[c] + vel[c] * lap;
        }
    }
    if (!cpml)
        return;
    if (all_pml) {
        pml_row(s, p, q, j, k, sa, sb, lapbuf);
    } else {
        pml_row(s, p, q, j, k, sa, imin(x0, sb), lapbuf);
        pml_row(s, p, q, j, k, imax(x1, sa), sb, lapbuf);
    }
}

/* The rows a step of S updates (CPML, INTERIOR as given to step_cpu): *CPML and
 * *INTERIOR normalised, [K0, K1) x [J0, J1). */
static void step_rows(const struct wave_sim *s, bool *cpml, bool *interior, int *k0, int *k1, int *j0, int *j1)
{
    const struct wave_layout *L = &s->L;
    *cpml = *cpml && (s->slab_count[0] + s->slab_count[1] + s->slab_count[2]) > 0;
    *interior = *interior && !*cpml;
    *k0 = *interior ? L->pml[4] : 0;
    *k1 = *interior ? L->npad[2] - L->pml[5] : L->npad[2];
    *j0 = *interior ? L->pml[2] : 0;
    *j1 = *interior ? L->npad[1] - L->pml[3] : L->npad[1];
}

/* INTERIOR (reverse steps without CPML only): update the box inside the layers.  PART
 * (wave_step_part): only the cells of that part, each computed exactly as the whole
 * step computes it; the CPML memory psi is updated by the first part (it reads p(n)
 * only); each part applies the free surface to its own cells (free_surface_part_cpu). */
static void step_cpu(struct wave_sim *s, bool cpml, bool interior, int part)
{
    int k0, k1, j0, j1;
    step_rows(s, &cpml, &interior, &k0, &k1, &j0, &j1);
    if (cpml && part != WAVE_PART_REST)
        psi_update_cpu(s);
    const int npx = s->L.npad[0];
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = k0; k < k1; k++)
        for (int j = j0; j < j1; j++) {
            float lap[npx];
            int seg[4];
            const int nseg = part_segments(s, part, j, k, seg);
            for (int g = 0; g < nseg; g++)
                step_row_seg_cpu(s, j, k, cpml, interior, seg[2 * g], seg[2 * g + 1], lap);
        }
    if (s->p.free_surface)
        free_surface_part_cpu(s, part);
}

void wave_step_rows_cpu(const struct wave_sim *s, bool *cpml, bool *interior, int *k0, int *k1, int *j0, int *j1)
{
    step_rows(s, cpml, interior, k0, k1, j0, j1);
}

void wave_step_row_cpu(struct wave_sim *s, int j, int k, bool cpml, bool interior, float *lap)
{
    step_row_seg_cpu(s, j, k, cpml, interior, 0, s->L.npad[0], lap);
}

void wave_free_surface_cpu(struct wave_sim *s) { free_surface_cpu(s); }

void wave_swap(struct wave_sim *s)
{
    float *t = s->cur;
    s->cur = s->prev;
    s->prev = t;
}

/* The step of S's operator on S's device (op = implicit: kernels/implicit*.c, .cu). */
static int step_any(struct wave_sim *s, bool cpml, bool interior)
{
    int rc = 0;
    if (s->in_part)
        return err_set(-EINVAL, "wave: a step while a step in parts is half done (wave_step_part)");
#ifdef SEISLIVE_CUDA
    if (on_gpu(s))
        rc = s->imp ? implicit_cu_step(s, cpml, interior) : wave_cu_step(s, cpml, interior);
    else
#endif
    if (s->imp)
        rc = implicit_step_cpu(s, cpml, interior);
    else
        step_cpu(s, cpml, interior, WAVE_PART_ALL);
    if (rc < 0)
        return rc;
    if (s->imp && !on_gpu(s) && s->p.free_surface)
        free_surface_cpu(s);
    wave_swap(s);
    return 0;
}

int wave_step(struct wave_sim *s)
{
    int rc = step_any(s, s->cpml_on, false);
    if (!rc)
        s->step++;
    return rc;
}

/* The first part computes its cells into prev and swaps, so that cur holds the new
 * level's cut slabs for wave_halo_pack and injection; the last part swaps back, computes
 * the rest into prev, mirrors the free surface and swaps again: after both, the
 * simulation is where wave_step leaves it, with every cell computed once, as there. */
/* Why S cannot step in parts, or NULL: the implicit sweeps span whole lines; on the GPU
 * the parts run the split CPML kernels, which keep the memory in fp32 only. */
static const char *no_step_part(const struct wave_sim *s)
{
    if (s->imp)
        return "the implicit operator's sweeps span the whole grid: no step in parts";
    if (on_gpu(s) && s->p.cpml_memory == WAVE_CPML_MEM_BF16)
        return "the GPU step in parts runs the split CPML kernels, which have no bf16 memory "
               "(cpml_memory = \"bf16\"): step whole";
    return NULL;
}

bool wave_has_step_part(const struct wave_sim *s) { return no_step_part(s) == NULL; }

int wave_step_part(struct wave_sim *s, int part)
{
    if (part == WAVE_PART_ALL)
        return wave_step(s);
    if (part != WAVE_PART_CUT && part != WAVE_PART_REST)
        return err_set(-EINVAL, "wave: step part %d: unknown", part);
    const char *why = no_step_part(s);
    if (why)
        return err_set(-ENOTSUP, "wave: %s", why);
    if ((part == WAVE_PART_CUT) == s->in_part)
        return err_set(-EINVAL, "wave: step part %s %s", part == WAVE_PART_CUT ? "cut slabs" : "rest",
                       s->in_part ? "again before the rest" : "without the cut slabs first");
    for (int f = 0; f < 6; f++)
        s->part_cut[f] = s->p.face[f] == WAVE_FACE_HALO;
    if (part == WAVE_PART_REST)
        wave_swap(s);
    int rc = 0;
#ifdef SEISLIVE_CUDA
    if (on_gpu(s))
        rc = wave_cu_step_part(s, s->cpml_on, part);
    else
#endif
        step_cpu(s, s->cpml_on, false, part);
    if (rc < 0) {
        if (part == WAVE_PART_REST)
            wave_swap(s);
        return rc;
    }
    wave_swap(s);
    s->in_part = part == WAVE_PART_CUT;
    if (part == WAVE_PART_REST)
        s->step++;
    return 0;
}

int wave_step_reverse(struct wave_sim *s)
{
    int rc = step_any(s, false, s->rev_interior);
    if (!rc)
        s->step--;
    return rc;
}

int64_t wave_step_index(const struct wave_sim *s) { return s->step; }

float *wave_cur(struct wave_sim *s) { return s->cur; }
float *wave_prev(struct wave_sim *s) { return s->prev; }
const float *wave_vel2dt2(const struct wave_sim *s) { return s->vel; }

/* ---- copies ------------------------------------------------------------------------------ */

static int copy_interior(struct wave_sim *s, bool prev, float *host, bool out)
{
    const struct wave_layout *L = &s->L;
    float *f = prev ? s->prev : s->cur;
    float *all = f;
    if (on_gpu(s)) {
        all = malloc(L->count * sizeof(float));
        if (!all)
            return err_set(-ENOMEM, "wave: out of memory");
        int rc = xfer(s, all, f, L->count * sizeof(float), true, false);
        if (rc < 0) {
            free(all);
            return rc;
        }
    }
    for (int k = 0; k < L->n[2]; k++)
        for (int j = 0; j < L->n[1]; j++) {
            float *g = all + (size_t)(k + L->off[2]) * L->stride_z + (size_t)(j + L->off[1]) * L->stride_y + L->off[0];
            float *hrow = host + ((size_t)k * L->n[1] + j) * L->n[0];
            if (out)
                memcpy(hrow, g, L->n[0] * sizeof(float));
            else
                memcpy(g, hrow, L->n[0] * sizeof(float));
        }
    int rc = 0;
    if (all != f) {
        if (!out)
            rc = xfer(s, f, all, L->count * sizeof(float), false, false);
        free(all);
    }
    return rc;
}

int wave_copy_out(struct wave_sim *s, bool prev, float *host) { return copy_interior(s, prev, host, true); }
int wave_copy_in(struct wave_sim *s, bool prev, const float *host)
{
    return copy_interior(s, prev, (float *)host, false);
}

/* ---- strip ---------------------------------------------------------------------------------- */

int wave_strip_boxes(const struct wave_sim *s, int lo[6][3], int hi[6][3])
{
    return wave_strip_boxes_width(s, s->L.halo, lo, hi);
}

int wave_strip_boxes_width(const struct wave_sim *s, int h, int lo[6][3], int hi[6][3])
{
    const int *n = s->L.n;
    int e0[3], s1[3]; /* end of the low strip, start of the high strip, per axis */
    for (int a = 0; a < 3; a++) {
        /* no strip along a NONE face (nothing beyond) or a HALO face (the neighbour's
         * planes in the halo let a reverse step rebuild the cells next to it) */
        const int klo = s->p.face[2 * a], khi = s->p.face[2 * a + 1];
        const int hlo = klo == WAVE_FACE_NONE || klo == WAVE_FACE_HALO ? 0 : h;
        const int hhi = khi == WAVE_FACE_NONE || khi == WAVE_FACE_HALO ? 0 : h;
        e0[a] = hlo < n[a] ? hlo : n[a];
        s1[a] = n[a] - hhi > e0[a] ? n[a] - hhi : e0[a];
    }
    /* z strips span everything; y strips the inner z range; x strips inner y and z. */
    int b = 0;
    for (int a = 2; a >= 0; a--)
        for (int side = 0; side < 2; side++, b++)
            for (int q = 0; q < 3; q++) {
                if (q == a) {
                    lo[b][q] = side ? s1[q] : 0;
                    hi[b][q] = side ? n[q] : e0[q];
                } else if (q > a) {
                    lo[b][q] = e0[q];
                    hi[b][q] = s1[q];
                } else {
                    lo[b][q] = 0;
                    hi[b][q] = n[q];
                }
            }
    return 6;
}

/* op = implicit: the strip also carries g at the interfaces (kernels/implicit.h) */
size_t wave_strip_count(const struct wave_sim *s)
{
    return wave_strip_count_width(s, s->L.halo) + (s->imp ? s->imp->ifc_count : 0);
}

size_t wave_strip_count_width(const struct wave_sim *s, int h)
{
    int lo[6][3], hi[6][3];
    wave_strip_boxes_width(s, h, lo, hi);
    size_t c = 0;
    for (int b = 0; b < 6; b++)
        c += (size_t)(hi[b][0] - lo[b][0]) * (hi[b][1] - lo[b][1]) * (hi[b][2] - lo[b][2]);
    return c;
}

static int strip_cpu(struct wave_sim *s, float *buf, bool save)
{
    const struct wave_layout *L = &s->L;
    int lo[6][3], hi[6][3];
    wave_strip_boxes(s, lo, hi);
    size_t at = 0;
    for (int b = 0; b < 6; b++)
        for (int k = lo[b][2]; k < hi[b][2]; k++)
            for (int j = lo[b][1]; j < hi[b][1]; j++) {
                float *g = s->cur + (size_t)(k + L->off[2]) * L->stride_z +
                           (size_t)(j + L->off[1]) * L->stride_y + L->off[0];
                size_t w = (size_t)(hi[b][0] - lo[b][0]);
                if (save)
                    memcpy(buf + at, g + lo[b][0], w * sizeof(float));
                else
                    memcpy(g + lo[b][0], buf + at, w * sizeof(float));
                at += w;
            }
    return 0;
}

int wave_strip_save(struct wave_sim *s, float *buf, bool on_device)
{
    const size_t ns = wave_strip_count_width(s, s->L.halo);
#ifdef SEISLIVE_CUDA
    if (on_gpu(s)) {
        int rc = wave_cu_strip(s, buf, on_device, true);
        if (rc == 0 && s->imp)
            rc = implicit_cu_ifc_io(s, buf + ns, on_device, true);
        return rc;
    }
#endif
    if (on_device)
        return err_set(-EINVAL, "wave: device buffer given to a CPU simulation");
    int rc = strip_cpu(s, buf, true);
    if (rc == 0 && s->imp)
        rc = implicit_ifc_compute_cpu(s, buf + ns);
    return rc;
}

int wave_strip_load(struct wave_sim *s, const float *buf, bool on_device)
{
    const size_t ns = wave_strip_count_width(s, s->L.halo);
#ifdef SEISLIVE_CUDA
    if (on_gpu(s)) {
        int rc = wave_cu_strip(s, (float *)buf, on_device, false);
        if (rc == 0 && s->imp)
            rc = implicit_cu_ifc_io(s, (float *)buf + ns, on_device, false);
        return rc;
    }
#endif
    if (on_device)
        return err_set(-EINVAL, "wave: device buffer given to a CPU simulation");
    int rc = strip_cpu(s, (float *)buf, false);
    if (rc == 0 && s->imp && s->imp->ifc_count) {
        struct implicit_state *im = s->imp;
        if (!im->ifc && !(im->ifc = malloc(im->ifc_count * sizeof(float))))
            return err_set(-ENOMEM, "wave: out of memory (implicit interface values)");
        memcpy(im->ifc, buf + ns, im->ifc_count * sizeof(float));
        im->ifc_valid = true;
    }
    return rc;
}

/* ---- halo exchange --------------------------------------------------------------------- */

/* The box of allocated cells [lo, hi) that FACE sends (the `halo` padded planes next to
 * it) or receives (the halo cells beyond it), over the padded extent of the other axes. */
static void halo_box(const struct wave_sim *s, int face, bool recv, int lo[3], int hi[3])
{
    const struct wave_layout *L = &s->L;
    const int a = face / 2, h = L->halo;
    for (int b = 0; b < 3; b++) {
        lo[b] = L->pad_off[b];
        hi[b] = L->pad_off[b] + L->npad[b];
    }
    if (face % 2 == 0) {
        lo[a] = recv ? L->pad_off[a] - h : L->pad_off[a];
        hi[a] = lo[a] + h;
    } else {
        lo[a] = recv ? L->pad_off[a] + L->npad[a] : L->pad_off[a] + L->npad[a] - h;
        hi[a] = lo[a] + h;
    }
}

size_t wave_halo_count(const struct wave_sim *s, int face)
{
    if (face < 0 || face > 5 || s->p.face[face] != WAVE_FACE_HALO)
        return 0;
    int lo[3], hi[3];
    halo_box(s, face, false, lo, hi);
    return (size_t)(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
}

/* One pitched copy per z plane of the box, through the device layer (memcpy rows on the
 * CPU, cudaMemcpy2D on a GPU: kernels/wave.c calls no CUDA itself). */
static int halo_io(struct wave_sim *s, int face, float *buf, bool pack)
{
    if (face < 0 || face > 5 || s->p.face[face] != WAVE_FACE_HALO)
        return err_set(-EINVAL, "wave: face %d (%s) is not a HALO face", face, face >= 0 && face < 6 ?
                       face_names[face] : "?");
    int lo[3], hi[3];
    halo_box(s, face, !pack, lo, hi);
    const struct wave_layout *L = &s->L;
    const size_t w = (size_t)(hi[0] - lo[0]), rows = (size_t)(hi[1] - lo[1]);
    const bool gpu = on_gpu(s);
    /* the copies below run on the default stream: let the simulation's work finish */
    int rc = gpu ? wave_sync(s) : 0;
    enum dev_copy_kind kind = !gpu ? DEV_H2H : pack ? DEV_D2H : DEV_H2D;
    for (int k = lo[2]; k < hi[2] && rc == 0; k++) {
        float *f = s->cur + (size_t)k * L->stride_z + (size_t)lo[1] * L->stride_y + lo[0];
        float *b = buf + (size_t)(k - lo[2]) * rows * w;
        rc = pack ? dev_copy_2d(s->dev, b, w * sizeof(float), f, L->stride_y * sizeof(float), w * sizeof(float),
                                rows, kind)
                  : dev_copy_2d(s->dev, f, L->stride_y * sizeof(float), b, w * sizeof(float), w * sizeof(float),
                                rows, kind);
    }
    /* a later kernel on a non-blocking stream is not ordered after the default stream */
    if (rc == 0 && gpu && !pack)
        rc = dev_sync(s->dev);
    return rc;
}

int wave_halo_pack(struct wave_sim *s, int face, float *buf) { return halo_io(s, face, buf, true); }
int wave_halo_unpack(struct wave_sim *s, int face, const float *buf) { return halo_io(s, face, (float *)buf, false); }

static int halo_io_async(struct wave_sim *s, int face, float *buf, bool pack, void *stream)
{
#ifdef SEISLIVE_CUDA
    if (on_gpu(s)) {
        if (face < 0 || face > 5 || s->p.face[face] != WAVE_FACE_HALO)
            return err_set(-EINVAL, "wave: face %d is not a HALO face", face);
        int lo[3], hi[3];
        halo_box(s, face, !pack, lo, hi);
        return wave_cu_halo_io(s, lo, hi, buf, pack, stream);
    }
#endif
    (void)stream;
    return halo_io(s, face, buf, pack);
}

int wave_halo_pack_async(struct wave_sim *s, int face, float *buf, void *stream)
{
    return halo_io_async(s, face, buf, true, stream);
}

int wave_halo_unpack_async(struct wave_sim *s, int face, const float *buf, void *stream)
{
    return halo_io_async(s, face, (float *)buf, false, stream);
}

/* ---- checkpoints ----------------------------------------------------------------------- */

size_t wave_state_bytes(const struct wave_sim *s)
{
    return sizeof(float) * (2 * s->L.count +
                            2 * (s->slab_count[0] + s->slab_count[1] + s->slab_count[2])) +
           sizeof(int64_t);
}

static int state_io(struct wave_sim *s, char *buf, bool on_device, bool save)
{
    float *parts[8] = {s->cur, s->prev, s->psi[0], s->zeta[0], s->psi[1], s->zeta[1], s->psi[2], s->zeta[2]};
    size_t counts[8] = {s->L.count, s->L.count, s->slab_count[0], s->slab_count[0],
                        s->slab_count[1], s->slab_count[1], s->slab_count[2], s->slab_count[2]};
    size_t at = 0;
    for (int i = 0; i < 8; i++) {
        size_t b = counts[i] * sizeof(float);
        int rc = save ? xfer(s, buf + at, parts[i], b, true, on_device)
                      : xfer(s, parts[i], buf + at, b, false, on_device);
        if (rc < 0)
            return rc;
        at += b;
    }
    /* The step index always travels through the host. */
    if (on_device) {
#ifdef SEISLIVE_CUDA
        int rc = save ? dev_copy(s->dev, buf + at, &s->step, sizeof s->step, DEV_H2D, s->stream)
                      : dev_copy(s->dev, &s->step, buf + at, sizeof s->step, DEV_D2H, s->stream);
        if (rc == 0)
            rc = dev_stream_sync(s->dev, s->stream);
        return rc;
#endif
    } else if (save)
        memcpy(buf + at, &s->step, sizeof s->step);
    else
        memcpy(&s->step, buf + at, sizeof s->step);
    return 0;
}

int wave_state_save(struct wave_sim *s, void *buf, bool on_device) { return state_io(s, buf, on_device, true); }
int wave_state_load(struct wave_sim *s, const void *buf, bool on_device)
{
    if (s->imp)
        s->imp->ifc_valid = false;
    return state_io(s, (void *)buf, on_device, false);
}

void wave_describe_kernel(const struct wave_sim *s, char *buf, size_t len)
{
    if (s->imp) {
        /* unsized, so that the count is checked against the enums below (a missing
         * entry was a NULL passed to %s) */
        static const char *const xs[] = {"", "in shared memory", "one per warp",
                                                          "one per warp in registers",
                                                          "one per warp, x layers apart"};
        static const char *const yzs[] = {"", "marching columns", "lines in register chunks",
                                                            "register chunks linked by scans",
                                                            "scan chunks, x beside y",
                                                            "x+y in one cluster kernel, z scan chunks",
                                                            "x+y in persistent clusters, z scan chunks",
                                                            "scan chunks, layer rows by the block",
                                                            "scan chunks, layer rows by the block, 1 block/SM",
                                                            "scan chunks, layer rows by the block, 256 threads",
                                                            "scan chunks, p in a shared tile",
                                                            "scan chunks, p in a shared tile, three blocks an SM",
                                                            "scan chunks, p in a shared tile by cp.async",
                                                            "scan chunks, p in a tile, no L2 prefetch",
                                                            "scan chunks, p in a tile, y 3 blocks/SM",
                                                            "scan chunks, p in a tile, 3 blocks/SM",
                                                            "x+y in persistent clusters, z tileq",
                                                            "scan chunks, p in a tile, z q shared",
                                                            "p in a tile, z q shared, no L2 prefetch",
                                                            "x+y in persistent clusters, z tileqn",
                                                            "x+y in persistent clusters beside psi, z tileqn",
                                                            "x+y constant-factor clusters beside psi, z tileqn",
                                                            "x+y constant-factor clusters, planes apart, z tileqn",
                                                            "p in a tile, z q shared, 1024-thread z blocks",
                                                            "x+y constant-factor clusters, layers beside, z tileqn",
                                                            "x+y lean constant-factor clusters, planes apart, z tileqn"};
        _Static_assert(sizeof xs / sizeof *xs == WAVE_IMPLICIT_X_N, "a description for every implicit_x");
        _Static_assert(sizeof yzs / sizeof *yzs == WAVE_IMPLICIT_YZ_N, "a description for every implicit_yz");
        char how[128];
        snprintf(how, sizeof how, "x lines %s, y/z %s", xs[wave_implicit_x_of(&s->p.tuning)],
                 yzs[wave_implicit_yz_of(&s->p.tuning)]);
        snprintf(buf, len, "implicit order %d band %.3f b %.3f: %s%s, CPML %s", s->p.order, s->imp->co.band,
                 s->imp->co.b, on_gpu(s) ? how : "CPU reference (OpenMP)", wave_is_2d(s) ? ", 2D" : "",
                 s->cpml_on ? "on" : "off");
        return;
    }
#ifdef SEISLIVE_CUDA
    if (on_gpu(s)) {
        wave_cu_describe(s, buf, len);
        return;
    }
#endif
    snprintf(buf, len, "CPU reference (OpenMP)%s, CPML %s", wave_is_2d(s) ? ", 2D" : "",
             !s->cpml_on ? "off" : s->p.cpml_memory == WAVE_CPML_MEM_BF16 ? "on, bf16 memory" : "on");
}

#ifndef SEISLIVE_CUDA
int wave_copy_bandwidth(const struct sl_device *dev, size_t bytes, int reps, double *gbs)
{
    (void)dev;
    (void)bytes;
    (void)reps;
    *gbs = 0;
    return err_set(-ENOTSUP, "wave_copy_bandwidth: this build has no CUDA");
}
#endif
