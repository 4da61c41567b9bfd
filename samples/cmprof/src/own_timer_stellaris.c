/* cmprof's own-timer port (CONFIG_CMPROF_TIMER_USER) for a board with neither a CMSDK timer nor a
 * counter driver: the TI Stellaris LM3S6965 of qemu_cortex_m3, General Purpose Timer 0, timer A,
 * periodic, 32 bits (LM3S6965 data sheet, "General-Purpose Timers"). The module connects its
 * interrupt (CONFIG_CMPROF_TIMER_USER_IRQ=19) to the sampling vector at the most urgent priority;
 * these four functions only run the timer. */
#include <stdint.h>

#include <cmprof.h>

#define RCGC1 (*(volatile uint32_t *)0x400FE104u) /* clock gating: bit 16, timer 0 */
#define GPTM0 0x40030000u
#define GPTM(off) (*(volatile uint32_t *)(GPTM0 + (off)))
#define CFG 0x000u   /* 0: one 32-bit timer */
#define TAMR 0x004u  /* 2: periodic */
#define CTL 0x00Cu   /* bit 0: timer A enabled */
#define IMR 0x018u   /* bit 0: time-out interrupt */
#define ICR 0x024u   /* bit 0: clear the time-out */
#define TAILR 0x028u /* interval load */

void cmprof_user_timer_start(uint32_t period)
{
    RCGC1 |= 1u << 16;
    GPTM(CTL) = 0u;
    GPTM(CFG) = 0u;
    GPTM(TAMR) = 2u;
    GPTM(TAILR) = period - 1u;
    GPTM(ICR) = 1u;
    GPTM(IMR) = 1u;
    GPTM(CTL) = 1u;
}

void cmprof_user_timer_stop(void)
{
    GPTM(CTL) = 0u;
}

/* The next period: loaded at the next time-out. */
void cmprof_user_timer_period(uint32_t period)
{
    GPTM(TAILR) = period - 1u;
}

void cmprof_user_timer_ack(void)
{
    GPTM(ICR) = 1u;
}
