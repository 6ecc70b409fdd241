#include "kernels/wavelet.h"

#include <complex.h> /* before fftw3.h: fftw_complex is then C99's double complex */
#include <ctype.h>
#include <errno.h>
#include <fftw3.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fftw_plan.h"
#include "kernels/kaiser.h"
#include "stream/error.h"

double wavelet_ricker(double t, double fp, double t0)
{
    double a = M_PI * fp * (t - t0);
    a *= a;
    return (1.0 - 2.0 * a) * exp(-a);
}

double wavelet_ricker_delay(double fp) { return 1.5 / fp; }
double wavelet_ricker_fmax(double fp) { return 2.5 * fp; }

void wavelet_ricker_fill(float *out, size_t nt, double dt, double fp)
{
    double t0 = wavelet_ricker_delay(fp);
    for (size_t i = 0; i < nt; i++)
        out[i] = (float)wavelet_ricker(i * dt, fp, t0);
}

int wavelet_read(const char *path, float **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    size_t cap = 256, cnt = 0;
    float *w = malloc(cap * sizeof *w);
    char line[512];
    int lineno = 0, rc = 0;
    while (w && fgets(line, sizeof line, f)) {
        lineno++;
        /* a line the buffer cannot hold would be split, its tail read as a line of its own
         * (the end of a long comment as a sample) */
        if (!strchr(line, '\n') && !feof(f)) {
            rc = err_set(-EINVAL, "%s:%d: line longer than %d characters", path, lineno, (int)sizeof line - 2);
            break;
        }
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '#' || *p == '\0')
            continue;
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        while (isspace((unsigned char)*end))
            end++;
        if (end == p || (*end && *end != '#') || errno || !isfinite(v)) {
            rc = err_set(-EINVAL, "%s:%d: not a finite number: %.40s", path, lineno, p);
            break;
        }
        if (fabs(v) > FLT_MAX) { /* finite as read, infinite as the float sample it becomes */
            rc = err_set(-EINVAL, "%s:%d: %g is beyond the float range (%g)", path, lineno, v, (double)FLT_MAX);
            break;
        }
        if (cnt == WAVELET_MAX_SAMPLES) {
            rc = err_set(-EINVAL, "%s:%d: more than %d samples", path, lineno, WAVELET_MAX_SAMPLES);
            break;
        }
        if (cnt == cap) {
            cap *= 2;
            float *nw = realloc(w, cap * sizeof *w);
            if (!nw) {
                free(w);
                w = NULL;
                break;
            }
            w = nw;
        }
        w[cnt++] = (float)v;
    }
    fclose(f);
    if (!w)
        return err_set(-ENOMEM, "%s: out of memory", path);
    if (rc == 0 && cnt == 0)
        rc = err_set(-EINVAL, "%s: no samples", path);
    if (rc < 0) {
        free(w);
        return rc;
    }
    *out = w;
    *n = cnt;
    return 0;
}


void wavelet_resample(const float *in, size_t n_in, double dt_in, float *out, size_t n_out,
                      double dt_out)
{
    const int hw = 8;
    const double b = 8.0, i0b = kaiser_i0(b);
    /* Low-pass at the lower of the two Nyquists; the kernel widens when decimating. */
    double fc = dt_out > dt_in ? dt_in / dt_out : 1.0;
    int half = (int)ceil(hw / fc);
    for (size_t i = 0; i < n_out; i++) {
        double x = i * dt_out / dt_in; /* position in input samples */
        long c = (long)floor(x);
        double sum = 0;
        for (long k = c - half + 1; k <= c + half; k++) {
            if (k < 0 || k >= (long)n_in)
                continue;
            sum += in[k] * fc * kaiser_sinc((x - k) * fc, hw, b, i0b);
        }
        out[i] = (float)sum;
    }
}

