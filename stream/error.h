/* error — the human-readable cause of the last failure on this thread.
 *
 * Functions return 0 or a negative errno-style code (liburing style).  Where the
 * failure happens, the code that knows the place (config file:line:col, message
 * sequence number, byte offset) records it with err_set(); callers up the stack
 * add context with err_prefix() and finally log or print err_msg(). */
#ifndef SEISLIVE_ERROR_H
#define SEISLIVE_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Record a message and return CODE (a negative errno), so callers can write
 *   return err_set(-EINVAL, "%s:%d:%d: ...", file, line, col); */
int err_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prepend "PREFIX: " to the current message; returns CODE. */
int err_prefix(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The current message, or strerror of the last code when none was set. */
const char *err_msg(void);
int err_code(void);
void err_clear(void);

#ifdef __cplusplus
}
#endif

#endif
