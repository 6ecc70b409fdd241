/* stack_problem — the benchmark problems of the CPU stack (see stack_problem.h). */
#include "tools/stack_problem.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/stack.h"

int stack_problem_preset(const char *name, struct stack_problem *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->nphase = 2;
    p->fs = 500.0;
    p->nt = 500;
    if (!strcmp(name, "iceland")) {
        int n[3] = {57, 62, 57};
        for (int a = 0; a < 3; a++) {
            p->n[a] = n[a];
            p->d[a] = 25.0;
        }
        p->nsta = 12;
        p->vel[0] = 3841.0;
        p->vel[1] = 1970.0;
        return 0;
    }
    if (!strcmp(name, "array50")) {
        int n[3] = {61, 61, 41};
        for (int a = 0; a < 3; a++) {
            p->n[a] = n[a];
            p->d[a] = 50.0;
        }
        p->o[2] = 500.0;
        p->nsta = 50;
        p->vel[0] = 4000.0;
        p->vel[1] = 2300.0;
        return 0;
    }
    return -EINVAL;
}

double stack_problem_sums(const struct stack_problem *p)
{
    return (double)p->nj * (double)p->nt * (double)p->nrow;
}

int stack_problem_build(struct stack_problem *p)
{
    unsigned rng = 12345u;
#define URAND() (rng = rng * 1664525u + 1013904223u, (double)(rng >> 8) / 16777216.0)
    p->nrow = p->nsta * p->nphase;
    p->nj = (size_t)p->n[0] * p->n[1] * p->n[2];
    p->nj_pad = stack_nj_pad(p->nj);
    p->sta = malloc((size_t)p->nsta * 3 * sizeof(float));
    p->delay = malloc((size_t)p->nrow * p->nj_pad * sizeof(uint16_t));
    if (!p->sta || !p->delay)
        return -ENOMEM;
    double ext[2] = {(p->n[0] - 1) * p->d[0], (p->n[1] - 1) * p->d[1]};
    int side = (int)ceil(sqrt((double)p->nsta));
    for (int i = 0; i < p->nsta; i++) {
        double gx = (i % side + 0.5) / side, gy = (i / side + 0.5) / side;
        p->sta[3 * i] = (float)(p->o[0] + (gx + 0.3 * (URAND() - 0.5) / side) * ext[0]);
        p->sta[3 * i + 1] = (float)(p->o[1] + (gy + 0.3 * (URAND() - 0.5) / side) * ext[1]);
        p->sta[3 * i + 2] = 0.0f;
    }
    double dt = 1.0 / p->fs;
    long maxd = 0;
    for (int r = 0; r < p->nrow; r++) {
        const float *s = p->sta + 3 * (r / p->nphase);
        double inv = 1.0 / (p->vel[r % p->nphase] * dt);
        uint16_t *out = p->delay + (size_t)r * p->nj_pad;
        for (size_t j = 0; j < p->nj_pad; j++) {
            if (j >= p->nj) {
                out[j] = 0;
                continue;
            }
            size_t i = j % (size_t)p->n[0], m = (j / (size_t)p->n[0]) % (size_t)p->n[1],
                   k = j / ((size_t)p->n[0] * p->n[1]);
            double x = p->o[0] + (double)i * p->d[0] - s[0], y = p->o[1] + (double)m * p->d[1] - s[1],
                   z = p->o[2] + (double)k * p->d[2] - s[2];
            long dl = lrint(sqrt(x * x + y * y + z * z) * inv);
            if (dl > 65535)
                return -ERANGE;
            out[j] = (uint16_t)dl;
            maxd = dl > maxd ? dl : maxd;
        }
    }
    p->max_delay = (int)maxd;
    p->stride = stack_cf_need(p->nt, p->max_delay);
    p->cf = malloc((size_t)p->nrow * p->stride * sizeof(float));
    if (!p->cf)
        return -ENOMEM;
    for (size_t i = 0; i < (size_t)p->nrow * p->stride; i++)
        p->cf[i] = (float)(0.5 + URAND());
#undef URAND
    return 0;
}

void stack_problem_free(struct stack_problem *p)
{
    free(p->sta);
    free(p->delay);
    free(p->cf);
    p->sta = NULL;
    p->delay = NULL;
    p->cf = NULL;
}
