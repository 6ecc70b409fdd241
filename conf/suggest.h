/* suggest — the closest known name to a misspelt one ("did you mean ...?"). */
#ifndef SEISLIVE_SUGGEST_H
#define SEISLIVE_SUGGEST_H

#include <stddef.h>

/* Edit distance (insertions, deletions, substitutions, adjacent swaps). */
int suggest_distance(const char *a, const char *b);
/* The candidate nearest WORD, or NULL when none is close enough to be a typo
 * (distance at most max(1, len/3)).  CANDIDATES: N strings at STRIDE-byte steps,
 * so both string arrays and arrays of structs whose first member is a name work. */
const char *suggest_closest(const char *word, const void *candidates, size_t n, size_t stride);

#endif
