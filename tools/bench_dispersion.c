/* bench_dispersion — `seislive-bench dispersion`: what each derivative operator
 * (kernels/operator.h) buys.
 *
 *   seislive-bench dispersion [--orders 2,4,...,16] [--target 0.01] [--cfl 0.9,0.2]
 *                             [--f-peak 15] [--offset 600] [--survey 4000,4000,2000]
 *                             [--t-max 4] [--rate-n N] [--tdc none|correct|both]
 *                             [--receivers 10000] [--bands default,auto]
 *                             [--band-scale 0.9] [--implicit-sweeps X/YZ] [--device SPEC]
 *                             [--json] [--verbose]
 *
 * Table 1, the dispersion table (kernels/dispersion.h, space alone): per operator and
 * half-width the points per wavelength from which the phase-velocity error stays within
 * 1 % and 0.1 % along the axis, the face and body diagonals and in the worst direction,
 * the design band and the stable dt relative to Taylor's of the same order.
 *
 * Table 2, the end-to-end trade-off: for a target relative L2 error of a modeled trace
 * (a Ricker of f_peak in a homogeneous 2000 m/s medium, source and receiver on grid nodes
 * OFFSET metres apart, against the analytic Green's function), the coarsest grid each
 * operator allows (points per wavelength at fmax = 2.5 f_peak tried from coarse to fine,
 * each one a real simulation on the device at dt = cfl x its stable dt, for each cfl: at
 * 0.9 the leapfrog's own error dominates, see docs/operators.md), and the time per
 * shot of a reference survey (a SURVEY-sized volume, t_max seconds, 20 CPML cells) on that
 * grid: the grid's points x steps over the step rate measured for the operator's order on
 * a RATE_N^3 grid on the same device (the rate, not a whole shot, is timed: a survey
 * volume at the finest grid does not fit a CPU run; the optimized stencil costs what
 * Taylor's of the same order does, measured here too; the implicit operator's own step
 * is measured the same way, wave_create with op = implicit).
 *
 * Every operator (taylor, optimized, implicit) runs at every cfl with and without the
 * time-dispersion correction (--tdc; [propagator] time_dispersion = "correct",
 * kernels/time_dispersion.h): with it the trace is computed exactly as the model job does
 * it, the Ricker sampled at the step's dt forward-transformed (FTDT) before it is
 * injected, the recorded trace inverse-transformed (ITDT) after, then compared with the
 * same analytic trace.  The criterion is the same for every row.  The corrected rows'
 * time per shot adds what the transforms cost on the host for a survey shot (the FTDT of
 * the wavelet and the ITDT of RECEIVERS traces of steps + 1 samples, OpenMP as in the
 * job, timed here), and their work adds that time as point-steps at the row's step rate.
 * The comparison columns are against Taylor 8th order: at its best setting in the table
 * (the fastest row of it that meets the target, any cfl, corrected or not) and at the
 * same cfl and correction.
 *
 * --bands default,auto (default: default) runs the optimized and implicit rows with their
 * default design band and/or with operator_band = "auto" (kernels/operator.h:
 * operator_band_auto): each candidate grid designed for the band that fmax reaches on it,
 * 2 / ppw of Nyquist times --band-scale (default OPERATOR_BAND_AUTO_SCALE), so a coarser
 * grid gets a wider band and a finer one a narrower, more accurate one.  --verbose prints
 * every candidate grid's trace error on stderr.  --implicit-sweeps X/YZ: the implicit
 * operator's CUDA sweeps (struct wave_tuning implicit_x / implicit_yz, as seislive-bench
 * stencil's --implicit-variants; default: the production default) for its rows. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/backend.h"
#include "kernels/dispersion.h"
#include "kernels/operator.h"
#include "kernels/propagator.h"
#include "kernels/stability.h"
#include "kernels/time_dispersion.h"
#include "kernels/wave.h"
#include "kernels/wave_tuning.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "stream/log.h"
#include "tools/bench.h"
#include "tools/options.h"

#define V0 2000.0
#define PML 16

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

struct opts {
    int orders[8], no;
    double target, cfls[4], f_peak, offset, survey[3], t_max;
    int ncfl;
    int rate_n;
    int tdc_from, tdc_to; /* 0 none, 1 correct */
    int receivers;
    int band_from, band_to; /* 0 default band, 1 auto */
    double band_scale;
    const char *device;
    struct wave_tuning sweeps; /* implicit_x / implicit_yz of every simulation */
    bool json, verbose;
};

