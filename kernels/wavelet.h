/* wavelet — source time functions: the Ricker wavelet, a user wavelet from a file, and
 * band-limited resampling (user wavelets to the propagator dt, traces to dt_out). */
#ifndef SEISLIVE_WAVELET_H
#define SEISLIVE_WAVELET_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Ricker wavelet of peak frequency FP (Hz) centred at T0 (s), at time T (s):
 * (1 - 2 (pi fp tau)^2) exp(-(pi fp tau)^2), tau = t - t0. */
double wavelet_ricker(double t, double fp, double t0);

/* The delay used for Ricker sources: 1.5 / fp (the wavelet is < 1e-7 of its peak
 * before t = 0). */
double wavelet_ricker_delay(double fp);

/* The highest frequency that matters: 2.5 fp for a Ricker (spectrum 3% of its peak). */
double wavelet_ricker_fmax(double fp);

/* NT samples of a Ricker at dt into OUT (sample i at t = i dt). */
void wavelet_ricker_fill(float *out, size_t nt, double dt, double fp);

/* At most this many samples in a wavelet file: an hour of sweep at 0.5 ms is 7.2 M (and
 * wavelet_fmax's transform takes 64 B a sample). */
#define WAVELET_MAX_SAMPLES 10000000

/* Read a wavelet file: one number per line ('#' comments and blank lines skipped), at
 * most WAVELET_MAX_SAMPLES.  *OUT (malloc'd, caller frees) gets *N samples.  Errors name
 * PATH:LINE. */
int wavelet_read(const char *path, float **out, size_t *n);

/* Resample IN (N_IN samples at DT_IN) to N_OUT samples at DT_OUT with a Kaiser-windowed
 * sinc (half-width 8 input samples; low-pass at the output Nyquist when DT_OUT > DT_IN).
 * Sample i of OUT is at time i DT_OUT; input beyond its ends counts as zero. */
void wavelet_resample(const float *in, size_t n_in, double dt_in, float *out, size_t n_out,
                      double dt_out);

/* wavelet_resample's weights for one (N_IN, DT_IN) -> (N_OUT, DT_OUT), computed once and
 * applied to many traces with the same result, bit for bit (the same products summed in
 * the same order).  Why: a shot's traces all resample alike, and the Kaiser window's
 * Bessel series at 16 or more taps per output sample was most of a 10 000-receiver model
 * shot's time (about 40 s on one core for 4 s of traces) where the propagation took
 * well under a second on the GPU. */
struct wavelet_resampler {
    size_t n_in, n_out;
    double fc;   /* the low-pass factor (1 when upsampling) */
    int taps;    /* weights per output sample, at most */
    long *k0;    /* the first input sample of output i */
    int *nk;     /* how many from k0[i] (inputs beyond the ends count as zero: left out) */
    double *w;   /* taps per output, the window-sinc at each (fc applied separately) */
    void *cu;    /* device copies of k0, nk, w (kernels/wavelet.cu; NULL until used) */
};

/* -ENOMEM (R is then empty: wavelet_resampler_free is still safe). */
int wavelet_resampler_init(struct wavelet_resampler *r, size_t n_in, double dt_in, size_t n_out, double dt_out);
/* IN (R->n_in samples) resampled into OUT (R->n_out): wavelet_resample's samples. */
void wavelet_resampler_apply(const struct wavelet_resampler *r, const float *in, float *out);
/* wavelet_resampler_apply for NTR traces on the GPU (kernels/wavelet.cu): trace i from IN
 * + i IN_STRIDE into OUT + i OUT_STRIDE, both in the current CUDA device's memory; the
 * same products in the same order in double (float-equal to the CPU's but for the FMA
 * contractions); the weights are uploaded on the first call, to the device current then,
 * and kept with R (one thread, one device per R; the default stream, the device synchronised).  Returns
 * when OUT holds the result; -ENOTSUP without CUDA, -EIO / -ENOMEM with err_msg(). */
int wavelet_resampler_apply_device(struct wavelet_resampler *r, const float *in, size_t in_stride, float *out,
                                   size_t out_stride, size_t ntr);
void wavelet_resampler_free(struct wavelet_resampler *r);

/* The frequency above which the amplitude spectrum of W (N samples at DT) stays below
 * 3% of its peak (the same criterion as wavelet_ricker_fmax). */
double wavelet_fmax(const float *w, size_t n, double dt);

#ifdef __cplusplus
}
#endif

#endif
