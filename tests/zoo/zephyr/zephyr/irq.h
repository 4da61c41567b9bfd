/* A stand-in for Zephyr's <zephyr/irq.h> on Cortex-M: the priority call and flag cmprof uses. */
#ifndef CMPROF_ZEPHYR_STANDIN_IRQ_H
#define CMPROF_ZEPHYR_STANDIN_IRQ_H

#include <stdint.h>

#define IRQ_ZERO_LATENCY (1u << 0)
void z_arm_irq_priority_set(unsigned int irq, unsigned int prio, uint32_t flags);

#endif
