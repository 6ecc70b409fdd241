/* bench_cpml — `seislive-bench cpml`: how much the CPML reflects, per layer width,
 * theoretical reflection coefficient (the profile's damping, [propagator] pml_reflection)
 * and storage of its memory variables (wave_params.cpml_memory), on the CPU reference.
 *
 *   seislive-bench cpml [--widths 8,10,12,16,20] [--reflection 1e-4,...] [--memory fp32,bf16]
 *                       [--degrees 2,4] [--order 8] [--json]
 *
 * --degrees: the damping profile's polynomial degree ([propagator] pml_degree,
 * kernels/cpml.h; default 2, the reference).
 *
 * The setup is tests/test_wave_physics.c's (cpml_reflection_each_face_40db): a Ricker
 * of 15 Hz peak (fmax 37.5 Hz) at the centre of a 31^3 interior of 10 m cells at 2000
 * m/s, six receivers 100 m from it towards each face (50 m from the face), dt 1 ms; the
 * reference is the same run in a domain EXT = (widest layer + 20) cells larger on every
 * side, with rigid walls.  The window of a width W holds both echoes of the layers: the
 * one from the layers' inner face (the discretisation's reflection) and the one from
 * their rigid outer wall, which arrives 2 W h / v later (what the damping did not take
 * out), and ends before the reference's own walls echo.  (The test's window, made for
 * 20 layers, ends before the outer wall's echo: it measures the inner face only, which
 * is why it flatters weak damping.)  Reflection = 10 log10 of the energy of (trace -
 * reference) over the reference's, per face; the table gives the worst and the best
 * face.  Rows with bf16 memory also give the difference of their traces from
 * the fp32 row of the same width and coefficient (relative L2 over all six traces and
 * in dB), the error of the storage alone.  The step's cost grows with the width (the
 * layers' bytes: tools/bench_stencil.c's byte floor, measured there on the GPU). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/backend.h"
#include "kernels/wave.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "tools/bench.h"
#include "tools/options.h"

enum { NREC = 6 };

/* Traces (NREC x (NT + 1)) of the reflection setup with W layers (0: the large domain
 * with rigid walls) into TR. */
static int traces(const struct sl_device *dev, int order, int w, int ext, double refl, int mem, int deg, int nt,
                  float *tr)
{
    const double c = 2000, fp = 15, h = 10;
    struct wave_params p = {.n = {31, 31, 31}, .d = {h, h, h}, .order = order, .dt = 1e-3,
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
    const double rec[NREC][3] = {{50, 150, 150}, {250, 150, 150}, {150, 50, 150},
                                 {150, 250, 150}, {150, 150, 50}, {150, 150, 250}};
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

/* Steps of the window of width W (see the top): the near face's echo (200 m of path)
 * and the outer wall's (2 W h more) in full. */
static int window_steps(int w)
{
    return (int)((wavelet_ricker_delay(15.0) + (200.0 + 2.0 * w * 10.0) / 2000.0 + 1.2 / 15.0) / 1e-3);
}

int bench_cpml(int argc, char **argv)
{
    int widths[16] = {8, 10, 12, 16, 20}, nw = 5, order = 8, degs[8] = {2}, nd = 1;
    double refl[8] = {1e-4}, *rf = refl;
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
    /* the reference's walls echo after 200 + 20 EXT m of path; the widest window ends
     * 200 + 20 wmax m + 2.7 / fp of wavelet (at 2000 m/s: 360 m) after the source */
    const int ext = wmax + 20, ntmax = window_steps(wmax);
    float *ref = malloc((size_t)NREC * (ntmax + 1) * sizeof *ref), *t32 = malloc((size_t)NREC * (ntmax + 1) * sizeof *t32),
          *t = malloc((size_t)NREC * (ntmax + 1) * sizeof *t), *rw = malloc((size_t)NREC * (ntmax + 1) * sizeof *rw);
    if (!ref || !t32 || !t || !rw)
        return 1;
    if (traces(&dev, order, 0, ext, 1e-4, WAVE_CPML_MEM_FP32, 2, ntmax, ref) < 0) {
        fprintf(stderr, "cpml: reference run: %s\n", err_msg());
        return 1;
    }
    if (json)
        printf("{\"bench\":\"cpml\",\"order\":%d,\"rows\":[", order);
    else {
        printf("CPU reference, order %d, 31^3 interior of 10 m cells, 2000 m/s, Ricker 15 Hz, steps of 1 ms up to "
               "both echoes of the layers (inner face and outer wall); reflection per face against a domain %d "
               "cells larger (dB, worst and best of the 6 faces); bf16 rows: their traces against the fp32 row's\n\n",
               order, ext);
        printf("| width | degree | pml_reflection | memory | worst face (dB) | best face (dB) | vs fp32: rel L2 | "
               "vs fp32 (dB) |\n");
        printf("| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |\n");
    }
    int row = 0;
    for (int w = 0; w < nw; w++) {
        const int nt = window_steps(widths[w]);
        const size_t ns = (size_t)NREC * (nt + 1);
        for (int f = 0; f < NREC; f++) /* the reference cut to this window */
            memcpy(rw + (size_t)f * (nt + 1), ref + (size_t)f * (ntmax + 1), (nt + 1) * sizeof *rw);
        for (int di = 0; di < nd; di++)
        for (int r = 0; r < nr; r++) {
            bool have32 = false;
            for (int m = 0; m < nm; m++) {
                float *out = mems[m] == WAVE_CPML_MEM_FP32 ? t32 : t;
                if (traces(&dev, order, widths[w], 0, rf[r], mems[m], degs[di], nt, out) < 0) {
                    fprintf(stderr, "cpml: width %d: %s\n", widths[w], err_msg());
                    return 1;
                }
                double worst = -1e9, best = 1e9;
                for (int f = 0; f < NREC; f++) {
                    double db = diff_db(out + f * (nt + 1), rw + f * (nt + 1), nt + 1);
                    worst = db > worst ? db : worst;
                    best = db < best ? db : best;
                }
                double rl2 = NAN, rdb = NAN;
                if (mems[m] == WAVE_CPML_MEM_FP32)
                    have32 = true;
                else if (have32) {
                    rdb = diff_db(t, t32, ns);
                    rl2 = pow(10.0, rdb / 20.0);
                }
                const char *mn = mems[m] == WAVE_CPML_MEM_FP32 ? "fp32" : "bf16";
                if (json)
                    printf("%s{\"width\":%d,\"degree\":%d,\"pml_reflection\":%g,\"memory\":\"%s\",\"worst_db\":%.2f,"
                           "\"best_db\":%.2f,\"vs_fp32_rel_l2\":%.3g}", row ? "," : "", widths[w], degs[di], rf[r], mn,
                           worst, best, isnan(rl2) ? -1.0 : rl2);
                else if (isnan(rl2))
                    printf("| %d | %d | %g | %s | %.1f | %.1f | - | - |\n", widths[w], degs[di], rf[r], mn, worst, best);
                else
                    printf("| %d | %d | %g | %s | %.1f | %.1f | %.2e | %.1f |\n", widths[w], degs[di], rf[r], mn, worst,
                           best, rl2, rdb);
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
