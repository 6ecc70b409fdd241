/* micro_model — synthetic microseismic recordings: a receiver array, point events with
 * random double-couple mechanisms (so polarities flip across nodal planes, as real ones
 * do), far-field P and S Ricker pulses at homogeneous straight-ray travel times, and
 * white Gaussian noise.  Rendered block by block, so a stream of any length needs
 * only one block of memory; the result does not depend on the block size except for
 * the noise samples, which come from one sequential generator.
 *
 * Coordinates: x east, y north, z down (m).  Channels: Z (up), N, E per station. */
#ifndef SEISLIVE_MICRO_MODEL_H
#define SEISLIVE_MICRO_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct micro_station {
    char name[8];
    double x[3];
};

struct micro_event {
    double x[3];      /* m */
    double t;         /* origin time, s after the start of the recording */
    double amp;       /* peak P amplitude at 1 km along the strongest P direction */
    double m[3][3];   /* unit double couple n s^T + s n^T */
};

struct micro_model {
    struct micro_station *st;
    int nst;
    struct micro_event *ev;
    int nev;
    double vp, vs;    /* m/s */
    int phases;       /* bit 0: P, bit 1: S */
    int ncomp;        /* 1 (Z) or 3 (Z, N, E) */
    double f_peak;    /* Hz, Ricker */
    double f_peak_s;  /* Hz, the S pulses' Ricker; 0 = f_peak */
    double rate;      /* samples/s */
    double noise;     /* standard deviation of the noise, same units as amp */
    uint64_t rng;     /* noise generator state */
};

/* Uniform [0, 1) and standard normal deviates from a splitmix64 state. */
double micro_uniform(uint64_t *state);
double micro_normal(uint64_t *state);
/* A random unit double couple (fault normal and slip uniform on the sphere). */
void micro_random_dc(uint64_t *state, double m[3][3]);

/* Travel time (s) of phase 0 (P) or 1 (S) from event E to station S. */
double micro_travel_time(const struct micro_model *m, const struct micro_event *e,
                         const struct micro_station *s, int phase);

/* Render samples [K0, K0 + NS) of every channel into OUT (channel by channel, time
 * fastest; channel c = station c / ncomp, component c % ncomp).  Noise advances the
 * generator, so blocks must be rendered in order. */
void micro_render(struct micro_model *m, int64_t k0, int ns, float *out);

/* Channel code of component C ("HHZ", "HHN", "HHE"). */
const char *micro_channel_code(const struct micro_model *m, int c);

#ifdef __cplusplus
}
#endif

#endif
