/* A fake register file for host tests of the firmware library: CMPROF_REG(addr) resolves to a
 * slot per distinct address, so the library's register writes can be read back. Compile the
 * library with -include fake_regs.h. */
#ifndef FAKE_REGS_H
#define FAKE_REGS_H

#include <stdint.h>

volatile uint32_t *fake_reg(uint32_t addr);
void fake_regs_clear(void);
/* Whether the library read or wrote addr since the last clear; how many registers it touched. */
int fake_reg_seen(uint32_t addr);
unsigned fake_regs_used(void);

#define CMPROF_REG(addr) (*fake_reg((uint32_t)(addr)))

/* Steps the stream's task table takes (hash probes, queue pops): create and delete are O(1). */
extern unsigned long fake_probe_steps;
#define CMPROF_PROBE fake_probe_steps
/* Entries of the tag cache moved out of line with interrupts masked (CMPROF_TAG_NAMES hooks). */
extern unsigned long fake_masked_moves;
#define CMPROF_MOVE_PROBE fake_masked_moves

#endif
