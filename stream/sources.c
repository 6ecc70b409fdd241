/* sources — the source [input] asks for (see sources.h). */
#include "stream/sources.h"

#include <errno.h>

#include "io/file_source.h"
#include "io/seedlink.h"
#include "io/seedlink_source.h"
#include "io/zmq_source.h"
#include "stream/error.h"

int pipeline_open_source(const struct sl_config *cfg, void *zctx, int kind, struct source *out)
{
    return pipeline_open_source_at(cfg, zctx, kind, NULL, out);
}

/* [input] kind = "seedlink": the keys into the source's conf (RESUME: the state's text). */
static int open_seedlink(const struct sl_config *cfg, int kind, const char *resume, struct source *out)
{
    const struct input_conf *ic = &cfg->input;
    char where[256];
    if (kind != SLOT_TRACES)
        return err_set(-EINVAL, "%s: SeedLink input feeds trace blocks (the locate job)",
                       config_where(cfg, "input.kind", where, sizeof where));
    int64_t start = INT64_MIN;
    if (ic->seedlink_start && ic->seedlink_start[0] && seedlink_parse_time(ic->seedlink_start, &start))
        return err_set(-EINVAL, "%s: \"%s\" is not a UTC time",
                       config_where(cfg, "input.seedlink_start", where, sizeof where), ic->seedlink_start);
    static const int protos[] = {0, 3, 4};
    struct seedlink_source_conf sc = {
        .server = ic->seedlink, .streams = ic->streams, .n_streams = ic->n_streams,
        .protocol = protos[ic->seedlink_protocol < 0 || ic->seedlink_protocol > 2 ? 0 : ic->seedlink_protocol],
        .timeout_s = ic->seedlink_timeout, .backoff_max_s = ic->seedlink_backoff_max,
        .latency_s = ic->seedlink_latency, .idle_s = ic->watch_idle, .start_ns = start,
        .block_samples = cfg->locate.block_samples, .resume = resume};
    struct seedlink_source *s;
    int rc = seedlink_source_open(&s, &sc);
    if (rc)
        return err_prefix(rc, "%s", config_where(cfg, "input.seedlink", where, sizeof where));
    *out = seedlink_source_as_source(s);
    return 0;
}

int pipeline_open_source_at(const struct sl_config *cfg, void *zctx, int kind, const char *resume,
                            struct source *out)
{
    const struct input_conf *ic = &cfg->input;
    char where[256];
    if (ic->kind == INPUT_SEEDLINK)
        return open_seedlink(cfg, kind, resume, out);
    if (ic->kind == INPUT_ZMQ) {
        struct zmq_source_conf zc = {.endpoint = ic->endpoint, .socket = ic->socket,
                                     .idle_s = ic->watch_idle};
        struct zmq_source *z;
        int rc = zmq_source_open(&z, zctx, &zc);
        if (rc)
            return err_prefix(rc, "%s", config_where(cfg, "input.endpoint", where, sizeof where));
        *out = zmq_source_as_source(z);
        return 0;
    }
    if (ic->kind == INPUT_FILES) {
        struct file_source_conf fc = {.paths = ic->paths, .n_paths = ic->n_paths,
                                      .watch = ic->watch, .watch_idle = ic->watch_idle,
                                      .settle = ic->settle, .su_order = ic->su_byte_order,
                                      .format = ic->format, .o_direct = ic->o_direct,
                                      .kind = kind, .block_samples = cfg->locate.block_samples};
        struct file_source *f;
        int rc = file_source_open(&f, &fc);
        if (rc)
            return err_prefix(rc, "%s", config_where(cfg, "input.paths", where, sizeof where));
        *out = file_source_as_source(f);
        return 0;
    }
    return err_set(-EINVAL, "%s: [input] kind = \"none\": this job needs an input (zmq, files or seedlink)",
                   config_where(cfg, "input.kind", where, sizeof where));
}
