/* cmprof firmware library: a sampling profiler and section timers for Cortex-M0/M0+/M3/M4/M7.
 *
 * Sampler (cmprof_sampler.c). A timer interrupt at the most urgent priority takes the program
 * counter of the interrupted code from word 6 of the exception frame, on MSP or PSP as EXC_RETURN
 * bit 2 says, and stores it. Build-time options, given with -D when compiling cmprof_sampler.c:
 *
 *   CMPROF_HIST=1          histogram buckets instead of a ring of raw addresses
 *   CMPROF_RING_N=1024     ring size in samples (power of two)
 *   CMPROF_RESERVOIR_N=32  streaming: samples kept while the ring is full (0: drop and count them)
 *   CMPROF_HIST_BINS=256   number of 16-bit saturating buckets
 *   CMPROF_HIST_SHIFT=1    bucket size is 1 << shift bytes (1: one bucket per Thumb halfword)
 *   CMPROF_HIST_BASE=expr  first address of bucket 0 (default: the linker symbol _stext)
 *   CMPROF_JITTER=mask     add (xorshift32 & mask) timer ticks to every period (0: constant period)
 *   CMPROF_TAG=var         store `var` (a `void *volatile` such as the current task) with each sample
 *   CMPROF_PORT=port       the sampling timer (default SysTick), one of:
 *       CMPROF_PORT_SYSTICK        SysTick, SysTick_Handler
 *       CMPROF_PORT_STM32_TIM      STM32 F1/F4 TIM2..TIM5 (CMPROF_STM32_TIM=3, CMPROF_TIM_PSC_VALUE=0,
 *                                  CMPROF_STM32F1 on F1), TIMn_IRQHandler
 *       CMPROF_PORT_CMSDK_TIMER    CMSDK APB timer of MPS2/MPS3 (CMPROF_CMSDK_TIMER=1, or
 *                                  CMPROF_CMSDK_BASE / CMPROF_CMSDK_IRQ), TIMERn_Handler
 *       CMPROF_PORT_CMSDK_DUALTIMER  CMSDK dual timer, timer 1 (CMPROF_DUALTIMER_BASE=0x40002000,
 *                                  CMPROF_DUALTIMER_IRQ=10), DUALTIMER_Handler
 *       CMPROF_PORT_NRF_TIMER      nRF51/nRF52 TIMERn (CMPROF_NRF_TIMER=1, CMPROF_NRF_PRESCALER=0),
 *                                  TIMERn_IRQHandler
 *       CMPROF_PORT_RP2040_ALARM   RP2040 TIMER alarm n (CMPROF_RP2040_ALARM=0; the pico-sdk's own
 *                                  alarm pool takes alarm 3), 1 MHz ticks, isr_timer_n
 *       CMPROF_PORT_USER           your timer: CMPROF_USER_START(p), _STOP(), _SET_PERIOD(t), _ACK()
 *                                  as macros, or functions cmprof_user_timer_start/stop/period/ack;
 *                                  your vector runs CMPROF_DEFINE_ISR (below)
 *       CMPROF_PORT_NONE           no timer at all: your handler calls cmprof_tick(pc)
 *       CMPROF_PORT_PMU            Cortex-A/R: the PMU's cycle counter, preloaded to overflow after
 *                                  each period; your IRQ handler (the PMU interrupt through the GIC)
 *                                  calls cmprof_tick(LR_irq - 4); build with CMPROF_NO_ISR=1
 *       CMPROF_PORT_SP804          Cortex-A/R: timer 1 of an SP804 dual timer (CMPROF_SP804_BASE=
 *                                  0x1C110000, Versatile Express); your IRQ handler (its line through
 *                                  the GIC) calls cmprof_tick(LR_irq - 4); build with CMPROF_NO_ISR=1
 *     Every port but SysTick leaves the SysTick registers alone, so an RTOS keeps its tick. Each
 *     port's handler gives its timer the most urgent priority (0).
 *   CMPROF_NO_ISR=1        do not define the interrupt handler (and, without CMPROF_PORT, touch
 *                          no timer: CMPROF_PORT_NONE); call cmprof_tick() from your own
 *   CMPROF_TIMER_TIM3=1    the same as CMPROF_PORT=CMPROF_PORT_STM32_TIM with TIM3 (older name)
 *
 * The ARMv6-M prologue (M0/M0+) is chosen automatically from __ARM_ARCH_6M__.
 *
 * Section timers (cmprof_section.c): start/stop by index, current/min/max/count/sum in clock
 * ticks. CMPROF_SECTIONS=8 sets how many there are.
 *
 * DWT/ITM hardware PC sampling (cmprof_dwt.c): ARMv7-M only. NOT TESTED ON SILICON: QEMU does not
 * model DWT or ITM, so only the register arithmetic is checked (static assertions, host tests).
 */
#ifndef CMPROF_H
#define CMPROF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Timer ports, for -DCMPROF_PORT=... */
#define CMPROF_PORT_NONE 0
#define CMPROF_PORT_SYSTICK 1
#define CMPROF_PORT_STM32_TIM 2
#define CMPROF_PORT_CMSDK_TIMER 3
#define CMPROF_PORT_CMSDK_DUALTIMER 4
#define CMPROF_PORT_NRF_TIMER 5
#define CMPROF_PORT_USER 6
#define CMPROF_PORT_PMU 7 /* Cortex-A/R: the PMU's cycle counter overflow (cmprof_pmu.h) */
#define CMPROF_PORT_SP804 8 /* Cortex-A/R: ARM's SP804 dual timer, its interrupt through the GIC */
#define CMPROF_PORT_RP2040_ALARM 9 /* RP2040: one of the TIMER's four alarms (1 MHz, one-shot) */

/* CMPROF_DEFINE_ISR(vector) defines `vector` as the sampler's interrupt handler: it takes the
 * interrupted PC from word 6 of the exception frame, on MSP or PSP as EXC_RETURN bit 2 says, and
 * tail-calls cmprof_tick(), which acknowledges the timer through the port (CMPROF_USER_ACK for
 * CMPROF_PORT_USER). Use it for a vector the built-in ports do not name. */
/* With CMPROF_TAG the prologue also passes word 7, the stacked xPSR, whose exception number says
 * whether the interrupted code was a handler: cmprof_tick_frame() then stores CMPROF_ISR_TAG(n)
 * instead of the task, so interrupt time is never charged to the task it interrupted. */
