/* dir_list — see dir_list.h. */
#include "io/dir_list.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/error.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void dir_list_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int dir_list_sorted(const char *path, char ***out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    DIR *d = opendir(path);
    if (!d)
        return err_set(-errno, "%s: cannot open directory: %s", path, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *de; !rc && (de = readdir(d));) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **p = realloc(names, cap * sizeof *p);
            if (!p) {
                rc = err_set(-ENOMEM, "%s: out of memory", path);
                break;
            }
            names = p;
        }
        size_t l = strlen(path) + strlen(de->d_name) + 2;
        if (!(names[n] = malloc(l))) {
            rc = err_set(-ENOMEM, "%s: out of memory", path);
            break;
        }
        snprintf(names[n++], l, "%s/%s", path, de->d_name);
    }
    closedir(d);
    if (rc) {
        dir_list_free(names, n);
        return rc;
    }
    if (n) /* an empty folder: names is NULL, and qsort(NULL, 0) is undefined */
        qsort(names, n, sizeof *names, cmp_str);
    *out = names;
    *nout = n;
    return 0;
}
