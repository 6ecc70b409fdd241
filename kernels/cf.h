/* cf — characteristic functions of the locate job, per channel, streaming: each call
 * continues exactly where the previous one stopped (all state carried), so the output
 * does not depend on how the stream was cut.
 *
 *   band-pass (optional): linear-phase FIR (windowed sinc, Hamming window) of N taps,
 *     N ~ 3.3 / (f_low dt) (odd), so its delay is exactly (N-1)/2 samples at every
 *     frequency and can be compensated without distorting the pulse;
 *   then one of: abs |y|; envelope sqrt(y^2 + H[y]^2) with an FIR Hilbert transformer of
 *     2L+1 taps (Hamming window, L = sta / dt); classic STA/LTA of y^2 (trailing
 *     windows: the LTA ends sta before the STA window starts, see cf_step); recursive
 *     STA/LTA (exponential windows); kurtosis of y over a trailing
 *     window, excess kurtosis clipped at 0.
 *
 * Every output is >= 0 or NaN.  NaN means "no valid value": the input sample was
 * invalid (NaN), or the function has not yet seen `warmup` valid samples since the
 * last invalid one (the filter and the windows restart after every gap, so a gap's
 * edges never make a spurious spike).  The stack leaves NaN out of sum and count.
 *
 * Output sample n refers to time n - delay: `delay` (samples) compensates the
 * Hilbert filter (L), the centre of the classic STA window ((nsta-1)/2) and the group
 * delay of the FIR band-pass ((N-1)/2), so a symmetric pulse's function peaks at the
 * pulse's time (envelope, classic STA/LTA; kurtosis is an onset detector and is not
 * shifted).  The engine shifts by it.
 *
 * The per-sample arithmetic is in cf_step() below, shared verbatim by the CPU
 * reference (cf.c) and the CUDA twin (cf.cu), in double precision. */
#ifndef SEISLIVE_CF_H
#define SEISLIVE_CF_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define CF_HD __host__ __device__
#else
#define CF_HD
#endif

/* The characteristic function (the [locate] cf key; the job maps it). */
enum cf_function {
    CF_FN_ABS = 0,
    CF_FN_ENVELOPE = 1,
    CF_FN_STALTA = 2,
    CF_FN_RECURSIVE_STALTA = 3,
    CF_FN_KURTOSIS = 4,
};

/* What the user asked for, in seconds and Hz (the job fills it from [locate]).  A value
 * not set (sta, lta, kurtosis_window <= 0; band [-1, -1]) is derived by cf_spec_derive
 * once the sampling rate is known. */
struct cf_spec {
    int kind;                /* enum cf_function */
    double sta, lta;         /* s */
    double kurtosis_window;  /* s */
    double band[2];          /* Hz; [0, 0] = no filter, a 0 corner = that side open */
    int scale;               /* 0: the value; 1: log(1 + value) (see cf_spec_derive); -1: not set */
};

/* The derived defaults (docs/locate.md, "Derived defaults"), for sample interval DT and
 * a phase whose travel time changes by up to CELL_DT seconds between neighbouring trial
 * points (0: a single point):
 *
 *   sta                4 CELL_DT (at least 2 samples; 20 samples for a single point):
 *                      the grid samples each station's moveout every CELL_DT, so a
 *                      function narrower than a few CELL_DT peaks between trial points
 *                      and the coherent peak is missed; a longer one has a flat top one
 *                      STA wide (the STA/LTA of a pulse shorter than its window), which
 *                      spreads the peak over STA x velocity (8 CELL_DT moved the demo's
 *                      events by up to 155 m, 4 CELL_DT by at most 38 m);
 *   lta                10 sta;   kurtosis_window  5 sta;
 *   band lower corner  f_lo = 1 / (2 sta): a period the STA window holds twice; below
 *                      are the offset of raw counts, the microseism and wind, which
 *                      otherwise dominate the energy (no filter: none of the Iceland
 *                      icequakes, docs/locate.md);
 *   band upper corner  f_hi = 0.4 / DT (80 % of Nyquist, where the filter's transition
 *                      still fits): a low-pass tied to the grid (1 / (2 CELL_DT)) cut into
 *                      the demo's 20 Hz S pulses and made its events 70-240 m shallow;
 *   scale              log(1 + value) for the STA/LTA functions (a ratio of energies):
 *                      one station's glitch (a spike, a telemetry step) makes a ratio of
 *                      10^3-10^5 that outweighs the whole array in the stack's mean and
 *                      is "located" at the station; on the log scale it weighs what one
 *                      strong arrival does, so only what many rows see together stands
 *                      out.  (A clip at a fixed value did that too, but flattened every
 *                      strong arrival's peak into a plateau one STA window wide and
 *                      moved the demo's events by 400 m.)  Monotonic: each row's peak
 *                      stays where it was.
 *
 * So the S band is lower than the P band by vp / vs, and its windows longer by the same
 * factor.  Values already set are kept; a derived band is only used when both corners
 * were unset. */
