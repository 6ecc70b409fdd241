/* seislive-gen micro — synthetic microseismic recordings (see micro_model.h), written
 * as miniSEED files or streamed as trace blocks over ZeroMQ at real-time pace. */
#define LOG_COMPONENT "gen"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zmq.h>

#include "io/mseed_write.h"
#include "io/wire.h"
#include "stream/error.h"
#include "stream/log.h"
#include "stream/signals.h"
#include "tools/gen.h"
#include "tools/micro_model.h"
#include "tools/mkdirs.h"
#include "tools/options.h"
#include "tools/pace.h"
#include "tools/send_traces.h"

static const char usage_text[] =
    "usage: seislive-gen micro [options] (-o DIR | --zmq ENDPOINT)\n"
    "\n"
    "Synthetic microseismic recording: receivers, events with random double-couple\n"
    "mechanisms (random polarities), P and S Ricker pulses at homogeneous straight-ray\n"
    "travel times, white Gaussian noise.  x east, y north, z down, in m.\n"
    "\n"
    "receivers:\n"
    "  --array grid|lines|borehole  surface grid, two crossing surface lines, or a\n"
    "                          vertical borehole string (default grid)\n"
    "  --count NX[,NY]         receivers along x and y (grid, lines) or down the hole\n"
    "                          (borehole: NX) (default 6,6)\n"
    "  --spacing D             receiver spacing, m (default 200)\n"
    "  --origin X,Y,Z          first receiver (grid, lines) or top of the string\n"
    "                          (borehole) (default 0,0,0)\n"
    "  --stations FILE         take the receivers from a station file instead\n"
    "                          (NAME X Y Z per line, '#' comments)\n"
    "  --components 1|3        Z only, or Z, N, E (default 3)\n"
    "  --net CODE              SEED network code (default XX)\n"
    "events:\n"
    "  --event X,Y,Z,T[,A]     an event at X,Y,Z (m), T s after the start, amplitude A\n"
    "                          (default 1); repeatable\n"
    "  --events N              N random events in --box, at random times (default 0)\n"
    "  --box X0,X1,Y0,Y1,Z0,Z1 where random events go (default: under the array,\n"
    "                          depth 500..1500 m)\n"
    "  --min-gap S             least time between random events, s (default 3)\n"
    "  --amplitude A           amplitude of random events (default 1)\n"
    "  --seed N                random seed: events, mechanisms and noise (default 1)\n"
    "medium and signal:\n"
    "  --vp V  --vs V          m/s (default 3500, 2000)\n"
    "  --phases P|S|PS         phases put in (default PS)\n"
    "  --f-peak F              Ricker peak frequency, Hz (default 20)\n"
    "  --f-peak-s F            the S pulses' Ricker peak frequency, Hz (default: --f-peak)\n"
    "  --rate R                samples per second (default 250)\n"
    "  --duration S            length of the recording, s (default 20)\n"
    "  --noise SIGMA           noise standard deviation; an event of amplitude 1 has\n"
    "                          peak P amplitude 1 at 1 km in its strongest direction\n"
    "                          (default 0.05)\n"
    "  --start TIME            time of the first sample, UTC: 2026-01-01T00:00:00[.f]Z\n"
    "                          (default 2026-01-01T00:00:00Z)\n"
    "output (files):\n"
    "  -o, --out DIR           write DIR/NET.STA..CHA.mseed, DIR/stations.txt and the\n"
    "                          true events in DIR/events.csv\n"
    "  --encoding E            float32, int32, steim1, steim2 (default float32)\n"
    "  --scale C               counts per unit for integer encodings (default 1e6)\n"
    "  --reclen B              miniSEED record length, bytes (default 4096)\n"
    "output (stream):\n"
    "  --zmq ENDPOINT          connect a PUSH socket and send trace blocks\n"
    "  --block S               seconds per block (default 1)\n"
    "  --format mseed|f32      block payload (default mseed)\n"
    "  --pace P                realtime, Nx (N times faster), max, or seconds per\n"
    "                          block (default realtime)\n"
    "  --end                   send an end message after the last block (the run then\n"
    "                          finishes)\n"
    "  -h, --help              this text\n";

