/* Timer ports for the sampler: which timer interrupts the program, and how the library starts,
 * stops, re-arms (jitter) and acknowledges it. Private to cmprof_sampler.c; users pick a port with
 * -DCMPROF_PORT=... (see cmprof.h). Every port but SysTick leaves SysTick alone, so an RTOS keeps
 * its tick: tests/firmware_ports.sh scans the object code of every configuration to prove it.
 *
 * Registers: ARMv7-M/ARMv6-M ARM (NVIC, SysTick), RM0090/RM0008 (STM32 TIMx), ARM DDI 0479
 * (CMSDK APB timer and dual timer, as on the MPS2/MPS3 boards), nRF51/nRF52 reference manuals. */
#ifndef CMPROF_PORT_H
#define CMPROF_PORT_H

#include "cmprof.h"
#include "cmprof_regs.h"

/* The port in use: an explicit CMPROF_PORT, else the older switches, else SysTick. */
#ifndef CMPROF_PORT
#if defined(CMPROF_TIMER_TIM3) && CMPROF_TIMER_TIM3
#define CMPROF_PORT CMPROF_PORT_STM32_TIM
#ifndef CMPROF_STM32_TIM
#define CMPROF_STM32_TIM 3
#endif
#elif defined(CMPROF_NO_ISR) && CMPROF_NO_ISR
#define CMPROF_PORT CMPROF_PORT_NONE
#else
#define CMPROF_PORT CMPROF_PORT_SYSTICK
#endif
#endif

/* Give the IRQ line `irq` the most urgent priority and enable it. Word access: ARMv6-M has no
 * byte access to the priority registers. */
static inline void cmprof_nvic_enable_urgent(uint32_t irq)
{
    CMPROF_REG(CMPROF_NVIC_IPR_WORD(irq)) &= ~(0xFFu << CMPROF_NVIC_IPR_SHIFT(irq));
    CMPROF_REG(CMPROF_NVIC_ISER(irq)) = 1u << (irq & 31u);
}

static inline void cmprof_nvic_disable(uint32_t irq)
{
    CMPROF_REG(CMPROF_NVIC_ICER(irq)) = 1u << (irq & 31u);
}

#if CMPROF_PORT == CMPROF_PORT_SYSTICK /* ------------------------------------------------------- */

#define CMPROF_PORT_LABEL "SysTick"

#define CMPROF_PORT_ISR SysTick_Handler
static inline void cmprof_port_ack(void) {} /* reading nothing: SysTick's flag needs no clearing */
/* A new reload value takes effect at the next wrap of the counter. */
static inline void cmprof_port_set_period(uint32_t t)
{
    CMPROF_REG(CMPROF_SYST_RVR) = t - 1u;
}
static inline void cmprof_port_start(uint32_t period)
{
    uint32_t shpr3 = CMPROF_REG(CMPROF_SCB_SHPR3);
    CMPROF_REG(CMPROF_SCB_SHPR3) = shpr3 & ~(0xFFu << CMPROF_SHPR3_SYSTICK_SHIFT); /* priority 0 */
    cmprof_port_set_period(period);
    CMPROF_REG(CMPROF_SYST_CVR) = 0u;
    CMPROF_REG(CMPROF_SYST_CSR) = CMPROF_SYST_CSR_ENABLE | CMPROF_SYST_CSR_TICKINT | CMPROF_SYST_CSR_CLKSOURCE;
}
static inline void cmprof_port_stop(void)
{
    CMPROF_REG(CMPROF_SYST_CSR) = 0u;
}

#elif CMPROF_PORT == CMPROF_PORT_STM32_TIM /* --------------------------------------------------- */

#define CMPROF_PORT_LABEL "STM32-TIM"

