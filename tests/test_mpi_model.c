/* The model job on a decomposed grid under a real mpirun ([runtime] decompose = "domain",
 * docs/mpi.md): 2, 3 and 4 ranks write the SEG-Y file of the one-rank run (decompose =
 * "none") byte for byte -- traces bitwise -- for orders 2..16, with the cuts crossing
 * the CPML layers of the x and y faces, under a free surface, cut along y too (split
 * [1, 2, 2]), in 2D, with receivers and sources whose interpolation support straddles a
 * cut or reaches into the layers, over two shots; snapshots are gathered into the whole
 * grid's field.  Bad setups are refused on every rank with the reason: more ranks than
 * the planes allow, a halo thicker than a subdomain, ranks started with different
 * configurations, several ranks without a decomposition. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi_support.h"
#include "tests/support.h"

/* A layered model (three velocities), receivers at depths every ~2 cells from the top to
 * the bottom (so some straddle every cut, some reach into the layers) at varied x, y. */
static char *write_conf_x(const char *dir, const char *name, int order, bool fs, bool two_d, const char *runtime,
                          const char *prop_extra)
{
    char rec[4096] = "", src[256];
    const int nz = 34;
    for (int i = 0; i < 17; i++) {
        double z = fs ? 0.35 + i * 1.97 : 0.6 + i * 1.94;
        if (z > nz - 1)
            z = nz - 1;
        double x = 20 + 17.3 * i, y = two_d ? 0.0 : 5 + 10.1 * (i % 17);
        char one[128];
        snprintf(one, sizeof one, "%s[%.2f, %.2f, %.2f]", i ? ", " : "", fmod(x, 190.0), y, 10.0 * z);
        strcat(rec, one);
    }
    snprintf(src, sizeof src, "[[93.7, %s, 166.0], [121.0, %s, 79.0]]", two_d ? "0.0" : "93.0",
             two_d ? "0.0" : "88.5");
    char text[8192];
    snprintf(text, sizeof text,
             "[job]\nkind = \"model\"\n\n"
             "[model]\ntype = \"layered\"\nn = [20, %d, %d]\nd = [10.0, 10.0, 10.0]\no = [0.0, 0.0, 0.0]\n"
             "layer_depths = [95.0, 211.0]\nlayer_velocities = [1800.0, 2300.0, 2700.0]\n\n"
             "[propagator]\norder = %d\nt_max = 0.1\nf_peak = 18.0\npml_width = [5, 6, 4, 5, 6, 5]\n"
             "free_surface = %s\nppw_min = 0.1\n%s\n"
             "[acquisition]\nsources = %s\nreceivers = [%s]\n\n"
             "[runtime]\ndevice = \"cpu\"\n%s\n",
             two_d ? 1 : 18, nz, order, fs ? "true" : "false", prop_extra, src, rec, runtime);
    return test_write_file(dir, name, text);
}

static char *write_conf(const char *dir, const char *name, int order, bool fs, bool two_d, const char *runtime)
{
    return write_conf_x(dir, name, order, fs, two_d, runtime, "");
}

/* One-rank reference (decompose = "none"), then NP ranks with RUNTIME; same bytes. */
static void same_as_one_rank(const char *dir, int order, bool fs, bool two_d, const int *nps, const char *const *runtimes,
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
    cr_assert_gt(peak, 0, "order %d: the reference traces are zero", order);
    free(tr);
    char *want = mpi_slurp(ref, &nbytes);
    for (int k = 0; k < nrun; k++) {
        char name[64], out[4096];
        snprintf(name, sizeof name, "np%d.toml", nps[k]);
        char *c = write_conf(dir, name, order, fs, two_d, runtimes[k]);
        snprintf(out, sizeof out, "%s/np%d_o%d.segy", dir, nps[k], order);
        const char *args[] = {"model", "-c", c, "-o", out, NULL};
        cr_assert_eq(mpi_run(nps[k], args, 60, &r), 0);
        cr_assert_eq(r.status, 0, "%d ranks, order %d (%s): exit %d: %s", nps[k], order, runtimes[k], r.status, r.err);
        cr_assert_not_null(strstr(r.err, "[r1/"), "rank 1's log lines carry its rank: %s", r.err);
        test_run_free(&r);
        char what[512];
        snprintf(what, sizeof what, "%d ranks (%s), order %d%s%s", nps[k], runtimes[k], order, fs ? ", free surface" : "",
                 two_d ? ", 2D" : "");
        mpi_same_segy(ref, out, want, nbytes, "traces", what);
        free(c);
    }
    free(want);
    free(conf);
}

