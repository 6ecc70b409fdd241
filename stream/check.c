/* check — the run-time conditions `seislive check` verifies (stream/check.h). */
#define LOG_COMPONENT "check"
#include "stream/check.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <zmq.h>

#include "io/model.h"
#include "kernels/points.h"
#include "kernels/wave.h"
#include "kernels/stability.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "stream/http_status.h"
#include "stream/log.h"
#include "stream/stability_conf.h"

/* Below this no medium carries a wave (air is 330 m/s, the softest soils' shear waves
 * some 50 m/s): a smaller number is a velocity typed in km/s. */
#define V_KMS_BELOW 20.0

static int fail(const struct sl_config *cfg, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "FILE:LINE:COL: [section] key: reason" like the loader's own errors. */
static int fail(const struct sl_config *cfg, const char *key, const char *fmt, ...)
{
    char where[PATH_MAX + 32], reason[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    const char *dot = strchr(key, '.');
    return err_set(-EINVAL, "%s: [%.*s] %s: %s", config_where(cfg, key, where, sizeof where), (int)(dot - key), key,
                   dot + 1, reason);
}

/* ---- endpoints ---------------------------------------------------------- */

static bool port_ok(const char *s, bool bind)
{
    if (bind && strcmp(s, "*") == 0)
        return true; /* a bind may take any free port */
    if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 5)
        return false;
    long p = strtol(s, NULL, 10);
    return p >= (bind ? 0 : 1) && p <= 65535;
}

int check_endpoint(const char *ep, bool bind)
{
    const char *sep = strstr(ep, "://");
    if (!sep || sep == ep)
        return err_set(-EINVAL, "\"%s\" has no transport (tcp://HOST:PORT, ipc://PATH or inproc://NAME)", ep);
    size_t tlen = (size_t)(sep - ep);
    const char *addr = sep + 3;
    if (tlen == 3 && strncmp(ep, "tcp", 3) == 0) {
        const char *colon = strrchr(addr, ':');
        /* "[::1]" alone: the last colon is inside the brackets, not a port separator. */
        const char *bracket = strrchr(addr, ']');
        if (!colon || (bracket && colon < bracket))
            return err_set(-EINVAL, "\"%s\" has no port: write tcp://HOST:PORT", ep);
        if (colon == addr)
            return err_set(-EINVAL, "\"%s\" has no host: write tcp://HOST:PORT%s", ep,
                           bind ? " (HOST * binds every interface)" : "");
        if (!port_ok(colon + 1, bind))
            return err_set(-EINVAL, "\"%s\": port \"%s\" is not %s", ep, colon + 1,
                           bind ? "a number from 0 to 65535 or *" : "a number from 1 to 65535");
        return 0;
    }
    if (tlen == 3 && strncmp(ep, "ipc", 3) == 0) {
        if (!*addr)
            return err_set(-EINVAL, "\"%s\" has no path: write ipc://PATH", ep);
        if (strlen(addr) >= sizeof(((struct sockaddr_un *)0)->sun_path))
            return err_set(-EINVAL, "\"%s\": the path is longer than a Unix socket takes (%zu bytes)", ep,
                           sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
        if (bind && addr[0] != '@') { /* '@': Linux abstract namespace, no file */
            char dir[PATH_MAX];
            const char *slash = strrchr(addr, '/');
            snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - addr) : 1, slash ? addr : ".");
            if (!dir[0])
                snprintf(dir, sizeof dir, "/");
            struct stat st;
            if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
                return err_set(-EINVAL, "\"%s\": the socket's folder \"%s\" does not exist", ep, dir);
            if (access(dir, W_OK | X_OK) != 0)
                return err_set(-EINVAL, "\"%s\": the socket's folder \"%s\" is not writable", ep, dir);
        }
        return 0;
    }
    if (tlen == 6 && strncmp(ep, "inproc", 6) == 0)
        return *addr ? 0 : err_set(-EINVAL, "\"%s\" has no name", ep);
    char t[16];
    snprintf(t, sizeof t, "%.*s", (int)(tlen < 15 ? tlen : 15), ep);
    if ((strcmp(t, "pgm") == 0 || strcmp(t, "epgm") == 0 || strcmp(t, "tipc") == 0) && zmq_has(t))
        return 0;
    return err_set(-EINVAL, "\"%s\": transport \"%s\" is not one this ZeroMQ takes here (tcp, ipc, inproc)", ep, t);
}

/* ---- files and folders --------------------------------------------------- */

