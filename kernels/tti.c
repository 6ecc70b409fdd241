/* tti — the TTI pseudo-acoustic propagator (kernels/tti.h): parameters, life cycle, the
 * CPU reference step (OpenMP), strips and states.
 *
 * The simulation embeds a kernels/wave_internal.h `struct wave_sim` as a shell holding
 * the layout, the resolved faces, the stencil weights, the CPML profiles, p (cur, prev)
 * and v_pz^2 dt^2 (vel): the point sets of kernels/points.c work on it unchanged (they
 * read the layout, the faces and vel), and injecting into q is the same call with the
 * shell's cur pointed at q.  Nothing else of wave.c runs on the shell.
 *
 * On a CUDA device (s->gpu) every array is device memory and each operation below goes
 * to its twin in kernels/tti_cuda.cu (one line each); the medium is built on the device
 * from the interior model with the CPU's point functions (kernels/tti_medium.cu), or,
 * where the device has no room for the model's copy, here by the CPU's arithmetic, a
 * few planes at a time into a small page-locked buffer, and uploaded slab by slab
 * (set_medium_gpu). */
#include "kernels/tti.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/cpml.h"
#include "kernels/device.h"
#include "kernels/fd_coeffs.h"
#include "kernels/random_boundary.h"
#include "kernels/tti_cuda.h"
#include "kernels/tti_internal.h"
#include "kernels/wave_internal.h"
#include "stream/error.h"
#define LOG_COMPONENT "tti"
#include "stream/log.h"


static const char *const face_names[6] = {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};

/* seconds on the monotonic clock (tti_create's stages in the debug log) */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- parameters ------------------------------------------------------------------------- */

int tti_params_check(const struct wave_params *p, double sigma)
{
    int rc = wave_params_check(p);
    if (rc < 0)
        return rc;
    if (!(sigma > 0) || !isfinite(sigma))
        return err_set(-EINVAL, "tti: sigma %g: must be finite and > 0 (v_sz^2 = v_pz^2 (eps - delta_eff) / sigma; "
                       "Fletcher et al. use 0.75)", sigma);
    return 0;
}

static bool is_2d(const struct wave_params *p) { return wave_face_kind(p, 2) == WAVE_FACE_NONE; }

/* CPML memory floats of one field: psi, zeta and chi over every axis's layers. */
static size_t cpml_floats(const struct wave_layout *L, bool two_d)
{
    (void)two_d;
    size_t sc[3];
    return 3 * wave_slab_counts(L, sc);
}

size_t tti_memory_bytes(const struct wave_params *p)
{
    struct wave_layout L;
    if (tti_params_check(p, 1.0) < 0 || wave_layout_of(p, &L) < 0)
        return 0;
    const bool two_d = is_2d(p);
    /* p, q at two levels; vel, ed, tilt; the CPU's decoded eps, delta, n_x, n_y, n_z; s per field */
    return sizeof(float) * ((4 + 3 + 5 + 2) * L.count + 2 * cpml_floats(&L, two_d) +
                            2 * (size_t)(L.npad[0] + L.npad[1] + L.npad[2]));
}

size_t tti_state_bytes_of(const struct wave_params *p)
{
    struct wave_layout L;
    if (tti_params_check(p, 1.0) < 0 || wave_layout_of(p, &L) < 0)
        return 0;
    return sizeof(float) * (4 * L.count + 2 * cpml_floats(&L, is_2d(p))) + sizeof(int64_t);
}

/* ---- the medium ----------------------------------------------------------------------------- */

/* The qP eigenvalue (phase velocity squared, v_pz = 1) at sin^2 psi = X from the axis:
 * the larger root of the 2 x 2 system's matrix (tti.h) for k_perp^2 = X, k_axis^2 = 1 - X. */
static double qp_v2(double x, double eps, double delta, double sigma)
{
    delta = fmin(delta, eps); /* delta_eff (tti.h) */
    const double a = x, b = 1.0 - x;
    const double vx = 1.0 + 2.0 * eps, vn = 1.0 + 2.0 * delta, vs = (eps - delta) / sigma;
    const double m11 = vx * a + vs * b, m22 = b + vs * a;
    const double m12m21 = (1.0 - vs) * b * (vn - vs) * a;
    const double tr = m11 + m22, det = m11 * m22 - m12m21;
    const double disc = tr * tr - 4.0 * det;
    return 0.5 * (tr + sqrt(disc > 0 ? disc : 0));
}

double tti_qp_vmax(double eps, double delta, double sigma)
{
    /* 64 samples of sin^2 psi, then a golden-section search around the best one (the
     * qP velocity has one maximum between axis and plane, or none inside). */
    const int ns = 64;
    int best = 0;
    double vbest = -1;
    for (int i = 0; i <= ns; i++) {
        double v = qp_v2((double)i / ns, eps, delta, sigma);
        if (v > vbest) {
            vbest = v;
            best = i;
        }
    }
    double lo = (best > 0 ? best - 1 : 0) / (double)ns, hi = (best < ns ? best + 1 : ns) / (double)ns;
    const double gr = 0.5 * (sqrt(5.0) - 1.0);
    for (int it = 0; it < 40; it++) {
        double x1 = hi - gr * (hi - lo), x2 = lo + gr * (hi - lo);
        if (qp_v2(x1, eps, delta, sigma) > qp_v2(x2, eps, delta, sigma))
            hi = x2;
        else
            lo = x1;
    }
    double v = qp_v2(0.5 * (lo + hi), eps, delta, sigma);
    return sqrt(v > vbest ? v : vbest);
}

static double axis_k2(int order, const double d[3], bool two_d, double k2[3])
{
    const double sum = fd_second_abs_sum(order);
    double t = 0;
    for (int a = 0; a < 3; a++) {
        k2[a] = two_d && a == 1 ? 0.0 : sum / (d[a] * d[a]);
        t += k2[a];
    }
    return t;
}

double tti_dt_bound(int order, const double d[3], bool two_d, double vqp)
{
    double k2[3];
    return 2.0 / (vqp * sqrt(axis_k2(order, d, two_d, k2)));
}

/* The margin on the bound (tti.h). */
#define DT_MARGIN 1e-3

double tti_dt_limit(int order, const double d[3], bool two_d, double vqp)
{
    return (1.0 - DT_MARGIN) * tti_dt_bound(order, d, two_d, vqp);
}

double tti_dt_max(int order, const double d[3], bool two_d, double vpz, double eps, double delta, double theta,
                  double phi, double sigma)
{
    (void)theta; /* the tilt moves no eigenvalue past the bound (tti.h) */
    (void)phi;
    return tti_dt_limit(order, d, two_d, vpz * tti_qp_vmax(eps, delta, sigma));
}

static double val_at(const float *a, double c, size_t i) { return a ? (double)a[i] : c; }

double tti_dt_max_model(const struct tti_model *m, size_t n, int order, const double d[3], bool two_d, double sigma)
{
    double vmax = 0;
    if (tti_model_check(m, n, sigma, &vmax, NULL) < 0 || !(vmax > 0))
        return 0;
    return tti_dt_limit(order, d, two_d, vmax);
}

/* The stability of one point's (eps, delta) at SIGMA (tti.h): NULL when fine, else why. */
static const char *medium_problem(double eps, double delta, double sigma)
{
    delta = fmin(delta, eps); /* delta_eff */
    const double s = (eps - delta) / sigma;
    if (s > 1.0)
        return "v_sz > v_pz (eps - delta > sigma): raise sigma";
    if (s > 1.0 + 2.0 * delta)
        return "v_sz > v_pn ((eps - delta) / sigma > 1 + 2 delta): raise sigma";
    if (s > 1.0 + 2.0 * eps)
        return "v_sz > v_px ((eps - delta) / sigma > 1 + 2 eps): raise sigma";
    /* the qSV root stays real and >= 0: the ab coefficient of the determinant is at least
     * -2 sqrt of the product of the a^2 and b^2 ones (tti.h).  s >= 0 (delta_eff <= eps),
     * so the sqrt term is too and only a negative rest can fail: the sqrt only then (the
     * same decision, without a sqrt a point of tti_model_check) */
    const double rest = 2.0 * (eps - delta) + s * (2.0 + 2.0 * delta);
    if (rest < 0 && rest + 2.0 * s * sqrt(1.0 + 2.0 * eps) < 0)
        return "the qSV branch is imaginary for this sigma: lower sigma";
    return NULL;
}

