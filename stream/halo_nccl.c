/* halo_nccl — NCCL loaded with dlopen for the halo exchange (stream/halo_nccl.h). */
#define LOG_COMPONENT "nccl"
#include "stream/halo_nccl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"
#include "stream/log.h"
#include "stream/mpi.h"

#if defined(SEISLIVE_CUDA) && defined(__has_include)
#if __has_include(<nccl.h>)
#define HAVE_NCCL_H 1
#endif
#endif

#ifdef HAVE_NCCL_H
#include <dlfcn.h>
#include <nccl.h>

/* The entry points, typed by nccl.h's own declarations. */
static struct {
    bool loaded;
    void *lib;
    __typeof__(&ncclGetVersion) get_version;
    __typeof__(&ncclGetUniqueId) get_unique_id;
    __typeof__(&ncclCommInitRank) comm_init_rank;
    __typeof__(&ncclCommDestroy) comm_destroy;
    __typeof__(&ncclSend) send;
    __typeof__(&ncclRecv) recv;
    __typeof__(&ncclGroupStart) group_start;
    __typeof__(&ncclGroupEnd) group_end;
    __typeof__(&ncclGetErrorString) error_string;
    char version[32];
} N;

struct sl_nccl {
    ncclComm_t comm;
};

static const char *nccl_err(ncclResult_t r) { return N.error_string ? N.error_string(r) : "?"; }

int sl_nccl_load(char *why, size_t len)
{
    if (N.loaded)
        return 0;
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, len, "libnccl.so.2 not found (%s); with pip's nvidia-nccl-cu13, put its lib folder on "
                 "LD_LIBRARY_PATH (docs/mpi.md)", dlerror());
        return -ENOENT;
    }
#define SYM(field, name)                                                                           \
    do {                                                                                           \
        *(void **)&N.field = dlsym(lib, name);                                                     \
        if (!N.field) {                                                                            \
            snprintf(why, len, "libnccl.so.2 has no %s (too old?)", name);                         \
            dlclose(lib);                                                                          \
            return -ENOENT;                                                                        \
        }                                                                                          \
    } while (0)
    SYM(get_version, "ncclGetVersion");
    SYM(get_unique_id, "ncclGetUniqueId");
    SYM(comm_init_rank, "ncclCommInitRank");
    SYM(comm_destroy, "ncclCommDestroy");
    SYM(send, "ncclSend");
    SYM(recv, "ncclRecv");
    SYM(group_start, "ncclGroupStart");
    SYM(group_end, "ncclGroupEnd");
    SYM(error_string, "ncclGetErrorString");
#undef SYM
    int v = 0;
    if (N.get_version(&v) != ncclSuccess || v < 20700) {
        /* ncclSend / ncclRecv as used here need 2.7 */
        snprintf(why, len, "libnccl.so.2 is version code %d; 2.7 or later is needed", v);
        dlclose(lib);
        return -ENOENT;
    }
    /* codes since 2.9: major * 10000 + minor * 100 + patch */
    snprintf(N.version, sizeof N.version, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    N.lib = lib;
    N.loaded = true;
    return 0;
}

const char *sl_nccl_version(void) { return N.loaded ? N.version : "not loaded"; }

int sl_nccl_init(int rank, int size, struct sl_nccl **out)
{
    *out = NULL;
    if (!N.loaded)
        return err_set(-ENOENT, "nccl: not loaded");
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    ncclResult_t r = ncclSuccess;
    if (rank == 0)
        r = N.get_unique_id(&id);
    int rc = sl_mpi_agree(r == ncclSuccess ? 0 : err_set(-EIO, "nccl: ncclGetUniqueId: %s", nccl_err(r)));
    if (rc == 0)
        rc = sl_mpi_bcast(&id, sizeof id);
    if (rc < 0)
        return rc;
    struct sl_nccl *c = calloc(1, sizeof *c);
    if (!c)
        return err_set(-ENOMEM, "nccl: out of memory");
    r = N.comm_init_rank(&c->comm, size, id, rank);
    if (r != ncclSuccess) {
        free(c);
        return err_set(-EIO, "nccl: ncclCommInitRank (rank %d of %d): %s", rank, size, nccl_err(r));
    }
    *out = c;
    return 0;
}

int sl_nccl_exchange(struct sl_nccl *c, int n, const int *peer, float *const *send, float *const *recv,
                     const size_t *count, void *stream)
{
    ncclResult_t r = N.group_start();
    for (int i = 0; i < n && r == ncclSuccess; i++) {
        r = N.recv(recv[i], count[i], ncclFloat32, peer[i], c->comm, (cudaStream_t)stream);
        if (r == ncclSuccess)
            r = N.send(send[i], count[i], ncclFloat32, peer[i], c->comm, (cudaStream_t)stream);
    }
    ncclResult_t e = N.group_end();
    if (r == ncclSuccess)
        r = e;
    return r == ncclSuccess ? 0 : err_set(-EIO, "nccl: halo exchange: %s", nccl_err(r));
}

void sl_nccl_free(struct sl_nccl *c)
{
    if (!c)
        return;
    if (c->comm)
        N.comm_destroy(c->comm);
    free(c);
}

#else /* no NCCL header: a build without CUDA */

struct sl_nccl {
    int unused;
};

int sl_nccl_load(char *why, size_t len)
{
    snprintf(why, len, "this build has no CUDA, so no NCCL");
    return -ENOTSUP;
}

const char *sl_nccl_version(void) { return "not compiled in"; }

int sl_nccl_init(int rank, int size, struct sl_nccl **out)
{
    (void)rank;
    (void)size;
    *out = NULL;
    return err_set(-ENOTSUP, "nccl: not compiled in (a build without CUDA)");
}

int sl_nccl_exchange(struct sl_nccl *c, int n, const int *peer, float *const *send, float *const *recv,
                     const size_t *count, void *stream)
{
    (void)c, (void)n, (void)peer, (void)send, (void)recv, (void)count, (void)stream;
    return err_set(-ENOTSUP, "nccl: not compiled in");
}

void sl_nccl_free(struct sl_nccl *c) { free(c); }

#endif
