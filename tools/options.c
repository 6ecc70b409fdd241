/* options — see options.h. */
#include "tools/options.h"

#include <limits.h>
#include <stdlib.h>

/* After an item that ends at END: step P past a comma or onto the final '\0'; -1 when
 * anything else follows the item. */
static int next_item(const char **p, const char *end)
{
    if (*end != ',' && *end != '\0')
        return -1;
    *p = *end == ',' ? end + 1 : end;
    return 0;
}

int options_doubles(const char *s, double *v, int min, int max)
{
    int n = 0;
    const char *p = s;
    while (*p && n < max) {
        char *end;
        v[n] = strtod(p, &end);
        if (end == p || next_item(&p, end) < 0)
            return -1;
        n++;
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
        if (end == p || x < INT_MIN || x > INT_MAX || next_item(&p, end) < 0)
            return -1;
        v[n++] = (int)x;
    }
    return *p || n < min ? -1 : n;
}