int tti_model_check(const struct tti_model *m, size_t n, double sigma, double *vmax, size_t *nless)
{
    if (!m || !m->vpz)
        return err_set(-EINVAL, "tti: no v_pz model given");
    if (!(sigma > 0) || !isfinite(sigma))
        return err_set(-EINVAL, "tti: sigma %g: must be finite and > 0", sigma);
    const double half_pi = M_PI / 2 + 1e-6, two_pi = 2 * M_PI + 1e-6;
    /* constants first, so that a bad constant is named as such */
    const struct {
        const char *name;
        const float *a;
        double c, lo, hi;
    } par[4] = {{"epsilon", m->eps, m->eps0, -0.5, TTI_ED_MAX},
                {"delta", m->delta, m->delta0, -0.5, TTI_ED_MAX},
                {"theta", m->theta, m->theta0, -half_pi, half_pi},
                {"phi", m->phi, m->phi0, -two_pi, two_pi}};
    const char *unit[4] = {"", "", " rad (tilt from vertical, |theta| <= pi/2)", " rad (|phi| <= 2 pi)"};
    for (int k = 0; k < 4; k++)
        if (!par[k].a && !(isfinite(par[k].c) && par[k].c > par[k].lo && par[k].c <= par[k].hi))
            return err_set(-EINVAL, "tti: %s = %g%s: out of range (%s)", par[k].name, par[k].c, unit[k],
                           k < 2 ? "must be finite, > -0.5 and < 1.5" : "must be finite and in range");
    size_t less = 0, bad = n;
    double best = 0;
    /* Constant eps and delta (checked above; the shots' common model: v_pz per point):
     * their stability once, and per point only v_pz and the angles given as arrays, by
     * comparisons (vectorised, no transcendental); the largest qP velocity from the largest
     * v_pz below.  FAST: that path ran and found every point fine; otherwise (or where it
     * found a bad point) the general loop below, which names the first bad point. */
    const bool ed_const = !m->eps && !m->delta;
    bool fast = false;
    float vpz_max = 0;
    if (ed_const && !medium_problem(m->eps0, m->delta0, sigma)) {
        size_t nbad = 0;
        float vm = 0;
#pragma omp parallel for simd schedule(static) reduction(max : vm) reduction(+ : nbad)
        for (size_t i = 0; i < n; i++) {
            const float v = m->vpz[i];
            nbad += !(v > 0 && v <= FLT_MAX); /* finite and > 0 (NaN fails both) */
            vm = v > vm ? v : vm;
        }
        for (int k = 2; k < 4; k++) { /* the angles given as arrays: finite and in range */
            const float *a = par[k].a;
            const double lo = par[k].lo, hi = par[k].hi;
            if (!a || nbad)
                continue;
#pragma omp parallel for simd schedule(static) reduction(+ : nbad)
            for (size_t i = 0; i < n; i++) {
                const double t = a[i];
                nbad += !(t > lo && t <= hi); /* NaN and infinities fail */
            }
        }
        if (nbad == 0) {
            fast = true;
            vpz_max = vm;
            less = m->eps0 < m->delta0 ? n : 0;
            /* the general loop's max over points of v sqrt(max(1, 1 + 2 eps)): with eps
             * constant, the largest v's (a product rounds monotonically) */
            best = (double)vm * sqrt(fmax(1.0, 1.0 + 2.0 * m->eps0));
        }
    }
    /* The general loop, and two passes for the largest qP velocity: the cheap lower bound
     * v_pz sqrt(max(1, 1 + 2 eps)) of every point, then the exact maximum only where the
     * upper bound v_pz sqrt(max(1, 1 + 2 eps) + v_sz^2) can beat it.  Both in parallel
     * (a 400 x 400 x 200 model took 0.45 s on one thread): BAD is the first point that
     * fails, named below as a serial loop would; the maxima are of the same values in any
     * order. */
    if (!fast) {
#pragma omp parallel reduction(min : bad) reduction(max : best) reduction(+ : less)
        {
            double pe = NAN, ps = 0; /* the last eps's sqrt(max(1, 1 + 2 eps)) (blocky models repeat) */
#pragma omp for schedule(static)
            for (size_t i = 0; i < n; i++) {
                const double v = m->vpz[i];
                double val[4];
                bool ok = v > 0 && isfinite(v);
                for (int k = 0; k < 4 && ok; k++) {
                    val[k] = val_at(par[k].a, par[k].c, i);
                    ok = isfinite(val[k]) && val[k] > par[k].lo && val[k] <= par[k].hi;
                }
                if (!ok || medium_problem(val[0], val[1], sigma)) {
                    bad = i < bad ? i : bad;
                    continue;
                }
                less += val[0] < val[1];
                if (val[0] != pe) {
                    pe = val[0];
                    ps = sqrt(fmax(1.0, 1.0 + 2.0 * pe));
                }
                best = fmax(best, v * ps);
            }
        }
    }
    if (bad < n) {
        const size_t i = bad;
        const double v = m->vpz[i];
        if (!(v > 0) || !isfinite(v))
            return err_set(-EINVAL, "tti: v_pz %g at interior point %zu: must be finite and > 0", v, i);
        double val[4];
        for (int k = 0; k < 4; k++) {
            val[k] = val_at(par[k].a, par[k].c, i);
            if (!isfinite(val[k]) || !(val[k] > par[k].lo && val[k] <= par[k].hi))
                return err_set(-EINVAL, "tti: %s %g%s at interior point %zu: %s", par[k].name, val[k], unit[k], i,
                               !isfinite(val[k]) ? "not a number" : k < 2 ? "must be > -0.5 and < 1.5" : "out of range");
        }
        return err_set(-EINVAL, "tti: epsilon %g, delta %g at interior point %zu with sigma %g: %s", val[0], val[1], i,
                       sigma, medium_problem(val[0], val[1], sigma));
    }
    if (vmax && fast) {
        /* the pass below with eps, delta constant: only the largest v_pz can raise BEST */
        const double e = m->eps0, d = m->delta0, v = vpz_max;
        const double ub = v * sqrt(fmax(1.0, 1.0 + 2.0 * e) + fmax(e - d, 0.0) / sigma);
        *vmax = ub <= best ? best : fmax(best, v * tti_qp_vmax(e, d, sigma));
    } else if (vmax) {
        double vm = best;
#pragma omp parallel
        {
            double my = best;
            double pe = NAN, pd = NAN, pv = 0; /* the last exact evaluation (blocky models repeat) */
            double qe = NAN, qd = NAN, qs = 0;  /* the last trace bound's sqrt */
#pragma omp for schedule(static) nowait
            for (size_t i = 0; i < n; i++) {
                const double v = m->vpz[i], e = val_at(m->eps, m->eps0, i), d = val_at(m->delta, m->delta0, i);
                if (e != qe || d != qd) {
                    qs = sqrt(fmax(1.0, 1.0 + 2.0 * e) + fmax(e - d, 0.0) / sigma);
                    qe = e;
                    qd = d;
                }
                const double ub = v * qs; /* trace bound */
                if (ub <= my)
                    continue;
                if (e != pe || d != pd) {
                    pv = tti_qp_vmax(e, d, sigma);
                    pe = e;
                    pd = d;
                }
                my = fmax(my, v * pv);
            }
#pragma omp critical(tti_model_check_vmax)
            vm = fmax(vm, my);
        }
        *vmax = vm;
    }
    if (nless)
        *nless = less;
    return 0;
}

void tti_check_record(struct tti_check *c, const struct tti_model *m, size_t n, double sigma, double vmax,
                      size_t nless)
{
    *c = (struct tti_check){.vqp = vmax,
                            .sigma = sigma,
                            .nless = nless,
                            .n = n,
                            .arrays = {m->vpz, m->eps, m->delta, m->theta, m->phi},
                            .consts = {m->eps0, m->delta0, m->theta0, m->phi0}};
}

bool tti_check_matches(const struct tti_check *c, const struct tti_model *m, size_t n, double sigma)
{
    if (!(c->vqp > 0) || c->n != n || c->sigma != sigma || !m->vpz)
        return false;
    const float *a[5] = {m->vpz, m->eps, m->delta, m->theta, m->phi};
    const double k[4] = {m->eps0, m->delta0, m->theta0, m->phi0};
    for (int i = 0; i < 5; i++)
        if (a[i] != c->arrays[i])
            return false;
    /* a constant counts only where no array replaces it (a NULL array takes it) */
    for (int i = 0; i < 4; i++)
        if (!a[i + 1] && memcmp(&k[i], &c->consts[i], sizeof k[i]))
            return false;
    return true;
}

/* ---- memory ---------------------------------------------------------------------------------- */

static int alloc_f(float **out, size_t count)
{
    *out = NULL;
    if (!count)
        return 0;
    size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
    *out = aligned_alloc(64, bytes);
    if (!*out)
        return err_set(-ENOMEM, "tti: out of host memory (%zu bytes)", bytes);
    memset(*out, 0, bytes);
    return 0;
}

void tti_destroy(struct tti_sim *s)
{
    if (!s)
        return;
#ifdef SEISLIVE_CUDA
    tti_cu_free(s); /* device arrays, left NULL for the frees below */
#endif
    free(s->w.cur);
    free(s->w.prev);
    free(s->w.vel);
    free(s->q);
    free(s->qprev);
    free(s->ed);
    free(s->tilt);
    free(s->eps);
    free(s->del);
    free(s->nx);
    free(s->ny);
    free(s->nz);
    for (int f = 0; f < 2; f++) {
        free(s->s[f]);
        for (int a = 0; a < 3; a++) {
            free(s->psi[f][a]);
            free(s->zeta[f][a]);
            free(s->chi[f][a]);
        }
    }
    for (int a = 0; a < 3; a++) {
        free(s->w.ha[a]);
        free(s->w.hb[a]);
    }
    free(s);
}

