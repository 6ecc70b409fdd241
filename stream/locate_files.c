/* locate_files — miniSEED and SAC files into one trace set, then the time window (see
 * locate_files.h). */
#define LOG_COMPONENT "locate-job"
#include "stream/locate_files.h"

#include <errno.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/dir_list.h"
#include "io/iso_time.h"
#include "io/sac_read.h"
#include "stream/error.h"
#include "stream/log.h"

/* SAC (1) or miniSEED (0) for PATH under [input] format FORMAT. */
static int is_sac(const char *path, int format)
{
    if (format == FMT_SAC)
        return 1;
    if (format == FMT_MSEED)
        return 0;
    unsigned char hdr[SAC_HEADER_BYTES];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0; /* the miniSEED reader names the file and the error */
    size_t n = fread(hdr, 1, sizeof hdr, f);
    fclose(f);
    return sac_detect(hdr, n);
}

static int read_one(const char *path, int format, struct mseed_set *set, struct locate_files_stats *st)
{
    if (!is_sac(path, format))
        return mseed_read_path(path, set, &st->ms);
    struct sac_trace t;
    int rc = sac_read_file(path, &t);
    if (rc)
        return rc;
    rc = mseed_set_add(set, &t.id, 1.0 / t.delta, t.t0_ns, t.x, t.npts, &st->ms, path);
    if (!rc) {
        st->sac_files++;
        st->ms.bytes += SAC_HEADER_BYTES + 4 * t.npts;
        log_debug("%s: SAC %s.%s.%s.%s, %lld samples at %g s%s", path, t.id.net, t.id.sta, t.id.loc, t.id.cha,
                  (long long)t.npts, t.delta, t.swapped ? " (byte-swapped)" : "");
    }
    sac_trace_free(&t);
    return rc;
}

/* A folder's regular files, sorted by name (as mseed_read_path does for miniSEED). */
static int read_dir(const char *path, int format, struct mseed_set *set, struct locate_files_stats *st,
                    int (*stop)(void))
{
    char **names;
    size_t n;
    int rc = dir_list_sorted(path, &names, &n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        struct stat sb;
        if (!rc && stop && stop())
            rc = err_set(-ECANCELED, "%s: stopped before %s", path, names[i]);
        if (!rc && stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode))
            rc = read_one(names[i], format, set, st);
        free(names[i]);
    }
    free(names);
    return rc;
}

int locate_files_read(const struct sl_config *cfg, struct mseed_set *set, struct locate_files_stats *st,
                      int (*stop)(void))
{
    const struct input_conf *in = &cfg->input;
    char where[256];
    memset(st, 0, sizeof *st);
    if (in->kind != INPUT_FILES)
        return err_set(-EINVAL, "%s: the locate job reads [input] kind = \"files\" here (ZeroMQ input is driven "
                       "by the streaming runtime)", config_where(cfg, "input.kind", where, sizeof where));
    if (in->format != FMT_AUTO && in->format != FMT_MSEED && in->format != FMT_SAC)
        return err_set(-EINVAL, "%s: the locate job reads miniSEED or SAC files (format \"mseed\", \"sac\" or "
                       "\"auto\")", config_where(cfg, "input.format", where, sizeof where));
    if (in->n_paths == 0)
        return err_set(-EINVAL, "%s: [input] paths: no files given", config_where(cfg, "input.paths", where,
                                                                               sizeof where));
    /* the window (checked at config load; parsed again here for the values) */
    int64_t win[2] = {INT64_MIN, INT64_MAX};
    const char *ws[2] = {in->start_time, in->end_time}, *wk[2] = {"input.start_time", "input.end_time"};
    for (int k = 0; k < 2; k++)
        if (ws[k] && ws[k][0] && iso_time_parse(ws[k], &win[k]) != 0)
            return err_set(-EINVAL, "%s: \"%s\" is not an ISO 8601 UTC time", config_where(cfg, wk[k], where,
                                                                                        sizeof where), ws[k]);
    for (size_t i = 0; i < in->n_paths; i++) {
        glob_t g;
        int grc = glob(in->paths[i], GLOB_NOCHECK, NULL, &g);
        if (grc != 0)
            return err_set(-EINVAL, "[input] paths: '%s': cannot expand", in->paths[i]);
        int rc = 0;
        for (size_t k = 0; k < g.gl_pathc && !rc; k++) {
            struct stat sb;
            if (stop && stop())
                rc = err_set(-ECANCELED, "[input] paths: stopped before %s", g.gl_pathv[k]);
            else if (stat(g.gl_pathv[k], &sb) == 0 && S_ISDIR(sb.st_mode))
                rc = read_dir(g.gl_pathv[k], in->format, set, st, stop);
            else
                rc = read_one(g.gl_pathv[k], in->format, set, st);
        }
        globfree(&g);
        if (rc)
            return rc;
    }
    const struct mseed_stats *ms = &st->ms;
    log_info("input: %lld miniSEED files (%lld records), %lld SAC files; %lld samples, %d channels; %lld records "
             "rejected, %lld overlapping samples, %lld gaps",
             (long long)(ms->files), (long long)ms->records, (long long)st->sac_files, (long long)ms->samples,
             set->ntr, (long long)ms->rejected, (long long)ms->overlap_samples, (long long)ms->gaps);
    if (win[0] != INT64_MIN || win[1] != INT64_MAX) {
        st->window_dropped = mseed_set_window(set, win[0], win[1]);
        log_info("input: time window [%s, %s): %lld samples outside it not stacked",
                 ws[0] && ws[0][0] ? ws[0] : "start", ws[1] && ws[1][0] ? ws[1] : "end",
                 (long long)st->window_dropped);
    }
    return 0;
}
