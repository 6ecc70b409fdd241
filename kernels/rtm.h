/* rtm — reverse time migration of one shot.
 *
 * For each shot: cut the sub-volume the shot illuminates (kernels/subvolume.h), run
 * the source wavefield forward, run the receiver wavefield backward from the
 * time-reversed traces, apply the imaging condition (kernels/imaging.h) every
 * image_every steps, and hand back the shot image (and source illumination) over the
 * sub-volume, with its offset in the model grid.  Stacking it and the ledger of stacked
 * shots are the caller's (the rtm job: rtm_stack_shot in stream/rtm_config.h).
 *
 * The source wavefield is needed backward in time while it is computed forward; the
 * strategy (rtm_params.strategy) says how:
 *   full        keep u at every imaging step (memory: one field per imaging step);
 *   checkpoint  keep a few full states (two time levels + CPML) and recompute forward
 *               between them: uniform spacing (+ a buffer of one segment), or binomial
 *               (Griewank's revolve, kernels/revolve.h: the fewest recomputed steps);
 *   boundary    save the strip inside the absorbing layers each step (width = half the
 *               stencil order), then run u backward from its last two time levels,
 *               re-imposing the strip, in step with the receiver wavefield; the strips
 *               live on the device, or in page-locked host memory staged through a few
 *               device strips when they do not fit (rtm_params.strip_store,
 *               kernels/rtm_strips.h);
 *   random      random-velocity boundary instead of CPML for u (Clapp 2009,
 *               kernels/random_boundary.h), so u is reversible with nothing stored;
 *   auto        the first of full, boundary, checkpoint(binomial), random that fits
 *               the memory budget (rtm_params.memory_budget, or the device's free memory);
 *               the choice and every option's memory are logged.
 *
 * On CUDA, boundary and random step the source and receiver wavefields on two streams
 * of their own (events order the imaging and the buffer reuse); the tuning field
 * rtm_tuning.one_stream keeps everything on one stream (measured: the same time at the
 * propagator's current step rate, docs/PERFORMANCE.md).
 *
 * The simulations are driven only through the propagator interface
 * (kernels/propagator.h): the engine does not know which physics runs.  A model with
 * n[1] == 1 runs as 2D: the sub-volume keeps ny = 1 and its y faces are NONE (no
 * absorbing layers across the line); a source or receiver off the line is refused.
 *
 * Files: rtm.c (the engine, one shot's driver), rtm_plan.c (steps, sub-volume,
 * receivers, memory and strategy), rtm_setup.c (simulations, points, traces,
 * accumulators, streams), rtm_strategies.c (the sweeps), rtm_memory.c (the plan's
 * figures), rtm_internal.h (what they share).
 *
 * Time convention: u^0 = u^-1 = 0; step n injects the wavelet sample n and gives
 * u^(n+1); a trace sample t_n is the wavefield at step n.  The receiver wavefield is
 * the same equation run with the time-reversed traces injected at the receivers; the
 * image is sum_n u^n q^n over imaging steps n (kernels/imaging.h for the normalized
 * variants).  All strategies give the same image up to float rounding (checkpoint:
 * bit for bit). */
#ifndef SEISLIVE_RTM_H
#define SEISLIVE_RTM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"
#include "kernels/propagator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Source-wavefield strategies (the twins of conf/config.h's enum rtm_strategy: the same
 * values, so the config's choice is passed as is; stream/rtm_config.c checks it). */
enum rtm_strategy_kind {
    RTM_AUTO = 0,
    RTM_FULL = 1,
    RTM_CHECKPOINT = 2,
    RTM_BOUNDARY = 3,
    RTM_RANDOM = 4,
};
#define RTM_STRATEGIES 5

/* Checkpoint placement (kernels/revolve.h). */
enum rtm_ckpt_schedule { RTM_CKPT_UNIFORM = 0, RTM_CKPT_BINOMIAL = 1 };

