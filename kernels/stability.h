/* stability — the largest stable time step of the leapfrog scheme and the dispersion
 * (points per wavelength) check, before anything runs.
 *
 *   dt_max = 2 min(dx, dy, dz) / (sqrt(3) vmax sqrt(S)),  S = |c0| + 2 sum |c_l|
 * (c_l the second-derivative weights of the order; S is the largest magnitude of the
 * stencil's symbol, reached at the Nyquist wavenumber; von Neumann analysis of
 * p(n+1) - 2 p(n) + p(n-1) = v^2 dt^2 lap p(n) needs v^2 dt^2 sum_a S / d_a^2 <= 4).
 * Another operator (kernels/operator.h) puts the true maximum of its symbol for S
 * (operator_symbol_max: an optimized stencil's maximum need not lie at Nyquist).
 *
 * The dispersion warning: the worst-direction phase-velocity error in space and time
 * (kernels/dispersion.h) of the slowest wave at fmax with the chosen dt, against
 * dispersion_max; and, for the Taylor operator as before, the points per wavelength
 * against ppw_min (a fixed floor means nothing for an operator designed to need fewer). */
#ifndef SEISLIVE_STABILITY_H
#define SEISLIVE_STABILITY_H

#include <stdbool.h>


#ifdef __cplusplus
extern "C" {
#endif

/* Largest stable dt (s) for ORDER, spacings D (m) and the largest velocity VMAX (m/s). */
double stability_dt_max(int order, const double d[3], double vmax);
/* The same for a 3D grid or, with TWO_D, a 2D one (n[1] = 1: no y term, so
 * dt_max = 2 min(dx, dz) / (sqrt(2) vmax sqrt(S)), sqrt(3/2) larger than the 3D rule on
 * a square grid).  The 3D rule is unchanged. */
double stability_dt_max_dims(int order, const double d[3], double vmax, bool two_d);

/* stability_dt_max_dims for operator KIND of ORDER over BAND (kernels/operator.h): the
 * Taylor rule with S = operator_symbol_max; NAN for an operator that cannot be designed. */
double stability_dt_max_op(int kind, int order, double band, const double d[3], double vmax, bool two_d);

/* Points per wavelength of the slowest wave at FMAX on the coarsest axis. */
double stability_ppw(double vmin, double fmax, const double d[3]);

/* Relative phase-velocity error of the second-order leapfrog in time at frequency F
 * (Hz) and step DT (s), the space derivatives taken as exact: a wave of angular
 * frequency w travels with the numerical wavenumber k of sin(w dt / 2) = (v dt / 2) k,
 * so c_num / c - 1 = x / sin(x) - 1 with x = w dt / 2 = pi F DT (positive: the
 * numerical wave runs ahead; about x^2 / 6, so it falls as dt^2).  INFINITY when
 * x >= pi/2, where the scheme has no real wavenumber for F. */
double stability_time_dispersion(double f, double dt);

/* What the time-step choice depends on besides the model (plain values: the config's
 * [propagator] keys for the jobs, stream/stability_conf.h). */
struct stability_params {
    int order;              /* stencil order */
    double d[3];            /* grid spacing, m */
    double dt;              /* s; 0 = automatic: cfl x the largest stable dt */
    double cfl;             /* fraction of the largest stable dt used when dt = 0 */
    double ppw_min;         /* Taylor: warn below this many points per wavelength at fmax */
    const char *dt_name;    /* how a refusal names dt ("FILE:LINE:COL: [propagator] dt");
                               NULL: "dt" */
    bool two_d;             /* a 2D grid (n[1] = 1): stability_dt_max_dims */
    /* Another physics' limit (TTI: tti_dt_max_model, kernels/tti.h), computed by the
     * caller from its model; 0: the acoustic rule above.  LIMIT_RULE says in a refusal
     * where it comes from (e.g. "TTI, v_pz up to 3000 m/s, sigma 0.75, order 8"). */
    double dt_limit;
    const char *limit_rule;
    /* What VMIN is in the points-per-wavelength warning (NULL: "vmin"; TTI: the slowest
     * qP phase velocity, kernels/tti_phase.h). */
    const char *vmin_what;
    /* The derivative operator (kernels/operator.h; zero: Taylor of ORDER, default band).
     * OP_BAND may be OPERATOR_BAND_AUTO: resolved for VMIN and FMAX (operator_band_resolve). */
    int op_kind;
    double op_band;
    /* Warn when the worst-direction phase-velocity error in space and time at fmax of the
     * slowest wave (kernels/dispersion.h) exceeds this fraction; 0: no such warning. */
    double dispersion_max;
    /* The leapfrog's time dispersion is removed from the results (time_dispersion =
     * "correct", kernels/time_dispersion.h): the verdict above is then on the error in
     * space alone, which is what such results keep. */
    bool time_corrected;
};

/* Resolve the time step of SP for a model with velocities VMIN..VMAX and a source
 * whose highest frequency is FMAX (dt_max: sp->dt_limit when set, else the acoustic rule
 * for VMAX): dt = 0 gives cfl x dt_max; a dt above dt_max is
 * refused (-EINVAL) with "DT_NAME = ... s exceeds the largest stable dt ... s".  Warns
 * (log) when the points per wavelength fall below ppw_min, and when the dispersion error
 * exceeds dispersion_max (then naming the ppw at which it would hold).  *DT gets the step, *DT_MAX
 * (optional) the limit, *PPW (optional) the points per wavelength. */
int stability_pick_dt(const struct stability_params *sp, double vmin, double vmax, double fmax, double *dt,
                      double *dt_max, double *ppw);

#ifdef __cplusplus
}
#endif

#endif
