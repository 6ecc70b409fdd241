/* The payload copy into a slot (io/wire.h wire_copy_f32): on one thread and split over
 * several, the copy is exact at any source alignment, and the finiteness check finds
 * the FIRST non-finite value wherever the threads' ranges fall; a shot with a NaN is
 * rejected naming that sample. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/wire.h"
#include "stream/error.h"

#define N ((size_t)5 << 20) /* 20 MiB of floats: above the parallel threshold */

static float *make_src(size_t n, size_t shift, char **raw)
{
    *raw = malloc(n * sizeof(float) + 8);
    float *v = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(i % 10007) * 0.25f - 17.0f;
    memcpy(*raw + shift, v, n * sizeof(float));
    return v;
}

Test(wire_copy, exact_at_any_alignment_and_thread_count)
{
    cr_assert_eq(wire_copy_threads(1 << 20), 1, "small payloads are copied on one thread");
    int threads[] = {1, 2, 3, 7};
    for (size_t shift = 0; shift < 4; shift += 1) {
        char *raw;
        float *want = make_src(N, shift, &raw);
        float *dst = malloc(N * sizeof(float));
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
            wire_set_copy_threads(threads[t]);
            cr_assert_eq(wire_copy_threads(N * sizeof(float)), threads[t]);
            memset(dst, 0xff, N * sizeof(float)); /* NaN poison: an unwritten cell shows */
            cr_assert_eq(wire_copy_f32(dst, raw + shift, N, true), SIZE_MAX,
                         "shift %zu, %d threads: a finite payload reported bad", shift, threads[t]);
            cr_assert_eq(memcmp(dst, want, N * sizeof(float)), 0, "shift %zu, %d threads", shift, threads[t]);
        }
        wire_set_copy_threads(0);
        free(dst);
        free(want);
        free(raw);
    }
}

Test(wire_copy, first_non_finite_found_across_threads)
{
    char *raw;
    float *v = make_src(N, 0, &raw);
    float *dst = malloc(N * sizeof(float));
    /* Two bad values in different thread ranges: the earlier one must be reported. */
    size_t first = N / 2 + 12345, later = N - 3;
    float *src = (float *)raw;
    src[later] = NAN;
    src[first] = INFINITY;
    int threads[] = {1, 2, 4, 7};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        wire_set_copy_threads(threads[t]);
        cr_assert_eq(wire_copy_f32(dst, src, N, true), first, "%d threads", threads[t]);
        /* Without the check NaN and Inf are copied as they are (gaps in trace blocks). */
        cr_assert_eq(wire_copy_f32(dst, src, N, false), SIZE_MAX);
        cr_assert(isnan(dst[later]) && isinf(dst[first]));
    }
    wire_set_copy_threads(0);
    free(dst);
    free(v);
    free(raw);
}

Test(wire_copy, shot_with_a_nan_rejected_naming_the_sample)
{
    enum { NTR = 64, NSMP = 40000 }; /* 10 MiB of samples: the parallel copy */
    float *rec = calloc(NTR * 3, sizeof(float));
    float *data = calloc((size_t)NTR * NSMP, sizeof(float));
    data[(size_t)37 * NSMP + 123] = NAN;
    data[(size_t)50 * NSMP + 9] = NAN;
    struct wire_header h = {.kind = WIRE_SHOT, .sender_seq = -1,
                            .shot = {.shot_id = 7, .ns = NSMP, .dt = 0.001, .ntr = NTR, .format = WIRE_F32}};
    const void *frames[2] = {rec, data};
    size_t len[2] = {NTR * 3 * sizeof(float), (size_t)NTR * NSMP * sizeof(float)};
    char *slot = malloc(shot_payload_bytes(NTR, NSMP));
    struct shot out = {.rec = (float *)slot, .data = (float *)slot + NTR * 3};
    struct wire_stats st = {0};
    wire_set_copy_threads(4);
    cr_assert_lt(wire_decode_shot(&h, frames, len, 2, 42, &out, &st), 0);
    cr_assert(strstr(err_msg(), "trace 37 sample 123"), "%s", err_msg());
    cr_assert(strstr(err_msg(), "message 42"), "%s", err_msg());
    cr_assert_eq(st.rejected[WIRE_REJ_PAYLOAD], 1);
    data[(size_t)37 * NSMP + 123] = 1.0f;
    data[(size_t)50 * NSMP + 9] = 2.0f;
    cr_assert_eq(wire_decode_shot(&h, frames, len, 2, 43, &out, &st), 0, "%s", err_msg());
    cr_assert_eq(memcmp(out.data, data, len[1]), 0);
    wire_set_copy_threads(0);
    free(slot);
    free(rec);
    free(data);
}
