/* stack_cpu — the fast CPU coherent stack (see stack.h): OpenMP over blocks of
 * neighbouring trial points, SIMD over time with register accumulators
 * (kernels/stack_cpu_tile.h), one variant per instruction set chosen at run time.
 *
 * The build targets a baseline (x86-64-v2) that CI machines and appliances run; the wider
 * variants are compiled with target attributes and picked with __builtin_cpu_supports,
 * so one binary uses AVX-512 where it exists and still runs where it does not. */
#include "kernels/stack.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

/* Trial points per block: their CF windows for one time tile share L1 (16 neighbours of
 * a 25 m grid differ by a few tens of samples of delay). */
#define STACK_CPU_JB 16
/* Rows per block: their windows for a time tile and a block of points (some 100 to 400
 * samples each) stay in L2 while the block's points are summed. */
#define STACK_CPU_RB 256

#if defined(__GNUC__) && defined(__x86_64__)
#define STACK_CPU_X86 1
#endif

/* for the vector types VF / VI of kernels/stack_cpu_tile.h (VFU: the unaligned view of a
 * CF row, whose delays put a tile anywhere) */
#define SPLAT(x) ((VF){0} + (x))
#define SELECT(m, x, y) ((VF)(((VI)(x) & (m)) | ((VI)(y) & ~(m))))
#define ABS(x) ((VF)((VI)(x) & 0x7fffffff))

/* What one call stacks: the rows with at least one valid sample over the samples read
 * (nt + max_delay), in order, and whether each has invalid ones too. */
struct stack_plan {
    const struct stack_args *a;
    int nact, nclean, any_mixed;
    int32_t *act_row;
    uint32_t *act_off; /* act_row x cf_stride */
    unsigned char *mixed;
};

/* Per thread: the maximum over its points at each time (padded to STACK_T_TILE) and the
 * block's read offsets. */
struct stack_scratch {
    float *lv, *la; /* la: the sum (the mean for the geometric N) of the point that holds lv */
    int32_t *li;
    uint32_t *off;
};

/* The reference's coh for point J (its loop, for the rare maximum of zero whose sign
 * depends on which time reached it first). */
static float stack_cpu_coh_one(const struct stack_args *a, size_t j)
{
    float cmax = -INFINITY;
    for (int t = 0; t < a->nt; t++) {
        float sum = 0.0f;
        int cnt = 0;
        for (int r = 0; r < a->nrow; r++) {
            float v = a->cf[(size_t)r * a->cf_stride + a->delay[(size_t)r * a->nj_pad + j] + (size_t)t];
            int ok = v == v;
            sum += ok ? v : 0.0f;
            cnt += ok;
        }
        float v = sum;
        if (a->norm != STACK_NORM_NONE) {
            v = cnt ? sum / (float)cnt : 0.0f;
            if (cnt && a->norm == STACK_NORM_GEOMETRIC)
                v = expf(v);
        }
        cmax = v > cmax ? v : cmax;
    }
    return cmax;
}

#define TILE_FN stack_tile_generic
#define TILE_ATTR
#define TILE_VB 16
#define TILE_NV 4
#include "kernels/stack_cpu_tile.h"
#undef TILE_FN
#undef TILE_ATTR
#undef TILE_NV
#undef TILE_VB

#ifdef STACK_CPU_X86
#define TILE_FN stack_tile_avx2
#define TILE_ATTR __attribute__((target("avx2")))
#define TILE_VB 32
#define TILE_NV 4
#include "kernels/stack_cpu_tile.h"
#undef TILE_FN
#undef TILE_ATTR
#undef TILE_NV
#undef TILE_VB

#define TILE_FN stack_tile_avx512
#define TILE_ATTR __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq")))
#define TILE_VB 64
#define TILE_NV 4
#include "kernels/stack_cpu_tile.h"
#undef TILE_FN
#undef TILE_ATTR
#undef TILE_NV
#undef TILE_VB
#endif

typedef void (*stack_tile_fn)(const struct stack_plan *, struct stack_scratch *, size_t, int);

const char *stack_cpu_isa_name(int isa)
{
    switch (isa) {
    case STACK_CPU_GENERIC: return "generic";
    case STACK_CPU_AVX2: return "avx2";
    case STACK_CPU_AVX512: return "avx512";
    }
    return NULL;
}

int stack_cpu_isa_supported(int isa)
{
    switch (isa) {
    case STACK_CPU_GENERIC: return 1;
#ifdef STACK_CPU_X86
    case STACK_CPU_AVX2: __builtin_cpu_init(); return __builtin_cpu_supports("avx2");
    case STACK_CPU_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
#endif
    }
    return 0;
}

int stack_cpu_isa_best(void)
{
    for (int isa = STACK_CPU_NISA - 1; isa > 0; isa--)
        if (stack_cpu_isa_supported(isa))
            return isa;
    return STACK_CPU_GENERIC;
}

