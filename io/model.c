#include "io/model.h"

#include <errno.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <strings.h>

#include "stream/error.h"
#define LOG_COMPONENT "model"
#include "stream/log.h"

double model_em_velocity(double eps_r, double mu_r) { return MODEL_C0 / sqrt(eps_r * mu_r); }

void model_free(struct sl_model *m)
{
    free(m->v);
    m->v = NULL;
    free(m->tti.eps);
    free(m->tti.delta);
    free(m->tti.theta);
    free(m->tti.phi);
    memset(&m->tti, 0, sizeof m->tti);
    m->tti_on = false;
}

/* What a volume file holds: the velocity (or permittivity) or one TTI parameter. */
enum vol_kind { VOL_VELOCITY, VOL_EPSILON, VOL_DELTA, VOL_THETA, VOL_PHI };
static const char *const vol_names[] = {"velocity", "epsilon", "delta", "theta", "phi"};

/* A TTI parameter value RAW (file units: degrees for the angles) checked and converted
 * (angles to radians, phi wrapped into [-180, 180] degrees first).  NULL when fine, else
 * the reason. */
static const char *tti_value(enum vol_kind kind, float raw, float *out)
{
    switch (kind) {
    case VOL_EPSILON:
    case VOL_DELTA:
        if (!(raw > -0.5f))
            return "must be > -0.5 (v^2 (1 + 2 x) > 0)";
        *out = raw;
        return NULL;
    case VOL_THETA:
        if (!(raw >= -90.0f && raw <= 90.0f))
            return "degrees: the tilt from the vertical must lie in [-90, 90]";
        *out = (float)(raw * (M_PI / 180.0));
        return NULL;
    default: /* VOL_PHI: any azimuth names a direction */
        *out = (float)(remainder((double)raw, 360.0) * (M_PI / 180.0));
        return NULL;
    }
}

/* Check one file value of KIND and convert it (a velocity from a permittivity in EM
 * mode; radians from degrees).  OFF is its byte offset in FILE, (I, J, K) its grid
 * index. */
static int convert(const struct model_conf *mc, enum vol_kind kind, const char *file, float raw, long long off,
                   int i, int j, int k, float *v)
{
    const bool em = mc->quantity == QTY_PERMITTIVITY;
    if (!isfinite(raw))
        return err_set(-EINVAL, "%s: byte offset %lld (x %d, y %d, z %d): %s is %s", file, off, i, j, k,
                       kind != VOL_VELOCITY ? vol_names[kind] : em ? "permittivity" : "velocity",
                       isnan(raw) ? "NaN" : "infinite");
    if (kind != VOL_VELOCITY) {
        const char *why = tti_value(kind, raw, v);
        if (why)
            return err_set(-EINVAL, "%s: byte offset %lld (x %d, y %d, z %d): %s %g %s", file, off, i, j, k,
                           vol_names[kind], raw, why);
        return 0;
    }
    if (em) {
        if (raw < 1.0f)
            return err_set(-EINVAL, "%s: byte offset %lld (x %d, y %d, z %d): relative permittivity %g "
                           "is below 1", file, off, i, j, k, raw);
        *v = (float)model_em_velocity(raw, mc->permeability);
    } else {
        if (raw <= 0.0f)
            return err_set(-EINVAL, "%s: byte offset %lld (x %d, y %d, z %d): velocity %g m/s is not "
                           "positive", file, off, i, j, k, raw);
        *v = raw;
    }
    return 0;
}

static uint32_t bswap32(uint32_t x) { return __builtin_bswap32(x); }

/* Cells of the grid; every product in size_t (n[0] * n[1] alone exceeds int). */
static size_t cells_of(const struct sl_model *m) { return (size_t)m->n[0] * (size_t)m->n[1] * (size_t)m->n[2]; }

