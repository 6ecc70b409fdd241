/* bench_scaling — domain decomposition across MPI ranks ([runtime] decompose = "domain",
 * docs/mpi.md): time per step, Gpts/s and efficiency against one rank, the halo
 * exchange's time and the share of it hidden behind the interior.
 *
 *   mpirun -np N seislive-bench scaling [--weak E] [--strong NX,NY,NZ] [--mode weak|strong|both]
 *                                       [--order O] [--steps S] [--pml W] [--device SPEC]
 *                                       [--transport auto|nccl|staged] [--verify NX,NY,NZ]
 *                                       [--verify-steps V] [--json]
 *
 * One run measures the row of its own rank count N (run it with -np 1, 2, 4 ...):
 *   weak    an E^3 subdomain per rank: the whole grid E x E x (N E), cut along z;
 *   strong  one NX x NY x NZ grid, cut among the N ranks (dd_plan_make's split).
 * The baseline of the efficiency is measured inside the same run: rank 0 alone steps the
 * one-rank grid (weak: E^3; strong: the whole grid) on its device, the others waiting,
 * so the efficiency (weak t1 / tN, strong t1 / (N tN)) compares the same device, build
 * and grid.  On the decomposed grid every rank (barriers between phases; each phase's
 * time is rank 0's after a barrier, so the slowest rank's) times S steps of:
 *   compute    the step in parts (cut slabs, rest), no exchange: t_compute;
 *   exchange   the halo exchange alone, begin + end after a finished step: t_exchange;
 *   overlapped cut slabs, begin, rest, end (the model job's step): t_step;
 * and reports ms/step = t_step, Gpts/s = interior points of the whole grid / t_step,
 * hidden = 1 - (t_step - t_compute) / t_exchange (1: the exchange costs nothing beside
 * the interior; 0: it adds its whole time; below 0: it costs more than alone).
 * GPUs: one per local rank (mod the GPUs there), or SPEC for every rank (several ranks on
 * one GPU: staged transport).  The transport is dd_halo_connect's choice (docs/mpi.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/backend.h"
#include "kernels/device.h"
#include "kernels/propagator.h"
#include "kernels/stability.h"
#include "stream/decompose.h"
#include "stream/decompose_halo.h"
#include "stream/error.h"
#include "stream/mpi.h"
#include "tools/bench.h"

struct opts {
    int weak, strong[3], mode; /* mode bit 1 weak, bit 2 strong (4: neither) */
    int verify[3], verify_steps; /* --verify NX,NY,NZ (0: none), --verify-steps */
    int order, steps, pml, want, json;
    char device[64];
};

struct row {
    const char *mode;
    int ranks, n[3], split[3];
    double t1, t_compute, t_exchange, t_step; /* s per step */
    const char *transport;
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void whole_params(const struct opts *o, const int n[3], struct prop_params *p)
{
    const double d[3] = {10, 10, 10}, org[3] = {0, 0, 0};
    prop_params_init(p, n, d, org, 0.5 * stability_dt_max(o->order, d, 3000), o->pml);
    p->op.order = o->order;
    p->vmax_cpml = 3000;
    p->f_ref = 15;
}

/* A propagator for grid P (velocity 2000..3000 m/s), both levels a smooth field of the
 * whole grid's coordinates (no zeros, no denormals: the timing of a live wavefield). */
static int make_prop(const struct sl_device *dev, const struct prop_params *p, struct prop **out)
{
    const struct prop_grid *g = &p->grid;
    const size_t nn = (size_t)g->n[0] * g->n[1] * g->n[2];
    float *v = malloc(nn * sizeof *v), *f = malloc(nn * sizeof *f);
    double *ax[3] = {malloc(g->n[0] * sizeof(double)), malloc(g->n[1] * sizeof(double)),
                     malloc(g->n[2] * sizeof(double))};
    if (!v || !f || !ax[0] || !ax[1] || !ax[2]) {
        free(v);
        free(f);
        for (int a = 0; a < 3; a++)
            free(ax[a]);
        return err_set(-ENOMEM, "bench scaling: out of memory for %zu points", nn);
    }
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < g->n[a]; i++)
            ax[a][i] = a == 1 ? cos(0.07 * (i + g->origin[a])) : sin((a ? 0.03 : 0.05) * (i + g->origin[a]));
#pragma omp parallel for schedule(static)
    for (int k = 0; k < g->n[2]; k++)
        for (int j = 0; j < g->n[1]; j++)
            for (int i = 0; i < g->n[0]; i++) {
                size_t e = ((size_t)k * g->n[1] + j) * g->n[0] + i;
                v[e] = 2000.0f + 1000.0f * (float)((k + g->origin[2]) % 97) / 97.0f;
                f[e] = (float)(1e-3 * (1.5 + ax[0][i] * ax[1][j] * ax[2][k]));
            }
    for (int a = 0; a < 3; a++)
        free(ax[a]);
    struct prop_model m = {.vp = v};
    int rc = prop_create(dev, p, &m, out);
    if (rc == 0 && ((rc = prop_copy_in(*out, false, f)) < 0 || (rc = prop_copy_in(*out, true, f)) < 0)) {
        prop_destroy(*out);
        *out = NULL;
    }
    free(v);
    free(f);
    return rc;
}

