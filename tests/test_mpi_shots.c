/* Shot-parallel migration under a real mpirun ([runtime] decompose = "shots",
 * docs/mpi.md): the rtm job over a SEG-Y file of 8 shots on 3 ranks (rank 0 reads and
 * stacks, ranks 1 and 2 migrate what they are handed) writes the image of the one-rank
 * run (decompose = "none") bit for bit, with each shot in the ledger once; the status
 * topic carries each rank's progress.  A worker, or rank 0, killed with SIGKILL mid-run
 * ends the job within seconds; the restart from the checkpoint ends with the same image and each shot
 * once.  A worker throttled from outside (SIGSTOP / SIGCONT most of the time, the way a
 * GPU shared with another job slows a rank) migrates fewer shots while the other takes
 * the rest.  A ZeroMQ stream (rank 0's input alone) gives the same image.  Bad setups are
 * refused with the reason; `check` says who does what. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "conf/config.h"
#include "io/image_files.h"
#include "io/wire.h"
#include "stream/error.h"
#include "stream/state.h"
#include "tests/mpi_support.h"
#include "tests/support.h"
#include "tests/test_stream_support.h"

#define NSHOT 8
#define NTR 12
#define NS 125
/* The runtime tests' small rtm job (tests/test_stream_support.h) on a larger grid and a
 * longer record: ~0.2 s a shot on one core, so a kill lands between shots 2 and 8. */
#define CELLS (40 * 30 * 30)
#define RTM_CFG                                                                                  \
    "[job]\nkind = \"rtm\"\n"                                                                    \
    "[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [40, 30, 30]\nd = [10.0, 10.0, 10.0]\n" \
    "[propagator]\norder = 4\nt_max = 0.5\npml_width = [5, 5, 5, 5, 5, 5]\nf_peak = 12.0\n"      \
    "[rtm]\nstrategy = \"full\"\naperture = 0.0\n"                                              \
    "[runtime]\ndevice = \"cpu\"\n"

/* The 8 shots (ids 100..107) in one SEG-Y file. */
static char *write_shots(const char *dir)
{
    int ks[NSHOT];
    for (int k = 0; k < NSHOT; k++)
        ks[k] = k;
    char *p = malloc(4200);
    snprintf(p, 4200, "%s/shots.segy", dir);
    cr_assert_eq(ts_write_segy(p, ks, NSHOT, NTR, NS, 5), 0);
    return p;
}

/* The small rtm job of the runtime tests over SEGY, writing into DIR/NAME/ (image) and
 * DIR/NAME-state (checkpoint after every shot); RUNTIME goes into [runtime], OUTPUT
 * into [output]. */
static char *write_cfg(const char *dir, const char *name, const char *segy, const char *runtime, const char *output)
{
    char text[24576], file[256];
    snprintf(text, sizeof text,
             RTM_CFG "%s\n[input]\nkind = \"files\"\npaths = [\"%s\"]\nslots = 2\nslot_mib = 0.1\n"
                              "[output]\ndir = \"%s/%s\"\nstate_dir = \"%s/%s-state\"\ncheckpoint_every = 1\n%s\n"
                              "[log]\nlevel = \"info\"\n",
             runtime, segy, dir, name, dir, name, output);
    snprintf(file, sizeof file, "%s.toml", name);
    return test_write_file(dir, file, text);
}

static float *image_of(const char *dir, const char *name, int64_t *units)
{
    char out[4200];
    snprintf(out, sizeof out, "%s/%s", dir, name);
    struct image_meta m;
    float *v = NULL;
    cr_assert_eq(image_files_read(out, "image", &m, &v), 0, "%s/image.f32 not written", out);
    cr_assert_eq(m.n[0] * m.n[1] * m.n[2], CELLS);
    *units = m.units;
    return v;
}

