/* tti_cuda — the host side of the CUDA TTI twins (kernels/tti_cuda.h): device memory, the
 * medium and its n tables, the step plan, and what moves in and out (copies, strips,
 * states, random layers).  Kernels: tti_naive.cu, tti_tiled.cu, tti_cols.cu, tti_layers.cu,
 * tti_layer_boxes.cu (which of them the tiled plan runs: struct TtiGpu, chosen at alloc
 * from the tuning).
 *
 * Step plan (tti-spec.md's arithmetic in every kernel):
 *   naive               pass 1 over the padded grid, pass 2 over the update box;
 *   tiled, CPML off     the fused tiled kernel over the update box (its s halo is
 *                       pass 1 without psi, which is what pass 1 computes then);
 *   tiled, CPML on      the fused kernel over the core C: the interior box shrunk by r
 *                       on every side with layers, so that no s it computes itself
 *                       needs psi; pass 1 over the padded grid less C shrunk by r (the
 *                       s the rest reads), pass 2 over the padded grid less C.
 * Then the free-surface mirror of both fields.  Every kernel runs on the simulation's
 * stream, in that order. */
#include "kernels/tti_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/device.h"
#include "kernels/random_boundary.h"

static TtiGpu *G(const tti_sim *s) { return (TtiGpu *)s->gpu; }

TArgs tti_args(const tti_sim *s)
{
    const wave_sim *w = &s->w;
    TArgs a;
    memset(&a, 0, sizeof a);
    a.f[0] = w->cur;
    a.f[1] = s->q;
    a.o[0] = w->prev;
    a.o[1] = s->qprev;
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < 3; i++)
            a.u[f][i] = G(s)->u[f][i];
    a.vel = w->vel;
    a.ed = s->ed;
    a.tilt = s->tilt;
    a.tab = G(s)->tab;
    a.sy = (long long)w->L.stride_y;
    a.sz = (long long)w->L.stride_z;
    a.h = w->L.halo;
    a.hy = w->L.pad_off[1];
    for (int i = 0; i < 3; i++) {
        a.npad[i] = w->L.npad[i];
        a.pa[i] = w->pa[i];
        a.pb[i] = w->pb[i];
        for (int f = 0; f < 2; f++) {
            a.psi[f][i] = s->psi[f][i];
            a.psi_n[f][i] = G(s)->psi2[f][i] ? G(s)->psi2[f][i] : s->psi[f][i];
            a.zeta[f][i] = s->zeta[f][i];
            a.chi[f][i] = s->chi[f][i];
        }
    }
    for (int f = 0; f < 6; f++)
        a.pml[f] = w->L.pml[f];
    a.fs = w->p.free_surface;
    a.inv_sigma = (float)(1.0 / s->sigma);
    memcpy(a.c2, w->c2, sizeof a.c2);
    memcpy(a.c1, w->c1, sizeof a.c1);
    return a;
}

/* ---- memory --------------------------------------------------------------------------- */

template <class T>
static int alloc_zero(const tti_sim *s, T **p, size_t count)
{
    *p = NULL;
    if (!count)
        return 0;
    void *v;
    int rc = dev_alloc(s->w.dev, count * sizeof(T), &v);
    if (rc < 0)
        return err_prefix(rc, "tti");
    *p = (T *)v;
    return dev_zero(s->w.dev, v, count * sizeof(T), NULL);
}

/* (sin, cos) per theta code, then per phi code: the CPU reference's sinf / cosf of the
 * decoded angle (tti-spec.md), so that n is the same float on both devices. */
static int upload_tables(tti_sim *s)
{
    float2 *h = (float2 *)malloc(2 * 65536 * sizeof(float2));
    if (!h)
        return err_set(-ENOMEM, "tti: out of memory (axis tables)");
    for (uint32_t u = 0; u < 65536; u++) {
        const float th = tti_theta_value(u), ph = tti_phi_value(u);
        h[u] = make_float2(sinf(th), cosf(th));
        h[65536 + u] = make_float2(sinf(ph), cosf(ph));
    }
    int rc = alloc_zero(s, &G(s)->tab, 2 * 65536);
    if (rc == 0)
        rc = dev_copy(s->w.dev, G(s)->tab, h, 2 * 65536 * sizeof(float2), DEV_H2D, NULL);
    free(h);
    return rc;
}

