/* stability_conf — the time step of a configuration: kernels/stability.h's rule with
 * the [propagator] keys, a refusal naming the config place of dt. */
#ifndef SEISLIVE_STABILITY_CONF_H
#define SEISLIVE_STABILITY_CONF_H

#include <stdio.h>

#include "conf/config.h"
#include "io/model.h"
#include "kernels/stability.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The stability parameters of CFG's [propagator] on its [model] spacing.  DT_NAME gets
 * the text that names dt in a refusal ("FILE:LINE:COL: [propagator] dt") and must
 * outlive SP's use. */
void stability_params_of(const struct sl_config *cfg, struct stability_params *sp, char *dt_name, size_t len);

/* Resolve the time step of CFG for a model with velocities VMIN..VMAX and a source
 * whose highest frequency is FMAX: [propagator] dt = 0 gives cfl x dt_max; a dt above
 * dt_max is refused (-EINVAL) with "FILE:LINE:COL: [propagator] dt = ... exceeds the
 * largest stable dt ... s".  Warns (log) when the points per wavelength fall below
 * [propagator] ppw_min.  *DT gets the step, *DT_MAX (optional) the limit, *PPW
 * (optional) the points per wavelength. */
int stability_resolve(const struct sl_config *cfg, double vmin, double vmax, double fmax, double *dt,
                      double *dt_max, double *ppw);

/* stability_resolve for model M: with [propagator] physics = "tti" the limit is
 * tti_dt_max_model (kernels/tti.h) over M's points at [propagator] tti_sigma, after
 * tti_model_check (a refusal names the point and the parameter), and the points per
 * wavelength are those of the slowest qP phase velocity over M (tti_qp_vmin_model,
 * kernels/tti_phase.h); acoustic: the rule of stability_resolve for M's velocity range. */
int stability_resolve_model(const struct sl_config *cfg, const struct sl_model *m, double fmax, double *dt,
                            double *dt_max, double *ppw);

/* The limit stability_resolve_model applies to M (its operator designed for FMAX when
 * operator_band = "auto"), without resolving dt or warning
 * (`seislive check` words its own report): *DT_MAX the largest stable dt, *VSLOW the
 * speed of its points per wavelength (TTI: the slowest qP phase velocity; acoustic: M's
 * vmin).  -EINVAL as stability_resolve_model for a TTI model it refuses. */
int stability_model_limit(const struct sl_config *cfg, const struct sl_model *m, double fmax, double *dt_max,
                          double *vslow);

/* The band of CFG's operator on model M for a wavelet reaching FMAX: [propagator]
 * operator_band as configured, or for "auto" the band kernels/operator.h designs for FMAX
 * and the slowest wave of M (TTI: qP phase velocity) on the grid; the value the job's
 * propagator takes (stability_resolve_model picks dt for the same operator).  -EINVAL,
 * naming the key, where "auto" has no FMAX to design for. */
int stability_band_model(const struct sl_config *cfg, const struct sl_model *m, double fmax, double *band);

/* The dispersion report of `seislive check`: for CFG's operator, order, grid and the
 * step DT, the phase-velocity error of the slowest wave (VSLOW m/s) at FMAX in space alone
 * and in space and time (axis, face diagonal, body diagonal, worst direction;
 * kernels/dispersion.h) and the points per wavelength at which 1 % and 0.1 % are reached,
 * printed on OUT, with whether the worst error is within [propagator] dispersion_max:
 * the space-and-time error, or the error in space alone when time_dispersion = "correct"
 * removes the time part from the results (the log warning is stability_pick_dt's, in the
 * job's report).  *ERR (optional) gets that worst error.  -EINVAL for a refused operator
 * band. */
int stability_dispersion_report(const struct sl_config *cfg, double vslow, double fmax, double dt, FILE *out,
                                double *err);

/* The TTI parameters of M as the propagator takes them (vp = M's v). */
struct prop_model;
void stability_prop_model(const struct sl_model *m, struct prop_model *pm);

#ifdef __cplusplus
}
#endif

#endif
