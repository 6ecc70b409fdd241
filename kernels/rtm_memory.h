/* rtm_memory — the device memory each source-wavefield strategy needs for one shot,
 * computed from sizes alone (nothing allocated), and the choice `auto` makes.
 * Used by the engine (kernels/rtm.h) before each shot and by `seislive check`.
 *
 * Every strategy holds the receiver simulation, the shot's traces (resampled to the
 * propagator dt), the imaging accumulators, and a source simulation; on top of that:
 *   full        the interior u at every imaging step;
 *   boundary    the strip (interior cells within order/2 of a face) at every step;
 *   checkpoint  `snaps` full states (2 time levels + CPML memory), uniform: plus one
 *               segment of interior fields;
 *   random      nothing (its source simulation may have wider layers).
 * auto picks the first that fits the budget in the order full, boundary, checkpoint
 * (binomial, with the most snaps that fit, when they keep recomputation within
 * RTM_AUTO_MAX_SWEEPS forward sweeps), random.
 *
 * Boundary's strips may live in page-locked host memory instead (kernels/rtm_strips.h,
 * [rtm] strip_store): the device then holds only `strip_stages` staging strips, and the
 * nt strips need as many bytes of the host's budget.  With strip_store = "auto" boundary
 * takes its strips to the host when they do not fit the device budget and do fit the
 * host's (a host budget of 0: never; the engine passes 0 on the CPU, whose "device"
 * memory is the host's already); "host" always, "device" never. */
#ifndef SEISLIVE_RTM_MEMORY_H
#define SEISLIVE_RTM_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/propagator.h"
#include "kernels/subvolume.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RTM_AUTO_MAX_SWEEPS 4

struct rtm_mem_input {
    struct prop_params pp;   /* the receiver simulation (CPML layers) on the sub-volume */
    int random_width;        /* random layer width, cells */
    int nt;                  /* time steps */
    int image_every;         /* steps */
    int ntr;                 /* receivers */
    int imaging;             /* enum imaging_cond_kind */
    int checkpoints;         /* configured snaps (0 = sqrt(nt + 1)) */
    int schedule;            /* enum rtm_ckpt_schedule */
    int strip_store;         /* enum rtm_strip_store (kernels/rtm_strips.h); 0 = auto */
    size_t host_budget;      /* bytes of host memory boundary's strips may take (0: none) */
    int strip_stages;        /* device staging strips of the host store (0 = RTM_STRIP_STAGES) */
};

struct rtm_mem {
    size_t common;       /* receiver sim + traces + accumulators + points */
    size_t sim;          /* one source simulation with CPML */
    size_t sim_random;   /* the random-boundary source simulation */
    size_t field;        /* one interior field (the image box) */
    size_t strip;        /* one boundary strip */
    size_t state;        /* one checkpoint state */
    int snaps;           /* snaps the checkpoint figure assumes */
    int seg;             /* uniform segment buffer (fields) */
    size_t need[5];      /* total by enum rtm_strategy_kind (index 0 = auto: unused); boundary:
                            with its strips where strip_store says (auto: the device) */
    size_t boundary_dev;  /* boundary with its strips on the device */
    size_t boundary_host; /* boundary with its strips on the host: the device's share */
    size_t strips_bytes;  /* the strips themselves (nt of them): host bytes when they go there */
};

struct rtm_params;

/* The propagator parameters of a shot's receiver simulation on sub-volume SV (spacing
 * D, step DT) for the engine parameters P: CPML faces of P's widths, the free surface,
 * and on a 2D model (TWO_D: its n[1] == 1) NONE y faces.  What the engine creates and
 * `seislive check` plans with. */
void rtm_prop_params(const struct rtm_params *p, bool two_d, const double d[3], const struct subvolume *sv,
                     double dt, struct prop_params *pp);

/* The random source simulation's parameters: each absorbing face becomes a RANDOM face
 * (undamped layers), widened to the random width where that is wider; a free surface
 * and the NONE faces of a 2D model stay as they are. */
void rtm_random_params(const struct prop_params *pp, int random_width, struct prop_params *out);

int rtm_memory_estimate(const struct rtm_mem_input *in, struct rtm_mem *out);

/* Bytes of checkpointing with SNAPS snaps and SCHEDULE. */
size_t rtm_memory_checkpoint(const struct rtm_mem *m, const struct rtm_mem_input *in, int snaps,
                             int schedule);

/* The strategy auto picks under BUDGET bytes (and IN's host budget for the strips); *SNAPS
 * the checkpoint count for it, *HOST_STRIPS whether boundary's strips go to the host (may
 * be NULL).  WHY gets one line saying why.  -ENOMEM (err_msg set) when not even random
 * fits. */
int rtm_memory_pick(const struct rtm_mem *m, const struct rtm_mem_input *in, size_t budget,
                    int *strategy, int *snaps, char *why, size_t why_len);
int rtm_memory_pick_strips(const struct rtm_mem *m, const struct rtm_mem_input *in, size_t budget, int *strategy,
                           int *snaps, bool *host_strips, char *why, size_t why_len);

/* Where a boundary run under BUDGET puts its strips: 0 device, 1 host; -ENOMEM (err_msg
 * saying which memory is short, and by how much) when neither fits. */
int rtm_memory_strips_where(const struct rtm_mem *m, const struct rtm_mem_input *in, size_t budget);

/* The staging strips of IN (strip_stages, or RTM_STRIP_STAGES). */
int rtm_memory_stages(const struct rtm_mem_input *in);

/* Default checkpoint count for NT steps: ceil(sqrt(nt + 1)). */
int rtm_default_snaps(int nt);

#ifdef __cplusplus
}
#endif

#endif