/* With CMPROF_STACKS=1 the prologue passes the exception frame itself (r1) and EXC_RETURN (r2) to
 * cmprof_tick_stacked(), which keeps stack evidence on every CMPROF_STACK_EVERY-th sample
 * (cmprof_stack.c, below). With CMPROF_STACK_FP=1 too it first stores the interrupted r7 (a frame
 * pointer, which exception entry does not stack) in cmprof_stack_r7: two instructions a sample
 * (passing it on as an argument cost more). */
#ifndef CMPROF_STACKS
#define CMPROF_STACKS 0
#endif
#ifndef CMPROF_STACK_FP
#define CMPROF_STACK_FP 0
#endif
#if CMPROF_STACKS && CMPROF_STACK_FP
#define CMPROF_STORE_R7 "ldr   r3, =cmprof_stack_r7 \n" "str   r7, [r3]      \n"
#else
#define CMPROF_STORE_R7 ""
#endif
/* (ARMv8-M stores it with the frame's move for a tick whose callee registers are stacked: below) */
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8M_BASE__)
#define CMPROF_KEEP_R7 ""
#else
#define CMPROF_KEEP_R7 CMPROF_STORE_R7
#endif
#if CMPROF_STACKS
#define CMPROF_TICK_ENTRY "cmprof_tick_stacked"
#define CMPROF_XPSR_V6 ""
#define CMPROF_XPSR_V7 ""
#elif defined(CMPROF_TAG)
#define CMPROF_TICK_ENTRY "cmprof_tick_frame"
#define CMPROF_XPSR_V6 "ldr   r1, [r0, #28]  \n"
#define CMPROF_XPSR_V7 "ldr   r1, [r0, #28] \n"
#else
#define CMPROF_TICK_ENTRY "cmprof_tick"
#define CMPROF_XPSR_V6 ""
#define CMPROF_XPSR_V7 ""
#endif
/* ARMv8-M with the Security Extension: when EXC_RETURN's S (bit 6, the interrupted context's state)
 * differs from its ES (bit 0, the handler's), the interrupted code ran in the other Security state
 * and its frame is on that state's stack, which the handler may not be able to read (Non-Secure
 * firmware interrupting a Secure call): the word it would read is no PC. Such a sample is sent as an
 * address in one of the library's functions "(Secure code)" and "(Non-Secure code)" (by S), which
 * the host shows as their rows, with no stack evidence. A Secure tick tail-chained after a
 * Non-Secure handler that had interrupted Secure code finds EXC_RETURN's DCRS (bit 5) clear: the
 * hardware stacked the callee registers for that handler (an integrity signature, a reserved word,
 * r4-r11: 40 bytes) below the frame, which lies 40 bytes up. The prologue without CMPROF_STACKS
 * checks both in one test: 10 instructions a sample on ARMv8-M mainline where ARMv7-M's takes 6, 11
 * for a sample in the other state, 14 for one with DCRS clear; on ARMv8-M baseline (Cortex-M23) 14
 * where ARMv6-M's takes 7, 20, and 19-20 (counted from the code; one more each with CMPROF_TAG). With
 * CMPROF_STACKS cmprof_tick_stacked() tells the other state apart, from EXC_RETURN (3 instructions,
 * and 3 in the prologue: below), and the prologue moves the frame when DCRS is clear (below). A
 * handler of your own (CMPROF_NO_ISR) must check both itself. */
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8M_BASE__)
#define CMPROF_TRUSTZONE 1
#else
#define CMPROF_TRUSTZONE 0
#endif
/* the first of the two (4 bytes each, "(Secure code)" next): its symbol's value has the Thumb bit */
#define CMPROF_OTHER_STATE_SYM "\"(Non-Secure code)\""
#if CMPROF_TRUSTZONE && !CMPROF_STACKS && defined(__ARM_ARCH_8M_MAIN__)
#ifdef CMPROF_TAG /* r1, the xPSR, 0: the exception the other state was in is not known, the task is */
#define CMPROF_OTHER_STATE_XPSR "movs  r1, #0        \n"
#else
#define CMPROF_OTHER_STATE_XPSR ""
#endif
#define CMPROF_OTHER_STATE_V7                                                                            \
    "eor   r3, lr, lr, lsr #6 \n" /* bit 0: S differs from ES */                                          \
    "orn   r3, r3, lr, lsr #5 \n" /* ... or DCRS is clear (below) */                                      \
    "lsls  r3, r3, #31   \n"                                                                              \
    "bne   3f            \n"
/* DCRS clear in this state: the frame lies 40 bytes up, past the callee registers (below); else the
 * PC: the second halfword of "(Non-Secure code)", or of "(Secure code)" 4 bytes on when S is set */
#define CMPROF_OTHER_STATE_TAIL                                                                          \
    "3: eor r3, lr, lr, lsr #6 \n"                                                                        \
    "lsls  r3, r3, #31   \n"                                                                              \
    "bne   5f            \n"                                                                              \
    "tst   lr, #4        \n"                                                                              \
    "ite   eq            \n"                                                                              \
    "mrseq r0, msp       \n"                                                                              \
    "mrsne r0, psp       \n"                                                                              \
    "adds  r0, r0, #40   \n" CMPROF_XPSR_V7                                                               \
    "ldr   r0, [r0, #24] \n"                                                                              \
    "b     " CMPROF_TICK_ENTRY " \n"                                                                      \
    "5: ubfx r3, lr, #6, #1 \n"                                                                           \
    "ldr   r0, =" CMPROF_OTHER_STATE_SYM " + 1 \n"                                                        \
    "add.w r0, r0, r3, lsl #2 \n" CMPROF_OTHER_STATE_XPSR                                                 \
    "b     " CMPROF_TICK_ENTRY " \n"                                                                      \
    ".ltorg              \n"
#else
#define CMPROF_OTHER_STATE_V7 ""
#define CMPROF_OTHER_STATE_TAIL ""
#endif
#if CMPROF_TRUSTZONE && !CMPROF_STACKS && defined(__ARM_ARCH_8M_BASE__)
#ifdef CMPROF_TAG
#define CMPROF_OTHER_STATE_XPSR_V6 "movs  r1, #0         \n"
#else
#define CMPROF_OTHER_STATE_XPSR_V6 ""
#endif
/* ARMv8-M baseline (Cortex-M23) has Thumb-1's data processing only: the same check and PC in more steps */
#define CMPROF_OTHER_STATE_V6                                                                            \
    "lsrs  r3, r0, #6     \n"                                                                             \
    "eors  r3, r0         \n" /* bit 0: S differs from ES */                                             \
    "lsrs  r2, r0, #5     \n"                                                                             \
    "mvns  r2, r2         \n"                                                                             \
    "orrs  r3, r2         \n" /* ... or DCRS is clear (below) */                                         \
    "lsls  r3, r3, #31    \n"                                                                             \
    "bne   3f             \n"
