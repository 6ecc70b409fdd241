/* Wire hardening (issue 12): a header field of the wrong type is reported as such (not
 * as "missing"), and an out-header (image / coherence) whose n, at, d or o are out of
 * range, or whose payload frames do not match them, is refused before anyone indexes a
 * buffer with them. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/wire.h"
#include "stream/error.h"

static int parse(const char *js, struct wire_header *h, struct wire_stats *st)
{
    return wire_parse_header(js, strlen(js), 7, h, st);
}

Test(wire_hardening, version_of_the_wrong_type_is_not_missing)
{
    struct wire_header h;
    struct wire_stats st = {0};
    cr_assert_lt(parse("{\"type\":\"end\",\"v\":\"1\"}", &h, &st), 0);
    cr_assert_eq(st.rejected[WIRE_REJ_VERSION], 1);
    cr_assert(strstr(err_msg(), "missing") == NULL, "%s", err_msg());
    cr_assert(strstr(err_msg(), "\"v\" is a string") != NULL, "%s", err_msg());
    cr_assert(strstr(err_msg(), "message 7:") != NULL, "%s", err_msg());
    /* absent stays "missing" */
    cr_assert_lt(parse("{\"type\":\"end\"}", &h, &st), 0);
    cr_assert(strstr(err_msg(), "\"v\" missing") != NULL, "%s", err_msg());
    /* a real with a fraction is not an integer */
    cr_assert_lt(parse("{\"type\":\"end\",\"v\":1.5}", &h, &st), 0);
    cr_assert(strstr(err_msg(), "\"v\" is a non-integral number") != NULL, "%s", err_msg());
    cr_assert_eq(st.rejected[WIRE_REJ_VERSION], 3);
}

/* Each field of the wrong type is named, with the type it has and the one expected. */
Test(wire_hardening, each_field_type_error_names_the_field)
{
    static const char *const shot_ok[][2] = {
        {"shot_id", "1"}, {"ns", "10"}, {"dt", "0.1"}, {"ntr", "2"},
        {"src", "[0,0,0]"}, {"format", "\"f32\""}};
    struct {
        const char *field, *bad, *says;
        enum wire_reject why;
    } cases[] = {
        {"shot_id", "\"1\"", "\"shot_id\" is a string, expected an integer", WIRE_REJ_FIELD},
        {"ns", "true", "\"ns\" is a boolean, expected an integer", WIRE_REJ_FIELD},
        {"ntr", "[2]", "\"ntr\" is an array, expected an integer", WIRE_REJ_FIELD},
        {"dt", "\"0.1\"", "\"dt\" is a string, expected a number", WIRE_REJ_FIELD},
        {"src", "{}", "\"src\" is an object, expected an array of 3 numbers", WIRE_REJ_FIELD},
        {"src", "[0,\"a\",0]", "\"src\"[1] is a string, expected a number", WIRE_REJ_FIELD},
        {"format", "5", "\"format\" is an integer, expected a string", WIRE_REJ_FIELD},
        {"ns", "null", "\"ns\" is null, expected an integer", WIRE_REJ_FIELD},
    };
    struct wire_stats st = {0};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char js[512];
        int k = snprintf(js, sizeof js, "{\"type\":\"shot\",\"v\":1");
        for (size_t f = 0; f < 6; f++)
            k += snprintf(js + k, sizeof js - (size_t)k, ",\"%s\":%s", shot_ok[f][0],
                          strcmp(shot_ok[f][0], cases[c].field) == 0 ? cases[c].bad
                                                                     : shot_ok[f][1]);
        snprintf(js + k, sizeof js - (size_t)k, "}");
        struct wire_header h;
        uint64_t before = st.rejected[cases[c].why];
        cr_assert_lt(parse(js, &h, &st), 0, "accepted: %s", js);
        cr_assert_eq(st.rejected[cases[c].why], before + 1, "%s: %s", js, err_msg());
        cr_assert(strstr(err_msg(), cases[c].says) != NULL, "%s\n  got: %s", js, err_msg());
    }
    /* missing fields are named too */
    struct wire_header h;
    cr_assert_lt(parse("{\"type\":\"shot\",\"v\":1,\"shot_id\":1,\"ns\":10,\"dt\":0.1,\"src\":[0,0,0],"
                       "\"format\":\"f32\"}", &h, &st), 0);
    cr_assert(strstr(err_msg(), "\"ntr\" missing") != NULL, "%s", err_msg());
    /* type and the trace-block fields */
    cr_assert_lt(parse("{\"type\":3,\"v\":1}", &h, &st), 0);
    cr_assert(strstr(err_msg(), "\"type\" is an integer, expected a string") != NULL, "%s",
              err_msg());
    cr_assert_lt(parse("{\"type\":\"traces\",\"v\":1,\"t0_ns\":\"0\",\"dt\":0.01,\"nrec\":2,\"ns\":5,"
                       "\"format\":\"f32\"}", &h, &st), 0);
    cr_assert(strstr(err_msg(), "\"t0_ns\" is a string, expected an integer") != NULL, "%s",
              err_msg());
    cr_assert_lt(parse("{\"type\":\"traces\",\"v\":1,\"t0_ns\":0,\"dt\":0.01,\"nrec\":2,\"ns\":5,"
                       "\"format\":\"f32\",\"seq\":\"3\"}", &h, &st), 0);
    cr_assert(strstr(err_msg(), "\"seq\" is a string, expected an integer") != NULL, "%s",
              err_msg());
}

