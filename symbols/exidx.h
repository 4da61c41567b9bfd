/* The ARM exception-handling index (.ARM.exidx, with .ARM.extab): the unwind rules of an ELF that
 * has no DWARF call-frame information. Only the compact model is followed (personality routines
 * 0, 1 and 2, whose unwind opcodes say how the stack pointer moved and where registers were
 * saved); anything else is refused, never guessed. Every byte is untrusted: no read leaves the
 * tables given, and no input crashes or loops. */
#ifndef SYMBOLS_EXIDX_H
#define SYMBOLS_EXIDX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The register rules at one address: CFA = r[cfa_reg] + cfa_off (the stack pointer the caller
 * had); register k, when bit k of saved is set, at CFA + off[k]. Bit 14 says where the return
 * address lies (the slot of PC when the frame pops PC, else of LR); clear when it is still in LR. */
struct exidx_rules {
    uint32_t cfa_reg;
    int32_t cfa_off;
    uint16_t saved;
    int32_t off[16];
};

/* The index as the ELF holds it (pairs of words at idx_addr), and a reader of the image's bytes
 * at an address (the .ARM.extab entries, the code): it returns how many it could read. */
struct exidx_table {
    const uint8_t *idx;
    size_t idx_len;
    uint32_t idx_addr;
    size_t (*read)(void *ctx, uint32_t addr, uint8_t *buf, size_t n);
    /* optional: the function around pc from the symbols, where the prologue starts and the code
     * followed ends (the linker merges the entries of functions that unwind alike) */
    bool (*function)(void *ctx, uint32_t pc, uint32_t *lo, uint32_t *hi);
    void *ctx;
};

enum exidx_result {
    EXIDX_NONE,    /* no entry covers the address */
    EXIDX_OK,      /* *out holds the rules */
    EXIDX_REFUSED, /* an entry covers it, but says it cannot be unwound or is not followed here */
};

/* The rules at pc. A call site (leaf false: pc inside a call instruction) takes the function's
 * opcodes as they are: they describe its body. The interrupted instruction (leaf true) may lie in
 * a prologue or an epilogue, where they do not hold: the code from pc to the return, or from the
 * function's start to pc, says where the stack pointer really is, or the answer is REFUSED. */
enum exidx_result exidx_rules_at(const struct exidx_table *x, uint32_t pc, bool leaf, struct exidx_rules *out);

/* Runs n unwind opcodes (the compact model's bytes, in order) from a stack pointer at offset 0. */
enum exidx_result exidx_run(const uint8_t *ops, size_t n, struct exidx_rules *out);

/* The function start of the entry covering pc, and where the next entry starts (UINT32_MAX after
 * the last); false when no entry covers it. */
bool exidx_function(const struct exidx_table *x, uint32_t pc, uint32_t *lo, uint32_t *hi);

#endif
