#include "kernels/stability.h"

#include <errno.h>
#include <math.h>

#include "kernels/dispersion.h"
#include "kernels/fd_coeffs.h"
#include "kernels/operator.h"
#include "stream/error.h"
#define LOG_COMPONENT "propagator"
#include "stream/log.h"

double stability_dt_max(int order, const double d[3], double vmax)
{
    double dmin = fmin(d[0], fmin(d[1], d[2]));
    return 2.0 * dmin / (sqrt(3.0) * vmax * sqrt(fd_second_abs_sum(order)));
}

double stability_dt_max_dims(int order, const double d[3], double vmax, bool two_d)
{
    if (!two_d)
        return stability_dt_max(order, d, vmax);
    double dmin = fmin(d[0], d[2]);
    return 2.0 * dmin / (sqrt(2.0) * vmax * sqrt(fd_second_abs_sum(order)));
}

double stability_dt_max_op(int kind, int order, double band, const double d[3], double vmax, bool two_d)
{
    if (kind == 0) /* PROP_OP_TAYLOR: the rule as it always was, bit for bit */
        return stability_dt_max_dims(order, d, vmax, two_d);
    const double dmin = two_d ? fmin(d[0], d[2]) : fmin(d[0], fmin(d[1], d[2]));
    return 2.0 * dmin / (sqrt(two_d ? 2.0 : 3.0) * vmax * sqrt(operator_symbol_max(kind, order, band)));
}

double stability_ppw(double vmin, double fhi, const double d[3])
{
    double dmax = fmax(d[0], fmax(d[1], d[2]));
    return vmin / (fhi * dmax);
}

int stability_pick_dt(const struct stability_params *sp, double vmin, double vmax, double fmax, double *dt,
                      double *dt_max, double *ppw)
{
    /* a band "auto" is designed for this wavelet and grid (kernels/operator.h) */
    const double band = operator_band_resolve(sp->op_kind, sp->op_band, fmax, vmin, sp->d, sp->two_d);
    if (isnan(band))
        return err_set(-EINVAL, "operator_band \"auto\" needs the wavelet's maximum frequency and the slowest "
                       "speed (fmax %g Hz, vmin %g m/s)", fmax, vmin);
    double lim = sp->dt_limit > 0 ? sp->dt_limit
                                  : stability_dt_max_op(sp->op_kind, sp->order, band, sp->d, vmax, sp->two_d);
    if (!(lim > 0))
        return err_set(-EINVAL, "the %s operator of order %d has no stable dt (band %g)", operator_name(sp->op_kind),
                       sp->order, band);
    if (dt_max)
        *dt_max = lim;
    if (sp->dt == 0) {
        *dt = sp->cfl * lim;
    } else if (sp->dt > lim && sp->dt_limit > 0) {
        return err_set(-EINVAL, "%s = %g s exceeds the largest stable dt %.6g s (%s); use dt <= %.6g or dt = 0 "
                       "(automatic)", sp->dt_name ? sp->dt_name : "dt", sp->dt, lim,
                       sp->limit_rule ? sp->limit_rule : "the physics' limit", lim);
    } else if (sp->dt > lim) {
        return err_set(-EINVAL,
                       "%s = %g s exceeds the largest stable dt %.6g s "
                       "(order %d, vmax %g m/s, smallest spacing %g m); use dt <= %.6g or dt = 0 "
                       "(automatic)",
                       sp->dt_name ? sp->dt_name : "dt", sp->dt, lim, sp->order, vmax,
                       sp->two_d ? fmin(sp->d[0], sp->d[2]) : fmin(sp->d[0], fmin(sp->d[1], sp->d[2])), lim);
    } else {
        *dt = sp->dt;
    }
    double q = stability_ppw(vmin, fmax, sp->d);
    if (ppw)
        *ppw = q;
    /* ppw_min is Taylor's fixed floor (every config before the operator choice); another
     * operator is judged by its own dispersion error alone (dispersion_max below) */
    if (sp->op_kind == 0 && q < sp->ppw_min * (1 - 1e-9))
        log_warn("%.2f points per wavelength at %g Hz (%s %g m/s) is below ppw_min %g: expect "
                 "numerical dispersion (refine the grid or lower the frequency)",
                 q, fmax, sp->vmin_what ? sp->vmin_what : "vmin", vmin, sp->ppw_min);
    if (sp->dispersion_max > 0) {
        struct dispersion_grid g = {.d = {sp->d[0], sp->d[1], sp->d[2]}, .two_d = sp->two_d, .v = vmin,
                                    .dt = sp->time_corrected ? 0 : *dt};
        if (operator_design(sp->op_kind, sp->order, band, &g.op) < 0)
            return 0; /* an operator without a symbol here (refused where it is created) */
        double e = dispersion_error(&g, q, DISP_WORST);
        if (!(fabs(e) <= sp->dispersion_max))
            log_warn("phase-velocity error %+.3g %% (worst direction, %s, %s operator order %d) at %g Hz "
                     "(%s %g m/s, %.2f points per wavelength) exceeds dispersion_max %g %%: at this dt it holds from "
                     "%.2f points per wavelength on (refine the grid, lower the frequency or dt, or take a better operator)",
                     100 * e, sp->time_corrected ? "space alone: the time dispersion is corrected" : "space and time",
                     operator_name(sp->op_kind), sp->order, fmax, sp->vmin_what ? sp->vmin_what : "vmin", vmin,
                     q, 100 * sp->dispersion_max, dispersion_ppw_at(&g, sp->dispersion_max, DISP_WORST));
    }
    return 0;
}

double stability_time_dispersion(double f, double dt)
{
    double x = M_PI * f * dt;
    if (!(x < M_PI / 2))
        return INFINITY;
    if (x < 1e-4)
        return x * x / 6; /* x / sin(x) - 1 loses every digit to cancellation here */
    return x / sin(x) - 1;
}