/* A simulation of P with every array allocated and zero, profiles from VMAX. */
static int create_core(const struct sl_device *dev, const struct wave_params *p, double sigma, double vmax,
                       struct tti_sim **out)
{
    *out = NULL;
#ifndef SEISLIVE_CUDA
    if (dev->kind == SL_DEVICE_CUDA)
        return err_set(-ENODEV, "tti: CUDA device given, but this build has no CUDA");
#endif
    struct tti_sim *s = calloc(1, sizeof *s);
    if (!s)
        return err_set(-ENOMEM, "tti: out of memory");
    struct wave_sim *w = &s->w;
    s->sigma = sigma;
    int rc = wave_shell_init(w, dev, p, vmax, "tti");
    if (rc < 0)
        goto fail;
#ifdef SEISLIVE_CUDA
    if (dev->kind == SL_DEVICE_CUDA) {
        /* the CUDA twins have no step in stages (tti_step_stage), which a subdomain needs
         * for the exchange of the pass-1 products between its passes */
        for (int f = 0; f < 6; f++)
            if (w->p.face[f] == WAVE_FACE_HALO) {
                rc = err_set(-ENOTSUP, "tti: face %s is HALO: a TTI subdomain runs on the CPU only so far (the CUDA "
                             "kernels have no exchange of the pass-1 products inside the step; docs/mpi.md)",
                             face_names[f]);
                goto fail;
            }
        if ((rc = tti_cu_alloc(s)) < 0)
            goto fail;
        *out = s;
        return 0;
    }
#endif
    for (int a = 0; a < 3; a++) {
        w->pa[a] = w->ha[a];
        w->pb[a] = w->hb[a];
    }
    const size_t n = w->L.count;
    float **fields[] = {&w->cur, &w->prev, &w->vel, &s->q,    &s->qprev, &s->eps,
                        &s->del, &s->nx,   &s->ny,   &s->nz, &s->s[0],  &s->s[1]};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if ((rc = alloc_f(fields[i], n)) < 0)
            goto fail;
    /* uint32 and float are both 4 bytes: the same allocator */
    if ((rc = alloc_f((float **)&s->ed, n)) < 0 || (rc = alloc_f((float **)&s->tilt, n)) < 0)
        goto fail;
    for (int f = 0; f < 2; f++)
        for (int a = 0; a < 3; a++)
            if ((rc = alloc_f(&s->psi[f][a], w->slab_count[a])) < 0 ||
                (rc = alloc_f(&s->zeta[f][a], w->slab_count[a])) < 0 ||
                (rc = alloc_f(&s->chi[f][a], w->slab_count[a])) < 0)
                goto fail;
    *out = s;
    return 0;
fail:
    tti_destroy(s);
    return rc;
}

/* Depth of padded index I into the layers of an axis of N interior points and layers
 * LO, HI as a fraction of that layer's width (0 inside the interior). */
static double layer_depth(int i, int lo, int n, int hi)
{
    if (i < lo)
        return (double)(lo - i) / lo;
    if (i >= lo + n)
        return (double)(i - (lo + n - 1)) / hi;
    return 0;
}

/* Decode the quantised medium at element C into the CPU's float arrays. */
static void decode_point(struct tti_sim *s, size_t c)
{
    const uint32_t ed = s->ed[c], tl = s->tilt[c];
    s->eps[c] = tti_ed_value(ed);
    s->del[c] = tti_ed_value(ed >> 16);
    const float th = tti_theta_value(tl), ph = tti_phi_value(tl >> 16);
    const float st = sinf(th), ct = cosf(th), sp = sinf(ph), cp = cosf(ph);
    s->nx[c] = st * cp;
    s->ny[c] = st * sp;
    s->nz[c] = ct;
}

/* The free surface's image medium in the rows above it (tti.h): the axis mirrored in z. */
static void mirror_medium(struct tti_sim *s)
{
    const struct wave_layout *L = &s->w.L;
    const size_t sz = L->stride_z;
    const int h = L->pad_off[2];
    for (int m = 1; m <= h; m++)
        for (size_t e = 0; e < sz; e++) {
            const size_t up = (size_t)(h - m) * sz + e, dn = (size_t)(h + m) * sz + e;
            s->nx[up] = s->nx[dn];
            s->ny[up] = s->ny[dn];
            s->nz[up] = -s->nz[dn];
        }
}

/* The box of allocated cells [lo, hi) that HALO face FACE sends (the `halo` padded planes
 * next to it) or receives (the halo cells beyond it), over the padded extent of the other
 * axes: kernels/wave.c's halo_box, which wave_halo_pack uses for the fields. */
static void halo_box(const struct wave_layout *L, int face, bool recv, int lo[3], int hi[3])
{
    const int a = face / 2, h = L->halo;
    for (int b = 0; b < 3; b++) {
        lo[b] = L->pad_off[b];
        hi[b] = L->pad_off[b] + L->npad[b];
    }
    if (face % 2 == 0)
        lo[a] = recv ? L->pad_off[a] - h : L->pad_off[a];
    else
        lo[a] = recv ? L->pad_off[a] + L->npad[a] : L->pad_off[a] + L->npad[a] - h;
    hi[a] = lo[a] + h;
}

/* The axis component n_a of the CPU's medium in the halo beyond each HALO face along axis
 * a: 1.  That halo receives the neighbour's products n_a s (tti_halo_unpack in stage 1),
 * and the outer derivative D_a(n_a s) multiplies them by n_a there: by 1, exactly.  Only
 * D_a reads n_a beyond a face of axis a (every stencil of the step runs along one axis). */
static void halo_medium(struct tti_sim *s)
{
    const struct wave_layout *L = &s->w.L;
    float *na[3] = {s->nx, s->ny, s->nz};
    for (int f = 0; f < 6; f++) {
        if (s->w.p.face[f] != WAVE_FACE_HALO)
            continue;
        int lo[3], hi[3];
        halo_box(L, f, true, lo, hi);
        for (int k = lo[2]; k < hi[2]; k++)
            for (int j = lo[1]; j < hi[1]; j++)
                for (int i = lo[0]; i < hi[0]; i++)
                    na[f / 2][(size_t)k * L->stride_z + (size_t)j * L->stride_y + i] = 1.0f;
    }
}

/* The taper of eps and delta at depth XI into the layers (tti.h): 1 in the interior. */
static double taper_of(double xi)
{
    const double xt = fmin(fmax((xi - TTI_TAPER_START) / (1.0 - TTI_TAPER_START), 0.0), 1.0);
    /* (xt 0, the interior: 1 exactly, without a cos) */
    return xt > 0 ? 0.5 * (1.0 + cos(M_PI * xt)) : 1.0;
}

/* TAB: the (depth, taper) of every padded index of each axis, x then y then z
 * (npad[0] + npad[1] + npad[2] entries; tti_internal.h tti_taper_pick). */
static void taper_table(const struct wave_layout *L, struct tti_taper *tab)
{
    size_t o = 0;
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < L->npad[a]; i++, o++) {
            tab[o].depth = layer_depth(i, L->pml[2 * a], L->n[a], L->pml[2 * a + 1]);
            tab[o].taper = taper_of(tab[o].depth);
        }
}

static struct tti_taper *taper_table_new(const struct wave_layout *L)
{
    struct tti_taper *t = malloc(((size_t)L->npad[0] + L->npad[1] + L->npad[2]) * sizeof *t);
    if (!t) {
        err_set(-ENOMEM, "tti: out of host memory (taper table)");
        return NULL;
    }
    taper_table(L, t);
    return t;
}

/* The medium of padded planes [K0, K1) from the interior model: edges repeated into the
 * layers, eps and delta tapered to 0 across their outer part (tti.h, TTI_TAPER_START; TAB
 * from taper_table), delta lowered to eps where it is larger (tti.h), everything quantised
 * (tti_internal.h: the point functions kernels/tti_medium.cu runs too).
 * The point of allocated index c goes to VEL, ED, TILT [c - BASE]: BASE 0 for whole
 * arrays, (K0 + pad_off[2]) stride_z for buffers that hold planes K0..K1 - 1 only.  Only
 * padded cells are written (the halo cells keep what the caller put there).  DECODE (the
 * CPU's simulation, whose VEL, ED, TILT are its own with BASE 0): also its decoded
 * arrays.  Each point is a function of the model and the point alone, so any split into
 * plane ranges gives the same bytes. */
