/* Stop requests by signal (see stop.h). */
#include "stop.h"

#include <signal.h>
#include <stddef.h>

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
    caught = sig;
}

void stop_catch(void)
{
    static const int stops[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof stops / sizeof *stops; i++)
        sigaction(stops[i], &sa, NULL);
    signal(SIGXFSZ, SIG_IGN);
}

int stop_requested(void)
{
    return caught;
}

const char *stop_name(int sig)
{
    switch (sig) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP";
    case SIGQUIT:
        return "SIGQUIT";
    default:
        return "a signal";
    }
}
