/* decompose_halo — the halo exchange's transports (stream/decompose_halo.h). */
#define LOG_COMPONENT "decompose"
#include "stream/decompose_halo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "stream/error.h"
#include "stream/halo_nccl.h"
#include "stream/log.h"

const char *dd_halo_transport_name(int transport)
{
    return transport == DD_HALO_NCCL ? "nccl" : transport == DD_HALO_STAGED ? "staged" : "mpi";
}

int dd_halo_init(struct dd_halo *h, const struct dd_plan *p, int rank, struct prop *s)
{
    memset(h, 0, sizeof *h);
    h->dev = prop_device(s);
    h->gpu = dev_is_gpu(h->dev);
    h->transport = h->gpu ? DD_HALO_STAGED : DD_HALO_MPI;
    snprintf(h->why, sizeof h->why, "%s", h->gpu ? "GPU: MPI through pinned host buffers" : "CPU: MPI");
    int rc = 0;
    for (int f = 0; f < PROP_FACES && rc == 0; f++) {
        h->nb[f] = dd_neighbour(p, rank, f);
        if (h->nb[f] < 0)
            continue;
        h->count[f] = prop_halo_count(s, f);
        if (!h->count[f]) {
            rc = err_set(-EINVAL, "decompose: rank %d face %d has a neighbour but no halo", rank, f);
            break;
        }
        const size_t bytes = h->count[f] * sizeof(float);
        h->send[f] = malloc(bytes);
        h->recv[f] = malloc(bytes);
        if (!h->send[f] || !h->recv[f]) {
            rc = err_set(-ENOMEM, "decompose: out of memory for halo buffers");
            break;
        }
        h->bytes_step += bytes;
        if (!h->gpu)
            continue;
        /* page-locked, so that the copies on the halo stream run beside the step and
         * MPI reads and writes them where they are */
        if ((rc = dev_host_register(h->dev, h->send[f], bytes)) < 0 ||
            (rc = dev_host_register(h->dev, h->recv[f], bytes)) < 0)
            break;
        h->pinned = true;
        if ((rc = dev_alloc(h->dev, bytes, (void **)&h->dsend[f])) < 0 ||
            (rc = dev_alloc(h->dev, bytes, (void **)&h->drecv[f])) < 0)
            break;
    }
    if (rc == 0 && h->gpu &&
        ((rc = dev_stream_create(h->dev, &h->stream)) < 0 || (rc = dev_event_create(h->dev, &h->ev_ready, false)) < 0 ||
         (rc = dev_event_create(h->dev, &h->ev_done, false)) < 0))
        err_prefix(rc, "decompose: the halo stream");
    if (rc < 0)
        dd_halo_free(h);
    return rc;
}

void dd_halo_set_stream(struct dd_halo *h, void *sim_stream)
{
    h->sim_stream = sim_stream;
    h->sim_stream_set = true;
}

/* What each rank brings to the choice of transport. */
struct facts {
    unsigned char uuid[16];
    int gpu, nccl_ok;
};

static void uuid_text(const unsigned char u[16], char *out)
{
    for (int i = 0; i < 4; i++)
        sprintf(out + 2 * i, "%02x", u[i]);
}

/* The decision, the same on every rank (it reads only the gathered facts): 1 for NCCL,
 * 0 for staged with the reason in WHY. */
static int choose(const struct facts *all, int size, int want, const char *mine, char *why, size_t len)
{
    for (int r = 0; r < size; r++)
        if (!all[r].gpu) {
            snprintf(why, len, "rank %d runs on the CPU", r);
            return 0;
        }
    if (want == DD_WANT_STAGED) {
        snprintf(why, len, "[runtime] halo_transport = \"staged\"");
        return 0;
    }
    for (int a = 0; a < size; a++)
        for (int b = a + 1; b < size; b++)
            if (!memcmp(all[a].uuid, all[b].uuid, 16)) {
                char u[9];
                uuid_text(all[a].uuid, u);
                snprintf(why, len, "ranks %d and %d share GPU %s.. (NCCL needs a GPU per rank)", a, b, u);
                return 0;
            }
    for (int r = 0; r < size; r++)
        if (!all[r].nccl_ok) {
            snprintf(why, len, "rank %d cannot load NCCL%s%s", r, mine ? ": " : "", mine ? mine : "");
            return 0;
        }
    return 1;
}

