/* Cortex-M core and STM32 timer registers used by the cmprof firmware library.
 * Addresses and bit fields come from the ARMv7-M / ARMv6-M Architecture Reference Manuals
 * (System Control Space, DWT, ITM, TPIU) and RM0090/RM0008 for TIM3. Field positions are
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

#endif