extern "C" int tti_cu_alloc(struct tti_sim *s)
{
    wave_sim *w = &s->w;
    TtiGpu *g = (TtiGpu *)calloc(1, sizeof *g);
    if (!g)
        return err_set(-ENOMEM, "tti: out of memory");
    s->gpu = g;
    g->naive = w->p.kernel == WAVE_KERNEL_NAIVE;
    const int pipe = w->p.tuning.pipe;
    if (pipe < 0 || pipe > TTI_TILED_COLS_X2A)
        return err_set(-EINVAL, "tti: tuning.pipe %d: 0 (default), %d (ring), %d (column queues), %d (column queues, "
                       "halo queues in shared memory), %d (column pairs: two columns a thread), %d (column pairs, "
                       "halo d_z scattered), %d (the same in clusters of two tiles), %d (column pairs, tilt codes "
                       "prefetched) or %d (column pairs, asynchronous copies)", pipe, TTI_TILED_RING, TTI_TILED_COLS,
                       TTI_TILED_COLS_HS, TTI_TILED_COLS_X2, TTI_TILED_COLS_X2S, TTI_TILED_COLS_X2C, TTI_TILED_COLS_X2P,
                       TTI_TILED_COLS_X2A);
    g->tiled = pipe ? pipe : TTI_TILED_PROD;
    const int lay = w->p.tuning.cpml;
    if (lay < 0 || lay > TTI_LAYERS_BOXES_P2X2_SIDE)
        return err_set(-EINVAL, "tti: tuning.cpml %d: 0 (default), %d (naive passes beside the core), %d..%d (z-marching "
                       "passes), %d / %d (CPML in the column kernel), %d (naive passes on a second stream), %d / %d "
                       "(the layer boxes' passes, one field / both fields per thread), %d (the latter on a second "
                       "stream), %d / %d (its pass 2 after the naive pass 1, on the simulation's / a second stream), "
                       "%d (the latter's pass 2 in pairs), kernels/tti_cuda.h", lay, TTI_LAYERS_NAIVE,
                       TTI_LAYERS_STAGED2, TTI_LAYERS_MARCH12, TTI_LAYERS_FUSED, TTI_LAYERS_FUSED_HS,
                       TTI_LAYERS_NAIVE_SIDE, TTI_LAYERS_BOXES_SPLIT, TTI_LAYERS_BOXES, TTI_LAYERS_BOXES_SIDE,
                       TTI_LAYERS_BOXES_P2, TTI_LAYERS_BOXES_P2_SIDE, TTI_LAYERS_BOXES_P2X2_SIDE);
    const int layk = lay ? lay : TTI_LAYERS_PROD;
    g->layers_tiled = layk >= TTI_LAYERS_STAGED2 && layk <= TTI_LAYERS_MARCH12 && !wave_is_2d(w);
    g->layers1_tiled = (layk == TTI_LAYERS_STAGED12 || layk == TTI_LAYERS_MARCH12) && !wave_is_2d(w);
    g->layers_staged = layk == TTI_LAYERS_STAGED2 || layk == TTI_LAYERS_STAGED12;
    if (g->tiled != TTI_TILED_RING && !tti_cu_cols_supports(s))
        g->tiled = TTI_TILED_RING;
    /* the CPML column kernel: 3D orders 2..8 (a free surface's r rows, which need the
     * image s it does not form, run the naive passes) */
    g->fused = (layk == TTI_LAYERS_FUSED || layk == TTI_LAYERS_FUSED_HS) && !g->naive && tti_cu_cols_supports(s);
    g->cp_hs = layk == TTI_LAYERS_FUSED_HS;
    /* the layer boxes' passes (3D): both fields per thread, one, pass 2 alone */
    const bool p2 =
        layk == TTI_LAYERS_BOXES_P2 || layk == TTI_LAYERS_BOXES_P2_SIDE || layk == TTI_LAYERS_BOXES_P2X2_SIDE;
    g->lboxes = 0;
    if (!wave_is_2d(w) && (layk == TTI_LAYERS_BOXES || layk == TTI_LAYERS_BOXES_SIDE || p2))
        g->lboxes = 1;
    if (!wave_is_2d(w) && layk == TTI_LAYERS_BOXES_SPLIT)
        g->lboxes = 2;
    g->lboxes2 = g->lboxes && p2;
    g->lpairs = g->lboxes && layk == TTI_LAYERS_BOXES_P2X2_SIDE;
    int rc;
    if ((layk == TTI_LAYERS_NAIVE_SIDE || layk == TTI_LAYERS_BOXES_SIDE || layk == TTI_LAYERS_BOXES_P2_SIDE ||
         layk == TTI_LAYERS_BOXES_P2X2_SIDE) &&
        !g->naive &&
        ((rc = dev_stream_create(w->dev, &g->side)) < 0 || (rc = dev_event_create(w->dev, &g->fork, false)) < 0 ||
         (rc = dev_event_create(w->dev, &g->join, false)) < 0))
        return rc;
    const size_t n = w->L.count;
    float **fields[] = {&w->cur, &w->prev, &w->vel, &s->q, &s->qprev};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if ((rc = alloc_zero(s, fields[i], n)) < 0)
            return rc;
    if ((rc = alloc_zero(s, &s->ed, n)) < 0 || (rc = alloc_zero(s, &s->tilt, n)) < 0)
        return rc;
    for (int a = 0; a < 3; a++) {
        for (int f = 0; f < 2; f++)
            if ((g->fused && (rc = alloc_zero(s, &g->psi2[f][a], w->slab_count[a])) < 0) ||
                (rc = alloc_zero(s, &s->psi[f][a], w->slab_count[a])) < 0 ||
                (rc = alloc_zero(s, &s->zeta[f][a], w->slab_count[a])) < 0 ||
                (rc = alloc_zero(s, &s->chi[f][a], w->slab_count[a])) < 0)
                return rc;
        const size_t np = (size_t)w->L.npad[a];
        if ((rc = alloc_zero(s, &w->pa[a], np)) < 0 || (rc = alloc_zero(s, &w->pb[a], np)) < 0 ||
            (rc = dev_copy(w->dev, w->pa[a], w->ha[a], np * sizeof(float), DEV_H2D, NULL)) < 0 ||
            (rc = dev_copy(w->dev, w->pb[a], w->hb[a], np * sizeof(float), DEV_H2D, NULL)) < 0)
            return rc;
    }
    return upload_tables(s);
}

