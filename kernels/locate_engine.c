/* locate_engine — streaming detection and location (see locate_engine.h). */
#define LOG_COMPONENT "locate"
#include "kernels/locate_engine.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "stream/error.h"
#include "stream/log.h"

/* What the jackknife of a refined peak starts from (see refine, jackknife). */
struct refined {
    int c[3];                /* node the position is bounded about */
    double p[3];             /* position, cells */
    int pinned[3];           /* axis ended on the bound */
    int done;                /* jackknife done: ev's sigmas are final */
};

struct pending {
    int valid;
    int64_t t;
    float val;
    int32_t j;
    struct locate_event ev; /* refined when the peak was set */
    struct refined rs;
};

struct locate_engine {
    struct locate_params p;
    struct sl_device dev;
    int gpu;
    struct tt_station *sta; /* tt.nsta, the table's order */
    struct locate_geo geo;
    struct tt_table tt;
    int nrow;
    size_t nj, nj_pad;
    double T0;               /* s: travel times are shifted by -T0 >= 0 */

    /* known from the first block */
    int started;
    double dt;
    int64_t t0_ns, next_n;
    int nch;
    struct locate_channel *chan;
    int nused, *used_ch, *rowch; /* units (channel x function): their channel; rows' units */
    int nrow_mapped, min_rows;
    int nset;                /* characteristic functions: 1, or 2 (P and S differ) */
    int set_of_phase[2];     /* function of the P and S rows */
    int nunit_set[2];        /* units of each function: set 0's first */
    int *roff;               /* nrow: the row's function's delay - the smaller delay */
    int dmin;                /* the smaller delay: CF column 0 is time -dmin */
    struct cf_params cfp[2];
    double *state[2];
    uint16_t *delay;
    int max_delay, chunk;
    double restart_limit;    /* samples: a longer time jump restarts the stream */
    int refine_t;            /* samples searched either side in the time refinement */
    size_t cap;
    float *cfh;              /* nrow x cap: CF rows (host; the mirror of the device copy) */
    int64_t a0;              /* absolute CF time index of column 0 */
    int64_t len;             /* valid columns */
    int64_t t_next;          /* next origin time index to stack */
    float *x, *cfch, *mval, *coh;
    int32_t *midx;

    /* trigger */
    int W, U;
    float *mring, *sortbuf;
    uint8_t *mlive;
    double level;
    int in_run;
    int64_t misamp;
    struct pending pend;
    int64_t next_id;

    locate_event_fn on_event;
    void *ev_user;
    locate_coherence_fn on_coh;
    void *coh_user;
    locate_trace_fn on_trace;
    void *trace_user;
    int (*cancel)(void *user);
    void *cancel_user;
    struct locate_stats stats;
    int64_t seq;

#ifdef SEISLIVE_CUDA
    struct {
        float *x, *cfch, *cf[2], *mval, *coh;
        int32_t *midx;
        int cur;
        double *state[2], *coef[2];
        int *rowch;
        uint16_t *delay;
        struct stack_cuda *stack;
    } g;
#endif
};

int locate_engine_create(struct locate_engine **out, const struct locate_params *p, const struct sl_device *dev,
                         const struct locate_stations *stations, struct tt_table *tt)
{
    *out = NULL;
    struct locate_engine *e = calloc(1, sizeof *e);
    if (!e) {
        tt_free(tt);
        return err_set(-ENOMEM, "locate: out of memory");
    }
    e->tt = *tt;
    memset(tt, 0, sizeof *tt);
    e->p = *p;
    e->dev = *dev;
#ifdef SEISLIVE_CUDA
    e->gpu = dev->kind == SL_DEVICE_CUDA;
#else
    if (dev->kind == SL_DEVICE_CUDA) {
        locate_engine_destroy(e);
        return err_set(-ENODEV, "locate: this build has no CUDA backend");
    }
#endif
    if (stations->n != e->tt.nsta || stations->n <= 0) {
        int n = stations->n;
        locate_engine_destroy(e);
        return err_set(-EINVAL, "locate: %d stations for a travel-time table of %d", n, e->tt.nsta);
    }
    e->sta = malloc((size_t)stations->n * sizeof *e->sta);
    if (!e->sta) {
        locate_engine_destroy(e);
        return err_set(-ENOMEM, "locate: out of memory");
    }
    memcpy(e->sta, stations->st, (size_t)stations->n * sizeof *e->sta);
    e->geo = stations->geo;
    e->nrow = e->tt.nsta * e->tt.nphase;
    e->nj = e->tt.nj;
    e->nj_pad = stack_nj_pad(e->nj);
    e->T0 = e->tt.tmin < 0 ? e->tt.tmin : 0.0;
    log_info("locate: %d stations x %d phases, %zu trial points (%d x %d x %d), travel times %.3f..%.3f s",
             e->tt.nsta, e->tt.nphase, e->nj, e->tt.grid.n[0], e->tt.grid.n[1], e->tt.grid.n[2],
             e->tt.tmin, e->tt.tmax);
    *out = e;
    return 0;
}

void locate_engine_on_event(struct locate_engine *e, locate_event_fn fn, void *user)
{
    e->on_event = fn;
    e->ev_user = user;
}

void locate_engine_on_coherence(struct locate_engine *e, locate_coherence_fn fn, void *user)
{
    e->on_coh = fn;
    e->coh_user = user;
}

void locate_engine_on_trace(struct locate_engine *e, locate_trace_fn fn, void *user)
{
    e->on_trace = fn;
    e->trace_user = user;
}

void locate_engine_set_cancel(struct locate_engine *e, int (*cancel)(void *user), void *user)
{
    e->cancel = cancel;
    e->cancel_user = user;
}

/* ---- channel mapping ----------------------------------------------------------------- */

static int comp_role(const char *cha)
{
    size_t n = strlen(cha);
    char c = n ? cha[n - 1] : 0;
    if (c == 'Z' || c == 'z' || c == '3')
        return 0;
    if (c == 'N' || c == 'E' || c == '1' || c == '2' || c == 'n' || c == 'e')
        return 1;
    return 2;
}

/* Index of the station called NET.STA (a station without a network, or a channel
 * without one, matches any network), or -1. */
static int find_station(const struct locate_engine *e, const char *net, const char *sta)
{
    for (int i = 0; i < e->tt.nsta; i++) {
        const struct tt_station *s = &e->sta[i];
        if (strcmp(s->name, sta) == 0 && (!s->net[0] || !net || !net[0] || strcmp(s->net, net) == 0))
            return i;
    }
    return -1;
}

/* The characteristic function (0 or 1) of row R. */
static int row_set(const struct locate_engine *e, int r)
{
    return e->set_of_phase[e->tt.phase[r % e->tt.nphase]];
}

