/* The CUDA side of the locate job against the CPU reference on random data, outputs
 * poisoned before each GPU run (NaN floats, an impossible index):
 *   - the coherent stack and its on-the-fly reductions (max over trial points per time with
 *     its index, per-point max over the block), every normalization, P only and P+S rows,
 *     dead rows (all NaN), rows with gaps (NaN runs), smooth delays from a geometry (the
 *     staged kernels' shared-memory path) and random delays (windows too wide: their global
 *     path), every kernel (staged, staged-db, direct); the CPU result itself is checked against a
 *     brute-force double-precision stack at sampled points;
 *   - the delay-table builder used by the benchmark against the same arithmetic on the host;
 *   - the characteristic functions (each kind, with and without band-pass, NaN gaps, state
 *     carried across two blocks) and the row combination (mean, log-mean);
 *   - the whole locate engine on a synthetic stream (two events, a dead station, a gap,
 *     irregular block cuts) with the GPU backend against the CPU backend: the maximum
 *     trace and its points, the coherence volumes and the events.
 * Relative L2 error < 1e-5, indices and NaN positions equal. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "kernels/backend.h"
#include "kernels/cf.h"
#include "kernels/device.h"
#include "kernels/locate_engine.h"
#include "kernels/stack.h"
#include "stream/error.h"
#include "stream/locate_setup.h"
#include "tests/gpu/gpu_support.h"
#include "tests/support.h"
#include "tests/test_locate_synth.h"

#ifdef SEISLIVE_CUDA
static const int kernels[3] = {STACK_KERNEL_STAGED, STACK_KERNEL_STAGED_DB, STACK_KERNEL_DIRECT};
/* The device layer acts on the GPU the test thread is bound to (backend_select in each
 * test): this descriptor only says "a CUDA device". */
static const struct sl_device GPU = {.kind = SL_DEVICE_CUDA, .index = 0};

static unsigned rng = 12345u;
static float frand(void) /* uniform in [0, 1) */
{
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / 16777216.0f;
}

static void *dev_put(const void *h, size_t bytes)
{
    void *p;
    cr_assert_eq(dev_alloc(&GPU, bytes, &p), 0, "%s", err_msg());
    if (h)
        cr_assert_eq(dev_copy(&GPU, p, h, bytes, DEV_H2D, NULL), 0, "%s", err_msg());
    return p;
}

static void dev_get(void *h, const void *d, size_t bytes)
{
    cr_assert_eq(dev_copy(&GPU, h, d, bytes, DEV_D2H, NULL), 0, "%s", err_msg());
}

static void *dev_poisoned(size_t bytes, int byte)
{
    void *h = malloc(bytes);
    memset(h, byte, bytes);
    void *p = dev_put(h, bytes);
    free(h);
    return p;
}

static size_t count_nan(const float *a, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += isnan(a[i]);
    return k;
}

/* A stack problem on the host: delays (nrow x nj_pad) and CF rows (nrow x stride, starting
 * 3 floats into the allocation so the kernels see an unaligned row start, as the engine's
 * buffer offsets give them). */
struct problem {
    int nrow, nt, max_delay;
    size_t nj, nj_pad, stride;
    uint16_t *delay;
    float *cf_alloc, *cf;
};

static void problem_alloc(struct problem *pb, int nrow, size_t nj, int nt, int max_delay)
{
    pb->nrow = nrow;
    pb->nj = nj;
    pb->nj_pad = stack_nj_pad(nj);
    pb->nt = nt;
    pb->max_delay = max_delay;
    pb->stride = stack_cf_need(nt, max_delay) + 13;
    pb->delay = calloc((size_t)nrow * pb->nj_pad, sizeof(uint16_t));
    pb->cf_alloc = calloc((size_t)nrow * pb->stride + 3, sizeof(float));
    pb->cf = pb->cf_alloc + 3;
}

static void problem_free(struct problem *pb)
{
    free(pb->delay);
    free(pb->cf_alloc);
}

/* Random CF: row 1 dead (all NaN), every 5th row a gap of 40 NaN at a random place, a few
 * isolated NaN in every 7th row; values > 0 (or logs, either sign, for GEOMETRIC). */