static void medium_planes(struct tti_sim *s, const struct tti_model *m, const struct tti_taper *tab, int k0, int k1,
                          size_t base, float *vel, uint32_t *ed, uint32_t *tilt, bool decode)
{
    const struct wave_layout *L = &s->w.L;
    const double dt2 = s->w.p.dt * s->w.p.dt;
    /* constant angles: one tilt code for every point (fmod and two roundings a point) */
    const bool tilt_const = !m->theta && !m->phi;
    const uint32_t tilt0 = tti_tilt_of(m->theta0, m->phi0);
    const int nj = L->npad[1];
    const struct tti_taper *tx = tab, *ty = tab + L->npad[0], *tz = ty + L->npad[1];
    /* rows, not planes, among the threads: a GPU's slab is a few planes */
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = k0; k < k1; k++) {
        for (int j = 0; j < nj; j++) {
            const int kz = k - L->pml[4] < 0 ? 0 : k - L->pml[4] >= L->n[2] ? L->n[2] - 1 : k - L->pml[4];
            const int jy = j - L->pml[2] < 0 ? 0 : j - L->pml[2] >= L->n[1] ? L->n[1] - 1 : j - L->pml[2];
            const size_t src_row = ((size_t)kz * L->n[1] + jy) * L->n[0];
            const size_t row = (size_t)(k + L->pad_off[2]) * L->stride_z + (size_t)(j + L->pad_off[1]) * L->stride_y +
                               L->pad_off[0];
            for (int i = 0; i < L->npad[0]; i++) {
                const int ix = i - L->pml[0] < 0 ? 0 : i - L->pml[0] >= L->n[0] ? L->n[0] - 1 : i - L->pml[0];
                const size_t si = src_row + ix, c = row + i, o = c - base;
                const double taper = tti_taper_pick(tx[i], ty[j], tz[k]);
                vel[o] = tti_vel_of(m->vpz[si], dt2);
                ed[o] = tti_ed_of(taper, val_at(m->eps, m->eps0, si), val_at(m->delta, m->delta0, si));
                tilt[o] = tilt_const ? tilt0
                                     : tti_tilt_of(val_at(m->theta, m->theta0, si), val_at(m->phi, m->phi0, si));
                if (decode)
                    decode_point(s, c);
            }
        }
    }
}

/* A CPU simulation's medium over the whole padded grid, decoded, with the free surface's
 * image medium and the halo's n_a (the decoded arrays only: a GPU has neither). */
static int set_medium(struct tti_sim *s, const struct tti_model *m)
{
    struct tti_taper *tab = taper_table_new(&s->w.L);
    if (!tab)
        return -ENOMEM;
    medium_planes(s, m, tab, 0, s->w.L.npad[2], 0, s->w.vel, s->ed, s->tilt, true);
    free(tab);
    if (s->w.p.free_surface)
        mirror_medium(s);
    halo_medium(s);
    return 0;
}

/* A GPU simulation's medium, TTI_MEDIUM_SLAB_BYTES per array at a time: medium_planes
 * into one half of a page-locked double buffer (zeroed once, so the halo cells of every
 * plane copied are 0, as on the device), whose three arrays are then copied
 * asynchronously on one stream into their planes of the device arrays while the next
 * slab is built into the other half (an event per half: a half is built again once its
 * copies are done).  The device arrays get the bytes of set_medium's arrays (the halo
 * planes beyond the padded z range stay the zero of tti_cu_alloc), and no host array of
 * the grid's size is allocated or touched.  T (seconds, logged by tti_create in ms): [0]
 * making, zeroing and freeing the buffer, stream and events, [1] building the slabs on
 * the host, [2] the rest: queueing the copies and waiting for them (what of the upload
 * the builds did not hide); *NSLAB, *PER_OUT: slabs and planes a slab.  TAB: taper_table's.
 * The fallback of set_medium_device (tti_create says when). */
static int set_medium_slabs(struct tti_sim *s, const struct tti_model *m, const struct tti_taper *tab, double t[3],
                            int *nslab, int *per_out)
{
    t[0] = t[1] = t[2] = 0;
    *nslab = *per_out = 0;
#ifdef SEISLIVE_CUDA
    const double t0 = now_s();
    const struct wave_layout *L = &s->w.L;
    const struct sl_device *dev = s->w.dev;
    const size_t sz = L->stride_z;
    const int nk = L->npad[2];
    size_t per = TTI_MEDIUM_SLAB_BYTES / (sz * sizeof(float));
    per = per < 1 ? 1 : per > (size_t)nk ? (size_t)nk : per;
    const size_t slab = per * sz, bytes = 6 * slab * sizeof(float); /* 2 halves x 3 arrays */
    void *pin = NULL, *st = NULL, *ev[2] = {NULL, NULL}, *before = NULL;
    int rc = dev_host_alloc(dev, bytes, DEV_PIN_ALLOC, 0, &pin);
    const bool pinned = rc == 0;
    if (!pinned) { /* correct either way: a pageable source is staged before the copy returns */
        log_debug("medium through a pageable buffer: %s", err_msg());
        err_clear();
        rc = (pin = malloc(bytes)) ? 0 : err_set(-ENOMEM, "tti: out of host memory (%zu bytes)", bytes);
    }
    if (rc == 0)
        rc = dev_stream_create(dev, &st);
    for (int b = 0; b < 2 && rc == 0; b++)
        rc = dev_event_create(dev, &ev[b], false);
    /* the copies after tti_cu_alloc's zeroing of the arrays (the legacy stream's work; the
     * new stream is non-blocking) */
    if (rc == 0 && (rc = dev_event_create(dev, &before, false)) == 0 && (rc = dev_event_record(dev, before, NULL)) == 0)
        rc = dev_stream_wait(dev, st, before);
    if (rc == 0)
        memset(pin, 0, bytes);
    const double t1 = now_s();
    double build = 0;
    t[0] = t1 - t0;
    int i = 0;
    for (int k0 = 0; rc == 0 && k0 < nk; k0 += (int)per, i++) {
        const int k1 = k0 + (int)per < nk ? k0 + (int)per : nk, b = i & 1;
        float *hv = (float *)pin + 3 * (size_t)b * slab;
        uint32_t *he = (uint32_t *)(hv + slab), *ht = he + slab;
        if (i >= 2 && (rc = dev_event_sync(dev, ev[b])) < 0) /* this half's copies (slab i - 2) done */
            break;
        const size_t base = (size_t)(k0 + L->pad_off[2]) * sz, nb = (size_t)(k1 - k0) * sz * sizeof(float);
        const double tb = now_s();
        medium_planes(s, m, tab, k0, k1, base, hv, he, ht, false);
        build += now_s() - tb;
        if ((rc = dev_copy(dev, s->w.vel + base, hv, nb, DEV_H2D, st)) < 0 ||
            (rc = dev_copy(dev, s->ed + base, he, nb, DEV_H2D, st)) < 0 ||
            (rc = dev_copy(dev, s->tilt + base, ht, nb, DEV_H2D, st)) < 0)
            break;
        rc = dev_event_record(dev, ev[b], st);
    }
    /* every copy done before the buffer goes (also after a failure: some may be queued) */
    const int rs = st ? dev_stream_sync(dev, st) : 0;
    if (rc == 0)
        rc = rs;
    const double t2 = now_s();
    for (int b = 0; b < 2; b++)
        dev_event_destroy(dev, ev[b]);
    dev_event_destroy(dev, before);
    dev_stream_destroy(dev, st);
    if (pinned)
        dev_host_free(dev, pin, bytes, DEV_PIN_ALLOC, 0);
    else
        free(pin);
    t[0] += now_s() - t2;
    t[1] = build;
    t[2] = t2 - t1 - build;
    *nslab = i;
    *per_out = (int)per;
    return rc;
#else
    (void)s;
    (void)m;
    (void)tab;
    return err_set(-ENODEV, "tti: no CUDA in this build");
#endif
}

/* Tests: a GPU simulation's medium built on the host a slab at a time (set_medium_slabs,
 * the fallback), not on the device (tti_internal.h).  Process-wide, so atomic: simulations
 * may be created on several threads. */
static _Atomic bool host_medium_forced;
void tti_force_host_medium(bool on) { host_medium_forced = on; }

/* A GPU simulation's medium (the device arrays get set_medium's bytes): built on the
 * device from the interior model (tti_cu_build_medium: the model's arrays uploaded once,
 * a kernel a point, no per-point work on the host), or, where the device has no room
 * for the model's copy (4 bytes a point of the interior for v_pz and for each parameter
 * given as an array: 104 MB to 520 MB for 380 x 380 x 180) or tti_force_host_medium is
 * on, on the host a slab at a time (set_medium_slabs).  HOW (for tti_create's log): which,
 * and its stages in ms. */
static int set_medium_gpu(struct tti_sim *s, const struct tti_model *m, char *how, size_t len)
{
    struct tti_taper *tab = taper_table_new(&s->w.L);
    if (!tab)
        return -ENOMEM;
    double t[3] = {0, 0, 0};
    int rc;
#ifdef SEISLIVE_CUDA
    if (!host_medium_forced) {
        size_t bytes = 0;
        rc = tti_cu_build_medium(s, m, tab, t, &bytes);
        if (rc != -ENOMEM) {
            s->medium_on = TTI_MEDIUM_DEVICE;
            snprintf(how, len, "on the device: model up %.1f (%.1f MB), kernel %.1f", 1e3 * t[0], 1e-6 * (double)bytes,
                     1e3 * t[1]);
            free(tab);
            return rc;
        }
        log_debug("medium built on the host, a slab at a time: %s", err_msg());
        err_clear();
    }
#endif
    int nslab = 0, per = 0;
    s->medium_on = TTI_MEDIUM_SLABS;
    rc = set_medium_slabs(s, m, tab, t, &nslab, &per);
    snprintf(how, len, "on the host: %.1f in %d slabs of %d planes, upload wait %.1f, pinned buffer %.1f", 1e3 * t[1],
             nslab, per, 1e3 * t[2], 1e3 * t[0]);
    free(tab);
    return rc;
}

