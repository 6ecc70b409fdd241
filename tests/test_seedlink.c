/* SeedLink input against a real server: ringserver 4.5.3 (the reference SeedLink
 * server, built from ../shared/peers once per build folder), serving a folder of the
 * generator's miniSEED files as a live feed on 127.0.0.1.
 *
 *  - `seislive run` with kind = "seedlink" finds the same events as with file input on
 *    the same files, although ringserver is stopped (SIGTERM) mid-stream and restarted:
 *    the client reconnects and resumes, and every channel's ingested sample count is
 *    the files' count (no duplicate, no missing sample);
 *  - `kill -9` of seislive mid-stream and a restart resume from the saved sequence
 *    numbers: the counts (carried in the state) again equal the files';
 *  - protocol 3.1 and 4.0 (forced with seedlink_protocol) give the same samples and
 *    events.
 *
 * The tests skip (saying why) only when ringserver cannot be built. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "io/mseed_read.h"
#include "io/seedlink.h"
#include "stream/error.h"
#include "tests/support.h"

#define RECLEN 512 /* ringserver's default MaxPacketSize */

struct env {
    char *dir;
    char data[512], incoming[512], conf[512], rslog[512], rs[1024];
    int port, nrec;
    pid_t rs_pid;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* ringserver, built once into $SEISLIVE_BUILD/peers/ringserver (flock: parallel tests). */
static void ringserver_bin(struct env *e)
{
    const char *b = getenv("SEISLIVE_BUILD");
    snprintf(e->rs, sizeof e->rs, "%s/peers/ringserver/ringserver", b ? b : "build/cpu");
    if (access(e->rs, X_OK) == 0)
        return;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/peers && flock %s/peers/.lock ../shared/tools/ringserver.sh %s/peers/ringserver",
             b ? b : "build/cpu", b ? b : "build/cpu", b ? b : "build/cpu");
    const char *argv[] = {"/bin/bash", "-c", cmd, NULL};
    struct run_result r;
    test_run(argv, 300, &r);
    if (r.status != 0 || access(e->rs, X_OK) != 0) {
        char why[600];
        snprintf(why, sizeof why, "ringserver cannot be built (../shared/tools/ringserver.sh): %.400s", r.err);
        test_run_free(&r);
        cr_skip_test("%s", why);
    }
    test_run_free(&r);
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t l = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &l);
    close(fd);
    return ntohs(a.sin_port);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    size_t got = fread(p, 1, (size_t)n, f);
    p[got] = '\0';
    fclose(f);
    if (len)
        *len = got;
    return p;
}

static void put(const char *path, const char *p, size_t n)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.part", path);
    FILE *f = fopen(tmp, "wb");
    cr_assert_not_null(f, "%s", tmp);
    cr_assert_eq(fwrite(p, 1, n, f), n);
    fclose(f);
    cr_assert_eq(rename(tmp, path), 0);
}

/* The recording (SEED) and a server folder with a primer record: ringserver 4.5.3 does
 * not send the very first packet of a fresh ring to a client asking from a time or the
 * earliest packet, so that packet is one of another network, which nobody selects. */
static void setup(struct env *e, uint64_t seed)
{
    ringserver_bin(e);
    e->dir = test_tmpdir();
    snprintf(e->data, sizeof e->data, "%s/data", e->dir);
    snprintf(e->incoming, sizeof e->incoming, "%s/incoming", e->dir);
    snprintf(e->conf, sizeof e->conf, "%s/ring.conf", e->dir);
    snprintf(e->rslog, sizeof e->rslog, "%s/ringserver.log", e->dir);
    char seeds[32];
    snprintf(seeds, sizeof seeds, "%llu", (unsigned long long)seed);
    const char *gen[] = {test_prog("seislive-gen"), "micro", "-o", e->data, "--count", "4,4", "--spacing", "250",
                         "--components", "3", "--events", "3", "--box", "150,850,150,850,600,1400",
                         "--duration", "30", "--rate", "250", "--noise", "0.05", "--seed", seeds,
                         "--reclen", "512", NULL};
    struct run_result r;
    cr_assert_eq(test_run(gen, 60, &r), 0);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    mkdir(e->incoming, 0755);
    char path[1100];
    snprintf(path, sizeof path, "%s/XX.S001..HHZ.mseed", e->data);
    size_t n;
    char *rec = slurp(path, &n);
    cr_assert(rec && n % RECLEN == 0);
    e->nrec = (int)(n / RECLEN);
    memcpy(rec + 18, "ZZ", 2); /* the fixed header's network code */
    snprintf(path, sizeof path, "%s/00primer.mseed", e->incoming);
    put(path, rec, RECLEN);
    free(rec);
    e->port = free_port();
    char conf[2048];
    snprintf(conf, sizeof conf,
             "ListenPort %d\nRingDirectory %s\nRingSize 16M\nAcceptIP 127.0.0.1\nResolveHostnames 0\n"
             "MSeedScan %s/ StateFile=%s/scan.state InitCurrentState=n Match=.*\\.mseed$\n",
             e->port, e->dir, e->incoming, e->dir);
    free(test_write_file(e->dir, "ring.conf", conf));
}

