/* seislive-replay — stream recorded files to a running seislive over ZeroMQ, at the
 * pace they were recorded (or faster): SEG-Y shot files as shot messages (one per
 * field record), miniSEED files as trace blocks cut from the merged channels. */
#define LOG_COMPONENT "replay"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libmseed.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "io/mseed_write.h"
#include "io/segy_read.h"
#include "io/wire.h"
#include "stream/error.h"
#include "stream/log.h"
#include "stream/signals.h"
#include "tools/pace.h"
#include "tools/segy_shots.h"
#include "tools/send_traces.h"

static const char usage_text[] =
    "usage: seislive-replay [options] --zmq ENDPOINT FILE...\n"
    "\n"
    "Stream existing files to seislive ([input] kind = \"zmq\", socket = \"pull\"):\n"
    "  SEG-Y (.segy, .sgy)     one shot message per field record (bytes 9-12), the\n"
    "                          geometry from the trace headers\n"
    "  Seismic Unix (.su)      the same, either byte order (decided per file from the\n"
    "                          first trace header and logged); sent as f32\n"
    "  miniSEED (.mseed, .ms, .miniseed)  all files merged per channel, then cut into\n"
    "                          trace blocks; gaps stay gaps (NaN or no record)\n"
    "\n"
    "options:\n"
    "  --zmq ENDPOINT          connect a PUSH socket to ENDPOINT (required)\n"
    "  --pace P                shots: seconds between shots (default 0 = as fast as the\n"
    "                          receiver takes them); blocks: realtime (default), Nx (N\n"
    "                          times faster), max, or seconds between blocks\n"
    "  --block S               seconds per trace block (default 1)\n"
    "  --format F              payload: f32 (default) or segy for shots, f32 or mseed\n"
    "                          for trace blocks\n"
    "  --loop N                send everything N times (default 1)\n"
    "  --end                   send an end message afterwards (the run then finishes)\n"
    "  -h, --help              this text\n";

struct replay {
    const char *pace, *format;
    double block;
    int end;
    void *sock;
    int64_t sent, seq;
};

static int is_mseed_name(const char *p)
{
    const char *dot = strrchr(p, '.');
    return dot && (strcmp(dot, ".mseed") == 0 || strcmp(dot, ".ms") == 0 ||
                   strcmp(dot, ".miniseed") == 0);
}

static int replay_segy(struct replay *r, const char *path)
{
    struct segy_shots *s;
    int rc = segy_shots_open(path, &s);
    if (rc < 0)
        return rc;
    double interval = strcmp(r->pace, "realtime") == 0 ? 0 : pace_parse(r->pace, 0);
    if (interval < 0) {
        segy_shots_close(s);
        return err_set(-EINVAL, "--pace \"%s\": shots take seconds between shots or max", r->pace);
    }
    struct pace p;
    pace_start(&p, interval);
    int use_segy = strcmp(r->format, "segy") == 0;
    struct shot sh;
    int t0 = 0;
    int64_t k = 0;
    while ((rc = segy_shots_next(s, &sh)) == 1) {
        if (pace_wait(&p, k) < 0) {
            segy_shots_free_shot(&sh);
            rc = -EINTR;
            break;
        }
        rc = segy_shots_send(s, r->sock, &sh, t0, r->seq++, use_segy);
        t0 += sh.ntr;
        if (rc == 0)
            log_info("%s: shot %lld sent (%d traces)", path, (long long)sh.id, sh.ntr);
        segy_shots_free_shot(&sh);
        if (rc < 0)
            break;
        k++;
        r->sent++;
    }
    segy_shots_close(s);
    return rc < 0 ? rc : 0;
}

static int is_su_name(const char *p)
{
    const char *dot = strrchr(p, '.');
    return dot && strcasecmp(dot, ".su") == 0;
}

/* A Seismic Unix file: mapped, its byte order detected (io/segy_read), traces grouped
 * into shots by the field record (as the file input does), each sent as f32. */
