#include "tests/gpu/gpu_rtm_shot.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/wavelet.h"

void gpu_rtm_synth_shot(struct shot *sh, int64_t id, double d, double dt)
{
    memset(sh, 0, sizeof *sh);
    sh->id = id;
    sh->ntr = 40;
    sh->dt = dt;
    sh->ns = 301;
    sh->src[0] = 24 * d;
    sh->src[1] = 10 * d;
    sh->src[2] = 20.0;
    sh->rec = malloc((size_t)sh->ntr * 3 * 4);
    sh->data = malloc((size_t)sh->ntr * sh->ns * 4);
    cr_assert(sh->rec && sh->data);
    for (int r = 0; r < sh->ntr; r++) {
        double x = (4 + r) * d;
        sh->rec[3 * r] = (float)x;
        sh->rec[3 * r + 1] = (float)(10 * d);
        sh->rec[3 * r + 2] = 20.0f;
        double t0 = 0.1 + hypot(x - sh->src[0], 420.0) / 2000.0;
        for (int k = 0; k < sh->ns; k++)
            sh->data[(size_t)r * sh->ns + k] = (float)wavelet_ricker(k * sh->dt, 15.0, t0);
    }
}
