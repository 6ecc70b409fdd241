/* mpi_support — seislive under mpirun in the tests (tests/mpi_support.h). */
#include "tests/mpi_support.h"

#include <criterion/criterion.h>
#include <segyio/segy.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *find_in_path(const char *name)
{
    static _Thread_local char buf[4096];
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(buf, sizeof buf, "%.*s/%s", (int)len, path, name);
        if (len && access(buf, X_OK) == 0)
            return buf;
        path += len + (path[len] == ':');
    }
    return NULL;
}

const char *mpi_need(void)
{
    const char *argv[] = {test_prog("seislive"), "--version", NULL};
    struct run_result r;
    cr_assert_eq(test_run(argv, 30, &r), 0);
    bool built = r.out && strstr(r.out, "MPI: compiled in");
    test_run_free(&r);
    const char *mpirun = find_in_path("mpirun");
    if (!built) {
        bool installed = mpirun || system("pkg-config --exists ompi-c 2>/dev/null") == 0;
        cr_assert(!installed, "Open MPI is installed (%s) but this seislive was built without MPI: rebuild it "
                  "(the Makefile finds MPI through pkg-config ompi-c)", mpirun ? mpirun : "pkg-config ompi-c");
        cr_skip_test("MPI is not installed (apt-get install openmpi-bin libopenmpi-dev, or make deps): "
                     "the multi-rank tests cannot run here");
    }
    cr_assert_not_null(mpirun, "this seislive has MPI compiled in but mpirun is not on PATH (openmpi-bin)");
    /* CI runs as root; mpirun refuses root without these */
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    setenv("OMP_NUM_THREADS", "1", 1);
    return mpirun;
}

int mpi_run(int np, const char *const args[], int timeout_s, struct run_result *r)
{
    const char *argv[64];
    char nps[16];
    snprintf(nps, sizeof nps, "%d", np);
    int k = 0;
    argv[k++] = mpi_need();
    argv[k++] = "--oversubscribe";
    argv[k++] = "-np";
    argv[k++] = nps;
    argv[k++] = test_prog("seislive");
    for (int i = 0; args[i] && k < 63; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    return test_run(argv, timeout_s, r);
}

float *mpi_read_segy(const char *path, size_t *n)
{
    segy_file *fp = segy_open(path, "rb");
    cr_assert_not_null(fp, "%s: cannot open", path);
    char bin[SEGY_BINARY_HEADER_SIZE];
    cr_assert_eq(segy_binheader(fp, bin), SEGY_OK);
    int ns = segy_samples(bin), ntr = 0;
    long trace0 = segy_trace0(bin);
    int bsize = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, ns);
    cr_assert_eq(segy_traces(fp, &ntr, trace0, bsize), SEGY_OK);
    float *v = malloc((size_t)ntr * ns * sizeof *v);
    for (int t = 0; t < ntr; t++) {
        cr_assert_eq(segy_readtrace(fp, t, v + (size_t)t * ns, trace0, bsize), SEGY_OK);
        segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, ns, v + (size_t)t * ns);
    }
    segy_close(fp);
    *n = (size_t)ntr * ns;
    return v;
}

char *mpi_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(len > 0 ? (size_t)len : 1);
    *n = fread(b, 1, len > 0 ? (size_t)len : 0, f);
    fclose(f);
    return b;
}