static int replay_su(struct replay *r, const char *path)
{
    double interval = strcmp(r->pace, "realtime") == 0 ? 0 : pace_parse(r->pace, 0);
    if (interval < 0)
        return err_set(-EINVAL, "--pace \"%s\": shots take seconds between shots or max", r->pace);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size <= 0) {
        close(fd);
        return err_set(-EINVAL, "%s: empty or unreadable", path);
    }
    size_t size = (size_t)st.st_size;
    const unsigned char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return err_set(-errno, "%s: mmap: %s", path, strerror(errno));
    struct segy_layout l;
    int rc = su_layout_detect(m, size, size, SU_ORDER_AUTO, path, &l);
    if (rc == 0)
        log_info("%s: Seismic Unix, %s", path, l.note);
    size_t ntraces = rc == 0 ? size / l.trace_bytes : 0;
    if (rc == 0 && size % l.trace_bytes)
        log_warn("%s: %zu bytes after trace %zu (byte %zu): a truncated trace, not sent", path,
                 size % l.trace_bytes, ntraces, ntraces * l.trace_bytes);
    struct pace p;
    pace_start(&p, interval);
    int64_t k = 0;
    for (size_t t = 0; rc == 0 && t < ntraces;) {
        if (signals_stop_requested()) {
            rc = -EINTR;
            break;
        }
        struct segy_trace_hdr h0, h;
        segy_trace_header(&l, m + t * l.trace_bytes, &h0);
        size_t n = 1;
        while (t + n < ntraces) {
            segy_trace_header(&l, m + (t + n) * l.trace_bytes, &h);
            if (h.shot != h0.shot)
                break;
            n++;
        }
        if (n > (size_t)1 << 24) {
            rc = err_set(-EFBIG, "%s: shot %lld from trace %zu: %zu traces", path,
                         (long long)h0.shot, t, n);
            break;
        }
        struct shot sh = {.id = h0.shot, .ns = l.ns, .dt = l.dt, .ntr = (int)n};
        memcpy(sh.src, h0.src, sizeof sh.src);
        sh.rec = malloc(n * 3 * sizeof(float));
        sh.data = malloc(n * (size_t)l.ns * sizeof(float));
        if (!sh.rec || !sh.data)
            rc = err_set(-ENOMEM, "%s: shot %lld: %zu traces: out of memory", path,
                         (long long)h0.shot, n);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            const unsigned char *tr = m + (t + i) * l.trace_bytes;
            segy_trace_header(&l, tr, &h);
            memcpy(sh.rec + 3 * i, h.rec, sizeof h.rec);
            rc = segy_trace_samples(&l, tr, sh.data + i * (size_t)l.ns, path, (long)(t + i),
                                    (t + i) * l.trace_bytes);
        }
        if (rc == 0 && pace_wait(&p, k) < 0)
            rc = -EINTR;
        if (rc == 0)
            rc = wire_send_shot_f32(r->sock, &sh, r->seq++, 0);
        if (rc == 0) {
            log_info("%s: shot %lld sent (%zu traces)", path, (long long)sh.id, n);
            k++;
            r->sent++;
        }
        free(sh.rec);
        free(sh.data);
        t += n;
    }
    munmap((void *)m, size);
    return rc < 0 ? rc : 0;
}

/* ---- miniSEED: merge, then cut into blocks ---- */

struct channel {
    char id[64];
    struct trace_channel tc;
    MSTrace **seg;
    int nseg;
};

static int channel_of(struct channel **ch, int *nch, const MSTrace *t)
{
    char id[64];
    snprintf(id, sizeof id, "%s.%s.%s.%s", t->network, t->station, t->location, t->channel);
    for (int i = 0; i < *nch; i++)
        if (strcmp((*ch)[i].id, id) == 0)
            return i;
    *ch = realloc(*ch, (size_t)(*nch + 1) * sizeof **ch);
    struct channel *c = &(*ch)[*nch];
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", id);
    wire_parse_channel(id, &c->tc);
    return (*nch)++;
}

static double sample_at(const MSTrace *t, int64_t i)
{
    switch (t->sampletype) {
    case 'i': return ((const int32_t *)t->datasamples)[i];
    case 'f': return ((const float *)t->datasamples)[i];
    case 'd': return ((const double *)t->datasamples)[i];
    default: return NAN;
    }
}


