/* sources — the source [input] asks for (see sources.h). */
#include "stream/sources.h"

#include <errno.h>

#include "io/file_source.h"
#include "io/zmq_source.h"
#include "stream/error.h"

int pipeline_open_source(const struct sl_config *cfg, void *zctx, int kind, struct source *out)
{
    const struct input_conf *ic = &cfg->input;
    char where[256];
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
    return err_set(-EINVAL, "%s: [input] kind = \"none\": this job needs an input (zmq or files)",
                   config_where(cfg, "input.kind", where, sizeof where));
}