/* The job creates DIR with one mkdir (io/image_files.c, stream/state.c): it must be a
 * writable folder already, or its parent must be one. */
static int check_dir(const struct sl_config *cfg, const char *key, const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return fail(cfg, key, "\"%s\" exists and is not a folder", dir);
        if (access(dir, W_OK | X_OK) != 0)
            return fail(cfg, key, "\"%s\" is not writable by this user", dir);
        return 0;
    }
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", dir);
    size_t len = strlen(parent);
    while (len > 1 && parent[len - 1] == '/')
        parent[--len] = '\0';
    char *slash = strrchr(parent, '/');
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else if (slash == parent)
        parent[1] = '\0';
    else
        *slash = '\0';
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
        return fail(cfg, key, "\"%s\" cannot be created: its folder \"%s\" does not exist (the job makes only the "
                              "last level)", dir, parent);
    if (access(parent, W_OK | X_OK) != 0)
        return fail(cfg, key, "\"%s\" cannot be created: \"%s\" is not writable by this user", dir, parent);
    return 0;
}

static int check_input_paths(const struct sl_config *cfg)
{
    const struct input_conf *in = &cfg->input;
    for (size_t i = 0; i < in->n_paths; i++) {
        const char *p = in->paths[i];
        bool found;
        if (strpbrk(p, "*?[")) {
            glob_t g;
            found = glob(p, 0, NULL, &g) == 0 && g.gl_pathc > 0;
            globfree(&g);
        } else {
            struct stat st;
            found = stat(p, &st) == 0;
        }
        if (found)
            continue;
        /* A watched input may name files still to come; a one-shot read of nothing
         * is a mistake (the rtm job would end at once, the locate job fails). */
        if (in->watch) {
            log_warn("[input] paths: \"%s\" matches nothing yet (watched: files may still come)", p);
            continue;
        }
        return fail(cfg, "input.paths", "\"%s\" %s (paths are relative to the config's folder; set watch = true for "
                                        "files still to come)", p,
                    strpbrk(p, "*?[") ? "matches no file" : "does not exist");
    }
    return 0;
}

/* ---- the model ---------------------------------------------------------- */

static bool plausible(float v, bool em)
{
    /* isnormal: a byte-swapped float of an ordinary value is often subnormal or huge. */
    if (!isnormal(v) || v <= 0)
        return false;
    return em ? v >= 1.0f && v <= 1e4f : v >= 1e-2f && v <= 3.1e8f;
}

/* A raw model file: the size [model] n asks for, and values that make sense in the
 * configured byte order, or a hint when they would in the other. */
static int check_raw(const struct sl_config *cfg)
{
    const struct model_conf *mc = &cfg->model;
    size_t nn = (size_t)mc->n[0] * mc->n[1] * mc->n[2];
    struct stat st;
    if (stat(mc->file, &st) != 0)
        return fail(cfg, "model.file", "\"%s\": %s", mc->file, strerror(errno));
    if ((size_t)st.st_size != nn * 4)
        return fail(cfg, "model.file", "\"%s\" has %lld bytes, but n = [%d, %d, %d] needs %zu (float32)%s", mc->file,
                    (long long)st.st_size, mc->n[0], mc->n[1], mc->n[2], nn * 4,
                    st.st_size % 8 == 0 && (size_t)st.st_size == nn * 8 ? ": is it float64?" : "");
    FILE *f = fopen(mc->file, "rb");
    if (!f)
        return fail(cfg, "model.file", "\"%s\": %s", mc->file, strerror(errno));
    const bool em = mc->quantity == QTY_PERMITTIVITY, big = mc->byte_order == BYTE_ORDER_BIG;
    size_t bad[2] = {0, 0}, first_bad = SIZE_MAX;
    float lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    uint32_t buf[4096];
    size_t done = 0;
    int rc = 0;
    while (done < nn) {
        size_t want = nn - done < 4096 ? nn - done : 4096, got = fread(buf, 4, want, f);
        if (got != want) {
            rc = fail(cfg, "model.file", "\"%s\": short read at byte %zu", mc->file, (done + got) * 4);
            break;
        }
        for (size_t e = 0; e < got; e++) {
            /* [0]: as configured, [1]: the other byte order (the host is little-endian) */
            uint32_t w[2] = {big ? __builtin_bswap32(buf[e]) : buf[e], big ? buf[e] : __builtin_bswap32(buf[e])};
            for (int s = 0; s < 2; s++) {
                float v;
                memcpy(&v, &w[s], 4);
                if (!plausible(v, em)) {
                    bad[s]++;
                    if (s == 0 && first_bad == SIZE_MAX)
                        first_bad = done + e;
                    continue;
                }
                lo[s] = fminf(lo[s], v);
                hi[s] = fmaxf(hi[s], v);
            }
        }
        done += got;
    }
    fclose(f);
    if (rc)
        return rc;
    const char *what = em ? "relative permittivity" : "velocity (m/s)";
    char where[PATH_MAX + 32];
    /* Point at byte_order when the file sets it, else at the model file's line. */
    const char *bo_key = strcmp(config_where(cfg, "model.byte_order", where, sizeof where), cfg->path ? cfg->path : "?")
                             ? "model.byte_order" : "model.file";
    if (bad[0] && !bad[1])
        return fail(cfg, bo_key,
                    "\"%s\": %zu of %zu values are not a plausible %s (the first at byte offset %zu); read as "
                    "\"%s\" every value is, %g .. %g: wrong byte_order?", mc->file, bad[0], nn, what, first_bad * 4,
                    big ? "little" : "big", lo[1], hi[1]);
    if (bad[0])
        return fail(cfg, "model.file", "\"%s\": %zu of %zu values are not a plausible %s (the first at byte offset "
                                       "%zu)%s", mc->file, bad[0], nn, what, first_bad * 4,
                    bad[1] < bad[0] ? "; wrong byte_order?" : "");
    if (!em && hi[0] < V_KMS_BELOW)
        return fail(cfg, "model.file", "\"%s\": every velocity is below %g m/s (%g .. %g): is this km/s? The file "
                                       "must hold m/s", mc->file, V_KMS_BELOW, lo[0], hi[0]);
    return 0;
}

