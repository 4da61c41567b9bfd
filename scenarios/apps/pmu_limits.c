/* What QEMU 7.2's PMU models, measured (design-notes section 10): each event number counted over
 * the same 1000-iteration loop, the cycle counter, and which counter's overflow interrupts. The
 * scenario checks assert the limits, so a QEMU that lifts one shows up as a failed check.
 *   event E count=N   event counter 0 set to event E, over the loop (and 7 writes to PMSWINC, which
 *                     SW_INCR, event 0, counts)
 *   cycles=N          PMCCNTR over the loop
 *   event_overflow irqs=I pc=P     counter 0 on INST_RETIRED preloaded to overflow 256
 *                                  instructions into spin(), its interrupt enabled: interrupts
 *                                  taken, and the PC the interrupt came at
 *   sample_overflow samples=S irqs=I  the sampler's counter's overflow: the cycle counter, or
 *                                     (CMPROF_PMU_SAMPLE_COUNTER=2) event counter 2 on INST_RETIRED;
 *                                     then the samples after one PMU register access
 *   pended pmovsr=F samples=S irqs=I acked=A  Cortex-R5 (vexpress wires no PMU interrupt): the
 *                                     cycle counter's overflow flag, then the PMU's GIC line pended
 *                                     from software: the samples and interrupts since, whether the
 *                                     flag is clear again, and the ring (cmprof_dump) with the PC */
#ifdef BOARD_r5
#include "board_r5.h"
#else
#include "board_virt.h"
#endif
#include "cmprof.h"
#include "cmprof_pmu.h"
#include "work.h"

#include <stddef.h>

NOP_LOOP(__attribute__((noinline)), spin)

static const uint32_t events[] = {0x00u, 0x01u, 0x02u, 0x03u, 0x04u, 0x05u, 0x06u, 0x07u, 0x08u, 0x09u, 0x0Au,
                                  0x0Cu, 0x10u, 0x11u, 0x12u, 0x13u, 0x14u, 0x19u, 0x1Bu, 0x1Du};

static void put_field(const char *key, uint32_t v)
{
    board_puts(key);
    board_putdec(v);
}

/* The counters read from user mode (PL0) once cmprof_pmu_user_access(true) allows it; the rest of
 * the program runs in user mode (printing and the semihosting exit need no privilege under QEMU).
 * Without the access the first read is an undefined instruction: the board's handler fails the run. */
static void user_mode_count(void)
{
    cmprof_pmu_user_access(true);
    cmprof_pmu_set_cycles(0u);
    cmprof_pmu_enable(CMPROF_PMU_CYCLES);
    /* user mode, on the same stack: the user-mode SP is banked, and only some boards set one up */
    __asm volatile("mov r0, sp\n\tcps #0x10\n\tmov sp, r0" ::: "r0", "memory");
    uint32_t cpsr;
    __asm volatile("mrs %0, cpsr" : "=r"(cpsr));
    uint32_t c0 = cmprof_pmu_cycles();
    spin(1000u);
    uint32_t c1 = cmprof_pmu_cycles();
    put_field("user mode=", cpsr & 0x1fu);
    put_field(" cycles=", c1 - c0);
    board_putc('\n');
}

/* The section timers' two PMU counters over the same loop, ten runs: the time (the last event counter
 * on CPU_CYCLES) and instructions (event counter 0 on INST_RETIRED). Run without -icount they must
 * differ (QEMU then counts cycles by its clock and no instructions): a swap of the two event numbers
 * at the register write, invisible under -icount where both count instructions, shows here. */
static void sections_part(void)
{
#ifndef SECTION_EVENT
#define SECTION_EVENT CMPROF_PMU_INST_RETIRED
#endif
    static const uint32_t insns[] = {SECTION_EVENT};
    cmprof_sections_init(NULL);
    put_field("section_events=", cmprof_sections_events(insns, 1u));
    board_putc('\n');
    for (int k = 0; k < 10; k++) {
        cmprof_section_start(0);
        spin(1000u);
        cmprof_section_stop(0);
    }
    cmprof_sections_dump(board_putc);
}

