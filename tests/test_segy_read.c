/* SEG-Y / SU reading from memory: file header checks name the byte, trace headers give
 * the shot key and scaled coordinates, IEEE and IBM samples decode. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdlib.h>
#include <segyio/segy.h>
#include <string.h>

#include "io/segy_read.h"
#include "stream/error.h"

static void bin_header(char *head, int fmt, int ns, int dt_us)
{
    memset(head, 0, 3600);
    segy_set_bfield(head + 3200, SEGY_BIN_FORMAT, fmt);
    segy_set_bfield(head + 3200, SEGY_BIN_SAMPLES, ns);
    segy_set_bfield(head + 3200, SEGY_BIN_INTERVAL, dt_us);
}

Test(segy_read, file_header_checks_name_the_byte)
{
    char head[3600];
    struct segy_layout l;
    bin_header(head, 5, 250, 2000);
    cr_assert_eq(segy_layout_parse(head, 3600, "a.segy", &l), 0);
    cr_assert_eq(l.ns, 250);
    cr_assert_float_eq(l.dt, 0.002, 1e-12);
    cr_assert_eq(l.trace_bytes, 240 + 1000);
    cr_assert_eq(l.trace0, 3600);
    bin_header(head, 3, 250, 2000);
    cr_assert_lt(segy_layout_parse(head, 3600, "a.segy", &l), 0);
    cr_assert(strstr(err_msg(), "a.segy: byte 3225") != NULL, "%s", err_msg());
    bin_header(head, 1, 0, 2000);
    cr_assert_lt(segy_layout_parse(head, 3600, "a.segy", &l), 0);
    cr_assert(strstr(err_msg(), "byte 3221") != NULL);
    bin_header(head, 1, 10, 0);
    cr_assert_lt(segy_layout_parse(head, 3600, "a.segy", &l), 0);
    cr_assert(strstr(err_msg(), "byte 3217") != NULL);
    cr_assert_lt(segy_layout_parse(head, 100, "a.segy", &l), 0);
}

Test(segy_read, trace_header_geometry_and_samples)
{
    struct segy_layout l = {.format = SEGY_IBM_FLOAT_4_BYTE, .ns = 2, .dt = 0.004,
                            .trace_bytes = 248};
    char tr[248];
    memset(tr, 0, sizeof tr);
    segy_set_field(tr, SEGY_TR_FIELD_RECORD, 0);
    segy_set_field(tr, SEGY_TR_ENERGY_SOURCE_POINT, 17);
    segy_set_field(tr, SEGY_TR_SOURCE_GROUP_SCALAR, 10);
    segy_set_field(tr, SEGY_TR_ELEV_SCALAR, -10);
    segy_set_field(tr, SEGY_TR_SOURCE_X, 3);
    segy_set_field(tr, SEGY_TR_SOURCE_DEPTH, 55);
    segy_set_field(tr, SEGY_TR_GROUP_Y, -7);
    segy_set_field(tr, SEGY_TR_RECV_GROUP_ELEV, 20);
    float v[2] = {-118.625f, 3.0f};
    memcpy(tr + 240, v, 8);
    segy_from_native(SEGY_IBM_FLOAT_4_BYTE, 2, tr + 240);
    struct segy_trace_hdr t;
    segy_trace_header(&l, tr, &t);
    cr_assert_eq(t.shot, 17, "field record 0: the energy source point keys the shot");
    cr_assert_float_eq(t.src[0], 30.0, 1e-12);
    cr_assert_float_eq(t.src[2], 5.5, 1e-12);
    cr_assert_float_eq(t.rec[1], -70.0f, 1e-6);
    cr_assert_float_eq(t.rec[2], -2.0f, 1e-6);
    float out[2];
    cr_assert_eq(segy_trace_samples(&l, tr, out, "x", 0, 0), 0);
    cr_assert_eq(out[0], -118.625f);
    cr_assert_eq(out[1], 3.0f);
}

Test(segy_read, seismic_unix_little_endian)
{
    unsigned char tr[240 + 8];
    memset(tr, 0, sizeof tr);
    tr[114] = 2;              /* ns = 2, little-endian u16 at byte 115 */
    tr[116] = 0xa0, tr[117] = 0x0f; /* dt = 4000 us */
    tr[8] = 9;                /* field record 9 */
    tr[80] = 100;             /* group x = 100 (scalar 0 -> 1) */
    float v[2] = {1.5f, -2.0f};
    memcpy(tr + 240, v, 8);
    struct segy_layout l;
    cr_assert_eq(su_layout_parse(tr, sizeof tr, "a.su", &l), 0, "%s", err_msg());
    cr_assert_eq(l.ns, 2);
    cr_assert_float_eq(l.dt, 0.004, 1e-12);
    struct segy_trace_hdr t;
    segy_trace_header(&l, tr, &t);
    cr_assert_eq(t.shot, 9);
    cr_assert_float_eq(t.rec[0], 100.0f, 1e-6);
    float out[2];
    cr_assert_eq(segy_trace_samples(&l, tr, out, "a.su", 0, 0), 0);
    cr_assert_eq(out[0], 1.5f);
    cr_assert_eq(out[1], -2.0f);
}