#ifndef CMPROF_STM32_TIM
#define CMPROF_STM32_TIM 3
#endif
#ifndef CMPROF_TIM_PSC_VALUE
#ifdef CMPROF_TIM3_PSC
#define CMPROF_TIM_PSC_VALUE CMPROF_TIM3_PSC
#else
#define CMPROF_TIM_PSC_VALUE 0u
#endif
#endif
_Static_assert(CMPROF_STM32_TIM >= 2 && CMPROF_STM32_TIM <= 5, "CMPROF_STM32_TIM: 2, 3, 4 or 5");
#define CMPROF_TIM_BASE CMPROF_STM32_TIM_BASE(CMPROF_STM32_TIM)
#define CMPROF_PORT_IRQ CMPROF_STM32_TIM_IRQ(CMPROF_STM32_TIM)
#if CMPROF_STM32_TIM == 2
#define CMPROF_PORT_ISR TIM2_IRQHandler
#elif CMPROF_STM32_TIM == 3
#define CMPROF_PORT_ISR TIM3_IRQHandler
#elif CMPROF_STM32_TIM == 4
#define CMPROF_PORT_ISR TIM4_IRQHandler
#else
#define CMPROF_PORT_ISR TIM5_IRQHandler
#endif
/* Clear UIF first, or the interrupt is taken again on return. */
static inline void cmprof_port_ack(void)
{
    CMPROF_REG(CMPROF_TIM_SR(CMPROF_TIM_BASE)) = ~1u;
}
static inline void cmprof_port_set_period(uint32_t t)
{
    CMPROF_REG(CMPROF_TIM_ARR(CMPROF_TIM_BASE)) = t - 1u; /* ARPE off: the next period */
}
static inline void cmprof_port_start(uint32_t period)
{
    CMPROF_REG(CMPROF_RCC_APB1ENR) |= 1u << (CMPROF_STM32_TIM - 2);
    CMPROF_REG(CMPROF_TIM_CR1(CMPROF_TIM_BASE)) = 0u;
    CMPROF_REG(CMPROF_TIM_PSC(CMPROF_TIM_BASE)) = CMPROF_TIM_PSC_VALUE;
    cmprof_port_set_period(period);
    CMPROF_REG(CMPROF_TIM_EGR(CMPROF_TIM_BASE)) = 1u;  /* UG: load PSC and ARR now */
    CMPROF_REG(CMPROF_TIM_SR(CMPROF_TIM_BASE)) = 0u;   /* drop the flag UG raised */
    CMPROF_REG(CMPROF_TIM_DIER(CMPROF_TIM_BASE)) = 1u; /* UIE */
    cmprof_nvic_enable_urgent(CMPROF_PORT_IRQ);
    CMPROF_REG(CMPROF_TIM_CR1(CMPROF_TIM_BASE)) = 1u; /* CEN */
}
static inline void cmprof_port_stop(void)
{
    CMPROF_REG(CMPROF_TIM_CR1(CMPROF_TIM_BASE)) = 0u;
}

#elif CMPROF_PORT == CMPROF_PORT_CMSDK_TIMER /* ------------------------------------------------- */

#define CMPROF_PORT_LABEL "CMSDK-timer"

#ifndef CMPROF_CMSDK_TIMER
#define CMPROF_CMSDK_TIMER 1 /* TIMER1: RTOS ports often take TIMER0 */
#endif
#ifndef CMPROF_CMSDK_BASE
#define CMPROF_CMSDK_BASE (0x40000000u + 0x1000u * (CMPROF_CMSDK_TIMER))
#endif
#ifndef CMPROF_CMSDK_IRQ
#define CMPROF_CMSDK_IRQ (8u + (CMPROF_CMSDK_TIMER)) /* MPS2 AN385/AN386/AN500 */
#endif
#define CMPROF_PORT_IRQ CMPROF_CMSDK_IRQ
#if CMPROF_CMSDK_TIMER == 0
#define CMPROF_PORT_ISR TIMER0_Handler
#else
#define CMPROF_PORT_ISR TIMER1_Handler
#endif
static inline void cmprof_port_ack(void)
{
    CMPROF_REG(CMPROF_CMSDK_INTCLEAR(CMPROF_CMSDK_BASE)) = 1u;
}
/* RELOAD is loaded into VALUE when the count reaches zero: the next period. */
static inline void cmprof_port_set_period(uint32_t t)
{
    CMPROF_REG(CMPROF_CMSDK_RELOAD(CMPROF_CMSDK_BASE)) = t - 1u;
}
static inline void cmprof_port_start(uint32_t period)
{
    CMPROF_REG(CMPROF_CMSDK_CTRL(CMPROF_CMSDK_BASE)) = 0u;
    cmprof_port_set_period(period);
    CMPROF_REG(CMPROF_CMSDK_VALUE(CMPROF_CMSDK_BASE)) = period - 1u;
    CMPROF_REG(CMPROF_CMSDK_INTCLEAR(CMPROF_CMSDK_BASE)) = 1u;
    cmprof_nvic_enable_urgent(CMPROF_PORT_IRQ);
    CMPROF_REG(CMPROF_CMSDK_CTRL(CMPROF_CMSDK_BASE)) = CMPROF_CMSDK_CTRL_EN | CMPROF_CMSDK_CTRL_IRQEN;
}
static inline void cmprof_port_stop(void)
{
    CMPROF_REG(CMPROF_CMSDK_CTRL(CMPROF_CMSDK_BASE)) = 0u;
}

