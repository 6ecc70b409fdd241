/* locate_engine — microseismic detection and location by coherent stacking, streaming.
 *
 *   locate_engine_create(params, dev, stations, tables)   the travel-time tables, built once
 *   locate_engine_process(eng, block) ...                 any number of contiguous trace blocks
 *   locate_engine_flush(eng)                              end of stream: the last events
 *
 * The engine takes plain views: parameters (struct locate_params), stations
 * (struct locate_stations) and blocks (struct locate_block).  The locate job fills them
 * from the config, the station file and the trace sources (stream/locate_setup.h:
 * locate_engine_from_config, locate_feed).
 *
 * Per block: characteristic function per channel (kernels/cf.h, state carried), P rows
 * from verticals and S rows from the mean of the horizontals (a station with one kind
 * of component uses it for both phases), then the stack (kernels/stack.h) of every
 * origin time whose CF samples at all travel times have arrived: the engine keeps the
 * last max-travel-time samples of CF from the previous blocks (the overlap), so the
 * results do not depend on where the stream was cut (blocks are also split into
 * chunks of at most block_samples).
 *
 * Detection on the maximum-coalescence trace m(t) (max over trial points): a time is
 * "live" when at least half of the rows that have channels contribute at the maximum;
 * the trigger level is threshold (static) or median + threshold x MAD of the live m(t)
 * over the trailing mad_window, recomputed every mad_window/20 at
 * absolute sample indices.  Contiguous samples above the level form a trigger; a
 * trigger starting within min_interval of the current event's peak joins it; an
 * event's peak is the largest m(t) of its triggers.
 *
 * Each peak is refined from the kept CF with the exact (fractional-sample) travel
 * times: a 3-point Gaussian fit (log-quadratic; plain quadratic when a value is not
 * positive) per axis through the best cell gives the sub-cell position and a 1-sigma
 * width of the coalescence peak, the same in time gives the origin time.  The
 * uncertainty (sx, sy, sz, st) is not that width -- the peak's width is set by the pulse
 * length and the aperture and was 10-30 times the errors -- but a delete-a-group
 * jackknife over the stations: the event refined again without each of up to 12
 * groups of stations, var = (G-1)/G sum (x_g - mean)^2 (docs/locate.md; calibrated on
 * synthetic events in tests/test_locate_calib.c).
 *
 * Results: an event callback, and optionally a coherence callback with each stack
 * call's volume (max over its times per trial point, x fastest). */
#ifndef SEISLIVE_LOCATE_ENGINE_H
#define SEISLIVE_LOCATE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/backend.h"
#include "kernels/cf.h"
#include "kernels/stack.h"
#include "kernels/traveltime.h"