/* Typed velocities and the model the run will load, checked as the run checks it. */
static int check_model(const struct sl_config *cfg, FILE *out)
{
    const struct model_conf *mc = &cfg->model;
    const bool em = mc->quantity == QTY_PERMITTIVITY;
    int rc;
    if (!em && mc->type == MODEL_CONSTANT && mc->velocity < V_KMS_BELOW)
        return fail(cfg, "model.velocity", "%g m/s: is this km/s? Velocities are in m/s (e.g. %g)", mc->velocity,
                    mc->velocity * 1000);
    if (!em && mc->type == MODEL_LAYERED)
        for (size_t i = 0; i < mc->n_layer_velocities; i++)
            if (mc->layer_velocities[i] < V_KMS_BELOW)
                return fail(cfg, "model.layer_velocities", "layer %zu: %g m/s: is this km/s? Velocities are in m/s",
                            i + 1, mc->layer_velocities[i]);
    if (mc->type == MODEL_RAW && (rc = check_raw(cfg)) < 0)
        return rc;
    struct sl_model m;
    if ((rc = model_load(cfg, &m)) < 0) {
        char where[PATH_MAX + 32];
        return err_prefix(rc, "%s: [model]", config_where(cfg, mc->file[0] ? "model.file" : "model.type", where,
                                                           sizeof where));
    }
    double vmax = m.vmax;
    if (!em && mc->type == MODEL_SEGY && vmax < V_KMS_BELOW) {
        model_free(&m);
        return fail(cfg, "model.file", "\"%s\": every velocity is below %g m/s (largest %g): is this km/s?",
                    mc->file, V_KMS_BELOW, vmax);
    }
    /* The time step and the leapfrog's own error at the highest frequency. */
    const struct propagator_conf *p = &cfg->propagator;
    if (p->physics == PHYSICS_TTI && p->op != OPERATOR_TAYLOR) {
        model_free(&m);
        return fail(cfg, "propagator.operator", "\"%s\" is not supported with physics = \"tti\" (only \"taylor\": "
                    "the TTI stability bound and qP/qSV split hold for Taylor weights; docs/operators.md)",
                    p->op == OPERATOR_OPTIMIZED ? "optimized" : "implicit");
    }
    double fmax = wavelet_ricker_fmax(p->f_peak), dt;
    if (p->wavelet == WAVELET_FILE) {
        float *w;
        size_t nw;
        if ((rc = wavelet_read(p->wavelet_file, &w, &nw)) < 0) {
            char where[PATH_MAX + 32];
            model_free(&m);
            return err_prefix(rc, "%s: [propagator] wavelet_file",
                              config_where(cfg, "propagator.wavelet_file", where, sizeof where));
        }
        fmax = wavelet_fmax(w, nw, p->wavelet_dt > 0 ? p->wavelet_dt : p->dt);
        free(w);
    }
    /* The time step as stability_resolve_model() sets it for the job (TTI: the limit of
     * tti_dt_max_model over the model, kernels/tti.h); that function itself (which the
     * job's report calls too, with its warnings) only for the error it words. */
    double dt_max, vslow;
    rc = stability_model_limit(cfg, &m, fmax, &dt_max, &vslow);
    dt = p->dt > 0 ? p->dt : p->cfl * dt_max;
    if (rc == 0 && p->dt > dt_max)
        rc = stability_resolve_model(cfg, &m, fmax, &dt, NULL, NULL);
    double vpz_min = m.vmin;
    model_free(&m);
    if (rc < 0)
        return rc;
    if (p->physics == PHYSICS_TTI)
        fprintf(out, "[propagator] TTI: largest stable dt %.6g ms (the acoustic rule at the largest v_pz would give "
                     "%.6g ms); points per wavelength at fmax %.4g Hz: %.2f of the slowest qP phase velocity %.6g m/s "
                     "(v_pz down to %g m/s; ppw_min %g)\n",
                dt_max * 1e3, 1e3 * stability_dt_max_dims(p->order, mc->d, vmax, mc->n[1] == 1), fmax,
                stability_ppw(vslow, fmax, mc->d), vslow, vpz_min, p->ppw_min);
    if (p->t_max / dt < 1)
        return fail(cfg, "propagator.t_max", "%g s is shorter than one time step (%g s)", p->t_max, dt);
    double e = stability_time_dispersion(fmax, dt);
    if (isfinite(e))
        fprintf(out, "[propagator] time dispersion (leapfrog, second order in time): phase velocity %+.3g %% at "
                     "fmax %.4g Hz with dt %.4g ms, %.3g ms of phase lead per second travelled at fmax; a smaller dt "
                     "([propagator] dt or cfl) reduces it as dt^2\n",
                100 * e, fmax, dt * 1e3, 1e3 * e / (1 + e));
    else
        fprintf(out, "[propagator] time dispersion: dt %.4g ms is too coarse for fmax %.4g Hz (pi fmax dt >= pi/2): "
                     "the leapfrog cannot represent it; a smaller dt ([propagator] dt or cfl) is needed\n",
                dt * 1e3, fmax);
    if (p->time_dispersion == TIME_DISPERSION_CORRECT) /* tdc: docs/time-dispersion.md */
        fprintf(out, "[propagator] time_dispersion = \"correct\": the model traces and the rtm image are corrected for it up to %.4g Hz (1 / (pi dt)), docs/time-dispersion.md\n", 1.0 / (M_PI * dt));
    /* the operator's own error, space alone and with this dt (stream/stability_conf.h) */
    return stability_dispersion_report(cfg, vslow, fmax, dt, out, NULL);
}

