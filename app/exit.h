/* The exit statuses of cmprof-top, named. */
#ifndef CMPROF_APP_EXIT_H
#define CMPROF_APP_EXIT_H

/* Exit statuses of cmprof-top (also in --help). 128 + N: stopped by signal N (batch: the report
 * so far, marked interrupted). */
enum exit_status {
    EXIT_DONE = 0,       /* the report (or the live view) as asked */
    EXIT_ERROR = 1,      /* could not run: the ELF, the source, a server out of reach, an output file */
    EXIT_USAGE = 2,      /* a bad option or argument, or no samples in the input */
    EXIT_SLOWER = 3,     /* --fail-if-slower: a row grew past the limit */
    EXIT_PARTIAL = 4,    /* the source failed mid-run: the report has what came before */
    EXIT_WRONG_ELF = 5,  /* batch: the samples are not the ELF's program (a build-id that differs, most
                          * samples outside its code, PCs off its instruction starts): the report is written */
};
#define EXIT_SIGNAL(sig) (128 + (sig)) /* stopped by a signal */

#endif
