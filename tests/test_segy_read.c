/* SEG-Y / SU reading from memory: file header checks name the byte, trace headers give
 * the shot key and scaled coordinates, IEEE and IBM samples decode. */
#include <criterion/criterion.h>
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