/* Frees every device array and leaves NULL behind, so that tti.c's host frees after it
 * are no-ops on these pointers. */
extern "C" void tti_cu_free(struct tti_sim *s)
{
    if (!s->gpu)
        return;
    wave_sim *w = &s->w;
    const sl_device *d = w->dev;
    void **all[] = {(void **)&w->cur,  (void **)&w->prev, (void **)&w->vel,  (void **)&s->q,
                    (void **)&s->qprev, (void **)&s->ed, (void **)&s->tilt, (void **)&w->scratch};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        dev_free(d, *all[i]);
        *all[i] = NULL;
    }
    w->scratch_bytes = 0;
    for (int a = 0; a < 3; a++) {
        for (int f = 0; f < 2; f++) {
            dev_free(d, s->psi[f][a]);
            dev_free(d, G(s)->psi2[f][a]);
            dev_free(d, s->zeta[f][a]);
            dev_free(d, s->chi[f][a]);
            s->psi[f][a] = s->zeta[f][a] = s->chi[f][a] = NULL;
        }
        dev_free(d, w->pa[a]);
        dev_free(d, w->pb[a]);
        w->pa[a] = w->pb[a] = NULL;
    }
    for (int f = 0; f < 2; f++)
        for (int a = 0; a < 3; a++)
            dev_free(d, G(s)->u[f][a]);
    dev_free(d, G(s)->tab);
    dev_event_destroy(d, G(s)->fork);
    dev_event_destroy(d, G(s)->join);
    dev_stream_destroy(d, G(s)->side);
    free(s->gpu);
    s->gpu = NULL;
}

extern "C" int tti_cu_copy_medium(struct tti_sim *s, const struct tti_sim *like)
{
    const size_t n = s->w.L.count;
    int rc = dev_copy(s->w.dev, s->w.vel, like->w.vel, n * sizeof(float), DEV_D2D, like->w.stream);
    if (rc == 0)
        rc = dev_copy(s->w.dev, s->ed, like->ed, n * sizeof(uint32_t), DEV_D2D, like->w.stream);
    if (rc == 0)
        rc = dev_copy(s->w.dev, s->tilt, like->tilt, n * sizeof(uint32_t), DEV_D2D, like->w.stream);
    return rc < 0 ? rc : dev_stream_sync(s->w.dev, like->w.stream);
}

