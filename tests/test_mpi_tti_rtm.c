/* The rtm job with TTI physics on a decomposed grid under a real mpirun ([propagator]
 * physics = "tti", [runtime] decompose = "domain"; docs/mpi.md): 2, 3 and 4 ranks (4 as
 * split [1, 2, 2]) write the final image of the one-rank run byte for byte, for the full,
 * checkpoint, boundary and random strategies (forward and reverse steps, each with its
 * two exchanges: the fields and the pass-1 products), in a medium whose tilt and epsilon
 * vary across every cut (files, cut per shot and per rank), with CPML layers and the
 * random layers crossing the cuts, and under a free surface.  The shots and the
 * comparison are tests/test_mpi_rtm.c's. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/segy_write.h"
#include "stream/error.h"
#include "tests/mpi_support.h"
#include "tests/support.h"

enum { NX = 20, NY = 14, NZ = 34, NS = 81 };
static const double D = 10.0;

/* theta (degrees) from -30 to 45 down the model, turning with x; epsilon 0.08..0.28 */
static double theta_of(int i, int k) { return -30.0 + 75.0 * k / (NZ - 1) + 6.0 * sin(0.4 * i); }
static double eps_of(int i, int k) { return 0.08 + 0.2 * (0.5 + 0.5 * sin(0.3 * k + 0.2 * i)); }

/* A raw float32 volume of the model grid with F(i, k) at (i, j, k); its path. */
static void write_volume(const char *path, bool two_d, double (*f)(int i, int k))
{
    const int ny = two_d ? 1 : NY;
    size_t n = (size_t)NX * ny * NZ;
    float *v = malloc(n * sizeof *v);
    for (int k = 0; k < NZ; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < NX; i++)
                v[((size_t)k * ny + j) * NX + i] = (float)f(i, k);
    FILE *fp = fopen(path, "wb");
    cr_assert_not_null(fp, "%s", path);
    cr_assert_eq(fwrite(v, sizeof *v, n, fp), n);
    fclose(fp);
    free(v);
}

/* The [model] lines of the TTI medium (files written into DIR), phi 20 degrees in 3D. */
static const char *tti_lines(const char *dir, bool two_d)
{
    static char lines[9000];
    char th[4200], ep[4200];
    snprintf(th, sizeof th, "%s/theta.f32", dir);
    snprintf(ep, sizeof ep, "%s/eps.f32", dir);
    write_volume(th, two_d, theta_of);
    write_volume(ep, two_d, eps_of);
    snprintf(lines, sizeof lines, "theta_file = \"%s\"\nepsilon_file = \"%s\"\ndelta = 0.06\n%s", th, ep,
             two_d ? "" : "phi = 20.0\n");
    return lines;
}

/* Two shots into DIR/shots.segy (1 ms samples, 0.08 s): deterministic traces with
 * energy over the whole record (the image must not be zero anywhere it is compared). */
static void write_shots(const char *dir, bool fs, bool two_d)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/shots.segy", dir);
    struct segy_writer *w;
    cr_assert_eq(segy_writer_open(path, NS, 1000, -100, "seislive test_mpi_tti_rtm", &w), 0, "%s", err_msg());
    float tr[NS];
    for (int shot = 1; shot <= 2; shot++) {
        const int nrec = shot == 1 ? 17 : 9;
        for (int r = 0; r < nrec; r++) {
            struct segy_trace_info t = {.shot = shot, .channel = r + 1};
            t.src[0] = shot == 1 ? 93.7 : 121.0;
            t.src[1] = two_d ? 0.0 : shot == 1 ? 63.0 : 48.5;
            t.src[2] = shot == 1 ? 166.0 : (fs ? 12.0 : 23.0);
            /* shot 1: from the top to the bottom every ~2 planes; shot 2: near the top */
            double z = shot == 1 ? (fs ? 0.35 + r * 1.97 : 0.6 + r * 1.94) : 1.3 + 0.11 * r;
            if (z > NZ - 1)
                z = NZ - 1;
            t.rec[0] = fmod(14.0 + 11.3 * r, 185.0);
            t.rec[1] = two_d ? 0.0 : 7.0 + 9.7 * (r % 13);
            t.rec[2] = D * z;
            for (int k = 0; k < NS; k++)
                tr[k] = (float)(sin(0.31 * k + 1.7 * r + shot) * exp(-0.0004 * (k - 40) * (k - 40)) +
                                0.2 * cos(0.9 * k - r));
            cr_assert_eq(segy_writer_trace(w, &t, tr), 0, "%s", err_msg());
        }
    }
    cr_assert_eq(segy_writer_close(w), 0, "%s", err_msg());
}

