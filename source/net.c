/* TCP connections for the sources (see net.h). */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static double connect_wait = NET_CONNECT_WAIT;

void net_set_connect_wait(double seconds)
{
    connect_wait = seconds > 0 ? seconds : NET_CONNECT_WAIT;
}

/* One address: a non-blocking connect, waited for at most connect_wait seconds. */
static int connect_one(const struct addrinfo *a, char *err, size_t errlen)
{
    int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
        return fd;
    int e = errno;
    if (e == EINPROGRESS) {
        struct pollfd p = {fd, POLLOUT, 0};
        int ready = poll(&p, 1, (int)(connect_wait * 1000.0));
        socklen_t len = sizeof e;
        if (ready > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 && e == 0)
            return fd;
        if (ready == 0)
            snprintf(err, errlen, "no answer within %g s", connect_wait);
        else /* a signal (EINTR) ends the wait too: the caller is about to stop */
            snprintf(err, errlen, "%s", strerror(ready < 0 ? errno : e));
    } else {
        snprintf(err, errlen, "%s", strerror(e));
    }
    close(fd);
    return -1;
}

long net_port(const char *text)
{
    char *end;
    long port = strtol(text, &end, 10);
    return *text && !*end && port >= 1 && port <= 65535 ? port : 0;
}

int net_connect(const char *host, const char *port, bool nodelay, bool *permanent, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (permanent)
        *permanent = false;
    if (rc != 0) {
        if (permanent) /* no such host: a typo, not an outage */
            *permanent = rc != EAI_AGAIN && rc != EAI_SYSTEM;
        snprintf(err, errlen, "%s", gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next)
        fd = connect_one(a, err, errlen);
    freeaddrinfo(res);
    if (fd < 0)
        return -1;
    if (nodelay) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}