/* ---- table 1 ---- */

static void dispersion_table(const struct opts *o)
{
    if (!o->json) {
        printf("## Dispersion (space alone): points per wavelength for 1 %% / 0.1 %% phase-velocity error\n\n");
        printf("| operator | order | band | dt_max / Taylor's | axis | face diagonal | body diagonal | worst |\n");
        printf("|---|---|---|---|---|---|---|---|\n");
    } else
        printf("{\"dispersion\": [");
    bool first = true;
    for (int k = 0; k < PROP_OP_COUNT; k++)
        for (int i = 0; i < o->no; i++) {
            struct dispersion_grid g = {.d = {1, 1, 1}, .v = V0};
            if (operator_design(k, o->orders[i], 0, &g.op) < 0) {
                if (!o->json)
                    printf("| %s | %d | n/a | n/a | n/a | n/a | n/a | n/a (%s) |\n", operator_name(k), o->orders[i],
                           err_msg());
                continue;
            }
            double q[DISP_NDIR][2];
            for (int d = 0; d < DISP_NDIR; d++) {
                q[d][0] = dispersion_ppw_at(&g, 1e-2, d);
                q[d][1] = dispersion_ppw_at(&g, 1e-3, d);
            }
            double ratio = operator_vscale(k, o->orders[i], 0);
            if (o->json) {
                printf("%s{\"operator\": \"%s\", \"order\": %d, \"band\": %.4f, \"dt_ratio\": %.4f", first ? "" : ", ",
                       operator_name(k), o->orders[i], g.op.band, ratio);
                for (int d = 0; d < DISP_NDIR; d++)
                    printf(", \"ppw_%s\": [%.3f, %.3f]", d == 0 ? "axis" : d == 1 ? "face" : d == 2 ? "body" : "worst",
                           q[d][0], q[d][1]);
                printf("}");
                first = false;
            } else {
                char band[16] = "-";
                if (g.op.band > 0)
                    snprintf(band, sizeof band, "%.3f", g.op.band);
                printf("| %s | %d | %s | %.3f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f |\n",
                       operator_name(k), o->orders[i], band, ratio, q[0][0], q[0][1], q[1][0], q[1][1], q[2][0],
                       q[2][1], q[3][0], q[3][1]);
            }
        }
    printf(o->json ? "],\n" : "\n");
}

/* ---- table 2 ---- */

/* The relative L2 error of the trace at OFFSET (along (0.96, 0.2, 0.2)-ish, on nodes) for
 * operator KIND of ORDER on spacing H; *DT gets the step used.  TDC: with the
 * time-dispersion correction as the model job applies it (stream/job_model.c: the
 * wavelet of nt + 1 samples FTDT'd, the trace of nt + 1 samples ITDT'd); a wavelet
 * beyond the leapfrog's band at this dt cannot be corrected (the job refuses it): *ERR =
 * INFINITY. */