#elif CMPROF_PORT == CMPROF_PORT_CMSDK_DUALTIMER || CMPROF_PORT == CMPROF_PORT_SP804 /* ----------- */

#if CMPROF_PORT == CMPROF_PORT_SP804
/* Cortex-A/R: the CMSDK dual timer is ARM's SP804, the same registers. The GIC and the vector are
 * the user's: their IRQ handler calls cmprof_tick(LR_irq - 4) on the timer's line. */
#define CMPROF_PORT_LABEL "SP804"
#ifndef CMPROF_SP804_BASE
#define CMPROF_SP804_BASE 0x1C110000u /* Versatile Express, A-series map: TIMER01, timer 1 */
#endif
#define CMPROF_DUALTIMER_BASE CMPROF_SP804_BASE
#define CMPROF_DUAL_IRQ_ENABLE() ((void)0)
#else
#define CMPROF_PORT_LABEL "CMSDK-dualtimer"

#ifndef CMPROF_DUALTIMER_BASE
#define CMPROF_DUALTIMER_BASE 0x40002000u /* MPS2 AN385/AN386/AN500: timer 1 of the dual timer */
#endif
#ifndef CMPROF_DUALTIMER_IRQ
#define CMPROF_DUALTIMER_IRQ 10u
#endif
#define CMPROF_PORT_IRQ CMPROF_DUALTIMER_IRQ
#define CMPROF_PORT_ISR DUALTIMER_Handler
#define CMPROF_DUAL_IRQ_ENABLE() cmprof_nvic_enable_urgent(CMPROF_PORT_IRQ)
#endif
static inline void cmprof_port_ack(void)
{
    CMPROF_REG(CMPROF_DUAL_INTCLR(CMPROF_DUALTIMER_BASE)) = 1u;
}
/* BGLOAD changes the reload value without restarting the current count: the next period. */
static inline void cmprof_port_set_period(uint32_t t)
{
    CMPROF_REG(CMPROF_DUAL_BGLOAD(CMPROF_DUALTIMER_BASE)) = t - 1u;
}
static inline void cmprof_port_start(uint32_t period)
{
    CMPROF_REG(CMPROF_DUAL_CONTROL(CMPROF_DUALTIMER_BASE)) = 0u;
    CMPROF_REG(CMPROF_DUAL_LOAD(CMPROF_DUALTIMER_BASE)) = period - 1u;
    CMPROF_REG(CMPROF_DUAL_INTCLR(CMPROF_DUALTIMER_BASE)) = 1u;
    CMPROF_DUAL_IRQ_ENABLE();
    CMPROF_REG(CMPROF_DUAL_CONTROL(CMPROF_DUALTIMER_BASE)) =
        CMPROF_DUAL_CTRL_EN | CMPROF_DUAL_CTRL_PERIODIC | CMPROF_DUAL_CTRL_INTEN | CMPROF_DUAL_CTRL_32BIT;
}
static inline void cmprof_port_stop(void)
{
    CMPROF_REG(CMPROF_DUAL_CONTROL(CMPROF_DUALTIMER_BASE)) = 0u;
}

#elif CMPROF_PORT == CMPROF_PORT_NRF_TIMER /* --------------------------------------------------- */

