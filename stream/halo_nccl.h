/* halo_nccl — NCCL between the ranks' GPUs for the halo exchange (stream/decompose_halo.h;
 * docs/mpi.md).
 *
 * NCCL is loaded at run time (dlopen("libnccl.so.2")), not linked: the library is 218 MB,
 * the GPU machines carry it only inside Python's nvidia-nccl-cu13 package, and a build
 * must run where it is missing (the staged transport then).  Point LD_LIBRARY_PATH at the
 * package's lib folder:
 *   export LD_LIBRARY_PATH=$(python3 -c 'import nvidia.nccl,os;print(os.path.dirname(nvidia.nccl.__file__))')/lib:$LD_LIBRARY_PATH
 * The communicator is bootstrapped over MPI: rank 0 makes the unique id, MPI broadcasts
 * it, every rank calls ncclCommInitRank on its GPU.  Compiled in only with CUDA (the
 * types come from the CUDA toolkit's nccl.h); elsewhere sl_nccl_load says why not. */
#ifndef SEISLIVE_HALO_NCCL_H
#define SEISLIVE_HALO_NCCL_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Load NCCL once (thread-unsafe: call from the main thread).  0, or -ENOENT / -ENOTSUP
 * with the reason in WHY (library missing, symbol missing, a build without CUDA). */
int sl_nccl_load(char *why, size_t len);

struct sl_nccl;
/* Collective over every MPI rank (each on its own GPU, already bound): the communicator.
 * sl_nccl_load must have succeeded on every rank. */
int sl_nccl_init(int rank, int size, struct sl_nccl **out);
/* One exchange, queued on STREAM (cudaStream_t): for each of the N faces i, COUNT[i]
 * floats from SEND[i] to rank PEER[i] and as many from it into RECV[i], in one group (no
 * ordering deadlock between neighbours).  Returns once queued. */
int sl_nccl_exchange(struct sl_nccl *c, int n, const int *peer, float *const *send, float *const *recv,
                     const size_t *count, void *stream);
/* The NCCL version, e.g. "2.28.3" (after a successful load). */
const char *sl_nccl_version(void);
void sl_nccl_free(struct sl_nccl *c);

#ifdef __cplusplus
}
#endif

#endif
