/* Wire format: headers round-trip, every malformed header or payload is refused with
 * its reason counted and the message number in the text; SEG-Y payloads decode. */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <segyio/segy.h>
#include <stdlib.h>
#include <string.h>

#include "io/wire.h"
#include "stream/error.h"

static int parse(const char *js, struct wire_header *h, struct wire_stats *st)
{
    return wire_parse_header(js, strlen(js), 42, h, st);
}

Test(wire, shot_header_round_trip)
{
    struct wire_shot_hdr in = {.shot_id = 7, .ns = 300, .dt = 0.002, .ntr = 48,
                               .src = {1.5, -2, 30}, .format = WIRE_F32};
    char *js = wire_encode_shot_header(&in, 9);
    struct wire_header h;
    struct wire_stats st = {0};
    cr_assert_eq(parse(js, &h, &st), 0, "%s", err_msg());
    cr_assert_eq(h.kind, WIRE_SHOT);
    cr_assert_eq(h.sender_seq, 9);
    cr_assert_eq(h.shot.shot_id, 7);
    cr_assert_eq(h.shot.ns, 300);
    cr_assert_eq(h.shot.ntr, 48);
    cr_assert_eq(h.shot.dt, 0.002);
    cr_assert_eq(h.shot.src[0], 1.5);
    cr_assert_eq(h.shot.src[2], 30);
    size_t len[2] = {48 * 3 * 4, 48 * 300 * 4};
    cr_assert_eq(wire_check_payload(&h, len, 2, 42, &st), 0);
    len[1] -= 4;
    cr_assert_eq(wire_check_payload(&h, len, 2, 42, &st), -EINVAL);
    cr_assert_eq(st.rejected[WIRE_REJ_SIZE], 1);
    cr_assert(strstr(err_msg(), "message 42") != NULL, "%s", err_msg());
    cr_assert_eq(wire_check_payload(&h, len, 1, 42, &st), -EINVAL);
    cr_assert_eq(st.rejected[WIRE_REJ_FRAMES], 1);
    free(js);
}

Test(wire, traces_header_with_channels)
{
    struct wire_header h;
    struct wire_stats st = {0};
    const char *js = "{\"type\":\"traces\",\"v\":1,\"t0_ns\":1000,\"dt\":0.01,\"nrec\":2,\"ns\":5,"
                     "\"format\":\"f32\",\"channels\":[\"XX.ST1..HHZ\",\"XX.ST2.00.HHN\"]}";
    cr_assert_eq(parse(js, &h, &st), 0, "%s", err_msg());
    cr_assert_str_eq(h.traces.chan[1].sta, "ST2");
    cr_assert_str_eq(h.traces.chan[1].loc, "00");
    cr_assert_str_eq(h.traces.chan[0].cha, "HHZ");
    size_t len = 2 * 5 * 4;
    cr_assert_eq(wire_check_payload(&h, &len, 1, 1, &st), 0);
    wire_header_free(&h);
}

Test(wire, malformed_headers_each_counted_by_reason)
{
    struct {
        const char *js;
        enum wire_reject why;
    } cases[] = {
        {"{\"type\":\"shot\"", WIRE_REJ_JSON},
        {"[1,2]", WIRE_REJ_JSON},
        {"{\"type\":\"shot\"}", WIRE_REJ_VERSION},
        {"{\"type\":\"shot\",\"v\":3}", WIRE_REJ_VERSION},
        {"{\"v\":1}", WIRE_REJ_TYPE},
        {"{\"type\":\"x\",\"v\":1}", WIRE_REJ_TYPE},
        {"{\"type\":\"shot\",\"v\":1,\"shot_id\":1,\"ns\":10,\"dt\":0.1,\"ntr\":2,\"format\":\"f32\"}",
         WIRE_REJ_FIELD},
        {"{\"type\":\"shot\",\"v\":1,\"shot_id\":1,\"ns\":\"10\",\"dt\":0.1,\"ntr\":2,\"src\":[0,0,0],"
         "\"format\":\"f32\"}", WIRE_REJ_FIELD},
        {"{\"type\":\"shot\",\"v\":1,\"shot_id\":1,\"ns\":0,\"dt\":0.1,\"ntr\":2,\"src\":[0,0,0],"
         "\"format\":\"f32\"}", WIRE_REJ_VALUE},
        {"{\"type\":\"shot\",\"v\":1,\"shot_id\":1,\"ns\":10,\"dt\":-1,\"ntr\":2,\"src\":[0,0,0],"
         "\"format\":\"f32\"}", WIRE_REJ_VALUE},
        {"{\"type\":\"shot\",\"v\":1,\"shot_id\":1,\"ns\":10,\"dt\":0.1,\"ntr\":2,\"src\":[0,0,0],"
         "\"format\":\"f64\"}", WIRE_REJ_VALUE},
        {"{\"type\":\"traces\",\"v\":1,\"t0_ns\":0,\"dt\":0.01,\"nrec\":2,\"ns\":5,\"format\":\"f32\","
         "\"channels\":[\"A.B..Z\"]}", WIRE_REJ_FIELD},
    };
    struct wire_stats st = {0};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct wire_header h;
        uint64_t before = st.rejected[cases[i].why];
        cr_assert_lt(parse(cases[i].js, &h, &st), 0, "accepted: %s", cases[i].js);
        cr_assert_eq(st.rejected[cases[i].why], before + 1, "case %zu (%s): %s", i, cases[i].js,
                     err_msg());
        cr_assert(strstr(err_msg(), "message 42:") != NULL);
        cr_assert(strstr(err_msg(), wire_reject_name(cases[i].why)) != NULL);
    }
    cr_assert_eq(wire_stats_rejected_total(&st), sizeof cases / sizeof *cases);
}

