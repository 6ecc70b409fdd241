/* job_rtm_report — what `seislive check` prints for the rtm job: for the configured
 * model and a representative shot (the first source of [acquisition] with its
 * receivers), the sub-volume, the time steps, the device memory each source-wavefield
 * strategy would need, and the strategy auto would pick under the budget.  Uses the
 * same planning code as the engine (kernels/rtm_memory.h), so the two never disagree. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "conf/config.h"
#include "io/model.h"
#include "kernels/backend.h"
#include "kernels/device.h"
#include "kernels/rtm.h"
#include "kernels/rtm_memory.h"
#include "kernels/subvolume.h"
#include "kernels/time_dispersion.h"
#include "kernels/wavelet.h"
#include "stream/error.h"
#include "stream/job_rtm_report.h"
#include "stream/rtm_config.h"
#include "stream/stability_conf.h"

/* The receivers of [acquisition]: the explicit list, or the grid. */
static float *receivers(const struct acquisition_conf *a, size_t *n)
{
    size_t k = 0;
    if (a->rx_count[0] > 0 && a->rx_count[1] > 0)
        *n = (size_t)a->rx_count[0] * (size_t)a->rx_count[1];
    else
        *n = a->receivers.n;
    float *r = malloc((*n + 1) * 3 * sizeof(float));
    if (!r)
        return NULL;
    if (a->rx_count[0] > 0 && a->rx_count[1] > 0) {
        for (int j = 0; j < a->rx_count[1]; j++)
            for (int i = 0; i < a->rx_count[0]; i++, k++) {
                r[3 * k] = (float)(a->rx_origin[0] + i * a->rx_step[0]);
                r[3 * k + 1] = (float)(a->rx_origin[1] + j * a->rx_step[1]);
                r[3 * k + 2] = (float)a->rx_origin[2];
            }
    } else {
        for (; k < *n; k++)
            for (int c = 0; c < 3; c++)
                r[3 * k + c] = (float)a->receivers.p[k][c];
    }
    return r;
}