int main(void)
{
    board_init();
#ifdef SECTIONS_ONLY
    sections_part();
    board_puts("done\n");
    board_exit(0);
#endif
    board_puts("pmcr=");
    board_puthex(cmprof_pmu_pmcr());
    put_field(" counters=", cmprof_pmu_counters());
    board_putc('\n');
    cmprof_pmu_set_pmcr(cmprof_pmu_pmcr() | CMPROF_PMCR_E);
    for (unsigned i = 0; i < sizeof events / sizeof events[0]; i++) {
        cmprof_pmu_select(0, events[i]);
        cmprof_pmu_write(0, 0u);
        cmprof_pmu_enable(1u);
        spin(1000u);
        for (int k = 0; k < 7; k++)
            __asm volatile("mcr p15, 0, %0, c9, c12, 4" : : "r"(1u)); /* PMSWINC: counter 0 */
        cmprof_pmu_disable(1u);
        put_field("event ", events[i]);
        put_field(" count=", cmprof_pmu_read(0));
        board_putc('\n');
    }
    cmprof_pmu_set_cycles(0u);
    cmprof_pmu_enable(CMPROF_PMU_CYCLES);
    spin(1000u);
    cmprof_pmu_disable(CMPROF_PMU_CYCLES);
    put_field("cycles=", cmprof_pmu_cycles());
    board_putc('\n');

    /* PMCR.D through the API: the same loop counted whole, then every 64th cycle */
    cmprof_pmu_start(false);
    cmprof_pmu_enable(CMPROF_PMU_CYCLES);
    spin(64000u);
    cmprof_pmu_disable(CMPROF_PMU_CYCLES);
    put_field("divider whole=", cmprof_pmu_cycles());
    cmprof_pmu_start(true);
    cmprof_pmu_enable(CMPROF_PMU_CYCLES);
    spin(64000u);
    cmprof_pmu_disable(CMPROF_PMU_CYCLES);
    put_field(" div64=", cmprof_pmu_cycles());
    board_putc('\n');
    cmprof_pmu_start(false);

    /* an event counter's overflow, interrupt enabled */
    cmprof_pmu_select(0, CMPROF_PMU_INST_RETIRED);
    cmprof_pmu_clear_overflow(1u);
    cmprof_pmu_write(0, 0xFFFFFF00u);
    cmprof_pmu_irq_enable(1u);
    cmprof_pmu_enable(1u);
    spin(1000u);
    cmprof_pmu_disable(1u);
    cmprof_pmu_irq_disable(1u);
    put_field("event_overflow irqs=", board_pmu_event_irqs);
    board_puts(" pc=");
    board_puthex(board_pmu_event_pc);
    board_putc('\n');

    /* the sampler on its counter: 3 samples due within the loop */
    cmprof_start(500u, 3u);
    spin(1000u);
    put_field("sample_overflow samples=", cmprof_samples());
    put_field(" irqs=", board_pmu_irqs);
    cmprof_pmu_set_pmcr(cmprof_pmu_pmcr()); /* a PMU register write: what lets QEMU raise a waiting overflow */
    __asm volatile("isb" ::: "memory");
    put_field(" after_pmu_access=", cmprof_samples());
    board_puts(" timer=");
    board_puts(cmprof_timer_label);
    board_putc('\n');
#ifdef BOARD_r5
    put_field("pended pmovsr=", cmprof_pmu_overflow() >> 31);
    board_gic_pend(BOARD_R5_PMU_INTID); /* the handler runs as on an overflow: a sample, here */
    put_field(" samples=", cmprof_samples());
    put_field(" irqs=", board_pmu_irqs);
    put_field(" acked=", !(cmprof_pmu_overflow() >> 31)); /* the tick cleared the flag, preloaded anew */
    board_putc('\n');
    cmprof_dump(board_putc); /* the sample's PC */
#endif
    sections_part();
    user_mode_count();
    board_puts("done\n");
    board_exit(0);
}
