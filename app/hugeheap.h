/* The process's heap on transparent huge pages, set up once at start. */
#ifndef CMPROF_HUGEHEAP_H
#define CMPROF_HUGEHEAP_H

#include <stdbool.h>
#include <stddef.h>

/* Serve every thread's malloc, blocks up to 32 MB included, from one heap whose first `reserve`
 * bytes (address space only until touched) the kernel may back with 2 MB pages, and keep what is
 * freed for reuse. False when no huge page was asked for: a sanitizer's allocator, no heap to
 * grow, or the kernel said no; malloc then works as before. Call it before any thread starts. */
bool hugeheap_setup(size_t reserve);

enum { HUGEHEAP_RESERVE_MB = 256 };

#endif
