/* seislive-gen shots — a synthetic survey: a velocity model (layers, a dipping
 * interface and a salt-like body, or any model file), a fixed receiver patch and a grid
 * of shots, shot records modeled with the propagator (`seislive model`, so the records
 * are exactly what seislive's own engine computes), written as SEG-Y and/or streamed
 * over ZeroMQ at a chosen pace (a shot every N seconds, as a crew would fire them).
 * A model one cell across (--n NX,1,NZ) is 2D: the survey is one line along x at y = 0,
 * modeled with the 2D propagator (line sources); shots or receivers off it are refused.
 * --tti makes the survey TTI (tools/survey_model.h: one epsilon, delta and symmetry axis
 * for every rock but the salt), modeled with [propagator] physics = "tti". */
#define LOG_COMPONENT "gen"
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <segyio/segy.h>

#include "io/wire.h"
#include "kernels/stability.h"
#include "kernels/tti.h"
#include "stream/error.h"
#include "stream/log.h"
#include "stream/signals.h"
#include "tools/gen.h"
#include "tools/gen_tti.h"
#include "tools/mkdirs.h"
#include "tools/options.h"
#include "tools/pace.h"
#include "tools/segy_shots.h"
#include "tools/survey_model.h"

static const char usage_text[] =
    "usage: seislive-gen shots [options] -o DIR [--zmq ENDPOINT]\n"
    "\n"
    "A synthetic survey modeled with seislive's propagator (`seislive model`).  Writes\n"
    "DIR/model.f32 (the true model), DIR/model_smooth.f32 (smoothed, for migration),\n"
    "DIR/model.json, DIR/survey.toml (the modeling configuration) and DIR/shots.segy;\n"
    "with --zmq, then streams the shots at the chosen pace.\n"
    "x east, y north, z down, in m; arrays x fastest, then y, z slowest.\n"
    "2D: --n NX,1,NZ makes a 2D model (the vertical plane y = 0), modeled in 2D (line\n"
    "sources, no y layers); the shots and receivers are one line along x at y = 0.\n"
    "\n"
    "model (default: the demo model):\n"
    "  --n NX,NY,NZ           grid points (default 81,41,51)\n"
    "  --d D[,DY,DZ]          grid spacing, m (default 10)\n"
    "  --v0 V                 velocity at the top, m/s (default 1800)\n"
    "  --layer Z:V            horizontal interface at depth Z, velocity V below;\n"
    "                         repeatable (default 150:2300 and 380:2900; 'none' = no\n"
    "                         layers)\n"
    "  --dip Z:DEG:V          dipping interface, depth Z at x = 0, dipping DEG toward +x,\n"
    "                         velocity V below (default 250:6:2600; 'none' = no dip)\n"
    "  --salt X,Y,TOP,RX,RY,H:V  salt-like dome centred at X,Y from depth TOP, half-widths\n"
    "                         RX, RY, height H, velocity V ('none' = no salt; default a\n"
    "                         small dome under the middle of the model, 4500 m/s)\n"
    "  --model FILE           take this model instead: raw float32 (little-endian) of\n"
    "                         --n points in the order of --layout, or SEG-Y (.segy,\n"
    "                         .sgy: one trace per x-y column, samples in depth)\n"
    "  --layout x-fastest|z-fastest  order of a raw --model file: x, then y, then z\n"
    "                         (default), or depth first, then y, then x (e.g. Marmousi-2:\n"
    "                         --n 500,1,174 --layout z-fastest); model.f32 is x fastest\n"
    "  --smooth R             smoothing half-width of model_smooth.f32, cells (default 3)\n"
    "  --tti EPS,DELTA[,THETA[,PHI]]  a TTI survey: every rock but the salt (isotropic;\n"
    "                         with --model, every point) has Thomsen epsilon EPS and\n"
    "                         delta DELTA (each > -0.5, |EPS - DELTA| <= 0.75), and\n"
    "                         the whole model one symmetry axis, tilted THETA degrees from\n"
    "                         the vertical toward +x (-90 to 90; default 0: VTI), turned\n"
    "                         PHI degrees from x toward y (-360 to 360; default 0).\n"
    "                         THETA 'dip': tilted layers, the axis normal to the bedding\n"
    "                         of the --dip interface (theta = -DEG: a layer dipping toward\n"
    "                         +x has its axis tilted toward -x); with --layer none the\n"
    "                         model is purely tilted-layered.  The velocity is then v_pz.\n"
    "                         Also writes epsilon.f32, delta.f32, theta.f32, phi.f32\n"
    "                         (degrees) and their smoothed twins *_smooth.f32 beside\n"
    "                         model.f32 (same layout); survey.toml models with [propagator]\n"
    "                         physics = \"tti\" (on the --device, as any survey)\n"
    "                         (one axis for the whole model: a survey whose anisotropy\n"
    "                         a user can state in one line)\n"
    "geometry:\n"
    "  --shots NX[,NY]        shots along x and y (default 4,1; 2D: NY = 1)\n"
    "  --shot-origin X,Y,Z    first shot (default: x at 1/8 of the model, y middle (1/8\n"
    "                         with several shots in y), z = dz)\n"
    "  --shot-spacing DX[,DY] between shots, m (default: spread over 3/4 of the model)\n"
    "  --receivers NX[,NY]    fixed receiver patch (default: every 2nd node in x, 1 line;\n"
    "                         2D: NY = 1)\n"
    "  --rx-origin X,Y,Z      first receiver (default 0, middle y, z = dz)\n"
    "  --rx-spacing DX[,DY]   receiver spacing, m (default 2 dx, 2 dy)\n"
    "recording:\n"
    "  --t-max S              record length, s (default 0.6)\n"
    "  --dt S                 output sample interval, s (default 0.002)\n"
    "  --f-peak F             Ricker peak frequency, Hz (default 15)\n"
    "  --order N              stencil order (default 8)\n"
    "  --pml N                absorbing layer width, cells (default: [propagator] pml_width's,\n"
    "                         12, or 20 with --tti; docs/model.md)\n"
    "  --direct keep|subtract keep the direct wave in the records, or subtract it (a second\n"
    "                         run in a constant model of the velocity at the sources), so\n"
    "                         the image is not swamped by it near the surface (default keep)\n"
    "  --device SPEC          device for modeling: auto, cpu, cuda:N (default auto)\n"
    "  --seislive PATH        the seislive program (default: next to seislive-gen)\n"
    "output:\n"
    "  -o, --out DIR          folder for everything above (required)\n"
    "  --zmq ENDPOINT         then stream the shots: connect a PUSH socket and send\n"
    "  --pace S               seconds between shots (default 0: as fast as accepted)\n"
    "  --format f32|segy      shot payload (default f32)\n"
    "  --first-id N           add N - 1 to the shot ids (default 1: ids from the file)\n"
    "  --end                  send an end message after the last shot (the run then\n"
    "                         finishes and publishes its final image)\n"
    "  --reuse                skip modeling when DIR/shots.segy exists (stream it again)\n"
    "  -h, --help             this text\n";