static int replay_mseed(struct replay *r, char **files, int nfiles)
{
    MSTraceGroup *g = NULL;
    for (int i = 0; i < nfiles; i++) {
        int rc = ms_readtraces(&g, files[i], 0, -1.0, -1.0, 0, 1, 1, 0);
        if (rc != MS_NOERROR) {
            mst_freegroup(&g);
            return err_set(-EINVAL, "%s: libmseed: %s", files[i], ms_errorstr(rc));
        }
    }
    if (!g || g->numtraces == 0) {
        mst_freegroup(&g);
        return err_set(-EINVAL, "no miniSEED data in the files given");
    }
    struct channel *ch = NULL;
    int nch = 0, rc = 0;
    double rate = 0;
    hptime_t t_start = 0, t_end = 0;
    int first = 1;
    for (MSTrace *t = g->traces; t; t = t->next) {
        if (t->sampletype != 'i' && t->sampletype != 'f' && t->sampletype != 'd')
            continue; /* ASCII log channels carry no samples */
        if (rate == 0)
            rate = t->samprate;
        if (fabs(t->samprate - rate) > 1e-6 * rate) {
            rc = err_set(-EINVAL, "%s.%s.%s.%s: %g samples/s, other channels %g: one rate per "
                         "stream", t->network, t->station, t->location, t->channel, t->samprate,
                         rate);
            break;
        }
        int c = channel_of(&ch, &nch, t);
        ch[c].seg = realloc(ch[c].seg, (size_t)(ch[c].nseg + 1) * sizeof *ch[c].seg);
        ch[c].seg[ch[c].nseg++] = t;
        if (first || t->starttime < t_start)
            t_start = t->starttime;
        if (first || t->endtime > t_end)
            t_end = t->endtime;
        first = 0;
    }
    int bs = (int)llround(r->block * rate);
    if (rc == 0 && (nch == 0 || bs < 1))
        rc = err_set(-EINVAL, nch ? "--block %g s is shorter than one sample" :
                     "no channel with samples (%g)", r->block);
    double interval = pace_parse(r->pace, bs / (rate > 0 ? rate : 1));
    if (rc == 0 && interval < 0)
        rc = err_set(-EINVAL, "--pace \"%s\": expected realtime, Nx, max or seconds", r->pace);
    int64_t total = (int64_t)llround((double)(t_end - t_start) / HPTMODULUS * rate) + 1;
    float *data = rc == 0 ? malloc((size_t)nch * bs * sizeof *data) : NULL;
    struct trace_channel *names = calloc((size_t)nch, sizeof *names);
    struct mseed_channel *mc = calloc((size_t)nch, sizeof *mc);
    for (int c = 0; c < nch; c++) {
        names[c] = ch[c].tc;
        mc[c] = (struct mseed_channel){ch[c].tc.net, ch[c].tc.sta, ch[c].tc.loc, ch[c].tc.cha,
                                       rate, MSEED_ENC_FLOAT32, 4096, 1, 1};
    }
    int use_mseed = strcmp(r->format, "mseed") == 0;
    if (rc == 0)
        log_info("%d channels at %g Hz, %.1f s from %d files: %lld blocks of %d samples", nch,
                 rate, (double)total / rate, nfiles, (long long)((total + bs - 1) / bs), bs);
    struct pace p;
    pace_start(&p, interval);
    struct mseed_buf b = {0};
    int64_t blocks = 0;
    for (int64_t k0 = 0; rc == 0 && k0 < total; k0 += bs, blocks++) {
        int ns = (int)(total - k0 < bs ? total - k0 : bs);
        for (size_t i = 0; i < (size_t)nch * ns; i++)
            data[i] = NAN;
        for (int c = 0; c < nch; c++)
            for (int s = 0; s < ch[c].nseg; s++) {
                const MSTrace *t = ch[c].seg[s];
                /* sample index of the segment's first sample on the stream's grid */
                int64_t off = llround((double)(t->starttime - t_start) / HPTMODULUS * rate);
                int64_t a = k0 > off ? k0 - off : 0, e = k0 + ns - off;
                if (e > t->numsamples)
                    e = t->numsamples;
                for (int64_t i = a; i < e; i++)
                    data[(size_t)c * ns + (size_t)(off + i - k0)] = (float)sample_at(t, i);
            }
        if (pace_wait(&p, blocks + 1) < 0) {
            rc = -EINTR;
            break;
        }
        int64_t t0_ns = (int64_t)t_start * (1000000000LL / HPTMODULUS) +
                        (int64_t)llround((double)k0 / rate * 1e9);
        struct wire_traces_hdr h = {t0_ns, 1.0 / rate, nch, ns, use_mseed ? WIRE_MSEED : WIRE_F32,
                                    use_mseed ? NULL : names};
        if (use_mseed) {
            b.len = 0;
            for (int c = 0; c < nch && rc >= 0; c++) {
                /* one run of records per stretch without gaps */
                const float *x = data + (size_t)c * ns;
                for (int i = 0; i < ns && rc >= 0;) {
                    if (isnan(x[i])) {
                        i++;
                        continue;
                    }
                    int j = i;
                    while (j < ns && !isnan(x[j]))
                        j++;
                    rc = mseed_pack_f32(&mc[c], t0_ns + (int64_t)llround(i / rate * 1e9), x + i,
                                        (size_t)(j - i), mseed_buf_sink, &b);
                    i = j;
                }
            }
            if (rc >= 0 && b.failed)
                rc = err_set(-ENOMEM, "block %lld: out of memory for its records", (long long)blocks);
            if (rc >= 0)
                rc = b.len ? wire_send_traces_mseed(r->sock, &h, b.p, b.len, r->seq++, 0) : 0;
        } else {
            rc = send_traces_f32_named(r->sock, &h, data, r->seq++);
        }
        if (rc > 0)
            rc = 0;
        r->sent++;
    }
    free(b.p);
    free(data);
    free(names);
    free(mc);
    for (int c = 0; c < nch; c++)
        free(ch[c].seg);
    free(ch);
    mst_freegroup(&g);
    return rc;
}

