/* file_source — files, globs, directories, watched; SEG-Y/SU shots into the slots. */
#define LOG_COMPONENT "file-in"
#include "io/file_source.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf/config.h"
#include "io/mseed_read.h"
#include "io/segy_read.h"
#include "io/uring_reader.h"
#include "io/wire.h"
#include "stream/error.h"
#include "stream/log.h"

struct seen {
    char *path;
    off_t size;      /* last size seen (watch: a file is read once it stops growing) */
    double t_change; /* monotonic s: when SIZE was last seen to change */
    off_t read_size; /* size when it was last read (a file that grows is read again) */
    bool done;
};

/* A shot id met in the files, and where (to warn when it comes again). */
struct id_seen {
    int64_t id;
    char where[160];
};

struct file_source {
    struct file_source_conf c;
    struct seen *files;
    size_t n_files, cap;
    struct id_seen *ids;
    size_t n_ids, cap_ids;
    bool ens_warned, scalar_warned; /* per file: said once */
    long file_shots, file_single;   /* per file: shots gathered, of them single traces */
    uint64_t units;
    double total_bytes;  /* the listed files' sizes (not watching), for input_frac */
    double done_bytes;   /* of the files read completely */
};

int file_source_open(struct file_source **out, const struct file_source_conf *c)
{
    struct file_source *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    f->c = *c;
    if (!c->n_paths) {
        free(f);
        return err_set(-EINVAL, "[input] kind = \"files\" needs paths");
    }
    *out = f;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ignorable(const char *name)
{
    size_t n = strlen(name);
    /* Hidden files and a recorder's temporary names are not data (yet). */
    return name[0] == '.' || (n > 4 && strcmp(name + n - 4, ".tmp") == 0) ||
           (n > 5 && strcmp(name + n - 5, ".part") == 0);
}

static int note(struct file_source *f, const char *path)
{
    for (size_t i = 0; i < f->n_files; i++)
        if (strcmp(f->files[i].path, path) == 0)
            return 0;
    if (f->n_files == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        struct seen *p = realloc(f->files, cap * sizeof *p);
        if (!p)
            return err_set(-ENOMEM, "%s: out of memory for the list of %zu files", path, cap);
        f->files = p;
        f->cap = cap;
    }
    char *dup = strdup(path);
    if (!dup)
        return err_set(-ENOMEM, "%s: out of memory", path);
    f->files[f->n_files++] = (struct seen){.path = dup, .size = -1, .read_size = -1};
    return 0;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* List every file the paths name now (in name order per path).  A folder of many
 * thousand files takes a while: the stop flag is polled per entry (-ECANCELED). */
static int list_files(struct file_source *f, struct ingest *in, bool first)
{
    for (size_t p = 0; p < f->c.n_paths; p++) {
        const char *path = f->c.paths[p];
        struct stat st;
        if (strpbrk(path, "*?[")) {
            glob_t g;
            int rc = glob(path, 0, NULL, &g);
            int nrc = 0;
            if (rc == 0)
                for (size_t i = 0; i < g.gl_pathc && !nrc; i++) {
                    if (ingest_stopping(in))
                        nrc = -ECANCELED;
                    const char *b = strrchr(g.gl_pathv[i], '/');
                    if (!nrc && !ignorable(b ? b + 1 : g.gl_pathv[i]) &&
                        stat(g.gl_pathv[i], &st) == 0 && S_ISREG(st.st_mode))
                        nrc = note(f, g.gl_pathv[i]);
                }
            globfree(&g);
            if (nrc)
                return nrc;
        } else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(path);
            if (!d)
                return err_set(-errno, "%s: %s", path, strerror(errno));
            char **names = NULL;
            size_t n = 0, cap = 0;
            int nrc = 0;
            struct dirent *e;
            while (!nrc && (e = readdir(d))) {
                if (ingest_stopping(in)) {
                    nrc = -ECANCELED;
                    break;
                }
                if (ignorable(e->d_name))
                    continue;
                char full[4096];
                snprintf(full, sizeof full, "%s/%s", path, e->d_name);
                if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
                    if (n == cap) {
                        size_t nc = cap ? 2 * cap : 64;
                        char **q = realloc(names, nc * sizeof *q);
                        if (!q) {
                            nrc = err_set(-ENOMEM, "%s: out of memory listing %zu files", path, nc);
                            break;
                        }
                        names = q;
                        cap = nc;
                    }
                    if (!(names[n] = strdup(full)))
                        nrc = err_set(-ENOMEM, "%s: out of memory", full);
                    else
                        n++;
                }
            }
            closedir(d);
            if (n && !nrc) /* qsort(NULL, 0, ...) is undefined behaviour */
                qsort(names, n, sizeof *names, cmp_str);
            for (size_t i = 0; i < n && !nrc; i++)
                nrc = note(f, names[i]);
            free_names(names, n);
            if (nrc)
                return nrc;
        } else if (stat(path, &st) == 0) {
            int nrc = note(f, path);
            if (nrc)
                return nrc;
        } else if (first && !f->c.watch) {
            return err_set(-ENOENT, "[input] paths: %s: %s", path, strerror(errno));
        }
    }
    return 0;
}

