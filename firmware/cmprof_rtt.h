/* cmprof's stream over RTT: a SEGGER-RTT-compatible control block in target RAM (the symbol
 * `_SEGGER_RTT`, the ID "SEGGER RTT" written last at init), with one up-buffer that the stream's
 * lines go into whole. A debug probe (J-Link, OpenOCD, probe-rs, pyOCD) or `cmprof-top rtt:` reads
 * it while the core runs; no UART, no pin. Nothing here ever waits: a line that does not fit is
 * dropped whole and counted, and cmprof_rtt_drain() takes samples out of the ring only while a
 * line surely fits, so a host that reads too slowly shows as the ring's loss (the reservoir's '&'
 * lines, or @lost), exactly as a slow UART does.
 *
 *   cmprof_rtt_init();
 *   info.write = cmprof_rtt_write;              (struct cmprof_stream_info)
 *   cmprof_stream_announce(NULL, &info);
 *   cmprof_start(period, 0);
 *   for (;;) { ...; cmprof_rtt_drain(8); }
 *
 * Build options (-D when compiling cmprof_rtt.c):
 *   CMPROF_RTT_SIZE=2048   bytes of the up-buffer (at 10 ms between a probe's reads, 2048 bytes carry
 *                          about 45,000 untagged samples a second)
 *   CMPROF_RTT_ROOM=512    free bytes the drain wants before it sends another line (a line with
 *                          task names in it, and the announce or loss lines that may follow it)
 *   CMPROF_RTT_EXTERNAL=1  no control block of our own: the application already has SEGGER's RTT
 *                          (or another implementation). Define CMPROF_RTT_WRITE(buf, len) (write
 *                          a whole line to your channel, skipping it when full, returning the
 *                          bytes written) and CMPROF_RTT_ROOM_NOW() (free bytes in that channel),
 *                          e.g. with SEGGER's SEGGER_RTT_WriteSkipNoLock and
 *                          SEGGER_RTT_GetAvailWriteSpace on a channel of your own;
 *                          CMPROF_RTT_INCLUDE='"SEGGER_RTT.h"' includes what declares them.
 * RAM: the control block (16 + 8 + 2 x 24 bytes), the up-buffer, a 16-byte down-buffer (unused; some
 * probes want one), 8 bytes of counters. */
#ifndef CMPROF_RTT_H
#define CMPROF_RTT_H

#include <stdint.h>

#ifndef CMPROF_RTT_SIZE
#define CMPROF_RTT_SIZE 2048u
#endif
#ifndef CMPROF_RTT_ROOM
#define CMPROF_RTT_ROOM 512u
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Build the control block; the ID goes in last, so a probe never finds a half-built block. Call it
 * once, before the first line. */
void cmprof_rtt_init(void);

/* The stream's line output (cmprof_stream_info.write): the whole line, or nothing and counted. */
void cmprof_rtt_write(const char *buf, uint32_t len);

/* Send up to max_lines sample lines while CMPROF_RTT_ROOM bytes are free; returns the samples sent.
 * Call it from the main loop or an idle hook, as cmprof_stream_drain(). */
uint32_t cmprof_rtt_drain(uint32_t max_lines);

/* Free bytes in the up-buffer now, and bytes written but not read by the host yet. */
uint32_t cmprof_rtt_room(void);
uint32_t cmprof_rtt_unread(void);

/* Lines and bytes cmprof_rtt_write() dropped because the buffer was full (never sample lines sent
 * by cmprof_rtt_drain() while CMPROF_RTT_ROOM covers its output). */
uint32_t cmprof_rtt_dropped_lines(void);
uint32_t cmprof_rtt_dropped_bytes(void);

#ifdef __cplusplus
}
#endif

#endif