static int map_channels(struct locate_engine *e)
{
    int ns = e->tt.nsta;
    int *lists = malloc((size_t)ns * 3 * CF_MAXC * sizeof(int));
    int *counts = calloc((size_t)ns * 3, sizeof(int));
    int *use = calloc((size_t)e->nch, sizeof(int));
    if (!lists || !counts || !use) {
        free(lists);
        free(counts);
        free(use);
        return err_set(-ENOMEM, "locate: out of memory");
    }
    for (int c = 0; c < e->nch; c++) {
        const struct locate_channel *ch = &e->chan[c];
        /* A channel without a station name (f32 blocks sent without "channels") is matched
         * by position: channel c is station c of the station file, one channel per station,
         * its component unknown (used for every phase). */
        int unnamed = ch->sta[0] == '\0';
        int s = unnamed ? (c < ns ? c : -1) : find_station(e, ch->net, ch->sta);
        if (s < 0) {
            if (e->stats.unmatched_channels++ < 10) {
                if (unnamed)
                    log_warn("channel %d (unnamed, matched by position): the station file has only %d "
                             "stations; ignored", c, ns);
                else
                    log_warn("channel %s.%s.%s.%s: station not in the station file; ignored", ch->net,
                             ch->sta, ch->loc, ch->cha);
            }
            continue;
        }
        int role = comp_role(ch->cha), *cnt = &counts[s * 3 + role];
        if (*cnt >= CF_MAXC) {
            log_warn("channel %s.%s.%s.%s: more than %d channels of one kind at a station; ignored", ch->net,
                     ch->sta, ch->loc, ch->cha, CF_MAXC);
            e->stats.unmatched_channels++;
            continue;
        }
        lists[(s * 3 + role) * CF_MAXC + (*cnt)++] = c;
    }
    if (e->stats.unmatched_channels > 10)
        log_warn("%d channels in all have no station and are ignored", e->stats.unmatched_channels);
    e->rowch = malloc((size_t)e->nrow * CF_MAXC * sizeof(int));
    if (!e->rowch) {
        free(lists);
        free(counts);
        free(use);
        return err_set(-ENOMEM, "locate: out of memory");
    }
    /* P: verticals, else other, else horizontals; S: horizontals, else other, else vertical. */
    static const int pref[2][3] = {{0, 2, 1}, {1, 2, 0}};
    for (int s = 0; s < ns; s++)
        for (int p = 0; p < e->tt.nphase; p++) {
            int r = s * e->tt.nphase + p, ph = e->tt.phase[p], role = -1;
            for (int k = 0; k < 3 && role < 0; k++)
                if (counts[s * 3 + pref[ph][k]])
                    role = pref[ph][k];
            for (int c = 0; c < CF_MAXC; c++)
                e->rowch[r * CF_MAXC + c] =
                    role >= 0 && c < counts[s * 3 + role] ? lists[(s * 3 + role) * CF_MAXC + c] : -1;
            if (role < 0) {
                e->stats.dead_rows++;
                log_warn("station %s: no channel for phase %c; left out of the stack", e->sta[s].name,
                         "PS"[ph]);
            } else {
                e->nrow_mapped++;
            }
        }
    /* compact the used channels into units, per function (one function: the used
     * channels in their order, as before there were two) */
    size_t nsc = (size_t)(e->nch ? e->nch : 1) * (size_t)e->nset;
    free(use);
    use = calloc(nsc, sizeof(int));
    e->used_ch = malloc(nsc * sizeof(int));
    int *uidx = malloc(nsc * sizeof(int));
    if (!use || !e->used_ch || !uidx) {
        free(lists);
        free(counts);
        free(use);
        free(uidx);
        return err_set(-ENOMEM, "locate: out of memory");
    }
    for (int r = 0; r < e->nrow * CF_MAXC; r++)
        if (e->rowch[r] >= 0)
            use[(size_t)row_set(e, r / CF_MAXC) * e->nch + e->rowch[r]] = 1;
    for (int k = 0; k < e->nset; k++)
        for (int c = 0; c < e->nch; c++)
            if (use[(size_t)k * e->nch + c]) {
                uidx[(size_t)k * e->nch + c] = e->nused;
                e->used_ch[e->nused++] = c;
                e->nunit_set[k]++;
            }
    for (int r = 0; r < e->nrow * CF_MAXC; r++)
        if (e->rowch[r] >= 0)
            e->rowch[r] = uidx[(size_t)row_set(e, r / CF_MAXC) * e->nch + e->rowch[r]];
    free(lists);
    free(counts);
    free(use);
    free(uidx);
    e->min_rows = e->nrow_mapped > 1 ? (e->nrow_mapped + 1) / 2 : 1;
    if (e->nrow_mapped == 0)
        return err_set(-EINVAL, "locate: none of the %d channels belongs to a station of the station file",
                       e->nch);
    if (e->nset == 1)
        log_info("locate: %d channels, %d used, %d of %d station-phase rows have data", e->nch, e->nused,
                 e->nrow_mapped, e->nrow);
    else
        log_info("locate: %d channels, %d P and %d S characteristic functions, %d of %d station-phase rows have "
                 "data", e->nch, e->nunit_set[0], e->nunit_set[1], e->nrow_mapped, e->nrow);
    return 0;
}

/* ---- stream start ---------------------------------------------------------------------- */

static void fill_nan(float *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = NAN;
}

/* CELL[phase]: the largest travel-time change between neighbouring trial points (along
 * an axis), over the rows of each phase -- the derived CF defaults' grid resolution. */
static void cell_times(const struct locate_engine *e, double cell[2])
{
    const struct tt_grid *g = &e->tt.grid;
    size_t strides[3] = {1, (size_t)g->n[0], (size_t)g->n[0] * g->n[1]};
    cell[0] = cell[1] = 0.0;
    for (int r = 0; r < e->nrow; r++) {
        const float *t = e->tt.t + (size_t)r * e->nj;
        double m = 0.0;
        for (size_t j = 0; j < e->nj; j++) {
            size_t ix = j % (size_t)g->n[0], iy = j / (size_t)g->n[0] % (size_t)g->n[1];
            size_t iz = j / strides[2];
            size_t at[3] = {ix, iy, iz};
            for (int a = 0; a < 3; a++)
                if (at[a] + 1 < (size_t)g->n[a])
                    m = fmax(m, fabs((double)t[j + strides[a]] - (double)t[j]));
        }
        double *c = &cell[e->tt.phase[r % e->tt.nphase]];
        *c = fmax(*c, m);
    }
}

static size_t state_bytes(const struct locate_engine *e, int k)
{
    return (size_t)(e->nunit_set[k] ? e->nunit_set[k] : 1) * cf_state_len(&e->cfp[k]) * sizeof(double);
}

static void log_function(const char *what, const struct cf_spec *s)
{
    log_info("locate: %s characteristic function: band %g-%g Hz, sta %g s, lta %g s, kurtosis window %g s, %s scale",
             what, s->band[0], s->band[1], s->sta, s->lta, s->kurtosis_window, s->scale == 1 ? "log" : "linear");
}

/* The characteristic functions: the values not set derived (cf_spec_derive, CELL: each
 * phase's largest travel-time change over a cell), and one function or two -- two only
 * when P and S are both stacked and their functions differ. */
