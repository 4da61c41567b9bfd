/* ARM MPS2 AN385 (Cortex-M3) in QEMU: CMSDK UART0 for text, CMSDK TIMER0 as the clock. TIMER1 and
 * the dual timer stay free for the sampler's CMSDK ports. Built with BOARD_an505: the MPS2 AN505
 * (Cortex-M33 with the Security Extension), whose core boots in Secure state and stays there, so
 * the same peripherals are reached through their Secure aliases (address bit 28 set); SysTick stays
 * free for the sampler. BOARD_an505_ns: the Non-Secure image of the TrustZone-M scenarios on the
 * AN505 (scenarios/apps/tz_secure.c made these two peripherals Non-Secure), at their Non-Secure
 * addresses. */
#include "board.h"

#if defined(BOARD_an505_ns)
#define UART0_BASE 0x40200000u
#define TIMER0_BASE 0x40000000u
#elif defined(BOARD_an505)
#define UART0_BASE 0x50200000u
#define TIMER0_BASE 0x50000000u
#else
#define UART0_BASE 0x40004000u
#define TIMER0_BASE 0x40000000u
#endif
#define UART0_DATA (UART0_BASE + 0x0u)
#define UART0_STATE (UART0_BASE + 0x4u)
#define UART0_CTRL (UART0_BASE + 0x8u)
#define UART0_BAUDDIV (UART0_BASE + 0x10u)
#define UART_STATE_TXFULL 1u
#define TIMER0_CTRL (TIMER0_BASE + 0x0u)
#define TIMER0_VALUE (TIMER0_BASE + 0x4u)
#define TIMER0_RELOAD (TIMER0_BASE + 0x8u)

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

/* TIMER0 counts down at the system clock (AN385 25 MHz, AN505 20 MHz): 40 (50) instructions a
 * tick with -icount shift=0. */
uint32_t board_clock(void)
{
    return ~BOARD_REG(TIMER0_VALUE);
}
