/* seislive-mpi_prop — a test driver, run under mpirun by tests/test_mpi_prop.c: the
 * propagator on a grid decomposed over the ranks (stream/decompose*.h) against the whole
 * grid stepped by rank 0 alone, bit for bit, for the face kinds the model job has no key
 * for: random-velocity layers (the RTM random strategy's) crossing the cuts, with and
 * without a free surface, and CPML; forward steps, then reverse steps (RTM's time
 * reversal), a source whose support straddles a cut, the halo exchanged over MPI after
 * every step.
 *
 *   mpirun -np N seislive-mpi_prop KIND ORDER [2d|yz]   KIND: cpml | random | random-free
 *
 * 2d: the grid one cell across y; yz: split [1, 2, 2] (4 ranks: cuts along y and z).
 *
 * Rank 0 prints "bitwise ..." and every rank exits 0 when the gathered fields (both time
 * levels, the interior of the whole grid) equal the whole grid's; else exit 1 naming the
 * first differing point. */
#define LOG_COMPONENT "mpi-prop"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/propagator.h"
#include "kernels/random_boundary.h"
#include "kernels/stability.h"
#include "kernels/wavelet.h"
#include "stream/decompose.h"
#include "stream/decompose_halo.h"
#include "stream/decompose_points.h"
#include "stream/error.h"
#include "stream/log.h"
#include "stream/mpi.h"

enum { NSTEP = 40, NREV = 12 };

static struct prop_params whole_params(const char *kind, int order, bool two_d)
{
    struct prop_params p;
    const int n[3] = {18, two_d ? 1 : 16, 34};
    const double d[3] = {10, 12, 9}, o[3] = {100, -40, 0};
    prop_params_init(&p, n, d, o, 1e-3, 0);
    const int width[6] = {5, 7, 6, 4, 8, 6};
    bool random = strncmp(kind, "random", 6) == 0;
    for (int f = 0; f < PROP_FACES; f++) {
        if (two_d && (f == 2 || f == 3))
            continue;
        p.grid.face[f] = random ? PROP_FACE_RANDOM : PROP_FACE_CPML;
        p.grid.width[f] = width[f];
    }
    if (strstr(kind, "free")) {
        p.grid.face[4] = PROP_FACE_FREE;
        p.grid.width[4] = 0;
    }
    p.op.order = order;
    p.dt = 0.8 * stability_dt_max(order, p.grid.d, 2600);
    p.f_ref = 12;
    return p;
}

/* Deterministic pseudo-random numbers (the same on every rank). */
static float *noise(size_t n, uint32_t seed, float lo, float hi)
{
    float *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = lo + (hi - lo) * (float)(seed >> 8) / 16777216.0f;
    }
    return v;
}

static float *part(const struct prop_grid *whole, const struct prop_grid *g, const float *v)
{
    float *o = malloc((size_t)g->n[0] * g->n[1] * g->n[2] * sizeof *o);
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            memcpy(o + ((size_t)k * g->n[1] + j) * g->n[0],
                   v + ((size_t)(k + g->origin[2]) * whole->n[1] + j + g->origin[1]) * whole->n[0] + g->origin[0],
                   g->n[0] * sizeof *o);
    return o;
}

