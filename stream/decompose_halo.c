/* decompose_halo — host-buffer MPI halo exchange (stream/decompose_halo.h). */
#include "stream/decompose_halo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

int dd_halo_init(struct dd_halo *h, const struct dd_plan *p, int rank, struct prop *s)
{
    memset(h, 0, sizeof *h);
    for (int f = 0; f < PROP_FACES; f++) {
        h->nb[f] = dd_neighbour(p, rank, f);
        if (h->nb[f] < 0)
            continue;
        h->count[f] = prop_halo_count(s, f);
        if (!h->count[f]) {
            dd_halo_free(h);
            return err_set(-EINVAL, "decompose: rank %d face %d has a neighbour but no halo", rank, f);
        }
        h->send[f] = malloc(h->count[f] * sizeof(float));
        h->recv[f] = malloc(h->count[f] * sizeof(float));
        if (!h->send[f] || !h->recv[f]) {
            dd_halo_free(h);
            return err_set(-ENOMEM, "decompose: out of memory for halo buffers");
        }
        h->bytes_step += h->count[f] * sizeof(float);
    }
    return 0;
}

/* Tag of a message: the face it leaves by, so the two faces of one axis never mix. */
int dd_halo_begin(struct dd_halo *h, struct prop *s)
{
    int rc = 0;
    for (int f = 0; f < PROP_FACES && rc == 0; f++)
        if (h->nb[f] >= 0)
            rc = sl_mpi_irecv(&h->x, h->recv[f], h->count[f], h->nb[f], f ^ 1);
    for (int f = 0; f < PROP_FACES && rc == 0; f++)
        if (h->nb[f] >= 0 && (rc = prop_halo_pack(s, f, h->send[f])) == 0)
            rc = sl_mpi_isend(&h->x, h->send[f], h->count[f], h->nb[f], f);
    return rc;
}

int dd_halo_end(struct dd_halo *h, struct prop *s)
{
    int rc = sl_mpi_wait(&h->x);
    for (int f = 0; f < PROP_FACES && rc == 0; f++)
        if (h->nb[f] >= 0)
            rc = prop_halo_unpack(s, f, h->recv[f]);
    return rc;
}

void dd_halo_free(struct dd_halo *h)
{
    for (int f = 0; f < PROP_FACES; f++) {
        free(h->send[f]);
        free(h->recv[f]);
    }
    memset(h, 0, sizeof *h);
}