extern "C" int tti_cu_reset(struct tti_sim *s)
{
    const wave_sim *w = &s->w;
    const size_t n = w->L.count * sizeof(float);
    float *lv[4] = {w->cur, w->prev, s->q, s->qprev};
    int rc = 0;
    for (int i = 0; i < 4 && rc == 0; i++)
        rc = dev_zero(w->dev, lv[i], n, w->stream);
    for (int f = 0; f < 2; f++)
        for (int a = 0; a < 3; a++) {
            float *m[3] = {s->psi[f][a], s->zeta[f][a], s->chi[f][a]};
            for (int t = 0; t < 3 && rc == 0 && w->slab_count[a]; t++)
                rc = dev_zero(w->dev, m[t], w->slab_count[a] * sizeof(float), w->stream);
        }
    return rc;
}

/* ---- the step ---------------------------------------------------------------------------- */

/* OUTER less INNER (INNER inside OUTER) as up to 6 boxes: z slabs whole, y slabs within
 * INNER's z range, x slabs within its y and z ranges.  An empty INNER: OUTER itself. */
static int box_minus(const Box &outer, const Box &inner, Box out[6])
{
    if (box_empty(inner)) {
        out[0] = outer;
        return 1;
    }
    int n = 0;
    for (int a = 2; a >= 0; a--)
        for (int side = 0; side < 2; side++) {
            Box b = outer;
            for (int q = a + 1; q < 3; q++) {
                b.lo[q] = inner.lo[q];
                b.hi[q] = inner.hi[q];
            }
            if (side == 0)
                b.hi[a] = inner.lo[a];
            else
                b.lo[a] = inner.hi[a];
            if (!box_empty(b))
                out[n++] = b;
        }
    return n;
}

__global__ void k_tti_mirror(float *p, float *q, long long plane, int h)
{
    const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= plane)
        return;
    float *f[2] = {p, q};
    for (int k = 0; k < 2; k++) {
        f[k][(long long)h * plane + e] = 0.0f;
        for (int m = 1; m <= h; m++)
            f[k][(long long)(h - m) * plane + e] = -f[k][(long long)(h + m) * plane + e];
    }
}

static bool use_tiled(const tti_sim *s) { return !G(s)->naive && tti_cu_tiled_supports(s); }

/* The naive and layer passes' products n_a s (24 B per point in 3D), allocated the first
 * time a step runs those passes: a plan that never does (the tiled kernel over the whole
 * box, CPML off; or the CPML in the column kernel) holds none.  Zeroed on the
 * simulation's stream, before the pass that writes them (the halo stays 0). */
static int ensure_u(tti_sim *s)
{
    TtiGpu *g = G(s);
    const wave_sim *w = &s->w;
    for (int f = 0; f < 2; f++)
        for (int a = 0; a < 3; a++) {
            if (g->u[f][a] || (a == 1 && wave_is_2d(w)))
                continue;
            void *v;
            const size_t b = w->L.count * sizeof(float);
            int rc = dev_alloc(w->dev, b, &v);
            if (rc < 0)
                return err_prefix(rc, "tti: the naive passes' scratch");
            g->u[f][a] = (float *)v;
            if ((rc = dev_zero(w->dev, v, b, w->stream)) < 0)
                return rc;
        }
    return 0;
}

static int run_tiled(const tti_sim *s, const Box &b, cudaStream_t st)
{
    const int k = G(s)->tiled;
    return k == TTI_TILED_RING      ? tti_cu_tiled(s, b, st)
           : k == TTI_TILED_COLS_X2 ? tti_cu_cols2(s, b, false, st)
           : k == TTI_TILED_COLS_X2A ? tti_cu_cols2(s, b, true, st)
           : k == TTI_TILED_COLS_X2S ? tti_cu_cols3(s, b, true, st)
           : k == TTI_TILED_COLS_X2P ? tti_cu_cols3(s, b, false, st)
           : k == TTI_TILED_COLS_X2C ? tti_cu_cols4(s, b, st)
                                    : tti_cu_cols(s, b, k == TTI_TILED_COLS_HS, st);
}

