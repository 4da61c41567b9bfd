/* Vector table and reset for the scenario firmware. Reset copies .data and zeroes .bss: without
 * the copy, initialised statics stay in flash, where QEMU silently drops writes (the jitter
 * generator would never change). */
#include <stdint.h>

extern uint32_t _sidata[], _sdata[], _edata[], _sbss[], _ebss[], _estack[];
int main(void);

void Reset_Handler(void)
{
    uint32_t *src = _sidata;
    for (uint32_t *dst = _sdata; dst < _edata;)
        *dst++ = *src++;
    for (uint32_t *dst = _sbss; dst < _ebss;)
        *dst++ = 0u;
    main();
    for (;;) {
    }
}

void Default_Handler(void)
{
    for (;;) {
    }
}

#define WEAK_HANDLER(name) void name(void) __attribute__((weak, alias("Default_Handler")))
WEAK_HANDLER(NMI_Handler);
WEAK_HANDLER(HardFault_Handler);
WEAK_HANDLER(SVC_Handler);
WEAK_HANDLER(PendSV_Handler);
WEAK_HANDLER(SysTick_Handler);
WEAK_HANDLER(EXTI0_IRQHandler);
WEAK_HANDLER(TIM3_IRQHandler);
WEAK_HANDLER(TIM4_IRQHandler);
WEAK_HANDLER(GPIO0_IRQHandler);  /* MPS2: GPIO 0, IRQ 6 */
WEAK_HANDLER(TIMER1_Handler);    /* MPS2: CMSDK TIMER1, IRQ 9 */
WEAK_HANDLER(DUALTIMER_Handler); /* MPS2: CMSDK dual timer, IRQ 10 */
WEAK_HANDLER(TIMER1_IRQHandler); /* nRF51: TIMER1, IRQ 9 */

typedef void (*vector_fn)(void);

__attribute__((section(".isr_vector"), used)) const vector_fn vector_table[16 + 64] = {
    [0] = (vector_fn)(uintptr_t)_estack,
    [1] = Reset_Handler,
    [2] = NMI_Handler,
    [3] = HardFault_Handler,
    [4] = HardFault_Handler,
    [5] = HardFault_Handler,
    [6] = HardFault_Handler,
    [11] = SVC_Handler,
    [14] = PendSV_Handler,
    [15] = SysTick_Handler,
#if defined(BOARD_mps2)
    [16 + 6] = GPIO0_IRQHandler,
    [16 + 9] = TIMER1_Handler,
    [16 + 10] = DUALTIMER_Handler,
#elif defined(BOARD_nrf51)
    [16 + 9] = TIMER1_IRQHandler,
#else
    [16 + 6] = EXTI0_IRQHandler,
    [16 + 29] = TIM3_IRQHandler,
    [16 + 30] = TIM4_IRQHandler,
#endif
};
