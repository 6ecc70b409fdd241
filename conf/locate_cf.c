/* locate_cf — the characteristic-function settings of one phase from [locate]'s shared
 * keys (sta, lta, kurtosis_window, band) and per-phase keys (sta_p ... band_s); see
 * conf/config.h: struct locate_cf_phase.
 *
 * Why all-or-nothing per phase: a config that sets any CF key keeps exactly the values it
 * had before the per-phase keys and the derived defaults existed (the keys it does not
 * set take the old fixed defaults, 0.05 s / 0.5 s / 0.2 s / no filter), so its events do
 * not change; only a phase with no CF key at all gets the derived defaults. */
#include "conf/config.h"

#include <string.h>

static const char *const K_STA[2] = {"locate.sta_p", "locate.sta_s"};
static const char *const K_LTA[2] = {"locate.lta_p", "locate.lta_s"};
static const char *const K_BAND[2] = {"locate.band_p", "locate.band_s"};

static int band_set(const double b[2])
{
    return !(b[0] < 0 && b[1] < 0);
}

void locate_cf_resolve(const struct locate_conf *lc, int phase, struct locate_cf_phase *out)
{
    int p = phase ? 1 : 0;
    double sta = p ? lc->sta_s : lc->sta_p, lta = p ? lc->lta_s : lc->lta_p;
    double kurt = p ? lc->kurtosis_window_s : lc->kurtosis_window_p;
    const double *band = p ? lc->band_s : lc->band_p;
    memset(out, 0, sizeof *out);
    out->key_sta = out->key_lta = out->key_band = "";
    int any = sta > 0 || lta > 0 || kurt > 0 || band_set(band) || lc->sta > 0 || lc->lta > 0 ||
              lc->kurtosis_window > 0 || band_set(lc->band) || lc->cf_scale != CF_SCALE_AUTO;
    if (!any) {
        out->derived = 1;
        out->band[0] = out->band[1] = -1.0;
        out->scale = -1;
        return;
    }
    if (sta > 0) {
        out->sta = sta;
        out->key_sta = K_STA[p];
    } else if (lc->sta > 0) {
        out->sta = lc->sta;
        out->key_sta = "locate.sta";
    } else {
        out->sta = 0.05;
    }
    if (lta > 0) {
        out->lta = lta;
        out->key_lta = K_LTA[p];
    } else if (lc->lta > 0) {
        out->lta = lc->lta;
        out->key_lta = "locate.lta";
    } else {
        out->lta = 0.5;
    }
    out->scale = lc->cf_scale == CF_SCALE_LOG;
    out->kurtosis_window = kurt > 0 ? kurt : lc->kurtosis_window > 0 ? lc->kurtosis_window : 0.2;
    const double *b = band_set(band) ? band : band_set(lc->band) ? lc->band : NULL;
    out->key_band = band_set(band) ? K_BAND[p] : b ? "locate.band" : "";
    out->band[0] = b ? (b[0] > 0 ? b[0] : 0.0) : 0.0;
    out->band[1] = b ? (b[1] > 0 ? b[1] : 0.0) : 0.0;
}
