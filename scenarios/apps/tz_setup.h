/* The TrustZone-M scenarios' Secure side on QEMU's mps2-an505 (tz_secure.c, and stacks.c with TZ_S):
 * the Non-Secure image's memory made Non-Secure, behind the SSRAM memory protection controllers and
 * in the SAU, and the Non-Secure VTOR and MSP set from its vector table. Included by one file of an
 * image (its functions are static). */
#ifndef TZ_SETUP_H
#define TZ_SETUP_H

#include "board.h"

#include <stdint.h>

#ifndef NS_CODE /* where the Non-Secure image's vector table lies (an505_ns.ld) */
#define NS_CODE 0x00200000u
#endif
#define NS_CODE_END 0x00400000u
#define NS_RAM 0x28200000u /* SSRAM3: the Non-Secure image's data and stack */
#define NS_RAM_END 0x28400000u

#define SAU_CTRL 0xE000EDD0u
#define SAU_RNR 0xE000EDD8u
#define SAU_RBAR 0xE000EDDCu
#define SAU_RLAR 0xE000EDE0u
#define SAU_RLAR_ENABLE 1u
#define SAU_RLAR_NSC 2u
#define SCB_NS_VTOR 0xE002ED08u /* the Non-Secure VTOR, through the Non-Secure alias of the SCB */
#define SECCTL_NSCCFG 0x50080014u /* bit 0: the code region's Secure alias may be Non-Secure Callable */
#define SECCTL_APBNSPPC0 0x50080070u    /* IoTKit APB: bit 0 TIMER0, bit 1 TIMER1 */
#define SECCTL_APBNSPPCEXP1 0x50080084u /* expansion APB 1: bit 5 UART0 */
#define MPC_SSRAM1 0x58007000u
#define MPC_SSRAM3 0x58009000u
#define MPC_BLK_MAX 0x10u
#define MPC_BLK_CFG 0x14u
#define MPC_BLK_IDX 0x18u
#define MPC_BLK_LUT 0x1Cu

static void sau_region(uint32_t n, uint32_t base, uint32_t end, uint32_t flags)
{
    BOARD_REG(SAU_RNR) = n;
    BOARD_REG(SAU_RBAR) = base & ~31u;
    BOARD_REG(SAU_RLAR) = ((end - 1u) & ~31u) | flags | SAU_RLAR_ENABLE;
}

/* The blocks of [lo, hi) bytes into the memory behind `mpc` made Non-Secure (bit set in its table). */
static void mpc_non_secure(uint32_t mpc, uint32_t lo, uint32_t hi)
{
    uint32_t shift = BOARD_REG(mpc + MPC_BLK_CFG) + 5u, last = BOARD_REG(mpc + MPC_BLK_MAX); /* the last word's index */
    for (uint32_t w = 0; w <= last; w++) {
        uint32_t bits = 0;
        for (uint32_t b = 0; b < 32u; b++) {
            uint32_t at = ((w * 32u + b) << shift);
            if (at >= lo && at < hi)
                bits |= 1u << b;
        }
        BOARD_REG(mpc + MPC_BLK_IDX) = w;
        BOARD_REG(mpc + MPC_BLK_LUT) = bits;
    }
}

/* The veneers' region (an505_s.ld), Non-Secure Callable when `veneers`; the peripherals at their
 * Non-Secure addresses Non-Secure in the SAU (their protection controllers are the caller's). */
static void tz_open_non_secure(int veneers)
{
    BOARD_REG(SECCTL_NSCCFG) = veneers ? 1u : 0u;
    mpc_non_secure(MPC_SSRAM1, NS_CODE, NS_CODE_END);
    mpc_non_secure(MPC_SSRAM3, 0u, NS_RAM_END - NS_RAM);
    sau_region(0, NS_CODE, NS_CODE_END, 0u);
    sau_region(1, NS_RAM, NS_RAM_END, 0u);
    sau_region(2, 0x40000000u, 0x50000000u, 0u);
    if (veneers) {
        extern uint32_t __nsc_start[], __nsc_end[];
        sau_region(3, (uint32_t)(uintptr_t)__nsc_start, (uint32_t)(uintptr_t)__nsc_end, SAU_RLAR_NSC);
    }
    BOARD_REG(SAU_CTRL) = 1u;
    __asm volatile("dsb\n isb" ::: "memory");
    const uint32_t *ns_vectors = (const uint32_t *)(uintptr_t)NS_CODE;
    BOARD_REG(SCB_NS_VTOR) = NS_CODE;
    __asm volatile("msr msp_ns, %0" : : "r"(ns_vectors[0]));
}

/* The IoTKit's TIMER1 made Non-Secure (its APB protection bit, its interrupt's target) and started,
 * interrupting about every `reload` ticks of the 20 MHz system clock (its handler draws each
 * period) at priority 0, the Secure sampler's (AIRCR.PRIS clear, as reset leaves it: Non-Secure
 * priorities are not demoted). Its handler is the Non-Secure image's (tz_ns_irq.c), reached
 * through the Non-Secure VTOR tz_open_non_secure() set. (inline: unused by the files that want
 * only the rest) */
#define TIMER1_NS 0x40001000u /* CTRL, VALUE, RELOAD; its Non-Secure address, Non-Secure in the SAU */
#define TIMER1_IRQ 4u
#define NVIC_ISER0 0xE000E100u
#define NVIC_ITNS0 0xE000E380u
#define NVIC_IPR0 0xE000E400u
#define SCB_AIRCR 0xE000ED0Cu
#define AIRCR_PRIS (1u << 14)

static inline void tz_ns_timer_start(uint32_t reload)
{
    BOARD_REG(SECCTL_APBNSPPC0) |= 1u << 1;
    BOARD_REG(NVIC_ITNS0) |= 1u << TIMER1_IRQ;
    BOARD_REG(SCB_AIRCR) = (BOARD_REG(SCB_AIRCR) & 0xFFFFu & ~AIRCR_PRIS) | 0x05FA0000u; /* (VECTKEY) */
    ((volatile uint8_t *)(uintptr_t)NVIC_IPR0)[TIMER1_IRQ] = 0u;
    __asm volatile("dsb\n isb" ::: "memory");
    BOARD_REG(TIMER1_NS + 0x8u) = reload;
    BOARD_REG(TIMER1_NS + 0x4u) = reload;
    BOARD_REG(TIMER1_NS + 0x0u) = 1u | 8u; /* enable, interrupt enable */
    BOARD_REG(NVIC_ISER0) = 1u << TIMER1_IRQ;
}

#endif