int tti_create(const struct sl_device *dev, const struct wave_params *p, double sigma, const struct tti_model *m,
               struct tti_sim **out)
{
    *out = NULL;
    int rc = tti_params_check(p, sigma);
    if (rc < 0)
        return rc;
    const size_t n = (size_t)p->n[0] * p->n[1] * p->n[2];
    double vmax = 0;
    size_t nless = 0;
    const double t0 = now_s();
    /* a model its caller checked already (tti.h): that check's results */
    const bool checked = m && tti_check_matches(&m->checked, m, n, sigma);
    if (checked) {
        vmax = m->checked.vqp;
        nless = m->checked.nless;
    } else if ((rc = tti_model_check(m, n, sigma, &vmax, &nless)) < 0) {
        return rc;
    }
    const double t1 = now_s();
    if (nless)
        log_warn("%zu of %zu points have epsilon < delta: delta is lowered to epsilon there (elliptic, v_sz = 0), "
                 "as no pseudo-acoustic system is stable with epsilon < delta where the tilt varies (docs/tti.md)",
                 nless, n);
    if (p->vmax_cpml > 0)
        vmax = p->vmax_cpml;
    struct tti_sim *s;
    if ((rc = create_core(dev, p, sigma, vmax, &s)) < 0)
        return rc;
    const double t2 = now_s();
    char how[160] = "";
    rc = s->gpu ? set_medium_gpu(s, m, how, sizeof how) : set_medium(s, m);
    if (rc < 0) {
        tti_destroy(s);
        return rc;
    }
    const double t3 = now_s();
    log_debug("created %d x %d x %d points (%zu allocated) in %.1f ms: model check %.1f%s, arrays %.1f, "
              "medium %.1f%s%s%s",
              s->w.L.npad[0], s->w.L.npad[1], s->w.L.npad[2], s->w.L.count, 1e3 * (t3 - t0), 1e3 * (t1 - t0),
              checked ? " (checked by the caller)" : "", 1e3 * (t2 - t1), 1e3 * (t3 - t2), *how ? " (" : "", how,
              *how ? ")" : "");
    *out = s;
    return 0;
}

int tti_create_like(const struct tti_sim *like, struct tti_sim **out)
{
    struct tti_sim *s;
    int rc = create_core(like->w.dev, &like->w.p, like->sigma, like->w.vmax, &s);
    if (rc < 0)
        return rc;
    s->w.cpml_on = like->w.cpml_on;
#ifdef SEISLIVE_CUDA
    if (s->gpu) {
        if ((rc = tti_cu_copy_medium(s, like)) < 0) {
            tti_destroy(s);
            return rc;
        }
        *out = s;
        return 0;
    }
#endif
    const size_t b = like->w.L.count * sizeof(float);
    memcpy(s->w.vel, like->w.vel, b);
    memcpy(s->ed, like->ed, b);
    memcpy(s->tilt, like->tilt, b);
    memcpy(s->eps, like->eps, b);
    memcpy(s->del, like->del, b);
    memcpy(s->nx, like->nx, b);
    memcpy(s->ny, like->ny, b);
    memcpy(s->nz, like->nz, b);
    *out = s;
    return 0;
}

const struct wave_params *tti_params_of(const struct tti_sim *s) { return &s->w.p; }
const struct wave_layout *tti_layout(const struct tti_sim *s) { return &s->w.L; }
double tti_sigma(const struct tti_sim *s) { return s->sigma; }
void tti_set_cpml(struct tti_sim *s, bool on) { s->w.cpml_on = on; }
bool tti_cpml_enabled(const struct tti_sim *s) { return s->w.cpml_on; }
void tti_set_reverse_interior(struct tti_sim *s, bool on) { s->w.rev_interior = on; }
int64_t tti_step_index(const struct tti_sim *s) { return s->w.step; }
float *tti_p(struct tti_sim *s) { return s->w.cur; }
float *tti_q(struct tti_sim *s) { return s->q; }

int tti_reset(struct tti_sim *s)
{
#ifdef SEISLIVE_CUDA
    if (s->gpu) {
        s->w.step = 0;
        return tti_cu_reset(s);
    }
#endif
    const size_t b = s->w.L.count * sizeof(float);
    memset(s->w.cur, 0, b);
    memset(s->w.prev, 0, b);
    memset(s->q, 0, b);
    memset(s->qprev, 0, b);
    for (int f = 0; f < 2; f++)
        for (int a = 0; a < 3; a++) {
            if (s->psi[f][a])
                memset(s->psi[f][a], 0, s->w.slab_count[a] * sizeof(float));
            if (s->zeta[f][a])
                memset(s->zeta[f][a], 0, s->w.slab_count[a] * sizeof(float));
            if (s->chi[f][a])
                memset(s->chi[f][a], 0, s->w.slab_count[a] * sizeof(float));
        }
    s->w.step = 0;
    s->stage = 0;
    return 0;
}

/* The whole grid's frame of a subdomain's padded cells (kernels/wave.c's whole_frame, which
 * is private to it); whether the grid is a subdomain (global_n given). */
static bool whole_frame(const struct wave_sim *w, struct rb_frame *g)
{
    const struct wave_layout *L = &w->L;
    for (int a = 0; a < 3; a++) {
        for (int side = 0; side < 2; side++) {
            const int f = 2 * a + side;
            g->pml[f] = w->p.face[f] == WAVE_FACE_HALO ? w->p.pml[f] : L->pml[f];
        }
        g->n[a] = w->p.global_n[a] ? w->p.global_n[a] : L->n[a];
        g->npad[a] = g->n[a] + g->pml[2 * a] + g->pml[2 * a + 1];
        g->shift[a] = w->p.origin[a] + g->pml[2 * a] - L->pml[2 * a];
    }
    return w->p.global_n[0] || w->p.global_n[1] || w->p.global_n[2];
}

int tti_randomize_layers(struct tti_sim *s, const struct random_boundary *rb, uint64_t shot_id)
{
#ifdef SEISLIVE_CUDA
    if (s->gpu) {
        const double t0 = now_s();
        const int rc = tti_cu_randomize_layers(s, rb, shot_id);
        log_debug("random layers in %.1f ms", 1e3 * (now_s() - t0));
        return rc;
    }
#endif
    const struct wave_layout *L = &s->w.L;
    const size_t np = (size_t)L->npad[0] * L->npad[1] * L->npad[2];
    float *vp = malloc(np * sizeof(float));
    if (!vp)
        return err_set(-ENOMEM, "tti: out of memory (random boundary, %zu cells)", np);
    const double dt = s->w.p.dt;
    for (int k = 0; k < L->npad[2]; k++)
        for (int j = 0; j < L->npad[1]; j++)
            for (int i = 0; i < L->npad[0]; i++) {
                size_t c = (size_t)(k + L->pad_off[2]) * L->stride_z + (size_t)(j + L->pad_off[1]) * L->stride_y +
                           (size_t)(i + L->pad_off[0]);
                vp[((size_t)k * L->npad[1] + j) * L->npad[0] + i] = (float)(sqrt((double)s->w.vel[c]) / dt);
            }
    /* a subdomain draws the whole grid's layers at its cells (kernels/wave.c does the same) */
    struct rb_frame g;
    const bool sub = whole_frame(&s->w, &g);
    int rc = sub ? random_boundary_apply_in(rb, &g, L->npad, L->n, L->pml, shot_id, vp)
                 : random_boundary_apply(rb, L->npad, L->n, L->pml, shot_id, vp);
    if (rc == 0)
        for (int k = 0; k < L->npad[2]; k++)
            for (int j = 0; j < L->npad[1]; j++)
                for (int i = 0; i < L->npad[0]; i++) {
                    size_t c = (size_t)(k + L->pad_off[2]) * L->stride_z + (size_t)(j + L->pad_off[1]) * L->stride_y +
                               (size_t)(i + L->pad_off[0]);
                    double v = vp[((size_t)k * L->npad[1] + j) * L->npad[0] + i];
                    s->w.vel[c] = (float)(v * v * dt * dt);
                }
    free(vp);
    return rc;
}

/* ---- the CPU step ------------------------------------------------------------------------------ */

/* The layer storage is wave_slab_elem's (kernels/wave_internal.h): chi_xy uses axis 1's,
 * chi_xz and chi_yz axis 2's. */

static inline int slab_of(const struct wave_layout *L, int a, int x)
{
    return cpml_slab_index(x, L->npad[a], L->pml[2 * a], L->pml[2 * a + 1]);
}

/* Row derivatives (N cells from element C0): first, sum over l = 1..r of
 * w[l] (f[c + l st] - f[c - l st]); second, w[0] f[c] plus the same sum of
 * w[l] (f[c + l st] + f[c - l st]); the cell loop innermost so that it vectorises. */
