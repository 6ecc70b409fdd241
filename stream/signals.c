#include "stream/signals.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>

static atomic_int g_stop;
static volatile sig_atomic_t g_signo;

static void on_signal(int signo)
{
    g_signo = signo;
    atomic_store(&g_stop, 1);
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

bool signals_stop_requested(void) { return atomic_load(&g_stop) != 0; }
void signals_request_stop(void) { atomic_store(&g_stop, 1); }
int signals_last(void) { return (int)g_signo; }
