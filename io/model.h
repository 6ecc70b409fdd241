/* model — the velocity model of a run, from [model]: constant, raw float32 file (dims,
 * spacing, origin, byte order, layout from the config), SEG-Y (one trace per x-y column,
 * x fastest among traces, depth samples), or layered.  In electromagnetic (GPR) mode
 * (quantity = permittivity) the file holds relative permittivity eps_r and the model
 * becomes v = c0 / sqrt(eps_r mu_r) so the same acoustic kernels run.
 *
 * With [propagator] physics = "tti" the TTI parameters come too (struct sl_tti):
 * epsilon_file, delta_file, theta_file, phi_file are read like the velocity file (raw
 * float32 of the same n, layout and byte order, or SEG-Y: the velocity file's format,
 * or beside a constant or layered velocity SEG-Y for *.sgy / *.segy names, raw else);
 * angles in degrees in the files and the config, radians here.
 *
 * Bad files are refused with the file, the byte offset and the grid index of the first
 * bad value: wrong size, NaN or infinity, velocity <= 0, permittivity < 1, epsilon or
 * delta <= -0.5, theta outside [-90, 90] degrees (phi: any finite value, modulo 360). */
#ifndef SEISLIVE_MODEL_H
#define SEISLIVE_MODEL_H

#include <stdbool.h>

#include "conf/config.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MODEL_C0 299792458.0 /* m/s, speed of light in vacuum */

/* The TTI parameters ([propagator] physics = "tti"): a volume per file given (x fastest,
 * like v), NULL where the constant beside it holds; angles in radians (theta in
 * [-pi/2, pi/2], phi wrapped into [-pi, pi]), as kernels/propagator.h's prop_model. */
struct sl_tti {
    float *eps, *delta, *theta, *phi;
    double eps0, delta0, theta0, phi0;
};

struct sl_model {
    int n[3];
    double d[3], o[3];  /* m */
    float *v;           /* m/s, n[0] x n[1] x n[2], x fastest, z slowest (TTI: v_pz) */
    double vmin, vmax;
    bool tti_on;        /* physics = tti: tti holds the parameters */
    struct sl_tti tti;  /* freed with v by model_free */
};

/* Load the model of CFG into M (M->v malloc'd: model_free). */
int model_load(const struct sl_config *cfg, struct sl_model *m);
void model_free(struct sl_model *m);

/* Velocity of a permittivity/permeability pair. */
double model_em_velocity(double eps_r, double mu_r);

#ifdef __cplusplus
}
#endif

#endif
