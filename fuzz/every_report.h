/* For the fuzz targets that fill a profile (fuzz_ingest, fuzz_stream): every batch report of it,
 * written to /dev/null, with the grouping and the inline frames the input's mode byte picks. */
#ifndef CMPROF_FUZZ_EVERY_REPORT_H
#define CMPROF_FUZZ_EVERY_REPORT_H

#include "../app/batch.h"

#include <stdio.h>

static inline void every_report(struct prof *p, struct ingest *in, uint8_t mode)
{
    FILE *devnull = fopen("/dev/null", "w");
    char why[200];
    for (int o = 0; o < OUT_N_FORMATS && devnull; o++) { /* every format the table of formats has */
        struct batch_options bo = {.output = (enum report_format)o, .by = (enum prof_group)((mode >> 1) & 3),
                                   .inline_frames = mode & 1, .fold_overhead = mode & 8, .demangle = mode & 1};
        batch_report(&bo, p, in, "", devnull, why, sizeof why);
    }
    if (devnull)
        fclose(devnull);
}

#endif
