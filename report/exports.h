/* The formats other tools read (pprof, callgrind, lcov, trace events): their writers, lines of
 * report/report.c's table of formats. */
#ifndef CMPROF_REPORT_EXPORTS_H
#define CMPROF_REPORT_EXPORTS_H

#include "emit.h"

#include <stddef.h>
#include <stdio.h>

/* Each returns 0, or -1 with a one-line reason in err (out of memory; a write error also shows in
 * ferror(out)). They read the profile, the stream's period (pprof), the ELF's path, -C and the
 * source's name (pprof's comment) from d; none folds the overhead or reads --by. */
int exports_pprof(struct report_data *d, FILE *out, char *err, size_t errlen);
int exports_callgrind(struct report_data *d, FILE *out, char *err, size_t errlen);
int exports_lcov(struct report_data *d, FILE *out, char *err, size_t errlen);
int exports_trace(struct report_data *d, FILE *out, char *err, size_t errlen);

#endif