static const int NP[3] = {2, 3, 4};

Test(mpi_model, cpml_faces_orders_2_to_16_z_and_y_cuts, .timeout = 200)
{
    mpi_need();
    char *dir = test_tmpdir();
    const char *rt[3] = {"decompose = \"domain\"", "decompose = \"domain\"",
                         "decompose = \"domain\"\nsplit = [1, 2, 2]"};
    for (int order = 2; order <= 16; order += 2)
        same_as_one_rank(dir, order, false, false, NP, rt, 3);
    fprintf(stderr, "mpi_model cpml: 2, 3, 4 (1 x 2 x 2) ranks, orders 2..16: bitwise one rank's traces\n");
    test_rmtree(dir);
    free(dir);
}

Test(mpi_model, free_surface_orders_2_to_16, .timeout = 200)
{
    mpi_need();
    char *dir = test_tmpdir();
    const char *rt[3] = {"decompose = \"domain\"", "decompose = \"domain\"", "decompose = \"domain\""};
    for (int order = 2; order <= 16; order += 2)
        same_as_one_rank(dir, order, true, false, NP, rt, 3);
    fprintf(stderr, "mpi_model free surface: 2, 3, 4 ranks (z slabs), orders 2..16: bitwise one rank's traces\n");
    test_rmtree(dir);
    free(dir);
}

Test(mpi_model, two_d, .timeout = 120)
{
    mpi_need();
    char *dir = test_tmpdir();
    const char *rt[3] = {"decompose = \"domain\"", "decompose = \"domain\"", "decompose = \"domain\""};
    static const int orders[3] = {2, 8, 16};
    for (int k = 0; k < 3; k++)
        same_as_one_rank(dir, orders[k], k == 1, true, NP, rt, 3);
    test_rmtree(dir);
    free(dir);
}

/* Snapshots: rank 0 gathers the subdomains into the whole grid's field, the file the
 * one-rank run writes. */
Test(mpi_model, snapshots_are_the_whole_field, .timeout = 60)
{
    mpi_need();
    char *dir = test_tmpdir();
    for (int k = 0; k < 2; k++) {
        char snap[4200], out[4200];
        snprintf(snap, sizeof snap, "snapshot_every = 20\nsnapshot_dir = \"%s/snap%d\"", dir, k);
        char *c = write_conf_x(dir, "s.toml", 8, true, false, k ? "decompose = \"domain\"" : "decompose = \"none\"",
                               snap);
        snprintf(out, sizeof out, "%s/s%d.segy", dir, k);
        struct run_result r;
        if (k == 0) {
            const char *argv[] = {test_prog("seislive"), "model", "-c", c, "-o", out, NULL};
            cr_assert_eq(test_run(argv, 60, &r), 0);
        } else {
            const char *args[] = {"model", "-c", c, "-o", out, NULL};
            cr_assert_eq(mpi_run(3, args, 60, &r), 0);
        }
        cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
        test_run_free(&r);
        free(c);
    }
    int compared = 0;
    for (int step = 20; step <= 60; step += 20) {
        char p[2][4200];
        size_t n[2];
        char *b[2];
        for (int k = 0; k < 2; k++) {
            snprintf(p[k], sizeof p[k], "%s/snap%d/shot0002_step%06d_20x18x34.f32", dir, k, step);
            b[k] = mpi_slurp(p[k], &n[k]);
            cr_assert_not_null(b[k], "%s missing", p[k]);
        }
        cr_assert_eq(n[0], (size_t)20 * 18 * 34 * 4);
        cr_assert_eq(n[1], n[0]);
        cr_assert_eq(memcmp(b[0], b[1], n[0]), 0, "step %d: the gathered field differs from one rank's", step);
        double e = 0;
        for (size_t i = 0; i < n[0] / 4; i++)
            e += fabs(((float *)b[0])[i]);
        cr_assert_gt(e, 0);
        free(b[0]);
        free(b[1]);
        compared++;
    }
    cr_assert_eq(compared, 3);
    test_rmtree(dir);
    free(dir);
}

