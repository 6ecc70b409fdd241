/* rtm_config — the RTM engine (kernels/rtm.h) from the job's side: its parameters from
 * the configuration, the engine's view of a shot, and the stacking of each migrated
 * shot into the image stack with its ledger entry (the engine only hands back the
 * shot's image patch). */
#ifndef SEISLIVE_RTM_CONFIG_H
#define SEISLIVE_RTM_CONFIG_H

#include "conf/config.h"
#include "io/model.h"
#include "io/shot.h"
#include "kernels/backend.h"
#include "kernels/rtm.h"
#include "stream/image_stack.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Engine parameters with the storage they point into (the wavelet read from
 * [propagator] wavelet_file, the name of dt for a refusal). */
struct rtm_job_params {
    struct rtm_params p;
    float *wavelet;          /* malloc'd, or NULL */
    char dt_name[640];
};

/* The plain values of P from CFG's [propagator] and [rtm] (no wavelet samples: a Ricker
 * of f_peak); DT_NAME (LEN bytes) gets the config place of dt that P points to. */
void rtm_params_from_config(const struct sl_config *cfg, struct rtm_params *p, char *dt_name, size_t len);

/* The same with the wavelet of [propagator] wavelet_file read.  0 or < 0 with
 * err_msg(); free with rtm_job_params_free either way. */
int rtm_job_params_init(const struct sl_config *cfg, struct rtm_job_params *jp);
void rtm_job_params_free(struct rtm_job_params *jp);

/* An engine for CFG on DEV migrating against MODEL (rtm_engine_create with the
 * parameters of CFG). */
/* The engine's view of model M (borrowed: M must outlive the engine's creation), TTI
 * parameters included when M has them. */
void rtm_volume_of_model(const struct sl_model *m, struct rtm_volume *vol);

int rtm_engine_create_cfg(const struct sl_config *cfg, const struct sl_device *dev, const struct rtm_volume *model,
                          struct rtm_engine **out);
/* The same with the model of [model] (io/model.h). */
int rtm_engine_create_from_config(const struct sl_config *cfg, const struct sl_device *dev,
                                  struct rtm_engine **out);

/* The engine's view of SHOT (nothing copied: valid while SHOT is). */
static inline struct rtm_shot rtm_shot_of(const struct shot *s)
{
    struct rtm_shot v = {s->id, s->ns, s->dt, s->ntr, {s->src[0], s->src[1], s->src[2]}, s->rec, s->data};
    return v;
}
/* The same as a pointer for one call's argument: rtm_engine_steps(e, RTM_SHOT(&sh), ...)
 * (a compound literal: it lives to the end of the enclosing block). */
#define RTM_SHOT(s) ((const struct rtm_shot[]){rtm_shot_of(s)})

/* Migrate SHOT with E and add its image (and illumination) into STACK, which must have
 * the engine's model grid, recording the shot in the stack's ledger.  A shot already
 * in the stack is refused (-EEXIST).  STATS may be NULL.  -ECANCELED when a stop is
 * requested (rtm_engine_set_cancel), the stack untouched. */
int rtm_stack_shot(struct rtm_engine *e, const struct shot *shot, struct image_stack *stack,
                   struct rtm_shot_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
