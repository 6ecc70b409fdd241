/* volume_files — see volume_files.h. */
#include "tools/volume_files.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/segy_write.h"
#include "stream/error.h"

static int publish(const char *tmp, const char *path)
{
    if (rename(tmp, path) < 0)
        return err_set(-errno, "rename %s -> %s: %s", tmp, path, strerror(errno));
    return 0;
}

int volume_write_raw(const char *path_noext, const struct volume_meta *m, const float *v)
{
    char path[4096], tmp[4200];
    size_t n = (size_t)m->n[0] * m->n[1] * m->n[2];
    snprintf(path, sizeof path, "%s.f32", path_noext);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return err_set(-errno, "%s: %s", tmp, strerror(errno));
    size_t w = fwrite(v, sizeof *v, n, f);
    if (fclose(f) != 0 || w != n)
        return err_set(-EIO, "%s: short write", tmp);
    int rc = publish(tmp, path);
    if (rc < 0)
        return rc;
    json_t *o = json_pack("{s:[i,i,i], s:[f,f,f], s:[f,f,f], s:s, s:s, s:s, s:I, s:I, s:b}",
                          "n", m->n[0], m->n[1], m->n[2], "d", m->d[0], m->d[1], m->d[2], "o",
                          m->o[0], m->o[1], m->o[2], "dtype", "f32", "byte_order", "little",
                          "order", "x-fastest", "seq", (json_int_t)m->seq, "shots",
                          (json_int_t)m->units, "final", m->final);
    snprintf(path, sizeof path, "%s.json", path_noext);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    rc = json_dump_file(o, tmp, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(o);
    if (rc < 0)
        return err_set(-EIO, "%s: cannot write", tmp);
    return publish(tmp, path);
}

static int segy_fail(segy_file *f, const char *path, const char *what, int code)
{
    if (f)
        segy_close(f);
    return err_set(-EIO, "%s: segyio %s failed (code %d)", path, what, code);
}

int volume_write_segy(const char *path, const struct volume_meta *m, const float *v)
{
    int nx = m->n[0], ny = m->n[1], nz = m->n[2];
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    segy_file *f = segy_open(tmp, "w+b");
    if (!f)
        return err_set(-errno ? -errno : -EIO, "%s: cannot create", tmp);
    /* dz in mm overflowed the 16-bit field above 65.535 m (written truncated): the
     * unit that holds it, named in the textual header */
    int dz_mm;
    const char *unit;
    double unit_m;
    int rc = segy_depth_interval(m->d[2], &dz_mm, &unit, &unit_m);
    if (rc < 0) {
        segy_close(f);
        unlink(tmp);
        return err_prefix(rc, "%s", path);
    }
    char text[3200 + 1];
    memset(text, ' ', 3200);
    text[3200] = '\0';
    char line[81], c04[81];
    snprintf(c04, sizeof c04, "C04 sample interval (3217, 117) = dz in %s (%d x %g m)", unit, dz_mm, unit_m);
    const char *lines[] = {"C01 seislive image (seislive-sub)",
                           "C02 one trace per x-y column; samples are depth",
                           "C03 inline (189) = iy + 1, crossline (193) = ix + 1, coordinates in cm",
                           c04};
    for (int i = 0; i < 4; i++) {
        snprintf(line, sizeof line, "%-80s", lines[i]);
        memcpy(text + 80 * i, line, 80);
    }
    rc = segy_write_textheader(f, 0, text);
    if (rc != SEGY_OK)
        return segy_fail(f, tmp, "write_textheader", rc);
    char bin[SEGY_BINARY_HEADER_SIZE];
    memset(bin, 0, sizeof bin);
    segy_set_bfield(bin, SEGY_BIN_INTERVAL, dz_mm);
    segy_set_bfield(bin, SEGY_BIN_SAMPLES, nz);
    segy_set_bfield(bin, SEGY_BIN_FORMAT, SEGY_IEEE_FLOAT_4_BYTE);
    segy_set_bfield(bin, SEGY_BIN_SORTING_CODE, 2); /* CDP ensemble */
    segy_set_bfield(bin, SEGY_BIN_MEASUREMENT_SYSTEM, 1); /* metres */
    segy_set_bfield(bin, SEGY_BIN_SEGY_REVISION, 0x0100);
    segy_set_bfield(bin, SEGY_BIN_TRACE_FLAG, 1); /* fixed trace length */
    if ((rc = segy_write_binheader(f, bin)) != SEGY_OK)
        return segy_fail(f, tmp, "write_binheader", rc);
    if ((rc = segy_set_format(f, SEGY_IEEE_FLOAT_4_BYTE)) != SEGY_OK)
        return segy_fail(f, tmp, "set_format", rc);
    long trace0 = segy_trace0(bin);
    int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, nz);
    float *tr = malloc((size_t)nz * sizeof *tr);
    if (!tr) {
        segy_close(f);
        return err_set(-ENOMEM, "%s: out of memory", tmp);
    }
    int t = 0;
    for (int iy = 0; iy < ny && rc == SEGY_OK; iy++) {
        for (int ix = 0; ix < nx && rc == SEGY_OK; ix++, t++) {
            char th[SEGY_TRACE_HEADER_SIZE];
            memset(th, 0, sizeof th);
            int32_t x_cm = (int32_t)lround((m->o[0] + ix * m->d[0]) * 100.0);
            int32_t y_cm = (int32_t)lround((m->o[1] + iy * m->d[1]) * 100.0);
            segy_set_field(th, SEGY_TR_SEQ_LINE, t + 1);
            segy_set_field(th, SEGY_TR_SEQ_FILE, t + 1);
            segy_set_field(th, SEGY_TR_ENSEMBLE, t + 1);
            segy_set_field(th, SEGY_TR_TRACE_ID, 1);
            segy_set_field(th, SEGY_TR_SOURCE_GROUP_SCALAR, -100);
            segy_set_field(th, SEGY_TR_ELEV_SCALAR, -100);
            segy_set_field(th, SEGY_TR_SOURCE_X, x_cm);
            segy_set_field(th, SEGY_TR_SOURCE_Y, y_cm);
            segy_set_field(th, SEGY_TR_GROUP_X, x_cm);
            segy_set_field(th, SEGY_TR_GROUP_Y, y_cm);
            segy_set_field(th, SEGY_TR_CDP_X, x_cm);
            segy_set_field(th, SEGY_TR_CDP_Y, y_cm);
            segy_set_field(th, SEGY_TR_INLINE, iy + 1);
            segy_set_field(th, SEGY_TR_CROSSLINE, ix + 1);
            segy_set_field(th, SEGY_TR_SAMPLE_COUNT, nz);
            segy_set_field(th, SEGY_TR_SAMPLE_INTER, dz_mm);
            segy_set_field(th, SEGY_TR_DELAY_REC_TIME, (int32_t)lround(m->o[2]));
            if ((rc = segy_write_traceheader(f, t, th, trace0, bsize)) != SEGY_OK)
                break;
            for (int iz = 0; iz < nz; iz++)
                tr[iz] = v[((size_t)iz * ny + iy) * nx + ix];
            segy_from_native(SEGY_IEEE_FLOAT_4_BYTE, nz, tr);
            rc = segy_writetrace(f, t, tr, trace0, bsize);
        }
    }
    free(tr);
    if (rc != SEGY_OK)
        return segy_fail(f, tmp, "write trace", rc);
    if ((rc = segy_close(f)) != SEGY_OK)
        return err_set(-EIO, "%s: close failed (code %d)", tmp, rc);
    return publish(tmp, path);
}
