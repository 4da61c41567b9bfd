/* A stand-in for CMSIS's core header as Zephyr includes it (<cmsis_core.h>): the System Control
 * Block and NVIC registers zephyr/cmprof_counter.c reads, at their architectural addresses
 * (ARMv7-M Architecture Reference Manual, B3.2 and B3.4). */
#ifndef CMPROF_ZEPHYR_STANDIN_CMSIS_CORE_H
#define CMPROF_ZEPHYR_STANDIN_CMSIS_CORE_H

#include <stdint.h>

typedef int32_t IRQn_Type;
typedef struct {
    volatile uint32_t CPUID, ICSR, VTOR, AIRCR, SCR, CCR;
    volatile uint8_t SHP[12];
    volatile uint32_t SHCSR;
} SCB_Type;
typedef struct {
    volatile uint32_t ISER[16], r0[16], ICER[16], r1[16], ISPR[16], r2[16], ICPR[16], r3[16], IABR[16], r4[48];
    volatile uint8_t IP[496];
} NVIC_Type;
#define SCB ((SCB_Type *)0xE000ED00u)
#define NVIC ((NVIC_Type *)0xE000E100u)
#define SCB_ICSR_RETTOBASE_Msk (1u << 11)
#define SCB_SHCSR_MEMFAULTACT_Msk (1u << 0)
#define SCB_SHCSR_BUSFAULTACT_Msk (1u << 1)
#define SCB_SHCSR_USGFAULTACT_Msk (1u << 3)
#define SCB_SHCSR_SVCALLACT_Msk (1u << 7)
#define SCB_SHCSR_PENDSVACT_Msk (1u << 10)
#define SCB_SHCSR_SYSTICKACT_Msk (1u << 11)

static inline uint32_t __get_IPSR(void)
{
    uint32_t r;
    __asm volatile("mrs %0, ipsr" : "=r"(r));
    return r;
}
static inline uint32_t __get_PSP(void)
{
    uint32_t r;
    __asm volatile("mrs %0, psp" : "=r"(r));
    return r;
}
static inline uint32_t NVIC_GetPriority(IRQn_Type irq)
{
    return irq >= 0 ? NVIC->IP[irq] : SCB->SHP[(irq & 0xF) - 4];
}

#endif
