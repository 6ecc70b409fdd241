#include "stream/signals.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>

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

void signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    /* A vanished subscriber or file reader must not kill the appliance. */
    signal(SIGPIPE, SIG_IGN);
}

void signals_install_hup(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_hup;
    sigemptyset(&sa.sa_mask);
    /* SA_RESTART: a blocking read or poll elsewhere goes on instead of failing EINTR. */
    sa.sa_flags = SA_RESTART;
    sigaction(SIGHUP, &sa, NULL);
}

bool signals_take_hup(void) { return atomic_exchange(&g_hup, 0) != 0; }
bool signals_stop_requested(void) { return atomic_load(&g_stop) != 0; }
void signals_request_stop(void) { atomic_store(&g_stop, 1); }
int signals_last(void) { return (int)g_signo; }
