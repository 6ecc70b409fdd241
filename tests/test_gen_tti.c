/* seislive-gen shots --tti (issue 14): the anisotropy files hold the asked-for values
 * (every rock but the salt anisotropic, one axis for the whole model; THETA 'dip' the
 * normal to the dipping bedding), their smoothed twins are smoothed, survey.toml is a
 * TTI configuration that `seislive check` accepts; bad --tti values are refused naming
 * the option, before anything is written; a small 2D TTI survey is modeled with the TTI
 * propagator (a VTI medium's horizontal move-out is sqrt(1 + 2 epsilon) faster than the
 * isotropic survey's) and the direct wave subtracted with the source's anisotropy. */
#include <criterion/criterion.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support.h"

static struct run_result gen(const char *const *args)
{
    const char *argv[64] = {test_prog("seislive-gen")};
    int i = 1;
    for (; args[i - 1]; i++)
        argv[i] = args[i - 1];
    argv[i] = NULL;
    struct run_result r;
    cr_assert_eq(test_run(argv, 120, &r), 0);
    return r;
}

/* DIR/NAME as N floats (exactly N: the file's size is checked). */
static float *read_f32(const char *dir, const char *name, size_t n)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    float *v = malloc(n * sizeof *v);
    cr_assert_eq(fread(v, sizeof *v, n, f), n, "%s: short", path);
    cr_assert_eq(fgetc(f), EOF, "%s: longer than %zu floats", path, n);
    fclose(f);
    return v;
}

static char *slurp(const char *dir, const char *name)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void check_accepts(const char *dir)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/survey.toml", dir);
    const char *argv[] = {test_prog("seislive"), "check", "-q", "-c", path, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_eq(r.status, 0, "seislive check %s: %s%s", path, r.out, r.err);
    test_run_free(&r);
}

enum { NX = 40, NY = 5, NZ = 30 };
#define AT(a, ix, iy, iz) (a)[((size_t)(iz) * NY + (iy)) * NX + (ix)]

