/* A growing array whose realloc fails gives a clean "out of memory" error, never a NULL
 * dereference: seislive-gen micro with a receiver count whose list outgrows a 300 MB
 * address-space limit. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"
#include "tests/support.h"

/* The sanitizer build reserves terabytes of address space at start and aborts on a
 * failed allocation by design: an address-space limit cannot run there. */
static int sanitizer_build(void)
{
    const char *b = getenv("SEISLIVE_BUILD");
    return b && strstr(b, "/san") != NULL;
}

Test(tools_realloc, gen_micro_receiver_list_out_of_memory_is_an_error, .timeout = 120)
{
    if (sanitizer_build())
        cr_skip_test("address-space limits do not apply to the sanitizer build (it reserves its shadow)");
    char *dir = test_tmpdir();
    char cmd[1024];
    /* 1e8 receivers down a borehole: the list grows one receiver at a time until the
     * 300 MB limit refuses it */
    snprintf(cmd, sizeof cmd, "ulimit -v 300000; exec '%s' micro --array borehole --count 100000000 -o '%s/out'",
             test_prog("seislive-gen"), dir);
    const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 100, &r), 0);
    cr_expect_eq(r.status, 1, "status %d (128 + signal: crashed); stderr: %s", r.status, r.err);
    cr_expect_not_null(strstr(r.err, "out of memory"), "stderr: %s", r.err);
    test_run_free(&r);
    test_rmtree(dir);
    free(dir);
}