void cf_spec_derive(struct cf_spec *spec, double dt, double cell_dt);

struct cf_params {
    int kind;            /* enum cf_function */
    int nfir;            /* band-pass taps (0 = no filter) */
    int nsta, nlta;      /* samples */
    int nkurt;           /* samples */
    int hl;              /* Hilbert half length L */
    int ring;            /* history samples kept per channel */
    int warmup;          /* valid samples before the output is valid */
    int scale;           /* 1: the output is log(1 + value) */
    int delay;           /* samples, see above */
    int ncoef;           /* 2L+1 Hilbert taps, then nfir band-pass taps */
    const double *coef;  /* host memory; the CUDA twin copies them */
    double *coef_own;
};

/* Fill P from SPEC for sample interval DT (s).  Errors name the [locate] key the
 * value came from. */
int cf_params_init(struct cf_params *p, const struct cf_spec *spec, double dt);
void cf_params_free(struct cf_params *p);

/* Doubles of state per channel. */
static inline CF_HD size_t cf_state_len(const struct cf_params *p)
{
    return (size_t)(12 + p->ring + p->nfir);
}

/* CPU reference: NCH channels of N samples; IN and OUT are row-major with the given
 * strides (floats); STATE holds cf_state_len() doubles per channel, zero at the start
 * of the stream. */
void cf_run_cpu(const struct cf_params *p, int nch, int n, const float *in, size_t in_stride,
                float *out, size_t out_stride, double *state);

/* Rows from channels: row r's value at sample i is the mean of the valid (non-NaN)
 * channel values of its up to CF_MAXC channels ROWCH[r * CF_MAXC + c] (-1 = unused),
 * NaN when none is valid; with LOG_OUT the natural log of max(mean, 1e-30) (for the
 * geometric-mean stack).  S from the two horizontals is this mean. */
#define CF_MAXC 4
void cf_combine_cpu(int nrow, int n, const int *rowch, const float *ch, size_t ch_stride,
                    float *rows, size_t row_stride, int log_out);

#ifdef SEISLIVE_CUDA
int cf_combine_cuda(int nrow, int n, const int *rowch_dev, const float *ch, size_t ch_stride,
                    float *rows, size_t row_stride, int log_out, void *stream);
/* CUDA twin: the same on device pointers (COEF_DEV: p->coef on the device), on STREAM
 * (a cudaStream_t, 0 = default).  Returns 0 or -EIO with err_msg(). */
int cf_run_cuda(const struct cf_params *p, const double *coef_dev, int nch, int n,
                const float *in, size_t in_stride, float *out, size_t out_stride,
                double *state, void *stream);
#endif

static inline CF_HD float cf_combine_one(const int *rc, const float *ch, size_t ch_stride, int i,
                                         int log_out)
{
    float sum = 0.0f;
    int n = 0;
    for (int c = 0; c < CF_MAXC; c++) {
        if (rc[c] < 0)
            continue;
        float v = ch[(size_t)rc[c] * ch_stride + i];
        if (v == v) {
            sum += v;
            n++;
        }
    }
    if (!n)
        return NAN;
    float m = sum / (float)n;
    return log_out ? logf(m > 1e-30f ? m : 1e-30f) : m;
}

/* ---- the per-sample step, shared by both --------------------------------------- */

/* State layout: [0] warm count, [1] ring position, [2] sta, [3] lta, [4..7] sums S1..S4,
 * [8] raw ring position, [9..11] spare, then the ring of filtered samples (ring), then
 * the ring of raw samples (nfir). */
enum { CF_S_WARM = 0, CF_S_POS = 1, CF_S_STA = 2, CF_S_LTA = 3, CF_S_SUM = 4, CF_S_RPOS = 8 };
#define CF_S_RING 12

static inline CF_HD void cf_reset(const struct cf_params *p, double *s)
{
    for (int i = 0; i < CF_S_RING; i++)
        s[i] = 0.0;
    (void)p;
}

