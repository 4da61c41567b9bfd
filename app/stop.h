/* The signals that end a run (SIGINT, SIGTERM, SIGHUP, SIGQUIT): caught, so that every one of them
 * goes through the same orderly close (a halted target resumed, the report marked interrupted). */
#ifndef CMPROF_APP_STOP_H
#define CMPROF_APP_STOP_H

/* Catch them from now on (without SA_RESTART: a blocking read returns EINTR); also ignore SIGXFSZ,
 * so that a write past a file size limit fails with EFBIG instead of killing the process. */
void stop_catch(void);
/* The signal caught, or 0. */
int stop_requested(void);
/* "SIGTERM" and the like. */
const char *stop_name(int sig);

#endif