static int format_of(const struct file_source *f, const char *path)
{
    if (f->c.format != FMT_AUTO)
        return f->c.format;
    const char *dot = strrchr(path, '.');
    if (!dot)
        return FMT_AUTO;
    if (!strcasecmp(dot, ".segy") || !strcasecmp(dot, ".sgy") || !strcasecmp(dot, ".seg"))
        return FMT_SEGY;
    if (!strcasecmp(dot, ".su"))
        return FMT_SU;
    if (!strcasecmp(dot, ".mseed") || !strcasecmp(dot, ".msd") || !strcasecmp(dot, ".miniseed"))
        return FMT_MSEED;
    if (!strcasecmp(dot, ".f32"))
        return FMT_F32;
    return FMT_AUTO;
}

/* The shot being gathered from consecutive traces of one key. */
struct gather {
    int slot;            /* -1: none open */
    int64_t key;
    int ntr;
    bool bad;            /* a trace of it was rejected: the whole shot goes */
    int why_code;        /* enum wire_reject of the rejection */
    char why[512];
    float *rec;          /* ntr x 3, side buffer (copied after the samples on emit) */
    int cap;
    long first_trace;
    long long first_byte;
    bool located;        /* some source or receiver coordinate is not 0 */
    double src[3];
    double t_arrive, t_decode;
};

/* Reject the open shot: count REASON now, say WHY on emit. */
static void gather_bad(struct ingest *in, struct gather *g, int reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void gather_bad(struct ingest *in, struct gather *g, int reason, const char *fmt, ...)
{
    if (g->bad)
        return;
    g->bad = true;
    g->why_code = reason;
    in->stats.rejected[reason]++;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->why, sizeof g->why, fmt, ap);
    va_end(ap);
}

/* Warn when shot ID was met before (another file, or earlier in this one): the same
 * id twice is either a replay (the ledger skips it) or two different shots, which the
 * job refuses; either way the operator should hear where both are. */
static void note_id(struct file_source *f, int64_t id, const char *where)
{
    for (size_t i = 0; i < f->n_ids; i++)
        if (f->ids[i].id == id) {
            if (strcmp(f->ids[i].where, where) == 0)
                return; /* the same traces of a file read again (it grew): no news */
            log_warn("%s: shot %lld again: it was also in %s (a repeated shot id: the ledger "
                     "skips the same content, refuses a different one)", where, (long long)id,
                     f->ids[i].where);
            return;
        }
    if (f->n_ids == f->cap_ids) {
        size_t cap = f->cap_ids ? 2 * f->cap_ids : 64;
        struct id_seen *p = realloc(f->ids, cap * sizeof *p);
        if (!p) {
            log_warn("%s: out of memory for the list of shot ids: repeats are not warned of",
                     where);
            return;
        }
        f->ids = p;
        f->cap_ids = cap;
    }
    f->ids[f->n_ids].id = id;
    snprintf(f->ids[f->n_ids].where, sizeof f->ids[f->n_ids].where, "%s", where);
    f->n_ids++;
}

