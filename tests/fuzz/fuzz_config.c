/* fuzz_config — a TOML file through the real loader (conf/config.c config_load: the
 * toml++ bridge, the schema, the cross-key checks, file:line errors), then what the
 * program does with a loaded configuration: print it and fingerprint it; and, when the
 * grid is small (FUZZ_MODEL_CELLS), what `seislive check` does with its model
 * (stream/check.c check_model): io/model.c model_load (raw or SEG-Y velocity file, and
 * with [propagator] physics = "tti" the epsilon/delta/theta/phi files), the wavelet file
 * (kernels/wavelet.c wavelet_read, wavelet_fmax) and the time step's limit
 * (stream/stability_conf.c stability_model_limit: TTI's tti_model_check and dt bound,
 * the operator's band).
 *
 * Input: the TOML text, then up to FUZZ_CONFIG_FILES files, each after FUZZ_PART_SEP
 * (TOML text holds no NUL), written beside the TOML as p1 .. p5; p1.sgy .. p5.sgy name
 * the same files (a TTI file beside a constant or layered velocity is SEG-Y by its
 * name).  A part not given is no file.  Invariants checked on a loaded model: every
 * velocity finite and > 0, vmin..vmax its range, the TTI volumes finite, epsilon and
 * delta > -0.5, theta in [-pi/2, pi/2], phi in [-pi, pi]. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/config.h"
#include "io/model.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "stream/stability_conf.h"
#include "tests/fuzz/fuzz.h"

#define FUZZ_MODEL_CELLS 16384 /* larger grids: the loader only (the volume would be filled) */

static const char *const part_names[FUZZ_CONFIG_FILES] = {"p1", "p2", "p3", "p4", "p5"};

/* The parts after the TOML: written as p1.., the rest removed; the TOML's length. */
static int write_parts(const uint8_t *data, size_t size, size_t *toml_len)
{
    static int linked;
    char p[512], q[512];
    if (!linked) { /* pK.sgy -> pK, once */
        for (int k = 0; k < FUZZ_CONFIG_FILES; k++) {
            snprintf(p, sizeof p, "%s/%s.sgy", fuzz_dir(), part_names[k]);
            unlink(p);
            if (symlink(part_names[k], p) != 0)
                return -errno;
        }
        linked = 1;
    }
    const uint8_t *end = data + size, *at = data;
    const uint8_t *sep = memmem(at, size, FUZZ_PART_SEP, FUZZ_PART_SEP_LEN);
    *toml_len = sep ? (size_t)(sep - data) : size;
    for (int k = 0; k < FUZZ_CONFIG_FILES; k++) {
        snprintf(q, sizeof q, "%s/%s", fuzz_dir(), part_names[k]);
        if (!sep) {
            unlink(q);
            continue;
        }
        at = sep + FUZZ_PART_SEP_LEN;
        sep = memmem(at, (size_t)(end - at), FUZZ_PART_SEP, FUZZ_PART_SEP_LEN);
        int rc = fuzz_write(part_names[k], at, (size_t)((sep ? sep : end) - at));
        if (rc)
            return rc;
    }
    return 0;
}

static void check_volume(const float *a, size_t n, float lo, float hi)
{
    for (size_t i = 0; a && i < n; i++)
        if (!(a[i] >= lo && a[i] <= hi))
            abort();
}

/* The model part of `seislive check` (stream/check.c check_model), with no output. */
static int check_model(const struct sl_config *cfg)
{
    const int *n = cfg->model.n;
    size_t cells = (size_t)n[0] * (size_t)n[1] * (size_t)n[2];
    if (cells > FUZZ_MODEL_CELLS)
        return 0;
    struct sl_model m;
    int rc = model_load(cfg, &m);
    if (rc < 0)
        return rc;
    if (!(m.vmin > 0 && m.vmin <= m.vmax && isfinite(m.vmax)))
        abort();
    check_volume(m.v, cells, (float)m.vmin, (float)m.vmax);
    if (m.tti_on) {
        check_volume(m.tti.eps, cells, nextafterf(-0.5f, 0), FLT_MAX);
        check_volume(m.tti.delta, cells, nextafterf(-0.5f, 0), FLT_MAX);
        check_volume(m.tti.theta, cells, (float)-M_PI_2, (float)M_PI_2);
        check_volume(m.tti.phi, cells, (float)-M_PI, (float)M_PI);
    }
    const struct propagator_conf *p = &cfg->propagator;
    if (p->physics == PHYSICS_TTI && p->op != OPERATOR_TAYLOR) { /* check_model refuses it */
        model_free(&m);
        return 0;
    }
    double fmax = wavelet_ricker_fmax(p->f_peak);
    if (p->wavelet == WAVELET_FILE) {
        float *w;
        size_t nw;
        if ((rc = wavelet_read(p->wavelet_file, &w, &nw)) < 0) {
            model_free(&m);
            return rc;
        }
        for (size_t i = 0; i < nw; i++)
            if (!isfinite(w[i]))
                abort();
        /* wavelet_fmax: FFTW on 4n points (it was a direct O(n^2) sum), so every length */
        fmax = wavelet_fmax(w, nw, p->wavelet_dt > 0 ? p->wavelet_dt : p->dt);
        free(w);
    }
    double dt_max, vslow;
    rc = stability_model_limit(cfg, &m, fmax, &dt_max, &vslow);
    model_free(&m);
    return rc;
}

int fuzz_config(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    size_t toml_len = size;
    int rc = write_parts(data, size, &toml_len);
    if (!rc)
        rc = fuzz_write("fuzz-input.toml", data, toml_len);
    if (rc)
        return err_set(rc, "%s: cannot write the input", fuzz_dir());
    char path[512];
    snprintf(path, sizeof path, "%s/fuzz-input.toml", fuzz_dir());
    struct sl_config cfg;
    rc = config_load(path, &cfg);
    if (!rc) {
        static FILE *null;
        if (!null)
            null = fopen("/dev/null", "w");
        if (null)
            config_print(&cfg, null);
        (void)config_fingerprint(&cfg);
        rc = check_model(&cfg);
    }
    config_free(&cfg);
    return rc;
}
