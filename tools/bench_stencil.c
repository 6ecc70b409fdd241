/* bench_stencil — `seislive-bench stencil`: throughput of the propagator's step for each
 * CUDA kernel variant and order, with CPML, against the memory roofline measured in the
 * same run (device-to-device copy; a step must at least read p(n), p(n-1), v and write
 * p(n+1): 16 bytes per point).
 *
 *   seislive-bench stencil [--sizes 256,512] [--grids NXxNYxNZ,...] [--orders 2,4,8,16] [--steps N] [--pml W]
 *                          [--cpml-memory fp32,bf16]
 *                          [--kernels naive,tiled] [--variants P/T/D/C,...] [--no-cpml-rows] [--json]
 *                          [--tile T] [--pipe P] [--prefetch N] [--cpml C] [--cpml-overlap on|off]
 *                          [--naive-block WxH] [--layer-zchunk N] [--ring-waves N] [--ring-shape F/Z] [--2d]
 *                          [--physics acoustic|tti|both] [--tti-orders 8] [--operator OP]
 *                          [--operators taylor,implicit] [--implicit-variants X/YZ,...]
 *
 * The kernel choices are the fields of struct wave_tuning (kernels/wave_tuning.h,
 * docs/TUNING.md), one flag each; unset ones keep the production default.  --variants
 * sweeps tiled variants: each entry is PIPE/TILE/DEPTH/CPML (ring|regs / 4x4.. / 1..3 /
 * lines|fused|split; an empty field keeps the flags' value), e.g.
 * ring/4x4/2/fused,regs/4x4/2/split; each variant is a simulation of its own (the tuning
 * is read at create).  The variants no default uses come from tools/wave_research.cu,
 * linked into this program only.  Each row names the variant that ran
 * (wave_describe_kernel).  --ring-shape F/Z (with --cpml ring, order 8) runs the ring
 * CPML's frame and z-layer kernels in other tiles, e.g. 8x2d2/8x1d2 (thread rows x rows
 * per thread, planes in flight; tools/wave_research.h lists them); the rows do not name
 * it, the line on stderr before the table does.
 * SIZE is the padded grid edge (interior + 2 x pml); Gpts/s counts padded points.  --2d
 * runs 2D grids instead (SIZE x 1 x SIZE, NONE y faces: the kernels without y terms, CPML
 * on the 4 x and z faces; default sizes 1024,4096), rows "SIZE^2".  Each row
 * also gives the byte floor of its step (with CPML: psi and zeta read and written once
 * per layer element on top of the 16 B per point) and the percentage of it reached.
 * --physics tti (or both, the default) adds the TTI rows (tools/bench_stencil_tti.c:
 * kernels "tti naive" and "tti tiled" at --tti-orders, default 8, each with its own byte
 * floor; their "% of roofline" is against 36 B per point, the TTI storage's).
 * --grids 400x400x200 adds acoustic and TTI rows on padded grids that are not cubes (the RTM
 * reference shot's size; without --sizes only these), rows "NXxNYxNZ".
 * --cpml-memory fp32,bf16 runs each tiled row once per storage of the CPML memory
 * (wave_params.cpml_memory; bf16 rounds psi and zeta to bfloat16, a change of results
 * the CPU reference makes too; the naive kernel runs fp32 only).  The byte floor of a
 * row counts its own storage (16 B per layer element in fp32, 8 in bf16); the column
 * "% of fp32 floor" puts every CPML row against the fp32 storage's floor of the same
 * grid (issue 20's yardstick: 16 B per point plus 16 B per CPML memory element).
 * --operators taylor,implicit (default taylor) adds the implicit operator's rows
 * (tools/bench_stencil_implicit.c: kernel "implicit" at --orders, its own byte floor of
 * 56 B per point in 3D, and its time per point against the tiled Taylor row of the same
 * order and size).  --implicit-variants thread/march,warp/chunks runs those rows once per
 * variant X/YZ (struct wave_tuning.implicit_x / implicit_yz, "default" for either; without
 * the flag: the production default only). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/backend.h"
#include "kernels/operator.h"
#include "kernels/propagator.h"
#include "kernels/wave.h"
#include "kernels/wave_tuning.h"
#include "stream/error.h"
#include "tools/bench.h"
#include "tools/bench_stencil_implicit.h"
#include "tools/bench_stencil_tti.h"
#include "tools/options.h"
#include "tools/wave_research.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* --operator: the acoustic rows' derivative operator (kernels/operator.h; its weights are
 * the only difference for the explicit ones, the kernels are the same) */
