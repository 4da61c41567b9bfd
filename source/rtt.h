/* The firmware's stream read out of an RTT up-buffer in target RAM (firmware/cmprof_rtt.c, or any
 * SEGGER-RTT-compatible block), through a debug server's memory reads and writes:
 *   - a GDB server (RSP 'm' and 'M'). A server that reads memory only while the core is stopped
 *     (QEMU's gdbstub) is asked to halt for each poll and let it run again: the halted share of the
 *     wall time is measured. A server that reads while running is halted all the same (RSP in
 *     all-stop mode takes any byte sent while running as an interrupt).
 *   - OpenOCD's Tcl port (read_memory / write_memory, which read while the core runs: no halt).
 * The control block comes from rtt_set_block() (the ELF's _SEGGER_RTT) or from a bounded search of
 * RAM for its ID. Each poll reads the up-buffer's offsets, the bytes between them, and writes the
 * read offset back. The bytes come out as they are (the stream's text lines). Non-blocking, as the
 * other sampling sources: poll rtt_fd(), call rtt_step() when readable or rtt_wait_ms() ran out. */
#ifndef CMPROF_SOURCE_RTT_H
#define CMPROF_SOURCE_RTT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rtt_reader;

#define RTT_SEARCH_BASE 0x20000000u /* the bounded search: Cortex-M SRAM from here ... */
#define RTT_SEARCH_SIZE 0x10000u    /* ... for 64 KB */
#define RTT_POLL_DEFAULT 0.010      /* seconds between polls unless a rate is given */

/* where: "HOST:PORT" (a GDB server) or "openocd:HOST[:PORT]" (OpenOCD's Tcl port, 6666 by default).
 * rate: polls per second (0: every RTT_POLL_DEFAULT; negative: as fast as the server answers).
 * NULL with a one-line reason in err when it cannot connect. */
struct rtt_reader *rtt_open(const char *where, double rate, double now, char *err, size_t errlen);
/* The same over a connected descriptor (tests and the fuzzer), which the reader then owns. */
struct rtt_reader *rtt_open_fd(int fd, bool tcl, double rate, double now);
/* The control block's address (from the ELF's _SEGGER_RTT): no search. Before the first rtt_step(). */
void rtt_set_block(struct rtt_reader *r, uint32_t addr);
/* Write back what was read, let the core run (a GDB server: detach), within a second in all. */
void rtt_close(struct rtt_reader *r);

int rtt_fd(const struct rtt_reader *r);                  /* -1: nothing to read now, the timer runs */
int rtt_wait_ms(const struct rtt_reader *r, double now); /* until a poll or a timeout is due */
/* Read the server's replies and send what is due; returns the stream bytes written to buf. */
size_t rtt_step(struct rtt_reader *r, uint8_t *buf, size_t n, double now);
const char *rtt_failed(const struct rtt_reader *r); /* NULL while all is well */
bool rtt_exited(const struct rtt_reader *r);        /* the target's program ended (a GDB server said so) */

struct rtt_stats {
    uint64_t polls, bytes;
    uint32_t most;              /* the most bytes a poll found in the buffer: near its size, the firmware
                                   held lines back (its ring then counts the loss) */
    double halted_s, running_s; /* a halting server: wall time with the core stopped by us, and not */
    double first, last;         /* of the first and the last poll's end */
    bool halting;               /* through a GDB server: each poll halts the core */
    uint32_t block, size;       /* the control block's address, the up-buffer's size (0: not found yet) */
};
void rtt_get_stats(const struct rtt_reader *r, struct rtt_stats *out);

#endif
