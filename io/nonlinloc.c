/* nonlinloc — read and write NonLinLoc .hdr/.buf grids (see nonlinloc.h). */
#include "io/nonlinloc.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "stream/error.h"

/* fgets, but a line that does not fit LINE is an error (naming PATH:LINENO) rather than
 * two lines: its tail would be read as a line of its own (a station label, a
 * TRANSFORM).  Returns 1 with a line, 0 at the end, or a negative code. */
static int read_line(FILE *f, char *line, int size, const char *path, int lineno)
{
    if (!fgets(line, size, f))
        return 0;
    if (!strchr(line, '\n') && !feof(f))
        return err_set(-EINVAL, "%s:%d: line longer than %d characters", path, lineno, size - 2);
    return 1;
}

static int read_hdr(const char *root, struct nll_grid *g, int *dbl_out)
{
    memset(g, 0, sizeof *g);
    char path[4096];
    snprintf(path, sizeof path, "%s.hdr", root);
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(-errno, "%s: cannot open NonLinLoc header: %s", path, strerror(errno));
    char line[1024], fmt[32] = "FLOAT";
    int rc = read_line(f, line, sizeof line, path, 1);
    if (rc < 0) {
        fclose(f);
        return rc;
    }
    if (rc == 0 ||
        sscanf(line, "%d %d %d %lf %lf %lf %lf %lf %lf %31s %31s", &g->n[0], &g->n[1], &g->n[2],
               &g->o[0], &g->o[1], &g->o[2], &g->d[0], &g->d[1], &g->d[2], g->type, fmt) < 10) {
        fclose(f);
        return err_set(-EINVAL, "%s:1: expected 'NX NY NZ X0 Y0 Z0 DX DY DZ TYPE [FLOAT|DOUBLE]'", path);
    }
    for (int a = 0; a < 3; a++)
        if (g->n[a] < 1 || g->n[a] > 100000 || !(g->d[a] > 0) || !isfinite(g->d[a]) ||
            !isfinite(g->o[a])) {
            fclose(f);
            return err_set(-EINVAL, "%s:1: bad grid size or spacing on axis %d", path, a);
        }
    int dbl = strcasecmp(fmt, "DOUBLE") == 0;
    if (!dbl && strcasecmp(fmt, "FLOAT") != 0) {
        fclose(f);
        return err_set(-EINVAL, "%s:1: value type '%s' is not FLOAT or DOUBLE", path, fmt);
    }
    int lineno = 1;
    while ((rc = read_line(f, line, sizeof line, path, lineno + 1)) > 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (strncmp(line, "TRANSFORM", 9) == 0) {
            snprintf(g->transform, sizeof g->transform, "%.255s", line);
            char where[4200];
            snprintf(where, sizeof where, "%s:%d", path, lineno);
            int trc = nll_transform_parse(line, where, &g->tr);
            if (trc) {
                fclose(f);
                return trc;
            }
            g->transform_line = lineno;
        } else if (lineno == 2 && strncasecmp(g->type, "TIME", 4) == 0) {
            if (sscanf(line, "%31s %lf %lf %lf", g->label, &g->src[0], &g->src[1], &g->src[2]) != 4 ||
                !isfinite(g->src[0]) || !isfinite(g->src[1]) || !isfinite(g->src[2])) {
                fclose(f);
                return err_set(-EINVAL, "%s:2: expected 'LABEL XSRC YSRC ZSRC' for a time grid", path);
            }
        }
    }
    fclose(f);
    if (rc < 0)
        return rc;
    *dbl_out = dbl;
    return 0;
}

int nll_read_header(const char *root, struct nll_grid *g)
{
    int dbl;
    return read_hdr(root, g, &dbl);
}

int nll_read(const char *root, struct nll_grid *g)
{
    int dbl, rc = read_hdr(root, g, &dbl);
    if (rc)
        return rc;
    char path[4096];
    size_t n = (size_t)g->n[0] * g->n[1] * g->n[2], es = dbl ? 8 : 4;
    snprintf(path, sizeof path, "%s.buf", root);
    FILE *f = fopen(path, "rb");
    if (!f)
        return err_set(-errno, "%s: cannot open NonLinLoc buffer: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (size < 0 || (size_t)size != n * es) {
        fclose(f);
        return err_set(-EINVAL, "%s: %ld bytes, the header says %zu values of %zu bytes (%zu)", path,
                       size, n, es, n * es);
    }
    g->v = malloc(n * sizeof(float));
    void *raw = dbl ? malloc(n * 8) : (void *)g->v;
    if (!g->v || !raw) {
        rc = err_set(-ENOMEM, "%s: out of memory", path);
    } else if (fread(raw, es, n, f) != n) {
        rc = err_set(-EIO, "%s: short read", path);
    } else {
        /* Every value is a travel time or a velocity: a NaN or an infinity (or a double
         * beyond the float range, which would become one) is a damaged file, not a
         * value to interpolate into the locate engine's delays. */
        for (size_t i = 0; i < n && !rc; i++) {
            double x = dbl ? ((double *)raw)[i] : g->v[i];
            if (!isfinite(x) || fabs(x) > FLT_MAX)
                rc = err_set(-EINVAL, "%s: byte %zu: value %zu is not finite%s", path, i * es, i,
                             dbl && isfinite(x) ? " as a float" : "");
            else
                g->v[i] = (float)x;
        }
    }
    if (dbl)
        free(raw);
    fclose(f);
    if (rc)
        nll_free(g);
    return rc;
}

