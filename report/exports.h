/* The formats other tools read (pprof, callgrind, lcov, trace events): one call for the batch
 * report and the live view's snapshots to dispatch to. */
#ifndef CMPROF_REPORT_EXPORTS_H
#define CMPROF_REPORT_EXPORTS_H

#include "../profile/ingest.h"
#include "../profile/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum exports_format { EXPORTS_PPROF, EXPORTS_CALLGRIND, EXPORTS_LCOV, EXPORTS_TRACE };

struct exports_options {
    const char *elf;    /* its path: named in the outputs */
    const char *source; /* the capture read, or NULL */
    bool demangle;
};

/* Returns 0, or -1 with a one-line reason in err (out of memory; a write error also shows in
 * ferror(out)). */
int exports_write(enum exports_format f, FILE *out, struct prof *p, const struct ingest *in,
                  const struct exports_options *o, char *err, size_t errlen);

#endif