/* Copy records [R0, R1) of every channel file into the served folder, as new files
 * (renamed in whole: the scanner never sees half a record). */
static void feed(struct env *e, int r0, int r1, const char *suffix)
{
    DIR *d = opendir(e->data);
    cr_assert_not_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l < 6 || strcmp(de->d_name + l - 6, ".mseed") != 0)
            continue;
        char src[1100], dst[1200];
        snprintf(src, sizeof src, "%s/%s", e->data, de->d_name);
        size_t n;
        char *p = slurp(src, &n);
        cr_assert_eq(n, (size_t)e->nrec * RECLEN, "%s: every channel has the same records", src);
        snprintf(dst, sizeof dst, "%s/%.*s%s.mseed", e->incoming, (int)(l - 6), de->d_name, suffix);
        put(dst, p + (size_t)r0 * RECLEN, (size_t)(r1 - r0) * RECLEN);
        free(p);
    }
    closedir(d);
}

static pid_t spawn(const char *const argv[], const char *log)
{
    pid_t pid = test_fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static void start_ringserver(struct env *e)
{
    const char *argv[] = {e->rs, e->conf, NULL};
    e->rs_pid = spawn(argv, e->rslog);
    double t0 = now_s();
    for (;;) { /* until it accepts connections */
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)e->port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
        close(fd);
        if (ok)
            return;
        cr_assert_lt(now_s() - t0, 20.0, "ringserver did not start listening: %s", slurp(e->rslog, NULL));
        sleep_s(0.05);
    }
}

/* Until the server lists N streams (INFO STREAMS through our own client): its folder
 * scan has taken in every file, so a client's channel set is whole from the start. */
static void wait_streams(struct env *e, int n)
{
    char server[64];
    snprintf(server, sizeof server, "127.0.0.1:%d", e->port);
    double t0 = now_s();
    int got = 0;
    for (;;) {
        struct seedlink_conn c;
        seedlink_init(&c, 5.0, NULL, NULL);
        struct seedlink_stream *st = NULL;
        got = 0;
        if (seedlink_connect(&c, server) == 0 && seedlink_hello(&c, 0) == 0)
            seedlink_info_streams(&c, &st, &got);
        seedlink_close(&c);
        free(st);
        if (got >= n)
            return;
        cr_assert_lt(now_s() - t0, 30.0, "the server lists %d streams, not %d: %s", got, n, err_msg());
        sleep_s(0.2);
    }
}

static void stop_pid(pid_t pid, int sig)
{
    kill(pid, sig);
    int st;
    waitpid(pid, &st, 0);
}

