/* iso_time — ISO 8601 UTC times as given in configs ("2024-05-01T12:00:00Z",
 * "2024-05-01T12:00:00.250", "2024-05-01 12:00:00", "2024-05-01") to ns since 1970. */
#ifndef SEISLIVE_ISO_TIME_H
#define SEISLIVE_ISO_TIME_H

#include <stdint.h>

/* 0 with *NS, or -EINVAL (no message: the caller names the place). */
int iso_time_parse(const char *s, int64_t *ns);

#endif
