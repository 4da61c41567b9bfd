/* cmprof for Cortex-A and Cortex-R (ARMv7-A/R, and AArch32 on ARMv8): the Performance Monitors
 * Unit through CP15 (c9). A cycle counter (PMCCNTR) and N event counters (N = PMCR.N), each
 * enabled, reset and read here; the cycle counter can count every 64th cycle (PMCR.D) for long
 * measurements. Header only: every call is a few instructions, safe in interrupt handlers.
 *
 *   cmprof_pmu_start(false);                 // enable the unit, counters reset
 *   cmprof_pmu_select(0, CMPROF_PMU_INST_RETIRED);
 *   cmprof_pmu_enable(CMPROF_PMU_CYCLES | 1u);
 *   uint32_t c0 = cmprof_pmu_cycles(), i0 = cmprof_pmu_read(0);
 *   ... work ...
 *   cycles = cmprof_pmu_cycles() - c0; instructions = cmprof_pmu_read(0) - i0;
 *
 * Counting from user mode (PL0) needs cmprof_pmu_user_access(true) first, from a privileged mode. */
#ifndef CMPROF_PMU_H
#define CMPROF_PMU_H

#include <stdbool.h>
#include <stdint.h>

#if !defined(__ARM_ARCH) || __ARM_ARCH < 7 || !defined(__ARM_ARCH_PROFILE) || __ARM_ARCH_PROFILE == 'M'
#error "cmprof_pmu.h is for Cortex-A and Cortex-R (ARMv7-A/R or AArch32 ARMv8): Cortex-M uses the DWT (cmprof.h)"
#endif

/* Common architectural event numbers (PMXEVTYPER). What a core implements varies: QEMU 7.2's
 * Cortex-A7/A15 count only SW_INCR, INST_RETIRED (with -icount) and CPU_CYCLES. */
#define CMPROF_PMU_SW_INCR 0x00u
#define CMPROF_PMU_L1D_REFILL 0x03u
#define CMPROF_PMU_L1D_ACCESS 0x04u
#define CMPROF_PMU_INST_RETIRED 0x08u
#define CMPROF_PMU_EXC_TAKEN 0x09u
#define CMPROF_PMU_BR_MIS_PRED 0x10u
#define CMPROF_PMU_CPU_CYCLES 0x11u

#define CMPROF_PMU_CYCLES (1u << 31) /* the cycle counter's bit in enable, overflow and interrupt masks */
#define CMPROF_PMU_CCNT 31u          /* the cycle counter's number in those masks */

/* What the sampler's PMU port (CMPROF_PORT_PMU) counts to the next sample: the cycle counter, or
 * event counter n (CMPROF_PMU_SAMPLE_COUNTER=n) set to CMPROF_PMU_SAMPLE_EVENT. An IRQ handler calls
 * cmprof_tick() when cmprof_pmu_overflow() has CMPROF_PMU_SAMPLE_MASK. Keep the section timers'
 * counters (0.. for events, the last for cycles) apart from it. */
#ifndef CMPROF_PMU_SAMPLE_COUNTER
#define CMPROF_PMU_SAMPLE_COUNTER CMPROF_PMU_CCNT
#endif
#ifndef CMPROF_PMU_SAMPLE_EVENT
#define CMPROF_PMU_SAMPLE_EVENT CMPROF_PMU_INST_RETIRED
#endif
#define CMPROF_PMU_SAMPLE_MASK (1u << CMPROF_PMU_SAMPLE_COUNTER)

/* PMCR bits */
#define CMPROF_PMCR_E (1u << 0) /* enable all counters */
#define CMPROF_PMCR_P (1u << 1) /* reset the event counters */
#define CMPROF_PMCR_C (1u << 2) /* reset the cycle counter */
#define CMPROF_PMCR_D (1u << 3) /* the cycle counter counts every 64th cycle */

#define CMPROF_CP15_READ(crm, op2, out) __asm volatile("mrc p15, 0, %0, c9, " #crm ", " #op2 : "=r"(out))
#define CMPROF_CP15_WRITE(crm, op2, in) __asm volatile("mcr p15, 0, %0, c9, " #crm ", " #op2 ::"r"(in) : "memory")

/* MIDR, the core's identity (implementer, part): names the core's own event numbers (0x40 on). */
static inline uint32_t cmprof_cpu_id(void)
{
    uint32_t v;
    __asm volatile("mrc p15, 0, %0, c0, c0, 0" : "=r"(v));
    return v;
}

static inline void cmprof_pmu_isb(void)
{
    __asm volatile("isb" ::: "memory");
}