#define CMPROF_OTHER_STATE_TAIL_V6                                                                       \
    "3: lsrs r3, r0, #6   \n"                                                                             \
    "eors  r3, r0         \n"                                                                             \
    "lsls  r3, r3, #31    \n"                                                                             \
    "bne   5f             \n"                                                                             \
    "lsls  r0, r0, #29    \n" /* DCRS clear in this state: the frame 40 bytes up */                      \
    "bmi   6f             \n"                                                                             \
    "mrs   r0, msp        \n"                                                                             \
    "b     7f             \n"                                                                             \
    "6: mrs r0, psp       \n"                                                                             \
    "7: adds r0, #40      \n" CMPROF_XPSR_V6                                                              \
    "ldr   r0, [r0, #24]  \n"                                                                             \
    "ldr   r2, =" CMPROF_TICK_ENTRY " \n"                                                                 \
    "bx    r2             \n"                                                                             \
    "5: lsrs r3, r0, #6   \n"                                                                             \
    "movs  r2, #1         \n"                                                                             \
    "ands  r3, r2         \n"                                                                             \
    "lsls  r3, r3, #2     \n"                                                                             \
    "ldr   r0, =" CMPROF_OTHER_STATE_SYM " + 1 \n"                                                        \
    "adds  r0, r0, r3     \n" CMPROF_OTHER_STATE_XPSR_V6                                                 \
    "ldr   r2, =" CMPROF_TICK_ENTRY " \n"                                                                 \
    "bx    r2             \n"
#else
#define CMPROF_OTHER_STATE_V6 ""
#define CMPROF_OTHER_STATE_TAIL_V6 ""
#endif
/* With stack evidence, cmprof_tick_stacked() tells the other state's samples apart from EXC_RETURN; the
 * prologue must not load their frame's word 6 from this state's stack pointer, which may never have
 * been set (+3 instructions a sample on ARMv8-M mainline, +5 on baseline; none before ARMv8-M). */
#if CMPROF_TRUSTZONE && CMPROF_STACKS && defined(__ARM_ARCH_8M_BASE__)
#define CMPROF_LOAD_PC_V6                                                                                \
    "mov   r3, lr         \n"                                                                             \
    "lsrs  r0, r3, #6     \n"                                                                             \
    "eors  r0, r3         \n"                                                                             \
    "lsls  r0, r0, #31    \n" /* Z: S equals ES */                                                       \
    "bne   4f             \n"                                                                             \
    "ldr   r0, [r1, #24]  \n"                                                                             \
    "4:                   \n"
#else
#define CMPROF_LOAD_PC_V6 "ldr   r0, [r1, #24]  \n"
#endif
#if CMPROF_TRUSTZONE && CMPROF_STACKS && defined(__ARM_ARCH_8M_MAIN__)
#define CMPROF_LOAD_PC_V7                                                                                \
    "eor   r3, lr, lr, lsr #6 \n"                                                                         \
    "lsls  r3, r3, #31   \n"                                                                              \
    "it    eq            \n"                                                                              \
    "ldreq r0, [r1, #24] \n"
#else
#define CMPROF_LOAD_PC_V7 "ldr   r0, [r1, #24] \n"
#endif
/* ... and with stack evidence the frame moves 40 bytes up when DCRS is clear (below): +3 instructions a
 * sample on ARMv8-M mainline and baseline (+4 on baseline with DCRS clear). With CMPROF_STACK_FP the
 * interrupted r7 is then the one among the callee registers (the live r7 is what the handler before
 * left: zero, as the hardware cleared r4-r11 for it): +2 instructions a sample on mainline (its IT
 * block), +2 on baseline with DCRS clear. */
#if CMPROF_STACK_FP
#define CMPROF_STACKED_R7 "ldr   r0, [r1, #20]  \n" "str   r0, [r3]       \n" /* r7: r4 is at +8 */
#define CMPROF_STACKED_R7_IT "ittt  eq            \n" "ldreq r0, [r1, #20] \n" "streq r0, [r3]      \n"
#else
#define CMPROF_STACKED_R7 ""
#define CMPROF_STACKED_R7_IT "it    eq            \n"
#endif
#if CMPROF_TRUSTZONE && CMPROF_STACKS && defined(__ARM_ARCH_8M_BASE__)
#define CMPROF_CALLEE_STACKED_V6                                                                         \
    CMPROF_STORE_R7                                                                                      \
    "mov   r0, lr         \n"                                                                             \
    "lsls  r0, r0, #26    \n" /* DCRS -> N */                                                             \
    "bmi   5f             \n" CMPROF_STACKED_R7                                                           \
    "adds  r1, #40        \n"                                                                             \
    "5:                   \n"
#else
#define CMPROF_CALLEE_STACKED_V6 ""
#endif
#if CMPROF_TRUSTZONE && CMPROF_STACKS && defined(__ARM_ARCH_8M_MAIN__)
#define CMPROF_CALLEE_STACKED_V7                                                                         \
    CMPROF_STORE_R7                                                                                      \
    "tst   lr, #0x20     \n" /* DCRS */                                                                   \
    CMPROF_STACKED_R7_IT                                                                                 \
    "addeq r1, r1, #40   \n"
#else
#define CMPROF_CALLEE_STACKED_V7 ""
#endif
#if CMPROF_STACKS && (defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__))
/* the frame in r1, EXC_RETURN in r2, the PC in r0 (ARMv6-M, ARMv8-M baseline: bit 2 moved into N) */
#define CMPROF_ISR_ASM                                                                                   \
    ".syntax unified      \n"                                                                             \
    "mov   r0, lr         \n"                                                                             \
    "lsls  r0, r0, #29    \n"                                                                             \
    "bmi   1f             \n"                                                                             \
    "mrs   r1, msp        \n"                                                                             \
    "b     2f             \n"                                                                             \
    "1: mrs r1, psp       \n"                                                                             \
    "2: " CMPROF_CALLEE_STACKED_V6 "mov r2, lr \n" CMPROF_LOAD_PC_V6 CMPROF_KEEP_R7                                          \
    "ldr   r3, =" CMPROF_TICK_ENTRY " \n"                                                                 \
    "bx    r3             \n"                                                                             \
    ".ltorg               \n"
