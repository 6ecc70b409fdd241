/* mpi_shots — the shot and patch messages of decompose = "shots" (stream/mpi_shots.h). */
#define LOG_COMPONENT "mpi"
#include "stream/mpi_shots.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stream/error.h"

#ifdef SEISLIVE_MPI
#include <mpi.h>

/* A patch goes in messages of at most this many floats (1 GiB): MPI counts are int, and a
 * 1024^3 image with its illumination is 2^31 floats. */
#define PATCH_CHUNK ((size_t)1 << 28)

/* Tags of their own (nothing else talks in a shots run; distinct all the same). */
enum { T_SHOT_HDR = 7101, T_SHOT_REC, T_SHOT_DATA, T_REPLY = 7111, T_PATCH };

/* A shot's scalars; its receivers and samples follow as two float messages. */
struct shot_head {
    int64_t seq, id;    /* seq -1: stop */
    int32_t ns, ntr;
    double dt, src[3];
};

/* Largest float count of one message (MPI counts are int). */
static int count_of(size_t n, size_t *out)
{
    if (n > (size_t)INT_MAX)
        return -EOVERFLOW;
    *out = n;
    return 0;
}

int sl_mpi_shots_send(int peer, const struct shot *s, int64_t seq)
{
    size_t nrec, ndata;
    if (s->ntr <= 0 || s->ns <= 0 || count_of((size_t)s->ntr * 3, &nrec) ||
        count_of((size_t)s->ntr * (size_t)s->ns, &ndata))
        return err_set(-EOVERFLOW, "shot %lld: %d traces of %d samples do not fit one MPI message",
                       (long long)s->id, s->ntr, s->ns);
    struct shot_head h = {seq, s->id, s->ns, s->ntr, s->dt, {s->src[0], s->src[1], s->src[2]}};
    if (MPI_Send(&h, sizeof h, MPI_BYTE, peer, T_SHOT_HDR, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Send(s->rec, (int)nrec, MPI_FLOAT, peer, T_SHOT_REC, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Send(s->data, (int)ndata, MPI_FLOAT, peer, T_SHOT_DATA, MPI_COMM_WORLD) != MPI_SUCCESS)
        return err_set(-EIO, "shot %lld: sending it to rank %d failed", (long long)s->id, peer);
    return 0;
}

int sl_mpi_shots_send_stop(int peer)
{
    struct shot_head h = {.seq = -1};
    if (MPI_Send(&h, sizeof h, MPI_BYTE, peer, T_SHOT_HDR, MPI_COMM_WORLD) != MPI_SUCCESS)
        return err_set(-EIO, "telling rank %d to stop failed", peer);
    return 0;
}

/* Receive WANT floats sent as messages TAG from PEER of CHUNK floats each (the last one
 * shorter) into a malloc'd buffer: each message's length is checked (MPI_Probe) against
 * what the header announced before it is received. */
static int recv_floats(int peer, int tag, size_t want, size_t chunk, float **out, const char *what)
{
    float *b = malloc(want ? want * sizeof *b : 1);
    if (!b)
        return err_set(-ENOMEM, "%s from rank %d: %zu floats", what, peer, want);
    for (size_t at = 0; at < want; at += chunk) { /* WANT > 0: a shot has traces, a patch cells */
        size_t k = want - at < chunk ? want - at : chunk;
        MPI_Status st;
        int n = 0;
        if (MPI_Probe(peer, tag, MPI_COMM_WORLD, &st) != MPI_SUCCESS ||
            MPI_Get_count(&st, MPI_FLOAT, &n) != MPI_SUCCESS) {
            free(b);
            return err_set(-EIO, "%s from rank %d: MPI_Probe failed", what, peer);
        }
        if (n < 0 || (size_t)n != k) {
            free(b);
            return err_set(-EPROTO, "%s from rank %d: a message of %d floats at float %zu, the header announced "
                           "%zu in all", what, peer, n, at, want);
        }
        if (MPI_Recv(b + at, n, MPI_FLOAT, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            free(b);
            return err_set(-EIO, "%s from rank %d: MPI_Recv failed", what, peer);
        }
    }
    *out = b;
    return 0;
}

int sl_mpi_shots_poll(struct shots_reply *r, int *from, float **patch)
{
    int flag = 0;
    MPI_Status st;
    *patch = NULL;
    if (MPI_Iprobe(MPI_ANY_SOURCE, T_REPLY, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
        return err_set(-EIO, "MPI_Iprobe failed");
    if (!flag)
        return 0;
    *from = st.MPI_SOURCE;
    if (MPI_Recv(r, sizeof *r, MPI_BYTE, st.MPI_SOURCE, T_REPLY, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return err_set(-EIO, "a reply from rank %d: MPI_Recv failed", st.MPI_SOURCE);
    r->device[sizeof r->device - 1] = '\0';
    r->msg[sizeof r->msg - 1] = '\0';
    if (r->seq < 0 || r->rc != 0)
        return 1;
    /* a patch is at most the grid, itself bounded where it was configured; here the
     * product is only kept from overflowing before it sizes an allocation */
    size_t cells = 1;
    for (int k = 0; k < 3; k++) {
        if (r->n[k] <= 0 || cells > ((size_t)1 << 40) / (size_t)r->n[k])
            return err_set(-EPROTO, "shot %lld from rank %d: a patch of %d x %d x %d cells", (long long)r->id,
                           st.MPI_SOURCE, r->n[0], r->n[1], r->n[2]);
        cells *= (size_t)r->n[k];
    }
    size_t want = cells * (r->has_illum ? 2 : 1);
    int rc = recv_floats(st.MPI_SOURCE, T_PATCH, want, PATCH_CHUNK, patch, "a shot image");
    return rc < 0 ? rc : 1;
}

int sl_mpi_shots_recv(struct shot *s, int64_t *seq)
{
    struct shot_head h;
    memset(s, 0, sizeof *s);
    /* A live stream may leave the workers idle for hours: a blocking MPI_Recv spins a
     * core the whole time (Open MPI polls), so look every millisecond instead. */
    for (int flag = 0; !flag;) {
        if (MPI_Iprobe(0, T_SHOT_HDR, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return err_set(-EIO, "waiting for a shot from rank 0: MPI_Iprobe failed");
        if (!flag)
            nanosleep(&(struct timespec){0, 1000000L}, NULL);
    }
    if (MPI_Recv(&h, sizeof h, MPI_BYTE, 0, T_SHOT_HDR, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return err_set(-EIO, "waiting for a shot from rank 0: MPI_Recv failed");
    if (h.seq < 0)
        return 0;
    size_t nrec, ndata;
    if (h.ntr <= 0 || h.ns <= 0 || count_of((size_t)h.ntr * 3, &nrec) ||
        count_of((size_t)h.ntr * (size_t)h.ns, &ndata))
        return err_set(-EPROTO, "shot %lld from rank 0: %d traces of %d samples", (long long)h.id, h.ntr, h.ns);
    int rc = recv_floats(0, T_SHOT_REC, nrec, (size_t)INT_MAX, &s->rec, "receivers");
    if (!rc)
        rc = recv_floats(0, T_SHOT_DATA, ndata, (size_t)INT_MAX, &s->data, "samples");
    if (rc) {
        free(s->rec);
        memset(s, 0, sizeof *s);
        return rc;
    }
    s->id = h.id;
    s->ns = h.ns;
    s->ntr = h.ntr;
    s->dt = h.dt;
    memcpy(s->src, h.src, sizeof s->src);
    *seq = h.seq;
    return 1;
}

int sl_mpi_shots_reply(const struct shots_reply *r, const float *patch)
{
    size_t n = r->seq < 0 || r->rc != 0 ? 0 : (size_t)r->n[0] * r->n[1] * r->n[2] * (r->has_illum ? 2 : 1);
    if (MPI_Send(r, sizeof *r, MPI_BYTE, 0, T_REPLY, MPI_COMM_WORLD) != MPI_SUCCESS)
        return err_set(-EIO, "replying to rank 0 failed");
    for (size_t at = 0; at < n; at += PATCH_CHUNK) {
        size_t k = n - at < PATCH_CHUNK ? n - at : PATCH_CHUNK;
        if (MPI_Send(patch + at, (int)k, MPI_FLOAT, 0, T_PATCH, MPI_COMM_WORLD) != MPI_SUCCESS)
            return err_set(-EIO, "shot %lld: sending its image to rank 0 failed", (long long)r->id);
    }
    return 0;
}

#else /* one rank: the shots runtime never gets here */

static int no_mpi(void)
{
    return err_set(-ENOTSUP, "decompose = \"shots\" across ranks in a build without MPI");
}
int sl_mpi_shots_send(int peer, const struct shot *s, int64_t seq) { (void)peer, (void)s, (void)seq; return no_mpi(); }
int sl_mpi_shots_send_stop(int peer) { (void)peer; return no_mpi(); }
int sl_mpi_shots_poll(struct shots_reply *r, int *from, float **patch) { (void)r, (void)from, (void)patch; return no_mpi(); }
int sl_mpi_shots_recv(struct shot *s, int64_t *seq) { (void)s, (void)seq; return no_mpi(); }
int sl_mpi_shots_reply(const struct shots_reply *r, const float *patch) { (void)r, (void)patch; return no_mpi(); }

#endif