/* TRUNCATED: the file ends inside the trace after LAST_TRACE (this shot is cut). */
static void gather_emit(struct file_source *f, struct ingest *in, struct gather *g,
                        const struct segy_layout *l, const char *path, long last_trace,
                        bool truncated, bool last)
{
    if (g->slot < 0)
        return;
    f->file_shots++;
    f->file_single += g->ntr == 1;
    struct slot_hdr *h = &in->hdr[g->slot];
    char *base = ingest_slot(in, g->slot);
    f->units++;
    ingest_count(in, 1, 0);
    const char *b = strrchr(path, '/');
    char where[sizeof h->origin];
    snprintf(where, sizeof where, "%s: traces %ld..%ld (byte %lld)", b ? b + 1 : path,
             g->first_trace, last_trace, g->first_byte);
    /* A shot enters the image only when it is whole: checked against its own headers. */
    if (!g->bad && truncated)
        gather_bad(in, g, WIRE_REJ_SIZE,
                   "%s: shot %lld: the file ends inside trace %ld (byte %lld): the shot is "
                   "incomplete (a file still being written?)", where, (long long)g->key,
                   last_trace + 1, (long long)l->trace0 + (long long)(last_trace + 1) *
                   (long long)l->trace_bytes);
    if (!g->bad && !g->located)
        gather_bad(in, g, WIRE_REJ_VALUE,
                   "%s: shot %lld has no geometry: every source and receiver coordinate is 0 "
                   "(trace bytes 41, 49, 73-88); migrating it would put every trace at the "
                   "corner: write the coordinates into the trace headers", where,
                   (long long)g->key);
    /* The binary header's traces per shot (byte 3213) tells a shot cut short at a trace
     * boundary, which nothing else can: but only at the end of the file (a shot in the
     * middle of a file is not being written) and only while every earlier shot of the
     * file agreed with it.  A shot of another count shows the field is not a fixed count
     * (real files carry 1 there for 64-trace shots, or the channel count with fewer live
     * traces): said once, and the field is not used again for this file. */
    if (!g->bad && l->per_ensemble > 0 && g->ntr != l->per_ensemble && !f->ens_warned) {
        if (g->ntr < l->per_ensemble && last)
            gather_bad(in, g, WIRE_REJ_SIZE,
                       "%s: shot %lld, the last of the file, has %d traces, the binary header "
                       "(byte 3213) and every earlier shot %d: incomplete (a file still being "
                       "written?)", where, (long long)g->key, g->ntr, l->per_ensemble);
        else {
            log_warn("%s: shot %lld has %d traces, the binary header (byte 3213) says %d per "
                     "shot: that field is taken as not a fixed count and not used for this file",
                     where, (long long)g->key, g->ntr, l->per_ensemble);
            f->ens_warned = true;
        }
    }
    if (g->bad) {
        err_set(-EINVAL, "%s", g->why);
        ingest_rejected(in, "shot");
        ingest_unreserve(in, g->slot);
        g->slot = -1;
        return;
    }
    note_id(f, g->key, where);
    float *data = (float *)base;
    float *rec = data + (size_t)g->ntr * (size_t)l->ns;
    memcpy(rec, g->rec, (size_t)g->ntr * 3 * sizeof(float));
    h->kind = SLOT_SHOT;
    h->id = g->key;
    h->msg_seq = f->units;
    snprintf(h->origin, sizeof h->origin, "%s", where);
    h->shot = (struct shot){.id = g->key, .ns = l->ns, .dt = l->dt, .ntr = g->ntr, .rec = rec,
                            .data = data};
    memcpy(h->shot.src, g->src, sizeof g->src);
    h->bytes = (size_t)g->ntr * ((size_t)l->ns + 3) * sizeof(float);
    h->t_arrive = g->t_arrive;
    h->decode_s = g->t_decode;
    if (f->total_bytes > 0) {
        double pos = (double)l->trace0 + (double)(last_trace + 1) * (double)l->trace_bytes;
        h->input_frac = fmin(1.0, (f->done_bytes + pos) / f->total_bytes);
    }
    in->stats.accepted++;
    ingest_commit(in, g->slot);
    g->slot = -1;
}

/* One SEG-Y or SU file.  Returns 0 (file done, even when parts were rejected), or
 * -ECANCELED when stopping, or a fatal read error. */
