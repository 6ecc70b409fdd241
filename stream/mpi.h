/* mpi — the MPI runtime of seislive: ranks, the few collective operations the decomposed
 * jobs need, and the point-to-point transport of halo planes (docs/mpi.md).
 *
 * Built on Open MPI (Debian's libopenmpi-dev) when the Makefile finds it: then this
 * module's .c files alone are compiled with -DSEISLIVE_MPI and MPI's headers, and nothing
 * else in the program sees MPI.  Without it (or when the program was not started by
 * mpirun) there is one rank and every operation below is the trivial one-rank case, so
 * callers never test for MPI themselves.
 *
 * Failure across ranks: an error every rank learns through sl_mpi_agree() is returned
 * normally on every rank (each exits with its code); any other error of a multi-rank run
 * ends the whole job through sl_mpi_finish() -> MPI_Abort, because its peers may be
 * waiting for a halo that will never come. */
#ifndef SEISLIVE_MPI_H
#define SEISLIVE_MPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether MPI is compiled in. */
bool sl_mpi_compiled(void);

/* Start MPI when the process was started by an MPI launcher (mpirun / srun set
 * OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE); otherwise one rank and MPI untouched, so
 * a plain `seislive run` costs nothing.  A launch of several ranks by a build without
 * MPI is refused (-ENOTSUP, the message says how to build with it): each process would
 * otherwise run the whole job and write the same outputs.  Logging gets the rank. */
int sl_mpi_init(int *argc, char ***argv);
/* End MPI with the process's exit code: MPI_Finalize, or MPI_Abort(code) when the code
 * is a failure the other ranks have not agreed on (see above).  Returns CODE. */
int sl_mpi_finish(int code);

int sl_mpi_rank(void);
int sl_mpi_size(void);
/* Rank among the ranks of this host (MPI_Comm_split_type SHARED): the GPU a rank takes. */
int sl_mpi_local_rank(void);

/* The device spec this rank runs on: SPEC as configured ("auto", "cpu", "cuda:N"), and
 * with several ranks on "auto": "cuda:K" for K = MAP[local rank] (MAP "A,B,.."; wraps)
 * or K = local rank mod NGPU (MAP ""); NGPU = 0 leaves "auto".  An explicit "cuda:N" is
 * kept for every rank (several ranks on one GPU, as the tests do).  Into OUT. */
void sl_mpi_device_spec(const char *spec, const char *map, int ngpu, char *out, size_t len);

/* End the whole job now with CODE (MPI_Abort with several ranks, exit otherwise): a
 * failure of this rank alone where its peers would wait for it forever. */
void sl_mpi_abort(int code);
/* Every rank passes its RC (0 or a negative errno); each gets the smallest (the worst).
 * A rank whose own RC was 0 gets -ECANCELED with err_msg() naming the failing rank. */
int sl_mpi_agree(int rc);
/* Note that every rank knows of the failure about to be returned (a decision taken
 * together, such as a stop request), so sl_mpi_finish ends normally. */
void sl_mpi_all_know(void);
/* Refuse (-EINVAL on every rank, naming the first rank that differs from rank 0) when
 * FP differs between ranks; WHAT names what was fingerprinted. */
int sl_mpi_same(uint64_t fp, const char *what);
/* Logical OR of FLAG over the ranks (a stop request seen by any rank stops all). */
bool sl_mpi_any(bool flag);
/* Every rank's BYTES at SEND, in rank order, into RECV (size x BYTES) on every rank. */
int sl_mpi_allgather(const void *send, size_t bytes, void *recv);
/* Rank 0's BYTES at BUF to every rank. */
int sl_mpi_bcast(void *buf, size_t bytes);
/* The same, where the other ranks may wait long for rank 0 (the next shot of a stream):
 * a non-blocking broadcast polled every millisecond, so a waiting rank sleeps instead of
 * spinning a core.  Every rank must call this one (not sl_mpi_bcast) for the message. */
int sl_mpi_bcast_idle(void *buf, size_t bytes);
/* Rank r's N floats at SEND to rank 0, placed one rank after the other into RECV (rank 0
 * only; COUNTS[r] floats each, known to rank 0). */
int sl_mpi_gather(const float *send, size_t n, float *recv, const size_t *counts);

/* ---- halo transport: non-blocking point-to-point of float planes ----
 * Post the receives and sends of one exchange, do other work, then wait. */
#define SL_MPI_MAX_REQ 16
struct sl_mpi_xfer {
    int n;
    uint64_t req[SL_MPI_MAX_REQ]; /* MPI_Request, kept opaque to the callers */
};
int sl_mpi_irecv(struct sl_mpi_xfer *x, float *buf, size_t n, int peer, int tag);
int sl_mpi_isend(struct sl_mpi_xfer *x, const float *buf, size_t n, int peer, int tag);
int sl_mpi_wait(struct sl_mpi_xfer *x);

#ifdef __cplusplus
}
#endif

#endif
