/* rtm — reverse time migration of one shot.
 *
 * For each shot: cut the sub-volume the shot illuminates (kernels/subvolume.h), run
 * the source wavefield forward, run the receiver wavefield backward from the
 * time-reversed traces, apply the imaging condition (kernels/imaging.h) every
 * [rtm] image_every steps, and add the shot image into the stack at its place
 * (stream/image_stack.h).
 *
 * The source wavefield is needed backward in time while it is computed forward; the
 * strategy ([rtm] strategy) says how:
 *   full        keep u at every imaging step (memory: one field per imaging step);
 *   checkpoint  keep a few full states (two time levels + CPML) and recompute forward
 *               between them: uniform spacing (+ a buffer of one segment), or binomial
 *               (Griewank's revolve, kernels/revolve.h: the fewest recomputed steps);
 *   boundary    save the strip inside the absorbing layers each step (width = half the
 *               stencil order), then run u backward from its last two time levels,
 *               re-imposing the strip, in step with the receiver wavefield;
 *   random      random-velocity boundary instead of CPML for u (Clapp 2009,
 *               kernels/random_boundary.h), so u is reversible with nothing stored;
 *   auto        the first of full, boundary, checkpoint(binomial), random that fits
 *               the memory budget ([rtm] memory_budget, or the device's free memory);
 *               the choice and every option's memory are logged.
 *
 * On CUDA, boundary and random step the source and receiver wavefields on two streams
 * of their own (events order the imaging and the buffer reuse); the environment
 * variable SEISLIVE_RTM_ONE_STREAM=1 keeps everything on one stream (measured: the
 * same time at the propagator's current step rate, docs/PERFORMANCE.md).
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

#include "conf/config.h"
#include "io/shot.h"
#include "kernels/backend.h"
#include "stream/image_stack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A view of a full model volume on the host: x fastest, then y, z slowest. */
struct rtm_volume {
    int n[3];
    double d[3];        /* m */
    double o[3];        /* m */
    const float *v;     /* velocity, m/s (already converted from permittivity) */
};

/* What one migrated shot did (also logged at info level). */
struct rtm_shot_stats {
    int64_t shot_id;
    int strategy;           /* enum rtm_strategy actually used (never STRAT_AUTO) */
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
    size_t mem_need[5];     /* bytes each strategy would need, by enum rtm_strategy (auto: 0) */
    long fwd_steps;         /* source-wavefield steps, recomputation included */
    long bwd_steps;         /* receiver-wavefield steps */
    double seconds;         /* wall time of the migration */
    /* where it went (wall clock, device synchronised at each boundary): setup (sub-volume,
     * simulations, uploads), the sweeps (boundary and random: forward, then backward;
     * other strategies: all in sweep_fwd), finish (image, download, release) */
    double setup_s, sweep_fwd_s, sweep_bwd_s, finish_s;
};

struct rtm_engine;

/* An engine for CFG on DEV, migrating against MODEL (copied: the caller may free it
 * after the call).  The propagator settings come from [propagator], the strategy and
 * imaging from [rtm].  Returns 0 or a negative code with err_msg(). */
int rtm_engine_create(const struct sl_config *cfg, const struct sl_device *dev,
                      const struct rtm_volume *model, struct rtm_engine **out);
/* The same with the model of [model] (io/model.h). */
int rtm_engine_create_from_config(const struct sl_config *cfg, const struct sl_device *dev,
                                  struct rtm_engine **out);
void rtm_engine_destroy(struct rtm_engine *e);

/* The full model grid (the image stack's grid). */
void rtm_engine_grid(const struct rtm_engine *e, int n[3], double d[3], double o[3]);

/* A stop request: the engine asks FN(USER) in every long loop (every RTM_STOP_POLL
 * propagator steps of each sweep, checkpoint recomputation included; before every
 * trace it resamples; before the setup and the imaging) and gives up the shot with
 * -ECANCELED when it returns true.  The streaming job passes the SIGTERM flag
 * (stream/signals.h); NULL (the default) never stops. */
