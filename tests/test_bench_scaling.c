/* `seislive-bench scaling` runs on the CPU (CI's smoke test of what the GPU runs measure,
 * tools/bench_scaling.c): under `mpirun -np 2` at a tiny size its table has a weak and a
 * strong row for 2 ranks, with the grids and splits the options ask for, positive finite
 * times, Gpts/s and efficiency, a measured halo time, a hidden share that is a number, and
 * the CPU's transport (mpi), and its --verify line says the overlapped steps it times
 * are the one-rank steps bit for bit; alone (one rank) the halo columns say n/a.  No
 * timing is asserted: timings belong to the benchmark's tables. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/mpi_support.h"
#include "tests/support.h"

#define NCOL 11

/* The cells of the table row of MODE in OUT (trimmed, into COL[NCOL][64]); 0 when absent. */
static int row_of(const char *out, const char *mode, char col[NCOL][64])
{
    char key[32];
    snprintf(key, sizeof key, "| %s |", mode);
    const char *at = strstr(out, key);
    if (!at)
        return 0;
    const char *end = strchr(at, '\n');
    int n = 0;
    const char *p = at + 1;
    while (n < NCOL && p < end) {
        const char *q = strchr(p, '|');
        if (!q || q > end)
            break;
        while (*p == ' ')
            p++;
        size_t len = (size_t)(q - p);
        while (len && p[len - 1] == ' ')
            len--;
        if (len > 63)
            len = 63;
        memcpy(col[n], p, len);
        col[n][len] = '\0';
        n++;
        p = q + 1;
    }
    return n;
}

static double num(const char *s, const char *what)
{
    char *end;
    double v = strtod(s, &end);
    cr_assert(end != s && isfinite(v), "%s: \"%s\" is not a finite number", what, s);
    return v;
}

static void check_row(const char *out, const char *mode, int ranks, const char *grid)
{
    char col[NCOL][64];
    cr_assert_eq(row_of(out, mode, col), NCOL, "no %s row of %d columns in:\n%s", mode, NCOL, out);
    cr_assert_eq(atoi(col[1]), ranks, "%s: ranks %s", mode, col[1]);
    cr_assert_str_eq(col[2], grid, "%s: grid", mode);
    cr_assert_gt(num(col[3], "ms/step"), 0);
    cr_assert_gt(num(col[4], "Gpts/s"), 0);
    cr_assert_gt(num(col[5], "efficiency"), 0);
    cr_assert(strstr(col[5], "%"), "efficiency in %%: %s", col[5]);
    cr_assert_gt(num(col[6], "1 rank ms/step"), 0);
    cr_assert_gt(num(col[7], "no-exchange ms/step"), 0);
    if (ranks > 1) {
        cr_assert_gt(num(col[8], "halo ms/step"), 0);
        num(col[9], "halo hidden");
        cr_assert(strstr(col[9], "%"), "hidden in %%: %s", col[9]);
        cr_assert_str_eq(col[10], "mpi", "the CPU's transport");
    } else {
        cr_assert_str_eq(col[8], "n/a");
        cr_assert_str_eq(col[9], "n/a");
        cr_assert_str_eq(col[10], "none");
    }
}

Test(bench_scaling, two_ranks_cpu_table, .timeout = 120)
{
    const char *mpirun = mpi_need();
    const char *argv[] = {mpirun, "--oversubscribe", "-np", "2", test_prog("seislive-bench"), "scaling", "--weak",
                          "20", "--strong", "28,20,24", "--steps", "2", "--pml", "3", "--order", "4", "--device",
                          "cpu", "--verify", "22,18,30", "--verify-steps", "12", NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 100, &r), 0);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    /* --verify: the overlapped steps the rows time are the one-rank steps, bit for bit */
    cr_assert_not_null(strstr(r.out, "verify: 22 x 18 x 30, 12 overlapped steps on 2 ranks (mpi) vs one rank: "
                                     "relative L2 0, max |diff| / max 0, 0 of 11880 points differ in any bit: ok"),
                       "%s", r.out);
    check_row(r.out, "weak", 2, "20 x 20 x 40 (1 x 1 x 2)");
    check_row(r.out, "strong", 2, "28 x 20 x 24 (1 x 1 x 2)");
    cr_assert_not_null(strstr(r.out, "| mode | ranks |"), "the header: %s", r.out);
    test_run_free(&r);
    /* NCCL asked for where it cannot run: refused on every rank, saying why */
    const char *nccl[] = {mpirun, "--oversubscribe", "-np", "2", test_prog("seislive-bench"), "scaling", "--weak",
                          "16", "--mode", "weak", "--steps", "1", "--pml", "2", "--device", "cpu", "--transport",
                          "nccl", NULL};
    cr_assert_eq(test_run(nccl, 60, &r), 0);
    cr_assert_neq(r.status, 0, "nccl on the CPU must be refused");
    cr_assert_not_null(strstr(r.err, "halo_transport = \"nccl\" cannot be used: rank 0 runs on the CPU"), "%s",
                       r.err);
    test_run_free(&r);
}

Test(bench_scaling, one_rank_and_bad_options, .timeout = 60)
{
    const char *argv[] = {test_prog("seislive-bench"), "scaling", "--weak", "16", "--mode", "weak", "--steps", "2",
                          "--pml", "2", "--device", "cpu", NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 50, &r), 0);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    check_row(r.out, "weak", 1, "16 x 16 x 16 (1 x 1 x 1)");
    cr_assert_null(strstr(r.out, "| strong |"), "--mode weak: no strong row");
    test_run_free(&r);
    const char *bad[] = {test_prog("seislive-bench"), "scaling", "--order", "5", NULL};
    cr_assert_eq(test_run(bad, 20, &r), 0);
    cr_assert_neq(r.status, 0);
    cr_assert_not_null(strstr(r.err, "--order"), "%s", r.err);
    test_run_free(&r);
}
