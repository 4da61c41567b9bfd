/* The host's one growth helper for arrays that double (the profile's tables, the views' rows, the
 * reports' buffers): profile/ and the layers that read the profile (tui/, report/) use it. */
#ifndef CMPROF_PROFILE_GROW_H
#define CMPROF_PROFILE_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

/* Make *v (of *cap elements of `elem` bytes) hold at least `need`: the capacity doubles, from
 * `first`. False when out of memory; *v and *cap are then as they were. */
static inline bool prof_grow(void **v, size_t *cap, size_t need, size_t elem, size_t first)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap * 2 : first;
    while (c < need)
        c *= 2;
    void *p = realloc(*v, c * elem);
    if (!p)
        return false;
    *v = p;
    *cap = c;
    return true;
}

#endif