static int setup_functions(struct locate_engine *e, const double cell[2])
{
    int has[2] = {0, 0};
    for (int p = 0; p < e->tt.nphase; p++)
        has[e->tt.phase[p]] = 1;
    struct cf_spec sp[2] = {e->p.cf, e->p.cf_per_phase ? e->p.cf_s : e->p.cf};
    if (e->p.cf_per_phase) {
        cf_spec_derive(&sp[0], e->dt, cell[0]);
        cf_spec_derive(&sp[1], e->dt, cell[1]);
    } else {
        cf_spec_derive(&sp[0], e->dt, fmax(cell[0], cell[1]));
        sp[1] = sp[0];
    }
    int differ = sp[0].kind != sp[1].kind || sp[0].sta != sp[1].sta || sp[0].lta != sp[1].lta ||
                 sp[0].kurtosis_window != sp[1].kurtosis_window || sp[0].band[0] != sp[1].band[0] ||
                 sp[0].band[1] != sp[1].band[1] || sp[0].scale != sp[1].scale;
    e->nset = has[0] && has[1] && differ ? 2 : 1;
    e->set_of_phase[0] = 0;
    e->set_of_phase[1] = e->nset - 1;
    const struct cf_spec *use[2] = {has[0] ? &sp[0] : &sp[1], &sp[1]};
    for (int k = 0; k < e->nset; k++) {
        int rc = cf_params_init(&e->cfp[k], use[k], e->dt);
        if (rc)
            return e->nset == 2 ? err_prefix(rc, "%s characteristic function", k ? "S" : "P") : rc;
        if (e->p.cf_per_phase)
            log_function(e->nset == 1 ? "P and S" : k ? "S" : "P", use[k]);
    }
    return 0;
}

static int start_stream(struct locate_engine *e, const struct locate_block *b)
{
    e->dt = b->dt;
    e->t0_ns = b->t0_ns;
    e->nch = b->nrec;
    e->chan = malloc((size_t)b->nrec * sizeof *e->chan);
    if (!e->chan)
        return err_set(-ENOMEM, "locate: out of memory");
    memcpy(e->chan, b->chan, (size_t)b->nrec * sizeof *e->chan);
    /* time search of the refinement: the largest travel-time change over one cell (a
     * sample of the neighbours, as it always was) */
    double step = 0;
    const struct tt_grid *tg = &e->tt.grid;
    size_t strides[3] = {1, (size_t)tg->n[0], (size_t)tg->n[0] * tg->n[1]};
    for (int r = 0; r < e->nrow; r++)
        for (int a = 0; a < 3; a++)
            if (tg->n[a] > 1)
                for (size_t j = 0; j + strides[a] < e->nj; j += strides[a] * 7 + 1)
                    step = fmax(step, fabs(e->tt.t[(size_t)r * e->nj + j + strides[a]] - e->tt.t[(size_t)r * e->nj + j]));
    double cell[2];
    cell_times(e, cell);
    int rc = setup_functions(e, cell);
    if (rc)
        return rc;
    rc = map_channels(e);
    if (rc)
        return rc;
    e->delay = calloc((size_t)e->nrow * e->nj_pad, sizeof(uint16_t));
    e->roff = calloc((size_t)e->nrow, sizeof(int));
    if (!e->delay || !e->roff)
        return err_set(-ENOMEM, "locate: out of memory for %zu MiB of delays",
                       ((size_t)e->nrow * e->nj_pad * 2) >> 20);
    int dmin = e->cfp[0].delay, roff_max = 0;
    for (int k = 1; k < e->nset; k++)
        dmin = e->cfp[k].delay < dmin ? e->cfp[k].delay : dmin;
    e->dmin = dmin;
    for (int r = 0; r < e->nrow; r++) {
        e->roff[r] = e->cfp[row_set(e, r)].delay - dmin;
        roff_max = e->roff[r] > roff_max ? e->roff[r] : roff_max;
    }
    double dmax = (e->tt.tmax - e->T0) / e->dt + roff_max;
    if (dmax > 65000.0)
        return err_set(-EINVAL, "locate: travel times up to %.3f s are %.0f samples at dt = %g s; at most 65000 "
                       "(use a smaller grid or a longer dt)", e->tt.tmax - e->T0, dmax, e->dt);
    e->max_delay = 0;
    for (int r = 0; r < e->nrow; r++)
        for (size_t j = 0; j < e->nj; j++) {
            int d = (int)lround((e->tt.t[(size_t)r * e->nj + j] - e->T0) / e->dt) + e->roff[r];
            e->delay[(size_t)r * e->nj_pad + j] = (uint16_t)d;
            e->max_delay = d > e->max_delay ? d : e->max_delay;
        }
    e->refine_t = (int)fmin(256.0, ceil(step / e->dt) + 2);
    e->chunk = e->p.block_samples;
    /* "the largest travel time plus a block": beyond it no stacked time sees CF from both
     * sides of a jump (the refinement's window and one chunk of margin) */
    e->restart_limit = (double)e->max_delay + 2.0 * e->refine_t + e->chunk;
    e->cap = (size_t)(e->max_delay + 2 * e->refine_t + e->chunk + 2 * STACK_T_TILE + 16 + 31) / 32 * 32;
    size_t nu = (size_t)(e->nused ? e->nused : 1);
    for (int k = 0; k < e->nset; k++)
        if (!(e->state[k] = calloc((size_t)(e->nunit_set[k] ? e->nunit_set[k] : 1) * cf_state_len(&e->cfp[k]),
                                   sizeof(double))))
            return err_set(-ENOMEM, "locate: out of memory");
    e->cfh = malloc((size_t)e->nrow * e->cap * sizeof(float));
    e->x = malloc(nu * e->chunk * sizeof(float));
    e->cfch = malloc(nu * e->chunk * sizeof(float));
    e->mval = malloc(e->cap * sizeof(float));
    e->midx = malloc(e->cap * sizeof(int32_t));
    e->coh = malloc(e->nj * sizeof(float));
    e->W = (int)fmax(1.0, round(e->p.mad_window / e->dt));
    e->U = e->W / 20 > 0 ? e->W / 20 : 1;
    e->mring = malloc((size_t)e->W * sizeof(float));
    e->sortbuf = malloc((size_t)e->W * sizeof(float));
    e->mlive = calloc((size_t)e->W, 1);
    if (!e->cfh || !e->x || !e->cfch || !e->mval || !e->midx || !e->coh || !e->mring ||
        !e->sortbuf || !e->mlive)
        return err_set(-ENOMEM, "locate: out of memory");
    fill_nan(e->cfh, (size_t)e->nrow * e->cap);
    e->a0 = -dmin;
    e->len = 0;
    e->t_next = e->a0;
    e->level = e->p.trigger == LOCATE_TRIGGER_STATIC ? e->p.threshold : INFINITY;
    e->misamp = (int64_t)llround(e->p.min_interval / e->dt);
#ifdef SEISLIVE_CUDA
    if (e->gpu) {
        const struct sl_device *d = &e->dev;
        size_t pitch = e->cap * sizeof(float);
        if ((rc = stack_cuda_create(&e->g.stack, &e->p.stack)) ||
            (rc = dev_alloc(d, nu * e->chunk * sizeof(float), (void **)&e->g.x)) ||
            (rc = dev_alloc(d, nu * e->chunk * sizeof(float), (void **)&e->g.cfch)) ||
            (rc = dev_alloc(d, (size_t)e->nrow * pitch, (void **)&e->g.cf[0])) ||
            (rc = dev_alloc(d, (size_t)e->nrow * pitch, (void **)&e->g.cf[1])) ||
            (rc = dev_alloc(d, e->cap * sizeof(float), (void **)&e->g.mval)) ||
            (rc = dev_alloc(d, e->cap * sizeof(int32_t), (void **)&e->g.midx)) ||
            (rc = dev_alloc(d, e->nj * sizeof(float), (void **)&e->g.coh)) ||
            (rc = dev_alloc(d, (size_t)e->nrow * CF_MAXC * sizeof(int), (void **)&e->g.rowch)) ||
            (rc = dev_alloc(d, (size_t)e->nrow * e->nj_pad * sizeof(uint16_t), (void **)&e->g.delay)))
            return err_prefix(rc, "locate: device memory");
        for (int k = 0; k < e->nset; k++) {
            size_t sb = state_bytes(e, k);
            if ((rc = dev_alloc(d, sb, (void **)&e->g.state[k])) ||
                (rc = dev_alloc(d, (size_t)e->cfp[k].ncoef * sizeof(double), (void **)&e->g.coef[k])))
                return err_prefix(rc, "locate: device memory");
            if ((rc = dev_copy(d, e->g.state[k], e->state[k], sb, DEV_H2D, NULL)) ||
                (rc = dev_copy(d, e->g.coef[k], e->cfp[k].coef, (size_t)e->cfp[k].ncoef * sizeof(double), DEV_H2D,
                               NULL)))
                return rc;
        }
        if ((rc = dev_copy(d, e->g.rowch, e->rowch, (size_t)e->nrow * CF_MAXC * sizeof(int), DEV_H2D, NULL)) ||
            (rc = dev_copy(d, e->g.delay, e->delay, (size_t)e->nrow * e->nj_pad * sizeof(uint16_t), DEV_H2D,
                           NULL)) ||
            (rc = dev_fill_ff_2d(d, e->g.cf[0], pitch, pitch, (size_t)e->nrow)))
            return rc;
    }
#endif
    log_info("locate: dt %g s, CF delay %d samples, warm-up %d samples, max delay %d samples, "
             "buffer %zu samples x %d rows",
             e->dt, e->cfp[0].delay, e->cfp[0].warmup, e->max_delay, e->cap, e->nrow);
    if (e->nset == 2)
        log_info("locate: S characteristic function: CF delay %d samples, warm-up %d samples", e->cfp[1].delay,
                 e->cfp[1].warmup);
    e->started = 1;
    return 0;
}

