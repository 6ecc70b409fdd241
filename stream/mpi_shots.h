/* mpi_shots — the messages of shot-parallel migration ([runtime] decompose = "shots",
 * docs/mpi.md): rank 0 hands a shot to a worker rank, the worker hands back the shot's
 * image patch, and that reply is also its request for the next shot (dynamic load
 * balancing: a rank that finishes early simply asks again sooner).
 *
 * Like stream/mpi.c, this file alone sees MPI's headers (the Makefile compiles
 * stream/mpi*.c with them); without MPI every call fails with -ENOTSUP, and the shots
 * runtime never calls them (one rank migrates its shots itself).
 *
 * Only two threads ever call these: rank 0's pipeline worker (the dispatcher) and a
 * worker rank's main thread -- one thread per process, so MPI_THREAD_SERIALIZED is
 * enough (stream/mpi.c asks for it). */
#ifndef SEISLIVE_MPI_SHOTS_H
#define SEISLIVE_MPI_SHOTS_H

#include <stdbool.h>
#include <stdint.h>

#include "io/shot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A worker's reply: a shot's result (seq >= 0) or, seq -1, "ready" (its first request). */
struct shots_reply {
    int64_t seq;          /* the dispatch number rank 0 gave the shot; -1: ready, no result */
    int64_t id;           /* the shot's id */
    int32_t rc;           /* 0: the patch follows; < 0: the shot failed (msg says why) */
    int32_t off[3], n[3]; /* the patch: its first cell in the whole grid, its size */
    int32_t has_illum;    /* the illumination follows the image in the same message */
    double seconds;       /* the migration's wall time on the worker */
    char device[128];     /* the worker's device ("cpu", "NVIDIA H100 ..."), set when ready */
    char msg[400];        /* err_msg() of a failed shot */
};

/* ---- rank 0 ---- */

/* Send SHOT (dispatch number SEQ) to worker PEER; blocking until MPI has taken it (the
 * worker is waiting for it: it asked).  0 or -EIO. */
int sl_mpi_shots_send(int peer, const struct shot *shot, int64_t seq);
/* Tell worker PEER that there are no more shots. */
int sl_mpi_shots_send_stop(int peer);
/* A reply waiting from any worker?  1: *R and *FROM filled, and for a result with
 * rc == 0 *PATCH gets the malloc'd image (n cells) followed by the illumination
 * (n more, when has_illum); 0: none waiting (returns at once); < 0: error.  The patch
 * size is checked against the message's length before it is received. */
int sl_mpi_shots_poll(struct shots_reply *r, int *from, float **patch);

/* ---- a worker rank ---- */

/* Rank 0's next message: 1 with *SHOT filled (malloc'd rec and data: free them)
 * and *SEQ; 0: stop (no more shots); < 0: error.  Blocks. */
int sl_mpi_shots_recv(struct shot *shot, int64_t *seq);
/* Reply R to rank 0, with PATCH (the image, then the illumination when has_illum) when
 * r->rc == 0. */
int sl_mpi_shots_reply(const struct shots_reply *r, const float *patch);

#ifdef __cplusplus
}
#endif

#endif
