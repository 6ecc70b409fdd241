/* state — atomic checkpoint file: header, arrays, FNV-1a checksum. */
#define LOG_COMPONENT "state"
#include "stream/state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/error.h"
#include "stream/log.h"

/* The magic's last character is the format version: "SLSTATE1" (ids only), "SLSTATE2"
 * (ids + per-shot digest and origin). */
#define STATE_MAGIC "SLSTATE2"
#define STATE_MAGIC_V1 "SLSTATE1"
#define STATE_MAGIC_V3 "SLSTATE3" /* + the input's position (written only when there is one) */
#define STATE_MAX_RESUME (1u << 24)
#define STATE_MAX_N (1 << 16) /* per grid dimension, as [model] n allows */

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
    free(s->sources);
    free(s->catalogue);
    free(s->resume);
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
    uint64_t resume_len = s->resume ? s->resume_len : 0;
    memcpy(h.magic, resume_len ? STATE_MAGIC_V3 : STATE_MAGIC, 8);
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
    if (!rc && resume_len)
        rc = write_all(fd, &resume_len, sizeof resume_len, &sum, tmp);
    if (!rc && s->n_image)
        rc = write_all(fd, s->image, s->n_image * sizeof(float), &sum, tmp);
    if (!rc && s->n_illum)
        rc = write_all(fd, s->illum, s->n_illum * sizeof(float), &sum, tmp);
    if (!rc && s->n_ledger)
        rc = write_all(fd, s->ledger, s->n_ledger * sizeof(int64_t), &sum, tmp);
    if (!rc && s->n_ledger) {
        if (s->sources) {
            rc = write_all(fd, s->sources, s->n_ledger * sizeof *s->sources, &sum, tmp);
        } else { /* unknown provenance: zeros (digest 0 = unknown) */
            static const struct shot_source none;
            for (size_t i = 0; !rc && i < s->n_ledger; i++)
                rc = write_all(fd, &none, sizeof none, &sum, tmp);
        }
    }
    if (!rc && h.catalogue_len)
        rc = write_all(fd, s->catalogue, h.catalogue_len, &sum, tmp);
    if (!rc && resume_len)
        rc = write_all(fd, s->resume, resume_len, &sum, tmp);
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

static int read_part(FILE *f, void *p, size_t n, uint64_t *h, const char *path, const char *what,
                     uint64_t off)
{
    if (n && fread(p, 1, n, f) != n)
        return err_set(-EIO, "%s: byte %llu: truncated (%s)", path, (unsigned long long)off, what);
    *h = fnv(*h, p, n);
    return 0;
}

/* Byte offsets of the header fields (for messages). */
#define AT_N 16
#define AT_IMAGE 32
#define AT_ILLUM 40
#define AT_LEDGER 48
#define AT_CATALOGUE 56
#define AT_RESUME 72 /* version 3 */

/* Check the header H of a file of FSIZE bytes (version VERSION) before allocating. */
static int check_header(const struct state_file_hdr *h, int version, uint64_t resume_len,
                        uint64_t fsize, const char *path)
{
    uint64_t cells = 1;
    bool any = false;
    for (int k = 0; k < 3; k++) {
        if (h->n[k] < 0 || h->n[k] > STATE_MAX_N)
            return err_set(-EINVAL, "%s: byte %d: grid size n[%d] = %d (0 .. %d)", path,
                           AT_N + 4 * k, k, (int)h->n[k], STATE_MAX_N);
        cells *= (uint64_t)h->n[k];
        any |= h->n[k] != 0;
    }
    if (!any)
        cells = 0; /* no image (the locate job) */
    if (h->n_image != cells)
        return err_set(-EINVAL, "%s: byte %d: image of %llu floats, the grid %d x %d x %d has "
                       "%llu: a damaged header", path, AT_IMAGE,
                       (unsigned long long)h->n_image, (int)h->n[0], (int)h->n[1], (int)h->n[2],
                       (unsigned long long)cells);
    if (h->n_illum != 0 && h->n_illum != h->n_image)
        return err_set(-EINVAL, "%s: byte %d: illumination of %llu floats, neither 0 nor the "
                       "image's %llu: a damaged header", path, AT_ILLUM,
                       (unsigned long long)h->n_illum, (unsigned long long)h->n_image);
    /* Each count is bounded (n <= 2^16 makes the image at most 2^48 floats; the ledger
     * and catalogue are bounded here), so the sum below cannot overflow. */
    uint64_t per_entry = sizeof(int64_t) + (version >= 2 ? sizeof(struct shot_source) : 0);
    if (h->n_ledger > (1ULL << 40))
        return err_set(-EINVAL, "%s: byte %d: ledger of %llu shots: a damaged header", path,
                       AT_LEDGER, (unsigned long long)h->n_ledger);
    if (h->catalogue_len > (1ULL << 50))
        return err_set(-EINVAL, "%s: byte %d: catalogue of %llu bytes: a damaged header", path,
                       AT_CATALOGUE, (unsigned long long)h->catalogue_len);
    uint64_t part[3] = {(h->n_image + h->n_illum) * sizeof(float), h->n_ledger * per_entry,
                        h->catalogue_len};
    static const int at[3] = {AT_IMAGE, AT_LEDGER, AT_CATALOGUE};
    static const char *const what[3] = {"image and illumination", "ledger", "catalogue"};
    if (resume_len > STATE_MAX_RESUME)
        return err_set(-EINVAL, "%s: byte %d: input position of %llu bytes (at most %u): a damaged "
                       "header", path, AT_RESUME, (unsigned long long)resume_len, STATE_MAX_RESUME);
    uint64_t want = sizeof *h + part[0] + part[1] + part[2] + sizeof(uint64_t) +
                    (version >= 3 ? sizeof(uint64_t) + resume_len : 0);
    if (want == fsize)
        return 0;
    for (int k = 0; k < 3; k++) /* name the field that cannot be right, if one is */
        if (part[k] > fsize)
            return err_set(-EINVAL, "%s: byte %d: the %s would take %llu bytes, the whole file "
                           "has %llu (a damaged header, or a truncated file)", path, at[k],
                           what[k], (unsigned long long)part[k], (unsigned long long)fsize);
    return err_set(fsize < want ? -EIO : -EINVAL,
                   "%s: %s: the header (bytes 32-63) gives %llu bytes, the file has %llu", path,
                   fsize < want ? "truncated" : "longer than its header says",
                   (unsigned long long)want, (unsigned long long)fsize);
}