/* ---- refinement ----------------------------------------------------------------------- */


/* The same at a fractional grid position C (cells), trilinear in the table. */
static void delays_at_pos(const struct locate_engine *e, const double c[3], double *d)
{
    const struct tt_grid *g = &e->tt.grid;
    int i0[3];
    double w[3];
    for (int a = 0; a < 3; a++) {
        double u = c[a] < 0 ? 0 : c[a] > g->n[a] - 1 ? g->n[a] - 1 : c[a];
        i0[a] = g->n[a] > 1 ? (int)fmin(floor(u), g->n[a] - 2) : 0;
        w[a] = g->n[a] > 1 ? u - i0[a] : 0.0;
    }
    size_t sx = 1, sy = (size_t)g->n[0], sz = (size_t)g->n[0] * g->n[1];
    for (int r = 0; r < e->nrow; r++) {
        const float *row = e->tt.t + (size_t)r * e->nj;
        double v = 0;
        for (int k = 0; k < 8; k++) {
            int dx = k & 1, dy = (k >> 1) & 1, dz = k >> 2;
            double wt = (dx ? w[0] : 1 - w[0]) * (dy ? w[1] : 1 - w[1]) * (dz ? w[2] : 1 - w[2]);
            if (wt != 0)
                v += wt * row[(i0[0] + dx) * sx + (i0[1] + dy) * sy + (i0[2] + dz) * sz];
        }
        d[r] = (v - e->T0) / e->dt + e->roff[r];
    }
}

/* s(t) from the kept CF for per-row fractional delays D (linear interpolation), without
 * the rows where SKIP (NULL: none) is set. */
static double stack_exact(const struct locate_engine *e, const double *d, double t, const uint8_t *skip, int *used)
{
    double sum = 0.0;
    int n = 0;
    /* weights from the time's fraction only, so the result does not depend on where the
     * buffer starts (that is, on how the stream was cut) */
    double ti = floor(t), ft = t - ti;
    int64_t base = (int64_t)ti - e->a0;
    for (int r = 0; r < e->nrow; r++) {
        if (skip && skip[r])
            continue;
        double f = ft + d[r], fl = floor(f);
        int64_t i = base + (int64_t)fl;
        if (i < 0 || i + 1 >= e->len)
            continue;
        float v0 = e->cfh[(size_t)r * e->cap + i], v1 = e->cfh[(size_t)r * e->cap + i + 1];
        if (!(v0 == v0) || !(v1 == v1))
            continue;
        sum += v0 + (f - fl) * (v1 - v0);
        n++;
    }
    if (used)
        *used = n;
    if (e->p.normalize == STACK_NORM_NONE)
        return sum;
    if (!n)
        return 0.0;
    return e->p.normalize == STACK_NORM_GEOMETRIC ? exp(sum / n) : sum / n;
}


/* Peak of three equally spaced values (index -1, 0, +1): offset and 1-sigma width. */
static void fit3(double sm, double s0, double sp, double *delta, double *sigma)
{
    *delta = 0.0;
    *sigma = 1.0;
    if (sm > 0 && s0 > 0 && sp > 0) {
        double lm = log(sm), l0 = log(s0), lp = log(sp), den = lm - 2.0 * l0 + lp;
        if (den < 0) {
            *delta = 0.5 * (lm - lp) / den;
            *sigma = sqrt(-1.0 / den);
        }
    } else {
        double den = sm - 2.0 * s0 + sp;
        if (den < 0 && s0 > 0) {
            *delta = 0.5 * (sm - sp) / den;
            *sigma = sqrt(-s0 / den);
        }
    }
    if (*delta > 0.5)
        *delta = 0.5;
    if (*delta < -0.5)
        *delta = -0.5;
}

/* The stack at position Q maximized over origin times within +-R samples of TC
 * (3-point fit around the best sample): returns the peak value, its time in *TBEST. */
static double profile(const struct locate_engine *e, const double q[3], double tc, int R, const uint8_t *skip,
                      double *d, double *sv, double *tbest)
{
    delays_at_pos(e, q, d);
    int64_t t0 = (int64_t)llround(tc);
    for (int k = -R; k <= R; k++)
        sv[k + R] = stack_exact(e, d, (double)(t0 + k), skip, NULL);
    /* the first of the largest (all values computed before comparing: comparing
     * against sv[R] while filling read it before it was written) */
    int best = 0;
    for (int k = 1; k <= 2 * R; k++)
        if (sv[k] > sv[best])
            best = k;
    double off = 0.0, sig = 1.0, peak = sv[best];
    if (best > 0 && best < 2 * R) {
        fit3(sv[best - 1], sv[best], sv[best + 1], &off, &sig);
        double den = sv[best - 1] - 2.0 * sv[best] + sv[best + 1];
        if (den < 0)
            peak = sv[best] - (sv[best - 1] - sv[best + 1]) * (sv[best - 1] - sv[best + 1]) / (8.0 * den);
    }
    *tbest = (double)(t0 + best - R) + off;
    return peak;
}

/* Refinement.  On a grid, origin time and position trade off (a deeper node fits with
 * an earlier origin), so each coordinate is fitted on the stack's profile, the maximum
 * over origin times within +-refine_t samples of the node's peak time (a fixed window,
 * so the CF it reads is there whatever the cut): a 3-point fit at +-1/2 cell around the current
 * position (a full step on when the peak lies beyond), kept within one cell of the
 * best node C, for x, y, z in turn, ROUNDS rounds from P;
 * travel times are interpolated (trilinear) in the table.  The origin time (samples) is
 * the peak of the profile at the final position, in *TR; the widths of the last fits
 * (cells) in WIDTH when not NULL.  Rows where SKIP is set are left out. */