/* The model job places its sources and receivers with the windowed-sinc weights
 * (kernels/points.c): every point's support must lie on the grid or in the absorbing
 * layers, as wave_points_create() will demand once the run has allocated everything. */
static int check_point(const struct sl_config *cfg, const char *key, size_t i, const double q[3])
{
    const struct model_conf *mc = &cfg->model;
    const struct propagator_conf *p = &cfg->propagator;
    for (int a = 0; a < 3; a++) {
        int lo_pad = p->pml_width[2 * a], hi_pad = p->pml_width[2 * a + 1];
        if (a == 2 && p->free_surface)
            lo_pad = 0; /* the surface replaces the top layer (stream/job_model.c) */
        double x = (q[a] - mc->o[a]) / mc->d[a];
        if (!(x >= -1e-9 && x <= mc->n[a] - 1 + 1e-9))
            return fail(cfg, key, "point %zu at (%g, %g, %g) m lies outside the model (axis %c: %g .. %g m)", i + 1,
                        q[0], q[1], q[2], "xyz"[a], mc->o[a], mc->o[a] + (mc->n[a] - 1) * mc->d[a]);
        if (a == 1 && mc->n[1] == 1)
            continue; /* 2D: one y node, no support across the line (kernels/wave.h) */
        int first;
        float w[POINTS_MAX_SUPPORT];
        int ns = points_weights_1d(x, WAVE_INTERP_SINC, &first, w);
        if (a == 2 && p->free_surface && first < 0)
            first = 0; /* folded onto the mirror nodes below the surface */
        if (first < -lo_pad || first + ns - 1 > mc->n[a] - 1 + hi_pad)
            return fail(cfg, key, "point %zu at (%g, %g, %g) m: its interpolation support (%d nodes) leaves the grid "
                                  "along %c; move it inside or widen [propagator] pml_width on that axis (%d cells "
                                  "each side hold it)", i + 1, q[0], q[1], q[2], ns, "xyz"[a], ns / 2);
    }
    return 0;
}

