/* prop_acoustic — the isotropic acoustic physics (kernels/wave.h) behind the propagator
 * interface (kernels/propagator.h): each operation forwards to the wave_* function that
 * does it; the table is prop_acoustic_ops. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/points_nodes.h"
#include "kernels/prop_wave.h"
#include "kernels/propagator.h"
#include "kernels/rtm_fused.h"
#include "kernels/wave.h"
#include "stream/error.h"

struct prop_acoustic {
    struct prop base;          /* first: a struct prop * is a struct prop_acoustic * */
    struct wave_sim *w;
    struct prop_layout L;
};

extern const struct prop_ops prop_acoustic_ops;

static struct wave_sim *W(const struct prop *s) { return ((const struct prop_acoustic *)s)->w; }

/* The wave parameters of P; -ENOTSUP for what the acoustic kernels do not have. */
static int to_wave(const struct prop_params *p, struct wave_params *wp)
{
    prop_wave_grid(p, wp);
    const struct prop_grid *g = &p->grid;
    if (p->op.kind < 0 || p->op.kind >= PROP_OP_COUNT)
        return err_set(-EINVAL, "acoustic: derivative operator %d: unknown", p->op.kind);
    wp->order = p->op.order;
    wp->op = p->op.kind;
    wp->op_band = p->op.band;
    wp->dt = p->dt;
    for (int f = 0; f < PROP_FACES; f++) {
        int k = g->face[f];
        if (k < 0 || k > PROP_FACE_HALO)
            return err_set(-EINVAL, "acoustic: face %d: unknown kind %d", f, k);
        wp->face[f] = prop_wave_face(k);
        /* layers for CPML and RANDOM; on a HALO face the whole grid's width there */
        wp->pml[f] = k == PROP_FACE_CPML || k == PROP_FACE_RANDOM || k == PROP_FACE_HALO ? g->width[f] : 0;
    }
    wp->free_surface = g->face[4] == PROP_FACE_FREE;
    wp->vmax_cpml = p->vmax_cpml;
    wp->pml_reflection = p->pml_reflection;
    wp->f_ref = p->f_ref;
    wp->kernel = p->tuning.kernel;
    wp->cpml_memory = p->cpml_memory;
    wp->pml_degree = p->pml_degree;
    return 0;
}

static int a_check(const struct prop_params *p)
{
    struct wave_params wp;
    int rc = to_wave(p, &wp);
    return rc < 0 ? rc : wave_params_check(&wp);
}

static size_t a_memory_bytes(const struct prop_params *p)
{
    struct wave_params wp;
    return to_wave(p, &wp) < 0 ? 0 : wave_memory_bytes(&wp);
}