static inline void row_d1(const float *f, size_t c0, size_t st, const float *w, int r, int n, float *out)
{
    for (int i = 0; i < n; i++)
        out[i] = 0;
    for (int l = 1; l <= r; l++) {
        const float *up = f + c0 + l * st, *dn = f + c0 - l * st;
        const float wl = w[l];
        for (int i = 0; i < n; i++)
            out[i] += wl * (up[i] - dn[i]);
    }
}

static inline void row_d2(const float *f, size_t c0, size_t st, const float *w, int r, int n, float *out)
{
    const float *ce = f + c0;
    for (int i = 0; i < n; i++)
        out[i] = w[0] * ce[i];
    for (int l = 1; l <= r; l++) {
        const float *up = f + c0 + l * st, *dn = f + c0 - l * st;
        const float wl = w[l];
        for (int i = 0; i < n; i++)
            out[i] += wl * (up[i] + dn[i]);
    }
}

/* d_a of the products N * S over a row (N cells from element C0 along stride ST): the
 * outer derivative of H1, same order of sums as row_d1. */
static inline void row_d1_prod(const float *nv, const float *sv, size_t c0, size_t st, const float *w, int r, int n,
                               float *out)
{
    for (int i = 0; i < n; i++)
        out[i] = 0;
    for (int l = 1; l <= r; l++) {
        const size_t u = c0 + l * st, d = c0 - l * st;
        const float wl = w[l];
        for (int i = 0; i < n; i++)
            out[i] += wl * (nv[u + i] * sv[u + i] - nv[d + i] * sv[d + i]);
    }
}

/* Pass 1 for field F (0 p, 1 q) of values FV over the padded grid (tti.h): the stretched
 * first derivatives g_a = d_a f + psi_a (psi_a advanced in axis a's layers) and
 * s = n . g.  Outside the padded grid s stays 0, or the free surface's odd image. */
static void pass1(struct tti_sim *s, int f, const float *fv, bool cpml)
{
    struct wave_sim *w = &s->w;
    const struct wave_layout *L = &w->L;
    const int r = w->r, nx = L->npad[0];
    const bool two_d = wave_is_2d(w);
    float *sf = s->s[f];
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = 0; k < L->npad[2]; k++)
        for (int j = 0; j < L->npad[1]; j++) {
            float g[3][nx];
            const size_t row = (size_t)(k + L->pad_off[2]) * L->stride_z + (size_t)(j + L->pad_off[1]) * L->stride_y +
                               L->pad_off[0];
            row_d1(fv, row, 1, w->c1[0], r, nx, g[0]);
            if (!two_d)
                row_d1(fv, row, L->stride_y, w->c1[1], r, nx, g[1]);
            row_d1(fv, row, L->stride_z, w->c1[2], r, nx, g[2]);
            if (cpml) {
                for (int i = 0; i < nx; i++) {
                    const int js = slab_of(L, 0, i);
                    if (js < 0) {
                        i = nx - L->pml[1] - 1; /* on to the high layer */
                        continue;
                    }
                    float *ps = s->psi[f][0] + wave_slab_elem(L, 0, i, j, k, js);
                    *ps = w->pb[0][i] * *ps + w->pa[0][i] * g[0][i];
                    g[0][i] += *ps;
                }
                const int xa[3] = {0, j, k};
                for (int a = two_d ? 2 : 1; a < 3; a++) {
                    const int js = slab_of(L, a, xa[a]);
                    if (js < 0)
                        continue;
                    float *ps = s->psi[f][a] + wave_slab_elem(L, a, 0, j, k, js);
                    const float pb = w->pb[a][xa[a]], pa = w->pa[a][xa[a]];
                    for (int i = 0; i < nx; i++) {
                        ps[i] = pb * ps[i] + pa * g[a][i];
                        g[a][i] += ps[i];
                    }
                }
            }
            const float *ax = s->nx + row, *ay = s->ny + row, *az = s->nz + row;
            float *o = sf + row;
            if (two_d)
                for (int i = 0; i < nx; i++)
                    o[i] = ax[i] * g[0][i] + az[i] * g[2][i];
            else
                for (int i = 0; i < nx; i++)
                    o[i] = ax[i] * g[0][i] + ay[i] * g[1][i] + az[i] * g[2][i];
        }
    if (w->p.free_surface) {
        const size_t sz = L->stride_z;
        const int h = L->pad_off[2];
        for (int m = 1; m <= h; m++)
            for (size_t e = 0; e < sz; e++)
                sf[(size_t)(h - m) * sz + e] = -sf[(size_t)(h + m) * sz + e];
    }
}

/* The CPML terms of a row in the layers of axis A (1: y, 2: z; X the row's padded index
 * along A, JS its slab index): S_a <- t + zeta with t = S_a + d_a psi_a and zeta <- b zeta +
 * a t (Pasalic & McGarry), over cells [X0, X0 + N).  psi rows beyond the layers are 0. */
static void row_layer_s(struct tti_sim *s, int f, int a, int x, int js, int j, int k, int x0, int n, float *sa,
                        float *t)
{
    const struct wave_sim *w = &s->w;
    const struct wave_layout *L = &w->L;
    for (int i = 0; i < n; i++)
        t[i] = 0;
    for (int l = 1; l <= w->r; l++) {
        const int xu = x + l, xd = x - l, su = slab_of(L, a, xu), sd = slab_of(L, a, xd);
        const float *up = su < 0 ? NULL : s->psi[f][a] + wave_slab_elem(L, a, x0, a == 1 ? xu : j, a == 2 ? xu : k, su);
        const float *dn = sd < 0 ? NULL : s->psi[f][a] + wave_slab_elem(L, a, x0, a == 1 ? xd : j, a == 2 ? xd : k, sd);
        const float wl = w->c1[a][l];
        for (int i = 0; i < n; i++)
            t[i] += wl * ((up ? up[i] : 0.0f) - (dn ? dn[i] : 0.0f));
    }
    float *ze = s->zeta[f][a] + wave_slab_elem(L, a, x0, j, k, js);
    const float av = w->pa[a][x], bv = w->pb[a][x];
    for (int i = 0; i < n; i++) {
        const float v = sa[i] + t[i];
        const float z = bv * ze[i] + av * v;
        ze[i] = z;
        sa[i] = v + z;
    }
}

/* chi <- b chi + a m, m <- m + chi over a row of H1 terms M = d_a(n_a s) in the layers of
 * axis A (1: y, 2: z; X the row's padded index along A, JS its slab index). */
static void row_layer_chi(struct tti_sim *s, int f, int a, int x, int js, int j, int k, int x0, int n, float *m)
{
    const struct wave_sim *w = &s->w;
    float *ch = s->chi[f][a] + wave_slab_elem(&w->L, a, x0, j, k, js);
    const float av = w->pa[a][x], bv = w->pb[a][x];
    for (int i = 0; i < n; i++) {
        const float z = bv * ch[i] + av * m[i];
        ch[i] = z;
        m[i] += z;
    }
}

/* The same for the x-layer cells [X0, X1) of a row (cell by cell). */
static void row_layer_chi_x(struct tti_sim *s, int f, int j, int k, int x0, int x1, float *m)
{
    const struct wave_sim *w = &s->w;
    const struct wave_layout *L = &w->L;
    for (int i = x0; i < x1; i++) {
        const int js = slab_of(L, 0, i);
        if (js < 0) {
            i = L->npad[0] - L->pml[1] - 1; /* on to the high layer */
            continue;
        }
        float *ch = s->chi[f][0] + wave_slab_elem(L, 0, i, j, k, js);
        const float z = w->pb[0][i] * *ch + w->pa[0][i] * m[i - x0];
        *ch = z;
        m[i - x0] += z;
    }
}

/* The x-layer cells of a row: S_x with d_x psi_x and zeta_x (cell by cell). */
static void row_layer_x(struct tti_sim *s, int f, int j, int k, int x0, int x1, float *sx)
{
    const struct wave_sim *w = &s->w;
    const struct wave_layout *L = &w->L;
    for (int i = x0; i < x1; i++) {
        const int js = slab_of(L, 0, i);
        if (js < 0) {
            i = L->npad[0] - L->pml[1] - 1; /* on to the high layer */
            continue;
        }
        float dpsi = 0;
        for (int l = 1; l <= w->r; l++) {
            const int su = slab_of(L, 0, i + l), sd = slab_of(L, 0, i - l);
            const float up = su < 0 ? 0.0f : s->psi[f][0][wave_slab_elem(L, 0, 0, j, k, su)];
            const float dn = sd < 0 ? 0.0f : s->psi[f][0][wave_slab_elem(L, 0, 0, j, k, sd)];
            dpsi += w->c1[0][l] * (up - dn);
        }
        float *ze = s->zeta[f][0] + wave_slab_elem(L, 0, 0, j, k, js);
        const float v = sx[i - x0] + dpsi;
        const float z = w->pb[0][i] * *ze + w->pa[0][i] * v;
        *ze = z;
        sx[i - x0] = v + z;
    }
}

/* Update cells [X0, X1) of padded row (J, K): L and H1 of both fields row by row (the
 * cell loops vectorise), the CPML terms added where the row or a cell lies in layers
 * (CPML on), then the update of tti.h.  TMP holds 9 (x1 - x0) floats. */