static char *write_conf(const char *dir, const char *name, int order, bool fs, bool two_d, const struct mpi_rtm_case *c,
                        const char *runtime)
{
    char text[32768];
    snprintf(text, sizeof text,
             "[job]\nkind = \"rtm\"\n\n"
             "[model]\ntype = \"layered\"\nn = [%d, %d, %d]\nd = [10.0, 10.0, 10.0]\no = [0.0, 0.0, 0.0]\n"
             "layer_depths = [95.0, 211.0]\nlayer_velocities = [1800.0, 2300.0, 2700.0]\n%s\n"
             "[propagator]\nphysics = \"tti\"\norder = %d\nt_max = 0.08\nf_peak = 18.0\npml_width = [5, 6, 4, 5, 6, 5]\n"
             "free_surface = %s\nppw_min = 0.1\n%s\n"
             "[rtm]\nstrategy = %s\nimaging = \"%s\"\naperture = 1000.0\nrandom_width = 7\n\n"
             "[input]\nkind = \"files\"\npaths = [\"%s/shots.segy\"]\n\n"
             "[output]\ndir = \"%s/out_%s\"\npictures = false\n\n"
             "[runtime]\ndevice = \"cpu\"\n%s\n",
             NX, two_d ? 1 : NY, NZ, tti_lines(dir, two_d), order, fs ? "true" : "false", c->prop ? c->prop : "", c->strategy, c->imaging, dir, dir, name, runtime);
    char file[128];
    snprintf(file, sizeof file, "%s.toml", name);
    return test_write_file(dir, file, text);
}

/* Each case: the one-rank image, then its ranks' image; the same bytes. */
static void same_as_one_rank(int order, bool fs, bool two_d, const struct mpi_rtm_case *cases, int ncase)
{
    mpi_need();
    char *dir = test_tmpdir();
    write_shots(dir, fs, two_d);
    mpi_rtm_same_as_one_rank(dir, order, fs, two_d, (size_t)NX * (two_d ? 1 : NY) * NZ, cases, ncase, write_conf);
    test_rmtree(dir);
    free(dir);
}

static const char YZ[] = "split = [1, 2, 2]";

Test(mpi_tti_rtm, every_strategy_cpml_and_random_layers, .timeout = 240)
{
    const struct mpi_rtm_case cases[] = {
        {"\"full\"", "xcorr", 2, "", NULL},
        {"\"checkpoint\"\ncheckpoints = 4", "source", 3, "", NULL},
        {"\"boundary\"", "both", 4, YZ, NULL},
        {"\"random\"", "xcorr", 3, "", NULL},
        {"\"random\"", "receiver", 4, YZ, NULL},
    };
    same_as_one_rank(8, false, false, cases, 5);
    fprintf(stderr, "mpi_tti_rtm: order 8, CPML faces: full, checkpoint, boundary, random on 2, 3, 1 x 2 x 2 ranks: "
            "bitwise the one-rank image\n");
}

Test(mpi_tti_rtm, free_surface_boundary_order_4, .timeout = 240)
{
    const struct mpi_rtm_case cases[] = {
        {"\"boundary\"", "source", 3, "", NULL},
    };
    same_as_one_rank(4, true, false, cases, 1);
    fprintf(stderr, "mpi_tti_rtm: free surface, order 4, boundary on 3 ranks: bitwise the one-rank image\n");
}
