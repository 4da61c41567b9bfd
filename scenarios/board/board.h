/* Minimal board support for the QEMU reference scenarios: UART output, a free-running clock and
 * a clean exit through semihosting. STM32F2/F4 (netduino2, netduinoplus2) and nRF51 (microbit).
 * BOARD_SEMIHOST_OUT=1 (scen.py's STM32 runs): the text a line at a time through semihosting instead. */
#ifndef BOARD_H
#define BOARD_H

#include <stdint.h>

void board_init(void);
void board_putc(char c);
void board_puts(const char *s);
void board_putdec(uint32_t v);
void board_puthex(uint32_t v);
/* Free-running 32-bit counter. On STM32 in QEMU with -icount shift=0 it counts instructions
 * (TIM2 at 1 GHz virtual time); on nRF51 it is TIMER0 at 16 MHz. */
uint32_t board_clock(void);
__attribute__((noreturn)) void board_exit(int failed);
/* Empty markers: the truth plugin counts instructions between truth_begin() and truth_end(). */
void truth_begin(void);
void truth_end(void);

#define BOARD_REG(a) (*(volatile uint32_t *)(uintptr_t)(a))
#define BOARD_NVIC_ISPR0 0xE000E200u
#define BOARD_NVIC_ISER0 0xE000E100u
#define BOARD_NVIC_IPR_BYTE(irq) (*(volatile uint8_t *)(uintptr_t)(0xE000E400u + (irq)))
#define BOARD_SCB_ICSR 0xE000ED04u
#define BOARD_SCB_SHPR3 0xE000ED20u
#define BOARD_EXTI0_IRQ 6u

#endif