static void row_update(struct tti_sim *s, int j, int k, int x0, int x1, bool cpml, float inv_sigma, float *tmp)
{
    const struct wave_sim *w = &s->w;
    const struct wave_layout *L = &w->L;
    const int r = w->r, n = x1 - x0;
    if (n <= 0)
        return;
    const bool two_d = wave_is_2d(w);
    const size_t sy = L->stride_y, sz = L->stride_z;
    const size_t c0 = (size_t)(k + L->pad_off[2]) * sz + (size_t)(j + L->pad_off[1]) * sy + L->pad_off[0] + x0;
    float *sa = tmp, *sb = tmp + n, *t = tmp + 2 * n;
    float *lf[2] = {tmp + 3 * n, tmp + 4 * n}, *hf[2] = {tmp + 5 * n, tmp + 6 * n}, *m = tmp + 7 * n;
    const int jy = cpml && !two_d ? slab_of(L, 1, j) : -1, kz = cpml ? slab_of(L, 2, k) : -1;
    const bool xl = cpml && (x0 < L->pml[0] || x1 > L->npad[0] - L->pml[1]);
    for (int f = 0; f < 2; f++) {
        const float *fv = f ? s->q : w->cur, *sf = s->s[f];
        float *l = lf[f], *h = hf[f];
        /* L f = S_x + S_z (+ S_y) */
        row_d2(fv, c0, 1, w->c2[0], r, n, sa);
        if (xl)
            row_layer_x(s, f, j, k, x0, x1, sa);
        row_d2(fv, c0, sz, w->c2[2], r, n, sb);
        if (kz >= 0)
            row_layer_s(s, f, 2, k, kz, j, k, x0, n, sb, t);
        for (int i = 0; i < n; i++)
            l[i] = sa[i] + sb[i];
        if (!two_d) {
            row_d2(fv, c0, sy, w->c2[1], r, n, sa);
            if (jy >= 0)
                row_layer_s(s, f, 1, j, jy, j, k, x0, n, sa, t);
            for (int i = 0; i < n; i++)
                l[i] += sa[i];
        }
        /* H1 f = d_x(n_x s) + d_z(n_z s) (+ d_y(n_y s)), each stretched by its chi */
        row_d1_prod(s->nx, sf, c0, 1, w->c1[0], r, n, m);
        if (xl)
            row_layer_chi_x(s, f, j, k, x0, x1, m);
        row_d1_prod(s->nz, sf, c0, sz, w->c1[2], r, n, sa);
        if (kz >= 0)
            row_layer_chi(s, f, 2, k, kz, j, k, x0, n, sa);
        for (int i = 0; i < n; i++)
            h[i] = m[i] + sa[i];
        if (!two_d) {
            row_d1_prod(s->ny, sf, c0, sy, w->c1[1], r, n, sa);
            if (jy >= 0)
                row_layer_chi(s, f, 1, j, jy, j, k, x0, n, sa);
            for (int i = 0; i < n; i++)
                h[i] += sa[i];
        }
    }
    const float *p = w->cur + c0, *q = s->q + c0, *vel = w->vel + c0, *ep = s->eps + c0, *de = s->del + c0;
    float *pn = w->prev + c0, *qn = s->qprev + c0;
    for (int i = 0; i < n; i++) {
        const float vz = vel[i], e = ep[i], dl = de[i];
        const float sv = vz * ((e - dl) * inv_sigma);
        const float ap = vz * (1.0f + 2.0f * e), aq = vz * (1.0f + 2.0f * dl) - sv, cc = vz - sv;
        pn[i] = 2.0f * p[i] - pn[i] + ap * lf[0][i] + ((sv - ap) * hf[0][i] + cc * hf[1][i]);
        qn[i] = 2.0f * q[i] - qn[i] + aq * lf[0][i] + (cc * hf[1][i] - aq * hf[0][i]) + sv * lf[1][i];
    }
}

static void mirror(struct tti_sim *s, float *f)
{
    const struct wave_layout *L = &s->w.L;
    const size_t sz = L->stride_z;
    const int h = L->pad_off[2];
    memset(f + (size_t)h * sz, 0, sz * sizeof(float));
    for (int m = 1; m <= h; m++) {
        float *up = f + (size_t)(h - m) * sz;
        const float *dn = f + (size_t)(h + m) * sz;
        for (size_t e = 0; e < sz; e++)
            up[e] = -dn[e];
    }
}

/* Whether a step with the CPML switch CPML runs the CPML terms (a grid without layers
 * has none to run). */
static bool cpml_active(const struct tti_sim *s, bool cpml)
{
    const struct wave_sim *w = &s->w;
    return cpml && (w->slab_count[0] + w->slab_count[1] + w->slab_count[2]) > 0;
}

/* The second pass: L, H1 and the update of both fields into prev (INTERIOR: only the box
 * inside the layers; CPML already cpml_active's), and the free surface's mirror. */
static void step_update(struct tti_sim *s, bool cpml, bool interior)
{
    struct wave_sim *w = &s->w;
    const struct wave_layout *L = &w->L;
    interior = interior && !cpml;
    const float inv_sigma = (float)(1.0 / s->sigma);
    const int k0 = interior ? L->pml[4] : 0, k1 = interior ? L->npad[2] - L->pml[5] : L->npad[2];
    const int j0 = interior ? L->pml[2] : 0, j1 = interior ? L->npad[1] - L->pml[3] : L->npad[1];
    const int i0 = interior ? L->pml[0] : 0, i1 = interior ? L->npad[0] - L->pml[1] : L->npad[0];
#pragma omp parallel for collapse(2) schedule(static)
    for (int k = k0; k < k1; k++)
        for (int j = j0; j < j1; j++) {
            float tmp[9 * L->npad[0]];
            row_update(s, j, k, i0, i1, cpml, inv_sigma, tmp);
        }
    if (w->p.free_surface) {
        mirror(s, w->prev);
        mirror(s, s->qprev);
    }
}

static void step_cpu(struct tti_sim *s, bool cpml, bool interior)
{
    cpml = cpml_active(s, cpml);
    pass1(s, 0, s->w.cur, cpml);
    pass1(s, 1, s->q, cpml);
    step_update(s, cpml, interior);
}

void tti_swap(struct tti_sim *s)
{
    wave_swap(&s->w);
    float *t = s->q;
    s->q = s->qprev;
    s->qprev = t;
}

/* The step on either device (p(n+1), q(n+1) into prev; the caller swaps). */
static int step_any(struct tti_sim *s, bool cpml, bool interior)
{
#ifdef SEISLIVE_CUDA
    if (s->gpu)
        return tti_cu_step(s, cpml, interior);
#endif
    step_cpu(s, cpml, interior);
    return 0;
}

int tti_step(struct tti_sim *s)
{
    if (s->stage)
        return err_set(-EINVAL, "tti: a whole step inside a step in stages (pass 1 done, update missing)");
    int rc = step_any(s, s->w.cpml_on, false);
    if (rc < 0)
        return rc;
    tti_swap(s);
    s->w.step++;
    return 0;
}

/* tti_step (REVERSE: tti_step_reverse) in its two passes (tti_internal.h): step_cpu's
 * calls in its order with step_any's switches, so the pair is the whole step bit for bit. */
static int stage_run(struct tti_sim *s, int stage, bool reverse)
{
    if (s->gpu)
        return err_set(-ENOTSUP, "tti: no step in stages on a GPU");
    const bool cpml = reverse ? false : cpml_active(s, s->w.cpml_on);
    const int dir = reverse ? 2 : 1;
    if (stage == TTI_STAGE_PASS1) {
        if (s->stage)
            return err_set(-EINVAL, "tti: pass 1 of a step whose pass 1 is done (stage 2 missing)");
        pass1(s, 0, s->w.cur, cpml);
        pass1(s, 1, s->q, cpml);
        s->stage = dir;
        return 0;
    }
    if (stage != TTI_STAGE_UPDATE)
        return err_set(-EINVAL, "tti: step stage %d: not 1 (pass 1) or 2 (update)", stage);
    if (s->stage != dir)
        return err_set(-EINVAL, "tti: the update of a %s step whose pass 1 has not run", reverse ? "reverse" : "forward");
    step_update(s, cpml, reverse && s->w.rev_interior);
    s->stage = 0;
    tti_swap(s);
    s->w.step += reverse ? -1 : 1;
    return 0;
}

int tti_step_stage(struct tti_sim *s, int stage) { return stage_run(s, stage, false); }
int tti_step_stage_reverse(struct tti_sim *s, int stage) { return stage_run(s, stage, true); }

int tti_step_reverse(struct tti_sim *s)
{
    if (s->stage)
        return err_set(-EINVAL, "tti: a whole step inside a step in stages (pass 1 done, update missing)");
    int rc = step_any(s, false, s->w.rev_interior);
    if (rc < 0)
        return rc;
    tti_swap(s);
    s->w.step--;
    return 0;
}

/* ---- points ----------------------------------------------------------------------------------- */

int tti_points_create(struct tti_sim *s, const double *xyz, size_t n, int interp, struct wave_points **out)
{
    return wave_points_create(&s->w, xyz, n, interp, out);
}

