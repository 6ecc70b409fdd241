/* model — the velocity model of a run, from [model]: constant, raw float32 file (dims,
 * spacing, origin, byte order, layout from the config), SEG-Y (one trace per x-y column,
 * x fastest among traces, depth samples), or layered.  In electromagnetic (GPR) mode
 * (quantity = permittivity) the file holds relative permittivity eps_r and the model
 * becomes v = c0 / sqrt(eps_r mu_r) so the same acoustic kernels run.
 *
 * Bad files are refused with the file, the byte offset and the grid index of the first
 * bad value: wrong size, NaN or infinity, velocity <= 0, permittivity < 1. */
#ifndef SEISLIVE_MODEL_H
#define SEISLIVE_MODEL_H

#include "conf/config.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MODEL_C0 299792458.0 /* m/s, speed of light in vacuum */

struct sl_model {
    int n[3];
    double d[3], o[3];  /* m */
    float *v;           /* m/s, n[0] x n[1] x n[2], x fastest, z slowest */
    double vmin, vmax;
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
