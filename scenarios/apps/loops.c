/* Three loops, 700/200/100 iterations: the reference program whose true shares are known.
 *   PERIOD, SAMPLES, CHUNKS  sampling period (SysTick ticks), samples per chunk, chunks
 *   USE_PSP=1                main code runs on PSP, as an RTOS task would
 *   WRONG_STACK=1            a deliberately wrong prologue that always reads the frame from MSP
 *   HOT_INLINE=1             let the compiler inline the loops (build at -O2)
 *   HOT_B_N, SEED            hot_b's iterations (a slower build), the jitter's seed (another run)
 *   HOT_THUMB=1              Cortex-A, built ARM: the loops alone in Thumb-2 (interrupted Thumb code) */
#include "board.h"
#include "cmprof.h"
#include "work.h"

#ifndef PERIOD
#define PERIOD 2013u
#endif
#ifndef SAMPLES
#define SAMPLES 10000u
#endif
#ifndef CHUNKS
#define CHUNKS 1u
#endif
#ifndef HOT_B_N
#define HOT_B_N 200u /* a "slower build" raises it: the --fail-if-slower test */
#endif

/* Runs once, outside the sampled stretch; it lies right before hot_a, as prof_dump did in the
 * document, so a bucket straddling the boundary credits it with hot_a's time. */
__attribute__((noinline)) static void report_span(uint32_t t0)
{
    board_puts("span=");
    board_putdec(board_clock() - t0);
    board_putc('\n');
}

#if HOT_INLINE
#define HOT static inline
#elif HOT_THUMB
#define HOT __attribute__((noinline, target("thumb")))
#else
#define HOT __attribute__((noinline))
#endif

NOP_LOOP(HOT, hot_a)

NOP_LOOP(HOT, hot_b)

NOP_LOOP(HOT, hot_c)

#if USE_PSP
static uint32_t thread_stack[256];

/* Switch thread mode to PSP (CONTROL.SPSEL = 1), the way an RTOS task runs. */
__attribute__((naked, noinline)) static void switch_to_psp(__attribute__((unused)) uint32_t *top)
{
    __asm volatile(".syntax unified\n"
                   "msr  psp, r0\n"
                   "movs r0, #2\n"
                   "msr  control, r0\n"
                   "isb\n"
                   "bx   lr\n");
}
#endif

#if WRONG_STACK
/* The mistake the scenario demonstrates: the frame is always read from MSP. */
__attribute__((naked)) void SysTick_Handler(void)
{
    __asm volatile("mrs r0, msp\n"
                   "ldr r0, [r0, #24]\n"
                   "b   cmprof_tick\n");
}
#endif

__attribute__((noinline)) static void run(void)
{
    for (uint32_t c = 0; c < CHUNKS; c++) {
        uint32_t t0 = board_clock();
#ifdef SEED
        cmprof_seed(SEED + c);
#endif
        cmprof_start(PERIOD, SAMPLES);
        truth_begin();
        while (cmprof_samples() < SAMPLES) {
            hot_a(700);
            hot_b(HOT_B_N);
            hot_c(100);
        }
        truth_end();
        report_span(t0);
        cmprof_dump(board_putc);
    }
}

int main(void)
{
    board_init();
#if USE_PSP
    switch_to_psp(&thread_stack[256]);
#endif
    run();
    board_exit(0);
}
