/* A TCP connection to HOST:PORT for the sources (SWO servers, GDB servers, OpenOCD). */
#ifndef CMPROF_SOURCE_NET_H
#define CMPROF_SOURCE_NET_H

#include <stdbool.h>
#include <stddef.h>

/* A connected, non-blocking socket, or -1 with the reason in err. nodelay: for request-reply
 * protocols of small packets, where Nagle's algorithm would hold each one ~40 ms. *permanent is
 * set when retrying cannot help (no such host). A connection attempt waits at most the time set by
 * net_set_connect_wait() (an unreachable host would otherwise hold it for minutes), and gives up
 * at once when a signal arrives. */
int net_connect(const char *host, const char *port, bool nodelay, bool *permanent, char *err, size_t errlen);
/* How long one connection attempt may wait for the server's answer (seconds; default NET_CONNECT_WAIT). */
void net_set_connect_wait(double seconds);

#define NET_CONNECT_WAIT 2.0

/* The TCP port that text names in full (a decimal number from 1 to 65535, as strtol reads it), or 0
 * when it names none: the one check every source's HOST:PORT goes through. */
long net_port(const char *text);

#endif
