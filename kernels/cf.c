/* cf — parameters and the CPU reference of the characteristic functions (see cf.h). */
#include "kernels/cf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

int cf_params_init(struct cf_params *p, const struct cf_spec *spec_in, double dt)
{
    /* values not set: derived as for a single trial point (the engine derives them with
     * the grid first; this keeps a direct caller from ever filtering with -1 Hz) */
    struct cf_spec derived = *spec_in;
    cf_spec_derive(&derived, dt, 0.0);
    const struct cf_spec *spec = &derived;
    memset(p, 0, sizeof *p);
    p->kind = spec->kind;
    double f1 = spec->band[0], f2 = spec->band[1], nyq = 0.5 / dt;
    if (f2 > 0 && f2 >= nyq)
        return err_set(-EINVAL, "[locate] band: upper corner %g Hz is not below Nyquist (%g Hz)", f2, nyq);
    if (f1 > 0 && f2 > 0 && f1 >= f2)
        return err_set(-EINVAL, "[locate] band: lower corner %g Hz is not below the upper %g Hz", f1, f2);
    if (f1 >= nyq)
        return err_set(-EINVAL, "[locate] band: lower corner %g Hz is not below Nyquist (%g Hz)", f1, nyq);
    /* FIR band-pass: windowed-sinc high-pass minus nothing... built as the difference
     * of two low-passes (f2 and f1), Hamming window; N ~ 3.3 / (f_low dt) (the window's
     * transition width is ~3.3 / (N dt)), odd so the delay (N-1)/2 is whole. */
    if (f1 > 0 || f2 > 0) {
        double fl = f1 > 0 ? f1 : f2;
        int N = (int)ceil(3.3 / (fl * dt));
        N |= 1;
        if (N > 8191)
            return err_set(-EINVAL, "[locate] band: a %g Hz corner at dt = %g s needs a %d-tap filter (at most 8191)",
                           fl, dt, N);
        p->nfir = N;
    }
    p->scale = spec->scale == 1;
    p->nsta = (int)fmax(1.0, round(spec->sta / dt));
    p->nlta = (int)round(spec->lta / dt);
    p->nkurt = (int)fmax(4.0, round(spec->kurtosis_window / dt));
    p->hl = (int)fmin(4096.0, fmax(8.0, p->nsta));
    if ((p->kind == CF_FN_STALTA || p->kind == CF_FN_RECURSIVE_STALTA) && p->nlta <= p->nsta)
        return err_set(-EINVAL, "[locate] lta (%g s) must be longer than sta (%g s) by a sample at least",
                       spec->lta, spec->sta);
    int ring = 1, win = 0, delay = 0;
    switch (p->kind) {
    case CF_FN_ENVELOPE: ring = 2 * p->hl + 1; win = 2 * p->hl; delay = p->hl; break;
    case CF_FN_STALTA: ring = 2 * p->nsta + p->nlta; win = ring; delay = (p->nsta - 1) / 2; break;
    case CF_FN_RECURSIVE_STALTA: win = p->nlta; break; /* measured: peaks at the pulse, no shift */
    case CF_FN_KURTOSIS: ring = p->nkurt; win = p->nkurt; break;
    default: break;
    }
    p->ring = ring + 1;
    delay += (p->nfir - (p->nfir > 0)) / 2;
    p->warmup = p->nfir + win; /* the FIR window full, then the CF window */
    p->delay = delay;
    int L = p->hl;
    p->ncoef = 2 * L + 1 + p->nfir;
    p->coef_own = calloc((size_t)p->ncoef, sizeof(double));
    if (!p->coef_own)
        return err_set(-ENOMEM, "cf: out of memory");
    if (p->kind == CF_FN_ENVELOPE)
        for (int k = 1; k <= L; k += 2) {
            double w = 0.54 + 0.46 * cos(M_PI * k / (L + 1));
            p->coef_own[L + k] = 2.0 / (M_PI * k) * w;
            p->coef_own[L - k] = -p->coef_own[L + k];
        }
    if (p->nfir) {
        /* ideal band-pass (lowpass f2 - lowpass f1; f2 = Nyquist when not given) */
        double *h = p->coef_own + 2 * L + 1, c = 0.5 * (p->nfir - 1);
        double w2 = f2 > 0 ? 2.0 * f2 * dt : 1.0, w1 = f1 > 0 ? 2.0 * f1 * dt : 0.0; /* in units of Nyquist */
        for (int k = 0; k < p->nfir; k++) {
            double m = k - c;
            double ideal = m == 0 ? w2 - w1 : (sin(M_PI * w2 * m) - sin(M_PI * w1 * m)) / (M_PI * m);
            double win = p->nfir > 1 ? 0.54 - 0.46 * cos(2.0 * M_PI * k / (p->nfir - 1)) : 1.0;
            h[k] = ideal * win;
        }
    }
    p->coef = p->coef_own;
    return 0;
}

void cf_spec_derive(struct cf_spec *spec, double dt, double cell_dt)
{
    double fhi = 0.4 / dt;
    double sta = fmax(4.0 * cell_dt, 2.0 * dt);
    if (cell_dt <= 0) /* a single trial point: no grid to resolve; 20 samples */
        sta = 20.0 * dt;
    /* the FIR needs ~3.3 / (f_lo dt) taps, at most 8191 (cf_params_init) */
    double flo = fmin(fmax(0.5 / sta, 3.4 / (8000.0 * dt)), 0.5 * fhi);
    if (spec->band[0] < 0 && spec->band[1] < 0) {
        spec->band[0] = flo;
        spec->band[1] = fhi;
    }
    if (!(spec->sta > 0))
        spec->sta = sta;
    if (!(spec->lta > 0))
        spec->lta = 10.0 * spec->sta;
    if (!(spec->kurtosis_window > 0))
        spec->kurtosis_window = 5.0 * spec->sta;
    if (spec->scale < 0)
        spec->scale = spec->kind == CF_FN_STALTA || spec->kind == CF_FN_RECURSIVE_STALTA;
}

void cf_params_free(struct cf_params *p)
{
    free(p->coef_own);
    p->coef_own = NULL;
    p->coef = NULL;
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
            y[i] = cf_step(p, p->coef, s, x[i]);
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