static void refine_pos(const struct locate_engine *e, int64_t t, const int c[3], int rounds, const uint8_t *skip,
                       double *d, double *sv, double p[3], double *tr, double *width)
{
    const struct tt_grid *g = &e->tt.grid;
    int R = e->refine_t;
    double tk;
    *tr = (double)t;
    for (int round = 0; round < rounds; round++)
        for (int a = 0; a < 3; a++) {
            if (g->n[a] < 2)
                continue;
            double q[3] = {p[0], p[1], p[2]}, s3[3];
            for (int k = -1; k <= 1; k++) {
                q[a] = p[a] + 0.5 * k;
                s3[k + 1] = profile(e, q, (double)t, R, skip, d, sv, &tk);
            }
            double delta, sigma;
            fit3(s3[0], s3[1], s3[2], &delta, &sigma);
            if (fabs(delta) >= 0.5) /* the peak is beyond the samples: step on by one */
                delta = delta > 0 ? 1.0 : -1.0;
            /* the middle is not the largest and the values are not concave (the fit gives
             * up, delta 0): climb towards the larger side all the same, or the position
             * stays on a slope, pinned to a node */
            if (s3[1] < fmax(s3[0], s3[2]) && fabs(delta) < 0.5)
                delta = s3[2] > s3[0] ? 1.0 : -1.0;
            p[a] += 0.5 * delta;
            if (width)
                width[a] = 0.5 * sigma;
            double lo = fmax(0.0, c[a] - 1.0), hi = fmin(g->n[a] - 1.0, c[a] + 1.0);
            p[a] = p[a] < lo ? lo : p[a] > hi ? hi : p[a];
            profile(e, p, (double)t, R, skip, d, sv, tr);
        }
}

/* Station groups of the jackknife (see refine). */
#define JACKKNIFE_GROUPS 12
#define JACKKNIFE_ROUNDS 3
#define RECENTRE 3

/* The location: refine_pos from the grid node J at stack time T, into EV (sigmas = the
 * peak widths until jackknife() has run) and RS.
 *
 * The uncertainty is a delete-a-group jackknife over the stations (jackknife below):
 * the stations that have data are dealt round-robin into G = min(12, their number)
 * groups, the event is refined again without each group in turn (from the full
 * solution, 3 rounds), and var = (G-1)/G sum_g (x_g - mean_g x_g)^2 per coordinate and
 * for the origin time.  The noise (and any station-to-station misfit) moves the
 * estimate as much as leaving stations out does, which is what the jackknife measures;
 * the width of the coherence peak does not (it is set by the pulse length and the array
 * aperture, 10-30 times the errors).  Fewer than 3 stations with data: the peak widths. */
static void refine(const struct locate_engine *e, int64_t t, int32_t j, float val, struct locate_event *ev,
                   struct refined *rs)
{
    const struct tt_grid *g = &e->tt.grid;
    int nx = g->n[0], ny = g->n[1], R = e->refine_t;
    const int node[3] = {j % nx, (j / nx) % ny, j / (nx * ny)};
    int *c = rs->c;
    double *p = rs->p;
    double *d = malloc((size_t)e->nrow * sizeof(double));
    double *sv = malloc((size_t)(2 * R + 1) * sizeof(double));
    memset(ev, 0, sizeof *ev);
    memset(rs, 0, sizeof *rs);
    rs->done = 1; /* nothing to start a jackknife from unless refined below */
    if (!d || !sv) {
        free(d);
        free(sv);
        return;
    }
    double width[3] = {1, 1, 1}, tr, tsig = 1.0;
    for (int a = 0; a < 3; a++)
        p[a] = c[a] = node[a];
    /* The coherence is flat along the depth / origin-time trade-off, so the node that wins
     * the grid search at one stack time can lie more than a cell from the refined peak:
     * a position that ends on the one-cell bound starts again about the node it reached,
     * up to RECENTRE times (the CF kept covers the origin times of +-refine_t samples
     * only, so the search cannot wander far). */
    for (int pass = 0;; pass++) {
        refine_pos(e, t, c, 6, NULL, d, sv, p, &tr, width);
        int moved = 0;
        for (int a = 0; a < 3; a++) {
            rs->pinned[a] = g->n[a] > 1 && fabs(p[a] - c[a]) > 1.0 - 1e-9 && p[a] > 0.0 && p[a] < g->n[a] - 1.0;
            if (rs->pinned[a] && pass < RECENTRE) {
                c[a] = (int)lround(p[a]);
                moved = 1;
            }
        }
        if (!moved)
            break;
    }
    /* width in time at the final position */
    {
        double sm, s0, sp;
        delays_at_pos(e, p, d);
        sm = stack_exact(e, d, tr - 1.0, NULL, NULL);
        s0 = stack_exact(e, d, tr, NULL, NULL);
        sp = stack_exact(e, d, tr + 1.0, NULL, NULL);
        double off;
        fit3(sm, s0, sp, &off, &tsig);
    }
    delays_at_pos(e, p, d);
    stack_exact(e, d, tr, NULL, &ev->rows_used);
    free(d);
    free(sv);
    ev->sample = t;
    ev->origin_ns = e->t0_ns + (int64_t)llround((tr * e->dt + e->T0) * 1e9);
    ev->x = g->o[0] + p[0] * g->d[0];
    ev->y = g->o[1] + p[1] * g->d[1];
    ev->z = g->o[2] + p[2] * g->d[2];
    ev->wx = ev->sx = width[0] * g->d[0];
    ev->wy = ev->sy = width[1] * g->d[1];
    ev->wz = ev->sz = width[2] * g->d[2];
    ev->wt = ev->st = tsig * e->dt;
    ev->coalescence = val;
    ev->ix = node[0];
    ev->iy = node[1];
    ev->iz = node[2];
    if (e->geo.to_geographic)
        e->geo.to_geographic(&e->geo, ev->x, ev->y, ev->z, &ev->lat, &ev->lon, &ev->elev);
    else
        ev->lat = ev->lon = ev->elev = NAN;
    rs->done = 0;
}

/* The jackknife sigmas of the peak refined at stack time T (see refine).  Run once a
 * peak has held for a sample rather than at every new maximum of a rising trigger: it
 * costs G refinements.  The CF it reads is still kept then (shift_buffer keeps
 * refine_t + 4 samples before the next time to stack). */
