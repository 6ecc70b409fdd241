/* The TTI model job on a decomposed grid under a real mpirun ([propagator] physics =
 * "tti", [runtime] decompose = "domain"; docs/mpi.md): 2, 3 and 4 ranks (z slabs, and a
 * y + z split [1, 2, 2]) write the SEG-Y file of the one-rank run byte for byte, in a
 * medium whose tilt, azimuth and epsilon vary with depth and x (files) across every cut,
 * with the CPML layers of the x and y faces (and their anisotropy taper) crossing the
 * cuts, under a free surface, in 2D, orders 4, 8 and 16, with receivers and sources whose
 * support straddles a cut.  The exchange runs twice per step (the fields, the pass-1
 * products: kernels/tti_internal.h); a missing one would change the traces
 * (tests/test_tti_subdomain.c shows it in one process). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi_support.h"
#include "tests/support.h"

enum { NX = 20, NY = 18, NZ = 34 };

/* A raw float32 file of the model grid (NY = 1 in 2D) with F(i, k) at (i, j, k). */
static char *write_volume(const char *dir, const char *name, bool two_d, double (*f)(int i, int k))
{
    const int ny = two_d ? 1 : NY;
    size_t n = (size_t)NX * ny * NZ;
    float *v = malloc(n * sizeof *v);
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < NX; i++)
                v[((size_t)k * ny + j) * NX + i] = (float)f(i, k);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    cr_assert_not_null(fp, "%s", path);
    cr_assert_eq(fwrite(v, sizeof *v, n, fp), n);
    fclose(fp);
    free(v);
    return strdup(path);
}

/* theta (degrees) from -35 to 50 down the model, turning with x; phi 20..200 degrees;
 * epsilon 0.08..0.28 */
static double theta_of(int i, int k) { return -35.0 + 85.0 * k / (NZ - 1) + 6.0 * sin(0.4 * i); }
static double phi_of(int i, int k) { return 20.0 + 5.3 * k + 2.0 * i; }
static double eps_of(int i, int k) { return 0.08 + 0.2 * (0.5 + 0.5 * sin(0.3 * k + 0.2 * i)); }

/* The layered v_pz model of tests/test_mpi_model.c, the TTI files above, delta 0.05;
 * receivers at depths every ~2 cells from top to bottom at varied x, y. */
static char *write_conf(const char *dir, const char *name, int order, bool fs, bool two_d, const char *runtime)
{
    char rec[4096] = "", src[256];
    for (int i = 0; i < 17; i++) {
        double z = fs ? 0.35 + i * 1.97 : 0.6 + i * 1.94;
        if (z > NZ - 1)
            z = NZ - 1;
        double x = 20 + 17.3 * i, y = two_d ? 0.0 : 5 + 10.1 * (i % 17);
        char one[128];
        snprintf(one, sizeof one, "%s[%.2f, %.2f, %.2f]", i ? ", " : "", fmod(x, 190.0), y, 10.0 * z);
        strcat(rec, one);
    }
    snprintf(src, sizeof src, "[[93.7, %s, 166.0], [121.0, %s, 79.0]]", two_d ? "0.0" : "93.0",
             two_d ? "0.0" : "88.5");
    const char *tag = two_d ? "2d" : "3d";
    char fn[3][32];
    snprintf(fn[0], sizeof fn[0], "theta_%s.f32", tag);
    snprintf(fn[1], sizeof fn[1], "phi_%s.f32", tag);
    snprintf(fn[2], sizeof fn[2], "eps_%s.f32", tag);
    char *th = write_volume(dir, fn[0], two_d, theta_of), *ph = two_d ? NULL : write_volume(dir, fn[1], two_d, phi_of),
         *ep = write_volume(dir, fn[2], two_d, eps_of);
    char phi_line[4200] = "";
    if (ph) /* 2D keeps phi = 0 (docs/tti.md) */
        snprintf(phi_line, sizeof phi_line, "phi_file = \"%s\"\n", ph);
    char text[16384];
    snprintf(text, sizeof text,
             "[job]\nkind = \"model\"\n\n"
             "[model]\ntype = \"layered\"\nn = [%d, %d, %d]\nd = [10.0, 10.0, 10.0]\no = [0.0, 0.0, 0.0]\n"
             "layer_depths = [95.0, 211.0]\nlayer_velocities = [1800.0, 2300.0, 2700.0]\n"
             "theta_file = \"%s\"\n%sepsilon_file = \"%s\"\ndelta = 0.05\n\n"
             "[propagator]\nphysics = \"tti\"\norder = %d\nt_max = 0.1\nf_peak = 18.0\n"
             "pml_width = [5, 6, 4, 5, 6, 5]\nfree_surface = %s\nppw_min = 0.1\n\n"
             "[acquisition]\nsources = %s\nreceivers = [%s]\n\n"
             "[runtime]\ndevice = \"cpu\"\n%s\n",
             NX, two_d ? 1 : NY, NZ, th, phi_line, ep, order, fs ? "true" : "false", src, rec, runtime);
    free(th);
    free(ph);
    free(ep);
    return test_write_file(dir, name, text);
}