extern "C" int tti_cu_step(struct tti_sim *s, bool cpml, bool interior)
{
    const wave_sim *w = &s->w;
    const struct wave_layout *L = &w->L;
    cudaStream_t st = stream_of(w);
    cpml = cpml && w->slab_count[0] + w->slab_count[1] + w->slab_count[2] > 0;
    interior = interior && !cpml;
    /* UPD: the points updated; CORE: the tiled kernel's part of it (r cells off CPML
     * layers, and off a free surface, whose image s the tiled kernel does not form);
     * RIM: CORE less r cells, whose s nothing outside CORE reads */
    Box all = {{0, 0, 0}, {L->npad[0], L->npad[1], L->npad[2]}}, upd = all, core, rim;
    const bool two_d = wave_is_2d(w);
    for (int a = 0; a < 3; a++) {
        const int lo = L->pml[2 * a], hi = L->pml[2 * a + 1], r = two_d && a == 1 ? 0 : w->r;
        if (interior) {
            upd.lo[a] = lo;
            upd.hi[a] = L->npad[a] - hi;
        }
        core.lo[a] = cpml && lo ? lo + r : upd.lo[a];
        core.hi[a] = cpml && hi ? L->npad[a] - hi - r : upd.hi[a];
        if (a == 2 && w->p.free_surface && core.lo[a] < r)
            core.lo[a] = r;
        rim.lo[a] = core.lo[a] + r;
        rim.hi[a] = core.hi[a] - r;
    }
    bool whole = true;
    for (int a = 0; a < 3; a++)
        whole = whole && core.lo[a] == upd.lo[a] && core.hi[a] == upd.hi[a];
    int rc = 0;
    bool swap = false; /* psi(n+1) is in psi2: swap the buffers after the step */
    Box parts[6];
    if (box_empty(upd)) {
        rc = 0;
    } else if (!use_tiled(s) || box_empty(core)) {
        rc = ensure_u(s);
        if (rc == 0)
            rc = tti_cu_pass1(s, all, cpml, st);
        if (rc == 0)
            rc = tti_cu_pass2(s, upd, cpml, st);
        swap = G(s)->fused && cpml; /* pass 1 wrote psi(n+1) to psi2 (TArgs.psi_n) */
    } else if (whole) {
        rc = run_tiled(s, upd, st);
    } else if (G(s)->fused && cpml) {
        /* the CPML column kernel over the rest (it reads psi(n), writes psi(n+1) to psi2,
         * so no block reads a psi another has updated), then the core.  A free surface:
         * its r rows by the naive passes first (pass 1 over the 2r rows whose s they read,
         * psi(n+1) into psi2 too; rows r..2r get the same psi from both), the column
         * kernel from row r. */
        TtiGpu *g = G(s);
        Box rest = upd;
        if (w->p.free_surface) {
            Box top = upd;
            top.hi[2] = 2 * w->r < upd.hi[2] ? 2 * w->r : upd.hi[2];
            rc = ensure_u(s);
            if (rc == 0)
                rc = tti_cu_pass1(s, top, cpml, st);
            top.hi[2] = w->r;
            if (rc == 0)
                rc = tti_cu_pass2(s, top, cpml, st);
            rest.lo[2] = w->r;
        }
        const int n2 = box_minus(rest, core, parts);
        if (rc == 0)
            rc = tti_cu_cols_cpml(s, parts, n2, g->cp_hs, st);
        if (rc == 0)
            rc = run_tiled(s, core, st);
        swap = true;
    } else {
        /* the passes beside the core (the *_SIDE kinds: on the side stream, forked
         * after what ran before on st and joined before what follows; they and the core
         * touch disjoint outputs) */
        TtiGpu *g = G(s);
        cudaStream_t ls = g->side ? (cudaStream_t)g->side : st;
        rc = ensure_u(s);
        if (rc == 0 && g->side && (rc = dev_event_record(w->dev, g->fork, w->stream)) == 0)
            rc = dev_stream_wait(w->dev, g->side, g->fork);
        const int n1 = box_minus(all, rim, parts);
        if (rc == 0 && g->lboxes) { /* the passes over all their boxes, one launch each */
            for (int i = 0; i < n1 && rc == 0 && g->lboxes2; i++)
                rc = tti_cu_pass1(s, parts[i], cpml, ls);
            if (rc == 0 && !g->lboxes2)
                rc = tti_cu_lboxes(s, parts, n1, true, cpml, g->lboxes == 2, ls);
            const int n2 = box_minus(upd, core, parts);
            if (rc == 0)
                rc = g->lpairs ? tti_cu_lboxes_x2(s, parts, n2, cpml, ls)
                               : tti_cu_lboxes(s, parts, n2, false, cpml, g->lboxes == 2, ls);
        }
        for (int i = 0; i < n1 && rc == 0 && !g->lboxes; i++)
            rc = g->layers1_tiled ? tti_cu_layer1(s, parts[i], cpml, g->layers_staged, ls)
                                  : tti_cu_pass1(s, parts[i], cpml, ls);
        const int n2 = g->lboxes ? 0 : box_minus(upd, core, parts);
        for (int i = 0; i < n2 && rc == 0; i++)
            rc = g->layers_tiled ? tti_cu_layer2(s, parts[i], cpml, g->layers_staged, ls)
                                 : tti_cu_pass2(s, parts[i], cpml, ls);
        if (rc == 0)
            rc = run_tiled(s, core, st);
        if (rc == 0 && g->side && (rc = dev_event_record(w->dev, g->join, g->side)) == 0)
            rc = dev_stream_wait(w->dev, w->stream, g->join);
    }
    for (int f = 0; f < 2 && rc == 0 && swap; f++)
        for (int a = 0; a < 3; a++) {
            float *t = s->psi[f][a];
            s->psi[f][a] = G(s)->psi2[f][a];
            G(s)->psi2[f][a] = t;
        }
    if (rc == 0 && w->p.free_surface) {
        const long long plane = (long long)L->stride_z;
        k_tti_mirror<<<(unsigned)((plane + 255) / 256), 256, 0, st>>>(w->prev, s->qprev, plane, L->pad_off[2]);
        CUDA_TRY_LAUNCH();
    }
    return rc;
}