static void fill_cf(struct problem *pb, int geometric)
{
    size_t n = stack_cf_need(pb->nt, pb->max_delay);
    for (int r = 0; r < pb->nrow; r++) {
        float *row = pb->cf + (size_t)r * pb->stride;
        for (size_t i = 0; i < pb->stride; i++)
            row[i] = geometric ? logf(0.05f + 2.0f * frand()) : 0.1f + 3.0f * frand();
        if (r == 1)
            for (size_t i = 0; i < pb->stride; i++)
                row[i] = NAN;
        if (r % 5 == 0) {
            size_t g = (size_t)(frand() * (float)(n - 40));
            for (size_t i = g; i < g + 40; i++)
                row[i] = NAN;
        }
        if (r % 7 == 3)
            for (int k = 0; k < 5; k++)
                row[(size_t)(frand() * (float)n)] = NAN;
    }
}

struct result {
    float *max_val, *coh;
    int32_t *max_idx;
};

static void result_alloc(struct result *o, const struct problem *pb)
{
    o->max_val = malloc((size_t)pb->nt * sizeof(float));
    o->max_idx = malloc((size_t)pb->nt * sizeof(int32_t));
    o->coh = malloc(pb->nj * sizeof(float));
}

static void result_free(struct result *o)
{
    free(o->max_val);
    free(o->max_idx);
    free(o->coh);
}

static void run_cpu(const struct problem *pb, int norm, struct result *o)
{
    struct stack_args a = {
        .nrow = pb->nrow, .nj = pb->nj, .nj_pad = pb->nj_pad, .delay = pb->delay, .max_delay = pb->max_delay,
        .cf = pb->cf, .cf_stride = pb->stride, .nt = pb->nt, .norm = norm,
        .max_val = o->max_val, .max_idx = o->max_idx, .coh = o->coh,
    };
    cr_assert_eq(stack_run_cpu(&a), 0, "%s", err_msg());
}

/* The GPU twin with KERNEL on device copies of PB, outputs poisoned; compared with REF. */
static void check_gpu(const struct problem *pb, int norm, int kernel, const struct result *ref, const char *what)
{
    size_t dbytes = (size_t)pb->nrow * pb->nj_pad * sizeof(uint16_t);
    size_t cbytes = ((size_t)pb->nrow * pb->stride + 3) * sizeof(float);
    uint16_t *dd = dev_put(pb->delay, dbytes);
    float *dcf = dev_put(pb->cf_alloc, cbytes);
    float *dval = dev_poisoned((size_t)pb->nt * sizeof(float), 0xff);
    int32_t *didx = dev_poisoned((size_t)pb->nt * sizeof(int32_t), 0x7f);
    float *dcoh = dev_poisoned(pb->nj * sizeof(float), 0xff);
    struct stack_cuda *ctx;
    struct stack_tuning tuning = {.kernel = kernel};
    cr_assert_eq(stack_cuda_create(&ctx, &tuning), 0, "%s", err_msg());
    struct stack_args a = {
        .nrow = pb->nrow, .nj = pb->nj, .nj_pad = pb->nj_pad, .delay = dd, .max_delay = pb->max_delay,
        .cf = dcf + 3, .cf_stride = pb->stride, .nt = pb->nt, .norm = norm,
        .max_val = dval, .max_idx = didx, .coh = dcoh,
    };
    /* twice on one context: the second run must not see the first's reductions */
    for (int rep = 0; rep < 2; rep++) {
        cr_assert_eq(stack_run_cuda(ctx, &a, NULL), 0, "%s", err_msg());
        cr_assert_eq(dev_sync(&GPU), 0, "%s", err_msg());
    }
    struct result g;
    result_alloc(&g, pb);
    dev_get(g.max_val, dval, (size_t)pb->nt * sizeof(float));
    dev_get(g.max_idx, didx, (size_t)pb->nt * sizeof(int32_t));
    dev_get(g.coh, dcoh, pb->nj * sizeof(float));
    const char *kn = kernel == STACK_KERNEL_STAGED ? "staged" : kernel == STACK_KERNEL_STAGED_DB ? "staged-db" : "direct";
    cr_assert_eq(count_nan(g.max_val, (size_t)pb->nt), 0, "%s %s norm %d: max_val not written", what, kn, norm);
    cr_assert_eq(count_nan(g.coh, pb->nj), 0, "%s %s norm %d: coherence not written", what, kn, norm);
    int idx_diff = 0;
    for (int t = 0; t < pb->nt; t++)
        idx_diff += g.max_idx[t] != ref->max_idx[t];
    double ev = test_rel_l2_f32(g.max_val, ref->max_val, (size_t)pb->nt);
    double ec = test_rel_l2_f32(g.coh, ref->coh, pb->nj);
    cr_log_info("stack %s, %s kernel, norm %d: max over points rel. error %.3g, coherence %.3g, %d indices differ",
                what, kn, norm, ev, ec, idx_diff);
    cr_assert_eq(idx_diff, 0, "%s %s norm %d: %d of %d max indices differ", what, kn, norm, idx_diff, pb->nt);
    cr_assert_lt(ev, 1e-5, "%s %s norm %d: max over points relative error %.3g", what, kn, norm, ev);
    cr_assert_lt(ec, 1e-5, "%s %s norm %d: coherence relative error %.3g", what, kn, norm, ec);
    result_free(&g);
    stack_cuda_destroy(ctx);
    dev_free(&GPU, dd);
    dev_free(&GPU, dcf);
    dev_free(&GPU, dval);
    dev_free(&GPU, didx);
    dev_free(&GPU, dcoh);
}

