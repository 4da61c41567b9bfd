/* Section timers in QEMU, where the DWT cycle counter stands still: the clock is TIM2, which
 * counts instructions under -icount shift=0. On Cortex-A (QEMU virt) the library's own clock, a
 * PMU event counter counting CPU cycles, is used: one per instruction there. Section 0 times
 * hot_a(700) with sampling off, so every run takes the same time; section 1 times it with the
 * sampler interrupting. */
#include "board.h"
#include "cmprof.h"
#include "work.h"
#if defined(BOARD_virt) || defined(BOARD_r5)
#include "cmprof_pmu.h"
#endif

#include <stddef.h>

#ifndef PERIOD
#define PERIOD 1691u
#endif
#ifndef SAMPLES
#define SAMPLES 2000u
#endif

NOP_LOOP(__attribute__((noinline)), hot_a)

#if !defined(BOARD_virt) && !defined(BOARD_r5)
/* Runs past the clock's 32-bit range: the same work timed by the instruction clock and by one 2^19
 * times as fast, polled between chunks (each under 2^31 fast ticks), then unpolled. */
#define FAST_SHIFT 19u
static volatile uint32_t shift; /* 0, then FAST_SHIFT: the same instructions at either speed */
static uint32_t shifted_clock(void)
{
    return board_clock() << shift;
}

static void long_run(uint32_t section, int poll)
{
    cmprof_section_start(section);
    for (int k = 0; k < 8; k++) {
        hot_a(700);
        if (poll)
            cmprof_sections_poll();
    }
    cmprof_section_stop(section);
}

static void long_runs(void)
{
    shift = 0u;
    cmprof_sections_init(shifted_clock);
    long_run(2, 1);
    cmprof_sections_dump(board_putc);
    shift = FAST_SHIFT;
    cmprof_sections_init(shifted_clock);
    long_run(3, 1);
    long_run(4, 0);
    cmprof_sections_dump(board_putc);
    board_puts("fast_shift=");
    board_putdec(FAST_SHIFT);
    board_putc('\n');
}
#endif

int main(void)
{
    board_init();
    int dwt = cmprof_sections_init(NULL); /* QEMU: the DWT check must fail, not hang */
    board_puts("dwt_status=");
    board_putdec((uint32_t)-dwt);
    board_putc('\n');
#if !defined(BOARD_virt) && !defined(BOARD_r5)
    cmprof_sections_init(board_clock);
#else
    static const uint32_t events[] = {CMPROF_PMU_INST_RETIRED}; /* instructions per run, and IPC */
    board_puts("section_events=");
    board_putdec(cmprof_sections_events(events, 1u));
    board_putc('\n');
#endif
    truth_begin();
    for (uint32_t i = 0; i < 1000u; i++) {
        cmprof_section_start(0);
        hot_a(700);
        cmprof_section_stop(0);
    }
    cmprof_start(PERIOD, SAMPLES);
    while (cmprof_samples() < SAMPLES) {
        cmprof_section_start(1);
        hot_a(700);
        cmprof_section_stop(1);
    }
    truth_end();
    cmprof_sections_dump(board_putc);
    cmprof_section_reset(0);
    board_puts("after_reset_count=");
    board_putdec(cmprof_section_get(0)->count);
    board_putc('\n');
    cmprof_dump(board_putc);
#if !defined(BOARD_virt) && !defined(BOARD_r5)
    long_runs();
#endif
    board_exit(0);
}
