/* cmprof-top --resolve ELF [ADDR...]: the same lines as arm-none-eabi-addr2line -a -f -i. */
#ifndef CMPROF_APP_RESOLVE_H
#define CMPROF_APP_RESOLVE_H

#include <stdbool.h>
#include <stdio.h>

/* Addresses from addrs, or from `in` (one per line) when n is 0. Returns the exit status, for the
 * process to exit with at once: the ELF's tables are left to the exit, not freed. */
int resolve_main(const char *elf, bool demangle, char **addrs, int n, FILE *in, FILE *out, FILE *err);

#endif
