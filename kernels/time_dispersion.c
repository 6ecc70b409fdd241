/* time_dispersion — see time_dispersion.h for the transforms and why they are exact. */
#include "kernels/time_dispersion.h"

#include <complex.h> /* before fftw3.h: fftw_complex is then C99's double complex */
#include <errno.h>
#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fftw_plan.h"
#include "kernels/time_dispersion_internal.h"
#include "stream/error.h"

pthread_mutex_t fftw_plan_lock = PTHREAD_MUTEX_INITIALIZER;
double tdt_band_limit(double dt) { return 1.0 / (M_PI * dt); }

double tdt_fd_frequency(double f, double dt)
{
    double x = M_PI * f * dt;
    return x >= 1.0 - 1e-12 ? INFINITY : asin(x) / (M_PI * dt); /* the band edge itself too, rounding aside */
}

double tdt_true_frequency(double f_fd, double dt) { return sin(M_PI * f_fd * dt) / (M_PI * dt); }

/* The next length >= N of the form 2^a 3^b 5^c (fast FFTW sizes). */
static size_t smooth_at_least(size_t n)
{
    for (size_t c = n;; c++) {
        size_t r = c;
        while (r % 2 == 0)
            r /= 2;
        while (r % 3 == 0)
            r /= 3;
        while (r % 5 == 0)
            r /= 5;
        if (r == 1)
            return c;
    }
}

static void warp_free(struct warp *w)
{
    free(w->j0);
    free(w->w);
    free(w->phase);
    free(w->valid);
}

/* The warped input frequency (rad / sample) of output frequency W (rad / sample), or a
 * negative value where there is none. */
static double warped(int dir, double w)
{
    if (dir == TDT_FORWARD)
        return 2.0 * sin(0.5 * w);
    return w > 2.0 ? -1.0 : 2.0 * asin(0.5 * w);
}

static int warp_init(struct tdt *t, int dir)
{
    struct warp *w = &t->warp[dir];
    size_t nk = t->l / 2 + 1;
    w->j0 = malloc(nk * sizeof *w->j0);
    w->w = malloc(nk * NLAG * sizeof *w->w);
    w->phase = malloc(nk * 2 * sizeof *w->phase);
    w->valid = malloc(nk);
    if (!w->j0 || !w->w || !w->phase || !w->valid)
        return -ENOMEM;
    const double h = 2.0 * M_PI / (double)t->m;
    for (size_t k = 0; k < nk; k++) {
        double g = warped(dir, 2.0 * M_PI * (double)k / (double)t->l);
        w->valid[k] = g >= 0;
        if (g < 0)
            continue;
        double s = g / h;
        long j0 = (long)floor(s) - (NLAG / 2 - 1);
        w->j0[k] = j0;
        double *wk = w->w + k * NLAG;
        for (int a = 0; a < NLAG; a++) {
            double num = 1, den = 1;
            for (int b = 0; b < NLAG; b++) {
                if (b == a)
                    continue;
                num *= s - (double)(j0 + b);
                den *= (double)(a - b);
            }
            wk[a] = num / den;
        }
        /* the centred spectrum is X(g) e^{i g shift}: undo it */
        ((double complex *)w->phase)[k] = cexp(-I * g * (double)t->shift); /* re, im pairs (C99 6.2.5) */
    }
    return 0;
}