int state_load(const char *dir, uint64_t fingerprint, struct state *s)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/state.bin", dir);
    state_init(s);
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT ? -ENOENT : err_set(-errno, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) < 0) {
        int e = errno;
        fclose(f);
        return err_set(-e, "%s: %s", path, strerror(e));
    }
    uint64_t fsize = (uint64_t)st.st_size;
    struct state_file_hdr h;
    uint64_t sum = 14695981039346656037ULL;
    int rc = read_part(f, &h, sizeof h, &sum, path, "header", 0);
    int version = 0;
    if (!rc) {
        if (memcmp(h.magic, STATE_MAGIC_V1, 8) == 0)
            version = 1;
        else if (memcmp(h.magic, STATE_MAGIC, 8) == 0)
            version = 2;
        else if (memcmp(h.magic, STATE_MAGIC_V3, 8) == 0)
            version = 3;
        else if (memcmp(h.magic, "SLSTATE", 7) == 0)
            rc = err_set(-EINVAL, "%s: byte 7: state file version %c: this program reads "
                         "versions 1 to 3 (written by a newer seislive?)", path, h.magic[7]);
        else
            rc = err_set(-EINVAL, "%s: byte 0: not a seislive state file", path);
    }
    if (!rc && h.fingerprint != fingerprint)
        rc = err_set(-ESTALE,
                     "%s: written under another configuration (fingerprint %016llx, this config "
                     "%016llx)",
                     path, (unsigned long long)h.fingerprint, (unsigned long long)fingerprint);
    uint64_t resume_len = 0;
    if (!rc && version >= 3)
        rc = read_part(f, &resume_len, sizeof resume_len, &sum, path, "header", AT_RESUME);
    if (!rc)
        rc = check_header(&h, version, resume_len, fsize, path);
    if (rc) {
        fclose(f);
        return rc;
    }
    s->version = version;
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
    s->sources = version >= 2 ? malloc(h.n_ledger * sizeof(struct shot_source) + 1) : NULL;
    s->catalogue = h.catalogue_len ? malloc(h.catalogue_len + 1) : NULL;
    s->resume = resume_len ? malloc(resume_len + 1) : NULL;
    s->resume_len = resume_len;
    if (!s->image || !s->illum || !s->ledger || (version >= 2 && !s->sources) ||
        (h.catalogue_len && !s->catalogue) || (resume_len && !s->resume))
        rc = err_set(-ENOMEM, "%s: out of memory", path);
    uint64_t off = sizeof h + (version >= 3 ? sizeof resume_len : 0);
    if (!rc)
        rc = read_part(f, s->image, h.n_image * sizeof(float), &sum, path, "image", off);
    off += h.n_image * sizeof(float);
    if (!rc)
        rc = read_part(f, s->illum, h.n_illum * sizeof(float), &sum, path, "illumination", off);
    off += h.n_illum * sizeof(float);
    if (!rc)
        rc = read_part(f, s->ledger, h.n_ledger * sizeof(int64_t), &sum, path, "ledger", off);
    off += h.n_ledger * sizeof(int64_t);
    if (!rc && s->sources) {
        rc = read_part(f, s->sources, h.n_ledger * sizeof *s->sources, &sum, path,
                       "ledger digests", off);
        for (size_t i = 0; !rc && i < h.n_ledger; i++) /* never trust a terminator */
            s->sources[i].origin[sizeof s->sources[i].origin - 1] = '\0';
        off += h.n_ledger * sizeof *s->sources;
    }
    if (!rc && h.catalogue_len) {
        rc = read_part(f, s->catalogue, h.catalogue_len, &sum, path, "catalogue", off);
        s->catalogue[h.catalogue_len] = '\0';
    }
    off += h.catalogue_len;
    if (!rc && resume_len) {
        rc = read_part(f, s->resume, resume_len, &sum, path, "input position", off);
        s->resume[resume_len] = '\0';
    }
    off += resume_len;
    uint64_t stored = 0;
    if (!rc && fread(&stored, sizeof stored, 1, f) != 1)
        rc = err_set(-EIO, "%s: byte %llu: truncated (checksum)", path, (unsigned long long)off);
    if (!rc && stored != sum)
        rc = err_set(-EIO, "%s: byte %llu: checksum mismatch: the file is damaged", path,
                     (unsigned long long)off);
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
    if (s->sources) { /* keep the provenance parallel: unknown for this entry */
        struct shot_source *q = realloc(s->sources, s->cap_ledger * sizeof *q);
        if (!q)
            return err_set(-ENOMEM, "ledger: out of memory");
        s->sources = q;
        memset(&s->sources[s->n_ledger], 0, sizeof *q);
    }
    s->ledger[s->n_ledger++] = id;
    return 0;
}
