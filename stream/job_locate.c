/* job_locate — `[job] kind = "locate"` over files: miniSEED or SAC files or folders from
 * [input] paths (globs allowed; read in order, expected time-ordered) are decoded
 * (stream/locate_files.h: io/mseed_read, io/sac_read, the [input] time window), cut
 * into blocks of [locate] block_samples and fed to the locate engine;
 * events go to [output] dir as events.csv and events.jsonl, coherence volumes to
 * [locate] coherence_dir when set.  The streaming runtime (stream/locate_blocks.h) feeds
 * the same engine from ZeroMQ or watched folders.  The engine is built and fed through
 * stream/locate_setup.h. */
#define LOG_COMPONENT "locate-job"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/events.h"
#include "io/quakeml.h"
#include "io/mseed_read.h"
#include "io/stations.h"
#include "kernels/locate_engine.h"
#include "stream/error.h"
#include "stream/job.h"
#include "stream/locate_blocks.h"
#include "stream/locate_files.h"
#include "stream/locate_nll.h"
#include "stream/locate_setup.h"
#include "stream/locate_tables.h"
#include "stream/log.h"
#include "stream/signals.h"
#include "version.h"

struct run_ctx {
    struct locate_engine *eng;
    struct event_writer w;
    const char *coh_dir;
    int rc;
};

static void on_event(const struct locate_event *ev, void *user)
{
    struct run_ctx *c = user;
    int rc = events_write(&c->w, ev);
    if (rc && !c->rc)
        c->rc = rc;
    /* Live runs (stream/locate_blocks.h) also publish it; a no-op in file runs. */
    struct wire_event we = {.origin_ns = ev->origin_ns, .x = ev->x, .y = ev->y, .z = ev->z,
                            .strength = ev->coalescence, .id = ev->id};
    locate_blocks_publish_event(&we);
}

static void on_coherence(const float *coh, const struct tt_grid *g, int64_t seq, int64_t t0, int64_t t1, void *user)
{
    struct run_ctx *c = user;
    int rc = c->coh_dir ? coherence_write(c->coh_dir, coh, g, seq, t0, t1) : 0;
    if (rc && !c->rc)
        c->rc = rc;
    struct wire_volume_hdr h = {.units = seq, .t0_ns = t0};
    memcpy(h.n, g->n, sizeof h.n);
    memcpy(h.d, g->d, sizeof h.d);
    memcpy(h.o, g->o, sizeof h.o);
    (void)t1;
    locate_blocks_publish_coherence(&h, coh);
}

static int feed(const struct trace_block *b, void *user)
{
    struct run_ctx *c = user;
    int rc = locate_feed(c->eng, b);
    return rc ? rc : c->rc;
}

static int flush_engine(void *user)
{
    struct run_ctx *c = user;
    int rc = locate_engine_flush(c->eng);
    return rc ? rc : c->rc;
}

static int stop_asked(void)
{
    return signals_stop_requested();
}

static int cancel_asked(void *user)
{
    (void)user;
    return signals_stop_requested();
}

/* The station file (and corrections); with NonLinLoc travel times, the stations without
 * a grid left out and the grids' TRANSFORM applied (stream/locate_nll.h). */
static int load_stations(const struct sl_config *cfg, struct station_set *st, struct locate_nll_report *nll)
{
    const struct locate_conf *lc = &cfg->locate;
    char where[256];
    if (!lc->stations || !*lc->stations)
        return err_set(-EINVAL, "%s: [locate] stations: no station file given",
                       config_where(cfg, "locate.stations", where, sizeof where));
    int rc = stations_load(lc->stations, lc->coords == COORDS_GEOGRAPHIC, st);
    if (!rc && lc->corrections && *lc->corrections) {
        rc = stations_load_corrections(st, lc->corrections);
        if (rc)
            stations_free(st);
    }
    if (!rc && (rc = locate_nll_stations(cfg, st, nll)) != 0)
        stations_free(st);
    return rc;
}

