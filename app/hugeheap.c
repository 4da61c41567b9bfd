/* The heap on transparent huge pages. The kernel gives a process a fresh 2 MB page for much less
 * a byte than a 4 KB one, and the symbol tables, line rows and answers that `--resolve` and the
 * views build are megabytes of fresh memory: 4 KB at a time, their page faults can cost more than
 * reading the DWARF does (make bench measures it). */
#include "hugeheap.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define HUGEHEAP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define HUGEHEAP_SANITIZED 1
#endif
#endif

enum { HUGE_PAGE = 2 << 20, MMAP_THRESHOLD_MAX = 32 << 20 /* glibc's ceiling on 64-bit hosts */ };

bool hugeheap_setup(size_t reserve)
{
#if defined(__GLIBC__) && !defined(HUGEHEAP_SANITIZED)
    if (sizeof(void *) < 8 || reserve < 2 * (size_t)HUGE_PAGE || reserve > (size_t)1 << 30)
        return false; /* (a 32-bit host has no address space to spare) */
    /* one arena for every thread: another thread's arena is a mapping of its own, on 4 KB pages;
     * blocks up to 32 MB from the heap, not each a mapping of its own; what is freed stays */
    if (!mallopt(M_ARENA_MAX, 1) || !mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX) ||
        !mallopt(M_TRIM_THRESHOLD, (int)(reserve * 2)))
        return false;
    /* the break moved on to a 2 MB boundary, then the heap grown once by `reserve` (address space:
     * pages come as they are touched). glibc writes its block headers into the first 2 MB stretch
     * as it grows the heap, before it can be marked: the kernel then backs that stretch with 4 KB
     * pages for good. The block that grows the heap fills it, and is never freed. */
    uintptr_t lo = (uintptr_t)sbrk(0);
    if (lo == (uintptr_t)-1)
        return false;
    uintptr_t lead = ((lo + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1)) - lo;
    if (lead && sbrk((intptr_t)lead) == (void *)-1)
        return false;
    lo += lead;
    void *first_stretch = mallopt(M_TOP_PAD, (int)reserve) ? malloc(HUGE_PAGE - 2 * 4096) : NULL;
    uintptr_t hi = (uintptr_t)sbrk(0);
    mallopt(M_TOP_PAD, HUGE_PAGE); /* (later growth, if any, in smaller steps) */
    if (!first_stretch || hi == (uintptr_t)-1 || hi < lo || hi - lo < reserve) {
        free(first_stretch);
        return false; /* no room to grow the heap there: glibc maps its blocks elsewhere */
    }
    uintptr_t from = lo + HUGE_PAGE, to = hi & ~(uintptr_t)(HUGE_PAGE - 1);
    return to > from && madvise((void *)from, to - from, MADV_HUGEPAGE) == 0;
#else
    (void)reserve; /* a sanitizer's allocator, or not glibc: malloc as it is */
    return false;
#endif
}
