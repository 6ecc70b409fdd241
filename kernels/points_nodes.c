/* points_nodes — single-node point sets (kernels/points_nodes.h). */
#include "kernels/points_nodes.h"

#include <errno.h>
#include <stdlib.h>

#include "kernels/wave.h"
#include "kernels/wave_internal.h"
#include "stream/error.h"

int wave_points_create_nodes(struct wave_sim *s, const int *ijk, size_t n, struct wave_points **out)
{
    *out = NULL;
    struct wave_points *pts = calloc(1, sizeof *pts);
    if (!pts)
        return err_set(-ENOMEM, "wave nodes: out of memory");
    pts->s = s;
    pts->n = n;
    pts->ns = 1;
    pts->nsa[0] = pts->nsa[1] = pts->nsa[2] = 1;
    pts->base = malloc(sizeof(int) * 3 * (n ? n : 1));
    pts->w = malloc(sizeof(float) * 3 * (n ? n : 1));
    if (!pts->base || !pts->w) {
        wave_points_destroy(pts);
        return err_set(-ENOMEM, "wave nodes: out of memory");
    }
    const struct wave_layout *L = &s->L;
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            int b = ijk[3 * i + a] + L->off[a];
            if (b < L->pad_off[a] || b >= L->pad_off[a] + L->npad[a]) {
                wave_points_destroy(pts);
                return err_set(-EINVAL, "wave nodes: node %zu (%d, %d, %d) lies outside the grid and its layers "
                               "along %c", i, ijk[3 * i], ijk[3 * i + 1], ijk[3 * i + 2], "xyz"[a]);
            }
            pts->base[3 * i + a] = b;
            pts->w[3 * i + a] = 1.0f;
        }
#ifdef SEISLIVE_CUDA
    if (s->dev->kind == SL_DEVICE_CUDA) {
        int rc = wave_cu_points_upload(pts);
        if (rc < 0) {
            wave_points_destroy(pts);
            return rc;
        }
    }
#endif
    *out = pts;
    return 0;
}