Test(wire, segy_payload_decodes_ibm_and_coordinates)
{
    /* Two traces of 3 samples, IBM floats, coordinate scalar -10, elevation scalar -100. */
    const int ntr = 2, ns = 3;
    size_t tb = 240 + (size_t)ns * 4;
    char *buf = calloc((size_t)ntr, tb);
    float v[2][3] = {{118.625f, -118.625f, 0.5f}, {1.0f, 2.0f, -3.25f}};
    for (int i = 0; i < ntr; i++) {
        char *th = buf + i * tb;
        segy_set_field(th, SEGY_TR_SAMPLE_COUNT, ns);
        segy_set_field(th, SEGY_TR_SOURCE_GROUP_SCALAR, -10);
        segy_set_field(th, SEGY_TR_ELEV_SCALAR, -100);
        segy_set_field(th, SEGY_TR_GROUP_X, 1234 + i);
        segy_set_field(th, SEGY_TR_GROUP_Y, -50);
        segy_set_field(th, SEGY_TR_RECV_GROUP_ELEV, -250);
        memcpy(th + 240, v[i], sizeof v[i]);
        segy_from_native(SEGY_IBM_FLOAT_4_BYTE, ns, th + 240);
    }
    /* The classic IBM example: 118.625 is 0x42 76 A0 00, -118.625 is 0xC2 76 A0 00. */
    const unsigned char *b = (unsigned char *)buf + 240;
    cr_assert(b[0] == 0x42 && b[1] == 0x76 && b[2] == 0xA0 && b[3] == 0x00);
    cr_assert(b[4] == 0xC2);
    struct wire_header h = {.kind = WIRE_SHOT,
                            .shot = {.shot_id = 5, .ns = ns, .dt = 0.004, .ntr = ntr,
                                     .format = WIRE_SEGY, .segy_format = SEGY_IBM_FLOAT_4_BYTE}};
    size_t len = (size_t)ntr * tb;
    struct wire_stats st = {0};
    cr_assert_eq(wire_check_payload(&h, &len, 1, 3, &st), 0);
    float rec[6], data[6];
    struct shot s = {.rec = rec, .data = data};
    const void *fr[1] = {buf};
    cr_assert_eq(wire_decode_shot(&h, fr, &len, 1, 3, &s, &st), 0, "%s", err_msg());
    for (int i = 0; i < ntr; i++)
        for (int t = 0; t < ns; t++)
            cr_assert_eq(data[i * ns + t], v[i][t]);
    cr_assert_float_eq(rec[0], 123.4f, 1e-4);
    cr_assert_float_eq(rec[3], 123.5f, 1e-4);
    cr_assert_float_eq(rec[1], -5.0f, 1e-6);
    cr_assert_float_eq(rec[2], 2.5f, 1e-6); /* elevation -2.5 m -> depth 2.5 m */
    /* A trace whose header disagrees on ns is a payload error. */
    segy_set_field(buf + tb, SEGY_TR_SAMPLE_COUNT, ns + 1);
    cr_assert_lt(wire_decode_shot(&h, fr, &len, 1, 3, &s, &st), 0);
    cr_assert_eq(st.rejected[WIRE_REJ_PAYLOAD], 1);
    cr_assert(strstr(err_msg(), "trace 1") != NULL, "%s", err_msg());
    free(buf);
}

Test(wire, volume_header_round_trip)
{
    struct wire_volume_hdr v = {.seq = 12, .units = 3, .n = {4, 5, 6}, .d = {1, 2, 3},
                                .o = {-1, 0, 1}, .final = true, .slices = true, .at = {2, 2, 3}};
    char *js = wire_encode_volume(&v);
    struct wire_volume_hdr w;
    cr_assert_eq(wire_parse_volume(js, strlen(js), &w), 0);
    cr_assert_eq(w.seq, 12);
    cr_assert_eq(w.units, 3);
    cr_assert_eq(w.n[2], 6);
    cr_assert_eq(w.d[1], 2);
    cr_assert_eq(w.o[0], -1);
    cr_assert(w.final && w.slices);
    cr_assert_eq(w.at[2], 3);
    cr_assert_eq(wire_parse_seq(js, strlen(js)), 12);
    free(js);
}

/* The status message's device memory: free and total on a GPU, neither on the CPU (-1). */
Test(wire, status_gpu_memory_fields)
{
    struct wire_status s = {.gpu_mem_free_mib = 70000.5, .gpu_mem_total_mib = 81079.0, .current = -1};
    char *js = wire_encode_status(&s);
    cr_assert_not_null(js);
    cr_expect_not_null(strstr(js, "\"gpu_mem_free_mib\":70000.5"), "%s", js);
    cr_expect_not_null(strstr(js, "\"gpu_mem_total_mib\":81079"), "%s", js);
    free(js);
    s.gpu_mem_free_mib = s.gpu_mem_total_mib = -1;
    js = wire_encode_status(&s);
    cr_assert_not_null(js);
    cr_expect_null(strstr(js, "gpu_mem"), "%s", js);
    free(js);
}
