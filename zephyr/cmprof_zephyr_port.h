/* The sampler's timer port from the devicetree, for every file of the cmprof library in a Zephyr
 * build (given with -include by zephyr/CMakeLists.txt). Three ways to a timer:
 *   CMSDK timers (MPS2/MPS3): the library's own ports, on the node chosen as cmprof,timer, else
 *     timer1 or dtimer0, registers and IRQ line from the devicetree;
 *   a counter (nRF TIMER/RTC, STM32 timers, SAM TC, any driver of Zephyr's counter API): the node
 *     chosen as cmprof,timer, else the first enabled one of the kinds below (zephyr/cmprof_counter.c);
 *   your own timer (CMPROF_PORT_USER): its IRQ line from the node chosen as cmprof,timer or
 *     CONFIG_CMPROF_TIMER_USER_IRQ, connected by the module at the most urgent priority. */
#ifndef CMPROF_ZEPHYR_PORT_H
#define CMPROF_ZEPHYR_PORT_H

#include <string.h>
#include <zephyr/devicetree.h>

/* Zephyr compiles with -ffreestanding, which makes every memcpy a call: the stream's 4-byte
 * copies (one per word of each line's check, one per sample) would cost a libc call each. */
#define memcpy(dst, src, n) __builtin_memcpy(dst, src, n)

#if defined(CONFIG_CMPROF_TRANSPORT_STREAM)
/* The stream's cache keys a thread by its k_thread and its name's first word (firmware/cmprof_tasks.h):
 * the tick reads that word at this offset. */
#include <zephyr/kernel.h>
#define CMPROF_TAG_NAME_OFFSET offsetof(struct k_thread, name)
#endif

#if defined(CONFIG_CMPROF_TIMER_CMSDK) || defined(CONFIG_CMPROF_TIMER_CMSDK_DUALTIMER)
#if DT_HAS_CHOSEN(cmprof_timer)
#define CMPROF_ZEPHYR_TIMER DT_CHOSEN(cmprof_timer)
#elif defined(CONFIG_CMPROF_TIMER_CMSDK)
#define CMPROF_ZEPHYR_TIMER DT_NODELABEL(timer1)
#else
#define CMPROF_ZEPHYR_TIMER DT_NODELABEL(dtimer0)
#endif
#if !DT_NODE_EXISTS(CMPROF_ZEPHYR_TIMER)
#error "cmprof: no sampling timer in the devicetree: add chosen { cmprof,timer = &your_cmsdk_timer; }, or set CONFIG_CMPROF_TIMER_COUNTER=y or CONFIG_CMPROF_TIMER_USER=y"
#endif
#define CMPROF_ZEPHYR_IRQ DT_IRQN(CMPROF_ZEPHYR_TIMER)
#endif

#if defined(CONFIG_CMPROF_TIMER_CMSDK)
#if !DT_NODE_HAS_COMPAT(CMPROF_ZEPHYR_TIMER, arm_cmsdk_timer)
#error "cmprof: CONFIG_CMPROF_TIMER_CMSDK needs an arm,cmsdk-timer node (chosen cmprof,timer or timer1)"
#endif
#define CMPROF_PORT CMPROF_PORT_CMSDK_TIMER
#define CMPROF_CMSDK_BASE ((uint32_t)DT_REG_ADDR(CMPROF_ZEPHYR_TIMER))
#define CMPROF_CMSDK_IRQ ((uint32_t)CMPROF_ZEPHYR_IRQ)
#elif defined(CONFIG_CMPROF_TIMER_CMSDK_DUALTIMER)
#if !DT_NODE_HAS_COMPAT(CMPROF_ZEPHYR_TIMER, arm_cmsdk_dtimer)
#error "cmprof: CONFIG_CMPROF_TIMER_CMSDK_DUALTIMER needs an arm,cmsdk-dtimer node (chosen cmprof,timer or dtimer0)"
#endif
#define CMPROF_PORT CMPROF_PORT_CMSDK_DUALTIMER
#define CMPROF_DUALTIMER_BASE ((uint32_t)DT_REG_ADDR(CMPROF_ZEPHYR_TIMER))
#define CMPROF_DUALTIMER_IRQ ((uint32_t)CMPROF_ZEPHYR_IRQ)

#elif defined(CONFIG_CMPROF_TIMER_COUNTER)
/* The counter's driver owns the timer; zephyr/cmprof_counter.c is the port's four functions. */
#define CMPROF_PORT CMPROF_PORT_USER
#if DT_HAS_CHOSEN(cmprof_timer)
#define CMPROF_ZEPHYR_COUNTER DT_CHOSEN(cmprof_timer)
#elif DT_HAS_COMPAT_STATUS_OKAY(nordic_nrf_timer)
#define CMPROF_ZEPHYR_COUNTER DT_COMPAT_GET_ANY_STATUS_OKAY(nordic_nrf_timer)
#elif DT_HAS_COMPAT_STATUS_OKAY(nordic_nrf_rtc)
#define CMPROF_ZEPHYR_COUNTER DT_COMPAT_GET_ANY_STATUS_OKAY(nordic_nrf_rtc)
#elif DT_HAS_COMPAT_STATUS_OKAY(st_stm32_counter)
#define CMPROF_ZEPHYR_COUNTER DT_COMPAT_GET_ANY_STATUS_OKAY(st_stm32_counter)
#elif DT_HAS_COMPAT_STATUS_OKAY(atmel_sam_tc)
#define CMPROF_ZEPHYR_COUNTER DT_COMPAT_GET_ANY_STATUS_OKAY(atmel_sam_tc)
#else
#error "cmprof: CONFIG_CMPROF_TIMER_COUNTER: no counter is enabled in the devicetree: enable one the application does not use (nRF: &timer2 { status = \"okay\"; }; STM32: &timers2 { status = \"okay\"; counter { status = \"okay\"; }; }) and choose it: chosen { cmprof,timer = &timer2; }"
#endif
#if !DT_NODE_HAS_STATUS_OKAY(CMPROF_ZEPHYR_COUNTER)
#error "cmprof: the counter chosen as cmprof,timer is not enabled: give it status = \"okay\" in an overlay"
#endif
/* Its interrupt: the node's own, or (STM32: the counter is a child of its timers node) its parent's. */
#if DT_IRQ_HAS_IDX(CMPROF_ZEPHYR_COUNTER, 0)
#define CMPROF_ZEPHYR_COUNTER_IRQ DT_IRQN(CMPROF_ZEPHYR_COUNTER)
#else
#define CMPROF_ZEPHYR_COUNTER_IRQ DT_IRQN(DT_PARENT(CMPROF_ZEPHYR_COUNTER))
#endif

#elif defined(CONFIG_CMPROF_TIMER_USER)
#define CMPROF_PORT CMPROF_PORT_USER
#if DT_HAS_CHOSEN(cmprof_timer) && DT_IRQ_HAS_IDX(DT_CHOSEN(cmprof_timer), 0)
#define CMPROF_ZEPHYR_IRQ DT_IRQN(DT_CHOSEN(cmprof_timer))
#elif CONFIG_CMPROF_TIMER_USER_IRQ >= 0
#define CMPROF_ZEPHYR_IRQ CONFIG_CMPROF_TIMER_USER_IRQ
#endif
#endif

#endif
