/* rtm_fused — RTM's fused backward step: the checks, the CPU reference (OpenMP, one loop
 * over the rows of the padded grid) and the dispatch to the CUDA kernel (rtm_fused.cu).
 * See rtm_fused.h. */
#include "kernels/rtm_fused.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

#define LOG_COMPONENT "rtm"
#include "stream/log.h"

struct wave_fused {
    struct wave_sim *q, *u;
#ifdef SEISLIVE_CUDA
    struct wave_fused_cu *cu;
#endif
};

static bool on_gpu(const struct wave_sim *s) { return s->dev->kind == SL_DEVICE_CUDA; }

/* What both devices' fused steps need of the pair (the CUDA side checks its plans too). */
static int check_pair(const struct wave_sim *q, const struct wave_sim *u)
{
    if (q == u)
        return err_set(-EINVAL, "fused step: the source and receiver simulations are one");
    if (q->dev != u->dev || on_gpu(q) != on_gpu(u))
        return err_set(-ENOTSUP, "fused step: the two simulations live on different devices");
    if (q->imp || u->imp)
        return err_set(-ENOTSUP, "fused step: the implicit operator steps in sweeps, not in one pass");
    const struct wave_layout *a = &q->L, *b = &u->L;
    bool same = a->halo == b->halo && a->stride_y == b->stride_y && a->stride_z == b->stride_z &&
                a->count == b->count;
    for (int i = 0; i < 3 && same; i++)
        same = a->npad[i] == b->npad[i] && a->dim[i] == b->dim[i] && a->off[i] == b->off[i] &&
               a->pad_off[i] == b->pad_off[i];
    for (int f = 0; f < 6 && same; f++)
        same = a->pml[f] == b->pml[f];
    if (!same)
        return err_set(-ENOTSUP, "fused step: the simulations' grids differ (random layers of another width "
                                 "than the CPML's?)");
    if (q->r != u->r || memcmp(q->c2, u->c2, sizeof q->c2) != 0)
        return err_set(-ENOTSUP, "fused step: the simulations' derivative weights differ");
    if (q->p.free_surface != u->p.free_surface)
        return err_set(-ENOTSUP, "fused step: a free surface in one simulation only");
    return 0;
}

int wave_fused_create(struct wave_sim *q, struct wave_sim *u, int variant, struct wave_fused **out)
{
    *out = NULL;
    int rc = check_pair(q, u);
    if (rc < 0)
        return rc;
    if (variant < 0 || variant >= WAVE_FUSED_VARIANTS)
        return err_set(-EINVAL, "fused step: variant %d: must be 0..%d", variant, WAVE_FUSED_VARIANTS - 1);
    struct wave_fused *f = calloc(1, sizeof *f);
    if (!f)
        return err_set(-ENOMEM, "fused step: out of memory");
    f->q = q;
    f->u = u;
#ifdef SEISLIVE_CUDA
    unsigned vd[2];
    if (on_gpu(q) && (rc = wave_cu_fused_create(q, u, variant, &f->cu, vd)) < 0) {
        free(f);
        return rc;
    }
    if (f->cu)
        log_debug("fused step: u's velocity differs from q's in %u interior and %u layer cells: the kernel reads "
                  "it %s", vd[0], vd[1], vd[0] + vd[1] == 0 ? "nowhere" : vd[0] == 0 ? "in the layers" : "everywhere");
#endif
    *out = f;
    return 0;
}

void wave_fused_destroy(struct wave_fused *f)
{
    if (!f)
        return;
#ifdef SEISLIVE_CUDA
    wave_cu_fused_destroy(f->cu);
#endif
    free(f);
}

/* Image row (j, k) of the padded grid, when the box holds it: u's prev (u(n+1)) with q's
 * cur (q(n+1)). */
static void image_row(const struct wave_sim *q, const struct wave_sim *u, const struct imaging_box *b,
                      const struct imaging_acc *acc, int j, int k)
{
    const struct wave_layout *L = &q->L;
    const int y = j + L->pad_off[1] - b->off[1], z = k + L->pad_off[2] - b->off[2];
    if (y < 0 || y >= b->n[1] || z < 0 || z >= b->n[2])
        return;
    imaging_accumulate_row_cpu(b, u->prev, b, q->cur, acc, y, z);
}

/* The CPU reference: for every row of the padded grid, the imaging row first (it reads
 * u's prev, which u's row then overwrites), then u's reverse row and q's row, with the
 * row functions of the separate steps (kernels/wave.c), so every value is theirs. */
static void step_cpu(struct wave_sim *q, struct wave_sim *u, const struct imaging_box *b,
                     const struct imaging_acc *acc)
{
    bool qc = q->cpml_on, qi = false, uc = false, ui = u->rev_interior;
    int qk0, qk1, qj0, qj1, uk0, uk1, uj0, uj1;
    wave_step_rows_cpu(q, &qc, &qi, &qk0, &qk1, &qj0, &qj1);
    wave_step_rows_cpu(u, &uc, &ui, &uk0, &uk1, &uj0, &uj1);
    if (qc)
        wave_psi_update(q);
    const int npx = q->L.npad[0];
    /* q's rows are the whole padded grid (a forward step), u's lie within it */
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = qk0; k < qk1; k++)
        for (int j = qj0; j < qj1; j++) {
            float lap[npx];
            if (acc)
                image_row(q, u, b, acc, j, k);
            if (k >= uk0 && k < uk1 && j >= uj0 && j < uj1)
                wave_step_row_cpu(u, j, k, uc, ui, lap);
            wave_step_row_cpu(q, j, k, qc, qi, lap);
        }
    if (q->p.free_surface)
        wave_free_surface_cpu(q);
    if (u->p.free_surface)
        wave_free_surface_cpu(u);
}

int wave_fused_image_step(struct wave_fused *f, const struct imaging_box *b, const struct imaging_acc *acc,
                          void *ev)
{
    struct wave_sim *q = f->q;
#ifdef SEISLIVE_CUDA
    if (f->cu) {
        int rc = wave_cu_fused_image_step(f->cu, b, acc, ev);
        if (rc < 0)
            return rc;
        wave_swap(q);
        q->step++;
        return 0;
    }
#endif
    (void)ev;
    if (acc)
        imaging_accumulate_cpu(b, f->u->prev, b, q->cur, acc);
    return wave_step(q);
}

int wave_fused_step(struct wave_fused *f, const struct imaging_box *b, const struct imaging_acc *acc)
{
    struct wave_sim *q = f->q, *u = f->u;
    int rc = 0;
#ifdef SEISLIVE_CUDA
    if (f->cu)
        rc = wave_cu_fused_step(f->cu, b, acc);
    else
#endif
        step_cpu(q, u, b, acc);
    if (rc < 0)
        return rc;
    wave_swap(q);
    wave_swap(u);
    q->step++;
    u->step--;
    return 0;
}