int tdt_create(size_t n, double dt, struct tdt **out)
{
    *out = NULL;
    if (n < 2 || n > N_MAX)
        return err_set(-EINVAL, "time-dispersion transform: %zu samples (2 .. %zu)", n, N_MAX);
    if (!(dt > 0) || !isfinite(dt))
        return err_set(-EINVAL, "time-dispersion transform: dt %g s is not > 0", dt);
    struct tdt *t = calloc(1, sizeof *t);
    if (!t)
        return err_set(-ENOMEM, "time-dispersion transform: out of memory");
    t->n = n;
    t->dt = dt;
    /* at least 2 NLAG + 2 bins: the Lagrange stencil reaches NLAG / 2 bins past 0 and M/2 */
    t->m = smooth_at_least(OVERSAMPLE * n > 2 * NLAG + 2 ? OVERSAMPLE * n : 2 * NLAG + 2);
    t->l = smooth_at_least(OUT_PAD * n);
    t->shift = n / 2;
    t->cut[TDT_FORWARD] = 2.0;
    t->cut[TDT_INVERSE] = 2.0 * acos(1.0 / OUT_PAD);
    double *rin = fftw_malloc(t->m * sizeof *rin);
    fftw_complex *cin = fftw_malloc((t->m / 2 + 1) * sizeof *cin);
    double *rout = fftw_malloc(t->l * sizeof *rout);
    fftw_complex *cout = fftw_malloc((t->l / 2 + 1) * sizeof *cout);
    int rc = 0;
    if (!rin || !cin || !rout || !cout) {
        rc = err_set(-ENOMEM, "time-dispersion transform: out of memory for %zu samples", n);
        goto done;
    }
    pthread_mutex_lock(&fftw_plan_lock);
    t->r2c = fftw_plan_dft_r2c_1d((int)t->m, rin, cin, FFTW_ESTIMATE);
    t->c2r = fftw_plan_dft_c2r_1d((int)t->l, cout, rout, FFTW_ESTIMATE);
    pthread_mutex_unlock(&fftw_plan_lock);
    if (!t->r2c || !t->c2r) {
        rc = err_set(-ENOMEM, "time-dispersion transform: FFTW could not plan %zu / %zu points", t->m, t->l);
        goto done;
    }
    if (warp_init(t, TDT_FORWARD) < 0 || warp_init(t, TDT_INVERSE) < 0)
        rc = err_set(-ENOMEM, "time-dispersion transform: out of memory for %zu samples", n);
done:
    fftw_free(rin);
    fftw_free(cin);
    fftw_free(rout);
    fftw_free(cout);
    if (rc < 0) {
        tdt_destroy(t);
        return rc;
    }
    *out = t;
    return 0;
}

void tdt_destroy(struct tdt *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&fftw_plan_lock);
    if (t->r2c)
        fftw_destroy_plan((fftw_plan)t->r2c);
    if (t->c2r)
        fftw_destroy_plan((fftw_plan)t->c2r);
    pthread_mutex_unlock(&fftw_plan_lock);
#ifdef SEISLIVE_CUDA
    tdt_cu_free(t);
#endif
    warp_free(&t->warp[0]);
    warp_free(&t->warp[1]);
    free(t);
}

/* The centred spectrum's bins -PAD .. M/2 + PAD around the r2c output C (bins 0 .. M/2
 * at C[0 ..]): real input, so X(-j) = conj X(j), and X(M/2 + j) = conj X(M/2 - j) (2 pi
 * periodic: the centring shift is a whole number of samples).  The interpolation then
 * reads a plain array.  (For odd M the mirror of bin M/2 + j is M - M/2 - j, not M/2 - j:
 * smooth_at_least can make M odd, e.g. 225 for 56 samples.) */
#define PAD NLAG
static void extend(fftw_complex *c, size_t m)
{
    for (long j = 1; j <= PAD; j++) {
        c[-j] = conj(c[j]);
        c[(long)(m / 2) + j] = conj(c[(long)m - ((long)(m / 2) + j)]); /* X(M - i): right for odd M too */
    }
}

/* One signal X (n samples) through direction DIR, in place; returns its out-of-band
 * energy fraction.  RIN/CIN/ROUT/COUT: this thread's buffers. */