#define CHECK(x)                                                                                         \
    do {                                                                                                 \
        if ((x) < 0) {                                                                                   \
            fprintf(stderr, "rank %d: %s: %s\n", sl_mpi_rank(), #x, err_msg());                          \
            return sl_mpi_finish(1);                                                                     \
        }                                                                                                \
    } while (0)

int main(int argc, char **argv)
{
    if (sl_mpi_init(&argc, &argv) < 0 || argc < 3) {
        fprintf(stderr, "usage: mpirun -np N seislive-mpi_prop cpml|random|random-free ORDER [2d|yz]\n");
        return 2;
    }
    log_set_level(LOG_WARN);
    const char *kind = argv[1];
    const int order = atoi(argv[2]);
    const bool two_d = argc > 3 && strcmp(argv[3], "2d") == 0;
    const bool yz = argc > 3 && strcmp(argv[3], "yz") == 0;
    const int rank = sl_mpi_rank(), size = sl_mpi_size();
    struct prop_params w = whole_params(kind, order, two_d);
    const struct prop_grid *g = &w.grid;
    const size_t nn = (size_t)g->n[0] * g->n[1] * g->n[2];
    float *v = noise(nn, 11, 1800, 2600), *init = noise(nn, 5, -0.5f, 0.5f);
    double vmax = 0, vmin = 1e30;
    for (size_t i = 0; i < nn; i++) {
        vmax = fmax(vmax, v[i]);
        vmin = fmin(vmin, v[i]);
    }
    const bool random = g->face[0] == PROP_FACE_RANDOM;
    const struct random_boundary rb = {.ramp = RB_RAMP_QUADRATIC, .range = RB_RANGE_FULL, .width = 4, .seed = 77,
                                       .vstable = random_boundary_vstable_dims(order, w.dt, g->d, two_d),
                                       .vmin = vmin};
    struct sl_device dev;
    CHECK(backend_select("cpu", &dev));
    struct dd_plan plan;
    const int split[3] = {yz, 2 * yz, 2 * yz};
    CHECK(sl_mpi_agree(dd_plan_make(&w, size, split, &plan)));
    struct prop_params sp;
    dd_sub_params(&plan, rank, vmax, &sp);
    float *sv = part(g, &sp.grid, v), *si = part(g, &sp.grid, init);
    struct prop *s;
    struct prop_model m = {.vp = sv};
    CHECK(prop_create(&dev, &sp, &m, &s));
    CHECK(prop_copy_in(s, false, si));
    CHECK(prop_copy_in(s, true, si));
    if (random)
        CHECK(prop_randomize_layers(s, &rb, 9));
    struct dd_halo h;
    CHECK(dd_halo_init(&h, &plan, rank, s));
    /* the source half a cell above the middle of z: near a cut for 2 and 4 ranks */
    double xyz[3];
    for (int a = 0; a < 3; a++)
        xyz[a] = g->o[a] + 0.5 * (g->n[a] - 1) * g->d[a] + 0.37 * g->d[a] * (g->n[a] > 1);
    xyz[2] = g->o[2] + (g->n[2] / 2 - 0.6) * g->d[2];
    struct dd_points src;
    CHECK(dd_points_plan(&plan, rank, xyz, 1, &src));
    CHECK(dd_points_bind(&src, s));
    CHECK(dd_halo_begin(&h, s));
    CHECK(dd_halo_end(&h, s));
    /* rank 0: the whole grid, stepped alike */
    struct prop *ws = NULL;
    struct prop_points *wsrc = NULL;
    if (rank == 0) {
        struct prop_model wm = {.vp = v};
        CHECK(prop_create(&dev, &w, &wm, &ws));
        CHECK(prop_copy_in(ws, false, init));
        CHECK(prop_copy_in(ws, true, init));
        if (random)
            CHECK(prop_randomize_layers(ws, &rb, 9));
        CHECK(prop_points_create(ws, xyz, 1, PROP_INTERP_SINC, &wsrc));
    }
    for (int pass = 0; pass < 2; pass++) {
        bool rev = pass == 1;
        if (rev) {
            prop_swap(s);
            if (ws)
                prop_swap(ws);
        }
        for (int k = 0; k < (rev ? NREV : NSTEP); k++) {
            int it = rev ? NSTEP - 1 - k : k;
            float a = (float)(100.0 * wavelet_ricker(it * w.dt, 25, wavelet_ricker_delay(25)));
            CHECK(rev ? prop_step_reverse(s) : prop_step(s));
            CHECK(dd_points_inject(&src, s, &a, 1, 1.0f, PROP_INJECT_PHYSICAL));
            CHECK(dd_halo_begin(&h, s));
            CHECK(dd_halo_end(&h, s));
            if (ws) {
                CHECK(rev ? prop_step_reverse(ws) : prop_step(ws));
                CHECK(prop_inject(ws, wsrc, &a, 1, 1.0f, PROP_INJECT_PHYSICAL));
            }
        }
    }
    /* gather both time levels of every subdomain and compare with the whole grid */
    size_t mine = (size_t)sp.grid.n[0] * sp.grid.n[1] * sp.grid.n[2];
    float *sub = malloc(mine * sizeof *sub), *all = rank == 0 ? malloc(nn * sizeof *all) : NULL;
    float *want = rank == 0 ? malloc(nn * sizeof *want) : NULL;
    size_t counts[DD_MAX_PARTS];
    for (int r = 0; r < size; r++) {
        struct prop_params q;
        dd_sub_params(&plan, r, vmax, &q);
        counts[r] = (size_t)q.grid.n[0] * q.grid.n[1] * q.grid.n[2];
    }
    int bad = 0;
    double peak = 0;
    for (int lev = 0; lev < 2; lev++) {
        CHECK(prop_copy_out(s, lev == 1, sub));
        CHECK(sl_mpi_gather(sub, mine, all, counts));
        if (rank != 0)
            continue;
        CHECK(prop_copy_out(ws, lev == 1, want));
        const float *b = all;
        for (int r = 0; r < size && !bad; r++) {
            struct prop_params q;
            dd_sub_params(&plan, r, vmax, &q);
            for (int k = 0; k < q.grid.n[2] && !bad; k++)
                for (int j = 0; j < q.grid.n[1] && !bad; j++, b += q.grid.n[0])
                    for (int i = 0; i < q.grid.n[0] && !bad; i++) {
                        size_t at = ((size_t)(k + q.grid.origin[2]) * g->n[1] + j + q.grid.origin[1]) * g->n[0] + i;
                        peak = fmax(peak, fabs(want[at]));
                        if (memcmp(&b[i], &want[at], sizeof *b)) {
                            fprintf(stderr, "%s order %d%s, %d ranks: level %d differs at (%d, %d, %d) of rank %d: "
                                    "%.9g, whole grid %.9g\n", kind, order, two_d ? " 2D" : "", size, lev, i,
                                    j + q.grid.origin[1], k + q.grid.origin[2], r, b[i], want[at]);
                            bad = 1;
                        }
                    }
        }
    }
    if (rank == 0 && !bad) {
        if (!(peak > 0)) {
            fprintf(stderr, "the fields are zero\n");
            bad = 1;
        } else {
            printf("bitwise: %s order %d%s, %d ranks (split %d x %d x %d), %d forward + %d reverse steps, peak %.4g\n",
                   kind, order, two_d ? " 2D" : "", size, plan.split[0], plan.split[1], plan.split[2], NSTEP, NREV,
                   peak);
        }
    }
    bad = sl_mpi_agree(bad ? -1 : 0) < 0;
    dd_points_free(&src, s);
    dd_halo_free(&h);
    if (ws) {
        prop_points_destroy(ws, wsrc);
        prop_destroy(ws);
    }
    prop_destroy(s);
    dd_plan_free(&plan);
    free(v);
    free(init);
    free(sv);
    free(si);
    free(sub);
    free(all);
    free(want);
    return sl_mpi_finish(bad ? 1 : 0);
}