/* Seconds per step of STEPS whole steps of S (after 2 unmeasured ones). */
static int time_alone(struct prop *s, int steps, double *t)
{
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++)
        rc = prop_step(s);
    if (rc == 0)
        rc = prop_sync(s);
    double t0 = now();
    for (int i = 0; i < steps && rc == 0; i++)
        rc = prop_step(s);
    if (rc == 0)
        rc = prop_sync(s);
    *t = (now() - t0) / steps;
    return rc;
}

enum phase { PH_COMPUTE, PH_EXCHANGE, PH_STEP };

static int one_step(struct prop *s, struct dd_halo *h, int ph)
{
    int rc;
    if (ph == PH_EXCHANGE)
        return (rc = dd_halo_begin(h, s)) < 0 ? rc : dd_halo_end(h, s);
    if ((rc = prop_step_part(s, PROP_PART_CUT_SLABS)) < 0)
        return rc;
    if (ph == PH_STEP && (rc = dd_halo_begin(h, s)) < 0)
        return rc;
    if ((rc = prop_step_part(s, PROP_PART_REST)) < 0)
        return rc;
    return ph == PH_STEP ? dd_halo_end(h, s) : 0;
}

/* Seconds per step of phase PH over all ranks (barriers around; every rank's rc agreed). */
static int time_phase(struct prop *s, struct dd_halo *h, int ph, int steps, double *t)
{
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++)
        rc = one_step(s, h, ph);
    if (rc == 0)
        rc = prop_sync(s);
    if ((rc = sl_mpi_agree(rc)) < 0)
        return rc;
    double t0 = now();
    for (int i = 0; i < steps && rc == 0; i++)
        rc = one_step(s, h, ph);
    if (rc == 0)
        rc = prop_sync(s);
    rc = sl_mpi_agree(rc); /* also the barrier: the slowest rank ends the phase */
    *t = (now() - t0) / steps;
    return rc;
}

static int select_device(const struct opts *o, struct sl_device *dev)
{
    char why[256], spec[64];
    int ngpu = backend_cuda_count(why, sizeof why);
    sl_mpi_device_spec(o->device, "", ngpu, spec, sizeof spec);
    return backend_select(spec, dev);
}