static int trace_error(const struct sl_device *dev, const struct opts *o, int kind, int order, double band,
                       double cfl, double h, bool tdc, double *err, double *dt)
{
    const int nx = (int)ceil(o->offset * 0.96 / h), nyz = (int)ceil(o->offset * 0.2 / h);
    const int margin = 6;
    struct wave_params p = {.n = {nx + 2 * margin + 1, nyz + 2 * margin + 1, nyz + 2 * margin + 1},
                            .d = {h, h, h}, .order = order, .op = kind, .op_band = band,
                            .pml = {PML, PML, PML, PML, PML, PML}, .pml_reflection = 1e-4, .f_ref = o->f_peak,
                            .tuning = o->sweeps};
    p.dt = *dt = cfl * stability_dt_max_op(kind, order, band, p.d, V0, false);
    const double src[3] = {margin * h, margin * h, margin * h};
    const double rec[3] = {(margin + nx) * h, (margin + nyz) * h, (margin + nyz) * h};
    const double r = sqrt((double)nx * nx + 2.0 * nyz * nyz) * h;
    const double t0 = wavelet_ricker_delay(o->f_peak);
    const int nt = (int)((t0 + r / V0 + 1.5 / o->f_peak) / p.dt);
    if (tdc && wavelet_ricker_fmax(o->f_peak) >= tdt_band_limit(p.dt)) {
        *err = INFINITY;
        return 0;
    }
    size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v), *tr = calloc((size_t)nt + 1, sizeof *tr);
    float *wl = malloc(((size_t)nt + 1) * sizeof *wl);
    if (!v || !tr || !wl) {
        free(v);
        free(tr);
        free(wl);
        return err_set(-ENOMEM, "bench dispersion: out of memory");
    }
    for (int it = 0; it <= nt; it++)
        wl[it] = (float)wavelet_ricker(it * p.dt, o->f_peak, t0);
    struct tdt *tt = NULL;
    int rc = 0;
    if (tdc && (rc = tdt_create((size_t)nt + 1, p.dt, &tt)) == 0)
        rc = tdt_apply(tt, TDT_FORWARD, wl, 1, (size_t)nt + 1, NULL);
    for (size_t i = 0; i < nn; i++)
        v[i] = (float)V0;
    struct wave_sim *s = NULL;
    struct wave_points *ps = NULL, *pr = NULL;
    if (rc == 0)
        rc = wave_create(dev, &p, v, &s);
    if (rc == 0)
        rc = wave_points_create(s, src, 1, WAVE_INTERP_NEAREST, &ps);
    if (rc == 0)
        rc = wave_points_create(s, rec, 1, WAVE_INTERP_NEAREST, &pr);
    for (int it = 0; rc == 0 && it < nt; it++) {
        if ((rc = wave_step(s)) == 0 && (rc = wave_inject(s, ps, wl + it, 1, 1.0f, WAVE_INJECT_PHYSICAL)) == 0)
            rc = wave_sample(s, pr, tr + it + 1, 1, 0);
    }
    if (rc == 0 && tdc)
        rc = tdt_apply(tt, TDT_INVERSE, tr, 1, (size_t)nt + 1, NULL);
    if (rc == 0) {
        double num = 0, den = 0;
        for (int it = 0; it <= nt; it++) {
            double ref = wavelet_ricker(it * p.dt - r / V0, o->f_peak, t0) / (4.0 * M_PI * r);
            num += (tr[it] - ref) * (tr[it] - ref);
            den += ref * ref;
        }
        *err = sqrt(num / den);
    }
    wave_points_destroy(ps);
    wave_points_destroy(pr);
    wave_destroy(s);
    tdt_destroy(tt);
    free(v);
    free(tr);
    free(wl);
    return rc;
}

/* Seconds the host spends on a survey shot's correction: the FTDT of the wavelet and the
 * ITDT of NREC traces of N samples at DT (OpenMP over the traces, as in the model job).
 * Up to 512 traces are transformed and the time scaled to NREC: the cost is per trace. */
