/* The host's one growth policy for arrays and hash tables: capacities double, from a first size.
 * A base every layer may include (decode/, symbols/, profile/, app/, tui/, report/): it includes
 * only the C library, so no use of it can make a loop of files (scripts/layout_check.py). */
#ifndef CMPROF_BASE_GROW_H
#define CMPROF_BASE_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

/* The next capacity: cap doubled (`first` when cap is 0), doubled again until it holds `need`. A
 * hash table rehashed into a new array takes its size from here. */
static inline size_t grow_capacity(size_t cap, size_t need, size_t first)
{
    size_t c = cap ? cap * 2 : first;
    while (c < need)
        c *= 2;
    return c;
}

/* Make *v (of *cap elements of `elem` bytes) hold at least `need`, its capacity from
 * grow_capacity. False when out of memory; *v and *cap are then as they were. */
static inline bool grow_array(void **v, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return true;
    size_t c = grow_capacity(*cap, need, first);
    void *p = realloc(*v, c * elem);
    if (!p)
        return false;
    *v = p;
    *cap = c;
    return true;
}

#endif
