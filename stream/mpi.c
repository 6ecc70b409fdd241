/* mpi — Open MPI behind stream/mpi.h, or the one-rank case without it. */
#define LOG_COMPONENT "mpi"
#include "stream/mpi.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "stream/error.h"
#include "stream/log.h"

#ifdef SEISLIVE_MPI
#include <mpi.h>
_Static_assert(sizeof(MPI_Request) <= sizeof(uint64_t), "MPI_Request does not fit struct sl_mpi_xfer");
#endif

static int g_rank = 0, g_size = 1, g_local = 0;
#ifdef SEISLIVE_MPI
static bool g_started = false; /* MPI_Init called */
#endif
static bool g_agreed = false;  /* the last failure was agreed by every rank */

bool sl_mpi_compiled(void)
{
#ifdef SEISLIVE_MPI
    return true;
#else
    return false;
#endif
}

/* The world size an MPI launcher announced in the environment, or 0. */
static int launcher_size(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", NULL};
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v) > 0 ? atoi(v) : 1;
    }
    return getenv("PMIX_RANK") ? 1 : 0;
}

int sl_mpi_init(int *argc, char ***argv)
{
    int announced = launcher_size();
#ifdef SEISLIVE_MPI
    if (announced == 0)
        return 0;
    int provided = 0;
    /* SERIALIZED: OpenMP threads compute; one thread at a time calls MPI, not always the
     * main one (the rtm job's pipeline migrates on its worker thread) */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
        return err_set(-EIO, "MPI_Init failed");
    g_started = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &g_local);
    MPI_Comm_free(&node);
    log_set_rank(g_rank, g_size);
    if (g_size > 1)
        log_debug("rank %d of %d, local rank %d (MPI thread level %d)", g_rank, g_size, g_local, provided);
    return 0;
#else
    (void)argc;
    (void)argv;
    if (announced > 1)
        return err_set(-ENOTSUP, "started by an MPI launcher with %d ranks, but this seislive was built without "
                       "MPI: install openmpi-bin and libopenmpi-dev (make deps) and rebuild, or run it without "
                       "mpirun (docs/mpi.md)", announced);
    return 0;
#endif
}

int sl_mpi_finish(int code)
{
#ifdef SEISLIVE_MPI
    if (g_started) {
        if (code != 0 && g_size > 1 && !g_agreed) {
            log_error("rank %d ends the job (exit %d): the other ranks cannot go on without it", g_rank, code);
            MPI_Abort(MPI_COMM_WORLD, code);
        }
        MPI_Finalize();
        g_started = false;
    }
#endif
    return code;
}

void sl_mpi_abort(int code)
{
    code = code < 0 ? 1 : code;
#ifdef SEISLIVE_MPI
    if (g_started && g_size > 1)
        MPI_Abort(MPI_COMM_WORLD, code);
#endif
    exit(code);
}

int sl_mpi_rank(void) { return g_rank; }
int sl_mpi_size(void) { return g_size; }
int sl_mpi_local_rank(void) { return g_local; }

void sl_mpi_device_spec(const char *spec, const char *map, int ngpu, char *out, size_t len)
{
    snprintf(out, len, "%s", spec);
    if (g_size <= 1 || strcmp(spec, "auto") != 0)
        return;
    if (map && *map) {
        int count = 1;
        for (const char *c = map; *c; c++)
            count += *c == ',';
        const char *c = map;
        for (int i = 0; i < g_local % count; i++)
            c = strchr(c, ',') + 1;
        snprintf(out, len, "cuda:%d", atoi(c));
    } else if (ngpu > 0) {
        snprintf(out, len, "cuda:%d", g_local % ngpu);
    }
}