/* The one-rank image (decompose = "none", no mpirun), checked not empty. */
static float *one_rank_image(const char *dir, const char *segy)
{
    char *c = write_cfg(dir, "one", segy, "decompose = \"none\"", "");
    const char *argv[] = {test_prog("seislive"), "run", "-c", c, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_eq(r.status, 0, "one rank: exit %d: %s", r.status, r.err);
    test_run_free(&r);
    free(c);
    int64_t units;
    float *v = image_of(dir, "one", &units);
    cr_assert_eq(units, NSHOT);
    double e = 0;
    for (int i = 0; i < CELLS; i++)
        e += (double)v[i] * v[i];
    cr_assert_gt(e, 0, "the one-rank image is zero");
    return v;
}

static void same_image(const float *want, const char *dir, const char *name, const char *what)
{
    int64_t units;
    float *got = image_of(dir, name, &units);
    cr_assert_eq(units, NSHOT, "%s: %lld shots in the image", what, (long long)units);
    for (int i = 0; i < CELLS; i++)
        if (memcmp(&got[i], &want[i], sizeof *got))
            cr_assert_fail("%s: cell %d differs from the one-rank image: %.9g vs %.9g", what, i, got[i], want[i]);
    free(got);
}

/* The ledger of DIR/NAME/state: every shot 100..107 exactly once. */
static void ledger_once(const char *dir, const char *name, const char *cfgpath)
{
    struct sl_config c;
    cr_assert_eq(config_load(cfgpath, &c), 0, "%s", err_msg());
    char sd[4200];
    snprintf(sd, sizeof sd, "%s/%s-state", dir, name);
    struct state st;
    cr_assert_eq(state_load(sd, config_fingerprint(&c), &st), 0, "%s: %s", sd, err_msg());
    cr_assert_eq(st.n_ledger, (size_t)NSHOT, "%s: %zu shots in the ledger", name, st.n_ledger);
    int seen[NSHOT] = {0};
    for (size_t i = 0; i < st.n_ledger; i++) {
        int64_t id = st.ledger[i];
        cr_assert(id >= 100 && id < 100 + NSHOT, "ledger: shot %lld", (long long)id);
        cr_assert_eq(seen[id - 100]++, 0, "shot %lld twice in the ledger", (long long)id);
    }
    state_free(&st);
    config_free(&c);
}

/* Wait (up to 30 s) until the checkpoint in DIR/NAME-state holds N shots. */
static void wait_ledger(const char *dir, const char *name, const char *cfgpath, size_t n)
{
    struct sl_config c;
    cr_assert_eq(config_load(cfgpath, &c), 0, "%s", err_msg());
    char sd[4200];
    snprintf(sd, sizeof sd, "%s/%s-state", dir, name);
    size_t have = 0;
    for (int i = 0; i < 3000 && have < n; i++) {
        struct state st;
        if (state_load(sd, config_fingerprint(&c), &st) == 0) {
            have = st.n_ledger;
            state_free(&st);
        }
        if (have < n)
            usleep(10000);
    }
    config_free(&c);
    cr_assert_geq(have, n, "%s: the checkpoint never held %zu shots", sd, n);
}

/* How many shots rank R migrated, from rank 0's "stacked (migrated by rank R" lines. */
static int shots_of_rank(const char *log, int r)
{
    char key[64];
    snprintf(key, sizeof key, "(migrated by rank %d in", r);
    int n = 0;
    for (const char *p = log; (p = strstr(p, key)); p++)
        n++;
    return n;
}

Test(mpi_shots, three_ranks_write_the_one_rank_image_and_report_each_rank, .timeout = 120)
{
    mpi_need();
    char *dir = test_tmpdir();
    char *segy = write_shots(dir);
    float *want = one_rank_image(dir, segy);

    /* 3 ranks, the status topic on an ipc endpoint every 0.1 s */
    char ep[4200], out[4300];
    snprintf(ep, sizeof ep, "ipc://%s/status", dir);
    snprintf(out, sizeof out, "endpoint = \"%s\"", ep);
    char *c = write_cfg(dir, "three", segy, "decompose = \"shots\"\nmetrics_interval = 0.1", out);
    void *z = zmq_ctx_new();
    void *sub = ts_sub(z, ep, "status", 0);
    const char *args[] = {"run", "-c", c, NULL};
    struct run_result r;
    cr_assert_eq(mpi_run(3, args, 90, &r), 0);
    cr_assert_eq(r.status, 0, "3 ranks: exit %d: %s", r.status, r.err);
    same_image(want, dir, "three", "3 ranks");
    ledger_once(dir, "three", c);
    int n1 = shots_of_rank(r.err, 1), n2 = shots_of_rank(r.err, 2);
    cr_assert_eq(n1 + n2, NSHOT, "ranks 1 and 2 migrated %d + %d shots: %s", n1, n2, r.err);
    cr_assert_null(strstr(r.err, "(migrated by rank 0 in"), "rank 0 migrates nothing");

    /* the statuses: every rank's row; some status saw a worker busy on a shot; the last
     * one has the counts of the logs */
    bool busy_seen = false;
    json_t *last = NULL;
    struct ts_msg m;
    while (ts_recv(sub, &m, 2000) == 0) {
        json_t *st = json_loads(m.header, 0, NULL);
        ts_msg_free(&m);
        json_t *ranks = json_object_get(st, "ranks");
        if (!json_is_array(ranks)) {
            json_decref(st);
            continue;
        }
        cr_assert_eq(json_array_size(ranks), 3);
        for (int k = 1; k < 3; k++) {
            json_t *o = json_array_get(ranks, k);
            const char *s = json_string_value(json_object_get(o, "state"));
            json_int_t cur = json_integer_value(json_object_get(o, "current"));
            if (s && !strcmp(s, "busy")) {
                cr_assert(cur >= 100 && cur < 100 + NSHOT, "a busy rank on shot %lld", (long long)cur);
                busy_seen = true;
            }
        }
        json_decref(last);
        last = st;
    }
    cr_assert_not_null(last, "no status with \"ranks\" received");
    json_t *ranks = json_object_get(last, "ranks");
    json_t *r0 = json_array_get(ranks, 0);
    cr_assert_str_eq(json_string_value(json_object_get(r0, "role")), "dispatch");
    cr_assert_eq(json_integer_value(json_object_get(r0, "stacked")), NSHOT);
    int want_n[3] = {0, n1, n2};
    for (int k = 1; k < 3; k++) {
        json_t *o = json_array_get(ranks, k);
        cr_assert_eq(json_integer_value(json_object_get(o, "rank")), k);
        cr_assert_str_eq(json_string_value(json_object_get(o, "role")), "migrate");
        cr_assert_str_eq(json_string_value(json_object_get(o, "state")), "ended");
        cr_assert_not_null(strstr(json_string_value(json_object_get(o, "device")), "CPU"), "rank %d's device", k);
        cr_assert_eq(json_integer_value(json_object_get(o, "shots")), want_n[k], "rank %d's shots", k);
        cr_assert_eq(json_integer_value(json_object_get(o, "current")), -1);
    }
    cr_assert(busy_seen, "no status showed a rank busy on a shot");
    json_decref(last);
    fprintf(stderr, "mpi_shots: 3 ranks, 8 shots: bitwise the one-rank image; rank 1 %d shots, rank 2 %d\n", n1, n2);
    test_run_free(&r);
    zmq_close(sub);
    zmq_ctx_term(z);

    /* one rank with decompose = "shots" is the ordinary job: the same image */
    char *c1 = write_cfg(dir, "np1", segy, "decompose = \"shots\"", "");
    const char *args1[] = {"run", "-c", c1, NULL};
    cr_assert_eq(mpi_run(1, args1, 60, &r), 0);
    cr_assert_eq(r.status, 0, "1 rank: exit %d: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.err, "with one rank: it migrates every shot itself"), "%s", r.err);
    test_run_free(&r);
    same_image(want, dir, "np1", "1 rank, decompose = \"shots\"");
    free(c1);
    free(c);
    free(want);
    free(segy);
    test_rmtree(dir);
    free(dir);
}

/* The pid of the child of MPIRUN that is MPI rank RANK (its environment says), or -1. */
static pid_t rank_pid(pid_t mpirun, int rank)
{
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    struct dirent *e;
    pid_t found = -1;
    char want[64];
    int wl = snprintf(want, sizeof want, "OMPI_COMM_WORLD_RANK=%d", rank) + 1;
    while ((e = readdir(d)) && found < 0) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        const char *rp = strrchr(buf, ')');
        int ppid = 0;
        char state;
        if (!rp || sscanf(rp + 1, " %c %d", &state, &ppid) != 2 || ppid != mpirun)
            continue;
        /* /proc files have no size: read to the end */
        snprintf(path, sizeof path, "/proc/%s/environ", e->d_name);
        static char env[1 << 16];
        size_t n = 0;
        if ((f = fopen(path, "r"))) {
            n = fread(env, 1, sizeof env - 1, f);
            fclose(f);
        }
        env[n] = '\0';
        for (size_t i = 0; i < n; i += strlen(env + i) + 1)
            if (!memcmp(env + i, want, (size_t)wl))
                found = (pid_t)atoi(e->d_name);
    }
    closedir(d);
    return found;
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

/* mpirun as a child, its output into LOG; returns its pid. */
static pid_t spawn_mpirun(const char *const argv[], const char *log)
{
    pid_t pid = test_fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        FILE *lf = freopen(log, "w", stderr);
        (void)lf;
        dup2(2, 1);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Wait up to TIMEOUT_S for PID: its wait status, or -1 (then it is killed). */
static int wait_for(pid_t pid, double timeout_s)
{
    int st;
    for (int i = 0; i < (int)(timeout_s * 100); i++) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return st;
        usleep(10000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

/* Rank VICTIM of 3 killed with SIGKILL once two shots are stacked: the job ends within
 * seconds, no rank left; the restart resumes from the checkpoint and ends with the
 * one-rank image, each shot once. */
static void kill_and_restart(int victim_rank)
{
    const char *mpirun = mpi_need();
    char *dir = test_tmpdir();
    char *segy = write_shots(dir);
    float *want = one_rank_image(dir, segy);
    char *c = write_cfg(dir, "kill", segy, "decompose = \"shots\"", "");
    char log[4200];
    snprintf(log, sizeof log, "%s/kill.log", dir);
    const char *argv[] = {mpirun, "--oversubscribe", "-np", "3", test_prog("seislive"), "run", "-c", c, NULL};
    pid_t pid = spawn_mpirun(argv, log);
    /* two shots stacked and checkpointed: then kill the victim while shots are out */
    size_t n;
    wait_ledger(dir, "kill", c, 2);
    int other_rank[2] = {victim_rank == 0 ? 1 : 0, 2};
    pid_t victim = rank_pid(pid, victim_rank), others[2] = {rank_pid(pid, other_rank[0]), rank_pid(pid, 2)};
    cr_assert_gt(victim, 0, "rank %d's process not found", victim_rank);
    cr_assert(others[0] > 0 && others[1] > 0, "the other ranks not found");
    cr_assert_eq(kill(victim, SIGKILL), 0);
    struct timespec ts0, ts1;
    clock_gettime(CLOCK_MONOTONIC, &ts0);
    int st = wait_for(pid, 30);
    clock_gettime(CLOCK_MONOTONIC, &ts1);
    double t = (double)(ts1.tv_sec - ts0.tv_sec) + 1e-9 * (double)(ts1.tv_nsec - ts0.tv_nsec);
    char *l = mpi_slurp(log, &n);
    cr_assert_neq(st, -1, "mpirun still running 30 s after a rank was killed: %s", l);
    cr_assert(!(WIFEXITED(st) && WEXITSTATUS(st) == 0), "mpirun exit 0 after a rank was killed: %s", l);
    cr_assert_lt(t, 15.0, "the job took %.1f s to end after a rank was killed", t);
    for (int k = 0; k < 2; k++) {
        bool alive = true;
        for (int i = 0; i < 50 && alive; i++) {
            alive = running(others[k]);
            if (alive)
                usleep(100000);
        }
        cr_assert(!alive, "rank %d (pid %d) outlived the job by 5 s", other_rank[k], (int)others[k]);
    }
    free(l);
    fprintf(stderr, "mpi_shots: rank %d killed: mpirun ended %.1f s later (status %d)\n", victim_rank, t, st);

    /* the restart resumes from the checkpoint (mid-run: some shots, not all) */
    const char *args[] = {"run", "-c", c, NULL};
    struct run_result r;
    cr_assert_eq(mpi_run(3, args, 90, &r), 0);
    cr_assert_eq(r.status, 0, "restart: exit %d: %s", r.status, r.err);
    const char *res = strstr(r.err, "resumed with ");
    cr_assert_not_null(res, "the restart did not resume: %s", r.err);
    int resumed = atoi(res + strlen("resumed with "));
    cr_assert(resumed >= 2 && resumed < NSHOT, "resumed with %d shots: the kill was not mid-run", resumed);
    test_run_free(&r);
    same_image(want, dir, "kill", "killed + restarted");
    ledger_once(dir, "kill", c);
    fprintf(stderr, "mpi_shots: rank %d killed, the restart resumed with %d shots: bitwise the one-rank image\n",
            victim_rank, resumed);
    free(c);
    free(want);
    free(segy);
    test_rmtree(dir);
    free(dir);
}

Test(mpi_shots, a_killed_worker_ends_the_job_and_the_restart_gives_the_same_image, .timeout = 150)
{
    kill_and_restart(1);
}

/* rank 0 is the one that writes the ledger and the checkpoints */
Test(mpi_shots, a_killed_rank_0_ends_the_job_and_the_restart_gives_the_same_image, .timeout = 150)
{
    kill_and_restart(0);
}

/* SIGTERM to every process of the job (ALL), as `systemctl stop` sends it to the unit's
 * whole cgroup (mpirun forwards it as well, but only after a delay of its own), or to
 * worker rank 1 alone: the workers give up their shots, rank 0 saves the shots stacked in
 * order and every rank exits 0 (mpirun itself says 1 after a signal); the restart ends
 * with the one-rank image. */
static void term_and_restart(bool all)
{
    const char *mpirun = mpi_need();
    char *dir = test_tmpdir();
    char *segy = write_shots(dir);
    float *want = one_rank_image(dir, segy);
    char *c = write_cfg(dir, "term", segy, "decompose = \"shots\"", "");
    char log[4200];
    snprintf(log, sizeof log, "%s/term.log", dir);
    const char *argv[] = {mpirun, "--oversubscribe", "-np", "3", test_prog("seislive"), "run", "-c", c, NULL};
    pid_t pid = spawn_mpirun(argv, log);
    size_t n;
    wait_ledger(dir, "term", c, 2);
    pid_t ranks[3];
    for (int k = 0; k < 3; k++)
        cr_assert_gt(ranks[k] = rank_pid(pid, k), 0, "rank %d not found", k);
    for (int k = 0; k < 3; k++)
        if (all || k == 1)
            kill(ranks[k], SIGTERM);
    if (all)
        kill(pid, SIGTERM);
    int st = wait_for(pid, 30);
    char *l = mpi_slurp(log, &n);
    cr_assert(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) <= (all ? 1 : 0), "mpirun: status %d after SIGTERM: %s",
              st, l);
    if (all)
        cr_assert_not_null(strstr(l, "[r0/3] main     stopped by signal 15; state saved in"), "%s", l);
    else
        cr_assert_not_null(strstr(l, "rank 1 was told to stop: the whole job stops, as on SIGTERM"), "%s", l);
    cr_assert_null(strstr(l, "exited on signal"), "a rank died of the signal: %s", l);
    cr_assert_null(strstr(l, "returned\na non-zero exit code"), "a rank failed: %s", l);
    free(l);
    const char *args[] = {"run", "-c", c, NULL};
    struct run_result r;
    cr_assert_eq(mpi_run(3, args, 90, &r), 0);
    cr_assert_eq(r.status, 0, "restart: exit %d: %s", r.status, r.err);
    const char *res = strstr(r.err, "resumed with ");
    cr_assert_not_null(res, "the restart did not resume: %s", r.err);
    int resumed = atoi(res + strlen("resumed with "));
    cr_assert(resumed >= 2 && resumed < NSHOT, "resumed with %d shots: the stop was not mid-run", resumed);
    test_run_free(&r);
    same_image(want, dir, "term", "stopped + restarted");
    ledger_once(dir, "term", c);
    fprintf(stderr, "mpi_shots: SIGTERM to %s, then the restart resumed with %d shots: bitwise the one-rank image\n",
            all ? "every process" : "rank 1", resumed);
    free(c);
    free(want);
    free(segy);
    test_rmtree(dir);
    free(dir);
}

Test(mpi_shots, sigterm_saves_the_state_and_the_restart_gives_the_same_image, .timeout = 150)
{
    term_and_restart(true);
}

Test(mpi_shots, sigterm_to_one_worker_stops_the_job_and_the_restart_gives_the_same_image, .timeout = 150)
{
    term_and_restart(false);
}

Test(mpi_shots, a_throttled_worker_does_not_hold_the_others, .timeout = 150)
{
    const char *mpirun = mpi_need();
    char *dir = test_tmpdir();
    char *segy = write_shots(dir);
    float *want = one_rank_image(dir, segy);
    char *c = write_cfg(dir, "slow", segy, "decompose = \"shots\"", "");
    char log[4200], pidfile[4200], script[8400];
    snprintf(log, sizeof log, "%s/slow.log", dir);
    snprintf(pidfile, sizeof pidfile, "%s/rank2.pid", dir);
    /* mpirun's MPMD form: ranks 0 and 1 as usual, rank 2 through sh, which notes its pid
     * and becomes seislive (the same program, the same configuration) */
    snprintf(script, sizeof script, "echo $$ > %s; exec %s run -c %s", pidfile, test_prog("seislive"), c);
    const char *argv[] = {mpirun, "--oversubscribe", "-np", "2", test_prog("seislive"), "run", "-c", c, ":",
                          "-np", "1", "/bin/sh", "-c", script, NULL};
    pid_t pid = spawn_mpirun(argv, log);
    pid_t slow = -1;
    int st = -1;
    /* rank 2 runs 20 ms in every 200 */
    for (int i = 0; i < 6000; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            break;
        if (slow <= 0) {
            size_t n;
            char *p = mpi_slurp(pidfile, &n);
            slow = p ? atoi(p) : -1;
            free(p);
            usleep(10000);
            continue;
        }
        kill(slow, SIGCONT);
        usleep(20000);
        kill(slow, SIGSTOP);
        usleep(180000);
        st = -1;
    }
    if (slow > 0)
        kill(slow, SIGCONT);
    size_t n;
    char *l = mpi_slurp(log, &n);
    cr_assert_gt(slow, 0, "rank 2's pid not found: %s", l);
    cr_assert(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "mpirun: status %d: %s", st, l);
    int n1 = shots_of_rank(l, 1), n2 = shots_of_rank(l, 2);
    cr_assert_eq(n1 + n2, NSHOT, "%d + %d shots: %s", n1, n2, l);
    cr_assert_lt(n2, n1, "the throttled rank 2 migrated %d shots, rank 1 %d: %s", n2, n1, l);
    fprintf(stderr, "mpi_shots: rank 2 throttled to 10 %%: rank 1 %d shots, rank 2 %d\n", n1, n2);
    free(l);
    same_image(want, dir, "slow", "a throttled worker");
    ledger_once(dir, "slow", c);
    free(c);
    free(want);
    free(segy);
    test_rmtree(dir);
    free(dir);
}

/* The input is rank 0's alone: a ZeroMQ stream (rank 0 binds, the workers open nothing)
 * gives the image of the same shots read from the file by one rank.  Sent one at a time,
 * each shot is in a published image before the next is sent: rank 0 takes a returned
 * image in while its input is idle, it does not wait for the next shot to do so. */
Test(mpi_shots, zeromq_input_on_three_ranks, .timeout = 120)
{
    const char *mpirun = mpi_need();
    char *dir = test_tmpdir();
    char *segy = write_shots(dir);
    float *want = one_rank_image(dir, segy);
    char text[24576], ep[4200], ep_out[4200], log[4200];
    snprintf(ep, sizeof ep, "ipc://%s/in", dir);
    snprintf(ep_out, sizeof ep_out, "ipc://%s/out", dir);
    snprintf(log, sizeof log, "%s/zmq.log", dir);
    snprintf(text, sizeof text,
             RTM_CFG "decompose = \"shots\"\n[input]\nkind = \"zmq\"\nendpoint = \"%s\"\nslots = 2\nslot_mib = 1.0\n"
                     "[output]\ndir = \"%s/zmq\"\nstate_dir = \"%s/zmq-state\"\ncheckpoint_every = 1\n"
                     "endpoint = \"%s\"\n[log]\nlevel = \"info\"\n",
             ep, dir, dir, ep_out);
    char *c = test_write_file(dir, "zmq.toml", text);
    const char *argv[] = {mpirun, "--oversubscribe", "-np", "3", test_prog("seislive"), "run", "-c", c, NULL};
    pid_t pid = spawn_mpirun(argv, log);
    for (int i = 0; i < 1000 && access(ep + strlen("ipc://"), F_OK) != 0; i++)
        usleep(10000); /* rank 0 has bound */
    void *z = zmq_ctx_new();
    void *sub = ts_sub(z, ep_out, "image", 0);
    void *push = ts_push(z, ep);
    for (int k = 0; k < NSHOT; k++) {
        struct shot sh;
        ts_make_shot(k, NTR, NS, &sh);
        cr_assert_eq(wire_send_shot_f32(push, &sh, k, 0), 0);
        ts_shot_free(&sh);
        struct ts_msg m;
        cr_assert_eq(ts_recv_image(sub, k + 1, false, &m, 30000), 0, "no image with %d shots before shot %d was sent",
                     k + 1, k + 1);
        ts_msg_free(&m);
    }
    cr_assert_eq(wire_send_end(push, 0), 0);
    struct ts_msg fm;
    cr_assert_eq(ts_recv_image(sub, NSHOT, true, &fm, 30000), 0, "no final image");
    cr_assert_eq(fm.payload_len, (size_t)CELLS * sizeof(float));
    cr_assert_eq(memcmp(fm.payload, want, fm.payload_len), 0, "the final image published differs from one rank's");
    ts_msg_free(&fm);
    int st = wait_for(pid, 60);
    size_t n;
    char *l = mpi_slurp(log, &n);
    cr_assert(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "mpirun: status %d: %s", st, l);
    cr_assert_eq(shots_of_rank(l, 1) + shots_of_rank(l, 2), NSHOT, "%s", l);
    free(l);
    zmq_close(push);
    zmq_close(sub);
    zmq_ctx_term(z);
    same_image(want, dir, "zmq", "3 ranks, ZeroMQ input");
    ledger_once(dir, "zmq", c);
    free(c);
    free(want);
    free(segy);
    test_rmtree(dir);
    free(dir);
}

/* A setup refused by the configuration check, with SAYS in the message (no mpirun
 * needed: it is refused on load, by every rank alike). */
static void refused(const char *dir, const char *text, const char *says)
{
    char *c = test_write_file(dir, "bad.toml", text);
    const char *argv[] = {test_prog("seislive"), "check", "-c", c, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 30, &r), 0);
    cr_assert_eq(r.status, 2, "accepted (exit %d): %s", r.status, text);
    cr_assert_not_null(strstr(r.err, says), "want \"%s\" in: %s", says, r.err);
    test_run_free(&r);
    free(c);
}

Test(mpi_shots, check_reports_and_bad_setups_refused, .timeout = 60)
{
    char *dir = test_tmpdir();
    refused(dir,
            "[job]\nkind = \"model\"\n[model]\ntype = \"constant\"\nvelocity = 2000.0\nn = [24, 20, 14]\n"
            "d = [10.0, 10.0, 10.0]\n[propagator]\nt_max = 0.1\n[acquisition]\nsources = [[100.0, 100.0, 20.0]]\n"
            "receivers = [[50.0, 50.0, 0.0]]\n[runtime]\ndecompose = \"shots\"\n",
            "\"shots\" hands the shots of the rtm job out to the ranks; the model job has none");
    refused(dir, "[job]\nkind = \"locate\"\n[input]\nkind = \"zmq\"\n[locate]\nstations = \"/dev/null\"\n"
                 "[runtime]\ndecompose = \"shots\"\n",
            "\"shots\" hands the shots of the rtm job out to the ranks; the locate job has none");
    refused(dir, RTM_CFG "decompose = \"shots\"\nsplit = [1, 1, 2]\n[input]\nkind = \"zmq\"\n",
            "with \"shots\" each rank migrates whole shots: leave it [0, 0, 0]");
    /* check plans for the rank count: the roles and the image each shot sends */
    char *c = test_write_file(dir, "ok.toml", RTM_CFG "decompose = \"shots\"\n[input]\nkind = \"zmq\"\n");
    const char *argv[] = {test_prog("seislive"), "check", "-c", c, "--ranks", "3", NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 30, &r), 0);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.out, "decomposition: shots, 3 ranks: rank 0 reads the input, hands the shots out"),
                       "%s", r.out);
    cr_assert_not_null(strstr(r.out, "at most the whole grid 40 x 30 x 30 = 0.3 MiB"), "%s", r.out); /* 36000 x 8 B */
    test_run_free(&r);
    /* `seislive model` of that file makes a model job of it, after the config check */
    char out[4200];
    snprintf(out, sizeof out, "%s/x.segy", dir);
    const char *margv[] = {test_prog("seislive"), "model", "-c", c, "-o", out, NULL};
    cr_assert_eq(test_run(margv, 30, &r), 0);
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.err, "\"shots\" hands the shots of the rtm job out to the ranks; the model job has none"),
                       "%s", r.err);
    test_run_free(&r);
    free(c);
    test_rmtree(dir);
    free(dir);
}
