/* bench_rtm — `seislive-bench rtm`: migrate one reference shot with each source-wavefield
 * strategy and print time and peak device memory per strategy, next to the time the
 * propagator's own step rate (measured here on the same grid, as the stencil benchmark
 * does) predicts for the same number of steps; the gap is the cost of imaging,
 * strips/checkpoints, injection and setup.
 *
 * Reference shot (defaults): 8th order, 400 x 400 x 200 points at 12.5 m including
 * absorbing layers of the config's default width (12 cells; 10 with --physics tti, 20
 * before 2026-11-24: the reference interior 360 x 360 x 160 is --n 380 380 180 now),
 * 3000 steps, 200 x 200 receivers, v(z) 2000..3500 m/s.
 * A strategy whose memory does not fit the device is listed with what it would need.
 *
 *   seislive-bench rtm [--json] [--n NX NY NZ] [--pml W] [--steps N] [--rx R]
 *                      [--order K] [--d M] [--device SPEC] [--kernel auto|naive|tiled]
 *                      [--strategies a,b,...] [--image-every K|auto] [--repeat N]
 *                      [--one-stream] [--imaging-scalar] [--u-ahead on|off] [--verbose]
 *                      [--physics acoustic|tti]
 *                      [--cpml-memory fp32|bf16]
 *                      [--backward separate|fused|image] [--fused-variant N]
 *                      [--strip-store auto|device|host] [--strip-stages N] [--host-budget MIB]
 *                      [--pin pieces|alloc|register] [--pin-probe GIB] [--ring-shape F/Z]
 *
 * --ring-shape F/Z runs the ring CPML's frame and z layers in a research shape
 * (tools/wave_research.cu, order 8; as seislive-bench stencil --ring-shape; stderr names it).
 *
 * --physics tti migrates the same shot through the TTI propagator (kernels/tti.h): v(z)
 * is v_pz, with eps 0.2, delta 0.1, a 30 degree tilt at azimuth 20 degrees everywhere
 * (constants: the kernels read the same packed medium either way) and dt 0.9 of the
 * TTI limit (tti_dt_max) instead of the acoustic one.
 *
 * --cpml-memory bf16 stores the CPML memory in bfloat16 ([propagator] cpml_memory; its
 * floor then counts 8 B per element).
 *
 * --one-stream and --imaging-scalar set the engine's tuning (struct rtm_tuning,
 * docs/TUNING.md): boundary and random step both wavefields on one CUDA stream; the
 * imaging condition accumulates one cell per thread instead of four (float4).  --u-ahead
 * on lets the source wavefield's reverse step run beside the receiver's step before the
 * imaging of that level (enum rtm_u_ahead).  None changes the image.  --backward fused runs the backward sweep of boundary and random in
 * one fused pass instead of the separate ones, --backward image the imaging condition
 * inside the receiver step (kernels/rtm_fused.h, enum rtm_backward; the same image),
 * --fused-variant N (0..3) the fused kernel in another shape.
 *
 * --strip-store host keeps boundary's strips in page-locked host memory (staged through
 * --strip-stages device strips, 3 by default; --host-budget the MiB they may take, the
 * config's host_memory_budget: 0, the default, is 80 % of the free host memory), device keeps them on the device, auto (the
 * default, the config's) on the device when they fit and else on the host
 * (kernels/rtm_strips.h).  The header line gives the host link's rate measured in the
 * same run (cudaMemcpyAsync between page-locked host memory and the device, each
 * direction alone, 256 MiB x 8), and the boundary row says where its strips were, the
 * seconds their pinned allocation took (first run; later runs reuse the engine's), and
 * the time the strips' copies take at that link rate (they overlap the steps).
 *
 * --pin chooses how the host store is pinned (rtm_tuning.strip_pin, enum dev_pin_how,
 * kernels/device.h: pieces, the default, registered by 8 threads; cudaHostAlloc; or one
 * cudaHostRegister); --pin-probe GIB first times the three for GIB GiB (and their
 * freeing) and prints it above the tables.
 *
 * --image-every auto images at the engine's default interval (image_every = 0:
 * floor(1 / (2 fmax dt)), kernels/rtm.h); the tables say the interval each run used.
 *
 * --repeat N migrates the shot N times per strategy and reports the median time (and
 * the fastest and slowest); a second table splits the median run into its phases.
 *
 * Byte floor (a third table): the bytes each strategy must move on this shot, over the
 * device-to-device copy bandwidth measured in the same run (CUDA; "n/a" on the CPU),
 * and the share of that floor the median run reached.  Counted per step and phase from
 * the steps the run made (rtm_shot_stats), with N the padded points, I the points inside
 * the layers, E the CPML memory elements (psi and zeta of every axis's layers), S the
 * boundary strip's cells, C the image box's cells, nt steps, every k-th one imaged:
 *   propagation step with CPML     16 N + 16 E  (p(n), p(n-1), v read, p(n+1) written;
 *                                               psi and zeta read and written; TTI:
 *                                               36 N + 48 E, tools/bench_stencil_tti.c)
 *   step without CPML (random u)   16 N
 *   reverse step of boundary's u   16 I         (the interior only; strips restore the rest)
 *   strip saved / loaded           4 S each     (the buffer side; the field side is the
 *                                               step's own write)
 *   checkpoint stored / restored   the state's bytes (both levels and the CPML memory)
 *   u stored / read back (full,    4 C each
 *     uniform checkpoint buffers)
 *   imaging step                   8 C per accumulator read-modified-written: the image
 *                                  and the source illumination, plus the receiver
 *                                  illumination where the condition needs it (u and q
 *                                  are read by their own steps; a fused pass reads them
 *                                  once)
 * and per strategy:
 *   boundary    nt forward CPML steps + (nt-2) saved strips; (nt-2) reverse steps + loaded
 *               strips; nt-1 receiver CPML steps; nt/k imaging steps
 *   random      nt forward steps without CPML + (nt-2) reverse ones over the whole grid;
 *               receiver and imaging as boundary
 *   checkpoint  the schedule's forward CPML steps (recomputation included), its stores and
 *               restores (binomial), or its segment buffers (uniform); receiver, imaging
 *   full        nt forward CPML steps, nt/k fields stored and read back; receiver, imaging
 * These are the least any implementation of the strategy moves; the time at the copy
 * bandwidth is an upper bound on speed, not a target that counts compute. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "conf/config.h"
#include "io/shot.h"
#include "kernels/backend.h"
#include "kernels/device.h"
#include "kernels/imaging.h"
#include "kernels/propagator.h"
#include "kernels/revolve.h"
#include "kernels/rtm.h"
#include "kernels/rtm_strips.h"
#include "kernels/stability.h"
#include "kernels/tti.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "stream/log.h"
#include "tools/bench.h"
#include "tools/wave_research.h"

/* BYTES of host memory for the shot, page-locked on a CUDA DEV (NULL on failure, with
 * err_msg() saying why). */
