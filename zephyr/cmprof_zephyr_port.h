/* The sampler's timer port from the devicetree, for every file of the cmprof library in a Zephyr
 * build (given with -include by zephyr/CMakeLists.txt). The CMSDK ports of firmware/cmprof_port.h
 * take their base address and IRQ line from the node chosen as cmprof,timer, else timer1 or
 * dtimer0, as on the MPS2 boards. */
#ifndef CMPROF_ZEPHYR_PORT_H
#define CMPROF_ZEPHYR_PORT_H

#include <string.h>
#include <zephyr/devicetree.h>

/* Zephyr compiles with -ffreestanding, which makes every memcpy a call: the stream's 4-byte
 * copies (one per word of each line's check, one per sample) would cost a libc call each. */
#define memcpy(dst, src, n) __builtin_memcpy(dst, src, n)

#if defined(CONFIG_CMPROF_TIMER_CMSDK) || defined(CONFIG_CMPROF_TIMER_CMSDK_DUALTIMER)
#if DT_HAS_CHOSEN(cmprof_timer)
#define CMPROF_ZEPHYR_TIMER DT_CHOSEN(cmprof_timer)
#elif defined(CONFIG_CMPROF_TIMER_CMSDK)
#define CMPROF_ZEPHYR_TIMER DT_NODELABEL(timer1)
#else
#define CMPROF_ZEPHYR_TIMER DT_NODELABEL(dtimer0)
#endif
#if !DT_NODE_EXISTS(CMPROF_ZEPHYR_TIMER)
#error "cmprof: no sampling timer in the devicetree: add chosen { cmprof,timer = &your_cmsdk_timer; }, or set CONFIG_CMPROF_TIMER_USER=y"
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
#elif defined(CONFIG_CMPROF_TIMER_USER)
#define CMPROF_PORT CMPROF_PORT_USER
#endif

#endif
