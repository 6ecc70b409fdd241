/* The runtime on the GPU: units stream through pinned slots (cudaHostRegister'd),
 * are copied on the copy stream while the previous unit computes, and every unit is
 * computed exactly once on the data it carried: the device accumulator must equal
 * the same recurrence computed on the CPU, unit after unit.  Few slots and many units
 * make slot reuse happen often (a slot refilled before its copy finished would show). */
#include <criterion/criterion.h>
#ifdef SEISLIVE_CUDA /* the whole file: the burn kernel (tools/burn.cu) exists only in CUDA builds */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/device.h"
#include "stream/error.h"
#include "stream/pipeline.h"
#include "tests/gpu/gpu_support.h"
#include "tools/burn.h"

#define N_ELEM (1 << 20)
#define UNITS 24
#define PASSES 3

static float value(int u, size_t i)
{
    return (float)((double)((i * 2654435761u + (size_t)u * 97u) % 1000) * 1e-3 - 0.5);
}

static int src_run(void *ctx, struct ingest *in)
{
    (void)ctx;
    for (int u = 0; u < UNITS; u++) {
        int i = ingest_reserve(in);
        if (i < 0)
            return 0;
        float *d = ingest_slot(in, i);
        for (size_t k = 0; k < N_ELEM; k++)
            d[k] = value(u, k);
        in->hdr[i].kind = SLOT_RAW;
        in->hdr[i].id = u;
        in->hdr[i].bytes = N_ELEM * sizeof(float);
        ingest_commit(in, i);
    }
    return 0;
}

static void src_close(void *ctx)
{
    (void)ctx;
}

struct job {
    float *acc;
    int processed, finished;
    int64_t order_ok;
};

static int process(void *ctx, const struct pipeline_unit *u, bool snap)
{
    struct job *j = ctx;
    (void)snap;
    cr_assert_not_null(u->dev);
    cr_assert_not_null(u->stream);
    if (u->hdr->id != j->processed)
        j->order_ok = 0;
    j->processed++;
    return burn_run(j->acc, u->dev, N_ELEM, PASSES, u->stream);
}

static int finish(void *ctx, const struct slot_hdr *h, const struct pipeline_io *io, bool p, bool c)
{
    struct job *j = ctx;
    (void)h, (void)io, (void)p, (void)c;
    j->finished++;
    return 0;
}

Test(gpu_pipeline, every_unit_computed_once_on_its_data, .timeout = 120)
{
    GPU_REQUIRED();
    struct sl_device dev;
    cr_assert_eq(backend_select("cuda:0", &dev), 0, "%s", err_msg());
    struct job j = {.order_ok = 1};
    cr_assert_eq(dev_alloc(&dev, N_ELEM * sizeof(float), (void **)&j.acc), 0, "%s", err_msg());
    cr_assert_eq(dev_zero(&dev, j.acc, N_ELEM * sizeof(float), NULL), 0, "%s", err_msg());
    cr_assert_eq(dev_sync(&dev), 0, "%s", err_msg()); /* the runtime computes on its own streams */
    struct pipeline_conf pc = {.slots = 2, .slot_bytes = N_ELEM * sizeof(float), .publish_every = 1};
    struct source src = {.name = "test", .run = src_run, .close = src_close};
    struct pipeline_ops ops = {.name = "burn", .ctx = &j, .wants_device = true, .async = true, .process = process,
                               .finish = finish};
    struct metrics m;
    metrics_init(&m);
    cr_assert_eq(pipeline_run(&pc, &dev, NULL, &src, &ops, &m), 0, "%s", err_msg());
    cr_assert_eq(j.processed, UNITS);
    cr_assert_eq(j.finished, UNITS);
    cr_assert(j.order_ok);
    cr_assert_eq(m.st[ST_H2D].n, UNITS, "every copy timed by its events");
    float *got = malloc(N_ELEM * sizeof(float));
    cr_assert_eq(dev_copy(&dev, got, j.acc, N_ELEM * sizeof(float), DEV_D2H, NULL), 0, "%s", err_msg());
    double worst = 0;
    for (size_t i = 0; i < N_ELEM; i++) {
        float acc = 0;
        for (int u = 0; u < UNITS; u++) {
            float x = value(u, i), y = 0;
            for (int p = 0; p < PASSES; p++)
                y = fmaf(y, 0.999f, x * x);
            acc += y;
        }
        double e = fabs((double)got[i] - acc) / (fabs(acc) + 1e-6);
        if (e > worst)
            worst = e;
    }
    cr_assert_lt(worst, 1e-6, "largest relative difference %g", worst);
    free(got);
    dev_free(&dev, j.acc);
    metrics_destroy(&m);
}
#endif
