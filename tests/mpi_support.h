/* mpi_support — running seislive under a real mpirun from the tests (tests/test_mpi*.c). */
#ifndef SEISLIVE_TEST_MPI_SUPPORT_H
#define SEISLIVE_TEST_MPI_SUPPORT_H

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

#endif
