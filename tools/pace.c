/* pace — see pace.h. */
#include "tools/pace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stream/signals.h"

double pace_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void pace_start(struct pace *p, double interval)
{
    p->interval = interval;
    p->start = pace_now();
}

int pace_wait(const struct pace *p, int64_t k)
{
    if (p->interval <= 0)
        return signals_stop_requested() ? -EINTR : 0;
    double due = p->start + (double)k * p->interval;
    for (;;) {
        if (signals_stop_requested())
            return -EINTR;
        double left = due - pace_now();
        if (left <= 0)
            return 0;
        /* short naps so a stop request is seen quickly */
        double nap = left > 0.1 ? 0.1 : left;
        struct timespec ts = {(time_t)nap, (long)((nap - (double)(time_t)nap) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

double pace_parse(const char *s, double duration)
{
    if (!s || !*s)
        return -1;
    if (strcmp(s, "realtime") == 0)
        return duration;
    if (strcmp(s, "max") == 0)
        return 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v >= 0))
        return -1;
    if (*end == 'x' && end[1] == '\0')
        return v > 0 ? duration / v : -1;
    return *end == '\0' ? v : -1;
}