static double apply_one(const struct tdt *t, int dir, float *x, double *rin, fftw_complex *cin, double *rout,
                        fftw_complex *cout)
{
    memset(rin, 0, t->m * sizeof *rin);
    for (size_t k = 0; k < t->n; k++)
        rin[(k + t->m - t->shift) % t->m] = x[k];
    fftw_execute_dft_r2c((fftw_plan)t->r2c, rin, cin);
    extend(cin, t->m);
    /* energy (Parseval over the full circle: the bins 1 .. M/2 - 1 twice, i.e. the
     * trapezoidal rule over 0 .. pi) and the part beyond the cut, by the same rule from
     * the first bin past the cut plus the sliver between the cut and that bin (a bin
     * counted whole there was 1.7 % of a steep spectrum's out-of-band energy) */
    double e = 0, out = 0;
    const double h = 2.0 * M_PI / (double)t->m;
    bool first = true;
    for (size_t j = 0; j <= t->m / 2; j++) {
        double a = creal(cin[j]) * creal(cin[j]) + cimag(cin[j]) * cimag(cin[j]);
        double wgt = (j == 0 || 2 * j == t->m) ? 1.0 : 2.0;
        e += wgt * a;
        if ((double)j * h >= t->cut[dir]) {
            out += first ? a * (1.0 + 2.0 * ((double)j * h - t->cut[dir]) / h) : wgt * a;
            first = false;
        }
    }
    const struct warp *w = &t->warp[dir];
    const size_t nk = t->l / 2 + 1;
    for (size_t k = 0; k < nk; k++) {
        double complex y = 0;
        if (w->valid[k]) {
            const double *wk = w->w + k * NLAG;
            const double *c = (const double *)(cin + w->j0[k]); /* re, im pairs (C99 6.2.5) */
            double re = 0, im = 0;
            for (int a = 0; a < NLAG; a++) {
                re += wk[a] * c[2 * a];
                im += wk[a] * c[2 * a + 1];
            }
            y = (re + I * im) * ((const double complex *)w->phase)[k];
        }
        cout[k] = y;
    }
    /* c2r takes the Nyquist bin's real part (and DC's): the imaginary parts there are
     * rounding (DC) or band-edge content the transform cannot carry anyway */
    fftw_execute_dft_c2r((fftw_plan)t->c2r, cout, rout);
    const double s = 1.0 / (double)t->l;
    for (size_t k = 0; k < t->n; k++)
        x[k] = (float)(rout[k] * s);
    return e > 0 ? out / e : 0.0;
}

int tdt_apply(struct tdt *t, int dir, float *x, size_t ntr, size_t stride, double *out_of_band)
{
    if (dir != TDT_FORWARD && dir != TDT_INVERSE)
        return err_set(-EINVAL, "time-dispersion transform: direction %d", dir);
    if (ntr > 1 && stride < t->n)
        return err_set(-EINVAL, "time-dispersion transform: stride %zu below the %zu samples", stride, t->n);
    double worst = 0;
    int fail = 0;
#pragma omp parallel if (ntr > 1) reduction(max : worst) reduction(| : fail)
    {
        double *rin = fftw_malloc(t->m * sizeof *rin);
        /* PAD bins each side for extend(); PAD x 16 bytes keeps FFTW's alignment */
        fftw_complex *cbuf = fftw_malloc((t->m / 2 + 1 + 2 * PAD) * sizeof *cbuf), *cin = cbuf ? cbuf + PAD : NULL;
        double *rout = fftw_malloc(t->l * sizeof *rout);
        fftw_complex *cout = fftw_malloc((t->l / 2 + 1) * sizeof *cout);
        if (!rin || !cin || !rout || !cout)
            fail = 1;
#pragma omp for schedule(dynamic, 4)
        for (size_t i = 0; i < ntr; i++) {
            if (fail)
                continue;
            double f = apply_one(t, dir, x + i * stride, rin, cin, rout, cout);
            if (f > worst)
                worst = f;
        }
        fftw_free(rin);
        fftw_free(cbuf);
        fftw_free(rout);
        fftw_free(cout);
    }
    if (fail)
        return err_set(-ENOMEM, "time-dispersion transform: out of memory for %zu samples", t->n);
    if (out_of_band)
        *out_of_band = worst;
    return 0;
}

int tdt_apply_device(struct tdt *t, int dir, float *x, size_t ntr, size_t stride, double *out_of_band)
{
    if (dir != TDT_FORWARD && dir != TDT_INVERSE)
        return err_set(-EINVAL, "time-dispersion transform: direction %d", dir);
    if (ntr > 1 && stride < t->n)
        return err_set(-EINVAL, "time-dispersion transform: stride %zu below the %zu samples", stride, t->n);
#ifdef SEISLIVE_CUDA
    return tdt_cu_apply(t, dir, x, ntr, stride, out_of_band);
#else
    (void)x, (void)out_of_band;
    return err_set(-ENOTSUP, "time-dispersion transform on a GPU: this build has no CUDA");
#endif
}