#elif CMPROF_STACKS
#define CMPROF_ISR_ASM                                                                                   \
    "tst   lr, #4        \n"                                                                              \
    "ite   eq            \n"                                                                              \
    "mrseq r1, msp       \n"                                                                              \
    "mrsne r1, psp       \n" CMPROF_CALLEE_STACKED_V7                                                     \
    "mov   r2, lr        \n" CMPROF_KEEP_R7 CMPROF_LOAD_PC_V7                                            \
    "b     " CMPROF_TICK_ENTRY " \n"                                                                      \
    ".ltorg              \n"
#elif defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
/* ARMv6-M and ARMv8-M baseline have no tst-immediate and no IT blocks: move EXC_RETURN bit 2 into the
 * N flag. */
#define CMPROF_ISR_ASM                                                                                   \
    ".syntax unified      \n"                                                                             \
    "mov   r0, lr         \n" CMPROF_OTHER_STATE_V6                                                      \
    "lsls  r0, r0, #29    \n" /* bit 2 -> N: set when the frame is on PSP */                              \
    "bmi   1f             \n"                                                                             \
    "mrs   r0, msp        \n" CMPROF_XPSR_V6                                                              \
    "ldr   r0, [r0, #24]  \n" /* word 6 of the frame: the interrupted PC */                              \
    "ldr   r2, =" CMPROF_TICK_ENTRY " \n"                                                                 \
    "bx    r2             \n"                                                                             \
    "1: mrs r0, psp       \n" CMPROF_XPSR_V6                                                              \
    "ldr   r0, [r0, #24]  \n"                                                                             \
    "ldr   r2, =" CMPROF_TICK_ENTRY " \n"                                                                 \
    "bx    r2             \n" CMPROF_OTHER_STATE_TAIL_V6                                                 \
    ".ltorg               \n"
#else
/* (the other state's check first: that state's stack pointer is not the one read here, and this
 * state's may never have been set) */
#define CMPROF_ISR_ASM                                                                                   \
    CMPROF_OTHER_STATE_V7                                                                                \
    "tst   lr, #4        \n" /* EXC_RETURN bit 2: which stack holds the frame */                          \
    "ite   eq            \n"                                                                              \
    "mrseq r0, msp       \n"                                                                              \
    "mrsne r0, psp       \n" CMPROF_XPSR_V7                                                               \
    "ldr   r0, [r0, #24] \n" /* word 6 of the frame: the interrupted PC */                                \
    "b     " CMPROF_TICK_ENTRY " \n" CMPROF_OTHER_STATE_TAIL
#endif

/* The tag a sample gets when it interrupted exception handler n (n = 2..511: NMI, faults, SVC,
 * PendSV, SysTick, IRQ n - 16); cmprof-top shows it as "ISR: <the handler's name>". */
#define CMPROF_ISR_TAG(n) (0xFFFFFE00u | (uint32_t)(n))
#define CMPROF_IS_ISR_TAG(tag) (((tag) & 0xFFFFFE00u) == 0xFFFFFE00u)
#define CMPROF_DEFINE_ISR(vector)                                                                        \
    __attribute__((naked)) void vector(void)                                                             \
    {                                                                                                    \
        __asm volatile(CMPROF_ISR_ASM);                                                                  \
    }

/* Character output supplied by the user: one byte to the UART (blocking is fine). */
typedef void (*cmprof_putc_fn)(char c);

/* ---- sampler ------------------------------------------------------------------------------ */

/* Start sampling every `period` timer ticks (SysTick: core clock ticks, at most 2^24; STM32 TIMx:
 * prescaled ticks, at most 2^16 (TIM2/TIM5 on F4: 2^32); CMSDK timers: their clock; nRF: 16 MHz /
 * 2^CMPROF_NRF_PRESCALER). With CMPROF_PORT_NONE the period is your timer's business. With CMPROF_JITTER the period is period + (random & mask).
 * After `limit` samples the timer stops by itself; limit 0 samples forever (the ring then keeps
 * the newest CMPROF_RING_N samples). Built with -DCMPROF_LIMIT=0 (the Zephyr module's stream) the
 * tick looks at no limit: it samples until cmprof_stop(). Sets the timer interrupt to priority 0, the most urgent. */
void cmprof_start(uint32_t period, uint32_t limit);

/* Stop the sampling timer. Samples taken so far stay in place for cmprof_dump(). */
void cmprof_stop(void);

/* Number of samples taken since cmprof_start() (including histogram samples out of range).
 * Inline, so a polling loop costs a load, not a call (its cost would change the program it
 * profiles). The sampler exports its first counter for it (one way: the stream reads it too,
 * the sampler never reads the stream). */
#if defined(__SANITIZE_ADDRESS__)
/* AddressSanitizer (host tests) would take the alias for a 4-byte object beside the ring. */
uint32_t cmprof_samples(void);
#else
extern volatile const uint32_t cmprof_sample_count; /* the sampler state's first word */
static inline uint32_t cmprof_samples(void)
{
    return cmprof_sample_count;
}
#endif

/* Reseed the jitter generator (any non-zero value; zero is replaced by a fixed seed). */
void cmprof_seed(uint32_t seed);

/* Record one sample. Called by the interrupt prologue; with CMPROF_NO_ISR, call it from your own
 * handler with the stacked PC. */
void cmprof_tick(uint32_t pc);
/* The same with the stacked xPSR (the prologue's entry with CMPROF_TAG): a sample taken in an
 * exception handler is tagged CMPROF_ISR_TAG(exception number) instead of with the task. */
void cmprof_tick_frame(uint32_t pc, uint32_t xpsr);

/* The prologue's entry with CMPROF_STACKS=1: the interrupted PC, its exception frame and EXC_RETURN. */
void cmprof_tick_stacked(uint32_t pc, const uint32_t *frame, uint32_t exc_return);

/* ---- stack evidence (build the sampler with CMPROF_STACKS=1, add cmprof_stack.c) ------------
 * On every CMPROF_STACK_EVERY-th sample (default 16) the tick keeps what the host needs to find the
 * interrupted code's callers with the ELF's call-frame information: the stacked LR, and the words
 * of the interrupted stack that look like Thumb return addresses into the code (odd, inside
 * [CMPROF_CODE_START, CMPROF_CODE_END), default the linker's _stext/_etext, and right after a BL
 * or BLX instruction), each with its offset
 * from the interrupted SP; it scans CMPROF_STACK_WORDS words (default 48) and keeps at most
 * CMPROF_STACK_KEEP of them (default 8), never past the top of the main stack (the vector table's
 * first word, or CMPROF_STACK_TOP). No frame is walked on the target. CMPROF_STACK_RECORDS (default 8,
 * a power of two) records wait for the drain, about 4 * (4 + 1.5 * KEEP) bytes of RAM each; a
 * sample whose record finds no room goes without (cmprof_stack_dropped()). The stream sends each
 * record in a '^' line after the sample line that holds its sample (docs/stream.md), and the count of
 * samples that went without in a "^~N" line when it changed (the host says so); a dump keeps the
 * newest records and prints them after its samples ("sw" lines). Ring mode only. Evidence on every
 * sample (CMPROF_STACK_EVERY=1) needs about a line's worth of records: 64 kept all of them on an M4
 * at a sample every 1,691 cycles (scenario m4_stacks_all_64), 8 dropped half. */
