/* mpi_support — seislive under mpirun in the tests (tests/mpi_support.h). */
#include "tests/mpi_support.h"

#include <criterion/criterion.h>
#include <math.h>
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

static char *read_image(const char *dir, const char *name, size_t *n)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/out_%s/image.f32", dir, name);
    char *b = mpi_slurp(path, n);
    cr_assert_not_null(b, "%s not written", path);
    return b;
}

void mpi_rtm_same_as_one_rank(const char *dir, int order, bool fs, bool two_d, size_t cells,
                              const struct mpi_rtm_case *cases, int ncase, mpi_rtm_conf_fn conf)
{
    for (int k = 0; k < ncase; k++) {
        const struct mpi_rtm_case *c = &cases[k];
        char what[512], one[32], many[32];
        snprintf(what, sizeof what, "order %d%s%s, strategy %s, imaging %s, %d ranks %s %s", order,
                 fs ? ", free surface" : "", two_d ? ", 2D" : "", c->strategy, c->imaging, c->np, c->runtime,
                 c->prop ? c->prop : "");
        snprintf(one, sizeof one, "one%d", k);
        snprintf(many, sizeof many, "np%d_%d", c->np, k);
        char *c1 = conf(dir, one, order, fs, two_d, c, "decompose = \"none\"");
        char rt[256];
        snprintf(rt, sizeof rt, "decompose = \"domain\"\n%s", c->runtime);
        char *cn = conf(dir, many, order, fs, two_d, c, rt);
        struct run_result r;
        const char *argv[] = {test_prog("seislive"), "run", "-c", c1, NULL};
        cr_assert_eq(test_run(argv, 60, &r), 0);
        cr_assert_eq(r.status, 0, "one rank, %s: exit %d: %s", what, r.status, r.err);
        test_run_free(&r);
        const char *args[] = {"run", "-c", cn, NULL};
        cr_assert_eq(mpi_run(c->np, args, 60, &r), 0);
        cr_assert_eq(r.status, 0, "%s: exit %d: %s", what, r.status, r.err);
        cr_assert_not_null(strstr(r.err, "[r1/"), "rank 1's log lines carry its rank: %s", r.err);
        cr_assert_not_null(strstr(r.err, "migrated on"), "rank 0 migrated the shots with the others: %s", r.err);
        test_run_free(&r);
        size_t n1, n2;
        char *a = read_image(dir, one, &n1), *b = read_image(dir, many, &n2);
        cr_assert_eq(n1, cells * sizeof(float), "%s: image of %zu bytes", what, n1);
        const float *fa = (const float *)a, *fb = (const float *)b;
        double peak = 0;
        for (size_t i = 0; i < n1 / sizeof(float); i++) {
            cr_assert(isfinite(fa[i]), "%s: one-rank image value %zu is %g", what, i, fa[i]);
            peak = fmax(peak, fabs(fa[i]));
        }
        cr_assert_gt(peak, 0, "%s: the one-rank image is zero", what);
        cr_assert_eq(n2, n1, "%s: %zu bytes, one rank %zu", what, n2, n1);
        if (memcmp(a, b, n1)) {
            size_t first = 0;
            while (memcmp(fa + first, fb + first, sizeof *fa) == 0)
                first++;
            cr_assert_fail("%s: the image differs from one rank's, first at cell %zu (%.9g vs %.9g; rel L2 %.3g)",
                           what, first, fb[first], fa[first], test_rel_l2_f32(fb, fa, n1 / sizeof(float)));
        }
        free(a);
        free(b);
        free(c1);
        free(cn);
    }
}

void mpi_same_segy(const char *ref, const char *out, const char *want, size_t nbytes, const char *label,
                   const char *what)
{
    size_t ngot;
    char *got = mpi_slurp(out, &ngot);
    cr_assert_not_null(got, "%s not written", out);
    cr_assert_eq(ngot, nbytes, "%s: %zu bytes, one rank %zu", what, ngot, nbytes);
    if (memcmp(got, want, nbytes)) {
        size_t n1, n2, first = 0;
        float *a = mpi_read_segy(ref, &n1), *b = mpi_read_segy(out, &n2);
        while (first < n1 && memcmp(&a[first], &b[first], sizeof *a) == 0)
            first++;
        cr_assert_fail("%s: %s differ from one rank's, first at sample %zu (%g vs %g)", what, label, first,
                       first < n1 ? a[first] : 0, first < n1 ? b[first] : 0);
    }
    free(got);
}
