/* prop_wave — what the two propagator adapters over the wave_sim shell (prop_acoustic.c,
 * prop_tti.c) translate alike: the grid, the face kinds and the buffer/injection flags of
 * kernels/propagator.h into those of kernels/wave.h.  Not for users. */
#ifndef SEISLIVE_PROP_WAVE_H
#define SEISLIVE_PROP_WAVE_H

#include <string.h>

#include "kernels/propagator.h"
#include "kernels/wave.h"

/* The wave face kind of prop face kind K (propagator.h's order; K checked by the caller). */
static inline int prop_wave_face(int k)
{
    static const int of[] = {
        [PROP_FACE_CPML] = WAVE_FACE_CPML, [PROP_FACE_FREE] = WAVE_FACE_FREE, [PROP_FACE_RANDOM] = WAVE_FACE_RANDOM,
        [PROP_FACE_NONE] = WAVE_FACE_NONE, [PROP_FACE_HALO] = WAVE_FACE_HALO,
    };
    return of[k];
}

/* The WAVE_BUF_DEVICE / WAVE_INJECT_PHYSICAL flags of prop FLAGS. */
static inline unsigned prop_wave_flags(unsigned flags)
{
    return ((flags & PROP_BUF_DEVICE) ? WAVE_BUF_DEVICE : 0u) |
           ((flags & PROP_INJECT_PHYSICAL) ? WAVE_INJECT_PHYSICAL : 0u);
}

/* WP zeroed, then the grid of P (size, spacing, origin, place in the whole grid). */
static inline void prop_wave_grid(const struct prop_params *p, struct wave_params *wp)
{
    memset(wp, 0, sizeof *wp);
    const struct prop_grid *g = &p->grid;
    for (int a = 0; a < 3; a++) {
        wp->n[a] = g->n[a];
        wp->d[a] = g->d[a];
        wp->o[a] = g->o[a];
        wp->origin[a] = g->origin[a];
        wp->global_n[a] = g->global_n[a];
    }
}

#endif
