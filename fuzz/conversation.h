/* The conversation the source targets (fuzz_gdb, fuzz_rtt) hold with a server whose every byte comes
 * from the input, through a socketpair, on a clock the input drives. After the settings byte the
 * input is records [dt][len][len bytes]: the clock moves on by dt (tenths of a millisecond below 200,
 * else tenths of a second: timeouts), the bytes arrive, the source steps. */
#ifndef FUZZ_CONVERSATION_H
#define FUZZ_CONVERSATION_H

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

/* sv[0] for the source, sv[1] the server's end, which never blocks; false when there is none */
static bool conversation_open(int sv[2])
{
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return false;
    fcntl(sv[1], F_SETFL, fcntl(sv[1], F_GETFL) | O_NONBLOCK);
    return true;
}

static void conversation_drain(int fd)
{
    uint8_t sink[4096];
    while (read(fd, sink, sizeof sink) > 0) {
    }
}

/* The records of in[0..size) to the server's end, step(src, &now) after each, until the input ends
 * or failed(src); what the source sends the server is read and dropped. */
static void conversation_run(const uint8_t *in, size_t size, int server, double *now, void *src,
                             bool (*failed)(void *src), void (*step)(void *src, double *now))
{
    size_t i = 0;
    while (i + 2 <= size && !failed(src)) {
        uint8_t dt = in[i], len = in[i + 1];
        i += 2;
        size_t n = len < size - i ? len : size - i;
        *now += dt < 200 ? dt * 1e-4 : (dt - 199) * 0.1;
        if (n && write(server, in + i, n) < 0)
            break;
        i += n;
        step(src, now);
        conversation_drain(server);
    }
}

/* The server says no more (the source's close path sees the end at once), close_source(src) runs
 * its course, then the server's end closes. */
static void conversation_end(int server, void *src, void (*close_source)(void *src))
{
    shutdown(server, SHUT_WR);
    close_source(src);
    close(server);
}

#endif