static float *payload_alloc(const struct sl_device *dev, size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        err_set(-errno, "mmap: %s", strerror(errno));
        return NULL;
    }
    if (dev_host_register(dev, p, bytes) < 0) {
        munmap(p, bytes);
        return NULL;
    }
    return p;
}

static void payload_free(const struct sl_device *dev, float *p, size_t bytes)
{
    dev_host_unregister(dev, p);
    munmap(p, bytes);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Step rate of the plain propagator on P (points of the padded grid per second). */
static int step_rate(const struct sl_device *dev, const struct prop_params *p, const struct prop_model *m,
                     double *pts_s)
{
    struct prop *s;
    int rc = prop_create(dev, p, m, &s);
    if (rc < 0)
        return rc;
    const struct prop_layout *L = prop_layout(s);
    double npad = (double)L->npad[0] * L->npad[1] * L->npad[2];
    int warm = 5, reps = dev->kind == SL_DEVICE_CUDA ? 100 : 5;
    for (int i = 0; i < warm && rc == 0; i++)
        rc = prop_step(s);
    if (rc == 0)
        rc = prop_sync(s);
    double t0 = now_s();
    for (int i = 0; i < reps && rc == 0; i++)
        rc = prop_step(s);
    if (rc == 0)
        rc = prop_sync(s);
    double t = now_s() - t0;
    prop_destroy(s);
    *pts_s = npad * reps / t;
    return rc;
}

/* The sizes the byte floor counts (see the comment at the top). */
struct floor_in {
    double N, I, E, S, C; /* padded points, points inside the layers, CPML memory elements,
                             strip cells, image cells */
    double bpp, bpe;      /* bytes per point of a step, per CPML memory element */
    double state;         /* bytes of one checkpoint */
    double acc;           /* bytes per image cell of an imaging step (8 per accumulator) */
};

/* Bytes of each phase of the run ST of strategy STRATEGY: forward, reverse (or
 * recomputation), strips / checkpoints / stored fields, receiver, imaging. */
enum { PH_FWD, PH_REV, PH_KEEP, PH_RCV, PH_IMG, PH_N };
static int floor_bytes(int strategy, const struct rtm_shot_stats *st, const struct floor_in *f, double b[PH_N])
{
    const double nt = st->nt, k = st->image_every > 0 ? st->image_every : 1;
    const double nimg = floor(nt / k), cpml = f->bpp * f->N + f->bpe * f->E;
    memset(b, 0, PH_N * sizeof *b);
    b[PH_RCV] = (double)st->bwd_steps * cpml;
    b[PH_IMG] = nimg * f->acc * f->C;
    switch (strategy) {
    case RTM_BOUNDARY:
        b[PH_FWD] = nt * cpml;
        b[PH_REV] = ((double)st->fwd_steps - nt) * f->bpp * f->I;
        b[PH_KEEP] = 2.0 * (nt - 2) * 4.0 * f->S;
        return 0;
    case RTM_RANDOM:
        if (st->schedule == RTM_RANDOM_FORWARD) {
            b[PH_FWD] = nt * f->bpp * f->N;
            b[PH_KEEP] = 2.0 * nimg * 4.0 * f->C;
            return 0;
        }
        b[PH_FWD] = nt * f->bpp * f->N;
        b[PH_REV] = ((double)st->fwd_steps - nt) * f->bpp * f->N;
        return 0;
    case RTM_FULL:
        b[PH_FWD] = (double)st->fwd_steps * cpml;
        b[PH_KEEP] = 2.0 * nimg * 4.0 * f->C;
        return 0;
    case RTM_CHECKPOINT: {
        /* the schedule the engine ran (same N = nt + 1 states and slots) */
        struct rv_schedule sch;
        int rc = st->schedule == RTM_CKPT_UNIFORM ? revolve_uniform(st->nt + 1, st->snaps, &sch)
                                                  : revolve_binomial(st->nt + 1, st->snaps, &sch);
        if (rc < 0)
            return rc;
        b[PH_FWD] = (double)st->fwd_steps * cpml;
        for (size_t i = 0; i < sch.n_ops; i++) {
            const struct rv_op *o = &sch.ops[i];
            if (o->act == RV_STORE || o->act == RV_RESTORE)
                b[PH_KEEP] += f->state;
            else if ((o->act == RV_STORE_BUF || o->act == RV_VISIT_BUF) && o->from >= 1)
                b[PH_KEEP] += 4.0 * f->C;
        }
        revolve_free(&sch);
        return 0;
    }
    }
    return err_set(-EINVAL, "strategy %d", strategy);
}

/* Strip cells and checkpoint bytes of the source wavefield's simulation of P. */
static int shot_sizes(const struct sl_device *dev, const struct prop_params *p, const struct prop_model *m,
                      double *strip, double *state)
{
    struct prop *s;
    int rc = prop_create(dev, p, m, &s);
    if (rc < 0)
        return rc;
    *strip = (double)prop_strip_count(s);
    *state = (double)prop_state_bytes(s);
    prop_destroy(s);
    return 0;
}

struct row {
    const char *name;
    int strategy, schedule;
    int ran;
    double secs, pred, lo, hi;
    double floor_b[PH_N], floor_s; /* byte floor per phase (bytes), its time at the copy bandwidth */
    struct rtm_shot_stats st;   /* the median run */
    size_t peak, alloc, need;
    bool measured;          /* peak is a measurement (cudaMemGetInfo low-water mark) */
    long steps;
    int image_every;
    double pin_s;           /* boundary, host strips: the first run's pinned allocation (s) */
    char note[240];
};

/* The host link's rate (GB/s, each direction alone): BYTES of page-locked host memory to
 * and from the device, REPS times, cudaMemcpyAsync on a stream between two events. */
static int link_bandwidth(const struct sl_device *dev, size_t bytes, int reps, double *h2d, double *d2h)
{
    *h2d = *d2h = 0;
    void *h = NULL, *dbuf = NULL, *st = NULL, *t0 = NULL, *t1 = NULL;
    int rc = dev_host_alloc(dev, bytes, DEV_PIN_ALLOC, 0, &h);
    if (rc == 0)
        rc = dev_alloc(dev, bytes, &dbuf);
    if (rc == 0)
        rc = dev_stream_create(dev, &st);
    if (rc == 0)
        rc = dev_event_create(dev, &t0, true);
    if (rc == 0)
        rc = dev_event_create(dev, &t1, true);
    if (rc == 0) {
        memset(h, 0, bytes);
        rc = dev_copy(dev, dbuf, h, bytes, DEV_H2D, st); /* warm up */
    }
    for (int dir = 0; dir < 2 && rc == 0; dir++) {
        float ms = 0;
        rc = dev_event_record(dev, t0, st);
        for (int r = 0; r < reps && rc == 0; r++)
            rc = dir == 0 ? dev_copy(dev, dbuf, h, bytes, DEV_H2D, st) : dev_copy(dev, h, dbuf, bytes, DEV_D2H, st);
        if (rc == 0)
            rc = dev_event_record(dev, t1, st);
        if (rc == 0)
            rc = dev_event_sync(dev, t1);
        if (rc == 0)
            rc = dev_event_elapsed_ms(dev, t0, t1, &ms);
        if (rc == 0 && ms > 0)
            *(dir == 0 ? h2d : d2h) = (double)bytes * reps / (ms * 1e-3) * 1e-9;
    }
    dev_event_destroy(dev, t0);
    dev_event_destroy(dev, t1);
    dev_stream_destroy(dev, st);
    dev_free(dev, dbuf);
    dev_host_free(dev, h, bytes, DEV_PIN_ALLOC, 0);
    return rc;
}

/* Seconds to make and to free GIB GiB of page-locked host memory each way (enum
 * dev_pin_how), printed: what the first shot whose strips go to the host pays. */
static int pin_probe(const struct sl_device *dev, double gib)
{
    const size_t bytes = (size_t)(gib * 1073741824.0), unit = (size_t)30 << 20; /* about a TTI strip */
    static const char *const names[3] = {"pieces (mmap + parallel first touch + 8 threads registering)",
                                         "cudaHostAlloc", "register (mmap + parallel first touch + one register)"};
    for (int how = 0; how < 3; how++) {
        void *p = NULL;
        double t0 = now_s();
        int rc = dev_host_alloc(dev, bytes, how, unit, &p);
        double t1 = now_s();
        if (rc < 0) {
            printf("pinning %.1f GiB by %s: failed: %s\n", gib, names[how], err_msg());
            continue;
        }
        /* the pages are usable: a copy to the device from the far end of the last piece */
        void *d = NULL;
        rc = dev_alloc(dev, 1 << 20, &d);
        if (rc == 0)
            rc = dev_copy(dev, d, (char *)p + bytes - (1 << 20), 1 << 20, DEV_H2D, NULL);
        dev_free(dev, d);
        double t2 = now_s();
        dev_host_free(dev, p, bytes, how, unit);
        double t3 = now_s();
        printf("pinning %.1f GiB by %s: %.2f s (%.1f GiB/s), freeing %.2f s%s\n", gib, names[how], t1 - t0,
               gib / (t1 - t0), t3 - t2, rc < 0 ? " (copy from it failed)" : "");
        fflush(stdout); /* seen even when a later run is cut short */
        if (rc < 0)
            return rc;
    }
    return 0;
}

int bench_rtm(int argc, char **argv)
{
    int ntot[3] = {400, 400, 200}, steps = 3000, rx = 200, order = 8, json = 0, kernel = 0;
    int pml = -1; /* the config's default, below */
    int every = 1, repeat = 1, verbose = 0, cpml_memory = WAVE_CPML_MEM_FP32;
    bool tti = false;
    int strip_store = RTM_STRIPS_AUTO;
    double host_budget = 0, probe_gib = 0; /* MiB, GiB */
    struct rtm_tuning tuning = {0};
    double d = 12.5;
    const char *device = "auto", *list = "boundary,random,checkpoint,checkpoint-uniform,full";
    const char *ring_shape = NULL; /* --ring-shape: the ring CPML's research shape (order 8) */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--n") && i + 3 < argc) {
            for (int a = 0; a < 3; a++)
                ntot[a] = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--pml") && i + 1 < argc)
            pml = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--physics") && i + 1 < argc && (!strcmp(argv[i + 1], "tti") ||
                                                                    !strcmp(argv[i + 1], "acoustic")))
            tti = !strcmp(argv[++i], "tti");
        else if (!strcmp(argv[i], "--verbose"))
            verbose = 1;
        else if (!strcmp(argv[i], "--one-stream"))
            tuning.one_stream = true;
        else if (!strcmp(argv[i], "--imaging-scalar"))
            tuning.imaging_scalar = true;
        else if (!strcmp(argv[i], "--u-ahead") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "on") || !strcmp(argv[i + 1], "off")))
            tuning.u_ahead = !strcmp(argv[++i], "on") ? RTM_U_AHEAD_ON : RTM_U_AHEAD_OFF;
        else if (!strcmp(argv[i], "--cpml-memory") && i + 1 < argc) {
            i++;
            cpml_memory = !strcmp(argv[i], "fp32") ? WAVE_CPML_MEM_FP32 : !strcmp(argv[i], "bf16") ? WAVE_CPML_MEM_BF16 : -1;
            if (cpml_memory < 0) {
                fprintf(stderr, "bench rtm: --cpml-memory takes fp32 or bf16\n");
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--image-every") && i + 1 < argc) {
            i++;
            every = !strcmp(argv[i], "auto") ? 0 : atoi(argv[i]);
            if (every < 1 && strcmp(argv[i], "auto")) {
                fprintf(stderr, "bench rtm: --image-every takes a whole number >= 1 or auto\n");
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--backward") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "fused") || !strcmp(argv[i + 1], "separate") || !strcmp(argv[i + 1], "image"))) {
            i++;
            tuning.backward = !strcmp(argv[i], "fused") ? RTM_BACKWARD_FUSED
                              : !strcmp(argv[i], "image") ? RTM_BACKWARD_IMAGE : RTM_BACKWARD_SEPARATE;
        }
        else if (!strcmp(argv[i], "--strip-store") && i + 1 < argc) {
            i++;
            strip_store = !strcmp(argv[i], "auto") ? RTM_STRIPS_AUTO : !strcmp(argv[i], "device") ? RTM_STRIPS_DEVICE
                          : !strcmp(argv[i], "host") ? RTM_STRIPS_HOST : -1;
            if (strip_store < 0) {
                fprintf(stderr, "bench rtm: --strip-store takes auto, device or host\n");
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--pin") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "pieces") || !strcmp(argv[i + 1], "alloc") || !strcmp(argv[i + 1], "register"))) {
            i++;
            tuning.strip_pin = !strcmp(argv[i], "register") ? DEV_PIN_REGISTER
                               : !strcmp(argv[i], "alloc")  ? DEV_PIN_ALLOC : DEV_PIN_PIECES;
        }
        else if (!strcmp(argv[i], "--pin-probe") && i + 1 < argc)
            probe_gib = atof(argv[++i]);
        else if (!strcmp(argv[i], "--host-budget") && i + 1 < argc)
            host_budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "--strip-stages") && i + 1 < argc)
            tuning.strip_stages = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fused-variant") && i + 1 < argc)
            tuning.fused_variant = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rx") && i + 1 < argc)
            rx = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--order") && i + 1 < argc)
            order = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--d") && i + 1 < argc)
            d = atof(argv[++i]);
        else if (!strcmp(argv[i], "--device") && i + 1 < argc)
            device = argv[++i];
        else if (!strcmp(argv[i], "--strategies") && i + 1 < argc)
            list = argv[++i];
        else if (!strcmp(argv[i], "--kernel") && i + 1 < argc) {
            i++;
            kernel = !strcmp(argv[i], "naive") ? 1 : !strcmp(argv[i], "tiled") ? 2 : 0; /* prop_tuning.kernel */
        }
        else if (!strcmp(argv[i], "--ring-shape") && i + 1 < argc)
            ring_shape = argv[++i];
        else {
            fprintf(stderr, "bench rtm: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    const bool pml_given = pml >= 0;
    if (!pml_given) { /* [propagator] pml_width's default for the physics (conf/config.h) */
        struct rtm_params def;
        rtm_params_init(&def);
        pml = tti ? CONFIG_TTI_PML_WIDTH : def.pml[0];
    }
    int n[3];
    for (int a = 0; a < 3; a++) {
        n[a] = ntot[a] - 2 * pml;
        if (n[a] < 8 || steps < 2 || rx < 1 || every < 0 || repeat < 1 || repeat > 99) {
            fprintf(stderr, "bench rtm: grid %d x %d x %d with %d-cell layers, %d steps, %d receivers: too small\n",
                    ntot[0], ntot[1], ntot[2], pml, steps, rx);
            return 2;
        }
    }
    if (ring_shape) {
#ifdef SEISLIVE_CUDA
        wave_research_register(); /* the shapes no default uses (tools/wave_research.cu) */
        if (wave_research_ring_shape(ring_shape) < 0) {
            fprintf(stderr, "bench rtm: --ring-shape: %s\n", err_msg());
            return 2;
        }
        fprintf(stderr, "bench rtm: ring CPML shape (frame/z layers, order 8): %s\n", ring_shape);
#else
        fprintf(stderr, "bench rtm: --ring-shape needs a CUDA build\n");
        return 2;
#endif
    }
    log_set_level(verbose ? LOG_DEBUG : LOG_WARN);
    struct sl_device dev;
    if (backend_select(device, &dev) < 0) {
        fprintf(stderr, "bench rtm: %s\n", err_msg());
        return 1;
    }
    if (probe_gib > 0 && pin_probe(&dev, probe_gib) < 0) {
        fprintf(stderr, "bench rtm: pin probe: %s\n", err_msg());
        return 1;
    }
    /* model: v(z) from 2000 to 3500 m/s */
    size_t cells = (size_t)n[0] * n[1] * n[2];
    float *v = malloc(cells * sizeof(float));
    if (!v)
        return 1;
    for (int z = 0; z < n[2]; z++)
        for (size_t i = 0; i < (size_t)n[0] * n[1]; i++)
            v[(size_t)z * n[0] * n[1] + i] = (float)(2000.0 + 1500.0 * z / (n[2] - 1));
    /* the engine's parameters: the config's defaults (rtm_params_init) and the above */
    struct rtm_params prm;
    rtm_params_init(&prm);
    prm.order = order;
    prm.f_peak = 10.0;
    prm.f_ref = 10.0;
    prm.prop_tuning.kernel = kernel;
    prm.cpml_memory = cpml_memory;
    const double dd[3] = {d, d, d};
    /* TTI: the reference medium below, dt from its (smaller) limit */
    const double te = 0.2, tdl = 0.1, tth = M_PI / 6, tph = M_PI / 9;
    prm.physics = tti ? PROP_TTI : PROP_ACOUSTIC;
    prm.dt = 0.9 * (tti ? tti_dt_max(order, dd, false, 3500.0, te, tdl, tth, tph, prm.tti_sigma)
                        : stability_dt_max(order, dd, 3500.0));
    prm.t_max = steps * prm.dt; /* the shot's record length (the engine's bound) */
    for (int f = 0; f < 6; f++)
        prm.pml[f] = pml;
    if (tti && !pml_given) { /* the whole TTI default profile, not its width alone */
        prm.pml_degree = CONFIG_TTI_PML_DEGREE;
        prm.pml_reflection = CONFIG_TTI_PML_REFLECTION;
    }
    prm.free_surface = false;
    prm.aperture = 1e9;
    prm.imaging = IMAGING_XCORR;
    prm.image_every = every;
    /* --pml W: random layers of W too; without it the config's default random_width
     * (20, wider than the default 12 CPML layers: random layers of 12 scatter back
     * 0.74 of the image in rtm_strategies::random_image_close_to_full's shot, 20 0.84 %) */
    if (pml_given)
        prm.random.width = pml;
    prm.checkpoint_schedule = RTM_CKPT_BINOMIAL;
    prm.tuning = tuning;
    prm.strip_store = strip_store;
    prm.host_memory_budget = host_budget;
    struct rtm_volume vol = {.n = {n[0], n[1], n[2]}, .d = {d, d, d}, .o = {0, 0, 0}, .v = v};
    if (tti) {
        vol.epsilon0 = te;
        vol.delta0 = tdl;
        vol.theta0 = tth;
        vol.phi0 = tph;
    }
    struct rtm_engine *e = NULL;
    int rc = rtm_engine_create(&prm, &dev, &vol, &e);
    if (rc < 0) {
        fprintf(stderr, "bench rtm: %s\n", err_msg());
        free(v);
        return 1;
    }
    /* the shot: source in the middle 2 cells down, an rx x rx receiver grid over the
     * interior at the same depth, synthetic traces (a reflection hyperbola: the work
     * does not depend on the data) */
    double dt = prm.dt;
    struct shot sh = {0};
    sh.id = 1;
    sh.ns = steps + 1;
    sh.dt = dt;
    sh.ntr = rx * rx;
    sh.src[0] = (n[0] / 2) * d;
    sh.src[1] = (n[1] / 2) * d;
    sh.src[2] = 2 * d;
    /* page-locked on a CUDA device, as the pipeline's slots are (stream/slots.c): the
     * traces go up at the pinned rate, not the pageable one */
    const size_t payload = shot_payload_bytes(sh.ntr, sh.ns);
    float *img = NULL;
    int status = 1; /* until the tables are printed */
    if (!(sh.rec = payload_alloc(&dev, payload))) {
        fprintf(stderr, "bench rtm: shot payload (%zu bytes): %s\n", payload, err_msg());
        goto out;
    }
    sh.data = sh.rec + (size_t)sh.ntr * 3;
    img = malloc(cells * sizeof(float));
    if (!img) {
        fprintf(stderr, "bench rtm: out of host memory\n");
        goto out;
    }
    double span[2] = {(n[0] - 5) * d, (n[1] - 5) * d};
    for (int j = 0; j < rx; j++)
        for (int i = 0; i < rx; i++) {
            size_t r = (size_t)j * rx + i;
            double x = 2 * d + (rx > 1 ? span[0] * i / (rx - 1) : 0), y = 2 * d + (rx > 1 ? span[1] * j / (rx - 1) : 0);
            sh.rec[3 * r] = (float)x;
            sh.rec[3 * r + 1] = (float)y;
            sh.rec[3 * r + 2] = (float)(2 * d);
            double off = hypot(x - sh.src[0], y - sh.src[1]), t0 = 0.15 + hypot(off, 2 * 0.6 * n[2] * d) / 2500.0;
            for (int k = 0; k < sh.ns; k++)
                sh.data[r * (size_t)sh.ns + (size_t)k] = (float)wavelet_ricker(k * dt, 10.0, t0);
        }
    /* what the propagator alone would take for the same steps */
    struct prop_params pp;
    const double o0[3] = {0, 0, 0};
    prop_params_init(&pp, n, dd, o0, dt, pml);
    pp.op.order = order;
    pp.pml_reflection = prm.pml_reflection;
    pp.cpml_memory = cpml_memory;
    pp.f_ref = 10.0;
    pp.tuning.kernel = kernel;
    pp.physics = prm.physics;
    pp.tti_sigma = prm.tti_sigma;
    const struct prop_model pm = {.vp = v, .epsilon0 = vol.epsilon0, .delta0 = vol.delta0, .theta0 = vol.theta0,
                                  .phi0 = vol.phi0};
    double rate = 0;
    if ((rc = step_rate(&dev, &pp, &pm, &rate)) < 0) {
        fprintf(stderr, "bench rtm: %s\n", err_msg());
        goto out;
    }
    double npad = (double)ntot[0] * ntot[1] * ntot[2];
    /* the byte floor's sizes and the copy bandwidth of this device (CUDA only) */
    struct floor_in fl = {.N = npad, .I = (double)n[0] * n[1] * n[2], .C = (double)cells, .bpp = tti ? 36 : 16,
                          .bpe = tti ? 48 : cpml_memory == WAVE_CPML_MEM_BF16 ? 8 : 16, .acc = 8.0 * (2 + (imaging_needs_receiver(prm.imaging) ? 1 : 0))};
    for (int a = 0; a < 3; a++)
        fl.E += 2.0 * pml * npad / ntot[a]; /* axis a's two layers span the other two axes */
    if ((rc = shot_sizes(&dev, &pp, &pm, &fl.S, &fl.state)) < 0) {
        fprintf(stderr, "bench rtm: %s\n", err_msg());
        goto out;
    }
    double bw = 0; /* GB/s, read + write */
    if (dev.kind == SL_DEVICE_CUDA && wave_copy_bandwidth(&dev, (size_t)1 << 30, 20, &bw) < 0) {
        fprintf(stderr, "bench rtm: copy bandwidth: %s\n", err_msg());
        goto out;
    }
    double link_h2d = 0, link_d2h = 0; /* GB/s */
    if (dev.kind == SL_DEVICE_CUDA && link_bandwidth(&dev, (size_t)256 << 20, 8, &link_h2d, &link_d2h) < 0) {
        fprintf(stderr, "bench rtm: host link bandwidth: %s\n", err_msg());
        goto out;
    }
    if (link_h2d > 0 && !json) {
        /* first, and at once: a long run after it may be cut short */
        printf("host link (page-locked, cudaMemcpyAsync, 256 MiB x 8, each direction alone): host to device %.1f "
               "GB/s, device to host %.1f GB/s; boundary strip %.1f MB per step, strip_store %s, pinned by %s\n",
               link_h2d, link_d2h, 4.0 * fl.S * 1e-6,
               strip_store == RTM_STRIPS_HOST ? "host" : strip_store == RTM_STRIPS_DEVICE ? "device" : "auto",
               tuning.strip_pin == DEV_PIN_REGISTER ? "register" : tuning.strip_pin == DEV_PIN_ALLOC ? "alloc" : "pieces");
        fflush(stdout);
    }

    struct row rows[] = {
        {.name = "boundary", .strategy = RTM_BOUNDARY, .schedule = -1},
        {.name = "random", .strategy = RTM_RANDOM, .schedule = -1},
        {.name = "checkpoint", .strategy = RTM_CHECKPOINT, .schedule = RTM_CKPT_BINOMIAL},
        {.name = "checkpoint-uniform", .strategy = RTM_CHECKPOINT, .schedule = RTM_CKPT_UNIFORM},
        {.name = "full", .strategy = RTM_FULL, .schedule = -1},
    };
    const int nrows = (int)(sizeof rows / sizeof *rows);
    size_t need[RTM_STRATEGIES] = {0};
    const struct rtm_shot shv = {sh.id, sh.ns, sh.dt, sh.ntr, {sh.src[0], sh.src[1], sh.src[2]}, sh.rec, sh.data};
    if ((rc = rtm_engine_memory(e, &shv, need)) < 0) {
        fprintf(stderr, "bench rtm: %s\n", err_msg());
        goto out;
    }
    const double mib = 1.0 / 1048576.0;
    for (int k = 0; k < nrows; k++) {
        struct row *r = &rows[k];
        char key[64], have[1024];
        snprintf(key, sizeof key, ",%s,", r->name);
        snprintf(have, sizeof have, ",%s,", list);
        if (!strstr(have, key))
            continue;
        rtm_engine_force_strategy(e, r->strategy, r->schedule);
        if ((rc = rtm_engine_memory(e, &shv, need)) < 0) {
            fprintf(stderr, "bench rtm: %s\n", err_msg());
            goto out;
        }
        r->need = need[r->strategy];
        size_t fr = 0, tot = 0;
        dev_mem(&dev, &fr, &tot);
        /* boundary's strips may go to the host: the engine's plan decides (and refuses) */
        bool may_spill = r->strategy == RTM_BOUNDARY && strip_store != RTM_STRIPS_DEVICE;
        if (!may_spill && r->need > (size_t)(0.95 * (double)fr)) {
            snprintf(r->note, sizeof r->note, "does not fit: needs %.1f GiB, %.1f GiB free", r->need * mib / 1024,
                     fr * mib / 1024);
            continue;
        }
        struct rtm_shot_stats runs[99];
        int ok = 1;
        for (int t = 0; t < repeat && ok; t++) {
            memset(&runs[t], 0, sizeof runs[t]);
            if ((rc = rtm_engine_migrate_patch(e, &shv, img, NULL, &runs[t])) < 0) {
                snprintf(r->note, sizeof r->note, "failed: %.140s", err_msg());
                ok = 0;
            }
        }
        if (!ok)
            continue;
        r->pin_s = runs[0].strips_alloc_s;
        r->need = runs[0].mem_need[r->strategy]; /* as run: boundary's strips where they went */
        /* median by time (insertion sort of at most 99 runs) */
        for (int a = 1; a < repeat; a++)
            for (int b = a; b > 0 && runs[b].seconds < runs[b - 1].seconds; b--) {
                struct rtm_shot_stats tmp = runs[b];
                runs[b] = runs[b - 1];
                runs[b - 1] = tmp;
            }
        struct rtm_shot_stats st = runs[repeat / 2];
        r->st = st;
        r->lo = runs[0].seconds;
        r->hi = runs[repeat - 1].seconds;
        r->ran = 1;
        r->secs = st.seconds;
        /* measured or "n/a": never the allocation count in its place (it was, silently,
         * while the measurement was broken, and read as a plan-vs-measured agreement) */
        r->measured = st.mem_device_measured;
        r->peak = st.mem_device;
        r->alloc = st.mem_bytes;
        r->steps = st.fwd_steps + st.bwd_steps;
        r->pred = (double)r->steps * npad / rate;
        if ((rc = floor_bytes(r->strategy, &st, &fl, r->floor_b)) < 0) {
            fprintf(stderr, "bench rtm: byte floor: %s\n", err_msg());
            goto out;
        }
        double fb = 0;
        for (int ph = 0; ph < PH_N; ph++)
            fb += r->floor_b[ph];
        r->floor_s = bw > 0 ? fb / (bw * 1e9) : 0;
        r->image_every = st.image_every;
        double e2 = 0;
        for (size_t i = 0; i < cells; i += 97)
            e2 += (double)img[i] * img[i];
        if (!(e2 > 0) || !isfinite(e2))
            snprintf(r->note, sizeof r->note, "image is %s", isfinite(e2) ? "zero" : "not finite");
        else if (r->strategy == RTM_BOUNDARY && st.strips_host) {
            /* planned: the device's share with host strips (the allocation says it) */
            double gb = (double)st.strips_bytes * 1e-9;
            char lk[96] = "";
            if (link_h2d > 0 && link_d2h > 0)
                snprintf(lk, sizeof lk, "; at the link rate %.2f s out + %.2f s back (overlapped)", gb / link_d2h,
                         gb / link_h2d);
            snprintf(r->note, sizeof r->note, "strips in %s memory: %.2f GiB, allocated in %.2f s (first run)%s",
                     dev.kind == SL_DEVICE_CUDA ? "pinned host" : "host",
                     (double)st.strips_bytes / 1073741824.0, r->pin_s, lk);
        } else if (r->strategy == RTM_BOUNDARY) {
            snprintf(r->note, sizeof r->note, "strips on the device: %.2f GiB", (double)st.strips_bytes / 1073741824.0);
        }
    }
    if (json) {
        printf("{\"bench\":\"rtm\",\"physics\":\"%s\",\"device\":\"%s\",\"grid\":[%d,%d,%d],\"pml\":%d,\"order\":%d,\"steps\":%d,"
               "\"receivers\":%d,\"step_gpts\":%.3f,\"copy_gbs\":%.1f,\"link_h2d_gbs\":%.1f,\"link_d2h_gbs\":%.1f,\"one_stream\":%s,\"imaging_scalar\":%s,"
               "\"u_ahead\":%s,\"rows\":[",
               tti ? "tti" : "acoustic", dev.name, ntot[0], ntot[1], ntot[2], pml, order, steps, rx * rx, rate * 1e-9,
               bw, link_h2d, link_d2h,
               tuning.one_stream ? "true" : "false", tuning.imaging_scalar ? "true" : "false",
               tuning.u_ahead == RTM_U_AHEAD_ON ? "true" : "false");
        int first = 1;
        for (int k = 0; k < nrows; k++) {
            struct row *r = &rows[k];
            if (!r->ran && !r->note[0])
                continue;
            char peak[32];
            if (r->ran && r->measured)
                snprintf(peak, sizeof peak, "%.1f", r->peak * mib);
            else
                snprintf(peak, sizeof peak, "null");
            printf("%s{\"strategy\":\"%s\",\"ran\":%s,\"seconds\":%.3f,\"peak_mib\":%s,\"alloc_mib\":%.1f,"
                   "\"need_mib\":%.1f,"
                   "\"steps\":%ld,\"predicted_seconds\":%.3f,\"fastest\":%.3f,\"slowest\":%.3f,\"setup\":%.3f,"
                   "\"forward\":%.3f,\"backward\":%.3f,\"finish\":%.3f,\"image_every\":%d,\"floor_gb\":%.3f,"
                   "\"floor_seconds\":%.3f,\"strips_host\":%s,\"note\":\"%s\"}",
                   first ? "" : ",", r->name, r->ran ? "true" : "false", r->secs, peak, r->alloc * mib, r->need * mib,
                   r->steps, r->pred, r->lo, r->hi, r->st.setup_s, r->st.sweep_fwd_s, r->st.sweep_bwd_s,
                   r->st.finish_s, r->image_every,
                   (r->floor_b[0] + r->floor_b[1] + r->floor_b[2] + r->floor_b[3] + r->floor_b[4]) * 1e-9,
                   r->floor_s, r->ran && r->st.strips_host ? "true" : "false", r->note);
            first = 0;
        }
        printf("]}\n");
    } else {
        printf("rtm reference shot (%s) on %s: %d x %d x %d points at %g m including %d-cell absorbing layers, order %d, "
               "%d steps of %.3g ms, %d x %d receivers, imaging every %d step%s%s, kernel %s%s%s%s%s; propagator alone: "
               "%.2f Gpts/s; median of %d run%s\n",
               tti ? "TTI: eps 0.2, delta 0.1, tilt 30 deg" : "acoustic", dev.name, ntot[0], ntot[1], ntot[2], d,
               pml, order, steps, dt * 1e3, rx, rx, rtm_image_every_of(every, wavelet_ricker_fmax(prm.f_peak), dt),
               rtm_image_every_of(every, wavelet_ricker_fmax(prm.f_peak), dt) == 1 ? "" : "s",
               every ? "" : " (auto: floor(1 / (2 fmax dt)))", kernel == 1 ? "naive" : kernel == 2 ? "tiled" : "auto",
               tuning.one_stream ? ", one stream" : "", tuning.imaging_scalar ? ", scalar imaging" : "",
               tuning.u_ahead == RTM_U_AHEAD_ON ? ", u one step ahead" : "",
               cpml_memory == WAVE_CPML_MEM_BF16 ? ", bf16 CPML memory" : "", rate * 1e-9, repeat, repeat == 1 ? "" : "s");
        printf("\n");
        printf("| strategy | time (s) | peak device memory (MiB) | allocated (MiB) | planned (MiB) | wavefield steps | "
               "stencil-predicted (s) | time / predicted | note |\n");
        printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
        for (int k = 0; k < nrows; k++) {
            struct row *r = &rows[k];
            if (!r->ran && !r->note[0])
                continue;
            char peak[32];
            if (r->measured)
                snprintf(peak, sizeof peak, "%.0f", r->peak * mib);
            else
                snprintf(peak, sizeof peak, "n/a");
            if (r->ran)
                printf("| %s | %.2f | %s | %.0f | %.0f | %ld | %.2f | %.2f | %s |\n", r->name, r->secs, peak,
                       r->alloc * mib, r->need * mib, r->steps, r->pred, r->secs / r->pred, r->note);
            else
                printf("| %s | - | - | - | %.0f | - | - | - | %s |\n", r->name, r->need * mib, r->note);
        }
        printf("\nPhases of the median run (s; device synchronised at each boundary; fastest and slowest "
               "of the runs):\n\n| strategy | setup | forward sweep | backward sweep | finish | fastest | slowest |\n"
               "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (int k = 0; k < nrows; k++) {
            struct row *r = &rows[k];
            if (r->ran)
                printf("| %s | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f |\n", r->name, r->st.setup_s,
                       r->st.sweep_fwd_s, r->st.sweep_bwd_s, r->st.finish_s, r->lo, r->hi);
        }
        if (bw > 0)
            printf("\nByte floor (what each strategy must move on this shot, tools/bench_rtm.c's comment) at the "
                   "copy bandwidth %.0f GB/s; GB per phase; %% of floor = floor time / measured time:\n\n", bw);
        else
            printf("\nByte floor (tools/bench_rtm.c's comment), GB per phase (no copy bandwidth on this device: "
                   "floor time n/a):\n\n");
        printf("| strategy | imaged every | forward | reverse / recompute | strips / checkpoints | receiver | "
               "imaging | total (GB) | floor time (s) | time (s) | %% of floor | stencil-predicted (s) |\n"
               "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (int k = 0; k < nrows; k++) {
            struct row *r = &rows[k];
            if (!r->ran)
                continue;
            const double *b = r->floor_b;
            const double tot = b[0] + b[1] + b[2] + b[3] + b[4];
            char fs[32] = "n/a", pc[32] = "n/a";
            if (r->floor_s > 0) {
                snprintf(fs, sizeof fs, "%.2f", r->floor_s);
                snprintf(pc, sizeof pc, "%.1f", 100.0 * r->floor_s / r->secs);
            }
            printf("| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %.2f | %s | %.2f |\n", r->name,
                   r->image_every, b[PH_FWD] * 1e-9, b[PH_REV] * 1e-9, b[PH_KEEP] * 1e-9, b[PH_RCV] * 1e-9,
                   b[PH_IMG] * 1e-9, tot * 1e-9, fs, r->secs, pc, r->pred);
        }
    }
    status = 0;
out:
    free(img);
    if (sh.rec)
        payload_free(&dev, sh.rec, payload);
    free(v);
    rtm_engine_destroy(e);
    return status;
}
