/* propagator — dispatch of the prop_* calls to the physics' table (propagator.h). */
#include "kernels/propagator.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

extern const struct prop_ops prop_acoustic_ops; /* prop_acoustic.c */
extern const struct prop_ops prop_tti_ops;      /* prop_tti.c */

const struct prop_ops *prop_ops_of(int physics)
{
    switch (physics) {
    case PROP_ACOUSTIC: return &prop_acoustic_ops;
    case PROP_TTI: return &prop_tti_ops;
    default: return NULL;
    }
}

const char *prop_physics_name(int physics)
{
    const struct prop_ops *o = prop_ops_of(physics);
    return o ? o->name : "unknown";
}

void prop_params_init(struct prop_params *p, const int n[3], const double d[3], const double o[3], double dt,
                      int width)
{
    memset(p, 0, sizeof *p);
    p->physics = PROP_ACOUSTIC;
    for (int a = 0; a < 3; a++) {
        p->grid.n[a] = n[a];
        p->grid.d[a] = d[a];
        p->grid.o[a] = o[a];
    }
    for (int f = 0; f < PROP_FACES; f++) {
        p->grid.face[f] = PROP_FACE_CPML;
        p->grid.width[f] = width;
    }
    if (n[1] == 1) {
        p->grid.face[2] = p->grid.face[3] = PROP_FACE_NONE;
        p->grid.width[2] = p->grid.width[3] = 0;
    }
    p->op.kind = PROP_OP_TAYLOR;
    p->op.order = 8;
    p->dt = dt;
    p->pml_reflection = 1e-4;
    p->f_ref = 15.0;
    p->tti_sigma = 0.75;
}

static const struct prop_ops *ops_or_err(const struct prop_params *p)
{
    const struct prop_ops *o = prop_ops_of(p->physics);
    if (!o)
        err_set(-EINVAL, "propagator: unknown physics %d", p->physics);
    return o;
}

int prop_check(const struct prop_params *p)
{
    const struct prop_ops *o = ops_or_err(p);
    return o ? o->check(p) : -EINVAL;
}

size_t prop_memory_bytes(const struct prop_params *p)
{
    const struct prop_ops *o = prop_ops_of(p->physics);
    return o ? o->memory_bytes(p) : 0;
}

size_t prop_state_bytes_of(const struct prop_params *p)
{
    const struct prop_ops *o = prop_ops_of(p->physics);
    return o ? o->state_bytes(p) : 0;
}

int prop_layout_of(const struct prop_params *p, struct prop_layout *out)
{
    const struct prop_ops *o = ops_or_err(p);
    return o ? o->layout_of(p, out) : -EINVAL;
}

int prop_create(const struct sl_device *dev, const struct prop_params *p, const struct prop_model *m,
                struct prop **out)
{
    *out = NULL;
    const struct prop_ops *o = ops_or_err(p);
    return o ? o->create(dev, p, m, out) : -EINVAL;
}

int prop_create_like(const struct prop *like, struct prop **out) { return like->ops->create_like(like, out); }

void prop_destroy(struct prop *s)
{
    if (s)
        s->ops->destroy(s);
}

void prop_set_stream(struct prop *s, void *stream) { s->ops->set_stream(s, stream); }
int prop_sync(struct prop *s) { return s->ops->sync(s); }
int prop_reset(struct prop *s) { return s->ops->reset(s); }
int prop_step(struct prop *s) { return s->ops->step(s); }
int prop_step_reverse(struct prop *s) { return s->ops->step_reverse(s); }
void prop_set_reverse_interior(struct prop *s, bool on) { s->ops->set_reverse_interior(s, on); }
void prop_swap(struct prop *s) { s->ops->swap(s); }
int64_t prop_step_index(const struct prop *s) { return s->ops->step_index(s); }
void prop_set_absorbing(struct prop *s, bool on) { s->ops->set_absorbing(s, on); }

int prop_randomize_layers(struct prop *s, const struct random_boundary *rb, uint64_t shot_id)
{
    return s->ops->randomize_layers(s, rb, shot_id);
}

int prop_points_create(struct prop *s, const double *xyz, size_t n, int interp, struct prop_points **out)
{
    *out = NULL;
    return s->ops->points_create(s, xyz, n, interp, out);
}

int prop_points_create_nodes(struct prop *s, const int *ijk, size_t n, struct prop_points **out)
{
    *out = NULL;
    if (!s->ops->nodes_create)
        return err_set(-ENOTSUP, "%s propagator: no single-node point sets (a decomposed grid's sources and "
                       "receivers) yet", s->ops->name);
    return s->ops->nodes_create(s, ijk, n, out);
}

void prop_points_destroy(struct prop *s, struct prop_points *pts)
{
    if (s && pts)
        s->ops->points_destroy(pts);
}