#ifdef __cplusplus
extern "C" {
#endif

enum locate_trigger { LOCATE_TRIGGER_STATIC = 0, LOCATE_TRIGGER_MAD = 1 };

/* The engine's parameters (the job fills them from [locate]). */
struct locate_params {
    struct cf_spec cf;       /* the characteristic function */
    int normalize;           /* enum stack_normalization */
    int block_samples;       /* samples per chunk a block is cut into */
    int trigger;             /* enum locate_trigger */
    double threshold;        /* absolute (static) or a multiple of the MAD */
    double min_interval;     /* s between events */
    double mad_window;       /* s, trailing window of the MAD trigger level */
    struct stack_tuning stack; /* CUDA kernel variant (all zero: the default) */
};

/* How event positions are also given geographically: the projection of the stations.
 * TO_GEOGRAPHIC NULL: cartesian stations (latitude, longitude and elevation NaN). */
struct locate_geo {
    double lat0, lon0;       /* projection centre, degrees */
    void (*to_geographic)(const struct locate_geo *g, double x, double y, double z, double *lat,
                          double *lon, double *elev);
    const void *user;        /* to_geographic's own data (NULL: none); must outlive the engine */
};

/* The stations, in the order of the travel-time table's rows (copied by the engine). */
struct locate_stations {
    const struct tt_station *st;
    int n;
    struct locate_geo geo;
};

/* The identity of one channel: SEED network.station.location.channel.  The engine
 * matches `sta` (and `net` when the station gives one) against the stations and takes
 * the component from the last letter of `cha` ('Z' vertical -> P; 'N','E','1','2'
 * horizontals -> S; anything else is used for both phases only when a station has a
 * single channel).  A block whose channels all have an empty `sta` is matched by
 * position instead: channel r is station r, one component used for every phase. */
struct locate_channel {
    char net[8];
    char sta[16];
    char loc[8];
    char cha[8];
};

/* R channels x K samples of continuous recording (the contract of io/trace_block.h:
 * consecutive blocks have the same channels and dt and are contiguous; a sample is
 * valid when chan_ok (if given) is non-zero for its channel, mask (if given) is
 * non-zero for it, and its value is finite; the arrays are only read during the call). */
struct locate_block {
    int64_t seq;             /* block sequence number in the stream */
    int64_t t0_ns;           /* time of sample 0, ns since 1970-01-01 UTC */
    double dt;               /* sample interval, s */
    int nrec;                /* R: channels */
    int ns;                  /* K: samples per channel */
    const struct locate_channel *chan; /* R */
    const float *data;       /* R x K, time fastest */
    const uint8_t *mask;     /* R x K, 1 = valid; NULL = all valid */
    const uint8_t *chan_ok;  /* R, 0 = dead channel; NULL = all alive */
};

struct locate_event {
    int64_t id;              /* 0, 1, 2 ... in the stream */
    int64_t origin_ns;       /* origin time, ns since 1970 UTC (sub-sample refined) */
    int64_t sample;          /* stack time index of the peak (samples since the stream start or restart) */
    double x, y, z;          /* m, local frame (z down), refined */
    double lat, lon, elev;   /* deg, deg, m when the stations were geographic, else NaN */
    double sx, sy, sz;       /* m, 1-sigma uncertainty of x, y, z (jackknife, see refine) */
    double st;               /* s, 1-sigma uncertainty of the origin time */
    double wx, wy, wz, wt;   /* m, m, m, s: 1-sigma widths of the coalescence peak */
    double coalescence;      /* m(t) at the peak */
    double level;            /* trigger level then */
    int ix, iy, iz;          /* best grid cell */
    int rows_used;           /* station-phase rows that contributed at the peak */
};

struct locate_stats {
    int64_t blocks, samples;        /* accepted */
    int64_t rejected_blocks;        /* out of order / overlapping (counted, logged) */
    int64_t gap_samples;            /* samples inserted as invalid for a time jump */
    int64_t restarts;               /* jumps beyond the travel times + a block: stream restarted */
    int64_t overlap_samples;        /* leading samples of blocks that overlap the previous one: dropped */
    int64_t invalid_samples;        /* input samples masked, NaN or on dead channels */
    int64_t stacked_times;
    int64_t events;
    int unmatched_channels;         /* channels with no station in the station file */
    int dead_rows;                  /* station-phase rows with no channel */
};

typedef void (*locate_event_fn)(const struct locate_event *ev, void *user);
/* COH: nj values (x fastest); times [t0_ns, t1_ns] are the origin times covered. */
typedef void (*locate_coherence_fn)(const float *coh, const struct tt_grid *g, int64_t seq,
                                    int64_t t0_ns, int64_t t1_ns, void *user);

/* Every stacked time: m(t), its trial point, whether it is live, and the level then. */
typedef void (*locate_trace_fn)(int64_t t, float m, int32_t j, int live, double level, void *user);

struct locate_engine;

/* An engine for STATIONS (copied) with the travel-time table TT (nsta = STATIONS->n; taken
 * over: *TT is left empty, on failure too).  DEV: CPU or CUDA. */
int locate_engine_create(struct locate_engine **out, const struct locate_params *p, const struct sl_device *dev,
                         const struct locate_stations *stations, struct tt_table *tt);
void locate_engine_on_event(struct locate_engine *e, locate_event_fn fn, void *user);
void locate_engine_on_coherence(struct locate_engine *e, locate_coherence_fn fn, void *user);
void locate_engine_on_trace(struct locate_engine *e, locate_trace_fn fn, void *user);

/* CANCEL (NULL: none) is polled between chunks of a block and of a gap; non-zero makes
 * locate_engine_process return -ECANCELED (SIGTERM: the job passes its stop flag). */
void locate_engine_set_cancel(struct locate_engine *e, int (*cancel)(void *user), void *user);

/* Feed the next block.  Time jumps: a forward jump is a gap of
 * invalid samples, an overlap drops the block's leading samples (a block wholly before
 * the end: rejected), both counted and logged; a jump either way longer than the largest
 * travel time + a block restarts the stream (times before it stacked and their events
 * emitted, as at the end of a stream; counted, logged).  Returns 0 (also for a block
 * rejected as out of order), or -EINVAL for a block that breaks the stream
 * (other channels, other dt), or -EIO / -ENOMEM, with err_msg(). */
int locate_engine_process(struct locate_engine *e, const struct locate_block *b);
/* End of stream: stack the remaining times (CF beyond the end counts as missing) and
 * emit the pending event. */
int locate_engine_flush(struct locate_engine *e);

void locate_engine_stats(const struct locate_engine *e, struct locate_stats *out);
const struct tt_table *locate_engine_tables(const struct locate_engine *e);
/* Bytes of travel-time data the engine holds on its device (delays) and on the host. */
size_t locate_engine_table_bytes(const struct locate_engine *e, size_t *host_bytes);
void locate_engine_destroy(struct locate_engine *e);

#ifdef __cplusplus
}
#endif

#endif
