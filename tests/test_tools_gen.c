/* seislive-gen: the microseismic generator puts P and S pulses at the straight-ray
 * travel times (computed here independently from the written station and event files),
 * its noise has the requested level, and its miniSEED reads back with libmseed; the
 * shot generator's model has its interfaces where they were asked for and its modeling
 * configuration is one that seislive accepts. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <libmseed.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support.h"

/* Samples of one miniSEED file (float32 records) and its start time in us. */
static float *read_mseed(const char *path, int *n, hptime_t *t0, double *rate)
{
    MSFileParam *fp = NULL;
    MSRecord *msr = NULL;
    float *x = NULL;
    *n = 0;
    int rc;
    while ((rc = ms_readmsr_r(&fp, &msr, path, 0, NULL, NULL, 1, 1, 0)) == MS_NOERROR) {
        if (*n == 0) {
            *t0 = msr->starttime;
            *rate = msr->samprate;
        }
        cr_assert_eq(msr->sampletype, 'f');
        x = realloc(x, (size_t)(*n + msr->numsamples) * sizeof *x);
        memcpy(x + *n, msr->datasamples, (size_t)msr->numsamples * sizeof *x);
        *n += (int)msr->numsamples;
    }
    cr_assert_eq(rc, MS_ENDOFFILE, "%s: %s", path, ms_errorstr(rc));
    ms_readmsr_r(&fp, &msr, NULL, 0, NULL, NULL, 0, 0, 0);
    return x;
}

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

Test(tools_gen, micro_arrivals_at_straight_ray_times)
{
    char *dir = test_tmpdir();
    char out[4200];
    snprintf(out, sizeof out, "%s/m", dir);
    /* one event, no noise, P only then S only, vertical component */
    const double ex = 310, ey = 170, ez = 900, et = 1.3, vp = 3000, vs = 1700, rate = 1000;
    char ev[128];
    snprintf(ev, sizeof ev, "%g,%g,%g,%g", ex, ey, ez, et);
    for (int phase = 0; phase < 2; phase++) {
        struct run_result r = gen((const char *[]){
            "micro", "-o", out, "--count", "4,3", "--spacing", "250", "--event", ev, "--noise",
            "0", "--vp", "3000", "--vs", "1700", "--phases", phase ? "S" : "P", "--rate", "1000",
            "--duration", "3", "--components", "3", "--seed", "5", NULL});
        cr_assert_eq(r.status, 0, "stderr: %s", r.err);
        test_run_free(&r);
        /* stations from the file the generator wrote */
        char path[4400];
        snprintf(path, sizeof path, "%s/stations.txt", out);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f);
        char line[256];
        int nst = 0;
        while (fgets(line, sizeof line, f)) {
            char name[16];
            double x, y, z;
            if (line[0] == '#' || sscanf(line, "%15s %lf %lf %lf", name, &x, &y, &z) != 4)
                continue;
            nst++;
            double dist = sqrt((x - ex) * (x - ex) + (y - ey) * (y - ey) + (z - ez) * (z - ez));
            double t = et + dist / (phase ? vs : vp);
            /* the strongest of the three components peaks at the arrival */
            const char *comps[3] = {"HHZ", "HHN", "HHE"};
            int best_k = -1;
            float best = 0;
            for (int c = 0; c < 3; c++) {
                snprintf(path, sizeof path, "%s/XX.%s..%s.mseed", out, name, comps[c]);
                int n;
                hptime_t t0;
                double rr;
                float *xs = read_mseed(path, &n, &t0, &rr);
                cr_assert_eq(n, 3000);
                cr_assert_float_eq(rr, rate, 1e-9);
                cr_assert_eq(t0, (hptime_t)1767225600 * HPTMODULUS); /* 2026-01-01 */
                for (int k = 0; k < n; k++)
                    if (fabsf(xs[k]) > fabsf(best)) {
                        best = xs[k];
                        best_k = k;
                    }
                free(xs);
            }
            cr_assert_gt(fabsf(best), 0.0f, "%s: no signal", name);
            cr_assert_leq(fabs(best_k / rate - t), 1.0 / rate + 1e-9,
                          "%s phase %d: peak at %g s, travel time says %g s", name, phase,
                          best_k / rate, t);
        }
        fclose(f);
        cr_assert_eq(nst, 12);
    }
    /* the true event is written */
    char path[4400];
    snprintf(path, sizeof path, "%s/events.csv", out);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char hdr[256], line[256];
    cr_assert_not_null(fgets(hdr, sizeof hdr, f));
    cr_assert_not_null(fgets(line, sizeof line, f));
    fclose(f);
    cr_assert_not_null(strstr(line, "1,2026-01-01T00:00:01.300000Z,1767225601300000000,310.000,"
                                    "170.000,900.000"), "%s", line);
    test_rmtree(dir);
    free(dir);
}

