/* Where an ELF's instructions start. Each halfword of its code is an instruction's first or not
 * (the middle of a 32-bit Thumb-2 instruction, a literal pool or jump table, padding between
 * functions): from the ARM mapping symbols ($t, $a, $d), by decoding Thumb instruction lengths
 * from each function's start, and A32 ones a word each. A PC a core reports is always the start
 * of the next instruction to run, so many sampled PCs that are not say the ELF is not the
 * firmware that ran, even when both were linked at the same address. */
#ifndef CMPROF_SYMBOLS_CODEMAP_H
#define CMPROF_SYMBOLS_CODEMAP_H

#include "symbols.h"

#include <stdint.h>

struct codemap;

/* The map of t's code (used with t, closed after it), or NULL when it cannot be made: no code,
 * no mapping symbols (they tell Thumb from A32, and code from data), a big-endian ELF, or no
 * memory. */
struct codemap *codemap_new(struct sym_table *t);
void codemap_free(struct codemap *m);

enum codemap_kind {
    CODEMAP_OUTSIDE,   /* not in the ELF's code */
    CODEMAP_START,     /* an instruction starts here (or nothing is known against it) */
    CODEMAP_NOT_START, /* inside an instruction, data in the code, or padding */
};
/* What addr is (its Thumb bit ignored). The region around it is read and decoded the first time
 * one of its addresses is asked about. */
enum codemap_kind codemap_at(struct codemap *m, uint32_t addr);

#endif
