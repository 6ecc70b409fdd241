/* The rtm job on a decomposed grid under a real mpirun ([runtime] decompose = "domain",
 * docs/mpi.md): 2, 3 and 4 ranks (4 also as split [1, 2, 2]) write the final image of
 * the one-rank run (decompose = "none") byte for byte, for every strategy (full,
 * checkpoint binomial and uniform, boundary, random, auto) and every imaging condition
 * (xcorr, source, receiver, both), orders 4 to 16, with the cuts crossing the CPML
 * layers of the x and y faces, the random layers of the random strategy, under a free
 * surface, and in 2D.  Two shots per run: one whose source sits near the middle of the
 * grid and whose receivers lie every ~2 planes from top to bottom (the supports of some
 * straddle every cut, some reach into the layers), one shallow; so the adjoint injection
 * of the data, the source injection, the halo exchange of both wavefields, the per-rank
 * strips, checkpoints and random layers and the gathering of the accumulators before the
 * imaging condition all have to be the one-rank run's for the bytes to match.  SIGTERM to
 * mpirun in the middle of a shot: both ranks leave it at the same step and rank 0 saves
 * the state (no shot in it).  A model grid too thin for
 * the ranks is refused at start by every rank, with the reason. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/segy_write.h"
#include "stream/error.h"
#include "tests/mpi_support.h"
#include "tests/support.h"

enum { NX = 20, NY = 14, NZ = 34, NS = 81 };
static const double D = 10.0;

/* Two shots into DIR/shots.segy (1 ms samples, 0.08 s): deterministic traces with
 * energy over the whole record (the image must not be zero anywhere it is compared). */
static void write_shots_ns(const char *dir, bool fs, bool two_d, int ns);
static void write_shots(const char *dir, bool fs, bool two_d) { write_shots_ns(dir, fs, two_d, NS); }

/* The same with NS_ samples (the SIGTERM test's longer record, so a shot lasts seconds). */
static void write_shots_ns(const char *dir, bool fs, bool two_d, int ns)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/shots.segy", dir);
    struct segy_writer *w;
    cr_assert_eq(segy_writer_open(path, ns, 1000, -100, "seislive test_mpi_rtm", &w), 0, "%s", err_msg());
    float tr[ns];
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
            for (int k = 0; k < ns; k++)
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
    char text[8192];
    snprintf(text, sizeof text,
             "[job]\nkind = \"rtm\"\n\n"
             "[model]\ntype = \"layered\"\nn = [%d, %d, %d]\nd = [10.0, 10.0, 10.0]\no = [0.0, 0.0, 0.0]\n"
             "layer_depths = [95.0, 211.0]\nlayer_velocities = [1800.0, 2300.0, 2700.0]\n\n"
             "[propagator]\norder = %d\nt_max = 0.08\nf_peak = 18.0\npml_width = [5, 6, 4, 5, 6, 5]\n"
             "free_surface = %s\nppw_min = 0.1\n%s\n"
             "[rtm]\nstrategy = %s\nimaging = \"%s\"\naperture = 1000.0\nrandom_width = 7\n\n"
             "[input]\nkind = \"files\"\npaths = [\"%s/shots.segy\"]\n\n"
             "[output]\ndir = \"%s/out_%s\"\npictures = false\n\n"
             "[runtime]\ndevice = \"cpu\"\n%s\n",
             NX, two_d ? 1 : NY, NZ, order, fs ? "true" : "false", c->prop ? c->prop : "", c->strategy, c->imaging, dir, dir, name, runtime);
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

Test(mpi_rtm, every_strategy_and_condition_cpml_faces, .timeout = 240)
{
    const struct mpi_rtm_case cases[] = {
        {"\"full\"", "xcorr", 2, "", NULL},
        {"\"checkpoint\"\ncheckpoint_schedule = \"binomial\"\ncheckpoints = 4", "source", 3, "", NULL},
        {"\"checkpoint\"\ncheckpoint_schedule = \"uniform\"\ncheckpoints = 5", "receiver", 4, "", NULL},
        {"\"boundary\"", "both", 4, YZ, NULL},
        {"\"random\"", "xcorr", 3, "", NULL},
        {"\"random\"", "both", 4, YZ, NULL},
        {"\"auto\"", "source", 2, "", NULL},
    };
    same_as_one_rank(8, false, false, cases, (int)(sizeof cases / sizeof *cases));
    fprintf(stderr, "mpi_rtm: order 8, CPML faces: every strategy and condition on 2, 3, 4 (and 1 x 2 x 2) "
            "ranks: bitwise the one-rank image\n");
}

Test(mpi_rtm, free_surface_orders_4_and_16, .timeout = 240)
{
    const struct mpi_rtm_case o4[] = {
        {"\"boundary\"", "source", 3, "", NULL},
        {"\"random\"", "receiver", 2, "", NULL},
    };
    same_as_one_rank(4, true, false, o4, 2);
    const struct mpi_rtm_case o16[] = {
        {"\"checkpoint\"", "xcorr", 4, "", NULL},
        {"\"boundary\"", "both", 2, "", NULL},
    };
    same_as_one_rank(16, true, false, o16, 2);
    fprintf(stderr, "mpi_rtm: free surface, orders 4 and 16: bitwise the one-rank image\n");
}