#define CMPROF_PORT_LABEL "nRF-TIMER"

#ifndef CMPROF_NRF_TIMER
#define CMPROF_NRF_TIMER 1 /* TIMER0 is the SoftDevice's */
#endif
#ifndef CMPROF_NRF_PRESCALER
#define CMPROF_NRF_PRESCALER 0u /* 16 MHz / 2^prescaler */
#endif
_Static_assert(CMPROF_NRF_TIMER >= 0 && CMPROF_NRF_TIMER <= 4, "CMPROF_NRF_TIMER: 0 to 4 (3, 4: nRF52 only)");
#define CMPROF_NRF_BASE CMPROF_NRF_TIMER_BASE(CMPROF_NRF_TIMER)
#define CMPROF_PORT_IRQ CMPROF_NRF_TIMER_IRQ(CMPROF_NRF_TIMER)
#if CMPROF_NRF_TIMER == 0
#define CMPROF_PORT_ISR TIMER0_IRQHandler
#elif CMPROF_NRF_TIMER == 1
#define CMPROF_PORT_ISR TIMER1_IRQHandler
#elif CMPROF_NRF_TIMER == 2
#define CMPROF_PORT_ISR TIMER2_IRQHandler
#elif CMPROF_NRF_TIMER == 3
#define CMPROF_PORT_ISR TIMER3_IRQHandler
#else
#define CMPROF_PORT_ISR TIMER4_IRQHandler
#endif
static inline void cmprof_port_ack(void)
{
    CMPROF_REG(CMPROF_NRF_EVENTS_COMPARE0(CMPROF_NRF_BASE)) = 0u;
    (void)CMPROF_REG(CMPROF_NRF_EVENTS_COMPARE0(CMPROF_NRF_BASE)); /* the write lands before return */
}
/* COMPARE0 clears the counter (SHORTS): a new CC[0] in the handler times the period just begun. */
static inline void cmprof_port_set_period(uint32_t t)
{
    CMPROF_REG(CMPROF_NRF_CC0(CMPROF_NRF_BASE)) = t;
}
static inline void cmprof_port_start(uint32_t period)
{
    CMPROF_REG(CMPROF_NRF_TASKS_STOP(CMPROF_NRF_BASE)) = 1u;
    CMPROF_REG(CMPROF_NRF_TASKS_CLEAR(CMPROF_NRF_BASE)) = 1u;
    CMPROF_REG(CMPROF_NRF_MODE(CMPROF_NRF_BASE)) = 0u; /* timer */
    CMPROF_REG(CMPROF_NRF_BITMODE(CMPROF_NRF_BASE)) = CMPROF_NRF_BITMODE_32;
    CMPROF_REG(CMPROF_NRF_PRESCALER_REG(CMPROF_NRF_BASE)) = CMPROF_NRF_PRESCALER;
    cmprof_port_set_period(period);
    CMPROF_REG(CMPROF_NRF_SHORTS(CMPROF_NRF_BASE)) = CMPROF_NRF_SHORTS_COMPARE0_CLEAR;
    CMPROF_REG(CMPROF_NRF_EVENTS_COMPARE0(CMPROF_NRF_BASE)) = 0u;
    CMPROF_REG(CMPROF_NRF_INTENSET(CMPROF_NRF_BASE)) = CMPROF_NRF_INT_COMPARE0;
    cmprof_nvic_enable_urgent(CMPROF_PORT_IRQ);
    CMPROF_REG(CMPROF_NRF_TASKS_START(CMPROF_NRF_BASE)) = 1u;
}
static inline void cmprof_port_stop(void)
{
    CMPROF_REG(CMPROF_NRF_TASKS_STOP(CMPROF_NRF_BASE)) = 1u;
    CMPROF_REG(CMPROF_NRF_INTENCLR(CMPROF_NRF_BASE)) = CMPROF_NRF_INT_COMPARE0;
}

#elif CMPROF_PORT == CMPROF_PORT_RP2040_ALARM /* ---------------------------------------------- */

#define CMPROF_PORT_LABEL "RP2040-alarm"

