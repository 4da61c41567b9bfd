/* Firmware with no cmprof code at all: the three loops, for profiling through a GDB server.
 * The loops share one body (a nop loop), so the host time QEMU spends per guest instruction is
 * the same in each, and halting shares (wall time) equal instruction shares (the truth).
 *   PASSES   outer passes of hot_a(700), hot_b(200), hot_c(100), each times
 *   SCALE    (default 1): fewer calls for the same loop work. A call and its return cost QEMU more
 *            host time than a loop instruction, so they draw more of the wall-clock halts. */
#include "board.h"
#include "work.h"

#ifndef SCALE
#define SCALE 1u
#endif
#ifndef PASSES
#define PASSES 2000u
#endif

NOP_LOOP(__attribute__((noinline)), hot_a)

NOP_LOOP(__attribute__((noinline)), hot_b)

NOP_LOOP(__attribute__((noinline)), hot_c)

int main(void)
{
    board_init();
    board_puts("boot: plain firmware, no sampler\n");
    truth_begin();
    for (uint32_t k = 0; k < PASSES; k++) {
        hot_a(700 * SCALE);
        hot_b(200 * SCALE);
        hot_c(100 * SCALE);
    }
    truth_end();
    board_puts("done\n");
    board_exit(0);
}