static void jackknife(const struct locate_engine *e, int64_t t, struct refined *rs, struct locate_event *ev)
{
    if (rs->done)
        return;
    rs->done = 1;
    const struct tt_grid *g = &e->tt.grid;
    int R = e->refine_t, nph = e->tt.nphase;
    double *d = malloc((size_t)e->nrow * sizeof(double));
    double *sv = malloc((size_t)(2 * R + 1) * sizeof(double));
    uint8_t *skip = malloc((size_t)e->nrow);
    int *grp = malloc((size_t)e->tt.nsta * sizeof(int));
    if (!d || !sv || !skip || !grp) {
        log_warn("event at sample %lld: out of memory for the jackknife; its sigmas are the peak widths",
                 (long long)t);
        free(d);
        free(sv);
        free(skip);
        free(grp);
        return;
    }
    /* stations with data (a row whose channels exist) */
    int nsd = 0;
    for (int s = 0; s < e->tt.nsta; s++) {
        int has = 0;
        for (int k = 0; k < nph; k++)
            for (int ch = 0; ch < CF_MAXC; ch++)
                has |= e->rowch[(size_t)(s * nph + k) * CF_MAXC + ch] >= 0;
        grp[s] = has ? nsd++ : -1;
    }
    int G = nsd < JACKKNIFE_GROUPS ? nsd : JACKKNIFE_GROUPS;
    if (G >= 3) {
        double sum[4] = {0}, sum2[4] = {0};
        for (int k = 0; k < G; k++) {
            for (int s = 0; s < e->tt.nsta; s++)
                for (int ph = 0; ph < nph; ph++)
                    skip[s * nph + ph] = grp[s] >= 0 && grp[s] % G == k;
            double q[3] = {rs->p[0], rs->p[1], rs->p[2]}, tq;
            refine_pos(e, t, rs->c, JACKKNIFE_ROUNDS, skip, d, sv, q, &tq, NULL);
            double v[4] = {q[0], q[1], q[2], tq};
            for (int a = 0; a < 4; a++) {
                sum[a] += v[a];
                sum2[a] += v[a] * v[a];
            }
        }
        double var[4];
        for (int a = 0; a < 4; a++) {
            double m = sum[a] / G;
            var[a] = fmax(0.0, (sum2[a] - G * m * m) * (G - 1.0) / G);
        }
        /* an axis still on the bound is not resolved locally: its peak width stands */
        double *sig[3] = {&ev->sx, &ev->sy, &ev->sz};
        for (int a = 0; a < 3; a++)
            if (g->n[a] > 1 && !rs->pinned[a])
                *sig[a] = sqrt(var[a]) * g->d[a];
        ev->st = sqrt(var[3]) * e->dt;
    }
    free(d);
    free(sv);
    free(skip);
    free(grp);
}

/* ---- trigger --------------------------------------------------------------------------- */

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void update_level(struct locate_engine *e)
{
    int n = 0;
    for (int i = 0; i < e->W; i++)
        if (e->mlive[i])
            e->sortbuf[n++] = e->mring[i];
    if (n < e->U) {
        e->level = INFINITY;
        return;
    }
    qsort(e->sortbuf, (size_t)n, sizeof(float), cmp_float);
    double med = n % 2 ? e->sortbuf[n / 2] : 0.5 * ((double)e->sortbuf[n / 2 - 1] + e->sortbuf[n / 2]);
    for (int i = 0; i < n; i++)
        e->sortbuf[i] = (float)fabs(e->sortbuf[i] - med);
    qsort(e->sortbuf, (size_t)n, sizeof(float), cmp_float);
    double mad = n % 2 ? e->sortbuf[n / 2] : 0.5 * ((double)e->sortbuf[n / 2 - 1] + e->sortbuf[n / 2]);
    e->level = mad > 0 ? med + e->p.threshold * mad : INFINITY;
}

static void emit(struct locate_engine *e)
{
    jackknife(e, e->pend.t, &e->pend.rs, &e->pend.ev);
    struct locate_event ev = e->pend.ev;
    ev.id = e->next_id++;
    e->stats.events++;
    log_info("event %lld: t = %lld ns +- %.4f s, (%.1f, %.1f, %.1f) m +- (%.1f, %.1f, %.1f) (peak widths %.0f, %.0f, "
             "%.0f m), coalescence %.4g (level %.4g)",
             (long long)ev.id, (long long)ev.origin_ns, ev.st, ev.x, ev.y, ev.z, ev.sx, ev.sy, ev.sz, ev.wx, ev.wy,
             ev.wz, ev.coalescence, ev.level);
    if (e->on_event)
        e->on_event(&ev, e->ev_user);
    e->pend.valid = 0;
}

static void set_peak(struct locate_engine *e, int64_t t, float v, int32_t j)
{
    e->pend.valid = 1;
    e->pend.t = t;
    e->pend.val = v;
    e->pend.j = j;
    refine(e, t, j, v, &e->pend.ev, &e->pend.rs);
    e->pend.ev.level = e->level;
}

static void scan_time(struct locate_engine *e, int64_t t, float v, int32_t j)
{
    int used = 0;
    if (j >= 0) {
        int64_t off = t - e->a0;
        for (int r = 0; r < e->nrow; r++) {
            int64_t i = off + e->delay[(size_t)r * e->nj_pad + (size_t)j];
            if (i < e->len) {
                float c = e->cfh[(size_t)r * e->cap + i];
                used += c == c;
            }
        }
    }
    int live = used >= e->min_rows;
    if (e->p.trigger == LOCATE_TRIGGER_MAD) {
        int64_t k = ((t % e->W) + e->W) % e->W;
        e->mring[k] = v;
        e->mlive[k] = (uint8_t)live;
        if (((t % e->U) + e->U) % e->U == 0)
            update_level(e);
    }
    int above = live && v > e->level;
    if (e->on_trace)
        e->on_trace(t, v, j, live, e->level, e->trace_user);
    if (above) {
        if (e->pend.valid && (e->in_run || t - e->pend.t <= e->misamp)) {
            if (v > e->pend.val)
                set_peak(e, t, v, j);
        } else {
            if (e->pend.valid)
                emit(e);
            set_peak(e, t, v, j);
        }
        e->in_run = 1;
    } else {
        e->in_run = 0;
        if (e->pend.valid && t - e->pend.t > e->misamp)
            emit(e);
    }
    /* the peak held for this sample: its uncertainty now, while its CF is kept */
    if (e->pend.valid && e->pend.t != t)
        jackknife(e, e->pend.t, &e->pend.rs, &e->pend.ev);
}

/* ---- stacking -------------------------------------------------------------------------- */

static int shift_buffer(struct locate_engine *e)
{
    int64_t keep = e->t_next - (e->refine_t + 4);
    int64_t drop = keep - e->a0;
    if (drop <= 0)
        return 0;
    if (drop > e->len)
        drop = e->len;
    size_t rest = (size_t)(e->len - drop);
    for (int r = 0; r < e->nrow; r++) {
        float *row = e->cfh + (size_t)r * e->cap;
        memmove(row, row + drop, rest * sizeof(float));
        fill_nan(row + rest, e->cap - rest);
    }
#ifdef SEISLIVE_CUDA
    if (e->gpu) {
        int nxt = 1 - e->g.cur, rc;
        size_t pitch = e->cap * sizeof(float);
        if ((rc = dev_fill_ff_2d(&e->dev, e->g.cf[nxt], pitch, pitch, (size_t)e->nrow)) ||
            (rc = dev_copy_2d(&e->dev, e->g.cf[nxt], pitch, e->g.cf[e->g.cur] + drop, pitch, rest * sizeof(float),
                              (size_t)e->nrow, DEV_D2D)))
            return rc;
        e->g.cur = nxt;
    }
#endif
    e->a0 += drop;
    e->len -= drop;
    return 0;
}

/* Stack the times whose CF has arrived (FINAL: all kept): returns 1 when a final stack
 * left times for another piece, 0 when done, < 0 on error. */