static int tdt_cost(size_t n, double dt, int nrec, double *sec)
{
    const int m = nrec < 512 ? nrec : 512;
    float *x = calloc(n * (size_t)(m + 1), sizeof *x);
    if (!x)
        return err_set(-ENOMEM, "bench dispersion: out of memory");
    for (int i = 0; i <= m; i++) /* a Ricker of 15 Hz at 0.2 s in every trace: the content is irrelevant to the cost */
        for (size_t k = 0; k < n; k++)
            x[(size_t)i * n + k] = (float)wavelet_ricker((double)k * dt, 15, 0.2);
    double t0 = now_s();
    struct tdt *t;
    int rc = tdt_create(n, dt, &t);
    if (rc == 0) {
        if ((rc = tdt_apply(t, TDT_FORWARD, x, 1, n, NULL)) == 0) {
            double t1 = now_s();
            rc = tdt_apply(t, TDT_INVERSE, x + n, (size_t)m, n, NULL);
            *sec = (t1 - t0) + (now_s() - t1) * nrec / m;
        }
        tdt_destroy(t);
    }
    free(x);
    return rc;
}

/* Points per second of steps for operator KIND of ORDER on an N^3 grid with CPML. */
static int step_rate(const struct sl_device *dev, const struct opts *o, int kind, int order, int n, double *rate)
{
    struct wave_params p = {.n = {n, n, n}, .d = {10, 10, 10}, .order = order, .op = kind,
                            .pml = {PML, PML, PML, PML, PML, PML}, .pml_reflection = 1e-4, .f_ref = 10,
                            .tuning = o->sweeps};
    p.dt = 0.5 * stability_dt_max_op(kind, order, 0, p.d, V0, false);
    size_t nn = (size_t)n * n * n;
    float *v = malloc(nn * sizeof *v);
    if (!v)
        return err_set(-ENOMEM, "bench dispersion: out of memory");
    for (size_t i = 0; i < nn; i++)
        v[i] = (float)V0;
    struct wave_sim *s;
    int rc = wave_create(dev, &p, v, &s);
    free(v);
    if (rc < 0)
        return rc;
    int steps = 2;
    double t = 0;
    for (int pass = 0; pass < 8 && rc == 0; pass++) { /* grow until a pass takes 0.3 s */
        if ((rc = wave_step(s)) < 0 || (rc = wave_sync(s)) < 0)
            break;
        double t0 = now_s();
        for (int it = 0; it < steps && rc == 0; it++)
            rc = wave_step(s);
        if (rc == 0)
            rc = wave_sync(s);
        t = now_s() - t0;
        if (t > 0.3)
            break;
        steps *= 2;
    }
    /* then the best of three passes of that length (a shared machine's noise only adds) */
    for (int rep = 0; rep < 3 && rc == 0; rep++) {
        double t0 = now_s();
        for (int it = 0; it < steps && rc == 0; it++)
            rc = wave_step(s);
        if (rc == 0)
            rc = wave_sync(s);
        t = fmin(t, now_s() - t0);
    }
    const double pts = (double)(n + 2 * PML) * (n + 2 * PML) * (n + 2 * PML);
    *rate = pts * steps / t;
    wave_destroy(s);
    return rc;
}

struct row {
    int kind, order, tdc, bauto;
    double cfl, band, band_req; /* band: the design band of the row's grid (0: taylor); band_req: as asked
                                   (0: the default) */
    double ppw, h, dt, err, rate, shot_s, work, tdt_s;
    double prop_s; /* the steps alone (survey points x steps / rate): time per shot without the host's transforms */
    long grid[3], steps;
    bool met, coarsest; /* coarsest: met at the coarsest grid tried (it may allow a coarser one) */
};

