/* Bare metal on QEMU's virt board (Cortex-A7/A15, scenarios/board/board_virt.c): the PMU API of
 * firmware/cmprof_pmu.h measures loops of known length and prints what it counted on the PL011,
 * for tests/test_pmu.py. */
#include "board_virt.h"
#include "cmprof.h"
#include "cmprof_pmu.h"

#include <stddef.h>

/* n iterations of exactly two instructions */
__attribute__((noinline)) static void spin(uint32_t n)
{
    __asm volatile("1: subs %0, %0, #1\n"
                   "bne 1b\n"
                   : "+r"(n)::"cc");
}

static void measure(uint32_t n)
{
    uint32_t c0 = cmprof_pmu_cycles(), i0 = cmprof_pmu_read(0);
    spin(n);
    uint32_t c1 = cmprof_pmu_cycles(), i1 = cmprof_pmu_read(0);
    board_puts("loop n=");
    board_putdec(n);
    board_puts(" cycles=");
    board_putdec(c1 - c0);
    board_puts(" insns=");
    board_putdec(i1 - i0);
    board_puts("\n");
}

int main(void)
{
    board_puts("pmcr=");
    board_putdec(cmprof_pmu_pmcr());
    board_puts(" counters=");
    board_putdec(cmprof_pmu_counters());
    board_puts("\n");
    cmprof_pmu_start(false);
    cmprof_pmu_select(0, CMPROF_PMU_INST_RETIRED);
    cmprof_pmu_enable(CMPROF_PMU_CYCLES | 1u);
    measure(1000);
    measure(2000);
    measure(100000);
    /* every 64th cycle: 128,000 cycles count 2,000 */
    cmprof_pmu_start(true);
    uint32_t c0 = cmprof_pmu_cycles();
    spin(64000);
    uint32_t div64 = cmprof_pmu_cycles() - c0; /* before printing: the UART's loop is not measured */
    board_puts("div64 cycles=");
    board_putdec(div64);
    board_puts("\n");
    /* overflow: preload 2^32 - 100, run past it */
    cmprof_pmu_start(false);
    cmprof_pmu_clear_overflow(CMPROF_PMU_CYCLES);
    cmprof_pmu_set_cycles(0xFFFFFFFFu - 99u);
    spin(1000);
    board_puts("overflow=");
    board_putdec(cmprof_pmu_overflow() & CMPROF_PMU_CYCLES ? 1u : 0u);
    board_puts("\n");
    /* reset and stop */
    cmprof_pmu_reset();
    uint32_t after_reset = cmprof_pmu_cycles();
    cmprof_pmu_stop();
    uint32_t s0 = cmprof_pmu_cycles();
    spin(1000);
    board_puts("reset_small=");
    board_putdec(after_reset < 100u ? 1u : 0u);
    board_puts(" stopped_delta=");
    board_putdec(cmprof_pmu_cycles() - s0);
    board_puts("\n");
    /* section timers on PMCCNTR, the Cortex-M API and dump lines: spin(1000) five times in
     * section 0, spin(3000) three times in section 1 */
    board_puts("sections=");
    board_putdec(cmprof_sections_init(NULL) == CMPROF_CLOCK_OK ? 1u : 0u);
    board_puts("\n");
    for (int k = 0; k < 5; k++) {
        cmprof_section_start(0);
        spin(1000);
        cmprof_section_stop(0);
    }
    for (int k = 0; k < 3; k++) {
        cmprof_section_start(1);
        spin(3000);
        cmprof_section_stop(1);
    }
    cmprof_sections_dump(board_putc);
    board_puts("done\n");
    board_exit(0);
}