/* A view of a full model volume on the host: x fastest, then y, z slowest. */
struct rtm_volume {
    int n[3];
    double d[3];        /* m */
    double o[3];        /* m */
    const float *v;     /* velocity, m/s (already converted from permittivity; TTI: v_pz) */
    /* TTI (rtm_params.physics = PROP_TTI; ignored otherwise), as struct prop_model: a
     * volume like v (x fastest; angles in radians) or NULL for the constant beside it.
     * Copied by rtm_engine_create and cut per shot like the velocity. */
    const float *epsilon, *delta, *theta, *phi;
    double epsilon0, delta0, theta0, phi0;
};

/* A shot as the engine sees it (the job converts io/shot.h's struct shot: nothing is
 * copied, the arrays are borrowed for the call). */
struct rtm_shot {
    int64_t id;         /* names the shot in messages; seeds the random boundary */
    int ns;             /* samples per trace */
    double dt;          /* sample interval, s */
    int ntr;            /* receivers */
    double src[3];      /* source x, y, z, m */
    const float *rec;   /* ntr x 3: receiver x, y, z, m */
    const float *data;  /* ntr x ns, trace by trace (time fastest) */
};

/* rtm_tuning.backward: the backward sweep of boundary and random (docs/rtm.md). */
enum rtm_backward {
    RTM_BACKWARD_SEPARATE = 0, /* q's step, u's reverse step and the imaging condition, each
                                  a pass of its own (u and q on two CUDA streams) */
    RTM_BACKWARD_FUSED = 1,    /* all three in one pass (kernels/rtm_fused.h): measured
                                  slower on the H100, the CPML of q then runs alone */
    RTM_BACKWARD_IMAGE = 2,    /* the imaging condition inside q's step, u's reverse step on
                                  its own stream beside q's CPML (measured slower on the H100) */
};

/* Choices that change how fast, never what: read once from here (no environment
 * variable), set by seislive-bench rtm flags; all false is the production default. */
struct rtm_tuning {
    bool one_stream;      /* CUDA boundary / random: step u and q on one stream instead of a
                             stream each (--one-stream) */
    bool imaging_scalar;  /* CUDA imaging: the scalar accumulation kernel instead of the
                             float4 one (--imaging-scalar) */
    int backward;         /* boundary / random: how the backward sweep runs, enum
                             rtm_backward (--backward separate|fused|image) */
    int fused_variant;    /* CUDA: the fused kernel's shape, 0 the default (0..3,
                             kernels/rtm_fused.cu: --fused-variant N) */
    int strip_stages;     /* boundary with host strips: device staging strips, 0 = 3
                             (RTM_STRIP_STAGES, kernels/rtm_strips.h; --strip-stages N) */
    int strip_pin;        /* boundary with host strips: how the host store is pinned, enum
                             dev_pin_how (kernels/device.h; 0 pieces, the default;
                             --pin pieces|alloc|register) */
    int u_ahead;          /* CUDA boundary / random, separate backward sweep on two streams,
                             enum rtm_u_ahead (--u-ahead on|off) */
};

/* rtm_tuning.u_ahead: what u's reverse step n -> n - 1 waits for on q's stream.  It
 * writes u(n - 1) over u(n + 1), so it needs only the imaging at n + 1 done; waiting
 * for the imaging at n (which follows q's whole step n) as before drains both streams
 * at every imaging step.  Either way the same image, bit for bit. */
enum rtm_u_ahead {
    RTM_U_AHEAD_DEFAULT = 0, /* off (RTM_U_AHEAD_OFF) */
    RTM_U_AHEAD_OFF = 1,     /* u's step n -> n - 1 waits for the imaging at n */
    RTM_U_AHEAD_ON = 2,      /* ... for the imaging at n + 1: u's step beside q's step n */
};

