/* The sampler on a counter of Zephyr's counter API (nRF TIMER/RTC, STM32 timers, SAM TC...): the
 * counter's driver owns the timer and its interrupt; a channel alarm, re-armed at every sample,
 * calls back here in that interrupt (a counter without channels, such as the CMSDK timer's
 * driver: its top value, set at every sample). This file is the library's CMPROF_PORT_USER port.
 *
 * The callback runs inside the driver's handler, not as the vector, so the interrupted code's
 * exception frame is found from the core's state instead of EXC_RETURN:
 *   - only this handler active (ICSR.RETTOBASE): thread mode was interrupted, and its frame, PC in
 *     word 6 and xPSR in word 7, is on the process stack, where every Zephyr thread runs;
 *   - another handler active (nested): the sample is that handler's, charged to it as an ISR: row
 *     (the active exception of highest priority besides this one, the one it preempted) at the
 *     handler's entry: which handler, not where in it. That is what a counter loses against the
 *     library's own vector, besides the driver's cost per sample (a few hundred cycles more).
 * ARMv6-M and ARMv8-M Baseline have neither RETTOBASE nor the active-bit registers: there every
 * sample is the thread's, and a sample due inside a handler waits for it to end (the counter's
 * priority cannot rise above the kernel's locks, PRIMASK, anyway). */
#include <zephyr/device.h>
#include <zephyr/drivers/counter.h>
#include <zephyr/irq.h>
#include <zephyr/kernel.h>
#include <cmsis_core.h>

#include "cmprof.h"
#include "cmprof_counter.h"

static const struct device *const cmprof_counter = DEVICE_DT_GET(CMPROF_ZEPHYR_COUNTER);

static struct {
    uint32_t period; /* ticks, as cmprof_start() was given */
    uint32_t next;   /* ticks to the next sample: the period plus its jitter */
    uint32_t top;    /* the top value set last (counters without channels) */
    uint8_t shift;   /* the library's jitter, narrowed to below the period */
    bool channels;   /* alarms on channel 0, else the top value */
    volatile bool running;
    struct counter_alarm_cfg alarm;
} cmprof_ctr;

#if defined(CONFIG_ARMV7_M_ARMV8_M_MAINLINE)
/* The exception this handler preempted: the most urgent active one besides the running one. */
static uint32_t cmprof_counter_preempted(void)
{
    uint32_t self = __get_IPSR(), best = 0u, best_prio = UINT32_MAX;
    static const struct {
        uint32_t active, exception;
    } system[] = {
        {SCB_SHCSR_MEMFAULTACT_Msk, 4u}, {SCB_SHCSR_BUSFAULTACT_Msk, 5u}, {SCB_SHCSR_USGFAULTACT_Msk, 6u},
        {SCB_SHCSR_SVCALLACT_Msk, 11u},  {SCB_SHCSR_PENDSVACT_Msk, 14u},  {SCB_SHCSR_SYSTICKACT_Msk, 15u},
    };
    for (uint32_t i = 0; i < ARRAY_SIZE(system); i++) {
        uint32_t n = system[i].exception, prio = NVIC_GetPriority((IRQn_Type)((int32_t)n - 16));
        if ((SCB->SHCSR & system[i].active) && n != self && prio < best_prio) {
            best = n;
            best_prio = prio;
        }
    }
    for (uint32_t irq = 0; irq < CONFIG_NUM_IRQS; irq++) {
        uint32_t prio = NVIC_GetPriority((IRQn_Type)irq);
        if ((NVIC->IABR[irq >> 5] >> (irq & 31u) & 1u) && irq + 16u != self && prio < best_prio) {
            best = irq + 16u;
            best_prio = prio;
        }
    }
    return best;
}
#endif

/* The sample: the interrupted code's PC and xPSR, then the sampler. */
static void cmprof_counter_sample(void)
{
    uint32_t pc, xpsr;
#if defined(CONFIG_ARMV7_M_ARMV8_M_MAINLINE)
    if (!(SCB->ICSR & SCB_ICSR_RETTOBASE_Msk)) {
        xpsr = cmprof_counter_preempted();
        pc = ((const uint32_t *)SCB->VTOR)[xpsr] & ~1u;
    } else
#endif
    {
        const uint32_t *frame = (const uint32_t *)__get_PSP();
        pc = frame[6];
        xpsr = frame[7] & ~0x1FFu; /* thread mode */
    }
    cmprof_ctr.next = cmprof_ctr.period;
    cmprof_tick_frame(pc, xpsr); /* may re-time the next sample (jitter) or stop */
}

