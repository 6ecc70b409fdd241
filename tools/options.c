/* options — see options.h. */
#include "tools/options.h"

#include <limits.h>
#include <stdlib.h>

int options_doubles(const char *s, double *v, int min, int max)
{
    int n = 0;
    const char *p = s;
    while (*p && n < max) {
        char *end;
        v[n] = strtod(p, &end);
        if (end == p)
            return -1;
        n++;
        if (*end == ',')
            p = end + 1;
        else if (*end == '\0')
            p = end;
        else
            return -1;
    }
    return *p || n < min ? -1 : n;
}

int options_ints(const char *s, int *v, int min, int max)
{
    int n = 0;
    const char *p = s;
    while (*p && n < max) {
        char *end;
        long x = strtol(p, &end, 10);
        if (end == p || x < INT_MIN || x > INT_MAX)
            return -1;
        v[n++] = (int)x;
        if (*end == ',')
            p = end + 1;
        else if (*end == '\0')
            p = end;
        else
            return -1;
    }
    return *p || n < min ? -1 : n;
}
