/* wave_internal — the simulation object shared by the CPU reference (wave.c), the CUDA
 * twin (wave.cu) and the point sets (points.c).  Not for users: use kernels/wave.h. */
#ifndef SEISLIVE_WAVE_INTERNAL_H
#define SEISLIVE_WAVE_INTERNAL_H

#include "kernels/wave.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wave_sim {
    const struct sl_device *dev;
    struct wave_params p;
    struct wave_layout L;
    int r;                      /* stencil half-width = order / 2 */
    float c2[3][WAVE_ORDER_MAX / 2 + 1]; /* second-derivative weights / h^2, per axis */
    float c1[3][WAVE_ORDER_MAX / 2 + 1]; /* first-derivative weights / h, per axis */
    float *cur, *prev, *vel;    /* allocated grid; vel = v^2 dt^2 (device memory for CUDA) */
    float *pa[3], *pb[3];       /* CPML a, b per axis over the padded points */
    float *psi[3], *zeta[3];    /* CPML memory per axis, over that axis's layers */
    float *psi_alt[3];          /* CUDA: the other psi buffer of the fused CPML kernel, which
                                   reads psi(n) and writes psi(n+1) (then they swap) so a
                                   block can recompute its neighbours' psi(n+1) */
    size_t slab_count[3];       /* elements of psi[a] / zeta[a] */
    float *ha[3], *hb[3];       /* host copies of the profiles */
    bool cpml_on;
    bool rev_interior;  /* wave_set_reverse_interior */
    int64_t step;
    void *stream;               /* cudaStream_t */
    double vmax;
    void *aux_stream;           /* CUDA: the CPML kernels run here, beside the interior */
    void *ev_fork, *ev_join;    /* cudaEvent_t ordering aux_stream with stream */
    void *scratch;              /* CUDA: device staging for host point amplitudes */
    size_t scratch_bytes;
    struct implicit_state *imp; /* op = implicit: its coefficients, scratch and the boundary
                                   strategy's interface values (kernels/implicit.h); else NULL */
    bool part_cut[6];           /* wave_step_part: the faces whose slabs the first part takes */
    bool in_part;               /* the first part of a step done, the rest not yet */
};

struct wave_points {
    struct wave_sim *s;
    size_t n;
    int ns;                     /* support nodes per axis (the weight stride) */
    int nsa[3];                 /* support nodes used along each axis: ns, except 1 along
                                   y in 2D (weight 1 on the one y node) */
    int *base;                  /* host: 3 per point, allocated-grid index of the first node */
    float *w;                   /* host: 3 * ns per point: x weights, y weights, z weights */
    int *d_base;                /* device copies (CUDA) */
    float *d_w;
};

/* A 2D simulation: the y axis has NONE faces (n[1] == 1, no y layers, no y halo:
 * dim[1] = 1, pad_off[1] = off[1] = 0); every kernel leaves out the y derivative terms,
 * and physical injection scales by 1 / (dx dz).  s->p.face is resolved at create (never
 * WAVE_FACE_AUTO), so this and the other face tests read it directly. */
static inline bool wave_is_2d(const struct wave_sim *s)
{
    return s->p.face[2] == WAVE_FACE_NONE;
}

/* The kind of face F of P, WAVE_FACE_AUTO resolved (free_surface: FREE on zmin). */
static inline int wave_face_kind(const struct wave_params *p, int f)
{
    if (p->face[f] != WAVE_FACE_AUTO)
        return p->face[f];
    return f == 4 && p->free_surface ? WAVE_FACE_FREE : WAVE_FACE_CPML;
}

/* Elements of the CPML layer storage of each axis (OUT) and in all (returned): axis a's
 * layers span the padded grid across the other two axes. */
static inline size_t wave_slab_counts(const struct wave_layout *L, size_t out[3])
{
    out[0] = (size_t)(L->pml[0] + L->pml[1]) * L->npad[1] * L->npad[2];
    out[1] = (size_t)(L->pml[2] + L->pml[3]) * L->npad[0] * L->npad[2];
    out[2] = (size_t)(L->pml[4] + L->pml[5]) * L->npad[0] * L->npad[1];
    return out[0] + out[1] + out[2];
}

/* Element of the layer storage of axis A for padded point (i, j, k) with slab index JS
 * (the CPU kernels of wave.c and tti.c; wave_cuda.h has the device twin). */
static inline size_t wave_slab_elem(const struct wave_layout *L, int a, int i, int j, int k, int js)
{
    if (a == 0)
        return ((size_t)k * L->npad[1] + j) * (size_t)(L->pml[0] + L->pml[1]) + js;
    if (a == 1)
        return ((size_t)k * (L->pml[2] + L->pml[3]) + js) * L->npad[0] + i;
    return ((size_t)js * L->npad[1] + j) * L->npad[0] + i;
}

