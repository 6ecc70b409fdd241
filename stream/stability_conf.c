/* stability_conf — see stability_conf.h. */
#include "stream/stability_conf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "kernels/dispersion.h"
#include "kernels/operator.h"
#include "kernels/propagator.h"
#include "kernels/tti.h"
#include "kernels/tti_phase.h"
#include "conf/schema.h"
#include "stream/error.h"

/* the config's "auto" reaches the kernels as their own sentinel.  A comparison of floating
 * constants is no integer constant expression: gcc takes it in _Static_assert, clang (the
 * fuzz build) refuses it; tests/test_operator_band_auto.c checks the same at run time. */
#ifndef __clang__
_Static_assert(CONF_AUTO == OPERATOR_BAND_AUTO, "conf/schema.h CONF_AUTO and kernels/operator.h OPERATOR_BAND_AUTO");
#endif

void stability_params_of(const struct sl_config *cfg, struct stability_params *sp, char *dt_name, size_t len)
{
    const struct propagator_conf *pc = &cfg->propagator;
    *sp = (struct stability_params){0}; /* dt_limit 0: the acoustic rule (stability_resolve_model sets TTI's) */
    sp->order = pc->order;
    for (int a = 0; a < 3; a++)
        sp->d[a] = cfg->model.d[a];
    sp->dt = pc->dt;
    sp->cfl = pc->cfl;
    sp->ppw_min = pc->ppw_min;
    sp->two_d = cfg->model.n[1] == 1;
    sp->op_kind = pc->op;
    sp->op_band = pc->operator_band;
    sp->dispersion_max = pc->dispersion_max;
    sp->time_corrected = pc->time_dispersion == TIME_DISPERSION_CORRECT;
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

void stability_prop_model(const struct sl_model *m, struct prop_model *pm)
{
    const struct sl_tti *t = &m->tti;
    *pm = (struct prop_model){.vp = m->v};
    if (!m->tti_on)
        return;
    pm->epsilon = t->eps;
    pm->delta = t->delta;
    pm->theta = t->theta;
    pm->phi = t->phi;
    pm->epsilon0 = t->eps0;
    pm->delta0 = t->delta0;
    pm->theta0 = t->theta0;
    pm->phi0 = t->phi0;
}

/* SP for model M: with TTI the limit tti_dt_limit of tti_model_check's fastest qP speed and RULE
 * naming it; *VSLOW the speed behind the points per wavelength (TTI: the slowest qP phase
 * velocity over the model, kernels/tti_phase.h; acoustic: M's vmin). */
static int model_params(const struct sl_config *cfg, const struct sl_model *m, struct stability_params *sp,
                        char *name, size_t name_len, char *rule, size_t rule_len, double *vslow)
{
    stability_params_of(cfg, sp, name, name_len);
    *vslow = m->vmin;
    if (cfg->propagator.physics != PHYSICS_TTI)
        return 0;
    const struct sl_tti *t = &m->tti;
    const struct tti_model tm = {.vpz = m->v, .eps = t->eps, .delta = t->delta, .theta = t->theta, .phi = t->phi,
                                 .eps0 = t->eps0, .delta0 = t->delta0, .theta0 = t->theta0, .phi0 = t->phi0};
    const size_t n = (size_t)m->n[0] * (size_t)m->n[1] * (size_t)m->n[2];
    const double sigma = cfg->propagator.tti_sigma;
    double vqp = 0;
    int rc = tti_model_check(&tm, n, sigma, &vqp, NULL);
    if (rc < 0)
        return err_prefix(rc, "[model] with [propagator] physics = \"tti\", tti_sigma = %g", sigma);
    sp->dt_limit = tti_dt_limit(sp->order, sp->d, sp->two_d, vqp);
    *vslow = tti_qp_vmin_model(&tm, n, sigma);
    snprintf(rule, rule_len, "TTI, v_pz up to %g m/s, fastest qP %g m/s, tti_sigma %g, order %d", m->vmax, vqp,
             sigma, sp->order);
    sp->limit_rule = rule;
    sp->vmin_what = "slowest qP phase velocity";
    return 0;
}

int stability_resolve_model(const struct sl_config *cfg, const struct sl_model *m, double fmax, double *dt,
                            double *dt_max, double *ppw)
{
    struct stability_params sp;
    char name[600], rule[200];
    double vslow;
    int rc = model_params(cfg, m, &sp, name, sizeof name, rule, sizeof rule, &vslow);
    return rc < 0 ? rc : stability_pick_dt(&sp, vslow, m->vmax, fmax, dt, dt_max, ppw);
}

/* CFG's operator_band for a wavelet reaching FMAX on a grid whose slowest wave is VSLOW:
 * "auto" designed for them (kernels/operator.h), else as configured; -EINVAL naming the
 * key where "auto" has no fmax to design for. */
static int resolve_band(const struct sl_config *cfg, double vslow, double fmax, double *band)
{
    const struct propagator_conf *pc = &cfg->propagator;
    *band = operator_band_resolve(pc->op, pc->operator_band, fmax, vslow, cfg->model.d, cfg->model.n[1] == 1);
    if (!isnan(*band))
        return 0;
    char where[512];
    return err_set(-EINVAL, "%s: [propagator] operator_band = \"auto\" needs the wavelet's maximum frequency "
                   "before dt (fmax %g Hz, slowest speed %g m/s): with a wavelet_file, set [propagator] wavelet_dt",
                   config_where(cfg, "propagator.operator_band", where, sizeof where), fmax, vslow);
}

int stability_model_limit(const struct sl_config *cfg, const struct sl_model *m, double fmax, double *dt_max,
                          double *vslow)
{
    struct stability_params sp;
    char name[600], rule[200];
    int rc = model_params(cfg, m, &sp, name, sizeof name, rule, sizeof rule, vslow);
    if (rc < 0 || (rc = resolve_band(cfg, *vslow, fmax, &sp.op_band)) < 0)
        return rc;
    *dt_max = sp.dt_limit > 0 ? sp.dt_limit
                              : stability_dt_max_op(sp.op_kind, sp.order, sp.op_band, sp.d, m->vmax, sp.two_d);
    return 0;
}

int stability_band_model(const struct sl_config *cfg, const struct sl_model *m, double fmax, double *band)
{
    const struct propagator_conf *pc = &cfg->propagator;
    /* only "auto" needs the slowest wave: model_params runs TTI's whole-model check, which
     * stability_resolve_model runs again for dt */
    if (!(pc->operator_band == CONF_AUTO && pc->op != OPERATOR_TAYLOR))
        return resolve_band(cfg, m->vmin, fmax, band);
    struct stability_params sp;
    char name[600], rule[200];
    double vslow;
    int rc = model_params(cfg, m, &sp, name, sizeof name, rule, sizeof rule, &vslow);
    return rc < 0 ? rc : resolve_band(cfg, vslow, fmax, band);
}

/* "+0.123 %", or "n/a" where a direction does not exist (2D: no body diagonal) */
static const char *pct(double e, char *buf, size_t len)
{
    if (isnan(e))
        snprintf(buf, len, "n/a");
    else if (isinf(e))
        snprintf(buf, len, "unstable");
    else
        snprintf(buf, len, "%+.3f %%", 100 * e);
    return buf;
}

int stability_dispersion_report(const struct sl_config *cfg, double vslow, double fmax, double dt, FILE *out,
                                double *err)
{
    const struct propagator_conf *pc = &cfg->propagator;
    if (err)
        *err = NAN;
    struct dispersion_grid g = {.d = {cfg->model.d[0], cfg->model.d[1], cfg->model.d[2]},
                                .two_d = cfg->model.n[1] == 1, .v = vslow};
    double band_asked;
    int rc = resolve_band(cfg, vslow, fmax, &band_asked);
    if (rc < 0)
        return rc;
    rc = operator_design(pc->op, pc->order, band_asked, &g.op);
    if (rc == -ENOTSUP) {
        fprintf(out, "[propagator] dispersion: no report for the %s operator yet (%s)\n", operator_name(pc->op),
                err_msg());
        return 0;
    }
    if (rc < 0) {
        char where[512];
        return err_prefix(rc, "%s: [propagator] operator_band",
                          config_where(cfg, "propagator.operator_band", where, sizeof where));
    }
    const double ppw = stability_ppw(vslow, fmax, cfg->model.d);
    char band[160] = "";
    if (g.op.band > 0)
        snprintf(band, sizeof band, ", band %.3f of Nyquist%s", g.op.band,
                 pc->operator_band == CONF_AUTO ? " (operator_band = \"auto\": 0.9 x 2 / points per wavelength)" : "");
    fprintf(out, "[propagator] dispersion of the %s operator (order %d%s) at fmax %.4g Hz in the slowest medium "
                 "(%g m/s: %.2f points per wavelength on the coarsest axis), dt %.4g ms:\n",
            operator_name(pc->op), pc->order, band, fmax, vslow, ppw, dt * 1e3);
    /* with time_dispersion = "correct" the results keep the error in space alone */
    const bool corrected = pc->time_dispersion == TIME_DISPERSION_CORRECT;
    double worst_st = 0, worst_s = 0;
    for (int k = 0; k < 2; k++) {
        g.dt = k ? dt : 0;
        char b[DISP_NDIR][32];
        double e[DISP_NDIR];
        for (int d = 0; d < DISP_NDIR; d++)
            e[d] = dispersion_error(&g, ppw, d);
        fprintf(out, "  phase-velocity error, %-15s axis %s, face diagonal %s, body diagonal %s, worst %s\n",
                k ? "space and time:" : "space alone:", pct(e[DISP_AXIS], b[0], 32), pct(e[DISP_FACE], b[1], 32),
                pct(e[DISP_BODY], b[2], 32), pct(e[DISP_WORST], b[3], 32));
        if (k)
            worst_st = e[DISP_WORST];
        else
            worst_s = e[DISP_WORST];
    }
    for (int k = 0; k < 2; k++) {
        g.dt = k ? dt : 0;
        fprintf(out, "  points per wavelength for 1 %% / 0.1 %% (worst direction), %-15s %.2f / %.2f\n",
                k ? "space and time:" : "space alone:", dispersion_ppw_at(&g, 1e-2, DISP_WORST),
                dispersion_ppw_at(&g, 1e-3, DISP_WORST));
    }
    const double verdict = corrected ? worst_s : worst_st;
    if (err)
        *err = verdict;
    /* the job's own report warns (stability_pick_dt); here the verdict goes with the numbers */
    if (pc->dispersion_max > 0) {
        g.dt = corrected ? 0 : dt;
        if (corrected)
            fprintf(out, "  time_dispersion = \"correct\": the results keep the error in space alone, the verdict is on it\n");
        if (fabs(verdict) <= pc->dispersion_max)
            fprintf(out, "  within [propagator] dispersion_max %g %%\n", 100 * pc->dispersion_max);
        else
            fprintf(out, "  exceeds [propagator] dispersion_max %g %%: at this dt it holds from %.2f points per "
                         "wavelength on (refine the grid, lower the frequency or dt, or take a better operator)\n",
                    100 * pc->dispersion_max, dispersion_ppw_at(&g, pc->dispersion_max, DISP_WORST));
    }
    return 0;
}
