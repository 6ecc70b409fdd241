/* dir_list — the entries of a folder, sorted by name, as full paths: the order in which
 * the file inputs read a folder (miniSEED, SAC), so that a run does not depend on the
 * order readdir happens to return.  Entries whose name starts with '.' are left out
 * (editors' and rsync's temporary files).  No filtering by type: the caller stats. */
#ifndef SEISLIVE_DIR_LIST_H
#define SEISLIVE_DIR_LIST_H

#include <stddef.h>

/* *NAMES gets N malloc'ed "PATH/NAME" strings in strcmp order (NULL when N = 0).
 * 0, or a negative errno with err_msg() naming PATH (nothing is left allocated then). */
int dir_list_sorted(const char *path, char ***names, size_t *n);

void dir_list_free(char **names, size_t n);

#endif