/* ---- what moves in and out ----------------------------------------------------------------- */

extern "C" int tti_cu_randomize_layers(struct tti_sim *s, const struct random_boundary *rb, uint64_t shot_id)
{
    /* no HALO faces: the grid is its own frame */
    const struct wave_layout *L = &s->w.L;
    struct rb_frame g;
    for (int a = 0; a < 3; a++) {
        g.npad[a] = L->npad[a];
        g.n[a] = L->n[a];
        g.shift[a] = 0;
    }
    for (int f = 0; f < 6; f++)
        g.pml[f] = L->pml[f];
    return wave_cu_randomize_layers(&s->w, rb, &g, shot_id);
}

extern "C" int tti_cu_copy_interior(struct tti_sim *s, float *field, float *host, bool out)
{
    const wave_sim *w = &s->w;
    const struct wave_layout *L = &w->L;
    /* whole rows of the allocated array through one pitched copy per z plane */
    const size_t row = L->n[0] * sizeof(float), pitch = L->stride_y * sizeof(float);
    int rc = dev_stream_sync(w->dev, w->stream);
    for (int k = 0; k < L->n[2] && rc == 0; k++) {
        float *g = field + (size_t)(k + L->off[2]) * L->stride_z + (size_t)L->off[1] * L->stride_y + L->off[0];
        float *h = host + (size_t)k * L->n[1] * L->n[0];
        rc = out ? dev_copy_2d(w->dev, h, row, g, pitch, row, L->n[1], DEV_D2H)
                 : dev_copy_2d(w->dev, g, pitch, h, row, row, L->n[1], DEV_H2D);
    }
    /* the pitched copies ran on the default stream; a kernel on a non-blocking stream
     * is not ordered after them */
    return rc == 0 && !out ? dev_sync(w->dev) : rc;
}

/* The strip of tti.c (two halos wide: s reads f r cells beyond what the update reads),
 * p then q: the wave strip mechanism with that width and both fields. */
extern "C" int tti_cu_strip(struct tti_sim *s, float *buf, bool on_device, bool save)
{
    float *const fields[2] = {s->w.cur, s->q};
    return wave_cu_strip_fields(&s->w, fields, 2, 2 * s->w.L.halo, buf, on_device, save);
}

/* The CPU's state layout (tti.c): p, p(n-1), q, q(n-1), then per field and axis psi,
 * zeta, chi, then the step index. */
