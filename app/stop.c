/* Stop requests by signal (see stop.h). */
#include "stop.h"

#include <signal.h>
#include <stddef.h>

static volatile sig_atomic_t caught, suspend, continued;

static void on_signal(int sig)
{
    caught = sig;
}

static void on_suspend(int sig)
{
    suspend = sig;
}

static void on_continue(int sig)
{
    (void)sig;
    continued = 1;
}

static void catch_one(int sig, void (*handler)(int))
{
    struct sigaction sa = {0};
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

void stop_catch_suspend(void)
{
    catch_one(SIGTSTP, on_suspend);
    catch_one(SIGTTIN, on_suspend);
    catch_one(SIGTTOU, on_suspend);
    catch_one(SIGCONT, on_continue);
}

int stop_suspend_requested(void)
{
    return suspend;
}

int stop_continued(void)
{
    int was = continued;
    continued = 0;
    return was;
}

void stop_suspend_now(void)
{
    int sig = suspend;
    if (!sig)
        return;
    suspend = 0;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    signal(sig, SIG_DFL); /* its default action, as if never caught: the process stops here */
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    catch_one(sig, on_suspend); /* continued */
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
