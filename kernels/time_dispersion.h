/* time_dispersion — the time-dispersion transforms of the second-order leapfrog
 * (Koene, Robertsson, Broggini & Andersson, "Eliminating time dispersion from seismic
 * wave modeling", Geophys. J. Int. 213 (2018) 169-180, doi:10.1093/gji/ggx563).
 *
 * The leapfrog (u^{n+1} - 2u^n + u^{n-1}) / dt^2 = L u^n + s^n, transformed in time
 * (u^n = U e^{i w n dt}), is -(2/dt sin(w dt/2))^2 U = L U + S: exactly the continuous
 * equation -W^2 U = L U + S at the frequency W = (2/dt) sin(w dt/2).  So a simulation
 * is exact in time, but at the wrong frequency: its spectrum at w holds the true
 * solution at W(w) <= w (its waves run ahead).  Hence the two transforms, each a
 * resampling of the spectrum with the same time origin (sample 0 at t = 0):
 *
 *   forward (FTDT)  X_fd(w) = X(W(w)),      W(w) = (2/dt) sin(w dt/2):
 *                   a physical signal as the leapfrog has to see it (the source wavelet
 *                   before a simulation; in RTM also the recorded data);
 *   inverse (ITDT)  X(w) = X_fd(w_fd(w)),   w_fd(w) = (2/dt) arcsin(w dt/2):
 *                   a simulated trace as the physics would have recorded it.
 *
 * A simulation of the FTDT'd wavelet, ITDT'd, is then the true response to the wavelet
 * (up to the spatial error).  ITDT(FTDT(x)) = x for x band-limited below the leapfrog's
 * band, w dt < 2 (f < 1 / (pi dt), 0.637 of the Nyquist frequency): physical content
 * above it has no frequency in the simulation (W <= 2/dt) and is lost, which is why the
 * transforms count the energy out there (tdt_apply's OUT_OF_BAND) for the callers to
 * refuse or warn with the number.
 *
 * Implementation (FFTW, double precision): the signal's spectrum on a 4x oversampled
 * grid (zero padding, one r2c FFT), evaluated at the warped frequencies by 16-point
 * Lagrange interpolation of the time-centred spectrum (the error bound is below 1e-7 of
 * the signal's L1 norm; tests/test_time_dispersion.c measures it against direct sums),
 * then one c2r FFT of an output 4x as long as the signal (the inverse transform delays
 * high frequencies: up to 4x the time of the trace before anything wraps) cut to the
 * signal's length.  Hand-written here: no Debian library does this resampling (FFTW does
 * the transforms; a general NUFFT library is not packaged). */
#ifndef SEISLIVE_TIME_DISPERSION_H
#define SEISLIVE_TIME_DISPERSION_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tdt_direction { TDT_FORWARD = 0, TDT_INVERSE = 1 };

/* The highest physical frequency (Hz) the leapfrog at DT (s) can hold: 1 / (pi dt),
 * where w dt = 2 (above it sin(w' dt/2) = w dt/2 has no solution). */
double tdt_band_limit(double dt);

/* The simulation's frequency of a physical F (Hz): arcsin(pi f dt) / (pi dt); INFINITY
 * at or beyond tdt_band_limit. */
double tdt_fd_frequency(double f, double dt);
/* The physical frequency of a simulation's F_FD (Hz): sin(pi f_fd dt) / (pi dt). */
double tdt_true_frequency(double f_fd, double dt);

/* A plan for signals of N samples at DT (2 <= N <= 2^26).  Returns 0, or -EINVAL /
 * -ENOMEM with err_msg(). */
struct tdt;
int tdt_create(size_t n, double dt, struct tdt **out);
void tdt_destroy(struct tdt *t);

/* Transform NTR signals in place, signal i at X + i STRIDE (N samples each, sample k at
 * t = k dt), in direction DIR (enum tdt_direction); OpenMP over the signals.
 * OUT_OF_BAND (may be NULL) gets the largest fraction of a signal's energy the transform
 * cannot carry: forward, what lies at or above tdt_band_limit (dropped); inverse, what
 * lies where the delay it applies exceeds the output window (w_fd dt > 2 acos(1/4),
 * 0.84 of Nyquist; it would wrap around and is dropped).  Returns 0 or -EINVAL
 * (err_msg()). */
int tdt_apply(struct tdt *t, int dir, float *x, size_t ntr, size_t stride, double *out_of_band);

/* tdt_apply on the GPU (kernels/time_dispersion.cu, cuFFT in double precision): X in the
 * current CUDA device's memory, the same transform to float rounding (the FFTs' rounding
 * differs from FFTW's); returns when X holds the result.  The plans and tables are made
 * on the first call, on the device current then, and kept with T: call it from one thread
 * and for one device per T (the model job does; tdt_apply itself is thread-safe).  It runs
 * on the legacy default stream and synchronises the device.  -ENOTSUP in a build without CUDA, -ENOMEM, -EIO
 * (a CUDA or cuFFT error) with err_msg(). */
int tdt_apply_device(struct tdt *t, int dir, float *x, size_t ntr, size_t stride, double *out_of_band);

#ifdef __cplusplus
}
#endif

#endif
