/* mkdirs — see mkdirs.h. */
#include "tools/mkdirs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "stream/error.h"

int mkdirs(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return err_set(-ENAMETOOLONG, "%.64s...: path too long", path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                return err_set(-errno, "%s: %s", buf, strerror(errno));
            if (c == '\0')
                break;
            *p = c;
        }
    }
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
        return err_set(-ENOTDIR, "%s: not a folder", path);
    return 0;
}
