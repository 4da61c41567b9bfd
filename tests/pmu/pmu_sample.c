/* PC sampling on Cortex-A through the PMU (CMPROF_PORT_PMU), bare metal on QEMU's virt board
 * (scenarios/board/board_virt.c: the cycle counter overflows into PPI 7 of the GICv2, the IRQ
 * handler passes the interrupted PC, LR_irq - 4, to cmprof_tick()); cmprof_dump() prints the ring
 * for the host. Three loops share the time 70/20/10 by instruction count. For tests/test_pmu.py. */
#include "board_virt.h"
#include "cmprof.h"

#ifndef SAMPLES
#define SAMPLES 10000u
#endif
#ifndef PERIOD
#define PERIOD 997u
#endif

#define HOT(name, n)                                                                                                  \
    __attribute__((noinline)) void name(void)                                                                        \
    {                                                                                                                 \
        uint32_t k = (n);                                                                                             \
        __asm volatile("1: subs %0, %0, #1\n bne 1b\n" : "+r"(k)::"cc");                                              \
    }
HOT(hot_a, 7000u)
HOT(hot_b, 2000u)
HOT(hot_c, 1000u)

int main(void)
{
    board_gic_pmu();
    cmprof_start(PERIOD, SAMPLES);
    __asm volatile("cpsie i" ::: "memory");
    while (cmprof_samples() < SAMPLES) {
        hot_a();
        hot_b();
        hot_c();
    }
    __asm volatile("cpsid i" ::: "memory");
    cmprof_dump(board_putc);
    board_exit(0);
}