static int op_kind = PROP_OP_TAYLOR;

struct row {
    const char *kernel;
    int order, size;
    int n[3];          /* the padded grid (size^3, or a --grids entry; 2D: n[1] = 1) */
    bool cpml;
    double gpts, pct, ms;
    double floor_gpts; /* the step's byte floor at the copy bandwidth (see below) */
    double floor32_gpts; /* the same with fp32 CPML memory (= floor_gpts for fp32 rows) */
    char variant[160];
};

/* CPML memory elements of a padded grid N with PML layers on every face (none along y
 * in 2D): axis a's layers span the other two axes, as kernels/wave_internal.h's
 * wave_slab_counts counts them. */
static double layer_elements(const int n[3], int pml, bool two_d)
{
    double e = 0;
    for (int a = 0; a < 3; a++) {
        if (two_d && a == 1)
            continue;
        double o = 1;
        for (int b = 0; b < 3; b++)
            if (b != a)
                o *= n[b];
        e += 2.0 * pml * o;
    }
    return e;
}

static int create(const struct sl_device *dev, int kernel, int order, const int size[3], int pml, bool two_d,
                  const struct wave_tuning *tuning, int cpml_memory, struct wave_sim **out)
{
    struct wave_params p = {.d = {10, 10, 10}, .order = order, .pml_reflection = 1e-4, .f_ref = 10,
                            .kernel = kernel, .tuning = *tuning, .op = op_kind, .cpml_memory = cpml_memory};
    for (int a = 0; a < 3; a++)
        p.n[a] = size[a] - 2 * pml;
    for (int f = 0; f < 6; f++)
        p.pml[f] = pml;
    if (two_d) { /* x-z: one y plane, nothing beyond the y faces */
        p.n[1] = 1;
        p.pml[2] = p.pml[3] = 0;
        p.face[2] = p.face[3] = WAVE_FACE_NONE;
    }
    p.dt = 1e-3; /* stable for 2000 m/s at 10 m up to order 16, taylor or optimized */
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    if (!v)
        return err_set(-ENOMEM, "out of memory");
    for (size_t i = 0; i < nn; i++)
        v[i] = 2000.0f;
    int rc = wave_create(dev, &p, v, out);
    free(v);
    return rc;
}

/* Time STEPS steps of S (after 3 warm-up steps); POINTS: its padded points. */
static int measure(struct wave_sim *s, double points, bool cpml, int steps, double *gpts, double *ms, char *variant,
                   size_t vlen)
{
    int rc = 0;
    wave_set_cpml(s, cpml);
    wave_describe_kernel(s, variant, vlen);
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = wave_step(s);
    if (rc == 0)
        rc = wave_sync(s);
    double t0 = now_s();
    for (int i = 0; i < steps && rc == 0; i++)
        rc = wave_step(s);
    if (rc == 0)
        rc = wave_sync(s);
    double t = now_s() - t0;
    if (rc < 0)
        return rc;
    *gpts = points * steps / t / 1e9;
    *ms = t / steps * 1e3;
    return 0;
}

/* TUNING with the fields of the tiled variant SPEC "PIPE/TILE/DEPTH/CPML" set (empty
 * fields keep BASE's), or -EINVAL. */
static int variant_tuning(const struct wave_tuning *base, const char *spec, struct wave_tuning *tuning)
{
    static const char *const keys[4] = {"pipe", "tile", "prefetch", "cpml"};
    *tuning = *base;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", spec);
    char *f = buf;
    for (int k = 0; k < 4; k++) {
        char *slash = strchr(f, '/');
        if (slash)
            *slash = 0;
        int rc = *f ? wave_tuning_set(tuning, keys[k], f) : 0;
        if (rc < 0)
            return rc;
        if (!slash)
            break;
        f = slash + 1;
    }
    return 0;
}

/* --tile T and the like: the flags of struct wave_tuning (kernels/wave_tuning.h). */
static const char *const tuning_flags[] = {"tile", "pipe", "prefetch", "cpml", "cpml-overlap", "naive-block",
                                           "layer-zchunk", "ring-waves"};

