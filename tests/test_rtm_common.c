/* Shared by the rtm tests; see test_rtm_common.h. */
#include "tests/test_rtm_common.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"

void rtm_case_init(struct rtm_case *c, int nx, int ny, int nz, double d, int order, int nt, double v0)
{
    memset(c, 0, sizeof *c);
    c->n[0] = nx;
    c->n[1] = ny;
    c->n[2] = nz;
    for (int a = 0; a < 3; a++) {
        c->d[a] = d;
        c->o[a] = 0.0;
    }
    c->order = order;
    c->nt = nt;
    c->pml = 10;
    c->dt = 1.5e-3 * d / 10.0;
    c->f_peak = 12.0 * 10.0 / d;
    size_t cells = (size_t)nx * ny * nz;
    c->v_true = malloc(cells * sizeof(float));
    c->v_mig = malloc(cells * sizeof(float));
    cr_assert(c->v_true && c->v_mig);
    for (size_t i = 0; i < cells; i++)
        c->v_true[i] = c->v_mig[i] = (float)v0;
}

void rtm_case_free(struct rtm_case *c)
{
    free(c->v_true);
    free(c->v_mig);
}

void rtm_case_config(const struct rtm_case *c, struct sl_config *cfg)
{
    config_defaults(cfg);
    cfg->propagator.order = c->order;
    cfg->propagator.dt = c->dt;
    cfg->propagator.f_peak = c->f_peak;
    cfg->propagator.free_surface = false;
    for (int f = 0; f < 6; f++)
        cfg->propagator.pml_width[f] = c->pml;
    cfg->propagator.pml_reflection = 1e-3;
    cfg->rtm.aperture = 1e6; /* the whole (small) model */
    cfg->rtm.strategy = STRAT_FULL;
    cfg->rtm.imaging = IMG_XCORR;
    cfg->rtm.image_every = 1;
    cfg->rtm.random_width = c->pml;
}

/* Traces of a point source in V: ntr x (nt + 1), sample k = p(k dt) at the receivers. */
static void model(const struct rtm_case *c, const float *v, const double *src, const double *rec, int ntr,
                  float *out)
{
    struct sl_device dev;
    cr_assert_eq(backend_select("cpu", &dev), 0);
    struct wave_params p = {0};
    for (int a = 0; a < 3; a++) {
        p.n[a] = c->n[a];
        p.d[a] = c->d[a];
        p.o[a] = c->o[a];
    }
    p.order = c->order;
    p.dt = c->dt;
    for (int f = 0; f < 6; f++)
        p.pml[f] = c->pml;
    p.pml_reflection = 1e-3;
    p.f_ref = c->f_peak;
    struct wave_sim *s;
    cr_assert_eq(wave_create(&dev, &p, v, &s), 0, "%s", err_msg());
    struct wave_points *ps, *pr;
    cr_assert_eq(wave_points_create(s, src, 1, WAVE_INTERP_SINC, &ps), 0, "%s", err_msg());
    cr_assert_eq(wave_points_create(s, rec, (size_t)ntr, WAVE_INTERP_TRILINEAR, &pr), 0, "%s", err_msg());
    float *w = malloc(((size_t)c->nt + 1) * sizeof(float));
    cr_assert(w);
    wavelet_ricker_fill(w, (size_t)c->nt + 1, c->dt, c->f_peak);
    size_t ns = (size_t)c->nt + 1;
    for (int r = 0; r < ntr; r++)
        out[(size_t)r * ns] = 0.0f;
    for (int it = 0; it < c->nt; it++) {
        cr_assert_eq(wave_step(s), 0);
        cr_assert_eq(wave_inject(s, ps, w + it, 1, 1.0f, WAVE_INJECT_PHYSICAL), 0);
        cr_assert_eq(wave_sample(s, pr, out + it + 1, ns, 0), 0);
    }
    free(w);
    wave_points_destroy(ps);
    wave_points_destroy(pr);
    wave_destroy(s);
}

void rtm_case_shot(const struct rtm_case *c, int64_t id, double sx, double sy, double sz, int rx0, int rx1,
                   int rstep, double rz, struct shot *out)
{
    memset(out, 0, sizeof *out);
    int ntr = (rx1 - rx0) / rstep + 1;
    out->id = id;
    out->ns = c->nt + 1;
    out->dt = c->dt;
    out->ntr = ntr;
    out->src[0] = sx;
    out->src[1] = sy;
    out->src[2] = sz;
    out->rec = malloc((size_t)ntr * 3 * sizeof(float));
    out->data = malloc((size_t)ntr * (size_t)out->ns * sizeof(float));
    double *rec = malloc((size_t)ntr * 3 * sizeof(double));
    float *d0 = malloc((size_t)ntr * (size_t)out->ns * sizeof(float));
    cr_assert(out->rec && out->data && rec && d0);
    double ymid = c->o[1] + (c->n[1] / 2) * c->d[1];
    for (int r = 0; r < ntr; r++) {
        rec[3 * r] = c->o[0] + (rx0 + r * rstep) * c->d[0];
        rec[3 * r + 1] = ymid;
        rec[3 * r + 2] = rz;
        for (int a = 0; a < 3; a++)
            out->rec[3 * r + a] = (float)rec[3 * r + a];
    }
    model(c, c->v_true, out->src, rec, ntr, out->data);
    model(c, c->v_mig, out->src, rec, ntr, d0);
    for (size_t i = 0; i < (size_t)ntr * (size_t)out->ns; i++)
        out->data[i] -= d0[i];
    free(rec);
    free(d0);
}