#ifndef CMPROF_RP2040_ALARM
#define CMPROF_RP2040_ALARM 0 /* the pico-sdk's default alarm pool uses alarm 3 */
#endif
_Static_assert(CMPROF_RP2040_ALARM >= 0 && CMPROF_RP2040_ALARM <= 3, "CMPROF_RP2040_ALARM: 0 to 3");
#define CMPROF_PORT_IRQ ((uint32_t)CMPROF_RP2040_ALARM) /* TIMER_IRQ_n */
#if CMPROF_RP2040_ALARM == 0 /* the pico-sdk's names for these vectors */
#define CMPROF_PORT_ISR isr_timer_0
#elif CMPROF_RP2040_ALARM == 1
#define CMPROF_PORT_ISR isr_timer_1
#elif CMPROF_RP2040_ALARM == 2
#define CMPROF_PORT_ISR isr_timer_2
#else
#define CMPROF_PORT_ISR isr_timer_3
#endif
/* An alarm fires once: each period is armed from the last alarm's time, not from now, so the
 * handler's own latency does not stretch the period. The counter ticks at 1 MHz (the watchdog's
 * tick, which the pico-sdk's start-up sets going). */
#define CMPROF_PORT_RELOADS 0
static uint32_t cmprof_rp2040_due;
static inline void cmprof_port_ack(void)
{
    CMPROF_REG(CMPROF_RP2040_INTR) = 1u << CMPROF_RP2040_ALARM;
}
static inline void cmprof_port_set_period(uint32_t t)
{
    cmprof_rp2040_due += t;
    if ((int32_t)(cmprof_rp2040_due - CMPROF_REG(CMPROF_RP2040_TIMERAWL)) <= 0) /* late: from now */
        cmprof_rp2040_due = CMPROF_REG(CMPROF_RP2040_TIMERAWL) + t;
    CMPROF_REG(CMPROF_RP2040_ALARM_REG(CMPROF_RP2040_ALARM)) = cmprof_rp2040_due; /* arms it */
}
static inline void cmprof_port_start(uint32_t period)
{
    CMPROF_REG(CMPROF_RP2040_INTR) = 1u << CMPROF_RP2040_ALARM;
    CMPROF_REG(CMPROF_RP2040_INTE) |= 1u << CMPROF_RP2040_ALARM;
    cmprof_nvic_enable_urgent(CMPROF_PORT_IRQ);
    cmprof_rp2040_due = CMPROF_REG(CMPROF_RP2040_TIMERAWL);
    cmprof_port_set_period(period);
}
static inline void cmprof_port_stop(void)
{
    CMPROF_REG(CMPROF_RP2040_ARMED) = 1u << CMPROF_RP2040_ALARM; /* a 1 disarms */
    CMPROF_REG(CMPROF_RP2040_INTE) &= ~(1u << CMPROF_RP2040_ALARM);
}

#elif CMPROF_PORT == CMPROF_PORT_USER /* -------------------------------------------------------- */

#define CMPROF_PORT_LABEL "user"

/* Your timer: define these four (as macros, -D or in a header given with -include), or let them
 * call the functions of the same meaning that you provide. No default vector: put
 * CMPROF_DEFINE_ISR(your_vector) in one of your files, or call cmprof_tick() yourself. */
#ifndef CMPROF_USER_START
#define CMPROF_USER_START(period) cmprof_user_timer_start(period)
void cmprof_user_timer_start(uint32_t period);
#endif
#ifndef CMPROF_USER_STOP
#define CMPROF_USER_STOP() cmprof_user_timer_stop()
void cmprof_user_timer_stop(void);
#endif
#ifndef CMPROF_USER_SET_PERIOD
#define CMPROF_USER_SET_PERIOD(t) cmprof_user_timer_period(t)
void cmprof_user_timer_period(uint32_t period);
#endif
#ifndef CMPROF_USER_ACK
#define CMPROF_USER_ACK() cmprof_user_timer_ack()
void cmprof_user_timer_ack(void);
#endif
static inline void cmprof_port_ack(void)
{
    CMPROF_USER_ACK();
}
static inline void cmprof_port_set_period(uint32_t t)
{
    CMPROF_USER_SET_PERIOD(t);
}
static inline void cmprof_port_start(uint32_t period)
{
    CMPROF_USER_START(period);
}
static inline void cmprof_port_stop(void)
{
    CMPROF_USER_STOP();
}