int bench_stencil(int argc, char **argv)
{
    int sizes[8] = {256, 512}, nsizes = 2, orders[8] = {2, 4, 8, 16}, norders = 4;
    int grids[8][3], ngrids = 0;
    int mems[2] = {WAVE_CPML_MEM_FP32}, nmems = 1;
    int steps = 50, pml = 20;
    bool json = false, nocpml_rows = true, two_d = false, sizes_given = false;
    bool use[3] = {false, true, true};
    bool acoustic = true, tti = true, taylor = true, implicit = false;
    int tti_orders[8] = {8}, ntti_orders = 1;
    const char *variants[64];
    int nvariants = 0;
    struct wave_tuning base = {0};
    struct wave_tuning ivars[8] = {{0}};
    int nivars = 1;
    const char *ring_shape = NULL;
    for (int i = 1; i < argc; i++) {
        const char *tflag = NULL;
        for (size_t k = 0; k < sizeof tuning_flags / sizeof *tuning_flags; k++)
            if (!strncmp(argv[i], "--", 2) && !strcmp(argv[i] + 2, tuning_flags[k]))
                tflag = tuning_flags[k];
        if (tflag) {
            if (i + 1 >= argc || wave_tuning_set(&base, tflag, argv[i + 1]) < 0) {
                fprintf(stderr, "seislive-bench: --%s: %s\n", tflag, i + 1 < argc ? err_msg() : "needs a value");
                return 2;
            }
            i++;
        } else if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            nsizes = options_ints(argv[++i], sizes, 1, 8);
            sizes_given = true;
            if (nsizes < 0) {
                fprintf(stderr, "seislive-bench: --sizes takes 1 to %d whole numbers separated by commas\n", 8);
                return 2;
            }
        } else if (!strcmp(argv[i], "--grids") && i + 1 < argc) {
            char list[256];
            snprintf(list, sizeof list, "%s", argv[++i]);
            ngrids = 0;
            for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
                int g[3], used = 0;
                if (ngrids >= 8 || sscanf(tok, "%dx%dx%d%n", &g[0], &g[1], &g[2], &used) != 3 ||
                    tok[used] || g[0] < 1 || g[1] < 1 || g[2] < 1) {
                    fprintf(stderr, "seislive-bench: --grids takes 1 to 8 padded grids NXxNYxNZ separated by commas\n");
                    return 2;
                }
                memcpy(grids[ngrids++], g, sizeof g);
            }
        } else if (!strcmp(argv[i], "--cpml-memory") && i + 1 < argc) {
            char list[64];
            snprintf(list, sizeof list, "%s", argv[++i]);
            nmems = 0;
            for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
                int m = !strcmp(tok, "fp32") ? WAVE_CPML_MEM_FP32 : !strcmp(tok, "bf16") ? WAVE_CPML_MEM_BF16 : -1;
                if (m < 0 || nmems >= 2) {
                    fprintf(stderr, "seislive-bench: --cpml-memory takes fp32 and/or bf16 (comma separated)\n");
                    return 2;
                }
                mems[nmems++] = m;
            }
        } else if (!strcmp(argv[i], "--orders") && i + 1 < argc) {
            norders = options_ints(argv[++i], orders, 1, 8);
            if (norders < 0) {
                fprintf(stderr, "seislive-bench: --orders takes 1 to %d whole numbers separated by commas\n", 8);
                return 2;
            }
        } else if (!strcmp(argv[i], "--operator") && i + 1 < argc) {
            const char *o = argv[++i];
            op_kind = !strcmp(o, "taylor") ? PROP_OP_TAYLOR : !strcmp(o, "optimized") ? PROP_OP_OPTIMIZED
                    : !strcmp(o, "implicit") ? PROP_OP_IMPLICIT : -1;
            if (op_kind < 0) {
                fprintf(stderr, "seislive-bench: --operator takes taylor, optimized or implicit\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pml") && i + 1 < argc)
            pml = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--kernels") && i + 1 < argc) {
            const char *k = argv[++i];
            use[WAVE_KERNEL_NAIVE] = strstr(k, "naive") != NULL;
            use[WAVE_KERNEL_TILED] = strstr(k, "tiled") != NULL;
        } else if (!strcmp(argv[i], "--variants") && i + 1 < argc) {
            /* comma-separated PIPE/TILE/DEPTH/CPML, e.g. ring/4x4/2/fused,regs/4x4/2/split */
            char *list = argv[++i];
            nvariants = 0;
            for (char *tok = strtok(list, ","); tok && nvariants < 64; tok = strtok(NULL, ","))
                variants[nvariants++] = tok;
        } else if (!strcmp(argv[i], "--ring-shape") && i + 1 < argc) {
            ring_shape = argv[++i];
        } else if (!strcmp(argv[i], "--no-cpml-rows"))
            nocpml_rows = false;
        else if (!strcmp(argv[i], "--2d"))
            two_d = true;
        else if (!strcmp(argv[i], "--physics") && i + 1 < argc) {
            const char *ph = argv[++i];
            acoustic = !strcmp(ph, "acoustic") || !strcmp(ph, "both");
            tti = !strcmp(ph, "tti") || !strcmp(ph, "both");
            if (!acoustic && !tti) {
                fprintf(stderr, "seislive-bench: --physics takes acoustic, tti or both\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--operators") && i + 1 < argc) {
            const char *ops = argv[++i];
            taylor = strstr(ops, "taylor") != NULL;
            implicit = strstr(ops, "implicit") != NULL;
            if (!taylor && !implicit) {
                fprintf(stderr, "seislive-bench: --operators takes taylor and/or implicit (comma separated)\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--implicit-variants") && i + 1 < argc) {
            char list[256];
            snprintf(list, sizeof list, "%s", argv[++i]);
            nivars = 0;
            for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
                char *yz = strchr(tok, '/');
                if (yz)
                    *yz++ = 0;
                struct wave_tuning t = {0};
                if (nivars >= 8 || !yz || wave_tuning_set(&t, "implicit-x", tok) < 0 ||
                    wave_tuning_set(&t, "implicit-yz", yz) < 0) {
                    fprintf(stderr, "seislive-bench: --implicit-variants: %s\n",
                            nivars >= 8 ? "at most 8 variants"
                            : !yz       ? "each variant is X/YZ (thread|warp|default / march|chunks|default)"
                                        : err_msg());
                    return 2;
                }
                ivars[nivars++] = t;
            }
            if (nivars == 0) {
                fprintf(stderr, "seislive-bench: --implicit-variants takes X/YZ,... (e.g. thread/march,warp/chunks)\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--tti-orders") && i + 1 < argc) {
            ntti_orders = options_ints(argv[++i], tti_orders, 1, 8);
            if (ntti_orders < 0) {
                fprintf(stderr, "seislive-bench: --tti-orders takes 1 to %d whole numbers separated by commas\n", 8);
                return 2;
            }
        }
        else {
            fprintf(stderr, "stencil: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (two_d && !sizes_given) { /* 2D grids of 3D sizes would be a few launches' worth */
        sizes[0] = 1024;
        sizes[1] = 4096;
        nsizes = 2;
    }
    if (ngrids && two_d) {
        fprintf(stderr, "seislive-bench: --grids is for 3D grids\n");
        return 2;
    }
    /* the acoustic rows' grids: the cubes of --sizes (unless only --grids was given), then
     * --grids */
    int agrid[16][3], nag = 0;
    for (int si = 0; si < nsizes && (sizes_given || !ngrids); si++) {
        agrid[nag][0] = agrid[nag][2] = sizes[si];
        agrid[nag][1] = two_d ? 1 : sizes[si];
        nag++;
    }
    for (int gi = 0; gi < ngrids; gi++)
        memcpy(agrid[nag++], grids[gi], sizeof grids[gi]);
    const int dims = two_d ? 2 : 3;
    for (int vi = 0; vi < nvariants; vi++) { /* refused here, before any GPU work */
        struct wave_tuning t;
        if (variant_tuning(&base, variants[vi], &t) < 0 || wave_tuning_check(&t, WAVE_KERNEL_TILED) < 0) {
            fprintf(stderr, "seislive-bench: --variants %s: %s\n", variants[vi], err_msg());
            return 2;
        }
    }
#ifdef SEISLIVE_CUDA
    wave_research_register(); /* the variants no default uses (tools/wave_research.cu) */
    if (wave_research_ring_shape(ring_shape) < 0) {
        fprintf(stderr, "seislive-bench: --ring-shape: %s\n", err_msg());
        return 2;
    }
    if (ring_shape)
        fprintf(stderr, "seislive-bench: ring CPML shape (frame/z layers, order 8): %s\n", ring_shape);
#else
    if (ring_shape) {
        fprintf(stderr, "seislive-bench: --ring-shape needs a CUDA build\n");
        return 2;
    }
#endif
    struct sl_device dev;
    if (backend_select("auto", &dev) < 0 || dev.kind != SL_DEVICE_CUDA) {
        fprintf(stderr, "stencil: needs a CUDA GPU (%s)\n", dev.kind == SL_DEVICE_CPU ? "none usable" : err_msg());
        return 1;
    }
    double bw = 0;
    if (wave_copy_bandwidth(&dev, (size_t)1 << 30, 20, &bw) < 0) {
        fprintf(stderr, "stencil: %s\n", err_msg());
        return 1;
    }
    double roof = bw / 16.0; /* Gpts/s at 16 bytes per point */
    enum { MAXROWS = 4096 };
    struct row *rows = calloc(MAXROWS, sizeof *rows);
    if (!rows)
        return 1;
    int nr = 0;
    const char *names[3] = {"auto", "naive", "tiled"};
    for (int si = 0; si < nag && acoustic && taylor; si++)
        for (int oi = 0; oi < norders; oi++)
            for (int k = WAVE_KERNEL_NAIVE; k <= WAVE_KERNEL_TILED; k++) {
                if (!use[k])
                    continue;
                int nv = k == WAVE_KERNEL_TILED && nvariants ? nvariants : 1;
                for (int vi = 0; vi < nv; vi++)
                    for (int mi = 0; mi < nmems; mi++) {
                    if (mems[mi] != WAVE_CPML_MEM_FP32 && k != WAVE_KERNEL_TILED)
                        continue; /* bf16 memory: the tiled kernel's lines arrangement only */
                    struct wave_tuning tuning = base;
                    if (k == WAVE_KERNEL_TILED && nvariants && variant_tuning(&base, variants[vi], &tuning) < 0) {
                        fprintf(stderr, "seislive-bench: --variants %s: %s\n", variants[vi], err_msg());
                        return 2;
                    }
                    const int *g = agrid[si];
                    char gname[48];
                    if (g[0] == g[1] && g[1] == g[2])
                        snprintf(gname, sizeof gname, "%d^3", g[0]);
                    else if (two_d)
                        snprintf(gname, sizeof gname, "%d^2", g[0]);
                    else
                        snprintf(gname, sizeof gname, "%dx%dx%d", g[0], g[1], g[2]);
                    struct wave_sim *s;
                    if (create(&dev, k, orders[oi], g, pml, two_d, &tuning, mems[mi], &s) < 0) {
                        fprintf(stderr, "stencil: %s order %d %s: %s\n", names[k], orders[oi], gname, err_msg());
                        return 1;
                    }
                    /* the no-CPML row does not depend on the memory's storage: once */
                    const int clo = nocpml_rows && mi == 0 ? 0 : 1;
                    for (int c = 1; c >= clo && nr < MAXROWS; c--) {
                        struct row *r = &rows[nr];
                        r->kernel = names[k];
                        r->order = orders[oi];
                        r->size = g[0];
                        memcpy(r->n, g, sizeof r->n);
                        r->cpml = c;
                        const double points = (double)g[0] * g[1] * g[2];
                        if (measure(s, points, c, steps, &r->gpts, &r->ms, r->variant, sizeof r->variant) < 0) {
                            fprintf(stderr, "stencil: %s order %d %s: %s\n", r->kernel, r->order, gname, err_msg());
                            return 1;
                        }
                        r->pct = 100.0 * r->gpts / roof;
                        /* With CPML the step must also read and write psi and zeta once
                         * per layer element: 3 axes x 2 faces x PML x the other two
                         * edges' elements (2D: 2 axes) of 16 bytes (fp32; 8 in bf16) on
                         * top of 16 per point; for a cube 16 + 96 PML / SIZE bytes per
                         * point (2D: 16 + 64 PML / SIZE).  No arrangement of the kernels
                         * moves less. */
                        const double el = c ? layer_elements(g, pml, two_d) / points : 0.0;
                        const double eb = mems[mi] == WAVE_CPML_MEM_BF16 ? 8.0 : 16.0;
                        r->floor_gpts = bw / (16.0 + eb * el);
                        r->floor32_gpts = bw / (16.0 + 16.0 * el);
                        nr++;
                        if (!json) /* progress, in case a long sweep is cut off */
                            fprintf(stderr, "stencil: %s [%s] order %d %s CPML %s: %.1f Gpts/s\n", r->kernel,
                                    r->variant, r->order, gname, c ? "on" : "off", r->gpts);
                    }
                    wave_destroy(s);
                    }
            }
    /* the implicit operator's rows, against their own floor (tools/bench_stencil_implicit.c) */
    const int n_taylor = nr;
    struct tti_row *irows = implicit && acoustic ? calloc(MAXROWS, sizeof *irows) : NULL;
    int nir = !implicit || !acoustic ? 0
              : !irows ? -1
                       : bench_stencil_implicit(&dev, sizes, nsizes, orders, norders, steps, pml, two_d, nocpml_rows, bw,
                                                ivars, nivars, irows, MAXROWS);
    if (nir < 0) {
        fprintf(stderr, "stencil: %s\n", irows ? err_msg() : "out of memory");
        return 1;
    }
    for (int i = 0; i < nir && nr < MAXROWS; i++, nr++) {
        const struct tti_row *t = &irows[i];
        struct row *r = &rows[nr];
        r->kernel = t->kernel;
        r->order = t->order;
        r->size = t->size;
        r->cpml = t->cpml;
        r->gpts = t->gpts;
        r->ms = t->ms;
        r->pct = 100.0 * t->gpts * 16.0 / bw;
        r->floor_gpts = r->floor32_gpts = t->floor_gpts;
        r->n[0] = r->n[1] = r->n[2] = t->size;
        if (two_d)
            r->n[1] = 1;
        snprintf(r->variant, sizeof r->variant, "%s", t->variant);
    }
    free(irows);
    struct tti_row *trows = calloc(MAXROWS, sizeof *trows);
    int ntr = !trows ? -1
              : tti ? bench_stencil_tti(&dev, (const int(*)[3])agrid, nag, tti_orders, ntti_orders, steps, pml, two_d, use,
                                        bw, trows, MAXROWS)
                    : 0;
    if (ntr < 0) {
        fprintf(stderr, "stencil: %s\n", trows ? err_msg() : "out of memory");
        return 1;
    }
    /* the TTI rows in the acoustic rows' format, against their own storage's floor */
    for (int i = 0; i < ntr && nr < MAXROWS; i++, nr++) {
        const struct tti_row *t = &trows[i];
        struct row *r = &rows[nr];
        r->kernel = t->kernel;
        r->order = t->order;
        r->size = t->size;
        r->cpml = t->cpml;
        r->gpts = t->gpts;
        r->ms = t->ms;
        r->pct = 100.0 * t->gpts * 36.0 / bw;
        r->floor_gpts = r->floor32_gpts = t->floor_gpts;
        memcpy(r->n, t->n, sizeof r->n);
        snprintf(r->variant, sizeof r->variant, "%s", t->variant);
    }
    free(trows);
    if (json) {
        printf("{\"bench\":\"stencil\",\"device\":\"%s\",\"copy_gbs\":%.1f,\"roofline_gpts\":%.2f,\"pml\":%d,"
               "\"steps\":%d,\"rows\":[", dev.name, bw, roof, pml, steps);
        for (int i = 0; i < nr; i++)
            printf("%s{\"kernel\":\"%s\",\"variant\":\"%s\",\"order\":%d,\"size\":%d,\"grid\":[%d,%d,%d],%s"
                   "\"cpml\":%s,\"gpts\":%.2f,\"roofline_pct\":%.1f,\"floor_gpts\":%.2f,\"floor_fp32_gpts\":%.2f,"
                   "\"ms_per_step\":%.3f}", i ? "," : "", rows[i].kernel, rows[i].variant, rows[i].order, rows[i].size,
                   rows[i].n[0], rows[i].n[1], rows[i].n[2], two_d ? "\"dims\":2," : "",
                   rows[i].cpml ? "true" : "false", rows[i].gpts, rows[i].pct, rows[i].floor_gpts,
                   rows[i].floor32_gpts, rows[i].ms);
        printf("]}\n");
        free(rows);
        return 0;
    }
    printf("device: %s; device-to-device copy %.0f GB/s (read + write) -> roofline %.1f Gpts/s at 16 B/point\n",
           dev.name, bw, roof);
    printf("operator of the acoustic rows: %s (seislive-bench stencil --operator)\n", operator_name(op_kind));
    printf("grid: SIZE^%d padded points (interior + %d CPML cells per face%s), %d timed steps; variant: the "
           "kernels' own description (tuning flags: kernels/wave_tuning.h)\n\n", dims, pml,
           two_d ? "; 2D: x-z, no y faces" : "", steps);
    printf("byte floor: the copy bandwidth over 16 B/point, plus with CPML 16 B per psi/zeta element "
           "(16 + %d x %d / SIZE B/point on a cube; 8 B per element with bf16 memory): the most any kernel "
           "arrangement can reach; %% of fp32 floor: against the floor with fp32 memory (16 B per element)\n",
           32 * dims, pml);
    if (tti)
        printf("TTI rows: 36 B/point (p, q at two levels, v_pz^2 dt^2, packed eps/delta and tilt, p and q "
               "written; %% of roofline against 36 B), plus with CPML 48 B per layer element (psi, zeta, chi of "
               "both fields: 36 + %d x %d / SIZE B/point)\n", 96 * dims, pml);
    if (implicit)
        printf("implicit rows: the sweeps' byte floor %.0f B/point with y/z marching (x: p, lap; y: p, d twice, lap "
               "twice; z: p, d twice, lap, vel, q twice), %.0f with y/z chunks (d stays in registers; "
               "tools/bench_stencil_implicit.c), plus with CPML as above; %% of roofline against 16 B\n",
               bench_implicit_floor_bpp(two_d, false), bench_implicit_floor_bpp(two_d, true));
    printf("\n");
    printf("| kernel | variant | order | size | CPML | ms/step | Gpts/s | %% of roofline | byte floor (Gpts/s) | "
           "%% of floor | %% of fp32 floor |\n");
    printf("| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (int i = 0; i < nr; i++) {
        char gname[48];
        const int *g = rows[i].n;
        if (g[0] == g[2] && (g[1] == g[0] || (two_d && g[1] == 1)))
            snprintf(gname, sizeof gname, "%d^%d", g[0], dims);
        else
            snprintf(gname, sizeof gname, "%dx%dx%d", g[0], g[1], g[2]);
        printf("| %s | %s | %d | %s | %s | %.3f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", rows[i].kernel,
               rows[i].variant, rows[i].order, gname, rows[i].cpml ? "on" : "off", rows[i].ms, rows[i].gpts,
               rows[i].pct, rows[i].floor_gpts, 100.0 * rows[i].gpts / rows[i].floor_gpts,
               100.0 * rows[i].gpts / rows[i].floor32_gpts);
    }
    /* the implicit rows' time per point against the tiled Taylor row of the same order,
     * size and CPML (issue 15's target: at most 2.5x) */
    for (int i = n_taylor; i < nr; i++) {
        if (strcmp(rows[i].kernel, "implicit"))
            continue;
        for (int j = 0; j < n_taylor; j++)
            if (!strcmp(rows[j].kernel, "tiled") && rows[j].order == rows[i].order && rows[j].size == rows[i].size &&
                !memcmp(rows[j].n, rows[i].n, sizeof rows[i].n) && rows[j].cpml == rows[i].cpml &&
                !strstr(rows[j].variant, "bf16"))
                printf("implicit order %d %d^%d CPML %s [%s]: %.2fx the time per point of tiled Taylor order %d "
                       "(%.3f vs %.3f ms/step)\n", rows[i].order, rows[i].size, dims, rows[i].cpml ? "on" : "off",
                       rows[i].variant, rows[i].ms / rows[j].ms, rows[j].order, rows[i].ms, rows[j].ms);
    }
    free(rows);
    return 0;
}
