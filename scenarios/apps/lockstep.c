/* A main loop driven by a timer: every TICK instructions it runs control() and filter(), and
 * waits the rest of the time (truth: 59.82/30.08/10.03 %, as in the reference document).
 * Sampling with a period equal or close to TICK falls into step. */
#include "board.h"
#include "cmprof.h"

#ifndef PERIOD
#define PERIOD 1680u /* SysTick ticks at 168 MHz: 9999 ns in QEMU = 9999 instructions */
#endif
#ifndef TICK
#define TICK 9999u /* TIM2 ticks = instructions */
#endif
#ifndef PHASE
#define PHASE 1000u /* first loop start, relative to the start of sampling */
#endif
#ifndef SAMPLES
#define SAMPLES 1000u
#endif

static uint32_t next_at;

/* TIM2's counter read in place (STM32 only), so waiting is one function, as with an inlined now(). */
static inline uint32_t now(void)
{
    return BOARD_REG(0x40000024u);
}

__attribute__((noinline)) void wait_tick(void)
{
    while ((int32_t)(now() - next_at) < 0) {
    }
    next_at += TICK;
}

__attribute__((noinline)) void control(void)
{
    for (uint32_t i = 0; i < 1000u; i++)
        __asm volatile("nop");
}

__attribute__((noinline)) void filter(void)
{
    for (uint32_t i = 0; i < 333u; i++)
        __asm volatile("nop");
}

int main(void)
{
    board_init();
    cmprof_start(PERIOD, SAMPLES);
    next_at = now() + PHASE;
    truth_begin();
    while (cmprof_samples() < SAMPLES) {
        wait_tick();
        control();
        filter();
    }
    truth_end();
    cmprof_dump(board_putc);
    board_exit(0);
}
