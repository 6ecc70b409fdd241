/* rtm_memory — see rtm_memory.h. */
#include "kernels/rtm_memory.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "kernels/imaging.h"
#include "kernels/revolve.h"
#include "kernels/rtm.h"
#include "kernels/rtm_strips.h"
#include "stream/error.h"

int rtm_default_snaps(int nt)
{
    int s = (int)ceil(sqrt((double)nt + 1.0));
    return s < 2 ? 2 : s;
}

void rtm_random_params(const struct prop_params *pp, int random_width, struct prop_params *out)
{
    *out = *pp;
    struct prop_grid *g = &out->grid;
    for (int f = 0; f < PROP_FACES; f++) {
        if (g->face[f] != PROP_FACE_CPML && g->face[f] != PROP_FACE_RANDOM)
            continue;
        g->face[f] = PROP_FACE_RANDOM;
        if (g->width[f] < random_width)
            g->width[f] = random_width;
    }
}

size_t rtm_memory_checkpoint(const struct rtm_mem *m, const struct rtm_mem_input *in, int snaps,
                             int schedule)
{
    if (snaps < 1)
        snaps = 1;
    size_t b = (size_t)snaps * m->state;
    if (schedule == RTM_CKPT_UNIFORM)
        b += (size_t)revolve_uniform_segment(in->nt + 1, snaps) * m->field;
    return m->common + m->sim + b;
}

int rtm_memory_estimate(const struct rtm_mem_input *in, struct rtm_mem *m)
{
    struct prop_layout L;
    int rc = prop_layout_of(&in->pp, &L);
    if (rc < 0)
        return rc;
    if (in->nt < 1 || in->image_every < 1)
        return err_set(-EINVAL, "rtm memory: %d steps, image every %d", in->nt, in->image_every);
    const size_t f = sizeof(float);
    size_t cells = (size_t)L.n[0] * L.n[1] * L.n[2];
    /* TTI's step reaches two halos (two nested first derivatives, kernels/tti.h): its
     * strips are twice as wide */
    size_t h = (size_t)L.halo * (in->pp.physics == PROP_TTI ? 2 : 1);
    size_t inner = 1;
    for (int a = 0; a < 3; a++)
        inner *= (size_t)L.n[a] > 2 * h ? (size_t)L.n[a] - 2 * h : 0;
    m->field = cells * f;
    /* the boundary strip of every wavefield the physics steps (TTI: p and q, tti.h) */
    m->strip = (cells - inner) * f * (in->pp.physics == PROP_TTI ? 2 : 1);
    /* the implicit operator's strip also carries g at the two interfaces of every line
     * through the inner box, per axis (kernels/implicit.h) */
    if (in->pp.op.kind == PROP_OP_IMPLICIT)
        for (int a = 0; a < 3; a++) {
            size_t lines = 2;
            for (int q = 0; q < 3; q++)
                if (q != a)
                    lines *= (size_t)L.n[q] > 2 * h ? (size_t)L.n[q] - 2 * h : 0;
            m->strip += lines * f;
        }
    m->sim = prop_memory_bytes(&in->pp);
    /* A checkpoint: both time levels and the CPML memory (not the CUDA kernels' second
     * psi buffer, which the simulation's memory counts). */
    m->state = prop_state_bytes_of(&in->pp);
    struct prop_params rp;
    rtm_random_params(&in->pp, in->random_width, &rp);
    m->sim_random = prop_memory_bytes(&rp);
    size_t naccs = imaging_needs_receiver(in->imaging) ? 3 : 2;
    size_t nt1 = (size_t)in->nt + 1;
    /* points: trilinear weights and indices, 8 nodes each, generously */
    m->common = m->sim + (size_t)in->ntr * nt1 * f + naccs * m->field + (size_t)(in->ntr + 1) * 8 * 16 +
                (size_t)nt1 * f;
    m->snaps = in->checkpoints > 0 ? in->checkpoints : rtm_default_snaps(in->nt);
    if (m->snaps > in->nt + 1)
        m->snaps = in->nt + 1;
    m->seg = revolve_uniform_segment(in->nt + 1, m->snaps);
    m->need[RTM_AUTO] = 0;
    m->need[RTM_FULL] = m->common + m->sim + (size_t)(in->nt / in->image_every) * m->field;
    m->strips_bytes = (size_t)in->nt * m->strip;
    m->boundary_dev = m->common + m->sim + m->strips_bytes;
    m->boundary_host = m->common + m->sim + (size_t)rtm_memory_stages(in) * m->strip;
    m->need[RTM_BOUNDARY] = in->strip_store == RTM_STRIPS_HOST ? m->boundary_host : m->boundary_dev;
    m->need[RTM_CHECKPOINT] = rtm_memory_checkpoint(m, in, m->snaps, in->schedule);
    m->need[RTM_RANDOM] = m->common + m->sim_random;
    return 0;
}

int rtm_memory_stages(const struct rtm_mem_input *in)
{
    return in->strip_stages > 0 ? in->strip_stages : RTM_STRIP_STAGES;
}