static stack_tile_fn tile_fn(int isa)
{
#ifdef STACK_CPU_X86
    if (isa == STACK_CPU_AVX512)
        return stack_tile_avx512;
    if (isa == STACK_CPU_AVX2)
        return stack_tile_avx2;
#endif
    (void)isa;
    return stack_tile_generic;
}

/* Classify the rows over the samples a call reads. */
static int plan_rows(const struct stack_args *a, struct stack_plan *p)
{
    size_t span = (size_t)a->nt + (size_t)a->max_delay;
    p->a = a;
    p->nact = p->nclean = p->any_mixed = 0;
    p->act_row = malloc((size_t)a->nrow * sizeof *p->act_row);
    p->act_off = malloc((size_t)a->nrow * sizeof *p->act_off);
    p->mixed = malloc((size_t)a->nrow);
    if (!p->act_row || !p->act_off || !p->mixed)
        return -ENOMEM;
    for (int r = 0; r < a->nrow; r++) {
        const float *row = a->cf + (size_t)r * a->cf_stride;
        size_t nan = 0;
        for (size_t i = 0; i < span; i++)
            nan += row[i] != row[i];
        if (nan == span)
            continue;
        p->act_row[p->nact] = r;
        p->act_off[p->nact] = (uint32_t)((size_t)r * a->cf_stride);
        p->mixed[p->nact] = nan > 0;
        p->nclean += nan == 0;
        p->any_mixed |= nan > 0;
        p->nact++;
    }
    return 0;
}

int stack_run_cpu_isa(const struct stack_args *a, int isa)
{
    if (!stack_cpu_isa_supported(isa))
        return err_set(-EINVAL, "stack: instruction set %d is not available on this CPU", isa);
    int nt = a->nt, fail = 0;
    if (nt <= 0)
        return 0;
    /* 32-bit read offsets keep the block's table small; a CF beyond 16 GiB goes the
     * reference's way */
    if ((size_t)a->nrow * a->cf_stride + (size_t)a->max_delay + STACK_T_TILE >= UINT32_MAX)
        return stack_run_cpu_ref(a);
    struct stack_plan p;
    if (plan_rows(a, &p)) {
        free(p.act_row), free(p.act_off), free(p.mixed);
        return err_set(-ENOMEM, "stack: out of memory for %d rows", a->nrow);
    }
    stack_tile_fn fn = tile_fn(isa);
    size_t ntp = ((size_t)nt + STACK_T_TILE - 1) / STACK_T_TILE * STACK_T_TILE;
    size_t nblk = (a->nj + STACK_CPU_JB - 1) / STACK_CPU_JB, next = 0;
    float *gv = a->max_val;
    int32_t *gi = a->max_idx;
    for (int t = 0; t < nt; t++) {
        gv[t] = -INFINITY;
        gi[t] = -1;
    }
#pragma omp parallel
    {
        struct stack_scratch w;
        w.lv = aligned_alloc(64, ntp * sizeof(float));
        w.li = aligned_alloc(64, ntp * sizeof(int32_t));
        w.la = aligned_alloc(64, ntp * sizeof(float));
        w.off = malloc(((size_t)p.nact + 1) * STACK_CPU_JB * sizeof(uint32_t));
        if (!w.lv || !w.li || !w.la || !w.off) {
#pragma omp atomic write
            fail = 1;
        }
#pragma omp barrier
        if (!fail) {
            for (size_t t = 0; t < ntp; t++) {
                w.lv[t] = w.la[t] = -INFINITY;
                w.li[t] = -1;
            }
            /* blocks handed out in order from a shared counter: each thread sees its
             * points in increasing order, which the maxima's tie rule relies on */
            for (;;) {
                size_t b;
#pragma omp atomic capture
                b = next++;
                if (b >= nblk)
                    break;
                size_t j0 = b * STACK_CPU_JB;
                int jn = a->nj - j0 < STACK_CPU_JB ? (int)(a->nj - j0) : STACK_CPU_JB;
                fn(&p, &w, j0, jn);
            }
#pragma omp critical
            for (int t = 0; t < nt; t++)
                if (w.li[t] >= 0 && (w.lv[t] > gv[t] || (w.lv[t] == gv[t] && w.li[t] < gi[t]))) {
                    gv[t] = w.lv[t];
                    gi[t] = w.li[t];
                }
        }
        free(w.lv);
        free(w.li);
        free(w.la);
        free(w.off);
    }
    free(p.act_row), free(p.act_off), free(p.mixed);
    if (fail)
        return err_set(-ENOMEM, "stack: out of memory for %d times", nt);
    for (int t = 0; t < nt; t++)
        if (gi[t] < 0)
            gv[t] = 0.0f;
    return 0;
}

int stack_run_cpu(const struct stack_args *a)
{
    return stack_run_cpu_isa(a, stack_cpu_isa_best());
}