struct shots_opts {
    struct survey_model m;
    const char *model_file, *out, *zmq, *format, *device, *seislive;
    int smooth, order, pml, first_id, reuse, end, direct, zfast;
    int tti_dip;
    int shots[2], rx[2];
    double shot_o[3], shot_d[2], rx_o[3], rx_d[2];
    int have_shot_o, have_shot_d, have_rx, have_rx_o, have_rx_d;
    double t_max, dt, f_peak, pace;
};

/* "A,B,...:V" -> values and V. */
static int parse_colon(const char *s, double *v, int nv, double *vel)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    char *c = strrchr(buf, ':');
    if (!c)
        return -1;
    *c = '\0';
    char *end;
    *vel = strtod(c + 1, &end);
    if (*end || !(*vel > 0))
        return -1;
    for (char *p = buf; *p; p++)
        if (*p == ':')
            *p = ',';
    return options_doubles(buf, v, nv, nv) < 0 ? -1 : 0;
}

/* The program SIBLING in the folder of this executable. */
static void sibling(const char *name, char *out, size_t len)
{
    char self[PATH_MAX - 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        snprintf(out, len, "%s", name);
        return;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(out, len, "%s/%s", self, name);
}

static bool is_segy_name(const char *path)
{
    size_t len = strlen(path);
    return (len > 5 && strcmp(path + len - 5, ".segy") == 0) || (len > 4 && strcmp(path + len - 4, ".sgy") == 0);
}

/* A raw file whose depth samples come first (index (i ny + j) nz + k, as [model] layout =
 * "z-fastest" reads it, io/model.c) into the engine's x-fastest order. */
static int transpose_z_fastest(float *v, const int n[3])
{
    size_t nx = (size_t)n[0], ny = (size_t)n[1], nz = (size_t)n[2];
    float *t = malloc(nx * ny * nz * sizeof *t);
    if (!t)
        return err_set(-ENOMEM, "out of memory for the model");
    for (size_t i = 0; i < nx; i++)
        for (size_t j = 0; j < ny; j++)
            for (size_t k = 0; k < nz; k++)
                t[(k * ny + j) * nx + i] = v[(i * ny + j) * nz + k];
    memcpy(v, t, nx * ny * nz * sizeof *t);
    free(t);
    return 0;
}

static int read_model_file(const char *path, const int n[3], int zfast, float *v)
{
    size_t cnt = (size_t)n[0] * n[1] * n[2];
    if (is_segy_name(path)) {
        struct segy_shots *s;
        int rc = segy_shots_open(path, &s);
        if (rc < 0)
            return rc;
        if (segy_shots_traces(s) != n[0] * n[1] || segy_shots_samples(s) != n[2]) {
            rc = err_set(-EINVAL, "%s: %d traces of %d samples, expected %d x %d columns of %d "
                         "(--n)", path, segy_shots_traces(s), segy_shots_samples(s), n[0], n[1], n[2]);
            segy_shots_close(s);
            return rc;
        }
        /* read the columns as one big "shot" per field record; any grouping works */
        size_t col = 0;
        struct shot sh;
        while ((rc = segy_shots_next(s, &sh)) == 1) {
            for (int t = 0; t < sh.ntr; t++, col++)
                for (int z = 0; z < n[2]; z++)
                    v[(size_t)z * n[0] * n[1] + col] = sh.data[(size_t)t * sh.ns + z];
            segy_shots_free_shot(&sh);
        }
        segy_shots_close(s);
        return rc;
    }
    FILE *f = fopen(path, "rb");
    if (!f)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    size_t got = fread(v, sizeof *v, cnt, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != cnt || extra)
        return err_set(-EINVAL, "%s: holds %s %zu float32 values of --n %d,%d,%d", path,
                       extra ? "more than the" : "fewer than the", cnt, n[0], n[1], n[2]);
    for (size_t i = 0; i < cnt; i++)
        if (!(v[i] > 0) || !isfinite(v[i]))
            return err_set(-EINVAL, "%s: byte %zu: velocity %g is not a positive number", path,
                           i * 4, (double)v[i]);
    return zfast ? transpose_z_fastest(v, n) : 0;
}

static void defaults(struct shots_opts *o)
{
    const int *n = o->m.n;
    const double *d = o->m.d;
    double lx = (n[0] - 1) * d[0], ly = (n[1] - 1) * d[1];
    if (!o->have_shot_o) {
        /* spread over the middle 3/4 of each axis with several shots along it (the
         * spacing below), at the middle with one: a grid of shots in y started at the
         * middle and ran past the model's edge (with a --shot-spacing too) */
        o->shot_o[0] = lx / 8;
        o->shot_o[1] = o->shots[1] > 1 ? ly / 8 : ly / 2;
        o->shot_o[2] = d[2];
    }
    if (!o->have_shot_d) {
        o->shot_d[0] = o->shots[0] > 1 ? 0.75 * lx / (o->shots[0] - 1) : 0;
        o->shot_d[1] = o->shots[1] > 1 ? 0.75 * ly / (o->shots[1] - 1) : 0;
    }
    if (!o->have_rx_d) {
        o->rx_d[0] = 2 * d[0];
        o->rx_d[1] = 2 * d[1];
    }
    if (!o->have_rx) {
        o->rx[0] = (int)floor(lx / o->rx_d[0]) + 1;
        o->rx[1] = 1;
    }
    if (!o->have_rx_o) {
        o->rx_o[0] = 0;
        o->rx_o[1] = o->rx[1] > 1 ? 0 : ly / 2;
        o->rx_o[2] = d[2];
    }
}

/* A 2D model (n[1] == 1) is the plane y = 0 (the origin the survey config gives it):
 * one line of shots and one of receivers on it.  Anything off the line is refused here,
 * with the option that put it there, before any file is written.  1 when refused. */
static int check_line(const struct shots_opts *o)
{
    if (o->m.n[1] != 1)
        return 0;
    const char *what = NULL;
    double y = 0;
    if (o->shots[1] > 1)
        what = "--shots: more than one shot line";
    else if (o->rx[1] > 1)
        what = "--receivers: more than one receiver line";
    else if (o->shot_o[1] != 0) {
        what = "--shot-origin: the shots are";
        y = o->shot_o[1];
    } else if (o->rx_o[1] != 0) {
        what = "--rx-origin: the receivers are";
        y = o->rx_o[1];
    }
    if (!what)
        return 0;
    if (y != 0)
        fprintf(stderr, "seislive-gen shots: %s at y = %g m, off the line of this 2D model (--n %d,1,%d: "
                "the plane y = 0; every shot and receiver at y = 0)\n", what, y, o->m.n[0], o->m.n[2]);
    else
        fprintf(stderr, "seislive-gen shots: %s in a 2D model (--n %d,1,%d: one line at y = 0; give NY = 1)\n",
                what, o->m.n[0], o->m.n[2]);
    return 1;
}

/* A TOML float: always with a decimal point or exponent (TOML keeps 10 and 10.0 apart). */
static const char *tf(char *buf, double v)
{
    snprintf(buf, 32, "%.15g", v);
    if (!strpbrk(buf, ".eEn"))
        strcat(buf, ".0");
    return buf;
}

/* The modeling configuration: the raw model file, or (V_CONST > 0) a constant model of
 * that velocity on the same grid (in a TTI survey, with the anisotropy T_CONST of the
 * source's cell); DT > 0 fixes the time step (0: automatic). */
static int write_config(const struct shots_opts *o, const char *path, double v_const,
                        const struct survey_tti *t_const, double dt)
{
    char a[32], b[32], c[32];
    FILE *f = fopen(path, "w");
    if (!f)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    fprintf(f, "# written by seislive-gen shots: forward modeling of the synthetic survey%s\n"
               "[job]\nkind = \"model\"\nname = \"gen-shots\"\n\n",
            v_const > 0 ? "\n# (the direct wave alone: the velocity at the sources everywhere)" : "");
    if (v_const > 0)
        fprintf(f, "[model]\ntype = \"constant\"\nvelocity = %s\n", tf(a, v_const));
    else
        fprintf(f, "[model]\ntype = \"raw\"\nfile = \"model.f32\"\nbyte_order = \"little\"\n"
                   "layout = \"x-fastest\"\n");
    fprintf(f, "n = [%d, %d, %d]\nd = [%s, %s, %s]\no = [0.0, 0.0, 0.0]\n", o->m.n[0],
            o->m.n[1], o->m.n[2], tf(a, o->m.d[0]), tf(b, o->m.d[1]), tf(c, o->m.d[2]));
    /* TTI: the velocity is v_pz; the parameters are files like the velocity's (same n,
     * layout and byte order), or the source cell's constants for the direct wave */
    if (o->m.tti && v_const > 0)
        fprintf(f, "epsilon = %s\ndelta = %s\ntheta = %s\n", tf(a, t_const->eps), tf(b, t_const->delta),
                tf(c, t_const->theta));
    if (o->m.tti && v_const > 0)
        fprintf(f, "phi = %s\n", tf(a, t_const->phi));
    else if (o->m.tti)
        fprintf(f, "epsilon_file = \"epsilon.f32\"\ndelta_file = \"delta.f32\"\n"
                   "theta_file = \"theta.f32\"\nphi_file = \"phi.f32\"\n");
    fprintf(f, "\n[propagator]\n");
    if (o->m.tti)
        fprintf(f, "physics = \"tti\"\n");
    fprintf(f, "order = %d\nt_max = %s\nf_peak = %s\nfree_surface = false\n", o->order, tf(a, o->t_max),
            tf(b, o->f_peak));
    if (o->pml >= 0) /* else the config's default layers for the physics (TTI's are wider) */
        fprintf(f, "pml_width = %d\n", o->pml);
    if (dt > 0)
        fprintf(f, "dt = %.10g\n", dt);
    fputc('\n', f);
    fprintf(f, "[acquisition]\nsources = [");
    int k = 0;
    for (int j = 0; j < o->shots[1]; j++)
        for (int i = 0; i < o->shots[0]; i++, k++)
            fprintf(f, "%s[%s, %s, %s]", k ? ", " : "", tf(a, o->shot_o[0] + i * o->shot_d[0]),
                    tf(b, o->shot_o[1] + j * o->shot_d[1]), tf(c, o->shot_o[2]));
    fprintf(f, "]\nrx_origin = [%s, %s, %s]\n", tf(a, o->rx_o[0]), tf(b, o->rx_o[1]),
            tf(c, o->rx_o[2]));
    fprintf(f, "rx_step = [%s, %s]\nrx_count = [%d, %d]\n", tf(a, o->rx_d[0]), tf(b, o->rx_d[1]),
            o->rx[0], o->rx[1]);
    fprintf(f, "dt_out = %s\n\n[runtime]\ndevice = \"%s\"\n", tf(a, o->dt), o->device);
    if (fclose(f) != 0)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    return 0;
}

/* Seconds a modeling child gets to stop after the signal is passed on before it is
 * killed: the model job checks for the stop at every time step, so it needs far less
 * unless it hangs (a wedged device). */
#define CHILD_STOP_GRACE_S 10

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The modeling was cut short by SIGTERM/SIGINT: an error that says so. */
static int stopped(const char *what)
{
    return err_set(-ECANCELED, "stopped by signal %d %s", signals_last() ? signals_last() : SIGTERM,
                   what);
}

static int run_model(const struct shots_opts *o, const char *cfg, const char *segy)
{
    char prog[PATH_MAX];
    if (o->seislive)
        snprintf(prog, sizeof prog, "%s", o->seislive);
    else
        sibling("seislive", prog, sizeof prog);
    if (signals_stop_requested())
        return stopped("before modeling");
    log_info("modeling %d shots x %d receivers: %s model -c %s -o %s", o->shots[0] * o->shots[1],
             o->rx[0] * o->rx[1], prog, cfg, segy);
    pid_t pid = fork();
    if (pid < 0)
        return err_set(-errno, "fork: %s", strerror(errno));
    if (pid == 0) {
        execl(prog, prog, "model", "-c", cfg, "-o", segy, (char *)NULL);
        fprintf(stderr, "seislive-gen: %s: %s\n", prog, strerror(errno));
        _exit(127);
    }
    /* SIGTERM/SIGINT only set a flag here (signals_install): pass the signal on so the
     * child stops at its next time step instead of modeling on with nobody waiting for
     * it, then wait for it.  Polled rather than a blocking waitpid: a signal landing
     * between the flag check and the wait would otherwise not wake us. */
    int st, forwarded = 0, waited_ms = 0;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return err_set(-errno, "waitpid: %s", strerror(errno));
        if (signals_stop_requested()) {
            if (!forwarded) {
                int sig = signals_last() ? signals_last() : SIGTERM;
                log_warn("signal %d: stopping %s model (pid %d)", sig, prog, (int)pid);
                kill(pid, sig);
                forwarded = 1;
            } else if (forwarded == 1 && waited_ms >= CHILD_STOP_GRACE_S * 1000) {
                log_error("%s model (pid %d) still running %d s after the signal: killing it", prog,
                          (int)pid, CHILD_STOP_GRACE_S);
                kill(pid, SIGKILL);
                forwarded = 2;
            }
            waited_ms += 20;
        }
        sleep_ms(20);
    }
    if (forwarded || signals_stop_requested())
        return stopped("during modeling");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return err_set(-EIO, "%s model -c %s failed (%s %d); its log above says why", prog, cfg,
                       WIFEXITED(st) ? "exit status" : "signal",
                       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    return 0;
}

static int stream_shots(const struct shots_opts *o, const char *segy)
{
    struct segy_shots *s;
    int rc = segy_shots_open(segy, &s);
    if (rc < 0)
        return rc;
    void *ctx = zmq_ctx_new();
    void *sock = zmq_socket(ctx, ZMQ_PUSH);
    int linger = 30000;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(sock, o->zmq) < 0) {
        rc = err_set(-errno, "--zmq %s: %s", o->zmq, zmq_strerror(errno));
        goto out;
    }
    struct pace p;
    pace_start(&p, o->pace);
    int use_segy = strcmp(o->format, "segy") == 0;
    int64_t k = 0;
    int t0 = 0;
    struct shot sh;
    while ((rc = segy_shots_next(s, &sh)) == 1) {
        if (pace_wait(&p, k) < 0) {
            segy_shots_free_shot(&sh);
            log_info("stop requested after %lld shots", (long long)k);
            rc = 0;
            break;
        }
        sh.id += o->first_id - 1;
        rc = segy_shots_send(s, sock, &sh, t0, k, use_segy);
        t0 += sh.ntr;
        if (rc < 0) {
            segy_shots_free_shot(&sh);
            break;
        }
        log_info("shot %lld sent (%d traces x %d samples, source %.0f %.0f %.0f m)",
                 (long long)sh.id, sh.ntr, sh.ns, sh.src[0], sh.src[1], sh.src[2]);
        segy_shots_free_shot(&sh);
        k++;
    }
    if (rc == 0 && o->end)
        rc = wire_send_end_wait(ctx, sock, WIRE_END_WAIT_MS, signals_stop_requested);
    if (rc == 0)
        log_info("%lld shots sent to %s%s", (long long)k, o->zmq, o->end ? ", then end" : "");
out:
    segy_shots_close(s);
    zmq_close(sock); /* the linger lets queued shots go */
    zmq_ctx_term(ctx);
    return rc;
}