/* Wait up to TIMEOUT_S for PID's exit: its status (exit code or 128 + signal). */
static int wait_exit(pid_t pid, double timeout_s, const char *log)
{
    double t0 = now_s();
    int st;
    while (waitpid(pid, &st, WNOHANG) == 0) {
        if (now_s() - t0 > timeout_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            cr_assert_fail("seislive did not end within %.0f s; its log:\n%s", timeout_s, slurp(log, NULL));
        }
        sleep_s(0.05);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static bool log_has(const char *log, const char *what)
{
    char *t = slurp(log, NULL);
    bool yes = t && strstr(t, what);
    free(t);
    return yes;
}

static void wait_log(const char *log, const char *what, double timeout_s)
{
    double t0 = now_s();
    while (!log_has(log, what)) {
        cr_assert_lt(now_s() - t0, timeout_s, "no \"%s\" in the log within %.0f s:\n%s", what, timeout_s,
                     slurp(log, NULL));
        sleep_s(0.05);
    }
}

/* A locate config reading KIND ("seedlink" or "files") into OUT; EXTRA: more [input]. */
static char *config(struct env *e, const char *name, const char *kind, const char *extra, const char *state)
{
    char input[1024], text[4096];
    if (strcmp(kind, "files") == 0)
        snprintf(input, sizeof input, "kind = \"files\"\npaths = [\"%s\"]\n", e->data);
    else
        snprintf(input, sizeof input,
                 "kind = \"seedlink\"\nseedlink = \"127.0.0.1:%d\"\nstreams = [\"XX_*:HH?\"]\n"
                 "seedlink_start = \"2026-01-01T00:00:00Z\"\nwatch_idle = 5.0\nseedlink_timeout = 10.0\n"
                 "seedlink_backoff_max = 2.0\n%s",
                 e->port, extra);
    snprintf(text, sizeof text,
             "[job]\nkind = \"locate\"\n[locate]\nstations = \"%s/stations.txt\"\nphases = \"PS\"\n"
             "traveltime = \"homogeneous\"\nvp = 3500.0\nvs = 2000.0\ngrid_n = [21, 21, 29]\n"
             "grid_d = [50.0, 50.0, 50.0]\ngrid_o = [0.0, 0.0, 300.0]\ncf = \"stalta\"\nsta = 0.05\n"
             "lta = 0.5\nnormalize = \"count\"\nblock_samples = 1000\ntrigger = \"mad\"\nthreshold = 8.0\n"
             "min_interval = 1.0\n[input]\n%sslots = 2\nslot_mib = 4.0\n[output]\ndir = \"%s/out-%s\"\n%s"
             "[runtime]\ndevice = \"cpu\"\n",
             e->data, input, e->dir, name, state ? state : "");
    char file[128];
    snprintf(file, sizeof file, "%s.toml", name);
    return test_write_file(e->dir, file, text);
}

/* origin_ns,x,y,z of every event of run NAME, one line each. */
static char *events(struct env *e, const char *name)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/out-%s/events.csv", e->dir, name);
    char *t = slurp(path, NULL);
    cr_assert_not_null(t, "%s", path);
    size_t cap = strlen(t) + 1, k = 0;
    char *out = calloc(1, cap);
    int line = 0;
    for (char *save = NULL, *l = strtok_r(t, "\n", &save); l; l = strtok_r(NULL, "\n", &save), line++) {
        if (line == 0)
            continue; /* header */
        int f = 0;
        for (char *p = l; *p && f < 6; p++) { /* fields 2..5: origin_ns x y z */
            if (*p == ',') {
                f++;
                if (f == 6)
                    break;
                if (f >= 3)
                    out[k++] = ',';
                continue;
            }
            if (f >= 2)
                out[k++] = *p;
        }
        out[k++] = '\n';
    }
    free(t);
    return out;
}

/* Every channel of the files has its count in LOG ("channel N.S.L.C: K samples", the
 * last such line of the channel), and the counts agree. */
static void counts_match_files(struct env *e, const char *log)
{
    struct mseed_set set = {0};
    struct mseed_stats ms = {0};
    char path[1100];
    cr_assert_eq(mseed_read_path(e->data, &set, &ms), 0);
    char *t = slurp(log, NULL);
    for (int i = 0; i < set.ntr; i++) {
        const struct mseed_trace *tr = &set.tr[i];
        int64_t want = 0;
        for (int s = 0; s < tr->nseg; s++)
            want += tr->seg[s].n;
        snprintf(path, sizeof path, "channel %s.%s.%s.%s: ", tr->id.net, tr->id.sta, tr->id.loc, tr->id.cha);
        const char *p = NULL;
        for (const char *q = t; (q = strstr(q, path)); q++)
            p = q;
        cr_assert_not_null(p, "no count for %s in the log", path);
        long long got = atoll(p + strlen(path));
        cr_expect_eq(got, want, "%s%lld samples ingested, the files have %lld", path, got, (long long)want);
    }
    cr_assert_eq(set.ntr, 48);
    free(t);
    mseed_set_free(&set);
}

/* Sum of the "N WHAT" numbers over the channel lines of LOG. */
static long long sum_field(const char *log, const char *what)
{
    char *t = slurp(log, NULL);
    long long sum = 0;
    for (char *save = NULL, *l = strtok_r(t, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (!strstr(l, " channel "))
            continue;
        char *p = strstr(l, what);
        if (!p)
            continue;
        while (p > l && p[-1] == ' ')
            p--;
        while (p > l && p[-1] >= '0' && p[-1] <= '9')
            p--;
        sum += atoll(p);
    }
    free(t);
    return sum;
}

static int run_to_end(const char *cfg, const char *log, double timeout_s)
{
    const char *argv[] = {test_prog("seislive"), "run", "-c", cfg, NULL};
    return wait_exit(spawn(argv, log), timeout_s, log);
}

Test(seedlink, same_events_as_files_through_a_server_restart, .timeout = 240)
{
    struct env e = {0};
    setup(&e, 7);
    char *files = config(&e, "files", "files", "", NULL);
    char flog[1100], slog[1100];
    snprintf(flog, sizeof flog, "%s/files.log", e.dir);
    snprintf(slog, sizeof slog, "%s/seedlink.log", e.dir);
    cr_assert_eq(run_to_end(files, flog, 120), 0, "%s", slurp(flog, NULL));

    /* the first 30 records of each channel (13.4 s) are live when the client starts */
    int half = 30;
    feed(&e, 0, half, "");
    start_ringserver(&e);
    wait_streams(&e, 49);
    char *sl = config(&e, "seedlink", "seedlink", "", NULL);
    const char *argv[] = {test_prog("seislive"), "run", "-c", sl, NULL};
    pid_t run = spawn(argv, slog);
    wait_log(slog, "event 0:", 60); /* the first event's blocks went through */
    /* the server goes mid-stream.  SIGTERM: ringserver 4.5.3 killed with SIGKILL may hand
     * out the same sequence numbers again for other packets after its restart (its scan
     * state and ring index are not crash-safe), which no client can resume from. */
    stop_pid(e.rs_pid, SIGTERM);
    feed(&e, half, e.nrec, ".2");     /* the recorder goes on writing meanwhile */
    sleep_s(1.0);
    start_ringserver(&e);
    cr_assert_eq(wait_exit(run, 120, slog), 0, "%s", slurp(slog, NULL));
    stop_pid(e.rs_pid, SIGTERM);

    cr_assert(log_has(slog, "reconnecting"), "the client never lost the server:\n%s", slurp(slog, NULL));
    counts_match_files(&e, slog);
    cr_expect_eq(sum_field(slog, "late dropped"), 0);
    char *a = events(&e, "files"), *b = events(&e, "seedlink");
    cr_assert_gt(strlen(a), 0, "the file run found no event");
    cr_expect_str_eq(b, a, "events differ:\nseedlink:\n%s\nfiles:\n%s", b, a);
    free(a);
    free(b);
    free(files);
    free(sl);
    if (!getenv("SEISLIVE_TEST_KEEP")) /* to look at the logs */
        test_rmtree(e.dir);
    free(e.dir);
}

/* The resume cursor (next block's first sample) in DIR/state.bin, or -1. */
static long long state_cursor(const char *dir)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/state.bin", dir);
    size_t n;
    char *t = slurp(path, &n);
    if (!t)
        return -1;
    const char *g = memmem(t, n, "\ngrid ", 6);
    long long g0 = 0, cur = -1;
    double rate;
    if (!g || sscanf(g + 6, "%lld %lf %lld", &g0, &rate, &cur) != 3)
        cur = -1;
    free(t);
    return cur;
}

Test(seedlink, kill_9_and_restart_resume_from_the_saved_sequence, .timeout = 240)
{
    struct env e = {0};
    setup(&e, 11);
    int part = 30; /* 3360 samples: three blocks of 1000 and part of a fourth */
    feed(&e, 0, part, "");
    start_ringserver(&e);
    wait_streams(&e, 49);
    char state[1200], sdir[1100], log1[1100], log2[1100];
    snprintf(sdir, sizeof sdir, "%s/state", e.dir);
    snprintf(state, sizeof state, "state_dir = \"%s\"\ncheckpoint_every = 1\n", sdir);
    snprintf(log1, sizeof log1, "%s/run1.log", e.dir);
    snprintf(log2, sizeof log2, "%s/run2.log", e.dir);
    char *sl = config(&e, "seedlink", "seedlink", "", state);
    const char *argv[] = {test_prog("seislive"), "run", "-c", sl, NULL};
    pid_t run = spawn(argv, log1);
    double t0 = now_s();
    while (state_cursor(sdir) < 3000) { /* three blocks processed and checkpointed */
        cr_assert_lt(now_s() - t0, 60.0, "no checkpoint of block 3:\n%s", slurp(log1, NULL));
        sleep_s(0.05);
    }
    stop_pid(run, SIGKILL); /* mid-stream: 360 samples per channel buffered, not yet in a block */
    cr_assert_eq(state_cursor(sdir), 3000);
    feed(&e, part, e.nrec, ".2");
    cr_assert_eq(run_to_end(sl, log2, 120), 0, "%s", slurp(log2, NULL));
    stop_pid(e.rs_pid, SIGTERM);

    cr_assert(log_has(log2, "resuming from the saved state"), "%s", slurp(log2, NULL));
    cr_assert(log_has(log2, " from sequence "), "%s", slurp(log2, NULL));
    /* the counts carried in the state plus the second run's: exactly the files' */
    counts_match_files(&e, log2);
    /* the record across the cut was asked for again and its delivered part dropped */
    cr_expect_gt(sum_field(log2, "resumed dropped"), 0);
    cr_expect_eq(sum_field(log2, "overlapping"), 0);
    cr_expect_eq(sum_field(log2, "late dropped"), 0);
    free(sl);
    if (!getenv("SEISLIVE_TEST_KEEP")) /* to look at the logs */
        test_rmtree(e.dir);
    free(e.dir);
}

Test(seedlink, protocols_3_and_4_give_the_same_samples, .timeout = 240)
{
    struct env e = {0};
    setup(&e, 5);
    feed(&e, 0, e.nrec, "");
    start_ringserver(&e);
    wait_streams(&e, 49);
    char *v3 = config(&e, "v3", "seedlink", "seedlink_protocol = \"3\"\n", NULL);
    char *v4 = config(&e, "v4", "seedlink", "seedlink_protocol = \"4\"\n", NULL);
    char l3[1100], l4[1100];
    snprintf(l3, sizeof l3, "%s/v3.log", e.dir);
    snprintf(l4, sizeof l4, "%s/v4.log", e.dir);
    cr_assert_eq(run_to_end(v3, l3, 120), 0, "%s", slurp(l3, NULL));
    cr_assert_eq(run_to_end(v4, l4, 120), 0, "%s", slurp(l4, NULL));
    stop_pid(e.rs_pid, SIGTERM);
    cr_assert(log_has(l3, "), protocol 3"), "%s", slurp(l3, NULL));
    cr_assert(log_has(l4, "), protocol 4"), "%s", slurp(l4, NULL));
    counts_match_files(&e, l3);
    counts_match_files(&e, l4);
    char *a = events(&e, "v3"), *b = events(&e, "v4");
    cr_assert_gt(strlen(a), 0);
    cr_expect_str_eq(a, b);
    free(a);
    free(b);
    free(v3);
    free(v4);
    if (!getenv("SEISLIVE_TEST_KEEP")) /* to look at the logs */
        test_rmtree(e.dir);
    free(e.dir);
}

/* No server at all: every failed connection is logged with the server's name and retried
 * with a growing wait; SIGTERM ends the run at once, cleanly. */
Test(seedlink, unreachable_server_is_retried_and_sigterm_ends_the_run, .timeout = 60)
{
    struct env e = {0};
    e.dir = test_tmpdir();
    snprintf(e.data, sizeof e.data, "%s/data", e.dir);
    const char *gen[] = {test_prog("seislive-gen"), "micro", "-o", e.data, "--count", "2,2", "--duration", "2",
                         NULL};
    struct run_result r;
    cr_assert_eq(test_run(gen, 60, &r), 0);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    e.port = free_port(); /* nobody listens there */
    char *cfg = config(&e, "nobody", "seedlink", "", NULL);
    char log[1100];
    snprintf(log, sizeof log, "%s/nobody.log", e.dir);
    const char *argv[] = {test_prog("seislive"), "run", "-c", cfg, NULL};
    pid_t run = spawn(argv, log);
    wait_log(log, "reconnecting in 1.0 s", 30);
    double t0 = now_s();
    kill(run, SIGTERM);
    cr_assert_eq(wait_exit(run, 10, log), 0, "%s", slurp(log, NULL));
    cr_expect_lt(now_s() - t0, 2.0, "SIGTERM took %.1f s", now_s() - t0);
    char want[128];
    snprintf(want, sizeof want, "SeedLink server 127.0.0.1:%d: Connection refused; reconnecting in 0.5 s", e.port);
    cr_expect(log_has(log, want), "%s", slurp(log, NULL));
    free(cfg);
    if (!getenv("SEISLIVE_TEST_KEEP"))
        test_rmtree(e.dir);
    free(e.dir);
}
