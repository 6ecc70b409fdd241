/* stability_conf — see stability_conf.h. */
#include "stream/stability_conf.h"

#include <stdio.h>

void stability_params_of(const struct sl_config *cfg, struct stability_params *sp, char *dt_name, size_t len)
{
    const struct propagator_conf *pc = &cfg->propagator;
    sp->order = pc->order;
    for (int a = 0; a < 3; a++)
        sp->d[a] = cfg->model.d[a];
    sp->dt = pc->dt;
    sp->cfl = pc->cfl;
    sp->ppw_min = pc->ppw_min;
    sp->two_d = cfg->model.n[1] == 1;
    char where[512];
    snprintf(dt_name, len, "%s: [propagator] dt", config_where(cfg, "propagator.dt", where, sizeof where));
    sp->dt_name = dt_name;
}

int stability_resolve(const struct sl_config *cfg, double vmin, double vmax, double fmax, double *dt,
                      double *dt_max, double *ppw)
{
    struct stability_params sp;
    char name[600];
    stability_params_of(cfg, &sp, name, sizeof name);
    return stability_pick_dt(&sp, vmin, vmax, fmax, dt, dt_max, ppw);
}