/* The reference itself against a direct double-precision stack (STACK_NORM_COUNT) at some points:
 * s_j(t) <= max_val[t] and <= coh[j]; s at the reported index equals max_val[t]. */
static double brute(const struct problem *pb, size_t j, int t)
{
    double s = 0;
    int n = 0;
    for (int r = 0; r < pb->nrow; r++) {
        float v = pb->cf[(size_t)r * pb->stride + t + pb->delay[(size_t)r * pb->nj_pad + j]];
        if (v == v) {
            s += v;
            n++;
        }
    }
    return n ? s / n : 0.0;
}

static void check_reference(const struct problem *pb, const struct result *ref)
{
    for (int t = 0; t < pb->nt; t += 7) {
        cr_assert(ref->max_idx[t] >= 0 && (size_t)ref->max_idx[t] < pb->nj);
        double at = brute(pb, (size_t)ref->max_idx[t], t);
        cr_assert_lt(fabs(at - ref->max_val[t]), 1e-5 * fabs(at) + 1e-6, "t %d: %g vs %g", t, at, ref->max_val[t]);
        for (size_t j = (size_t)t % 11; j < pb->nj; j += 97) {
            double s = brute(pb, j, t);
            cr_assert_leq(s, ref->max_val[t] * (1 + 1e-5), "t %d j %zu", t, j);
            cr_assert_leq(s, ref->coh[j] * (1 + 1e-5), "t %d j %zu", t, j);
        }
    }
}

static void check_all(const struct problem *pb, const char *what, int verify_reference)
{
    struct result ref;
    result_alloc(&ref, pb);
    for (int norm = STACK_NORM_NONE; norm <= STACK_NORM_GEOMETRIC; norm++) {
        struct problem q = *pb;
        fill_cf(&q, norm == STACK_NORM_GEOMETRIC);
        memset(ref.max_val, 0xff, (size_t)pb->nt * sizeof(float));
        run_cpu(&q, norm, &ref);
        if (verify_reference && norm == STACK_NORM_COUNT)
            check_reference(&q, &ref);
        for (int k = 0; k < 3; k++)
            check_gpu(&q, norm, kernels[k], &ref, what);
    }
    result_free(&ref);
}

/* Stations on the surface over a grid, delays of P (and S) from straight rays. */
static void geometry_delays(struct problem *pb, int nsta, int with_s, const int n[3], double dt)
{
    const double d = 40.0, vp = 3500.0, vs = 2000.0;
    int maxd = 0;
    for (int s = 0; s < nsta; s++) {
        double sx = frand() * n[0] * d, sy = frand() * n[1] * d;
        for (int ph = 0; ph <= with_s; ph++) {
            int r = s * (1 + with_s) + ph;
            for (size_t j = 0; j < pb->nj; j++) {
                size_t i = j % (size_t)n[0], m = (j / (size_t)n[0]) % (size_t)n[1], k = j / ((size_t)n[0] * n[1]);
                double dist = sqrt(pow(i * d - sx, 2) + pow(m * d - sy, 2) + pow(200.0 + k * d, 2));
                int dl = (int)lround(dist / (ph ? vs : vp) / dt);
                pb->delay[(size_t)r * pb->nj_pad + j] = (uint16_t)dl;
                maxd = dl > maxd ? dl : maxd;
            }
        }
    }
    cr_assert_leq(maxd, pb->max_delay);
}
#endif

