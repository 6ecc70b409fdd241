/* prop_tti — the pseudo-acoustic TTI physics (kernels/tti.h) behind the propagator
 * interface (kernels/propagator.h): each operation forwards to the tti_* function that
 * does it; the table is prop_tti_ops.  The recorded field is p; sources go into p and q
 * (kernels/tti.h).  Strips and states hold both fields and all CPML memory, so RTM's
 * strategies run unchanged.  On a CUDA device the simulation's fields live in device
 * memory (kernels/tti_cuda.h) and its work is queued on the stream set here.  HALO
 * faces (subdomains): on the CPU, with an exchange of the pass-1 products inside the
 * step (prop_step_stage; tti_internal.h); a GPU simulation refuses them at create. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/prop_wave.h"
#include "kernels/operator.h"
#include "kernels/points_nodes.h"
#include "kernels/propagator.h"
#include "kernels/tti.h"
#include "kernels/tti_internal.h"
#include "stream/error.h"

struct prop_tti {
    struct prop base;          /* first: a struct prop * is a struct prop_tti * */
    struct tti_sim *t;
    struct prop_layout L;
    prop_mid_fn mid;           /* prop_set_mid_exchange: run between a step's stages */
    void *mid_ctx;
};

extern const struct prop_ops prop_tti_ops;

static struct tti_sim *T(const struct prop *s) { return ((const struct prop_tti *)s)->t; }

/* The wave parameters of P (the grid and the operator; the same mapping as the acoustic
 * physics), -ENOTSUP for what the TTI kernels do not have. */
static int to_wave(const struct prop_params *p, struct wave_params *wp)
{
    prop_wave_grid(p, wp);
    const struct prop_grid *g = &p->grid;
    /* Only Taylor weights: the TTI operator combines products of first derivatives with
     * second derivatives, and both its qP/qSV split and its stability bound (tti.h:
     * -symbol(L) >= symbol(H1) at every wavenumber, first derivatives vanishing at the
     * Nyquist corner) are derived and tested for that pair; a designed second derivative
     * beside them has not been analysed (docs/operators.md). */
    if (p->op.kind != PROP_OP_TAYLOR)
        return err_set(-ENOTSUP, "tti: derivative operator \"%s\" is not supported with TTI physics (only \"taylor\": "
                       "the TTI stability bound and qP/qSV split hold for Taylor weights only)",
                       operator_name(p->op.kind));
    wp->order = p->op.order;
    wp->dt = p->dt;
    for (int f = 0; f < PROP_FACES; f++) {
        const int k = g->face[f];
        if (k < 0 || k > PROP_FACE_HALO)
            return err_set(-EINVAL, "tti: face %d: unknown kind %d", f, k);
        wp->face[f] = prop_wave_face(k);
        /* layers for CPML and RANDOM; on a HALO face the whole grid's width there */
        wp->pml[f] = k == PROP_FACE_CPML || k == PROP_FACE_RANDOM || k == PROP_FACE_HALO ? g->width[f] : 0;
    }
    wp->free_surface = g->face[4] == PROP_FACE_FREE;
    wp->vmax_cpml = p->vmax_cpml;
    wp->pml_reflection = p->pml_reflection;
    wp->f_ref = p->f_ref;
    wp->pml_degree = p->pml_degree;
    if (p->cpml_memory != 0)
        return err_set(-ENOTSUP, "tti: bf16 CPML memory is for the acoustic propagator; TTI keeps fp32");
    return 0;
}

static int t_check(const struct prop_params *p)
{
    struct wave_params wp;
    int rc = to_wave(p, &wp);
    return rc < 0 ? rc : tti_params_check(&wp, p->tti_sigma);
}

static size_t t_memory_bytes(const struct prop_params *p)
{
    struct wave_params wp;
    return to_wave(p, &wp) < 0 ? 0 : tti_memory_bytes(&wp);
}

static size_t t_state_bytes(const struct prop_params *p)
{
    struct wave_params wp;
    return to_wave(p, &wp) < 0 ? 0 : tti_state_bytes_of(&wp);
}

static void layout_from(const struct wave_layout *wl, struct prop_layout *L)
{
    memset(L, 0, sizeof *L);
    for (int a = 0; a < 3; a++) {
        L->n[a] = wl->n[a];
        L->npad[a] = wl->npad[a];
        L->dim[a] = wl->dim[a];
        L->off[a] = wl->off[a];
    }
    L->halo = wl->halo;
    L->stride_y = wl->stride_y;
    L->stride_z = wl->stride_z;
    L->count = wl->count;
}

