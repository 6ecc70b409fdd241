/* state — the crash-safe checkpoint of a run in [output] state_dir.
 *
 * One file, state_dir/state.bin, holds everything that must agree with itself: the
 * config fingerprint (config_fingerprint()), the stacked image and its illumination,
 * the ledger of stacked shot ids and, for locate, the last processed time and the
 * event catalogue.  It is written to a temporary file, fsync'd, renamed over the old
 * one and the folder fsync'd, so after a crash at any instant the file is either the
 * previous checkpoint or the new one, never a mixture; a checksum guards against a
 * damaged file.  Because the image and the ledger are saved together, a shot is either
 * in both (skipped when replayed) or in neither (stacked again): exactly once.
 *
 * Format version 2 ("SLSTATE2") adds, per ledger entry, the shot's content digest and
 * origin (io/shot.h: struct shot_source), so that a shot id met again is told apart
 * (same content: skipped; different: an error naming both origins).  Version 1 files
 * still load (digests unknown); a file of a newer version is refused by name.  Every
 * size in the header is bounded and checked against the grid n[] and the file size
 * before anything is allocated; a refusal names the file and the field's byte.
 *
 * Format version 3 ("SLSTATE3") adds the input's position (struct state.resume: a
 * text the source wrote, e.g. SeedLink's next sequence number per station): its
 * length (u64) follows the version 2 header, its bytes follow the catalogue.  It is
 * written only when there is such a text, so every other state file stays version 2
 * (readable by older programs); versions 1 and 2 still load (no position). */
#ifndef SEISLIVE_STATE_H
#define SEISLIVE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/shot.h"

#ifdef __cplusplus
extern "C" {
#endif

struct state {
    uint64_t fingerprint;
    int n[3];               /* image grid (informative: what the arrays hold) */
    float *image;           /* n_image floats, owned */
    size_t n_image;
    float *illum;           /* n_illum floats (0 when the job has none), owned */
    size_t n_illum;
    int64_t *ledger;        /* stacked unit ids in the order stacked, owned */
    struct shot_source *sources; /* per ledger entry (n_ledger), owned; NULL = unknown */
    size_t n_ledger, cap_ledger;
    int version;            /* of the file loaded (1, 2, 3) */
    int64_t last_t_ns;      /* locate: end of the last processed block; -1 none */
    char *catalogue;        /* locate: event catalogue text (owned, may be NULL) */
    size_t catalogue_len;
    char *resume;           /* the input's position after the last unit (text, owned, may be
                               NULL; NUL-terminated when loaded) -- version 3 */
    size_t resume_len;
};

void state_init(struct state *s);
void state_free(struct state *s);

/* Atomically write DIR/state.bin.  Returns 0 or -errno with err_msg(). */
int state_save(const char *dir, const struct state *s);
/* Load DIR/state.bin.  Returns 0 (S filled), -ENOENT (no state: a fresh start),
 * -ESTALE (written under another configuration: FINGERPRINT differs; err_msg() says
 * so) or another negative code (damaged file). */
int state_load(const char *dir, uint64_t fingerprint, struct state *s);

bool state_ledger_has(const struct state *s, int64_t id);
int state_ledger_add(struct state *s, int64_t id);

#ifdef __cplusplus
}
#endif

#endif
