/* The Non-Secure image of m33_s_calls_ns: a function the Secure firmware calls (through a
 * cmse_nonsecure_call pointer, stacks.c with TZ_S), read from this image's vector table, whose reset
 * entry it is: nothing else runs here. The profiled firmware samples in Secure state; its ticks that
 * come while this runs interrupt Non-Secure code, whose frame is on the Non-Secure stack. */
#include "work.h"

#include <stdint.h>

extern uint32_t _estack[];

NOP_LOOP(__attribute__((noinline)), ns_spin)

void ns_work(uint32_t n)
{
    ns_spin(n);
}

void Reset_Handler(uint32_t n) __attribute__((alias("ns_work"))); /* (sections.ld's entry) */

__attribute__((section(".isr_vector"), used)) const uintptr_t ns_vectors[2] = {(uintptr_t)_estack,
                                                                               (uintptr_t)ns_work};
