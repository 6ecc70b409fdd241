/* support — helpers shared by the tests: run a program of this build and capture its
 * output and exit status, make temporary folders and files. */
#ifndef SEISLIVE_TEST_SUPPORT_H
#define SEISLIVE_TEST_SUPPORT_H

#include <stddef.h>

struct run_result {
    int status;   /* exit code, or 128 + signal */
    char *out;    /* stdout, NUL-terminated */
    char *err;    /* stderr, NUL-terminated */
};

/* Path of a program of this build ("seislive", "seislive-gen", ...): $SEISLIVE_BUILD/NAME. */
const char *test_prog(const char *name);
/* Run ARGV (NULL-terminated; argv[0] is a path) with a timeout in seconds. */
int test_run(const char *const argv[], int timeout_s, struct run_result *r);
void test_run_free(struct run_result *r);

/* fork(), with the child killed (SIGKILL) when the test process ends, however it ends:
 * a failed assertion, a Criterion timeout or a crash never leaves a `seislive run` or a
 * browser behind (an orphan holding the runner's stdout open hung a whole run).  Use it
 * for every child a test starts. */
#include <sys/types.h>
pid_t test_fork(void);

/* A fresh folder under /tmp, removed by test_rmtree. */
char *test_tmpdir(void);
void test_rmtree(const char *path);
/* Write TEXT to DIR/NAME; returns the path (malloc'd). */
char *test_write_file(const char *dir, const char *name, const char *text);

/* `seislive model -c CONF -o OUT` within TIMEOUT_S (asserted to exit 0); every trace of
 * OUT (malloc'd: *NTR traces of *NS samples, host order); *LOG (when LOG is not NULL) its
 * stderr, malloc'd.  tests/support_model.c. */
float *test_model_traces(const char *conf, const char *out, int timeout_s, int *ntr, int *ns, char **log);

/* Relative L2 difference ||a - b|| / ||b|| in double precision. */
double test_rel_l2_f32(const float *a, const float *b, size_t n);

#endif
