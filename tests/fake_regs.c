/* Fake register file: a small table of (address, value) slots. */
#include "fake_regs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 64

static uint32_t slot_addr[SLOTS];
static volatile uint32_t slot_value[SLOTS];
static unsigned slots_used;
unsigned long fake_probe_steps;
unsigned long fake_masked_moves;

volatile uint32_t *fake_reg(uint32_t addr)
{
    for (unsigned i = 0; i < slots_used; i++)
        if (slot_addr[i] == addr)
            return &slot_value[i];
    if (slots_used == SLOTS) {
        fprintf(stderr, "fake_regs: more than %d registers\n", SLOTS);
        abort();
    }
    slot_addr[slots_used] = addr;
    slot_value[slots_used] = 0;
    return &slot_value[slots_used++];
}

void fake_regs_clear(void)
{
    slots_used = 0;
    memset(slot_addr, 0, sizeof slot_addr);
}

int fake_reg_seen(uint32_t addr)
{
    for (unsigned i = 0; i < slots_used; i++)
        if (slot_addr[i] == addr)
            return 1;
    return 0;
}

unsigned fake_regs_used(void)
{
    return slots_used;
}
