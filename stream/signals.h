/* signals — SIGTERM/SIGINT only set a flag (ntpd style); the loops poll it and finish
 * or abandon the unit in flight, checkpoint, publish and exit 0.  SIGHUP, once
 * signals_install_hup() asked for it, also only sets a flag: the log module reopens its
 * file at its next line or when a main loop calls log_poll() (logrotate's postrotate). */
#ifndef SEISLIVE_SIGNALS_H
#define SEISLIVE_SIGNALS_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0, or a negative code with err_msg() when a handler could not be installed. */
int signals_install(void);
/* True once SIGTERM or SIGINT arrived (or signals_request_stop was called). */
bool signals_stop_requested(void);
void signals_request_stop(void);
/* The signal number that asked for the stop, 0 if none. */
int signals_last(void);

/* Catch SIGHUP ("reopen the log file") instead of dying of it.  Installed by
 * log_set_file() and by the streaming runtime (a service must survive
 * `systemctl reload`); interactive tools keep the default (a closed terminal ends them).
 * Idempotent.  0, or a negative code with err_msg(). */
int signals_install_hup(void);
/* True once per SIGHUP received since the last call (clears the flag). */
bool signals_take_hup(void);

#ifdef __cplusplus
}
#endif

#endif
