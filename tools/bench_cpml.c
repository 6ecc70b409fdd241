/* bench_cpml — `seislive-bench cpml`: how much the CPML reflects, per layer width,
 * theoretical reflection coefficient (the profile's damping, [propagator] pml_reflection)
 * and storage of its memory variables (wave_params.cpml_memory), on the CPU reference.
 *
 *   seislive-bench cpml [--widths 8,10,12,16,20] [--reflection 1e-4,...] [--memory fp32,bf16]
 *                       [--degrees 2,4] [--order 8] [--f-peak 15] [--op taylor|implicit] [--json]
 *
 * --degrees: the damping profile's polynomial degree ([propagator] pml_degree,
 * kernels/cpml.h; default 2, the reference profile).  --op implicit: the implicit
 * operator ([propagator] operator, kernels/implicit_op.h) instead of the Taylor stencil.
 *
 * The setup is tests/test_wave_physics.c's (cpml_reflection_each_face_40db): a Ricker
 * of 15 Hz peak (fmax 37.5 Hz; --f-peak, which also sets f_ref as the jobs do) at the
 * centre of a 31^3 interior of 10 m cells at 2000 m/s, dt 1 ms, two groups of six
 * receivers: "normal", 100 m from the source towards each face (50 m from the face,
 * normal incidence), and "oblique", three near edges (20 m from two faces) and three
 * near corners (20 m from three), which see the layers at 37 to 47 degrees and the
 * waves that run along them.  The reference is the same run in a domain EXT cells
 * larger on every side, with rigid walls, EXT large enough that its walls echo after
 * both windows.  The window of a width W holds both echoes of the layers: the one from
 * the layers' inner face (the discretisation's reflection) and the one from their rigid
 * outer wall, which arrives 2 W h / v later (what the damping did not take out) at the
 * normal receivers, through two or three walls at the oblique ones (the corner's, the
 * longest path, sqrt(3) (2 W h + 170 m)).  (The test's window, made for 20 layers,
 * ends before the outer wall's echo: it measures the inner face only, which is why it
 * flatters weak damping.)  Reflection = 10 log10 of the energy of (trace - reference)
 * over the reference's, per receiver over its group's window; the table gives the
 * worst and the best receiver of each group.  Rows with bf16 memory also give the
 * difference of their traces from the fp32 row of the same width and coefficient
 * (relative L2 over the six normal traces and in dB), the error of the storage alone.
 * The step's cost grows with the width (the layers' bytes: tools/bench_stencil.c's
 * byte floor, measured there on the GPU). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/propagator.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tools/bench.h"
#include "tools/options.h"

enum { NGROUP = 6, NREC = 2 * NGROUP };
static const double C = 2000, H = 10;

/* Traces (NREC x (NT + 1)) of the reflection setup with W layers (0: the large domain
 * with rigid walls) into TR: the six normal receivers, then the six oblique ones. */
static int traces(const struct sl_device *dev, int order, int op, int w, int ext, double refl, int mem, int deg,
                  double fp, int nt, float *tr)
{
    const double c = C, h = H;
    struct wave_params p = {.n = {31, 31, 31}, .d = {h, h, h}, .order = order, .op = op, .dt = 1e-3,
                            .pml_reflection = refl, .f_ref = fp, .cpml_memory = mem, .pml_degree = deg};
    for (int f = 0; f < 6; f++)
        p.pml[f] = w;
    if (w == 0)
        for (int a = 0; a < 3; a++) {
            p.n[a] += 2 * ext;
            p.o[a] = -ext * h;
        }
    const size_t nn = (size_t)p.n[0] * p.n[1] * p.n[2];
    float *v = malloc(nn * sizeof *v);
    if (!v)
        return err_set(-ENOMEM, "out of memory");
    for (size_t i = 0; i < nn; i++)
        v[i] = (float)c;
    const double src[3] = {150, 150, 150};
    const double rec[NREC][3] = {{50, 150, 150}, {250, 150, 150}, {150, 50, 150}, {150, 250, 150},
                                 {150, 150, 50}, {150, 150, 250}, {20, 20, 150},   {280, 150, 280},
                                 {150, 280, 20}, {20, 20, 20},    {280, 280, 280}, {280, 20, 280}};
    struct wave_sim *s = NULL;
    struct wave_points *ps = NULL, *pr = NULL;
    int rc = wave_create(dev, &p, v, &s);
    free(v);
    if (rc == 0)
        rc = wave_points_create(s, src, 1, WAVE_INTERP_SINC, &ps);
    if (rc == 0)
        rc = wave_points_create(s, &rec[0][0], NREC, WAVE_INTERP_SINC, &pr);
    const double t0 = wavelet_ricker_delay(fp);
    for (int r = 0; r < NREC; r++)
        tr[r * (nt + 1)] = 0;
    for (int it = 0; it < nt && rc == 0; it++) {
        float a = (float)wavelet_ricker(it * p.dt, fp, t0);
        rc = wave_step(s);
        if (rc == 0)
            rc = wave_inject(s, ps, &a, 1, 1.0f, WAVE_INJECT_PHYSICAL);
        if (rc == 0)
            rc = wave_sample(s, pr, tr + it + 1, nt + 1, 0);
    }
    wave_points_destroy(ps);
    wave_points_destroy(pr);
    wave_destroy(s);
    return rc;
}