Test(mpi_rtm, two_d, .timeout = 240)
{
    const struct mpi_rtm_case cases[] = {
        {"\"boundary\"", "xcorr", 3, "", NULL},
        {"\"random\"", "source", 2, "", NULL},
        {"\"full\"", "both", 4, "", NULL},
        /* the wavelet and traces through the time-dispersion transform before the nodes */
        {"\"checkpoint\"", "source", 2, "", "time_dispersion = \"correct\""},
    };
    same_as_one_rank(6, false, true, cases, 4);
    fprintf(stderr, "mpi_rtm: 2D, order 6 (also with time_dispersion = \"correct\"): bitwise the one-rank image\n");
}

Test(mpi_rtm, sigterm_stops_every_rank_at_the_same_step, .timeout = 120)
{
    const char *mpirun = mpi_need();
    char *dir = test_tmpdir();
    write_shots_ns(dir, false, false, 401);
    /* a larger grid and a longer record (0.4 s) than the others, so a shot lasts seconds */
    char text[4096];
    snprintf(text, sizeof text,
             "[job]\nkind = \"rtm\"\n[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [100, 80, 120]\n"
             "d = [10.0, 10.0, 10.0]\n[propagator]\norder = 8\nt_max = 0.4\nf_peak = 18.0\npml_width = 10\n"
             "ppw_min = 0.1\n[rtm]\nstrategy = \"boundary\"\naperture = 1000.0\nimage_every = 1\n"
             "[input]\nkind = \"files\"\npaths = [\"%s/shots.segy\"]\n"
             "[output]\ndir = \"%s/out\"\nstate_dir = \"%s/state\"\npictures = false\n"
             "[runtime]\ndevice = \"cpu\"\ndecompose = \"domain\"\n", dir, dir, dir);
    char *c = test_write_file(dir, "long.toml", text);
    char log[4200];
    snprintf(log, sizeof log, "%s/long.log", dir);
    pid_t pid = test_fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        FILE *lf = freopen(log, "w", stderr);
        (void)lf;
        dup2(2, 1);
        execl(mpirun, mpirun, "--oversubscribe", "-np", "2", test_prog("seislive"), "run", "-c", c, (char *)NULL);
        _exit(127);
    }
    size_t n;
    for (int i = 0; i < 600; i++) {
        char *l = mpi_slurp(log, &n);
        bool ready = l && strstr(l, "[r0/2] decompose subdomain") && strstr(l, "[r1/2] decompose subdomain");
        free(l);
        if (ready)
            break;
        usleep(100000);
    }
    usleep(500000);
    kill(pid, SIGTERM);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    char *l = mpi_slurp(log, &n);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "mpirun: status %d: %s", st, l);
    long at[2] = {-1, -1};
    for (int r = 0; r < 2; r++) {
        char key[128];
        snprintf(key, sizeof key, "[r%d/2] decompose stop requested: every rank leaves the shot at the same step "
                 "(exchange ", r);
        char *p = strstr(l, key);
        cr_assert_not_null(p, "rank %d did not stop in the shot: %s", r, l);
        at[r] = atol(p + strlen(key));
    }
    cr_assert_eq(at[0], at[1], "rank 0 stopped at exchange %ld, rank 1 at %ld", at[0], at[1]);
    cr_assert_eq(at[0] % 16, 0, "the ranks stop together every 16 exchanges: %ld", at[0]);
    /* (rank 0's last words may not come: mpirun ends the ranks a moment after the signal,
     * and rank 0 may still be writing its final files; the state comes first) */
    cr_assert_null(strstr(l, "migrated on"), "no shot was migrated to the end: %s", l);
    char state[4300];
    snprintf(state, sizeof state, "%s/state/state.bin", dir);
    cr_assert_eq(access(state, F_OK), 0, "rank 0 saved the state: %s", l);
    fprintf(stderr, "mpi_rtm: SIGTERM: both ranks left the shot at exchange %ld\n", at[0]);
    free(l);
    free(c);
    test_rmtree(dir);
    free(dir);
}

Test(mpi_rtm, a_model_grid_too_thin_for_the_ranks_is_refused_by_every_rank, .timeout = 60)
{
    mpi_need();
    char *dir = test_tmpdir();
    write_shots(dir, false, false);
    /* order 16: 8 planes per subdomain; 34 z-planes hold 4, 14 y-planes one: 5 ranks cannot */
    const struct mpi_rtm_case c = {"\"full\"", "xcorr", 5, "", NULL};
    char *cn = write_conf(dir, "np5", 16, false, false, &c, "decompose = \"domain\"");
    struct run_result r;
    const char *args[] = {"run", "-c", cn, NULL};
    cr_assert_eq(mpi_run(5, args, 60, &r), 0);
    cr_assert_neq(r.status, 0, "5 ranks ran: %s", r.err);
    for (int k = 0; k < 5; k++) {
        char key[64];
        snprintf(key, sizeof key, "[r%d/5] main     rtm job failed: the rtm job's model grid", k);
        cr_assert_not_null(strstr(r.err, key), "rank %d does not say why: %s", k, r.err);
    }
    cr_assert_not_null(strstr(r.err, "5 ranks are more than the grid allows"), "%s", r.err);
    char img[4300];
    snprintf(img, sizeof img, "%s/out_np5/image.f32", dir);
    cr_assert_neq(access(img, F_OK), 0, "an image written by a refused run");
    test_run_free(&r);
    free(cn);
    test_rmtree(dir);
    free(dir);
}