static int measure(const struct opts *o, const struct sl_device *dev, const char *mode, const int whole_n[3],
                   const int one_n[3], struct row *r)
{
    const int rank = sl_mpi_rank(), size = sl_mpi_size();
    memset(r, 0, sizeof *r);
    r->mode = mode;
    r->ranks = size;
    memcpy(r->n, whole_n, sizeof r->n);
    /* the baseline: rank 0 alone, the one-rank grid */
    int rc = 0;
    if (rank == 0) {
        struct prop_params p1;
        whole_params(o, one_n, &p1);
        struct prop *s1 = NULL;
        rc = make_prop(dev, &p1, &s1);
        if (rc == 0)
            rc = time_alone(s1, o->steps, &r->t1);
        prop_destroy(s1);
    }
    if ((rc = sl_mpi_agree(rc)) < 0)
        return rc;
    struct prop_params whole, sp;
    whole_params(o, whole_n, &whole);
    struct dd_plan plan;
    const int split0[3] = {0, 0, 0};
    if ((rc = sl_mpi_agree(dd_plan_make(&whole, size, split0, &plan))) < 0)
        return rc;
    memcpy(r->split, plan.split, sizeof r->split);
    dd_sub_params(&plan, rank, 3000, &sp);
    struct prop *s = NULL;
    struct dd_halo h;
    memset(&h, 0, sizeof h);
    void *stream = NULL;
    rc = make_prop(dev, &sp, &s);
    if (rc == 0 && !prop_has_step_part(s))
        rc = err_set(-ENOTSUP, "bench scaling: this propagator has no step in parts");
    if (rc == 0)
        rc = dd_halo_init(&h, &plan, rank, s);
    if (rc == 0 && dev_is_gpu(dev) && (rc = dev_stream_create(dev, &stream)) == 0) {
        prop_set_stream(s, stream);
        dd_halo_set_stream(&h, stream);
    }
    if ((rc = sl_mpi_agree(rc)) == 0)
        rc = dd_halo_connect(&h, o->want);
    if (rc == 0 && (rc = time_phase(s, &h, PH_COMPUTE, o->steps, &r->t_compute)) == 0 &&
        (rc = time_phase(s, &h, PH_EXCHANGE, o->steps, &r->t_exchange)) == 0)
        rc = time_phase(s, &h, PH_STEP, o->steps, &r->t_step);
    r->transport = size == 1 ? "none" : dd_halo_transport_name(h.transport);
    if (rank == 0 && size > 1 && !o->json)
        fprintf(stderr, "bench scaling %s: %s\n", mode, h.why);
    dd_halo_free(&h);
    if (s) {
        prop_sync(s);
        prop_set_stream(s, NULL);
        prop_destroy(s);
    }
    dev_stream_destroy(dev, stream);
    dd_plan_free(&plan);
    return rc;
}

/* --verify: V overlapped steps of the decomposed grid N against the same steps of the
 * whole grid on rank 0, the interior field gathered there.  Not a test (those are
 * tests/test_mpi_*.c on the CPU): the check that the rows below time a correct exchange,
 * on the device and transport they run.  Bitwise required on the CPU, 1e-5 on a GPU (its
 * parts run the split CPML arrangement, the whole step the default one). */
