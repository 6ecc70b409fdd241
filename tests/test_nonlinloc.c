/* NonLinLoc grid headers and buffers that must be refused with the file and the place
 * (found with the fuzz harness, tests/fuzz/fuzz_nonlinloc.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/nonlinloc.h"
#include "stream/error.h"
#include "tests/support.h"

static void write_buf(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(p, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

/* A NaN or infinite value in the buffer went into the travel-time table unnoticed. */
Test(nonlinloc, non_finite_value_named_with_its_byte)
{
    char *dir = test_tmpdir();
    char root[4096];
    snprintf(root, sizeof root, "%s/g", dir);
    free(test_write_file(dir, "g.hdr", "1 1 3 0 0 0 1 1 1 VELOCITY FLOAT\n"));
    float v[3] = {5.0f, NAN, 6.0f};
    write_buf(dir, "g.buf", v, sizeof v);
    struct nll_grid g;
    cr_expect_eq(nll_read(root, &g), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "g.buf: byte 4: value 1 is not finite"), "%s", err_msg());
    cr_expect_null(g.v);
    /* DOUBLE values beyond the float range become infinite when converted. */
    free(test_write_file(dir, "g.hdr", "1 1 2 0 0 0 1 1 1 VELOCITY DOUBLE\n"));
    double d[2] = {5.0, 1e300};
    write_buf(dir, "g.buf", d, sizeof d);
    cr_expect_eq(nll_read(root, &g), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "g.buf: byte 8: value 1 is not finite"), "%s", err_msg());
    cr_expect_null(g.v);
    test_rmtree(dir);
    free(dir);
}

/* A header line longer than the read buffer was cut, its tail read as the next line. */
Test(nonlinloc, overlong_header_line_is_an_error)
{
    char *dir = test_tmpdir();
    char root[4096];
    snprintf(root, sizeof root, "%s/g", dir);
    char hdr[1600];
    int n = sprintf(hdr, "1 1 1 0 0 0 1 1 1 TIME FLOAT");
    while (n < 1400)
        hdr[n++] = ' ';
    sprintf(hdr + n, "\nSTA 0 0 0\n");
    free(test_write_file(dir, "g.hdr", hdr));
    float v = 1.0f;
    write_buf(dir, "g.buf", &v, sizeof v);
    struct nll_grid g;
    cr_expect_eq(nll_read(root, &g), -EINVAL);
    cr_expect_not_null(strstr(err_msg(), "g.hdr:1: line longer than"), "%s", err_msg());
    test_rmtree(dir);
    free(dir);
}