Test(gpu_locate, stack_geometry_p_and_ps_match_cpu, .timeout = 120)
{
    GPU_REQUIRED();
#ifdef SEISLIVE_CUDA
    struct sl_device g;
    cr_assert_eq(backend_select("cuda:0", &g), 0, "%s", err_msg());
    const int n[3] = {37, 23, 9};
    size_t nj = (size_t)n[0] * n[1] * n[2];
    for (int with_s = 0; with_s <= 1; with_s++) {
        struct problem pb;
        int nsta = with_s ? 41 : 67;
        problem_alloc(&pb, nsta * (1 + with_s), nj, 300, 900);
        geometry_delays(&pb, nsta, with_s, n, 0.002);
        check_all(&pb, with_s ? "P+S geometry" : "P geometry", with_s);
        problem_free(&pb);
    }
#endif
}

Test(gpu_locate, stack_random_delays_match_cpu, .timeout = 120)
{
    GPU_REQUIRED();
#ifdef SEISLIVE_CUDA
    struct sl_device g;
    cr_assert_eq(backend_select("cuda:0", &g), 0, "%s", err_msg());
    /* delays anywhere in [0, 1200]: windows wider than shared memory take the global path;
     * nrow not a multiple of the 8-row stage, nj not of the 32-point tile */
    struct problem pb;
    problem_alloc(&pb, 53, 3001, 257, 1200);
    for (int r = 0; r < pb.nrow; r++)
        for (size_t j = 0; j < pb.nj; j++)
            pb.delay[(size_t)r * pb.nj_pad + j] = (uint16_t)(frand() * 1201.0f);
    check_all(&pb, "random delays", 1);
    /* a single time and a single point */
    struct problem one;
    problem_alloc(&one, 5, 1, 1, 3);
    for (int r = 0; r < one.nrow; r++)
        one.delay[(size_t)r * one.nj_pad] = (uint16_t)(r % 4);
    check_all(&one, "one point, one time", 0);
    problem_free(&one);
    problem_free(&pb);
#endif
}

Test(gpu_locate, stack_ties_take_the_smallest_index)
{
    GPU_REQUIRED();
#ifdef SEISLIVE_CUDA
    struct sl_device g;
    cr_assert_eq(backend_select("cuda:0", &g), 0, "%s", err_msg());
    /* constant CF, no NaN: every point stacks the same value at every time */
    struct problem pb;
    problem_alloc(&pb, 16, 1000, 200, 50);
    for (int r = 0; r < pb.nrow; r++) {
        for (size_t j = 0; j < pb.nj; j++)
            pb.delay[(size_t)r * pb.nj_pad + j] = (uint16_t)((j * 7 + (size_t)r) % 51);
        for (size_t i = 0; i < pb.stride; i++)
            pb.cf[(size_t)r * pb.stride + i] = 0.75f;
    }
    struct result ref;
    result_alloc(&ref, &pb);
    for (int norm = STACK_NORM_NONE; norm <= STACK_NORM_COUNT; norm++) {
        run_cpu(&pb, norm, &ref);
        for (int t = 0; t < pb.nt; t++) {
            cr_assert_eq(ref.max_idx[t], 0, "CPU: tie at t %d resolved to %d", t, ref.max_idx[t]);
            cr_assert_eq(ref.max_val[t], norm == STACK_NORM_NONE ? 12.0f : 0.75f);
        }
        for (int k = 0; k < 3; k++)
            check_gpu(&pb, norm, kernels[k], &ref, "ties");
    }
    result_free(&ref);
    problem_free(&pb);
#endif
}