/* A volume of the grid, once the source's header matched it. */
static int alloc_volume(const struct sl_model *m, float **out)
{
    size_t nn = cells_of(m);
    *out = malloc(nn * sizeof **out);
    if (!*out)
        return err_set(-ENOMEM, "model: out of memory for %zu points", nn);
    return 0;
}

/* FILE (raw float32 of the grid, [model] layout and byte order) of KIND into *OUT
 * (allocated, x fastest). */
static int load_raw(const struct model_conf *mc, enum vol_kind kind, const char *file, const struct sl_model *m,
                    float **out)
{
    size_t nn = cells_of(m);
    struct stat st;
    if (stat(file, &st) < 0)
        return err_set(-errno, "%s: %s", file, strerror(errno));
    if ((size_t)st.st_size != nn * 4)
        return err_set(-EINVAL, "%s: %lld bytes, but [model] n = [%d, %d, %d] needs %zu "
                       "(nx*ny*nz float32 = %zu values; the file holds %.6g values)",
                       file, (long long)st.st_size, m->n[0], m->n[1], m->n[2], nn * 4, nn,
                       st.st_size / 4.0);
    FILE *f = fopen(file, "rb");
    if (!f)
        return err_set(-errno, "%s: %s", file, strerror(errno));
    int arc = alloc_volume(m, out);
    if (arc < 0) {
        fclose(f);
        return arc;
    }
    uint32_t *raw = malloc(nn * 4);
    if (!raw) {
        fclose(f);
        return err_set(-ENOMEM, "%s: out of memory", file);
    }
    size_t got = fread(raw, 4, nn, f);
    fclose(f);
    if (got != nn) {
        free(raw);
        return err_set(-EIO, "%s: short read (%zu of %zu values)", file, got, nn);
    }
    const bool swap = mc->byte_order == BYTE_ORDER_BIG;
    const bool zfast = mc->layout == LAYOUT_Z_FASTEST;
    for (size_t e = 0; e < nn; e++) {
        /* File index E -> grid (i, j, k). */
        int i, j, k;
        if (zfast) {
            k = (int)(e % m->n[2]);
            j = (int)(e / m->n[2] % m->n[1]);
            i = (int)(e / m->n[2] / m->n[1]);
        } else {
            i = (int)(e % m->n[0]);
            j = (int)(e / m->n[0] % m->n[1]);
            k = (int)(e / m->n[0] / m->n[1]);
        }
        uint32_t u = swap ? bswap32(raw[e]) : raw[e];
        float x;
        memcpy(&x, &u, 4);
        int rc = convert(mc, kind, file, x, (long long)e * 4, i, j, k,
                         &(*out)[((size_t)k * m->n[1] + j) * m->n[0] + i]);
        if (rc < 0) {
            free(raw);
            return rc;
        }
    }
    free(raw);
    return 0;
}

