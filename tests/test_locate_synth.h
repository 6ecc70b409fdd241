/* Synthetic microseismic streams for the locate tests: stations on the surface, point
 * sources with Ricker P pulses (vertical) and S pulses (horizontals) of random polarity
 * at the exact homogeneous travel times, white Gaussian noise.  Trace SNR = pulse peak
 * amplitude / noise standard deviation. */
#ifndef SEISLIVE_TEST_LOCATE_SYNTH_H
#define SEISLIVE_TEST_LOCATE_SYNTH_H

#include <stdint.h>

#include "conf/config.h"
#include "io/stations.h"
#include "io/trace_block.h"
#include "kernels/locate_engine.h"

#define SYN_MAXEV 8

struct synth {
    int nsta;
    double vp, vs, f_peak, dt, snr;
    double f_peak_s, snr_s;     /* S pulses' peak frequency and SNR; 0 = f_peak, snr (set before synth_make,
                                 * like f_peak: 0 = 10 Hz) */
    int ns;                     /* samples */
    int nev;
    double ev[SYN_MAXEV][4];    /* x, y, z (m), origin time (s after sample 0) */
    int64_t t0_ns;
    struct station_set st;
    struct trace_channel *chan; /* 3 per station: Z, N, E */
    float *data;                /* nch x ns */
};

/* NSTA stations on a square grid over 1.5 km at z = 0, noise seeded by SEED. */
void synth_make(struct synth *s, int nsta, int ns, double dt, double snr, uint64_t seed);
void synth_free(struct synth *s);
/* The locate settings the tests use (grid 9 x 9 x 6 at 100 m from (0, 0, 400) m, envelope of
 * the 4-30 Hz band, count-normalized, MAD trigger). */
void synth_config(struct sl_config *cfg);
/* The events an engine reported, collected by synth_on_event (locate_engine_on_event
 * with a struct synth_found as its user pointer): the first SYN_MAXFOUND kept, N counts
 * them all. */
#define SYN_MAXFOUND 16
struct synth_found {
    struct locate_event ev[SYN_MAXFOUND];
    int n;
};
void synth_on_event(const struct locate_event *ev, void *user);
/* Feed the stream in blocks of BLOCK samples (cycling through SIZES if given). */
struct locate_engine;
int synth_feed(struct locate_engine *e, const struct synth *s, const int *sizes, int nsizes,
               const uint8_t *mask, const uint8_t *chan_ok);

#endif