Test(gpu_locate, straight_ray_delay_table_matches_host)
{
    GPU_REQUIRED();
#ifdef SEISLIVE_CUDA
    struct sl_device g;
    cr_assert_eq(backend_select("cuda:0", &g), 0, "%s", err_msg());
    const int n[3] = {19, 13, 7};
    const double d[3] = {25.0, 30.0, 20.0}, o[3] = {-100.0, 50.0, 300.0}, v = 3100.0, dt = 0.002;
    const int nrow = 9;
    size_t nj = (size_t)n[0] * n[1] * n[2], nj_pad = stack_nj_pad(nj);
    float sta[3 * 9];
    for (int i = 0; i < 3 * nrow; i++)
        sta[i] = 500.0f * frand();
    uint16_t *dd = dev_poisoned((size_t)nrow * nj_pad * sizeof(uint16_t), 0x5a);
    cr_assert_eq(stack_cuda_delays_straight(dd, nj_pad, nrow, sta, n, d, o, v, dt), 0, "%s", err_msg());
    uint16_t *got = malloc((size_t)nrow * nj_pad * sizeof(uint16_t));
    dev_get(got, dd, (size_t)nrow * nj_pad * sizeof(uint16_t));
    for (int r = 0; r < nrow; r++)
        for (size_t j = 0; j < nj_pad; j++) {
            uint16_t want = 0;
            if (j < nj) {
                size_t i = j % (size_t)n[0], m = (j / (size_t)n[0]) % (size_t)n[1], k = j / ((size_t)n[0] * n[1]);
                double x = o[0] + (double)i * d[0] - sta[3 * r], y = o[1] + (double)m * d[1] - sta[3 * r + 1],
                       z = o[2] + (double)k * d[2] - sta[3 * r + 2];
                want = (uint16_t)llrint(sqrt(x * x + y * y + z * z) * (1.0 / (v * dt)));
            }
            cr_assert_eq(got[(size_t)r * nj_pad + j], want, "row %d point %zu: %u, host %u", r, j,
                         got[(size_t)r * nj_pad + j], want);
        }
    free(got);
    dev_free(&GPU, dd);
#endif
}

#ifdef SEISLIVE_CUDA
/* Compare two CF outputs: NaN at the same places, relative L2 error of the rest. */
static double cf_compare(const float *g, const float *c, size_t n, const char *what)
{
    double num = 0, den = 0;
    size_t valid = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(isnan(g[i]), isnan(c[i]), "%s: sample %zu: GPU %g, CPU %g", what, i, g[i], c[i]);
        if (!isnan(c[i])) {
            double e = (double)g[i] - c[i];
            num += e * e;
            den += (double)c[i] * c[i];
            valid++;
        }
    }
    cr_assert_gt(valid, n / 8, "%s: only %zu of %zu samples valid", what, valid, n);
    return sqrt(num / (den > 0 ? den : 1));
}
#endif