/* Issue 12.4: the sample count is an unsigned 16-bit field; 65535 was read as -1. */
Test(segy_read, sample_count_65535_is_unsigned)
{
    char head[3600];
    struct segy_layout l;
    bin_header(head, 5, 65535, 2000);
    cr_assert_eq(segy_layout_parse(head, 3600, "a.segy", &l), 0, "%s", err_msg());
    cr_assert_eq(l.ns, 65535);
    cr_assert_eq(l.trace_bytes, 240 + 4 * (size_t)65535);
    char tr[240];
    memset(tr, 0, sizeof tr);
    segy_set_field(tr, SEGY_TR_SAMPLE_COUNT, 65535);
    segy_set_field(tr, SEGY_TR_SAMPLE_INTER, 40000);
    struct segy_trace_hdr t;
    segy_trace_header(&l, tr, &t);
    cr_assert_eq(t.ns, 65535);
    cr_assert_eq(t.dt_us, 40000);
}

/* An SU file of NTR traces of NS samples in either byte order, written here byte by
 * byte (not by the code under test): ns, dt, field record, group x, samples k+0.25*i. */
static size_t su_write(unsigned char *buf, int ntr, int ns, int dt_us, bool le)
{
    size_t tb = 240 + 4 * (size_t)ns;
    memset(buf, 0, tb * (size_t)ntr);
    for (int k = 0; k < ntr; k++) {
        unsigned char *h = buf + tb * (size_t)k;
        uint32_t fl[4][2] = {{9, 7}, {81, (uint32_t)(100 + 10 * k)}, {0, 0}, {0, 0}};
        for (int f = 0; f < 2; f++) {
            uint32_t v = fl[f][1];
            unsigned char *p = h + fl[f][0] - 1;
            for (int b = 0; b < 4; b++)
                p[le ? b : 3 - b] = (unsigned char)(v >> (8 * b));
        }
        uint16_t s16[2][2] = {{115, (uint16_t)ns}, {117, (uint16_t)dt_us}};
        for (int f = 0; f < 2; f++) {
            unsigned char *p = h + s16[f][0] - 1;
            p[le ? 0 : 1] = (unsigned char)(s16[f][1] & 0xff);
            p[le ? 1 : 0] = (unsigned char)(s16[f][1] >> 8);
        }
        for (int i = 0; i < ns; i++) {
            float v = (float)k + 0.25f * (float)i - 3.0f;
            uint32_t u;
            memcpy(&u, &v, 4);
            unsigned char *p = h + 240 + 4 * (size_t)i;
            for (int b = 0; b < 4; b++)
                p[le ? b : 3 - b] = (unsigned char)(u >> (8 * b));
        }
    }
    return tb * (size_t)ntr;
}