#ifndef CMPROF_STACK_EVERY
#define CMPROF_STACK_EVERY 16u
#endif
#ifndef CMPROF_STACK_WORDS
#define CMPROF_STACK_WORDS 48u
#endif
#ifndef CMPROF_STACK_KEEP
#define CMPROF_STACK_KEEP 8u
#endif
/* A '^' line's text at most, before its check: '^', 1 + 6 + 6 + 2 chars, 6 per word kept and 6 for
 * where r7 pointed (CMPROF_STACK_FP). */
#define CMPROF_STACK_LINE_MAX (16u + 6u * (CMPROF_STACK_KEEP + CMPROF_STACK_FP))
/* Keep the evidence of the sample at ring position (or sample number) seq; called by the tick. With
 * CMPROF_STACK_FP=1, where the interrupted r7 (cmprof_stack_r7, stored by the prologue) points into
 * the words scanned is kept too: the CFA of a function built with -fno-omit-frame-pointer (or at
 * -O0) is on r7, and the host proves its frames with it. */
void cmprof_stack_capture(const uint32_t *frame, uint32_t exc_return, uint32_t pc, uint32_t seq);
#if CMPROF_STACK_FP
extern uint32_t cmprof_stack_r7;
#endif
/* For the drain: the text of the next '^' line for a sample at positions [first, first + count)
 * (the sample line just sent), without its check; 0 when none is due. Older records are dropped;
 * when the count of dropped ones changed, a "^~N" line with it comes first. */
uint32_t cmprof_stack_line(char *b, uint32_t first, uint32_t count, uint32_t code_base);
/* For cmprof_dump(): a "sw" line per record whose sample is among samples [first, n). */
void cmprof_stack_dump(cmprof_putc_fn putc, uint32_t first, uint32_t n);
/* Stacked samples whose evidence found no room (the drain was behind), so far. */
uint32_t cmprof_stack_dropped(void);
/* For an RTOS's task creation hook: the new task's initial stack pointer, as the kernel prepared
 * it before the task first runs. The address the task would return to (FreeRTOS: its exit trap,
 * prvTaskExitError), which no call left there, is read from the hardware frame the task starts
 * from, and kept by every later scan like a return address (CMPROF_STACK_ROOTS different ones,
 * default 4): the host then ends each task's stacks, proven, at its task function. */
void cmprof_stack_task_root(const void *initial_sp);

/* Write what was collected, as text lines:
 *   prof raw n=N [taken=T]            then  p ADDR x8 ...   [g TAG x8 ...]   end
 *     (taken=: more samples were taken than the ring keeps; the host reports T - N as lost)
 *   prof hist base=0xB shift=S n=N out=O   then  h CNT x16 ...   end
 * Call it with the sampler stopped. */
void cmprof_dump(cmprof_putc_fn putc);
/* Dump mode with task names (cmprof_tasks.c, built with CMPROF_TAG and without CMPROF_STREAM as
 * the sampler is, the FreeRTOS header's hooks or cmprof_stream_task_later() naming tasks): "task TAG NAME" for every task named, deleted
 * ones included while the table (CMPROF_STREAM_TASKS) has room, copied at creation
 * (CMPROF_DUMP_NAME_LEN characters, default 16). cmprof_dump() prints them before its "end" in a
 * tagged build (which therefore links cmprof_tasks.c). Before them, "tasks slots=S full=N forgot=K"
 * when the table could not name every tag (N names with no slot, K earlier names beyond
 * CMPROF_DUMP_EARLIER, 16), and "tasks reused TAG" for a block named again under another name (its
 * earlier name, when kept, a "task" line of the same tag before the newest): the host names such a
 * block's row with all of them, "(merged)". In the kernel's hooks only: the tick is unchanged. */
void cmprof_dump_tasks(cmprof_putc_fn putc);

/* ---- live streaming (build cmprof_sampler.c with CMPROF_STREAM=1, add cmprof_stream.c and
 * cmprof_tasks.c, the task table, all three with the same options) ---------------------------------
 * The tick pushes samples into the ring and never overwrites: a full ring keeps a uniform
 * subsample of what it cannot take (CMPROF_RESERVOIR_N, below), or with CMPROF_RESERVOIR_N=0
 * drops the new sample and counts it. A drain that cannot run (a busier thread above it, an idle
 * task that never runs) starves the stream: give it a priority above such work (Zephyr:
 * CONFIG_CMPROF_DRAIN_PRIORITY; FreeRTOS: a task of its own instead of the idle hook). The drain sends complete lines through putc; every line ends with a 12-bit CRC,
 * so a flipped bit on the wire loses one line instead of inventing samples. Protocol: docs/stream.md. */

struct cmprof_stream_info {
    uint32_t clock_hz;         /* core clock */
    uint32_t timer_hz;         /* clock of the sampling timer (SysTick with CLKSOURCE=1: the core clock) */
    uint32_t period;           /* sampling period in timer ticks, as given to cmprof_start() */
    uint32_t jitter;           /* the CMPROF_JITTER mask */
    uint32_t code_base;        /* PCs go out as 24-bit halfword offsets from here (32 MB reach) */
    uint32_t section_hz;       /* clock of the section timers (0: the core clock, as DWT_CYCCNT) */
    const void *build_id_note; /* the linker's .note.gnu.build-id (ld --build-id), or NULL */
    /* Optional: take each line whole, newline included (a DMA UART, RTT, USB CDC). When set, the
     * stream functions write through it and ignore their putc argument, which may be NULL. The
     * buffer is on the caller's stack: copy it, or be done with it, before returning. */
    void (*write)(const char *buf, uint32_t len);
};

/* The build-id note, when linked with firmware/cmprof_build_id.ld (-Wl,--build-id). */
extern const uint32_t cmprof_build_id_note[];

