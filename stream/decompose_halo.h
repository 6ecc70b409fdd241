/* decompose_halo — the halo exchange of one rank's subdomain (stream/decompose.h;
 * docs/mpi.md).
 *
 * After each step and injection, every HALO face sends the planes next to it
 * (prop_halo_pack) to the neighbour across it and receives the neighbour's into its halo
 * (prop_halo_unpack): then the subdomains step as the whole grid does, bit for bit
 * (tests/test_subdomain.c shows it in one process, tests/test_mpi_model.c over mpirun).
 * Split into begin and end, so that work needing no halo runs in between: the rest of
 * the step when the step runs in parts (prop_step_part: the cut slabs, begin, the rest,
 * end; stream/decompose_model.c), sampling otherwise.
 *
 * Transports (DD_HALO_*):
 *   mpi     the CPU backend: pack into host buffers, MPI_Irecv / MPI_Isend in begin,
 *           wait and unpack in end;
 *   staged  a GPU without NCCL: on a halo stream of its own, pack kernels into device
 *           buffers and copies to pinned host buffers (begin); in end, the sends once the
 *           copies are done, the wait, copies up and unpack kernels, and the simulation's
 *           stream made to wait for them (an event), so the host never waits for the
 *           step's other part;
 *   nccl    every rank on a GPU of its own: pack, ncclSend / ncclRecv in one group and
 *           unpack, all queued on the halo stream in begin; end makes the simulation's
 *           stream wait.
 * dd_halo_init is local to the rank and sets mpi (CPU) or staged (GPU); dd_halo_connect,
 * collective, may choose NCCL ([runtime] halo_transport). */
#ifndef SEISLIVE_DECOMPOSE_HALO_H
#define SEISLIVE_DECOMPOSE_HALO_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/propagator.h"
#include "stream/decompose.h"
#include "stream/mpi.h"

#ifdef __cplusplus
extern "C" {
#endif

enum dd_halo_transport { DD_HALO_MPI = 0, DD_HALO_STAGED = 1, DD_HALO_NCCL = 2 };
/* What dd_halo_connect is asked for (the values of [runtime] halo_transport). */
enum dd_halo_want { DD_WANT_AUTO = 0, DD_WANT_NCCL = 1, DD_WANT_STAGED = 2 };

struct sl_nccl;

struct dd_halo {
    int nb[PROP_FACES];         /* neighbour rank across each face, -1 none */
    size_t count[PROP_FACES];   /* floats one way */
    float *send[PROP_FACES], *recv[PROP_FACES];   /* host (pinned on a GPU) */
    float *dsend[PROP_FACES], *drecv[PROP_FACES]; /* GPU: device buffers */
    struct sl_mpi_xfer x;
    size_t bytes_step;          /* sent per step */
    int transport;              /* enum dd_halo_transport */
    char why[320];              /* why this transport (logged) */
    const struct sl_device *dev;
    bool gpu, pinned;
    void *stream;               /* GPU: the halo stream */
    void *sim_stream;           /* the simulation's stream (dd_halo_set_stream) */
    bool sim_stream_set;
    void *ev_ready, *ev_done;   /* GPU: planes computed / halo unpacked */
    struct sl_nccl *nccl;
    bool begun;
};

/* Buffers for RANK's faces on plan P, for simulation S (local: no communication). */
int dd_halo_init(struct dd_halo *h, const struct dd_plan *p, int rank, struct prop *s);
/* Collective (every rank, after they agreed that init went well): the transport.  WANT
 * auto takes NCCL when every rank is on a GPU, no two ranks share one (UUIDs compared:
 * NCCL refuses duplicate GPUs) and libnccl.so.2 loads on every rank, else keeps staged
 * and logs why; nccl refuses (-EINVAL, every rank) when that is impossible, saying why;
 * staged keeps it.  The CPU keeps mpi (want nccl: refused, a rank runs on the CPU). */
int dd_halo_connect(struct dd_halo *h, int want);
/* The stream S's work is queued on (GPU), so that the exchange waits for the planes and
 * the next step for the halo through events, not by stopping the host; then the planes
 * next to the cuts must not change between begin and end (the pack may still be reading
 * them).  Without it, begin synchronises the simulation before and the pack after (the
 * field is free again when begin returns), and end the halo stream. */
void dd_halo_set_stream(struct dd_halo *h, void *sim_stream);
int dd_halo_begin(struct dd_halo *h, struct prop *s);
int dd_halo_end(struct dd_halo *h, struct prop *s);
void dd_halo_free(struct dd_halo *h);
const char *dd_halo_transport_name(int transport);

#ifdef __cplusplus
}
#endif

#endif
