/* -o pprof: pprof's profile.proto, gzipped, as `go tool pprof`, Pyroscope, Parca and Cloud
 * Profiler read it. Each counted place is a sample (its stack when one was walked, else its PC),
 * each address a location whose lines are its inline chain (innermost first), labelled with its
 * task; sample types samples/count and, when the period is known, cpu/nanoseconds. */
#ifndef CMPROF_REPORT_PPROF_H
#define CMPROF_REPORT_PPROF_H

#include "../profile/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct pprof_info {
    const char *elf;    /* the mapping's file name */
    double period_ns;   /* time per sample; 0 when unknown: only samples/count, and a comment says so */
    double written_ns;  /* time each written sample stands for (period_ns_written: with stacks, more) */
    bool demangle;      /* function names demangled (system names stay linkage names) */
    const char *comment; /* one line kept in the profile, or NULL */
};

/* Returns 0, or -1 with a one-line reason in err (out of memory, zlib, a write error). */
int pprof_write(FILE *out, struct prof *p, const struct pprof_info *info, char *err, size_t errlen);

#endif
