/* nRF51 (BBC micro:bit) in QEMU: UART0 for text, TIMER0 as the clock. */
#include "board.h"

#define UART_STARTTX 0x40002008u
#define UART_TXDRDY 0x4000211Cu
#define UART_ENABLE 0x40002500u
#define UART_TXD 0x4000251Cu
#define TIMER0_START 0x40008000u
#define TIMER0_CAPTURE0 0x40008040u
#define TIMER0_MODE 0x40008504u
#define TIMER0_BITMODE 0x40008508u
#define TIMER0_PRESCALER 0x40008510u
#define TIMER0_CC0 0x40008540u

void board_init(void)
{
    BOARD_REG(UART_ENABLE) = 4u;
    BOARD_REG(UART_STARTTX) = 1u;
    BOARD_REG(TIMER0_MODE) = 0u;
    BOARD_REG(TIMER0_BITMODE) = 3u; /* 32 bit */
    BOARD_REG(TIMER0_PRESCALER) = 0u;
    BOARD_REG(TIMER0_START) = 1u;
}

void board_putc(char c)
{
    BOARD_REG(UART_TXDRDY) = 0u;
    BOARD_REG(UART_TXD) = (uint8_t)c;
    for (uint32_t spin = 0; spin < 1000u && BOARD_REG(UART_TXDRDY) == 0u; spin++) {
    }
}

uint32_t board_clock(void)
{
    BOARD_REG(TIMER0_CAPTURE0) = 1u;
    return BOARD_REG(TIMER0_CC0);
}