int prop_inject(struct prop *s, const struct prop_points *pts, const float *amps, size_t stride, float scale,
                unsigned flags)
{
    return s->ops->inject(s, pts, amps, stride, scale, flags);
}

int prop_sample(struct prop *s, const struct prop_points *pts, float *out, size_t stride, unsigned flags)
{
    return s->ops->sample(s, pts, out, stride, flags);
}

const float *prop_field(struct prop *s) { return s->ops->field(s); }
const struct prop_layout *prop_layout(const struct prop *s) { return s->ops->layout(s); }
int prop_copy_out(struct prop *s, bool prev, float *host) { return s->ops->copy_out(s, prev, host); }
int prop_copy_in(struct prop *s, bool prev, const float *host) { return s->ops->copy_in(s, prev, host); }
size_t prop_strip_count(const struct prop *s) { return s->ops->strip_count(s); }
int prop_strip_save(struct prop *s, float *buf, bool on_device) { return s->ops->strip_save(s, buf, on_device); }
int prop_strip_load(struct prop *s, const float *buf, bool on_device) { return s->ops->strip_load(s, buf, on_device); }
size_t prop_state_bytes(const struct prop *s) { return s->ops->state_size(s); }
int prop_state_save(struct prop *s, void *buf, bool on_device) { return s->ops->state_save(s, buf, on_device); }
int prop_state_load(struct prop *s, const void *buf, bool on_device) { return s->ops->state_load(s, buf, on_device); }
size_t prop_halo_count(const struct prop *s, int face) { return s->ops->halo_count(s, face); }
int prop_halo_pack(struct prop *s, int face, float *buf) { return s->ops->halo_pack(s, face, buf); }
int prop_halo_unpack(struct prop *s, int face, const float *buf) { return s->ops->halo_unpack(s, face, buf); }

int prop_step_part(struct prop *s, int part)
{
    if (part == PROP_PART_ALL)
        return prop_step(s);
    if (!s->ops->step_part)
        return err_set(-ENOTSUP, "%s: no step in parts", s->ops->name);
    return s->ops->step_part(s, part);
}

int prop_step_stage(struct prop *s, int stage)
{
    if (!s->ops->step_stage)
        return err_set(-ENOTSUP, "%s: no step in stages (one exchange per step suffices)", s->ops->name);
    return s->ops->step_stage(s, stage);
}

bool prop_has_step_stage(const struct prop *s) { return s->ops->step_stage != NULL; }

int prop_set_mid_exchange(struct prop *s, prop_mid_fn fn, void *ctx)
{
    if (!s->ops->set_mid_exchange)
        return err_set(-ENOTSUP, "%s: no step in stages (one exchange per step suffices)", s->ops->name);
    return s->ops->set_mid_exchange(s, fn, ctx);
}

bool prop_has_step_part(const struct prop *s)
{
    return s->ops->has_step_part && s->ops->has_step_part(s);
}

int prop_halo_pack_async(struct prop *s, int face, float *buf, void *stream)
{
    if (!s->ops->halo_pack_async)
        return s->ops->halo_pack(s, face, buf);
    return s->ops->halo_pack_async(s, face, buf, stream);
}

int prop_halo_unpack_async(struct prop *s, int face, const float *buf, void *stream)
{
    if (!s->ops->halo_unpack_async)
        return s->ops->halo_unpack(s, face, buf);
    return s->ops->halo_unpack_async(s, face, buf, stream);
}

void prop_describe(const struct prop *s, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    s->ops->describe(s, buf, len);
}

struct prop_fused {
    const struct prop_ops *ops;
    void *impl;
};

int prop_fused_create(struct prop *q, struct prop *u, int variant, struct prop_fused **out)
{
    *out = NULL;
    if (q->ops != u->ops)
        return err_set(-ENOTSUP, "fused backward step: %s and %s simulations", q->ops->name, u->ops->name);
    if (!q->ops->fused_create)
        return err_set(-ENOTSUP, "fused backward step: none for the %s physics", q->ops->name);
    struct prop_fused *f = calloc(1, sizeof *f);
    if (!f)
        return err_set(-ENOMEM, "fused backward step: out of memory");
    int rc = q->ops->fused_create(q, u, variant, &f->impl);
    if (rc < 0) {
        free(f);
        return rc;
    }
    f->ops = q->ops;
    *out = f;
    return 0;
}

int prop_fused_step(struct prop_fused *f, const struct imaging_box *b, const struct imaging_acc *acc)
{
    return f->ops->fused_step(f->impl, b, acc);
}

int prop_fused_image_step(struct prop_fused *f, const struct imaging_box *b, const struct imaging_acc *acc,
                          void *ev)
{
    return f->ops->fused_image_step(f->impl, b, acc, ev);
}

void prop_fused_destroy(struct prop_fused *f)
{
    if (!f)
        return;
    f->ops->fused_destroy(f->impl);
    free(f);
}