static int read_segy(struct file_source *f, struct ingest *in, const char *path, bool su)
{
    struct uring_file uf;
    int rc = uring_file_open(&uf, path, f->c.o_direct);
    if (rc < 0) {
        ingest_rejected(in, "file");
        return 0;
    }
    char *stg = in->staging;
    size_t cap = in->staging_bytes;
    const int sbuf = in->nslots; /* the staging buffer's fixed-buffer index */
    struct segy_layout l;
    ssize_t got = uring_reader_read(in->ring, &uf, stg, SEGY_FILE_HEADER < cap ? SEGY_FILE_HEADER : cap,
                                    0, sbuf);
    if (got < 0) {
        uring_file_close(&uf);
        return (int)got;
    }
    rc = su ? su_layout_detect(stg, (size_t)got, (uint64_t)uf.size, f->c.su_order, path, &l)
            : segy_layout_parse(stg, (size_t)got, path, &l);
    if (!rc && su)
        log_info("%s: Seismic Unix, %s", path, l.note);
    /* Headers and nothing else, or extended textual headers announced (binary header
     * byte 3505) that the file does not hold: reject it by name rather than read 0
     * traces in silence (found by the segy fuzz target's seeds). */
    if (!rc && (uint64_t)uf.size < (uint64_t)l.trace0 + l.trace_bytes)
        rc = err_set(-EINVAL, "%s: byte %llu: no complete trace: the traces start at byte %llu "
                     "(after the headers the binary header announces) and take %zu bytes each, "
                     "the file has %llu bytes", path, (unsigned long long)uf.size,
                     (unsigned long long)l.trace0, l.trace_bytes, (unsigned long long)uf.size);
    if (!rc && l.trace_bytes + 4096 > cap)
        rc = err_set(-EFBIG, "%s: a trace of %zu bytes does not fit the staging buffer ([input] "
                     "slot_mib)", path, l.trace_bytes);
    if (rc) {
        ingest_count(in, 1, 0);
        in->stats.rejected[WIRE_REJ_PAYLOAD]++;
        ingest_rejected(in, "file");
        uring_file_close(&uf);
        return 0;
    }
    size_t per_chunk = (cap - 4096) / l.trace_bytes;
    size_t body = (size_t)uf.size > l.trace0 ? (size_t)uf.size - l.trace0 : 0;
    size_t ntraces = body / l.trace_bytes;
    size_t tail = body % l.trace_bytes;
    struct gather g = {.slot = -1};
    size_t t = 0;
    rc = 0;
    f->ens_warned = f->scalar_warned = false;
    f->file_shots = f->file_single = 0;
    while (t < ntraces && !rc) {
        if (ingest_stopping(in)) { /* a long file: the stop flag per chunk */
            rc = -ECANCELED;
            break;
        }
        size_t n = ntraces - t < per_chunk ? ntraces - t : per_chunk;
        off_t off = (off_t)(l.trace0 + t * l.trace_bytes);
        off_t aoff = off & ~(off_t)4095; /* aligned for O_DIRECT; the lead is skipped */
        size_t lead = (size_t)(off - aoff);
        double t0 = source_now_s();
        got = uring_reader_read(in->ring, &uf, stg, lead + n * l.trace_bytes, aoff, sbuf);
        if (got < 0) {
            rc = (int)got;
            break;
        }
        if ((size_t)got < lead + n * l.trace_bytes) {
            rc = err_set(-EIO, "%s: file shrank while being read", path);
            break;
        }
        double tread = source_now_s() - t0;
        for (size_t k = 0; k < n; k++) {
            const char *tr = stg + lead + k * l.trace_bytes;
            long tno = (long)(t + k);
            long long tbyte = (long long)off + (long long)(k * l.trace_bytes);
            struct segy_trace_hdr ti;
            segy_trace_header(&l, tr, &ti);
            if (g.slot >= 0 && ti.shot != g.key)
                gather_emit(f, in, &g, &l, path, tno - 1, false, false);
            if (g.slot < 0) {
                double tw = source_now_s();
                int s = ingest_reserve(in);
                if (s < 0) {
                    rc = -ECANCELED;
                    break;
                }
                g = (struct gather){.slot = s, .key = ti.shot, .first_trace = tno,
                                    .first_byte = tbyte, .t_arrive = source_now_s(), .rec = g.rec,
                                    .cap = g.cap};
                in->hdr[s].wait_s = source_now_s() - tw;
                memcpy(g.src, ti.src, sizeof g.src);
                if (!f->scalar_warned && (!segy_scalar_valid(ti.scalar_xy) || !segy_scalar_valid(ti.scalar_z))) {
                    log_warn("%s: trace %ld (byte %lld): coordinate scalar %d (byte 71), "
                             "elevation scalar %d (byte 69): SEG-Y allows 0, +-1, +-10, +-100, "
                             "+-1000, +-10000; taken as 1 (the coordinates as stored): check "
                             "the positions", path, tno, tbyte, (int)ti.scalar_xy,
                             (int)ti.scalar_z);
                    f->scalar_warned = true;
                }
            }
            double td = source_now_s();
            if (g.bad)
                continue;
            size_t need = (size_t)(g.ntr + 1) * ((size_t)l.ns + 3) * sizeof(float);
            if (need > in->slot_bytes) {
                gather_bad(in, &g, WIRE_REJ_TOO_LARGE,
                           "%s: shot %lld from trace %ld: more than %d traces do not fit a slot "
                           "([input] slot_mib)", path, (long long)g.key, g.first_trace, g.ntr);
                continue;
            }
            if (ti.ns != 0 && ti.ns != l.ns) {
                gather_bad(in, &g, WIRE_REJ_PAYLOAD,
                           "%s: trace %ld (byte %lld): header byte 115 says %d samples, the file "
                           "%d", path, tno, tbyte, ti.ns, l.ns);
                continue;
            }
            /* One shot, one source: traces of one key that disagree about where the
             * source was are two shots under one number (or a damaged header). */
            if (memcmp(ti.src, g.src, sizeof g.src) != 0) {
                gather_bad(in, &g, WIRE_REJ_VALUE,
                           "%s: shot %lld: trace %ld (byte %lld) puts the source at (%g, %g, %g) "
                           "m, its first trace %ld (byte %lld) at (%g, %g, %g) m", path,
                           (long long)g.key, tno, tbyte, ti.src[0], ti.src[1], ti.src[2],
                           g.first_trace, g.first_byte, g.src[0], g.src[1], g.src[2]);
                continue;
            }
            float *data = (float *)ingest_slot(in, g.slot) + (size_t)g.ntr * (size_t)l.ns;
            if (segy_trace_samples(&l, tr, data, path, tno, (size_t)tbyte) < 0) {
                gather_bad(in, &g, WIRE_REJ_PAYLOAD, "%s", err_msg());
                continue;
            }
            if (g.ntr == g.cap) {
                int nc = g.cap ? 2 * g.cap : 256;
                float *p = realloc(g.rec, (size_t)nc * 3 * sizeof(float));
                if (!p) {
                    gather_bad(in, &g, WIRE_REJ_TOO_LARGE, "%s: shot %lld: out of memory for "
                               "the positions of %d traces", path, (long long)g.key, nc);
                    continue;
                }
                g.rec = p;
                g.cap = nc;
            }
            memcpy(g.rec + 3 * (size_t)g.ntr, ti.rec, sizeof ti.rec);
            for (int c = 0; c < 3; c++)
                g.located |= ti.rec[c] != 0 || ti.src[c] != 0;
            g.ntr++;
            g.t_decode += source_now_s() - td + tread / (double)n;
        }
        t += n;
    }
    /* A partial trace at the end belongs to the last shot only if its header says so: a
     * file cut inside the first trace of the next shot leaves the last shot whole.  With
     * less than a trace header there is no telling: the shot is taken as cut. */
    bool tail_in_shot = false;
    if (rc == 0 && tail && g.slot >= 0) {
        tail_in_shot = true;
        if (tail >= 240) {
            char *th = calloc(1, l.trace_bytes);
            off_t at = (off_t)(l.trace0 + ntraces * l.trace_bytes);
            if (th && pread(uf.fd, th, tail, at) == (ssize_t)tail) {
                struct segy_trace_hdr ti;
                segy_trace_header(&l, th, &ti);
                tail_in_shot = ti.shot == g.key;
            }
            free(th);
        }
    }
    if (rc == 0)
        gather_emit(f, in, &g, &l, path, (long)ntraces - 1, tail_in_shot, true);
    if (rc == 0 && f->file_shots >= 2 && f->file_single == f->file_shots)
        log_warn("%s: every one of its %ld shots is a single trace (each trace its own field "
                 "record, bytes 9-12): a CDP or offset gather rather than shot records? each "
                 "trace is migrated as a shot of its own", path, f->file_shots);
    else if (g.slot >= 0)
        ingest_unreserve(in, g.slot);
    free(g.rec);
    if (rc == 0 && tail && !tail_in_shot) { /* else counted once, with its shot */
        ingest_count(in, 1, 0);
        in->stats.rejected[WIRE_REJ_SIZE]++;
        err_set(-EINVAL, "%s: %zu bytes after trace %zu (byte %lld): a truncated trace", path,
                tail, ntraces, (long long)(l.trace0 + ntraces * l.trace_bytes));
        ingest_rejected(in, "trace");
    }
    uring_file_close(&uf);
    return rc;
}

