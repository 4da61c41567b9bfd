/* ARM MPS2 AN505 (Cortex-M33 with the Security Extension) in QEMU. The core boots in Secure state
 * and stays there: everything is reached through its Secure aliases (address bit 28 set). CMSDK UART0
 * for text, CMSDK TIMER0 as the clock; SysTick stays free for the sampler. */
#include "board.h"

#define UART0_DATA 0x50200000u
#define UART0_STATE 0x50200004u
#define UART0_CTRL 0x50200008u
#define UART0_BAUDDIV 0x50200010u
#define UART_STATE_TXFULL 1u
#define TIMER0_CTRL 0x50000000u
#define TIMER0_VALUE 0x50000004u
#define TIMER0_RELOAD 0x50000008u

void board_init(void)
{
    BOARD_REG(UART0_BAUDDIV) = 16u; /* the smallest divider the UART accepts */
    BOARD_REG(UART0_CTRL) = 1u;     /* TX enable */
    BOARD_REG(TIMER0_RELOAD) = 0xFFFFFFFFu;
    BOARD_REG(TIMER0_VALUE) = 0xFFFFFFFFu;
    BOARD_REG(TIMER0_CTRL) = 1u; /* enable, no interrupt */
}

void board_putc(char c)
{
    for (uint32_t spin = 0; spin < 100000u && (BOARD_REG(UART0_STATE) & UART_STATE_TXFULL); spin++) {
    }
    BOARD_REG(UART0_DATA) = (uint8_t)c;
}

/* TIMER0 counts down at the 20 MHz system clock: 50 instructions a tick with -icount shift=0. */
uint32_t board_clock(void)
{
    return ~BOARD_REG(TIMER0_VALUE);
}