/* The random-velocity boundary of the `random` strategy (kernels/random_boundary.h). */
struct rtm_random {
    int ramp;           /* enum rb_ramp */
    int range;          /* enum rb_range */
    int width;          /* cells */
    uint64_t seed;
};

/* Everything the engine needs, as plain values (the rtm job fills it from the config:
 * stream/rtm_config.h).  rtm_params_init gives the config's defaults. */
struct rtm_params {
    /* the propagator */
    int physics;            /* enum prop_physics */
    int op_kind;            /* enum prop_op_kind: the derivative operator */
    double op_band;         /* its design band (fraction of Nyquist); 0 = its default */
    int order;              /* its order: even, 2..16 */
    int pml[6];             /* absorbing cells per face: xmin xmax ymin ymax zmin zmax (the
                               y faces of a 2D model have none, whatever pml[2..3] say) */
    bool free_surface;      /* p = 0 on the top face instead of its layers */
    double pml_reflection;  /* CPML theoretical normal-incidence reflection */
    double f_ref;           /* Hz: CPML reference frequency (the Ricker peak) */
    struct prop_tuning prop_tuning;
    double tti_sigma;       /* TTI: v_sz^2 = v_pz^2 (epsilon - delta_eff) / tti_sigma (0.75) */
    int cpml_memory;        /* storage of the CPML memory (enum wave_cpml_memory; 0 fp32) */
    int pml_degree;         /* CPML damping's polynomial degree (kernels/cpml.h); 0 = 2 */
    /* the time step (TTI: the limit is tti_dt_max_model, kernels/tti.h): dt = 0 is cfl x the largest stable dt; a dt above it is refused
     * (kernels/stability.h), the message naming it DT_NAME (NULL: "dt"; read during
     * rtm_engine_create only) */
    double dt;              /* s */
    double cfl;
    double ppw_min;         /* warn below this many points per wavelength */
    const char *dt_name;
    double t_max;           /* s: the longest record migrated (a longer one is cut) */
    /* the source wavelet: WAVELET (copied by rtm_engine_create) sampled at WAVELET_DT
     * (0: at the propagator dt), or NULL for a Ricker of F_PEAK */
    double f_peak;          /* Hz */
    const float *wavelet;
    size_t wavelet_n;
    double wavelet_dt;      /* s */
    int src_interp;         /* enum prop_interp of the source (sinc; trilinear where its
                               support does not fit) */
    int rec_interp;         /* enum prop_interp of the receivers (trilinear) */
    bool time_dispersion;   /* remove the leapfrog's time dispersion from the image: the
                               wavelet and the traces (at the propagator dt) go in through
                               the forward time-dispersion transform (kernels/time_dispersion.h,
                               docs/time-dispersion.md); false: as they are */
    /* the migration */
    int strategy;           /* enum rtm_strategy_kind */
    int checkpoints;        /* checkpoint snaps; 0 = ceil(sqrt(nt + 1)) */
    int checkpoint_schedule;/* enum rtm_ckpt_schedule */
    int imaging;            /* enum imaging_cond_kind (kernels/imaging.h) */
    int image_every;        /* steps; 0 = auto: rtm_image_every_auto (the image's Nyquist) */
    double aperture;        /* m, added on each side of the receiver spread */
    double memory_budget;   /* MiB one shot may use; 0 = 90 % of the device's free memory */
    int strip_store;        /* boundary's strips: enum rtm_strip_store (kernels/rtm_strips.h):
                               auto (the device when they fit, else on a GPU pinned host
                               memory), device, host */
    double host_memory_budget; /* MiB of host memory the strips may take; 0 = 80 % of the
                               host's free memory */
    struct rtm_random random;
    struct rtm_tuning tuning;
};

/* The defaults of the config's [propagator] and [rtm] keys (conf/schema.c; a test
 * holds the two together). */
void rtm_params_init(struct rtm_params *p);

