/* stack — kernel names and the CPU reference of the coherent stack (see stack.h).
 *
 * stack_run_cpu_ref is the first CPU version, kept unchanged as the oracle of the fast
 * path (kernels/stack_cpu.c): tests/test_stack_cpu.c compares the two bit for bit on
 * random inputs.  It is simple on purpose: one trial point at a time, every row summed
 * into a memory accumulator over all nt times. */
#include "kernels/stack.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

const char *stack_kernel_name(int kernel)
{
    switch (kernel) {
    case STACK_KERNEL_STAGED: return "staged";
    case STACK_KERNEL_DIRECT: return "direct";
    case STACK_KERNEL_STAGED_DB: return "staged-db";
    }
    return NULL;
}

int stack_kernel_parse(const char *name)
{
    for (int k = 0; k < 3; k++)
        if (!strcmp(name, stack_kernel_name(k)))
            return k;
    return -1;
}

static inline float norm_value(int norm, float sum, int cnt)
{
    if (norm == STACK_NORM_NONE)
        return sum;
    if (cnt == 0)
        return 0.0f;
    float m = sum / (float)cnt;
    return norm == STACK_NORM_GEOMETRIC ? expf(m) : m;
}

int stack_run_cpu_ref(const struct stack_args *a)
{
    int nt = a->nt, fail = 0;
    if (nt <= 0)
        return 0;
    float *gv = a->max_val;
    int32_t *gi = a->max_idx;
    for (int t = 0; t < nt; t++) {
        gv[t] = -INFINITY;
        gi[t] = -1;
    }
#pragma omp parallel
    {
        float *acc = malloc((size_t)nt * sizeof(float)), *lv = malloc((size_t)nt * sizeof(float));
        int *cnt = malloc((size_t)nt * sizeof(int));
        int32_t *li = malloc((size_t)nt * sizeof(int32_t));
        if (!acc || !lv || !cnt || !li) {
#pragma omp atomic write
            fail = 1;
        }
#pragma omp barrier
        if (!fail) {
            for (int t = 0; t < nt; t++) {
                lv[t] = -INFINITY;
                li[t] = -1;
            }
#pragma omp for schedule(dynamic, 8)
            for (size_t j = 0; j < a->nj; j++) {
                memset(acc, 0, (size_t)nt * sizeof(float));
                memset(cnt, 0, (size_t)nt * sizeof(int));
                for (int r = 0; r < a->nrow; r++) {
                    const float *row = a->cf + (size_t)r * a->cf_stride + a->delay[(size_t)r * a->nj_pad + j];
                    for (int t = 0; t < nt; t++) {
                        float v = row[t];
                        int ok = v == v;
                        acc[t] += ok ? v : 0.0f;
                        cnt[t] += ok;
                    }
                }
                float cmax = -INFINITY;
                for (int t = 0; t < nt; t++) {
                    float v = norm_value(a->norm, acc[t], cnt[t]);
                    if (v > lv[t] || (v == lv[t] && (int32_t)j < li[t])) {
                        lv[t] = v;
                        li[t] = (int32_t)j;
                    }
                    cmax = v > cmax ? v : cmax;
                }
                a->coh[j] = cmax;
            }
#pragma omp critical
            for (int t = 0; t < nt; t++)
                if (li[t] >= 0 && (lv[t] > gv[t] || (lv[t] == gv[t] && li[t] < gi[t]))) {
                    gv[t] = lv[t];
                    gi[t] = li[t];
                }
        }
        free(acc);
        free(lv);
        free(cnt);
        free(li);
    }
    if (fail)
        return err_set(-ENOMEM, "stack: out of memory for %d times", nt);
    for (int t = 0; t < nt; t++)
        if (gi[t] < 0)
            gv[t] = 0.0f;
    return 0;
}
