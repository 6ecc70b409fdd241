/* mpi_support — running seislive under a real mpirun from the tests (tests/test_mpi*.c). */
#ifndef SEISLIVE_TEST_MPI_SUPPORT_H
#define SEISLIVE_TEST_MPI_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "tests/support.h"

/* The path of mpirun.  When this build has MPI (seislive --version says so) a missing
 * mpirun fails the test; when it has none, the test fails if Open MPI is installed all
 * the same (the build should have found it) and is skipped, saying why, only when MPI
 * is genuinely absent.  Sets what mpirun needs as root (CI) and on 2 cores. */
const char *mpi_need(void);

/* Run `mpirun --oversubscribe -np NP seislive ARGS...` (ARGS NULL-terminated). */
int mpi_run(int np, const char *const args[], int timeout_s, struct run_result *r);

/* The SEG-Y file PATH's samples, all traces one after the other (malloc'd; count into
 * *N); fails the test when it cannot be read. */
float *mpi_read_segy(const char *path, size_t *n);
/* Bytes of PATH (malloc'd, size into *N), or NULL. */
char *mpi_slurp(const char *path, size_t *n);

/* The SEG-Y file OUT must be the same bytes as REF (WANT, NBYTES: REF's bytes, read
 * once by the caller); otherwise the test fails naming WHAT ("N ranks (RUNTIME), order
 * O...") and the first differing sample.  LABEL: "traces" or "TTI traces". */
void mpi_same_segy(const char *ref, const char *out, const char *want, size_t nbytes, const char *label,
                   const char *what);

/* One decomposed rtm case of tests/test_mpi*_rtm.c: the one-rank run, then NP ranks. */
struct mpi_rtm_case {
    const char *strategy;   /* [rtm] strategy, with extra [rtm] lines */
    const char *imaging;
    int np;
    const char *runtime;    /* extra [runtime] lines of the decomposed run */
    const char *prop;       /* extra [propagator] lines of both runs, or NULL */
};
/* The test file's config of case C named NAME in DIR, with RUNTIME as its [runtime]
 * lines (malloc'd path). */
typedef char *(*mpi_rtm_conf_fn)(const char *dir, const char *name, int order, bool fs, bool two_d,
                                 const struct mpi_rtm_case *c, const char *runtime);
/* Each case in DIR (its shots already written): `seislive run` on one rank
 * (decompose = "none"), then under mpirun on c->np ranks (decompose = "domain"); both
 * images (DIR/out_NAME/image.f32, CELLS floats, finite, not zero) must be the same bytes. */
void mpi_rtm_same_as_one_rank(const char *dir, int order, bool fs, bool two_d, size_t cells,
                              const struct mpi_rtm_case *cases, int ncase, mpi_rtm_conf_fn conf);

#endif
