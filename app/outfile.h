/* Files the tool writes (--record): never over what it reads, never over an existing file
 * unless asked (--force). */
#ifndef CMPROF_APP_OUTFILE_H
#define CMPROF_APP_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Open path for writing. Refused, with a one-line reason in err, when it is one of the n inputs
 * (compared by device and inode, or by resolved path when it does not exist yet; "-" is stdin),
 * or when it exists and force is false. *created: the file is new (remove it if the run fails
 * before writing). NULL on refusal or failure. */
FILE *outfile_open(const char *path, bool force, const char *const *inputs, size_t n, bool *created, char *err,
                   size_t errlen);


/* False, with a one-line reason in err, when standard output is one of the n inputs (a capture,
 * the ELF or a baseline that `>` or `1<>` sent the report into); true for anything else. */
bool outfile_stdout_ok(const char *const *inputs, size_t n, char *err, size_t errlen);

#endif