static int locate_run(const struct sl_config *cfg, const struct sl_device *dev, const char *output)
{
    (void)output;
    struct station_set st;
    struct locate_nll_report nll;
    int rc = load_stations(cfg, &st, &nll);
    if (rc)
        return rc;
    struct run_ctx c = {0};
    rc = locate_engine_from_config(&c.eng, cfg, dev, &st);
    if (rc) {
        stations_free(&st);
        return rc;
    }
    const char *dir = cfg->output.dir && *cfg->output.dir ? cfg->output.dir : ".";
    mkdir(dir, 0777);
    if ((rc = events_open(&c.w, dir))) {
        locate_engine_destroy(c.eng);
        stations_free(&st);
        return rc;
    }
    if (cfg->locate.quakeml) {
        struct locate_geo geo = locate_geo_of(&st);
        if ((rc = events_enable_quakeml(&c.w, dir, cfg->job.name, SEISLIVE_VERSION, &geo)) != 0) {
            char where[256];
            rc = err_prefix(rc, "%s: [locate] quakeml", config_where(cfg, "locate.quakeml", where, sizeof where));
            events_close(&c.w);
            locate_engine_destroy(c.eng);
            stations_free(&st);
            return rc;
        }
    }
    locate_engine_on_event(c.eng, on_event, &c);
    /* the engine's loops poll SIGTERM through this (kernels/ know nothing of signals) */
    locate_engine_set_cancel(c.eng, cancel_asked, NULL);
    /* Coherence volumes: into [locate] coherence_dir when set, and published in every
     * live run that publishes (subscribers and the status page's trace: ZeroMQ filters
     * unsubscribed topics at the publisher, so a subscriber that does not want them
     * costs nothing on the wire). */
    const bool live = cfg->input.kind == INPUT_ZMQ || cfg->input.kind == INPUT_SEEDLINK || cfg->input.watch;
    const bool publishes = (cfg->output.endpoint && *cfg->output.endpoint) || (cfg->output.http && *cfg->output.http);
    if (cfg->locate.coherence_dir && *cfg->locate.coherence_dir) {
        c.coh_dir = cfg->locate.coherence_dir;
        mkdir(c.coh_dir, 0777);
    }
    if (c.coh_dir || (live && publishes))
        locate_engine_on_coherence(c.eng, on_coherence, &c);
    struct mseed_set set = {0};
    struct locate_files_stats fs = {0};
    if (cfg->input.kind == INPUT_ZMQ || cfg->input.kind == INPUT_SEEDLINK || cfg->input.watch) {
        /* Live input: ZeroMQ trace blocks or a watched folder through the streaming
         * runtime, which publishes events and keeps the crash-safe state. */
        struct block_consumer bc = {.name = "locate", .user = &c, .feed = feed,
                                    .flush = flush_engine, .stations = &st};
        rc = locate_blocks_run(cfg, dev, &bc);
    } else {
        mseed_read_set_stop(stop_asked);
        rc = locate_files_read(cfg, &set, &fs, stop_asked);
        mseed_read_set_stop(NULL);
        if (!rc)
            rc = mseed_set_blocks(&set, cfg->locate.block_samples, feed, &c, stop_asked);
        if (rc == -ECANCELED && signals_stop_requested()) {
            /* SIGTERM in a long read or block: what was stacked is kept, its events written */
            log_info("locate: stopped: %s", err_msg());
            rc = 0;
        }
        if (!rc)
            rc = locate_engine_flush(c.eng);
    }
    if (!rc)
        rc = c.rc;
    struct locate_stats ls;
    locate_engine_stats(c.eng, &ls);
    log_info("locate: %lld blocks, %lld samples, %lld times stacked, %lld events; %lld blocks rejected, "
             "%lld invalid samples, %lld gap samples, %lld overlapping samples dropped, %lld stream restarts, "
             "%d unmatched channels, %d rows without data, %d stations skipped (no travel-time grid), "
             "%lld samples outside the time window",
             (long long)ls.blocks, (long long)ls.samples, (long long)ls.stacked_times, (long long)ls.events,
             (long long)ls.rejected_blocks, (long long)ls.invalid_samples, (long long)ls.gap_samples,
             (long long)ls.overlap_samples, (long long)ls.restarts, ls.unmatched_channels, ls.dead_rows,
             nll.skipped, (long long)fs.window_dropped);
    log_info("events written to %s and %s%s%s", c.w.csv_path, c.w.jsonl_path, c.w.qml ? " and " : "",
             c.w.qml ? quakeml_path(c.w.qml) : "");
    mseed_set_free(&set);
    int crc = events_close(&c.w);
    /* the engine's geographic projection may point into the station set: it goes first */
    locate_engine_destroy(c.eng);
    stations_free(&st);
    return rc ? rc : crc;
}

static int locate_report(const struct sl_config *cfg, FILE *out)
{
    struct station_set st;
    struct locate_nll_report nll;
    int rc = load_stations(cfg, &st, &nll);
    if (rc)
        return rc;
    struct tt_station *views;
    struct tt_table tt;
    if ((rc = locate_station_views(&st, &views)) == 0) {
        rc = locate_tables_build(cfg, views, st.n, &tt);
        free(views);
    }
    if (rc) {
        stations_free(&st);
        return rc;
    }
    const struct locate_conf *lc = &cfg->locate;
    size_t nrow = (size_t)tt.nsta * tt.nphase, pad = (tt.nj + 31) / 32 * 32;
    fprintf(out, "locate: %d stations%s, %d phase(s), %zu station-phase rows\n", st.n,
            st.geographic ? " (geographic, projected)" : "", tt.nphase, nrow);
    if (st.proj_to_geo)
        fprintf(out, "locate: NonLinLoc grids' TRANSFORM %s (stations and events in its frame)\n", nll.transform);
    else if (st.geographic)
        fprintf(out, "locate: projection centre lat %.6f lon %.6f (local equirectangular, WGS84)\n", st.lat0,
                st.lon0);
    if (nll.skipped)
        fprintf(out, "locate: %d stations skipped: no NonLinLoc time grid\n", nll.skipped);
    fprintf(out, "locate: trial grid %d x %d x %d = %zu points, spacing %g x %g x %g m, origin (%g, %g, %g) m\n",
            lc->grid_n[0], lc->grid_n[1], lc->grid_n[2], tt.nj, lc->grid_d[0], lc->grid_d[1], lc->grid_d[2],
            lc->grid_o[0], lc->grid_o[1], lc->grid_o[2]);
    fprintf(out, "locate: travel times %.4f .. %.4f s (%s)\n", tt.tmin, tt.tmax,
            config_enum_name("locate", "traveltime", lc->traveltime));
    fprintf(out, "locate: travel-time tables: %.1f MiB host (float s), %.1f MiB device (uint16 sample delays)\n",
            tt_bytes(&tt) / 1048576.0, nrow * pad * 2 / 1048576.0);
    fprintf(out, "locate: stack work %.3g station-phase sums per sample of data\n", (double)nrow * tt.nj);
    tt_free(&tt);
    stations_free(&st);
    return 0;
}

const struct job_ops job_locate_ops = {"locate", locate_run, locate_report};