int rtm_memory_strips_where(const struct rtm_mem *m, const struct rtm_mem_input *in, size_t budget)
{
    const double mib = 1.0 / (1024.0 * 1024.0), gib = mib / 1024.0;
    const bool host_ok = in->host_budget > 0 && m->strips_bytes <= in->host_budget;
    if (in->strip_store != RTM_STRIPS_HOST && m->boundary_dev <= budget)
        return 0;
    if (in->strip_store != RTM_STRIPS_DEVICE && host_ok && m->boundary_host <= budget)
        return 1;
    if (in->strip_store == RTM_STRIPS_DEVICE || (in->strip_store == RTM_STRIPS_AUTO && in->host_budget == 0))
        return err_set(-ENOMEM, "boundary needs %.1f MiB of device memory (%.2f GiB of strips), more than the "
                       "%.1f MiB budget", m->boundary_dev * mib, m->strips_bytes * gib, budget * mib);
    if (!host_ok)
        return err_set(-ENOMEM, "boundary's strips need %.2f GiB of host memory, more than the %.2f GiB host "
                       "budget ([rtm] host_memory_budget, or 80 %% of the free host memory)%s",
                       m->strips_bytes * gib, in->host_budget * gib,
                       in->strip_store == RTM_STRIPS_AUTO ? ", and do not fit the device either" : "");
    return err_set(-ENOMEM, "boundary with its strips in host memory still needs %.1f MiB of device memory, more "
                   "than the %.1f MiB budget", m->boundary_host * mib, budget * mib);
}

int rtm_memory_pick(const struct rtm_mem *m, const struct rtm_mem_input *in, size_t budget,
                    int *strategy, int *snaps, char *why, size_t why_len)
{
    return rtm_memory_pick_strips(m, in, budget, strategy, snaps, NULL, why, why_len);
}

int rtm_memory_pick_strips(const struct rtm_mem *m, const struct rtm_mem_input *in, size_t budget, int *strategy,
                           int *snaps, bool *host_strips, char *why, size_t why_len)
{
    const double mib = 1.0 / (1024.0 * 1024.0), gib = mib / 1024.0;
    *snaps = m->snaps;
    if (host_strips)
        *host_strips = false;
    if (m->need[RTM_FULL] <= budget) {
        *strategy = RTM_FULL;
        snprintf(why, why_len, "full fits: %.1f MiB of a %.1f MiB budget", m->need[RTM_FULL] * mib,
                 budget * mib);
        return 0;
    }
    int where = rtm_memory_strips_where(m, in, budget);
    if (where == 0) {
        *strategy = RTM_BOUNDARY;
        snprintf(why, why_len, "full needs %.1f MiB > budget %.1f MiB; boundary fits (%.1f MiB)",
                 m->need[RTM_FULL] * mib, budget * mib, m->need[RTM_BOUNDARY] * mib);
        return 0;
    }
    if (where == 1) {
        *strategy = RTM_BOUNDARY;
        if (host_strips)
            *host_strips = true;
        if (in->strip_store == RTM_STRIPS_HOST)
            snprintf(why, why_len, "full needs %.1f MiB > budget %.1f MiB; boundary fits with its strips in host "
                     "memory (strip_store = \"host\"): %.1f MiB of device memory, %.2f GiB of host memory "
                     "(host budget %.2f GiB)", m->need[RTM_FULL] * mib, budget * mib, m->boundary_host * mib,
                     m->strips_bytes * gib, in->host_budget * gib);
        else
            snprintf(why, why_len, "full needs %.1f MiB and boundary %.1f MiB > budget %.1f MiB; boundary fits "
                     "with its strips in pinned host memory: %.1f MiB of device memory, %.2f GiB of host memory "
                     "(host budget %.2f GiB)", m->need[RTM_FULL] * mib, m->boundary_dev * mib, budget * mib,
                     m->boundary_host * mib, m->strips_bytes * gib, in->host_budget * gib);
        return 0;
    }
    /* why boundary does not fit (device memory, or the host's for its strips) */
    char bno[384];
    snprintf(bno, sizeof bno, "%s", err_msg());
    err_clear();
    /* Binomial checkpoints: as many snaps as fit, if they keep the recomputation cheap. */
    size_t base = m->common + m->sim;
    if (budget > base && m->state > 0) {
        size_t fit = (budget - base) / m->state;
        int s = fit > (size_t)in->nt + 1 ? in->nt + 1 : (int)fit;
        long steps = s >= 1 ? revolve_min_steps(in->nt + 1, s) : -1;
        if (s >= 2 && steps >= 0 && steps <= (long)RTM_AUTO_MAX_SWEEPS * in->nt) {
            *strategy = RTM_CHECKPOINT;
            *snaps = s;
            snprintf(why, why_len, "full needs %.1f MiB > budget %.1f MiB; %s; checkpoint (binomial) with %d snaps "
                     "fits (%.1f MiB, %.2f forward sweeps)",
                     m->need[RTM_FULL] * mib, budget * mib, bno, s,
                     rtm_memory_checkpoint(m, in, s, RTM_CKPT_BINOMIAL) * mib, (double)steps / in->nt);
            return 0;
        }
    }
    if (m->need[RTM_RANDOM] <= budget) {
        *strategy = RTM_RANDOM;
        snprintf(why, why_len, "%s; too few checkpoints fit; random fits (%.1f MiB)", bno,
                 m->need[RTM_RANDOM] * mib);
        return 0;
    }
    return err_set(-ENOMEM,
                   "no strategy fits the memory budget of %.1f MiB: the smallest (random) needs %.1f MiB "
                   "(raise [rtm] memory_budget, or narrow [rtm] aperture)",
                   budget * mib, m->need[RTM_RANDOM] * mib);
}