/* Say who is talking: protocol version, clocks, sampling settings, build-id. Send it once at
 * start: the drain repeats it after each second's worth of samples (timer_hz over the mean period;
 * at most 2048 samples), and repeats the task names as a trickle (a round at most once a second of
 * samples taken, at least every 16384, several names to an @N line) within a ninth of the line, so a host that connects
 * late learns them all (docs/stream.md). A new task's name always goes out, before its samples;
 * when tasks are created faster than their names fit that share, each new name sent while a round
 * is under way lets one repeat go too, so churn never starves the repeats (names then take more
 * than a ninth). Sent again by the application, it starts a new round of names. `info` is copied; task names must stay valid while their tasks are
 * named. Call it, the drain and the flush from one context at a time (their lines are static). */
void cmprof_stream_announce(cmprof_putc_fn putc, const struct cmprof_stream_info *info);

/* The sampler's timer ("SysTick", "PMU-cycle-counter"...), as the announce gives it. */
extern const char cmprof_timer_label[];

/* Name a tag value (e.g. a task control block) and name a section timer. Up to
 * CMPROF_STREAM_TASKS named tags at once (default 254, about 25 bytes of RAM each, at most 4158; a
 * sample's task, written only where it changes, costs one character for the first 19 slots, two to
 * 274 and three beyond); interrupt handlers take none. A full table is said on the stream (@full)
 * and shown by the host, never hidden. Naming a tag again renames it; names are sent up to 24
 * characters, by need (with the first sample of their task), and a name sent before goes as a
 * 2-character id: CMPROF_STREAM_NAME_IDS (default 128, 24 bytes of RAM each, at most 1024) sizes
 * that memory. Name your scheduler's idle task
 * CMPROF_IDLE_NAME: the host shows its time as idle. */
#define CMPROF_IDLE_NAME "idle"
void cmprof_stream_task(cmprof_putc_fn putc, const void *tag, const char *name);
/* The same without sending: the next drain sends it. For an RTOS's task-create hook, which runs
 * inside the kernel where nothing may block (firmware/rtos/cmprof_freertos.h). */
void cmprof_stream_task_later(const void *tag, const char *name);
/* The task is gone (e.g. from traceTASK_DELETE): it is no longer re-announced, and its slot goes
 * to a new task once no fresh slot is left, the longest-deleted first (until then, its samples
 * still in the ring keep its name).
 * Each kernel hook's work is bounded whatever the task count, the churn or the table's fill: no
 * loop over tasks or names. Create (cmprof_stream_task_later; a rename is the same call): one probe
 * of the tag hash (kept at most half full: a few steps, tests/test_stream.c counts them), one
 * unlink from the list of deleted slots, one queue entry. Delete (cmprof_stream_task_gone): one
 * probe, one list append, and for a name not sent yet (names go out by need: a task never sampled
 * since it was named has its name still owed) a copy of at most CMPROF_DUMP_NAME_LEN characters.
 * Switch (the RTOS header's switch hook): one store. Measured per call on Cortex-M3 at -Os
 * (FreeRTOS's full demo with 184 tasks, 100 of them re-created 100 or 1,000 times a second, every
 * instruction counted by QEMU: docs/performance.md), callees included: create 103 (33 in
 * cmprof_stream_task_later, 45 cmprof_tasks_register, 16 the probe, 9 supersede: the same to the
 * instruction at both rates and name patterns); delete 70 (54 and the probe), and with a name
 * still owed (6 deletes in 10 at 1,000 a second) 56 more for a 3-character name, 80 for a
 * 7-character one: 6 a character, so about 205 with a 16-character name. The probe is the one
 * part that varies with the hash's runs: 16 to 24 instructions on average in these runs.
 * A name not sent yet is copied here, as the kernel may free the block that holds it (FreeRTOS's
 * pcTaskName): CMPROF_GONE_NAMES copies (default 16, 17 bytes each) for tasks that end between two
 * drains; past them the oldest goes out as '?'. Build with CMPROF_STREAM_NAMES_KEPT=1 when names
 * outlive their tasks (Zephyr's module does): no copies, no limit. */
void cmprof_stream_task_gone(const void *tag);
/* For an RTOS adapter (firmware/rtos/): a task was created or renamed in block `tag`, its name at
 * `name` (inside the block, e.g. FreeRTOS's pcTaskName), the kernel's idle task named `idle_name`
 * (it streams as CMPROF_IDLE_NAME). Without CMPROF_TAG_NAMES, the same as
 * cmprof_stream_task_later(). Built with CMPROF_TAG_NAMES=1 (cmprof_tasks.h) the hooks keep no
 * table: the sampler's 2-way cache maps a block to its name's index, and the tick reads a task's
 * name at its first sample (the miss: the name a word at a time, its hash, up to 4 indexes of
 * names compared; a name with none takes one and copies the name). Create and rename
 * (cmprof_stream_task_new, cmprof_stream_task_later) look at the block's two ways; a block with an
 * entry (its previous task was sampled) has the new name compared with the entry's, at most
 * CMPROF_TASK_NAME_LEN characters a word at a time: the same name keeps the entry (a worker
 * re-created in its block: no miss, nothing sent), another drops it. Delete
 * (cmprof_stream_task_gone) does nothing while spare indexes last (an eighth of the table), then
 * drops the block's entry. No loop, no copy, no search, whatever the task count, the churn or
 * the table's fill. Worst cases on Cortex-M3 at -Os, callees included (instructions on the
 * longest path, arm-none-eabi-gcc 12, the FreeRTOS recipe's options; interrupts masked only to
 * drop an entry, PRIMASK):
 * create 124 (the entry in the second way, a 16-character name differing in its last word: 59 in
 * the hook, 11 out of line where names sit are learnt, the drop 17, the index's return to the pool
 * 37), 49 of them masked; rename about the same; delete 4, or 74 once spares ran short (49
 * masked); switch (the RTOS header's hook): one store. Measured per call (FreeRTOS's full demo with
 * 184 tasks, 100 of them re-created 1,000 times a second under 100 names, every instruction
 * counted by QEMU's plugin, bench/field/measure.py): create 23 (20 with no entry; 95 % of the
 * blocks had one, its name the same), delete 4. The tick pays about
 * 10 instructions a sample for the look (both ways, inline) and a miss 187 on average there (235
 * misses in 13,210 samples), 250 with unique names (a copy and a new index each). On the first
 * miss after spare indexes ran short a pass over the cache begins: each miss drops up to 16 more
 * entries (about 50 instructions each) until every way was passed once, so that the entries of
 * deleted tasks give their indexes back. A create with no name (`name` ""; Zephyr's
 * k_thread_create, named by k_thread_name_set right after) parks the block's entry instead of
 * dropping it (the masked move of a drop, without the index's return), and the rename takes it back
 * when its name is the entry's (the name compared, then the masked move). The worst cases above
 * were counted before the park: a block with no entry now also compares both ways with its parked
 * key. Zephyr's module (CMPROF_TAG_NAME_OFFSET: the key holds the k_thread's name's first word,
 * which the kernel empties at a create) has no create hook and no park; Zephyr 4.3 on Cortex-M3,
 * bench/zephyr_churn (100 workers re-created 1,000 times a second under 100 names), measured per
 * creation: 13 instructions, the rename's wrapper with the hook inline (81 before with two hooks;
 * 25 with names of 9 characters, compared; 25 with unique names, the block's entries dropped);
 * the longest path through the module's build (arm-none-eabi-gcc 12, every branch taken either
 * way: a bound, bench/zephyr_churn/worst_path.py): a rename 175 with its wrapper (a 24-character
 * name compared to its last word, then the block's entries of earlier names dropped from both
 * ways, their indexes returned), at most 46 of them masked (zephyr12 branch: 13.4, 25.3 and 25.3
 * a creation; 189 before); Zephyr 4.3's k_thread_abort reaches no trace point; no
 * hook at a switch: the module's tag is the kernel's current-thread pointer (docs/performance.md). */
