/* The live stream over RTT only (firmware/cmprof_rtt.c): the three loops, sampled with jitter, their
 * lines written into the RTT up-buffer, which cmprof-top reads through QEMU's gdbstub (rtt:). No
 * stream byte goes to the UART; it carries the boot line and, at the end, the sample counts the
 * check compares with (taken=, lost=).
 *   RTT_WAIT_HOST=1  after the announce, spin until a host has read it (a late attach: QEMU runs
 *                    from reset, without -S, and the host connects while it spins)
 *   FOREVER=1        never end: sample, drain, and print a heartbeat line on the UART every
 *                    HEARTBEAT loops (the check that the target still runs after the host left) */
#include "board.h"
#include "cmprof.h"
#include "cmprof_rtt.h"
#include "work.h"

#include <stddef.h>

#ifndef PERIOD
#define PERIOD 1691u
#endif
#ifndef SAMPLES
#define SAMPLES 10000u
#endif
#ifndef RTT_WAIT_HOST
#define RTT_WAIT_HOST 1
#endif
#ifndef FOREVER
#define FOREVER 0
#endif
#ifndef HEARTBEAT
#define HEARTBEAT 2000u
#endif

#define CODE_BASE 0x08000000u
extern const uint32_t __build_id[];

NOP_LOOP(__attribute__((noinline)), hot_a)

NOP_LOOP(__attribute__((noinline)), hot_b)

NOP_LOOP(__attribute__((noinline)), hot_c)

NOP_LOOP(__attribute__((noinline)), spin)

/* Every line still in the ring and in the RTT buffer out, the host's reads awaited. */
static void finish(void)
{
    while (cmprof_stream_pending() >= CMPROF_STREAM_LINE)
        if (!cmprof_rtt_drain(1u))
            spin(50); /* no room: the host reads on */
    while (cmprof_rtt_unread())
        spin(50);
    cmprof_stream_flush(NULL); /* the short last line and @lost: an empty buffer holds them */
    while (cmprof_rtt_unread())
        spin(50);
}

int main(void)
{
    board_init();
    board_puts("boot: rtt scenario\n");
    cmprof_rtt_init();
    const struct cmprof_stream_info info = {.clock_hz = 168000000u, .timer_hz = 168000000u, .period = PERIOD,
                                            .jitter = CMPROF_JITTER, .code_base = CODE_BASE,
                                            .build_id_note = __build_id, .write = cmprof_rtt_write};
    cmprof_stream_announce(NULL, &info);
#if RTT_WAIT_HOST
    while (cmprof_rtt_unread())
        spin(100);
    board_puts("host attached\n");
#endif
    cmprof_start(PERIOD, FOREVER ? 0u : SAMPLES);
    truth_begin();
    uint32_t k = 0;
    while (FOREVER || cmprof_samples() < SAMPLES) {
        hot_a(700);
        hot_b(200);
        hot_c(100);
        cmprof_rtt_drain(8u);
        if (FOREVER && ++k % HEARTBEAT == 0u) {
            board_puts("beat ");
            board_putdec(k / HEARTBEAT);
            board_putc('\n');
        }
    }
    truth_end();
    finish();
    board_puts("taken=");
    board_putdec(cmprof_samples());
    board_puts(" lost=");
    board_putdec(cmprof_stream_lost());
    board_puts(" rtt_dropped=");
    board_putdec(cmprof_rtt_dropped_lines());
    board_puts("\ndone\n");
    board_exit(0);
}
