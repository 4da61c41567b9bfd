/* libFuzzer target: the rtt: source's conversation (source/rtt.c over source/rsp.c, or OpenOCD's Tcl
 * replies) with a server whose every byte comes from the input (conversation.h: one byte of settings,
 * then the server's records). The end of the input closes the server's side, and rtt_close() runs
 * its course. */
#include "../source/rtt.h"
#include "conversation.h"

#include <stdlib.h>
#include <string.h>

static bool reader_failed(void *r)
{
    return rtt_failed(r);
}

static void reader_step(void *r, double *now)
{
    uint8_t out[8192];
    rtt_step(r, out, sizeof out, *now);
}

static void reader_close(void *r)
{
    rtt_close(r);
}

/* Settings byte: bit 0 OpenOCD's Tcl port (else a GDB server), bit 1 the block's address given (else
 * searched for), bits 2-3 the rate: default, as fast as possible, 50/s, 5000/s. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const double rates[4] = {0, -1, 50, 5000};
    int sv[2];
    if (size < 1 || !conversation_open(sv))
        return 0;
    double now = 1000.0;
    struct rtt_reader *r = rtt_open_fd(sv[0], (data[0] & 1) != 0, rates[(data[0] >> 2) & 3], now);
    if (!r) {
        close(sv[0]);
        close(sv[1]);
        return 0;
    }
    if (data[0] & 2)
        rtt_set_block(r, 0x20000400u);
    conversation_run(data + 1, size - 1, sv[1], &now, r, reader_failed, reader_step);
    struct rtt_stats st;
    rtt_get_stats(r, &st);
    conversation_end(sv[1], r, reader_close);
    return 0;
}
