/* libFuzzer target: the ELF/DWARF loader on arbitrary files, in this process (sym_set_isolation(0))
 * so that coverage reaches libelf and libdwarf; every unit read; then lookups across the code. Crashes inside
 * libdwarf itself are expected here: in the tool, the child process contains them. */
#include "../symbols/symbols.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The unwinder's memory: a word made of its address, so stacks point everywhere. */
static bool any_word(void *ctx, uint32_t addr, uint32_t *value)
{
    (void)ctx;
    *value = addr * 2654435761u ^ (addr >> 7);
    return (addr & 0xF0000000u) != 0x40000000u; /* and some unreadable */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/cmprof-fuzz-elf.%d", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    sym_set_isolation(0);
    char err[256];
    struct sym_table *t = sym_open(path, err, sizeof err);
    if (!t)
        return 0;
    sym_read_all(t); /* every unit, wherever its damaged ranges say it lies */
    for (uint32_t a = 0; a < 0x400; a += 2) {
        sym_lookup(t, a);
        sym_lookup(t, 0x08000000u + a);
    }
    uint32_t lo, hi;
    sym_function_from(t, 0, &lo, &hi);
    /* the call-frame information, walked from addresses all over the code (.debug_frame) */
    for (uint32_t a = 0; a < 0x200; a += 2) {
        uint32_t regs[16] = {0}, out[16];
        regs[13] = 0x20001000u;
        regs[14] = 0x08000101u + 4u * a;
        regs[15] = (a & 1u ? 0x08000000u : 0u) + 2u * a;
        uint32_t psp_return;
        sym_unwind(t, regs, any_word, NULL, out, 16, &psp_return);
    }
    sym_close(t);
    return 0;
}