/* The velocity of the cell of the first source (the direct wave travels at it), and in
 * a TTI survey its anisotropy (*T); a warning when the sources sit in different
 * velocities. */
static double source_velocity(const struct shots_opts *o, const float *v, struct survey_tti *t)
{
    double first = 0;
    for (int j = 0; j < o->shots[1]; j++)
        for (int i = 0; i < o->shots[0]; i++) {
            double x[3] = {o->shot_o[0] + i * o->shot_d[0], o->shot_o[1] + j * o->shot_d[1],
                           o->shot_o[2]};
            int c[3];
            for (int a = 0; a < 3; a++) {
                c[a] = (int)lround(x[a] / o->m.d[a]);
                c[a] = c[a] < 0 ? 0 : c[a] >= o->m.n[a] ? o->m.n[a] - 1 : c[a];
            }
            double vs = v[((size_t)c[2] * o->m.n[1] + c[1]) * o->m.n[0] + c[0]];
            if (i == 0 && j == 0) {
                first = vs;
                *t = survey_tti_at(&o->m, c[0] * o->m.d[0], c[1] * o->m.d[1], c[2] * o->m.d[2]);
            }
            else if (fabs(vs - first) > 1e-3 * first)
                log_warn("shot %d sits in %.0f m/s, shot 1 in %.0f m/s: the direct wave of %.0f "
                         "m/s is subtracted from all", j * o->shots[0] + i + 1, vs, first, first);
        }
    return first;
}