struct micro_opts {
    int array; /* 0 grid, 1 lines, 2 borehole */
    int count[2];
    double spacing, origin[3];
    const char *stations, *net, *out, *zmq, *format, *pace;
    int nrand;
    double box[6];
    int have_box;
    double min_gap, amplitude;
    uint64_t seed;
    double duration, block;
    int64_t start_ns;
    int encoding, reclen, end;
    double scale;
};

/* "2026-01-01T00:00:00[.fff][Z]" -> ns since the epoch. */
static int parse_time(const char *s, int64_t *ns)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest)
        return -1;
    double frac = 0;
    if (*rest == '.') {
        char *end;
        frac = strtod(rest, &end);
        rest = end;
    }
    if (*rest == 'Z')
        rest++;
    if (*rest)
        return -1;
    *ns = (int64_t)timegm(&tm) * 1000000000LL + (int64_t)llround(frac * 1e9);
    return 0;
}

static int read_stations(const char *path, struct micro_model *m)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    char line[512];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *p = line + strspn(line, " \t");
        if (*p == '#' || *p == '\n' || *p == '\0')
            continue;
        struct micro_station s;
        char name[64];
        if (sscanf(p, "%63s %lf %lf %lf", name, &s.x[0], &s.x[1], &s.x[2]) != 4 ||
            strlen(name) > 5) {
            fclose(f);
            return err_set(-EINVAL, "%s:%d: expected NAME X Y Z (name of 1..5 characters)",
                           path, lineno);
        }
        snprintf(s.name, sizeof s.name, "%s", name);
        struct micro_station *grown = realloc(m->st, (size_t)(m->nst + 1) * sizeof *m->st);
        if (!grown) { /* m->st stays valid: the caller frees it */
            fclose(f);
            return err_set(-ENOMEM, "%s:%d: out of memory for %d receivers", path, lineno, m->nst + 1);
        }
        m->st = grown;
        m->st[m->nst++] = s;
    }
    fclose(f);
    if (m->nst == 0)
        return err_set(-EINVAL, "%s: no stations", path);
    return 0;
}

static int add_station(struct micro_model *m, double x, double y, double z)
{
    struct micro_station *p = realloc(m->st, (size_t)(m->nst + 1) * sizeof *m->st);
    if (!p) /* m->st stays valid: the caller frees it */
        return err_set(-ENOMEM, "out of memory for %d receivers", m->nst + 1);
    m->st = p;
    struct micro_station *s = &m->st[m->nst];
    /* SEED station codes have 5 characters at most */
    snprintf(s->name, sizeof s->name, "S%03u", (unsigned)(m->nst + 1) % 10000u);
    s->x[0] = x;
    s->x[1] = y;
    s->x[2] = z;
    m->nst++;
    return 0;
}

static int build_array(const struct micro_opts *o, struct micro_model *m)
{
    const double *g = o->origin;
    double d = o->spacing;
    int rc = 0;
    if (o->array == 0) {
        for (int j = 0; j < o->count[1] && !rc; j++)
            for (int i = 0; i < o->count[0] && !rc; i++)
                rc = add_station(m, g[0] + i * d, g[1] + j * d, g[2]);
    } else if (o->array == 1) { /* an x line and a y line crossing at their middles */
        double ym = g[1] + 0.5 * (o->count[1] - 1) * d, xm = g[0] + 0.5 * (o->count[0] - 1) * d;
        for (int i = 0; i < o->count[0] && !rc; i++)
            rc = add_station(m, g[0] + i * d, ym, g[2]);
        for (int j = 0; j < o->count[1] && !rc; j++)
            if (fabs(g[1] + j * d - ym) > 1e-6 || o->count[0] == 0)
                rc = add_station(m, xm, g[1] + j * d, g[2]);
    } else {
        for (int k = 0; k < o->count[0] && !rc; k++)
            rc = add_station(m, g[0], g[1], g[2] + k * d);
    }
    return rc;
}

