/* cf — parameters and the CPU reference of the characteristic functions (see cf.h). */
#include "kernels/cf.h"

#include <complex.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "stream/error.h"

_Static_assert(CF_ABS == 0 && CF_ENVELOPE == 1 && CF_STALTA == 2 && CF_RECURSIVE_STALTA == 3 &&
                   CF_KURTOSIS == 4, "cf_step() switches on these values");

/* RBJ biquad, Butterworth section of quality Q, low-pass or high-pass at F0 (Hz). */
static void biquad(double *c, int high, double f0, double dt, double q)
{
    double w0 = 2.0 * M_PI * f0 * dt, cw = cos(w0), al = sin(w0) / (2.0 * q), a0 = 1.0 + al;
    double b0 = high ? (1.0 + cw) / 2.0 : (1.0 - cw) / 2.0;
    double b1 = high ? -(1.0 + cw) : (1.0 - cw);
    c[0] = b0 / a0;
    c[1] = b1 / a0;
    c[2] = b0 / a0;
    c[3] = -2.0 * cw / a0;
    c[4] = (1.0 - al) / a0;
}

static double phase_at(const struct cf_params *p, double w)
{
    double complex z1 = cexp(-I * w), z2 = z1 * z1, h = 1.0;
    for (int q = 0; q < p->nsect; q++) {
        const double *c = p->sos[q];
        h *= (c[0] + c[1] * z1 + c[2] * z2) / (1.0 + c[3] * z1 + c[4] * z2);
    }
    return carg(h);
}

int cf_params_init(struct cf_params *p, const struct locate_conf *lc, double dt)
{
    memset(p, 0, sizeof *p);
    p->kind = lc->cf;
    double f1 = lc->band[0], f2 = lc->band[1], nyq = 0.5 / dt;
    if (f2 > 0 && f2 >= nyq)
        return err_set(-EINVAL, "[locate] band: upper corner %g Hz is not below Nyquist (%g Hz)", f2, nyq);
    if (f1 > 0 && f2 > 0 && f1 >= f2)
        return err_set(-EINVAL, "[locate] band: lower corner %g Hz is not below the upper %g Hz", f1, f2);
    if (f1 >= nyq)
        return err_set(-EINVAL, "[locate] band: lower corner %g Hz is not below Nyquist (%g Hz)", f1, nyq);
    static const double qs[2] = {0.54119610, 1.30656296}; /* 4th-order Butterworth */
    if (f1 > 0)
        for (int i = 0; i < 2; i++)
            biquad(p->sos[p->nsect++], 1, f1, dt, qs[i]);
    if (f2 > 0)
        for (int i = 0; i < 2; i++)
            biquad(p->sos[p->nsect++], 0, f2, dt, qs[i]);
    p->nsta = (int)fmax(1.0, round(lc->sta / dt));
    p->nlta = (int)round(lc->lta / dt);
    p->nkurt = (int)fmax(4.0, round(lc->kurtosis_window / dt));
    p->hl = (int)fmin(4096.0, fmax(8.0, p->nsta));
    if ((p->kind == CF_STALTA || p->kind == CF_RECURSIVE_STALTA) && p->nlta <= p->nsta)
        return err_set(-EINVAL, "[locate] lta (%g s) must be longer than sta (%g s) by a sample at least",
                       lc->lta, lc->sta);
    int ring = 1, win = 0, delay = 0;
    switch (p->kind) {
    case CF_ENVELOPE: ring = 2 * p->hl + 1; win = 2 * p->hl; delay = p->hl; break;
    case CF_STALTA: ring = p->nlta; win = p->nlta; delay = (p->nsta - 1) / 2; break;
    case CF_RECURSIVE_STALTA: win = p->nlta; break; /* measured: peaks at the pulse, no shift */
    case CF_KURTOSIS: ring = p->nkurt; win = p->nkurt; break;
    default: break;
    }
    p->ring = ring + 1;
    /* Group delay of the band-pass at its centre: -d(phase)/d(omega), in samples. */
    if (p->nsect) {
        double fc = f1 > 0 && f2 > 0 ? sqrt(f1 * f2) : f1 > 0 ? 2.0 * f1 : 0.5 * f2;
        double w = 2.0 * M_PI * fc * dt, dw = 1e-4 * w;
        double d = phase_at(p, w + dw) - phase_at(p, w - dw);
        while (d > M_PI)
            d -= 2.0 * M_PI;
        while (d < -M_PI)
            d += 2.0 * M_PI;
        delay += (int)lround(-d / (2.0 * dw));
    }
    double fmin_hz = f1 > 0 ? f1 : f2;
    int fw = fmin_hz > 0 ? (int)ceil(3.0 / (fmin_hz * dt)) : 0; /* filter settling */
    p->warmup = fw + win;
    p->delay = delay;
    if (p->kind == CF_ENVELOPE) {
        int L = p->hl;
        p->hilb_own = calloc(2 * L + 1, sizeof(double));
        if (!p->hilb_own)
            return err_set(-ENOMEM, "cf: out of memory");
        for (int k = 1; k <= L; k += 2) {
            double w = 0.54 + 0.46 * cos(M_PI * k / (L + 1));
            p->hilb_own[L + k] = 2.0 / (M_PI * k) * w;
            p->hilb_own[L - k] = -p->hilb_own[L + k];
        }
    }
    p->hilb = p->hilb_own;
    return 0;
}

void cf_params_free(struct cf_params *p)
{
    free(p->hilb_own);
    p->hilb_own = NULL;
    p->hilb = NULL;
}

void cf_run_cpu(const struct cf_params *p, int nch, int n, const float *in, size_t in_stride,
                float *out, size_t out_stride, double *state)
{
    size_t sl = cf_state_len(p);
#pragma omp parallel for schedule(dynamic, 1)
    for (int c = 0; c < nch; c++) {
        double *s = state + (size_t)c * sl;
        const float *x = in + (size_t)c * in_stride;
        float *y = out + (size_t)c * out_stride;
        for (int i = 0; i < n; i++)
            y[i] = cf_step(p, p->hilb, s, x[i]);
    }
}

void cf_combine_cpu(int nrow, int n, const int *rowch, const float *ch, size_t ch_stride,
                    float *rows, size_t row_stride, int log_out)
{
#pragma omp parallel for schedule(static)
    for (int r = 0; r < nrow; r++)
        for (int i = 0; i < n; i++)
            rows[(size_t)r * row_stride + i] = cf_combine_one(rowch + (size_t)r * CF_MAXC, ch, ch_stride, i, log_out);
}