static int parse_vol(const char *js, struct wire_volume_hdr *h)
{
    return wire_parse_volume(js, strlen(js), h);
}

#define VOL(n, d, o, extra)                                                                   \
    "{\"seq\":5,\"shots\":2,\"n\":" n ",\"d\":" d ",\"o\":" o ",\"dtype\":\"f32\","           \
    "\"final\":false" extra "}"

Test(wire_hardening, volume_header_fields_range_checked)
{
    struct wire_volume_hdr h;
    cr_assert_eq(parse_vol(VOL("[4,5,6]", "[1,2,3]", "[0,0,0]", ",\"slices\":true,\"at\":[3,4,5]"),
                           &h), 0, "%s", err_msg());
    cr_assert_eq(h.at[0], 3);
    cr_assert_eq(h.at[2], 5);
    const struct {
        const char *js, *says;
    } bad[] = {
        {VOL("[4,5,6]", "[1,2,3]", "[0,0,0]", ",\"slices\":true,\"at\":[4,0,0]"), "at[0] = 4"},
        {VOL("[4,5,6]", "[1,2,3]", "[0,0,0]", ",\"slices\":true,\"at\":[0,-1,0]"), "at[1] = -1"},
        {VOL("[4,5,6]", "[1,2,3]", "[0,0,0]", ",\"slices\":true,\"at\":[0,0,600000]"),
         "at[2] = 600000"},
        {VOL("[4,5,6]", "[1,2,3]", "[0,0,0]", ",\"slices\":true"), "\"at\""},
        {VOL("[4,5,6]", "[1,2,3]", "[0,0,0]", ",\"slices\":true,\"at\":[0,\"1\",0]"), "\"at\""},
        {VOL("[0,5,6]", "[1,2,3]", "[0,0,0]", ""), "n[0] = 0"},
        {VOL("[4,-5,6]", "[1,2,3]", "[0,0,0]", ""), "n[1] = -5"},
        {VOL("[100000,100000,100000]", "[1,2,3]", "[0,0,0]", ""), "cells"},
        {VOL("[4,5,6]", "[1,0,3]", "[0,0,0]", ""), "d[1]"},
        {VOL("[4,5,6]", "[1,2,-3]", "[0,0,0]", ""), "d[2]"},
        {VOL("[4,5,6]", "[1,2,3]", "[0,0,\"x\"]", ""), "\"o\"[2] is a string"},
        {"{\"seq\":5,\"shots\":2,\"n\":[4,5,6],\"d\":[1,2,3],\"o\":[0,0,0],\"final\":1}",
         "\"final\" is an integer"},
        {VOL("[4,5]", "[1,2,3]", "[0,0,0]", ""), "n"},
        {"{\"seq\":\"5\",\"shots\":2,\"n\":[4,5,6],\"d\":[1,2,3],\"o\":[0,0,0],\"final\":false}",
         "seq"},
        {"{\"seq\":-5,\"shots\":2,\"n\":[4,5,6],\"d\":[1,2,3],\"o\":[0,0,0],\"final\":false}",
         "seq"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_lt(parse_vol(bad[i].js, &h), 0, "accepted: %s", bad[i].js);
        cr_assert(strstr(err_msg(), bad[i].says) != NULL, "%s\n  got: %s", bad[i].js, err_msg());
    }
}

Test(wire_hardening, volume_payload_sizes_checked)
{
    struct wire_volume_hdr h = {.seq = 9, .n = {4, 5, 6}, .d = {1, 1, 1}};
    size_t whole = 4 * 5 * 6 * 4;
    cr_assert_eq(wire_check_volume_payload(&h, &whole, 1), 0, "%s", err_msg());
    size_t shorter = whole - 4;
    cr_assert_eq(wire_check_volume_payload(&h, &shorter, 1), -EINVAL);
    cr_assert(strstr(err_msg(), "seq 9") != NULL, "%s", err_msg());
    size_t two[2] = {whole, whole};
    cr_assert_eq(wire_check_volume_payload(&h, two, 2), -EINVAL);
    h.slices = true;
    size_t sl[3] = {4 * 5 * 4, 4 * 6 * 4, 5 * 6 * 4};
    cr_assert_eq(wire_check_volume_payload(&h, sl, 3), 0, "%s", err_msg());
    sl[2] += 4;
    cr_assert_eq(wire_check_volume_payload(&h, sl, 3), -EINVAL);
    cr_assert(strstr(err_msg(), "yz") != NULL, "%s", err_msg());
    cr_assert_eq(wire_check_volume_payload(&h, sl, 2), -EINVAL);
}
