/* The signals that end a run (SIGINT, SIGTERM, SIGHUP, SIGQUIT): caught, so that every one of them
 * goes through the same orderly close (a halted target resumed, the report marked interrupted). */
#ifndef CMPROF_APP_STOP_H
#define CMPROF_APP_STOP_H

/* Catch them from now on (without SA_RESTART: a blocking read returns EINTR); also ignore SIGXFSZ,
 * so that a write past a file size limit fails with EFBIG instead of killing the process. */
void stop_catch(void);
/* The signal caught, or 0. */
int stop_requested(void);
/* Job control (Ctrl-Z; a background job reading or writing the terminal): SIGTSTP, SIGTTIN and
 * SIGTTOU caught, so that the run can let go of the target before it stops, and SIGCONT noted.
 * Install before the terminal is taken over (ncurses then leaves SIGTSTP to us). */
void stop_catch_suspend(void);
/* The job-control signal caught and not acted on yet, or 0. */
int stop_suspend_requested(void);
/* Stop the process as that signal would have; returns once it is continued (SIGCONT). */
void stop_suspend_now(void);
/* Whether SIGCONT came since the last call (the screen needs repainting). */
int stop_continued(void);

/* "SIGTERM" and the like. */
const char *stop_name(int sig);

#endif