/* A refused setup: exit non-zero on every rank, the reason in the log, no output. */
static void refused(int np, const char *conf, const char *says)
{
    char out[4200];
    snprintf(out, sizeof out, "%s.segy", conf);
    const char *args[] = {"model", "-c", conf, "-o", out, NULL};
    struct run_result r;
    cr_assert_eq(mpi_run(np, args, 60, &r), 0);
    cr_assert_neq(r.status, 0, "%d ranks accepted %s: %s", np, conf, r.err);
    cr_assert_not_null(strstr(r.err, says), "%d ranks: want \"%s\" in: %s", np, says, r.err);
    test_run_free(&r);
    size_t n;
    char *b = mpi_slurp(out, &n);
    cr_assert_null(b, "%s written by a refused run", out);
}

Test(mpi_model, bad_setups_refused, .timeout = 120)
{
    mpi_need();
    char *dir = test_tmpdir();
    /* 34 z-planes, order 16 (halo 8): at most 4 z slabs; 2D: no y cuts -> 5 ranks refused */
    char *c = write_conf(dir, "many.toml", 16, false, true, "decompose = \"domain\"");
    refused(5, c, "5 ranks are more than the grid allows");
    free(c);
    /* an explicit split thinner than the halo: 34 / 5 < 8 */
    c = write_conf(dir, "thin.toml", 16, false, false, "decompose = \"domain\"\nsplit = [1, 1, 5]");
    refused(5, c, "thinner than the halo");
    free(c);
    /* a split that does not match the rank count */
    c = write_conf(dir, "prod.toml", 8, false, false, "decompose = \"domain\"\nsplit = [1, 2, 2]");
    refused(3, c, "the product must be the rank count");
    free(c);
    /* several ranks with nothing to share */
    c = write_conf(dir, "none.toml", 8, false, false, "decompose = \"none\"");
    refused(2, c, "every rank would run the whole job");
    free(c);
    test_rmtree(dir);
    free(dir);
}

/* Ranks started with different configurations (mpirun's MPMD form: one program line per
 * rank): refused on every rank, naming the rank that differs. */
