/* log — levelled, timestamped log lines with a component name, to stderr and
 * optionally a file.  Every file that logs defines LOG_COMPONENT before including
 * this header, so each line says where it came from:
 *
 *   #define LOG_COMPONENT "rtm"
 *   #include "stream/log.h"
 *   log_info("shot %d migrated in %.2f s", id, secs);
 *
 * Thread-safe: a line is written with one write(2) per sink. */
#ifndef SEISLIVE_LOG_H
#define SEISLIVE_LOG_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef LOG_COMPONENT
#define LOG_COMPONENT "seislive"
#endif

enum log_level { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3, LOG_OFF = 4 };

/* Parse "debug" | "info" | "warn" | "error" | "off"; returns -1 when unknown. */
int log_level_parse(const char *name);
const char *log_level_name(enum log_level level);

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* Also append lines to PATH (NULL closes the file).  Returns 0 or -errno (errno set).
 * With a file, SIGHUP is caught (stream/signals.h): the file is reopened at PATH (append,
 * created if missing) at the next log line or log_poll(), so logrotate can move it away
 * and `kill -HUP` the process; the old file keeps the lines written before. */
int log_set_file(const char *path);
/* Reopen the log file now (0, or -errno with the old file kept open). */
int log_reopen(void);
/* Act on a pending SIGHUP without writing a line first: main loops call it so the old
 * file is let go promptly even while nothing is logged. */
void log_poll(void);

/* With SIZE > 1 (several MPI ranks, stream/mpi.h), every line carries "[rRANK/SIZE]"
 * after its level, so the ranks' lines can be told apart in one stream or file. */
void log_set_rank(int rank, int size);

void log_write(enum log_level level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void log_vwrite(enum log_level level, const char *component, const char *fmt, va_list ap);

/* Print at ERROR level and exit(1).  For the unrecoverable: out of memory,
 * a broken invariant.  Bad input is never fatal; it is an error returned upward. */
_Noreturn void fatal_at(const char *component, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_write(LOG_DEBUG, LOG_COMPONENT, __VA_ARGS__)
#define log_info(...)  log_write(LOG_INFO, LOG_COMPONENT, __VA_ARGS__)
#define log_warn(...)  log_write(LOG_WARN, LOG_COMPONENT, __VA_ARGS__)
#define log_error(...) log_write(LOG_ERROR, LOG_COMPONENT, __VA_ARGS__)
#define fatal(...)     fatal_at(LOG_COMPONENT, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif
