/* Cortex-M core and STM32 timer registers used by the cmprof firmware library.
 * Addresses and bit fields come from the ARMv7-M / ARMv6-M Architecture Reference Manuals
 * (System Control Space, DWT, ITM, TPIU), RM0090/RM0008 for STM32 timers, ARM DDI 0479 for the
 * CMSDK timers and the nRF51/nRF52 reference manuals for their TIMER. Field positions are
 * pure constants so the host tests can include this header and check the arithmetic. */
#ifndef CMPROF_REGS_H
#define CMPROF_REGS_H

#include <stdint.h>

/* Host tests define CMPROF_REG to point into a fake register file. */
#ifndef CMPROF_REG
#define CMPROF_REG(addr) (*(volatile uint32_t *)(uintptr_t)(addr))
#endif

/* SysTick (ARMv6-M and ARMv7-M) */
#define CMPROF_SYST_CSR 0xE000E010u
#define CMPROF_SYST_RVR 0xE000E014u
#define CMPROF_SYST_CVR 0xE000E018u
#define CMPROF_SYST_CSR_ENABLE (1u << 0)
#define CMPROF_SYST_CSR_TICKINT (1u << 1)
#define CMPROF_SYST_CSR_CLKSOURCE (1u << 2) /* 1: core clock */
#define CMPROF_SYST_RVR_MAX 0x00FFFFFFu

/* System handler priority register 3: SysTick priority in bits 31:24 (word access works on v6-M) */
#define CMPROF_SCB_SHPR3 0xE000ED20u
#define CMPROF_SHPR3_SYSTICK_SHIFT 24u

/* NVIC */
#define CMPROF_NVIC_ISER0 0xE000E100u
#define CMPROF_NVIC_ISER(irq) (0xE000E100u + 4u * ((uint32_t)(irq) >> 5)) /* set-enable, 32 lines a word */
#define CMPROF_NVIC_ICER(irq) (0xE000E180u + 4u * ((uint32_t)(irq) >> 5)) /* clear-enable */
#define CMPROF_NVIC_IPR_WORD(irq) (0xE000E400u + ((uint32_t)(irq) & ~3u)) /* 4 priorities a word */
#define CMPROF_NVIC_IPR_SHIFT(irq) (8u * ((uint32_t)(irq) & 3u))

/* Debug: DEMCR.TRCENA gates DWT and ITM */
#define CMPROF_DEMCR 0xE000EDFCu
#define CMPROF_DEMCR_TRCENA (1u << 24)

/* DWT */
#define CMPROF_DWT_CTRL 0xE0001000u
#define CMPROF_DWT_CYCCNT 0xE0001004u
#define CMPROF_DWT_PCSR 0xE000101Cu
#define CMPROF_DWT_LAR 0xE0001FB0u /* Cortex-M7 only; harmless write elsewhere */
#define CMPROF_CORESIGHT_UNLOCK 0xC5ACCE55u

#define CMPROF_DWT_CTRL_CYCCNTENA_POS 0u
#define CMPROF_DWT_CTRL_POSTPRESET_POS 1u
#define CMPROF_DWT_CTRL_POSTINIT_POS 5u
#define CMPROF_DWT_CTRL_CYCTAP_POS 9u
#define CMPROF_DWT_CTRL_SYNCTAP_POS 10u
#define CMPROF_DWT_CTRL_PCSAMPLENA_POS 12u
#define CMPROF_DWT_CTRL_EXCTRCENA_POS 16u
#define CMPROF_DWT_CTRL_CYCEVTENA_POS 22u
#define CMPROF_DWT_CTRL_NOCYCCNT_POS 25u

#define CMPROF_DWT_CTRL_CYCCNTENA (1u << CMPROF_DWT_CTRL_CYCCNTENA_POS)
#define CMPROF_DWT_CTRL_POSTPRESET (0xFu << CMPROF_DWT_CTRL_POSTPRESET_POS)
#define CMPROF_DWT_CTRL_POSTINIT (0xFu << CMPROF_DWT_CTRL_POSTINIT_POS)
#define CMPROF_DWT_CTRL_CYCTAP (1u << CMPROF_DWT_CTRL_CYCTAP_POS)
#define CMPROF_DWT_CTRL_SYNCTAP (3u << CMPROF_DWT_CTRL_SYNCTAP_POS)
#define CMPROF_DWT_CTRL_PCSAMPLENA (1u << CMPROF_DWT_CTRL_PCSAMPLENA_POS)
#define CMPROF_DWT_CTRL_EXCTRCENA (1u << CMPROF_DWT_CTRL_EXCTRCENA_POS)
#define CMPROF_DWT_CTRL_CYCEVTENA (1u << CMPROF_DWT_CTRL_CYCEVTENA_POS)
#define CMPROF_DWT_CTRL_NOCYCCNT (1u << CMPROF_DWT_CTRL_NOCYCCNT_POS)

/* ITM */
#define CMPROF_ITM_STIM(port) (0xE0000000u + 4u * (uint32_t)(port))
#define CMPROF_ITM_TER 0xE0000E00u
#define CMPROF_ITM_TCR 0xE0000E80u
#define CMPROF_ITM_LAR 0xE0000FB0u
#define CMPROF_ITM_TCR_ITMENA (1u << 0)
#define CMPROF_ITM_TCR_TSENA (1u << 1)
#define CMPROF_ITM_TCR_SYNCENA (1u << 2)
#define CMPROF_ITM_TCR_DWTENA (1u << 3)
#define CMPROF_ITM_TCR_TRACEBUSID_POS 16u