int wavelet_resampler_init(struct wavelet_resampler *r, size_t n_in, double dt_in, size_t n_out, double dt_out)
{
    /* wavelet_resample's loop, its weights kept instead of summed */
    const int hw = 8;
    const double b = 8.0, i0b = kaiser_i0(b);
    const double fc = dt_out > dt_in ? dt_in / dt_out : 1.0;
    const int half = (int)ceil(hw / fc);
    *r = (struct wavelet_resampler){.n_in = n_in, .n_out = n_out, .fc = fc, .taps = 2 * half};
    r->k0 = malloc((n_out ? n_out : 1) * sizeof *r->k0);
    r->nk = malloc((n_out ? n_out : 1) * sizeof *r->nk);
    r->w = malloc((n_out ? n_out : 1) * (size_t)r->taps * sizeof *r->w);
    if (!r->k0 || !r->nk || !r->w) {
        wavelet_resampler_free(r);
        return err_set(-ENOMEM, "resampling weights: %zu x %d", n_out, 2 * half);
    }
    for (size_t i = 0; i < n_out; i++) {
        double x = i * dt_out / dt_in;
        long c = (long)floor(x), lo = c - half + 1, hi = c + half;
        if (lo < 0)
            lo = 0;
        if (hi > (long)n_in - 1)
            hi = (long)n_in - 1;
        r->nk[i] = hi >= lo ? (int)(hi - lo + 1) : 0;
        r->k0[i] = r->nk[i] ? lo : 0;
        for (long k = lo; k <= hi; k++)
            r->w[i * r->taps + (k - lo)] = kaiser_sinc((x - k) * fc, hw, b, i0b);
    }
    return 0;
}

void wavelet_resampler_apply(const struct wavelet_resampler *r, const float *in, float *out)
{
    for (size_t i = 0; i < r->n_out; i++) {
        const double *w = r->w + i * r->taps;
        const float *x = in + r->k0[i];
        double sum = 0;
        for (int j = 0; j < r->nk[i]; j++)
            sum += x[j] * r->fc * w[j]; /* wavelet_resample's (in x fc) x window-sinc */
        out[i] = (float)sum;
    }
}

#ifdef SEISLIVE_CUDA
/* kernels/wavelet.cu */
int wavelet_cu_resample(struct wavelet_resampler *r, const float *in, size_t in_stride, float *out,
                        size_t out_stride, size_t ntr);
void wavelet_cu_resampler_free(struct wavelet_resampler *r);
#endif

int wavelet_resampler_apply_device(struct wavelet_resampler *r, const float *in, size_t in_stride, float *out,
                                   size_t out_stride, size_t ntr)
{
#ifdef SEISLIVE_CUDA
    return wavelet_cu_resample(r, in, in_stride, out, out_stride, ntr);
#else
    (void)r, (void)in, (void)in_stride, (void)out, (void)out_stride, (void)ntr;
    return err_set(-ENOTSUP, "trace resampling on a GPU: this build has no CUDA");
#endif
}

void wavelet_resampler_free(struct wavelet_resampler *r)
{
#ifdef SEISLIVE_CUDA
    wavelet_cu_resampler_free(r);
#endif
    free(r->k0);
    free(r->nk);
    free(r->w);
    r->k0 = NULL;
    r->nk = NULL;
    r->w = NULL;
}

double wavelet_fmax(const float *w, size_t n, double dt)
{
    /* The amplitude spectrum on the zero-padded grid of 4n points (2n + 1 frequencies up to
     * Nyquist, df = 1 / (4 n dt)), by FFTW's real transform: the direct sum it replaces was
     * O(n^2) in cos and sin, minutes for a recorded sweep of 1e5 samples given as the
     * wavelet file (found in the session-15 fuzz campaign's review). */
    if (n == 0)
        return 0;
    if (n > (size_t)INT_MAX / 4)
        return 0.5 / dt;
    const size_t N = 4 * n, nf = 2 * n + 1;
    double *in = fftw_malloc(N * sizeof *in);
    fftw_complex *out = fftw_malloc(nf * sizeof *out);
    fftw_plan pl = NULL;
    if (in && out) {
        pthread_mutex_lock(&fftw_plan_lock);
        pl = fftw_plan_dft_r2c_1d((int)N, in, out, FFTW_ESTIMATE);
        pthread_mutex_unlock(&fftw_plan_lock);
    }
    if (!pl) {
        fftw_free(in);
        fftw_free(out);
        return 0.5 / dt;
    }
    for (size_t i = 0; i < N; i++)
        in[i] = i < n ? w[i] : 0.0;
    fftw_execute(pl);
    double df = 1.0 / ((double)N * dt), peak = 0, fmax = 0;
    for (size_t k = 0; k < nf; k++)
        if (cabs(out[k]) > peak)
            peak = cabs(out[k]);
    for (size_t k = 0; k < nf; k++)
        if (cabs(out[k]) >= 0.03 * peak)
            fmax = k * df;
    pthread_mutex_lock(&fftw_plan_lock);
    fftw_destroy_plan(pl);
    pthread_mutex_unlock(&fftw_plan_lock);
    fftw_free(in);
    fftw_free(out);
    return fmax;
}
