/* -o lcov: an lcov tracefile (genhtml, editors' coverage gutters) whose counts are samples: DA
 * per sampled source line (the innermost frame's, inlined code at its own line), FN/FNDA per
 * function. Samples at addresses with no source line are left out (no file to show them in). */
#ifndef CMPROF_REPORT_LCOV_H
#define CMPROF_REPORT_LCOV_H

#include "../profile/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Returns 0, or -1 with a one-line reason in err, and nothing written: out of memory, or samples
 * of which none is on a source line (an ELF without DWARF lines, named by `elf`): a tracefile of
 * no file would read as a profile of nothing. */
int lcov_write(FILE *out, struct prof *p, const char *elf, bool demangle, char *err, size_t errlen);

#endif
