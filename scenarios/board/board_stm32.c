/* STM32F2/F4 in QEMU: USART1 for text, TIM2 as the clock. */
#include "board.h"

#define RCC_APB1ENR 0x40023840u
#define RCC_APB2ENR 0x40023844u
#define USART1_SR 0x40011000u
#define USART1_DR 0x40011004u
#define USART1_CR1 0x4001100Cu
#define TIM2_CR1 0x40000000u
#define TIM2_EGR 0x40000014u
#define TIM2_CNT 0x40000024u
#define TIM2_PSC 0x40000028u
#define TIM2_ARR 0x4000002Cu

void board_init(void)
{
    BOARD_REG(RCC_APB2ENR) |= 1u << 4;              /* USART1EN */
    BOARD_REG(USART1_CR1) = (1u << 13) | (1u << 3); /* UE | TE */
    BOARD_REG(RCC_APB1ENR) |= 1u << 0;              /* TIM2EN */
    BOARD_REG(TIM2_PSC) = 0u;
    BOARD_REG(TIM2_ARR) = 0xFFFFFFFFu;
    BOARD_REG(TIM2_EGR) = 1u;
    BOARD_REG(TIM2_CR1) = 1u;
}

#if !BOARD_SEMIHOST_OUT /* else board_common.c's, through semihosting */
void board_putc(char c)
{
    while ((BOARD_REG(USART1_SR) & (1u << 7)) == 0u) { /* TXE */
    }
    BOARD_REG(USART1_DR) = (uint8_t)c;
}
#endif

uint32_t board_clock(void)
{
    return BOARD_REG(TIM2_CNT);
}