struct block_emit {
    struct file_source *f;
    struct ingest *in;
    const char *path;
};

/* One block of a decoded miniSEED set into a slot: data | channels | mask. */
static int emit_block(const struct trace_block *b, void *user)
{
    struct block_emit *e = user;
    struct ingest *in = e->in;
    size_t nd = (size_t)b->nrec * (size_t)b->ns;
    size_t need = nd * sizeof(float) + (size_t)b->nrec * sizeof(struct trace_channel) + nd;
    ingest_count(in, 1, 0);
    if (need > in->slot_bytes) {
        in->stats.rejected[WIRE_REJ_TOO_LARGE]++;
        err_set(-EFBIG, "%s: block of %d channels x %d samples needs %zu bytes, a slot holds %zu "
                        "([input] slot_mib or [locate] block_samples)",
                e->path, b->nrec, b->ns, need, in->slot_bytes);
        ingest_rejected(in, "block");
        return 0;
    }
    double t0 = source_now_s();
    int i = ingest_reserve(in);
    if (i < 0)
        return -ECANCELED;
    struct slot_hdr *h = &in->hdr[i];
    char *base = ingest_slot(in, i);
    float *data = (float *)base;
    struct trace_channel *chan = (struct trace_channel *)(base + nd * sizeof(float));
    uint8_t *mask = (uint8_t *)(chan + b->nrec);
    memcpy(data, b->data, nd * sizeof(float));
    memcpy(chan, b->chan, (size_t)b->nrec * sizeof *chan);
    if (b->mask)
        memcpy(mask, b->mask, nd);
    h->kind = SLOT_TRACES;
    h->block = *b;
    h->block.seq = (int64_t)e->f->units++;
    h->block.data = data;
    h->block.chan = chan;
    h->block.mask = b->mask ? mask : NULL;
    h->block.chan_ok = NULL;
    h->id = b->t0_ns;
    h->msg_seq = e->f->units;
    h->bytes = need;
    const char *s = strrchr(e->path, '/');
    snprintf(h->origin, sizeof h->origin, "%s: block at %lld ns", s ? s + 1 : e->path,
             (long long)b->t0_ns);
    h->t_arrive = t0;
    h->decode_s = source_now_s() - t0;
    in->stats.accepted++;
    ingest_commit(in, i);
    return 0;
}

