/* Synthetic microseismic streams for the locate tests (see test_locate_synth.h). */
#include "tests/test_locate_synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/locate_engine.h"
#include "stream/locate_setup.h"

static uint64_t next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uni(uint64_t *x)
{
    return (double)(next(x) >> 11) * (1.0 / 9007199254740992.0);
}

static double gauss(uint64_t *x)
{
    double u = uni(x), v = uni(x);
    return sqrt(-2.0 * log(u + 1e-300)) * cos(2.0 * M_PI * v);
}

static void add_ricker(float *x, int ns, double dt, double tarr, double f, double amp)
{
    int c = (int)lround(tarr / dt), w = (int)ceil(1.5 / (f * dt));
    for (int i = c - w; i <= c + w; i++) {
        if (i < 0 || i >= ns)
            continue;
        double a = M_PI * f * (i * dt - tarr), a2 = a * a;
        x[i] += (float)(amp * (1.0 - 2.0 * a2) * exp(-a2));
    }
}

void synth_make(struct synth *s, int nsta, int ns, double dt, double snr, uint64_t seed)
{
    s->nsta = nsta;
    s->ns = ns;
    s->dt = dt;
    s->snr = snr;
    s->vp = 3500.0;
    s->vs = 2000.0;
    s->f_peak = s->f_peak > 0 ? s->f_peak : 10.0; /* preset by the caller, or 10 Hz */
    s->t0_ns = 1700000000LL * 1000000000LL;
    s->st.n = nsta;
    s->st.st = calloc(nsta, sizeof *s->st.st);
    s->chan = calloc((size_t)nsta * 3, sizeof *s->chan);
    s->data = malloc((size_t)nsta * 3 * ns * sizeof(float));
    for (int i = 0; i < nsta; i++) {
        struct station *st = &s->st.st[i];
        snprintf(st->name, sizeof st->name, "S%02d", i);
        /* a square grid of stations over -200 .. 1300 m, the trial grid's surface and more */
        int k = (int)ceil(sqrt((double)nsta)), ix = i % k, iy = i / k;
        st->x = -200.0 + 1500.0 * (ix + 0.5 * (iy % 2) * 0.5) / (k - 1 > 0 ? k - 1 : 1);
        st->y = -200.0 + 1500.0 * iy / (k - 1 > 0 ? k - 1 : 1);
        st->z = 0;
        st->lat = st->lon = st->elev = NAN;
        for (int c = 0; c < 3; c++) {
            struct trace_channel *ch = &s->chan[i * 3 + c];
            strcpy(ch->net, "XX");
            strcpy(ch->sta, st->name);
            strcpy(ch->cha, c == 0 ? "HHZ" : c == 1 ? "HHN" : "HHE");
        }
    }
    uint64_t rng = seed;
    for (size_t i = 0; i < (size_t)nsta * 3 * ns; i++)
        s->data[i] = (float)gauss(&rng);
    double amp = snr; /* noise sigma is 1 */
    double f_s = s->f_peak_s > 0 ? s->f_peak_s : s->f_peak, amp_s = s->snr_s > 0 ? s->snr_s : amp;
    for (int e = 0; e < s->nev; e++)
        for (int i = 0; i < nsta; i++) {
            const struct station *st = &s->st.st[i];
            double d = sqrt(pow(s->ev[e][0] - st->x, 2) + pow(s->ev[e][1] - st->y, 2) + pow(s->ev[e][2] - st->z, 2));
            double tp = s->ev[e][3] + d / s->vp, ts = s->ev[e][3] + d / s->vs;
            for (int c = 0; c < 3; c++) {
                double pol = uni(&rng) < 0.5 ? -1.0 : 1.0;
                add_ricker(s->data + ((size_t)i * 3 + c) * ns, ns, dt, c == 0 ? tp : ts, c == 0 ? s->f_peak : f_s,
                           pol * (c == 0 ? amp : amp_s));
            }
        }
}

void synth_free(struct synth *s)
{
    stations_free(&s->st);
    free(s->chan);
    free(s->data);
    memset(s, 0, sizeof *s);
}

void synth_config(struct sl_config *cfg)
{
    config_defaults(cfg);
    struct locate_conf *lc = &cfg->locate;
    lc->phases = PHASES_PS;
    lc->traveltime = TT_HOMOGENEOUS;
    lc->vp = 3500.0;
    lc->vs = 2000.0;
    int n[3] = {9, 9, 6};
    for (int a = 0; a < 3; a++) {
        lc->grid_n[a] = n[a];
        lc->grid_d[a] = 100.0;
        lc->grid_o[a] = a == 2 ? 400.0 : 0.0;
    }
    lc->cf = CF_ENVELOPE;
    lc->sta = 0.06;
    lc->lta = 1.0;
    lc->band[0] = 4.0;
    lc->band[1] = 30.0;
    lc->normalize = NORM_COUNT;
    lc->block_samples = 1000;
    lc->trigger = TRIGGER_MAD;
    lc->threshold = 15.0;
    lc->min_interval = 1.0;
    lc->mad_window = 8.0;
}

int synth_feed(struct locate_engine *e, const struct synth *s, const int *sizes, int nsizes,
               const uint8_t *mask, const uint8_t *chan_ok)
{
    int nch = s->nsta * 3, k = 0;
    float *buf = malloc((size_t)nch * s->ns * sizeof(float));
    uint8_t *mbuf = mask ? malloc((size_t)nch * s->ns) : NULL;
    int rc = 0;
    for (int off = 0, seq = 0; off < s->ns && !rc; seq++) {
        int n = sizes[k++ % nsizes];
        if (n > s->ns - off)
            n = s->ns - off;
        for (int c = 0; c < nch; c++) {
            memcpy(buf + (size_t)c * n, s->data + (size_t)c * s->ns + off, n * sizeof(float));
            if (mask)
                memcpy(mbuf + (size_t)c * n, mask + (size_t)c * s->ns + off, n);
        }
        struct trace_block b = {.seq = seq, .t0_ns = s->t0_ns + (int64_t)llround(off * s->dt * 1e9), .dt = s->dt,
                                .nrec = nch, .ns = n, .chan = s->chan, .data = buf, .mask = mbuf,
                                .chan_ok = chan_ok};
        rc = locate_feed(e, &b);
        off += n;
    }
    if (!rc)
        rc = locate_engine_flush(e);
    free(buf);
    free(mbuf);
    return rc;
}

void synth_on_event(const struct locate_event *ev, void *user)
{
    struct synth_found *f = user;
    if (f->n < SYN_MAXFOUND)
        f->ev[f->n] = *ev;
    f->n++;
}