int tti_inject(struct tti_sim *s, const struct wave_points *pts, const float *amps, size_t stride, float scale,
               unsigned flags)
{
    int rc = wave_inject(&s->w, pts, amps, stride, scale, flags);
    if (rc < 0)
        return rc;
    float *p = s->w.cur;
    s->w.cur = s->q;
    rc = wave_inject(&s->w, pts, amps, stride, scale, flags);
    s->w.cur = p;
    return rc;
}

int tti_sample(struct tti_sim *s, const struct wave_points *pts, float *out, size_t stride, unsigned flags)
{
    return wave_sample(&s->w, pts, out, stride, flags);
}

/* ---- copies, strips, states --------------------------------------------------------------------- */

static int copy_interior(struct tti_sim *s, float *f, float *host, bool out)
{
#ifdef SEISLIVE_CUDA
    if (s->gpu)
        return tti_cu_copy_interior(s, f, host, out);
#endif
    const struct wave_layout *L = &s->w.L;
    for (int k = 0; k < L->n[2]; k++)
        for (int j = 0; j < L->n[1]; j++) {
            float *g = f + (size_t)(k + L->off[2]) * L->stride_z + (size_t)(j + L->off[1]) * L->stride_y + L->off[0];
            float *h = host + ((size_t)k * L->n[1] + j) * L->n[0];
            if (out)
                memcpy(h, g, L->n[0] * sizeof(float));
            else
                memcpy(g, h, L->n[0] * sizeof(float));
        }
    return 0;
}

int tti_copy_out(struct tti_sim *s, bool prev, float *host)
{
    return copy_interior(s, prev ? s->w.prev : s->w.cur, host, true);
}

int tti_copy_out_q(struct tti_sim *s, bool prev, float *host)
{
    return copy_interior(s, prev ? s->qprev : s->q, host, true);
}

int tti_copy_in(struct tti_sim *s, bool prev, const float *host)
{
    int rc = copy_interior(s, prev ? s->w.prev : s->w.cur, (float *)host, false);
    return rc < 0 ? rc : copy_interior(s, prev ? s->qprev : s->q, (float *)host, false);
}

/* The strip is two halos wide: an interior point's update reads s = n . grad f up to r
 * cells away, and s reads f up to r further (tti.h). */
static void strip_boxes(const struct tti_sim *s, int lo[6][3], int hi[6][3])
{
    wave_strip_boxes_width(&s->w, 2 * s->w.L.halo, lo, hi);
}

size_t tti_strip_count(const struct tti_sim *s) { return 2 * wave_strip_count_width(&s->w, 2 * s->w.L.halo); }

static int strip_io(struct tti_sim *s, float *buf, bool on_device, bool save)
{
#ifdef SEISLIVE_CUDA
    if (s->gpu)
        return tti_cu_strip(s, buf, on_device, save);
#endif
    if (on_device)
        return err_set(-EINVAL, "tti: device buffer given to a CPU simulation");
    const struct wave_layout *L = &s->w.L;
    int lo[6][3], hi[6][3];
    strip_boxes(s, lo, hi);
    size_t at = 0;
    float *fields[2] = {s->w.cur, s->q};
    for (int f = 0; f < 2; f++)
        for (int b = 0; b < 6; b++)
            for (int k = lo[b][2]; k < hi[b][2]; k++)
                for (int j = lo[b][1]; j < hi[b][1]; j++) {
                    float *g = fields[f] + (size_t)(k + L->off[2]) * L->stride_z +
                               (size_t)(j + L->off[1]) * L->stride_y + L->off[0] + lo[b][0];
                    const size_t n = (size_t)(hi[b][0] - lo[b][0]);
                    if (save)
                        memcpy(buf + at, g, n * sizeof(float));
                    else
                        memcpy(g, buf + at, n * sizeof(float));
                    at += n;
                }
    return 0;
}

int tti_strip_save(struct tti_sim *s, float *buf, bool on_device) { return strip_io(s, buf, on_device, true); }
int tti_strip_load(struct tti_sim *s, const float *buf, bool on_device)
{
    return strip_io(s, (float *)buf, on_device, false);
}

size_t tti_state_bytes(const struct tti_sim *s)
{
    return sizeof(float) * (4 * s->w.L.count + 2 * cpml_floats(&s->w.L, wave_is_2d(&s->w))) + sizeof(int64_t);
}

static int state_io(struct tti_sim *s, char *buf, bool on_device, bool save)
{
#ifdef SEISLIVE_CUDA
    if (s->gpu)
        return tti_cu_state(s, buf, on_device, save);
#endif
    if (on_device)
        return err_set(-EINVAL, "tti: device buffer given to a CPU simulation");
    float *parts[4 + 18];
    size_t counts[4 + 18];
    int np = 0;
    float *lv[4] = {s->w.cur, s->w.prev, s->q, s->qprev};
    for (int i = 0; i < 4; i++) {
        parts[np] = lv[i];
        counts[np++] = s->w.L.count;
    }
    for (int f = 0; f < 2; f++)
        for (int a = 0; a < 3; a++) {
            parts[np] = s->psi[f][a];
            counts[np++] = s->w.slab_count[a];
            parts[np] = s->zeta[f][a];
            counts[np++] = s->w.slab_count[a];
            parts[np] = s->chi[f][a];
            counts[np++] = s->w.slab_count[a];
        }
    size_t at = 0;
    for (int i = 0; i < np; i++) {
        const size_t b = counts[i] * sizeof(float);
        if (b) {
            if (save)
                memcpy(buf + at, parts[i], b);
            else
                memcpy(parts[i], buf + at, b);
        }
        at += b;
    }
    if (save)
        memcpy(buf + at, &s->w.step, sizeof s->w.step);
    else
        memcpy(&s->w.step, buf + at, sizeof s->w.step);
    return 0;
}

int tti_state_save(struct tti_sim *s, void *buf, bool on_device) { return state_io(s, buf, on_device, true); }
int tti_state_load(struct tti_sim *s, const void *buf, bool on_device)
{
    return state_io(s, (void *)buf, on_device, false);
}

void tti_describe(const struct tti_sim *s, char *buf, size_t len)
{
#ifdef SEISLIVE_CUDA
    if (s->gpu) {
        tti_cu_describe(s, buf, len);
        return;
    }
#endif
    snprintf(buf, len, "CPU reference (OpenMP)%s, sigma %g, CPML %s", wave_is_2d(&s->w) ? ", 2D" : "", s->sigma,
             s->w.cpml_on ? "on" : "off");
}

/* ---- subdomains: the halo of a HALO face --------------------------------------------------------- */

size_t tti_halo_count(const struct tti_sim *s, int face) { return 2 * wave_halo_count(&s->w, face); }

/* The products n_a s of both fields over the send box of FACE into BUF (pack), or BUF
 * into s over its receive box (unpack; n_a is 1 there: halo_medium). */
static void products_io(struct tti_sim *s, int face, float *buf, bool pack)
{
    const struct wave_layout *L = &s->w.L;
    const float *na = face / 2 == 0 ? s->nx : face / 2 == 1 ? s->ny : s->nz;
    int lo[3], hi[3];
    halo_box(L, face, !pack, lo, hi);
    size_t at = 0;
    for (int f = 0; f < 2; f++)
        for (int k = lo[2]; k < hi[2]; k++)
            for (int j = lo[1]; j < hi[1]; j++) {
                const size_t row = (size_t)k * L->stride_z + (size_t)j * L->stride_y;
                float *sf = s->s[f] + row;
                if (pack)
                    for (int i = lo[0]; i < hi[0]; i++)
                        buf[at++] = na[row + i] * sf[i];
                else
                    for (int i = lo[0]; i < hi[0]; i++)
                        sf[i] = buf[at++];
            }
}

/* Stage 0: p then q through the shell's wave_halo_pack (its cur pointed at q for the
 * second); stage 1: the products. */
static int halo_io(struct tti_sim *s, int face, float *buf, bool pack)
{
    if (face < 0 || face > 5 || s->w.p.face[face] != WAVE_FACE_HALO)
        return err_set(-EINVAL, "tti: face %d (%s) is not a HALO face", face, face >= 0 && face < 6 ?
                       face_names[face] : "?");
    if (s->stage) {
        if (s->gpu)
            return err_set(-ENOTSUP, "tti: no step in stages on a GPU");
        products_io(s, face, buf, pack);
        return 0;
    }
    const size_t n = wave_halo_count(&s->w, face);
    int rc = pack ? wave_halo_pack(&s->w, face, buf) : wave_halo_unpack(&s->w, face, buf);
    if (rc < 0)
        return rc;
    float *p = s->w.cur;
    s->w.cur = s->q;
    rc = pack ? wave_halo_pack(&s->w, face, buf + n) : wave_halo_unpack(&s->w, face, buf + n);
    s->w.cur = p;
    return rc;
}

int tti_halo_pack(struct tti_sim *s, int face, float *buf) { return halo_io(s, face, buf, true); }
int tti_halo_unpack(struct tti_sim *s, int face, const float *buf) { return halo_io(s, face, (float *)buf, false); }