extern "C" int tti_cu_state(struct tti_sim *s, char *buf, bool on_device, bool save)
{
    wave_sim *w = &s->w;
    float *parts[4 + 18];
    size_t counts[4 + 18];
    int np = 0;
    float *lv[4] = {w->cur, w->prev, s->q, s->qprev};
    for (int i = 0; i < 4; i++) {
        parts[np] = lv[i];
        counts[np++] = w->L.count;
    }
    for (int f = 0; f < 2; f++)
        for (int a = 0; a < 3; a++) {
            float *m[3] = {s->psi[f][a], s->zeta[f][a], s->chi[f][a]};
            for (int t = 0; t < 3; t++) {
                parts[np] = m[t];
                counts[np++] = w->slab_count[a];
            }
        }
    const dev_copy_kind kind = on_device ? DEV_D2D : save ? DEV_D2H : DEV_H2D;
    size_t at = 0;
    int rc = 0;
    for (int i = 0; i < np && rc == 0; i++) {
        const size_t b = counts[i] * sizeof(float);
        if (b)
            rc = save ? dev_copy(w->dev, buf + at, parts[i], b, kind, w->stream)
                      : dev_copy(w->dev, parts[i], buf + at, b, kind, w->stream);
        at += b;
    }
    /* the step index lives on the host */
    if (rc == 0 && on_device)
        rc = save ? dev_copy(w->dev, buf + at, &w->step, sizeof w->step, DEV_H2D, w->stream)
                  : dev_copy(w->dev, &w->step, buf + at, sizeof w->step, DEV_D2H, w->stream);
    if (rc == 0)
        rc = dev_stream_sync(w->dev, w->stream);
    if (rc == 0 && !on_device) {
        if (save)
            memcpy(buf + at, &w->step, sizeof w->step);
        else
            memcpy(&w->step, buf + at, sizeof w->step);
    }
    return rc;
}

extern "C" void tti_cu_describe(const struct tti_sim *s, char *buf, size_t len)
{
    const bool tiled = use_tiled(s);
    const int k = G(s)->tiled;
    const char *what = !tiled                   ? "naive (2 passes)"
                       : k == TTI_TILED_COLS    ? "tiled columns (fused, register queues, 32x16)"
                       : k == TTI_TILED_COLS_HS ? "tiled columns (fused, register queues, 32x16, halo queues shared)"
                       : k == TTI_TILED_COLS_X2 ? "tiled column pairs (fused, register queues, 32x16, 2 columns a thread)"
                       : k == TTI_TILED_COLS_X2S
                           ? "tiled column pairs (fused, register queues, 32x16, 2 columns a thread, halo d_z scattered)"
                       : k == TTI_TILED_COLS_X2C ? "tiled column pairs (fused, register queues, 32x16, 2 columns a thread, "
                                                   "halo d_z scattered, clusters of 2 tiles)"
                       : k == TTI_TILED_COLS_X2P
                           ? "tiled column pairs (fused, register queues, 32x16, 2 columns a thread, tilt codes prefetched)"
                       : k == TTI_TILED_COLS_X2A ? "tiled column pairs (fused, register queues, 32x16, 2 columns a thread, "
                                                   "asynchronous copies)"
                                                : "tiled ring (fused, shared-memory ring of planes)";
    snprintf(buf, len, "CUDA %s%s%s, sigma %g, CPML %s", what,
             !tiled                        ? ""
             : G(s)->fused && G(s)->cp_hs  ? ", CPML in the column kernel (shared halo queues)"
             : G(s)->fused                 ? ", CPML in the column kernel"
             : G(s)->side && G(s)->lpairs  ? ", layer boxes, both fields per thread, pass 2 in pairs, on a second stream"
             : G(s)->side && G(s)->lboxes2 ? ", layer boxes, both fields per thread, pass 2 only, on a second stream"
             : G(s)->side && G(s)->lboxes  ? ", layer boxes, both fields per thread, on a second stream"
             : G(s)->side                  ? ", naive passes on a second stream"
             : G(s)->lboxes == 2           ? ", layer boxes, one field per thread"
             : G(s)->lboxes2               ? ", layer boxes, both fields per thread, pass 2 only"
             : G(s)->lboxes                ? ", layer boxes, both fields per thread"
             : !G(s)->layers_tiled         ? ""
             : G(s)->layers_staged         ? (G(s)->layers1_tiled ? ", tiled layer passes 1+2" : ", tiled layer pass")
             : G(s)->layers1_tiled         ? ", marching layer passes 1+2"
                                           : ", marching layer pass 2",
             wave_is_2d(&s->w) ? ", 2D" : "", s->sigma, s->w.cpml_on ? "on" : "off");
}
