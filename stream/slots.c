/* slots — pinned slots: mmap -> io_uring registration -> cudaHostRegister. */
#define LOG_COMPONENT "slots"
#include "stream/slots.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/uring_reader.h"
#include "stream/error.h"
#include "stream/log.h"
#include "kernels/device.h"

int slots_create(struct slots *s, int n, size_t bytes, size_t staging, struct uring_reader *ring,
                 const struct sl_device *pin)
{
    memset(s, 0, sizeof *s);
    if (n < 2)
        return err_set(-EINVAL, "slots: %d slots, at least 2 are needed (double buffering)", n);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    bytes = (bytes + page - 1) / page * page;
    staging = (staging + page - 1) / page * page;
    s->n = n;
    s->staging_bytes = staging;
    s->bytes = bytes;
    s->spare = -1;
    /* MAP_POPULATE: fault the pages in now, not during the first reads of a live run. */
    void *p = mmap(NULL, (size_t)n * bytes + staging, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED)
        return err_set(-errno, "slots: mmap of %d x %zu bytes: %s", n, bytes, strerror(errno));
    s->base = p;
    s->iov = calloc((size_t)n + 1, sizeof *s->iov);
    s->hdr = calloc((size_t)n, sizeof *s->hdr);
    if (!s->iov || !s->hdr || spsc_init(&s->free_q, n) < 0 || spsc_init(&s->ready_q, n + 1) < 0) {
        slots_destroy(s);
        return err_set(-ENOMEM, "slots: out of memory");
    }
    for (int i = 0; i < n; i++) {
        s->iov[i].iov_base = s->base + (size_t)i * bytes;
        s->iov[i].iov_len = bytes;
        spsc_try_push(&s->free_q, i);
    }
    if (staging) {
        s->staging = s->base + (size_t)n * bytes;
        s->iov[n].iov_base = s->staging;
        s->iov[n].iov_len = staging;
    }
    if (ring) {
        uring_reader_register(ring, s->iov, n + (staging ? 1 : 0));
        s->ring = ring;
    }
    if (pin && dev_is_gpu(pin)) {
        int rc = dev_host_register(pin, s->base, (size_t)n * bytes);
        if (rc < 0) {
            slots_destroy(s);
            return err_prefix(rc, "slots: page-locking %d x %zu bytes", n, bytes);
        }
        s->cuda_pinned = true;
        s->pinned_on = *pin;
    }
    log_info("%d slots of %.1f MiB%s%s", n, (double)bytes / (1 << 20),
             ring && ring->registered ? ", io_uring fixed buffers" : "",
             s->cuda_pinned ? ", CUDA page-locked" : "");
    return 0;
}

void slots_destroy(struct slots *s)
{
    if (s->cuda_pinned)
        dev_host_unregister(&s->pinned_on, s->base);
    s->cuda_pinned = false;
    if (s->ring)
        uring_reader_unregister(s->ring);
    s->ring = NULL;
    if (s->base)
        munmap(s->base, (size_t)s->n * s->bytes + s->staging_bytes);
    s->base = NULL;
    free(s->iov);
    free(s->hdr);
    s->iov = NULL;
    s->hdr = NULL;
    spsc_destroy(&s->free_q);
    spsc_destroy(&s->ready_q);
}

int slots_reserve(struct slots *s, int timeout_ms)
{
    int i = s->spare;
    s->spare = -1;
    if (i >= 0 || spsc_try_pop(&s->free_q, &i) == 0)
        goto got;
    s->full_waits++;
    int rc = spsc_pop(&s->free_q, &i, timeout_ms);
    if (rc < 0)
        return rc;
got:
    memset(&s->hdr[i], 0, sizeof s->hdr[i]);
    return i;
}

void slots_commit(struct slots *s, int i)
{
    /* The ready queue holds n + 1 entries: every slot plus the end marker never block. */
    spsc_push(&s->ready_q, i, -1);
}

void slots_unreserve(struct slots *s, int i)
{
    /* Kept on the ingest side: the free queue has one producer, the worker. */
    s->spare = i;
}

void slots_close(struct slots *s)
{
    spsc_close(&s->ready_q);
}

int slots_acquire(struct slots *s, int timeout_ms)
{
    int i;
    int rc = spsc_pop(&s->ready_q, &i, timeout_ms);
    return rc < 0 ? rc : i;
}

void slots_release(struct slots *s, int i)
{
    spsc_push(&s->free_q, i, -1);
}
