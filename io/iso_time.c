/* iso_time — ISO 8601 UTC times (see iso_time.h).  strptime/timegm (glibc) do the
 * calendar; only the fraction and the zone suffix are handled here. */
#include "io/iso_time.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int iso_time_parse(const char *s, int64_t *ns)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest) {
        memset(&tm, 0, sizeof tm);
        rest = strptime(s, "%Y-%m-%d %H:%M:%S", &tm);
    }
    if (!rest) {
        memset(&tm, 0, sizeof tm);
        rest = strptime(s, "%Y-%m-%d", &tm);
        if (rest && *rest)
            return -EINVAL;
    }
    if (!rest)
        return -EINVAL;
    int64_t frac_ns = 0;
    if (*rest == '.') {
        /* digits only, up to nanoseconds: "12:00:00.5" is 500 ms */
        rest++;
        int nd = 0;
        while (*rest >= '0' && *rest <= '9') {
            if (nd < 9) {
                frac_ns = frac_ns * 10 + (*rest - '0');
                nd++;
            }
            rest++;
        }
        if (nd == 0)
            return -EINVAL;
        for (; nd < 9; nd++)
            frac_ns *= 10;
    }
    if (*rest == 'Z')
        rest++;
    else if (strcmp(rest, "+00:00") == 0)
        rest += 6;
    if (*rest)
        return -EINVAL;
    time_t t = timegm(&tm);
    if (t == (time_t)-1 && !(tm.tm_year == 69 && tm.tm_mon == 11 && tm.tm_mday == 31))
        return -EINVAL;
    *ns = (int64_t)t * 1000000000LL + frac_ns;
    return 0;
}
