/* gen_tti — see gen_tti.h. */
#include "tools/gen_tti.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/tti.h"
#include "stream/error.h"

int gen_tti_parse(const char *s, struct survey_model *m, int *dip_out)
{
    static const char *names[4] = {"EPS (epsilon)", "DELTA (delta)", "THETA (tilt)", "PHI (azimuth)"};
    const double lo[4] = {-0.5, -0.5, -90, -360}, hi[4] = {INFINITY, INFINITY, 90, 360};
    double v[4] = {0, 0, 0, 0};
    int n = 0, dip = 0;
    const char *p = s;
    for (;;) {
        size_t len = strcspn(p, ",");
        char item[64];
        if (n == 4 || len == 0 || len >= sizeof item || (dip && n == 3)) {
            fprintf(stderr, "seislive-gen shots: --tti %s: expected EPS,DELTA[,THETA[,PHI]]%s\n", s,
                    dip && n == 3 ? " (no PHI with THETA 'dip': the --dip interface dips toward +x)" : "");
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        char *end;
        v[n] = strtod(item, &end);
        if (n == 2 && strcmp(item, "dip") == 0)
            dip = 1;
        else if (end == item || *end) {
            fprintf(stderr, "seislive-gen shots: --tti %s: %s '%s' is not a number\n", s, names[n], item);
            return -1;
        } else if (!isfinite(v[n]) || !(n < 2 ? v[n] > lo[n] : v[n] >= lo[n]) || v[n] > hi[n]) {
            fprintf(stderr, "seislive-gen shots: --tti %s: %s %s is out of range (%s)\n", s, names[n], item,
                    n < 2 ? "a finite number > -0.5" : n == 2 ? "-90 to 90 degrees, or 'dip'" : "-360 to 360 degrees");
            return -1;
        }
        n++;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    if (n < 2) {
        fprintf(stderr, "seislive-gen shots: --tti %s: expected EPS,DELTA[,THETA[,PHI]]\n", s);
        return -1;
    }
    m->tti = 1;
    *dip_out = dip;
    m->eps = v[0];
    m->delta = v[1];
    m->theta = dip ? 0 : v[2];
    m->phi = v[3];
    return 0;
}

int gen_tti_check(struct survey_model *m, int dip, int model_file)
{
    if (dip) {
        const char *why = model_file ? "a --model file has no --dip interface"
                          : !(m->dip_v > 0) ? "--dip none leaves no dipping interface"
                          : !(fabs(m->dip_deg) < 90) ? "the --dip angle is not within -90 to 90 degrees" : NULL;
        if (why) {
            fprintf(stderr, "seislive-gen shots: --tti ...,dip: the axis normal to the --dip interface, but %s; "
                    "give THETA in degrees\n", why);
            return 1;
        }
        m->theta = -m->dip_deg;
    }
    if (model_file) /* a --model file has no salt that we know of: anisotropic everywhere */
        m->salt_v = 0;
    float one = 1.0f;
    struct tti_model tm = {.vpz = &one, .eps0 = m->eps, .delta0 = m->delta, .theta0 = m->theta * M_PI / 180,
                           .phi0 = m->phi * M_PI / 180};
    if (tti_model_check(&tm, 1, TTI_SIGMA_DEFAULT, NULL, NULL) < 0) {
        fprintf(stderr, "seislive-gen shots: --tti %g,%g: EPS and DELTA too far apart for the TTI propagator at "
                "[propagator] tti_sigma = %g, which survey.toml keeps (%s)\n", m->eps, m->delta,
                TTI_SIGMA_DEFAULT, err_msg());
        return 1;
    }
    return 0;
}
