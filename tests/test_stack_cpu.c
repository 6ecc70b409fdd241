/* The fast CPU stack (kernels/stack_cpu.c) gives the reference's result bit for bit
 * (it sums the rows in the same order) for every instruction-set variant this CPU runs,
 * on random inputs: any sizes (not multiples of the tiles), NaN samples, stretches and
 * whole rows, negative CF values, every normalization, 1 and 2 threads; and it finds a
 * planted event where it was planted, with the stack value the arithmetic gives. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/stack.h"
#include "stream/error.h"

static unsigned rng = 7u;
static unsigned urnd(unsigned n)
{
    rng = rng * 1664525u + 1013904223u;
    return (rng >> 8) % n;
}
static float frnd(void)
{
    return (float)urnd(1u << 20) / (float)(1u << 20);
}

struct stack_case {
    struct stack_args a;
    uint16_t *delay;
    float *cf;
};

static void case_alloc(struct stack_case *c, int nrow, size_t nj, int nt, int max_delay)
{
    memset(c, 0, sizeof *c);
    size_t nj_pad = stack_nj_pad(nj), stride = stack_cf_need(nt, max_delay) + urnd(3);
    c->delay = calloc((size_t)nrow * nj_pad, sizeof(uint16_t));
    c->cf = malloc((size_t)nrow * stride * sizeof(float));
    cr_assert(c->delay && c->cf);
    c->a = (struct stack_args){.nrow = nrow, .nj = nj, .nj_pad = nj_pad, .delay = c->delay, .max_delay = max_delay,
                               .cf = c->cf, .cf_stride = stride, .nt = nt};
}

static void case_free(struct stack_case *c)
{
    free(c->delay);
    free(c->cf);
}

/* Run the reference and variant ISA with THREADS threads on C; assert equal bits. */
static void compare(const struct stack_case *c, int isa, int threads, const char *what)
{
    size_t nt = (size_t)c->a.nt, nj = c->a.nj;
    float *v[2] = {malloc(nt * 4), malloc(nt * 4)}, *coh[2] = {malloc(nj * 4), malloc(nj * 4)};
    int32_t *ix[2] = {malloc(nt * 4), malloc(nt * 4)};
    omp_set_num_threads(threads);
    for (int k = 0; k < 2; k++) {
        struct stack_args a = c->a;
        a.max_val = v[k];
        a.max_idx = ix[k];
        a.coh = coh[k];
        int rc = k ? stack_run_cpu_isa(&a, isa) : stack_run_cpu_ref(&a);
        cr_assert_eq(rc, 0, "%s: %s", what, err_msg());
    }
    for (size_t t = 0; t < nt; t++) {
        cr_assert_eq(ix[0][t], ix[1][t], "%s, %s, %d threads: max_idx[%zu] %d vs reference %d", what,
                     stack_cpu_isa_name(isa), threads, t, ix[1][t], ix[0][t]);
        cr_assert(!memcmp(&v[0][t], &v[1][t], 4), "%s, %s: max_val[%zu] %a vs reference %a", what,
                  stack_cpu_isa_name(isa), t, v[1][t], v[0][t]);
    }
    for (size_t j = 0; j < nj; j++)
        cr_assert(!memcmp(&coh[0][j], &coh[1][j], 4), "%s, %s: coh[%zu] %a vs reference %a", what,
                  stack_cpu_isa_name(isa), j, coh[1][j], coh[0][j]);
    for (int k = 0; k < 2; k++)
        free(v[k]), free(coh[k]), free(ix[k]);
    omp_set_num_threads(omp_get_num_procs());
}

