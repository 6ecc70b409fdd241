/* bench_stencil — `seislive-bench stencil`: throughput of the propagator's step for each
 * CUDA kernel variant and order, with CPML, against the memory roofline measured in the
 * same run (device-to-device copy; a step must at least read p(n), p(n-1), v and write
 * p(n+1): 16 bytes per point).
 *
 *   seislive-bench stencil [--sizes 256,512] [--orders 2,4,8,16] [--steps N] [--pml W]
 *                          [--kernels naive,tiled] [--no-cpml-rows] [--json]
 *
 * The tiled kernel's block shape comes from SEISLIVE_WAVE_TILE (kernels/wave.cu).
 * SIZE is the padded grid edge (interior + 2 x pml); Gpts/s counts padded points. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/backend.h"
#include "kernels/wave.h"
#include "stream/error.h"
#include "tools/bench.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        out[n++] = atoi(s);
        const char *c = strchr(s, ',');
        if (!c)
            break;
        s = c + 1;
    }
    return n;
}

struct row {
    const char *kernel;
    int order, size;
    bool cpml;
    double gpts, pct, ms;
};

static int measure(const struct sl_device *dev, int kernel, int order, int size, int pml, bool cpml,
                   int steps, double *gpts, double *ms)
{
    struct wave_params p = {.d = {10, 10, 10}, .order = order, .pml_reflection = 1e-4, .f_ref = 10,
                            .kernel = kernel};
    for (int a = 0; a < 3; a++)
        p.n[a] = size - 2 * pml;
    for (int f = 0; f < 6; f++)
        p.pml[f] = pml;
    p.dt = 1e-3; /* stable for 2000 m/s at 10 m up to order 16 */
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    if (!v)
        return err_set(-ENOMEM, "out of memory");
    for (size_t i = 0; i < nn; i++)
        v[i] = 2000.0f;
    struct wave_sim *s;
    int rc = wave_create(dev, &p, v, &s);
    free(v);
    if (rc < 0)
        return rc;
    wave_set_cpml(s, cpml);
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
    wave_destroy(s);
    if (rc < 0)
        return rc;
    *gpts = (double)size * size * size * steps / t / 1e9;
    *ms = t / steps * 1e3;
    return 0;
}

int bench_stencil(int argc, char **argv)
{
    int sizes[8] = {256, 512}, nsizes = 2, orders[8] = {2, 4, 8, 16}, norders = 4;
    int steps = 50, pml = 20;
    bool json = false, nocpml_rows = true;
    bool use[3] = {false, true, true};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            nsizes = parse_list(argv[++i], sizes, 8);
        else if (!strcmp(argv[i], "--orders") && i + 1 < argc)
            norders = parse_list(argv[++i], orders, 8);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pml") && i + 1 < argc)
            pml = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--kernels") && i + 1 < argc) {
            const char *k = argv[++i];
            use[WAVE_KERNEL_NAIVE] = strstr(k, "naive") != NULL;
            use[WAVE_KERNEL_TILED] = strstr(k, "tiled") != NULL;
        } else if (!strcmp(argv[i], "--no-cpml-rows"))
            nocpml_rows = false;
        else {
            fprintf(stderr, "stencil: unknown option %s\n", argv[i]);
            return 2;
        }
    }
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
    struct row rows[256];
    int nr = 0;
    const char *names[3] = {"auto", "naive", "tiled"};
    for (int si = 0; si < nsizes; si++)
        for (int oi = 0; oi < norders; oi++)
            for (int k = WAVE_KERNEL_NAIVE; k <= WAVE_KERNEL_TILED; k++)
                for (int c = 1; use[k] && c >= (nocpml_rows ? 0 : 1) && nr < 256; c--) {
                    struct row *r = &rows[nr];
                    r->kernel = names[k];
                    r->order = orders[oi];
                    r->size = sizes[si];
                    r->cpml = c;
                    if (measure(&dev, k, r->order, r->size, pml, c, steps, &r->gpts, &r->ms) < 0) {
                        fprintf(stderr, "stencil: %s order %d %d^3: %s\n", r->kernel, r->order, r->size, err_msg());
                        return 1;
                    }
                    r->pct = 100.0 * r->gpts / roof;
                    nr++;
                }
    if (json) {
        printf("{\"bench\":\"stencil\",\"device\":\"%s\",\"copy_gbs\":%.1f,\"roofline_gpts\":%.2f,\"pml\":%d,"
               "\"steps\":%d,\"rows\":[", dev.name, bw, roof, pml, steps);
        for (int i = 0; i < nr; i++)
            printf("%s{\"kernel\":\"%s\",\"order\":%d,\"size\":%d,\"cpml\":%s,\"gpts\":%.2f,\"roofline_pct\":%.1f,"
                   "\"ms_per_step\":%.3f}", i ? "," : "", rows[i].kernel, rows[i].order, rows[i].size,
                   rows[i].cpml ? "true" : "false", rows[i].gpts, rows[i].pct, rows[i].ms);
        printf("]}\n");
        return 0;
    }
    printf("device: %s; device-to-device copy %.0f GB/s (read + write) -> roofline %.1f Gpts/s at 16 B/point\n",
           dev.name, bw, roof);
    const char *tile = getenv("SEISLIVE_WAVE_TILE");
    printf("grid: SIZE^3 padded points (interior + %d CPML cells per face), %d timed steps; tiled block "
           "shape %s\n\n", pml, steps, tile ? tile : "default (4x4 up to order 8, 8x2 above)");
    printf("| kernel | order | size | CPML | ms/step | Gpts/s | %% of roofline |\n");
    printf("| --- | ---: | ---: | --- | ---: | ---: | ---: |\n");
    for (int i = 0; i < nr; i++)
        printf("| %s | %d | %d^3 | %s | %.3f | %.1f | %.1f |\n", rows[i].kernel, rows[i].order,
               rows[i].size, rows[i].cpml ? "on" : "off", rows[i].ms, rows[i].gpts, rows[i].pct);
    return 0;
}
