#define LOG_COMPONENT "log"
#include "stream/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stream/signals.h"

static enum log_level g_level = LOG_INFO;
static int g_file_fd = -1;
static char *g_file_path; /* kept for the reopen after SIGHUP */
static pthread_mutex_t g_file_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const level_names[] = {"debug", "info", "warn", "error", "off"};

int log_level_parse(const char *name)
{
    for (int i = 0; i <= LOG_OFF; i++)
        if (strcmp(name, level_names[i]) == 0)
            return i;
    return -1;
}

const char *log_level_name(enum log_level level)
{
    return (level >= LOG_DEBUG && level <= LOG_OFF) ? level_names[level] : "?";
}

void log_set_level(enum log_level level) { g_level = level; }
enum log_level log_get_level(void) { return g_level; }

int log_set_file(const char *path)
{
    int fd = -1;
    char *copy = NULL;
    if (path) {
        copy = strdup(path);
        if (!copy)
            return -ENOMEM;
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) {
            int e = errno;
            free(copy);
            errno = e;
            return -e;
        }
        /* logrotate moves the file and sends SIGHUP: reopen rather than die. */
        signals_install_hup();
    }
    pthread_mutex_lock(&g_file_lock);
    if (g_file_fd >= 0)
        close(g_file_fd);
    g_file_fd = fd;
    free(g_file_path);
    g_file_path = copy;
    pthread_mutex_unlock(&g_file_lock);
    return 0;
}

static void write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* nowhere left to report a failing log sink */
        buf += n;
        len -= (size_t)n;
    }
}

static char g_rank_tag[32]; /* "[r1/4] " with several MPI ranks, else "" */

void log_set_rank(int rank, int size)
{
    if (size > 1)
        snprintf(g_rank_tag, sizeof g_rank_tag, "[r%d/%d] ", rank, size);
    else
        g_rank_tag[0] = '\0';
}

/* Format one line (timestamp, level, component, message, newline) into LINE. */
static size_t format_line(char *line, size_t cap, enum log_level level, const char *component,
                          const char *fmt, va_list ap)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s %s%-8s ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000, level_names[level], g_rank_tag, component);
    if (n < 0)
        return 0;
    int m = vsnprintf(line + n, cap - (size_t)n - 1, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > cap - 2)
        len = cap - 2;
    line[len++] = '\n';
    return len;
}

static size_t format_linef(char *line, size_t cap, enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static size_t format_linef(char *line, size_t cap, enum log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t len = format_line(line, cap, level, "log", fmt, ap);
    va_end(ap);
    return len;
}

/* Reopen the file; with NOTE, write it into the new file first, under the same lock,
 * so no other thread's line can come before it. */
static int reopen_locked(const char *note, size_t note_len)
{
    if (!g_file_path)
        return 0;
    /* Open the new file before closing the old one: if the open fails (a full or
     * read-only disk), lines keep going to the old file instead of nowhere. */
    int fd = open(g_file_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    if (g_file_fd >= 0)
        close(g_file_fd);
    g_file_fd = fd;
    if (note && g_level <= LOG_INFO)
        write_all(fd, note, note_len);
    return 0;
}

int log_reopen(void)
{
    pthread_mutex_lock(&g_file_lock);
    int rc = reopen_locked(NULL, 0);
    pthread_mutex_unlock(&g_file_lock);
    return rc;
}

/* Reopen after a SIGHUP, once, and say so (the first line of the new file). */
static void reopen_if_asked(void)
{
    if (!signals_take_hup())
        return;
    char note[1200];
    pthread_mutex_lock(&g_file_lock);
    bool have = g_file_path != NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s", have ? g_file_path : "");
    size_t len = format_linef(note, sizeof note, LOG_INFO, "SIGHUP: log file %s reopened", path);
    int rc = have ? reopen_locked(note, len) : 0;
    pthread_mutex_unlock(&g_file_lock);
    if (!have)
        log_write(LOG_INFO, "log", "SIGHUP: no [log] file to reopen");
    else if (rc < 0)
        log_write(LOG_ERROR, "log", "SIGHUP: cannot reopen %s: %s; still writing to the old file",
                  path, strerror(-rc));
    else if (g_level <= LOG_INFO)
        write_all(STDERR_FILENO, note, len);
}

void log_poll(void)
{
    reopen_if_asked();
}

void log_vwrite(enum log_level level, const char *component, const char *fmt, va_list ap)
{
    reopen_if_asked();
    if (level < g_level || level >= LOG_OFF)
        return;
    char line[4096];
    size_t len = format_line(line, sizeof line, level, component, fmt, ap);
    if (len == 0)
        return;
    write_all(STDERR_FILENO, line, len);
    pthread_mutex_lock(&g_file_lock);
    if (g_file_fd >= 0)
        write_all(g_file_fd, line, len);
    pthread_mutex_unlock(&g_file_lock);
}

void log_write(enum log_level level, const char *component, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vwrite(level, component, fmt, ap);
    va_end(ap);
}

_Noreturn void fatal_at(const char *component, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_vwrite(LOG_ERROR, component, fmt, ap);
    va_end(ap);
    exit(1);
}