Test(stack_cpu, variants_equal_the_reference_bitwise_on_random_inputs, .timeout = 120)
{
    int variants = 0;
    for (int isa = 0; isa < STACK_CPU_NISA; isa++)
        variants += stack_cpu_isa_supported(isa);
    cr_assert(stack_cpu_isa_supported(STACK_CPU_GENERIC));
    cr_assert(stack_cpu_isa_supported(stack_cpu_isa_best()));
    for (int it = 0; it < 48; it++) {
        int nrow = 1 + (int)urnd(30), nt = 1 + (int)urnd(260), max_delay = (int)urnd(150);
        size_t nj = 1 + urnd(200);
        struct stack_case c;
        case_alloc(&c, nrow, nj, nt, max_delay);
        for (int r = 0; r < nrow; r++)
            for (size_t j = 0; j < nj; j++)
                c.delay[(size_t)r * c.a.nj_pad + j] = (uint16_t)urnd((unsigned)max_delay + 1);
        /* invalid samples: none, isolated, a gap, a dead row, everything past the span */
        int kind = it % 4;
        size_t span = (size_t)nt + (size_t)max_delay;
        for (int r = 0; r < nrow; r++) {
            float *row = c.cf + (size_t)r * c.a.cf_stride;
            int dead = kind >= 2 && urnd(4) == 0;
            size_t g0 = urnd((unsigned)span), g1 = g0 + urnd(40);
            for (size_t i = 0; i < c.a.cf_stride; i++) {
                float x = it % 3 == 0 ? frnd() * 3.0f - 1.0f : frnd(); /* negative values too */
                if (i >= span || dead || (kind == 1 && urnd(50) == 0) || (kind == 3 && i >= g0 && i < g1))
                    x = NAN;
                row[i] = x;
            }
        }
        char what[96];
        for (int norm = 0; norm < 3; norm++) {
            c.a.norm = norm;
            snprintf(what, sizeof what, "case %d (%d rows, %zu points, %d times, delays <= %d, norm %d)", it, nrow,
                     nj, nt, max_delay, norm);
            for (int isa = 0; isa < STACK_CPU_NISA; isa++)
                if (stack_cpu_isa_supported(isa))
                    compare(&c, isa, 1 + it % 2, what);
        }
        case_free(&c);
    }
    cr_log_info("stack_cpu: %d instruction-set variants compared", variants);
}

/* Equal values everywhere: the smallest point wins at every time; a CF of zeros of both
 * signs gives coherences of zero whose sign the reference takes from the first time. */
Test(stack_cpu, ties_and_signed_zeros_as_the_reference)
{
    struct stack_case c;
    case_alloc(&c, 5, 70, 90, 20);
    for (int r = 0; r < 5; r++)
        for (size_t j = 0; j < 70; j++)
            c.delay[(size_t)r * c.a.nj_pad + j] = (uint16_t)urnd(21);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < 5 * c.a.cf_stride; i++)
            c.cf[i] = pass ? (urnd(2) ? -0.0f : 0.0f) : 0.75f;
        for (int norm = 0; norm < 3; norm++) {
            c.a.norm = norm;
            for (int isa = 0; isa < STACK_CPU_NISA; isa++)
                if (stack_cpu_isa_supported(isa))
                    compare(&c, isa, 2, pass ? "signed zeros" : "constant CF");
        }
    }
    float v[90], coh[70];
    int32_t ix[90];
    c.a.max_val = v, c.a.max_idx = ix, c.a.coh = coh;
    c.a.norm = STACK_NORM_COUNT;
    for (size_t i = 0; i < 5 * c.a.cf_stride; i++)
        c.cf[i] = 0.75f;
    cr_assert_eq(stack_run_cpu(&c.a), 0);
    for (int t = 0; t < 90; t++)
        cr_assert(ix[t] == 0 && v[t] == 0.75f, "t %d: point %d value %g", t, ix[t], v[t]);
    case_free(&c);
}

/* An event planted at point J* and time T*: CF 1 at T* + D(r, J*) on every row, 0
 * elsewhere.  The stack there is 1 (count), the sum is nrow (none), exp(1) (geometric),
 * and no point does better. */