static int t_layout_of(const struct prop_params *p, struct prop_layout *out)
{
    struct wave_params wp;
    struct wave_layout wl;
    int rc = to_wave(p, &wp);
    if (rc < 0 || (rc = tti_params_check(&wp, p->tti_sigma)) < 0 || (rc = wave_layout_of(&wp, &wl)) < 0)
        return rc;
    layout_from(&wl, out);
    return 0;
}

static int wrap(const struct sl_device *dev, const struct prop_params *p, struct tti_sim *t, struct prop **out)
{
    struct prop_tti *a = calloc(1, sizeof *a);
    if (!a) {
        tti_destroy(t);
        return err_set(-ENOMEM, "tti: out of memory");
    }
    a->base.ops = &prop_tti_ops;
    a->base.dev = dev;
    a->base.p = *p;
    a->t = t;
    layout_from(tti_layout(t), &a->L);
    *out = &a->base;
    return 0;
}

void prop_tti_model(const struct prop_model *m, struct tti_model *out)
{
    *out = (struct tti_model){.vpz = m->vp, .eps = m->epsilon, .delta = m->delta, .theta = m->theta,
                              .phi = m->phi, .eps0 = m->epsilon0, .delta0 = m->delta0, .theta0 = m->theta0,
                              .phi0 = m->phi0, .checked = m->tti_checked};
}

static int t_create(const struct sl_device *dev, const struct prop_params *p, const struct prop_model *m,
                    struct prop **out)
{
    struct wave_params wp;
    struct tti_sim *t = NULL;
    struct tti_model tm;
    prop_tti_model(m, &tm);
    int rc = to_wave(p, &wp);
    if (rc < 0 || (rc = tti_create(dev, &wp, p->tti_sigma, &tm, &t)) < 0)
        return rc;
    return wrap(dev, p, t, out);
}

static int t_create_like(const struct prop *like, struct prop **out)
{
    struct tti_sim *t = NULL;
    int rc = tti_create_like(T(like), &t);
    return rc < 0 ? rc : wrap(like->dev, &like->p, t, out);
}

static void t_destroy(struct prop *s)
{
    tti_destroy(T(s));
    free(s);
}

/* The shell's stream is the one every TTI kernel, copy and point operation uses. */
static void t_set_stream(struct prop *s, void *stream) { T(s)->w.stream = stream; }
static int t_sync(struct prop *s) { return dev_stream_sync(s->dev, T(s)->w.stream); }
static int t_reset(struct prop *s) { return tti_reset(T(s)); }
/* A whole step, or its stages with the mid exchange between them (prop_set_mid_exchange). */
static int staged(struct prop *s, int (*stage)(struct tti_sim *, int))
{
    struct prop_tti *a = (struct prop_tti *)s;
    int rc = stage(a->t, TTI_STAGE_PASS1);
    if (rc == 0)
        rc = a->mid(a->mid_ctx, s);
    return rc < 0 ? rc : stage(a->t, TTI_STAGE_UPDATE);
}
static int t_step(struct prop *s)
{
    return ((struct prop_tti *)s)->mid ? staged(s, tti_step_stage) : tti_step(T(s));
}
static int t_step_reverse(struct prop *s)
{
    return ((struct prop_tti *)s)->mid ? staged(s, tti_step_stage_reverse) : tti_step_reverse(T(s));
}
static int t_set_mid_exchange(struct prop *s, prop_mid_fn fn, void *ctx)
{
    struct prop_tti *a = (struct prop_tti *)s;
    a->mid = fn;
    a->mid_ctx = ctx;
    return 0;
}
static void t_set_reverse_interior(struct prop *s, bool on) { tti_set_reverse_interior(T(s), on); }
static void t_swap(struct prop *s) { tti_swap(T(s)); }
static int64_t t_step_index(const struct prop *s) { return tti_step_index(T(s)); }
static void t_set_absorbing(struct prop *s, bool on) { tti_set_cpml(T(s), on); }

static int t_randomize_layers(struct prop *s, const struct random_boundary *rb, uint64_t shot_id)
{
    return tti_randomize_layers(T(s), rb, shot_id);
}

/* A prop_points of this physics is a wave_points on the simulation's grid. */
static int t_points_create(struct prop *s, const double *xyz, size_t n, int interp, struct prop_points **out)
{
    struct wave_points *p = NULL;
    int rc = tti_points_create(T(s), xyz, n, interp, &p);
    *out = (struct prop_points *)p;
    return rc;
}

