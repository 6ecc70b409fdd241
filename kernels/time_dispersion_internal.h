/* time_dispersion_internal — the transform's plan, shared by the CPU reference
 * (kernels/time_dispersion.c) and its CUDA twin (kernels/time_dispersion.cu).  Not for
 * callers: kernels/time_dispersion.h. */
#ifndef SEISLIVE_TIME_DISPERSION_INTERNAL_H
#define SEISLIVE_TIME_DISPERSION_INTERNAL_H

#include <stddef.h>

#include "kernels/time_dispersion.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OVERSAMPLE 4 /* input spectrum grid: M >= 4 N */
#define OUT_PAD 4    /* output window: L >= 4 N */
#define NLAG 16      /* Lagrange points per warped frequency */
#define N_MAX ((size_t)1 << 26)


/* One direction's resampling: for output bin k (0..L/2), the Lagrange weights over the
 * input bins J0[k] .. J0[k] + NLAG - 1 and the phase that undoes the centring;
 * VALID[k] = 0 where the warped frequency does not exist (inverse, w dt > 2). */
struct warp {
    long *j0;
    double *w;               /* (L/2 + 1) x NLAG */
    double *phase;           /* (L/2 + 1) x (re, im) */
    unsigned char *valid;
};

struct tdt {
    size_t n, m, l;          /* signal, input FFT and output FFT lengths */
    size_t shift;            /* the centring: sample k goes to bin (k - shift) mod M */
    double dt;
    void *r2c, *c2r;         /* fftw_plan (the .c casts) */
    struct tdt_cuda *cu;     /* the CUDA twin's plans and tables (NULL until first used) */
    struct warp warp[2];
    double cut[2];           /* out-of-band limits on the input grid, rad / sample */
};

#ifdef SEISLIVE_CUDA
/* kernels/time_dispersion.cu */
int tdt_cu_apply(struct tdt *t, int dir, float *x, size_t ntr, size_t stride, double *out_of_band);
void tdt_cu_free(struct tdt *t);
#endif

#ifdef __cplusplus
}
#endif

#endif
