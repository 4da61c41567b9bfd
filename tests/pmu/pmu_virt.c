/* Bare metal on QEMU's virt board (Cortex-A7/A15): the PMU API of firmware/cmprof_pmu.h measures
 * loops of known length and prints what it counted on the PL011, for tests/test_pmu.py. */
#include "cmprof.h"
#include "cmprof_pmu.h"

#include <stddef.h>

#define UART_DR (*(volatile uint32_t *)0x09000000u)
#define UART_FR (*(volatile uint32_t *)0x09000018u)

uint32_t pmu_stack[1024] __attribute__((aligned(8)));

int main(void);

__attribute__((naked, section(".text.start"))) void _start(void)
{
    __asm volatile("ldr sp, =pmu_stack + 4096\n"
                   "bl main\n"
                   "b .\n");
}

static void putc_(char c)
{
    while (UART_FR & (1u << 5)) /* TX FIFO full */
        ;
    UART_DR = (uint32_t)c;
}

static void puts_(const char *s)
{
    while (*s)
        putc_(*s++);
}

static void putdec(uint32_t v)
{
    char d[10];
    int n = 0;
    do
        d[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n)
        putc_(d[--n]);
}

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
    puts_("loop n=");
    putdec(n);
    puts_(" cycles=");
    putdec(c1 - c0);
    puts_(" insns=");
    putdec(i1 - i0);
    puts_("\n");
}

/* semihosting SYS_EXIT (ADP_Stopped_ApplicationExit): QEMU ends */
static void leave(void)
{
    register uint32_t r0 __asm("r0") = 0x18u;
    register uint32_t r1 __asm("r1") = 0x20026u;
#ifdef __thumb__
    __asm volatile("svc 0xab" : : "r"(r0), "r"(r1) : "memory");
#else
    __asm volatile("svc 0x123456" : : "r"(r0), "r"(r1) : "memory");
#endif
}

int main(void)
{
    puts_("pmcr=");
    putdec(cmprof_pmu_pmcr());
    puts_(" counters=");
    putdec(cmprof_pmu_counters());
    puts_("\n");
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
    puts_("div64 cycles=");
    putdec(cmprof_pmu_cycles() - c0);
    puts_("\n");
    /* overflow: preload 2^32 - 100, run past it */
    cmprof_pmu_start(false);
    cmprof_pmu_clear_overflow(CMPROF_PMU_CYCLES);
    cmprof_pmu_set_cycles(0xFFFFFFFFu - 99u);
    spin(1000);
    puts_("overflow=");
    putdec(cmprof_pmu_overflow() & CMPROF_PMU_CYCLES ? 1u : 0u);
    puts_("\n");
    /* reset and stop */
    cmprof_pmu_reset();
    uint32_t after_reset = cmprof_pmu_cycles();
    cmprof_pmu_stop();
    uint32_t s0 = cmprof_pmu_cycles();
    spin(1000);
    puts_("reset_small=");
    putdec(after_reset < 100u ? 1u : 0u);
    puts_(" stopped_delta=");
    putdec(cmprof_pmu_cycles() - s0);
    puts_("\n");
    /* section timers on PMCCNTR, the Cortex-M API and dump lines: spin(1000) five times in
     * section 0, spin(3000) three times in section 1 */
    puts_("sections=");
    putdec(cmprof_sections_init(NULL) == CMPROF_CLOCK_OK ? 1u : 0u);
    puts_("\n");
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
    cmprof_sections_dump(putc_);
    puts_("done\n");
    leave();
    for (;;)
        ;
}
