/* options — see options.h. */
#include "tools/options.h"

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
