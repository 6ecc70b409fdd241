/* locate_setup — config, stations and trace blocks into the engine's views (see
 * locate_setup.h). */
#include "stream/locate_setup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"
#include "stream/locate_tables.h"

static int cf_function(int kind)
{
    switch (kind) {
    case CF_ABS: return CF_FN_ABS;
    case CF_ENVELOPE: return CF_FN_ENVELOPE;
    case CF_STALTA: return CF_FN_STALTA;
    case CF_RECURSIVE_STALTA: return CF_FN_RECURSIVE_STALTA;
    default: return CF_FN_KURTOSIS;
    }
}

static int stack_normalization(int norm)
{
    switch (norm) {
    case NORM_NONE: return STACK_NORM_NONE;
    case NORM_GEOMETRIC: return STACK_NORM_GEOMETRIC;
    default: return STACK_NORM_COUNT;
    }
}

struct cf_spec locate_cf_spec(const struct locate_conf *lc)
{
    struct cf_spec s = {.kind = cf_function(lc->cf), .sta = lc->sta, .lta = lc->lta,
                        .kurtosis_window = lc->kurtosis_window, .band = {lc->band[0], lc->band[1]}};
    return s;
}

void locate_params_from_config(const struct locate_conf *lc, struct locate_params *p)
{
    memset(p, 0, sizeof *p);
    p->cf = locate_cf_spec(lc);
    p->normalize = stack_normalization(lc->normalize);
    p->block_samples = lc->block_samples;
    p->trigger = lc->trigger == TRIGGER_STATIC ? LOCATE_TRIGGER_STATIC : LOCATE_TRIGGER_MAD;
    p->threshold = lc->threshold;
    p->min_interval = lc->min_interval;
    p->mad_window = lc->mad_window;
}

int locate_station_views(const struct station_set *set, struct tt_station **out)
{
    *out = calloc(set->n > 0 ? (size_t)set->n : 1, sizeof **out);
    if (!*out)
        return err_set(-ENOMEM, "locate: out of memory for %d stations", set->n);
    for (int i = 0; i < set->n; i++) {
        const struct station *s = &set->st[i];
        struct tt_station *v = &(*out)[i];
        snprintf(v->net, sizeof v->net, "%s", s->net);
        snprintf(v->name, sizeof v->name, "%s", s->name);
        v->x = s->x;
        v->y = s->y;
        v->z = s->z;
        v->corr[0] = s->corr[0];
        v->corr[1] = s->corr[1];
    }
    return 0;
}

static void to_geographic(const struct locate_geo *g, double x, double y, double z, double *lat, double *lon,
                          double *elev)
{
    if (g->user) { /* the station set itself: a NonLinLoc grid's projection (stream/locate_nll.h) */
        stations_to_geographic(g->user, x, y, z, lat, lon, elev);
        return;
    }
    struct station_set set = {.geographic = 1, .lat0 = g->lat0, .lon0 = g->lon0};
    stations_to_geographic(&set, x, y, z, lat, lon, elev);
}

struct locate_geo locate_geo_of(const struct station_set *set)
{
    struct locate_geo g = {.lat0 = set->lat0, .lon0 = set->lon0,
                           .to_geographic = set->geographic || set->proj_to_geo ? to_geographic : NULL,
                           .user = set->proj_to_geo ? set : NULL};
    return g;
}

int locate_engine_from_config(struct locate_engine **out, const struct sl_config *cfg, const struct sl_device *dev,
                              const struct station_set *st)
{
    *out = NULL;
    struct tt_station *views;
    int rc = locate_station_views(st, &views);
    if (rc)
        return rc;
    struct tt_table tt;
    rc = locate_tables_build(cfg, views, st->n, &tt);
    if (rc) {
        free(views);
        return err_prefix(rc, "locate: travel times");
    }
    struct locate_params p;
    locate_params_from_config(&cfg->locate, &p);
    struct locate_stations ls = {.st = views, .n = st->n, .geo = locate_geo_of(st)};
    rc = locate_engine_create(out, &p, dev, &ls, &tt);
    free(views);
    return rc;
}

int locate_feed(struct locate_engine *e, const struct trace_block *b)
{
    if (!b)
        return locate_engine_process(e, NULL);
    struct locate_channel *chan = NULL;
    if (b->chan && b->nrec > 0) {
        chan = malloc((size_t)b->nrec * sizeof *chan);
        if (!chan)
            return err_set(-ENOMEM, "locate: block %lld: out of memory for %d channels", (long long)b->seq,
                           b->nrec);
        for (int r = 0; r < b->nrec; r++) {
            _Static_assert(sizeof chan->net == sizeof b->chan->net && sizeof chan->sta == sizeof b->chan->sta &&
                               sizeof chan->loc == sizeof b->chan->loc && sizeof chan->cha == sizeof b->chan->cha,
                           "channel identities are copied whole");
            memcpy(chan[r].net, b->chan[r].net, sizeof chan[r].net);
            memcpy(chan[r].sta, b->chan[r].sta, sizeof chan[r].sta);
            memcpy(chan[r].loc, b->chan[r].loc, sizeof chan[r].loc);
            memcpy(chan[r].cha, b->chan[r].cha, sizeof chan[r].cha);
        }
    }
    struct locate_block v = {.seq = b->seq, .t0_ns = b->t0_ns, .dt = b->dt, .nrec = b->nrec, .ns = b->ns,
                             .chan = chan, .data = b->data, .mask = b->mask, .chan_ok = b->chan_ok};
    int rc = locate_engine_process(e, &v);
    free(chan);
    return rc;
}