/* FILE (SEG-Y, one trace per x-y column, x fastest among traces) of KIND into *OUT. */
static int load_segy(const struct model_conf *mc, enum vol_kind kind, const char *file, const struct sl_model *m,
                     float **out)
{
    segy_file *fp = segy_open(file, "rb");
    if (!fp)
        return err_set(-errno ? -errno : -EIO, "%s: cannot open: %s", file, strerror(errno));
    char bin[SEGY_BINARY_HEADER_SIZE];
    int rc = 0;
    if (segy_binheader(fp, bin) != SEGY_OK) {
        rc = err_set(-EINVAL, "%s: cannot read the binary header (byte 3200)", file);
        goto done;
    }
    int ns = segy_samples(bin), fmt = segy_format(bin);
    long trace0 = segy_trace0(bin);
    if (fmt != SEGY_IEEE_FLOAT_4_BYTE && fmt != SEGY_IBM_FLOAT_4_BYTE) {
        rc = err_set(-EINVAL, "%s: byte 3224: sample format %d: only IBM (1) or IEEE (5) float", file, fmt);
        goto done;
    }
    if (ns != m->n[2]) {
        rc = err_set(-EINVAL, "%s: byte 3220: %d samples per trace, but [model] n[2] (nz) = %d", file,
                     ns, m->n[2]);
        goto done;
    }
    int bsize = segy_trsize(fmt, ns), ntr = 0;
    if (segy_traces(fp, &ntr, trace0, bsize) != SEGY_OK) {
        rc = err_set(-EINVAL, "%s: the file size is not a whole number of %d-sample traces", file, ns);
        goto done;
    }
    size_t nxy = (size_t)m->n[0] * (size_t)m->n[1];
    if (ntr < 0 || (size_t)ntr != nxy) {
        rc = err_set(-EINVAL, "%s: %d traces, but [model] n = [%d, %d, %d] needs nx*ny = %zu", file,
                     ntr, m->n[0], m->n[1], m->n[2], nxy);
        goto done;
    }
    if ((rc = alloc_volume(m, out)) < 0)
        goto done;
    float *tr = malloc((size_t)ns * 4);
    if (!tr) {
        rc = err_set(-ENOMEM, "%s: out of memory", file);
        goto done;
    }
    for (int t = 0; t < ntr && rc == 0; t++) {
        if (segy_readtrace(fp, t, tr, trace0, bsize) != SEGY_OK) {
            rc = err_set(-EIO, "%s: trace %d: read failed", file, t + 1);
            break;
        }
        segy_to_native(fmt, ns, tr);
        int i = t % m->n[0], j = t / m->n[0];
        for (int k = 0; k < ns && rc == 0; k++) {
            long long off = trace0 + (long long)t * (SEGY_TRACE_HEADER_SIZE + bsize) +
                            SEGY_TRACE_HEADER_SIZE + (long long)k * 4;
            rc = convert(mc, kind, file, tr[k], off, i, j, k, &(*out)[((size_t)k * m->n[1] + j) * m->n[0] + i]);
        }
    }
    free(tr);
done:
    segy_close(fp);
    return rc;
}

/* A file's format follows the velocity's: SEG-Y with type = segy, raw with type = raw;
 * beside a constant or layered velocity a file named *.sgy or *.segy is SEG-Y, any other
 * raw float32 (layout and byte order of [model]). */
static bool tti_file_is_segy(const struct model_conf *mc, const char *file)
{
    if (mc->type == MODEL_SEGY || mc->type == MODEL_RAW)
        return mc->type == MODEL_SEGY;
    const char *dot = strrchr(file, '.');
    return dot && (!strcasecmp(dot, ".sgy") || !strcasecmp(dot, ".segy"));
}

/* The TTI parameters of [model]: files read like the velocity file, or the constants
 * (degrees to radians, phi wrapped); points with epsilon < delta counted and warned. */
static int load_tti(const struct sl_config *cfg, struct sl_model *m)
{
    const struct model_conf *mc = &cfg->model;
    struct sl_tti *t = &m->tti;
    m->tti_on = true;
    t->eps0 = mc->epsilon;
    t->delta0 = mc->delta;
    t->theta0 = mc->theta * (M_PI / 180.0);
    t->phi0 = remainder(mc->phi, 360.0) * (M_PI / 180.0);
    const char *files[4] = {mc->epsilon_file, mc->delta_file, mc->theta_file, mc->phi_file};
    float **arr[4] = {&t->eps, &t->delta, &t->theta, &t->phi};
    for (int k = 0; k < 4; k++) {
        if (!files[k] || !files[k][0])
            continue;
        const enum vol_kind kind = (enum vol_kind)(VOL_EPSILON + k);
        int rc = tti_file_is_segy(mc, files[k]) ? load_segy(mc, kind, files[k], m, arr[k])
                                                : load_raw(mc, kind, files[k], m, arr[k]);
        if (rc < 0)
            return err_prefix(rc, "[model] %s_file", vol_names[kind]);
    }
    if (t->eps || t->delta) {
        size_t nn = cells_of(m), less = 0, first = 0;
        for (size_t i = nn; i-- > 0;) {
            double e = t->eps ? t->eps[i] : t->eps0, d = t->delta ? t->delta[i] : t->delta0;
            if (e < d) {
                less++;
                first = i;
            }
        }
        if (less)
            log_warn("[model] TTI: epsilon < delta at %zu of %zu points (first at x %zu, y %zu, z %zu): the "
                     "propagator lowers delta to epsilon there (docs/tti.md)", less, nn,
                     first % (size_t)m->n[0], first / (size_t)m->n[0] % (size_t)m->n[1],
                     first / ((size_t)m->n[0] * (size_t)m->n[1]));
    }
    return 0;
}