Test(gpu_locate, cf_kernels_match_cpu_across_two_blocks, .timeout = 120)
{
    GPU_REQUIRED();
#ifdef SEISLIVE_CUDA
    struct sl_device g;
    cr_assert_eq(backend_select("cuda:0", &g), 0, "%s", err_msg());
    const double dt = 0.004;
    const int nch = 37, nblk[2] = {700, 513}, stride = 720;
    float *in = malloc((size_t)nch * stride * sizeof(float));
    float *oc = malloc((size_t)nch * stride * sizeof(float)), *og = malloc((size_t)nch * stride * sizeof(float));
    const char *names[] = {"abs", "envelope", "stalta", "recursive stalta", "kurtosis"};
    for (int kind = CF_ABS; kind <= CF_KURTOSIS; kind++)
        for (int band = 0; band <= 1; band++) {
            struct sl_config cfg;
            config_defaults(&cfg);
            cfg.locate.cf = kind;
            cfg.locate.band[0] = band ? 6.0 : 0.0;
            cfg.locate.band[1] = band ? 40.0 : 0.0;
            struct cf_params p;
            struct cf_spec spec = locate_cf_spec(&cfg.locate);
            cr_assert_eq(cf_params_init(&p, &spec, dt), 0, "%s", err_msg());
            size_t sl = cf_state_len(&p);
            double *sc = calloc((size_t)nch * sl, sizeof(double));
            double *dstate = dev_put(sc, (size_t)nch * sl * sizeof(double));
            double *dcoef = dev_put(p.coef, (size_t)p.ncoef * sizeof(double));
            float *din = dev_put(NULL, (size_t)nch * stride * sizeof(float));
            float *dout = dev_put(NULL, (size_t)nch * stride * sizeof(float));
            for (int b = 0; b < 2; b++) {
                int n = nblk[b];
                /* noise, a pulse in every channel, a 30-sample gap in every 4th channel
                 * (in channel 4k+1 it spans the cut between the blocks) */
                for (int c = 0; c < nch; c++)
                    for (int i = 0; i < stride; i++) {
                        double tt = (b * nblk[0] + i) * dt - (0.8 + 0.03 * c);
                        double ricker = (1 - 2 * pow(M_PI * 12 * tt, 2)) * exp(-pow(M_PI * 12 * tt, 2));
                        float x = (float)(0.3 * (frand() - 0.5) + 4.0 * ricker);
                        int gi = b * nblk[0] + i, g0 = c % 4 == 1 ? nblk[0] - 10 : 200 + 7 * c;
                        in[(size_t)c * stride + i] = c % 4 < 2 && gi >= g0 && gi < g0 + 30 ? NAN : x;
                    }
                cr_assert_eq(dev_copy(&GPU, din, in, (size_t)nch * stride * sizeof(float), DEV_H2D, NULL), 0, "%s",
                             err_msg());
                cr_assert_eq(dev_fill_ff_2d(&GPU, dout, (size_t)stride * sizeof(float), (size_t)stride * sizeof(float),
                                                   (size_t)nch), 0, "%s", err_msg());
                cf_run_cpu(&p, nch, n, in, (size_t)stride, oc, (size_t)stride, sc);
                cr_assert_eq(cf_run_cuda(&p, dcoef, nch, n, din, (size_t)stride, dout, (size_t)stride, dstate, NULL), 0,
                             "%s", err_msg());
                cr_assert_eq(dev_sync(&GPU), 0, "%s", err_msg());
                dev_get(og, dout, (size_t)nch * stride * sizeof(float));
                double worst = 0;
                for (int c = 0; c < nch; c++) {
                    char what[96];
                    snprintf(what, sizeof what, "%s%s block %d channel %d", names[kind], band ? " band-pass" : "", b, c);
                    double e = cf_compare(og + (size_t)c * stride, oc + (size_t)c * stride, (size_t)n, what);
                    worst = e > worst ? e : worst;
                }
                cr_log_info("cf %s%s (%d taps), block %d: worst channel relative error %.3g", names[kind],
                            band ? " band-pass" : "", p.nfir, b, worst);
                cr_assert_lt(worst, 1e-5, "cf %s%s block %d: relative error %.3g", names[kind], band ? " band-pass" : "",
                             b, worst);
            }
            dev_free(&GPU, dstate);
            dev_free(&GPU, dcoef);
            dev_free(&GPU, din);
            dev_free(&GPU, dout);
            free(sc);
            cf_params_free(&p);
            config_free(&cfg);
        }
    free(in);
    free(oc);
    free(og);
#endif
}