static int verify(const struct opts *o, const struct sl_device *dev)
{
    const int rank = sl_mpi_rank(), size = sl_mpi_size();
    struct prop_params whole, sp;
    whole_params(o, o->verify, &whole);
    struct dd_plan plan;
    const int split0[3] = {0, 0, 0};
    int rc = sl_mpi_agree(dd_plan_make(&whole, size, split0, &plan));
    if (rc < 0)
        return rc;
    dd_sub_params(&plan, rank, 3000, &sp);
    const struct prop_grid *g = &sp.grid;
    const size_t mine = (size_t)g->n[0] * g->n[1] * g->n[2];
    const size_t nn = (size_t)o->verify[0] * o->verify[1] * o->verify[2];
    struct prop *s = NULL;
    struct dd_halo h;
    memset(&h, 0, sizeof h);
    void *stream = NULL;
    float *sub = malloc(mine * sizeof *sub), *all = NULL, *ref = NULL;
    size_t *counts = NULL;
    rc = sub ? make_prop(dev, &sp, &s) : err_set(-ENOMEM, "bench scaling: out of memory");
    if (rc == 0)
        rc = dd_halo_init(&h, &plan, rank, s);
    if (rc == 0 && dev_is_gpu(dev) && (rc = dev_stream_create(dev, &stream)) == 0) {
        prop_set_stream(s, stream);
        dd_halo_set_stream(&h, stream);
    }
    if ((rc = sl_mpi_agree(rc)) == 0)
        rc = dd_halo_connect(&h, o->want);
    /* the initial field's halo from the neighbours, then the overlapped steps */
    if (rc == 0 && (rc = dd_halo_begin(&h, s)) == 0)
        rc = dd_halo_end(&h, s);
    for (int i = 0; i < o->verify_steps && rc == 0; i++)
        rc = one_step(s, &h, PH_STEP);
    if (rc == 0)
        rc = prop_copy_out(s, false, sub);
    if (rank == 0 && rc == 0) {
        struct prop *w = NULL;
        all = malloc(nn * sizeof *all);
        ref = malloc(nn * sizeof *ref);
        counts = malloc((size_t)size * sizeof *counts);
        rc = all && ref && counts ? make_prop(dev, &whole, &w) : err_set(-ENOMEM, "bench scaling: out of memory");
        for (int i = 0; i < o->verify_steps && rc == 0; i++)
            rc = prop_step(w);
        if (rc == 0)
            rc = prop_copy_out(w, false, ref);
        prop_destroy(w);
        for (int r = 0; rc == 0 && r < size; r++) {
            struct prop_params q;
            dd_sub_params(&plan, r, 3000, &q);
            counts[r] = (size_t)q.grid.n[0] * q.grid.n[1] * q.grid.n[2];
        }
    }
    if ((rc = sl_mpi_agree(rc)) == 0)
        rc = sl_mpi_gather(sub, mine, all, counts);
    if (rc == 0 && rank == 0) {
        double num = 0, den = 0, dmax = 0, vmax = 0;
        size_t differ = 0;
        const float *b = all;
        const int *n = o->verify;
        for (int r = 0; r < size; r++) {
            struct prop_params q;
            dd_sub_params(&plan, r, 3000, &q);
            const struct prop_grid *qg = &q.grid;
            for (int k = 0; k < qg->n[2]; k++)
                for (int j = 0; j < qg->n[1]; j++)
                    for (int i = 0; i < qg->n[0]; i++, b++) {
                        const float want = ref[((size_t)(k + qg->origin[2]) * n[1] + j + qg->origin[1]) * n[0] + i +
                                               qg->origin[0]];
                        const double d = (double)*b - want;
                        differ += memcmp(b, &want, sizeof want) != 0;
                        num += d * d;
                        den += (double)want * want;
                        dmax = fmax(dmax, fabs(d));
                        vmax = fmax(vmax, fabs(want));
                    }
        }
        const double l2 = den > 0 ? sqrt(num / den) : INFINITY;
        const bool gpu = dev_is_gpu(dev), ok = gpu ? l2 < 1e-5 : differ == 0;
        printf("verify: %d x %d x %d, %d overlapped steps on %d ranks (%s) vs one rank: relative L2 %.3g, max |diff| "
               "/ max %.3g, %zu of %zu points differ in any bit: %s (%s)\n\n",
               n[0], n[1], n[2], o->verify_steps, size, size > 1 ? dd_halo_transport_name(h.transport) : "none", l2,
               vmax > 0 ? dmax / vmax : INFINITY, differ, nn, ok ? "ok" : "FAILED",
               gpu ? "a GPU needs < 1e-5" : "the CPU needs bitwise");
        fflush(stdout);
        if (!ok)
            rc = err_set(-EIO, "--verify failed: the decomposed grid is not the one-rank grid");
    }
    rc = sl_mpi_agree(rc);
    dd_halo_free(&h);
    if (s) {
        prop_sync(s);
        prop_set_stream(s, NULL);
        prop_destroy(s);
    }
    dev_stream_destroy(dev, stream);
    dd_plan_free(&plan);
    free(sub);
    free(all);
    free(ref);
    free(counts);
    return rc;
}