int nll_write(const char *root, const struct nll_grid *g)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.hdr", root);
    FILE *f = fopen(path, "w");
    if (!f)
        return err_set(-errno, "%s: cannot create: %s", path, strerror(errno));
    /* %.17g keeps every double exact through the text header. */
    fprintf(f, "%d %d %d  %.17g %.17g %.17g  %.17g %.17g %.17g %s FLOAT\n", g->n[0], g->n[1], g->n[2],
            g->o[0], g->o[1], g->o[2], g->d[0], g->d[1], g->d[2], g->type[0] ? g->type : "TIME");
    if (g->label[0])
        fprintf(f, "%s %.17g %.17g %.17g\n", g->label, g->src[0], g->src[1], g->src[2]);
    fprintf(f, "%s\n", g->transform[0] ? g->transform : "TRANSFORM  NONE");
    if (fclose(f) != 0)
        return err_set(-EIO, "%s: write failed", path);
    snprintf(path, sizeof path, "%s.buf", root);
    f = fopen(path, "wb");
    if (!f)
        return err_set(-errno, "%s: cannot create: %s", path, strerror(errno));
    size_t n = (size_t)g->n[0] * g->n[1] * g->n[2];
    int bad = fwrite(g->v, sizeof(float), n, f) != n;
    bad |= fclose(f) != 0;
    return bad ? err_set(-EIO, "%s: write failed", path) : 0;
}

static double at(const struct nll_grid *g, int i, int j, int k)
{
    return g->v[((size_t)i * g->n[1] + j) * g->n[2] + k];
}

double nll_value(const struct nll_grid *g, double x, double y, double z)
{
    double p[3] = {x, y, z};
    if (g->n[0] == 2) { /* 2D: distance from the source along y, x unused */
        p[0] = g->o[0];
        p[1] = g->o[1] + hypot(x - g->src[0], y - g->src[1]);
    }
    int i0[3];
    double w[3];
    for (int a = 0; a < 3; a++) {
        double u = (p[a] - g->o[a]) / g->d[a];
        if (!(u >= -1e-9 && u <= g->n[a] - 1 + 1e-9))
            return NAN;
        if (g->n[a] == 1) {
            i0[a] = 0;
            w[a] = 0;
            continue;
        }
        int i = (int)floor(u);
        if (i >= g->n[a] - 1)
            i = g->n[a] - 2;
        if (i < 0)
            i = 0;
        i0[a] = i;
        w[a] = u - i;
    }
    double s = 0;
    for (int c = 0; c < 8; c++) {
        int di = c & 1, dj = (c >> 1) & 1, dk = (c >> 2) & 1;
        double wt = (di ? w[0] : 1 - w[0]) * (dj ? w[1] : 1 - w[1]) * (dk ? w[2] : 1 - w[2]);
        if (wt == 0)
            continue;
        s += wt * at(g, i0[0] + di, i0[1] + dj, i0[2] + dk);
    }
    return s;
}

static int header_exists(const char *root, struct stat *st)
{
    char path[4200];
    snprintf(path, sizeof path, "%s.hdr", root);
    return stat(path, st) == 0;
}

int nll_time_root(const char *root, const char *station, char phase, int naming, char *out, size_t len)
{
    char sp[4096], ps[4096];
    snprintf(sp, sizeof sp, "%s.%s.%c.time", root, station, phase);
    snprintf(ps, sizeof ps, "%s.%c.%s.time", root, phase, station);
    struct stat a, b;
    int has_sp = naming != NLL_NAMING_PHASE_STATION && header_exists(sp, &a);
    int has_ps = naming != NLL_NAMING_STATION_PHASE && header_exists(ps, &b);
    if (has_sp && has_ps && (a.st_dev != b.st_dev || a.st_ino != b.st_ino))
        return err_set(-EINVAL, "%s.hdr and %s.hdr both exist for station %s, phase %c: ambiguous; set "
                       "[locate] nll_pattern = \"station-phase\" or \"phase-station\"", sp, ps, station, phase);
    if (!has_sp && !has_ps) {
        if (naming == NLL_NAMING_AUTO)
            return err_set(-ENOENT, "no %c time grid for station %s: neither %s.hdr nor %s.hdr exists", phase,
                           station, sp, ps);
        return err_set(-ENOENT, "no %c time grid for station %s: %s.hdr does not exist", phase, station,
                       naming == NLL_NAMING_STATION_PHASE ? sp : ps);
    }
    if ((size_t)snprintf(out, len, "%s", has_sp ? sp : ps) >= len)
        return err_set(-ENAMETOOLONG, "%s: path too long", has_sp ? sp : ps);
    return 0;
}

void nll_free(struct nll_grid *g)
{
    free(g->v);
    g->v = NULL;
}
