/* Interrupt-masked time on Cortex-A (ARM state): a third of each round runs with IRQs masked
 * (cpsid i ... cpsie i), so the PMU overflows that fall there are taken right after cpsie i and
 * their samples pile on the next instruction. cmprof-top must name that skid (the A32 encodings of
 * cpsie i). For tests/test_pmu.py. */
#include "board_virt.h"
#include "cmprof.h"

#define SAMPLES 5000u

#define SPIN(n)                                                                                                       \
    do {                                                                                                              \
        uint32_t k = (n);                                                                                             \
        __asm volatile("1: subs %0, %0, #1\n bne 1b\n" : "+r"(k)::"cc");                                              \
    } while (0)

__attribute__((noinline)) void masked_work(void)
{
    __asm volatile("cpsid i" ::: "memory");
    SPIN(1000u);
    __asm volatile("cpsie i" ::: "memory");
    SPIN(1u);
}

__attribute__((noinline)) void open_work(void)
{
    SPIN(2000u);
}

int main(void)
{
    board_gic_pmu();
    cmprof_start(997u, SAMPLES);
    __asm volatile("cpsie i" ::: "memory");
    while (cmprof_samples() < SAMPLES) {
        masked_work();
        open_work();
    }
    __asm volatile("cpsid i" ::: "memory");
    cmprof_dump(board_putc);
    board_exit(0);
}