int dd_halo_connect(struct dd_halo *h, int want)
{
    const int size = sl_mpi_size(), rank = sl_mpi_rank();
    if (size <= 1)
        return 0;
    struct facts me = {.gpu = h->gpu}, *all = calloc((size_t)size, sizeof *all);
    if (!all)
        return sl_mpi_agree(err_set(-ENOMEM, "decompose: out of memory"));
    char loadwhy[200] = "";
    int rc = 0;
    if (h->gpu) {
        rc = dev_uuid(h->dev, me.uuid);
        if (rc == 0 && want != DD_WANT_STAGED)
            me.nccl_ok = sl_nccl_load(loadwhy, sizeof loadwhy) == 0;
    }
    if ((rc = sl_mpi_agree(rc)) == 0)
        rc = sl_mpi_allgather(&me, sizeof me, all);
    if (rc < 0) {
        free(all);
        return rc;
    }
    char why[256], lib[240] = "";
    int nccl = choose(all, size, want, me.nccl_ok || !h->gpu ? NULL : loadwhy, why, sizeof why);
    free(all);
    if (me.nccl_ok)
        snprintf(lib, sizeof lib, " (rank %d loaded NCCL %s)", rank, sl_nccl_version());
    if (!nccl) {
        if (want == DD_WANT_NCCL) {
            sl_mpi_all_know();
            return err_set(-EINVAL, "[runtime] halo_transport = \"nccl\" cannot be used: %s%s; use \"auto\" or "
                           "\"staged\" (docs/mpi.md)", why, lib);
        }
        if (h->gpu) {
            snprintf(h->why, sizeof h->why, "staged (MPI through pinned host buffers): %s", why);
            log_info("halo transport: %s", h->why);
        }
        return 0;
    }
    rc = sl_mpi_agree(sl_nccl_init(rank, size, &h->nccl));
    if (rc < 0)
        return rc;
    h->transport = DD_HALO_NCCL;
    snprintf(h->why, sizeof h->why, "nccl %s: every rank on a GPU of its own", sl_nccl_version());
    log_info("halo transport: %s", h->why);
    return 0;
}

/* The halo stream after the work that computed the planes. */
static int after_planes(struct dd_halo *h, struct prop *s)
{
    if (!h->sim_stream_set)
        return prop_sync(s);
    int rc = dev_event_record(h->dev, h->ev_ready, h->sim_stream);
    return rc < 0 ? rc : dev_stream_wait(h->dev, h->stream, h->ev_ready);
}

/* The simulation's next work after the unpack queued on the halo stream. */
static int before_next(struct dd_halo *h)
{
    int rc = dev_event_record(h->dev, h->ev_done, h->stream);
    if (rc < 0)
        return rc;
    if (!h->sim_stream_set)
        return dev_stream_sync(h->dev, h->stream);
    return dev_stream_wait(h->dev, h->sim_stream, h->ev_done);
}