int sl_mpi_agree(int rc)
{
#ifdef SEISLIVE_MPI
    if (g_size > 1) {
        int mine[2] = {rc, g_rank}, worst[2];
        MPI_Allreduce(mine, worst, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
        if (worst[0] < 0) {
            g_agreed = true;
            if (rc == 0)
                return err_set(-ECANCELED, "rank %d of %d failed (its log says why)", worst[1], g_size);
            return rc;
        }
        return 0;
    }
#endif
    if (rc < 0)
        g_agreed = true;
    return rc;
}

void sl_mpi_all_know(void) { g_agreed = true; }

int sl_mpi_same(uint64_t fp, const char *what)
{
#ifdef SEISLIVE_MPI
    if (g_size > 1) {
        uint64_t *all = malloc((size_t)g_size * sizeof *all);
        if (!all)
            return sl_mpi_agree(err_set(-ENOMEM, "mpi: out of memory"));
        MPI_Allgather(&fp, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
        int bad = -1;
        for (int r = 1; r < g_size && bad < 0; r++)
            if (all[r] != all[0])
                bad = r;
        uint64_t f0 = all[0], fb = bad >= 0 ? all[bad] : 0;
        free(all);
        if (bad >= 0) {
            g_agreed = true;
            return err_set(-EINVAL, "rank %d runs another %s than rank 0 (fingerprint %016llx, rank 0's %016llx): "
                           "every rank must start with the same one", bad, what, (unsigned long long)fb,
                           (unsigned long long)f0);
        }
    }
#else
    (void)fp;
    (void)what;
#endif
    return 0;
}

bool sl_mpi_any(bool flag)
{
#ifdef SEISLIVE_MPI
    if (g_size > 1) {
        int in = flag, out = 0;
        MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        return out != 0;
    }
#endif
    return flag;
}

int sl_mpi_bcast(void *buf, size_t bytes)
{
#ifdef SEISLIVE_MPI
    if (g_size > 1) {
        if (bytes > INT_MAX)
            return err_set(-EOVERFLOW, "mpi: broadcast of %zu bytes", bytes);
        MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
#else
    (void)buf;
    (void)bytes;
#endif
    return 0;
}

int sl_mpi_bcast_idle(void *buf, size_t bytes)
{
#ifdef SEISLIVE_MPI
    if (g_size > 1) {
        if (bytes > INT_MAX)
            return err_set(-EOVERFLOW, "mpi: broadcast of %zu bytes", bytes);
        MPI_Request req;
        if (MPI_Ibcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
            return err_set(-EIO, "MPI_Ibcast failed");
        for (;;) {
            int done = 0;
            if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return err_set(-EIO, "MPI_Test failed");
            if (done)
                break;
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
    }
#else
    (void)buf;
    (void)bytes;
#endif
    return 0;
}

int sl_mpi_allgather(const void *send, size_t bytes, void *recv)
{
    if (g_size <= 1) {
        if (bytes && recv != send)
            memcpy(recv, send, bytes);
        return 0;
    }
#ifdef SEISLIVE_MPI
    if (bytes > INT_MAX)
        return err_set(-EOVERFLOW, "mpi: allgather of %zu bytes", bytes);
    int rc = MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : err_set(-EIO, "MPI_Allgather failed");
#else
    return 0;
#endif
}

#ifdef SEISLIVE_MPI
/* sl_mpi_gather's messages: point to point, GATHER_CHUNK floats at most each.  MPI counts
 * are ints: MPI_Gatherv could not carry a part of 2^31 floats or more, nor place one past
 * float 2^31 of RECV, and the decomposed image of a 2200 x 2200 x 1100 shot on two H200s
 * (issue 17) is 2.66e9 floats a rank: its gather was refused and the shot lost. */
#define GATHER_TAG 7201
#define GATHER_CHUNK ((size_t)1 << 28)
#endif

int sl_mpi_gather(const float *send, size_t n, float *recv, const size_t *counts)
{
    if (g_size <= 1) {
        if (n && recv != send)
            memcpy(recv, send, n * sizeof *send);
        return 0;
    }
#ifdef SEISLIVE_MPI
    if (g_rank != 0) {
        /* the count first: rank 0 checks it against what it expects before any float */
        const unsigned long long nn = n;
        if (MPI_Send(&nn, (int)sizeof nn, MPI_BYTE, 0, GATHER_TAG, MPI_COMM_WORLD) != MPI_SUCCESS)
            return err_set(-EIO, "mpi: gather: sending rank %d's count failed", g_rank);
        for (size_t at = 0; at < n; at += GATHER_CHUNK) {
            const int k = (int)(n - at < GATHER_CHUNK ? n - at : GATHER_CHUNK);
            if (MPI_Send(send + at, k, MPI_FLOAT, 0, GATHER_TAG, MPI_COMM_WORLD) != MPI_SUCCESS)
                return err_set(-EIO, "mpi: gather: sending floats %zu..%zu of %zu from rank %d failed", at,
                               at + (size_t)k, n, g_rank);
        }
        return 0;
    }
    if (n != counts[0])
        return err_set(-EINVAL, "mpi: gather: rank 0 has %zu floats, %zu expected", n, counts[0]);
    if (n && recv != send)
        memcpy(recv, send, n * sizeof *send);
    size_t where = counts[0];
    for (int r = 1; r < g_size; r++) {
        unsigned long long nn = 0;
        if (MPI_Recv(&nn, (int)sizeof nn, MPI_BYTE, r, GATHER_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return err_set(-EIO, "mpi: gather: receiving rank %d's count failed", r);
        if (nn != counts[r])
            return err_set(-EPROTO, "mpi: gather: rank %d sends %llu floats, %zu expected", r, nn, counts[r]);
        for (size_t at = 0; at < counts[r]; at += GATHER_CHUNK) {
            const size_t k = counts[r] - at < GATHER_CHUNK ? counts[r] - at : GATHER_CHUNK;
            MPI_Status st;
            int got = 0;
            if (MPI_Recv(recv + where + at, (int)k, MPI_FLOAT, r, GATHER_TAG, MPI_COMM_WORLD, &st) != MPI_SUCCESS ||
                MPI_Get_count(&st, MPI_FLOAT, &got) != MPI_SUCCESS)
                return err_set(-EIO, "mpi: gather: receiving floats %zu.. of %zu from rank %d failed", at, counts[r], r);
            if (got < 0 || (size_t)got != k)
                return err_set(-EPROTO, "mpi: gather: rank %d sent %d floats at float %zu, %zu expected", r, got, at, k);
        }
        where += counts[r];
    }
    return 0;
#else
    (void)counts;
    return 0;
#endif
}

#ifdef SEISLIVE_MPI
static int post(struct sl_mpi_xfer *x, float *buf, size_t n, int peer, int tag, bool send)
{
    if (x->n >= SL_MPI_MAX_REQ)
        return err_set(-EOVERFLOW, "mpi: more than %d transfers at once", SL_MPI_MAX_REQ);
    if (n > INT_MAX)
        return err_set(-EOVERFLOW, "mpi: a message of %zu floats", n);
    MPI_Request r;
    int rc = send ? MPI_Isend(buf, (int)n, MPI_FLOAT, peer, tag, MPI_COMM_WORLD, &r)
                  : MPI_Irecv(buf, (int)n, MPI_FLOAT, peer, tag, MPI_COMM_WORLD, &r);
    if (rc != MPI_SUCCESS)
        return err_set(-EIO, "mpi: %s of %zu floats with rank %d failed", send ? "MPI_Isend" : "MPI_Irecv", n, peer);
    memcpy(&x->req[x->n++], &r, sizeof r);
    return 0;
}
#endif

int sl_mpi_irecv(struct sl_mpi_xfer *x, float *buf, size_t n, int peer, int tag)
{
#ifdef SEISLIVE_MPI
    return post(x, buf, n, peer, tag, false);
#else
    (void)x, (void)buf, (void)n, (void)tag;
    return err_set(-ENOTSUP, "mpi: a transfer with rank %d in a build without MPI", peer);
#endif
}

int sl_mpi_isend(struct sl_mpi_xfer *x, const float *buf, size_t n, int peer, int tag)
{
#ifdef SEISLIVE_MPI
    return post(x, (float *)buf, n, peer, tag, true);
#else
    (void)x, (void)buf, (void)n, (void)tag;
    return err_set(-ENOTSUP, "mpi: a transfer with rank %d in a build without MPI", peer);
#endif
}

int sl_mpi_wait(struct sl_mpi_xfer *x)
{
#ifdef SEISLIVE_MPI
    MPI_Request r[SL_MPI_MAX_REQ];
    for (int i = 0; i < x->n; i++)
        memcpy(&r[i], &x->req[i], sizeof r[i]);
    int rc = x->n ? MPI_Waitall(x->n, r, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    x->n = 0;
    return rc == MPI_SUCCESS ? 0 : err_set(-EIO, "mpi: MPI_Waitall failed");
#else
    x->n = 0;
    return 0;
#endif
}