static struct ingest *g_stop_in; /* for mseed_set_blocks' stop callback (ingest thread) */
static int stop_cb(void)
{
    return g_stop_in && ingest_stopping(g_stop_in);
}

static int read_mseed(struct file_source *f, struct ingest *in, const char *path)
{
    struct uring_file uf;
    if (uring_file_open(&uf, path, false) < 0) {
        ingest_rejected(in, "file");
        return 0;
    }
    char *buf = malloc((size_t)uf.size + 1);
    ssize_t got = buf ? uring_reader_read(in->ring, &uf, buf, (size_t)uf.size, 0, -1) : -ENOMEM;
    uring_file_close(&uf);
    if (got < 0) {
        free(buf);
        return (int)got;
    }
    struct mseed_set set = {0};
    struct mseed_stats ms = {0};
    /* a big file's record scan polls the stop flag too (mseed_read.h) */
    g_stop_in = in;
    mseed_read_set_stop(stop_cb);
    int rc = mseed_read_buffer(path, buf, (size_t)got, &set, &ms);
    mseed_read_set_stop(NULL);
    g_stop_in = NULL;
    free(buf);
    if (rc == -ECANCELED) { /* a stop, not a bad file: nothing counted as rejected */
        mseed_set_free(&set);
        return rc;
    }
    if (ms.rejected) {
        ingest_count(in, 0, (uint64_t)ms.rejected);
        in->stats.rejected[WIRE_REJ_PAYLOAD] += (uint64_t)ms.rejected;
        log_warn("%s: %lld miniSEED records rejected (see above)", path, (long long)ms.rejected);
    }
    if (rc == 0 && set.ntr > 0) {
        struct block_emit e = {.f = f, .in = in, .path = path};
        g_stop_in = in;
        rc = mseed_set_blocks(&set, f->c.block_samples > 0 ? f->c.block_samples : 1000, emit_block,
                              &e, stop_cb);
        g_stop_in = NULL;
    } else if (rc) {
        ingest_rejected(in, "file");
        rc = 0;
    }
    mseed_set_free(&set);
    return rc == -ECANCELED ? -ECANCELED : rc;
}