/* TPIU (SWO output) */
#define CMPROF_TPIU_ACPR 0xE0040010u
#define CMPROF_TPIU_SPPR 0xE00400F0u
#define CMPROF_TPIU_FFCR 0xE0040304u
#define CMPROF_TPIU_SPPR_NRZ 2u
#define CMPROF_TPIU_FFCR_TRIGIN (1u << 8) /* formatter off, continuous mode */

/* STM32F1/F4 TIM3 and its RCC enable bit (same on both families) */
#define CMPROF_TIM3_BASE 0x40000400u
#define CMPROF_TIM_CR1(b) ((b) + 0x00u)
#define CMPROF_TIM_DIER(b) ((b) + 0x0Cu)
#define CMPROF_TIM_SR(b) ((b) + 0x10u)
#define CMPROF_TIM_EGR(b) ((b) + 0x14u)
#define CMPROF_TIM_CNT(b) ((b) + 0x24u)
#define CMPROF_TIM_PSC(b) ((b) + 0x28u)
#define CMPROF_TIM_ARR(b) ((b) + 0x2Cu)
#define CMPROF_TIM3_IRQ 29u
#if defined(CMPROF_STM32F1)
#define CMPROF_RCC_APB1ENR 0x4002101Cu
#else
#define CMPROF_RCC_APB1ENR 0x40023840u
#endif
#define CMPROF_RCC_APB1ENR_TIM3EN (1u << 1)

/* STM32F1/F4 general-purpose timers TIM2..TIM5: APB1, 0x400 apart, enable bits 0..3 in APB1ENR */
#define CMPROF_STM32_TIM_BASE(n) (0x40000000u + 0x400u * ((uint32_t)(n) - 2u))
#define CMPROF_STM32_TIM_IRQ(n) ((n) == 5 ? 50u : 26u + (uint32_t)(n)) /* TIM2 28, TIM3 29, TIM4 30, TIM5 50 */

/* ARM CMSDK APB timer (DDI 0479), as TIMER0/TIMER1 of the MPS2/MPS3 boards */
#define CMPROF_CMSDK_CTRL(b) ((b) + 0x00u)
#define CMPROF_CMSDK_VALUE(b) ((b) + 0x04u)
#define CMPROF_CMSDK_RELOAD(b) ((b) + 0x08u)
#define CMPROF_CMSDK_INTCLEAR(b) ((b) + 0x0Cu)
#define CMPROF_CMSDK_CTRL_EN (1u << 0)
#define CMPROF_CMSDK_CTRL_IRQEN (1u << 3)

/* ARM CMSDK dual timer (SP804 layout), timer 1 */
#define CMPROF_DUAL_LOAD(b) ((b) + 0x00u)
#define CMPROF_DUAL_CONTROL(b) ((b) + 0x08u)
#define CMPROF_DUAL_INTCLR(b) ((b) + 0x0Cu)
#define CMPROF_DUAL_BGLOAD(b) ((b) + 0x18u)
#define CMPROF_DUAL_CTRL_32BIT (1u << 1)
#define CMPROF_DUAL_CTRL_INTEN (1u << 5)
#define CMPROF_DUAL_CTRL_PERIODIC (1u << 6)
#define CMPROF_DUAL_CTRL_EN (1u << 7)

/* RP2040 TIMER (datasheet 4.6): a 64-bit microsecond counter and four one-shot alarms that fire
 * when its low word equals ALARMn; IRQ n (TIMER_IRQ_n) for alarm n; INTR bits cleared by a 1. */
#define CMPROF_RP2040_TIMER_BASE 0x40054000u
#define CMPROF_RP2040_ALARM_REG(n) (CMPROF_RP2040_TIMER_BASE + 0x10u + 4u * (uint32_t)(n))
#define CMPROF_RP2040_ARMED (CMPROF_RP2040_TIMER_BASE + 0x20u)
#define CMPROF_RP2040_TIMERAWL (CMPROF_RP2040_TIMER_BASE + 0x28u)
#define CMPROF_RP2040_INTR (CMPROF_RP2040_TIMER_BASE + 0x34u)
#define CMPROF_RP2040_INTE (CMPROF_RP2040_TIMER_BASE + 0x38u)

/* nRF51/nRF52 TIMER0..TIMER4 (3 and 4 on nRF52 only) */
#define CMPROF_NRF_TIMER_BASE(n) ((n) < 3 ? 0x40008000u + 0x1000u * (uint32_t)(n) : 0x4001A000u + 0x1000u * ((uint32_t)(n) - 3u))
#define CMPROF_NRF_TIMER_IRQ(n) ((n) < 3 ? 8u + (uint32_t)(n) : 23u + (uint32_t)(n)) /* 8, 9, 10; 26, 27 */
#define CMPROF_NRF_TASKS_START(b) ((b) + 0x000u)
#define CMPROF_NRF_TASKS_STOP(b) ((b) + 0x004u)
#define CMPROF_NRF_TASKS_CLEAR(b) ((b) + 0x00Cu)
#define CMPROF_NRF_EVENTS_COMPARE0(b) ((b) + 0x140u)
#define CMPROF_NRF_SHORTS(b) ((b) + 0x200u)
#define CMPROF_NRF_INTENSET(b) ((b) + 0x304u)
#define CMPROF_NRF_INTENCLR(b) ((b) + 0x308u)
#define CMPROF_NRF_MODE(b) ((b) + 0x504u)
#define CMPROF_NRF_BITMODE(b) ((b) + 0x508u)
#define CMPROF_NRF_PRESCALER_REG(b) ((b) + 0x510u)
#define CMPROF_NRF_CC0(b) ((b) + 0x540u)
#define CMPROF_NRF_BITMODE_32 3u
#define CMPROF_NRF_SHORTS_COMPARE0_CLEAR (1u << 0)
#define CMPROF_NRF_INT_COMPARE0 (1u << 16)

#endif
