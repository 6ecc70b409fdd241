#include "stream/signals.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "stream/error.h"

static atomic_int g_stop;
static atomic_int g_hup;
static volatile sig_atomic_t g_signo;

static void on_signal(int signo)
{
    g_signo = signo;
    atomic_store(&g_stop, 1);
}

/* Async-signal-safe: a lock-free atomic store, nothing else.  The reopen itself
 * (open, close, a log line) happens later in ordinary thread context. */
static void on_hup(int signo)
{
    (void)signo;
    atomic_store(&g_hup, 1);
}

/* sigaction fails only for an invalid signal or handler; were it ever to, the process
 * would die of SIGTERM without checkpointing, so the caller must hear of it. */
static int install(int signo, const struct sigaction *sa, const char *name)
{
    if (sigaction(signo, sa, NULL) != 0) {
        int e = errno;
        return err_set(-e, "cannot install the %s handler: %s", name, strerror(e));
    }
    return 0;
}

int signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    int rc = install(SIGTERM, &sa, "SIGTERM");
    if (!rc)
        rc = install(SIGINT, &sa, "SIGINT");
    if (rc)
        return rc;
    /* A vanished subscriber or file reader must not kill the appliance. */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    return install(SIGPIPE, &sa, "SIGPIPE");
}

int signals_install_hup(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_hup;
    sigemptyset(&sa.sa_mask);
    /* SA_RESTART: a blocking read or poll elsewhere goes on instead of failing EINTR. */
    sa.sa_flags = SA_RESTART;
    return install(SIGHUP, &sa, "SIGHUP");
}

bool signals_take_hup(void) { return atomic_exchange(&g_hup, 0) != 0; }
bool signals_stop_requested(void) { return atomic_load(&g_stop) != 0; }
void signals_request_stop(void) { atomic_store(&g_stop, 1); }
int signals_last(void) { return (int)g_signo; }