static int check_acquisition(const struct sl_config *cfg)
{
    const struct acquisition_conf *a = &cfg->acquisition;
    int rc;
    for (size_t i = 0; i < a->sources.n; i++)
        if ((rc = check_point(cfg, "acquisition.sources", i, a->sources.p[i])) < 0)
            return rc;
    if (a->rx_count[0] > 0 && a->rx_count[1] > 0) {
        for (int j = 0; j < a->rx_count[1]; j++)
            for (int i = 0; i < a->rx_count[0]; i++) {
                double q[3] = {a->rx_origin[0] + i * a->rx_step[0], a->rx_origin[1] + j * a->rx_step[1],
                               a->rx_origin[2]};
                if ((rc = check_point(cfg, "acquisition.rx_count", (size_t)j * a->rx_count[0] + i, q)) < 0)
                    return rc;
            }
    } else {
        for (size_t i = 0; i < a->receivers.n; i++)
            if ((rc = check_point(cfg, "acquisition.receivers", i, a->receivers.p[i])) < 0)
                return rc;
    }
    return 0;
}

int check_runnable(const struct sl_config *cfg, FILE *out)
{
    int rc;
    const int job = cfg->job.kind;
    if (job == JOB_RTM || job == JOB_MODEL) {
        if ((rc = check_model(cfg, out)) < 0)
            return rc;
        if (cfg->propagator.snapshot_every > 0 && (rc = check_dir(cfg, "propagator.snapshot_dir",
                                                                  cfg->propagator.snapshot_dir)) < 0)
            return rc;
    }
    if (job == JOB_LOCATE && cfg->locate.traveltime == TT_HOMOGENEOUS) {
        if (cfg->locate.vp < V_KMS_BELOW)
            return fail(cfg, "locate.vp", "%g m/s: is this km/s? Velocities are in m/s", cfg->locate.vp);
        if (cfg->locate.phases != PHASES_P && cfg->locate.vs < V_KMS_BELOW)
            return fail(cfg, "locate.vs", "%g m/s: is this km/s? Velocities are in m/s", cfg->locate.vs);
    }
    if (job == JOB_MODEL)
        return check_acquisition(cfg); /* `seislive model -o OUT` reads no input and publishes nothing */
    const struct input_conf *in = &cfg->input;
    if (in->kind == INPUT_ZMQ && (rc = check_endpoint(in->endpoint, in->socket != SOCK_SUB)) < 0)
        return err_prefix(rc, "%s: [input] endpoint", config_where(cfg, "input.endpoint", (char[PATH_MAX + 32]){0},
                                                                   PATH_MAX + 32));
    if (in->kind == INPUT_FILES && (rc = check_input_paths(cfg)) < 0)
        return rc;
    /* The same refusal as the locate job's file reader (stream/job_locate.c). */
    if (job == JOB_LOCATE && in->kind == INPUT_FILES && in->format != FMT_AUTO && in->format != FMT_MSEED &&
        in->format != FMT_SAC)
        return fail(cfg, "input.format", "the locate job reads miniSEED or SAC files: format \"mseed\", \"sac\" or "
                                         "\"auto\", not \"%s\"", config_enum_name("input", "format", in->format));
    const struct output_conf *o = &cfg->output;
    if (o->endpoint[0] && (rc = check_endpoint(o->endpoint, true)) < 0)
        return err_prefix(rc, "%s: [output] endpoint", config_where(cfg, "output.endpoint", (char[PATH_MAX + 32]){0},
                                                                    PATH_MAX + 32));
    if (o->http[0] && (rc = http_check_addr(o->http)) < 0)
        return err_prefix(rc, "%s: [output] http", config_where(cfg, "output.http", (char[PATH_MAX + 32]){0},
                                                                PATH_MAX + 32));
    if ((rc = check_dir(cfg, "output.dir", o->dir[0] ? o->dir : ".")) < 0)
        return rc;
    if (o->state_dir[0] && (rc = check_dir(cfg, "output.state_dir", o->state_dir)) < 0)
        return rc;
    if (job == JOB_LOCATE && cfg->locate.coherence_dir[0] &&
        (rc = check_dir(cfg, "locate.coherence_dir", cfg->locate.coherence_dir)) < 0)
        return rc;
    return 0;
}