/* SEGY -= DIRECT, trace by trace (same geometry and samples): the records without the
 * direct wave, so the migrated image is not swamped by it near the sources. */
static int subtract_segy(const char *segy, const char *direct)
{
    segy_file *a = segy_open(segy, "r+b"), *b = segy_open(direct, "rb");
    int rc = 0;
    char bin[SEGY_BINARY_HEADER_SIZE], bin2[SEGY_BINARY_HEADER_SIZE];
    if (!a || !b || segy_binheader(a, bin) != SEGY_OK || segy_binheader(b, bin2) != SEGY_OK) {
        rc = err_set(-EIO, "%s, %s: cannot open both", segy, direct);
        goto out;
    }
    int ns = segy_samples(bin), fmt = segy_format(bin), na = 0, nb = 0;
    long t0 = segy_trace0(bin);
    int bs = segy_trsize(fmt, ns);
    if (segy_samples(bin2) != ns || segy_format(bin2) != fmt ||
        segy_traces(a, &na, t0, bs) != SEGY_OK || segy_traces(b, &nb, t0, bs) != SEGY_OK || na != nb) {
        rc = err_set(-EINVAL, "%s and %s do not have the same traces", segy, direct);
        goto out;
    }
    float *x = malloc((size_t)ns * sizeof *x), *y = malloc((size_t)ns * sizeof *y);
    for (int t = 0; t < na && rc == 0; t++) {
        if (segy_readtrace(a, t, x, t0, bs) != SEGY_OK || segy_readtrace(b, t, y, t0, bs) != SEGY_OK) {
            rc = err_set(-EIO, "trace %d: cannot read", t);
            break;
        }
        segy_to_native(fmt, ns, x);
        segy_to_native(fmt, ns, y);
        for (int i = 0; i < ns; i++)
            x[i] -= y[i];
        segy_from_native(fmt, ns, x);
        if (segy_writetrace(a, t, x, t0, bs) != SEGY_OK)
            rc = err_set(-EIO, "%s: trace %d: cannot write", segy, t);
    }
    free(x);
    free(y);
out:
    if (a)
        segy_close(a);
    if (b)
        segy_close(b);
    return rc;
}