Test(mpi_model, different_configs_refused, .timeout = 60)
{
    const char *mpirun = mpi_need();
    char *dir = test_tmpdir();
    char *a = write_conf(dir, "a.toml", 8, false, false, "decompose = \"domain\"");
    char *b = write_conf(dir, "b.toml", 6, false, false, "decompose = \"domain\"");
    char out[4200];
    snprintf(out, sizeof out, "%s/ab.segy", dir);
    const char *prog = test_prog("seislive");
    char p2[4096];
    snprintf(p2, sizeof p2, "%s", prog);
    const char *argv[] = {mpirun, "--oversubscribe", "-np", "1", p2, "model", "-c", a, "-o", out, ":",
                          "-np", "1", p2, "model", "-c", b, "-o", out, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_neq(r.status, 0, "ranks with different configs accepted: %s", r.err);
    cr_assert_not_null(strstr(r.err, "rank 1 runs another configuration than rank 0"), "%s", r.err);
    test_run_free(&r);
    size_t n;
    cr_assert_null(mpi_slurp(out, &n), "%s written", out);
    free(a);
    free(b);
    test_rmtree(dir);
    free(dir);
}

/* SIGTERM to mpirun (which forwards it to every rank): the ranks agree on the stop and
 * leave the loop at the same step; rank 0 keeps the partial file under .part, as one
 * rank does, and nothing hangs. */
Test(mpi_model, sigterm_stops_every_rank_at_one_step, .timeout = 120)
{
    const char *mpirun = mpi_need();
    char *dir = test_tmpdir();
    char *c = write_conf_x(dir, "long.toml", 8, false, false, "decompose = \"domain\"", "");
    /* a long record: still running when the signal comes */
    size_t n;
    char *text = mpi_slurp(c, &n), *at = strstr(text, "t_max = 0.1");
    cr_assert_not_null(at);
    memcpy(at, "t_max = 9.0", 11);
    FILE *f = fopen(c, "w");
    fputs(text, f);
    fclose(f);
    free(text);
    char out[4200], log[4200];
    snprintf(out, sizeof out, "%s/long.segy", dir);
    snprintf(log, sizeof log, "%s/long.log", dir);
    pid_t pid = test_fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        FILE *lf = freopen(log, "w", stderr);
        (void)lf;
        dup2(2, 1);
        execl(mpirun, mpirun, "--oversubscribe", "-np", "2", test_prog("seislive"), "model", "-c", c, "-o", out,
              (char *)NULL);
        _exit(127);
    }
    /* wait for both ranks to log progress... the first "step" line is 5 s in: wait for
     * the subdomain lines instead, then give the loop a moment */
    for (int i = 0; i < 600; i++) {
        char *l = mpi_slurp(log, &n);
        bool ready = l && strstr(l, "[r0/2] decompose subdomain") && strstr(l, "[r1/2] decompose subdomain");
        free(l);
        if (ready)
            break;
        usleep(100000);
    }
    usleep(1000000);
    kill(pid, SIGTERM);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    char *l = mpi_slurp(log, &n);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "mpirun: status %d: %s", st, l);
    /* the signal comes 1 s after the subdomain lines: on an idle machine shot 1 may be
     * done by then, so the ranks stop in shot 1 or shot 2 -- the same one */
    int step[2] = {-1, -1}, shot[2] = {-1, -1};
    for (int r = 0; r < 2; r++) {
        char key[64];
        snprintf(key, sizeof key, "[r%d/2] model-job stop requested: abandoning shot ", r);
        char *p = strstr(l, key);
        cr_assert_not_null(p, "rank %d did not stop: %s", r, l);
        cr_assert_eq(sscanf(p + strlen(key), "%d at step %d", &shot[r], &step[r]), 2, "%s", p);
    }
    cr_assert_eq(shot[0], shot[1], "rank 0 stopped in shot %d, rank 1 in shot %d", shot[0], shot[1]);
    cr_assert_eq(step[0], step[1], "rank 0 stopped at step %d, rank 1 at %d", step[0], step[1]);
    cr_assert_eq(step[0] % 16, 0, "the ranks stop together at a multiple of 16 steps: %d", step[0]);
    char part[4300];
    snprintf(part, sizeof part, "%s.part", out);
    cr_assert_eq(access(part, F_OK), 0, "%s not kept", part);
    cr_assert_neq(access(out, F_OK), 0, "%s written by a stopped run", out);
    free(l);
    free(c);
    test_rmtree(dir);
    free(dir);
}

/* The children of PID (from /proc), up to MAX; returns how many. */
static int children_of(pid_t pid, pid_t *out, int max)
{
    int n = 0;
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        char path[300], buf[512];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        const char *rp = strrchr(buf, ')'); /* "pid (comm) state ppid ..." */
        int ppid = 0;
        char state;
        if (rp && sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == pid)
            out[n++] = (pid_t)atoi(e->d_name);
    }
    closedir(d);
    return n;
}