static int add_event(struct micro_model *m, const double x[3], double t, double amp,
                     uint64_t *rng)
{
    struct micro_event *p = realloc(m->ev, (size_t)(m->nev + 1) * sizeof *m->ev);
    if (!p) /* m->ev stays valid: the caller frees it */
        return err_set(-ENOMEM, "out of memory for %d events", m->nev + 1);
    m->ev = p;
    struct micro_event *e = &m->ev[m->nev++];
    memcpy(e->x, x, sizeof e->x);
    e->t = t;
    e->amp = amp;
    micro_random_dc(rng, e->m);
    return 0;
}

static double max_travel_time(const struct micro_model *m, const double x[3])
{
    struct micro_event e;
    memcpy(e.x, x, sizeof e.x);
    double t = 0;
    for (int s = 0; s < m->nst; s++) {
        double ts = micro_travel_time(m, &e, &m->st[s], (m->phases & 2) ? 1 : 0);
        if (ts > t)
            t = ts;
    }
    return t;
}

/* Random events in the box, at times that leave each event's last arrival inside the
 * recording and keep MIN_GAP between origin times. */
static int random_events(const struct micro_opts *o, struct micro_model *m, uint64_t *rng)
{
    for (int i = 0; i < o->nrand; i++) {
        int tries = 0;
        for (;;) {
            if (++tries > 10000)
                return err_set(-EINVAL, "--events %d: cannot place them %g s apart in a %g s "
                               "recording (lengthen --duration or lower --min-gap)",
                               o->nrand, o->min_gap, o->duration);
            double x[3];
            for (int k = 0; k < 3; k++)
                x[k] = o->box[2 * k] + micro_uniform(rng) * (o->box[2 * k + 1] - o->box[2 * k]);
            double tmax = o->duration - max_travel_time(m, x) - 4.0 / fmin(m->f_peak, m->f_peak_s > 0 ? m->f_peak_s : m->f_peak);
            double tmin = 0.5;
            if (tmax <= tmin)
                continue;
            double t = tmin + micro_uniform(rng) * (tmax - tmin);
            int ok = 1;
            for (int e = 0; e < m->nev; e++)
                if (fabs(m->ev[e].t - t) < o->min_gap)
                    ok = 0;
            if (!ok)
                continue;
            int rc = add_event(m, x, t, o->amplitude, rng);
            if (rc)
                return rc;
            break;
        }
    }
    return 0;
}

static int write_meta(const char *dir, const struct micro_model *m, const struct micro_opts *o)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/stations.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    fprintf(f, "# seislive-gen micro stations: NAME X Y Z (m; x east, y north, z down)\n");
    for (int s = 0; s < m->nst; s++)
        fprintf(f, "%s %.3f %.3f %.3f\n", m->st[s].name, m->st[s].x[0], m->st[s].x[1],
                m->st[s].x[2]);
    fclose(f);
    snprintf(path, sizeof path, "%s/events.csv", dir);
    if (!(f = fopen(path, "w")))
        return err_set(-errno, "%s: %s", path, strerror(errno));
    fprintf(f, "id,origin_time,origin_ns,x,y,z,amplitude\n");
    for (int e = 0; e < m->nev; e++) {
        int64_t ns = o->start_ns + (int64_t)llround(m->ev[e].t * 1e9);
        time_t sec = (time_t)(ns / 1000000000LL);
        struct tm tm;
        gmtime_r(&sec, &tm);
        char iso[64];
        strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
        fprintf(f, "%d,%s.%06lldZ,%lld,%.3f,%.3f,%.3f,%g\n", e + 1, iso,
                (long long)(ns % 1000000000LL) / 1000, (long long)ns, m->ev[e].x[0],
                m->ev[e].x[1], m->ev[e].x[2], m->ev[e].amp);
    }
    fclose(f);
    return 0;
}

