/* image_stack — see image_stack.h. */
#include "stream/image_stack.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/laplacian_filter.h"
#include "stream/error.h"

size_t image_stack_cells(const struct image_stack *s)
{
    return (size_t)s->n[0] * (size_t)s->n[1] * (size_t)s->n[2];
}

int image_stack_init(struct image_stack *s, const int n[3], const double d[3], const double o[3])
{
    memset(s, 0, sizeof *s);
    for (int k = 0; k < 3; k++) {
        if (n[k] <= 0)
            return err_set(-EINVAL, "image stack: grid size %d in dimension %d", n[k], k);
        s->n[k] = n[k];
        s->d[k] = d[k];
        s->o[k] = o[k];
    }
    size_t cells = image_stack_cells(s);
    s->image = calloc(cells, sizeof(float));
    s->illum = calloc(cells, sizeof(float));
    if (!s->image || !s->illum) {
        image_stack_free(s);
        return err_set(-ENOMEM, "image stack: %zu cells", cells);
    }
    return 0;
}

void image_stack_free(struct image_stack *s)
{
    free(s->image);
    free(s->illum);
    free(s->ids);
    free(s->src);
    memset(s, 0, sizeof *s);
}

void image_stack_clear(struct image_stack *s)
{
    size_t cells = image_stack_cells(s);
    memset(s->image, 0, cells * sizeof(float));
    memset(s->illum, 0, cells * sizeof(float));
    s->shots = 0;
    s->n_ids = 0;
}

bool image_stack_has(const struct image_stack *s, int64_t id)
{
    for (size_t i = 0; i < s->n_ids; i++)
        if (s->ids[i] == id)
            return true;
    return false;
}

static long find_id(const struct image_stack *s, int64_t id)
{
    for (size_t i = 0; i < s->n_ids; i++)
        if (s->ids[i] == id)
            return (long)i;
    return -1;
}

int image_stack_check(const struct image_stack *s, int64_t id, uint64_t digest,
                      const char *origin)
{
    long i = find_id(s, id);
    if (i < 0)
        return 0;
    const struct shot_source *o = &s->src[i];
    if (o->digest == 0 || o->digest == digest)
        return 1;
    return err_set(-EEXIST,
                   "%s: shot %" PRId64 " differs from the shot %" PRId64 " already stacked "
                   "from %s (content digest %016" PRIx64 ", stacked %016" PRIx64 "): two "
                   "different shots under one id; not stacked",
                   origin ? origin : "?", id, id, o->origin[0] ? o->origin : "(origin unknown)",
                   digest, o->digest);
}

void image_stack_set_source(struct image_stack *s, int64_t id, uint64_t digest,
                            const char *origin)
{
    long i = find_id(s, id);
    if (i < 0)
        return;
    s->src[i].digest = digest;
    snprintf(s->src[i].origin, sizeof s->src[i].origin, "%s", origin ? origin : "");
}

void image_stack_restore_sources(struct image_stack *s, const struct shot_source *src, size_t n)
{
    for (size_t i = 0; i < s->n_ids && i < n && src; i++)
        s->src[i] = src[i];
}

const int64_t *image_stack_ids(const struct image_stack *s, size_t *n)
{
    *n = s->n_ids;
    return s->ids;
}

static int push_id(struct image_stack *s, int64_t id)
{
    if (s->n_ids == s->cap_ids) {
        size_t cap = s->cap_ids ? 2 * s->cap_ids : 64;
        int64_t *p = realloc(s->ids, cap * sizeof *p);
        if (!p)
            return err_set(-ENOMEM, "image stack: ledger of %zu shots", cap);
        s->ids = p;
        struct shot_source *q = realloc(s->src, cap * sizeof *q);
        if (!q)
            return err_set(-ENOMEM, "image stack: ledger of %zu shots", cap);
        s->src = q;
        s->cap_ids = cap;
    }
    memset(&s->src[s->n_ids], 0, sizeof s->src[s->n_ids]);
    s->ids[s->n_ids++] = id;
    s->shots = (int64_t)s->n_ids;
    return 0;
}

int image_stack_add(struct image_stack *s, int64_t id, const struct image_patch *p)
{
    if (image_stack_has(s, id))
        return err_set(-EEXIST, "shot %" PRId64 " is already in the stack", id);
    int lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        if (p->n[k] <= 0)
            return err_set(-EINVAL, "shot %" PRId64 ": image patch size %d in dimension %d", id,
                           p->n[k], k);
        lo[k] = p->off[k] < 0 ? 0 : p->off[k];
        hi[k] = p->off[k] + p->n[k] > s->n[k] ? s->n[k] : p->off[k] + p->n[k];
    }
    /* Reserve the ledger entry first, so a failure leaves the image untouched. */
    int rc = push_id(s, id);
    if (rc)
        return rc;
    if (lo[0] >= hi[0] || lo[1] >= hi[1] || lo[2] >= hi[2])
        return 0; /* wholly outside the model: counted as stacked, nothing to add */
    const size_t pnx = (size_t)p->n[0], pny = (size_t)p->n[1];
    const size_t snx = (size_t)s->n[0], sny = (size_t)s->n[1];
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = lo[2]; z < hi[2]; z++)
        for (int y = lo[1]; y < hi[1]; y++) {
            size_t ps = ((size_t)(z - p->off[2]) * pny + (size_t)(y - p->off[1])) * pnx;
            size_t ss = ((size_t)z * sny + (size_t)y) * snx;
            for (int x = lo[0]; x < hi[0]; x++) {
                s->image[ss + (size_t)x] += p->image[ps + (size_t)(x - p->off[0])];
                if (p->illum)
                    s->illum[ss + (size_t)x] += p->illum[ps + (size_t)(x - p->off[0])];
            }
        }
    return 0;
}

int image_stack_restore(struct image_stack *s, const float *image, const float *illum,
                        const int64_t *ids, size_t n_ids)
{
    s->n_ids = 0;
    s->shots = 0;
    for (size_t i = 0; i < n_ids; i++) {
        int rc = push_id(s, ids[i]);
        if (rc)
            return rc;
    }
    size_t cells = image_stack_cells(s);
    memcpy(s->image, image, cells * sizeof(float));
    if (illum)
        memcpy(s->illum, illum, cells * sizeof(float));
    else
        memset(s->illum, 0, cells * sizeof(float));
    return 0;
}

int image_stack_render(const struct image_stack *s, bool laplacian, float *out)
{
    if (!laplacian) {
        memcpy(out, s->image, image_stack_cells(s) * sizeof(float));
        return 0;
    }
    laplacian_filter_cpu(s->n, s->d, s->image, out);
    return 0;
}