void cmprof_stream_task_new(const void *tag, const char *name, const char *idle_name);
void cmprof_stream_section_name(cmprof_putc_fn putc, uint32_t index, const char *name);

/* Send up to max_lines complete sample lines (16 samples each); returns the samples sent. Also
 * reports a changed loss count. Call it from the main loop, an idle hook or a UART TX interrupt:
 * with less than a line waiting it returns at once, in a few instructions. */
#ifndef CMPROF_STREAM_LINE
#define CMPROF_STREAM_LINE 16u
#endif
uint32_t cmprof_stream_drain(cmprof_putc_fn putc, uint32_t max_lines);
uint32_t cmprof_stream_drain_lines(cmprof_putc_fn putc, uint32_t max_lines); /* the same without the quick exit */
/* The drains' quick exit (cmprof_stream_drain, cmprof_rtt_drain): no line can be full while the
 * sample count is in the LINE counts up to cmprof_stream_quiet_to, which the drain sets after each
 * look at the ring (a sample adds at most one to it). Two loads and a compare, no call: the drains
 * are polled far more often than a line fills, and the polls run in the very program profiled. */
extern uint32_t cmprof_stream_quiet_to;
static inline int cmprof_stream_quiet(void)
{
    return cmprof_stream_quiet_to - cmprof_samples() < CMPROF_STREAM_LINE;
}
/* Send what is left in the ring, even a short line. */
void cmprof_stream_flush(cmprof_putc_fn putc);

/* A full ring (a drain that cannot run: starved by busier code) never biases the profile. The
 * samples it cannot take are never a random subset, as the ring fills exactly while something
 * else holds the CPU; so instead of dropping them the tick keeps a uniform subsample of
 * CMPROF_RESERVOIR_N of every sample taken since the ring filled (reservoir sampling: RAM 8 bytes
 * each, tagged; default 32, a quarter of a ring under 256), and puts them in the ring as one group
 * once it has room, where they were taken. They go out in '&' lines that say how many samples the
 * group stands for (docs/stream.md): the host weighs them so, and every share stays unbiased, its
 * interval widened by the weights. Costs the tick one load a sample; the overflow path about 40
 * instructions. Build with -DCMPROF_RESERVOIR_N=0 for the old behaviour: the new sample dropped and
 * counted (@lost; the host then bounds every share by the loss). In the ring a group is a mark
 * (pc CMPROF_RESERVOIR_MARK + the samples kept), then the count taken, then the samples: what
 * cmprof_stream_take/peek show a user with a transport of their own, at cmprof_stream_mark(). */
#define CMPROF_RESERVOIR_MARK 0xFFFFF000u
/* For the drain: whether a group's mark is in the ring (*at: its position), and that it went out. */
uint32_t cmprof_stream_mark(uint32_t *at);
void cmprof_stream_mark_sent(void);
/* Samples still in the reservoir (not yet in the ring); once the sampler stopped, it moves them
 * into the ring first if they fit. For the flush. */
uint32_t cmprof_stream_reservoir_close(void);

/* Send every section that ran: count, current, min, max, sum (and its events' statistics), as
 * "@sect" and "@sectev" lines. In cmprof_section.c (build it with CMPROF_STREAM=1 too). */
void cmprof_stream_sections(cmprof_putc_fn putc);
/* Send n characters of `line` (no newline) as a stream line, its check added: through the
 * announce's write, or putc. `line` has 4 spare bytes after the n. What cmprof_stream_sections
 * sends its lines through. */
void cmprof_stream_line(cmprof_putc_fn putc, char *line, uint32_t n);

/* Histogram streaming (CMPROF_HIST=1 with CMPROF_STREAM=1): buckets count as usual and the drain
 * sends what changed since the last pass, so a slow link carries any sample rate. Build
 * cmprof_sampler.c and cmprof_stream.c with the same options. Bucket index CMPROF_HIST_BINS
 * carries the out-of-range count. */
uint32_t cmprof_stream_hist_take(uint32_t *index, uint32_t *delta, uint32_t max, int *pass_done);
void cmprof_stream_hist_layout(uint32_t *base, uint32_t *shift, uint32_t *bins);

/* Ring access for the drain (and for users with their own transport). take copies samples out
 * and frees their slots; peek shows them in place (from `skip` past the read position, up to the
 * ring's end; tags NULL without CMPROF_TAG) and release frees n of them. */
uint32_t cmprof_stream_take(uint32_t *pcs, uint32_t *tags, uint32_t max);
uint32_t cmprof_stream_peek(uint32_t skip, const uint32_t **pcs, const uint32_t **tags, uint32_t max);
void cmprof_stream_release(uint32_t n);
uint32_t cmprof_stream_pending(void);
uint32_t cmprof_stream_stored(void); /* samples ever put into the ring (its write position) */
uint32_t cmprof_stream_sent(void);   /* samples ever taken out of it (its read position) */
uint32_t cmprof_stream_lost(void);

/* ---- section timers ----------------------------------------------------------------------- */

#ifndef CMPROF_SECTIONS
#define CMPROF_SECTIONS 8u
#endif

/* Cortex-A and -R: PMU event counters counted per section besides the cycles (instructions, for
 * IPC; exceptions taken; cache refills), at most this many (cmprof_sections_events()). */
#ifndef CMPROF_SECTION_EVENTS
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE != 'M'
#define CMPROF_SECTION_EVENTS 2u
#else
#define CMPROF_SECTION_EVENTS 0u
#endif
#endif

/* A clock for section timers: any free-running up-counter that wraps at 2^32. */
typedef uint32_t (*cmprof_clock_fn)(void);

