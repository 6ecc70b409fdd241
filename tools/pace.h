/* pace — send units on a schedule: unit k goes out at start + k x interval (a crew
 * firing a shot every N seconds, or a recorder delivering blocks in real time).  The
 * schedule is absolute, so time spent producing a unit does not add up as drift. */
#ifndef SEISLIVE_PACE_H
#define SEISLIVE_PACE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pace {
    double interval;  /* s between units; <= 0 = as fast as possible */
    double start;     /* monotonic time of unit 0, s */
};

/* Monotonic clock, s. */
double pace_now(void);
void pace_start(struct pace *p, double interval);
/* Sleep until unit K is due (returns at once when late or interval <= 0).  Returns
 * early with -EINTR when a stop was requested (stream/signals.h). */
int pace_wait(const struct pace *p, int64_t k);

/* Parse a --pace value for a stream of units each DURATION s long: "realtime" (1x),
 * "Nx" (N times faster, e.g. "10x"), "max" (no waiting), or a plain number of seconds
 * between units.  Returns the interval in s (0 = no waiting) or -1 when malformed. */
double pace_parse(const char *s, double duration);

#ifdef __cplusplus
}
#endif

#endif
