/* The Non-Secure image of m33_tailchain_native and m23_tailchain_native (and their _stacks and
 * _stacks_fp builds): nothing but a handler for the IoTKit's TIMER1, which the Secure firmware
 * (stacks.c with NS_IRQ) made Non-Secure and started. The handler interrupts Secure code at the
 * Secure sampler's priority, so a Secure tick that comes while it runs stays pending and QEMU
 * tail-chains it after the handler's return: the tick enters the sampler with EXC_RETURN.DCRS clear
 * and the callee context the hardware stacked for this handler below its frame. Never started: its
 * reset entry only spins. */
#include "work.h"

#include <stdint.h>

#ifndef NS_SPIN
#define NS_SPIN 150u /* turns of the handler's loop: about 4 instructions each */
#endif

#define TIMER1_VALUE 0x40001004u /* its Non-Secure addresses */
#define TIMER1_RELOAD 0x40001008u
#define TIMER1_INTCLEAR 0x4000100Cu
#define TIMER1_IRQ 4u /* the IoTKit's TIMER1 */

extern uint32_t _estack[];

/* (.bss, which nothing clears here: the image never starts; QEMU's RAM is zero) */
static uint32_t ns_seed;

NOP_LOOP(__attribute__((noinline)), ns_spin)

/* The next interrupt up to 32 ticks either side of the Secure side's reload, drawn afresh each
 * time, as the sampler's jitter does for its ticks: the points this handler interrupts, where each
 * tick tail-chained after it is sampled, must not fall in step with the app's round. */
void ns_timer_handler(void)
{
    *(volatile uint32_t *)TIMER1_INTCLEAR = 1u;
    ns_seed = ns_seed * 1664525u + 1013904223u;
    *(volatile uint32_t *)TIMER1_VALUE = *(volatile uint32_t *)TIMER1_RELOAD - 32u + (ns_seed >> 26);
    ns_spin(NS_SPIN);
}

void Reset_Handler(void) /* (sections.ld's entry) */
{
    for (;;) {
    }
}

__attribute__((section(".isr_vector"), used)) const uintptr_t ns_vectors[16 + TIMER1_IRQ + 1] = {
    [0] = (uintptr_t)_estack, [1] = (uintptr_t)Reset_Handler, [16 + TIMER1_IRQ] = (uintptr_t)ns_timer_handler};