/* model.json: the grid, the files and, in a TTI survey, the anisotropy. */
static int write_model_json(const struct shots_opts *o)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/model.json", o->out);
    FILE *f = fopen(path, "w");
    if (!f)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    fprintf(f, "{\"n\": [%d, %d, %d], \"d\": [%g, %g, %g], \"o\": [0, 0, 0], "
               "\"dtype\": \"f32\", \"byte_order\": \"little\", \"order\": \"x-fastest\", "
               "\"files\": [\"model.f32\", \"model_smooth.f32\"%s], \"smooth_cells\": %d",
            o->m.n[0], o->m.n[1], o->m.n[2], o->m.d[0], o->m.d[1], o->m.d[2],
            o->m.tti ? ", \"epsilon.f32\", \"epsilon_smooth.f32\", \"delta.f32\", \"delta_smooth.f32\", "
                       "\"theta.f32\", \"theta_smooth.f32\", \"phi.f32\", \"phi_smooth.f32\"" : "",
            o->smooth);
    if (o->m.tti)
        fprintf(f, ", \"physics\": \"tti\", \"velocity\": \"v_pz\", \"tti\": {\"epsilon\": %.9g, \"delta\": %.9g, "
                   "\"theta_deg\": %.9g, \"phi_deg\": %.9g, \"axis\": \"%s\", \"isotropic\": \"%s\"}",
                o->m.eps, o->m.delta, o->m.theta, o->m.phi,
                o->tti_dip ? "normal to the dipping interface's bedding" : "given (--tti THETA,PHI)",
                o->m.salt_v > 0 ? "the salt (epsilon = delta = 0)" : "nothing");
    else
        fprintf(f, ", \"physics\": \"acoustic\"");
    fputs("}\n", f);
    if (fclose(f) != 0)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    return 0;
}