Test(stack_cpu, planted_event_found_with_its_value)
{
    const int nrow = 9, nt = 200, maxd = 60, ts = 123;
    const size_t nj = 333, js = 217;
    struct stack_case c;
    case_alloc(&c, nrow, nj, nt, maxd);
    for (int r = 0; r < nrow; r++)
        for (size_t j = 0; j < nj; j++)
            c.delay[(size_t)r * c.a.nj_pad + j] = (uint16_t)urnd(maxd + 1);
    float v[200], coh[333];
    int32_t ix[200];
    c.a.max_val = v, c.a.max_idx = ix, c.a.coh = coh;
    const float expect[3] = {(float)nrow, 1.0f, expf(1.0f)};
    for (int norm = 0; norm < 3; norm++) {
        memset(c.cf, 0, (size_t)nrow * c.a.cf_stride * sizeof(float));
        for (int r = 0; r < nrow; r++)
            c.cf[(size_t)r * c.a.cf_stride + ts + c.delay[(size_t)r * c.a.nj_pad + js]] = 1.0f;
        c.a.norm = norm;
        for (int isa = 0; isa < STACK_CPU_NISA; isa++) {
            if (!stack_cpu_isa_supported(isa))
                continue;
            cr_assert_eq(stack_run_cpu_isa(&c.a, isa), 0, "%s", err_msg());
            cr_assert_eq(v[ts], expect[norm], "%s norm %d: %g", stack_cpu_isa_name(isa), norm, v[ts]);
            cr_assert_eq(coh[js], expect[norm]);
            /* the winner is J* or a point with exactly J*'s delays (then the smaller) */
            size_t w = (size_t)ix[ts];
            for (int r = 0; r < nrow && w != js; r++)
                cr_assert_eq(c.delay[(size_t)r * c.a.nj_pad + w], c.delay[(size_t)r * c.a.nj_pad + js]);
            cr_assert(w <= js);
        }
    }
    case_free(&c);
}

Test(stack_cpu, unknown_variant_refused)
{
    struct stack_args a = {.nt = 1};
    cr_assert_eq(stack_run_cpu_isa(&a, STACK_CPU_NISA), -EINVAL);
    cr_assert_null(stack_cpu_isa_name(STACK_CPU_NISA));
}

/* Values a hair apart (within the margin below which the geometric path takes no expf)
 * and valid -inf samples (the log of a zero CF): still the reference's bits. */
Test(stack_cpu, near_ties_and_infinities_as_the_reference)
{
    struct stack_case c;
    case_alloc(&c, 7, 150, 140, 30);
    for (int r = 0; r < 7; r++)
        for (size_t j = 0; j < 150; j++)
            c.delay[(size_t)r * c.a.nj_pad + j] = (uint16_t)urnd(31);
    for (int pass = 0; pass < 3; pass++) {
        for (size_t i = 0; i < 7 * c.a.cf_stride; i++) {
            float x = 0.5f + (float)urnd(4) * 0x1p-21f;               /* near ties */
            if (pass == 1)
                x = urnd(10) == 0 ? -INFINITY : frnd() - 2.0f;         /* log CF with zeros */
            if (pass == 2)
                x = urnd(3) == 0 ? -INFINITY : urnd(3) == 0 ? INFINITY : frnd(); /* inf - inf = NaN sums */
            c.cf[i] = x;
        }
        for (int norm = 0; norm < 3; norm++) {
            c.a.norm = norm;
            for (int isa = 0; isa < STACK_CPU_NISA; isa++)
                if (stack_cpu_isa_supported(isa))
                    compare(&c, isa, 2, pass == 0 ? "near ties" : pass == 1 ? "-inf samples" : "+-inf samples");
        }
    }
    case_free(&c);
}

/* More rows than one row block of the fast path (STACK_CPU_RB = 256): the sums carry over
 * from block to block, still in row order. */
Test(stack_cpu, many_rows_in_blocks_as_the_reference, .timeout = 60)
{
    for (int kind = 0; kind < 3; kind++) {
        struct stack_case c;
        int nrow = 520 + kind * 37;
        case_alloc(&c, nrow, 37, 75, 40);
        for (int r = 0; r < nrow; r++)
            for (size_t j = 0; j < 37; j++)
                c.delay[(size_t)r * c.a.nj_pad + j] = (uint16_t)urnd(41);
        for (int r = 0; r < nrow; r++) {
            int dead = kind == 2 && urnd(5) == 0;
            for (size_t i = 0; i < c.a.cf_stride; i++)
                c.cf[(size_t)r * c.a.cf_stride + i] = dead || (kind == 1 && urnd(60) == 0) ? NAN : frnd();
        }
        for (int norm = 0; norm < 3; norm++) {
            c.a.norm = norm;
            for (int isa = 0; isa < STACK_CPU_NISA; isa++)
                if (stack_cpu_isa_supported(isa))
                    compare(&c, isa, 2, kind == 0 ? "520 valid rows" : kind == 1 ? "557 rows, NaN samples"
                                                                                 : "594 rows, dead ones");
        }
        case_free(&c);
    }
}