/* PID exists and is not a zombie. */
static bool running(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    const char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

/* A rank killed with SIGKILL mid-shot: the job ends (mpirun takes the others down), it
 * does not wait for the dead rank's halo forever, and no output is written under the
 * final name. */
Test(mpi_model, a_killed_rank_ends_the_job, .timeout = 120)
{
    const char *mpirun = mpi_need();
    char *dir = test_tmpdir();
    char *c = write_conf_x(dir, "long.toml", 8, false, false, "decompose = \"domain\"", "");
    size_t n;
    char *text = mpi_slurp(c, &n), *at = strstr(text, "t_max = 0.1");
    memcpy(at, "t_max = 9.0", 11);
    FILE *f = fopen(c, "w");
    fputs(text, f);
    fclose(f);
    free(text);
    char out[4200], log[4200];
    snprintf(out, sizeof out, "%s/long.segy", dir);
    snprintf(log, sizeof log, "%s/long.log", dir);
    pid_t pid = test_fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        FILE *lf = freopen(log, "w", stderr);
        (void)lf;
        dup2(2, 1);
        execl(mpirun, mpirun, "--oversubscribe", "-np", "3", test_prog("seislive"), "model", "-c", c, "-o", out,
              (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 600; i++) {
        char *l = mpi_slurp(log, &n);
        bool ready = l && strstr(l, "[r0/3] decompose subdomain") && strstr(l, "[r1/3] decompose subdomain") &&
                     strstr(l, "[r2/3] decompose subdomain");
        free(l);
        if (ready)
            break;
        usleep(100000);
    }
    usleep(500000);
    pid_t kids[8];
    int nk = children_of(pid, kids, 8);
    cr_assert_eq(nk, 3, "mpirun has %d children, want the 3 ranks", nk);
    cr_assert_eq(kill(kids[1], SIGKILL), 0);
    int st = 0;
    pid_t w = 0;
    for (int i = 0; i < 300 && w == 0; i++) {
        w = waitpid(pid, &st, WNOHANG);
        if (w == 0)
            usleep(100000);
    }
    if (w == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        cr_assert_fail("the job still ran 30 s after a rank was killed");
    }
    cr_assert(!(WIFEXITED(st) && WEXITSTATUS(st) == 0), "mpirun exited 0 after a rank was killed");
    for (int i = 0; i < 3; i++) {
        bool alive = true;
        for (int t = 0; t < 50 && alive; t++) {
            alive = running(kids[i]);
            if (alive)
                usleep(100000);
        }
        cr_assert(!alive, "rank process %d outlived the job by 5 s", (int)kids[i]);
    }
    cr_assert_neq(access(out, F_OK), 0, "%s written by a job that lost a rank", out);
    free(c);
    test_rmtree(dir);
    free(dir);
}

/* [propagator] time_dispersion = "correct" (docs/time-dispersion.md) on a decomposed
 * grid: the wavelet transformed before (every rank injects it), the gathered traces
 * transformed after on rank 0: the one-rank file, byte for byte. */
Test(mpi_model, time_dispersion_correction, .timeout = 60)
{
    mpi_need();
    char *dir = test_tmpdir();
    char *conf[2];
    char out[2][4200];
    for (int k = 0; k < 2; k++) {
        conf[k] = write_conf_x(dir, k ? "d.toml" : "n.toml", 8, true, false,
                               k ? "decompose = \"domain\"" : "decompose = \"none\"", "time_dispersion = \"correct\"");
        snprintf(out[k], sizeof out[k], "%s/t%d.segy", dir, k);
    }
    struct run_result r;
    const char *argv[] = {test_prog("seislive"), "model", "-c", conf[0], "-o", out[0], NULL};
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.err, "time dispersion: corrected"), "%s", r.err);
    test_run_free(&r);
    const char *args[] = {"model", "-c", conf[1], "-o", out[1], NULL};
    cr_assert_eq(mpi_run(3, args, 60, &r), 0);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    test_run_free(&r);
    size_t n0, n1;
    char *a = mpi_slurp(out[0], &n0), *b = mpi_slurp(out[1], &n1);
    cr_assert(a && b && n0 == n1 && n0 > 3600, "sizes %zu %zu", n0, n1);
    cr_assert_eq(memcmp(a, b, n0), 0, "3 ranks with the correction differ from one rank's");
    free(a);
    free(b);
    free(conf[0]);
    free(conf[1]);
    test_rmtree(dir);
    free(dir);
}
