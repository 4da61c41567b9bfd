/* libFuzzer target: the rtt: source's conversation (source/rtt.c over source/rsp.c, or OpenOCD's Tcl
 * replies) with a server whose every byte comes from the input, through a socketpair, on a clock the
 * input drives. Input: one byte of settings, then records [dt][len][len bytes]: the clock moves on by
 * dt (tenths of a millisecond below 200, else tenths of a second: timeouts), the bytes arrive, the
 * reader steps. The end of the input closes the server's side, and rtt_close() runs its course. */
#include "../source/rtt.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void drain(int fd)
{
    uint8_t sink[4096];
    while (read(fd, sink, sizeof sink) > 0) {
    }
}

/* Settings byte: bit 0 OpenOCD's Tcl port (else a GDB server), bit 1 the block's address given (else
 * searched for), bits 2-3 the rate: default, as fast as possible, 50/s, 5000/s. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const double rates[4] = {0, -1, 50, 5000};
    int sv[2];
    if (size < 1 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 0;
    fcntl(sv[1], F_SETFL, fcntl(sv[1], F_GETFL) | O_NONBLOCK);
    double now = 1000.0;
    struct rtt_reader *r = rtt_open_fd(sv[0], (data[0] & 1) != 0, rates[(data[0] >> 2) & 3], now);
    if (!r) {
        close(sv[0]);
        close(sv[1]);
        return 0;
    }
    if (data[0] & 2)
        rtt_set_block(r, 0x20000400u);
    uint8_t out[8192];
    size_t i = 1;
    while (i + 2 <= size && !rtt_failed(r)) {
        uint8_t dt = data[i], len = data[i + 1];
        i += 2;
        size_t n = len < size - i ? len : size - i;
        now += dt < 200 ? dt * 1e-4 : (dt - 199) * 0.1;
        if (n && write(sv[1], data + i, n) < 0)
            break;
        i += n;
        rtt_step(r, out, sizeof out, now);
        drain(sv[1]);
    }
    struct rtt_stats st;
    rtt_get_stats(r, &st);
    shutdown(sv[1], SHUT_WR); /* the server says no more: the close path sees the end at once */
    rtt_close(r);
    close(sv[1]);
    return 0;
}
