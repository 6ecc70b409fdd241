/* support_model — run `seislive model` on a config file and read back every trace it
 * wrote (tests/support.h): the model-job tests (CPU and GPU) compare traces this way. */
#include <criterion/criterion.h>
#include <segyio/segy.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

float *test_model_traces(const char *conf, const char *out, int timeout_s, int *ntr, int *ns, char **log)
{
    const char *argv[] = {test_prog("seislive"), "model", "-c", conf, "-o", out, NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, timeout_s, &r), 0);
    cr_assert_eq(r.status, 0, "%s: exit %d: %s", conf, r.status, r.err);
    if (log)
        *log = strdup(r.err);
    test_run_free(&r);
    segy_file *f = segy_open(out, "rb");
    cr_assert_not_null(f, "%s", out);
    char bin[SEGY_BINARY_HEADER_SIZE];
    cr_assert_eq(segy_binheader(f, bin), SEGY_OK);
    *ns = segy_samples(bin);
    const long trace0 = segy_trace0(bin);
    const int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, *ns);
    cr_assert_eq(segy_traces(f, ntr, trace0, bsize), SEGY_OK);
    float *tr = malloc((size_t)*ntr * *ns * sizeof *tr);
    cr_assert_not_null(tr);
    for (int i = 0; i < *ntr; i++) {
        cr_assert_eq(segy_readtrace(f, i, tr + (size_t)i * *ns, trace0, bsize), SEGY_OK);
        segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, *ns, tr + (size_t)i * *ns);
    }
    segy_close(f);
    return tr;
}
