#include "stream/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char t_msg[2048];
static _Thread_local int t_code;

int err_set(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_msg, sizeof t_msg, fmt, ap);
    va_end(ap);
    t_code = code;
    return code;
}

int err_prefix(int code, const char *fmt, ...)
{
    char prefix[512], old[sizeof t_msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (t_msg[0] == '\0' && code < 0)
        snprintf(t_msg, sizeof t_msg, "%s", strerror(-code));
    memcpy(old, t_msg, sizeof old);
    /* Truncation is acceptable: the prefix and the start of the cause are kept. */
    size_t lp = strlen(prefix);
    if (lp > sizeof t_msg - 3)
        lp = sizeof t_msg - 3;
    memcpy(t_msg, prefix, lp);
    memcpy(t_msg + lp, ": ", 2);
    size_t lo = strnlen(old, sizeof t_msg - lp - 3);
    memcpy(t_msg + lp + 2, old, lo);
    t_msg[lp + 2 + lo] = '\0';
    t_code = code;
    return code;
}

const char *err_msg(void)
{
    if (t_msg[0] == '\0' && t_code < 0)
        return strerror(-t_code);
    return t_msg[0] ? t_msg : "no error";
}

int err_code(void) { return t_code; }

void err_clear(void)
{
    t_msg[0] = '\0';
    t_code = 0;
}