static size_t a_state_bytes(const struct prop_params *p)
{
    struct wave_params wp;
    return to_wave(p, &wp) < 0 ? 0 : wave_state_bytes_of(&wp);
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

static int a_layout_of(const struct prop_params *p, struct prop_layout *out)
{
    struct wave_params wp;
    struct wave_layout wl;
    int rc = to_wave(p, &wp);
    if (rc < 0 || (rc = wave_layout_of(&wp, &wl)) < 0)
        return rc;
    layout_from(&wl, out);
    return 0;
}

static int wrap(const struct prop_params *p, struct wave_sim *w, struct prop **out)
{
    struct prop_acoustic *a = calloc(1, sizeof *a);
    if (!a) {
        wave_destroy(w);
        return err_set(-ENOMEM, "acoustic: out of memory");
    }
    a->base.ops = &prop_acoustic_ops;
    a->base.dev = wave_device(w);
    a->base.p = *p;
    a->w = w;
    layout_from(wave_layout(w), &a->L);
    /* (random-velocity faces start undamped in wave_create itself) */
    *out = &a->base;
    return 0;
}

static int a_create(const struct sl_device *dev, const struct prop_params *p, const struct prop_model *m,
                    struct prop **out)
{
    struct wave_params wp;
    struct wave_sim *w = NULL;
    int rc = to_wave(p, &wp);
    if (rc < 0 || (rc = wave_create(dev, &wp, m->vp, &w)) < 0)
        return rc;
    return wrap(p, w, out);
}

static int a_create_like(const struct prop *like, struct prop **out)
{
    struct wave_sim *w = NULL;
    int rc = wave_create_like(W(like), &w);
    return rc < 0 ? rc : wrap(&like->p, w, out);
}

static void a_destroy(struct prop *s)
{
    wave_destroy(W(s));
    free(s);
}

static void a_set_stream(struct prop *s, void *stream) { wave_set_stream(W(s), stream); }
static int a_sync(struct prop *s) { return wave_sync(W(s)); }
static int a_reset(struct prop *s) { return wave_reset(W(s)); }
static int a_step(struct prop *s) { return wave_step(W(s)); }
static int a_step_reverse(struct prop *s) { return wave_step_reverse(W(s)); }
static void a_set_reverse_interior(struct prop *s, bool on) { wave_set_reverse_interior(W(s), on); }
static void a_swap(struct prop *s) { wave_swap(W(s)); }
static int64_t a_step_index(const struct prop *s) { return wave_step_index(W(s)); }
static void a_set_absorbing(struct prop *s, bool on) { wave_set_cpml(W(s), on); }

static int a_randomize_layers(struct prop *s, const struct random_boundary *rb, uint64_t shot_id)
{
    return wave_randomize_layers(W(s), rb, shot_id);
}

/* A prop_points of this physics is a wave_points (the pointer is only cast back here). */
static int a_points_create(struct prop *s, const double *xyz, size_t n, int interp, struct prop_points **out)
{
    struct wave_points *p = NULL;
    int rc = wave_points_create(W(s), xyz, n, interp, &p);
    *out = (struct prop_points *)p;
    return rc;
}

static int a_nodes_create(struct prop *s, const int *ijk, size_t n, struct prop_points **out)
{
    struct wave_points *p = NULL;
    int rc = wave_points_create_nodes(W(s), ijk, n, &p);
    *out = (struct prop_points *)p;
    return rc;
}

static void a_points_destroy(struct prop_points *pts) { wave_points_destroy((struct wave_points *)pts); }

static int a_inject(struct prop *s, const struct prop_points *pts, const float *amps, size_t stride, float scale,
                    unsigned flags)
{
    return wave_inject(W(s), (const struct wave_points *)pts, amps, stride, scale, prop_wave_flags(flags));
}

static int a_sample(struct prop *s, const struct prop_points *pts, float *out, size_t stride, unsigned flags)
{
    return wave_sample(W(s), (const struct wave_points *)pts, out, stride, prop_wave_flags(flags));
}

static const float *a_field(struct prop *s) { return wave_cur(W(s)); }
static const struct prop_layout *a_layout(const struct prop *s) { return &((const struct prop_acoustic *)s)->L; }
static int a_copy_out(struct prop *s, bool prev, float *host) { return wave_copy_out(W(s), prev, host); }
static int a_copy_in(struct prop *s, bool prev, const float *host) { return wave_copy_in(W(s), prev, host); }
static size_t a_strip_count(const struct prop *s) { return wave_strip_count(W(s)); }
static int a_strip_save(struct prop *s, float *buf, bool on_device) { return wave_strip_save(W(s), buf, on_device); }
static int a_strip_load(struct prop *s, const float *buf, bool on_device)
{
    return wave_strip_load(W(s), buf, on_device);
}
static size_t a_state_size(const struct prop *s) { return wave_state_bytes(W(s)); }
static int a_state_save(struct prop *s, void *buf, bool on_device) { return wave_state_save(W(s), buf, on_device); }
static int a_state_load(struct prop *s, const void *buf, bool on_device)
{
    return wave_state_load(W(s), buf, on_device);
}

static size_t a_halo_count(const struct prop *s, int face) { return wave_halo_count(W(s), face); }
static int a_halo_pack(struct prop *s, int face, float *buf) { return wave_halo_pack(W(s), face, buf); }
static int a_halo_unpack(struct prop *s, int face, const float *buf) { return wave_halo_unpack(W(s), face, buf); }

static bool a_has_step_part(const struct prop *s) { return wave_has_step_part(W(s)); }

static int a_step_part(struct prop *s, int part)
{
    return wave_step_part(W(s), part == PROP_PART_CUT_SLABS ? WAVE_PART_CUT
                                : part == PROP_PART_REST    ? WAVE_PART_REST
                                : part == PROP_PART_ALL     ? WAVE_PART_ALL : -1);
}
static int a_halo_pack_async(struct prop *s, int face, float *buf, void *stream)
{
    return wave_halo_pack_async(W(s), face, buf, stream);
}
static int a_halo_unpack_async(struct prop *s, int face, const float *buf, void *stream)
{
    return wave_halo_unpack_async(W(s), face, buf, stream);
}

static int a_fused_create(struct prop *q, struct prop *u, int variant, void **out)
{
    struct wave_fused *f = NULL;
    int rc = wave_fused_create(W(q), W(u), variant, &f);
    *out = f;
    return rc;
}

static int a_fused_step(void *f, const struct imaging_box *b, const struct imaging_acc *acc)
{
    return wave_fused_step(f, b, acc);
}

static int a_fused_image_step(void *f, const struct imaging_box *b, const struct imaging_acc *acc, void *ev)
{
    return wave_fused_image_step(f, b, acc, ev);
}

static void a_fused_destroy(void *f) { wave_fused_destroy(f); }

static void a_describe(const struct prop *s, char *buf, size_t len)
{
    char k[200];
    wave_describe_kernel(W(s), k, sizeof k);
    snprintf(buf, len, "acoustic, taylor order %d, %s", s->p.op.order, k);
}

const struct prop_ops prop_acoustic_ops = {
    .name = "acoustic",
    .check = a_check,
    .memory_bytes = a_memory_bytes,
    .state_bytes = a_state_bytes,
    .layout_of = a_layout_of,
    .create = a_create,
    .create_like = a_create_like,
    .destroy = a_destroy,
    .set_stream = a_set_stream,
    .sync = a_sync,
    .reset = a_reset,
    .step = a_step,
    .step_reverse = a_step_reverse,
    .set_reverse_interior = a_set_reverse_interior,
    .swap = a_swap,
    .step_index = a_step_index,
    .set_absorbing = a_set_absorbing,
    .randomize_layers = a_randomize_layers,
    .points_create = a_points_create,
    .points_destroy = a_points_destroy,
    .inject = a_inject,
    .sample = a_sample,
    .field = a_field,
    .layout = a_layout,
    .copy_out = a_copy_out,
    .copy_in = a_copy_in,
    .strip_count = a_strip_count,
    .strip_save = a_strip_save,
    .strip_load = a_strip_load,
    .state_size = a_state_size,
    .state_save = a_state_save,
    .state_load = a_state_load,
    .halo_count = a_halo_count,
    .halo_pack = a_halo_pack,
    .halo_unpack = a_halo_unpack,
    .describe = a_describe,
    .nodes_create = a_nodes_create,
    .step_part = a_step_part,
    .has_step_part = a_has_step_part,
    .halo_pack_async = a_halo_pack_async,
    .halo_unpack_async = a_halo_unpack_async,
    .fused_create = a_fused_create,
    .fused_step = a_fused_step,
    .fused_image_step = a_fused_image_step,
    .fused_destroy = a_fused_destroy,
};