/* Tag of a message: the face it leaves by, so the two faces of one axis never mix. */
int dd_halo_begin(struct dd_halo *h, struct prop *s)
{
    if (h->begun)
        return err_set(-EINVAL, "decompose: a halo exchange begun twice");
    int rc = 0;
    if (h->transport == DD_HALO_MPI) {
        for (int f = 0; f < PROP_FACES && rc == 0; f++)
            if (h->nb[f] >= 0)
                rc = sl_mpi_irecv(&h->x, h->recv[f], h->count[f], h->nb[f], f ^ 1);
        for (int f = 0; f < PROP_FACES && rc == 0; f++)
            if (h->nb[f] >= 0 && (rc = prop_halo_pack(s, f, h->send[f])) == 0)
                rc = sl_mpi_isend(&h->x, h->send[f], h->count[f], h->nb[f], f);
        h->begun = rc == 0;
        return rc;
    }
    if ((rc = after_planes(h, s)) < 0)
        return rc;
    for (int f = 0; f < PROP_FACES && rc == 0; f++)
        if (h->nb[f] >= 0)
            rc = prop_halo_pack_async(s, f, h->dsend[f], h->stream);
    if (h->transport == DD_HALO_STAGED) {
        for (int f = 0; f < PROP_FACES && rc == 0; f++)
            if (h->nb[f] >= 0 && (rc = dev_copy(h->dev, h->send[f], h->dsend[f], h->count[f] * sizeof(float), DEV_D2H,
                                                h->stream)) == 0)
                rc = sl_mpi_irecv(&h->x, h->recv[f], h->count[f], h->nb[f], f ^ 1);
    } else {
        int n = 0, peer[PROP_FACES];
        float *snd[PROP_FACES], *rcv[PROP_FACES];
        size_t cnt[PROP_FACES];
        for (int f = 0; f < PROP_FACES; f++)
            if (h->nb[f] >= 0) {
                peer[n] = h->nb[f];
                snd[n] = h->dsend[f];
                rcv[n] = h->drecv[f];
                cnt[n++] = h->count[f];
            }
        if (rc == 0 && n)
            rc = sl_nccl_exchange(h->nccl, n, peer, snd, rcv, cnt, h->stream);
        for (int f = 0; f < PROP_FACES && rc == 0; f++)
            if (h->nb[f] >= 0)
                rc = prop_halo_unpack_async(s, f, h->drecv[f], h->stream);
    }
    /* a caller that gave no stream may change the field right after begin (as it could
     * when pack copied synchronously): the planes leave the field before begin returns */
    if (rc == 0 && !h->sim_stream_set)
        rc = dev_stream_sync(h->dev, h->stream);
    h->begun = rc == 0;
    return rc;
}

int dd_halo_end(struct dd_halo *h, struct prop *s)
{
    if (!h->begun)
        return err_set(-EINVAL, "decompose: a halo exchange ended without a begin");
    h->begun = false;
    int rc = 0;
    if (h->transport == DD_HALO_MPI) {
        rc = sl_mpi_wait(&h->x);
        for (int f = 0; f < PROP_FACES && rc == 0; f++)
            if (h->nb[f] >= 0)
                rc = prop_halo_unpack(s, f, h->recv[f]);
        return rc;
    }
    if (h->transport == DD_HALO_STAGED) {
        /* the planes are in host memory once the copies queued in begin are done; the
         * host waits for them only (the rest of the step keeps running) */
        rc = dev_stream_sync(h->dev, h->stream);
        for (int f = 0; f < PROP_FACES && rc == 0; f++)
            if (h->nb[f] >= 0)
                rc = sl_mpi_isend(&h->x, h->send[f], h->count[f], h->nb[f], f);
        int w = sl_mpi_wait(&h->x);
        if (rc == 0)
            rc = w;
        for (int f = 0; f < PROP_FACES && rc == 0; f++)
            if (h->nb[f] >= 0 && (rc = dev_copy(h->dev, h->drecv[f], h->recv[f], h->count[f] * sizeof(float), DEV_H2D,
                                                h->stream)) == 0)
                rc = prop_halo_unpack_async(s, f, h->drecv[f], h->stream);
    }
    return rc < 0 ? rc : before_next(h);
}

void dd_halo_free(struct dd_halo *h)
{
    if (h->gpu && h->stream)
        dev_stream_sync(h->dev, h->stream);
    sl_nccl_free(h->nccl);
    for (int f = 0; f < PROP_FACES; f++) {
        if (h->pinned) {
            if (h->send[f])
                dev_host_unregister(h->dev, h->send[f]);
            if (h->recv[f])
                dev_host_unregister(h->dev, h->recv[f]);
        }
        free(h->send[f]);
        free(h->recv[f]);
        if (h->gpu) {
            dev_free(h->dev, h->dsend[f]);
            dev_free(h->dev, h->drecv[f]);
        }
    }
    if (h->gpu) {
        dev_event_destroy(h->dev, h->ev_ready);
        dev_event_destroy(h->dev, h->ev_done);
        dev_stream_destroy(h->dev, h->stream);
    }
    memset(h, 0, sizeof *h);
}