static void print_row(const struct opts *o, const struct row *r, bool first)
{
    const double pts = (double)r->n[0] * r->n[1] * r->n[2];
    const double eff = !strcmp(r->mode, "weak") ? r->t1 / r->t_step : r->t1 / (r->ranks * r->t_step);
    const bool halo = r->ranks > 1 && r->t_exchange > 0;
    const double hidden = halo ? 1.0 - (r->t_step - r->t_compute) / r->t_exchange : NAN;
    if (o->json) {
        char hj[32] = "null";
        if (halo)
            snprintf(hj, sizeof hj, "%.4f", hidden);
        printf("%s{\"mode\":\"%s\",\"ranks\":%d,\"grid\":[%d,%d,%d],\"split\":[%d,%d,%d],\"ms_step\":%.4f,"
               "\"gpts\":%.4f,\"efficiency\":%.4f,\"ms_one_rank\":%.4f,\"ms_compute\":%.4f,\"ms_halo\":%.4f,"
               "\"hidden\":%s,\"transport\":\"%s\"}",
               first ? "" : ",", r->mode, r->ranks, r->n[0], r->n[1], r->n[2], r->split[0], r->split[1], r->split[2],
               1e3 * r->t_step, pts / r->t_step / 1e9, eff, 1e3 * r->t1, 1e3 * r->t_compute, 1e3 * r->t_exchange, hj,
               r->transport);
        return;
    }
    char hid[32] = "n/a", hms[32] = "n/a";
    if (halo) {
        snprintf(hid, sizeof hid, "%.0f %%", 100 * hidden);
        snprintf(hms, sizeof hms, "%.4g", 1e3 * r->t_exchange);
    }
    printf("| %s | %d | %d x %d x %d (%d x %d x %d) | %.4g | %.4g | %.0f %% | %.4g | %.4g | %s | %s | %s |\n", r->mode,
           r->ranks, r->n[0], r->n[1], r->n[2], r->split[0], r->split[1], r->split[2], 1e3 * r->t_step,
           pts / r->t_step / 1e9, 100 * eff, 1e3 * r->t1, 1e3 * r->t_compute, hms, hid, r->transport);
}

static int parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.weak = 512, .strong = {1024, 1024, 512}, .mode = 3, .order = 8, .steps = 20, .pml = 20,
                       .verify_steps = 30};
    snprintf(o->device, sizeof o->device, "auto");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            o->json = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "bench scaling: %s needs a value (or is unknown)\n", a);
            return -1;
        }
        i++;
        if (!strcmp(a, "--weak"))
            o->weak = atoi(v);
        else if (!strcmp(a, "--strong")) {
            if (sscanf(v, "%d,%d,%d", &o->strong[0], &o->strong[1], &o->strong[2]) != 3) {
                fprintf(stderr, "bench scaling: --strong NX,NY,NZ, not %s\n", v);
                return -1;
            }
        } else if (!strcmp(a, "--verify")) {
            if (sscanf(v, "%d,%d,%d", &o->verify[0], &o->verify[1], &o->verify[2]) != 3 || o->verify[0] < 8 ||
                o->verify[1] < 8 || o->verify[2] < 8 || o->verify[0] > 2048 || o->verify[1] > 2048 ||
                o->verify[2] > 2048) {
                fprintf(stderr, "bench scaling: --verify NX,NY,NZ (8..2048 each), not %s\n", v);
                return -1;
            }
        } else if (!strcmp(a, "--verify-steps")) {
            o->verify_steps = atoi(v);
            if (o->verify_steps < 1 || o->verify_steps > 100000) {
                fprintf(stderr, "bench scaling: --verify-steps 1..100000\n");
                return -1;
            }
        } else if (!strcmp(a, "--mode"))
            o->mode = !strcmp(v, "weak")     ? 1
                      : !strcmp(v, "strong") ? 2
                      : !strcmp(v, "both")   ? 3
                      : !strcmp(v, "none")   ? 4
                                             : 0;
        else if (!strcmp(a, "--order"))
            o->order = atoi(v);
        else if (!strcmp(a, "--steps"))
            o->steps = atoi(v);
        else if (!strcmp(a, "--pml"))
            o->pml = atoi(v);
        else if (!strcmp(a, "--device"))
            snprintf(o->device, sizeof o->device, "%s", v);
        else if (!strcmp(a, "--transport"))
            o->want = !strcmp(v, "auto") ? DD_WANT_AUTO : !strcmp(v, "nccl") ? DD_WANT_NCCL
                      : !strcmp(v, "staged")                             ? DD_WANT_STAGED : -1;
        else {
            fprintf(stderr, "bench scaling: unknown option %s\n", a);
            return -1;
        }
    }
    if (o->weak < 8 || o->weak > 4096 || o->steps < 1 || o->steps > 100000 || o->pml < 0 || o->pml > 200 ||
        o->order < 2 || o->order > 16 || o->order % 2 || !o->mode || o->want < 0 || o->strong[0] < 8 ||
        o->strong[1] < 8 || o->strong[2] < 8 || o->strong[0] > 8192 || o->strong[1] > 8192 || o->strong[2] > 8192) {
        fprintf(stderr, "bench scaling: --weak 8..4096, --strong 8..8192 each, --steps >= 1, --pml 0..200, even "
                        "--order 2..16, --mode weak|strong|both, --transport auto|nccl|staged\n");
        return -1;
    }
    return 0;
}

