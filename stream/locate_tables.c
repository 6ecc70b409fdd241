/* locate_tables — the travel-time tables from the config and their files (see
 * locate_tables.h). */
#include "stream/locate_tables.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/nonlinloc.h"
#include "stream/error.h"

int locate_tt_phases(int phase_set)
{
    switch (phase_set) {
    case PHASES_P: return TT_PHASES_P;
    case PHASES_S: return TT_PHASES_S;
    default: return TT_PHASES_PS;
    }
}

int locate_layers_load(const char *path, struct tt_layers *m)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(-errno, "%s: cannot open layered model: %s", path, strerror(errno));
    char line[512];
    int lineno = 0, cap = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        /* a line the buffer cannot hold would be split, its tail read as a line (the end
         * of a long comment as a layer), as io/stations.c says */
        if (!strchr(line, '\n') && !feof(f)) {
            rc = err_set(-EINVAL, "%s:%d: line longer than %d characters", path, lineno, (int)sizeof line - 2);
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        double z, vp, vs;
        char extra;
        int k = sscanf(line, "%lf %lf %lf %c", &z, &vp, &vs, &extra);
        if (k <= 0)
            continue;
        if (k != 3 || !(vp > 0) || !(vs > 0) || !isfinite(z) || !isfinite(vp) || !isfinite(vs)) {
            rc = err_set(-EINVAL, "%s:%d: expected 'top_depth_m vp_m/s vs_m/s' with finite positive velocities",
                         path, lineno);
            break;
        }
        if (m->n > 0 && !(z > m->top[m->n - 1])) {
            rc = err_set(-EINVAL, "%s:%d: layer top %g m is not below the previous one", path, lineno, z);
            break;
        }
        if (m->n == cap) {
            /* each array is replaced only once its realloc succeeded: a failed one keeps
             * the old block, which locate_layers_free below still frees (no leak) */
            int ncap = cap ? cap * 2 : 8;
            double *p[3] = {m->top, m->vp, m->vs};
            int ok = 1;
            for (int a = 0; a < 3 && ok; a++) {
                double *q = realloc(p[a], (size_t)ncap * sizeof(double));
                ok = q != NULL;
                if (ok)
                    p[a] = q;
            }
            m->top = p[0];
            m->vp = p[1];
            m->vs = p[2];
            if (!ok) {
                rc = err_set(-ENOMEM, "%s:%d: out of memory for %d layers", path, lineno, ncap);
                break;
            }
            cap = ncap;
        }
        m->top[m->n] = z;
        m->vp[m->n] = vp;
        m->vs[m->n] = vs;
        m->n++;
    }
    fclose(f);
    if (!rc && m->n == 0)
        rc = err_set(-EINVAL, "%s: no layers", path);
    if (rc)
        locate_layers_free(m);
    return rc;
}

void locate_layers_free(struct tt_layers *m)
{
    free(m->top);
    free(m->vp);
    free(m->vs);
    memset(m, 0, sizeof *m);
}

int locate_tables_nonlinloc(const struct tt_grid *g, const struct tt_station *st, int nsta, int phases,
                            const char *root_p, const char *root_s, int naming, struct tt_table *out)
{
    int rc = tt_table_alloc(g, nsta, phases, out);
    if (rc)
        return rc;
    for (int s = 0; s < nsta; s++)
        for (int p = 0; p < out->nphase; p++) {
            const char *root = out->phase[p] == 0 ? root_p : root_s;
            if (!root || !*root) {
                tt_free(out);
                return err_set(-EINVAL, "[locate] nll_%c: no NonLinLoc grid root given for phase %c",
                               "ps"[out->phase[p]], "PS"[out->phase[p]]);
            }
            char path[4096];
            struct nll_grid ng;
            rc = nll_time_root(root, st[s].name, "PS"[out->phase[p]], naming, path, sizeof path);
            if (!rc)
                rc = nll_read(path, &ng);
            if (rc) {
                tt_free(out);
                return rc;
            }
            float *row = out->t + ((size_t)s * out->nphase + p) * out->nj;
            for (size_t j = 0; j < out->nj; j++) {
                double q[3];
                tt_point(g, j, q);
                double v = nll_value(&ng, q[0] / 1000.0, q[1] / 1000.0, q[2] / 1000.0);
                if (isnan(v)) {
                    nll_free(&ng);
                    tt_free(out);
                    return err_set(-EINVAL, "%s: trial point (%.1f, %.1f, %.1f) m is outside the grid",
                                   path, q[0], q[1], q[2]);
                }
                row[j] = (float)v;
            }
            nll_free(&ng);
        }
    tt_table_finish(st, out);
    return 0;
}

int locate_tables_build(const struct sl_config *cfg, const struct tt_station *st, int nsta, struct tt_table *out)
{
    const struct locate_conf *lc = &cfg->locate;
    int phases = locate_tt_phases(lc->phases);
    struct tt_grid g;
    for (int a = 0; a < 3; a++) {
        g.n[a] = lc->grid_n[a];
        g.d[a] = lc->grid_d[a];
        g.o[a] = lc->grid_o[a];
    }
    switch (lc->traveltime) {
    case TT_HOMOGENEOUS:
        return tt_homogeneous(&g, st, nsta, phases, lc->vp, lc->vs, out);
    case TT_LAYERED: {
        char where[256];
        if (!lc->layers || !*lc->layers)
            return err_set(-EINVAL, "%s: [locate] traveltime = \"layered\" needs [locate] layers",
                           config_where(cfg, "locate.traveltime", where, sizeof where));
        struct tt_layers m;
        int rc = locate_layers_load(lc->layers, &m);
        if (rc)
            return rc;
        rc = tt_layered(&g, st, nsta, phases, &m, out);
        locate_layers_free(&m);
        return rc;
    }
    case TT_NONLINLOC:
        return locate_tables_nonlinloc(&g, st, nsta, phases, lc->nll_p, lc->nll_s, lc->nll_pattern, out);
    }
    return err_set(-EINVAL, "[locate] traveltime: unknown kind %d", lc->traveltime);
}
