/* -o lcov: an lcov tracefile (genhtml, editors' coverage gutters) whose counts are samples: DA
 * per sampled source line (the innermost frame's, inlined code at its own line), FN/FNDA per
 * function. Samples at addresses with no source line are left out (no file to show them in). */
#ifndef CMPROF_REPORT_LCOV_H
#define CMPROF_REPORT_LCOV_H

#include "../profile/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Returns 0, or -1 with a one-line reason in err (out of memory). */
int lcov_write(FILE *out, struct prof *p, bool demangle, char *err, size_t errlen);

#endif