/* The model files: model.f32 and model_smooth.f32 and, in a TTI survey, epsilon, delta,
 * theta and phi .f32 and their *_smooth.f32 twins (the smoothing of the velocity: a
 * migration takes smooth parameters), then model.json.  *DT gets the step both runs
 * take when the direct wave is subtracted (0: automatic); *V_SRC and *T_SRC the medium
 * at the first source. */
static int write_models(const struct shots_opts *o, double *dt, double *v_src, struct survey_tti *t_src)
{
    static const char *names[5] = {"model", "epsilon", "delta", "theta", "phi"};
    const int nvol = o->m.tti ? 5 : 1;
    const size_t cnt = (size_t)o->m.n[0] * o->m.n[1] * o->m.n[2];
    const bool two_d = o->m.n[1] == 1;
    float *vol[5] = {NULL, NULL, NULL, NULL, NULL};
    int rc = 0;
    for (int k = 0; k < nvol && rc == 0; k++)
        if (!(vol[k] = malloc(cnt * sizeof *vol[k])))
            rc = err_set(-ENOMEM, "out of memory for the model");
    if (rc == 0 && o->model_file)
        rc = read_model_file(o->model_file, o->m.n, o->zfast, vol[0]);
    else if (rc == 0)
        survey_fill(&o->m, vol[0]);
    if (rc == 0 && o->m.tti)
        survey_fill_tti(&o->m, vol[1], vol[2], vol[3], vol[4]);
    *dt = 0;
    if (rc == 0) {
        *v_src = source_velocity(o, vol[0], t_src);
        /* subtracting the direct wave needs both runs on the same time step */
        if (o->direct && o->m.tti) {
            /* one axis for the whole model (survey_model.h): the constants, in radians */
            struct tti_model tm = {.vpz = vol[0], .eps = vol[1], .delta = vol[2],
                                   .theta0 = o->m.theta * M_PI / 180, .phi0 = o->m.phi * M_PI / 180};
            *dt = 0.9 * tti_dt_max_model(&tm, cnt, o->order, o->m.d, two_d, TTI_SIGMA_DEFAULT);
        } else if (o->direct) {
            double vmax = 0;
            for (size_t i = 0; i < cnt; i++)
                vmax = vol[0][i] > vmax ? vol[0][i] : vmax;
            *dt = 0.9 * stability_dt_max_dims(o->order, o->m.d, vmax, two_d);
        }
    }
    char path[4200];
    for (int k = 0; k < nvol && rc == 0; k++) {
        snprintf(path, sizeof path, "%s/%s.f32", o->out, names[k]);
        rc = survey_write_f32(path, vol[k], cnt);
        if (rc == 0) {
            survey_smooth(vol[k], o->m.n, o->smooth);
            snprintf(path, sizeof path, "%s/%s_smooth.f32", o->out, names[k]);
            rc = survey_write_f32(path, vol[k], cnt);
        }
    }
    for (int k = 0; k < nvol; k++)
        free(vol[k]);
    return rc < 0 ? rc : write_model_json(o);
}

static int run(struct shots_opts *o)
{
    int rc = mkdirs(o->out);
    if (rc < 0)
        return rc;
    char cfg[4096], segy[4096];
    snprintf(cfg, sizeof cfg, "%s/survey.toml", o->out);
    snprintf(segy, sizeof segy, "%s/shots.segy", o->out);
    if (!(o->reuse && access(segy, R_OK) == 0)) {
        double dt = 0, v_src = 0;
        struct survey_tti t_src = {0, 0, 0, 0};
        rc = write_models(o, &dt, &v_src, &t_src);
        if (rc == 0)
            rc = write_config(o, cfg, 0, NULL, dt);
        /* The records go to shots.segy.part and get their name only once complete, so
         * an interrupted or failed run leaves no shots.segy that --reuse would stream
         * as a whole survey (nor an older one that no longer matches survey.toml). */
        char part[4200];
        snprintf(part, sizeof part, "%s.part", segy);
        if (rc == 0 && unlink(segy) < 0 && errno != ENOENT)
            rc = err_set(-errno, "%s: %s", segy, strerror(errno));
        if (rc == 0)
            rc = run_model(o, cfg, part);
        if (rc == 0 && o->direct) {
            char dcfg[4096], dsegy[4096];
            snprintf(dcfg, sizeof dcfg, "%s/direct.toml", o->out);
            snprintf(dsegy, sizeof dsegy, "%s/direct.segy", o->out);
            log_info("modeling the direct wave (%.0f m/s everywhere%s) to subtract it", v_src,
                     o->m.tti ? ", with the source's anisotropy" : "");
            rc = write_config(o, dcfg, v_src, &t_src, dt);
            if (rc == 0)
                rc = run_model(o, dcfg, dsegy);
            if (rc == 0)
                rc = subtract_segy(part, dsegy);
        }
        /* (a stand-in such as --seislive /bin/true writes nothing: only the model files
         * were wanted) */
        if (rc == 0 && access(part, F_OK) != 0)
            log_warn("%s model wrote no records: no %s", o->seislive ? o->seislive : "seislive",
                     segy);
        else if (rc == 0 && rename(part, segy) < 0)
            rc = err_set(-errno, "%s -> %s: %s", part, segy, strerror(errno));
        if (rc < 0) {
            if (access(part, F_OK) == 0)
                log_warn("%s holds the records modeled so far (not renamed to %s)", part,
                         segy);
            return rc;
        }
    }
    if (o->zmq)
        rc = stream_shots(o, segy);
    return rc;
}