static int read_file(struct file_source *f, struct ingest *in, const char *path)
{
    int fmt = format_of(f, path);
    log_info("reading %s", path);
    if (f->c.kind == SLOT_SHOT && (fmt == FMT_SEGY || fmt == FMT_SU))
        return read_segy(f, in, path, fmt == FMT_SU);
    if (f->c.kind == SLOT_TRACES && (fmt == FMT_MSEED || fmt == FMT_AUTO))
        return read_mseed(f, in, path);
    ingest_count(in, 1, 0);
    err_set(-EINVAL, "%s: format %s is not an input of this job (shots: SEG-Y .segy/.sgy, "
                     "Seismic Unix .su; trace blocks: miniSEED; set [input] format)", path,
            config_enum_name("input", "format", fmt));
    ingest_rejected(in, "file");
    return 0;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Watch: is file I ready to read?  Its size has held still for [input] settle seconds,
 * or a file later in name order is there (a recorder writes one file after another:
 * the next one means it is done with this one). */
static bool settled(const struct file_source *f, size_t i, double now)
{
    const struct seen *s = &f->files[i];
    if (now - s->t_change >= f->c.settle)
        return true;
    /* ... a later file of the same folder: another folder is another recorder */
    const char *slash = strrchr(s->path, '/');
    size_t dirlen = slash ? (size_t)(slash - s->path) + 1 : 0;
    for (size_t j = 0; j < f->n_files; j++) {
        const char *o = f->files[j].path, *os = strrchr(o, '/');
        size_t olen = os ? (size_t)(os - o) + 1 : 0;
        if (j != i && olen == dirlen && strncmp(o, s->path, dirlen) == 0 && strcmp(o, s->path) > 0)
            return true;
    }
    return false;
}

static int files_run(void *ctx, struct ingest *in)
{
    struct file_source *f = ctx;
    double last_new = source_now_s();
    bool first = true;
    for (;;) {
        int rc = list_files(f, in, first);
        if (rc == -ECANCELED)
            return 0;
        if (rc)
            return rc;
        if (first && !f->c.watch) { /* a known input: its size measures progress */
            struct stat st;
            for (size_t i = 0; i < f->n_files; i++)
                if (stat(f->files[i].path, &st) == 0)
                    f->total_bytes += (double)st.st_size;
        }
        first = false;
        for (size_t i = 0; i < f->n_files; i++) {
            if (ingest_stopping(in))
                return 0;
            struct seen *s = &f->files[i];
            if (s->done && !f->c.watch)
                continue;
            struct stat st;
            if (f->c.watch) {
                if (stat(s->path, &st) < 0)
                    continue;
                double now = source_now_s();
                if (st.st_size != s->size) {
                    s->size = st.st_size;
                    s->t_change = now;
                    continue;
                }
                if (s->done && st.st_size == s->read_size)
                    continue;
                if (!settled(f, i, now))
                    continue;
                if (s->done)
                    log_warn("%s: %s from %lld to %lld bytes after it was read: reading it "
                             "again (shots already stacked are skipped)", s->path,
                             st.st_size > s->read_size ? "grew" : "shrank",
                             (long long)s->read_size, (long long)st.st_size);
                s->read_size = st.st_size;
            }
            s->done = true;
            last_new = source_now_s();
            rc = read_file(f, in, s->path);
            if (stat(s->path, &st) == 0)
                f->done_bytes += (double)st.st_size;
            if (rc == -ECANCELED || ingest_stopping(in))
                return 0;
            if (rc)
                return rc;
        }
        if (!f->c.watch)
            return 0;
        if (f->c.watch_idle > 0 && source_now_s() - last_new > f->c.watch_idle) {
            log_info("no new file for %.1f s: input ends", f->c.watch_idle);
            return 0;
        }
        for (int k = 0; k < 4 && !ingest_stopping(in); k++)
            sleep_ms(50);
        if (ingest_stopping(in))
            return 0;
    }
}

static void files_close(void *ctx)
{
    struct file_source *f = ctx;
    if (!f)
        return;
    for (size_t i = 0; i < f->n_files; i++)
        free(f->files[i].path);
    free(f->files);
    free(f->ids);
    free(f);
}

struct source file_source_as_source(struct file_source *f)
{
    return (struct source){.name = "files", .ctx = f, .run = files_run, .close = files_close};
}