/* One input sample X -> one output value (NaN = invalid). */
static inline CF_HD float cf_step(const struct cf_params *p, const double *coef, double *s, float x)
{
    if (!(x == x) || !(x - x == 0.0f)) { /* NaN or inf: a gap restarts everything */
        cf_reset(p, s);
        return NAN;
    }
    double y = x;
    const double *hilb = coef;
    if (p->nfir) {
        const double *h = coef + 2 * p->hl + 1;
        double *raw = s + CF_S_RING + p->ring;
        int rp = (int)s[CF_S_RPOS], N = p->nfir;
        raw[rp] = y;
        double acc = 0.0;
        int i = rp;
        for (int k = 0; k < N; k++) {
            acc += h[k] * raw[i];
            i = i ? i - 1 : N - 1;
        }
        s[CF_S_RPOS] = (double)((rp + 1) % N);
        y = acc;
    }
    int R = p->ring;
    double *ring = s + CF_S_RING;
    int pos = (int)s[CF_S_POS];
    double warm = s[CF_S_WARM] + 1.0;
    s[CF_S_WARM] = warm;
    /* sample that is W samples old (W >= 1), before this one is written */
#define CF_OLD(W) ring[(pos - (W) + 2 * R) % R]
    double v = 0.0;
    int ok = warm > p->warmup;
    switch (p->kind) {
    case CF_FN_ABS:
        v = fabs(y);
        break;
    case CF_FN_ENVELOPE: { /* analytic signal at the centre of the last 2L+1 samples */
        int L = p->hl;
        double h = 0.0;
        /* ring holds the previous samples; the newest (y) is index 0 of the window */
        for (int k = 1; k <= L; k += 2) {
            /* tap k pairs sample (centre - k) and (centre + k): centre = L samples ago */
            double later = (k == L) ? y : CF_OLD(L - k);
            double earlier = CF_OLD(L + k);
            h += hilb[L + k] * (earlier - later);
        }
        double c = L > 0 ? CF_OLD(L) : y;
        v = sqrt(c * c + h * h);
        break;
    }
    case CF_FN_STALTA: { /* classic */
        /* STA over the last nsta samples; LTA over nlta samples that end nsta samples
         * before the STA window starts.  Whenever the LTA holds part of the pulse, the
         * ratio depends on the pulse's amplitude: an LTA over the STA window too
         * saturated near nlta/nsta as soon as the pulse outweighed the noise, so strong
         * arrivals rose and peaked up to 5 samples earlier than weak ones -- a delay that
         * depends on distance, which put every event 25-30 m too shallow on the demo
         * (tests/test_locate_calib.c).  An LTA right behind the STA window takes the
         * pulse in while the STA still holds its end and cuts the fall short the same
         * way; the gap of nsta keeps a pulse shorter than the STA window out of the LTA
         * for as long as it is in the STA, so the function is the pulse's energy over
         * the STA window divided by the noise before it: the same shape at any
         * amplitude, centred (nsta - 1) / 2 samples after the pulse. */
        double e = y * y;
        double sta = s[CF_S_STA] + e, lta = s[CF_S_LTA];
        if (warm > p->nsta) {
            double o = CF_OLD(p->nsta);
            sta -= o * o;
        }
        if (warm > 2 * p->nsta) {
            double o = CF_OLD(2 * p->nsta);
            lta += o * o;
        }
        if (warm > 2 * p->nsta + p->nlta) {
            double o = CF_OLD(2 * p->nsta + p->nlta);
            lta -= o * o;
        }
        sta = sta > 0.0 ? sta : 0.0;
        lta = lta > 0.0 ? lta : 0.0;
        s[CF_S_STA] = sta;
        s[CF_S_LTA] = lta;
        if (lta > 0.0)
            v = (sta / p->nsta) / (lta / p->nlta);
        else
            ok = 0;
        break;
    }
    case CF_FN_RECURSIVE_STALTA: {
        double e = y * y, cs = 1.0 / p->nsta, cl = 1.0 / p->nlta;
        double sta = cs * e + (1.0 - cs) * s[CF_S_STA];
        double lta = cl * e + (1.0 - cl) * s[CF_S_LTA];
        s[CF_S_STA] = sta;
        s[CF_S_LTA] = lta;
        if (lta > 0.0)
            v = sta / lta;
        else
            ok = 0;
        break;
    }
    default: { /* CF_FN_KURTOSIS */
        double *S = s + CF_S_SUM, y2 = y * y;
        S[0] += y;
        S[1] += y2;
        S[2] += y2 * y;
        S[3] += y2 * y2;
        if (warm > p->nkurt) {
            double o = CF_OLD(p->nkurt), o2 = o * o;
            S[0] -= o;
            S[1] -= o2;
            S[2] -= o2 * o;
            S[3] -= o2 * o2;
        }
        double n = p->nkurt, m = S[0] / n;
        double m2 = S[1] / n - m * m;
        double m4 = S[3] / n - 4.0 * m * S[2] / n + 6.0 * m * m * S[1] / n - 3.0 * m * m * m * m;
        if (m2 > 0.0) {
            v = m4 / (m2 * m2) - 3.0;
            v = v > 0.0 ? v : 0.0;
        } else {
            ok = 0;
        }
        break;
    }
    }
#undef CF_OLD
    ring[pos] = y;
    s[CF_S_POS] = (double)((pos + 1) % R);
    if (p->scale == 1)
        v = log1p(v);
    return ok ? (float)v : NAN;
}

#ifdef __cplusplus
}
#endif

#endif
