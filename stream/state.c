/* state — atomic checkpoint file: header, arrays, FNV-1a checksum. */
#define LOG_COMPONENT "state"
#include "stream/state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/error.h"
#include "stream/log.h"

#define STATE_MAGIC "SLSTATE1"

struct state_file_hdr {
    char magic[8];
    uint64_t fingerprint;
    int32_t n[3];
    int32_t pad;
    uint64_t n_image, n_illum, n_ledger, catalogue_len;
    int64_t last_t_ns;
};

void state_init(struct state *s)
{
    memset(s, 0, sizeof *s);
    s->last_t_ns = -1;
}

void state_free(struct state *s)
{
    free(s->image);
    free(s->illum);
    free(s->ledger);
    free(s->catalogue);
    state_init(s);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static int write_all(int fd, const void *p, size_t n, uint64_t *h, const char *path)
{
    const char *c = p;
    *h = fnv(*h, p, n);
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return err_set(-errno, "%s: write: %s", path, strerror(errno));
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int state_save(const char *dir, const struct state *s)
{
    char tmp[4096], fin[4096];
    snprintf(tmp, sizeof tmp, "%s/state.bin.tmp", dir);
    snprintf(fin, sizeof fin, "%s/state.bin", dir);
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return err_set(-errno, "%s: mkdir: %s", dir, strerror(errno));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return err_set(-errno, "%s: %s", tmp, strerror(errno));
    struct state_file_hdr h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, STATE_MAGIC, 8);
    h.fingerprint = s->fingerprint;
    for (int i = 0; i < 3; i++)
        h.n[i] = s->n[i];
    h.n_image = s->n_image;
    h.n_illum = s->n_illum;
    h.n_ledger = s->n_ledger;
    h.catalogue_len = s->catalogue ? s->catalogue_len : 0;
    h.last_t_ns = s->last_t_ns;
    uint64_t sum = 14695981039346656037ULL;
    int rc = write_all(fd, &h, sizeof h, &sum, tmp);
    if (!rc && s->n_image)
        rc = write_all(fd, s->image, s->n_image * sizeof(float), &sum, tmp);
    if (!rc && s->n_illum)
        rc = write_all(fd, s->illum, s->n_illum * sizeof(float), &sum, tmp);
    if (!rc && s->n_ledger)
        rc = write_all(fd, s->ledger, s->n_ledger * sizeof(int64_t), &sum, tmp);
    if (!rc && h.catalogue_len)
        rc = write_all(fd, s->catalogue, h.catalogue_len, &sum, tmp);
    uint64_t dummy = 0, sum_copy = sum;
    if (!rc)
        rc = write_all(fd, &sum_copy, sizeof sum_copy, &dummy, tmp);
    /* The data must be on disk before the rename makes them the checkpoint. */
    if (!rc && fsync(fd) < 0)
        rc = err_set(-errno, "%s: fsync: %s", tmp, strerror(errno));
    close(fd);
    if (!rc && rename(tmp, fin) < 0)
        rc = err_set(-errno, "rename %s -> %s: %s", tmp, fin, strerror(errno));
    if (rc) {
        unlink(tmp);
        return rc;
    }
    /* And the rename itself must survive a power cut. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return err_set(-errno, "%s: %s", dir, strerror(errno));
    if (fsync(dfd) < 0)
        rc = err_set(-errno, "%s: fsync: %s", dir, strerror(errno));
    close(dfd);
    return rc;
}

static int read_part(FILE *f, void *p, size_t n, uint64_t *h, const char *path, const char *what)
{
    if (n && fread(p, 1, n, f) != n)
        return err_set(-EIO, "%s: truncated (%s)", path, what);
    *h = fnv(*h, p, n);
    return 0;
}

int state_load(const char *dir, uint64_t fingerprint, struct state *s)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/state.bin", dir);
    state_init(s);
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT ? -ENOENT : err_set(-errno, "%s: %s", path, strerror(errno));
    struct state_file_hdr h;
    uint64_t sum = 14695981039346656037ULL;
    int rc = read_part(f, &h, sizeof h, &sum, path, "header");
    if (!rc && memcmp(h.magic, STATE_MAGIC, 8) != 0)
        rc = err_set(-EINVAL, "%s: not a seislive state file", path);
    if (!rc && h.fingerprint != fingerprint)
        rc = err_set(-ESTALE,
                     "%s: written under another configuration (fingerprint %016llx, this config "
                     "%016llx)",
                     path, (unsigned long long)h.fingerprint, (unsigned long long)fingerprint);
    if (!rc && (h.n_image > (1ULL << 36) || h.n_illum > (1ULL << 36) || h.n_ledger > (1ULL << 32) ||
                h.catalogue_len > (1ULL << 34)))
        rc = err_set(-EINVAL, "%s: damaged header", path);
    if (rc) {
        fclose(f);
        return rc;
    }
    s->fingerprint = h.fingerprint;
    for (int i = 0; i < 3; i++)
        s->n[i] = h.n[i];
    s->n_image = h.n_image;
    s->n_illum = h.n_illum;
    s->n_ledger = s->cap_ledger = h.n_ledger;
    s->catalogue_len = h.catalogue_len;
    s->last_t_ns = h.last_t_ns;
    s->image = malloc(h.n_image * sizeof(float) + 1);
    s->illum = malloc(h.n_illum * sizeof(float) + 1);
    s->ledger = malloc(h.n_ledger * sizeof(int64_t) + 1);
    s->catalogue = h.catalogue_len ? malloc(h.catalogue_len + 1) : NULL;
    if (!s->image || !s->illum || !s->ledger || (h.catalogue_len && !s->catalogue))
        rc = err_set(-ENOMEM, "%s: out of memory", path);
    if (!rc)
        rc = read_part(f, s->image, h.n_image * sizeof(float), &sum, path, "image");
    if (!rc)
        rc = read_part(f, s->illum, h.n_illum * sizeof(float), &sum, path, "illumination");
    if (!rc)
        rc = read_part(f, s->ledger, h.n_ledger * sizeof(int64_t), &sum, path, "ledger");
    if (!rc && h.catalogue_len) {
        rc = read_part(f, s->catalogue, h.catalogue_len, &sum, path, "catalogue");
        s->catalogue[h.catalogue_len] = '\0';
    }
    uint64_t stored = 0;
    if (!rc && fread(&stored, sizeof stored, 1, f) != 1)
        rc = err_set(-EIO, "%s: truncated (checksum)", path);
    if (!rc && stored != sum)
        rc = err_set(-EIO, "%s: checksum mismatch: the file is damaged", path);
    fclose(f);
    if (rc)
        state_free(s);
    return rc;
}

bool state_ledger_has(const struct state *s, int64_t id)
{
    /* Linear: ledgers hold thousands of shots, checked once per shot. */
    for (size_t i = 0; i < s->n_ledger; i++)
        if (s->ledger[i] == id)
            return true;
    return false;
}

int state_ledger_add(struct state *s, int64_t id)
{
    if (s->n_ledger == s->cap_ledger) {
        size_t cap = s->cap_ledger ? 2 * s->cap_ledger : 64;
        int64_t *p = realloc(s->ledger, cap * sizeof *p);
        if (!p)
            return err_set(-ENOMEM, "ledger: out of memory");
        s->ledger = p;
        s->cap_ledger = cap;
    }
    s->ledger[s->n_ledger++] = id;
    return 0;
}