int bench_scaling(int argc, char **argv)
{
    struct opts o;
    if (parse(argc, argv, &o) < 0)
        return 2;
    if (sl_mpi_init(&argc, &argv) < 0) {
        fprintf(stderr, "bench scaling: %s\n", err_msg());
        return 2;
    }
    const int size = sl_mpi_size(), rank = sl_mpi_rank();
    struct sl_device dev;
    int rc = sl_mpi_agree(select_device(&o, &dev));
    struct row rows[2];
    int nrow = 0;
    if (rc == 0 && o.verify[0])
        rc = verify(&o, &dev);
    if (rc == 0 && (o.mode & 1)) {
        const int whole[3] = {o.weak, o.weak, o.weak * size}, one[3] = {o.weak, o.weak, o.weak};
        rc = measure(&o, &dev, "weak", whole, one, &rows[nrow++]);
    }
    if (rc == 0 && (o.mode & 2))
        rc = measure(&o, &dev, "strong", o.strong, o.strong, &rows[nrow++]);
    if (rc < 0) {
        if (rank == 0)
            fprintf(stderr, "bench scaling: %s\n", err_msg());
        sl_mpi_all_know();
        return sl_mpi_finish(1);
    }
    if (rank == 0 && nrow) {
        char desc[256];
        snprintf(desc, sizeof desc, "%s", dev.name);
        if (o.json) {
            printf("{\"benchmark\":\"scaling\",\"device\":\"%s\",\"order\":%d,\"pml\":%d,\"steps\":%d,\"rows\":[", desc,
                   o.order, o.pml, o.steps);
        } else {
            printf("%d rank%s, %s per rank (rank 0's), acoustic order %d, CPML %d cells on the whole grid's faces, "
                   "%d steps per phase\n\n",
                   size, size > 1 ? "s" : "", desc, o.order, o.pml, o.steps);
            printf("| mode | ranks | grid (split x y z) | ms/step | Gpts/s | efficiency vs 1 rank | 1 rank ms/step | "
                   "no-exchange ms/step | halo ms/step alone | halo hidden | transport |\n"
                   "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
        }
        for (int i = 0; i < nrow; i++)
            print_row(&o, &rows[i], i == 0);
        if (o.json)
            printf("]}\n");
        else
            printf("\nhidden = 1 - (ms/step - no-exchange ms/step) / halo ms/step alone; efficiency: weak t1 / tN, "
                   "strong t1 / (N tN), t1 measured by rank 0 alone in this run\n");
        fflush(stdout);
    }
    return sl_mpi_finish(0);
}