/* 10 log10 of the energy of A - B over that of B, over N samples. */
static double diff_db(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return 10 * log10(num / den);
}

/* The longest path of an echo of W layers at the receivers of group G (see the top):
 * normal, the near face's outer wall (200 m + 2 W h); oblique, the corner's three walls
 * (each coordinate 170 m + 2 W h from the source's image). */
static double echo_path(int g, int w)
{
    return g == 0 ? 200.0 + 2.0 * w * H : sqrt(3.0) * (170.0 + 2.0 * w * H);
}

/* Steps of group G's window for width W: its latest echo in full (the Ricker's delay
 * 1.5 / fp to its peak, 1.2 / fp after it). */
static int window_steps(int g, int w, double fp)
{
    return (int)((wavelet_ricker_delay(fp) + echo_path(g, w) / C + 1.2 / fp) / 1e-3);
}

/* Cells the reference domain extends on each side so that its walls' first echo at
 * any receiver (normal: 200 m + 2 EXT h of path; oblique, nearest the walls: at least
 * 170 m + 2 EXT h) begins after both windows of width WMAX end (2.7 / fp of wavelet
 * after the echo's start). */
static int reference_ext(int wmax, double fp)
{
    const double tail = 2.7 / fp * C;
    const double need_n = echo_path(0, wmax) + tail - 200.0, need_o = echo_path(1, wmax) + tail - 170.0;
    return (int)ceil((need_n > need_o ? need_n : need_o) / (2.0 * H)) + 1;
}

/* The worst (largest) and best reflection in dB of the six receivers of group G. */
static void group_db(const float *tr, const float *ref, int stride, int g, int nt, double *worst, double *best)
{
    *worst = -1e9;
    *best = 1e9;
    for (int f = g * NGROUP; f < (g + 1) * NGROUP; f++) {
        double db = diff_db(tr + (size_t)f * stride, ref + (size_t)f * stride, nt + 1);
        *worst = db > *worst ? db : *worst;
        *best = db < *best ? db : *best;
    }
}