/* What one migrated shot did (also logged at info level). */
struct rtm_shot_stats {
    int64_t shot_id;
    int strategy;           /* enum rtm_strategy_kind actually used (never RTM_AUTO) */
    int n[3];               /* sub-volume grid including the absorbing layers */
    int off[3];             /* image patch offset in the full grid */
    int nt;                 /* time steps */
    double dt;              /* s */
    size_t mem_bytes;       /* device (or host, on the CPU) bytes allocated for this shot */
    size_t mem_device;      /* CUDA: peak device memory in use during the shot: the lowest free
                             * memory seen (cudaMemGetInfo, after every allocation) below its
                             * level before the shot; 0 when not measured */
    bool mem_device_measured; /* mem_device is a measurement (CUDA, or a test probe); false on the
                             * CPU or when the device cannot be queried: print "n/a" */
    size_t mem_need[RTM_STRATEGIES]; /* bytes each strategy would need (auto: 0); boundary
                               with host strips (strips_host): the device's share */
    int backward;           /* boundary / random: how the backward sweep ran (enum
                               rtm_backward: a fused one only where the pair can fuse) */
    bool strips_host;       /* boundary: its strips were in page-locked host memory */
    size_t strips_bytes;    /* boundary: the strips' bytes (where strips_host says) */
    double strips_alloc_s;  /* boundary, host strips: seconds spent allocating (pinning)
                               the host store this shot (0 when the engine's was reused) */
    bool replanned;         /* auto had picked boundary with host strips, their store could
                               not be allocated: the shot was planned again without the host
                               (and so is every later shot of the engine) */
    long fwd_steps;         /* source-wavefield steps, recomputation included */
    long bwd_steps;         /* receiver-wavefield steps */
    int schedule, snaps;    /* checkpoint: the schedule (enum rtm_ckpt_schedule) and its slots;
                               random: the schedule (RTM_RANDOM_FORWARD or -1) */
    int image_every;        /* the imaging interval the shot used (image_every, auto resolved) */
    size_t image_cells;     /* cells of the image box */
    double seconds;         /* wall time of the migration */
    /* where it went (wall clock, device synchronised at each boundary): setup (sub-volume,
     * simulations, uploads), the sweeps (boundary and random: forward, then backward;
     * other strategies: all in sweep_fwd), finish (image, download, release) */
    double setup_s, sweep_fwd_s, sweep_bwd_s, finish_s;
};

struct rtm_engine;

/* An engine for P on DEV, migrating against MODEL (copied, as is P's wavelet: the caller
 * may free both after the call).  Refuses a model velocity that is not > 0 and an
 * unstable dt; with TTI physics, a model tti_model_check refuses.  Returns 0 or a
 * negative code with err_msg(). */
int rtm_engine_create(const struct rtm_params *p, const struct sl_device *dev, const struct rtm_volume *model,
                      struct rtm_engine **out);
void rtm_engine_destroy(struct rtm_engine *e);

/* The full model grid (the image stack's grid). */
void rtm_engine_grid(const struct rtm_engine *e, int n[3], double d[3], double o[3]);
/* The propagator dt the engine resolved. */
double rtm_engine_dt(const struct rtm_engine *e);

/* A stop request: the engine asks FN(USER) in every long loop (every RTM_STOP_POLL
 * propagator steps of each sweep, checkpoint recomputation included; before every
 * trace it resamples; before the setup and the imaging) and gives up the shot with
 * -ECANCELED when it returns true.  The streaming job passes the SIGTERM flag
 * (stream/signals.h); NULL (the default) never stops. */
#define RTM_STOP_POLL 64
typedef bool (*rtm_cancel_fn)(void *user);
void rtm_engine_set_cancel(struct rtm_engine *e, rtm_cancel_fn fn, void *user);

