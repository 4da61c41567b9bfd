/* A region with interrupts disabled: LOCK_N iterations under cpsid i, then OPEN_N open ones.
 * A sample that falls due inside the region is taken after cpsie i (skid); a region longer than
 * the sampling period also loses samples, since only one interrupt can be pending. */
#include "board.h"
#include "cmprof.h"
#include "work.h"

#ifndef LOCK_N
#define LOCK_N 300u
#endif
#ifndef OPEN_N
#define OPEN_N 700u
#endif
#ifndef PERIOD
#define PERIOD 1691u
#endif
#ifndef SAMPLES
#define SAMPLES 10000u
#endif

__attribute__((noinline)) void irq_off(void)
{
    __asm volatile("cpsid i" ::: "memory");
}

__attribute__((noinline)) void irq_on(void)
{
    __asm volatile("cpsie i" ::: "memory");
}

__attribute__((noinline)) void locked(uint32_t n)
{
    irq_off();
    for (uint32_t i = 0; i < n; i++)
        __asm volatile("nop");
    irq_on();
}

NOP_LOOP(__attribute__((noinline)), hot_a)

int main(void)
{
    board_init();
    uint32_t t0 = board_clock();
    cmprof_start(PERIOD, SAMPLES);
    truth_begin();
    while (cmprof_samples() < SAMPLES) {
        locked(LOCK_N);
        hot_a(OPEN_N);
    }
    truth_end();
    board_puts("span=");
    board_putdec(board_clock() - t0);
    board_putc('\n');
    cmprof_dump(board_putc);
    board_exit(0);
}
