/* Work inside another interrupt handler. EXTI0 is raised by software and runs isr_work(300).
 * At the sampler's priority (ISR_PRIO 0) the handler cannot be preempted, so it is invisible and
 * its time lands after the instruction that raised it; at a lower priority (0x80) it is seen. */
#include "board.h"
#include "cmprof.h"
#include "work.h"

#ifndef ISR_PRIO
#define ISR_PRIO 0u
#endif
#ifndef PERIOD
#define PERIOD 1691u
#endif
#ifndef SAMPLES
#define SAMPLES 10000u
#endif

#ifdef CMPROF_TAG
/* one task, "main": samples in the handler must be charged to the interrupt, not to it */
void *volatile current_task;
static char main_task[] = "main";
#endif

NOP_LOOP(__attribute__((noinline)), isr_work)

void EXTI0_IRQHandler(void)
{
    isr_work(300);
}

NOP_LOOP(__attribute__((noinline)), hot_a)

int main(void)
{
    board_init();
    BOARD_NVIC_IPR_BYTE(BOARD_EXTI0_IRQ) = (uint8_t)ISR_PRIO;
    BOARD_REG(BOARD_NVIC_ISER0) = 1u << BOARD_EXTI0_IRQ;
#ifdef CMPROF_TAG
    current_task = main_task;
#endif
    cmprof_start(PERIOD, SAMPLES);
    truth_begin();
    while (cmprof_samples() < SAMPLES) {
        BOARD_REG(BOARD_NVIC_ISPR0) = 1u << BOARD_EXTI0_IRQ; /* the handler runs right after */
        hot_a(700);
    }
    truth_end();
#ifdef CMPROF_TAG
    board_puts("task ");
    board_puthex((uint32_t)(uintptr_t)main_task);
    board_puts(" main\n");
#endif
    cmprof_dump(board_putc);
    board_exit(0);
}
