/* QEMU virt as a Cortex-A7/A15, bare metal (board_virt.c). */
#ifndef BOARD_VIRT_H
#define BOARD_VIRT_H

#include <stdint.h>

#define BOARD_PMU_INTID 23u /* PPI 7: the PMU's overflow interrupt on virt */

void board_gic_pmu(void); /* route the PMU's interrupt to cmprof_tick(); enable IRQs with cpsie i */
void board_putc(char c);
void board_puts(const char *s);
void board_putdec(uint32_t v);
__attribute__((noreturn)) void board_exit(void);

#endif