Test(gen_tti, files_hold_the_anisotropy_and_check_accepts_the_survey)
{
    char *dir = test_tmpdir();
    char out[4200];
    snprintf(out, sizeof out, "%s/s", dir);
    /* a layer at 100 m; a salt dome centred at x 200, y 20 from 150 m down, 60 m across
     * in x; /bin/true stands in for the modeling (only the files are looked at) */
    struct run_result r = gen((const char *[]){
        "shots", "-o", out, "--n", "40,5,30", "--d", "10", "--v0", "1500", "--layer", "100:2000",
        "--dip", "none", "--salt", "200,20,150,60,100,80:4000", "--smooth", "2", "--tti", "0.2,0.1,30,20",
        "--seislive", "/bin/true", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    test_run_free(&r);
    const size_t n = (size_t)NX * NY * NZ;
    float *v = read_f32(out, "model.f32", n), *e = read_f32(out, "epsilon.f32", n);
    float *d = read_f32(out, "delta.f32", n), *th = read_f32(out, "theta.f32", n);
    float *ph = read_f32(out, "phi.f32", n);
    /* above and below the interface: the velocity steps, the anisotropy does not */
    const int above[3] = {10, 2, 5}, below[3] = {10, 2, 15}, salt[3] = {20, 2, 20};
    cr_assert_eq(AT(v, above[0], above[1], above[2]), 1500.0f);
    cr_assert_eq(AT(v, below[0], below[1], below[2]), 2000.0f);
    const int *rock[2] = {above, below};
    for (int k = 0; k < 2; k++) {
        const int *p = rock[k];
        cr_assert_eq(AT(e, p[0], p[1], p[2]), 0.2f, "epsilon at z = %d m", p[2] * 10);
        cr_assert_eq(AT(d, p[0], p[1], p[2]), 0.1f, "delta at z = %d m", p[2] * 10);
    }
    /* the salt is isotropic */
    cr_assert_eq(AT(v, salt[0], salt[1], salt[2]), 4000.0f);
    cr_assert_eq(AT(e, salt[0], salt[1], salt[2]), 0.0f);
    cr_assert_eq(AT(d, salt[0], salt[1], salt[2]), 0.0f);
    /* one axis everywhere, the salt included (no tilt jump) */
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(th[i], 30.0f, "theta at point %zu: %g", i, (double)th[i]);
        cr_assert_eq(ph[i], 20.0f, "phi at point %zu: %g", i, (double)ph[i]);
    }
    /* the twins are smoothed like model_smooth.f32: the salt's edge blurs, far from it
     * nothing changes */
    float *es = read_f32(out, "epsilon_smooth.f32", n), *ds = read_f32(out, "delta_smooth.f32", n);
    float *ths = read_f32(out, "theta_smooth.f32", n), *vs = read_f32(out, "model_smooth.f32", n);
    cr_assert_eq(AT(es, 5, 2, 5), 0.2f);
    cr_assert_eq(AT(ds, 5, 2, 5), 0.1f);
    cr_assert_eq(AT(es, salt[0], salt[1], salt[2]), 0.0f, "the salt's middle is 5 cells from its edge");
    const float edge = AT(es, 25, 2, 20), vedge = AT(vs, 25, 2, 20); /* the salt's edge in x */
    cr_assert(edge > 0.0f && edge < 0.2f, "smoothed epsilon at the salt's edge: %g", (double)edge);
    cr_assert(vedge > 2000.0f && vedge < 4000.0f, "smoothed velocity at the salt's edge: %g", (double)vedge);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(ths[i], 30.0f);
    /* survey.toml models TTI from these files on the default device (TTI runs on CPUs and
     * CUDA GPUs alike), and seislive accepts it */
    const char *toml = slurp(out, "survey.toml");
    const char *want[] = {"physics = \"tti\"", "epsilon_file = \"epsilon.f32\"", "delta_file = \"delta.f32\"",
                          "theta_file = \"theta.f32\"", "phi_file = \"phi.f32\"", "device = \"auto\""};
    for (int k = 0; k < 6; k++)
        cr_assert_not_null(strstr(toml, want[k]), "survey.toml lacks %s:\n%s", want[k], toml);
    check_accepts(out);
    const char *json = slurp(out, "model.json");
    const char *jwant[] = {"\"physics\": \"tti\"", "\"epsilon\": 0.2,", "\"delta\": 0.1,", "\"theta_deg\": 30,",
                           "\"phi_deg\": 20,", "\"isotropic\": \"the salt", "\"epsilon_smooth.f32\""};
    for (int k = 0; k < 7; k++)
        cr_assert_not_null(strstr(json, jwant[k]), "model.json lacks %s:\n%s", jwant[k], json);
    free(v), free(e), free(d), free(th), free(ph), free(es), free(ds), free(ths), free(vs);
    test_rmtree(dir);
    free(dir);
}

/* THETA 'dip': the axis normal to the bedding of a layer dipping 15 degrees toward +x is
 * tilted 15 degrees toward -x (theta = -15), everywhere. */
Test(gen_tti, dip_tilts_the_axis_normal_to_the_bedding)
{
    char *dir = test_tmpdir();
    char out[4200];
    snprintf(out, sizeof out, "%s/s", dir);
    struct run_result r = gen((const char *[]){
        "shots", "-o", out, "--n", "40,5,30", "--d", "10", "--v0", "1800", "--layer", "none", "--dip",
        "100:15:2500", "--salt", "none", "--tti", "0.15,0.05,dip", "--seislive", "/bin/true", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    test_run_free(&r);
    const size_t n = (size_t)NX * NY * NZ;
    float *v = read_f32(out, "model.f32", n), *th = read_f32(out, "theta.f32", n), *e = read_f32(out, "epsilon.f32", n);
    /* the interface at x = 200 m: 100 + 200 tan 15 = 153.6 m */
    cr_assert_eq(AT(v, 20, 2, 15), 1800.0f);
    cr_assert_eq(AT(v, 20, 2, 16), 2500.0f);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(th[i], -15.0f, "theta at point %zu: %g", i, (double)th[i]);
        cr_assert_eq(e[i], 0.15f, "epsilon at point %zu: %g", i, (double)e[i]);
    }
    cr_assert_not_null(strstr(slurp(out, "model.json"), "normal to the dipping interface"));
    check_accepts(out);
    free(v), free(th), free(e);
    test_rmtree(dir);
    free(dir);
}

Test(gen_tti, bad_values_refused_naming_the_option)
{
    char *dir = test_tmpdir();
    char out[4200];
    snprintf(out, sizeof out, "%s/s", dir);
    const struct {
        const char *tti, *extra, *want;
    } bad[] = {
        {"nan,0.1", NULL, "--tti nan,0.1: EPS (epsilon) nan is out of range"},
        {"0.2,inf", NULL, "DELTA (delta) inf is out of range"},
        {"-0.5,0", NULL, "EPS (epsilon) -0.5 is out of range (a finite number > -0.5)"},
        {"0.2,-0.7", NULL, "DELTA (delta) -0.7 is out of range"},
        {"0.2,0.1,90.5", NULL, "THETA (tilt) 90.5 is out of range (-90 to 90 degrees"},
        {"0.2,0.1,-91", NULL, "THETA (tilt) -91 is out of range"},
        {"0.2,0.1,nan", NULL, "THETA (tilt) nan is out of range"},
        {"0.2,0.1,10,361", NULL, "PHI (azimuth) 361 is out of range (-360 to 360 degrees)"},
        {"0.2,0.1,ten", NULL, "THETA (tilt) 'ten' is not a number"},
        {"0.2", NULL, "--tti 0.2: expected EPS,DELTA[,THETA[,PHI]]"},
        {"0.2,0.1,10,20,30", NULL, "expected EPS,DELTA[,THETA[,PHI]]"},
        {"0.2,,10", NULL, "expected EPS,DELTA[,THETA[,PHI]]"},
        {"0.2,0.1,dip,10", NULL, "no PHI with THETA 'dip'"},
        {"0.9,0", NULL, "--tti 0.9,0: EPS and DELTA too far apart for the TTI propagator"},
        {"0.2,0.1,dip", "none", "--dip none leaves no dipping interface"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        struct run_result r = gen((const char *[]){"shots", "-o", out, "--n", "20,1,20", "--tti", bad[k].tti,
                                                   "--dip", bad[k].extra ? bad[k].extra : "100:5:2500",
                                                   "--seislive", "/bin/true", NULL});
        cr_assert_eq(r.status, 2, "--tti %s: status %d", bad[k].tti, r.status);
        cr_assert_not_null(strstr(r.err, bad[k].want), "--tti %s: '%s' lacks '%s'", bad[k].tti, r.err, bad[k].want);
        test_run_free(&r);
        cr_assert_neq(access(out, F_OK), 0, "--tti %s: %s written", bad[k].tti, out);
    }
    /* a --model file has no dipping interface to take the tilt from */
    char *model = test_write_file(dir, "m.f32", "");
    struct run_result r = gen((const char *[]){"shots", "-o", out, "--n", "20,1,20", "--model", model, "--tti",
                                               "0.2,0.1,dip", "--seislive", "/bin/true", NULL});
    cr_assert_eq(r.status, 2);
    cr_assert_not_null(strstr(r.err, "a --model file has no --dip interface"), "%s", r.err);
    test_run_free(&r);
    free(model);
    test_rmtree(dir);
    free(dir);
}

/* The NTR traces of DIR/shots.segy (one shot), NS samples each. */
static float *read_shots(const char *dir, int want_ntr, int *ns)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/shots.segy", dir);
    segy_file *fp = segy_open(path, "rb");
    cr_assert_not_null(fp, "%s", path);
    char bin[SEGY_BINARY_HEADER_SIZE];
    cr_assert_eq(segy_binheader(fp, bin), SEGY_OK);
    *ns = segy_samples(bin);
    const int fmt = segy_format(bin);
    long trace0 = segy_trace0(bin);
    int bsize = segy_trsize(fmt, *ns), ntr = 0;
    cr_assert_eq(segy_traces(fp, &ntr, trace0, bsize), SEGY_OK);
    cr_assert_eq(ntr, want_ntr);
    float *tr = malloc((size_t)ntr * *ns * sizeof *tr);
    for (int t = 0; t < ntr; t++) {
        cr_assert_eq(segy_readtrace(fp, t, tr + (size_t)t * *ns, trace0, bsize), SEGY_OK);
        segy_to_native(fmt, *ns, tr + (size_t)t * *ns);
    }
    segy_close(fp);
    for (size_t i = 0; i < (size_t)ntr * *ns; i++)
        cr_assert(isfinite(tr[i]), "%s: sample %zu not finite", path, i);
    return tr;
}

/* Time (s) of the largest sample of TR (NS samples of DT), parabolic sub-sample. */
static double peak_time(const float *tr, int ns, double dt)
{
    int b = 1;
    for (int i = 1; i < ns - 1; i++)
        if (tr[i] > tr[b])
            b = i;
    double den = tr[b - 1] - 2.0 * tr[b] + tr[b + 1];
    double frac = den < 0 ? 0.5 * (tr[b - 1] - tr[b + 1]) / den : 0;
    return (b + frac) * dt;
}

/* A homogeneous 2D survey (101 x 1 x 41 cells of 10 m, 2000 m/s), one shot at 200 m
 * depth, receivers at its depth 300 m and 700 m away; TTI (NULL: isotropic). */
static float *survey_2d(const char *dir, const char *name, const char *tti, const char *direct, int *ns)
{
    char out[4200];
    snprintf(out, sizeof out, "%s/%s", dir, name);
    const char *args[40] = {"shots", "-o", out, "--n", "101,1,41", "--d", "10", "--v0", "2000", "--layer", "none",
                            "--dip", "none", "--salt", "none", "--shots", "1", "--shot-origin", "100,0,200",
                            "--receivers", "2", "--rx-origin", "400,0,200", "--rx-spacing", "400", "--t-max", "0.8",
                            "--f-peak", "10", "--pml", "20", "--direct", direct, "--device", "cpu"};
    int k = 0;
    while (args[k])
        k++;
    if (tti) {
        args[k++] = "--tti";
        args[k++] = tti;
    }
    args[k] = NULL;
    struct run_result r = gen(args);
    cr_assert_eq(r.status, 0, "%s: status %d: %s", name, r.status, r.err);
    test_run_free(&r);
    return read_shots(out, 2, ns);
}

Test(gen_tti, small_2d_survey_is_modeled_tti, .timeout = 120)
{
    char *dir = test_tmpdir();
    int ns, ns2;
    const double dt = 0.002; /* --dt default */
    /* VTI: along the horizontal the qP wave travels at v_pz sqrt(1 + 2 epsilon); the
     * move-out between the receivers (400 m apart) cancels the wavelet's delay */
    float *iso = survey_2d(dir, "iso", NULL, "keep", &ns);
    float *vti = survey_2d(dir, "vti", "0.2,0.1", "keep", &ns2);
    cr_assert_eq(ns, ns2);
    double mo_iso = peak_time(iso + ns, ns, dt) - peak_time(iso, ns, dt);
    double mo_vti = peak_time(vti + ns, ns, dt) - peak_time(vti, ns, dt);
    double ratio = mo_iso / mo_vti, want = sqrt(1.0 + 2 * 0.2);
    cr_log_info("move-out isotropic %.5f s, VTI %.5f s: ratio %.5f, sqrt(1 + 2 eps) %.5f", mo_iso, mo_vti, ratio,
                want);
    cr_assert_lt(fabs(400 / mo_iso / 2000 - 1), 0.01, "isotropic speed %g m/s", 400 / mo_iso);
    cr_assert_lt(fabs(ratio / want - 1), 0.01, "speed ratio %g, want %g", ratio, want);
    /* tilted 30 degrees: the direct wave modeled with the source's anisotropy removes the
     * whole record of a homogeneous medium (an isotropic direct wave would not) */
    float *keep = survey_2d(dir, "keep", "0.2,0.1,30", "keep", &ns);
    float *sub = survey_2d(dir, "sub", "0.2,0.1,30", "subtract", &ns2);
    cr_assert_eq(ns, ns2);
    double amax = 0, rmax = 0, dmax = 0;
    for (size_t i = 0; i < 2 * (size_t)ns; i++) {
        amax = fmax(amax, fabs(keep[i]));
        rmax = fmax(rmax, fabs(sub[i]));
        dmax = fmax(dmax, fabs((double)keep[i] - vti[i]));
    }
    cr_log_info("tilted 30 degrees: record max %.3g, after subtracting the direct wave %.3g", amax, rmax);
    cr_assert_gt(amax, 0);
    cr_assert_lt(rmax, 1e-4 * amax, "direct wave left: %g of %g", rmax, amax);
    cr_assert_gt(dmax, 0.05 * amax, "the tilt changed the records by only %g of %g", dmax, amax);
    free(iso), free(vti), free(keep), free(sub);
    test_rmtree(dir);
    free(dir);
}