Test(tools_gen, micro_noise_level)
{
    char *dir = test_tmpdir();
    char out[4200];
    snprintf(out, sizeof out, "%s/m", dir);
    struct run_result r = gen((const char *[]){"micro", "-o", out, "--count", "1,1", "--noise",
                                               "0.2", "--components", "1", "--rate", "500",
                                               "--duration", "40", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    test_run_free(&r);
    char path[4400];
    snprintf(path, sizeof path, "%s/XX.S001..HHZ.mseed", out);
    int n;
    hptime_t t0;
    double rate;
    float *x = read_mseed(path, &n, &t0, &rate);
    cr_assert_eq(n, 20000);
    double s = 0, s2 = 0;
    for (int i = 0; i < n; i++) {
        s += x[i];
        s2 += (double)x[i] * x[i];
    }
    double mean = s / n, sd = sqrt(s2 / n - mean * mean);
    /* 20000 samples: the standard error of sd is 0.5 %, of the mean 0.0014 */
    cr_assert(fabs(sd - 0.2) < 0.01, "sd %g", sd);
    cr_assert(fabs(mean) < 0.01, "mean %g", mean);
    free(x);
    test_rmtree(dir);
    free(dir);
}

Test(tools_gen, micro_bad_options_exit_2)
{
    struct run_result r = gen((const char *[]){"micro", "--count", "0", "-o", "/tmp/x", NULL});
    cr_assert_eq(r.status, 2);
    cr_assert_not_null(strstr(r.err, "bad value for --count"), "%s", r.err);
    test_run_free(&r);
    r = gen((const char *[]){"micro", NULL});
    cr_assert_eq(r.status, 2);
    cr_assert_not_null(strstr(r.err, "exactly one of -o DIR and --zmq"), "%s", r.err);
    test_run_free(&r);
}

/* The model the shot generator writes, checked at known points. */
Test(tools_gen, shots_model_interfaces)
{
    char *dir = test_tmpdir();
    char out[4200];
    snprintf(out, sizeof out, "%s/s", dir);
    /* /bin/true stands in for the modeling, which the demo test exercises */
    struct run_result r = gen((const char *[]){
        "shots", "-o", out, "--n", "60,5,40", "--d", "10", "--v0", "1500", "--layer", "100:2000",
        "--layer", "300:3000", "--dip", "150:10:2500", "--salt", "400,20,200,50,100,80:4000",
        "--smooth", "0", "--seislive", "/bin/true", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    test_run_free(&r);
    char path[4400];
    snprintf(path, sizeof path, "%s/model.f32", out);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    float *v = malloc(60 * 5 * 40 * sizeof *v);
    cr_assert_eq(fread(v, sizeof *v, 60 * 5 * 40, f), (size_t)(60 * 5 * 40));
    fclose(f);
#define V(ix, iy, iz) v[((iz) * 5 + (iy)) * 60 + (ix)]
    cr_assert_eq(V(10, 2, 9), 1500.0f);   /* z = 90 m: top */
    cr_assert_eq(V(10, 2, 10), 2000.0f);  /* z = 100 m: first layer */
    /* dipping interface: z = 150 + x tan(10 deg); at x = 100 m, 167.6 m */
    cr_assert_eq(V(10, 2, 16), 2000.0f);
    cr_assert_eq(V(10, 2, 17), 2500.0f);
    /* at x = 0: 150 m */
    cr_assert_eq(V(0, 2, 14), 2000.0f);
    cr_assert_eq(V(0, 2, 15), 2500.0f);
    cr_assert_eq(V(10, 2, 30), 3000.0f);  /* the deep layer cuts the dipping one off */
    cr_assert_eq(V(40, 2, 25), 4000.0f);  /* inside the salt */
    cr_assert_eq(V(40, 2, 19), 2000.0f);  /* just above its top (and the dipping layer) */
    cr_assert_eq(V(55, 2, 25), 2500.0f);  /* beside it */
#undef V
    free(v);
    /* the modeling configuration validates */
    snprintf(path, sizeof path, "%s/survey.toml", out);
    const char *argv[] = {test_prog("seislive"), "check", "-q", "-c", path, NULL};
    cr_assert_eq(test_run(argv, 60, &r), 0);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    test_rmtree(dir);
    free(dir);
}

/* 'none' works for --layer as it does for --dip and --salt: with all three the model is
 * v0 everywhere; 'none' then a layer gives just that layer. */
Test(tools_gen, shots_layer_none)
{
    char *dir = test_tmpdir();
    char out[4200], path[4400];
    snprintf(out, sizeof out, "%s/s", dir);
    snprintf(path, sizeof path, "%s/model.f32", out);
    const int n = 20 * 3 * 16;
    float *v = malloc(n * sizeof *v);
    for (int k = 0; k < 2; k++) {
        struct run_result r = gen((const char *[]){
            "shots", "-o", out, "--n", "20,3,16", "--d", "10", "--v0", "1700", "--layer", "none",
            "--layer", k ? "80:2100" : "none", "--dip", "none", "--salt", "none", "--smooth", "0",
            "--seislive", "/bin/true", NULL});
        cr_assert_eq(r.status, 0, "--layer none%s: status %d, stderr: %s", k ? " --layer 80:2100" : "",
                     r.status, r.err);
        test_run_free(&r);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f);
        cr_assert_eq(fread(v, sizeof *v, n, f), (size_t)n);
        fclose(f);
        for (int i = 0; i < n; i++) {
            int iz = i / (20 * 3);
            float want = k && iz * 10 >= 80 ? 2100.0f : 1700.0f;
            cr_assert_eq(v[i], want, "case %d, cell %d (z = %d m): %g, expected %g", k, i, iz * 10,
                         (double)v[i], (double)want);
        }
    }
    free(v);
    test_rmtree(dir);
    free(dir);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* SIGTERM to the shot generator while `seislive model` runs: the generator passes it on,
 * the modeling child is gone (by its pid) within a bound, the generator exits with a
 * message, and no shots.segy is left for a later --reuse to stream as if complete.
 * The child is the real seislive, started through a wrapper that records its pid and
 * execs it (same pid); the model would run for about a minute if nobody stopped it. */
Test(tools_gen, shots_sigterm_stops_the_modeling_child, .timeout = 90)
{
    char *dir = test_tmpdir();
    char out[4200], wrap_text[16384], pidfile[4400], errpath[4400], segy[4400];
    snprintf(out, sizeof out, "%s/s", dir);
    snprintf(pidfile, sizeof pidfile, "%s/child.pid", dir);
    snprintf(errpath, sizeof errpath, "%s/gen.err", dir);
    snprintf(segy, sizeof segy, "%s/shots.segy", out);
    snprintf(wrap_text, sizeof wrap_text, "#!/bin/sh\necho $$ > %s.tmp && mv %s.tmp %s\nexec %s \"$@\"\n",
             pidfile, pidfile, pidfile, test_prog("seislive"));
    char *wrap = test_write_file(dir, "wrap.sh", wrap_text);
    cr_assert_eq(chmod(wrap, 0755), 0);
    pid_t gen_pid = test_fork();
    cr_assert_geq(gen_pid, 0);
    if (gen_pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        setenv("OMP_NUM_THREADS", "1", 1);
        execl(test_prog("seislive-gen"), "seislive-gen", "shots", "-o", out, "--n", "60,30,60",
              "--t-max", "4", "--shots", "4", "--device", "cpu", "--seislive", wrap, (char *)NULL);
        _exit(127);
    }
    /* the child's pid, once the wrapper wrote it */
    pid_t child = 0;
    for (int i = 0; i < 300 && child <= 0; i++) {
        FILE *f = fopen(pidfile, "r");
        if (f) {
            if (fscanf(f, "%d", &child) != 1)
                child = 0;
            fclose(f);
        }
        if (child <= 0)
            sleep_ms(100);
    }
    cr_assert_gt(child, 0, "the modeling child never started");
    sleep_ms(1000); /* let it get into the time loop */
    cr_assert_eq(kill(child, 0), 0, "the modeling child ended before the signal");
    cr_assert_eq(kill(gen_pid, SIGTERM), 0);
    int st = -1;
    pid_t r = 0;
    for (int i = 0; i < 150 && r == 0; i++) { /* 15 s: a step of this model takes ~10 ms */
        r = waitpid(gen_pid, &st, WNOHANG);
        if (r == 0)
            sleep_ms(100);
    }
    bool gen_exited = r == gen_pid;
    bool child_gone = kill(child, 0) < 0 && errno == ESRCH;
    /* clean up whatever is left before asserting, so a failure leaves no process behind */
    if (!gen_exited) {
        kill(gen_pid, SIGKILL);
        waitpid(gen_pid, NULL, 0);
    }
    if (!child_gone)
        kill(child, SIGKILL);
    FILE *ef = fopen(errpath, "r");
    char err[8192] = "";
    if (ef) {
        size_t n = fread(err, 1, sizeof err - 1, ef);
        err[n] = '\0';
        fclose(ef);
    }
    cr_assert(gen_exited, "seislive-gen still running 15 s after SIGTERM\n%s", err);
    cr_assert(child_gone, "seislive model (pid %d) still running after seislive-gen exited\n%s", child, err);
    cr_assert(WIFEXITED(st), "seislive-gen died of signal %d\n%s", WIFSIGNALED(st) ? WTERMSIG(st) : 0, err);
    cr_assert_neq(WEXITSTATUS(st), 0, "an interrupted survey reported success\n%s", err);
    cr_assert_not_null(strstr(err, "stopped"), "%s", err);
    cr_assert_neq(access(segy, F_OK), 0, "%s exists after an interrupted modeling", segy);
    free(wrap);
    test_rmtree(dir);
    free(dir);
}

/* The default geometry of a grid of shots (--shots NX,NY, no origin or spacing given):
 * every shot inside the model, spread over its middle 3/4 in x and in y.  (The y origin
 * was the middle whatever NY, so the later rows of shots fell past the model's edge and
 * the modeling failed on shot NX + 1.) */
Test(tools_gen, shots_grid_default_geometry_inside)
{
    char *dir = test_tmpdir();
    char out[4200], path[4400];
    snprintf(out, sizeof out, "%s/s", dir);
    snprintf(path, sizeof path, "%s/survey.toml", out);
    struct run_result r = gen((const char *[]){"shots", "-o", out, "--n", "41,33,16", "--d", "10", "--shots", "3,4",
                                                "--seislive", "/bin/true", NULL});
    cr_assert_eq(r.status, 0, "status %d, stderr: %s", r.status, r.err);
    test_run_free(&r);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[8192];
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "sources = [", 11) == 0) {
            found = 1;
            double lo[2] = {1e30, 1e30}, hi[2] = {-1e30, -1e30}, x, y, z;
            int n = 0, used;
            for (const char *p = line + 11; sscanf(p, " [%lf, %lf, %lf]%n", &x, &y, &z, &used) == 3; n++) {
                cr_assert(x >= 0 && x <= 400 && y >= 0 && y <= 320, "shot %d at (%g, %g) outside 400 x 320 m", n, x, y);
                lo[0] = x < lo[0] ? x : lo[0], hi[0] = x > hi[0] ? x : hi[0];
                lo[1] = y < lo[1] ? y : lo[1], hi[1] = y > hi[1] ? y : hi[1];
                p += used;
                while (*p == ',' || *p == ' ')
                    p++;
            }
            cr_assert_eq(n, 12, "%d shots in: %s", n, line);
            cr_assert_float_eq(hi[0] - lo[0], 0.75 * 400, 1e-6, "x spread %g", hi[0] - lo[0]);
            cr_assert_float_eq(hi[1] - lo[1], 0.75 * 320, 1e-6, "y spread %g", hi[1] - lo[1]);
            cr_assert_float_eq(lo[1], 320.0 / 8, 1e-6, "first y %g", lo[1]);
        }
    fclose(f);
    cr_assert(found, "no sources line in %s", path);
    test_rmtree(dir);
    free(dir);
}
