/* -o callgrind: Callgrind's profile format (KCachegrind, callgrind_annotate). One event,
 * Samples; self cost per source line under the function whose code it is (inlined code under
 * its own name and file), and call edges (cfn=, calls=) with the samples below each call site:
 * from walked stacks and from inlined calls. `calls=` gives the samples seen through the edge, not
 * a number of calls (a sampler does not count calls). */
#ifndef CMPROF_REPORT_CALLGRIND_H
#define CMPROF_REPORT_CALLGRIND_H

#include "../profile/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* elf: named as the command. Returns 0, or -1 with a one-line reason in err (out of memory). */
int callgrind_write(FILE *out, struct prof *p, const char *elf, bool demangle, char *err, size_t errlen);

#endif
