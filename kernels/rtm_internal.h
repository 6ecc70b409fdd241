/* rtm_internal — what the files of the RTM engine share (see rtm.h for the pieces):
 * the engine, a shot's plan (rtm_plan.c), the migration's working state (rtm_setup.c
 * builds it, rtm_strategies.c runs the sweeps on it) and the small helpers they all
 * use.  Not for callers outside kernels/rtm*.c. */
#ifndef SEISLIVE_RTM_INTERNAL_H
#define SEISLIVE_RTM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/imaging.h"
#include "kernels/propagator.h"
#include "kernels/rtm.h"
#include "kernels/rtm_memory.h"
#include "kernels/rtm_strips.h"
#include "kernels/subvolume.h"

/* How often the long loops ask for a stop request (propagator steps). */
#define STOP_POLL RTM_STOP_POLL

struct rtm_engine {
    struct sl_device dev;
    int n[3];
    double d[3], o[3];
    float *v;
    double vmin, vmax;
    /* TTI: the parameter volumes (copies; NULL: the constant par0), and v_pz's largest
     * value over the fastest qP speed (<= 1: the random layers' velocity scale) */
    float *par[4];          /* epsilon, delta, theta, phi */
    double par0[4];
    double tti_vscale;
    struct rtm_params p;    /* as given; p.wavelet points at wfile, p.dt_name is NULL */
    float *wfile;           /* the user wavelet (copied), NULL for a Ricker */
    double wfile_dt;        /* its sample interval, s */
    double fmax;            /* Hz: the wavelet's highest frequency */
    double dt;              /* the resolved propagator dt */
    int forced, forced_schedule;
    rtm_cancel_fn cancel;
    void *cancel_user;
    rtm_mem_probe_fn probe;
    void *probe_user;
    const struct rtm_domain *dom; /* decomposed over ranks (rtm_engine_set_domain), or NULL */
    struct rtm_strip_host strip_host; /* boundary's host strips, kept for the next shot */
    bool host_strips_off;   /* the host store could not be allocated (pinned) once: every
                             * later plan of this engine leaves the host out (rtm.c) */
};

static inline bool rtm_stop_requested(const struct rtm_engine *e)
{
    return e->cancel && e->cancel(e->cancel_user);
}

/* True for a 2D model (one cell across y): its sub-volumes have NONE y faces. */
static inline bool rtm_is_2d(const struct rtm_engine *e) { return e->n[1] == 1; }

double rtm_now_s(void);

/* Debug log of how long the setup stage that just ended took ([log] level = "debug",
 * or seislive-bench rtm --verbose): where a shot's time before the sweeps goes. */
void rtm_stage_done(int64_t shot, const char *what, double *t);

/* ---- a shot's plan (rtm_plan.c) ---------------------------------------------------- */

struct rtm_plan {
    int nt, k, cond;         /* steps, imaging every k steps, enum imaging_cond_kind */
    double dt;
    struct subvolume sv;
    int nkeep;               /* receivers inside the model: their indices and positions */
    int *keep;
    double *rxyz;
    float *vsub;             /* the sub-volume's velocity */
    float *psub[4];          /* TTI: its parameter volumes (NULL: the engine's constant) */
    struct prop_params pp;   /* the receiver simulation on the sub-volume */
    struct prop_params sub;  /* decomposed: this rank's part of pp (rtm_domain.begin) */
    struct rtm_mem_input mi;
    struct rtm_mem mem;
    int strategy, schedule, snaps;
    bool strips_host;        /* boundary: its strips in page-locked host memory */
    bool auto_pick;          /* the strategy is auto's pick (not configured or forced) */
};

/* The host bytes boundary's strips may take under E's configuration: host_memory_budget,
 * or 80 % of the free host memory; 0 where they may not go there (strip_store =
 * "device", or "auto" on the CPU, whose device memory is the host's already). */
size_t rtm_host_budget_bytes(const struct rtm_engine *e);

/* The propagator parameters of sub-volume SV with step DT: the engine's faces and
 * layers (NONE y faces for a 2D model), operator and tuning. */
void rtm_shot_params(const struct rtm_engine *e, const struct subvolume *sv, double dt, struct prop_params *pp);

/* The device bytes a shot may use: memory_budget, or 90 % of the free memory. */
size_t rtm_budget_bytes(const struct rtm_engine *e);

/* Refuse SHOT's source and receivers off a 2D model's line (-EINVAL). */
int rtm_check_line(const struct rtm_engine *e, const struct rtm_shot *shot);