static int stack_some(struct locate_engine *e, int final)
{
    int64_t end = e->a0 + e->len;
    int64_t nt = final ? end - e->t_next : end - (e->max_delay + e->refine_t + 5) - e->t_next;
    if (nt <= 0)
        return 0;
    int64_t off = e->t_next - e->a0;
    int more = 0;
    if (final) {
        /* at the end of a stream every kept time is stacked: in pieces the buffer holds
         * (one piece unless the travel times are longer than a chunk) */
        int64_t room = ((int64_t)e->cap - off - e->max_delay - 1) / STACK_T_TILE * STACK_T_TILE;
        if (room <= 0)
            return err_set(-EINVAL, "locate: internal: no room in the CF buffer of %zu samples", e->cap);
        if (room < nt) {
            nt = room;
            more = 1;
        }
    }
    if ((size_t)off + stack_cf_need((int)nt, e->max_delay) > e->cap)
        return err_set(-EINVAL, "locate: internal: CF buffer of %zu samples too small for %lld times", e->cap,
                       (long long)nt);
    struct stack_args a = {
        .nrow = e->nrow, .nj = e->nj, .nj_pad = e->nj_pad, .delay = e->delay, .max_delay = e->max_delay,
        .cf = e->cfh + off, .cf_stride = e->cap, .nt = (int)nt, .norm = e->p.normalize,
        .max_val = e->mval, .max_idx = e->midx, .coh = e->coh,
    };
    int rc;
#ifdef SEISLIVE_CUDA
    if (e->gpu) {
        a.delay = e->g.delay;
        a.cf = e->g.cf[e->g.cur] + off;
        a.max_val = e->g.mval;
        a.max_idx = e->g.midx;
        a.coh = e->g.coh;
        if ((rc = stack_run_cuda(e->g.stack, &a, NULL)) ||
            (rc = dev_copy(&e->dev, e->mval, e->g.mval, (size_t)nt * sizeof(float), DEV_D2H, NULL)) ||
            (rc = dev_copy(&e->dev, e->midx, e->g.midx, (size_t)nt * sizeof(int32_t), DEV_D2H, NULL)) ||
            (e->on_coh && (rc = dev_copy(&e->dev, e->coh, e->g.coh, e->nj * sizeof(float), DEV_D2H, NULL))))
            return rc;
    } else
#endif
    if ((rc = stack_run_cpu(&a)))
        return rc;
    if (e->on_coh)
        e->on_coh(e->coh, &e->tt.grid, e->seq++,
                  e->t0_ns + (int64_t)llround(((double)e->t_next * e->dt + e->T0) * 1e9),
                  e->t0_ns + (int64_t)llround(((double)(e->t_next + nt - 1) * e->dt + e->T0) * 1e9), e->coh_user);
    for (int64_t i = 0; i < nt; i++)
        scan_time(e, e->t_next + i, e->mval[i], e->midx[i]);
    e->t_next += nt;
    e->stats.stacked_times += nt;
    rc = shift_buffer(e);
    return rc ? rc : more;
}

static int stack_ready(struct locate_engine *e, int final)
{
    for (;;) {
        int rc = stack_some(e, final);
        if (rc <= 0)
            return rc;
    }
}

/* K samples from OFF of block B (NULL: K invalid samples, a time gap). */
/* Is sample K of channel R of B valid (struct locate_block)? */
static inline int block_valid(const struct locate_block *b, int r, int k)
{
    if (b->chan_ok && !b->chan_ok[r])
        return 0;
    size_t i = (size_t)r * (size_t)b->ns + (size_t)k;
    if (b->mask && !b->mask[i])
        return 0;
    float v = b->data[i];
    return v == v && v - v == 0.0f; /* finite */
}

static int feed_chunk(struct locate_engine *e, const struct locate_block *b, int off, int k)
{
    for (int u = 0; u < e->nused; u++) {
        float *x = e->x + (size_t)u * e->chunk;
        int r = e->used_ch[u];
        for (int i = 0; i < k; i++) {
            if (b && block_valid(b, r, off + i)) {
                x[i] = b->data[(size_t)r * (size_t)b->ns + (size_t)(off + i)];
            } else {
                x[i] = NAN;
                e->stats.invalid_samples += b != NULL;
            }
        }
    }
    float *dst = e->cfh + e->len;
    int rc;
#ifdef SEISLIVE_CUDA
    if (e->gpu) {
        float *gdst = e->g.cf[e->g.cur] + e->len;
        size_t bytes = (size_t)e->nused * e->chunk * sizeof(float);
        if ((rc = dev_copy(&e->dev, e->g.x, e->x, bytes, DEV_H2D, NULL)))
            return rc;
        for (int s = 0, u0 = 0; s < e->nset; u0 += e->nunit_set[s], s++)
            if ((rc = cf_run_cuda(&e->cfp[s], e->g.coef[s], e->nunit_set[s], k, e->g.x + (size_t)u0 * e->chunk,
                                  (size_t)e->chunk, e->g.cfch + (size_t)u0 * e->chunk, (size_t)e->chunk,
                                  e->g.state[s], NULL)))
                return rc;
        if ((rc = cf_combine_cuda(e->nrow, k, e->g.rowch, e->g.cfch, (size_t)e->chunk, gdst, e->cap,
                                  e->p.normalize == STACK_NORM_GEOMETRIC, NULL)) ||
            (rc = dev_copy_2d(&e->dev, dst, e->cap * sizeof(float), gdst, e->cap * sizeof(float),
                              (size_t)k * sizeof(float), (size_t)e->nrow, DEV_D2H)))
            return rc;
    } else
#endif
    {
        for (int s = 0, u0 = 0; s < e->nset; u0 += e->nunit_set[s], s++)
            cf_run_cpu(&e->cfp[s], e->nunit_set[s], k, e->x + (size_t)u0 * e->chunk, (size_t)e->chunk,
                       e->cfch + (size_t)u0 * e->chunk, (size_t)e->chunk, e->state[s]);
        cf_combine_cpu(e->nrow, k, e->rowch, e->cfch, (size_t)e->chunk, dst, e->cap,
                       e->p.normalize == STACK_NORM_GEOMETRIC);
    }
    (void)rc;
    e->len += k;
    e->next_n += k;
    e->stats.samples += b ? k : 0;
    e->stats.gap_samples += b ? 0 : k;
    return stack_ready(e, 0);
}

static int cancelled(const struct locate_engine *e)
{
    return e->cancel && e->cancel(e->cancel_user);
}

/* The stream state back to its start at T0_NS (channels, tables and the event count
 * kept): CF filter state zero (as calloc'd at the start), no CF kept, the trigger
 * without history. */
static int reset_stream(struct locate_engine *e, int64_t t0_ns)
{
    for (int k = 0; k < e->nset; k++)
        memset(e->state[k], 0, state_bytes(e, k));
    fill_nan(e->cfh, (size_t)e->nrow * e->cap);
    memset(e->mlive, 0, (size_t)e->W);
#ifdef SEISLIVE_CUDA
    if (e->gpu) {
        int rc;
        for (int k = 0; k < e->nset; k++)
            if ((rc = dev_copy(&e->dev, e->g.state[k], e->state[k], state_bytes(e, k), DEV_H2D, NULL)))
                return rc;
        if ((rc = dev_fill_ff_2d(&e->dev, e->g.cf[e->g.cur], e->cap * sizeof(float), e->cap * sizeof(float),
                                 (size_t)e->nrow)))
            return rc;
    }
#endif
    e->t0_ns = t0_ns;
    e->next_n = 0;
    e->a0 = -e->dmin;
    e->len = 0;
    e->t_next = e->a0;
    e->level = e->p.trigger == LOCATE_TRIGGER_STATIC ? e->p.threshold : INFINITY;
    e->in_run = 0;
    e->pend.valid = 0;
    return 0;
}

