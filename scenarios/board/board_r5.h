/* Cortex-R5 on QEMU's vexpress-a15 (-cpu cortex-r5f), bare metal (board_r5.c): the scenarios'
 * board API (board.h) plus the GICv2, the SP804 timers and the PMU's interrupt. */
#ifndef BOARD_R5_H
#define BOARD_R5_H

#include "board.h"

#define BOARD_R5_SP804_BASE 0x1C110000u /* SP804 TIMER01: timer 1 samples (CMPROF_PORT_SP804) */
#define BOARD_R5_SP804_INTID 34u        /* its line: SPI 2 of the A15 MPCore's GIC */
#define BOARD_R5_SP804_HZ 1000000u      /* the Versatile Express TIMCLK: 1 MHz */
/* The PMU's overflow interrupt as a GIC line: QEMU's vexpress wires it nowhere (design notes 13),
 * so the scenarios pend it from software; SPI 68 is where the CoreTile A15's PMU goes. A real R5
 * SoC routes nPMUIRQ to its own interrupt controller: change this to match. */
#define BOARD_R5_PMU_INTID 100u

/* Route the PMU's line and the sampling timer's line to cmprof_tick() (board_init() does it and
 * unmasks IRQs); board_gic_pend() sets an interrupt pending from software (GICD_ISPENDR). */
void board_gic_pmu(void);
void board_gic_pend(uint32_t intid);
/* Interrupts taken on the PMU's line: overflows of the sampler's counter, and of other counters
 * (with the PC the last of those interrupted), and those with no overflow flag set. */
extern volatile uint32_t board_pmu_irqs, board_pmu_event_irqs, board_pmu_event_pc, board_pmu_spurious;

#endif
