/* signals — SIGTERM/SIGINT only set a flag (ntpd style); the loops poll it and finish
 * or abandon the unit in flight, checkpoint, publish and exit 0. */
#ifndef SEISLIVE_SIGNALS_H
#define SEISLIVE_SIGNALS_H

#include <stdbool.h>

void signals_install(void);
/* True once SIGTERM or SIGINT arrived (or signals_request_stop was called). */
bool signals_stop_requested(void);
void signals_request_stop(void);
/* The signal number that asked for the stop, 0 if none. */
int signals_last(void);

#endif
