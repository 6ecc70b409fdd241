/* uring_reader — io_uring fixed-buffer reads into the slots, pread fallback. */
#define LOG_COMPONENT "uring"
#include "io/uring_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/error.h"
#include "stream/log.h"

#define DIRECT_ALIGN 4096

int uring_reader_init(struct uring_reader *r, int method)
{
    memset(r, 0, sizeof *r);
    r->depth = 8;
    r->chunk = 1 << 20;
    if (method == URING_PREAD) {
        log_info("file reads: pread (configured)");
        return 0;
    }
    int rc = io_uring_queue_init(32, &r->ring, 0);
    if (rc < 0) {
        if (method == URING_FORCE)
            return err_set(rc, "io_uring_queue_init: %s (input.io = \"uring\")", strerror(-rc));
        log_warn("io_uring unavailable (%s): file reads fall back to pread", strerror(-rc));
        return 0;
    }
    r->uring = true;
    log_info("file reads: io_uring");
    return 0;
}

void uring_reader_close(struct uring_reader *r)
{
    uring_reader_unregister(r);
    if (r->uring)
        io_uring_queue_exit(&r->ring);
    r->uring = false;
}

int uring_reader_register(struct uring_reader *r, const struct iovec *iov, int n)
{
    r->iov = iov;
    r->n_iov = n;
    if (!r->uring)
        return 0;
    int rc = io_uring_register_buffers(&r->ring, iov, (unsigned)n);
    if (rc < 0) {
        /* RLIMIT_MEMLOCK too small, for instance: plain io_uring reads still work. */
        log_warn("io_uring_register_buffers (%d slots): %s: reads will not use fixed buffers", n,
                 strerror(-rc));
        return 0;
    }
    r->registered = true;
    log_info("io_uring: %d slots registered as fixed buffers", n);
    return 0;
}

void uring_reader_unregister(struct uring_reader *r)
{
    if (r->registered)
        io_uring_unregister_buffers(&r->ring);
    r->registered = false;
}

int uring_file_open(struct uring_file *f, const char *path, bool o_direct)
{
    memset(f, 0, sizeof *f);
    f->fd_direct = -1;
    snprintf(f->path, sizeof f->path, "%s", path);
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0)
        return err_set(-errno, "%s: %s", path, strerror(errno));
    if (o_direct) {
        /* tmpfs and some others refuse O_DIRECT (EINVAL): buffered reads then. */
        f->fd_direct = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
        if (f->fd_direct < 0)
            log_debug("%s: O_DIRECT not available (%s): buffered reads", path, strerror(errno));
    }
    return uring_file_stat(f);
}

void uring_file_close(struct uring_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->fd_direct >= 0)
        close(f->fd_direct);
    f->fd = f->fd_direct = -1;
}

int uring_file_stat(struct uring_file *f)
{
    struct stat st;
    if (fstat(f->fd, &st) < 0)
        return err_set(-errno, "%s: stat: %s", f->path, strerror(errno));
    f->size = st.st_size;
    return 0;
}

static ssize_t pread_all(int fd, const char *path, char *dst, size_t len, off_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, dst + done, len - done, off + (off_t)done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return err_set(-errno, "%s: read at byte %lld: %s", path, (long long)(off + (off_t)done),
                           strerror(errno));
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

/* io_uring: LEN bytes in chunks, up to depth in flight.  Returns the contiguous prefix
 * read; a chunk that came back short before the end is completed with pread. */
static ssize_t uring_read(struct uring_reader *r, int fd, const char *path, char *dst, size_t len,
                          off_t off, int buf)
{
    size_t nchunks = (len + r->chunk - 1) / r->chunk, next = 0, done_n = 0;
    size_t first_short = SIZE_MAX;
    int inflight = 0;
    ssize_t err = 0;
    while (done_n < nchunks) {
        while (next < nchunks && inflight < r->depth) {
            struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
            if (!sqe)
                break;
            size_t o = next * r->chunk, n = len - o < r->chunk ? len - o : r->chunk;
            if (r->registered && buf >= 0)
                io_uring_prep_read_fixed(sqe, fd, dst + o, (unsigned)n, off + (off_t)o, buf);
            else
                io_uring_prep_read(sqe, fd, dst + o, (unsigned)n, off + (off_t)o);
            io_uring_sqe_set_data64(sqe, next);
            next++;
            inflight++;
        }
        int rc = io_uring_submit_and_wait(&r->ring, 1);
        if (rc < 0 && rc != -EINTR)
            return err_set(rc, "%s: io_uring_submit: %s", path, strerror(-rc));
        struct io_uring_cqe *cqe;
        while (io_uring_peek_cqe(&r->ring, &cqe) == 0) {
            size_t i = (size_t)io_uring_cqe_get_data64(cqe);
            size_t o = i * r->chunk, n = len - o < r->chunk ? len - o : r->chunk;
            if (cqe->res < 0 && !err)
                err = err_set(cqe->res, "%s: read at byte %lld: %s", path,
                              (long long)(off + (off_t)o), strerror(-cqe->res));
            else if (cqe->res >= 0 && (size_t)cqe->res < n && i < first_short)
                first_short = i;
            io_uring_cqe_seen(&r->ring, cqe);
            inflight--;
            done_n++;
        }
    }
    if (err)
        return err;
    if (first_short == SIZE_MAX)
        return (ssize_t)len;
    /* Complete from the first short chunk on (EOF, or a short read of a pipe-like file). */
    size_t o = first_short * r->chunk;
    ssize_t n = pread_all(fd, path, dst + o, len - o, off + (off_t)o);
    return n < 0 ? n : (ssize_t)(o + (size_t)n);
}

ssize_t uring_reader_read(struct uring_reader *r, struct uring_file *f, void *dst, size_t len,
                          off_t off, int buf)
{
    char *d = dst;
    size_t direct = 0;
    if (f->fd_direct >= 0 && off % DIRECT_ALIGN == 0 && (uintptr_t)d % DIRECT_ALIGN == 0)
        direct = len / DIRECT_ALIGN * DIRECT_ALIGN;
    /* O_DIRECT for the aligned part; reading at or past the end is fine there. */
    ssize_t got = 0;
    if (direct) {
        got = r->uring ? uring_read(r, f->fd_direct, f->path, d, direct, off, buf)
                       : pread_all(f->fd_direct, f->path, d, direct, off);
        if (got < 0)
            return got;
        if ((size_t)got < direct)
            return got; /* end of file inside the aligned part */
    }
    size_t rest = len - (size_t)got;
    if (!rest)
        return got;
    ssize_t t = r->uring ? uring_read(r, f->fd, f->path, d + got, rest, off + got, buf)
                         : pread_all(f->fd, f->path, d + got, rest, off + got);
    return t < 0 ? t : got + t;
}