static void su_check(bool le, int ns, int dt_us)
{
    int ntr = 3;
    size_t len = 3 * (240 + 4 * (size_t)ns);
    unsigned char *buf = malloc(len);
    cr_assert_eq(su_write(buf, ntr, ns, dt_us, le), len);
    struct segy_layout l;
    cr_assert_eq(su_layout_parse(buf, len, "a.su", &l), 0, "%s", err_msg());
    cr_assert_eq(l.le, le, "%s-endian file taken as %s (%s)", le ? "little" : "big",
                 l.le ? "little" : "big", l.note);
    cr_assert_eq(l.ns, ns);
    cr_assert_float_eq(l.dt, dt_us * 1e-6, 1e-12);
    cr_assert(strstr(l.note, le ? "little-endian, detected" : "big-endian, detected"), "%s",
              l.note);
    float *out = malloc((size_t)ns * 4);
    for (int k = 0; k < ntr; k++) {
        const unsigned char *tr = buf + (size_t)k * l.trace_bytes;
        struct segy_trace_hdr t;
        segy_trace_header(&l, tr, &t);
        cr_assert_eq(t.shot, 7);
        cr_assert_float_eq(t.rec[0], 100.0f + 10 * k, 1e-6);
        cr_assert_eq(t.ns, ns);
        cr_assert_eq(segy_trace_samples(&l, tr, out, "a.su", k, 0), 0, "%s", err_msg());
        for (int i = 0; i < ns; i++)
            cr_assert_eq(out[i], (float)k + 0.25f * (float)i - 3.0f);
    }
    free(out);
    free(buf);
}

/* Issue 12.3: every SU file in the shared data is big-endian and was misread. */
Test(segy_read, seismic_unix_big_endian_detected)
{
    su_check(false, 1325, 4000); /* the shape of ozdata.16 */
    su_check(false, 2501, 4000);
    su_check(false, 2, 4000);
}

Test(segy_read, seismic_unix_little_endian_detected)
{
    su_check(true, 1325, 4000);
    su_check(true, 2501, 4000);
    su_check(true, 7, 250);
}

/* A forced order is taken as given; nonsense in both orders names the byte. */
Test(segy_read, seismic_unix_order_override_and_garbage)
{
    unsigned char buf[2 * (240 + 40)];
    size_t len = su_write(buf, 2, 10, 1000, false);
    struct segy_layout l;
    cr_assert_eq(su_layout_detect(buf, len, len, SU_ORDER_LITTLE, "a.su", &l), 0, "%s", err_msg());
    cr_assert(l.le);
    cr_assert_eq(l.ns, 10 << 8, "the big-endian 10 read little-endian");
    cr_assert(strstr(l.note, "su_byte_order"), "%s", l.note);
    cr_assert_eq(su_layout_detect(buf, len, len, SU_ORDER_BIG, "a.su", &l), 0);
    cr_assert(!l.le && l.ns == 10);
    memset(buf, 0, sizeof buf);
    cr_assert_lt(su_layout_parse(buf, sizeof buf, "z.su", &l), 0);
    cr_assert(strstr(err_msg(), "z.su: byte 115") != NULL, "%s", err_msg());
}

/* A coordinate scalar SEG-Y does not allow (the land shot 3360 file has 32, its
 * coordinates plain metres) is taken as 1, not as a factor of 32. */
Test(segy_read, scalar_outside_the_standard_set_is_one)
{
    struct segy_layout l = {.format = SEGY_IEEE_FLOAT_4_BYTE, .ns = 1, .dt = 0.004,
                            .trace_bytes = 244};
    char tr[244];
    memset(tr, 0, sizeof tr);
    segy_set_field(tr, SEGY_TR_SOURCE_GROUP_SCALAR, 32);
    segy_set_field(tr, SEGY_TR_ELEV_SCALAR, 7);
    segy_set_field(tr, SEGY_TR_SOURCE_X, 757932);
    segy_set_field(tr, SEGY_TR_GROUP_Y, 4281901);
    segy_set_field(tr, SEGY_TR_RECV_GROUP_ELEV, 359);
    struct segy_trace_hdr t;
    segy_trace_header(&l, tr, &t);
    cr_assert_float_eq(t.src[0], 757932.0, 1e-9);
    cr_assert_float_eq(t.rec[1], 4281901.0f, 1.0f);
    cr_assert_float_eq(t.rec[2], -359.0f, 1e-6);
    cr_assert_eq(t.scalar_xy, 32, "the raw value is kept for the warning");
    cr_assert(!segy_scalar_valid(32) && segy_scalar_valid(-100) && segy_scalar_valid(0));
}