/* A jump of JUMP samples (either way) too long to bridge: no origin time can see CF from
 * both sides of it, so the times before are stacked and their event emitted as at the
 * end of a stream, and the stream starts again at B.  Feeding the gap instead would take
 * a loop over every missing sample (a year: 7.9e9 at 250 samples/s). */
static int restart_stream(struct locate_engine *e, const struct locate_block *b, double jump)
{
    int rc = stack_ready(e, 1);
    if (rc)
        return rc;
    if (e->pend.valid)
        emit(e);
    e->stats.restarts++;
    log_warn("block %lld: starts %.6g s %s the end of the previous one (more than the largest travel time + a "
             "block, %.3f s): stream restarted at t0 = %lld ns (%lld restarts so far)", (long long)b->seq,
             fabs(jump) * e->dt, jump > 0 ? "after" : "before", e->restart_limit * e->dt, (long long)b->t0_ns,
             (long long)e->stats.restarts);
    return reset_stream(e, b->t0_ns);
}

static int same_channel(const struct locate_channel *a, const struct locate_channel *b)
{
    return !strcmp(a->net, b->net) && !strcmp(a->sta, b->sta) && !strcmp(a->loc, b->loc) && !strcmp(a->cha, b->cha);
}

int locate_engine_process(struct locate_engine *e, const struct locate_block *b)
{
    if (!b || b->nrec <= 0 || b->ns < 0 || !(b->dt > 0) || (b->ns && !b->data) || !b->chan)
        return err_set(-EINVAL, "locate: block %lld: empty or malformed (nrec %d, ns %d, dt %g)",
                       b ? (long long)b->seq : -1LL, b ? b->nrec : 0, b ? b->ns : 0, b ? b->dt : 0.0);
    int rc, skip = 0;
    if (!e->started) {
        if ((rc = start_stream(e, b)))
            return rc;
    } else {
        if (fabs(b->dt - e->dt) > 1e-9 * e->dt)
            return err_set(-EINVAL, "locate: block %lld: dt %g s differs from the stream's %g s", (long long)b->seq,
                           b->dt, e->dt);
        if (b->nrec != e->nch)
            return err_set(-EINVAL, "locate: block %lld: %d channels, the stream started with %d",
                           (long long)b->seq, b->nrec, e->nch);
        if (b->chan != e->chan)
            for (int r = 0; r < e->nch; r++)
                if (!same_channel(&b->chan[r], &e->chan[r]))
                    return err_set(-EINVAL, "locate: block %lld: channel %d is %s.%s.%s.%s, expected %s.%s.%s.%s",
                                   (long long)b->seq, r, b->chan[r].net, b->chan[r].sta, b->chan[r].loc,
                                   b->chan[r].cha, e->chan[r].net, e->chan[r].sta, e->chan[r].loc,
                                   e->chan[r].cha);
        /* in samples, in double: a t0 a century off must not overflow an integer */
        double expect = (double)e->t0_ns + (double)e->next_n * e->dt * 1e9;
        double jd = ((double)b->t0_ns - expect) / (e->dt * 1e9);
        if (fabs(jd) > e->restart_limit) {
            if ((rc = restart_stream(e, b, jd)))
                return rc;
        } else {
            int64_t jump = (int64_t)llround(jd);
            if (jump < 0 && -jump >= b->ns) {
                e->stats.rejected_blocks++;
                log_warn("block %lld: ends %lld samples before the end of the previous one; rejected (%lld so far)",
                         (long long)b->seq, (long long)(-jump - b->ns), (long long)e->stats.rejected_blocks);
                return 0;
            }
            if (jump < 0) {
                /* the overlapping samples were fed already: dropped, never used twice */
                skip = (int)-jump;
                e->stats.overlap_samples += skip;
                log_warn("block %lld: starts %d samples before the end of the previous one; those dropped "
                         "(%lld overlapping samples so far)", (long long)b->seq, skip,
                         (long long)e->stats.overlap_samples);
            }
            if (jump > 0)
                log_warn("block %lld: %lld samples missing before it; treated as a gap", (long long)b->seq,
                         (long long)jump);
            /* bounded by restart_limit: at most a few chunks */
            while (jump > 0) {
                if (cancelled(e))
                    return err_set(-ECANCELED, "locate: block %lld: stopped", (long long)b->seq);
                int k = jump > e->chunk ? e->chunk : (int)jump;
                if ((rc = feed_chunk(e, NULL, 0, k)))
                    return rc;
                jump -= k;
            }
        }
    }
    for (int off = skip; off < b->ns; off += e->chunk) {
        if (cancelled(e))
            return err_set(-ECANCELED, "locate: block %lld: stopped", (long long)b->seq);
        int k = b->ns - off < e->chunk ? b->ns - off : e->chunk;
        if ((rc = feed_chunk(e, b, off, k)))
            return rc;
    }
    e->stats.blocks++;
    return 0;
}

int locate_engine_flush(struct locate_engine *e)
{
    if (!e->started)
        return 0;
    int rc = stack_ready(e, 1);
    if (rc)
        return rc;
    if (e->pend.valid)
        emit(e);
    return 0;
}

void locate_engine_stats(const struct locate_engine *e, struct locate_stats *out)
{
    *out = e->stats;
}

const struct tt_table *locate_engine_tables(const struct locate_engine *e)
{
    return &e->tt;
}

size_t locate_engine_table_bytes(const struct locate_engine *e, size_t *host_bytes)
{
    size_t delays = (size_t)e->nrow * e->nj_pad * sizeof(uint16_t);
    if (host_bytes)
        *host_bytes = tt_bytes(&e->tt) + delays;
    return delays;
}

void locate_engine_destroy(struct locate_engine *e)
{
    if (!e)
        return;
#ifdef SEISLIVE_CUDA
    stack_cuda_destroy(e->g.stack);
    void *dbuf[] = {e->g.x, e->g.cfch, e->g.cf[0], e->g.cf[1], e->g.mval, e->g.midx, e->g.coh, e->g.state[0],
                    e->g.state[1], e->g.rowch, e->g.delay, e->g.coef[0], e->g.coef[1]};
    for (size_t i = 0; i < sizeof dbuf / sizeof *dbuf; i++)
        dev_free(&e->dev, dbuf[i]);
#endif
    cf_params_free(&e->cfp[0]);
    cf_params_free(&e->cfp[1]);
    tt_free(&e->tt);
    free(e->sta);
    free(e->chan);
    free(e->used_ch);
    free(e->rowch);
    free(e->state[0]);
    free(e->state[1]);
    free(e->roff);
    free(e->delay);
    free(e->cfh);
    free(e->x);
    free(e->cfch);
    free(e->mval);
    free(e->midx);
    free(e->coh);
    free(e->mring);
    free(e->sortbuf);
    free(e->mlive);
    free(e);
}