int bench_cpml(int argc, char **argv)
{
    int widths[16] = {8, 10, 12, 16, 20}, nw = 5, order = 8, degs[8] = {2}, nd = 1;
    double refl[8] = {1e-4}, *rf = refl, fp = 15;
    int op = PROP_OP_TAYLOR;
    int nr = 1, mems[2] = {WAVE_CPML_MEM_FP32, WAVE_CPML_MEM_BF16}, nm = 2;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--widths") && i + 1 < argc) {
            if ((nw = options_ints(argv[++i], widths, 1, 16)) < 0) {
                fprintf(stderr, "seislive-bench: --widths takes 1 to 16 whole numbers separated by commas\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--reflection") && i + 1 < argc) {
            if ((nr = options_doubles(argv[++i], rf, 1, 8)) < 0) {
                fprintf(stderr, "seislive-bench: --reflection takes 1 to 8 numbers in (0, 1) separated by commas\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--memory") && i + 1 < argc) {
            char list[64];
            snprintf(list, sizeof list, "%s", argv[++i]);
            nm = 0;
            for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
                int m = !strcmp(tok, "fp32") ? WAVE_CPML_MEM_FP32 : !strcmp(tok, "bf16") ? WAVE_CPML_MEM_BF16 : -1;
                if (m < 0 || nm >= 2) {
                    fprintf(stderr, "seislive-bench: --memory takes fp32 and/or bf16 (comma separated)\n");
                    return 2;
                }
                mems[nm++] = m;
            }
        } else if (!strcmp(argv[i], "--degrees") && i + 1 < argc) {
            if ((nd = options_ints(argv[++i], degs, 1, 8)) < 0) {
                fprintf(stderr, "seislive-bench: --degrees takes 1 to 8 whole numbers (1..6) separated by commas\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--f-peak") && i + 1 < argc) {
            fp = atof(argv[++i]);
            if (!(fp >= 2 && fp <= 30)) {
                fprintf(stderr, "seislive-bench: --f-peak: %s: must be 2..30 Hz (the 10 m grid's range)\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--op") && i + 1 < argc) {
            ++i;
            op = !strcmp(argv[i], "taylor") ? PROP_OP_TAYLOR : !strcmp(argv[i], "implicit") ? PROP_OP_IMPLICIT : -1;
            if (op < 0) {
                fprintf(stderr, "seislive-bench: --op takes taylor or implicit\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--order") && i + 1 < argc)
            order = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--json"))
            json = true;
        else {
            fprintf(stderr, "cpml: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    for (int w = 0; w < nw; w++)
        if (widths[w] < 1 || widths[w] > 60) {
            fprintf(stderr, "seislive-bench: --widths: %d: must be 1..60\n", widths[w]);
            return 2;
        }
    struct sl_device dev;
    if (backend_select("cpu", &dev) < 0) {
        fprintf(stderr, "cpml: %s\n", err_msg());
        return 1;
    }
    int wmax = 0;
    for (int w = 0; w < nw; w++)
        wmax = widths[w] > wmax ? widths[w] : wmax;
    const int ext = reference_ext(wmax, fp), ntmax = window_steps(1, wmax, fp);
    const size_t nsmax = (size_t)NREC * (ntmax + 1);
    float *ref = malloc(nsmax * sizeof *ref), *t32 = malloc(nsmax * sizeof *t32), *t = malloc(nsmax * sizeof *t),
          *rw = malloc(nsmax * sizeof *rw);
    if (!ref || !t32 || !t || !rw)
        return 1;
    if (traces(&dev, order, op, 0, ext, 1e-4, WAVE_CPML_MEM_FP32, 2, fp, ntmax, ref) < 0) {
        fprintf(stderr, "cpml: reference run: %s\n", err_msg());
        return 1;
    }
    if (json)
        printf("{\"bench\":\"cpml\",\"order\":%d,\"op\":\"%s\",\"f_peak\":%g,\"rows\":[", order,
               op == PROP_OP_IMPLICIT ? "implicit" : "taylor", fp);
    else {
        printf("CPU reference, order %d%s, 31^3 interior of 10 m cells, 2000 m/s, Ricker %g Hz, steps of 1 ms up to "
               "both echoes of the layers (inner face and outer wall); reflection per receiver against a domain %d "
               "cells larger (dB, worst and best of each group of 6: normal = 50 m from each face, oblique = 20 m "
               "from two or three faces); bf16 rows: their normal traces against the fp32 row's\n\n",
               order, op == PROP_OP_IMPLICIT ? " (implicit operator)" : "", fp, ext);
        printf("| width | degree | pml_reflection | memory | normal worst (dB) | normal best | oblique worst (dB) | "
               "oblique best | vs fp32: rel L2 | vs fp32 (dB) |\n");
        printf("| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    }
    int row = 0;
    for (int w = 0; w < nw; w++) {
        const int nt = window_steps(1, widths[w], fp), ntn = window_steps(0, widths[w], fp);
        for (int f = 0; f < NREC; f++) /* the reference cut to this width's longer window */
            memcpy(rw + (size_t)f * (nt + 1), ref + (size_t)f * (ntmax + 1), (nt + 1) * sizeof *rw);
        for (int di = 0; di < nd; di++)
        for (int r = 0; r < nr; r++) {
            bool have32 = false;
            for (int m = 0; m < nm; m++) {
                float *out = mems[m] == WAVE_CPML_MEM_FP32 ? t32 : t;
                if (traces(&dev, order, op, widths[w], 0, rf[r], mems[m], degs[di], fp, nt, out) < 0) {
                    fprintf(stderr, "cpml: width %d: %s\n", widths[w], err_msg());
                    return 1;
                }
                double nworst, nbest, oworst, obest;
                group_db(out, rw, nt + 1, 0, ntn, &nworst, &nbest);
                group_db(out, rw, nt + 1, 1, nt, &oworst, &obest);
                double rl2 = NAN, rdb = NAN;
                if (mems[m] == WAVE_CPML_MEM_FP32)
                    have32 = true;
                else if (have32) {
                    double num = 0, den = 0; /* the normal group over its window */
                    for (int f = 0; f < NGROUP; f++)
                        for (int k = 0; k <= ntn; k++) {
                            const size_t o = (size_t)f * (nt + 1) + k;
                            num += ((double)t[o] - t32[o]) * ((double)t[o] - t32[o]);
                            den += (double)t32[o] * t32[o];
                        }
                    rdb = 10 * log10(num / den);
                    rl2 = pow(10.0, rdb / 20.0);
                }
                const char *mn = mems[m] == WAVE_CPML_MEM_FP32 ? "fp32" : "bf16";
                if (json)
                    printf("%s{\"width\":%d,\"degree\":%d,\"pml_reflection\":%g,\"memory\":\"%s\",\"worst_db\":%.2f,"
                           "\"best_db\":%.2f,\"oblique_worst_db\":%.2f,\"oblique_best_db\":%.2f,"
                           "\"vs_fp32_rel_l2\":%.3g}",
                           row ? "," : "", widths[w], degs[di], rf[r], mn, nworst, nbest, oworst, obest,
                           isnan(rl2) ? -1.0 : rl2);
                else if (isnan(rl2))
                    printf("| %d | %d | %g | %s | %.1f | %.1f | %.1f | %.1f | - | - |\n", widths[w], degs[di], rf[r],
                           mn, nworst, nbest, oworst, obest);
                else
                    printf("| %d | %d | %g | %s | %.1f | %.1f | %.1f | %.1f | %.2e | %.1f |\n", widths[w], degs[di],
                           rf[r], mn, nworst, nbest, oworst, obest, rl2, rdb);
                fflush(stdout);
                row++;
            }
        }
    }
    if (json)
        printf("]}\n");
    free(ref);
    free(t32);
    free(t);
    free(rw);
    return 0;
}