static int tradeoff(const struct opts *o, const struct sl_device *dev)
{
    static const double ppws[] = {2.0, 2.2, 2.4, 2.6, 2.8, 3.0, 3.2, 3.5, 3.8, 4.2, 4.6, 5.0, 5.5, 6.0, 7.0, 8.0};
    const int nppw = (int)(sizeof ppws / sizeof *ppws);
    const double fmax = wavelet_ricker_fmax(o->f_peak);
    static struct row rows[PROP_OP_COUNT * 8 * 4 * 2 * 2];
    double rates[PROP_OP_COUNT][17] = {{0}}; /* the step rate, once per operator and order */
    int nr = 0;
    for (int c = 0; c < o->ncfl; c++)
        for (int tdc = o->tdc_from; tdc <= o->tdc_to; tdc++)
            for (int k = 0; k < PROP_OP_COUNT; k++)
                for (int i = 0; i < o->no; i++)
                    for (int ba = o->band_from; ba <= o->band_to; ba++) {
                        if (o->orders[i] < 4 || (ba && k == PROP_OP_TAYLOR)) /* taylor has no band */
                            continue;
                        struct row *w = &rows[nr++];
                        *w = (struct row){.kind = k, .order = o->orders[i], .cfl = o->cfls[c], .tdc = tdc, .bauto = ba};
                        for (int j = 0; j < nppw && !w->met; j++) {
                            const double h = V0 / (fmax * ppws[j]);
                            const double band = ba ? operator_band_auto(fmax, V0, h, o->band_scale) : 0;
                            int rc = trace_error(dev, o, k, o->orders[i], band, w->cfl, h, tdc, &w->err, &w->dt);
                            if (rc < 0)
                                return err_prefix(rc, "%s order %d cfl %g%s at %.1f ppw", operator_name(k),
                                                  o->orders[i], w->cfl, tdc ? " corrected" : "", ppws[j]);
                            if (o->verbose)
                                fprintf(stderr, "dispersion:   %s %d band %.3f cfl %g%s at %.1f ppw: %.4g %%\n",
                                        operator_name(k), o->orders[i], band, w->cfl, tdc ? " corrected" : "",
                                        ppws[j], 100 * w->err);
                            w->ppw = ppws[j];
                            w->h = h;
                            w->band = w->band_req = band;
                            w->met = w->err <= o->target;
                            w->coarsest = w->met && j == 0;
                        }
                        struct operator_coeffs oc;
                        if (k != PROP_OP_TAYLOR && operator_design(k, o->orders[i], w->band, &oc) == 0)
                            w->band = oc.band; /* the default resolved */
                        fprintf(stderr, "dispersion: %s %d%s cfl %g%s: %.3g %% at %.1f ppw\n", operator_name(k),
                                o->orders[i], ba ? " band auto" : "", w->cfl, tdc ? " corrected" : "", 100 * w->err,
                                w->ppw);
                        double *rate = &rates[k][o->orders[i]];
                        if (*rate == 0) {
                            int rc = step_rate(dev, o, k, o->orders[i], o->rate_n, rate);
                            if (rc < 0)
                                return err_prefix(rc, "%s order %d step rate", operator_name(k), o->orders[i]);
                        }
                        w->rate = *rate;
                        double pts = 1;
                        for (int a = 0; a < 3; a++) {
                            w->grid[a] = (long)ceil(o->survey[a] / w->h) + 2 * PML;
                            pts *= (double)w->grid[a];
                        }
                        const double hh[3] = {w->h, w->h, w->h};
                        const double dt = w->cfl * stability_dt_max_op(k, o->orders[i], w->band_req, hh, V0, false);
                        w->steps = (long)ceil(o->t_max / dt);
                        w->work = pts * (double)w->steps;
                        w->shot_s = w->prop_s = w->work / w->rate;
                        if (tdc && w->met) {
                            int rc = tdt_cost((size_t)w->steps + 1, dt, o->receivers, &w->tdt_s);
                            if (rc < 0)
                                return err_prefix(rc, "tdt cost");
                            w->shot_s += w->tdt_s;
                            w->work += w->tdt_s * w->rate;
                        }
                    }
    /* Taylor 8th order: at its best setting (fastest met row) and per cfl and correction */
    int best = -1;
    for (int i = 0; i < nr; i++)
        if (rows[i].kind == PROP_OP_TAYLOR && rows[i].order == 8 && rows[i].met &&
            (best < 0 || rows[i].shot_s < rows[best].shot_s))
            best = i;
    const double bref = best >= 0 ? rows[best].shot_s : NAN, brefw = best >= 0 ? rows[best].work : NAN;
    const double bprop = best >= 0 ? rows[best].prop_s : NAN;
    char dev_name[128];
    snprintf(dev_name, sizeof dev_name, "%s", dev->kind == SL_DEVICE_CUDA ? "GPU" : "CPU");
    if (!o->json) {
        printf("## Trade-off: coarsest grid for a trace within %.3g %% rel L2 (offset %g m, f_peak %g Hz, fmax %g Hz), "
               "time per shot of a %g x %g x %g m survey, %g s (%s, step rate on %d^3 + CPML)\n\n",
               100 * o->target, o->offset, o->f_peak, fmax, o->survey[0], o->survey[1], o->survey[2], o->t_max,
               dev_name, o->rate_n);
        if (best >= 0)
            printf("Reference: taylor 8 at its best setting here: cfl %g, %s, %.4g s per shot.\n\n", rows[best].cfl,
                   rows[best].tdc ? "corrected" : "uncorrected", bref);
        else
            printf("Reference: taylor 8 reaches the target in no row here (n/a).\n\n");
        printf("| operator | order | band | cfl | time dispersion | ppw at fmax | h (m) | trace rel L2 | dt (ms) | "
               "survey grid | steps | tdt (s) | work (Gpt-steps) | work vs best taylor 8 | Mpts/s | "
               "time per shot (s) | vs best taylor 8 | vs taylor 8 same cfl + correction | steps alone (s) | "
               "steps alone vs best taylor 8 |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (int i = 0; i < nr; i++) {
            const struct row *w = &rows[i];
            const char *td = w->tdc ? "corrected" : "none";
            char band[32] = "-";
            if (w->kind != PROP_OP_TAYLOR)
                snprintf(band, sizeof band, "%s%.3f", w->bauto ? "auto " : "", w->band);
            if (!w->met) {
                char e[48];
                if (isinf(w->err))
                    snprintf(e, sizeof e, "beyond the band at %.1f ppw", w->ppw);
                else
                    snprintf(e, sizeof e, "%.3g %% at %.1f ppw", 100 * w->err, w->ppw);
                printf("| %s | %d | %s | %g | %s | not reached (> %.1f) | n/a | %s | n/a | n/a | n/a | n/a | n/a | "
                       "n/a | %.1f | n/a | n/a | n/a | n/a | n/a |\n",
                       operator_name(w->kind), w->order, band, w->cfl, td, w->ppw, e, w->rate / 1e6);
                continue;
            }
            double same = NAN; /* taylor 8 at the same cfl and correction */
            for (int j = 0; j < nr; j++)
                if (rows[j].kind == PROP_OP_TAYLOR && rows[j].order == 8 && rows[j].met && rows[j].cfl == w->cfl &&
                    rows[j].tdc == w->tdc)
                    same = rows[j].shot_s;
            char tds[32] = "-", vs[32] = "n/a";
            if (w->tdc)
                snprintf(tds, sizeof tds, "%.3g", w->tdt_s);
            if (!isnan(same))
                snprintf(vs, sizeof vs, "%.2fx", same / w->shot_s);
            printf("| %s | %d | %s | %g | %s | %s%.1f | %.2f | %.3g %% | %.3f | %ld x %ld x %ld | %ld | %s | %.4g | "
                   "%.2fx | %.1f | %.4g | %.2fx | %s | %.4g | %.2fx |\n",
                   operator_name(w->kind), w->order, band, w->cfl, td, w->coarsest ? "<= " : "", w->ppw, w->h,
                   100 * w->err, 1e3 * w->dt, w->grid[0], w->grid[1], w->grid[2], w->steps, tds, w->work / 1e9,
                   brefw / w->work, w->rate / 1e6, w->shot_s, bref / w->shot_s, vs, w->prop_s, bprop / w->prop_s);
        }
        printf("\n(ppw: the coarsest of 2.0, 2.2, 2.4, 2.6, ..., 8 points per wavelength at fmax whose trace meets the target, "
               "the same criterion for every row; \"<= 2.0\": met at the coarsest tried; \"not reached\": the error "
               "at the finest tried.  time dispersion \"corrected\": the trace computed with the wavelet "
               "forward-transformed and inverse-transformed after, as [propagator] time_dispersion = \"correct\" "
               "does; tdt: the host's time for the transforms of a shot of %d traces, included in the time per shot "
               "and, as point-steps at the step rate, in the work.  vs: how many times less work / faster than Taylor "
               "8th order; work = survey grid points x steps, free of the timing noise of a shared machine; steps "
               "alone: the time per shot without the host's transforms, survey points x steps / step rate)\n",
               o->receivers);
    } else {
        printf("\"tradeoff\": {\"device\": \"%s\", \"target\": %g, \"receivers\": %d, \"rows\": [", dev_name,
               o->target, o->receivers);
        for (int i = 0; i < nr; i++) {
            const struct row *w = &rows[i];
            printf("%s{\"operator\": \"%s\", \"order\": %d, \"band\": %.4f, \"band_auto\": %s, \"cfl\": %g, "
                   "\"time_dispersion\": \"%s\", "
                   "\"met\": %s, \"ppw\": %.2f, \"h\": %.4f, \"err\": %.5g, \"dt\": %.6g, \"steps\": %ld, "
                   "\"tdt_s\": %.6g, \"work\": %.6g, \"rate\": %.6g, \"shot_s\": %.6g, \"steps_s\": %.6g}",
                   i ? ", " : "", operator_name(w->kind), w->order, w->band, w->bauto ? "true" : "false", w->cfl,
                   w->tdc ? "correct" : "none",
                   w->met ? "true" : "false", w->ppw, w->h, isinf(w->err) ? -1.0 : w->err, w->dt, w->steps, w->tdt_s,
                   w->work, w->rate, w->shot_s, w->prop_s);
        }
        printf("]}}\n");
    }
    return 0;
}