int gen_shots(int argc, char **argv)
{
    enum { O_N = 256, O_D, O_V0, O_LAYER, O_DIP, O_SALT, O_MODEL, O_SMOOTH, O_SHOTS, O_SO, O_SD,
           O_RX, O_RO, O_RD, O_TMAX, O_DT, O_FP, O_ORDER, O_PML, O_DEV, O_PROG, O_ZMQ, O_PACE,
           O_FMT, O_FIRST, O_REUSE, O_END, O_DIRECT, O_LAYOUT, O_TTI };
    static const struct option lo[] = {
        {"n", 1, 0, O_N}, {"d", 1, 0, O_D}, {"v0", 1, 0, O_V0}, {"layer", 1, 0, O_LAYER},
        {"dip", 1, 0, O_DIP}, {"salt", 1, 0, O_SALT}, {"model", 1, 0, O_MODEL},
        {"smooth", 1, 0, O_SMOOTH}, {"shots", 1, 0, O_SHOTS}, {"shot-origin", 1, 0, O_SO},
        {"shot-spacing", 1, 0, O_SD}, {"receivers", 1, 0, O_RX}, {"rx-origin", 1, 0, O_RO},
        {"rx-spacing", 1, 0, O_RD}, {"t-max", 1, 0, O_TMAX}, {"dt", 1, 0, O_DT},
        {"f-peak", 1, 0, O_FP}, {"order", 1, 0, O_ORDER}, {"pml", 1, 0, O_PML},
        {"device", 1, 0, O_DEV}, {"seislive", 1, 0, O_PROG}, {"zmq", 1, 0, O_ZMQ},
        {"pace", 1, 0, O_PACE}, {"format", 1, 0, O_FMT}, {"first-id", 1, 0, O_FIRST},
        {"reuse", 0, 0, O_REUSE}, {"end", 0, 0, O_END}, {"direct", 1, 0, O_DIRECT},
        {"layout", 1, 0, O_LAYOUT}, {"tti", 1, 0, O_TTI}, {"out", 1, 0, 'o'}, {"help", 0, 0, 'h'},
        {0, 0, 0, 0}};
    struct shots_opts o = {
        .m = {.n = {81, 41, 51}, .d = {10, 10, 10}, .v0 = 1800, .nlayers = 2,
              .layer_z = {150, 380}, .layer_v = {2300, 2900}, .dip_z = 250, .dip_deg = 6,
              .dip_v = 2600, .salt_c = {0, 0}, .salt_top = -1, .salt_v = 4500},
        .format = "f32", .device = "auto", .smooth = 3, .order = 8, .pml = -1, .first_id = 1,
        .shots = {4, 1}, .t_max = 0.6, .dt = 0.002, .f_peak = 15};
    int layers_given = 0, salt_given = 0, opt, idx = 0, bad = 0;
    double v[6], vel;
    optind = 1;
    while (!bad && (opt = getopt_long(argc, argv, "o:h", lo, &idx)) != -1) {
        switch (opt) {
        case O_N:
            bad = options_doubles(optarg, v, 3, 3) < 0 || v[0] < 8 || v[1] < 1 || v[2] < 8;
            for (int i = 0; i < 3 && !bad; i++)
                o.m.n[i] = (int)v[i];
            break;
        case O_D: {
            int n = options_doubles(optarg, v, 1, 3);
            bad = n != 1 && n != 3;
            for (int i = 0; i < 3 && !bad; i++)
                o.m.d[i] = n == 1 ? v[0] : v[i];
            bad = bad || !(o.m.d[0] > 0 && o.m.d[1] > 0 && o.m.d[2] > 0);
            break;
        }
        case O_V0: bad = options_doubles(optarg, &o.m.v0, 1, 1) < 0 || !(o.m.v0 > 0); break;
        case O_LAYER:
            if (!layers_given)
                o.m.nlayers = 0;
            layers_given = 1;
            /* 'none' drops the layers given so far (the defaults included), as --dip
             * none and --salt none do; a later --layer adds to the empty list */
            if (strcmp(optarg, "none") == 0) {
                o.m.nlayers = 0;
                break;
            }
            bad = o.m.nlayers >= SURVEY_MAX_LAYERS || parse_colon(optarg, v, 1, &vel) < 0;
            if (!bad) {
                o.m.layer_z[o.m.nlayers] = v[0];
                o.m.layer_v[o.m.nlayers++] = vel;
            }
            break;
        case O_DIP:
            if (strcmp(optarg, "none") == 0)
                o.m.dip_v = 0;
            else if (!(bad = parse_colon(optarg, v, 2, &vel) < 0)) {
                o.m.dip_z = v[0];
                o.m.dip_deg = v[1];
                o.m.dip_v = vel;
            }
            break;
        case O_SALT:
            salt_given = 1;
            if (strcmp(optarg, "none") == 0)
                o.m.salt_v = 0;
            else if (!(bad = parse_colon(optarg, v, 6, &vel) < 0)) {
                o.m.salt_c[0] = v[0];
                o.m.salt_c[1] = v[1];
                o.m.salt_top = v[2];
                o.m.salt_r[0] = v[3];
                o.m.salt_r[1] = v[4];
                o.m.salt_h = v[5];
                o.m.salt_v = vel;
                bad = !(v[3] > 0 && v[4] > 0 && v[5] > 0);
            }
            break;
        case O_MODEL: o.model_file = optarg; break;
        case O_SMOOTH: o.smooth = atoi(optarg); bad = o.smooth < 0; break;
        case O_SHOTS: {
            int n = options_doubles(optarg, v, 1, 2);
            bad = n < 0 || v[0] < 1 || (n == 2 && v[1] < 1);
            o.shots[0] = (int)v[0];
            o.shots[1] = n == 2 ? (int)v[1] : 1;
            break;
        }
        case O_SO: bad = options_doubles(optarg, o.shot_o, 3, 3) < 0; o.have_shot_o = 1; break;
        case O_SD: {
            int n = options_doubles(optarg, o.shot_d, 1, 2);
            bad = n < 0;
            if (n == 1)
                o.shot_d[1] = 0;
            o.have_shot_d = 1;
            break;
        }
        case O_RX: {
            int n = options_doubles(optarg, v, 1, 2);
            bad = n < 0 || v[0] < 1 || (n == 2 && v[1] < 1);
            o.rx[0] = (int)v[0];
            o.rx[1] = n == 2 ? (int)v[1] : 1;
            o.have_rx = 1;
            break;
        }
        case O_RO: bad = options_doubles(optarg, o.rx_o, 3, 3) < 0; o.have_rx_o = 1; break;
        case O_RD: {
            int n = options_doubles(optarg, o.rx_d, 1, 2);
            bad = n < 0 || !(o.rx_d[0] > 0);
            if (n == 1)
                o.rx_d[1] = o.rx_d[0];
            o.have_rx_d = 1;
            break;
        }
        case O_TMAX: bad = options_doubles(optarg, &o.t_max, 1, 1) < 0 || !(o.t_max > 0); break;
        case O_DT: bad = options_doubles(optarg, &o.dt, 1, 1) < 0 || !(o.dt > 0); break;
        case O_FP: bad = options_doubles(optarg, &o.f_peak, 1, 1) < 0 || !(o.f_peak > 0); break;
        case O_ORDER: o.order = atoi(optarg); bad = o.order < 2 || o.order > 16 || o.order % 2; break;
        case O_PML: o.pml = atoi(optarg); bad = o.pml < 0; break;
        case O_DEV: o.device = optarg; break;
        case O_PROG: o.seislive = optarg; break;
        case O_ZMQ: o.zmq = optarg; break;
        case O_PACE: bad = options_doubles(optarg, &o.pace, 1, 1) < 0 || o.pace < 0; break;
        case O_FMT:
            o.format = optarg;
            bad = strcmp(optarg, "f32") != 0 && strcmp(optarg, "segy") != 0;
            break;
        case O_FIRST: o.first_id = atoi(optarg); bad = o.first_id < 0; break;
        case O_REUSE: o.reuse = 1; break;
        case O_END: o.end = 1; break;
        case O_DIRECT:
            o.direct = strcmp(optarg, "subtract") == 0;
            bad = !o.direct && strcmp(optarg, "keep") != 0;
            break;
        case O_LAYOUT:
            o.zfast = strcmp(optarg, "z-fastest") == 0;
            bad = !o.zfast && strcmp(optarg, "x-fastest") != 0;
            break;
        case O_TTI: bad = gen_tti_parse(optarg, &o.m, &o.tti_dip) < 0 ? 2 : 0; break;
        case 'o': o.out = optarg; break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: bad = 2; break;
        }
        if (bad == 1)
            fprintf(stderr, "seislive-gen shots: bad value for --%s: '%s'\n", lo[idx].name, optarg);
    }
    if (!bad && optind < argc) {
        fprintf(stderr, "seislive-gen shots: unexpected argument '%s'\n", argv[optind]);
        bad = 1;
    }
    if (!bad && !o.out) {
        fprintf(stderr, "seislive-gen shots: -o DIR is required\n");
        bad = 1;
    }
    if (!bad && o.zfast && (!o.model_file || is_segy_name(o.model_file))) {
        fprintf(stderr, "seislive-gen shots: --layout is the order of a raw --model file\n");
        bad = 1;
    }
    if (!bad && o.m.tti)
        bad = gen_tti_check(&o.m, o.tti_dip, o.model_file != NULL);
    if (!bad) {
        defaults(&o);
        bad = check_line(&o);
    }
    if (bad) {
        fputs("try 'seislive-gen shots --help'\n", stderr);
        return 2;
    }
    if (!salt_given) { /* a small dome under the middle of the model, above the deep layer */
        double lx = (o.m.n[0] - 1) * o.m.d[0], ly = (o.m.n[1] - 1) * o.m.d[1];
        double lz = (o.m.n[2] - 1) * o.m.d[2];
        o.m.salt_c[0] = 0.62 * lx;
        o.m.salt_c[1] = 0.5 * ly;
        o.m.salt_top = 0.55 * lz;
        o.m.salt_r[0] = 0.1 * lx;
        o.m.salt_r[1] = fmax(0.2 * ly, o.m.d[1]);
        o.m.salt_h = 0.3 * lz;
    }
    signals_install();
    int rc = run(&o);
    if (rc < 0) {
        fprintf(stderr, "seislive-gen shots: %s\n", err_msg());
        return 1;
    }
    return 0;
}
