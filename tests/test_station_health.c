/* Per-station health (stream/station_health.h): last valid sample and gaps, counted
 * from NaN, masks, dead channels and time jumps, by station name or by position; the
 * status object bounded to the worst stations and the rest summed up. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stream/station_health.h"

#define T0 1700000000000000000LL /* ns */

static struct station_set make_set(int n)
{
    struct station_set s = {.n = n, .st = calloc((size_t)n, sizeof(struct station))};
    for (int i = 0; i < n; i++) {
        snprintf(s.st[i].name, sizeof s.st[i].name, "S%02d", i);
        s.st[i].x = 100.0 * i;
        s.st[i].y = 50.0 * i;
        s.st[i].z = -10.0 * i;
    }
    return s;
}

static json_t *status(struct station_health *h, int max)
{
    char *js = station_health_status(h, max);
    cr_assert(js);
    json_t *o = json_loads(js, 0, NULL);
    cr_assert(json_is_object(o), "%s", js);
    free(js);
    return o;
}

/* The listed entry called NAME. */
static json_t *entry(json_t *o, const char *name)
{
    json_t *list = json_object_get(o, "list"), *e;
    size_t i;
    json_array_foreach(list, i, e) if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0) return e;
    cr_assert_fail("%s is not listed", name);
    return NULL;
}

Test(station_health, gaps_and_last_samples_per_station)
{
    struct station_set set = make_set(3);
    struct station_health *h;
    cr_assert_eq(station_health_create(&h, &set), 0);
    /* Two channels of S00 (Z, N), one of S01, one of a station not in the file. */
    struct trace_channel ch[4] = {{"", "S00", "", "HHZ"}, {"", "S00", "", "HHN"}, {"", "S01", "", "HHZ"},
                                  {"", "XX", "", "HHZ"}};
    enum { NS = 10 };
    float data[4 * NS];
    uint8_t mask[4 * NS];
    for (int i = 0; i < 4 * NS; i++) {
        data[i] = 1.0f;
        mask[i] = 1;
    }
    data[1 * NS + 3] = data[1 * NS + 4] = NAN; /* S00 N: one gap of 2 samples */
    mask[1 * NS + 8] = 0;                      /* S00 N: a second gap (1 sample) */
    data[2 * NS + 9] = NAN;                    /* S01: ends missing: last valid at k = 8 */
    struct trace_block b = {.seq = 0, .t0_ns = T0, .dt = 0.01, .nrec = 4, .ns = NS, .chan = ch, .data = data,
                            .mask = mask};
    station_health_block(h, &b);
    json_t *o = status(h, 32);
    cr_expect_eq(json_integer_value(json_object_get(o, "n")), 3);
    json_t *s0 = entry(o, "S00"), *s1 = entry(o, "S01"), *s2 = entry(o, "S02");
    cr_expect_eq(json_integer_value(json_object_get(s0, "channels")), 2);
    cr_expect_eq(json_integer_value(json_object_get(s0, "gaps")), 2, "the worst channel (N) has 2 gaps");
    cr_expect_float_eq(json_number_value(json_object_get(s0, "gap_s")), 0.03, 1e-9);
    /* worst channel: N's last valid sample is k = 9, Z's k = 9: 0.09 s */
    cr_expect_float_eq(json_number_value(json_object_get(s0, "last")), 1e-9 * (double)T0 + 0.09, 1e-6);
    cr_expect_float_eq(json_number_value(json_object_get(s1, "last")), 1e-9 * (double)T0 + 0.08, 1e-6);
    cr_expect_eq(json_integer_value(json_object_get(s1, "gaps")), 1);
    cr_expect(json_is_null(json_object_get(s2, "last")), "S02 has no channel: no data");
    cr_expect_eq(json_integer_value(json_object_get(s2, "channels")), 0);
    /* the worst first: S02 (no data), then S01 (the oldest last sample) */
    json_t *list = json_object_get(o, "list");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(list, 0), "name")), "S02");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(list, 1), "name")), "S01");
    json_decref(o);

    /* The next block 0.5 s late (a jump: every channel misses 0.4 s), S01's channel
     * dead for it; S01 was already in a gap (its last sample): no new gap there. */
    uint8_t ok[4] = {1, 1, 0, 1};
    for (int i = 0; i < 4 * NS; i++) {
        data[i] = 1.0f;
        mask[i] = 1;
    }
    b.seq = 1;
    b.t0_ns = T0 + 500000000LL;
    b.chan_ok = ok;
    station_health_block(h, &b);
    o = status(h, 32);
    s0 = entry(o, "S00");
    s1 = entry(o, "S01");
    cr_expect_eq(json_integer_value(json_object_get(s0, "gaps")), 3, "N: 2 gaps, then the jump");
    cr_expect_float_eq(json_number_value(json_object_get(s0, "gap_s")), 0.03 + 0.4, 1e-9);
    cr_expect_float_eq(json_number_value(json_object_get(s0, "last")), 1e-9 * (double)T0 + 0.59, 1e-6);
    cr_expect_eq(json_integer_value(json_object_get(s1, "gaps")), 1, "S01's gap goes on: still one");
    cr_expect_float_eq(json_number_value(json_object_get(s1, "gap_s")), 0.01 + 0.4 + 0.1, 1e-9);
    cr_expect_float_eq(json_number_value(json_object_get(s1, "last")), 1e-9 * (double)T0 + 0.08, 1e-6);
    json_decref(o);
    station_health_destroy(h);
    free(set.st);
}

Test(station_health, by_position_bounded_list_and_positions)
{
    struct station_set set = make_set(40);
    struct station_health *h;
    cr_assert_eq(station_health_create(&h, &set), 0);
    enum { R = 40, NS = 4 };
    float *data = calloc(R * NS, sizeof(float));
    data[7 * NS + 1] = NAN; /* station 7 (by position): one gap */
    struct trace_block b = {.t0_ns = T0, .dt = 0.004, .nrec = R, .ns = NS, .data = data};
    station_health_block(h, &b);
    json_t *o = status(h, 5);
    json_t *list = json_object_get(o, "list"), *more = json_object_get(o, "more");
    cr_expect_eq(json_array_size(list), 5, "at most 5 listed");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(list, 0), "name")), "S07",
                     "the station with a gap first");
    cr_expect_eq(json_integer_value(json_object_get(more, "n")), 35);
    cr_expect_eq(json_integer_value(json_object_get(more, "gaps")), 0);
    cr_expect_float_eq(json_number_value(json_object_get(more, "last")), 1e-9 * (double)T0 + 0.012, 1e-6);
    json_decref(o);
    char *pos = station_health_positions(h);
    json_t *a = json_loads(pos, 0, NULL);
    cr_assert_eq(json_array_size(a), 40);
    json_t *p = json_array_get(a, 12);
    cr_expect_str_eq(json_string_value(json_object_get(p, "name")), "S12");
    cr_expect_float_eq(json_number_value(json_object_get(p, "x")), 1200.0, 1e-9);
    cr_expect_float_eq(json_number_value(json_object_get(p, "y")), 600.0, 1e-9);
    cr_expect_float_eq(json_number_value(json_object_get(p, "z")), -120.0, 1e-9);
    json_decref(a);
    free(pos);
    free(data);
    station_health_destroy(h);
    free(set.st);
}