static int write_files(const struct micro_opts *o, struct micro_model *m)
{
    int rc = mkdirs(o->out);
    if (rc < 0)
        return rc;
    rc = write_meta(o->out, m, o);
    if (rc < 0)
        return rc;
    int64_t ns = (int64_t)llround(o->duration * m->rate);
    size_t nch = (size_t)m->nst * m->ncomp;
    if ((double)nch * (double)ns * 4.0 > 4e9)
        return err_set(-E2BIG, "%zu channels x %lld samples is more than 4 GB: stream it "
                       "(--zmq) or shorten --duration", nch, (long long)ns);
    float *data = malloc(nch * (size_t)ns * sizeof *data);
    if (!data)
        return err_set(-ENOMEM, "out of memory for %zu x %lld samples", nch, (long long)ns);
    micro_render(m, 0, (int)ns, data);
    int64_t records = 0;
    for (size_t c = 0; c < nch && rc >= 0; c++) {
        const struct micro_station *s = &m->st[c / m->ncomp];
        const char *cha = micro_channel_code(m, (int)(c % m->ncomp));
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.%s..%s.mseed", o->out, o->net, s->name, cha);
        FILE *f = fopen(path, "wb");
        if (!f) {
            rc = err_set(-errno, "%s: %s", path, strerror(errno));
            break;
        }
        struct mseed_channel ch = {o->net, s->name, "", cha, m->rate, o->encoding,
                                   o->reclen, o->scale, 1};
        rc = mseed_write_f32(f, path, &ch, o->start_ns, data + c * (size_t)ns, (size_t)ns);
        if (fclose(f) != 0 && rc >= 0)
            rc = err_set(-errno, "%s: %s", path, strerror(errno));
        if (rc > 0)
            records += rc;
    }
    free(data);
    if (rc < 0)
        return rc;
    log_info("wrote %zu channels x %lld samples (%lld records), %d events, to %s", nch,
             (long long)ns, (long long)records, m->nev, o->out);
    return 0;
}


static int stream(const struct micro_opts *o, struct micro_model *m)
{
    int bs = (int)llround(o->block * m->rate);
    int64_t total = (int64_t)llround(o->duration * m->rate);
    int use_mseed = strcmp(o->format, "mseed") == 0;
    if (bs < 1)
        return err_set(-EINVAL, "--block %g s is shorter than one sample", o->block);
    double interval = pace_parse(o->pace, (double)bs / m->rate);
    if (interval < 0)
        return err_set(-EINVAL, "--pace \"%s\": expected realtime, Nx, max or seconds", o->pace);
    void *ctx = zmq_ctx_new();
    void *sock = zmq_socket(ctx, ZMQ_PUSH);
    int linger = 10000;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(sock, o->zmq) < 0) {
        int rc = err_set(-errno, "--zmq %s: %s", o->zmq, zmq_strerror(errno));
        zmq_close(sock);
        zmq_ctx_term(ctx);
        return rc;
    }
    size_t nch = (size_t)m->nst * m->ncomp;
    float *data = malloc(nch * (size_t)bs * sizeof *data);
    struct mseed_channel *ch = calloc(nch, sizeof *ch);
    for (size_t c = 0; c < nch; c++)
        ch[c] = (struct mseed_channel){o->net, m->st[c / m->ncomp].name, "",
                                       micro_channel_code(m, (int)(c % m->ncomp)), m->rate,
                                       o->encoding, o->reclen, o->scale, 1};
    /* channel names for f32 blocks (miniSEED records carry their own) */
    struct trace_channel *names = calloc(nch, sizeof *names);
    for (size_t c = 0; c < nch; c++) {
        snprintf(names[c].net, sizeof names[c].net, "%s", o->net);
        snprintf(names[c].sta, sizeof names[c].sta, "%s", m->st[c / m->ncomp].name);
        snprintf(names[c].cha, sizeof names[c].cha, "%s", micro_channel_code(m, (int)(c % m->ncomp)));
    }
    struct mseed_buf b = {0};
    struct pace p;
    pace_start(&p, interval);
    int rc = 0;
    int64_t blocks = 0;
    for (int64_t k0 = 0; k0 < total && rc == 0; k0 += bs, blocks++) {
        int ns = (int)(total - k0 < bs ? total - k0 : bs);
        micro_render(m, k0, ns, data);
        /* the block goes out when its last sample would have been recorded */
        if ((rc = pace_wait(&p, blocks + 1)) < 0) {
            rc = 0;
            log_info("stop requested after %lld blocks", (long long)blocks);
            break;
        }
        int64_t t0 = o->start_ns + (int64_t)llround((double)k0 / m->rate * 1e9);
        struct wire_traces_hdr h = {t0, 1.0 / m->rate, (int)nch, ns,
                                    use_mseed ? WIRE_MSEED : WIRE_F32, use_mseed ? NULL : names};
        if (use_mseed) {
            b.len = 0;
            for (size_t c = 0; c < nch && rc >= 0; c++)
                rc = mseed_pack_f32(&ch[c], t0, data + c * (size_t)ns, (size_t)ns, mseed_buf_sink, &b);
            if (rc >= 0 && b.failed)
                rc = err_set(-ENOMEM, "block %lld: out of memory for its records", (long long)blocks);
            if (rc >= 0)
                rc = wire_send_traces_mseed(sock, &h, b.p, b.len, blocks, 0);
        } else {
            /* samples are f32 channel by channel, as rendered */
            rc = send_traces_f32_named(sock, &h, data, blocks);
        }
        if (rc > 0)
            rc = 0;
        log_debug("block %lld: %d samples x %zu channels sent", (long long)blocks, ns, nch);
    }
    if (rc == 0 && o->end)
        rc = wire_send_end_wait(ctx, sock, WIRE_END_WAIT_MS, signals_stop_requested);
    if (rc == 0)
        log_info("sent %lld blocks (%zu channels, %d events) to %s", (long long)blocks, nch,
                 m->nev, o->zmq);
    free(b.p);
    free(names);
    free(ch);
    free(data);
    zmq_close(sock); /* linger lets the queued blocks go */
    zmq_ctx_term(ctx);
    return rc;
}