static void t_points_destroy(struct prop_points *pts) { wave_points_destroy((struct wave_points *)pts); }

static int t_inject(struct prop *s, const struct prop_points *pts, const float *amps, size_t stride, float scale,
                    unsigned flags)
{
    return tti_inject(T(s), (const struct wave_points *)pts, amps, stride, scale, prop_wave_flags(flags));
}

static int t_sample(struct prop *s, const struct prop_points *pts, float *out, size_t stride, unsigned flags)
{
    return tti_sample(T(s), (const struct wave_points *)pts, out, stride, prop_wave_flags(flags));
}

static const float *t_field(struct prop *s) { return tti_p(T(s)); }
static const struct prop_layout *t_layout(const struct prop *s) { return &((const struct prop_tti *)s)->L; }
static int t_copy_out(struct prop *s, bool prev, float *host) { return tti_copy_out(T(s), prev, host); }
static int t_copy_in(struct prop *s, bool prev, const float *host) { return tti_copy_in(T(s), prev, host); }
static size_t t_strip_count(const struct prop *s) { return tti_strip_count(T(s)); }
static int t_strip_save(struct prop *s, float *buf, bool on_device) { return tti_strip_save(T(s), buf, on_device); }
static int t_strip_load(struct prop *s, const float *buf, bool on_device)
{
    return tti_strip_load(T(s), buf, on_device);
}
static size_t t_state_size(const struct prop *s) { return tti_state_bytes(T(s)); }
static int t_state_save(struct prop *s, void *buf, bool on_device) { return tti_state_save(T(s), buf, on_device); }
static int t_state_load(struct prop *s, const void *buf, bool on_device)
{
    return tti_state_load(T(s), buf, on_device);
}

/* Subdomains (tti_internal.h): p and q cross a HALO face after a step, the pass-1
 * products between the stages of one (prop_step_stage). */
static size_t t_halo_count(const struct prop *s, int face) { return tti_halo_count(T(s), face); }
static int t_halo_pack(struct prop *s, int face, float *buf) { return tti_halo_pack(T(s), face, buf); }
static int t_halo_unpack(struct prop *s, int face, const float *buf) { return tti_halo_unpack(T(s), face, buf); }
static int t_step_stage(struct prop *s, int stage)
{
    return tti_step_stage(T(s), stage == PROP_STAGE_PASS1 ? TTI_STAGE_PASS1 : stage == PROP_STAGE_UPDATE ?
                          TTI_STAGE_UPDATE : -1);
}

/* Single-node sets on the shell, as the acoustic physics (injection goes into p and q). */
static int t_nodes_create(struct prop *s, const int *ijk, size_t n, struct prop_points **out)
{
    struct wave_points *p = NULL;
    int rc = wave_points_create_nodes(&T(s)->w, ijk, n, &p);
    *out = (struct prop_points *)p;
    return rc;
}

static void t_describe(const struct prop *s, char *buf, size_t len)
{
    char k[200];
    tti_describe(T(s), k, sizeof k);
    snprintf(buf, len, "tti (Fletcher 2009), taylor order %d, %s", s->p.op.order, k);
}

const struct prop_ops prop_tti_ops = {
    .name = "tti",
    .check = t_check,
    .memory_bytes = t_memory_bytes,
    .state_bytes = t_state_bytes,
    .layout_of = t_layout_of,
    .create = t_create,
    .create_like = t_create_like,
    .destroy = t_destroy,
    .set_stream = t_set_stream,
    .sync = t_sync,
    .reset = t_reset,
    .step = t_step,
    .step_reverse = t_step_reverse,
    .set_reverse_interior = t_set_reverse_interior,
    .swap = t_swap,
    .step_index = t_step_index,
    .set_absorbing = t_set_absorbing,
    .randomize_layers = t_randomize_layers,
    .points_create = t_points_create,
    .points_destroy = t_points_destroy,
    .inject = t_inject,
    .sample = t_sample,
    .field = t_field,
    .layout = t_layout,
    .copy_out = t_copy_out,
    .copy_in = t_copy_in,
    .strip_count = t_strip_count,
    .strip_save = t_strip_save,
    .strip_load = t_strip_load,
    .state_size = t_state_size,
    .state_save = t_state_save,
    .state_load = t_state_load,
    .halo_count = t_halo_count,
    .halo_pack = t_halo_pack,
    .halo_unpack = t_halo_unpack,
    .describe = t_describe,
    .nodes_create = t_nodes_create,
    .step_stage = t_step_stage,
    .set_mid_exchange = t_set_mid_exchange,
};
