/* uring_reader — file reads straight into the pinned slots.
 *
 * With io_uring the slots are registered once as fixed buffers and every read is an
 * io_uring_prep_read_fixed into them, several chunks in flight; with O_DIRECT (where
 * the file system allows it) the page cache is bypassed for the aligned part and the
 * unaligned tail is read through a second, buffered descriptor.  When io_uring is not
 * available (old kernel, seccomp sandbox) or not wanted, pread(2) does the same reads;
 * which one is used is logged once. */
#ifndef SEISLIVE_URING_READER_H
#define SEISLIVE_URING_READER_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum uring_method { URING_AUTO = 0, URING_FORCE = 1, URING_PREAD = 2 }; /* = enum io_method */

struct uring_reader {
    struct io_uring ring;
    bool uring;          /* io_uring in use (else pread) */
    bool registered;     /* fixed buffers registered */
    int depth;           /* reads in flight */
    size_t chunk;        /* bytes per read */
    const struct iovec *iov; /* registered buffers (the slots) */
    int n_iov;
};

/* METHOD: URING_AUTO (io_uring, pread when unavailable), URING_FORCE (fail without it),
 * URING_PREAD.  Returns 0 or -errno with err_msg(). */
int uring_reader_init(struct uring_reader *r, int method);
void uring_reader_close(struct uring_reader *r);

/* Register the slot buffers as fixed buffers (no-op for pread).  On failure the reader
 * falls back to plain (non-fixed) io_uring reads and logs why. */
int uring_reader_register(struct uring_reader *r, const struct iovec *iov, int n);
void uring_reader_unregister(struct uring_reader *r);

/* An open input file: a buffered descriptor and, where the file system allows it, an
 * O_DIRECT one. */
struct uring_file {
    int fd;
    int fd_direct;       /* -1 when O_DIRECT is not possible or not wanted */
    off_t size;
    char path[512];
};
int uring_file_open(struct uring_file *f, const char *path, bool o_direct);
void uring_file_close(struct uring_file *f);
/* Refresh f->size (a file that a recorder is still writing). */
int uring_file_stat(struct uring_file *f);

/* Read LEN bytes at OFF of F into DST, which lies inside registered buffer BUF (-1 =
 * not a registered buffer).  Returns the bytes read (short only at end of file) or
 * -errno with err_msg() naming the file and offset. */
ssize_t uring_reader_read(struct uring_reader *r, struct uring_file *f, void *dst, size_t len,
                          off_t off, int buf);

#ifdef __cplusplus
}
#endif

#endif