Test(gpu_locate, cf_combine_matches_cpu)
{
    GPU_REQUIRED();
#ifdef SEISLIVE_CUDA
    struct sl_device g;
    cr_assert_eq(backend_select("cuda:0", &g), 0, "%s", err_msg());
    const int nch = 30, nrow = 21, n = 611, cs = 640, rs = 650;
    float *ch = malloc((size_t)nch * cs * sizeof(float));
    for (size_t i = 0; i < (size_t)nch * cs; i++)
        ch[i] = frand() < 0.05f ? NAN : 2.0f * frand();
    for (int i = 0; i < cs; i++)
        ch[(size_t)4 * cs + i] = NAN; /* a dead channel */
    int rowch[21 * CF_MAXC];
    for (int r = 0; r < nrow; r++)
        for (int c = 0; c < CF_MAXC; c++)
            rowch[r * CF_MAXC + c] = r == 7 || c > r % CF_MAXC ? -1 : (r * 3 + c * 5) % nch;
    rowch[9 * CF_MAXC] = 4; /* one of row 9's channels is the dead one */
    int *drc = dev_put(rowch, sizeof rowch);
    float *dch = dev_put(ch, (size_t)nch * cs * sizeof(float));
    float *drows = dev_put(NULL, (size_t)nrow * rs * sizeof(float));
    float *rc = malloc((size_t)nrow * rs * sizeof(float)), *rg = malloc((size_t)nrow * rs * sizeof(float));
    for (int log_out = 0; log_out <= 1; log_out++) {
        cr_assert_eq(dev_fill_ff_2d(&GPU, drows, (size_t)rs * sizeof(float), (size_t)rs * sizeof(float), (size_t)nrow),
                     0, "%s", err_msg());
        cf_combine_cpu(nrow, n, rowch, ch, (size_t)cs, rc, (size_t)rs, log_out);
        cr_assert_eq(cf_combine_cuda(nrow, n, drc, dch, (size_t)cs, drows, (size_t)rs, log_out, NULL), 0, "%s",
                     err_msg());
        dev_get(rg, drows, (size_t)nrow * rs * sizeof(float));
        double num = 0, den = 0;
        for (int r = 0; r < nrow; r++)
            for (int i = 0; i < n; i++) {
                float a = rg[(size_t)r * rs + i], b = rc[(size_t)r * rs + i];
                cr_assert_eq(isnan(a), isnan(b), "log %d row %d sample %d: GPU %g CPU %g", log_out, r, i, a, b);
                if (r == 7)
                    cr_assert(isnan(b), "a row without channels is NaN");
                if (!isnan(b)) {
                    num += ((double)a - b) * ((double)a - b);
                    den += (double)b * b;
                }
            }
        double e = sqrt(num / den);
        cr_log_info("cf combine (log %d): relative error %.3g", log_out, e);
        cr_assert_lt(e, 1e-5, "combine (log %d): relative error %.3g", log_out, e);
    }
    free(ch), free(rc), free(rg);
    dev_free(&GPU, drc), dev_free(&GPU, dch), dev_free(&GPU, drows);
#endif
}

#ifdef SEISLIVE_CUDA
/* ---- the engine on both backends ------------------------------------------------------ */

struct engine_out {
    struct synth_found found;
    float *m, *coh;
    int32_t *j;
    size_t nt, ncoh, cap_t, cap_c;
};

static void eng_trace(int64_t t, float m, int32_t j, int live, double level, void *user)
{
    struct engine_out *o = user;
    (void)t, (void)live, (void)level;
    if (o->nt == o->cap_t) {
        o->cap_t = o->cap_t ? 2 * o->cap_t : 4096;
        o->m = realloc(o->m, o->cap_t * sizeof(float));
        o->j = realloc(o->j, o->cap_t * sizeof(int32_t));
    }
    o->m[o->nt] = m;
    o->j[o->nt++] = j;
}

static void eng_coh(const float *coh, const struct tt_grid *g, int64_t seq, int64_t t0, int64_t t1, void *user)
{
    struct engine_out *o = user;
    size_t nj = (size_t)g->n[0] * g->n[1] * g->n[2];
    (void)seq, (void)t0, (void)t1;
    while (o->ncoh + nj > o->cap_c) {
        o->cap_c = o->cap_c ? 2 * o->cap_c : 65536;
        o->coh = realloc(o->coh, o->cap_c * sizeof(float));
    }
    memcpy(o->coh + o->ncoh, coh, nj * sizeof(float));
    o->ncoh += nj;
}

/* The engine on DEV over the synthetic stream S cut into blocks of uneven sizes, with
 * CHAN_OK marking dead channels. */
static void run_engine(const struct sl_device *dev, const struct synth *s, const uint8_t *chan_ok,
                       struct engine_out *o)
{
    struct sl_config cfg;
    synth_config(&cfg);
    cfg.locate.block_samples = 500;
    cfg.locate.mad_window = 6.0;
    struct locate_engine *e = NULL;
    cr_assert_eq(locate_engine_from_config(&e, &cfg, dev, &s->st), 0, "%s", err_msg());
    locate_engine_on_event(e, synth_on_event, &o->found);
    locate_engine_on_trace(e, eng_trace, o);
    locate_engine_on_coherence(e, eng_coh, o);
    static const int cuts[] = {700, 333, 1024, 1, 517};
    cr_assert_eq(synth_feed(e, s, cuts, 5, NULL, chan_ok), 0, "%s: %s", dev->name, err_msg());
    locate_engine_destroy(e);
    config_free(&cfg);
}
#endif