/* One-rank reference (decompose = "none"), then NP[k] ranks with RT[k]; same bytes. */
static void same_as_one_rank(const char *dir, int order, bool fs, bool two_d, const int *np, const char *const *rt,
                             int nrun)
{
    char *conf = write_conf(dir, "one.toml", order, fs, two_d, "decompose = \"none\"");
    char ref[4096];
    snprintf(ref, sizeof ref, "%s/one_o%d.segy", dir, order);
    const char *argv[] = {test_prog("seislive"), "model", "-c", conf, "-o", ref, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_eq(r.status, 0, "one rank, order %d: exit %d: %s", order, r.status, r.err);
    test_run_free(&r);
    size_t nref, nbytes;
    float *tr = mpi_read_segy(ref, &nref);
    double peak = 0;
    for (size_t i = 0; i < nref; i++)
        peak = fmax(peak, fabs(tr[i]));
    cr_assert(peak > 0 && isfinite(peak), "order %d: the reference traces are zero or not finite", order);
    free(tr);
    char *want = mpi_slurp(ref, &nbytes);
    for (int k = 0; k < nrun; k++) {
        char name[64], out[4096];
        snprintf(name, sizeof name, "np%d.toml", np[k]);
        char *c = write_conf(dir, name, order, fs, two_d, rt[k]);
        snprintf(out, sizeof out, "%s/np%d_o%d.segy", dir, np[k], order);
        const char *args[] = {"model", "-c", c, "-o", out, NULL};
        cr_assert_eq(mpi_run(np[k], args, 60, &r), 0);
        cr_assert_eq(r.status, 0, "%d ranks, order %d (%s): exit %d: %s", np[k], order, rt[k], r.status, r.err);
        cr_assert_not_null(strstr(r.err, "twice per step"), "the TTI exchange is announced: %s", r.err);
        test_run_free(&r);
        char what[512];
        snprintf(what, sizeof what, "%d ranks (%s), order %d%s%s", np[k], rt[k], order, fs ? ", free surface" : "",
                 two_d ? ", 2D" : "");
        mpi_same_segy(ref, out, want, nbytes, "TTI traces", what);
        free(c);
    }
    free(want);
    free(conf);
}

static const int NP[3] = {2, 3, 4};
static const char *const ZSLABS[3] = {"decompose = \"domain\"", "decompose = \"domain\"", "decompose = \"domain\""};

Test(mpi_tti_model, cpml_z_and_y_cuts_orders_4_8, .timeout = 200)
{
    mpi_need();
    char *dir = test_tmpdir();
    const char *rt[3] = {"decompose = \"domain\"", "decompose = \"domain\"",
                         "decompose = \"domain\"\nsplit = [1, 2, 2]"};
    same_as_one_rank(dir, 4, false, false, NP, rt, 3);
    same_as_one_rank(dir, 8, false, false, NP, rt, 3);
    fprintf(stderr, "mpi_tti_model cpml: 2, 3, 4 (1 x 2 x 2) ranks, orders 4, 8: bitwise one rank's traces\n");
    test_rmtree(dir);
    free(dir);
}

Test(mpi_tti_model, free_surface_and_2d, .timeout = 200)
{
    mpi_need();
    char *dir = test_tmpdir();
    same_as_one_rank(dir, 8, true, false, NP, ZSLABS, 3);
    same_as_one_rank(dir, 16, true, true, NP, ZSLABS, 3);
    fprintf(stderr, "mpi_tti_model: free surface (3D order 8, 2D order 16), 2, 3, 4 ranks: bitwise one rank's traces\n");
    test_rmtree(dir);
    free(dir);
}

/* `seislive check --ranks 4` of a TTI model: each z cut sends 4 planes of the padded x-y
 * section, 4 floats a cell each step (p and q after it, their two pass-1 products inside
 * it), counted by hand. */
Test(mpi_tti_model, check_counts_both_exchanges, .timeout = 60)
{
    char *dir = test_tmpdir();
    char *c = test_write_file(dir, "c.toml",
        "[job]\nkind = \"model\"\n[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [30, 24, 28]\n"
        "d = [10.0, 10.0, 10.0]\nepsilon = 0.2\ndelta = 0.1\ntheta = 30.0\n[propagator]\nphysics = \"tti\"\n"
        "order = 8\nt_max = 0.1\nf_peak = 15.0\npml_width = [6, 5, 7, 4, 5, 6]\n"
        "[acquisition]\nsources = [[120.0, 101.0, 113.3]]\nreceivers = [[50.0, 50.0, 20.0]]\n"
        "[runtime]\ndevice = \"cpu\"\ndecompose = \"domain\"\n");
    const char *argv[] = {test_prog("seislive"), "check", "-c", c, "--ranks", "4", NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    const double face_kib = 4.0 * 41 * 35 * 4 * 4 / 1024;
    char want[128];
    snprintf(want, sizeof want, "halo per step: %.1f KiB sent by all ranks", 6 * face_kib);
    cr_assert_not_null(strstr(r.out, want), "want \"%s\" in %s", want, r.out);
    test_run_free(&r);
    test_rmtree(dir);
    free(dir);
    free(c);
}