#elif CMPROF_PORT == CMPROF_PORT_NONE /* -------------------------------------------------------- */

#define CMPROF_PORT_LABEL "own-handler"

/* Your own timer calls cmprof_tick(pc): the library touches no timer at all. Stopping (at the
 * sample limit or by cmprof_stop) closes a gate in cmprof_tick instead. */
#define CMPROF_PORT_GATED 1
#ifdef CMPROF_JITTER
_Static_assert(CMPROF_JITTER == 0, "CMPROF_JITTER needs a timer port that can re-arm the timer: pick one with "
                                   "CMPROF_PORT (CMPROF_PORT_USER for your own), or jitter your timer yourself");
#endif
static inline void cmprof_port_ack(void) {}
static inline void cmprof_port_set_period(uint32_t t)
{
    (void)t;
}
static inline void cmprof_port_start(uint32_t period)
{
    (void)period;
}
static inline void cmprof_port_stop(void) {}

#elif CMPROF_PORT == CMPROF_PORT_PMU /* --------------------------------------------------------- */

/* Cortex-A/R: a PMU counter counts up from 2^32 - period and overflows into the PMU interrupt; each
 * sample preloads the next period. By default the cycle counter; CMPROF_PMU_SAMPLE_COUNTER=n samples
 * on event counter n counting CMPROF_PMU_SAMPLE_EVENT instead ("every N instructions", "every N
 * cache refills"). The GIC and the vector are the user's: their IRQ handler calls cmprof_tick()
 * with the interrupted PC (LR_irq - 4) when PMOVSR has CMPROF_PMU_SAMPLE_MASK set. */
#include "cmprof_pmu.h"
#define CMPROF_PORT_RELOADS 0 /* the counter runs on from 0: the sampler preloads every period */
#if CMPROF_PMU_SAMPLE_COUNTER == CMPROF_PMU_CCNT
#define CMPROF_PORT_LABEL "PMU-cycle-counter"
#else
#define CMPROF_PORT_LABEL "PMU-event-counter"
#endif
static inline void cmprof_port_ack(void)
{
    cmprof_pmu_clear_overflow(CMPROF_PMU_SAMPLE_MASK);
}
static inline void cmprof_port_set_period(uint32_t t)
{
#if CMPROF_PMU_SAMPLE_COUNTER == CMPROF_PMU_CCNT
    cmprof_pmu_set_cycles(0u - t);
#else
    cmprof_pmu_write(CMPROF_PMU_SAMPLE_COUNTER, 0u - t);
#endif
}
static inline void cmprof_port_start(uint32_t period)
{
    cmprof_pmu_set_pmcr((cmprof_pmu_pmcr() & ~CMPROF_PMCR_D) | CMPROF_PMCR_E);
    cmprof_pmu_disable(CMPROF_PMU_SAMPLE_MASK);
    cmprof_pmu_clear_overflow(CMPROF_PMU_SAMPLE_MASK);
#if CMPROF_PMU_SAMPLE_COUNTER != CMPROF_PMU_CCNT
    cmprof_pmu_select(CMPROF_PMU_SAMPLE_COUNTER, CMPROF_PMU_SAMPLE_EVENT);
#endif
    cmprof_port_set_period(period);
    cmprof_pmu_irq_enable(CMPROF_PMU_SAMPLE_MASK);
    cmprof_pmu_enable(CMPROF_PMU_SAMPLE_MASK);
}
static inline void cmprof_port_stop(void)
{
    cmprof_pmu_irq_disable(CMPROF_PMU_SAMPLE_MASK);
    cmprof_pmu_clear_overflow(CMPROF_PMU_SAMPLE_MASK);
}

#else
#error "CMPROF_PORT: one of the CMPROF_PORT_* values in cmprof.h"
#endif

#ifndef CMPROF_PORT_GATED
#define CMPROF_PORT_GATED 0
#endif

#endif