/* The part of a new simulation that the acoustic (wave.c) and TTI (tti.c) propagators
 * share, into S (zeroed): device, parameters with the faces resolved (a RANDOM face
 * starts with the CPML off), layout, derivative weights, layer sizes and the host CPML
 * profiles from VMAX.  WHO prefixes the error messages.  On error S holds what it
 * allocated (ha, hb) for the caller to free. */
int wave_shell_init(struct wave_sim *s, const struct sl_device *dev, const struct wave_params *p, double vmax,
                    const char *who);

/* The CPU CPML pieces the implicit step (kernels/implicit_step.c) shares with wave.c's:
 * psi <- b psi + a dp/dx_a over every axis's layers, and the taps of d psi / dx_a at
 * layer index X (slab index JS) of axis A. */
void wave_psi_update(struct wave_sim *s);
void wave_cpml_dpsi_taps(const struct wave_sim *s, int a, int x, int js, size_t sst, float *cu, float *cd,
                         size_t *ou, size_t *od);

/* The CPU step taken apart, for RTM's fused backward pass (kernels/rtm_fused.c), which
 * steps two simulations row by row in one loop: the rows [K0, K1) x [J0, J1) a step with
 * CPML / INTERIOR updates (both flags normalised as the step does), one row (j, k) of
 * it (psi updated before with wave_psi_update when CPML; LAP: npad[0] floats of
 * scratch), and the free-surface mirror of the new level (prev, before the swap). */
void wave_step_rows_cpu(const struct wave_sim *s, bool *cpml, bool *interior, int *k0, int *k1, int *j0, int *j1);
void wave_step_row_cpu(struct wave_sim *s, int j, int k, bool cpml, bool interior, float *lap);
void wave_free_surface_cpu(struct wave_sim *s);

/* The strip as up to 6 boxes of interior coordinates [lo, hi) (empty boxes along NONE
 * and HALO faces). */
int wave_strip_boxes(const struct wave_sim *s, int lo[6][3], int hi[6][3]);
/* The same boxes for strips H cells wide (a physics whose step reaches further than the
 * halo, e.g. kernels/tti.c's two nested first derivatives: 2 halo). */
int wave_strip_boxes_width(const struct wave_sim *s, int h, int lo[6][3], int hi[6][3]);
/* Cells of those boxes (one field). */
size_t wave_strip_count_width(const struct wave_sim *s, int h);

#ifdef SEISLIVE_CUDA
/* The CUDA side (kernels/wave_*.cu; wave_cuda.h says which file holds what).  Allocation
 * checks the tuning (wave_params.tuning) once. */
int wave_cu_alloc(struct wave_sim *s);
void wave_cu_free(struct wave_sim *s);
/* One-line forwards to kernels/device.h (dev_cu_copy, dev_cu_zero, dev_cu_stream_sync),
 * kept while wave.c calls them: it can call dev_copy / dev_zero / dev_stream_sync. */
/* INTERIOR: update only the box inside the absorbing layers (reverse steps, no CPML). */
int wave_cu_step(struct wave_sim *s, bool cpml, bool interior);
/* One part of a step (wave_step_part; kernels/wave_part.cu): the cells of PART into prev,
 * on the simulation's stream (no swap here). */
int wave_cu_step_part(struct wave_sim *s, bool cpml, int part);
/* The box [LO, HI) of allocated cells of cur to or from BUF (device memory, x fastest,
 * wave_halo_pack's layout) on STREAM. */
int wave_cu_halo_io(struct wave_sim *s, const int lo[3], const int hi[3], float *buf, bool pack, void *stream);
int wave_cu_set_vel(struct wave_sim *s, const float *v, bool on_device);
int wave_cu_get_vel(struct wave_sim *s, float *host);
struct random_boundary;
struct rb_frame;
int wave_cu_randomize_layers(struct wave_sim *s, const struct random_boundary *rb, const struct rb_frame *g,
                             uint64_t shot_id);
int wave_cu_points_upload(struct wave_points *pts);
void wave_cu_points_free(struct wave_points *pts);
int wave_cu_inject(struct wave_sim *s, const struct wave_points *pts, const float *amps,
                   size_t stride, float scale, unsigned flags);
int wave_cu_sample(struct wave_sim *s, const struct wave_points *pts, float *out, size_t stride,
                   unsigned flags);
int wave_cu_strip(struct wave_sim *s, float *buf, bool on_device, bool save);
/* The strips of H cells of the NF fields FIELDS (allocated layout, device memory) one
 * after another, to or from BUF (device memory, or host memory through device scratch):
 * wave_cu_strip is FIELDS = {cur}, H = halo; kernels/tti_cuda.cu strips p and q. */
int wave_cu_strip_fields(struct wave_sim *s, float *const *fields, int nf, int h, float *buf, bool on_device,
                         bool save);
int wave_cu_describe(const struct wave_sim *s, char *buf, size_t len);
#endif

#ifdef __cplusplus
}
#endif

#endif
