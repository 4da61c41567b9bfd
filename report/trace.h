/* -o trace: the Trace Event Format (Chrome's "traceEvents" JSON; Perfetto and the Firefox
 * Profiler import it). One lane per task and interrupt: each run of consecutive samples of one
 * task is a complete ("X") event, timed by the announced sampling period; one lane per section
 * timer, each report's last run a complete event with its measured duration, ending where the
 * report came. Without an announced period, one sample counts as one microsecond (otherData
 * says so); without the sections' clock, a tick does (their args say ticks). Needs the samples' order (profile/timeline.h): histogram captures have none. */
#ifndef CMPROF_REPORT_TRACE_H
#define CMPROF_REPORT_TRACE_H

#include "../profile/ingest.h"
#include "../profile/profile.h"

#include <stddef.h>
#include <stdio.h>

/* elf: the process's name. Returns 0, or -1 with a one-line reason in err (out of memory). */
int trace_write(FILE *out, struct prof *p, const struct ingest *in, const char *elf, char *err, size_t errlen);

#endif