void rtm_case_shot_free(struct shot *s)
{
    free(s->rec);
    free(s->data);
    memset(s, 0, sizeof *s);
}

struct rtm_engine *rtm_case_engine(const struct rtm_case *c, const struct sl_config *cfg)
{
    struct sl_device dev;
    cr_assert_eq(backend_select("cpu", &dev), 0);
    struct rtm_volume vol = {.n = {c->n[0], c->n[1], c->n[2]}, .d = {c->d[0], c->d[1], c->d[2]}, .o = {c->o[0], c->o[1], c->o[2]}, .v = c->v_mig};
    struct rtm_engine *e = NULL;
    cr_assert_eq(rtm_engine_create_cfg(cfg, &dev, &vol, &e), 0, "%s", err_msg());
    return e;
}

/* Envelope of column (x, y) by a discrete Hilbert transform (DFT, n small), then the
 * depth of its peak in [ZMIN, ZMAX) with parabolic refinement (cells). */
double envelope_peak(const float *img, const int n[3], int x, int y, int zmin, int zmax, double *peak)
{
    int nz = n[2];
    double re[256], im[256], h[256];
    cr_assert_leq(nz, 256);
    double a[256];
    for (int z = 0; z < nz; z++)
        a[z] = img[((size_t)z * n[1] + y) * n[0] + x];
    for (int k = 0; k < nz; k++) {
        re[k] = im[k] = 0.0;
        for (int z = 0; z < nz; z++) {
            re[k] += a[z] * cos(2 * M_PI * k * z / nz);
            im[k] -= a[z] * sin(2 * M_PI * k * z / nz);
        }
    }
    /* H[a] = IDFT(-i sgn(k) A(k)) */
    for (int z = 0; z < nz; z++) {
        double s = 0.0;
        for (int k = 1; k < nz; k++) {
            double sg = k < nz / 2 ? 1.0 : (k > nz / 2 ? -1.0 : 0.0);
            /* -i sg (re + i im) = sg im - i sg re; real part of the IDFT term */
            double br = sg * im[k], bi = -sg * re[k];
            s += br * cos(2 * M_PI * k * z / nz) - bi * sin(2 * M_PI * k * z / nz);
        }
        h[z] = sqrt(a[z] * a[z] + (s / nz) * (s / nz));
    }
    int best = zmin;
    for (int z = zmin; z < zmax; z++)
        if (h[z] > h[best])
            best = z;
    *peak = h[best];
    double zp = best;
    if (best > zmin && best < nz - 1) {
        double d = h[best - 1] - 2 * h[best] + h[best + 1];
        if (d < 0)
            zp = best + 0.5 * (h[best - 1] - h[best + 1]) / d;
    }
    return zp;
}


/* A shot with synthetic traces (a Ricker arriving later with offset): stacking is
 * linear algebra, it needs no modeled data. */
void rtm_case_synth_shot(const struct rtm_case *c, int64_t id, double sx, struct shot *sh)
{
    memset(sh, 0, sizeof *sh);
    int ntr = 12;
    sh->id = id;
    sh->ns = c->nt + 1;
    sh->dt = c->dt;
    sh->ntr = ntr;
    sh->src[0] = sx;
    sh->src[1] = (c->n[1] / 2) * c->d[1];
    sh->src[2] = 30.0;
    sh->rec = malloc((size_t)ntr * 3 * sizeof(float));
    sh->data = malloc((size_t)ntr * sh->ns * sizeof(float));
    for (int r = 0; r < ntr; r++) {
        double rx = sx + (r - ntr / 2) * 2 * c->d[0];
        sh->rec[3 * r] = (float)rx;
        sh->rec[3 * r + 1] = (float)sh->src[1];
        sh->rec[3 * r + 2] = 20.0f;
        double t0 = 0.12 + sqrt(200.0 * 200.0 + (rx - sx) * (rx - sx)) / 2000.0;
        for (int k = 0; k < sh->ns; k++)
            sh->data[(size_t)r * sh->ns + k] = (float)wavelet_ricker(k * c->dt, c->f_peak, t0);
    }
}


void rtm_case_layered(struct rtm_case *c, int nx, int ny, int nz, double dt, struct shot *sh)
{
    rtm_case_init(c, nx, ny, nz, 10.0, 4, 130, 2000.0);
    c->pml = 6;
    if (dt > 0)
        c->dt = dt;
    for (int z = 14; z < nz; z++)
        for (size_t i = 0; i < (size_t)nx * ny; i++)
            c->v_mig[(size_t)z * nx * ny + i] = 2500.0f;
    rtm_case_synth_shot(c, 7, 16 * 10.0, sh);
}