int rtm_report(const struct sl_config *cfg, FILE *out)
{
    struct sl_model m;
    int rc = model_load(cfg, &m);
    if (rc < 0)
        return rc;
    const struct propagator_conf *p = &cfg->propagator;
    double fmax = wavelet_ricker_fmax(p->f_peak), dt, dt_max, ppw;
    if (p->wavelet == WAVELET_FILE) {
        float *w;
        size_t nw;
        if ((rc = wavelet_read(p->wavelet_file, &w, &nw)) < 0)
            goto out;
        fmax = wavelet_fmax(w, nw, p->wavelet_dt > 0 ? p->wavelet_dt : p->dt);
        free(w);
    }
    if ((rc = stability_resolve_model(cfg, &m, fmax, &dt, &dt_max, &ppw)) < 0)
        goto out;
    int nt = (int)(p->t_max / dt + 0.5);
    double src[3];
    if (cfg->acquisition.sources.n > 0) {
        for (int a = 0; a < 3; a++)
            src[a] = cfg->acquisition.sources.p[0][a];
    } else {
        for (int a = 0; a < 2; a++)
            src[a] = m.o[a] + (m.n[a] / 2) * m.d[a];
        src[2] = m.o[2];
    }
    size_t ntr = 0;
    float *rec = receivers(&cfg->acquisition, &ntr);
    if (!rec) {
        rc = err_set(-ENOMEM, "rtm report: receivers");
        goto out;
    }
    /* The rtm job takes its geometry from the data's headers, so a config often gives
     * none.  Then the shot is assumed, and said to be: receivers on every surface node
     * within the aperture of the source, clipped to the model, the largest spread a shot
     * there can have inside the sub-volume. */
    bool assumed_rx = ntr == 0;
    if (assumed_rx) {
        int lo[2], hi[2];
        for (int a = 0; a < 2; a++) {
            lo[a] = (int)ceil((src[a] - cfg->rtm.aperture - m.o[a]) / m.d[a] - 1e-9);
            hi[a] = (int)floor((src[a] + cfg->rtm.aperture - m.o[a]) / m.d[a] + 1e-9);
            lo[a] = lo[a] < 0 ? 0 : lo[a];
            hi[a] = hi[a] > m.n[a] - 1 ? m.n[a] - 1 : hi[a];
            if (hi[a] < lo[a])
                hi[a] = lo[a] - 1;
        }
        ntr = (size_t)(hi[0] - lo[0] + 1) * (size_t)(hi[1] - lo[1] + 1);
        free(rec);
        rec = malloc((ntr + 1) * 3 * sizeof(float));
        if (!rec) {
            rc = err_set(-ENOMEM, "rtm report: receivers");
            goto out;
        }
        size_t k = 0;
        for (int j = lo[1]; j <= hi[1]; j++)
            for (int i = lo[0]; i <= hi[0]; i++, k++) {
                rec[3 * k] = (float)(m.o[0] + i * m.d[0]);
                rec[3 * k + 1] = (float)(m.o[1] + j * m.d[1]);
                rec[3 * k + 2] = (float)m.o[2];
            }
    }
    size_t inside = 0;
    for (size_t r = 0; r < ntr; r++) {
        double q[3] = {rec[3 * r], rec[3 * r + 1], rec[3 * r + 2]};
        inside += (size_t)subvolume_contains(m.n, m.d, m.o, q);
    }
    struct subvolume sv;
    rc = subvolume_of_shot(m.n, m.d, m.o, src, rec, ntr, cfg->rtm.aperture, &sv);
    free(rec);
    if (rc < 0) {
        err_prefix(rc, "[acquisition] first source");
        goto out;
    }
    /* the engine's own propagator parameters for this sub-volume (kernels/rtm_memory.h) */
    struct rtm_params rp;
    char dt_name[640];
    rtm_params_from_config(cfg, &rp, dt_name, sizeof dt_name);
    struct prop_params pp;
    rtm_prop_params(&rp, m.n[1] == 1, m.d, &sv, dt, &pp);
    const int every = rtm_image_every_of(cfg->rtm.image_every, fmax, dt);
    struct rtm_mem_input mi = {pp, cfg->rtm.random_width, nt, every, (int)inside,
                               cfg->rtm.imaging, cfg->rtm.checkpoints, cfg->rtm.checkpoint_schedule,
                               .strip_store = cfg->rtm.strip_store};
    struct rtm_mem mem;
    if ((rc = rtm_memory_estimate(&mi, &mem)) < 0)
        goto out;
    const double mib = 1.0 / 1048576.0;
    if (assumed_rx)
        fprintf(out, "[rtm] representative shot (assumed: the data bring their geometry; [acquisition] gives %s): "
                     "source (%g, %g, %g) m%s, %zu receivers on every surface node within the aperture (%g m) of it\n",
                cfg->acquisition.sources.n ? "no receivers" : "none", src[0], src[1], src[2],
                cfg->acquisition.sources.n ? " (the first of [acquisition])" : " at the centre of the model's top",
                ntr, cfg->rtm.aperture);
    else
        fprintf(out, "[rtm] representative shot: source (%g, %g, %g) m (%s), %zu of %zu receivers of [acquisition] "
                     "in the model\n", src[0], src[1], src[2],
                cfg->acquisition.sources.n ? "the first of [acquisition]" : "assumed at the centre of the model's top",
                inside, ntr);
    fprintf(out, "[rtm] sub-volume %d x %d x %d cells at (%d, %d, %d) + absorbing layers; %d steps of %.4g ms (stable "
                 "up to %.4g ms)\n",
            sv.n[0], sv.n[1], sv.n[2], sv.off[0], sv.off[1], sv.off[2], nt, dt * 1e3, dt_max * 1e3);
    if (cfg->rtm.image_every > 0)
        fprintf(out, "[rtm] imaging every %d step%s (image_every as configured; auto, image_every = 0, would take %d: "
                     "floor(1 / (2 fmax dt)), the image's Nyquist, with the wavelet's fmax %.4g Hz)\n",
                every, every == 1 ? "" : "s", rtm_image_every_auto(fmax, dt), fmax);
    else
        fprintf(out, "[rtm] imaging every %d step%s (image_every = 0, auto: floor(1 / (2 fmax dt)), the image's "
                     "Nyquist, with the wavelet's fmax %.4g Hz and dt %.4g ms; set image_every to choose)\n",
                every, every == 1 ? "" : "s", fmax, dt * 1e3);
    if (p->time_dispersion == TIME_DISPERSION_CORRECT) {
        /* what rtm_engine_create refuses, said here first (kernels/time_dispersion.h) */
        char where[512];
        if (fmax >= tdt_band_limit(dt)) {
            rc = err_set(-EINVAL, "%s: [propagator] time_dispersion = \"correct\": the wavelet reaches %.4g Hz, "
                         "beyond the %.4g Hz (1 / (pi dt), dt %.6g s) up to which the leapfrog's time dispersion "
                         "can be undone; take a smaller dt or a lower f_peak",
                         config_where(cfg, "propagator.time_dispersion", where, sizeof where), fmax,
                         tdt_band_limit(dt), dt);
            goto out;
        }
        fprintf(out, "[rtm] time dispersion: corrected (the wavelet and each shot's traces forward-transformed at "
                     "dt %.4g ms, docs/time-dispersion.md; band limit %.4g Hz, wavelet fmax %.4g Hz)\n",
                dt * 1e3, tdt_band_limit(dt), fmax);
    }
    fprintf(out, "[rtm] device memory per strategy: full %.1f MiB, boundary %.1f MiB, checkpoint (%d snaps, %s) "
                 "%.1f MiB, random %.1f MiB\n",
            mem.need[RTM_FULL] * mib, mem.need[RTM_BOUNDARY] * mib, mem.snaps,
            cfg->rtm.checkpoint_schedule == CKPT_UNIFORM ? "uniform" : "binomial", mem.need[RTM_CHECKPOINT] * mib,
            mem.need[RTM_RANDOM] * mib);
    size_t budget = 0;
    const char *from = "[rtm] memory_budget";
    if (cfg->rtm.memory_budget > 0) {
        budget = (size_t)(cfg->rtm.memory_budget * 1048576.0);
    } else {
        struct sl_device dev;
        size_t fr = 0, tot = 0;
        if (backend_select(cfg->runtime.device, &dev) == 0 && dev_mem(&dev, &fr, &tot) == 0) {
            budget = (size_t)((double)fr * 0.9);
            from = dev.kind == SL_DEVICE_CUDA ? "90% of the GPU's free memory" : "90% of free host memory";
        }
        err_clear();
    }
    /* where boundary's strips would go: the host budget the engine would use (kernels/
     * rtm_internal.h: 0 on the CPU under "auto", whose device memory is the host's) */
    bool gpu = false;
    {
        struct sl_device dev;
        gpu = backend_select(cfg->runtime.device, &dev) == 0 && dev.kind == SL_DEVICE_CUDA;
        err_clear();
    }
    const char *hfrom = "[rtm] host_memory_budget";
    if (cfg->rtm.strip_store == STRIPS_DEVICE || (cfg->rtm.strip_store == STRIPS_AUTO && !gpu)) {
        mi.host_budget = 0;
    } else if (cfg->rtm.host_memory_budget > 0) {
        mi.host_budget = (size_t)(cfg->rtm.host_memory_budget * 1048576.0);
    } else {
        long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        mi.host_budget = pages > 0 && page > 0 ? (size_t)(0.8 * (double)pages * (double)page) : 0;
        hfrom = "80% of free host memory";
    }
    int strategy = RTM_AUTO, snaps = mem.snaps;
    bool hstrips = false;
    char why[768] = "";
    if (budget > 0 && rtm_memory_pick_strips(&mem, &mi, budget, &strategy, &snaps, &hstrips, why, sizeof why) < 0)
        snprintf(why, sizeof why, "%s", err_msg());
    if (cfg->rtm.strategy == STRAT_AUTO)
        fprintf(out, "[rtm] auto picks %s under %.1f MiB (%s): %s\n",
                strategy == RTM_AUTO ? "nothing" : rtm_strategy_name(strategy), budget * mib, from, why);
    else
        fprintf(out, "[rtm] strategy %s (configured); auto would pick %s under %.1f MiB (%s)\n",
                rtm_strategy_name(cfg->rtm.strategy), strategy == RTM_AUTO ? "nothing" : rtm_strategy_name(strategy),
                budget * mib, from);
    /* boundary's strips: where they go under this budget, and why */
    if (cfg->rtm.strategy == STRAT_AUTO || cfg->rtm.strategy == STRAT_BOUNDARY) {
        static const char *const stores[] = {"auto", "device", "host"};
        int where = budget > 0 ? rtm_memory_strips_where(&mem, &mi, budget) : 0;
        char hb[64] = "none";
        if (mi.host_budget > 0)
            snprintf(hb, sizeof hb, "%.2f GiB (%s)", mi.host_budget * mib / 1024.0, hfrom);
        fprintf(out, "[rtm] boundary strips (strip_store = \"%s\"): %.2f GiB; %s (device with them %.1f MiB, "
                     "staged from the host %.1f MiB; host budget %s)\n",
                stores[cfg->rtm.strip_store], mem.strips_bytes * mib / 1024.0,
                where == 0 ? "on the device" : where == 1 ? "in pinned host memory, staged through the device"
                                                           : err_msg(),
                mem.boundary_dev * mib, mem.boundary_host * mib, hb);
        err_clear();
    }
    rc = 0;
out:
    model_free(&m);
    return rc;
}