int bench_dispersion(int argc, char **argv)
{
    struct opts o = {.orders = {2, 4, 6, 8, 10, 12, 14, 16}, .no = 8, .target = 0.01, .cfls = {0.9, 0.2}, .ncfl = 2,
                     .f_peak = 15,
                     .offset = 600, .survey = {4000, 4000, 2000}, .t_max = 4, .rate_n = 0, .tdc_from = 0, .tdc_to = 1,
                     .receivers = 10000, .band_scale = OPERATOR_BAND_AUTO_SCALE, .device = "auto"};
    for (int i = 1; i < argc; i++) {
        const bool more = i + 1 < argc;
        if (!strcmp(argv[i], "--json"))
            o.json = true;
        else if (!strcmp(argv[i], "--verbose"))
            o.verbose = true;
        else if (!strcmp(argv[i], "--orders") && more) {
            o.no = options_ints(argv[++i], o.orders, 1, 8);
            for (int k = 0; k < o.no; k++)
                if (o.orders[k] < 2 || o.orders[k] > 16 || o.orders[k] % 2)
                    o.no = -1;
            if (o.no < 0) {
                fprintf(stderr, "bench dispersion: --orders takes 1 to 8 even orders 2..16 separated by commas\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--target") && more)
            o.target = atof(argv[++i]);
        else if (!strcmp(argv[i], "--cfl") && more) {
            o.ncfl = options_doubles(argv[++i], o.cfls, 1, 4);
            for (int k = 0; k < o.ncfl; k++)
                if (!(o.cfls[k] > 0 && o.cfls[k] <= 1))
                    o.ncfl = -1;
            if (o.ncfl < 0) {
                fprintf(stderr, "bench dispersion: --cfl takes 1 to 4 fractions in (0, 1] separated by commas\n");
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--f-peak") && more)
            o.f_peak = atof(argv[++i]);
        else if (!strcmp(argv[i], "--offset") && more)
            o.offset = atof(argv[++i]);
        else if (!strcmp(argv[i], "--survey") && more) {
            if (options_doubles(argv[++i], o.survey, 3, 3) != 3) {
                fprintf(stderr, "bench dispersion: --survey takes three lengths in m (X,Y,Z)\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--t-max") && more)
            o.t_max = atof(argv[++i]);
        else if (!strcmp(argv[i], "--rate-n") && more)
            o.rate_n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tdc") && more) {
            const char *m = argv[++i];
            if (!strcmp(m, "none"))
                o.tdc_from = o.tdc_to = 0;
            else if (!strcmp(m, "correct"))
                o.tdc_from = o.tdc_to = 1;
            else if (!strcmp(m, "both"))
                o.tdc_from = 0, o.tdc_to = 1;
            else {
                fprintf(stderr, "bench dispersion: --tdc takes none, correct or both, not '%s'\n", m);
                return 2;
            }
        } else if (!strcmp(argv[i], "--bands") && more) {
            const char *m = argv[++i];
            if (!strcmp(m, "default"))
                o.band_from = o.band_to = 0;
            else if (!strcmp(m, "auto"))
                o.band_from = o.band_to = 1;
            else if (!strcmp(m, "default,auto"))
                o.band_from = 0, o.band_to = 1;
            else {
                fprintf(stderr, "bench dispersion: --bands takes default, auto or default,auto, not '%s'\n", m);
                return 2;
            }
        } else if (!strcmp(argv[i], "--implicit-sweeps") && more) {
            char v[64];
            snprintf(v, sizeof v, "%s", argv[++i]);
            char *yz = strchr(v, '/');
            if (yz)
                *yz++ = 0;
            if (!yz || wave_tuning_set(&o.sweeps, "implicit-x", v) < 0 ||
                wave_tuning_set(&o.sweeps, "implicit-yz", yz) < 0) {
                fprintf(stderr, "bench dispersion: --implicit-sweeps X/YZ: %s\n", yz ? err_msg() : "no '/'");
                return 2;
            }
        } else if (!strcmp(argv[i], "--band-scale") && more)
            o.band_scale = atof(argv[++i]);
        else if (!strcmp(argv[i], "--receivers") && more)
            o.receivers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--device") && more)
            o.device = argv[++i];
        else {
            fprintf(stderr, "bench dispersion: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!(o.target > 0 && o.target < 1) || !(o.f_peak > 0) || !(o.offset > 0) ||
        !(o.t_max > 0) || o.rate_n < 0 || o.receivers < 1 || !(o.band_scale > 0) ||
        !(o.survey[0] > 0 && o.survey[1] > 0 && o.survey[2] > 0)) {
        fprintf(stderr, "bench dispersion: need 0 < target < 1 and positive f-peak, offset, survey, "
                        "t-max, receivers, band-scale\n");
        return 2;
    }
    log_set_level(LOG_WARN);
    struct sl_device dev;
    if (backend_select(o.device, &dev) < 0) {
        fprintf(stderr, "bench dispersion: %s\n", err_msg());
        return 1;
    }
    /* GPU: a 512^3 padded grid. Not 512 inside the layers: the implicit operator's
     * register sweeps take lines of up to 512 rows, and a 544^3 grid timed its marching
     * fallback instead of the sweeps a production grid of that size runs. */
    if (o.rate_n == 0)
        o.rate_n = dev.kind == SL_DEVICE_CUDA ? 512 - 2 * PML : 96;
    dispersion_table(&o);
    if (tradeoff(&o, &dev) < 0) {
        fprintf(stderr, "bench dispersion: %s\n", err_msg());
        return 1;
    }
    return 0;
}