int main(int argc, char **argv)
{
    enum { O_ZMQ = 256, O_PACE, O_BLOCK, O_FORMAT, O_LOOP, O_END };
    static const struct option lo[] = {
        {"zmq", 1, 0, O_ZMQ},       {"pace", 1, 0, O_PACE}, {"block", 1, 0, O_BLOCK},
        {"format", 1, 0, O_FORMAT}, {"loop", 1, 0, O_LOOP}, {"end", 0, 0, O_END},
        {"help", 0, 0, 'h'},        {0, 0, 0, 0}};
    struct replay r = {.pace = NULL, .format = "f32", .block = 1};
    const char *endpoint = NULL;
    int loops = 1, opt, idx = 0, bad = 0;
    while (!bad && (opt = getopt_long(argc, argv, "h", lo, &idx)) != -1) {
        switch (opt) {
        case O_ZMQ: endpoint = optarg; break;
        case O_PACE: r.pace = optarg; bad = pace_parse(optarg, 1) < 0; break;
        case O_BLOCK: r.block = atof(optarg); bad = !(r.block > 0); break;
        case O_FORMAT:
            r.format = optarg;
            bad = strcmp(optarg, "f32") && strcmp(optarg, "segy") && strcmp(optarg, "mseed");
            break;
        case O_LOOP: loops = atoi(optarg); bad = loops < 1; break;
        case O_END: r.end = 1; break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: bad = 2; break;
        }
        if (bad == 1)
            fprintf(stderr, "seislive-replay: bad value for --%s: '%s'\n", lo[idx].name, optarg);
    }
    if (!bad && (!endpoint || optind >= argc)) {
        fprintf(stderr, "seislive-replay: need --zmq ENDPOINT and at least one FILE\n");
        bad = 1;
    }
    int nm = 0;
    for (int i = optind; !bad && i < argc; i++)
        nm += is_mseed_name(argv[i]);
    if (!bad && nm && nm != argc - optind) {
        fprintf(stderr, "seislive-replay: give either SEG-Y or miniSEED files, not both\n");
        bad = 1;
    }
    if (!bad && ((nm && strcmp(r.format, "segy") == 0) || (!nm && strcmp(r.format, "mseed") == 0))) {
        fprintf(stderr, "seislive-replay: --format %s does not fit %s files\n", r.format,
                nm ? "miniSEED" : "SEG-Y");
        bad = 1;
    }
    for (int i = optind; !bad && i < argc; i++)
        if (is_su_name(argv[i]) && strcmp(r.format, "segy") == 0) {
            fprintf(stderr, "seislive-replay: --format segy: %s is Seismic Unix, sent as f32\n",
                    argv[i]);
            bad = 1;
        }
    if (bad) {
        fputs("try 'seislive-replay --help'\n", stderr);
        return 2;
    }
    if (!r.pace)
        r.pace = nm ? "realtime" : "0";
    signals_install();
    void *ctx = zmq_ctx_new();
    r.sock = zmq_socket(ctx, ZMQ_PUSH);
    int linger = 30000;
    zmq_setsockopt(r.sock, ZMQ_LINGER, &linger, sizeof linger);
    int rc = zmq_connect(r.sock, endpoint) < 0
                 ? err_set(-errno, "--zmq %s: %s", endpoint, zmq_strerror(errno))
                 : 0;
    for (int l = 0; rc == 0 && l < loops; l++) {
        if (nm)
            rc = replay_mseed(&r, argv + optind, argc - optind);
        else
            for (int i = optind; rc == 0 && i < argc; i++)
                rc = is_su_name(argv[i]) ? replay_su(&r, argv[i]) : replay_segy(&r, argv[i]);
    }
    if (rc == -EINTR) {
        log_info("stopped by signal after %lld units", (long long)r.sent);
        rc = 0;
    } else if (rc == 0 && r.end) {
        /* Delivered, not just queued: a linger alone loses what the receiver had not read
         * yet when the connection closes, the end included (io/wire.h). */
        rc = wire_send_end_wait(ctx, r.sock, WIRE_END_WAIT_MS, signals_stop_requested);
        if (rc == -EINTR) {
            log_info("stopped by signal while the end was being delivered");
            rc = 0;
        }
    }
    if (rc == 0)
        log_info("%lld units sent to %s%s", (long long)r.sent, endpoint, r.end ? ", then end" : "");
    zmq_close(r.sock); /* the linger lets queued units go */
    zmq_ctx_term(ctx);
    if (rc < 0) {
        fprintf(stderr, "seislive-replay: %s\n", err_msg());
        return 1;
    }
    return 0;
}
