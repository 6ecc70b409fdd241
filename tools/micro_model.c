/* micro_model — see micro_model.h. */
#include "tools/micro_model.h"

#include <math.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double micro_uniform(uint64_t *state)
{
    return (double)(splitmix64(state) >> 11) * 0x1.0p-53;
}

double micro_normal(uint64_t *state)
{
    /* Box-Muller; one of the pair is thrown away to keep the state sequence simple */
    double u1 = micro_uniform(state), u2 = micro_uniform(state);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static void random_unit(uint64_t *s, double v[3])
{
    double z = 2.0 * micro_uniform(s) - 1.0, phi = 2.0 * M_PI * micro_uniform(s);
    double r = sqrt(1.0 - z * z);
    v[0] = r * cos(phi);
    v[1] = r * sin(phi);
    v[2] = z;
}

void micro_random_dc(uint64_t *state, double m[3][3])
{
    double n[3], s[3];
    random_unit(state, n);
    double dot;
    do { /* a slip direction perpendicular to the normal */
        random_unit(state, s);
        dot = s[0] * n[0] + s[1] * n[1] + s[2] * n[2];
        for (int i = 0; i < 3; i++)
            s[i] -= dot * n[i];
    } while (s[0] * s[0] + s[1] * s[1] + s[2] * s[2] < 1e-6);
    double len = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    for (int i = 0; i < 3; i++)
        s[i] /= len;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            m[i][j] = n[i] * s[j] + s[i] * n[j];
}

static double distance(const double a[3], const double b[3])
{
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

double micro_travel_time(const struct micro_model *m, const struct micro_event *e,
                         const struct micro_station *s, int phase)
{
    return distance(e->x, s->x) / (phase == 0 ? m->vp : m->vs);
}

const char *micro_channel_code(const struct micro_model *m, int c)
{
    static const char *const codes[3] = {"HHZ", "HHN", "HHE"};
    return m->ncomp == 1 ? codes[0] : codes[c % 3];
}

static double ricker(double f, double tau)
{
    double a = M_PI * M_PI * f * f * tau * tau;
    return (1.0 - 2.0 * a) * exp(-a);
}

/* Add the pulse of amplitude vector U (x, y, z) arriving at T (s) to the channels of
 * one station, samples [k0, k0 + ns). */
static void add_pulse(const struct micro_model *m, float *out, int st, int64_t k0, int ns,
                      double t, const double u[3], double f)
{
    double half = 2.0 / f; /* the Ricker is < 1e-7 beyond */
    int64_t ka = (int64_t)floor((t - half) * m->rate), kb = (int64_t)ceil((t + half) * m->rate);
    if (ka < k0)
        ka = k0;
    if (kb > k0 + ns - 1)
        kb = k0 + ns - 1;
    /* Z is up (z is down), N is y, E is x */
    const double comp[3] = {-u[2], u[1], u[0]};
    for (int64_t k = ka; k <= kb; k++) {
        double w = ricker(f, (double)k / m->rate - t);
        for (int c = 0; c < m->ncomp; c++)
            out[(size_t)(st * m->ncomp + c) * ns + (size_t)(k - k0)] += (float)(w * comp[c]);
    }
}

void micro_render(struct micro_model *m, int64_t k0, int ns, float *out)
{
    size_t nch = (size_t)m->nst * m->ncomp;
    for (size_t i = 0; i < nch * (size_t)ns; i++)
        out[i] = m->noise > 0 ? (float)(m->noise * micro_normal(&m->rng)) : 0.0f;
    double t_lo = (double)k0 / m->rate, t_hi = (double)(k0 + ns) / m->rate;
    double f_s = m->f_peak_s > 0 ? m->f_peak_s : m->f_peak;
    double half = 2.0 / fmin(m->f_peak, f_s);
    for (int e = 0; e < m->nev; e++) {
        const struct micro_event *ev = &m->ev[e];
        for (int s = 0; s < m->nst; s++) {
            double r[3], dist = distance(ev->x, m->st[s].x);
            if (dist < 1.0)
                dist = 1.0;
            for (int i = 0; i < 3; i++)
                r[i] = (m->st[s].x[i] - ev->x[i]) / dist;
            double mr[3] = {0, 0, 0};
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    mr[i] += ev->m[i][j] * r[j];
            double rp = mr[0] * r[0] + mr[1] * r[1] + mr[2] * r[2]; /* P radiation */
            double spread = 1000.0 / dist;
            for (int ph = 0; ph < 2; ph++) {
                if (!(m->phases & (1 << ph)))
                    continue;
                double t = ev->t + micro_travel_time(m, ev, &m->st[s], ph);
                if (t + half < t_lo || t - half > t_hi)
                    continue;
                double u[3];
                if (ph == 0) {
                    for (int i = 0; i < 3; i++)
                        u[i] = ev->amp * spread * rp * r[i];
                } else {
                    /* far-field S: the transverse part of M r, (vp/vs)^3 stronger */
                    double k = pow(m->vp / m->vs, 3.0);
                    for (int i = 0; i < 3; i++)
                        u[i] = ev->amp * spread * k * (mr[i] - rp * r[i]);
                }
                add_pulse(m, out, s, k0, ns, t, u, ph == 0 ? m->f_peak : f_s);
            }
        }
    }
}