#define RTM_STOP_POLL 64
typedef bool (*rtm_cancel_fn)(void *user);
void rtm_engine_set_cancel(struct rtm_engine *e, rtm_cancel_fn fn, void *user);

/* Tests: the free-memory query behind rtm_shot_stats.mem_device, instead of the
 * device's (cudaMemGetInfo); it then measures on the CPU too.  NULL restores it. */
typedef int (*rtm_mem_probe_fn)(void *user, size_t *free_b);
void rtm_engine_set_mem_probe(struct rtm_engine *e, rtm_mem_probe_fn fn, void *user);

/* Bounds on a shot, checked from its header before anything is allocated for it: the
 * record length (ns - 1) dt must not exceed [propagator] t_max (what the migration and
 * `seislive check` are planned for; a few microseconds of slack), the propagator steps
 * must fit an int, the resampled traces the host memory, and a configured (not auto)
 * strategy's planned memory the budget.  Refused with -EINVAL / -ENOMEM, the reason and
 * the shot id; the job logs it with the message and goes on with the next shot. */

/* Migrate SHOT and add its image (and illumination) into STACK, which must have the
 * model's grid.  A shot already in the stack is refused (-EEXIST).  STATS may be
 * NULL.  Stops early with -ECANCELED when a stop is requested (rtm_engine_set_cancel),
 * the stack untouched. */
int rtm_engine_migrate(struct rtm_engine *e, const struct shot *shot, struct image_stack *stack,
                       struct rtm_shot_stats *stats);

/* Migrate SHOT into a caller buffer instead of a stack: IMAGE (and ILLUM, may be NULL)
 * get the shot image over its patch (rtm_engine_patch gives offset and size first). */
int rtm_engine_patch(struct rtm_engine *e, const struct shot *shot, int off[3], int n[3]);
int rtm_engine_migrate_patch(struct rtm_engine *e, const struct shot *shot, float *image,
                             float *illum, struct rtm_shot_stats *stats);

/* Device bytes each strategy (index: enum rtm_strategy; 0 unused) would need for SHOT,
 * without running anything (the checkpoint figure for the configured snaps). */
int rtm_engine_memory(struct rtm_engine *e, const struct shot *shot, size_t need[5]);
/* The strategy auto would pick for SHOT under the engine's budget ([rtm] memory_budget
 * or the device's free memory); -ENOMEM when none fits. */
int rtm_engine_pick(struct rtm_engine *e, const struct shot *shot, int *strategy);

/* Force the strategy of the next shots (tests, benchmark): STRAT_* of enum
 * rtm_strategy; STRAT_AUTO restores the configured choice. */
void rtm_engine_force_strategy(struct rtm_engine *e, int strategy, int ckpt_schedule);

/* Time steps and dt the engine uses for SHOT (the propagator dt; the shot's traces
 * are resampled to it), covering at most [propagator] t_max.  -EINVAL when the shot's
 * sample interval leaves fewer than 2 samples in t_max (a "dt": 100 header). */
int rtm_engine_steps(const struct rtm_engine *e, const struct shot *shot, int *nt, double *dt);

/* Whether SHOT's record is longer than t_max, so that only its first t_max is migrated. */
bool rtm_engine_cut_record(const struct rtm_engine *e, const struct shot *shot);

const char *rtm_strategy_name(int strategy);

/* Diagnostics and tests: run only the source side of STRATEGY (never auto; SCHEDULE
 * for checkpoint) for SHOT and hand the source wavefield u(n) over the sub-volume
 * (host copy, x fastest) to CB in the order the backward sweep uses it: n = nt down
 * to 1, imaging steps only.  The receiver wavefield still runs, as in a migration. */
#define RTM_RANDOM_FORWARD (-2) /* SCHEDULE for STRAT_RANDOM: store the random-boundary u
                                   forward instead of reversing it (the reference) */
typedef int (*rtm_source_cb)(int n, const float *u, size_t cells, void *ctx);
int rtm_engine_source_wavefield(struct rtm_engine *e, const struct shot *shot, int strategy, int schedule,
                                rtm_source_cb cb, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