static void cmprof_counter_fired(const struct device *dev, uint8_t chan, uint32_t ticks, void *user_data)
{
    ARG_UNUSED(ticks);
    ARG_UNUSED(user_data);
    cmprof_counter_sample();
    if (cmprof_ctr.running) {
        cmprof_ctr.alarm.ticks = cmprof_ctr.next;
        (void)counter_set_channel_alarm(dev, chan, &cmprof_ctr.alarm);
    }
}

static void cmprof_counter_wrapped(const struct device *dev, void *user_data);

/* A counter without channels: the period is its top value, from 0 again at every sample. */
static void cmprof_counter_set_top(const struct device *dev, uint32_t ticks)
{
    const struct counter_top_cfg top = {.ticks = ticks - 1u, .callback = cmprof_counter_wrapped};
    cmprof_ctr.top = ticks;
    (void)counter_set_top_value(dev, &top);
}

static void cmprof_counter_wrapped(const struct device *dev, void *user_data)
{
    ARG_UNUSED(user_data);
    cmprof_counter_sample();
    if (cmprof_ctr.running && cmprof_ctr.next != cmprof_ctr.top)
        cmprof_counter_set_top(dev, cmprof_ctr.next);
}

void cmprof_user_timer_start(uint32_t period)
{
    cmprof_ctr.period = period;
    cmprof_ctr.next = period;
    cmprof_ctr.running = true;
    if (!cmprof_ctr.channels) { /* started first: the CMSDK driver's start clears the interrupt enable */
        (void)counter_start(cmprof_counter);
        cmprof_counter_set_top(cmprof_counter, period);
        return;
    }
    cmprof_ctr.alarm.callback = cmprof_counter_fired;
    cmprof_ctr.alarm.ticks = period;
    cmprof_ctr.alarm.flags = 0u; /* relative to now */
    (void)counter_start(cmprof_counter);
    (void)counter_set_channel_alarm(cmprof_counter, 0u, &cmprof_ctr.alarm);
}

void cmprof_user_timer_stop(void)
{
    cmprof_ctr.running = false;
    if (cmprof_ctr.channels)
        (void)counter_cancel_channel_alarm(cmprof_counter, 0u);
    else
        (void)counter_stop(cmprof_counter);
}

/* The library's period plus its jitter (CMPROF_JITTER, a 2^k - 1 mask): the jitter is narrowed by
 * a shift, which keeps it uniform, so the next sample comes within two periods. */
void cmprof_user_timer_period(uint32_t t)
{
    cmprof_ctr.next = cmprof_ctr.period + ((t - cmprof_ctr.period) >> cmprof_ctr.shift);
}

void cmprof_user_timer_ack(void)
{
}

int cmprof_zephyr_counter_setup(uint32_t *hz, uint32_t *period, uint32_t *jitter)
{
    if (!device_is_ready(cmprof_counter))
        return -ENODEV;
    uint32_t freq = counter_get_frequency(cmprof_counter), top = counter_get_max_top_value(cmprof_counter);
    cmprof_ctr.channels = counter_get_num_of_channels(cmprof_counter) > 0u;
    uint32_t p = freq / CONFIG_CMPROF_SAMPLE_HZ;
    if (p < 2u)
        return -ERANGE; /* a counter slower than twice the sampling rate */
    if (p > top / 2u)
        p = top / 2u; /* a 16-bit timer on a fast clock: sample faster than asked */
    uint8_t shift = 0u;
    while ((CMPROF_JITTER >> shift) >= p)
        shift++;
    cmprof_ctr.shift = shift;
    *hz = freq;
    *period = p;
    *jitter = CMPROF_JITTER >> shift;
#if defined(CONFIG_ZERO_LATENCY_IRQS)
    /* above the kernel's interrupt locks, so samples land inside critical sections too */
    z_arm_irq_priority_set(CMPROF_ZEPHYR_COUNTER_IRQ, 0, IRQ_ZERO_LATENCY);
#endif
    return 0;
}
