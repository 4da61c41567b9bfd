/* QEMU virt as a Cortex-A7/A9/A15, bare metal (board_virt.c): the scenarios' board API (board.h)
 * plus the PMU's interrupt. */
#ifndef BOARD_VIRT_H
#define BOARD_VIRT_H

#include "board.h"

#define BOARD_PMU_INTID 23u /* PPI 7: the PMU's overflow interrupt on virt */

/* Route the PMU's interrupt to cmprof_tick() (board_init() does it and unmasks IRQs). */
void board_gic_pmu(void);
/* Interrupts taken on the PMU's line: overflows of the sampler's counter, and of other counters
 * (with the PC the last of those interrupted). */
extern volatile uint32_t board_pmu_irqs, board_pmu_event_irqs, board_pmu_event_pc;

#endif