int model_load(const struct sl_config *cfg, struct sl_model *m)
{
    const struct model_conf *mc = &cfg->model;
    memset(m, 0, sizeof *m);
    for (int a = 0; a < 3; a++) {
        m->n[a] = mc->n[a];
        m->d[a] = mc->d[a];
        m->o[a] = mc->o[a];
    }
    /* Bounded before anything is allocated or read: the volume (and the engines' copies
     * of it) must fit the machine's memory.  n is at most 65536 per axis, so the product
     * (2^48 at most) cannot overflow size_t. */
    size_t nn = cells_of(m);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && nn > (size_t)pages * (size_t)page / sizeof *m->v)
        return err_set(-EINVAL, "%s: [model] n = [%d, %d, %d]: %zu cells (%.1f GiB of float32) exceed this "
                       "machine's memory (%.1f GiB)", cfg->path ? cfg->path : "config", m->n[0], m->n[1],
                       m->n[2], nn, (double)nn * 4 / 1073741824.0,
                       (double)pages * (double)page / 1073741824.0);
    const bool em = mc->quantity == QTY_PERMITTIVITY;
    int rc = 0;
    switch (mc->type) {
    case MODEL_CONSTANT: {
        if ((rc = alloc_volume(m, &m->v)) < 0)
            break;
        float v = em ? (float)model_em_velocity(mc->permittivity, mc->permeability) : (float)mc->velocity;
        for (size_t i = 0; i < nn; i++)
            m->v[i] = v;
        break;
    }
    case MODEL_LAYERED:
        if (mc->n_layer_velocities != mc->n_layer_depths + 1) {
            rc = err_set(-EINVAL, "%s: [model] layered: %zu velocities for %zu layer tops (need one more)",
                         cfg->path ? cfg->path : "config", mc->n_layer_velocities, mc->n_layer_depths);
            break;
        }
        if ((rc = alloc_volume(m, &m->v)) < 0)
            break;
        for (int k = 0; k < m->n[2]; k++) {
            double z = m->o[2] + k * m->d[2];
            size_t l = 0;
            while (l < mc->n_layer_depths && z >= mc->layer_depths[l])
                l++;
            double q = mc->layer_velocities[l];
            float v = em ? (float)model_em_velocity(q, mc->permeability) : (float)q;
            size_t nxy = (size_t)m->n[0] * (size_t)m->n[1];
            for (size_t e = 0; e < nxy; e++)
                m->v[(size_t)k * nxy + e] = v;
        }
        break;
    case MODEL_RAW:
        rc = load_raw(mc, VOL_VELOCITY, mc->file, m, &m->v);
        break;
    case MODEL_SEGY:
        rc = load_segy(mc, VOL_VELOCITY, mc->file, m, &m->v);
        break;
    default:
        rc = err_set(-EINVAL, "model: unknown type %d", mc->type);
    }
    if (rc == 0 && cfg->propagator.physics == PHYSICS_TTI)
        rc = load_tti(cfg, m);
    if (rc < 0) {
        model_free(m);
        return rc;
    }
    m->vmin = INFINITY;
    m->vmax = 0;
    for (size_t i = 0; i < nn; i++) {
        if (m->v[i] < m->vmin)
            m->vmin = m->v[i];
        if (m->v[i] > m->vmax)
            m->vmax = m->v[i];
    }
    return 0;
}