static int by_time(const void *a, const void *b)
{
    double x = ((const struct micro_event *)a)->t, y = ((const struct micro_event *)b)->t;
    return (x > y) - (x < y);
}

int gen_micro(int argc, char **argv)
{
    enum { O_ARRAY = 256, O_COUNT, O_SPACING, O_ORIGIN, O_STATIONS, O_COMP, O_NET, O_EVENT,
           O_EVENTS, O_BOX, O_GAP, O_AMP, O_SEED, O_VP, O_VS, O_PHASES, O_FPEAK, O_FPEAKS, O_RATE,
           O_DUR, O_NOISE, O_START, O_ENC, O_SCALE, O_RECLEN, O_ZMQ, O_BLOCK, O_FORMAT,
           O_PACE, O_END };
    static const struct option lo[] = {
        {"array", 1, 0, O_ARRAY}, {"count", 1, 0, O_COUNT}, {"spacing", 1, 0, O_SPACING},
        {"origin", 1, 0, O_ORIGIN}, {"stations", 1, 0, O_STATIONS},
        {"components", 1, 0, O_COMP}, {"net", 1, 0, O_NET}, {"event", 1, 0, O_EVENT},
        {"events", 1, 0, O_EVENTS}, {"box", 1, 0, O_BOX}, {"min-gap", 1, 0, O_GAP},
        {"amplitude", 1, 0, O_AMP}, {"seed", 1, 0, O_SEED}, {"vp", 1, 0, O_VP},
        {"vs", 1, 0, O_VS}, {"phases", 1, 0, O_PHASES}, {"f-peak", 1, 0, O_FPEAK}, {"f-peak-s", 1, 0, O_FPEAKS},
        {"rate", 1, 0, O_RATE}, {"duration", 1, 0, O_DUR}, {"noise", 1, 0, O_NOISE},
        {"start", 1, 0, O_START}, {"encoding", 1, 0, O_ENC}, {"scale", 1, 0, O_SCALE},
        {"reclen", 1, 0, O_RECLEN}, {"zmq", 1, 0, O_ZMQ}, {"block", 1, 0, O_BLOCK},
        {"format", 1, 0, O_FORMAT}, {"pace", 1, 0, O_PACE}, {"end", 0, 0, O_END}, {"out", 1, 0, 'o'},
        {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    struct micro_opts o = {.count = {6, 6}, .spacing = 200, .net = "XX", .format = "mseed",
                           .pace = "realtime", .min_gap = 3, .amplitude = 1, .seed = 1,
                           .duration = 20, .block = 1, .encoding = MSEED_ENC_FLOAT32,
                           .reclen = 4096, .scale = 1e6};
    struct micro_model m = {.vp = 3500, .vs = 2000, .phases = 3, .ncomp = 3, .f_peak = 20,
                            .rate = 250, .noise = 0.05};
    parse_time("2026-01-01T00:00:00Z", &o.start_ns);
    double *fixed = NULL; /* x y z t a per --event */
    int nfixed = 0, opt, idx = 0, bad = 0;
    double v[6];
    optind = 1;
    while (!bad && (opt = getopt_long(argc, argv, "o:h", lo, &idx)) != -1) {
        switch (opt) {
        case O_ARRAY:
            o.array = strcmp(optarg, "grid") == 0 ? 0 : strcmp(optarg, "lines") == 0 ? 1
                    : strcmp(optarg, "borehole") == 0 ? 2 : (bad = 1);
            break;
        case O_COUNT: {
            int n = options_doubles(optarg, v, 1, 2);
            bad = n < 0 || v[0] < 1 || (n == 2 && v[1] < 1);
            o.count[0] = (int)v[0];
            o.count[1] = n == 2 ? (int)v[1] : (int)v[0];
            break;
        }
        case O_SPACING: bad = options_doubles(optarg, &o.spacing, 1, 1) < 0 || !(o.spacing > 0); break;
        case O_ORIGIN: bad = options_doubles(optarg, o.origin, 3, 3) < 0; break;
        case O_STATIONS: o.stations = optarg; break;
        case O_COMP: m.ncomp = atoi(optarg); bad = m.ncomp != 1 && m.ncomp != 3; break;
        case O_NET: o.net = optarg; bad = strlen(optarg) < 1 || strlen(optarg) > 2; break;
        case O_EVENT: {
            int n = options_doubles(optarg, v, 4, 5);
            bad = n < 0;
            double *p = bad ? NULL : realloc(fixed, (size_t)(nfixed + 1) * 5 * sizeof *fixed);
            if (!bad && !p) {
                fprintf(stderr, "seislive-gen micro: out of memory for %d events\n", nfixed + 1);
                free(fixed);
                return 1;
            }
            if (!bad) {
                fixed = p;
                memcpy(fixed + 5 * nfixed, v, 4 * sizeof *v);
                fixed[5 * nfixed + 4] = n == 5 ? v[4] : 1.0;
                nfixed++;
            }
            break;
        }
        case O_EVENTS: o.nrand = atoi(optarg); bad = o.nrand < 0; break;
        case O_BOX: bad = options_doubles(optarg, o.box, 6, 6) < 0; o.have_box = 1; break;
        case O_GAP: bad = options_doubles(optarg, &o.min_gap, 1, 1) < 0 || o.min_gap < 0; break;
        case O_AMP: bad = options_doubles(optarg, &o.amplitude, 1, 1) < 0; break;
        case O_SEED: o.seed = strtoull(optarg, NULL, 10); break;
        case O_VP: bad = options_doubles(optarg, &m.vp, 1, 1) < 0 || !(m.vp > 0); break;
        case O_VS: bad = options_doubles(optarg, &m.vs, 1, 1) < 0 || !(m.vs > 0); break;
        case O_PHASES:
            m.phases = strcmp(optarg, "P") == 0 ? 1 : strcmp(optarg, "S") == 0 ? 2
                     : strcmp(optarg, "PS") == 0 ? 3 : (bad = 1, 0);
            break;
        case O_FPEAK: bad = options_doubles(optarg, &m.f_peak, 1, 1) < 0 || !(m.f_peak > 0); break;
        case O_FPEAKS: bad = options_doubles(optarg, &m.f_peak_s, 1, 1) < 0 || !(m.f_peak_s > 0); break;
        case O_RATE: bad = options_doubles(optarg, &m.rate, 1, 1) < 0 || !(m.rate > 0); break;
        case O_DUR: bad = options_doubles(optarg, &o.duration, 1, 1) < 0 || !(o.duration > 0); break;
        case O_NOISE: bad = options_doubles(optarg, &m.noise, 1, 1) < 0 || m.noise < 0; break;
        case O_START: bad = parse_time(optarg, &o.start_ns) < 0; break;
        case O_ENC: o.encoding = mseed_encoding_parse(optarg); bad = o.encoding < 0; break;
        case O_SCALE: bad = options_doubles(optarg, &o.scale, 1, 1) < 0 || !(o.scale > 0); break;
        case O_RECLEN: o.reclen = atoi(optarg); break;
        case O_ZMQ: o.zmq = optarg; break;
        case O_BLOCK: bad = options_doubles(optarg, &o.block, 1, 1) < 0 || !(o.block > 0); break;
        case O_FORMAT:
            o.format = optarg;
            bad = strcmp(optarg, "mseed") != 0 && strcmp(optarg, "f32") != 0;
            break;
        case O_PACE: o.pace = optarg; bad = pace_parse(optarg, 1.0) < 0; break;
        case O_END: o.end = 1; break;
        case 'o': o.out = optarg; break;
        case 'h': fputs(usage_text, stdout); free(fixed); return 0;
        default: bad = 2; break;
        }
        if (bad == 1)
            fprintf(stderr, "seislive-gen micro: bad value for --%s: '%s'\n", lo[idx].name, optarg);
    }
    if (!bad && optind < argc) {
        fprintf(stderr, "seislive-gen micro: unexpected argument '%s'\n", argv[optind]);
        bad = 1;
    }
    if (!bad && !o.out == !o.zmq) {
        fprintf(stderr, "seislive-gen micro: give exactly one of -o DIR and --zmq ENDPOINT\n");
        bad = 1;
    }
    if (bad) {
        fputs("try 'seislive-gen micro --help'\n", stderr);
        free(fixed);
        return 2;
    }
    m.rng = o.seed * 0x2545f4914f6cdd1dULL + 1;
    int rc = 0;
    if (o.stations)
        rc = read_stations(o.stations, &m);
    else
        rc = build_array(&o, &m);
    if (rc == 0 && !o.have_box) { /* under the array's footprint */
        double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
        for (int s = 0; s < m.nst; s++)
            for (int k = 0; k < 2; k++) {
                lo[k] = fmin(lo[k], m.st[s].x[k]);
                hi[k] = fmax(hi[k], m.st[s].x[k]);
            }
        double box[6] = {lo[0], hi[0], lo[1], hi[1], 500, 1500};
        memcpy(o.box, box, sizeof box);
    }
    uint64_t ev_rng = o.seed * 0x9e3779b97f4a7c15ULL + 7;
    for (int i = 0; rc == 0 && i < nfixed; i++)
        rc = add_event(&m, fixed + 5 * i, fixed[5 * i + 3], fixed[5 * i + 4], &ev_rng);
    if (rc == 0)
        rc = random_events(&o, &m, &ev_rng);
    free(fixed);
    if (rc == 0 && m.nev > 0) /* ids in the events file follow origin time */
        qsort(m.ev, (size_t)m.nev, sizeof *m.ev, by_time);
    if (rc == 0) {
        log_info("%d receivers x %d components, %d events, %.1f s at %g Hz", m.nst, m.ncomp,
                 m.nev, o.duration, m.rate);
        signals_install();
        rc = o.out ? write_files(&o, &m) : stream(&o, &m);
    }
    free(m.st);
    free(m.ev);
    if (rc < 0) {
        fprintf(stderr, "seislive-gen micro: %s\n", err_msg());
        return 1;
    }
    return 0;
}