Test(gpu_locate, engine_gpu_matches_cpu_on_a_stream, .timeout = 120)
{
    GPU_REQUIRED();
#ifdef SEISLIVE_CUDA
    struct sl_device gpu, cpu = {.kind = SL_DEVICE_CPU, .index = -1};
    cr_assert_eq(backend_select("cuda:0", &gpu), 0, "%s", err_msg());
    snprintf(cpu.name, sizeof cpu.name, "CPU");
    /* 36 stations at trace SNR 3, 3000 samples of 4 ms, two events; station 5 dead, a
     * gap on station 9's vertical */
    static const double ev[2][4] = {{437.0, 612.0, 655.0, 4.0}, {320.0, 250.0, 530.0, 8.5}};
    struct synth s = {.nev = 2};
    memcpy(s.ev, ev, sizeof ev);
    synth_make(&s, 36, 3000, 0.004, 3.0, 11);
    const int nch = 3 * s.nsta;
    uint8_t *ok = malloc((size_t)nch);
    for (int c = 0; c < nch; c++)
        ok[c] = c / 3 != 5;
    for (int i = 1200; i < 1400; i++)
        s.data[(size_t)(3 * 9) * s.ns + i] = NAN;
    struct engine_out oc = {0}, og = {0};
    run_engine(&cpu, &s, ok, &oc);
    run_engine(&gpu, &s, ok, &og);
    cr_assert_eq(og.nt, oc.nt, "stacked times: GPU %zu, CPU %zu", og.nt, oc.nt);
    cr_assert_eq(og.ncoh, oc.ncoh, "coherence values: GPU %zu, CPU %zu", og.ncoh, oc.ncoh);
    int jd = 0;
    for (size_t t = 0; t < oc.nt; t++)
        jd += og.j[t] != oc.j[t];
    double em = test_rel_l2_f32(og.m, oc.m, oc.nt), ec = test_rel_l2_f32(og.coh, oc.coh, oc.ncoh);
    cr_log_info("engine: %zu times, %zu coherence values, max trace rel. error %.3g, coherence %.3g, %d points "
                "differ, events GPU %d CPU %d",
                oc.nt, oc.ncoh, em, ec, jd, og.found.n, oc.found.n);
    cr_assert_eq(jd, 0, "%d of %zu maximum points differ", jd, oc.nt);
    cr_assert_lt(em, 1e-5, "maximum trace relative error %.3g", em);
    cr_assert_lt(ec, 1e-5, "coherence relative error %.3g", ec);
    cr_assert_eq(oc.found.n, 2, "CPU found %d events", oc.found.n);
    cr_assert_eq(og.found.n, oc.found.n, "GPU %d events, CPU %d", og.found.n, oc.found.n);
    for (int k = 0; k < oc.found.n; k++) {
        const struct locate_event *a = &og.found.ev[k], *b = &oc.found.ev[k];
        cr_log_info("event %d: GPU t %lld (%.2f, %.2f, %.2f) c %.6g; CPU t %lld (%.2f, %.2f, %.2f) c %.6g", k,
                    (long long)a->origin_ns, a->x, a->y, a->z, a->coalescence, (long long)b->origin_ns, b->x, b->y,
                    b->z, b->coalescence);
        cr_assert(a->sample == b->sample && a->ix == b->ix && a->iy == b->iy && a->iz == b->iz &&
                      a->rows_used == b->rows_used, "event %d: peak sample/cell/rows differ", k);
        cr_assert_lt(fabs(a->coalescence - b->coalescence), 1e-5 * fabs(b->coalescence), "event %d coalescence", k);
        cr_assert_lt(fabs(a->x - b->x) + fabs(a->y - b->y) + fabs(a->z - b->z), 1e-2, "event %d location", k);
        cr_assert_lt(llabs(a->origin_ns - b->origin_ns), 1000, "event %d origin", k);
    }
    free(oc.m), free(oc.j), free(oc.coh), free(og.m), free(og.j), free(og.coh);
    free(ok);
    synth_free(&s);
#endif
}