/* Plan SHOT (steps, sub-volume, kept receivers and their host memory, the sub-volume
 * cut, memory figures, the strategy: FORCE / FORCE_SCHEDULE, the forced one, the
 * configured one or auto's pick).  DIAG: a diagnostic run (no budget check of a named
 * strategy).  A stop request is honoured before the cut.  T: the stage clock (the
 * shot's start on entry).  Free with rtm_plan_free, also after a failure. */
int rtm_plan_shot(struct rtm_engine *e, const struct rtm_shot *shot, int force, int force_schedule, bool diag,
                  double *t, struct rtm_plan *pl);
void rtm_plan_free(struct rtm_plan *pl);

/* ---- the migration's working state (rtm_setup.c, rtm_strategies.c) ---------------- */

struct mig {
    struct rtm_engine *e;
    const struct sl_device *dev;
    bool gpu;
    struct prop *u, *q;
    struct prop_points *src, *rec;
    float *wav;              /* nt + 1 wavelet samples (device); decomposed: per source node */
    size_t wav_stride;       /* between the wavelets of the source's points: 1, or nt + 1 */
    float *dat;              /* ntr x (nt + 1) traces (device); decomposed: per receiver node */
    struct rtm_nodes srcn, recn; /* decomposed: the points' nodes on this rank (rtm_domain.points) */
    int nt, k, cond;
    struct imaging_box bq;   /* image box in the receiver sim */
    struct imaging_box bc;   /* a compact stored field */
    struct imaging_acc acc;
    bool keep_illum;         /* the caller wants the source illumination (acc.ill_s kept
                                whatever the condition needs) */
    size_t cells;
    long fwd, bwd;
    size_t mem;              /* bytes allocated for this shot */
    bool measure;            /* device memory measured (CUDA, or the engine's test probe) */
    size_t dev_free0;        /* free bytes before the shot, and the lowest seen since */
    size_t dev_free_min;
    void *s_u, *s_q;         /* CUDA, boundary/random: the two wavefields' streams, and */
    void *ev_u, *ev_q;       /* events: u(n) ready / imaging at n done */
    void *ev_img[2];         /* rtm_tuning.u_ahead on: imaging at n done, in slot n & 1 */
    rtm_source_cb cb;        /* diagnostics: hand u(n) to the caller instead of only imaging */
    void *cb_ctx;
    float *cb_host;
    double t_fwd_end;        /* run_reverse: when the forward sweep had finished (rtm_now_s) */
    int backward;            /* run_reverse: how the backward sweep ran (enum rtm_backward) */
    bool strips_host;        /* boundary: the plan's strips_host */
    float *strips;           /* boundary: the host store (the engine's, page-locked), when strips_host */
    size_t strips_bytes;     /* boundary: the strips' bytes */
    double strips_alloc_s;   /* seconds the host store's allocation took this shot (0: reused) */
    bool store_failed;       /* rtm_setup failed allocating (pinning) the host store */
    bool replanned;          /* ... and the shot was planned again without it (rtm.c) */
};

/* Start the device-memory measurement (before the first allocation). */
void rtm_mem_begin(struct mig *m);
/* Look at the free memory once more (after an allocation). */
void rtm_note_peak(struct mig *m);
/* BYTES of device memory into *OUT, counted and measured. */
int rtm_alloc(struct mig *m, size_t bytes, void *out);

struct imaging_box rtm_box_of(const struct prop *s);

/* Build everything the sweeps need for SHOT by plan PL into M (the simulations,
 * points, wavelet, traces, accumulators and, on CUDA, the streams).  T (the stage
 * clock) goes on.  M is released by rtm_mig_release, also after a failure. */
int rtm_setup(struct mig *m, const struct rtm_shot *shot, const struct rtm_plan *pl, double *t);
void rtm_mig_release(struct mig *m);

/* After each step (and injection) of simulation S in the sweeps: its halo planes
 * exchanged when the shot is decomposed (rtm_domain.exchange); nothing otherwise. */
int rtm_after_step(struct mig *m, struct prop *s);

/* Run STRATEGY (SCHEDULE, SNAPS for checkpoint) on M: the forward and backward sweeps
 * with the imaging condition.  The device is synchronised after. */
int rtm_run_strategy(struct mig *m, int strategy, int schedule, int snaps);

/* The shot image in place over the correlation. */
int rtm_finalize_image(struct mig *m);

#endif