static inline uint32_t cmprof_pmu_pmcr(void)
{
    uint32_t v;
    CMPROF_CP15_READ(c12, 0, v);
    return v;
}

static inline void cmprof_pmu_set_pmcr(uint32_t v)
{
    CMPROF_CP15_WRITE(c12, 0, v);
    cmprof_pmu_isb();
}

/* The number of event counters the core has (PMCR.N); the cycle counter comes on top. */
static inline unsigned cmprof_pmu_counters(void)
{
    return (cmprof_pmu_pmcr() >> 11) & 0x1Fu;
}

/* Reset the event counters and the cycle counter to 0. */
static inline void cmprof_pmu_reset(void)
{
    cmprof_pmu_set_pmcr(cmprof_pmu_pmcr() | CMPROF_PMCR_P | CMPROF_PMCR_C);
}

/* Turn the unit on (PMCR.E), every counter reset; div64: the cycle counter counts every 64th
 * cycle. Counters still need cmprof_pmu_enable(). */
static inline void cmprof_pmu_start(bool div64)
{
    uint32_t pmcr = (cmprof_pmu_pmcr() & ~CMPROF_PMCR_D) | CMPROF_PMCR_E | CMPROF_PMCR_P | CMPROF_PMCR_C;
    cmprof_pmu_set_pmcr(div64 ? pmcr | CMPROF_PMCR_D : pmcr);
}

static inline void cmprof_pmu_stop(void)
{
    cmprof_pmu_set_pmcr(cmprof_pmu_pmcr() & ~CMPROF_PMCR_E);
}

/* Enable (disable) the counters in mask: bit n for event counter n, CMPROF_PMU_CYCLES for the
 * cycle counter. */
static inline void cmprof_pmu_enable(uint32_t mask)
{
    CMPROF_CP15_WRITE(c12, 1, mask); /* PMCNTENSET */
}

static inline void cmprof_pmu_disable(uint32_t mask)
{
    CMPROF_CP15_WRITE(c12, 2, mask); /* PMCNTENCLR */
}

/* Event counter n counts event (PMSELR selects it, PMXEVTYPER sets the event). */
static inline void cmprof_pmu_select(unsigned n, uint32_t event)
{
    CMPROF_CP15_WRITE(c12, 5, n); /* PMSELR */
    cmprof_pmu_isb();
    CMPROF_CP15_WRITE(c13, 1, event); /* PMXEVTYPER */
}

static inline uint32_t cmprof_pmu_read(unsigned n)
{
    uint32_t v;
    CMPROF_CP15_WRITE(c12, 5, n);
    cmprof_pmu_isb();
    CMPROF_CP15_READ(c13, 2, v); /* PMXEVCNTR */
    return v;
}

static inline void cmprof_pmu_write(unsigned n, uint32_t value)
{
    CMPROF_CP15_WRITE(c12, 5, n);
    cmprof_pmu_isb();
    CMPROF_CP15_WRITE(c13, 2, value);
}

static inline uint32_t cmprof_pmu_cycles(void)
{
    uint32_t v;
    CMPROF_CP15_READ(c13, 0, v); /* PMCCNTR */
    return v;
}

/* Preload the cycle counter: 2^32 - period makes it overflow (and interrupt, when enabled) after
 * period counts. */
static inline void cmprof_pmu_set_cycles(uint32_t value)
{
    CMPROF_CP15_WRITE(c13, 0, value);
}

/* Overflow flags (PMOVSR), same bits as the enable mask; cmprof_pmu_clear_overflow writes 1s to
 * clear them. */
static inline uint32_t cmprof_pmu_overflow(void)
{
    uint32_t v;
    CMPROF_CP15_READ(c12, 3, v);
    return v;
}

static inline void cmprof_pmu_clear_overflow(uint32_t mask)
{
    CMPROF_CP15_WRITE(c12, 3, mask);
}

/* Overflow interrupts for the counters in mask (PMINTENSET / PMINTENCLR; privileged). */
static inline void cmprof_pmu_irq_enable(uint32_t mask)
{
    CMPROF_CP15_WRITE(c14, 1, mask);
}

static inline void cmprof_pmu_irq_disable(uint32_t mask)
{
    CMPROF_CP15_WRITE(c14, 2, mask);
}

/* Let user mode (PL0) read and program the counters (PMUSERENR.EN; privileged). */
static inline void cmprof_pmu_user_access(bool on)
{
    CMPROF_CP15_WRITE(c14, 0, on ? 1u : 0u);
}

#undef CMPROF_CP15_READ
#undef CMPROF_CP15_WRITE

#endif
