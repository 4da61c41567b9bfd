/* A counted place's frames, innermost first: its PC's inline chain, then each caller's (the
 * call sites of a walked stack). For the writers that name functions, files and lines. */
#ifndef CMPROF_REPORT_FRAMES_H
#define CMPROF_REPORT_FRAMES_H

#include "../profile/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct frame {
    uint32_t addr;        /* the PC or call site this frame came from */
    const char *function; /* NULL: nothing is known at addr */
    const char *file;     /* NULL or "??" when unknown */
    uint32_t line;        /* 0 when unknown */
    bool inlined;         /* an inlined copy: the next frame is at the same address */
};

#define FRAMES_MAX 512

/* Up to max frames of s (syms may be NULL: every frame unknown); returns how many. Strings are
 * the symbol table's, valid until it closes. */
size_t frames_of(struct sym_table *syms, const struct prof_sample *s, struct frame *out, size_t max);

/* The line where a function starts: the line of the first instruction of the ELF symbol that
 * holds addr, when that instruction is in the function (not inlined there); else 0 (an inlined
 * function has no entry of its own). */
uint32_t frames_start_line(struct sym_table *syms, uint32_t addr, const char *function);

#endif
