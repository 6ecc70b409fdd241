/* image_stack — the growing result of the rtm job: the stacked image of every shot
 * migrated so far, its stacked source illumination, and the ids of the shots in it,
 * kept together so that the state checkpoint can save them as one unit and a resumed
 * run never stacks a shot twice.
 *
 * The stack lives on the host and covers the full model grid (x fastest, then y, z
 * slowest, float32).  A shot's image covers only its sub-volume (kernels/subvolume.h)
 * and is added at its place: image_stack_add() is the paste. */
#ifndef SEISLIVE_IMAGE_STACK_H
#define SEISLIVE_IMAGE_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/shot.h"

#ifdef __cplusplus
extern "C" {
#endif

struct image_stack {
    int n[3];          /* nx, ny, nz of the full image (the model grid) */
    double d[3];       /* spacing, m */
    double o[3];       /* origin, m */
    float *image;      /* sum of the shot images */
    float *illum;      /* sum of the shot source illuminations (sum over t of u^2) */
    int64_t shots;     /* shots stacked (== n_ids) */
    int64_t *ids;      /* the ids of the stacked shots, in stacking order */
    struct shot_source *src; /* per id: content digest and origin (digest 0: unknown) */
    size_t n_ids, cap_ids;
};

/* A shot's image (or any sub-volume) and where it sits in the full grid. */
struct image_patch {
    int off[3];         /* index of the patch's first cell in the full grid */
    int n[3];           /* patch size */
    const float *image; /* n[0]*n[1]*n[2], x fastest */
    const float *illum; /* same size, or NULL */
};

/* Zeroed stack of the given grid.  Returns 0 or -ENOMEM / -EINVAL. */
int image_stack_init(struct image_stack *s, const int n[3], const double d[3], const double o[3]);
void image_stack_free(struct image_stack *s);
/* Back to zero shots (keeps the grid). */
void image_stack_clear(struct image_stack *s);

size_t image_stack_cells(const struct image_stack *s);

/* Add the image of shot ID at its place.  A patch that reaches outside the grid is
 * clipped to it (the part outside is the aperture beyond the model's edge: nothing to
 * image there).  Refuses a shot already stacked with -EEXIST (err_msg says which). */
int image_stack_add(struct image_stack *s, int64_t id, const struct image_patch *p);

bool image_stack_has(const struct image_stack *s, int64_t id);
/* Shot ID with content DIGEST (shot_digest) from ORIGIN against the ledger: 0 when
 * not stacked yet; 1 when stacked with the same content, or with an unknown one (an
 * older state file): a replay, to be skipped; -EEXIST when stacked with a different
 * content (err_msg() names both origins and digests). */
int image_stack_check(const struct image_stack *s, int64_t id, uint64_t digest,
                      const char *origin);
/* Record DIGEST and ORIGIN for the stacked shot ID (after image_stack_add). */
void image_stack_set_source(struct image_stack *s, int64_t id, uint64_t digest,
                            const char *origin);

/* The stacked shot ids (the ledger), in stacking order. */
const int64_t *image_stack_ids(const struct image_stack *s, size_t *n);

/* Restore a saved stack: take over IMAGE/ILLUM values and the ledger IDS (copied).
 * Sizes must match the grid. */
int image_stack_restore(struct image_stack *s, const float *image, const float *illum,
                        const int64_t *ids, size_t n_ids);
/* After image_stack_restore: the ledger's provenance (N entries, copied; SRC NULL:
 * unknown, as in state files from before digests). */
void image_stack_restore_sources(struct image_stack *s, const struct shot_source *src, size_t n);

/* The image for publishing: the stack, optionally filtered by the Laplacian against
 * low-wavenumber artifacts (kernels/laplacian_filter.h).  OUT has image_stack_cells(). */
int image_stack_render(const struct image_stack *s, bool laplacian, float *out);

#ifdef __cplusplus
}
#endif

#endif