/* One statistic of a section: its clock, or one of its event counts. */
struct cmprof_stat {
    uint32_t start;   /* value at the last cmprof_section_start() */
    uint32_t current; /* the last completed run */
    uint32_t min;     /* UINT32_MAX until the first run completes */
    uint32_t max;
    uint64_t sum; /* all completed runs, for the mean */
};

struct cmprof_section {
    uint32_t start;   /* clock value at the last cmprof_section_start() */
    uint32_t current; /* duration of the last completed run (UINT32_MAX: past the clock's range) */
    uint32_t min;     /* UINT32_MAX until the first run completes */
    uint32_t max;
    uint32_t count;   /* completed runs */
    uint64_t sum;     /* total of all completed runs, for the mean: exact past the clock's range too */
    uint32_t long_runs; /* completed runs longer than the clock's range (2^32 ticks), current/max saturated */
    uint32_t wraps;     /* the running run's wraps of the clock, as cmprof_sections_poll() saw them */
    uint8_t running;    /* between start and stop */
    uint8_t upper_half; /* the last poll saw the running run at 2^31 ticks or more (mod 2^32) */
#if CMPROF_SECTION_EVENTS
    struct cmprof_stat events[CMPROF_SECTION_EVENTS]; /* as cmprof_sections_events() chose */
#endif
};

/* Error codes of cmprof_sections_init(). */
enum cmprof_clock_status {
    CMPROF_CLOCK_OK = 0,
    CMPROF_CLOCK_NO_DWT = -1,     /* DWT absent (ARMv6-M) or has no cycle counter */
    CMPROF_CLOCK_NOT_RUNNING = -2 /* DWT_CYCCNT enabled but does not advance (e.g. QEMU) */
};

/* Choose the clock and clear every section. clock == NULL selects the DWT cycle counter: it is
 * enabled (DEMCR.TRCENA, CYCCNTENA) and checked to advance. On error the sections keep working
 * with a clock that reads 0, so a missing DWT never faults; pass your own clock instead. Built
 * for Cortex-A or Cortex-R, NULL selects the PMU's last event counter, set to count CPU_CYCLES
 * (cmprof_pmu.h); PMCCNTR stays free for the sampler's PMU port. */
int cmprof_sections_init(cmprof_clock_fn clock);

/* Cortex-A/R: also count these PMU events per section (up to CMPROF_SECTION_EVENTS, and one fewer
 * than the PMU's counters: the last counts the cycles), on event counters 0, 1, ... e.g.
 * {CMPROF_PMU_INST_RETIRED} gives instructions per run and so IPC. Call after
 * cmprof_sections_init(NULL); clears every section. Returns how many events are counted. */
unsigned cmprof_sections_events(const uint32_t *events, unsigned n);

/* Begin / end one run of section i (i < CMPROF_SECTIONS; larger indexes are ignored). */
void cmprof_section_start(uint32_t i);
void cmprof_section_stop(uint32_t i);

/* A run longer than the clock's range (2^32 ticks: 25.6 s of DWT_CYCCNT at 168 MHz, 4.3 s of a
 * 1 GHz PMU counter) is measured exactly when this is called at least once every 2^31 ticks while
 * it runs (from a timer, the drain, any task): it counts each wrap of the running sections' clock.
 * Such a run is counted in long_runs, its current and max read UINT32_MAX and its exact length goes
 * into sum; the host shows it as past the counter's range. Without polls a run past the range reads
 * its length modulo 2^32, undetected. cmprof_stream_sections() and cmprof_sections_dump() poll.
 * At most 8 + 6 * CMPROF_SECTIONS instructions or so; safe against a start or stop it interrupts,
 * except within a few instructions of a wrap (one run in about 10^8 may then be off by 2^32). */
void cmprof_sections_poll(void);

/* Clear section i's statistics; CMPROF_ALL_SECTIONS clears them all. */
#define CMPROF_ALL_SECTIONS 0xFFFFFFFFu
void cmprof_section_reset(uint32_t i);

/* Read section i's statistics (NULL for an invalid index). */
const struct cmprof_section *cmprof_section_get(uint32_t i);
/* How many events the sections count, and event number k of them (0 beyond). */
unsigned cmprof_section_events(void);
uint32_t cmprof_section_event(unsigned k);

/* Write one line per section that ran at least once, and one per event it counts:
 *   sect I n=COUNT cur=C min=A max=B sum=S [long=L]   (long=: runs past the clock's range, if any)
 *   sectev I K ev=EVENT cur=C min=A max=B sum=S */
void cmprof_sections_dump(cmprof_putc_fn putc);

/* ---- DWT/ITM hardware PC sampling (ARMv7-M; untested on silicon) ---------------------------- */

#define CMPROF_PCS_TAP_64 0u   /* POSTCNT steps every 64 cycles (CYCCNT bit 6) */
#define CMPROF_PCS_TAP_1024 1u /* POSTCNT steps every 1024 cycles (CYCCNT bit 10) */

/* DWT_CTRL value that enables periodic PC sampling with the given tap and POSTCNT reload (0..15),
 * keeping every other field of `ctrl`. Pure arithmetic: host-tested. */
uint32_t cmprof_dwt_pcsample_ctrl(uint32_t ctrl, uint32_t tap, uint32_t reload);

/* Cycles between two hardware PC samples for a tap and reload. */
uint32_t cmprof_dwt_pcsample_period(uint32_t tap, uint32_t reload);

/* TPIU ACPR prescaler for an SWO bit rate (NRZ/UART encoding). */
uint32_t cmprof_swo_prescaler(uint32_t cpu_hz, uint32_t swo_hz);

/* Route ITM to the SWO pin as NRZ at swo_hz, enable stimulus port 0 and DWT packets.
 * Pin muxing (e.g. STM32 DBGMCU_CR.TRACE_IOEN) is the caller's job. */
void cmprof_swo_init(uint32_t cpu_hz, uint32_t swo_hz);

/* Start DWT PC sampling (ITM packets 0x17 + PC, 0x15 0x00 while sleeping). Returns 0, or -1 when
 * DWT has no cycle counter (POSTCNT is clocked by CYCCNT). */
int cmprof_pcsample_start(uint32_t tap, uint32_t reload);
void cmprof_pcsample_stop(void);

/* Write a 32-bit value to ITM stimulus port `port` (0..31), waiting while the FIFO is full.
 * Does nothing if ITM or the port is disabled. */
void cmprof_itm_write(uint32_t port, uint32_t value);

#ifdef __cplusplus
}
#endif

#endif