/* A shot's grid decomposed over ranks ([runtime] decompose = "domain"; the caller --
 * stream/decompose_rtm.c -- supplies these, so kernels/ knows nothing of MPI).  Each rank
 * runs the engine on the same shot; the engine creates its simulations on this rank's
 * subdomain, injects through single-node sets with the whole grid's weights, calls
 * exchange after every step (and injection) of each simulation, and hands the shot's raw
 * accumulators to gather, which assembles them in the whole grid's order on rank 0;
 * rank 0 then applies the imaging condition over the whole patch, exactly as one rank
 * does.  Every call below is made by every rank at the same point of a shot. */
struct rtm_nodes {
    struct prop_points *pts;  /* single nodes on the simulation (the engine destroys it) */
    size_t n;                 /* nodes */
    int *point;               /* per node: its point (malloc'd; the engine frees it) */
    float *w;                 /* per node: wx wy wz, as the whole grid's injection multiplies
                                 them (malloc'd; the engine frees it) */
};
struct rtm_domain {
    void *ctx;
    /* A new shot whose receiver simulation is WHOLE: this rank's part of it into *SUB
     * (HALO faces at the cuts; vmax_cpml: WHOLE's, or its model's largest velocity). */
    int (*begin)(void *ctx, const struct prop_params *whole, double vmax_cpml, struct prop_params *sub);
    /* S (this rank's part of a simulation of the shot) will be exchanged: its buffers. */
    int (*attach)(void *ctx, struct prop *s);
    /* The halo planes of S's current field to and from the neighbours. */
    int (*exchange)(void *ctx, struct prop *s);
    /* The points XYZ (N, metres) with interpolation INTERP on the whole grid WHOLE of S:
     * this rank's support nodes on S with the whole grid's weights (-EINVAL where the
     * whole grid's prop_points_create refuses them). */
    int (*points)(void *ctx, const struct prop_params *whole, struct prop *s, const double *xyz, size_t n,
                  int interp, struct rtm_nodes *out);
    /* Every rank's RC: the worst one on every rank. */
    int (*agree)(void *ctx, int rc);
    /* Rank 0's N ints in V on every rank. */
    int (*share)(void *ctx, int *v, int n);
    /* NA compact arrays over this rank's part of the shot's image box (LOCAL) into the
     * whole box's arrays (WHOLE, rank 0 only: x fastest over WHOLE_N). */
    int (*gather)(void *ctx, const float *const *local, float *const *whole, int na, const int whole_n[3]);
    /* A failure of this rank alone in the middle of the sweeps (its peers wait for its
     * halo): end the whole job. */
    void (*fail)(void *ctx, int rc);
    /* The rank ("rank" in the whole job's numbering), 0 images and hands the patch out. */
    int rank;
};
/* Decompose the next shots with D (borrowed; NULL: the whole grid on this process). */
void rtm_engine_set_domain(struct rtm_engine *e, const struct rtm_domain *d);

/* Tests: the free-memory query behind rtm_shot_stats.mem_device, instead of the
 * device's (cudaMemGetInfo); it then measures on the CPU too.  NULL restores it. */
typedef int (*rtm_mem_probe_fn)(void *user, size_t *free_b);
void rtm_engine_set_mem_probe(struct rtm_engine *e, rtm_mem_probe_fn fn, void *user);

/* Bounds on a shot, checked from its header before anything is allocated for it: the
 * record length (ns - 1) dt must not exceed t_max (what the migration and `seislive
 * check` are planned for; a few microseconds of slack), the propagator steps must fit
 * an int, the resampled traces the host memory, and a configured (not auto) strategy's
 * planned memory the budget.  Refused with -EINVAL / -ENOMEM, the reason and the shot
 * id; the job logs it with the message and goes on with the next shot.  A 2D model
 * refuses a source or receiver off its line (-EINVAL, naming the receiver). */

/* The shot's image patch: its offset in the full grid and its size. */
int rtm_engine_patch(struct rtm_engine *e, const struct rtm_shot *shot, int off[3], int n[3]);
/* Migrate SHOT: IMAGE (and ILLUM, the source illumination; may be NULL) get the shot
 * image over its patch (rtm_engine_patch), x fastest.  STATS may be NULL.  Stops early
 * with -ECANCELED when a stop is requested (rtm_engine_set_cancel). */
int rtm_engine_migrate_patch(struct rtm_engine *e, const struct rtm_shot *shot, float *image, float *illum,
                             struct rtm_shot_stats *stats);

/* Device bytes each strategy (index: enum rtm_strategy_kind; 0 unused) would need for
 * SHOT, without running anything (the checkpoint figure for the configured snaps). */
int rtm_engine_memory(struct rtm_engine *e, const struct rtm_shot *shot, size_t need[RTM_STRATEGIES]);
/* The strategy auto would pick for SHOT under the engine's budget (memory_budget or the
 * device's free memory); -ENOMEM when none fits. */
int rtm_engine_pick(struct rtm_engine *e, const struct rtm_shot *shot, int *strategy);

/* The imaging interval of image_every = 0 (auto): the largest K with K DT <= 1 / (2 FMAX),
 * at least 1.  Why: the image is the time integral of u q, and u and q both hold
 * frequencies up to FMAX (the wavelet's maximum frequency), so their product holds
 * frequencies up to 2 FMAX; a sum of samples every K DT equals the integral when the
 * product has nothing at the sampling rate 1 / (K DT) and its multiples (they alias
 * onto zero frequency, the image), i.e. when 1 / (K DT) >= 2 FMAX.  FMAX is where the
 * wavelet's spectrum falls to 3 % of its peak (kernels/wavelet.h), so the content left
 * at 2 FMAX is small (tests/test_rtm_strategies.c measures the images' convergence).
 * The image and the illumination are then summed with weight K (each sample stands for
 * K steps), so their amplitude does not depend on the interval. */
int rtm_image_every_auto(double fmax, double dt);
/* The interval a shot uses: EVERY when > 0 (given explicitly, it wins), else the auto one. */
int rtm_image_every_of(int every, double fmax, double dt);

/* Force the strategy of the next shots (tests, benchmark): RTM_* of enum
 * rtm_strategy_kind; RTM_AUTO restores the configured choice. */
void rtm_engine_force_strategy(struct rtm_engine *e, int strategy, int ckpt_schedule);

/* Time steps and dt the engine uses for SHOT (the propagator dt; the shot's traces
 * are resampled to it), covering at most t_max.  -EINVAL when the shot's sample
 * interval leaves fewer than 2 samples in t_max (a "dt": 100 header). */
int rtm_engine_steps(const struct rtm_engine *e, const struct rtm_shot *shot, int *nt, double *dt);

/* Whether SHOT's record is longer than t_max, so that only its first t_max is migrated. */
bool rtm_engine_cut_record(const struct rtm_engine *e, const struct rtm_shot *shot);

/* The propagator parameters of SHOT's receiver simulation (its sub-volume, faces and
 * layers): what the engine will create, for diagnostics and tests. */
int rtm_engine_shot_params(const struct rtm_engine *e, const struct rtm_shot *shot, struct prop_params *out);

const char *rtm_strategy_name(int strategy);

/* Diagnostics and tests: run only the source side of STRATEGY (never auto; SCHEDULE
 * for checkpoint) for SHOT and hand the source wavefield u(n) over the sub-volume
 * (host copy, x fastest) to CB in the order the backward sweep uses it: n = nt down
 * to 1, imaging steps only.  The receiver wavefield still runs, as in a migration. */
#define RTM_RANDOM_FORWARD (-2) /* SCHEDULE for RTM_RANDOM: store the random-boundary u
                                   forward instead of reversing it (the reference) */
typedef int (*rtm_source_cb)(int n, const float *u, size_t cells, void *ctx);
int rtm_engine_source_wavefield(struct rtm_engine *e, const struct rtm_shot *shot, int strategy, int schedule,
                                rtm_source_cb cb, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
